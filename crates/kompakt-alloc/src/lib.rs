//! The global allocator of kompakt's bindings: small blocks from the C library's `malloc`,
//! large ones from mimalloc, on transparent huge pages.
//!
//! Large buffers (decoded columns, loaded arrays) want mimalloc: it reuses freed memory rather
//! than returning it to the kernel and faulting it in again on the next read (glibc maps and
//! unmaps every allocation of 32 MiB or more), and it advises its memory for transparent huge
//! pages, so a fresh 600 MB table faults in 2 MiB at a time. pyarrow makes the same choice.
//!
//! Small blocks do not: with mimalloc, they share its huge-page memory, and the first ones of
//! a process fault in and zero whole 2 MiB pages, about 0.1 ms each, which was a quarter of a
//! first 1000-row read in a fresh process. mimalloc's only switch, `MIMALLOC_ALLOW_THP=0`,
//! turns huge pages off for the whole process (numpy's buffers too: loads ran 3x slower), and
//! building it without its advice leaves large buffers that reuse memory small blocks had
//! used on 4 KiB pages (a 600 MB table read 1.7x slower). Keeping the two sizes in separate
//! allocators keeps both fast. Measured in bench/RESULTS.md, "First calls".
//!
//! Freed large blocks stay with the process for [`RETAIN_FREED_MS`] (ten seconds, jemalloc's
//! default) before their memory goes back to the kernel: mimalloc's own second gave it back
//! between reads that had other work between them, and each faulted every page in again.
//!
//! Huge pages are not always the faster choice: a virtual machine whose balloon device reports
//! free memory to its host (as Firecracker's does) gets 2 MiB blocks taken back by the host
//! once they have been free for a few seconds, and a process that faults such a block in as a
//! huge page waits for the host to supply and zero it again: a fresh 133 MB table read in
//! 120-170 ms there against 68 ms on 4 KiB pages (35 ms with huge pages while the memory had
//! not been reported yet). [`HugePages::Auto`], the default, leaves huge pages off on such
//! machines; `KOMPAKT_HUGE_PAGES=on|off|auto` chooses. Measured by bench/fresh_memory.py.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes come from mimalloc; smaller ones from `malloc`.
pub const LARGE_MIN: usize = 64 << 10;

/// `malloc` for small blocks, mimalloc for large ones (see the crate's docs).
///
/// ```ignore
/// #[global_allocator]
/// static GLOBAL: kompakt_alloc::Allocator = kompakt_alloc::Allocator;
/// ```
#[derive(Debug, Default, Clone, Copy)]
pub struct Allocator;

/// Whether mimalloc asks the kernel for transparent huge pages for the memory it maps.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum HugePages {
    /// Huge pages, unless the host takes free memory back ([`host_reclaims_free_memory`]).
    #[default]
    Auto,
    /// Always advise huge pages.
    On,
    /// Never advise them: 4 KiB pages unless the kernel's THP mode is `always` (the rest of
    /// the process keeps its own choice).
    Off,
}

impl HugePages {
    /// The choice of `KOMPAKT_HUGE_PAGES` (`on`, `off` or `auto`; anything else is auto).
    /// `None` when that is unset and `MIMALLOC_ALLOW_THP` is set: mimalloc's own setting,
    /// which it read as the library loaded, stands.
    pub fn from_env() -> Option<Self> {
        let kompakt = std::env::var("KOMPAKT_HUGE_PAGES").ok();
        Self::choose(kompakt.as_deref(), std::env::var_os("MIMALLOC_ALLOW_THP").is_some())
    }

    fn choose(kompakt: Option<&str>, mimalloc_set: bool) -> Option<Self> {
        match kompakt.map(str::trim) {
            Some(v) if v.eq_ignore_ascii_case("on") => Some(Self::On),
            Some(v) if v.eq_ignore_ascii_case("off") => Some(Self::Off),
            Some(_) => Some(Self::Auto),
            None if mimalloc_set => None,
            None => Some(Self::Auto),
        }
    }

    /// Whether this choice means huge pages on this machine.
    pub fn enabled(self) -> bool {
        match self {
            Self::On => true,
            Self::Off => false,
            Self::Auto => !host_reclaims_free_memory(),
        }
    }
}

/// True when a virtio balloon device reports free pages to the host
/// (`VIRTIO_BALLOON_F_REPORTING`, feature bit 5 in sysfs): the host then takes back memory
/// that stays free, and huge-page faults on it cost several times what 4 KiB faults do.
pub fn host_reclaims_free_memory() -> bool {
    const REPORTING_BIT: usize = 5;
    let Ok(devices) = std::fs::read_dir("/sys/bus/virtio/drivers/virtio_balloon") else {
        return false;
    };
    devices.flatten().any(|device| {
        std::fs::read_to_string(device.path().join("features"))
            .is_ok_and(|bits| bits.as_bytes().get(REPORTING_BIT) == Some(&b'1'))
    })
}

// From mimalloc.h, in the library the `mimalloc` crate links.
extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
    fn mi_option_get(option: std::ffi::c_int) -> std::ffi::c_long;
    fn mi_option_set_default(option: std::ffi::c_int, value: std::ffi::c_long);
}

/// `mi_option_purge_delay` in the same mimalloc (v3): milliseconds a freed block's memory
/// stays committed before it is given back to the kernel. tests/purge_delay.rs fails if an
/// update makes the index name another option.
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// How long freed large blocks stay with the process before mimalloc gives their memory back
/// to the kernel: ten seconds, jemalloc's default (`dirty_decay_ms`). mimalloc's own, one
/// second, gave back a table's buffers between reads with other work between them, and each
/// read faulted all of them in again: flights (55 MB in Arrow) read in 24-30 ms instead of
/// 14-16, as its 13,500 page faults cost on 4 KiB pages (bench/RESULTS.md, "Freed memory").
/// mimalloc purges when it next allocates or frees after the delay: an idle process keeps the
/// memory until then.
pub const RETAIN_FREED_MS: std::ffi::c_long = 10_000;

/// Makes mimalloc keep freed memory for `ms` milliseconds before giving it back to the
/// kernel (`0`: at once; `-1`: never). Call it before other threads allocate, as
/// [`set_huge_pages`].
pub fn set_retain_freed_ms(ms: std::ffi::c_long) {
    // SAFETY: as in `set_huge_pages`: a value stored in mimalloc's option table, which it reads
    // as it allocates and frees (a plain store: callers set it before other threads
    // allocate); the index is checked by tests/purge_delay.rs.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
}

/// The milliseconds mimalloc keeps freed memory now (see [`set_retain_freed_ms`]).
pub fn retain_freed_ms() -> std::ffi::c_long {
    // SAFETY: reads mimalloc's option table (initialising the option from the environment
    // on first use), as mimalloc itself does on every free.
    unsafe { mi_option_get(MI_OPTION_PURGE_DELAY) }
}

/// `mi_option_allow_thp` in the mimalloc (v3) that libmimalloc-sys 0.1.49 (pinned) builds. The tests
/// in tests/huge_pages_*.rs fail if an update makes it name another option.
const MI_OPTION_ALLOW_THP: std::ffi::c_int = 43;

/// Makes mimalloc advise huge pages, or not, for the memory it maps from now on. Memory it
/// has already mapped keeps its advice, so bindings call this (through [`warm_up`]) before
/// their first large allocation. Unlike `MIMALLOC_ALLOW_THP=0` at start-up, this does not
/// turn huge pages off for the rest of the process (numpy keeps its own advice).
pub fn set_huge_pages(on: bool) {
    // SAFETY: `mi_option_set` stores a value in mimalloc's option table, which its mappings
    // read; the bindings call this as they are imported, before their threads allocate. The
    // index is that of the pinned libmimalloc-sys, checked by the tests above.
    unsafe { mi_option_set(MI_OPTION_ALLOW_THP, std::ffi::c_long::from(on)) }
}

/// Sets mimalloc up (its arena and page map, about 0.4 ms on first use) now, so that the
/// first large allocation, in what may be a program's first read, does not pay for it; first
/// makes the huge-page choice of [`HugePages::from_env`] and keeps freed memory for
/// [`RETAIN_FREED_MS`] (unless `MIMALLOC_PURGE_DELAY` says otherwise). Bindings call it as they are
/// imported. Returns whether large blocks get huge pages (`None`: mimalloc's own setting).
pub fn warm_up() -> Option<bool> {
    // A default only: mimalloc's own environment setting (`MIMALLOC_PURGE_DELAY`, in any case,
    // or its older name `MIMALLOC_RESET_DELAY`) wins when there is one.
    // SAFETY: as in `set_retain_freed_ms`; called as the bindings are imported, before their
    // threads allocate.
    unsafe { mi_option_set_default(MI_OPTION_PURGE_DELAY, RETAIN_FREED_MS) }
    warm_up_with(HugePages::from_env().map(HugePages::enabled))
}

/// [`warm_up`] with huge pages on or off (`None`: leave mimalloc's setting); returns `huge`.
pub fn warm_up_with(huge: Option<bool>) -> Option<bool> {
    if let Some(on) = huge {
        set_huge_pages(on);
    }
    let layout = Layout::from_size_align(LARGE_MIN, 8).expect("a valid layout");
    // SAFETY: a valid layout of non-zero size; the block is freed at once with it.
    unsafe {
        let p = mimalloc::MiMalloc.alloc(layout);
        if !p.is_null() {
            mimalloc::MiMalloc.dealloc(p, layout);
        }
    }
    huge
}

fn is_large(size: usize) -> bool {
    size >= LARGE_MIN
}

/// The allocator that makes, and takes back, blocks of `size` bytes.
fn by_size(size: usize) -> &'static dyn GlobalAlloc {
    if is_large(size) {
        &mimalloc::MiMalloc
    } else {
        &System
    }
}

// SAFETY: a block's size decides which allocator makes it, and `dealloc` and `realloc` get
// the size it was made with, so every block goes back to the allocator that made it. Both
// allocators uphold `GlobalAlloc`'s contract; calls are forwarded with the caller's
// arguments, except a `realloc` across `LARGE_MIN`, which allocates, copies and frees.
unsafe impl GlobalAlloc for Allocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is (the caller upholds `alloc`'s contract).
        unsafe { by_size(layout.size()).alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded as is.
        unsafe { by_size(layout.size()).alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `layout` is the one `ptr` was allocated with, so its size names the
        // allocator that made it.
        unsafe { by_size(layout.size()).dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let (was_large, large) = (is_large(layout.size()), is_large(new_size));
        // SAFETY: within one allocator, forwarded as is. Across them: `new_size` with the old
        // alignment is a valid layout (the caller vouches that it does not overflow `isize`
        // once rounded up), the copy covers bytes both blocks hold, the blocks are distinct,
        // and the old block is freed with its own layout only once the new one exists.
        unsafe {
            match (was_large, large) {
                (true, true) | (false, false) => by_size(new_size).realloc(ptr, layout, new_size),
                _ => {
                    let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
                    let new = self.alloc(new_layout);
                    if !new.is_null() {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                    new
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kompakt_huge_pages_wins_then_mimalloc_allow_thp_then_auto() {
        assert_eq!(HugePages::choose(Some("on"), true), Some(HugePages::On));
        assert_eq!(HugePages::choose(Some(" OFF "), false), Some(HugePages::Off));
        assert_eq!(HugePages::choose(Some("auto"), true), Some(HugePages::Auto));
        assert_eq!(HugePages::choose(Some("maybe"), false), Some(HugePages::Auto));
        assert_eq!(HugePages::choose(None, true), None);
        assert_eq!(HugePages::choose(None, false), Some(HugePages::Auto));
        assert!(HugePages::On.enabled() && !HugePages::Off.enabled());
    }

    /// Writes a pattern into `len` bytes at `p`, to check later that a move kept them.
    ///
    /// # Safety
    /// `p` must be valid for `len` bytes of writes.
    unsafe fn fill(p: *mut u8, len: usize) {
        for i in 0..len {
            // SAFETY: `i < len`.
            unsafe { p.add(i).write(i as u8 ^ 0x5A) };
        }
    }

    /// # Safety
    /// `p` must be valid for `len` bytes of reads.
    unsafe fn holds_pattern(p: *const u8, len: usize) -> bool {
        // SAFETY: `i < len`.
        (0..len).all(|i| unsafe { p.add(i).read() } == i as u8 ^ 0x5A)
    }

    #[test]
    fn blocks_keep_their_bytes_across_every_realloc() {
        let a = Allocator;
        // Small to small, small to large (a move across allocators), large to large, large
        // to small (back across), and sizes on both sides of the threshold.
        let steps = [
            100,
            4000,
            LARGE_MIN - 1,
            LARGE_MIN,
            3 << 20,
            LARGE_MIN + 1,
            LARGE_MIN - 1,
            10,
        ];
        for align in [8usize, 64, 4096] {
            // SAFETY: every layout is valid and non-zero; each block is read and written
            // within its current size, and freed once, with the layout it has at that point.
            unsafe {
                let mut layout = Layout::from_size_align(steps[0], align).unwrap();
                let mut p = a.alloc(layout);
                assert!(!p.is_null());
                fill(p, layout.size());
                for &size in &steps[1..] {
                    let kept = layout.size().min(size);
                    p = a.realloc(p, layout, size);
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "alignment {align} after a move to {size}");
                    assert!(holds_pattern(p, kept), "{} -> {size} bytes lost data", layout.size());
                    layout = Layout::from_size_align(size, align).unwrap();
                    fill(p, size);
                }
                a.dealloc(p, layout);
                for size in [1, LARGE_MIN - 1, LARGE_MIN, 8 << 20] {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let z = a.alloc_zeroed(layout);
                    assert!(!z.is_null() && (0..size).all(|i| *z.add(i) == 0), "zeroed {size}");
                    a.dealloc(z, layout);
                }
            }
        }
    }
}
