//! What a server returns for a store on object storage: key records (JSON) and the names in
//! object paths (percent-encoded path segments). Decoding must never panic; a record that
//! decodes must encode to one that decodes equal, and every name must come back from its
//! segment unchanged.
#![no_main]

use kompakt_remote::records::{decode_segment, encode_segment, KeyRecord};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(record) = KeyRecord::decode(data) {
        assert_eq!(KeyRecord::decode(&record.encode()), Some(record));
    }
    let text = String::from_utf8_lossy(data);
    if let Some(name) = decode_segment('k', &text) {
        assert_eq!(decode_segment('k', &encode_segment('k', &name)), Some(name));
    }
    assert_eq!(decode_segment('n', &encode_segment('n', &text)).as_deref(), Some(&*text));
});
