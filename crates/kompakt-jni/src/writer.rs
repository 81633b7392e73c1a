//! `KompaktOutputStream`: a one-stream kompakt file written block by block, to memory that Java
//! drains into its `OutputStream`, or to a file written atomically.

use crate::bytes::{self, jint_of, with_input, with_output};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use crate::options::options_of;
use jni::objects::{JByteArray, JClass, JString};
use jni::sys::{jint, jlong};
use jni::JNIEnv;
use kompakt::stream::StreamId;
use kompakt::Writer;
use kompakt_fs::{AtomicFile, PacedOutput, WritebackProgress};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Where the file goes.
enum Sink {
    /// Bytes waiting for Java to drain them.
    Memory(Vec<u8>),
    File(AtomicFile),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Memory(v) => v.write(buf),
            Sink::File(f) => f.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Memory(v) => v.write_all(buf),
            Sink::File(f) => f.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Memory(_) => Ok(()),
            Sink::File(f) => f.flush(),
        }
    }
}

impl PacedOutput for Sink {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        match self {
            Sink::Memory(_) => None,
            Sink::File(f) => f.progress(),
        }
    }
}

pub(crate) struct StreamWriter {
    /// None once finished (or failed while finishing).
    writer: Option<Writer<Sink>>,
    stream: StreamId,
    /// The finished file's last bytes, for a memory sink.
    tail: Vec<u8>,
    /// Bytes of the waiting output already drained.
    drained: usize,
    path: Option<PathBuf>,
}

impl StreamWriter {
    fn open(sink: Sink, options: jlong, path: Option<PathBuf>) -> Result<StreamWriter, Failure> {
        let o = options_of(options)?;
        let mut writer = kompakt_fs::writer_with_dictionary(sink, o.write, None, o.dictionary)?;
        let stream = writer.add_stream(None)?;
        Ok(StreamWriter {
            writer: Some(writer),
            stream,
            tail: Vec::new(),
            drained: 0,
            path,
        })
    }

    fn name(&self, failure: Failure) -> Failure {
        match &self.path {
            Some(p) => failure.named(&p.display().to_string()),
            None => failure,
        }
    }

    fn writer(&mut self) -> Result<&mut Writer<Sink>, Failure> {
        self.writer
            .as_mut()
            .ok_or_else(|| Failure::usage("the stream is finished; nothing more can be written"))
    }

    /// The output waiting to be drained.
    fn waiting(&mut self) -> &mut Vec<u8> {
        match self.writer.as_mut().map(|w| w.output_mut()) {
            Some(Sink::Memory(v)) => v,
            Some(Sink::File(_)) => &mut self.tail,
            None => &mut self.tail,
        }
    }

    fn pending(&mut self) -> Result<jint, Failure> {
        let drained = self.drained;
        jint_of(self.waiting().len() - drained)
    }

    fn write(&mut self, data: &[u8]) -> Result<jint, Failure> {
        let stream = self.stream;
        let w = self.writer()?;
        let result = w.write(stream, data).and_then(|()| w.flush_stream(stream));
        result.map_err(|e| self.name(e.into()))?;
        self.pending()
    }

    fn drain(&mut self, dst: &mut [u8]) -> usize {
        let drained = self.drained;
        let waiting = self.waiting();
        let n = dst.len().min(waiting.len() - drained);
        dst[..n].copy_from_slice(&waiting[drained..drained + n]);
        if drained + n == waiting.len() {
            waiting.clear();
            self.drained = 0;
        } else {
            self.drained = drained + n;
        }
        n
    }

    fn finish(&mut self) -> Result<jint, Failure> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| Failure::usage("the stream is already finished"))?;
        match writer.finish() {
            Ok(Sink::Memory(rest)) => {
                // What was not drained yet comes first.
                self.tail = rest;
                self.pending()
            }
            Ok(Sink::File(file)) => {
                file.commit().map_err(|e| self.name(e.into()))?;
                Ok(0)
            }
            Err(e) => Err(self.name(e.into())),
        }
    }
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    options: jlong,
) -> jlong {
    run(&mut env, 0, |_| {
        Ok(into_handle(StreamWriter::open(
            Sink::Memory(Vec::new()),
            options,
            None,
        )?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerOpenFile<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    options: jlong,
) -> jlong {
    run(&mut env, 0, |env| {
        let text = bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let path = kompakt_api::location::for_writing(&text)?;
        let name = path.display().to_string();
        // Options are checked before the temporary file exists.
        options_of(options)?;
        let file = AtomicFile::create(&path).map_err(|e| Failure::from(e).named(&name))?;
        Ok(into_handle(StreamWriter::open(Sink::File(file), options, Some(path))?))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerWrite<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    writer: jlong,
    b: JByteArray<'l>,
    offset: jint,
    length: jint,
) -> jint {
    run(&mut env, -1, |env| {
        let w = handle::get::<StreamWriter>(writer, "stream")?;
        // A file writer may wait for the disk: its input is copied, never held in place.
        let in_place = w.path.is_none();
        with_input(env, &b, offset, length, in_place, |data| w.write(data))?
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerDrain<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    writer: jlong,
    dst: JByteArray<'l>,
    offset: jint,
    length: jint,
) -> jint {
    run(&mut env, -1, |env| {
        let w = handle::get::<StreamWriter>(writer, "stream")?;
        let n = with_output(env, &dst, offset, length, true, |out| {
            let n = w.drain(out);
            Ok((n, n))
        })?;
        jint_of(n)
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerFinish<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    writer: jlong,
) -> jint {
    run(&mut env, -1, |_| {
        handle::get::<StreamWriter>(writer, "stream")?.finish()
    })
}

/// Frees a writer; an unfinished file writer's temporary file is removed (no file appears).
#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_writerFree<'l>(_: JNIEnv<'l>, _: JClass<'l>, writer: jlong) {
    handle::free::<StreamWriter>(writer);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain_all(w: &mut StreamWriter, out: &mut Vec<u8>) {
        let mut buf = [0u8; 1000];
        loop {
            let n = w.drain(&mut buf);
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    #[test]
    fn drained_bytes_make_the_file() {
        let mut w = StreamWriter::open(Sink::Memory(Vec::new()), 0, None).unwrap();
        let mut file = Vec::new();
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 97) as u8).collect();
        for part in data.chunks(70_000) {
            assert!(w.write(part).unwrap() > 0);
            drain_all(&mut w, &mut file);
        }
        assert!(w.finish().unwrap() > 0);
        drain_all(&mut w, &mut file);
        assert_eq!(kompakt::decompress(&file).unwrap(), data);
        assert!(w.write(b"late").is_err());
        assert!(w.finish().is_err());
    }

    #[test]
    fn a_file_appears_only_when_finished() {
        let dir = std::env::temp_dir().join(format!("kompakt-jni-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("x.kpk");
        let sink = Sink::File(AtomicFile::create(&path).unwrap());
        let mut w = StreamWriter::open(sink, 0, Some(path.clone())).unwrap();
        assert_eq!(w.write(b"abc").unwrap(), 0);
        drop(w);
        assert!(!path.exists());
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no litter");
        let mut w = StreamWriter::open(Sink::File(AtomicFile::create(&path).unwrap()), 0, Some(path.clone())).unwrap();
        w.write(b"abc").unwrap();
        assert_eq!(w.finish().unwrap(), 0);
        assert_eq!(kompakt::decompress(&std::fs::read(&path).unwrap()).unwrap(), b"abc");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
