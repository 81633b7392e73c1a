//! Removing files below a folder without following a symbolic link on the way.
//!
//! A store's `gc` removes files by names it builds (`objects/ab/HASH.kpk`, `tmp/NAME`). Were
//! `objects/ab` or `tmp` a symbolic link, a plain `remove_file` would delete a file wherever
//! the link points. Here every folder on the way is opened relative to the one before it with
//! `O_NOFOLLOW`, and the file is unlinked relative to the last: a link anywhere below `root`,
//! even one put there while we work, is an error, never followed.

use rustix::fs::{openat, unlinkat, AtFlags, Mode, OFlags, CWD};
use rustix::io::Errno;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Component, Path};

/// What [`remove_file_beneath`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Removed {
    /// The file was there and is gone.
    Removed,
    /// Nothing by that name (or a folder on the way is missing).
    NotFound,
}

/// Removes the file `relative` (plain names, no `..`) below the folder `root`, following no
/// symbolic link below `root` (`root` itself may be one). A link on the way is an error of kind
/// `InvalidInput` that names it; so is a `relative` that is not a plain path. A final component
/// that is itself a link is removed as the link, never its target.
pub fn remove_file_beneath(root: &Path, relative: &Path) -> io::Result<Removed> {
    let mut names = Vec::new();
    for part in relative.components() {
        match part {
            Component::Normal(name) => names.push(name),
            _ => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("{}: not a plain path below {}", relative.display(), root.display()),
                ))
            }
        }
    }
    let Some((file, folders)) = names.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file name to remove"));
    };
    let as_io = |e: Errno, what: &Path| io::Error::new(io::Error::from(e).kind(), format!("{}: {e}", what.display()));
    let folder_flags = OFlags::DIRECTORY | OFlags::RDONLY | OFlags::CLOEXEC;
    let mut dir: OwnedFd = match openat(CWD, root, folder_flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(Removed::NotFound),
        Err(e) => return Err(as_io(e, root)),
    };
    let mut walked = root.to_path_buf();
    for name in folders {
        walked.push(name);
        dir = match openat(&dir, *name, folder_flags | OFlags::NOFOLLOW, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(Removed::NotFound),
            // ELOOP: the name is a link; ENOTDIR: not a folder (a link to a file says this too).
            Err(Errno::LOOP | Errno::NOTDIR) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "{} is a symbolic link or not a folder: kompakt never removes files through one",
                        walked.display()
                    ),
                ))
            }
            Err(e) => return Err(as_io(e, &walked)),
        };
    }
    walked.push(file);
    match unlinkat(&dir, *file, AtFlags::empty()) {
        Ok(()) => Ok(Removed::Removed),
        Err(Errno::NOENT) => Ok(Removed::NotFound),
        Err(e) => Err(as_io(e, &walked)),
    }
}

/// Whether `path` is a folder itself, not a symbolic link to one (false when missing).
pub fn is_real_folder(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_dir())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    #[test]
    fn removes_files_below_real_folders() {
        let root = tempfile::tempdir().unwrap();
        fs::create_dir_all(root.path().join("objects/ab")).unwrap();
        fs::write(root.path().join("objects/ab/x.kpk"), b"x").unwrap();
        let rel = Path::new("objects/ab/x.kpk");
        assert_eq!(remove_file_beneath(root.path(), rel).unwrap(), Removed::Removed);
        assert!(!root.path().join(rel).exists());
        assert_eq!(remove_file_beneath(root.path(), rel).unwrap(), Removed::NotFound);
        assert_eq!(
            remove_file_beneath(root.path(), Path::new("nope/x")).unwrap(),
            Removed::NotFound
        );
    }

    #[test]
    fn never_follows_a_link_on_the_way() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::write(elsewhere.path().join("x.kpk"), b"precious").unwrap();
        fs::create_dir(root.path().join("objects")).unwrap();
        symlink(elsewhere.path(), root.path().join("objects/ab")).unwrap();
        symlink(elsewhere.path(), root.path().join("tmp")).unwrap();
        for rel in ["objects/ab/x.kpk", "tmp/x.kpk"] {
            let e = remove_file_beneath(root.path(), Path::new(rel)).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{e}");
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        assert_eq!(fs::read(elsewhere.path().join("x.kpk")).unwrap(), b"precious");
        assert!(!is_real_folder(&root.path().join("tmp")));
        assert!(is_real_folder(&root.path().join("objects")));
    }

    #[test]
    fn a_final_link_is_removed_as_a_link() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        fs::write(elsewhere.path().join("x"), b"precious").unwrap();
        symlink(elsewhere.path().join("x"), root.path().join("x.kpk")).unwrap();
        assert_eq!(
            remove_file_beneath(root.path(), Path::new("x.kpk")).unwrap(),
            Removed::Removed
        );
        assert_eq!(fs::read(elsewhere.path().join("x")).unwrap(), b"precious");
    }

    #[test]
    fn refuses_paths_that_leave_the_folder() {
        let root = tempfile::tempdir().unwrap();
        for rel in ["../x", "/etc/passwd", "a/../b", ""] {
            assert!(remove_file_beneath(root.path(), Path::new(rel)).is_err(), "{rel}");
        }
    }
}
