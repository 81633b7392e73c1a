//! Files built from a fuzzer-chosen description of their blocks (codec, filters, element
//! size, data, and optional lies about lengths or damaged payloads), with every checksum,
//! the index and the trailer made consistent, so that all of the input is spent on what
//! the readers do with blocks. See `kompakt_fuzz::forge` for the input layout.
//!
//! Both readers run with and without checksum verification and must agree; an honest file
//! must decode to exactly the data it was built from.
#![no_main]

use kompakt_fuzz::{cross_check, exercise_reader, forge};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(forged) = forge(data) else { return };
    for verify in [true, false] {
        let decoded = exercise_reader(&forged.file, verify);
        if let Some(expected) = &forged.expected {
            let decoded = decoded
                .as_ref()
                .unwrap_or_else(|| panic!("an honest file does not decode (verify_checksums={verify})"));
            assert!(
                decoded == expected,
                "an honest file decodes to other bytes (verify_checksums={verify})"
            );
        }
        cross_check(&forged.file, verify, decoded.as_deref());
    }
});
