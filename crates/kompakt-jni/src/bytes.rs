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

/// The JVM's `i8` bytes seen as `u8`, mutable.
pub(crate) fn as_bytes_mut(bytes: &mut [i8]) -> &mut [u8] {
    // SAFETY: as in `as_jbytes`; the result is the only borrow of `bytes` while it lives.
    unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr().cast::<u8>(), bytes.len()) }
}

/// Calls `f` with `array[offset, offset + length)`, read in place (a JNI critical region: no
/// copy; the borrow of `env` keeps other JNI calls out until `f` returns).
pub(crate) fn with_array<'l, R>(
    env: &mut JNIEnv<'l>,
    array: &JByteArray<'_>,
    offset: jint,
    length: jint,
    f: impl FnOnce(&mut [u8]) -> R,
) -> Result<R, Failure> {
    if array.is_null() {
        return Err(Failure::option("the array is null"));
    }
    let total = env.get_array_length(array)? as usize;
    let range = range(total, offset, length)?;
    // SAFETY: the critical region ends when `elements` drops, before this function returns;
    // `elements` borrows `env` mutably, so no JNI call happens inside it, and `f` cannot call
    // Java (it gets no env).
    let mut elements = unsafe { env.get_array_elements_critical(array, ReleaseMode::CopyBack)? };
    Ok(f(&mut as_bytes_mut(&mut elements)[range]))
}

/// A direct buffer's bytes `[pos, pos + length)`.
///
/// The caller must not hold two overlapping views at once: see [`disjoint`].
pub(crate) fn direct<'b>(
    env: &mut JNIEnv<'_>,
    buffer: &JByteBuffer<'_>,
    pos: jint,
    length: jint,
) -> Result<&'b mut [u8], Failure> {
    if buffer.is_null() {
        return Err(Failure::option("the buffer is null"));
    }
    let address = env
        .get_direct_buffer_address(buffer)
        .map_err(|_| Failure::option("the buffer is not a direct buffer"))?;
    let capacity = env.get_direct_buffer_capacity(buffer)?;
    let range = range(capacity, pos, length)?;
    if range.is_empty() {
        return Ok(&mut []);
    }
    // SAFETY: a direct buffer's memory is `capacity` bytes at `address` and stays allocated
    // while the buffer object is reachable, which it is for the whole native call (it is an
    // argument); `range` lies inside it. Views of two buffers are checked by `disjoint`
    // before both are used, so no two live views overlap.
    Ok(unsafe { std::slice::from_raw_parts_mut(address.add(range.start), range.len()) })
}

/// Refuses a source and a destination that share memory (two direct buffers over one region).
pub(crate) fn disjoint(a: &[u8], b: &[u8]) -> Result<(), Failure> {
    let (a0, a1) = (a.as_ptr() as usize, a.as_ptr() as usize + a.len());
    let (b0, b1) = (b.as_ptr() as usize, b.as_ptr() as usize + b.len());
    if !a.is_empty() && !b.is_empty() && a0 < b1 && b0 < a1 {
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
        as_bytes_mut(&mut j)[0] = 200;
        assert_eq!(as_bytes_mut(&mut j), [200, 255]);
        let (a, b) = v.split_at_mut(2);
        assert!(disjoint(a, b).is_ok());
        assert!(disjoint(&v[..3], &v[2..]).is_err());
        assert!(disjoint(&v[..0], &v[..]).is_ok());
    }
}
