//! The one error type of the core crate.
//!
//! Format faults (bad magic, checksum mismatch, truncation, impossible sizes) are kept apart from
//! I/O faults and from bad options, so callers (the CLI's exit code, the Python `CorruptError`)
//! can tell "this file is damaged" from "the disk failed" from "you asked for something invalid".

use crate::dictionary_id::DictionaryId;
use std::io;

/// Result alias used throughout kompakt.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in kompakt's core.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The underlying reader or writer failed.
    #[error("I/O error: {0}")]
    Io(#[from] io::Error),

    /// The input does not start (or end) with kompakt's magic bytes.
    #[error("{}", magic_message(what, found))]
    BadMagic {
        /// Which magic (header or trailer).
        what: &'static str,
        /// The bytes found.
        found: [u8; 4],
        /// The bytes expected.
        expected: [u8; 4],
    },

    /// The file was written by a newer, incompatible format version.
    #[error(
        "unsupported format version {major}.{minor}: this build reads major versions 1 to {supported}; \
         upgrade kompakt to read it"
    )]
    UnsupportedVersion {
        /// Major version found in the file.
        major: u16,
        /// Minor version found in the file.
        minor: u16,
        /// The newest major version this build reads.
        supported: u16,
    },

    /// The input ended before a structure was complete.
    #[error("truncated file: {what} needs {needed} bytes but only {available} are there")]
    Truncated {
        /// What was being read.
        what: &'static str,
        /// Bytes needed.
        needed: u64,
        /// Bytes available.
        available: u64,
    },

    /// A checksum did not match: the file was damaged after it was written.
    #[error("checksum mismatch in {what} at byte offset {offset}: the file is corrupt")]
    ChecksumMismatch {
        /// Which structure (header, block, footer, trailer).
        what: &'static str,
        /// Byte offset of the structure in the file.
        offset: u64,
    },

    /// A field holds a value that no valid file can hold.
    #[error("corrupt file: {what} at byte offset {offset}: {detail}")]
    Corrupt {
        /// Which structure.
        what: &'static str,
        /// Byte offset of the structure in the file (0 when unknown).
        offset: u64,
        /// What is wrong with it.
        detail: String,
    },

    /// A codec failed to decode a block whose checksum was fine, or failed to encode.
    #[error("{codec} codec error: {detail}")]
    Codec {
        /// Codec name.
        codec: &'static str,
        /// The codec library's message.
        detail: String,
    },

    /// An option given by the user is not valid.
    #[error("invalid {what} {input:?}: {expected}")]
    InvalidOption {
        /// Which option (codec spec, level, block size, ...).
        what: &'static str,
        /// What the user gave.
        input: String,
        /// What would have been valid.
        expected: String,
    },

    /// A block was compressed with a zstd dictionary the reader was not given.
    #[error("{}", missing_dictionary_message(*id, given))]
    MissingDictionary {
        /// The dictionary the block needs.
        id: DictionaryId,
        /// The dictionaries the reader has.
        given: Vec<DictionaryId>,
    },

    /// A read asked for bytes outside a stream, or for a stream that does not exist.
    #[error("out of range: {detail}")]
    OutOfRange {
        /// What was asked and what exists.
        detail: String,
    },

    /// The API was used in a way it does not allow (writing to a finished stream, ...).
    #[error("usage error: {0}")]
    Usage(String),

    /// A read would allocate more than its limit allows; the message names the limit and the
    /// option that raises it.
    #[error("{0}")]
    OverLimit(String),

    /// A fault of kompakt itself, not of the data or the caller (a worker thread panicked).
    #[error("internal error: {0}")]
    Internal(String),
}

/// What kind of failure an error is: the one classification every front end maps (to a C
/// status, an exit code, a Python exception class, an R condition class), each with one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The operating system or a server refused (a missing file, a full disk, a timeout).
    Io,
    /// Not kompakt data, or damaged or truncated data.
    Corrupt,
    /// An option or a range that is not valid; the message names the valid ones.
    Option,
    /// A call the object does not allow now (a finished stream, a closed handle).
    Usage,
    /// The data needs a zstd dictionary that was not given.
    Dictionary,
    /// The data would decode to more than the read allows.
    Limit,
    /// A folder or prefix that is not a store, or a store that refused (its index, its setup).
    Store,
    /// The data holds what the call refuses to pass on (code, in an untrusted read).
    Refused,
    /// A fault of kompakt itself (a worker thread panicked).
    Internal,
}

impl ErrorKind {
    /// Every kind, in the order of their C status codes (1, 2, ...).
    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::Io,
        ErrorKind::Corrupt,
        ErrorKind::Option,
        ErrorKind::Usage,
        ErrorKind::Internal,
        ErrorKind::Store,
        ErrorKind::Refused,
        ErrorKind::Dictionary,
        ErrorKind::Limit,
    ];

    /// The kind's name, as tests and bindings spell it: `"io"`, `"corrupt"`, `"option"`, ...
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::Io => "io",
            ErrorKind::Corrupt => "corrupt",
            ErrorKind::Option => "option",
            ErrorKind::Usage => "usage",
            ErrorKind::Dictionary => "dictionary",
            ErrorKind::Limit => "limit",
            ErrorKind::Store => "store",
            ErrorKind::Refused => "refused",
            ErrorKind::Internal => "internal",
        }
    }

    /// The kind an I/O error stands for: a kompakt error carried inside one (through `Read` or
    /// `Write` adapters) keeps its own kind; anything else is [`ErrorKind::Io`].
    pub fn of_io(err: &io::Error) -> ErrorKind {
        err.get_ref()
            .and_then(|inner| inner.downcast_ref::<Error>())
            .map_or(ErrorKind::Io, Error::kind)
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Error {
    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Io(e) => ErrorKind::of_io(e),
            Error::BadMagic { .. }
            | Error::UnsupportedVersion { .. }
            | Error::Truncated { .. }
            | Error::ChecksumMismatch { .. }
            | Error::Corrupt { .. }
            | Error::Codec { .. } => ErrorKind::Corrupt,
            Error::InvalidOption { .. } | Error::OutOfRange { .. } => ErrorKind::Option,
            Error::MissingDictionary { .. } => ErrorKind::Dictionary,
            Error::OverLimit(_) => ErrorKind::Limit,
            Error::Usage(_) => ErrorKind::Usage,
            Error::Internal(_) => ErrorKind::Internal,
        }
    }

    /// True when the error says the data is damaged or not a kompakt file
    /// (as opposed to an I/O failure or a bad option).
    pub fn is_corruption(&self) -> bool {
        !matches!(self, Error::Io(_)) && self.kind() == ErrorKind::Corrupt
    }

    /// A corrupt-file error.
    pub fn corrupt(what: &'static str, offset: u64, detail: impl Into<String>) -> Self {
        Error::Corrupt {
            what,
            offset,
            detail: detail.into(),
        }
    }

    /// An invalid-option error naming what is valid.
    pub fn invalid(what: &'static str, input: impl Into<String>, expected: impl Into<String>) -> Self {
        Error::InvalidOption {
            what,
            input: input.into(),
            expected: expected.into(),
        }
    }
}

impl From<Error> for io::Error {
    /// Format faults become `InvalidData`; the typed error can be recovered with `downcast`.
    fn from(err: Error) -> io::Error {
        match err {
            Error::Io(e) => e,
            other => {
                let kind = if other.is_corruption() {
                    io::ErrorKind::InvalidData
                } else {
                    io::ErrorKind::InvalidInput
                };
                io::Error::new(kind, other)
            }
        }
    }
}

fn missing_dictionary_message(id: DictionaryId, given: &[DictionaryId]) -> String {
    let given = if given.is_empty() {
        "no dictionary was given".to_string()
    } else {
        let ids: Vec<String> = given.iter().map(|d| d.to_string()).collect();
        format!("the dictionaries given are {}", ids.join(", "))
    };
    format!("this data was compressed with zstd dictionary {id}, and {given}; pass that dictionary to read it")
}

/// What a wrong magic means to a user: a wrong start is not a kompakt file at all; a wrong end
/// behind a good start is a kompakt file cut short (or with bytes after it).
fn magic_message(what: &str, found: &[u8; 4]) -> String {
    let shown = if found.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        format!("{:?}", String::from_utf8_lossy(found))
    } else {
        format!("bytes {found:02x?}")
    };
    if what == "header" {
        format!("not a kompakt file (it starts with {shown}, not \"KMPK\")")
    } else {
        format!(
            "a kompakt file cut short or with bytes after its end: it does not end with its {what} \
             (the last bytes are {shown}, not \"KMPK\")"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wrong_magic_says_what_the_file_is() {
        let text = Error::BadMagic {
            what: "header",
            found: *b"hell",
            expected: *b"KMPK",
        }
        .to_string();
        assert_eq!(text, "not a kompakt file (it starts with \"hell\", not \"KMPK\")");
        let binary = Error::BadMagic {
            what: "header",
            found: [0x89, b'P', b'N', b'G'],
            expected: *b"KMPK",
        };
        assert!(binary.to_string().contains("bytes [89, 50, 4e, 47]"), "{binary}");
        let cut = Error::BadMagic {
            what: "trailer",
            found: *b"\0\0\0\0",
            expected: *b"KMPK",
        };
        assert!(cut.to_string().starts_with("a kompakt file cut short"), "{cut}");
    }
}
