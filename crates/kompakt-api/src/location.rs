//! What a user's string names, a path on this machine or a URL, and how each is opened.
//!
//! Every front end takes a URL (`s3://`, `https://`) wherever it takes a file to read, and
//! refuses one where it writes: the rule lives here, not in each binding.

use kompakt::stream::ReadAt;
use kompakt::{Error, Result};
pub use kompakt_remote::{Location, SCHEMES};
use std::path::PathBuf;
use std::sync::Arc;

/// Parses a path or URL; a URL of a scheme kompakt does not read is an option error naming the
/// ones it does (never a folder named `gs:`).
pub fn parse(text: &str) -> Result<Location> {
    Location::parse(text).map_err(|e| Error::invalid("URL", e.url, e.reason))
}

/// A file to write: kompakt reads URLs but writes files on this machine only.
pub fn for_writing(text: &str) -> Result<PathBuf> {
    match parse(text)? {
        Location::Local(path) => Ok(path),
        Location::Remote(url) => Err(Error::Usage(format!(
            "{url}: kompakt reads URLs but writes only files on this machine; write a local file and upload it"
        ))),
    }
}

/// A file opened for reading: its bytes, and the name messages give it.
pub struct Source {
    /// Random access to the file's bytes.
    pub file: Arc<dyn ReadAt>,
    /// The path or URL, as messages name it.
    pub name: String,
    /// Where it is.
    pub location: Location,
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Source")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// Opens a file (refusing a folder) or the object at a URL, read by byte ranges.
///
/// I/O errors come back as [`Error::Io`]; those of a local file name it, a URL's client names
/// the URL itself.
pub fn open_for_reading(text: &str) -> Result<Source> {
    let location = parse(text)?;
    let (file, name): (Arc<dyn ReadAt>, String) = match &location {
        Location::Local(path) => {
            let file = kompakt_fs::open_for_reading(path).map_err(|e| named_io(e, &path.display().to_string()))?;
            (Arc::new(file), path.display().to_string())
        }
        Location::Remote(url) => (kompakt_remote::open(url)?, url.to_string()),
    };
    Ok(Source { file, name, location })
}

/// An I/O error whose message starts with `name`, keeping its kind (and OS error code).
fn named_io(e: std::io::Error, name: &str) -> Error {
    match e.raw_os_error() {
        // The OS code carries the kind; front ends that build their own error from it (Python's
        // OSError(errno, strerror, filename)) take the name separately.
        Some(_) => Error::Io(e),
        None => Error::Io(std::io::Error::new(e.kind(), format!("{name}: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_read_and_refused_for_writing() {
        assert!(matches!(parse("data/x.kpk").unwrap(), Location::Local(_)));
        assert!(matches!(parse("s3://bucket/x.kpk").unwrap(), Location::Remote(_)));
        let e = parse("gs://bucket/x.kpk").unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Option);
        assert!(e.to_string().contains("s3://"), "{e}");
        let e = for_writing("https://example.com/x.kpk").unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Usage);
        assert_eq!(for_writing("x.kpk").unwrap(), PathBuf::from("x.kpk"));
    }

    #[test]
    fn a_folder_is_not_a_file_to_read() {
        let dir = std::env::temp_dir();
        let e = open_for_reading(dir.to_str().unwrap()).unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Io);
        let missing = dir.join("kompakt-api-no-such-file.kpk");
        let e = open_for_reading(missing.to_str().unwrap()).unwrap_err();
        assert!(
            matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound),
            "{e}"
        );
    }
}
