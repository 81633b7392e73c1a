//! Reading kompakt files: a path or URL, or memory the caller lends, read by ranges into the
//! caller's buffers; and what a file holds (`kpk_reader_file_kind`).

use crate::ffi::{buffer, open_source, put, Lent};
use crate::options::threads;
use crate::status::{about, guard, kpk_status, Failure};
use kompakt::stream::{ReadAt, SourceCursor};
use kompakt::{ReadOptions, Reader};
use kompakt_api::FileKind;
use std::ffi::{c_char, c_void};
use std::sync::Arc;

/// `kpk_file_kind`: what a file holds, from its metadata.
pub type kpk_file_kind = i32;
/// Streams of bytes, with metadata that names no layout (or none).
pub const KPK_FILE_PLAIN: kpk_file_kind = 0;
/// A table file (read it with `kpk_table_open_*`).
pub const KPK_FILE_TABLE: kpk_file_kind = 1;
/// An object saved by the Python package (`kompakt.save`).
pub const KPK_FILE_PYTHON_OBJECT: kpk_file_kind = 2;
/// An object saved by the R package (`kpk_save`).
pub const KPK_FILE_R_OBJECT: kpk_file_kind = 3;

/// A kompakt file open for reading.
pub struct kpk_reader {
    pub(crate) reader: Reader<SourceCursor<Arc<dyn ReadAt>>>,
    /// The path or URL, for messages (None in memory and in a store).
    pub(crate) path: Option<String>,
}

/// Opens a reader over `source`, with the `dictionaries` its blocks may need (a store's, see
/// `kpk_store_get`).
pub(crate) fn open_reader(
    source: Arc<dyn ReadAt>,
    path: Option<String>,
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

/// Opens a file (or the object at a URL) for reading.
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
        let source = open_source(path)?;
        let none = kompakt::codec::Dictionaries::none();
        open_reader(source.file, Some(source.name), threads, none, out)
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
        let lent = Lent::new(data, len)?;
        let none = kompakt::codec::Dictionaries::none();
        open_reader(Arc::new(lent), None, threads, none, out)
    })
}

fn reader_ref<'a>(r: *const kpk_reader) -> Result<&'a kpk_reader, Failure> {
    // SAFETY: a non-NULL handle came from kpk_reader_open_* or kpk_store_get and is not closed
    // yet.
    unsafe { r.as_ref() }.ok_or_else(|| Failure::usage("the reader is NULL"))
}

/// The reader behind a handle, for a call that reads (which moves its position).
pub(crate) fn reader_mut<'a>(r: *mut kpk_reader) -> Result<&'a mut kpk_reader, Failure> {
    // SAFETY: a live handle, used by one thread at a time (the header's contract), so this is
    // the only reference for the call.
    unsafe { r.as_mut() }.ok_or_else(|| Failure::usage("the reader is NULL"))
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

/// What the file holds, from its metadata (`kompakt_api::FileKind`, as every front end
/// tells it).
///
/// # Safety
/// `reader` is a live handle; `kind` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_reader_file_kind(reader: *const kpk_reader, kind: *mut kpk_file_kind) -> kpk_status {
    guard(|| {
        let r = reader_ref(reader)?;
        let k = match FileKind::of_metadata(r.reader.metadata()) {
            FileKind::Table => KPK_FILE_TABLE,
            FileKind::PythonObject => KPK_FILE_PYTHON_OBJECT,
            FileKind::RObject => KPK_FILE_R_OBJECT,
            // Plain, and a kind a later kompakt-api adds before the header names it.
            _ => KPK_FILE_PLAIN,
        };
        put(kind, k)
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
        let r = reader_mut(reader)?;
        let total = r.reader.stream_len(stream)?;
        if pos > total {
            return Err(Failure::option(format!(
                "position {pos} is past the end of stream {stream}, which has {total} bytes"
            )));
        }
        let n = usize::try_from(total - pos).map_or(len, |rest| rest.min(len));
        if n > 0 {
            let dst = &mut self::buffer(buffer, len)?[..n];
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
