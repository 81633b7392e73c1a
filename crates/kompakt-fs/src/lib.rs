//! kompakt's files on disk: the I/O policy kept out of the format crate.
//!
//! - [`AtomicFile`]: output that appears at its path only when complete (temporary file
//!   beside the target, rename), so a crash or an error never leaves half a file, flushed to
//!   the disk as its [`Durability`] (the front ends' `sync` setting) says;
//! - [`WritebackFile`]: files written back to disk while they grow (Linux), so the final
//!   fsync waits for the last pages only; a paced one reports how far the disk got
//!   ([`WritebackProgress`]) and the process remembers each device's speed;
//! - [`remove_file_beneath`]: removal that never follows a symbolic link below a folder;
//! - [`DiskPace`] and [`writer`]: a kompakt writer that stores blocks raw while the disk
//!   would otherwise wait for the compressor.
#![deny(missing_docs)]
// One audited exception: `writeback::sync_file_range`, a system call without a safe wrapper
// crate; everything else is safe code.
#![deny(unsafe_code)]

mod atomic;
mod beneath;
mod durability;
mod pace;
mod writeback;

pub use atomic::{abandoned, is_special_file, remove_stale_temps, sync_parent_dir, AtomicFile, STALE_TEMP_AGE};
pub use beneath::{is_real_folder, remove_file_beneath, Removed};
pub use durability::{Durability, SYNC_ENV, SYNC_VALUES};
pub use pace::{writer, writer_with_dictionary, DiskPace, PacedOutput, ADAPT_AHEAD, ADAPT_MIN_BACKLOG};
pub use writeback::{
    WritebackFile, WritebackProgress, PACED_FIRST_STEP, PACED_WRITEBACK_EVERY, START_WRITEBACK_EVERY, WRITEBACK_EVERY,
};

/// Opens `path` for reading. A directory is refused here, with the error `open` gives
/// elsewhere (`EISDIR`): on Unix `File::open` accepts a directory, and the first read then
/// fails far from the code that knows the path.
pub fn open_for_reading(path: &std::path::Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::File::open(path)?;
    if file.metadata()?.is_dir() {
        return Err(std::io::Error::from_raw_os_error(libc::EISDIR));
    }
    Ok(file)
}
