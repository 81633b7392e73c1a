//! How far a written file is flushed to stable storage before a write returns: the `sync`
//! setting of every front end.
//!
//! Every write is atomic whatever the setting (a temporary file renamed into place), so a
//! crash of the *process* never leaves a torn file where a good one was. The setting decides
//! what a crash of the *machine* (a power loss, a kernel panic) can do to the last writes.

use std::fmt;

/// When a committed file is flushed to the disk. Chosen per write by the front ends' `sync`
/// argument, or for the process by the [`SYNC_ENV`] variable; the default is
/// [`Durability::None`], what `saveRDS`, `pickle.dump`, `zstd` and `write_fst` do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// `"none"`: renamed into place without an fsync; the kernel writes the file back when it
    /// chooses (within about 30 s on Linux's defaults). A machine crash before then may leave
    /// the previous file, no file, or an empty or partly written one under the name, which
    /// readers report as damaged (checksums), never as other data.
    #[default]
    None,
    /// `"always"`: the file is fsynced before the rename and its folder after it, so once the
    /// write returns the new file survives a machine crash. Costs about a millisecond a file
    /// on this project's test machine's disk (two flushes of the drive's cache).
    Always,
}

/// The environment variable that sets the process's default `sync` (`always` or `none`).
pub const SYNC_ENV: &str = "KOMPAKT_SYNC";

/// The valid values, for messages.
pub const SYNC_VALUES: &str = "\"always\" (fsync each file) or \"none\" (atomic rename, no fsync)";

impl Durability {
    /// `"always"` or `"none"` (case-sensitive, as every other option name).
    pub fn parse(text: &str) -> Option<Durability> {
        match text {
            "always" => Some(Durability::Always),
            "none" => Some(Durability::None),
            _ => None,
        }
    }

    /// The name [`parse`](Self::parse) takes.
    pub fn name(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Always => "always",
        }
    }

    /// The process's default: [`SYNC_ENV`] when it is set (the text it holds when that is
    /// not a valid value, for the caller's message), else [`Durability::None`].
    pub fn from_env() -> Result<Durability, String> {
        match std::env::var(SYNC_ENV) {
            Ok(text) if text.is_empty() => Ok(Durability::default()),
            Ok(text) => Durability::parse(&text).ok_or(text),
            Err(std::env::VarError::NotPresent) => Ok(Durability::default()),
            Err(std::env::VarError::NotUnicode(text)) => Err(text.to_string_lossy().into_owned()),
        }
    }

    /// The default of writes that take no `sync` argument: [`from_env`](Self::from_env), or
    /// [`Durability::Always`] when the variable holds something else (a mistyped setting
    /// errs on the side of keeping data; the front ends report it where they take options).
    pub fn process_default() -> Durability {
        Durability::from_env().unwrap_or(Durability::Always)
    }
}

impl fmt::Display for Durability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_others_are_refused() {
        for d in [Durability::None, Durability::Always] {
            assert_eq!(Durability::parse(d.name()), Some(d));
            assert_eq!(d.to_string(), d.name());
        }
        for bad in ["", "Always", "batched", "fsync", "true"] {
            assert_eq!(Durability::parse(bad), None, "{bad}");
        }
        assert_eq!(Durability::default(), Durability::None);
    }
}
