//! A checker of R's serialization format: decides, without R, whether a stream may be handed
//! to R's unserializer.
//!
//! R's `unserialize()` (and `readRDS()`, and every reader built on `R_Unserialize`) rebuilds
//! whatever a stream describes, code included: a promise at the top of a stream is forced as
//! soon as the result is used (CVE-2024-27322), a package namespace is loaded (running the
//! package's `.onLoad`), an ALTREP object loads the package of its class. [`check`] walks a
//! stream item by item, in the layout of R's `src/main/serialize.c` (see [`format`] for the
//! layout), builds no value, and fails on the first item its [`Policy`] refuses or on
//! anything R would not read as the checker reads it.
//!
//! The untrusted policy ([`Policy::untrusted`], the default) refuses:
//!
//! - code: promises, closures, byte code, built-in functions, `...` lists, active bindings;
//! - what loads or runs code when unserialized: package namespaces and package
//!   environments, persistent references (a hook), ALTREP objects of any class but base R's
//!   data classes (`compact_intseq`, `compact_realseq`, `deferred_string`, `wrap_*`);
//! - environments (they hold bindings code reads; an untrusted read refuses them whole), external
//!   pointers and weak references (the policy can allow them: [`Policy::environments`],
//!   [`Policy::external_pointers`]);
//! - and shapes R never writes that would make R read memory that is not there: attributes
//!   that are not a pairlist, a string where a value belongs, an ALTREP state of the wrong
//!   type or length, a sequence R cannot hold.
//!
//! Plain data passes: atomic vectors (long ones too), lists, attributes, factors, dates and
//! times, data frames, matrices, S4 objects, symbols, and calls and formulas. A call
//! (`LANGSXP`) is data to R's unserializer: it is built, never evaluated; it runs only if
//! code the reader chose calls `eval()` on it (as model functions do with a formula), which
//! is the same as running code in a file of one's own. References to the reader's global,
//! base and empty environments (a formula's environment, usually) are allowed: they make
//! nothing from the file. Touching an S4 object, like any class dispatch, may load an
//! *installed* package that defines its class; the file cannot bring code of its own.
//!
//! The checker keeps memory in proportion to the bytes it has read (its work stack is
//! bounded by [`Policy::max_depth`], the reference table by the symbols read), never
//! panics, and reports a stream that ends early as [`Error::Truncated`]. Bytes after the
//! top-level item are not read (R does not read them either).
//!
//! ```
//! use kompakt_rserial::{check_bytes, Policy};
//! // serialize(1:3, NULL, ascii = TRUE) in R 4.2 (a compact integer sequence):
//! let stream = b"A\n3\n262658\n197888\n5\nUTF-8\n238\n2\n1\n262153\n14\ncompact_intseq\n2\n1\n262153\n4\nbase\n2\n13\n1\n13\n254\n14\n3\n3\n1\n1\n254\n";
//! assert!(check_bytes(stream, &Policy::untrusted()).is_ok());
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod error;
pub mod format;
mod input;
mod walk;

pub use error::{Error, Refused};
pub use input::Format;
use std::io::BufRead;

/// What a check lets through. Code is always refused; the grey areas are options.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Policy {
    /// Whether environments pass (their contents are checked like any value; active
    /// bindings are refused either way). Default: no.
    pub environments: bool,
    /// Whether external pointers and weak references pass (R restores them as NULL
    /// pointers). Default: no.
    pub external_pointers: bool,
    /// How deep items may nest, counting each pairlist cell as R's reader does (it recurses
    /// on the rest of a pairlist): deeper is [`Error::TooDeep`].
    pub max_depth: u32,
}

impl Policy {
    /// The default nesting limit: R 4.2 reads 10 000 levels on its default 8 MiB C stack,
    /// and crashes on a pairlist of 100 000 cells.
    pub const DEFAULT_MAX_DEPTH: u32 = 10_000;

    /// The policy for streams from anywhere: nothing that runs or loads code, no
    /// environments, no external pointers.
    pub fn untrusted() -> Policy {
        Policy {
            environments: false,
            external_pointers: false,
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }

    /// Lets environments through (or not).
    pub fn environments(mut self, allow: bool) -> Policy {
        self.environments = allow;
        self
    }

    /// Lets external pointers and weak references through (or not).
    pub fn external_pointers(mut self, allow: bool) -> Policy {
        self.external_pointers = allow;
        self
    }

    /// Sets the nesting limit.
    pub fn max_depth(mut self, depth: u32) -> Policy {
        self.max_depth = depth;
        self
    }
}

impl Default for Policy {
    fn default() -> Policy {
        Policy::untrusted()
    }
}

/// What a stream that passed holds.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Summary {
    /// Its encoding.
    pub format: Format,
    /// Its format version (2 or 3).
    pub version: i32,
    /// The writer's native encoding (version 3), such as `UTF-8`.
    pub native_encoding: Option<String>,
    /// How many items it holds (each vector element of a list or character vector is one).
    pub items: u64,
    /// The bytes the stream's value takes (what R reads; anything after is not looked at).
    pub bytes: u64,
}

/// Checks the stream `input` under `policy`. Reads up to the end of the top-level item.
pub fn check<R: BufRead>(input: R, policy: &Policy) -> Result<Summary, Error> {
    walk::Walker::new(input, policy).run()
}

/// Checks a stream held in memory.
pub fn check_bytes(data: &[u8], policy: &Policy) -> Result<Summary, Error> {
    check(data, policy)
}

#[cfg(test)]
mod tests;
