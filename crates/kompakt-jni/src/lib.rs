//! kompakt for the JVM: the native half of the `dev.kompakt` Java package (`java/`).
//!
//! Every `Java_dev_kompakt_Native_*` function here is one `native` method of
//! `java/src/main/java/dev/kompakt/Native.java`, whose comments are the contract. The rules
//! (options, paths and URLs, file kinds) are kompakt-api's, as for every front end; this crate
//! only converts JVM values and maps each [`kompakt::ErrorKind`] to one exception class, in
//! [`error`].
//!
//! Tables cross as Arrow data through the C data interface ([`table`]).
//!
//! Objects Java holds (options, dictionaries, writers, readers, files, tables) are boxed Rust values
//! passed as `long` handles ([`handle`]); the Java classes free each exactly once and use it
//! from one thread at a time. No call panics across the boundary: a panic becomes a
//! `KompaktInternalException`.

mod bytes;
mod error;
mod file;
mod handle;
mod oneshot;
mod options;
mod reader;
mod table;
mod writer;

use jni::objects::JClass;
use jni::sys::jstring;
use jni::JNIEnv;

/// `Native.version()`: this library's version.
#[no_mangle]
pub extern "system" fn Java_dev_kompakt_Native_version<'l>(mut env: JNIEnv<'l>, _: JClass<'l>) -> jstring {
    error::run(&mut env, std::ptr::null_mut(), |env| {
        Ok(env.new_string(env!("CARGO_PKG_VERSION"))?.into_raw())
    })
}
