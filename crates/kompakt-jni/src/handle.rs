//! Rust objects held by Java as `long` handles.
//!
//! A handle is a `Box` turned into a pointer. The Java class that holds it frees it exactly
//! once (its `close`, or a `Cleaner` action for options and dictionaries), never while a call
//! uses it. Writers, readers and files are used from one thread at a time (their Java methods
//! synchronize) and reached with [`get`]; options and dictionaries are shared by many threads
//! and reached read-only with [`shared`]. That is the contract of `Native.java`, and what makes
//! the dereferences below sound.

use crate::error::Failure;
use jni::sys::jlong;

/// Moves `value` to the heap and returns its handle (never 0).
pub(crate) fn into_handle<T>(value: T) -> jlong {
    Box::into_raw(Box::new(value)) as jlong
}

/// The object behind a live handle; 0 is a closed or never-opened object.
pub(crate) fn get<'a, T>(handle: jlong, what: &str) -> Result<&'a mut T, Failure> {
    if handle == 0 {
        return Err(Failure::usage(format!("the {what} is closed")));
    }
    // SAFETY: a non-zero handle came from `into_handle::<T>` for this T (each Native method
    // takes handles of one type) and has not been freed; Java uses it from one thread at a
    // time, so this is the only reference for the duration of the call.
    Ok(unsafe { &mut *(handle as *mut T) })
}

/// The object behind a live handle that many threads may use at once, read-only.
pub(crate) fn shared<'a, T: Sync>(handle: jlong, what: &str) -> Result<&'a T, Failure> {
    if handle == 0 {
        return Err(Failure::usage(format!("the {what} is closed")));
    }
    // SAFETY: as in `get`, except that other threads may hold shared references too: nothing
    // mutates a `T` reached through `shared` (T is Sync), and Java frees it only when no call
    // uses it.
    Ok(unsafe { &*(handle as *const T) })
}

/// Frees a handle (0: nothing).
pub(crate) fn free<T>(handle: jlong) {
    if handle != 0 {
        // SAFETY: as in `get`; Java frees each handle once and never uses it again.
        drop(unsafe { Box::from_raw(handle as *mut T) });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_round_trips_and_zero_is_closed() {
        let h = into_handle(vec![1u8, 2, 3]);
        assert_ne!(h, 0);
        get::<Vec<u8>>(h, "buffer").unwrap().push(4);
        assert_eq!(get::<Vec<u8>>(h, "buffer").unwrap().len(), 4);
        free::<Vec<u8>>(h);
        assert!(get::<Vec<u8>>(0, "writer").is_err());
        free::<Vec<u8>>(0);
    }
}
