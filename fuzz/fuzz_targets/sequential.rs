//! Arbitrary bytes through `decode_sequential`, as they are, behind a valid file header, and
//! with checksums and length fields repaired. Whatever it decodes, the random-access `Reader`
//! must decode identically.
#![no_main]

use kompakt_fuzz::{check_against_reader, repair, sequential_streams, with_header, Rng};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let verify = Rng::from_bytes(data).next_u64() & 1 == 0;
    let _ = sequential_streams(data, verify);
    if let Some(f) = with_header(data) {
        let _ = sequential_streams(&f, verify);
    }
    if let Some(f) = repair(data) {
        if let Ok(Some(streams)) = sequential_streams(&f, verify) {
            check_against_reader(&f, verify, &streams);
        }
    }
});
