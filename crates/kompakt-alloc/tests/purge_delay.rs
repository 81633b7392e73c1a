//! How long mimalloc keeps a freed large block's memory committed, by what the kernel counts
//! as resident in the block's mapping (`Rss` in `/proc/self/smaps`) once it is freed: given
//! back at once with a delay of 0, kept with kompakt's ten seconds. This also checks that the
//! option index kompakt-alloc sets is mimalloc's purge delay (a test binary of its own: the
//! option is the process's).

mod common;

#[global_allocator]
static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;

#[test]
#[cfg(target_os = "linux")]
fn freed_large_blocks_stay_resident_for_the_set_delay_only() {
    kompakt_alloc::warm_up_with(Some(false));
    const BLOCK_KIB: u64 = 32 << 10;

    kompakt_alloc::set_retain_freed_ms(0);
    assert_eq!(kompakt_alloc::retain_freed_ms(), 0);
    let given_back = common::resident_kib_after_free(&GLOBAL, BLOCK_KIB);
    assert!(
        given_back < BLOCK_KIB / 2,
        "{given_back} KiB of {BLOCK_KIB} resident with no delay"
    );

    kompakt_alloc::set_retain_freed_ms(kompakt_alloc::RETAIN_FREED_MS);
    assert_eq!(kompakt_alloc::retain_freed_ms(), kompakt_alloc::RETAIN_FREED_MS);
    let kept = common::resident_kib_after_free(&GLOBAL, BLOCK_KIB);
    assert!(
        kept >= BLOCK_KIB,
        "{kept} KiB of {BLOCK_KIB} resident with a delay of 10 s"
    );
}
