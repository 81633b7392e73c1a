//! `KompaktFile`: random access to a kompakt file's streams, on this machine or at a URL.

use crate::bytes::{self, direct, jint_of, view_mut, with_output};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use jni::objects::{JByteArray, JByteBuffer, JClass, JLongArray, JString};
use jni::sys::{jbyteArray, jint, jlong, jstring};
use jni::JNIEnv;
use kompakt::stream::{ReadAt, SourceCursor};
use kompakt::{ReadOptions, Reader};
use kompakt_api::FileKind;
use std::sync::Arc;

pub(crate) struct OpenFile {
    reader: Reader<SourceCursor<Arc<dyn ReadAt>>>,
    name: String,
}

impl OpenFile {
    /// Reads up to `dst.len()` bytes of `stream` at `position`: how many, or None at its end.
    fn read(&mut self, stream: jint, position: jlong, dst: &mut [u8]) -> Result<Option<usize>, Failure> {
        let stream = u32::try_from(stream).map_err(|_| Failure::option(format!("invalid stream {stream}")))?;
        let position = u64::try_from(position)
            .map_err(|_| Failure::option(format!("invalid position {position}: not negative")))?;
        let total = self.reader.stream_len(stream).map_err(|e| self.named(e))?;
        if position >= total {
            return Ok(None);
        }
        let n = usize::try_from(total - position).map_or(dst.len(), |rest| rest.min(dst.len()));
        if n > 0 {
            self.reader
                .read_range_into(stream, position, &mut dst[..n])
                .map_err(|e| self.named(e))?;
        }
        Ok(Some(n))
    }

    fn named(&self, e: kompakt::Error) -> Failure {
        Failure::from(e).named(&self.name)
    }
}

fn file<'a>(handle: jlong) -> Result<&'a mut OpenFile, Failure> {
    handle::get::<OpenFile>(handle, "file")
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    threads: jlong,
    dictionaries: JLongArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let text = bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let threads = kompakt_api::options::threads(threads)?;
        let dictionaries = bytes::dictionaries(env, &dictionaries)?;
        let source = kompakt_api::location::open_for_reading(&text).map_err(|e| Failure::from(e).named(&text))?;
        let opts = ReadOptions::default().threads(threads);
        let mut reader = Reader::at(source.file, opts).map_err(|e| Failure::from(e).named(&source.name))?;
        reader.set_dictionaries(dictionaries);
        Ok(into_handle(OpenFile {
            reader,
            name: source.name,
        }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileStreamCount<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    f: jlong,
) -> jint {
    run(&mut env, -1, |_| jint_of(file(f)?.reader.streams().len()))
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileStreamLength<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    f: jlong,
    stream: jint,
) -> jlong {
    run(&mut env, -1, |_| {
        let f = file(f)?;
        let stream = u32::try_from(stream).map_err(|_| Failure::option(format!("invalid stream {stream}")))?;
        Ok(f.reader.stream_len(stream).map_err(|e| f.named(e))? as jlong)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileMetadata<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    f: jlong,
) -> jbyteArray {
    run(&mut env, std::ptr::null_mut(), |env| {
        let f = file(f)?;
        Ok(bytes::new_array(env, f.reader.metadata())?.into_raw())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileKind<'l>(mut env: JNIEnv<'l>, _: JClass<'l>, f: jlong) -> jstring {
    run(&mut env, std::ptr::null_mut(), |env| {
        let kind = FileKind::of_metadata(file(f)?.reader.metadata());
        Ok(env.new_string(kind.name())?.into_raw())
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_fileRead<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    f: jlong,
    stream: jint,
    position: jlong,
    dst: JByteArray<'l>,
    offset: jint,
    length: jint,
) -> jint {
    run(&mut env, -1, |env| {
        let f = file(f)?;
        // Copied, never in place: the read may wait for a disk or a server.
        let n = with_output(env, &dst, offset, length, false, |out| {
            let n = f.read(stream, position, out)?;
            Ok((n.unwrap_or(0), n))
        })?;
        n.map_or(Ok(-1), jint_of)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "system" fn Java_dev_kompakt_Native_fileReadDirect<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    f: jlong,
    stream: jint,
    position: jlong,
    dst: JByteBuffer<'l>,
    pos: jint,
    length: jint,
) -> jint {
    run(&mut env, -1, |env| {
        let f = file(f)?;
        // SAFETY: from `direct` in this call; the only view.
        let out = unsafe { view_mut(direct(env, &dst, pos, length)?) };
        f.read(stream, position, out)?.map_or(Ok(-1), jint_of)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_fileClose<'l>(_: JNIEnv<'l>, _: JClass<'l>, f: jlong) {
    handle::free::<OpenFile>(f);
}
