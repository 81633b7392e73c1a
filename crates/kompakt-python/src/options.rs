//! Keyword arguments (`codec=`, `level=`, `threads=`, ...) to core options.

use crate::errors::IntoPy;
use kompakt::stream::StreamOptions;
use kompakt::{CodecSpec, FilterSpec, WriteOptions};
use pyo3::prelude::*;

/// `codec` and `level` as every front end reads them: [`kompakt_api::options::codec`].
pub fn codec_spec(codec: Option<&str>, level: Option<i64>) -> PyResult<CodecSpec> {
    kompakt_api::options::codec(codec, level, false).py_err()
}

/// `threads=`: None or 0 for all cores, at most 256 ([`kompakt_api::options::threads`]).
pub fn threads(threads: Option<i64>) -> PyResult<usize> {
    threads.map_or(Ok(0), |t| kompakt_api::options::threads(t).py_err())
}

pub fn typesize(typesize: Option<i64>) -> PyResult<u8> {
    typesize.map_or(Ok(1), |t| kompakt_api::options::typesize(t).py_err())
}

pub fn filter(filter: Option<&str>) -> PyResult<FilterSpec> {
    filter.map_or(Ok(FilterSpec::default()), |f| kompakt_api::options::filter(f).py_err())
}

/// `sync=`: `"always"` or `"none"`; None is the default ([`kompakt_api::options::sync`]).
pub fn sync(sync: Option<&str>) -> PyResult<kompakt_fs::Durability> {
    kompakt_api::options::sync(sync).py_err()
}

/// The keyword arguments every writing function takes ([`kompakt_api::options::WriteArgs`]);
/// with a dictionary and no codec or level, zstd:3.
#[allow(clippy::too_many_arguments)]
pub fn write_options(
    codec: Option<&str>,
    level: Option<i64>,
    threads: Option<i64>,
    typesize: Option<i64>,
    filter: Option<&str>,
    block_size: Option<i64>,
    dictionary: bool,
) -> PyResult<WriteOptions> {
    let args = kompakt_api::options::WriteArgs {
        codec,
        level,
        threads,
        typesize,
        filter,
        block_size,
        dictionary,
    };
    args.build().py_err()
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
