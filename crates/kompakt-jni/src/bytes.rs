//! Java arguments as Rust values: ranges of `byte[]`, direct `ByteBuffer`s, strings, and
//! dictionary handles.

use crate::error::Failure;
use crate::handle;
use jni::objects::{JByteArray, JByteBuffer, JLongArray, JString, ReleaseMode};
use jni::sys::{jint, jlong};
use jni::JNIEnv;
use kompakt::codec::{Dictionaries, Dictionary};
use std::ops::Range;

/// `offset` and `length` checked against an array or buffer of `total` bytes.
pub(crate) fn range(total: usize, offset: jint, length: jint) -> Result<Range<usize>, Failure> {
    let (Ok(off), Ok(len)) = (usize::try_from(offset), usize::try_from(length)) else {
        return Err(Failure::option(format!(
            "invalid range: offset {offset} and length {length} must not be negative"
        )));
    };
    match off.checked_add(len) {
        Some(end) if end <= total => Ok(off..end),
        _ => Err(Failure::option(format!(
            "invalid range: offset {offset} + length {length} is past the end ({total} bytes)"
        ))),
    }
}

/// `u8` bytes seen as the JVM's `i8` (`jbyte`).
pub(crate) fn as_jbytes(bytes: &[u8]) -> &[i8] {
    // SAFETY: u8 and i8 have the same size and alignment and every bit pattern is valid in
    // both; the result borrows `bytes` for its lifetime.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<i8>(), bytes.len()) }
}

/// `as_jbytes`, mutable.
pub(crate) fn as_jbytes_mut(bytes: &mut [u8]) -> &mut [i8] {
    // SAFETY: as in `as_jbytes`; the result is the only borrow of `bytes` while it lives.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<i8>(), bytes.len()) }
}

/// The JVM's `i8` bytes seen as `u8`.
pub(crate) fn as_bytes(bytes: &[i8]) -> &[u8] {
    // SAFETY: as in `as_jbytes`.
    unsafe { std::slice::from_raw_parts(bytes.as_ptr().cast::<u8>(), bytes.len()) }
}

/// The JVM's `i8` bytes seen as `u8`, mutable.
pub(crate) fn as_bytes_mut(bytes: &mut [i8]) -> &mut [u8] {
    // SAFETY: as in `as_jbytes`; the result is the only borrow of `bytes` while it lives.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<u8>(), bytes.len()) }
}

/// Arrays up to this size are reached in place, in a JNI critical region, by calls that only
/// compute on them; larger ones (and every call that may wait: a disk, a server) are copied.
/// On Java 17 a critical region holds off the garbage collector for every thread, so it must
/// stay short: this much data is a fraction of a millisecond of any codec.
pub(crate) const CRITICAL_MAX: usize = 1 << 20;

fn array_range(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    offset: jint,
    length: jint,
) -> Result<Range<usize>, Failure> {
    if array.is_null() {
        return Err(Failure::option("the array is null"));
    }
    let total = env.get_array_length(array)? as usize;
    range(total, offset, length)
}

/// Calls `f` with `array[offset, offset + length)` to read: in place (a critical region, no
/// copy) for CPU-bound work on at most [`CRITICAL_MAX`] bytes, else a copy.
pub(crate) fn with_input<R>(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    offset: jint,
    length: jint,
    in_place: bool,
    f: impl FnOnce(&[u8]) -> R,
) -> Result<R, Failure> {
    let range = array_range(env, array, offset, length)?;
    if in_place && range.len() <= CRITICAL_MAX {
        // SAFETY: the critical region ends when `elements` drops, before this function
        // returns; `elements` borrows `env` mutably, so no JNI call happens inside it, and `f`
        // cannot call Java (it gets no env). NoCopyBack: the array is only read.
        let elements = unsafe { env.get_array_elements_critical(array, ReleaseMode::NoCopyBack)? };
        return Ok(f(&as_bytes(&elements)[range]));
    }
    Ok(f(&to_vec(env, array, offset, length)?))
}

/// Calls `f` to fill `array[offset, offset + length)`: in place for CPU-bound work on at most
/// [`CRITICAL_MAX`] bytes, else through a buffer copied in afterwards (`f` returns how many
/// bytes it wrote, which are the ones copied).
pub(crate) fn with_output<R>(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    offset: jint,
    length: jint,
    in_place: bool,
    f: impl FnOnce(&mut [u8]) -> Result<(usize, R), Failure>,
) -> Result<R, Failure> {
    let range = array_range(env, array, offset, length)?;
    if in_place && range.len() <= CRITICAL_MAX {
        // SAFETY: as in `with_input`; CopyBack, as the array is written.
        let mut elements = unsafe { env.get_array_elements_critical(array, ReleaseMode::CopyBack)? };
        return f(&mut as_bytes_mut(&mut elements)[range]).map(|(_, r)| r);
    }
    let mut buffer = vec![0u8; range.len()];
    let (written, result) = f(&mut buffer)?;
    env.set_byte_array_region(array, offset, as_jbytes(&buffer[..written.min(buffer.len())]))?;
    Ok(result)
}

/// Where a direct buffer's bytes `[pos, pos + length)` are: an address and a length, checked
/// against the buffer's capacity. Views are made by [`view`] and [`view_mut`], after
/// [`disjoint`] when a call has two.
pub(crate) fn direct(
    env: &mut JNIEnv<'_>,
    buffer: &JByteBuffer<'_>,
    pos: jint,
    length: jint,
) -> Result<(*mut u8, usize), Failure> {
    if buffer.is_null() {
        return Err(Failure::option("the buffer is null"));
    }
    let address = env
        .get_direct_buffer_address(buffer)
        .map_err(|_| Failure::option("the buffer is not a direct buffer"))?;
    let capacity = env.get_direct_buffer_capacity(buffer)?;
    let range = range(capacity, pos, length)?;
    if range.is_empty() {
        return Ok((std::ptr::NonNull::dangling().as_ptr(), 0));
    }
    // SAFETY (of the `add`): `range` lies inside the buffer's `capacity` bytes at `address`.
    Ok((unsafe { address.add(range.start) }, range.len()))
}

/// A direct buffer's bytes to read.
///
/// # Safety
/// `place` comes from [`direct`] in this native call (so it lies inside a buffer that is an
/// argument, reachable and allocated until the call returns), and no mutable view of the same
/// bytes exists while the result lives ([`disjoint`]).
pub(crate) unsafe fn view<'b>((address, len): (*mut u8, usize)) -> &'b [u8] {
    // SAFETY: the caller's contract above.
    unsafe { std::slice::from_raw_parts(address, len) }
}

/// A direct buffer's bytes to write.
///
/// # Safety
/// As for [`view`], and no other view of the same bytes exists while the result lives.
pub(crate) unsafe fn view_mut<'b>((address, len): (*mut u8, usize)) -> &'b mut [u8] {
    // SAFETY: the caller's contract above.
    unsafe { std::slice::from_raw_parts_mut(address, len) }
}

/// A copy of `array[offset, offset + length)`.
pub(crate) fn to_vec(
    env: &mut JNIEnv<'_>,
    array: &JByteArray<'_>,
    offset: jint,
    length: jint,
) -> Result<Vec<u8>, Failure> {
    let range = array_range(env, array, offset, length)?;
    let mut copy = vec![0u8; range.len()];
    env.get_byte_array_region(array, offset, as_jbytes_mut(&mut copy))?;
    Ok(copy)
}

/// A source and a destination direct buffer as views, refused if they share memory: what every
/// call from one direct buffer into another needs.
#[allow(clippy::too_many_arguments)]
pub(crate) fn direct_pair<'b>(
    env: &mut JNIEnv<'_>,
    src: &JByteBuffer<'_>,
    src_pos: jint,
    src_length: jint,
    dst: &JByteBuffer<'_>,
    dst_pos: jint,
    dst_length: jint,
) -> Result<(&'b [u8], &'b mut [u8]), Failure> {
    let input = direct(env, src, src_pos, src_length)?;
    let output = direct(env, dst, dst_pos, dst_length)?;
    disjoint(input, output)?;
    // SAFETY: both from `direct` in this call, and disjoint, so the views do not overlap.
    Ok(unsafe { (view(input), view_mut(output)) })
}

/// Refuses a source and a destination that share memory (two direct buffers over one region),
/// before any view of them exists.
pub(crate) fn disjoint(a: (*mut u8, usize), b: (*mut u8, usize)) -> Result<(), Failure> {
    let (a0, b0) = (a.0 as usize, b.0 as usize);
    if a.1 > 0 && b.1 > 0 && a0 < b0 + b.1 && b0 < a0 + a.1 {
        return Err(Failure::option("the source and the destination overlap"));
    }
    Ok(())
}

/// A Java string, or `None` for null.
pub(crate) fn string(env: &mut JNIEnv<'_>, s: &JString<'_>) -> Result<Option<String>, Failure> {
    if s.is_null() {
        return Ok(None);
    }
    Ok(Some(env.get_string(s)?.into()))
}

/// The dictionaries behind an array of dictionary handles (null: none).
pub(crate) fn dictionaries(env: &mut JNIEnv<'_>, handles: &JLongArray<'_>) -> Result<Dictionaries, Failure> {
    if handles.is_null() {
        return Ok(Dictionaries::none());
    }
    let n = env.get_array_length(handles)? as usize;
    let mut raw = vec![0 as jlong; n];
    env.get_long_array_region(handles, 0, &mut raw)?;
    let mut all = Vec::with_capacity(n);
    for h in raw {
        all.push(handle::shared::<Dictionary>(h, "dictionary")?.clone());
    }
    Ok(all.into())
}

/// A Java `byte[]` holding `bytes`.
pub(crate) fn new_array<'l>(env: &mut JNIEnv<'l>, bytes: &[u8]) -> Result<JByteArray<'l>, Failure> {
    Ok(env.byte_array_from_slice(bytes)?)
}

/// A byte count for Java's `int`, which the callers' buffers bound.
pub(crate) fn jint_of(n: usize) -> Result<jint, Failure> {
    jint::try_from(n).map_err(|_| Failure::limit(format!("{n} bytes is more than a Java array holds")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_checked() {
        assert_eq!(range(10, 2, 8).unwrap(), 2..10);
        assert_eq!(range(0, 0, 0).unwrap(), 0..0);
        for (off, len) in [(-1, 1), (0, -1), (3, 8), (i32::MAX, i32::MAX)] {
            assert!(range(10, off, len).is_err(), "{off} {len}");
        }
    }

    #[test]
    fn bytes_convert_both_ways_and_overlap_is_found() {
        let mut v = vec![0u8, 127, 128, 255];
        assert_eq!(as_jbytes(&v), [0, 127, -128, -1]);
        let mut j = [0i8, -1];
        as_bytes_mut(&mut j)[0] = 100;
        assert_eq!(as_bytes(&j), [100, 255]);
        let p = v.as_mut_ptr();
        // SAFETY: offsets inside `v`.
        let (p2, p3) = unsafe { (p.add(2), p.add(3)) };
        assert!(disjoint((p, 2), (p2, 2)).is_ok());
        assert!(disjoint((p, 3), (p2, 2)).is_err());
        assert!(disjoint((p3, 1), (p, 4)).is_err());
        assert!(disjoint((p, 0), (p, 4)).is_ok());
    }
}
