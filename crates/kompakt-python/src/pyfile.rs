//! Where bytes come from and go to: a path, a Python file object, or memory. The readers
//! and writers build on this module, never the other way round.

use crate::buffers::Buffer;
use crate::errors::IntoPy;
use kompakt::stream::SourceCursor;
use kompakt_fs::{AtomicFile, PacedOutput, WritebackProgress};
use kompakt_remote::{Location, RemoteFile, Url};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Arc;

/// A Python binary file object seen from Rust. Each call takes the GIL for the duration of
/// one Python method call; an exception raised by the object travels back to the caller
/// unchanged (pyo3 wraps it in `io::Error` and unwraps it again).
pub struct PyFile {
    obj: Py<PyAny>,
}

impl PyFile {
    pub fn new(obj: Bound<'_, PyAny>) -> PyFile {
        PyFile { obj: obj.unbind() }
    }
}

impl Read for PyFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let data = self.obj.call_method1(py, "read", (buf.len(),))?;
            let data = data.bind(py);
            if data.is_none() {
                // A non-blocking stream with nothing ready: we cannot wait for it.
                return Err(io::Error::new(
                    io::ErrorKind::WouldBlock,
                    "file object returned None from read()",
                ));
            }
            let view = Buffer::get(data)?;
            let bytes = view.as_slice();
            if bytes.len() > buf.len() {
                return Err(io::Error::other("file object's read(n) returned more than n bytes"));
            }
            buf[..bytes.len()].copy_from_slice(bytes);
            Ok(bytes.len())
        })
    }
}

impl Write for PyFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let n = self.obj.call_method1(py, "write", (PyBytes::new(py, buf),))?;
            // Raw files may write less; buffered ones return the full length (None: taken as all).
            match n.extract::<Option<i64>>(py) {
                Ok(None) => Ok(buf.len()),
                Ok(Some(n)) if (0..=buf.len() as i64).contains(&n) => Ok(n as usize),
                _ => Err(io::Error::other(format!(
                    "file object's write() of {} bytes returned {}",
                    buf.len(),
                    n.bind(py).repr().map(|r| r.to_string()).unwrap_or_default()
                ))),
            }
        })
    }

    fn flush(&mut self) -> io::Result<()> {
        Python::attach(|py| {
            if self.obj.bind(py).hasattr("flush")? {
                self.obj.call_method0(py, "flush")?;
            }
            Ok(())
        })
    }
}

impl Seek for PyFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let (offset, whence) = match pos {
            SeekFrom::Start(p) => (p as i128, 0),
            SeekFrom::Current(d) => (d as i128, 1),
            SeekFrom::End(d) => (d as i128, 2),
        };
        Python::attach(|py| {
            let at = self.obj.call_method1(py, "seek", (offset, whence))?;
            Ok(at.extract::<u64>(py)?)
        })
    }
}

/// What a caller passed as a file: a path (`str`, `os.PathLike`), a URL (`str`), a file
/// object (anything with `read` or `write`), or for reading, bytes-like data.
pub enum Target<'py> {
    Path(PathBuf),
    Url(Url),
    FileObject(Bound<'py, PyAny>),
    Data(Bound<'py, PyAny>),
}

/// Where a `str` or `os.PathLike` names a file: a URL of a scheme kompakt reads, or a path. A
/// string that starts like a URL of another scheme is a `ValueError` naming the supported
/// ones (never a local folder named `gs:`).
pub fn location(obj: &Bound<'_, PyAny>) -> PyResult<Location> {
    if obj.is_instance_of::<PyString>() {
        if let Ok(s) = obj.extract::<&str>() {
            return kompakt_api::location::parse(s).py_err();
        }
    }
    Ok(Location::Local(obj.extract::<PathBuf>()?))
}

/// A path to write to: URLs are refused (kompakt writes files on this machine).
pub fn local_path(obj: &Bound<'_, PyAny>) -> PyResult<PathBuf> {
    match location(obj)? {
        Location::Local(path) => Ok(path),
        Location::Remote(url) => Err(cannot_write(&url)),
    }
}

pub fn cannot_write(url: &Url) -> PyErr {
    match kompakt_api::location::for_writing(url.as_str()) {
        Err(e) => crate::errors::to_py(e),
        Ok(_) => crate::errors::to_py(kompakt::Error::Usage(format!("{url}: not a local file"))),
    }
}

/// Opens the object at `url`, without the GIL; errors as `OSError`s naming the URL.
pub fn open_remote(py: Python<'_>, url: &Url) -> PyResult<Arc<RemoteFile>> {
    py.detach(|| kompakt_remote::open(url))
        .map_err(|e| crate::errors::os_error(e, std::path::Path::new(url.as_str())))
}

impl<'py> Target<'py> {
    pub fn classify(obj: Bound<'py, PyAny>, method: &str) -> PyResult<Target<'py>> {
        if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
            return Ok(match location(&obj)? {
                Location::Local(path) => Target::Path(path),
                Location::Remote(url) => Target::Url(url),
            });
        }
        if obj.hasattr(method)? {
            return Ok(Target::FileObject(obj));
        }
        Ok(Target::Data(obj))
    }
}

/// Output of a file being written (`FileWriter`, a store's objects).
pub enum Sink {
    /// A new file that replaces the target only when complete.
    Atomic(AtomicFile),
    Python(PyFile),
    Memory(Vec<u8>),
    /// A store object: memory while small, then a temporary file in the store.
    Spill(kompakt_store::Spill),
}

impl Sink {
    /// The bytes of an in-memory sink, which a writer compresses into directly.
    pub fn memory(&mut self) -> Option<&mut Vec<u8>> {
        match self {
            Sink::Memory(v) => Some(v),
            _ => None,
        }
    }
}

impl PacedOutput for Sink {
    fn progress(&self) -> Option<std::sync::Arc<WritebackProgress>> {
        match self {
            Sink::Atomic(f) => f.progress(),
            Sink::Spill(s) => s.progress(),
            Sink::Python(_) | Sink::Memory(_) => None,
        }
    }
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Atomic(f) => f.write(buf),
            Sink::Python(f) => f.write(buf),
            Sink::Memory(v) => v.write(buf),
            Sink::Spill(s) => s.write(buf),
        }
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match self {
            Sink::Atomic(f) => f.write_all(buf),
            Sink::Python(f) => f.write_all(buf),
            Sink::Memory(v) => v.write_all(buf),
            Sink::Spill(s) => s.write_all(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Atomic(f) => f.flush(),
            Sink::Python(f) => f.flush(),
            Sink::Memory(_) => Ok(()),
            Sink::Spill(s) => s.flush(),
        }
    }
}

/// Bytes-like data held through the buffer protocol, read as a file without copying it.
pub struct MemoryFile {
    data: Buffer,
    pos: u64,
}

impl Read for MemoryFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let data = self.data.as_slice();
        let start = (self.pos as usize).min(data.len());
        let n = buf.len().min(data.len() - start);
        buf[..n].copy_from_slice(&data[start..start + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for MemoryFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        let len = self.data.len() as u64;
        let target = match pos {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => len.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before start"))?;
        Ok(self.pos)
    }
}

/// Input of a file being read (`FileReader`, a store's objects).
pub enum Source {
    File(File),
    Python(PyFile),
    Memory(MemoryFile),
    /// An object of a store.
    Object(kompakt_store::ObjectSource),
    /// An object behind a URL, read by byte ranges.
    Remote(SourceCursor<Arc<RemoteFile>>),
}

impl Source {
    /// The whole file when it is in memory (bytes, a buffer): reads decode blocks from it in
    /// place ([`kompakt::stream::Reader::with_memory`]).
    pub fn in_memory(&self) -> Option<&[u8]> {
        match self {
            Source::Memory(m) => Some(m.data.as_slice()),
            _ => None,
        }
    }

    /// The file, when it is one on disk: reads of many blocks then have each thread read its
    /// own ([`kompakt::stream::Reader::with_positional`]).
    pub fn positional(&self) -> Option<&dyn kompakt::stream::ReadAt> {
        match self {
            Source::File(f) => Some(f),
            Source::Remote(r) => Some(r.get_ref()),
            _ => None,
        }
    }

    pub fn open(py: Python<'_>, target: Target<'_>) -> PyResult<Source> {
        match target {
            Target::Path(path) => Ok(Source::File(
                py.detach(|| kompakt_fs::open_for_reading(&path))
                    .map_err(|e| crate::errors::os_error(e, &path))?,
            )),
            Target::Url(url) => {
                let file = open_remote(py, &url)?;
                Ok(Source::Remote(SourceCursor::new(file).map_err(|e| {
                    crate::errors::os_error(e, std::path::Path::new(url.as_str()))
                })?))
            }
            Target::FileObject(obj) => {
                if obj.hasattr("seekable")? && !obj.call_method0("seekable")?.is_truthy()? {
                    return Err(PyTypeError::new_err(
                        "kompakt needs a seekable file object to read (its index is at the end); \
                         read the data into bytes first",
                    ));
                }
                Ok(Source::Python(PyFile::new(obj)))
            }
            Target::Data(obj) => Ok(Source::Memory(MemoryFile {
                data: Buffer::get(&obj)?,
                pos: 0,
            })),
        }
    }
}

impl Source {
    /// True when reading from this source would read the memory `dst` (the caller passed the
    /// same buffer as input and output): refused, as the two slices would alias.
    pub fn overlaps(&self, dst: &[u8]) -> bool {
        match self {
            Source::Memory(m) => {
                let src = m.data.as_slice().as_ptr_range();
                let dst = dst.as_ptr_range();
                !src.is_empty() && !dst.is_empty() && src.start < dst.end && dst.start < src.end
            }
            _ => false,
        }
    }
}

impl Read for Source {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Source::File(f) => f.read(buf),
            Source::Python(f) => f.read(buf),
            Source::Memory(m) => m.read(buf),
            Source::Object(o) => o.read(buf),
            Source::Remote(r) => r.read(buf),
        }
    }
}

impl Seek for Source {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        match self {
            Source::File(f) => f.seek(pos),
            Source::Python(f) => f.seek(pos),
            Source::Memory(m) => m.seek(pos),
            Source::Object(o) => o.seek(pos),
            Source::Remote(r) => r.seek(pos),
        }
    }
}
