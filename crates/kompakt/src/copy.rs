//! Copies of raw blocks into large destinations, past the CPU caches.
//!
//! A raw (incompressible) block decodes to a plain copy. When a whole read is larger than
//! the caches, ordinary stores first read every destination line into the cache only to
//! overwrite it, then evict it again unread: three trips to memory per byte instead of two.
//! Non-temporal stores skip the first trip. glibc's `memcpy` switches to them by itself only
//! for single copies of several MiB, never for the 1 MiB blocks a stream is cut into.
//! Measured on a 2-core EPYC VM (200 blocks of 1 MiB, source at the stream's odd offsets):
//! 10.9 GB/s with `copy_from_slice`, 15.4-17.8 GB/s with streaming stores; copying 64 MiB
//! and then reading it all back: 7 against 10 GB/s. A read that fits the caches is better
//! off with ordinary stores (16 MiB and read back: 13.9 against 12.7 GB/s), hence
//! [`UNCACHED_READ_MIN`].

/// Reads of at least this many bytes copy their raw blocks with [`copy_uncached`].
pub(crate) const UNCACHED_READ_MIN: usize = 32 << 20;

/// Copies `src` into `dst` (the same length) with stores that bypass the caches where the
/// platform has them (x86_64), and with `copy_from_slice` elsewhere.
///
/// # Panics
/// If the lengths differ, as `copy_from_slice` does; callers check them first.
pub(crate) fn copy_uncached(dst: &mut [u8], src: &[u8]) {
    assert_eq!(dst.len(), src.len(), "copy_uncached: lengths differ");
    #[cfg(target_arch = "x86_64")]
    x86_64::copy(dst, src);
    #[cfg(not(target_arch = "x86_64"))]
    dst.copy_from_slice(src);
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64 {
    use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};

    /// One iteration's bytes: four 16-byte stores, a cache line.
    const LINE: usize = 64;

    pub(super) fn copy(dst: &mut [u8], src: &[u8]) {
        // Bytes before the first 16-byte aligned destination address (streaming stores need
        // that alignment), then whole lines, then the tail: the ends go through memcpy.
        // (`align_offset` may answer usize::MAX, "no offset"; then all of it is the head.)
        let head = dst.as_ptr().align_offset(16).min(dst.len());
        let body = (dst.len() - head) / LINE * LINE;
        let (dst_head, rest) = dst.split_at_mut(head);
        let (dst_body, dst_tail) = rest.split_at_mut(body);
        let (src_head, rest) = src.split_at(head);
        let (src_body, src_tail) = rest.split_at(body);
        dst_head.copy_from_slice(src_head);
        for (d, s) in dst_body.chunks_exact_mut(LINE).zip(src_body.chunks_exact(LINE)) {
            // SAFETY: SSE2 is part of the x86_64 baseline, so the intrinsics exist on every
            // CPU this code runs on. `s` and `d` are 64-byte chunks, so the four 16-byte
            // accesses at offsets 0, 16, 32 and 48 stay inside them. Loads are unaligned
            // (`loadu`); every store address is 16-byte aligned because `d` starts `head`
            // bytes into `dst`, where `align_offset` put an aligned address, and advances in
            // steps of 64. `d` is a unique borrow, so nothing else reads or writes it meanwhile.
            unsafe {
                let s = s.as_ptr().cast::<__m128i>();
                let d = d.as_mut_ptr().cast::<__m128i>();
                let (a, b, c, e) = (
                    _mm_loadu_si128(s),
                    _mm_loadu_si128(s.add(1)),
                    _mm_loadu_si128(s.add(2)),
                    _mm_loadu_si128(s.add(3)),
                );
                _mm_stream_si128(d, a);
                _mm_stream_si128(d.add(1), b);
                _mm_stream_si128(d.add(2), c);
                _mm_stream_si128(d.add(3), e);
            }
        }
        // Streaming stores are weakly ordered: the fence makes them visible before any later
        // store, such as the one that hands the finished buffer to another thread.
        // SAFETY: `sfence` only orders stores; it touches no memory.
        unsafe { _mm_sfence() };
        dst_tail.copy_from_slice(src_tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pattern(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect()
    }

    #[test]
    fn copies_every_length_at_every_alignment() {
        let src = pattern(400);
        for len in 0..300 {
            for src_at in 0..17 {
                for dst_at in 0..17 {
                    let mut dst = vec![0xAAu8; len + 40];
                    copy_uncached(&mut dst[dst_at..dst_at + len], &src[src_at..src_at + len]);
                    assert_eq!(
                        &dst[dst_at..dst_at + len],
                        &src[src_at..src_at + len],
                        "{len} {src_at} {dst_at}"
                    );
                    assert!(dst[..dst_at].iter().all(|&b| b == 0xAA), "wrote before the destination");
                    assert!(
                        dst[dst_at + len..].iter().all(|&b| b == 0xAA),
                        "wrote past the destination"
                    );
                }
            }
        }
    }

    #[test]
    fn copies_a_large_block_seen_by_another_thread() {
        let src = pattern((1 << 20) + 24);
        let mut dst = vec![0u8; 1 << 20];
        std::thread::scope(|s| {
            s.spawn(|| copy_uncached(&mut dst, &src[24..]));
        });
        assert!(dst == src[24..]);
    }

    #[test]
    #[should_panic(expected = "lengths differ")]
    fn different_lengths_panic_like_copy_from_slice() {
        copy_uncached(&mut [0u8; 3], &[1u8; 4]);
    }
}
