//! Arbitrary bytes through `decode_sequential`, as they are, behind a valid file header, and
//! with checksums and length fields repaired. Whatever it decodes, the random-access `Reader`
//! must decode identically, and the pull decoder (`SequentialDecoder`, behind the JVM's input
//! stream) must agree with it.
#![no_main]

use kompakt_fuzz::{check_against_reader, check_pull_agrees, repair, sequential_streams, with_header, Rng};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let verify = Rng::from_bytes(data).next_u64() & 1 == 0;
    check_pull_agrees(data, verify, &sequential_streams(data, verify));
    if let Some(f) = with_header(data) {
        check_pull_agrees(&f, verify, &sequential_streams(&f, verify));
    }
    if let Some(f) = repair(data) {
        let pushed = sequential_streams(&f, verify);
        check_pull_agrees(&f, verify, &pushed);
        if let Ok(Some(streams)) = pushed {
            check_against_reader(&f, verify, &streams);
        }
    }
});
