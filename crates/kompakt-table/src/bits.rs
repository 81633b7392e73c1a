//! Bit packing of unsigned codes, least significant bit first (docs/FORMAT.md, "Pages":
//! `count` codes of `b` bits take `ceil(count * b / 8)` bytes).
//!
//! Unpacking works on groups of 8 codes, which always span exactly `b` bytes. A kernel per
//! width (`b` a constant) turns a group into fixed shifts of unaligned 8-byte loads, with no
//! division or branch per code: several times faster than a loop with a variable width.

use std::ops::Range;

/// Codes per group: 8 codes of `b` bits are exactly `b` bytes.
const GROUP: usize = 8;
/// Groups per kernel call (codes handed to the caller at a time: 512).
const CHUNK_GROUPS: usize = 64;
/// Slack a kernel may read past a group's last byte (one 16-byte load at a byte offset).
const SLACK: usize = 16;

/// Appends `bits`-bit codes (each below `2^bits`), least significant bit first, in
/// `ceil(count * bits / 8)` bytes.
pub(crate) fn pack(codes: impl Iterator<Item = u64>, bits: usize, out: &mut Vec<u8>) {
    assert!(bits <= 64, "codes of at most 64 bits");
    if bits == 0 {
        return;
    }
    let packer = PACKERS[bits];
    let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
    let start = out.len();
    out.reserve((codes.size_hint().0 * bits).div_ceil(8) + 64);
    let mut codes = codes;
    let mut chunk = [0u64; GROUP * CHUNK_GROUPS];
    let mut count = 0usize;
    loop {
        let mut filled = 0usize;
        for (slot, code) in chunk.iter_mut().zip(codes.by_ref()) {
            debug_assert!(code & !mask == 0, "a {bits}-bit code of {code:#x}");
            // Bits above the width would spill into the next code.
            *slot = code & mask;
            filled += 1;
        }
        if filled == 0 {
            break;
        }
        // A last, partial group is padded with zero codes, then cut to whole bytes below.
        let groups = filled.div_ceil(GROUP);
        chunk[filled..groups * GROUP].fill(0);
        packer(&chunk[..groups * GROUP], out);
        count += filled;
        if filled < chunk.len() {
            break;
        }
    }
    out.truncate(start + (count * bits).div_ceil(8));
}

type Packer = fn(&[u64], &mut Vec<u8>);

/// Appends groups of 8 `B`-bit codes, `B` bytes each. With `B` a constant, where each code
/// lands (and when the accumulator is full) is known at compile time.
fn packer<const B: usize>(codes: &[u64], out: &mut Vec<u8>) {
    for group in codes.chunks_exact(GROUP) {
        let mut bytes = [0u8; 64];
        let (mut acc, mut filled, mut at) = (0u128, 0usize, 0usize);
        for &code in group {
            acc |= u128::from(code) << filled;
            filled += B;
            if filled >= 64 {
                bytes[at..at + 8].copy_from_slice(&(acc as u64).to_le_bytes());
                (acc, filled, at) = (acc >> 64, filled - 64, at + 8);
            }
        }
        // 8 codes are 8B bits: the group ends on a byte boundary.
        bytes[at..at + filled / 8].copy_from_slice(&acc.to_le_bytes()[..filled / 8]);
        out.extend_from_slice(&bytes[..B]);
    }
}

/// Unpacks codes `rows` of `bits` bits packed by [`pack`] (`packed` must hold at least
/// `ceil(rows.end * bits / 8)` bytes), handing them to `f(first_row, codes)` in order, a chunk
/// at a time.
pub(crate) fn unpack(packed: &[u8], rows: Range<usize>, bits: usize, mut f: impl FnMut(usize, &[u64])) {
    assert!(bits <= 64, "codes of at most 64 bits");
    assert!(
        rows.end.saturating_mul(bits).div_ceil(8) <= packed.len(),
        "packed codes cover the rows"
    );
    if rows.is_empty() {
        return;
    }
    let mut codes = [0u64; GROUP * CHUNK_GROUPS];
    if bits == 0 {
        for start in rows.clone().step_by(codes.len()) {
            f(start, &codes[..codes.len().min(rows.end - start)]);
        }
        return;
    }
    let kernel = KERNELS[bits];
    let (first_group, end_group) = (rows.start / GROUP, rows.end.div_ceil(GROUP));
    // Groups whose loads stay inside `packed`; the rest read from a zero-padded copy.
    let safe_groups = (packed.len().saturating_sub(SLACK) / bits).min(end_group);
    let tail: Vec<u8> = if safe_groups < end_group {
        let from = safe_groups * bits;
        let mut t = Vec::with_capacity(packed.len() - from + SLACK + bits);
        t.extend_from_slice(&packed[from..]);
        t.resize((end_group - safe_groups) * bits + SLACK, 0);
        t
    } else {
        Vec::new()
    };
    let mut g = first_group;
    while g < end_group {
        let n = (end_group - g).min(CHUNK_GROUPS);
        let n = if g < safe_groups { n.min(safe_groups - g) } else { n };
        let src = if g < safe_groups {
            &packed[g * bits..]
        } else {
            &tail[(g - safe_groups) * bits..]
        };
        let out = &mut codes[..n * GROUP];
        kernel(src, out);
        let first = g * GROUP;
        let lo = rows.start.max(first);
        let hi = rows.end.min(first + out.len());
        f(lo, &out[lo - first..hi - first]);
        g += n;
    }
}

type Kernel = fn(&[u8], &mut [u64]);

/// Unpacks `out.len() / 8` groups of `B`-bit codes from the start of `src`, which holds at least
/// `B` bytes per group plus [`SLACK`].
fn kernel<const B: usize>(src: &[u8], out: &mut [u64]) {
    for (g, codes) in out.chunks_exact_mut(GROUP).enumerate() {
        // One bounds check per group; the offsets below are constants within it.
        let group = &src[g * B..g * B + SLACK + B];
        for (j, code) in codes.iter_mut().enumerate() {
            *code = code_in_group::<B>(group, j);
        }
    }
}

/// Code `j` (0..8) of a group of `B`-bit codes (`group`: its `B` bytes plus [`SLACK`]).
#[inline(always)]
fn code_in_group<const B: usize>(group: &[u8], j: usize) -> u64 {
    let mask = if B == 64 { u64::MAX } else { (1u64 << B) - 1 };
    let bit = j * B;
    let at = bit / 8;
    if B <= 56 {
        // A code and its bit offset (< 8) fit in one 8-byte load.
        let word: [u8; 8] = group[at..at + 8].try_into().expect("8 bytes");
        (u64::from_le_bytes(word) >> (bit % 8)) & mask
    } else {
        let word: [u8; 16] = group[at..at + 16].try_into().expect("16 bytes");
        (u128::from_le_bytes(word) >> (bit % 8)) as u64 & mask
    }
}

/// Unpacks codes `rows` like [`unpack`] and stores each as `base + code` (wrapping), in
/// `W`-byte little-endian words: `dst` holds `W * rows.len()` bytes.
///
/// A frame-of-reference column is this and nothing else. Whole groups go through a kernel per
/// (`W`, `b`) that writes the words directly: the codes no longer make a round trip through
/// a buffer of `u64`s, which took about a third of the unpacking time of 4-byte columns.
pub(crate) fn unpack_offset<const W: usize>(packed: &[u8], rows: Range<usize>, bits: usize, base: u64, dst: &mut [u8]) {
    assert!(W <= 8 && bits <= 8 * W, "codes of at most the word's width");
    assert_eq!(dst.len(), W * rows.len(), "a word per row");
    let by_codes = |packed: &[u8], rows: Range<usize>, dst: &mut [u8]| {
        let (words, _) = dst.as_chunks_mut::<W>();
        let lo = rows.start;
        unpack(packed, rows, bits, |first, codes| {
            for (w, &code) in words[first - lo..].iter_mut().zip(codes) {
                w.copy_from_slice(&base.wrapping_add(code).to_le_bytes()[..W]);
            }
        });
    };
    let kernel = match (bits, W) {
        (0, _) => None,
        #[cfg(target_arch = "x86_64")]
        (_, 4) if avx2::available(bits) => Some(avx2::KERNELS[bits]),
        (_, 1) => Some(FUSED_1[bits]),
        (_, 2) => Some(FUSED_2[bits]),
        (_, 4) => Some(FUSED_4[bits]),
        (_, 8) => Some(FUSED_8[bits]),
        _ => None,
    };
    // Whole groups whose loads stay inside `packed` (as in `unpack`); the partial groups at
    // either end, and any group near the end of `packed`, go through `unpack` (its u64 kernel,
    // on a zero-padded copy of the tail).
    let first = rows.start.div_ceil(GROUP);
    let end = (rows.end / GROUP).min(packed.len().saturating_sub(SLACK) / bits.max(1));
    let Some(kernel) = kernel.filter(|_| first < end) else {
        return by_codes(packed, rows, dst);
    };
    assert!(
        rows.end.saturating_mul(bits).div_ceil(8) <= packed.len(),
        "packed codes cover the rows"
    );
    let (head, rest) = dst.split_at_mut(W * (first * GROUP - rows.start));
    let (middle, tail) = rest.split_at_mut(W * GROUP * (end - first));
    by_codes(packed, rows.start..first * GROUP, head);
    kernel(&packed[first * bits..], base, middle);
    by_codes(packed, end * GROUP..rows.end, tail);
}

type FusedKernel = fn(&[u8], u64, &mut [u8]);

/// Unpacks `out.len() / (8 W)` groups of `B`-bit codes from the start of `src` (at least `B`
/// bytes per group plus [`SLACK`]) into `W`-byte words `base + code`.
fn fused<const B: usize, const W: usize>(src: &[u8], base: u64, out: &mut [u8]) {
    let (words, _) = out.as_chunks_mut::<W>();
    for (g, words) in words.chunks_exact_mut(GROUP).enumerate() {
        let group = &src[g * B..g * B + SLACK + B];
        for (j, word) in words.iter_mut().enumerate() {
            let code = code_in_group::<B>(group, j);
            word.copy_from_slice(&base.wrapping_add(code).to_le_bytes()[..W]);
        }
    }
}

/// [`fused`] for 4-byte words and codes of at most 25 bits, with AVX2: a group of 8 codes is
/// two 16-byte loads, one byte shuffle that puts each code's 4 bytes in its own lane, one
/// shift per lane, a mask and an add: 8 instructions where the scalar kernel needs about 40.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    // The only unsafe code here: unaligned vector loads and stores through references to
    // arrays of exactly their size, and the call of the `#[target_feature]` function in
    // `entry`, which asserts on every call that the CPU has AVX2 (`available` tells callers
    // whether to pick these kernels at all).
    #![allow(unsafe_code)]

    use super::{FusedKernel, GROUP, SLACK};
    use std::arch::x86_64::*;

    /// Widest code that, at any bit offset (0..8) in its first byte, lies within 4 bytes.
    const MAX_BITS: usize = 25;

    /// Whether [`KERNELS`]`[bits]` may be called: a width it covers, on a CPU with AVX2 (the
    /// detection runs once; std caches it).
    pub(super) fn available(bits: usize) -> bool {
        (1..=MAX_BITS).contains(&bits) && std::is_x86_feature_detected!("avx2")
    }

    /// Kernels by width; call one only when [`available`] says so.
    pub(super) static KERNELS: [FusedKernel; MAX_BITS + 1] = [
        |_, _, _| unreachable!("width 0 has no kernel"),
        entry::<1>,
        entry::<2>,
        entry::<3>,
        entry::<4>,
        entry::<5>,
        entry::<6>,
        entry::<7>,
        entry::<8>,
        entry::<9>,
        entry::<10>,
        entry::<11>,
        entry::<12>,
        entry::<13>,
        entry::<14>,
        entry::<15>,
        entry::<16>,
        entry::<17>,
        entry::<18>,
        entry::<19>,
        entry::<20>,
        entry::<21>,
        entry::<22>,
        entry::<23>,
        entry::<24>,
        entry::<25>,
    ];

    fn entry<const B: usize>(src: &[u8], base: u64, out: &mut [u8]) {
        assert!(
            std::is_x86_feature_detected!("avx2"),
            "AVX2 kernels run only where AVX2 is"
        );
        // SAFETY: the CPU has AVX2 (asserted above: std caches the detection, so this costs a
        // load and a branch per call of a few hundred groups).
        unsafe { groups::<B>(src, base, out) }
    }

    /// Byte `4j + k` of the shuffle picks byte `first(j) + k` of its lane's load, where
    /// `first(j)` is code `j`'s first byte counted from that load: the group's byte 0 for
    /// codes 0-3, its byte `B / 2` (where code 4 starts) for codes 4-7.
    const fn shuffle<const B: usize>() -> [u8; 32] {
        let mut m = [0u8; 32];
        let mut j = 0;
        while j < GROUP {
            let first = j * B / 8 - if j < 4 { 0 } else { B / 2 };
            let mut k = 0;
            while k < 4 {
                // At most 12 (B = 25, j = 3 or 7): inside the lane's 16 bytes.
                m[4 * j + k] = (first + k) as u8;
                k += 1;
            }
            j += 1;
        }
        m
    }

    /// Lane `j`: code `j`'s bit offset within its first byte, as a little-endian `u32`.
    const fn shifts<const B: usize>() -> [u8; 32] {
        let mut m = [0u8; 32];
        let mut j = 0;
        while j < GROUP {
            m[4 * j] = (j * B % 8) as u8;
            j += 1;
        }
        m
    }

    #[target_feature(enable = "avx2")]
    fn load128(bytes: &[u8; 16]) -> __m128i {
        // SAFETY: `bytes` is 16 readable bytes; the load has no alignment requirement.
        unsafe { _mm_loadu_si128(bytes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx2")]
    fn load256(bytes: &[u8; 32]) -> __m256i {
        // SAFETY: `bytes` is 32 readable bytes; the load has no alignment requirement.
        unsafe { _mm256_loadu_si256(bytes.as_ptr().cast()) }
    }

    #[target_feature(enable = "avx2")]
    fn store256(out: &mut [u8; 32], v: __m256i) {
        // SAFETY: `out` is 32 writable bytes; the store has no alignment requirement.
        unsafe { _mm256_storeu_si256(out.as_mut_ptr().cast(), v) }
    }

    /// `out.len() / 32` groups of `B`-bit codes from `src` (`B` bytes per group plus
    /// [`SLACK`]) as 4-byte words `base + code`.
    #[target_feature(enable = "avx2")]
    fn groups<const B: usize>(src: &[u8], base: u64, out: &mut [u8]) {
        let shuffle = load256(&const { shuffle::<B>() });
        let shifts = load256(&const { shifts::<B>() });
        let mask = _mm256_set1_epi32(((1u32 << B) - 1) as i32);
        // The sum wraps at 32 bits, as the words do.
        let base = _mm256_set1_epi32(base as u32 as i32);
        let (words, _) = out.as_chunks_mut::<32>();
        for (g, words) in words.iter_mut().enumerate() {
            let group = &src[g * B..g * B + B + SLACK];
            let lo = load128(group[..16].try_into().expect("16 bytes"));
            let hi = load128(group[B / 2..B / 2 + 16].try_into().expect("16 bytes"));
            let v = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(lo), hi);
            let v = _mm256_srlv_epi32(_mm256_shuffle_epi8(v, shuffle), shifts);
            store256(words, _mm256_add_epi32(_mm256_and_si256(v, mask), base));
        }
    }
}

macro_rules! fused_for {
    ($w:literal; $($b:literal)*) => {
        [|_: &[u8], _: u64, _: &mut [u8]| unreachable!("width 0 has no kernel"), $(fused::<$b, $w>,)*]
    };
}

static FUSED_1: [FusedKernel; 9] = fused_for!(1; 1 2 3 4 5 6 7 8);
static FUSED_2: [FusedKernel; 17] = fused_for!(2; 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
static FUSED_4: [FusedKernel; 33] = fused_for!(4;
    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32);
static FUSED_8: [FusedKernel; 65] = fused_for!(8;
    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
    33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64);

macro_rules! by_width {
    ($($b:literal)*) => {
        (
            [|_: &[u8], _: &mut [u64]| unreachable!("width 0 has no kernel"), $(kernel::<$b>,)*],
            [|_: &[u64], _: &mut Vec<u8>| unreachable!("width 0 has no packer"), $(packer::<$b>,)*],
        )
    };
}

static KERNELS: [Kernel; 65] = WIDTHS.0;
static PACKERS: [Packer; 65] = WIDTHS.1;
const WIDTHS: ([Kernel; 65], [Packer; 65]) = by_width!(
    1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32
    33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64
);

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The definition: code `i` is bits `i*b .. (i+1)*b` of the little-endian bit string.
    fn reference(packed: &[u8], i: usize, bits: usize) -> u64 {
        (0..bits).fold(0u64, |acc, k| {
            let bit = i * bits + k;
            acc | (u64::from(packed[bit / 8] >> (bit % 8) & 1) << k)
        })
    }

    /// The packing rule written plainly: the bytes must not change (the format depends on it).
    fn pack_reference(codes: &[u64], bits: usize) -> Vec<u8> {
        let mut out = vec![0u8; (codes.len() * bits).div_ceil(8)];
        for (i, &c) in codes.iter().enumerate() {
            for k in 0..bits {
                let bit = i * bits + k;
                out[bit / 8] |= (((c >> k) & 1) as u8) << (bit % 8);
            }
        }
        out
    }

    fn collect(packed: &[u8], rows: Range<usize>, bits: usize) -> Vec<u64> {
        let mut got = Vec::new();
        let mut next = rows.start;
        unpack(packed, rows, bits, |first, codes| {
            assert_eq!(first, next, "chunks in order, without gaps");
            next += codes.len();
            got.extend_from_slice(codes);
        });
        got
    }

    /// 1037 scrambled `bits`-bit codes (`spin` varies them) and their packed bytes.
    fn sample_codes(bits: usize, spin: u32) -> (Vec<u64>, Vec<u8>) {
        let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
        let codes: Vec<u64> = (0..1037u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(spin) & mask)
            .collect();
        let mut packed = Vec::new();
        pack(codes.iter().copied(), bits, &mut packed);
        (codes, packed)
    }

    #[test]
    fn every_width_round_trips() {
        for bits in 0..=64usize {
            let (codes, packed) = sample_codes(bits, 17);
            assert_eq!(packed, pack_reference(&codes, bits), "{bits} bits");
            assert_eq!(collect(&packed, 0..codes.len(), bits), codes, "{bits} bits");
            for (i, &c) in codes.iter().enumerate().take(70) {
                if bits > 0 {
                    assert_eq!(reference(&packed, i, bits), c, "{bits} bits, code {i}");
                }
            }
            assert_eq!(collect(&packed, 517..519, bits), codes[517..519], "{bits} bits");
            assert!(collect(&packed, 9..9, bits).is_empty());
        }
    }

    /// `unpack_offset::<W>` against the definition: word `i` is `base + code i`, truncated.
    fn check_offset<const W: usize>(packed: &[u8], codes: &[u64], rows: Range<usize>, bits: usize, base: u64) {
        let mut dst = vec![0xA5u8; W * rows.len()];
        unpack_offset::<W>(packed, rows.clone(), bits, base, &mut dst);
        for (i, word) in rows.clone().zip(dst.chunks_exact(W)) {
            let want = &base.wrapping_add(codes[i]).to_le_bytes()[..W];
            assert_eq!(word, want, "W={W}, {bits} bits, rows {rows:?}, row {i}");
        }
    }

    #[test]
    fn offset_words_match_the_definition() {
        let base = 0xF1E2_D3C4_B5A6_9788u64;
        for bits in 0..=64usize {
            let (codes, packed) = sample_codes(bits, 29);
            // Whole groups, partial groups at either end, groups near the end of `packed`
            // (the kernel must not read past it), and empty windows.
            for rows in [
                0..1037,
                0..1024,
                3..1037,
                5..13,
                8..16,
                1000..1037,
                1030..1037,
                9..9,
                0..0,
            ] {
                if bits <= 8 {
                    check_offset::<1>(&packed, &codes, rows.clone(), bits, base);
                }
                if bits <= 16 {
                    check_offset::<2>(&packed, &codes, rows.clone(), bits, base);
                }
                if bits <= 32 {
                    check_offset::<4>(&packed, &codes, rows.clone(), bits, base);
                }
                check_offset::<8>(&packed, &codes, rows, bits, base);
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_words_equal_the_scalar_kernel() {
        if !std::is_x86_feature_detected!("avx2") {
            eprintln!("no AVX2 on this CPU: only the scalar kernel runs here");
            return;
        }
        for (bits, &scalar) in FUSED_4.iter().enumerate().take(26).skip(1) {
            assert!(avx2::available(bits));
            let groups = 37;
            let src: Vec<u8> = (0..groups * bits + SLACK)
                .map(|i| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(23) as u8)
                .collect();
            for base in [0u64, 1, 0xFFFF_FFFF, 0xDEAD_BEEF_F00D_CAFE] {
                let (mut fast, mut slow) = (vec![0u8; groups * 32], vec![1u8; groups * 32]);
                avx2::KERNELS[bits](&src, base, &mut fast);
                scalar(&src, base, &mut slow);
                assert_eq!(fast, slow, "{bits} bits, base {base:#x}");
            }
        }
        assert!(!avx2::available(0) && !avx2::available(26));
    }

    proptest! {
        #[test]
        fn windows_match_the_definition(
            bits in 1usize..=64,
            n in 1usize..2000,
            a in 0usize..2000,
            b in 0usize..2000,
            seed in any::<u64>(),
        ) {
            let mask = if bits == 64 { u64::MAX } else { (1u64 << bits) - 1 };
            let codes: Vec<u64> = (0..n as u64).map(|i| (i ^ seed).wrapping_mul(0xD6E8_FEB8_6659_FD93) & mask).collect();
            let mut packed = vec![7u8; seed as usize % 3];
            let before = packed.len();
            pack(codes.iter().copied(), bits, &mut packed);
            prop_assert_eq!(&packed[before..], &pack_reference(&codes, bits)[..]);
            let packed = packed[before..].to_vec();
            let (lo, hi) = ((a % (n + 1)).min(b % (n + 1)), (a % (n + 1)).max(b % (n + 1)));
            prop_assert_eq!(collect(&packed, lo..hi, bits), codes[lo..hi].to_vec());
            for (i, &code) in codes.iter().enumerate().take(hi.min(lo + 20)).skip(lo) {
                prop_assert_eq!(reference(&packed, i, bits), code);
            }
            // The same window as words, through the fused kernels.
            let base = seed.rotate_left(7);
            check_offset::<8>(&packed, &codes, lo..hi, bits, base);
            if bits <= 8 {
                check_offset::<1>(&packed, &codes, lo..hi, bits, base);
            }
            if bits <= 32 {
                check_offset::<4>(&packed, &codes, lo..hi, bits, base);
            }
            if bits <= 16 {
                check_offset::<2>(&packed, &codes, lo..hi, bits, base);
            }
        }
    }
}
