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

/// The table files `text` names, sorted: a folder's `*.kpk` files (those whose names start
/// with `_` or `.` are left out: temporary and hidden files, as engines that write folders of
/// files name them), the files a glob matches (`data/*.kpk`; for `s3://` URLs each folder and
/// file name may be a pattern, the bucket not; temporary and hidden files only when the
/// pattern's file name starts with `_` or `.`), an `s3://` URL ending in `/` (its `*.kpk`
/// objects, as a folder), or a file or URL as it is.
///
/// Errors: nothing matches ([`Error::Io`], not found, naming `text`), a bad pattern or URL
/// ([`Error::InvalidOption`]), a listing that fails.
pub fn table_files(text: &str) -> Result<Vec<String>> {
    let found = match parse(text)? {
        Location::Local(path) if path.is_dir() => folder_tables(&path)?,
        // A file: URL's path, as a glob too (Spark's catalog keeps locations as file: URLs).
        Location::Local(path) if has_pattern(&path.to_string_lossy()) => local_glob(&path.to_string_lossy())?,
        Location::Local(path) => vec![path.display().to_string()],
        Location::Remote(url) => remote_tables(text, &url)?,
    };
    if found.is_empty() {
        return Err(Error::Io(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{text}: no table files found there"),
        )));
    }
    Ok(found)
}

fn has_pattern(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// A name a folder of tables lists: `*.kpk`, not temporary or hidden.
fn listed_name(name: &str) -> bool {
    name.ends_with(".kpk") && !name.starts_with(['_', '.'])
}

fn folder_tables(dir: &std::path::Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| named_io(e, &dir.display().to_string()))? {
        let entry = entry?;
        let name = entry.file_name();
        if listed_name(&name.to_string_lossy()) && entry.file_type()?.is_file() {
            out.push(entry.path().display().to_string());
        }
    }
    out.sort();
    Ok(out)
}

/// Whether a glob's match is listed: temporary and hidden names only when the pattern's own
/// file name starts that way.
fn glob_listed(pattern: &str, name: &str) -> bool {
    let asked = pattern
        .rsplit('/')
        .next()
        .is_some_and(|last| last.starts_with(['_', '.']));
    asked || !name.starts_with(['_', '.'])
}

fn local_glob(pattern: &str) -> Result<Vec<String>> {
    let paths = glob::glob(pattern).map_err(|e| Error::invalid("glob", pattern, e.msg))?;
    let mut out = Vec::new();
    for p in paths {
        let p = p.map_err(|e| Error::Io(e.into()))?;
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if p.is_file() && glob_listed(pattern, &name) {
            out.push(p.display().to_string());
        }
    }
    out.sort();
    Ok(out)
}

fn remote_tables(text: &str, url: &kompakt_remote::Url) -> Result<Vec<String>> {
    let listable = url.scheme().starts_with("s3");
    let at = text.find("://").map_or(0, |i| i + 3);
    if text.ends_with('/') {
        if !listable {
            return Err(unlistable(text));
        }
        let listed = kompakt_remote::list(url)?;
        return Ok(listed
            .into_iter()
            .map(|o| o.url)
            .filter(|u| {
                u.strip_prefix(text)
                    .is_some_and(|name| !name.contains('/') && listed_name(name))
            })
            .collect());
    }
    let segments: Vec<&str> = text[at..].split('/').collect();
    let Some(first) = segments.iter().position(|s| has_pattern(s)) else {
        return Ok(vec![text.to_string()]);
    };
    if first == 0 {
        return Err(Error::invalid("URL", text, "the bucket of a URL cannot be a pattern"));
    }
    if segments.iter().any(|s| s.contains("**")) {
        return Err(Error::invalid(
            "URL",
            text,
            "'**' is not supported in URLs; use one '*' per folder level",
        ));
    }
    if !listable {
        return Err(unlistable(text));
    }
    let patterns = segments
        .iter()
        .map(|s| glob::Pattern::new(s).map_err(|e| Error::invalid("glob", text, e.msg)))
        .collect::<Result<Vec<_>>>()?;
    let prefix = format!("{}{}/", &text[..at], segments[..first].join("/"));
    let prefix_url = parse(&prefix)?;
    let Location::Remote(prefix_url) = prefix_url else {
        return Err(Error::invalid("URL", text, "not a URL"));
    };
    let mut out: Vec<String> = kompakt_remote::list(&prefix_url)?
        .into_iter()
        .map(|o| o.url)
        .filter(|u| {
            let parts: Vec<&str> = u[at.min(u.len())..].split('/').collect();
            parts.len() == patterns.len()
                && parts.iter().zip(&patterns).all(|(p, pat)| pat.matches(p))
                && parts.last().is_some_and(|name| glob_listed(text, name))
        })
        .collect();
    out.sort();
    Ok(out)
}

fn unlistable(text: &str) -> Error {
    Error::invalid(
        "URL",
        text,
        "only s3:// URLs can be listed (HTTP servers have no listing); name the files",
    )
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

    #[test]
    fn table_files_of_a_folder_a_glob_and_a_file() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["b.kpk", "a.kpk", "_tmp.kpk", ".hidden.kpk", "notes.txt"] {
            std::fs::write(dir.path().join(name), b"x").unwrap();
        }
        std::fs::create_dir(dir.path().join("_temporary")).unwrap();
        let d = dir.path().display().to_string();
        let names = |v: Vec<String>| -> Vec<String> {
            v.iter()
                .map(|p| {
                    std::path::Path::new(p)
                        .file_name()
                        .unwrap()
                        .to_string_lossy()
                        .into_owned()
                })
                .collect()
        };
        assert_eq!(names(table_files(&d).unwrap()), ["a.kpk", "b.kpk"]);
        assert_eq!(names(table_files(&format!("{d}/*.kpk")).unwrap()), ["a.kpk", "b.kpk"]);
        assert_eq!(
            names(table_files(&format!("{d}/[ab].kpk")).unwrap()),
            ["a.kpk", "b.kpk"]
        );
        assert_eq!(names(table_files(&format!("{d}/b.kpk")).unwrap()), ["b.kpk"]);
        assert_eq!(names(table_files(&format!("{d}/_*.kpk")).unwrap()), ["_tmp.kpk"]);
        assert_eq!(names(table_files(&format!("file://{d}")).unwrap()), ["a.kpk", "b.kpk"]);
        assert_eq!(
            names(table_files(&format!("file://{d}/*.kpk")).unwrap()),
            ["a.kpk", "b.kpk"]
        );
        let e = table_files(&format!("{d}/*.parquet")).unwrap_err();
        assert!(
            matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::NotFound),
            "{e}"
        );
        assert!(e.to_string().contains("*.parquet"), "{e}");
        let empty = tempfile::tempdir().unwrap();
        assert!(table_files(empty.path().to_str().unwrap()).is_err());
        let e = table_files("s3://*/x.kpk").unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Option);
        let e = table_files("https://example.com/data/").unwrap_err();
        assert_eq!(e.kind(), kompakt::ErrorKind::Option);
        assert_eq!(
            table_files("https://example.com/x.kpk").unwrap(),
            ["https://example.com/x.kpk"]
        );
    }
}
