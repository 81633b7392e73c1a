//! Arbitrary bytes as a kompakt file, through everything `Reader` offers (open, whole streams,
//! random ranges, `copy_range_to`, `StreamReader`, `verify`). Errors are fine; panics, hangs,
//! huge allocations and the two readers disagreeing are not.
//!
//! Each input is tried as it is, behind a valid file header (when it lacks the magic), and
//! with every checksum and length field repaired, so mutations reach the index checks and
//! the block decoders instead of stopping at the first checksum.
#![no_main]

use kompakt_fuzz::{cross_check, exercise_reader, repair, with_header, Rng};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let verify = Rng::from_bytes(data).next_u64() & 1 == 0;
    exercise_reader(data, verify);
    if let Some(f) = with_header(data) {
        exercise_reader(&f, verify);
    }
    if let Some(f) = repair(data) {
        let decoded = exercise_reader(&f, verify);
        cross_check(&f, verify, decoded.as_deref());
    }
});
