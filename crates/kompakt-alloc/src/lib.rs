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

/// Sets mimalloc up (its arena and page map, about 0.4 ms on first use) now, so that the
/// first large allocation, in what may be a program's first read, does not pay for it.
/// Bindings call it as they are imported.
pub fn warm_up() {
    let layout = Layout::from_size_align(LARGE_MIN, 8).expect("a valid layout");
    // SAFETY: a valid layout of non-zero size; the block is freed at once with it.
    unsafe {
        let p = mimalloc::MiMalloc.alloc(layout);
        if !p.is_null() {
            mimalloc::MiMalloc.dealloc(p, layout);
        }
    }
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
