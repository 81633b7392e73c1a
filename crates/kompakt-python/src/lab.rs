//! `bench`: the codec lab (crates/kompakt-lab) on data in memory, rows as JSON for
//! `kompakt.bench` to make a DataFrame of.

use crate::buffers::Buffer;
use crate::errors::{option_error, IntoPy};
use kompakt::stream::resolve_threads;
use kompakt::FilterSpec;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;

/// Measures every codec x filter x block size x thread count on `data`; returns the rows (and,
/// with `recommend`, the recommendations; with `disk`, the disk's measured speeds, which are
/// then the sink's) as JSON. The GIL is released while measuring.
#[pyfunction]
#[pyo3(signature = (data, *, name, codecs, filters, block_sizes, threads, typesize, seconds, unverified, sink_speed=None, disk=None, disk_bytes=None, recommend=false, min_speed="100MB/s", plot=None))]
#[allow(clippy::too_many_arguments)]
pub fn bench(
    py: Python<'_>,
    data: &Bound<'_, PyAny>,
    name: &str,
    codecs: &str,
    filters: Vec<String>,
    block_sizes: Vec<usize>,
    threads: Vec<i64>,
    typesize: u8,
    seconds: f64,
    unverified: bool,
    sink_speed: Option<&str>,
    disk: Option<std::path::PathBuf>,
    disk_bytes: Option<u64>,
    recommend: bool,
    min_speed: &str,
    plot: Option<std::path::PathBuf>,
) -> PyResult<String> {
    let lab = |e: kompakt_lab::Error| option_error(e.0);
    let codecs = kompakt_lab::expand_codecs(codecs).map_err(lab)?;
    let filters = filters
        .iter()
        .map(|f| f.parse::<FilterSpec>().map_err(|e| option_error(e.to_string())))
        .collect::<PyResult<Vec<_>>>()?;
    if codecs.is_empty() || filters.is_empty() || block_sizes.is_empty() || threads.is_empty() {
        return Err(option_error(
            "codecs, filters, block_sizes and threads each need at least one value",
        ));
    }
    if sink_speed.is_some() && disk.is_some() {
        return Err(option_error(
            "sink_speed and disk both set the sink: give a speed or a disk to measure, not both",
        ));
    }
    let mut sink = sink_speed
        .map(kompakt_lab::parse_speed)
        .transpose()
        .map_err(lab)?
        .map(kompakt_lab::Sink::both);
    let disk_bytes = disk_bytes.unwrap_or(kompakt_lab::DISK_BYTES);
    kompakt_lab::check_disk_bytes(disk_bytes).map_err(lab)?;
    let min_speed = kompakt_lab::parse_speed(min_speed).map_err(lab)?;
    let config = kompakt_lab::Config {
        codecs,
        filters,
        block_sizes,
        threads: threads
            .into_iter()
            .map(|t| kompakt_api::options::threads(t).map(resolve_threads))
            .collect::<kompakt::Result<_>>()
            .py_err()?,
        typesize: typesize.max(1),
        seconds,
        unverified,
    };
    let buf = Buffer::get(data)?;
    let buf = &buf;
    // A missing or read-only folder is the file system's answer: OSError, as open() gives.
    let disk = match disk {
        Some(path) => Some(
            py.detach(|| kompakt_lab::measure_disk(&path, disk_bytes))
                .map_err(|e| PyOSError::new_err(e.0))?,
        ),
        None => None,
    };
    if let Some(d) = &disk {
        sink = Some(d.sink());
    }
    let rows = py
        .detach(|| kompakt_lab::measure(name, buf.as_slice(), &config, &mut |_| {}))
        .map_err(lab)?;
    if let Some(path) = plot {
        let title = format!("{name}: ratio against speed (this machine)");
        py.detach(|| kompakt_lab::plot(&rows, &title, &path)).map_err(lab)?;
    }
    let mut out = serde_json::json!({
        "rows": rows.iter().map(|r| r.to_json(sink)).collect::<Vec<_>>(),
    });
    if let Some(d) = &disk {
        out["disk"] = d.to_json();
    }
    if recommend {
        out["recommendations"] = kompakt_lab::recommend(&rows, sink, min_speed)
            .iter()
            .map(|p| p.to_json(&rows))
            .collect();
    }
    Ok(out.to_string())
}
