//! Arbitrary bytes into the checker of R serialization streams, under the untrusted policy
//! and under the most permissive one (environments and external pointers walked too), both
//! from memory and through a reader that hands out a few bytes at a time: it must answer,
//! never panic, and give the same answer either way.
#![no_main]

use kompakt_rserial::{check, check_bytes, Policy};
use libfuzzer_sys::fuzz_target;
use std::io::BufReader;

fuzz_target!(|data: &[u8]| {
    let untrusted = Policy::untrusted().max_depth(2_000);
    let open = Policy::untrusted().environments(true).external_pointers(true).max_depth(2_000);
    for policy in [&untrusted, &open] {
        let whole = check_bytes(data, policy);
        let streamed = check(BufReader::with_capacity(3, data), policy);
        assert_eq!(whole.is_ok(), streamed.is_ok());
        if let (Ok(a), Ok(b)) = (&whole, &streamed) {
            assert_eq!(a, b);
            assert!(a.bytes <= data.len() as u64);
        }
    }
});
