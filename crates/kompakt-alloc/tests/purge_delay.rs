//! How long mimalloc keeps a freed large block's memory committed, by what the kernel counts
//! as resident in the block's mapping (`Rss` in `/proc/self/smaps`) once it is freed: given
//! back at once with a delay of 0, kept with kompakt's ten seconds. This also checks that the
//! option index kompakt-alloc sets is mimalloc's purge delay (a test binary of its own: the
//! option is the process's).

mod common;

#[global_allocator]
static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;

/// Set in the child process that runs the test's body.
#[cfg(target_os = "linux")]
const CHILD: &str = "KOMPAKT_PURGE_DELAY_TEST_CHILD";

#[test]
#[cfg(target_os = "linux")]
fn freed_large_blocks_stay_resident_for_the_set_delay_only() {
    // mimalloc reads its MIMALLOC_* settings as the process starts, and some would change what
    // is measured (MIMALLOC_PURGE_DECOMMITS=0 keeps freed memory resident whatever the delay):
    // the body runs in a child of this test binary without them.
    if std::env::var_os(CHILD).is_none() {
        let mut child = std::process::Command::new(std::env::current_exe().unwrap());
        child
            .args([
                "freed_large_blocks_stay_resident_for_the_set_delay_only",
                "--exact",
                "--nocapture",
            ])
            .env(CHILD, "1");
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().to_ascii_uppercase().starts_with("MIMALLOC_") {
                child.env_remove(name);
            }
        }
        let out = child.output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("1 passed"),
            "the child failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    }
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
