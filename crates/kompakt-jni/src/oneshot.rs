//! One-shot `compress`/`decompress` of `byte[]` and direct `ByteBuffer`s.

use crate::bytes::{self, direct, direct_pair, jint_of, to_vec, view, with_input, with_output};
use crate::error::{run, Failure};
use crate::options::{options_of, Options};
use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray};
use jni::sys::{jbyteArray, jint, jlong};
use jni::JNIEnv;
use kompakt::codec::Dictionaries;
use kompakt::stream::format::{BLOCK_HEADER_LEN, FILE_HEADER_LEN, FOOTER_HEADER_LEN, TRAILER_LEN};
use kompakt::{ReadOptions, Reader};

/// The most bytes a Java array holds (the JDK's own limit for `byte[]`).
const MAX_ARRAY: u64 = i32::MAX as u64 - 8;

fn compress_slice(data: &[u8], o: &Options) -> kompakt::Result<Vec<u8>> {
    match &o.dictionary {
        Some(d) => kompakt::compress_with_dictionary(data, &o.write, d),
        None => kompakt::compress(data, &o.write),
    }
}

/// The largest single-stream file `length` bytes make: a block stored raw is never larger
/// than its data (docs/FORMAT.md), so data, headers and the index entry of each block, and
/// the fixed parts (file header, footer with one stream, trailer).
fn compress_bound(length: u64, block_size: u64) -> u64 {
    let blocks = length.div_ceil(block_size);
    let fixed = FILE_HEADER_LEN + FOOTER_HEADER_LEN + 24 + 16 + TRAILER_LEN;
    fixed as u64 + length + blocks * (BLOCK_HEADER_LEN as u64 + 32)
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_compress<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteArray<'l>,
    offset: jint,
    length: jint,
    options: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let o = options_of(options)?;
        let packed = with_input(env, &src, offset, length, true, |data| compress_slice(data, &o))??;
        Ok(bytes::new_array(env, &packed)?.into_raw())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_compressDirect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteBuffer<'l>,
    src_pos: jint,
    src_length: jint,
    dst: JByteBuffer<'l>,
    dst_pos: jint,
    dst_length: jint,
    options: jlong,
) -> jint {
    run(&mut env, -1, |env| {
        let o = options_of(options)?;
        let (input, output) = direct_pair(env, &src, src_pos, src_length, &dst, dst_pos, dst_length)?;
        let packed = compress_slice(input, &o)?;
        let room = output.len();
        let out = output.get_mut(..packed.len()).ok_or_else(|| {
            Failure::limit(format!(
                "the destination has room for {room} bytes, the compressed data needs {} (maxCompressedLength gives a size that always suffices)",
                packed.len()
            ))
        })?;
        out.copy_from_slice(&packed);
        jint_of(packed.len())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_compressBound<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    length: jlong,
    options: jlong,
) -> jlong {
    run(&mut env, -1, |_| {
        let o = options_of(options)?;
        let length = u64::try_from(length).map_err(|_| Failure::option(format!("invalid length {length}")))?;
        Ok(compress_bound(length, o.write.block_size as u64).min(i64::MAX as u64) as jlong)
    })
}

/// The decoded length of a single-stream file's one stream (0 for a file with none).
fn single_stream_len<T: AsRef<[u8]>>(reader: &Reader<std::io::Cursor<T>>) -> Result<u64, Failure> {
    match reader.streams().len() {
        0 => Ok(0),
        1 => Ok(reader.stream_len(0)?),
        n => Err(Failure::usage(format!(
            "this file has {n} streams (a saved object or a table?); decompress reads single-stream data: \
             use KompaktFile"
        ))),
    }
}

fn open(data: &[u8], threads: jlong) -> Result<Reader<std::io::Cursor<&[u8]>>, Failure> {
    let threads = kompakt_api::options::threads(threads)?;
    Ok(Reader::from_memory(data, ReadOptions::default().threads(threads))?)
}

fn check_fits(len: u64, max: u64) -> Result<usize, Failure> {
    if len > max {
        return Err(Failure::limit(format!(
            "the data decodes to {len} bytes, more than the {max} allowed (maxDecompressedLength)"
        )));
    }
    Ok(len as usize)
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_decompressedLength<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteArray<'l>,
    offset: jint,
    length: jint,
) -> jlong {
    run(&mut env, -1, |env| {
        let len = with_input(env, &src, offset, length, true, |data| -> Result<u64, Failure> {
            single_stream_len(&open(data, 1)?)
        })??;
        Ok(len as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_decompressedLengthDirect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteBuffer<'l>,
    pos: jint,
    length: jint,
) -> jlong {
    run(&mut env, -1, |env| {
        // SAFETY: from `direct` in this call; the only view.
        let data = unsafe { view(direct(env, &src, pos, length)?) };
        Ok(single_stream_len(&open(data, 1)?)? as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_decompress<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteArray<'l>,
    offset: jint,
    length: jint,
    threads: jlong,
    max_length: jlong,
    dictionaries: JLongArray<'l>,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let dictionaries = bytes::dictionaries(env, &dictionaries)?;
        let max = u64::try_from(max_length).unwrap_or(0).min(MAX_ARRAY);
        // The file is copied out of the Java heap first: the result array is allocated after
        // its length is known, and no JNI call may happen inside a critical region.
        let file = to_vec(env, &src, offset, length)?;
        let mut reader = open(&file, threads)?;
        reader.set_dictionaries(dictionaries);
        let len = check_fits(single_stream_len(&reader)?, max)?;
        let out = env.new_byte_array(jint_of(len)?)?;
        if len > 0 {
            with_output(env, &out, 0, len as jint, true, |dst| {
                reader.read_stream_into(0, dst)?;
                Ok((dst.len(), ()))
            })?;
        }
        Ok(out.into_raw())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_decompressDirect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    src: JByteBuffer<'l>,
    src_pos: jint,
    src_length: jint,
    dst: JByteBuffer<'l>,
    dst_pos: jint,
    dst_length: jint,
    threads: jlong,
    dictionaries: JLongArray<'l>,
) -> jint {
    run(&mut env, -1, |env| {
        let dictionaries: Dictionaries = bytes::dictionaries(env, &dictionaries)?;
        let (input, output) = direct_pair(env, &src, src_pos, src_length, &dst, dst_pos, dst_length)?;
        let mut reader = open(input, threads)?;
        reader.set_dictionaries(dictionaries);
        let len = single_stream_len(&reader)?;
        let room = output.len();
        let n = check_fits(len, room as u64).map_err(|_| {
            Failure::limit(format!(
                "the data decodes to {len} bytes; the destination has room for {room}"
            ))
        })?;
        if n > 0 {
            reader.read_stream_into(0, &mut output[..n])?;
        }
        jint_of(n)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bound_holds_for_data_that_does_not_compress() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for len in [0, 1, 65_535, 65_536, 65_537, 300_000] {
            for codec in ["none", "lz4", "zstd:3"] {
                let opts = Options {
                    write: kompakt::WriteOptions::default()
                        .codec(codec.parse().unwrap())
                        .block_size(64 << 10),
                    dictionary: None,
                };
                let packed = compress_slice(&noise[..len], &opts).unwrap();
                assert!(
                    packed.len() as u64 <= compress_bound(len as u64, 65_536),
                    "{codec} {len}"
                );
            }
        }
        assert_eq!(compress_bound(0, 65_536), 104);
    }
}
