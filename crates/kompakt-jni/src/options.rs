//! Write options and zstd dictionaries: validated by the front door, held by Java as handles.

use crate::bytes::{self, new_array, to_vec};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use jni::objects::{JByteArray, JClass, JObjectArray, JString};
use jni::sys::{jbyteArray, jint, jlong, jstring};
use jni::JNIEnv;
use kompakt::codec::Dictionary;
use kompakt::stream::STAGED_BLOCKS;
use kompakt::WriteOptions;
use kompakt_api::options::WriteArgs;

/// `Native.NOT_GIVEN`: a number left at its default.
const NOT_GIVEN: jlong = jlong::MIN;

/// Validated write options, and the dictionary their zstd blocks use.
#[derive(Clone, Default)]
pub(crate) struct Options {
    pub write: WriteOptions,
    pub dictionary: Option<Dictionary>,
}

/// The options behind a handle (0: the defaults).
pub(crate) fn options_of(handle: jlong) -> Result<Options, Failure> {
    if handle == 0 {
        return Ok(Options::default());
    }
    Ok(handle::shared::<Options>(handle, "write options")?.clone())
}

/// A number from Java, `None` when it is `NOT_GIVEN`.
pub(crate) fn given(n: jlong) -> Option<i64> {
    (n != NOT_GIVEN).then_some(n)
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_optionsNew<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    codec: JString<'l>,
    level: jlong,
    threads: jlong,
    block_size: jlong,
    filter: JString<'l>,
    typesize: jlong,
    dictionary: jlong,
) -> jlong {
    run(&mut env, 0, |env| {
        let codec = bytes::string(env, &codec)?;
        let filter = bytes::string(env, &filter)?;
        let dictionary = match dictionary {
            0 => None,
            h => Some(handle::shared::<Dictionary>(h, "dictionary")?.clone()),
        };
        let write = WriteArgs {
            codec: codec.as_deref(),
            level: given(level),
            threads: given(threads),
            typesize: given(typesize),
            filter: filter.as_deref(),
            block_size: given(block_size),
            dictionary: dictionary.is_some(),
        }
        .build()?
        // Spark reads a shuffle's compressed segments as files in a row, which a compact
        // file (it ends only where its input does) cannot be one of.
        .compact(false);
        Ok(into_handle(Options { write, dictionary }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_optionsDescribe<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    options: jlong,
) -> jstring {
    run(&mut env, std::ptr::null_mut(), |env| {
        let o = options_of(options)?;
        let w = &o.write;
        let mut text = format!(
            "codec {}, {} KiB blocks, filter {}, typesize {}, threads {}",
            w.stream.codec,
            w.block_size >> 10,
            w.stream.filter,
            w.stream.typesize,
            if w.threads == 0 {
                "all".to_string()
            } else {
                w.threads.to_string()
            }
        );
        if let Some(d) = &o.dictionary {
            text.push_str(&format!(", dictionary {}", d.id()));
        }
        Ok(env.new_string(text)?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_optionsBlockSize<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    options: jlong,
) -> jint {
    run(&mut env, -1, |_| bytes::jint_of(options_of(options)?.write.block_size))
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_optionsThreads<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    options: jlong,
) -> jint {
    run(&mut env, -1, |_| bytes::jint_of(options_of(options)?.write.threads))
}

/// The most raw bytes a Java array hands over at once.
const MAX_STREAM_BUFFER: usize = 64 << 20;

/// Raw bytes an output stream hands the writer at a time: one block, or with more than one
/// thread the blocks the writer compresses at once ([`STAGED_BLOCKS`]); whole blocks, within
/// [`MAX_STREAM_BUFFER`] unless one block is larger.
fn stream_buffer(w: &WriteOptions) -> usize {
    let blocks = if w.threads == 1 { 1 } else { STAGED_BLOCKS };
    w.block_size * blocks.min(MAX_STREAM_BUFFER / w.block_size).max(1)
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_optionsStreamBuffer<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    options: jlong,
) -> jint {
    run(&mut env, -1, |_| {
        bytes::jint_of(stream_buffer(&options_of(options)?.write))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_optionsFree<'l>(_: JNIEnv<'l>, _: JClass<'l>, options: jlong) {
    handle::free::<Options>(options);
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_dictionaryTrain<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    samples: JObjectArray<'l>,
    max_size: jint,
) -> jlong {
    run(&mut env, 0, |env| {
        if samples.is_null() {
            return Err(Failure::option("the samples are null"));
        }
        let max_size = usize::try_from(max_size).map_err(|_| {
            Failure::option(format!(
                "invalid dictionary size \"{max_size}\": a positive size in bytes"
            ))
        })?;
        let n = env.get_array_length(&samples)?;
        let mut all = Vec::with_capacity(n as usize);
        for i in 0..n {
            let sample = JByteArray::from(env.get_object_array_element(&samples, i)?);
            if sample.is_null() {
                return Err(Failure::option(format!("sample {i} is null")));
            }
            all.push(env.convert_byte_array(&sample)?);
            env.delete_local_ref(sample)?;
        }
        Ok(into_handle(Dictionary::train(&all, max_size)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_dictionaryLoad<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    bytes: JByteArray<'l>,
    offset: jint,
    length: jint,
) -> jlong {
    run(&mut env, 0, |env| {
        let owned = to_vec(env, &bytes, offset, length)?;
        Ok(into_handle(Dictionary::new(owned)?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_dictionaryBytes<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    dictionary: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let d = handle::shared::<Dictionary>(dictionary, "dictionary")?;
        Ok(new_array(env, d.bytes())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_dictionaryId<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    dictionary: jlong,
) -> jstring {
    run(&mut env, std::ptr::null_mut(), |env| {
        let d = handle::shared::<Dictionary>(dictionary, "dictionary")?;
        Ok(env.new_string(d.id().to_string())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_dictionaryFree<'l>(_: JNIEnv<'l>, _: JClass<'l>, dictionary: jlong) {
    handle::free::<Dictionary>(dictionary);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_buffers_whole_blocks_within_64_mib() {
        let w = |threads, block| WriteOptions::default().threads(threads).block_size(block);
        assert_eq!(stream_buffer(&w(1, 65_536)), 65_536);
        assert_eq!(stream_buffer(&w(0, 1 << 20)), 8 << 20);
        assert_eq!(stream_buffer(&w(2, 16 << 20)), 64 << 20);
        assert_eq!(stream_buffer(&w(2, 48 << 20)), 48 << 20);
        assert_eq!(stream_buffer(&w(4, 64 << 20)), 64 << 20);
    }
}
