//! kompakt files beyond this machine: objects on S3 (or MinIO, Ceph, any server speaking its
//! API) and behind HTTP(S) URLs, read by byte ranges as a [`kompakt::stream::ReadAt`] source,
//! so every kompakt reader (objects, streams, tables) opens them as it opens a file.
//!
//! - [`Location::parse`] tells a URL from a path, and refuses URLs of schemes kompakt does
//!   not read (never a local folder named `gs:`).
//! - [`open`] opens a URL as a [`RemoteFile`]: one request for the size, the ETag and the
//!   footer; every later read pinned to that ETag; [`ReadAt::prefetch`] fetches what a
//!   reader is about to read in a few merged requests, all in flight at once.
//!
//! The network clients (object_store over reqwest and tokio) are behind the cargo feature
//! `network`, on by default. Without it URLs are still recognised, and opening one is an
//! error that says kompakt was built without them.
//!
//! [`ReadAt::prefetch`]: kompakt::stream::ReadAt::prefetch

mod location;
pub use location::{url_scheme, Location, UnsupportedUrl, SCHEMES};
pub mod records;

#[cfg(feature = "network")]
mod connect;
#[cfg(feature = "network")]
mod file;
#[cfg(feature = "network")]
mod listing;
#[cfg(feature = "network")]
mod runtime;
#[cfg(feature = "network")]
mod store;
#[cfg(feature = "network")]
pub use file::{merge_ranges, RemoteFile, Traffic, HEAD_LEN, MAX_REQUEST, MIN_REQUEST, PREFETCH_LIMIT, TAIL_LEN};
#[cfg(feature = "network")]
pub use listing::{list, Listed};
#[cfg(feature = "network")]
pub use store::{
    RemoteStore, RemoteStoreInfo, RemoteStoreOptions, DEFAULT_CACHE_LIMIT, DEFAULT_GRACE, DEFAULT_MULTIPART_THRESHOLD,
    LAYOUT_VERSION,
};

/// Opens the object at `url` for reading by byte ranges.
pub fn open(url: &url::Url) -> std::io::Result<std::sync::Arc<RemoteFile>> {
    #[cfg(feature = "network")]
    return RemoteFile::open(url).map(std::sync::Arc::new);
    #[cfg(not(feature = "network"))]
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        format!("{url}: this kompakt was built without network support (cargo feature `network` of kompakt-remote)"),
    ))
}

/// Without the network clients no remote file can exist: the type has no values, so the
/// front ends compile unchanged and their remote branches are unreachable.
#[cfg(not(feature = "network"))]
#[derive(Debug)]
pub enum RemoteFile {}

#[cfg(not(feature = "network"))]
impl RemoteFile {
    pub fn url(&self) -> &str {
        match *self {}
    }

    pub fn traffic(&self) -> Traffic {
        match *self {}
    }
}

#[cfg(not(feature = "network"))]
impl kompakt::stream::ReadAt for RemoteFile {
    fn size(&self) -> std::io::Result<u64> {
        match *self {}
    }

    fn read_exact_at(&self, _: &mut [u8], _: u64) -> std::io::Result<()> {
        match *self {}
    }
}

/// Requests made and bytes received by one [`RemoteFile`], opening included.
#[cfg(not(feature = "network"))]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Traffic {
    pub requests: u64,
    pub bytes: u64,
}

/// Re-exported for callers that name URLs in their own signatures.
pub use url::Url;
