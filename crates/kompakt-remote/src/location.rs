//! What a user's string names: a local path, or a URL of a scheme kompakt reads.

use std::fmt;
use std::path::PathBuf;
use url::Url;

/// The URL schemes kompakt reads, as its messages list them.
pub const SCHEMES: &str = "s3:// (also s3a://), http://, https:// and file://";

/// A file named by a user: a path on this machine or an object behind a URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Location {
    Local(PathBuf),
    Remote(Url),
}

/// A string that looks like a URL but is not one kompakt can read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnsupportedUrl {
    pub url: String,
    pub reason: String,
}

impl fmt::Display for UnsupportedUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.url, self.reason)
    }
}

impl std::error::Error for UnsupportedUrl {}

/// The scheme of `s` when it starts like a URL (`name://`), else None: a path such as
/// `data/x.kpk`, `C:\x.kpk` or `./s3:/x` is never taken for a URL.
pub fn url_scheme(s: &str) -> Option<&str> {
    let (scheme, _) = s.split_once("://")?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    let valid = first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
    valid.then_some(scheme)
}

impl Location {
    /// Parses what a user passed as a file: a URL of a supported scheme, a `file://` URL (a
    /// local path), or any other string as a path. A string that starts like a URL of another
    /// scheme is an error naming the supported ones, never a folder named `gs:`.
    pub fn parse(s: &str) -> Result<Location, UnsupportedUrl> {
        let Some(scheme) = url_scheme(s) else {
            return Ok(Location::Local(PathBuf::from(s)));
        };
        let unsupported = |reason: String| UnsupportedUrl {
            url: s.to_string(),
            reason,
        };
        let url = Url::parse(s).map_err(|e| unsupported(format!("not a valid URL ({e})")))?;
        match scheme.to_ascii_lowercase().as_str() {
            "file" => url
                .to_file_path()
                .map(Location::Local)
                .map_err(|()| unsupported("not a local file path".into())),
            "s3" | "s3a" => {
                if url.host_str().is_none_or(str::is_empty) {
                    return Err(unsupported("no bucket (expected s3://bucket/key)".into()));
                }
                Ok(Location::Remote(url))
            }
            "http" | "https" => Ok(Location::Remote(url)),
            other => Err(unsupported(format!(
                "the scheme {other}:// is not supported; kompakt reads {SCHEMES}"
            ))),
        }
    }

    /// The object's key within its bucket (S3) or its path on the server (HTTP), without the
    /// leading slash; empty for a bucket's or server's root.
    pub fn key(url: &Url) -> &str {
        url.path().trim_start_matches('/')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_paths() {
        for p in [
            "x.kpk",
            "data/s3:/x",
            "C:\\data\\x.kpk",
            "./s3://x",
            "1ab://x",
            "",
            "://x",
        ] {
            assert_eq!(Location::parse(p).unwrap(), Location::Local(PathBuf::from(p)), "{p}");
        }
    }

    #[test]
    fn supported_urls() {
        for u in [
            "s3://bucket/a/b.kpk",
            "S3://bucket/k",
            "s3a://b/k",
            "https://h:8080/x.kpk",
            "http://h/x",
        ] {
            assert!(matches!(Location::parse(u).unwrap(), Location::Remote(_)), "{u}");
        }
        assert_eq!(
            Location::parse("file:///tmp/x.kpk").unwrap(),
            Location::Local(PathBuf::from("/tmp/x.kpk"))
        );
        let Location::Remote(url) = Location::parse("s3://bucket/a/b%20c.kpk").unwrap() else {
            unreachable!()
        };
        assert_eq!(Location::key(&url), "a/b%20c.kpk");
    }

    #[test]
    fn other_schemes_are_errors_naming_the_supported_ones() {
        for u in ["gs://b/k", "az://c/k", "hdfs://n/p", "ftp://h/x"] {
            let e = Location::parse(u).unwrap_err();
            assert!(e.to_string().starts_with(u), "{e}");
            assert!(e.to_string().contains("s3://"), "{e}");
        }
        let e = Location::parse("s3:///key").unwrap_err();
        assert!(e.to_string().contains("no bucket"), "{e}");
    }
}
