//! What a server returns for a store on object storage: key and namespace records (JSON),
//! object file names, and the names in object paths (percent-encoded path segments). Decoding
//! must never panic; a record or file name that decodes must encode to one that decodes equal,
//! and every name must come back from its segment unchanged.
#![no_main]

use kompakt_remote::records::{
    decode_segment, encode_segment, object_file_name, parse_dictionary_file_name, parse_object_file_name, KeyRecord,
    NamespaceRecord,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(record) = KeyRecord::decode(data) {
        assert_eq!(KeyRecord::decode(&record.encode()), Some(record));
    }
    if let Some(record) = NamespaceRecord::decode(data) {
        assert_eq!(NamespaceRecord::decode(&record.encode()), Some(record));
    }
    let text = String::from_utf8_lossy(data);
    if let Some((hash, dictionary)) = parse_object_file_name(&text) {
        assert_eq!(object_file_name(hash, dictionary), text);
    }
    let _ = parse_dictionary_file_name(&text);
    if let Some(name) = decode_segment('k', &text) {
        assert_eq!(decode_segment('k', &encode_segment('k', &name)), Some(name));
    }
    assert_eq!(decode_segment('n', &encode_segment('n', &text)).as_deref(), Some(&*text));
});
