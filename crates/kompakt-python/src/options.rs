//! Keyword arguments (`codec=`, `level=`, `threads=`, ...) to core options.

use crate::errors::IntoPy;
use kompakt::stream::{StreamOptions, MAX_THREADS};
use kompakt::{CodecSpec, FilterSpec, WriteOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `codec` and `level` as every front end reads them: [`CodecSpec::from_options`].
pub fn codec_spec(codec: Option<&str>, level: Option<i64>) -> PyResult<CodecSpec> {
    CodecSpec::from_options(codec, level).py_err()
}

pub fn threads(threads: Option<i64>) -> PyResult<usize> {
    match threads {
        None => Ok(0),
        Some(t) if (0..=MAX_THREADS as i64).contains(&t) => Ok(t as usize),
        Some(t) => Err(PyValueError::new_err(format!(
            "threads must be 0 (all cores) to {MAX_THREADS}, got {t}"
        ))),
    }
}

pub fn typesize(typesize: Option<i64>) -> PyResult<u8> {
    match typesize {
        None => Ok(1),
        Some(t) => u8::try_from(t)
            .ok()
            .filter(|&t| t >= 1)
            .ok_or_else(|| PyValueError::new_err(format!("typesize must be an element size of 1-255 bytes, got {t}"))),
    }
}

pub fn filter(filter: Option<&str>) -> PyResult<FilterSpec> {
    filter.map_or(Ok(FilterSpec::default()), |f| f.parse::<FilterSpec>().py_err())
}

/// The keyword arguments every writing function takes.
#[allow(clippy::too_many_arguments)]
pub fn write_options(
    codec: Option<&str>,
    level: Option<i64>,
    threads: Option<i64>,
    typesize: Option<i64>,
    filter: Option<&str>,
    block_size: Option<i64>,
) -> PyResult<WriteOptions> {
    let mut opts = WriteOptions::default()
        .codec(codec_spec(codec, level)?)
        .filter(self::filter(filter)?)
        .typesize(self::typesize(typesize)?)
        .threads(self::threads(threads)?);
    if let Some(bs) = block_size {
        let size = usize::try_from(bs).map_err(|_| {
            PyValueError::new_err(format!(
                "block_size must be 65536 (64 KiB) to 67108864 (64 MiB) bytes, got {bs}"
            ))
        })?;
        opts = opts.block_size(size);
    }
    opts.validate().py_err()?;
    Ok(opts)
}

/// Per-stream options: the file's, with the given overrides.
pub fn stream_options(
    base: StreamOptions,
    codec: Option<&str>,
    level: Option<i64>,
    typesize: Option<i64>,
    filter: Option<&str>,
) -> PyResult<StreamOptions> {
    let mut opts = base;
    if codec.is_some() || level.is_some() {
        opts = opts.codec(codec_spec(codec, level)?);
    }
    if let Some(t) = typesize {
        opts = opts.typesize(self::typesize(Some(t))?);
    }
    if filter.is_some() {
        opts = opts.filter(self::filter(filter)?);
    }
    opts.validate().py_err()?;
    Ok(opts)
}
