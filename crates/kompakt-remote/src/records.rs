//! The small records of a store on object storage, and how names become path segments
//! (docs/FORMAT.md, "Object store on object storage"). No network here: the decoders of what
//! a server returns are fuzzed (fuzz/fuzz_targets/remote_records.rs) and built without it.

use kompakt::stream::ContentHash;

/// A key's record: the object it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRecord {
    pub hash: ContentHash,
    pub raw_size: u64,
    pub stored_size: u64,
}

impl KeyRecord {
    /// The record's bytes, as the store writes them.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::json!({
            "hash": self.hash.to_string(),
            "raw_size": self.raw_size,
            "stored_size": self.stored_size,
        })
        .to_string()
        .into_bytes()
    }

    /// A record from its bytes; None for anything that is not one (never a panic).
    pub fn decode(data: &[u8]) -> Option<KeyRecord> {
        let v: serde_json::Value = serde_json::from_slice(data).ok()?;
        Some(KeyRecord {
            hash: ContentHash::from_hex(v.get("hash")?.as_str()?)?,
            raw_size: v.get("raw_size")?.as_u64()?,
            stored_size: v.get("stored_size")?.as_u64()?,
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
        let r = KeyRecord {
            hash: ContentHash(0x0123_4567_89ab_cdef_0011_2233_4455_6677),
            raw_size: 10,
            stored_size: 7,
        };
        assert_eq!(KeyRecord::decode(&r.encode()), Some(r));
        for bad in [
            &b""[..],
            b"{}",
            b"{\"hash\": \"zz\", \"raw_size\": 1, \"stored_size\": 1}",
            b"\xff",
        ] {
            assert_eq!(KeyRecord::decode(bad), None);
        }
    }

    proptest! {
        #[test]
        fn hostile_records_and_segments_never_panic(data in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = KeyRecord::decode(&data);
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
