//! `KompaktInputStream`: a kompakt file decoded front to back, its compressed bytes pulled from
//! a Java `InputStream` (or a file Rust reads) one block at a time.

use crate::bytes::{self, as_jbytes, range};
use crate::error::{run, Failure};
use crate::handle::{self, into_handle};
use jni::objects::{JByteArray, JClass, JLongArray, JObject, JString, JValue};
use jni::sys::{jboolean, jint, jlong, JNI_TRUE};
use jni::JNIEnv;
use kompakt::stream::SequentialDecoder;
use kompakt::ReadOptions;
use std::fs::File;
use std::io::{self, BufReader, Read};

/// Reads of 0 bytes in a row after which a Java input stream is taken to be broken.
const MAX_ZERO_READS: u32 = 1000;

/// Compressed bytes read from Java but not yet decoded, kept between calls.
#[derive(Default)]
struct Unread {
    bytes: Vec<u8>,
    pos: usize,
}

pub(crate) struct StreamReader {
    decoder: SequentialDecoder,
    unread: Unread,
    /// A file on disk, read by Rust (no Java input then).
    file: Option<BufReader<File>>,
    name: Option<String>,
    /// The length of the last decoded block, for `readerTake`.
    block_len: usize,
}

/// A Java `InputStream` as a `Read`, through a transfer array, for the length of one call.
struct JavaInput<'a, 'l> {
    env: &'a mut JNIEnv<'l>,
    input: &'a JObject<'l>,
    transfer: &'a JByteArray<'l>,
    transfer_len: i32,
    unread: &'a mut Unread,
    /// Set when the Java stream threw: the exception is pending and propagates as it is.
    threw: bool,
}

impl JavaInput<'_, '_> {
    fn fill(&mut self) -> io::Result<()> {
        let mut zero_reads = 0;
        loop {
            let got = self.env.call_method(
                self.input,
                "read",
                "([BII)I",
                &[
                    JValue::Object(self.transfer),
                    JValue::Int(0),
                    JValue::Int(self.transfer_len),
                ],
            );
            let n = match got.and_then(|v| v.i()) {
                Ok(n) => n,
                Err(_) => {
                    self.threw = true;
                    return Err(io::Error::other("the Java input stream threw"));
                }
            };
            if n < 0 {
                return Ok(());
            }
            // InputStream.read may return 0 only for a 0-length request, but some do anyway:
            // try again, a bounded number of times (never spin in native code forever).
            if n == 0 {
                zero_reads += 1;
                if zero_reads == MAX_ZERO_READS {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("the input stream returned 0 bytes {MAX_ZERO_READS} times in a row"),
                    ));
                }
                continue;
            }
            let n = n.min(self.transfer_len) as usize;
            self.unread.bytes.resize(n, 0);
            self.unread.pos = 0;
            // The transfer array is ours for the call; copying out of it is one memcpy.
            let dst = bytes::as_jbytes_mut(&mut self.unread.bytes[..n]);
            if self.env.get_byte_array_region(self.transfer, 0, dst).is_err() {
                self.threw = true;
                return Err(io::Error::other("reading the transfer array failed"));
            }
            return Ok(());
        }
    }
}

impl Read for JavaInput<'_, '_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.unread.pos == self.unread.bytes.len() {
            self.unread.bytes.clear();
            self.unread.pos = 0;
            self.fill()?;
        }
        let Unread { bytes, pos } = &mut *self.unread;
        let n = buf.len().min(bytes.len() - *pos);
        buf[..n].copy_from_slice(&bytes[*pos..*pos + n]);
        *pos += n;
        Ok(n)
    }
}

fn read_options(threads: jlong) -> Result<ReadOptions, Failure> {
    Ok(ReadOptions::default().threads(kompakt_api::options::threads(threads)?))
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_readerOpen<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    threads: jlong,
    concatenated: jboolean,
    dictionaries: JLongArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let opts = read_options(threads)?;
        let dictionaries = bytes::dictionaries(env, &dictionaries)?;
        Ok(into_handle(StreamReader {
            decoder: SequentialDecoder::new(&opts, dictionaries).concatenated(concatenated == JNI_TRUE),
            unread: Unread::default(),
            file: None,
            name: None,
            block_len: 0,
        }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_readerOpenFile<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    path: JString<'l>,
    threads: jlong,
    dictionaries: JLongArray<'l>,
) -> jlong {
    run(&mut env, 0, |env| {
        let text = bytes::string(env, &path)?.ok_or_else(|| Failure::option("the path is null"))?;
        let opts = read_options(threads)?;
        let dictionaries = bytes::dictionaries(env, &dictionaries)?;
        let path = std::path::Path::new(&text);
        let file = kompakt_fs::open_for_reading(path).map_err(|e| Failure::from(e).named(&text))?;
        Ok(into_handle(StreamReader {
            decoder: SequentialDecoder::new(&opts, dictionaries),
            unread: Unread::default(),
            file: Some(BufReader::with_capacity(1 << 20, file)),
            name: Some(text),
            block_len: 0,
        }))
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_readerNext<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    reader: jlong,
    input: JObject<'l>,
    transfer: JByteArray<'l>,
) -> jint {
    run(&mut env, -1, |env| {
        let r = handle::get::<StreamReader>(reader, "input stream")?;
        let got = match &mut r.file {
            Some(file) => r.decoder.next_block(file).map(|b| b.map(<[u8]>::len)),
            None => {
                if input.is_null() || transfer.is_null() {
                    return Err(Failure::option(
                        "the input stream and its transfer array must not be null",
                    ));
                }
                let transfer_len = env.get_array_length(&transfer)?;
                if transfer_len == 0 {
                    return Err(Failure::option("the transfer array is empty"));
                }
                let mut java = JavaInput {
                    env,
                    input: &input,
                    transfer: &transfer,
                    transfer_len,
                    unread: &mut r.unread,
                    threw: false,
                };
                let got = r.decoder.next_block(&mut java).map(|b| b.map(<[u8]>::len));
                if java.threw {
                    return Err(Failure::JavaPending);
                }
                got
            }
        };
        match got {
            Ok(Some(len)) => {
                r.block_len = len;
                bytes::jint_of(len)
            }
            Ok(None) => {
                r.block_len = 0;
                Ok(-1)
            }
            Err(e) => {
                let failure = Failure::from(e);
                Err(match &r.name {
                    Some(n) => failure.named(n),
                    None => failure,
                })
            }
        }
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_readerTake<'l>(
    mut env: JNIEnv<'l>,
    _: JClass<'l>,
    reader: jlong,
    dst: JByteArray<'l>,
    offset: jint,
) {
    run(&mut env, (), |env| {
        let r = handle::get::<StreamReader>(reader, "input stream")?;
        let block = &r.decoder.block()[..r.block_len];
        if dst.is_null() {
            return Err(Failure::option("the destination array is null"));
        }
        let total = env.get_array_length(&dst)? as usize;
        range(total, offset, bytes::jint_of(block.len())?)?;
        env.set_byte_array_region(&dst, offset, as_jbytes(block))?;
        Ok(())
    })
}

#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_readerFree<'l>(_: JNIEnv<'l>, _: JClass<'l>, reader: jlong) {
    handle::free::<StreamReader>(reader);
}
