//! `compress` and `decompress` of in-memory data.

use crate::buffers::Buffer;
use crate::dictionary::PyDictionary;
use crate::errors::IntoPy;
use crate::options;
use kompakt::{ReadOptions, Reader};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

/// Compresses a bytes-like object into a complete kompakt file (as bytes).
#[pyfunction]
#[pyo3(signature = (data, *, codec=None, level=None, threads=None, typesize=None, filter=None, block_size=None, dictionary=None))]
#[allow(clippy::too_many_arguments)]
pub fn compress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    codec: Option<&str>,
    level: Option<i64>,
    threads: Option<i64>,
    typesize: Option<i64>,
    filter: Option<&str>,
    block_size: Option<i64>,
    dictionary: Option<PyRef<'py, PyDictionary>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let buf = Buffer::get(data)?;
    // Default element size: the buffer's own (8 for a float64 array).
    let typesize = typesize.or(Some(buf.item_size().clamp(1, 255) as i64));
    let opts = options::write_options(
        codec,
        level,
        threads,
        typesize,
        filter,
        block_size,
        dictionary.is_some(),
    )?;
    let buf = &buf;
    let dictionary = dictionary.map(|d| d.inner.clone());
    let packed = py
        .detach(|| match &dictionary {
            Some(d) => kompakt::compress_with_dictionary(buf.as_slice(), &opts, d),
            None => kompakt::compress(buf.as_slice(), &opts),
        })
        .py_err()?;
    Ok(PyBytes::new(py, &packed))
}

/// Decompresses a kompakt file held in memory (its single stream) into bytes.
#[pyfunction]
#[pyo3(signature = (data, *, threads=None, dictionaries=Vec::new()))]
pub fn decompress<'py>(
    py: Python<'py>,
    data: &Bound<'py, PyAny>,
    threads: Option<i64>,
    dictionaries: Vec<PyRef<'py, PyDictionary>>,
) -> PyResult<Bound<'py, PyBytes>> {
    let buf = Buffer::get(data)?;
    let opts = ReadOptions::default().threads(options::threads(threads)?);
    let buf = &buf;
    let mut reader = py.detach(|| Reader::from_memory(buf.as_slice(), opts)).py_err()?;
    let dictionaries: Vec<kompakt::codec::Dictionary> = dictionaries.iter().map(|d| d.inner.clone()).collect();
    reader.set_dictionaries(dictionaries.into());
    let streams = reader.streams().len();
    if streams == 0 {
        return Ok(PyBytes::new(py, b""));
    }
    if streams > 1 {
        return Err(crate::errors::usage_error(format!(
            "this file has {streams} streams (a saved object? use kompakt.loads); decompress reads single-stream data"
        )));
    }
    let len = reader.stream_len(0).py_err()?;
    let len = usize::try_from(len).map_err(|_| crate::errors::limit_error("data too large for this machine"))?;
    let reader = &mut reader;
    PyBytes::new_with(py, len, |dst| py.detach(|| reader.read_stream_into(0, dst)).py_err())
}
