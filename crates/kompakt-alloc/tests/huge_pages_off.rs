//! With huge pages off, mimalloc maps large blocks without huge-page advice (a test binary of
//! its own: the choice holds for memory mapped after it, in one process).

mod common;

#[global_allocator]
static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;

#[test]
#[cfg(target_os = "linux")]
fn large_blocks_are_not_advised_for_huge_pages() {
    assert_eq!(kompakt_alloc::warm_up_with(Some(false)), Some(false));
    let flags = common::flags_of_a_large_block(&GLOBAL);
    assert!(!flags.iter().any(|f| f == "hg"), "advised for huge pages: {flags:?}");
}
