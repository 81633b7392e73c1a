//! Byte shuffle: element `i`, byte `j` moves to position `j * n + i` (n = whole elements).
//! Trailing bytes that do not fill an element are copied as they are.

/// Shuffles `src` into `dst` (same length) for elements of `typesize` bytes.
///
/// # Panics
/// If `src` and `dst` differ in length (an internal invariant; callers size `dst`).
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(src.len(), dst.len(), "shuffle buffers must have equal length");
    match typesize {
        2 => shuffle_fixed::<2>(src, dst),
        4 => shuffle_fixed::<4>(src, dst),
        8 => shuffle8(src, dst),
        16 => shuffle_fixed::<16>(src, dst),
        _ => shuffle_any(typesize, src, dst),
    }
}

/// Inverse of [`shuffle`].
///
/// # Panics
/// If `src` and `dst` differ in length.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    unshuffle_to(typesize, src, dst, Stores::Cached);
}

/// How the inverse filters write their output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stores {
    /// Ordinary stores, for output that is read again soon.
    Cached,
    /// Stores that bypass the caches where the platform has them (see [`crate::copy`]), for
    /// parts of reads larger than the caches.
    Uncached,
}

/// [`unshuffle`], writing with `stores`.
pub(crate) fn unshuffle_to(typesize: usize, src: &[u8], dst: &mut [u8], stores: Stores) {
    assert_eq!(src.len(), dst.len(), "unshuffle buffers must have equal length");
    match typesize {
        2 => unshuffle_fixed::<2>(src, dst),
        4 => unshuffle_fixed::<4>(src, dst),
        8 => unshuffle8::<false>(src, dst, stores),
        16 => unshuffle_fixed::<16>(src, dst),
        _ => unshuffle_any(typesize, src, dst),
    }
}

/// Transposes an 8x8 byte matrix held as 8 little-endian rows (byte k of row r becomes byte r
/// of row k) in three rounds of masked swaps: 1-, 2- then 4-byte blocks.
#[inline(always)]
fn transpose8x8(r: &mut [u64; 8]) {
    /// Per round: shift, mask of the bytes that move, and the row pairs that swap them.
    type Round = (u32, u64, [(usize, usize); 4]);
    const ROUNDS: [Round; 3] = [
        (8, 0x00FF_00FF_00FF_00FF, [(0, 1), (2, 3), (4, 5), (6, 7)]),
        (16, 0x0000_FFFF_0000_FFFF, [(0, 2), (1, 3), (4, 6), (5, 7)]),
        (32, 0x0000_0000_FFFF_FFFF, [(0, 4), (1, 5), (2, 6), (3, 7)]),
    ];
    for (shift, mask, pairs) in ROUNDS {
        for (a, b) in pairs {
            let t = ((r[a] >> shift) ^ r[b]) & mask;
            r[b] ^= t;
            r[a] ^= t << shift;
        }
    }
}

/// Element sizes 2, 4 and 16, eight elements at a time: each 8-byte slice of them (an
/// element, zero-extended, or half of a 16-byte one) becomes a row of an 8x8 byte matrix, and
/// the transpose in registers turns rows into the lanes' next 8 bytes. About 3x the
/// byte-by-byte loop.
fn shuffle_fixed<const N: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / N;
    let body = n * N;
    dst[body..].copy_from_slice(&src[body..]);
    let width = N.min(8);
    let (head, tail_elems) = src[..body].split_at(n / 8 * 8 * N);
    for (g, group) in head.chunks_exact(8 * N).enumerate() {
        for half in 0..N.div_ceil(8) {
            let mut rows = [0u64; 8];
            for (row, e) in rows.iter_mut().zip(group.chunks_exact(N)) {
                let mut bytes = [0u8; 8];
                bytes[..width].copy_from_slice(&e[half * 8..half * 8 + width]);
                *row = u64::from_le_bytes(bytes);
            }
            transpose8x8(&mut rows);
            for (j, row) in rows.iter().take(width).enumerate() {
                let lane = (half * 8 + j) * n + g * 8;
                dst[lane..lane + 8].copy_from_slice(&row.to_le_bytes());
            }
        }
    }
    let done = n / 8 * 8;
    for (i, e) in tail_elems.chunks_exact(N).enumerate() {
        for (j, &b) in e.iter().enumerate() {
            dst[j * n + done + i] = b;
        }
    }
}

/// Unshuffles 8-byte elements and undoes their delta coding (wrapping prefix sum) in the same
/// pass: the result of `unshuffle` then `delta_decode`, with one trip over memory instead of two.
pub(crate) fn unshuffle8_undelta(src: &[u8], dst: &mut [u8], stores: Stores) {
    assert_eq!(src.len(), dst.len(), "unshuffle buffers must have equal length");
    unshuffle8::<true>(src, dst, stores);
}

/// Inverse of [`shuffle_fixed`].
fn unshuffle_fixed<const N: usize>(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / N;
    let body = n * N;
    dst[body..].copy_from_slice(&src[body..]);
    let width = N.min(8);
    let lanes: [&[u8]; N] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    let (head, tail_elems) = dst[..body].split_at_mut(n / 8 * 8 * N);
    for (g, group) in head.chunks_exact_mut(8 * N).enumerate() {
        for half in 0..N.div_ceil(8) {
            let mut rows = [0u64; 8];
            for (row, lane) in rows.iter_mut().zip(&lanes[half * 8..half * 8 + width]) {
                *row = u64::from_le_bytes(lane[g * 8..g * 8 + 8].try_into().expect("8 bytes"));
            }
            transpose8x8(&mut rows);
            for (row, e) in rows.iter().zip(group.chunks_exact_mut(N)) {
                e[half * 8..half * 8 + width].copy_from_slice(&row.to_le_bytes()[..width]);
            }
        }
    }
    let done = n / 8 * 8;
    for (i, e) in tail_elems.chunks_exact_mut(N).enumerate() {
        for (b, lane) in e.iter_mut().zip(lanes) {
            *b = lane[done + i];
        }
    }
}

/// Element size 8 (float64, int64), the common case, specialized: eight 8-byte loads, a
/// transpose in registers, eight 8-byte stores (1.4x the generic `shuffle_fixed::<8>`).
fn shuffle8(src: &[u8], dst: &mut [u8]) {
    let n = src.len() / 8;
    let body = n * 8;
    dst[body..].copy_from_slice(&src[body..]);
    let (head, tail_elems) = src[..body].split_at(n / 8 * 64);
    for (g, group) in head.chunks_exact(64).enumerate() {
        let mut rows = [0u64; 8];
        for (row, e) in rows.iter_mut().zip(group.chunks_exact(8)) {
            *row = u64::from_le_bytes(e.try_into().expect("8 bytes"));
        }
        transpose8x8(&mut rows);
        for (j, row) in rows.iter().enumerate() {
            dst[j * n + g * 8..j * n + g * 8 + 8].copy_from_slice(&row.to_le_bytes());
        }
    }
    let done = n / 8 * 8;
    for (i, e) in tail_elems.chunks_exact(8).enumerate() {
        for (j, &b) in e.iter().enumerate() {
            dst[j * n + done + i] = b;
        }
    }
}

/// Inverse of [`shuffle8`]; with `DELTA`, also the running sum of the elements.
fn unshuffle8<const DELTA: bool>(src: &[u8], dst: &mut [u8], stores: Stores) {
    let n = src.len() / 8;
    let body = n * 8;
    dst[body..].copy_from_slice(&src[body..]);
    let lanes: [&[u8]; 8] = std::array::from_fn(|j| &src[j * n..(j + 1) * n]);
    #[cfg(target_arch = "x86_64")]
    let (done, mut acc) = x86_64::unshuffle8::<DELTA>(&lanes, &mut dst[..n / 16 * 128], stores);
    #[cfg(not(target_arch = "x86_64"))]
    let (done, mut acc) = {
        let _ = stores;
        (0usize, 0u64)
    };
    let (head, tail_elems) = dst[done * 8..body].split_at_mut((n - done) / 8 * 64);
    let lanes: [&[u8]; 8] = lanes.map(|lane| &lane[done..]);
    for (g, group) in head.chunks_exact_mut(64).enumerate() {
        let mut rows = [0u64; 8];
        for (row, lane) in rows.iter_mut().zip(lanes) {
            *row = u64::from_le_bytes(lane[g * 8..g * 8 + 8].try_into().expect("8 bytes"));
        }
        transpose8x8(&mut rows);
        for (row, e) in rows.iter().zip(group.chunks_exact_mut(8)) {
            let v = if DELTA {
                acc = acc.wrapping_add(*row);
                acc
            } else {
                *row
            };
            e.copy_from_slice(&v.to_le_bytes());
        }
    }
    let done = (n - done) / 8 * 8;
    for (i, e) in tail_elems.chunks_exact_mut(8).enumerate() {
        for (b, lane) in e.iter_mut().zip(lanes) {
            *b = lane[done + i];
        }
        if DELTA {
            acc = acc.wrapping_add(u64::from_le_bytes((&*e).try_into().expect("8 bytes")));
            e.copy_from_slice(&acc.to_le_bytes());
        }
    }
}

/// The SSE2 paths (SSE2 is part of the x86_64 baseline, so no detection is needed).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
mod x86_64 {
    use super::Stores;
    use std::arch::x86_64::{
        __m128i, _mm_add_epi64, _mm_loadu_si128, _mm_setzero_si128, _mm_sfence, _mm_shuffle_epi32, _mm_slli_si128,
        _mm_storeu_si128, _mm_stream_si128, _mm_unpackhi_epi16, _mm_unpackhi_epi32, _mm_unpackhi_epi8,
        _mm_unpacklo_epi16, _mm_unpacklo_epi32, _mm_unpacklo_epi8,
    };

    /// Unshuffles 16 elements of 8 bytes at a time into `dst` (a multiple of 128 bytes, at
    /// most 16 bytes from each lane per 128 of `dst`): one 16-byte load from each of the eight
    /// byte lanes, three rounds of interleaves, eight 16-byte stores. With `DELTA`, also their
    /// running sum, two elements per register. Answers the elements done and the running sum.
    /// Uncached stores need a 16-byte aligned `dst`; others are written with cached stores.
    ///
    /// # Panics
    /// If a lane holds fewer than `dst.len() / 8` bytes (callers cut `dst` to fit).
    pub(super) fn unshuffle8<const DELTA: bool>(lanes: &[&[u8]; 8], dst: &mut [u8], stores: Stores) -> (usize, u64) {
        let stream = stores == Stores::Uncached && dst.as_ptr().align_offset(16) == 0;
        // SAFETY: SSE2 is part of the x86_64 baseline: every CPU this code runs on has it.
        // Streaming stores are asked for only when `dst` is 16-byte aligned, as they need.
        unsafe {
            if stream {
                let done = unshuffle8_sse2::<DELTA, true>(lanes, dst);
                // Streaming stores are weakly ordered: make them visible before any later
                // store, such as the one that hands the buffer to another thread.
                _mm_sfence();
                done
            } else {
                unshuffle8_sse2::<DELTA, false>(lanes, dst)
            }
        }
    }

    /// # Safety
    /// With `STREAM`, `dst` must be 16-byte aligned.
    #[target_feature(enable = "sse2")]
    unsafe fn unshuffle8_sse2<const DELTA: bool, const STREAM: bool>(
        lanes: &[&[u8]; 8],
        dst: &mut [u8],
    ) -> (usize, u64) {
        let n = dst.len() / 8;
        assert!(dst.len().is_multiple_of(128) && lanes.iter().all(|lane| lane.len() >= n));
        let load = |lane: &[u8], at: usize| -> __m128i {
            let bytes = &lane[at..at + 16];
            // SAFETY: `bytes` is 16 bytes long (the slice above checked it); `loadu` has no
            // alignment requirement.
            unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
        };
        let mut acc = _mm_setzero_si128();
        for (g, out) in dst.chunks_exact_mut(128).enumerate() {
            let at = g * 16;
            let l: [__m128i; 8] = std::array::from_fn(|j| load(lanes[j], at));
            // Bytes 0-1, 2-3, 4-5, 6-7 of elements 0-7 (lo) and 8-15 (hi).
            let a = [
                _mm_unpacklo_epi8(l[0], l[1]),
                _mm_unpackhi_epi8(l[0], l[1]),
                _mm_unpacklo_epi8(l[2], l[3]),
                _mm_unpackhi_epi8(l[2], l[3]),
                _mm_unpacklo_epi8(l[4], l[5]),
                _mm_unpackhi_epi8(l[4], l[5]),
                _mm_unpacklo_epi8(l[6], l[7]),
                _mm_unpackhi_epi8(l[6], l[7]),
            ];
            // Bytes 0-3 of elements 0-3, 4-7, 8-11, 12-15; then bytes 4-7 of the same.
            let b = [
                _mm_unpacklo_epi16(a[0], a[2]),
                _mm_unpackhi_epi16(a[0], a[2]),
                _mm_unpacklo_epi16(a[1], a[3]),
                _mm_unpackhi_epi16(a[1], a[3]),
                _mm_unpacklo_epi16(a[4], a[6]),
                _mm_unpackhi_epi16(a[4], a[6]),
                _mm_unpacklo_epi16(a[5], a[7]),
                _mm_unpackhi_epi16(a[5], a[7]),
            ];
            // Whole elements, two per register, in order.
            let mut c = [
                _mm_unpacklo_epi32(b[0], b[4]),
                _mm_unpackhi_epi32(b[0], b[4]),
                _mm_unpacklo_epi32(b[1], b[5]),
                _mm_unpackhi_epi32(b[1], b[5]),
                _mm_unpacklo_epi32(b[2], b[6]),
                _mm_unpackhi_epi32(b[2], b[6]),
                _mm_unpacklo_epi32(b[3], b[7]),
                _mm_unpackhi_epi32(b[3], b[7]),
            ];
            if DELTA {
                for v in &mut c {
                    // [x, y] -> [acc + x, acc + x + y]; acc takes the upper sum in both halves.
                    let pair = _mm_add_epi64(*v, _mm_slli_si128::<8>(*v));
                    *v = _mm_add_epi64(pair, acc);
                    acc = _mm_shuffle_epi32::<0xEE>(*v);
                }
            }
            for (v, chunk) in c.iter().zip(out.chunks_exact_mut(16)) {
                // SAFETY: `chunk` is 16 bytes of `dst`, borrowed uniquely. `storeu` has no
                // alignment requirement; with `STREAM`, the caller vouches that `dst` is
                // 16-byte aligned, and `chunk` starts a multiple of 16 bytes into it.
                unsafe {
                    if STREAM {
                        _mm_stream_si128(chunk.as_mut_ptr().cast(), *v);
                    } else {
                        _mm_storeu_si128(chunk.as_mut_ptr().cast(), *v);
                    }
                }
            }
        }
        let mut sum = [0u8; 16];
        // SAFETY: `sum` is 16 bytes.
        unsafe { _mm_storeu_si128(sum.as_mut_ptr().cast(), acc) };
        (n, u64::from_le_bytes(sum[..8].try_into().expect("8 bytes")))
    }
}

fn shuffle_any(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len().checked_div(ts).unwrap_or(0);
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
    for (i, e) in src[..body].chunks_exact(ts.max(1)).enumerate() {
        for (j, &b) in e.iter().enumerate() {
            dst[j * n + i] = b;
        }
    }
}

fn unshuffle_any(ts: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len().checked_div(ts).unwrap_or(0);
    let body = n * ts;
    dst[body..].copy_from_slice(&src[body..]);
    for (i, e) in dst[..body].chunks_exact_mut(ts.max(1)).enumerate() {
        for (j, b) in e.iter_mut().enumerate() {
            *b = src[j * n + i];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_matches_the_spec() {
        let src = [1, 2, 3, 4, 5, 6, 7, 8, 9u8];
        let mut dst = [0u8; 9];
        shuffle(4, &src, &mut dst);
        assert_eq!(dst, [1, 5, 2, 6, 3, 7, 4, 8, 9]);
        shuffle(3, &src, &mut dst);
        assert_eq!(dst, [1, 4, 7, 2, 5, 8, 3, 6, 9]);
    }

    #[test]
    fn fixed_and_generic_paths_agree() {
        for len in [0usize, 7, 8, 63, 64, 65, 127, 128, 200, 519, 1000, 1031, 10_007] {
            let src: Vec<u8> = (0..len as u32).map(|i| (i * 31 + i / 7) as u8).collect();
            check_paths_agree(&src);
        }
    }

    fn check_paths_agree(src: &[u8]) {
        for ts in [2usize, 4, 8, 16] {
            let (mut a, mut b) = (vec![0; src.len()], vec![0; src.len()]);
            shuffle(ts, src, &mut a);
            shuffle_any(ts, src, &mut b);
            assert_eq!(a, b, "typesize {ts}");
            let mut back = vec![0; src.len()];
            unshuffle(ts, &a, &mut back);
            assert_eq!(back, src);
            unshuffle_any(ts, &a, &mut back);
            assert_eq!(back, src);
        }
        // Fused unshuffle + delta decoding equals the two passes.
        let mut a = vec![0; src.len()];
        shuffle(8, src, &mut a);
        let mut two_pass = vec![0; src.len()];
        unshuffle(8, &a, &mut two_pass);
        crate::filter::delta::delta_decode(8, &mut two_pass);
        let mut fused = vec![0; src.len()];
        unshuffle8_undelta(&a, &mut fused, Stores::Cached);
        assert_eq!(fused, two_pass);
        // Uncached stores write the same bytes, wherever the output starts.
        for at in [0usize, 1, 8] {
            let mut wide = vec![0u8; src.len() + 16];
            unshuffle8_undelta(&a, &mut wide[at..at + src.len()], Stores::Uncached);
            assert_eq!(wide[at..at + src.len()], two_pass[..]);
            unshuffle_to(8, &a, &mut wide[at..at + src.len()], Stores::Uncached);
            assert_eq!(wide[at..at + src.len()], src[..]);
        }
    }
}
