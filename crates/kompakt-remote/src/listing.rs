//! Listing the objects under a URL, so that `s3://bucket/data/` and `s3://bucket/data/*.kpk`
//! name many files, as a folder and a glob do on disk.

use crate::connect::{connect, describe};
use crate::runtime::block_on;
use futures::TryStreamExt;
use std::io;
use url::Url;

/// An object found by [`list`]: its URL and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The object's URL (the scheme and bucket of the listed URL, then its key).
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
}

/// The objects whose keys start with the path of `url` taken as a folder (`s3://b/data` and
/// `s3://b/data/` both list `data/...`, not `database/...`), at any depth, sorted by key.
/// Only object stores list (`s3://`); an HTTP server has no listing to ask for.
pub fn list(url: &Url) -> io::Result<Vec<Listed>> {
    if !url.scheme().eq_ignore_ascii_case("s3") && !url.scheme().eq_ignore_ascii_case("s3a") {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{url}: only s3:// URLs can be listed (HTTP servers have no listing); name the files"),
        ));
    }
    let (store, prefix) = connect(url)?;
    let found = block_on(async { store.list(Some(&prefix)).try_collect::<Vec<_>>().await })?
        .map_err(|e| describe(e, url.as_str()))?;
    let bucket = url.host_str().unwrap_or_default();
    let mut out: Vec<Listed> = found
        .into_iter()
        .map(|meta| Listed {
            url: format!("{}://{bucket}/{}", url.scheme(), meta.location),
            size: meta.size,
        })
        .collect();
    out.sort_by(|a, b| a.url.cmp(&b.url));
    Ok(out)
}
