//! Delta coding of little-endian unsigned integers with wrapping arithmetic (so it is exact for
//! signed integers too). Trailing bytes that do not fill an element are copied as they are.

/// Writes `src[i] - src[i-1]` (first element as is) into `dst`, elementwise for `typesize`
/// 1, 2, 4 or 8; other sizes copy.
pub fn delta_encode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    match typesize {
        1 => encode_n::<1>(src, dst, |b| u64::from(b[0]), |v, o| o[0] = v as u8),
        2 => encode_n::<2>(
            src,
            dst,
            |b| u64::from(u16::from_le_bytes(*b)),
            |v, o| *o = (v as u16).to_le_bytes(),
        ),
        4 => encode_n::<4>(
            src,
            dst,
            |b| u64::from(u32::from_le_bytes(*b)),
            |v, o| *o = (v as u32).to_le_bytes(),
        ),
        8 => encode_n::<8>(src, dst, |b| u64::from_le_bytes(*b), |v, o| *o = v.to_le_bytes()),
        _ => dst.copy_from_slice(src),
    }
}

/// Undoes [`delta_encode`] in place.
pub fn delta_decode(typesize: usize, data: &mut [u8]) {
    match typesize {
        1 => decode_n::<1>(data, |b| u64::from(b[0]), |v, o| o[0] = v as u8),
        2 => decode_n::<2>(
            data,
            |b| u64::from(u16::from_le_bytes(*b)),
            |v, o| *o = (v as u16).to_le_bytes(),
        ),
        4 => decode_n::<4>(
            data,
            |b| u64::from(u32::from_le_bytes(*b)),
            |v, o| *o = (v as u32).to_le_bytes(),
        ),
        8 => decode_n::<8>(data, |b| u64::from_le_bytes(*b), |v, o| *o = v.to_le_bytes()),
        _ => {}
    }
}

fn encode_n<const N: usize>(
    src: &[u8],
    dst: &mut [u8],
    load: impl Fn(&[u8; N]) -> u64,
    store: impl Fn(u64, &mut [u8; N]),
) {
    let (elems, tail) = src.as_chunks::<N>();
    let body = elems.len() * N;
    dst[body..].copy_from_slice(tail);
    let (out, _) = dst[..body].as_chunks_mut::<N>();
    let mut prev = 0u64;
    for (e, o) in elems.iter().zip(out) {
        let v = load(e);
        store(v.wrapping_sub(prev), o);
        prev = v;
    }
}

fn decode_n<const N: usize>(data: &mut [u8], load: impl Fn(&[u8; N]) -> u64, store: impl Fn(u64, &mut [u8; N])) {
    let (elems, _) = data.as_chunks_mut::<N>();
    let mut acc = 0u64;
    for e in elems {
        acc = acc.wrapping_add(load(e));
        store(acc, e);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_values_become_small_and_come_back() {
        let vals: Vec<u64> = (0..1000).map(|i| 1_600_000_000_000 + i * 1000).collect();
        let src: Vec<u8> = vals.iter().flat_map(|v| v.to_le_bytes()).chain([7u8, 9]).collect();
        let mut enc = vec![0u8; src.len()];
        delta_encode(8, &src, &mut enc);
        assert_eq!(u64::from_le_bytes(enc[8..16].try_into().unwrap()), 1000);
        assert_eq!(&enc[enc.len() - 2..], &[7, 9]);
        delta_decode(8, &mut enc);
        assert_eq!(enc, src);
    }

    #[test]
    fn wraps_instead_of_overflowing() {
        let src: Vec<u8> = [u32::MAX, 0, u32::MAX].iter().flat_map(|v| v.to_le_bytes()).collect();
        let mut enc = vec![0u8; src.len()];
        delta_encode(4, &src, &mut enc);
        delta_decode(4, &mut enc);
        assert_eq!(enc, src);
    }
}
