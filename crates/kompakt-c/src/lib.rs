//! kompakt's C API: the functions `include/kompakt.h` declares, over the format crate.
//!
//! Every entry point runs its body inside [`guard`]: a Rust panic becomes
//! `KPK_ERROR_INTERNAL` with a message, never an unwind into C. Errors are status codes, and
//! the message of the calling thread's last error is kept in a thread-local for
//! `kpk_last_error`. The logic stays in the Rust crates; this layer only converts.
//!
//! This crate is all foreign-function interface: every function takes raw pointers from C,
//! so `unsafe` is allowed here, and each block says why it is sound.
#![allow(unsafe_code)]
#![allow(non_camel_case_types)]

use kompakt::stream::{ReadAt, SourceCursor};
use kompakt::{CodecSpec, ReadOptions, Reader, WriteOptions, Writer};
use kompakt_fs::{AtomicFile, PacedOutput, WritebackProgress};
use kompakt_remote::{AnyStore, Location, RemoteStoreOptions};
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::Arc;

/// `kpk_status`: 0 or one of the error codes below.
pub type kpk_status = i32;
/// Success.
pub const KPK_OK: kpk_status = 0;
/// The operating system refused.
pub const KPK_ERROR_IO: kpk_status = 1;
/// Not a kompakt file, damaged or truncated.
pub const KPK_ERROR_CORRUPT: kpk_status = 2;
/// An option or range that is not valid.
pub const KPK_ERROR_OPTION: kpk_status = 3;
/// A call the object does not allow now.
pub const KPK_ERROR_USAGE: kpk_status = 4;
/// A bug in kompakt.
pub const KPK_ERROR_INTERNAL: kpk_status = 5;
/// A folder that is not a store, or a store that refused (its index, its configuration).
pub const KPK_ERROR_STORE: kpk_status = 6;
/// `level` when none is given.
pub const KPK_LEVEL_DEFAULT: i32 = i32::MIN;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// A failure: its status and the message `kpk_last_error` returns.
struct Failure(kpk_status, String);

impl From<kompakt::Error> for Failure {
    fn from(e: kompakt::Error) -> Self {
        use kompakt::Error as E;
        let status = match &e {
            E::Io(_) => KPK_ERROR_IO,
            e if e.is_corruption() => KPK_ERROR_CORRUPT,
            E::InvalidOption { .. } | E::OutOfRange { .. } => KPK_ERROR_OPTION,
            E::Internal(_) => KPK_ERROR_INTERNAL,
            _ => KPK_ERROR_USAGE,
        };
        Failure(status, e.to_string())
    }
}

impl Failure {
    fn usage(message: impl Into<String>) -> Self {
        Failure(KPK_ERROR_USAGE, message.into())
    }

    /// An error about the file at `path`: the message names it.
    fn at(path: &std::path::Path) -> impl Fn(Failure) -> Failure + '_ {
        move |Failure(status, message)| Failure(status, format!("{}: {message}", path.display()))
    }
}

fn io_failure(e: io::Error) -> Failure {
    Failure(KPK_ERROR_IO, e.to_string())
}

/// A core error about the file at `path` (when there is one: memory has no name).
fn about(path: &Option<PathBuf>) -> impl Fn(kompakt::Error) -> Failure + '_ {
    move |e| match path {
        Some(p) => Failure::at(p)(e.into()),
        None => e.into(),
    }
}

/// A required path argument.
fn path_text<'a>(path: *const c_char) -> Result<&'a str, Failure> {
    text(path, "path")?.ok_or_else(|| Failure::usage("path is NULL"))
}

/// A path, or a URL of a scheme kompakt reads (`s3://`, `https://`); any other scheme is
/// refused, never taken for a local folder named `gs:`.
fn location_arg(path: *const c_char) -> Result<Location, Failure> {
    Location::parse(path_text(path)?).map_err(|e| Failure(KPK_ERROR_OPTION, e.to_string()))
}

/// A path to write to: kompakt reads URLs but writes files on this machine only.
fn path_arg(path: *const c_char) -> Result<PathBuf, Failure> {
    match location_arg(path)? {
        Location::Local(path) => Ok(path),
        Location::Remote(url) => Err(Failure::usage(format!(
            "{url}: kompakt reads URLs but writes only files on this machine; write a local file and upload it"
        ))),
    }
}

/// A file to read: a local file, or the object at a URL read by byte ranges; with the name
/// messages give it.
fn open_source(path: *const c_char) -> Result<(Arc<dyn ReadAt>, PathBuf), Failure> {
    match location_arg(path)? {
        Location::Local(path) => {
            let file = kompakt_fs::open_for_reading(&path).map_err(|e| Failure::at(&path)(io_failure(e)))?;
            Ok((Arc::new(file), path))
        }
        Location::Remote(url) => {
            // The client's errors name the URL already.
            let file = kompakt_remote::open(&url).map_err(io_failure)?;
            Ok((file, PathBuf::from(url.as_str())))
        }
    }
}

fn set_last_error(message: &str) {
    // A message with a NUL byte in it (from a file name) is cut there rather than lost.
    let text = message.split('\0').next().unwrap_or_default();
    let text = CString::new(text).unwrap_or_default();
    LAST_ERROR.with(|slot| *slot.borrow_mut() = text);
}

/// Runs an entry point's body: its failure or panic becomes a status and a message.
fn guard(body: impl FnOnce() -> Result<(), Failure>) -> kpk_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => KPK_OK,
        Ok(Err(Failure(status, message))) => {
            set_last_error(&message);
            status
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            set_last_error(&format!("internal error in kompakt (please report it): {what}"));
            KPK_ERROR_INTERNAL
        }
    }
}

/// `*out = value`, for an output pointer the caller passed.
fn put<T>(out: *mut T, value: T) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("an output pointer is NULL"));
    }
    // SAFETY: the caller passes a pointer to writable memory for one T (the header's
    // contract for output arguments); NULL was refused above. `write` does not read or drop
    // what was there, which may be uninitialized.
    unsafe { out.write(value) };
    Ok(())
}

/// A UTF-8 C string argument; `None` for NULL.
fn text<'a>(s: *const c_char, what: &str) -> Result<Option<&'a str>, Failure> {
    if s.is_null() {
        return Ok(None);
    }
    // SAFETY: a non-NULL string argument is a NUL-terminated string that stays valid for the
    // call (the header's contract); the borrow does not outlive the call.
    let s = unsafe { CStr::from_ptr(s) };
    s.to_str()
        .map(Some)
        .map_err(|_| Failure(KPK_ERROR_OPTION, format!("{what} is not UTF-8")))
}

/// `len` bytes at `data`, borrowed for the call.
fn bytes<'a>(data: *const c_void, len: usize) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    if data.is_null() {
        return Err(Failure::usage(format!("a NULL pointer for {len} bytes")));
    }
    // SAFETY: the caller passes `len` readable bytes at `data` that stay valid and unchanged
    // for the call (the header's contract); NULL was refused above.
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), len) })
}

fn threads(threads: i32) -> Result<usize, Failure> {
    usize::try_from(threads)
        .ok()
        .filter(|&t| t <= kompakt::stream::MAX_THREADS)
        .ok_or_else(|| {
            Failure(
                KPK_ERROR_OPTION,
                format!(
                    "threads must be 0 (all cores) to {}, got {threads}",
                    kompakt::stream::MAX_THREADS
                ),
            )
        })
}

fn write_options(codec: *const c_char, level: i32, threads_: i32) -> Result<WriteOptions, Failure> {
    let codec = text(codec, "codec")?;
    let level = (level != KPK_LEVEL_DEFAULT).then_some(i64::from(level));
    let spec = CodecSpec::from_options(codec, level)?;
    Ok(WriteOptions::default().codec(spec).threads(threads(threads_)?))
}

/// The message of this thread's last error.
#[no_mangle]
pub extern "C" fn kpk_last_error() -> *const c_char {
    // The pointer stays valid until this thread's slot is replaced, at its next failure: the
    // header says "until the next call into kompakt on that thread".
    LAST_ERROR.with(|slot| slot.borrow().as_ptr())
}

/// kompakt's version.
#[no_mangle]
pub extern "C" fn kpk_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// Bytes made by kompakt, handed to the caller.
#[repr(C)]
pub struct kpk_bytes {
    /// The first byte (NULL when empty).
    pub data: *mut u8,
    /// How many.
    pub len: usize,
}

impl kpk_bytes {
    fn from_vec(v: Vec<u8>) -> kpk_bytes {
        let mut boxed = v.into_boxed_slice();
        let len = boxed.len();
        let data = if len == 0 {
            std::ptr::null_mut()
        } else {
            boxed.as_mut_ptr()
        };
        std::mem::forget(boxed);
        kpk_bytes { data, len }
    }
}

/// Frees bytes kompakt returned, and empties the struct.
///
/// # Safety
/// `bytes` is NULL or points at a `kpk_bytes` filled by kompakt and not freed since.
#[no_mangle]
pub unsafe extern "C" fn kpk_bytes_free(bytes: *mut kpk_bytes) {
    // SAFETY: by the contract above, `bytes` is NULL or a valid kpk_bytes.
    let Some(b) = (unsafe { bytes.as_mut() }) else {
        return;
    };
    if !b.data.is_null() {
        // SAFETY: `data` and `len` came from `from_vec`, a boxed slice of exactly `len`
        // bytes forgotten there; it is rebuilt once and dropped (the fields are cleared, so
        // a second free does nothing).
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(b.data, b.len)) });
    }
    b.data = std::ptr::null_mut();
    b.len = 0;
}

// ---- writing ---------------------------------------------------------------------------------

/// Where a writer's file goes.
enum Output {
    File(AtomicFile),
    Memory(Vec<u8>),
    /// An object on its way into a store (committed by `kpk_store_commit`).
    Store(kompakt_store::Spill),
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Output::File(f) => f.write(buf),
            Output::Memory(v) => v.write(buf),
            Output::Store(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Output::File(f) => f.write_all(buf),
            Output::Memory(v) => v.write_all(buf),
            Output::Store(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::File(f) => f.flush(),
            Output::Memory(_) => Ok(()),
            Output::Store(s) => s.flush(),
        }
    }
}

impl PacedOutput for Output {
    fn progress(&self) -> Option<Arc<WritebackProgress>> {
        match self {
            Output::File(f) => f.progress(),
            Output::Memory(_) => None,
            Output::Store(s) => s.progress(),
        }
    }
}

fn memory_of(out: &mut Output) -> Option<&mut Vec<u8>> {
    match out {
        Output::Memory(v) => Some(v),
        Output::File(_) | Output::Store(_) => None,
    }
}

/// A kompakt file being written.
pub struct kpk_writer {
    writer: Writer<Output>,
    /// The options it was opened with: the base of its streams' options.
    opts: WriteOptions,
    /// The file's path, for messages (None in memory).
    path: Option<PathBuf>,
}

fn open_writer(
    output: Output,
    path: Option<PathBuf>,
    opts: WriteOptions,
    out: *mut *mut kpk_writer,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("the output pointer for the writer is NULL"));
    }
    let writer = kompakt_fs::writer(output, opts, Some(memory_of))?;
    put(out, Box::into_raw(Box::new(kpk_writer { writer, opts, path })))
}

/// Opens a writer to a file.
///
/// # Safety
/// As the header says: `path` is a NUL-terminated string, `codec` NULL or one, `out` a
/// writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_open_file(
    path: *const c_char,
    codec: *const c_char,
    level: i32,
    threads: i32,
    out: *mut *mut kpk_writer,
) -> kpk_status {
    guard(|| {
        let path = path_arg(path)?;
        let opts = write_options(codec, level, threads)?;
        let file = AtomicFile::create(&path).map_err(|e| Failure::at(&path)(io_failure(e)))?;
        open_writer(Output::File(file), Some(path), opts, out)
    })
}

/// Opens a writer to memory.
///
/// # Safety
/// `codec` is NULL or a NUL-terminated string; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_open_memory(
    codec: *const c_char,
    level: i32,
    threads: i32,
    out: *mut *mut kpk_writer,
) -> kpk_status {
    guard(|| {
        let opts = write_options(codec, level, threads)?;
        open_writer(Output::Memory(Vec::new()), None, opts, out)
    })
}

/// The writer behind a handle.
fn writer_mut<'a>(w: *mut kpk_writer) -> Result<&'a mut kpk_writer, Failure> {
    // SAFETY: a non-NULL handle came from kpk_writer_open_* and has not been freed, and the
    // caller uses it from one thread at a time (the header's contract), so this is the only
    // reference for the call.
    unsafe { w.as_mut() }.ok_or_else(|| Failure::usage("the writer is NULL"))
}

/// Adds a stream.
///
/// # Safety
/// `writer` is a live handle; `stream` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_add_stream(writer: *mut kpk_writer, stream: *mut u32) -> kpk_status {
    guard(|| {
        let w = writer_mut(writer)?;
        let id = w.writer.add_stream(None)?;
        put(stream, id.0)
    })
}

/// Adds a stream of elements of `typesize` bytes, with a filter (NULL: byte shuffle when
/// `typesize` is above 1).
///
/// # Safety
/// `writer` is a live handle; `filter` NULL or a NUL-terminated string; `stream` a writable
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_add_stream_typed(
    writer: *mut kpk_writer,
    typesize: u32,
    filter: *const c_char,
    stream: *mut u32,
) -> kpk_status {
    guard(|| {
        let w = writer_mut(writer)?;
        let typesize = u8::try_from(typesize).ok().filter(|&t| t >= 1).ok_or_else(|| {
            Failure(
                KPK_ERROR_OPTION,
                format!("typesize must be an element size of 1-255 bytes, got {typesize}"),
            )
        })?;
        let mut opts = w.opts.stream_options().typesize(typesize);
        if let Some(f) = text(filter, "filter")? {
            opts = opts.filter(f.parse::<kompakt::FilterSpec>()?);
        }
        opts.validate()?;
        let id = w.writer.add_stream(Some(opts))?;
        put(stream, id.0)
    })
}

/// Appends bytes to a stream.
///
/// # Safety
/// `writer` is a live handle; `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_write(
    writer: *mut kpk_writer,
    stream: u32,
    data: *const c_void,
    len: usize,
) -> kpk_status {
    guard(|| {
        let w = writer_mut(writer)?;
        let data = bytes(data, len)?;
        w.writer.write(kompakt::stream::StreamId(stream), data).map_err(|e| {
            let f = Failure::from(e);
            match &w.path {
                Some(p) if f.0 == KPK_ERROR_IO => Failure::at(p)(f),
                _ => f,
            }
        })
    })
}

/// Sets the footer's metadata.
///
/// # Safety
/// `writer` is a live handle; `data` holds `len` readable bytes (or `len` is 0).
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_set_metadata(
    writer: *mut kpk_writer,
    data: *const c_void,
    len: usize,
) -> kpk_status {
    guard(|| {
        let w = writer_mut(writer)?;
        let data = bytes(data, len)?.to_vec();
        Ok(w.writer.set_metadata(data)?)
    })
}

/// Completes the file and frees the writer.
///
/// # Safety
/// `writer` is a live handle (freed by this call whatever it returns); `file` is NULL or a
/// writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_finish(writer: *mut kpk_writer, file: *mut kpk_bytes) -> kpk_status {
    guard(|| {
        if writer.is_null() {
            return Err(Failure::usage("the writer is NULL"));
        }
        // SAFETY: a live handle from kpk_writer_open_*, freed here once: the caller may not
        // use it again (the header's contract).
        let w = unsafe { Box::from_raw(writer) };
        let kpk_writer { writer, path, .. } = *w;
        let in_memory = path.is_none();
        if in_memory && file.is_null() {
            // The writer is dropped: nothing was promised to a path.
            return Err(Failure::usage("a memory writer's file needs a kpk_bytes to go to"));
        }
        match writer.finish()? {
            Output::File(f) => {
                let path = path.unwrap_or_default();
                f.commit().map_err(|e| Failure::at(&path)(io_failure(e)))?;
                if !file.is_null() {
                    put(file, kpk_bytes::from_vec(Vec::new()))?;
                }
                Ok(())
            }
            Output::Memory(v) => put(file, kpk_bytes::from_vec(v)),
            // Dropped: the object never reaches the store.
            Output::Store(_) => Err(Failure::usage("a store's writer is completed by kpk_store_commit")),
        }
    })
}

/// Discards the file and frees the writer.
///
/// # Safety
/// `writer` is NULL or a live handle, freed by this call.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_abort(writer: *mut kpk_writer) {
    if writer.is_null() {
        return;
    }
    // Dropping an AtomicFile removes its temporary file; a panic in a drop is kept from C.
    let _ = guard(|| {
        // SAFETY: a live handle, freed here once (the header's contract).
        drop(unsafe { Box::from_raw(writer) });
        Ok(())
    });
}

// ---- reading ---------------------------------------------------------------------------------

/// Memory the caller lends to a reader until `kpk_reader_close`.
struct Lent {
    data: *const u8,
    len: usize,
}

// SAFETY: the bytes are only read, and the caller keeps them valid and unchanged until the
// reader is closed (kpk_reader_open_memory's contract), so sharing the pointer between the
// reader's threads is as sound as sharing a `&[u8]`.
unsafe impl Send for Lent {}
// SAFETY: as for Send: shared reads of memory nobody changes.
unsafe impl Sync for Lent {}

impl Lent {
    fn slice(&self) -> &[u8] {
        if self.len == 0 {
            return &[];
        }
        // SAFETY: `data` holds `len` readable bytes for as long as the reader (and so this
        // value) lives, by kpk_reader_open_memory's contract; NULL with a length was refused
        // when the reader was opened.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }
}

impl ReadAt for Lent {
    fn size(&self) -> io::Result<u64> {
        Ok(self.len as u64)
    }

    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.slice().read_exact_at(buf, offset)
    }

    fn as_bytes(&self) -> Option<&[u8]> {
        Some(self.slice())
    }
}

/// A kompakt file open for reading.
pub struct kpk_reader {
    reader: Reader<SourceCursor<Arc<dyn ReadAt>>>,
    path: Option<PathBuf>,
}

fn open_reader(
    source: Arc<dyn ReadAt>,
    path: Option<PathBuf>,
    threads_: i32,
    out: *mut *mut kpk_reader,
) -> Result<(), Failure> {
    open_reader_with(source, path, threads_, kompakt::codec::Dictionaries::none(), out)
}

/// [`open_reader`] for a value that needs `dictionaries` (a store's, see `kpk_store_get`).
fn open_reader_with(
    source: Arc<dyn ReadAt>,
    path: Option<PathBuf>,
    threads_: i32,
    dictionaries: kompakt::codec::Dictionaries,
    out: *mut *mut kpk_reader,
) -> Result<(), Failure> {
    if out.is_null() {
        return Err(Failure::usage("the output pointer for the reader is NULL"));
    }
    let opts = ReadOptions {
        threads: threads(threads_)?,
        verify_checksums: true,
    };
    let mut reader = Reader::at(source, opts).map_err(about(&path))?;
    reader.set_dictionaries(dictionaries);
    put(out, Box::into_raw(Box::new(kpk_reader { reader, path })))
}

/// Opens a file for reading.
///
/// # Safety
/// `path` is a NUL-terminated string; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_open_file(
    path: *const c_char,
    threads: i32,
    out: *mut *mut kpk_reader,
) -> kpk_status {
    guard(|| {
        let (source, name) = open_source(path)?;
        open_reader(source, Some(name), threads, out)
    })
}

/// Opens a file in memory for reading, where it lies.
///
/// # Safety
/// `data` holds `len` readable bytes that stay valid and unchanged until `kpk_reader_close`;
/// `out` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_open_memory(
    data: *const c_void,
    len: usize,
    threads: i32,
    out: *mut *mut kpk_reader,
) -> kpk_status {
    guard(|| {
        if data.is_null() && len > 0 {
            return Err(Failure::usage(format!("a NULL pointer for {len} bytes")));
        }
        let lent = Lent { data: data.cast(), len };
        open_reader(Arc::new(lent), None, threads, out)
    })
}

fn reader_ref<'a>(r: *const kpk_reader) -> Result<&'a kpk_reader, Failure> {
    // SAFETY: a non-NULL handle came from kpk_reader_open_* and is not closed yet.
    unsafe { r.as_ref() }.ok_or_else(|| Failure::usage("the reader is NULL"))
}

/// How many streams the file has (0 for a NULL reader).
///
/// # Safety
/// `reader` is NULL or a live handle.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_stream_count(reader: *const kpk_reader) -> u32 {
    reader_ref(reader).map_or(0, |r| r.reader.streams().len() as u32)
}

/// A stream's decoded length.
///
/// # Safety
/// `reader` is a live handle; `len` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_stream_length(reader: *const kpk_reader, stream: u32, len: *mut u64) -> kpk_status {
    guard(|| {
        let r = reader_ref(reader)?;
        put(len, r.reader.stream_len(stream)?)
    })
}

/// The footer's metadata, borrowed until the reader is closed.
///
/// # Safety
/// `reader` is a live handle; `data` and `len` writable pointers.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_metadata(
    reader: *const kpk_reader,
    data: *mut *const u8,
    len: *mut usize,
) -> kpk_status {
    guard(|| {
        let r = reader_ref(reader)?;
        let meta = r.reader.metadata();
        put(data, meta.as_ptr())?;
        put(len, meta.len())
    })
}

/// Decodes bytes of a stream into the caller's buffer.
///
/// # Safety
/// `reader` is a live handle used by no other thread during the call; `buffer` holds `len`
/// writable bytes (or `len` is 0); `read` is a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_read(
    reader: *mut kpk_reader,
    stream: u32,
    pos: u64,
    buffer: *mut c_void,
    len: usize,
    read: *mut usize,
) -> kpk_status {
    guard(|| {
        // SAFETY: a live handle, used by one thread at a time (the header's contract).
        let r = unsafe { reader.as_mut() }.ok_or_else(|| Failure::usage("the reader is NULL"))?;
        let total = r.reader.stream_len(stream)?;
        if pos > total {
            return Err(Failure(
                KPK_ERROR_OPTION,
                format!("position {pos} is past the end of stream {stream}, which has {total} bytes"),
            ));
        }
        let n = usize::try_from(total - pos).map_or(len, |rest| rest.min(len));
        if n > 0 {
            if buffer.is_null() {
                return Err(Failure::usage(format!("a NULL buffer for {len} bytes")));
            }
            // SAFETY: the caller passes `len` writable bytes at `buffer` (the header's
            // contract), and `n <= len`; nothing else refers to them during the call.
            let dst = unsafe { std::slice::from_raw_parts_mut(buffer.cast::<u8>(), n) };
            r.reader.read_range_into(stream, pos, dst).map_err(about(&r.path))?;
        }
        put(read, n)
    })
}

/// Closes a reader.
///
/// # Safety
/// `reader` is NULL or a live handle, freed by this call.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_close(reader: *mut kpk_reader) {
    if reader.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: a live handle, freed here once (the header's contract).
        drop(unsafe { Box::from_raw(reader) });
        Ok(())
    });
}

// ---- the object store ------------------------------------------------------------------------

/// A content-addressed store in a folder (the same folders as Python's `kompakt.Store` and
/// `kompakt store`), or on object storage at an `s3://` URL, with its local cache.
pub struct kpk_store {
    store: AnyStore,
}

fn store_failure(e: kompakt_store::Error) -> Failure {
    match e {
        kompakt_store::Error::Format(e) => e.into(),
        e => Failure(KPK_ERROR_STORE, e.to_string()),
    }
}

fn store_ref<'a>(s: *const kpk_store) -> Result<&'a kpk_store, Failure> {
    // SAFETY: a non-NULL handle came from kpk_store_open and is not closed yet; a store is
    // shared between threads by design (its index serializes writers).
    unsafe { s.as_ref() }.ok_or_else(|| Failure::usage("the store is NULL"))
}

fn required<'a>(s: *const c_char, what: &str) -> Result<&'a str, Failure> {
    text(s, what)?.ok_or_else(|| Failure::usage(format!("{what} is NULL")))
}

/// Opens (creating when missing) a store.
///
/// # Safety
/// `path` is a NUL-terminated string, `codec` NULL or one; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_open(
    path: *const c_char,
    codec: *const c_char,
    level: i32,
    threads: i32,
    out: *mut *mut kpk_store,
) -> kpk_status {
    guard(|| {
        if out.is_null() {
            return Err(Failure::usage("the output pointer for the store is NULL"));
        }
        let location = location_arg(path)?;
        let codec_text = text(codec, "codec")?;
        let codec = if codec_text.is_none() && level == KPK_LEVEL_DEFAULT {
            None
        } else {
            Some(CodecSpec::from_options(
                codec_text,
                (level != KPK_LEVEL_DEFAULT).then_some(i64::from(level)),
            )?)
        };
        let opts = kompakt_store::StoreOptions {
            codec,
            threads: self::threads(threads)?,
            ..Default::default()
        };
        let opts = RemoteStoreOptions {
            local: opts,
            ..Default::default()
        };
        // A remote store's errors name its URL already.
        let store = AnyStore::open(&location, opts).map_err(|e| match &location {
            Location::Local(path) => Failure::at(path)(store_failure(e)),
            Location::Remote(_) => store_failure(e),
        })?;
        put(out, Box::into_raw(Box::new(kpk_store { store })))
    })
}

/// Closes a store.
///
/// # Safety
/// `store` is NULL or a live handle, freed by this call.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_close(store: *mut kpk_store) {
    if store.is_null() {
        return;
    }
    let _ = guard(|| {
        // SAFETY: a live handle, freed here once (the header's contract).
        drop(unsafe { Box::from_raw(store) });
        Ok(())
    });
}

/// A writer for a new value of the store, completed by `kpk_store_commit`.
///
/// # Safety
/// `store` is a live handle; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_writer(store: *const kpk_store, out: *mut *mut kpk_writer) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        if out.is_null() {
            return Err(Failure::usage("the output pointer for the writer is NULL"));
        }
        let opts = s.store.local().write_options(None);
        let spill = s.store.local().spill(&opts);
        let mut writer = kompakt_fs::writer(Output::Store(spill), opts, None)?;
        writer.hash_content()?;
        put(
            out,
            Box::into_raw(Box::new(kpk_writer {
                writer,
                opts,
                path: None,
            })),
        )
    })
}

/// Completes a store writer's value and points `key` at it; frees the writer.
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `writer` a live
/// handle from `kpk_store_writer` (freed by this call); `hash` NULL or room for 33 bytes.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_commit(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    writer: *mut kpk_writer,
    hash: *mut c_char,
) -> kpk_status {
    guard(|| {
        if writer.is_null() {
            return Err(Failure::usage("the writer is NULL"));
        }
        // SAFETY: a live handle, freed here once (the header's contract).
        let w = unsafe { Box::from_raw(writer) };
        let s = store_ref(store)?;
        let (namespace, key) = (required(namespace, "namespace")?, required(key, "key")?);
        let raw = w.writer.bytes_in();
        let (output, content) = w.writer.finish_hashed()?;
        let (Output::Store(spill), Some(content)) = (output, content) else {
            return Err(Failure::usage("kpk_store_commit takes a writer from kpk_store_writer"));
        };
        let pending = kompakt_store::PendingObject::new(spill, content, raw).map_err(store_failure)?;
        let committed = pending.hash();
        s.store
            .commit_many(namespace, vec![(key.to_owned(), pending)])
            .map_err(store_failure)?;
        write_hash(hash, committed);
        Ok(())
    })
}

/// Stores `len` bytes at `data` as a one-stream value under `key`, with `metadata`, in one
/// call. A small value (at most 64 KiB) of a local store with a zstd codec is compressed with
/// the namespace's dictionary, or offered to the sample the store trains one from (which a
/// writer from `kpk_store_writer` never is).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `data` holds `len`
/// readable bytes and `metadata` `metadata_len` (either may be NULL when its length is 0);
/// `filter` NULL or a NUL-terminated string; `hash` NULL or room for 33 bytes.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn kpk_store_put(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    data: *const c_void,
    len: usize,
    typesize: u32,
    filter: *const c_char,
    metadata: *const c_void,
    metadata_len: usize,
    hash: *mut c_char,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = (required(namespace, "namespace")?, required(key, "key")?);
        let (data, metadata) = (bytes(data, len)?, bytes(metadata, metadata_len)?);
        let typesize = u8::try_from(typesize).ok().filter(|&t| t >= 1).ok_or_else(|| {
            Failure(
                KPK_ERROR_OPTION,
                format!("typesize must be an element size of 1-255 bytes, got {typesize}"),
            )
        })?;
        let opts = s.store.local().write_options(None);
        let mut stream = opts.stream_options().typesize(typesize);
        if let Some(f) = text(filter, "filter")? {
            stream = stream.filter(f.parse::<kompakt::FilterSpec>()?);
        }
        stream.validate()?;
        let pending = s
            .store
            .prepare_for(namespace, &[(data, stream)], metadata, opts)
            .map_err(store_failure)?;
        let committed = pending.hash();
        s.store
            .commit_many(namespace, vec![(key.to_owned(), pending)])
            .map_err(store_failure)?;
        write_hash(hash, committed);
        Ok(())
    })
}

/// Copies a content hash (32 hex digits and a NUL) to `hash` unless it is NULL.
fn write_hash(hash: *mut c_char, committed: kompakt::stream::ContentHash) {
    if !hash.is_null() {
        let hex = CString::new(committed.to_string()).unwrap_or_default();
        let bytes = hex.as_bytes_with_nul();
        // SAFETY: the caller passes room for 33 bytes (the header's contract); a content
        // hash is 32 hex digits and the NUL.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), hash, bytes.len().min(33)) };
    }
}

/// Opens the value under `key` for reading; `*out` is NULL when the key does not exist.
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `out` a writable
/// pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_get(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    out: *mut *mut kpk_reader,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = (required(namespace, "namespace")?, required(key, "key")?);
        let Some(object) = s.store.get(namespace, key).map_err(store_failure)? else {
            return put(out, std::ptr::null_mut());
        };
        let source: Arc<dyn ReadAt> = match object.source {
            kompakt_store::ObjectSource::File(f) => Arc::new(f),
            kompakt_store::ObjectSource::Memory(m) => Arc::new(m.into_inner()),
        };
        let threads = i32::try_from(s.store.local().read_options().threads).unwrap_or(0);
        open_reader_with(source, None, threads, object.dictionaries, out)
    })
}

/// Whether `key` exists (`*exists` 1 or 0).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `exists` a
/// writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_exists(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    exists: *mut i32,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = (required(namespace, "namespace")?, required(key, "key")?);
        put(
            exists,
            i32::from(s.store.exists(namespace, key).map_err(store_failure)?),
        )
    })
}

/// Deletes `key` (`*deleted` 1 if it existed, else 0).
///
/// # Safety
/// `store` is a live handle; `namespace` and `key` NUL-terminated strings; `deleted` NULL or
/// a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_delete(
    store: *const kpk_store,
    namespace: *const c_char,
    key: *const c_char,
    deleted: *mut i32,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let (namespace, key) = (required(namespace, "namespace")?, required(key, "key")?);
        let gone = s.store.delete(namespace, key).map_err(store_failure)?;
        if deleted.is_null() {
            return Ok(());
        }
        put(deleted, i32::from(gone))
    })
}

/// Strings as one buffer: each a little-endian u32 length, then its UTF-8 bytes.
fn string_list(items: impl IntoIterator<Item = String>) -> kpk_bytes {
    let mut out = Vec::new();
    for item in items {
        out.extend_from_slice(&(item.len() as u32).to_le_bytes());
        out.extend_from_slice(item.as_bytes());
    }
    kpk_bytes::from_vec(out)
}

/// The keys of a namespace, sorted.
///
/// # Safety
/// `store` is a live handle; `namespace` a NUL-terminated string; `keys` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_keys(
    store: *const kpk_store,
    namespace: *const c_char,
    keys: *mut kpk_bytes,
) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let namespace = required(namespace, "namespace")?;
        let mut list = s.store.keys(namespace).map_err(store_failure)?;
        list.sort();
        put(keys, string_list(list))
    })
}

/// The namespaces that hold keys, sorted.
///
/// # Safety
/// `store` is a live handle; `namespaces` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_namespaces(store: *const kpk_store, namespaces: *mut kpk_bytes) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let mut list: Vec<String> = s
            .store
            .namespaces()
            .map_err(store_failure)?
            .into_iter()
            .map(|(n, _)| n)
            .collect();
        list.sort();
        put(namespaces, string_list(list))
    })
}

/// Deletes every key of namespace `ns` (NULL: of every namespace); `*removed` (may be NULL)
/// gets how many. The values stay until `kpk_store_gc`.
///
/// # Safety
/// `store` is a live handle; `ns` NULL or a NUL-terminated string; `removed` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_clear(store: *const kpk_store, ns: *const c_char, removed: *mut u64) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let namespace = text(ns, "namespace")?;
        let n = s.store.clear(namespace).map_err(store_failure)?;
        if removed.is_null() {
            return Ok(());
        }
        put(removed, n)
    })
}

/// Removes the values no key points at (on object storage: those older than the grace period,
/// so a value another machine is committing stays); `*objects` and `*bytes` (may be NULL) get
/// what was removed.
///
/// # Safety
/// `store` is a live handle; `objects` and `bytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn kpk_store_gc(store: *const kpk_store, objects: *mut u64, bytes: *mut u64) -> kpk_status {
    guard(|| {
        let s = store_ref(store)?;
        let report = s.store.gc().map_err(store_failure)?;
        if !objects.is_null() {
            put(objects, report.objects)?;
        }
        if !bytes.is_null() {
            put(bytes, report.bytes)?;
        }
        Ok(())
    })
}

mod table;
pub use table::*;

mod rserial;
pub use rserial::*;

#[cfg(test)]
mod tests;
