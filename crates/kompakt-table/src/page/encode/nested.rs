//! Encodings that nest a page of values: scaled integers (a common factor) and decimal floats
//! (integers over a power of ten, plus the exceptions).

use super::choose::choose_words;
use super::{Choice, Kind};
use crate::page::{encoding, load, store};

/// The largest factor common to every value's offset from `base` (the smallest value), if it
/// is [`MIN_FACTOR`] or more; stops at the first value that leaves none.
pub(super) fn common_factor<const W: usize>(words: &[[u8; W]], base: u64) -> Option<u64> {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    let mut g = 0u64;
    for w in words {
        let d = load::<W>(w).wrapping_sub(base) & mask;
        // Zero (the minimum itself) is a multiple of every factor.
        if d != 0 && (g == 0 || !d.is_multiple_of(g)) {
            g = gcd(g, d);
            if g < MIN_FACTOR {
                return None;
            }
        }
    }
    // A factor of 2 or 3 saves a bit or two of codes the codec mostly finds anyway, and would
    // make the file need table layout 3.
    (g >= MIN_FACTOR).then_some(g)
}

/// Smallest common factor a scaled page is written for.
const MIN_FACTOR: u64 = 4;

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// A scaled page: the base, the factor, then the quotients as a nested page of values.
pub(super) fn encode_scaled<const W: usize>(
    words: &[[u8; W]],
    base: u64,
    factor: u64,
    choice: Choice<'_>,
    out: &mut Vec<u8>,
) -> (u8, u16) {
    let mask = if W == 8 { u64::MAX } else { (1u64 << (8 * W)) - 1 };
    out.push(encoding::SCALED);
    out.extend_from_slice(&base.to_le_bytes()[..W]);
    out.extend_from_slice(&factor.to_le_bytes()[..W]);
    let mut quotients = vec![0u8; words.len() * W];
    for (q, w) in quotients.as_chunks_mut::<W>().0.iter_mut().zip(words) {
        store::<W>((load::<W>(w).wrapping_sub(base) & mask) / factor, q);
    }
    let inner = Choice {
        scaled: false,
        decimal: false,
        weigh_dict: false,
        ..choice
    };
    let (_, needs) = choose_words::<W>(&quotients, Kind::Int { signed: false }, inner, out);
    (encoding::SCALED, needs.max(3))
}

/// Values sampled to choose a decimal page's power of ten.
const DECIMAL_SAMPLE: usize = 64;
/// Most exceptions a decimal page may carry, as a fraction of its rows (1/32): each costs
/// 4 + W bytes, and more of them mean the floats are not decimals.
const MAX_DECIMAL_EXCEPTIONS_SHIFT: u32 = 5;

/// The power of ten of a decimal page of floats like `sample` (their bits, `W` bytes each), and
/// how many bits the sample's codes span; `None` when they are not decimals worth a page.
fn sampled_power<const W: usize>(sample: &[u64]) -> Option<(u8, usize)> {
    let most = if W == 8 {
        crate::page::MAX_DECIMAL_EXP_F64
    } else {
        crate::page::MAX_DECIMAL_EXP_F32
    };
    // The smallest power that most of the sample fits: the narrowest codes. A few values with
    // more decimals (a computed 0.1 + 0.2) are exceptions, not a reason for 10^17.
    let fits = |e: u8| sample.iter().filter(|&&b| decimal_code::<W>(b, e).is_some()).count();
    let e = (0..=most).find(|&e| fits(e) * 8 >= sample.len() * 7)?;
    // And codes narrower than the floats by 16 bits (float32: 8): with 16 or 17 digits, most
    // doubles of modest size are some integer over 10^16 (a third is 3333333333333333 / 10^16),
    // which would cost a division per value to save nothing.
    let spare = if W == 8 { 16 } else { 8 };
    let (lo, hi) = sample
        .iter()
        .filter_map(|&b| decimal_code::<W>(b, e))
        .map(|c| if W == 8 { c as i64 } else { i64::from(c as u32 as i32) })
        .fold((i64::MAX, i64::MIN), |(lo, hi), c| (lo.min(c), hi.max(c)));
    let width = 64 - (hi.wrapping_sub(lo) as u64).leading_zeros() as usize;
    (width + spare <= 8 * W).then_some((e, width))
}

/// The code of `v` at power `e`, if `v` is exactly that code divided by 10^e.
#[inline]
fn decimal_code<const W: usize>(bits: u64, e: u8) -> Option<u64> {
    if W == 8 {
        let v = f64::from_bits(bits);
        let scaled = (v * crate::page::POW10_F64[e as usize]).round();
        // In range for i64 (NaN is not).
        if scaled.is_nan() || scaled.abs() >= 9.0e18 {
            return None;
        }
        let code = scaled as i64 as u64;
        (crate::page::decimal_value::<8>(code, e) == bits).then_some(code)
    } else {
        let v = f32::from_bits(bits as u32);
        let scaled = (v * crate::page::POW10_F32[e as usize]).round();
        if scaled.is_nan() || scaled.abs() >= 2.0e9 {
            return None;
        }
        let code = u64::from(scaled as i32 as u32);
        (crate::page::decimal_value::<4>(code, e) == bits).then_some(code)
    }
}

/// A decimal page when the floats are decimals of one power of ten, all but a few: the power
/// that fits most of a sample (the smallest such), the codes as a nested page of integers,
/// then the exceptions. Returns the layout it needs, or `None` (nothing written) when the
/// floats are not decimals.
pub(super) fn encode_decimal<const W: usize>(words: &[[u8; W]], choice: Choice<'_>, out: &mut Vec<u8>) -> Option<u16> {
    let n = words.len();
    let most = if W == 8 {
        crate::page::MAX_DECIMAL_EXP_F64
    } else {
        crate::page::MAX_DECIMAL_EXP_F32
    };
    // Evenly spread, jittered so that a stride in the data does not choose for all.
    let step = (n / DECIMAL_SAMPLE).max(1);
    let sample: Vec<u64> = (0..n.min(DECIMAL_SAMPLE))
        .map(|j| load::<W>(&words[(j * step + j * 37 % step).min(n - 1)]))
        .collect();
    let (mut best_e, width) = sampled_power::<W>(&sample)?;
    let spare = if W == 8 { 16 } else { 8 };
    // Raising the power by d widens the codes by about 3.33 d bits: only while they stay
    // narrow.
    let sampled_e = best_e;
    let can_raise_to = move |e: u8| width + (u32::from(e - sampled_e) * 10).div_ceil(3) as usize + spare <= 8 * W;
    let max_exceptions = n >> MAX_DECIMAL_EXCEPTIONS_SHIFT;
    let mut codes = vec![0u8; n * W];
    let mut positions: Vec<u8> = Vec::new();
    let mut exceptions: Vec<u8> = Vec::new();
    // A value the sample did not foresee (more decimals) may raise the power, twice at most;
    // when the raised power leaves too many exceptions, the sampled one is tried once more
    // with no raises, that value an exception.
    let mut raises = 0;
    'power: loop {
        positions.clear();
        exceptions.clear();
        let mut last_code = None;
        for (i, (c, w)) in codes.as_chunks_mut::<W>().0.iter_mut().zip(words).enumerate() {
            let bits = load::<W>(w);
            match decimal_code::<W>(bits, best_e) {
                Some(code) => last_code = Some(code),
                None => {
                    if raises < 2 {
                        if let Some(e) = (best_e + 1..=most)
                            .take_while(|&e| can_raise_to(e))
                            .find(|&e| decimal_code::<W>(bits, e).is_some())
                        {
                            (best_e, raises) = (e, raises + 1);
                            continue 'power;
                        }
                    }
                    if exceptions.len() / W == max_exceptions {
                        if best_e != sampled_e {
                            (best_e, raises) = (sampled_e, 2);
                            continue 'power;
                        }
                        return None;
                    }
                    positions.extend_from_slice(&(i as u32).to_le_bytes());
                    exceptions.extend_from_slice(w);
                }
            }
            // An exception's slot repeats the code before it, so that it breaks no run or
            // range (leading ones are given the first code below).
            store::<W>(last_code.unwrap_or(0), c);
        }
        // Leading exceptions take the first code, not 0, which could widen the range.
        let leading = positions
            .as_chunks::<4>()
            .0
            .iter()
            .enumerate()
            .take_while(|(k, p)| u32::from_le_bytes(**p) as usize == *k)
            .count();
        if leading > 0 && leading < n {
            let first: [u8; W] = codes.as_chunks::<W>().0[leading];
            codes.as_chunks_mut::<W>().0[..leading].fill(first);
        }
        break;
    }
    out.push(encoding::DECIMAL);
    out.push(best_e);
    let inner = Choice {
        decimal: false,
        weigh_dict: false,
        ..choice
    };
    let (_, needs) = choose_words::<W>(&codes, Kind::Int { signed: true }, inner, out);
    out.extend_from_slice(&((exceptions.len() / W) as u32).to_le_bytes());
    out.extend_from_slice(&positions);
    out.extend_from_slice(&exceptions);
    Some(needs.max(3))
}
