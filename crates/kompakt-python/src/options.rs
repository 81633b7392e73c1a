//! Keyword arguments (`codec=`, `level=`, `threads=`, ...) to core options.

use crate::errors::IntoPy;
use kompakt::stream::{StreamOptions, MAX_THREADS};
use kompakt::{CodecSpec, FilterSpec, WriteOptions};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// `codec` is a spec (`"zstd"`, `"zstd:9"`, `"lz4hc"`, `"auto"`, ...). `level` is the unified
/// level 0-100 when no codec is named, or the codec's own level when `codec` names one
/// without a level (`codec="zstd", level=9` is `"zstd:9"`).
pub fn codec_spec(codec: Option<&str>, level: Option<i64>) -> PyResult<CodecSpec> {
    match (codec, level) {
        (None, None) => Ok(CodecSpec::default()),
        (None, Some(level)) => {
            let level = u8::try_from(level)
                .map_err(|_| PyValueError::new_err(format!("level must be a unified level 0-100, got {level}")))?;
            CodecSpec::level(level).py_err()
        }
        (Some(spec), None) => CodecSpec::parse(spec).py_err(),
        (Some(spec), Some(level)) => {
            if spec.contains(':') || spec.trim().parse::<u8>().is_ok() {
                return Err(PyValueError::new_err(format!(
                    "codec {spec:?} already sets a level; pass level= only with a bare codec name such as \"zstd\""
                )));
            }
            if matches!(spec.trim().to_ascii_lowercase().as_str(), "none" | "raw" | "auto") {
                return Err(PyValueError::new_err(format!("codec {spec:?} takes no level")));
            }
            CodecSpec::parse(&format!("{spec}:{level}")).py_err()
        }
    }
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
