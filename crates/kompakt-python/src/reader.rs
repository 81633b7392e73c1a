//! `FileReader`: random access to the streams of a kompakt file.

use crate::buffers::WritableBuffer;
use crate::errors::IntoPy;
use crate::guard::Shared;
use crate::options;
use crate::pyfile::{Source, Target};
use kompakt::stream::{BlockCache, StreamSummary};
use kompakt::{ReadOptions, Reader};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

struct State {
    reader: Reader<Source>,
    cache: BlockCache,
    /// The file's path, for errors, when it was opened by path.
    path: Option<std::path::PathBuf>,
}

/// Reads a kompakt file from a path, a seekable binary file object, or bytes-like data.
///
/// Low level: `kompakt.load`, `kompakt.loads`, `kompakt.open(..., "rb")` and `kompakt.info`
/// are built on it. Opening checks the header, trailer and index; blocks are checked as they
/// are read.
#[pyclass(module = "kompakt._core", frozen)]
pub struct FileReader {
    state: Shared<State>,
}

impl FileReader {
    pub(crate) fn from_reader(reader: Reader<Source>) -> FileReader {
        FileReader {
            state: Shared::new(State {
                reader,
                cache: BlockCache::new(),
                path: None,
            }),
        }
    }

    fn with_state<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut State) -> kompakt::Result<T> + Send,
    ) -> PyResult<T> {
        self.state.with(py, |st| {
            let path = st.path.clone();
            f(st).map_err(|e| crate::errors::to_py_at(e, path.as_deref()))
        })
    }

    fn stream_len(&self, py: Python<'_>, stream: u32) -> PyResult<u64> {
        self.with_state(py, |st| st.reader.stream_len(stream))
    }
}

/// Reads from `pos` until `dst` is full or the stream ends; returns the bytes read.
fn fill_at(st: &mut State, stream: u32, pos: u64, dst: &mut [u8]) -> kompakt::Result<usize> {
    let mut done = 0;
    while done < dst.len() {
        let n = st
            .reader
            .read_at(stream, pos + done as u64, &mut dst[done..], &mut st.cache)?;
        if n == 0 {
            break;
        }
        done += n;
    }
    Ok(done)
}

fn refuse_overlap(st: &State, dst: &[u8]) -> PyResult<()> {
    if st.reader.get_ref().overlaps(dst) {
        return Err(crate::errors::option_error(
            "the output buffer is the memory being read from; pass a separate buffer",
        ));
    }
    Ok(())
}

fn summary_dict<'py>(py: Python<'py>, id: usize, s: &StreamSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("id", id)?;
    d.set_item("raw_size", s.raw)?;
    d.set_item("stored_size", s.stored)?;
    d.set_item("blocks", s.blocks)?;
    d.set_item("ratio", s.ratio())?;
    d.set_item("codecs", s.codecs.clone())?;
    d.set_item("filters", s.filters.clone())?;
    Ok(d)
}

#[pymethods]
impl FileReader {
    #[new]
    #[pyo3(signature = (source, *, threads=None, verify_checksums=true, dictionaries=Vec::new()))]
    fn new(
        py: Python<'_>,
        source: Bound<'_, PyAny>,
        threads: Option<i64>,
        verify_checksums: bool,
        dictionaries: Vec<PyRef<'_, crate::dictionary::PyDictionary>>,
    ) -> PyResult<Self> {
        let dictionaries: Vec<kompakt::codec::Dictionary> = dictionaries.iter().map(|d| d.inner.clone()).collect();
        let opts = ReadOptions {
            threads: options::threads(threads)?,
            verify_checksums,
        };
        let target = Target::classify(source, "read")?;
        let path = match &target {
            Target::Path(path) => Some(path.clone()),
            Target::Url(url) => Some(std::path::PathBuf::from(url.as_str())),
            _ => None,
        };
        let source = Source::open(py, target)?;
        let reader = py
            .detach(|| {
                Reader::with_memory(source, opts, Source::in_memory).map(|r| r.with_positional(Source::positional))
            })
            .map_err(|e| crate::errors::to_py_at(e, path.as_deref()))?;
        let mut reader = reader;
        reader.set_dictionaries(dictionaries.into());
        Ok(FileReader {
            state: Shared::new(State {
                reader,
                cache: BlockCache::new(),
                path,
            }),
        })
    }

    /// Decoded length of each stream, in stream order.
    fn stream_lengths(&self, py: Python<'_>) -> PyResult<Vec<u64>> {
        self.with_state(py, |st| Ok(st.reader.streams().iter().map(|s| s.raw_len).collect()))
    }

    /// The file's size in bytes.
    fn file_size(&self, py: Python<'_>) -> PyResult<u64> {
        self.with_state(py, |st| Ok(st.reader.file_len()))
    }

    /// The metadata stored in the footer.
    fn metadata<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let meta = self.with_state(py, |st| Ok(st.reader.metadata().to_vec()))?;
        Ok(PyBytes::new(py, &meta))
    }

    /// A whole stream as new `bytes`, decoded in parallel straight into them.
    fn read_stream<'py>(&self, py: Python<'py>, stream: u32) -> PyResult<Bound<'py, PyBytes>> {
        let len = self.stream_len(py, stream)?;
        let len = usize::try_from(len).map_err(|_| crate::errors::limit_error("stream too large for this machine"))?;
        PyBytes::new_with(py, len, |dst| {
            self.with_state(py, |st| st.reader.read_stream_into(stream, dst))
        })
    }

    /// Decodes a whole stream into `buffer` (writable, exactly the stream's length).
    fn read_stream_into(&self, py: Python<'_>, stream: u32, buffer: &Bound<'_, PyAny>) -> PyResult<()> {
        let mut buf = WritableBuffer::get(buffer)?;
        let dst = buf.as_mut_slice();
        self.state.with(py, |st| {
            refuse_overlap(st, dst)?;
            st.reader.read_stream_into(stream, dst).py_err()
        })
    }

    /// Reads bytes of `stream` from `pos` into `buffer` until it is full or the stream ends;
    /// returns how many. Small reads are served from the last decoded block.
    fn read_into(&self, py: Python<'_>, stream: u32, pos: u64, buffer: &Bound<'_, PyAny>) -> PyResult<usize> {
        let mut buf = WritableBuffer::get(buffer)?;
        let dst = buf.as_mut_slice();
        self.state.with(py, |st| {
            refuse_overlap(st, dst)?;
            fill_at(st, stream, pos, dst).py_err()
        })
    }

    /// Up to `size` bytes of `stream` from `pos` (fewer only at its end).
    fn read<'py>(&self, py: Python<'py>, stream: u32, pos: u64, size: u64) -> PyResult<Bound<'py, PyBytes>> {
        let len = self.stream_len(py, stream)?;
        let n = usize::try_from(size.min(len.saturating_sub(pos)))
            .map_err(|_| crate::errors::limit_error("read too large for this machine"))?;
        let mut got = 0;
        let bytes = PyBytes::new_with(py, n, |dst| {
            got = self.with_state(py, |st| fill_at(st, stream, pos, dst))?;
            Ok(())
        })?;
        if got < n {
            // The index promised n bytes: only a file changed underneath us gets here.
            return Err(crate::errors::corrupt(
                "stream ended before its indexed length",
                None,
                Some("stream"),
                None,
            ));
        }
        Ok(bytes)
    }

    /// What `kompakt inspect --json` shows: sizes, ratio, and per stream its codecs and filters.
    fn info<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (summary, version, file_size, metadata_size, dictionaries) = self.with_state(py, |st| {
            let r = &mut st.reader;
            // Each block names its dictionary: read those ids (8 bytes a block) in 2.0 files.
            let dictionaries = match r.version().0 {
                1 => Vec::new(),
                _ => r.dictionaries_needed(16)?,
            };
            Ok((r.summary(), r.version(), r.file_len(), r.metadata().len(), dictionaries))
        })?;
        let raw: u64 = summary.iter().map(|s| s.raw).sum();
        let d = PyDict::new(py);
        d.set_item("format_version", format!("{}.{}", version.0, version.1))?;
        d.set_item("file_size", file_size)?;
        d.set_item("raw_size", raw)?;
        let whole = StreamSummary {
            raw,
            stored: file_size,
            ..Default::default()
        };
        d.set_item("ratio", whole.ratio())?;
        d.set_item("metadata_size", metadata_size)?;
        let ids: Vec<String> = dictionaries.iter().map(ToString::to_string).collect();
        d.set_item("dictionaries", ids)?;
        let streams = PyList::empty(py);
        for (i, s) in summary.iter().enumerate() {
            streams.append(summary_dict(py, i, s)?)?;
        }
        d.set_item("streams", streams)?;
        Ok(d)
    }

    /// Decodes every block and checks every checksum; returns counts. Raises CorruptError.
    fn verify<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let rep = self.with_state(py, |st| st.reader.verify(&mut |_| {}))?;
        let d = PyDict::new(py);
        d.set_item("blocks", rep.blocks)?;
        d.set_item("raw_size", rep.raw_bytes)?;
        d.set_item("stored_size", rep.stored_bytes)?;
        Ok(d)
    }

    /// Releases the file. Later calls raise ValueError.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let st = self.state.take(py)?;
        py.detach(move || drop(st));
        Ok(())
    }

    #[getter]
    fn closed(&self, py: Python<'_>) -> PyResult<bool> {
        self.state.is_closed(py)
    }
}
