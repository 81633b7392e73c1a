//! What the reading commands open: a path, or a URL (`s3://`, `https://`) read by byte
//! ranges through kompakt-remote. Every reader reads through [`ReadAt`], so the rest of a
//! command does not know which it got.

use kompakt::stream::ReadAt;
use kompakt_api::location::Location;
use kompakt_table::TableReader;
use std::path::Path;
use std::sync::Arc;

/// Where `path` (as typed) names a file: a URL of a scheme kompakt reads, or a path; another
/// scheme is an error naming the supported ones ([`kompakt_api::location::parse`]).
pub fn location(path: &Path) -> kompakt::Result<Location> {
    match path.to_str() {
        Some(s) => kompakt_api::location::parse(s),
        None => Ok(Location::Local(path.to_path_buf())),
    }
}

/// Whether `path` is a URL (remote, or of a scheme kompakt refuses).
pub fn is_url(path: &Path) -> bool {
    path.to_str().and_then(kompakt_remote::url_scheme).is_some()
}

/// Opens `path` for positional reads: the file, or the object behind the URL.
pub fn open_source(path: &Path) -> kompakt::Result<Arc<dyn ReadAt>> {
    match path.to_str() {
        Some(text) => Ok(kompakt_api::location::open_for_reading(text)?.file),
        // Not UTF-8: no URL, a file of this machine.
        None => Ok(Arc::new(kompakt_fs::open_for_reading(path)?)),
    }
}

/// Opens the table at `path`: a local one as [`TableReader::open`] does (an interrupted append
/// is undone first), a remote one read-only.
pub fn open_table(path: &Path) -> kompakt::Result<TableReader> {
    match location(path)? {
        Location::Local(p) => TableReader::open(p),
        Location::Remote(url) => TableReader::from_source(kompakt_remote::open(&url)?),
    }
}
