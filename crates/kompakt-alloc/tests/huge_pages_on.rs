//! With huge pages on, mimalloc advises the memory of large blocks for them; small blocks come
//! from `malloc`, whose memory is not advised (a test binary of its own, as huge_pages_off.rs).

mod common;

use std::alloc::{GlobalAlloc, Layout};

#[global_allocator]
static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;

#[test]
#[cfg(target_os = "linux")]
fn large_blocks_are_advised_for_huge_pages_and_small_ones_not() {
    assert_eq!(kompakt_alloc::warm_up_with(Some(true)), Some(true));
    let flags = common::flags_of_a_large_block(&GLOBAL);
    assert!(flags.iter().any(|f| f == "hg"), "not advised for huge pages: {flags:?}");

    let layout = Layout::from_size_align(100, 8).unwrap();
    // SAFETY: a valid non-zero layout, freed once with it.
    unsafe {
        let p = GLOBAL.alloc(layout);
        assert!(!p.is_null());
        let flags = common::vm_flags(p as usize);
        GLOBAL.dealloc(p, layout);
        assert!(
            !flags.iter().any(|f| f == "hg"),
            "a small block on huge pages: {flags:?}"
        );
    }
}
