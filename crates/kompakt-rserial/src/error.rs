//! What a check reports when it does not pass.

use std::fmt;
use std::io;

/// Something in a stream that a [`Policy`](crate::Policy) refuses, named for its user.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// `PROMSXP`: an unevaluated expression, evaluated when the value is first used.
    Promise,
    /// `CLOSXP`: an R function.
    Closure,
    /// `BCODESXP` (and the byte-code-only codes): compiled R code.
    Bytecode,
    /// `BUILTINSXP` / `SPECIALSXP`: one of R's built-in functions, such as `q`.
    Builtin,
    /// `DOTSXP`: a `...` argument list (of promises).
    DotArguments,
    /// `ENVSXP`: an environment.
    Environment,
    /// A pairlist cell marked as an active binding: a function called when the variable is read.
    ActiveBinding,
    /// `NAMESPACESXP`: a package namespace, which R loads (running the package's code).
    Namespace,
    /// `PACKAGESXP`: a package environment, which R looks up by calling R code.
    PackageEnvironment,
    /// `PERSISTSXP`: a persistent reference, handed to a hook function.
    PersistentReference,
    /// `EXTPTRSXP`: an external pointer.
    ExternalPointer,
    /// `WEAKREFSXP`: a weak reference.
    WeakReference,
    /// `UNBOUNDVALUE_SXP`: R's internal marker of an unbound variable.
    UnboundMarker,
    /// An ALTREP object of a class other than base R's own data classes: R loads the
    /// class's package to unserialize it.
    ForeignAltrep {
        /// The class name, as the stream gives it.
        class: String,
        /// The package name, as the stream gives it.
        package: String,
    },
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refused::Promise => f.write_str("a promise (code that runs when the value is used)"),
            Refused::Closure => f.write_str("a function (R code, which runs when it is called)"),
            Refused::Bytecode => f.write_str("byte-compiled R code"),
            Refused::Builtin => f.write_str("a built-in R function"),
            Refused::DotArguments => f.write_str("a ... argument list (promises: code that runs when used)"),
            Refused::Environment => f.write_str(
                "an environment (it may hold active bindings and code, so untrusted reads refuse every environment)",
            ),
            Refused::ActiveBinding => {
                f.write_str("an active binding (a function that runs when the variable is read)")
            }
            Refused::Namespace => {
                f.write_str("a package namespace (unserializing it loads the package, running its code)")
            }
            Refused::PackageEnvironment => {
                f.write_str("a package environment (unserializing it runs R code to look the package up)")
            }
            Refused::PersistentReference => {
                f.write_str("a persistent reference (unserializing it calls a hook function)")
            }
            Refused::ExternalPointer => f.write_str(
                "an external pointer (a handle to C memory; a data.table's self-reference is one)",
            ),
            Refused::WeakReference => f.write_str("a weak reference"),
            Refused::UnboundMarker => f.write_str("R's internal marker of an unbound variable"),
            Refused::ForeignAltrep { class, package } => write!(
                f,
                "an ALTREP object of class '{class}' from package '{package}' (unserializing it loads that package, running its code)"
            ),
        }
    }
}

/// Why a stream did not pass a check.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// The stream holds something the policy refuses.
    Refused {
        /// What.
        what: Refused,
        /// Where its item starts, in bytes from the start of the stream.
        offset: u64,
    },
    /// Not a stream R reads as this checker does: damaged, not R's, or shaped as R never
    /// writes it (which R might read in ways the checker cannot vouch for).
    Malformed {
        /// What is wrong.
        why: String,
        /// Where, in bytes from the start of the stream.
        offset: u64,
    },
    /// The stream ends inside an item.
    Truncated {
        /// How many bytes it has.
        offset: u64,
    },
    /// Items nest deeper than the policy's `max_depth` (R's unserializer recurses once per
    /// level, pairlist cells included, and overflows its C stack on deep enough input).
    TooDeep {
        /// The policy's limit.
        limit: u32,
        /// Where the item that went too deep starts.
        offset: u64,
    },
    /// Reading the stream failed.
    Io(io::Error),
}

impl Error {
    /// Whether the stream was refused by the policy (rather than damaged or unreadable).
    pub fn is_refusal(&self) -> bool {
        matches!(self, Error::Refused { .. })
    }

    pub(crate) fn malformed(why: impl Into<String>, offset: u64) -> Error {
        Error::Malformed {
            why: why.into(),
            offset,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Refused { what, offset } => write!(
                f,
                "the R serialization holds {what} at byte {offset}, which an untrusted read refuses"
            ),
            Error::Malformed { why, offset } => {
                write!(f, "the R serialization is damaged or not R's: {why} at byte {offset}")
            }
            Error::Truncated { offset } => {
                write!(
                    f,
                    "the R serialization ends early, after {offset} bytes (it is damaged)"
                )
            }
            Error::TooDeep { limit, offset } => write!(
                f,
                "the R serialization nests values more than {limit} levels deep at byte {offset}"
            ),
            Error::Io(e) => write!(f, "cannot read the R serialization: {e}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// An `io::Error` of kind `InvalidData` carrying the check's error (recovered with
/// `downcast`), or the I/O error itself.
impl From<Error> for io::Error {
    fn from(e: Error) -> io::Error {
        match e {
            Error::Io(e) => e,
            e => io::Error::new(io::ErrorKind::InvalidData, e),
        }
    }
}
