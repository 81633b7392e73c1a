//! Errors as Java exceptions: one class per [`ErrorKind`], and the guard every entry point runs
//! in (errors and panics become exceptions; nothing unwinds into the JVM).

use jni::JNIEnv;
use kompakt::ErrorKind;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Why a call failed: a kompakt error to throw, or a Java exception already pending (one that
/// a Java method called from here threw; it propagates as it is).
#[derive(Debug)]
pub(crate) enum Failure {
    Kompakt { kind: ErrorKind, message: String },
    JavaPending,
}

impl Failure {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Failure::Kompakt {
            kind,
            message: message.into(),
        }
    }

    pub fn usage(message: impl Into<String>) -> Self {
        Failure::new(ErrorKind::Usage, message)
    }

    pub fn option(message: impl Into<String>) -> Self {
        Failure::new(ErrorKind::Option, message)
    }

    pub fn limit(message: impl Into<String>) -> Self {
        Failure::new(ErrorKind::Limit, message)
    }

    /// The same failure, its message starting with the file it concerns.
    pub fn named(self, name: &str) -> Self {
        match self {
            Failure::Kompakt { kind, message } if !message.starts_with(name) => Failure::Kompakt {
                kind,
                message: format!("{name}: {message}"),
            },
            other => other,
        }
    }
}

impl From<kompakt::Error> for Failure {
    fn from(e: kompakt::Error) -> Self {
        Failure::new(e.kind(), e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        kompakt::Error::from(e).into()
    }
}

impl From<jni::errors::Error> for Failure {
    fn from(e: jni::errors::Error) -> Self {
        match e {
            jni::errors::Error::JavaException => Failure::JavaPending,
            other => Failure::new(ErrorKind::Internal, format!("JNI: {other}")),
        }
    }
}

/// The exception class of each kind (java/src/main/java/dev/kompakt/).
pub(crate) fn exception_class(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::Io => "dev/kompakt/KompaktIOException",
        ErrorKind::Corrupt => "dev/kompakt/CorruptDataException",
        ErrorKind::Option => "dev/kompakt/InvalidOptionException",
        ErrorKind::Usage => "dev/kompakt/KompaktUsageException",
        ErrorKind::Dictionary => "dev/kompakt/MissingDictionaryException",
        ErrorKind::Limit => "dev/kompakt/LimitExceededException",
        ErrorKind::Store => "dev/kompakt/KompaktStoreException",
        ErrorKind::Refused => "dev/kompakt/RefusedDataException",
        // Internal, and a kind a later kompakt adds before this table names it.
        _ => "dev/kompakt/KompaktInternalException",
    }
}

fn throw(env: &mut JNIEnv<'_>, failure: Failure) {
    let Failure::Kompakt { kind, message } = failure else {
        return;
    };
    // An exception already pending wins: it is what the Java code will see first.
    if env.exception_check().unwrap_or(true) {
        return;
    }
    if env.throw_new(exception_class(kind), &message).is_err() && !env.exception_check().unwrap_or(true) {
        // The class is missing (a jar without it): say so with a class the JVM always has.
        let _ = env.throw_new("java/lang/IllegalStateException", format!("kompakt: {message}"));
    }
}

/// Runs an entry point's body: its value, or `fallback` with an exception thrown for its error
/// or panic.
pub(crate) fn run<'l, T>(
    env: &mut JNIEnv<'l>,
    fallback: T,
    body: impl FnOnce(&mut JNIEnv<'l>) -> Result<T, Failure>,
) -> T {
    match catch_unwind(AssertUnwindSafe(|| body(env))) {
        Ok(Ok(value)) => value,
        Ok(Err(failure)) => {
            throw(env, failure);
            fallback
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            throw(
                env,
                Failure::new(ErrorKind::Internal, format!("kompakt failed: {what}")),
            );
            fallback
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_its_own_class() {
        let classes: std::collections::HashSet<_> = ErrorKind::ALL.iter().map(|&k| exception_class(k)).collect();
        assert_eq!(classes.len(), ErrorKind::ALL.len());
        assert_eq!(exception_class(ErrorKind::Option), "dev/kompakt/InvalidOptionException");
    }

    #[test]
    fn a_name_is_added_once() {
        let f = Failure::usage("closed").named("a.kpk").named("a.kpk");
        assert!(matches!(f, Failure::Kompakt { message, .. } if message == "a.kpk: closed"));
    }
}
