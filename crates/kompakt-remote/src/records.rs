//! The small records of a store on object storage, the names of its objects, and how names
//! become path segments
//! (docs/FORMAT.md, "Object store on object storage"). No network here: the decoders of what
//! a server returns are fuzzed (fuzz/fuzz_targets/remote_records.rs) and built without it.

use kompakt::codec::DictionaryId;
use kompakt::stream::ContentHash;

/// A key's record: the object it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRecord {
    pub hash: ContentHash,
    pub raw_size: u64,
    pub stored_size: u64,
    /// The dictionary the object's blocks were compressed with (layout 2), which is part of
    /// the object's name: equal content stored with and without one are two objects.
    pub dictionary: Option<DictionaryId>,
}

impl KeyRecord {
    /// The record's bytes, as the store writes them.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = serde_json::json!({
            "hash": self.hash.to_string(),
            "raw_size": self.raw_size,
            "stored_size": self.stored_size,
        });
        if let Some(d) = self.dictionary {
            v["dictionary"] = d.to_string().into();
        }
        v.to_string().into_bytes()
    }

    /// A record from its bytes; None for anything that is not one (never a panic).
    pub fn decode(data: &[u8]) -> Option<KeyRecord> {
        let v: serde_json::Value = serde_json::from_slice(data).ok()?;
        let dictionary = match v.get("dictionary") {
            None => None,
            Some(d) => Some(dictionary_id_from_hex(d.as_str()?)?),
        };
        Some(KeyRecord {
            hash: ContentHash::from_hex(v.get("hash")?.as_str()?)?,
            raw_size: v.get("raw_size")?.as_u64()?,
            stored_size: v.get("stored_size")?.as_u64()?,
            dictionary,
        })
    }

    /// The object's file name: `HASH.kpk`, or `HASH.DICTIONARY.kpk` when it needs one.
    pub fn object_file_name(&self) -> String {
        object_file_name(self.hash, self.dictionary)
    }
}

/// See [`KeyRecord::object_file_name`].
pub fn object_file_name(hash: ContentHash, dictionary: Option<DictionaryId>) -> String {
    match dictionary {
        None => format!("{hash}.kpk"),
        Some(d) => format!("{hash}.{d}.kpk"),
    }
}

/// The content hash and dictionary an object's file name holds; None for any other name
/// (names are exactly as [`object_file_name`] writes them: lowercase hex).
pub fn parse_object_file_name(name: &str) -> Option<(ContentHash, Option<DictionaryId>)> {
    let stem = name.strip_suffix(".kpk")?;
    let (hash, dictionary) = match stem.split_once('.') {
        None => (stem, None),
        Some((hash, d)) => (hash, Some(dictionary_id_from_hex(d)?)),
    };
    if !lowercase_hex(hash) {
        return None;
    }
    Some((ContentHash::from_hex(hash)?, dictionary))
}

fn lowercase_hex(s: &str) -> bool {
    s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A dictionary id from its 16 lowercase hex digits (as [`DictionaryId`] displays).
pub fn dictionary_id_from_hex(hex: &str) -> Option<DictionaryId> {
    if hex.len() != 16 || !lowercase_hex(hex) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok().map(DictionaryId)
}

/// The id a dictionary's file name (`DICTIONARY.kpkd`) holds.
pub fn parse_dictionary_file_name(name: &str) -> Option<DictionaryId> {
    dictionary_id_from_hex(name.strip_suffix(".kpkd")?)
}

/// A namespace's record (layout 2): the dictionary its small values are compressed with,
/// shared by every writer of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceRecord {
    pub dictionary: DictionaryId,
}

impl NamespaceRecord {
    pub fn encode(&self) -> Vec<u8> {
        serde_json::json!({ "dictionary": self.dictionary.to_string() })
            .to_string()
            .into_bytes()
    }

    /// A record from its bytes; None for anything that is not one (never a panic).
    pub fn decode(data: &[u8]) -> Option<NamespaceRecord> {
        let v: serde_json::Value = serde_json::from_slice(data).ok()?;
        Some(NamespaceRecord {
            dictionary: dictionary_id_from_hex(v.get("dictionary")?.as_str()?)?,
        })
    }
}

/// A name as one path segment: `tag` then every byte outside `A-Za-z0-9._-` as `%XX`. The tag
/// keeps empty names and `.`/`..` valid segments.
pub fn encode_segment(tag: char, name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 1);
    out.push(tag);
    for &b in name.as_bytes() {
        if b.is_ascii_alphanumeric() || b"._-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The name [`encode_segment`] encoded, if `segment` is one with this tag.
pub fn decode_segment(tag: char, segment: &str) -> Option<String> {
    let rest = segment.strip_prefix(tag)?.as_bytes();
    let mut out = Vec::with_capacity(rest.len());
    let mut i = 0;
    while i < rest.len() {
        if rest[i] == b'%' {
            let hex = std::str::from_utf8(rest.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(rest[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A valid path segment for object stores: not empty, not `.` or `..`, no `/`, no control
    /// characters (object_store's rule), and only the characters the encoding keeps.
    fn valid_segment(s: &str) -> bool {
        !s.is_empty() && s != "." && s != ".." && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-%".contains(&b))
    }

    #[test]
    fn segments_are_valid_paths_and_decode_back() {
        for name in ["", ".", "..", "a/b", "naïve key", "%41", "x.kpk", "tab\there"] {
            let k = encode_segment('k', name);
            assert!(valid_segment(&k), "{name:?} -> {k}");
            assert_eq!(decode_segment('k', &k).as_deref(), Some(name));
        }
        assert_eq!(encode_segment('k', "model-1.pkl"), "kmodel-1.pkl");
        assert_eq!(decode_segment('k', "n1"), None);
    }

    #[test]
    fn key_records_round_trip_and_reject_garbage() {
        let mut r = KeyRecord {
            hash: ContentHash(0x0123_4567_89ab_cdef_0011_2233_4455_6677),
            raw_size: 10,
            stored_size: 7,
            dictionary: None,
        };
        assert_eq!(KeyRecord::decode(&r.encode()), Some(r));
        assert!(!String::from_utf8(r.encode()).unwrap().contains("dictionary"));
        r.dictionary = Some(DictionaryId(0x00ab_cdef_0123_4567));
        assert_eq!(KeyRecord::decode(&r.encode()), Some(r));
        assert!(String::from_utf8(r.encode())
            .unwrap()
            .contains("\"dictionary\":\"00abcdef01234567\""));
        for bad in [
            &b""[..],
            b"{}",
            b"{\"hash\": \"zz\", \"raw_size\": 1, \"stored_size\": 1}",
            b"{\"hash\": \"0123456789abcdef0011223344556677\", \"raw_size\": 1, \"stored_size\": 1, \"dictionary\": \"12\"}",
            b"{\"hash\": \"0123456789abcdef0011223344556677\", \"raw_size\": 1, \"stored_size\": 1, \"dictionary\": 5}",
            b"\xff",
        ] {
            assert_eq!(KeyRecord::decode(bad), None);
        }
    }

    #[test]
    fn object_and_dictionary_names_round_trip() {
        let hash = ContentHash(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
        let d = DictionaryId(0xfedc_ba98_7654_3210);
        for dictionary in [None, Some(d)] {
            let name = object_file_name(hash, dictionary);
            assert_eq!(parse_object_file_name(&name), Some((hash, dictionary)), "{name}");
        }
        assert_eq!(
            object_file_name(hash, Some(d)),
            "0123456789abcdef0011223344556677.fedcba9876543210.kpk"
        );
        assert_eq!(parse_dictionary_file_name("fedcba9876543210.kpkd"), Some(d));
        for bad in [
            "x.kpk",
            "0123.kpk",
            "0123456789ABCDEF0011223344556677.kpk",
            "0123456789abcdef0011223344556677.FEDCBA9876543210.kpk",
            ".kpk",
        ] {
            assert_eq!(parse_object_file_name(bad), None, "{bad}");
        }
        for bad in ["fedcba9876543210.kpk", "+edcba9876543210.kpkd", "fedcba987654321.kpkd"] {
            assert_eq!(parse_dictionary_file_name(bad), None, "{bad}");
        }
        let ns = NamespaceRecord { dictionary: d };
        assert_eq!(NamespaceRecord::decode(&ns.encode()), Some(ns));
        assert_eq!(NamespaceRecord::decode(b"{\"dictionary\": null}"), None);
    }

    proptest! {
        #[test]
        fn hostile_records_and_segments_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = KeyRecord::decode(&data);
            let _ = NamespaceRecord::decode(&data);
            let _ = parse_object_file_name(&String::from_utf8_lossy(&data));
            let _ = decode_segment('k', &String::from_utf8_lossy(&data));
        }

        #[test]
        fn any_name_round_trips(name in ".*") {
            let k = encode_segment('k', &name);
            prop_assert!(valid_segment(&k));
            prop_assert_eq!(decode_segment('k', &k), Some(name));
        }
    }
}
