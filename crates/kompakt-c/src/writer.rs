//! Writing kompakt files: to a path (atomically), to memory, or into a store (`store.rs`).

use crate::ffi::{bytes, kpk_bytes, path_arg, put};
use crate::options::{kpk_write_options, sync_option, typed_stream, write_options};
use crate::status::{at, guard, kpk_status, Failure, KPK_ERROR_IO};
use kompakt::{WriteOptions, Writer};
use kompakt_fs::{AtomicFile, PacedOutput, WritebackProgress};
use std::ffi::{c_char, c_void};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// Where a writer's file goes.
pub(crate) enum Output {
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
    pub(crate) writer: Writer<Output>,
    /// The options it was opened with: the base of its streams' options.
    pub(crate) opts: WriteOptions,
    /// The file's path, for messages (None in memory and in a store).
    pub(crate) path: Option<PathBuf>,
    /// Whether the file is built in memory (and handed over by `kpk_writer_finish`).
    pub(crate) in_memory: bool,
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
    let in_memory = matches!(output, Output::Memory(_));
    let writer = kompakt_fs::writer(output, opts, Some(memory_of))?;
    put(
        out,
        Box::into_raw(Box::new(kpk_writer {
            writer,
            opts,
            path,
            in_memory,
        })),
    )
}

/// Opens a writer to a file, written atomically.
///
/// # Safety
/// As the header says: `path` is a NUL-terminated string; `opts` NULL or a readable
/// `kpk_write_options` of the size its `size` field says; `out` a writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_open_file(
    path: *const c_char,
    opts: *const kpk_write_options,
    out: *mut *mut kpk_writer,
) -> kpk_status {
    guard(|| {
        let path = path_arg(path)?;
        let durability = sync_option(opts).map_err(at(&path))?;
        let opts = write_options(opts).map_err(at(&path))?;
        let file = AtomicFile::create_with(&path, durability).map_err(at(&path))?;
        open_writer(Output::File(file), Some(path), opts, out)
    })
}

/// Opens a writer to memory.
///
/// # Safety
/// `opts` is NULL or a readable `kpk_write_options` of the size its `size` field says; `out` a
/// writable pointer.
#[no_mangle]
pub unsafe extern "C" fn kpk_writer_open_memory(
    opts: *const kpk_write_options,
    out: *mut *mut kpk_writer,
) -> kpk_status {
    guard(|| {
        let opts = write_options(opts)?;
        open_writer(Output::Memory(Vec::new()), None, opts, out)
    })
}

/// The writer behind a handle.
pub(crate) fn writer_mut<'a>(w: *mut kpk_writer) -> Result<&'a mut kpk_writer, Failure> {
    // SAFETY: a non-NULL handle came from kpk_writer_open_* or kpk_store_writer and has not
    // been freed, and the caller uses it from one thread at a time (the header's contract), so
    // this is the only reference for the call.
    unsafe { w.as_mut() }.ok_or_else(|| Failure::usage("the writer is NULL"))
}

/// Adds a stream, with the options the writer was opened with.
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

/// Adds a stream of elements of `typesize` bytes (1-255), with a filter (NULL: byte shuffle
/// when `typesize` is above 1).
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
        let opts = typed_stream(w.opts.stream_options(), typesize, filter)?;
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
                Some(p) if f.0 == KPK_ERROR_IO => at(p)(f),
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
        let kpk_writer {
            writer,
            path,
            in_memory,
            ..
        } = *w;
        if in_memory && file.is_null() {
            // The writer is dropped: nothing was promised to a path.
            return Err(Failure::usage("a memory writer's file needs a kpk_bytes to go to"));
        }
        match writer.finish()? {
            Output::File(f) => {
                let path = path.unwrap_or_default();
                f.commit().map_err(at(&path))?;
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
