//! Owns how hprof creates the files it writes (profiles, heap dumps, flame graphs, reports):
//! private to their owner (mode 0600, whatever the umask, as `jcmd GC.heap_dump` does) and never
//! written through a symbolic link.
//!
//! [`create`] opens the file for writing:
//! - no file at the path: a new one, `O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600;
//! - a regular file: a new private file is made beside it and renamed over it, so the old
//!   file's inode (and any hard link to it) is never written, and its permissions are not kept;
//! - a symbolic link (dangling or not): refused with [`ErrorKind::SymlinkRefused`], whatever it
//!   points to;
//! - a FIFO, a character device or a socket (`/dev/null`, a named pipe): opened for writing as
//!   it is, without following a link, since there is nothing to replace;
//! - a directory or anything else: refused.
//!
//! [`exists`] tells whether a path names anything, links included (`Path::exists` follows
//! links, so a dangling link would look free).

#![forbid(unsafe_code)]
#![deny(missing_docs)]

use std::fs::{self, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// The mode of every file hprof creates.
pub const MODE: u32 = 0o600;

/// Why [`create`] refused a path (the `io::Error`'s inner error, see [`refusal`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// The path is a symbolic link.
    SymlinkRefused,
    /// The path is a directory.
    IsDirectory,
}

#[derive(Debug)]
struct Refused {
    kind: ErrorKind,
    path: PathBuf,
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.kind {
            ErrorKind::SymlinkRefused => write!(
                f,
                "{} is a symbolic link; hprof never writes through one (remove it or choose another name)",
                self.path.display()
            ),
            ErrorKind::IsDirectory => write!(f, "{} is a directory", self.path.display()),
        }
    }
}

impl std::error::Error for Refused {}

fn refused(kind: ErrorKind, path: &Path) -> io::Error {
    io::Error::other(Refused {
        kind,
        path: path.to_path_buf(),
    })
}

/// Why `error` was returned by [`create`], when it refused the path itself.
pub fn refusal(error: &io::Error) -> Option<ErrorKind> {
    error
        .get_ref()
        .and_then(|e| e.downcast_ref::<Refused>())
        .map(|r| r.kind)
}

/// Whether anything is at `path`, a symbolic link (even a dangling one) included.
pub fn exists(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok()
}

/// Opens `path` for writing as the module doc says: a new private file (mode 0600), never
/// through a symbolic link.
pub fn create(path: &Path) -> io::Result<File> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => match create_new(path) {
            // Something appeared at the path since the look: decide again, once.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => create_existing(path),
            other => other,
        },
        Err(e) => Err(e),
        Ok(_) => create_existing(path),
    }
}

fn create_existing(path: &Path) -> io::Result<File> {
    let meta = fs::symlink_metadata(path)?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        return Err(refused(ErrorKind::SymlinkRefused, path));
    }
    if kind.is_dir() {
        return Err(refused(ErrorKind::IsDirectory, path));
    }
    if kind.is_fifo() || kind.is_char_device() || kind.is_socket() {
        return OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path);
    }
    replace(path)
}

fn create_new(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => refused(ErrorKind::SymlinkRefused, path),
            _ => e,
        })?;
    // The umask can only take bits away from 0600; set it exactly anyway.
    file.set_permissions(Permissions::from_mode(MODE))?;
    Ok(file)
}

/// A new private file beside `path`, renamed over it.
fn replace(path: &Path) -> io::Result<File> {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for _ in 0..100 {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
        match create_new(&temp) {
            Ok(file) => {
                // rename() replaces the directory entry itself, never what a link points to.
                if let Err(e) = fs::rename(&temp, path) {
                    let _ = fs::remove_file(&temp);
                    return Err(e);
                }
                return Ok(file);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        format!("can't make a temporary file beside {}", path.display()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};
    use std::os::unix::fs::symlink;

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_new_file_is_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.hprof");
        create(&path).unwrap().write_all(b"x").unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read(&path).unwrap(), b"x");
    }

    #[test]
    fn an_existing_file_is_replaced_not_rewritten() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.txt");
        fs::write(&path, b"old contents that are longer").unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        let hard = dir.path().join("hard");
        fs::hard_link(&path, &hard).unwrap();
        create(&path).unwrap().write_all(b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(mode(&path), 0o600);
        // The old inode, reachable through the hard link, is untouched.
        assert_eq!(fs::read(&hard).unwrap(), b"old contents that are longer");
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_symlink_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        fs::write(&target, b"keep me").unwrap();
        let link = dir.path().join("java.hprof.txt");
        symlink(&target, &link).unwrap();
        let err = create(&link).unwrap_err();
        assert_eq!(refusal(&err), Some(ErrorKind::SymlinkRefused));
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(fs::read(&target).unwrap(), b"keep me");
    }

    #[test]
    fn a_dangling_symlink_is_refused_and_nothing_created() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("created-through-the-link");
        let link = dir.path().join("java.hprof");
        symlink(&target, &link).unwrap();
        assert!(exists(&link));
        let err = create(&link).unwrap_err();
        assert_eq!(refusal(&err), Some(ErrorKind::SymlinkRefused));
        assert!(!target.exists());
    }

    #[test]
    fn a_directory_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let err = create(dir.path()).unwrap_err();
        assert_eq!(refusal(&err), Some(ErrorKind::IsDirectory));
    }

    #[test]
    fn a_device_is_written_as_it_is() {
        let mut f = create(Path::new("/dev/null")).unwrap();
        f.write_all(b"discarded").unwrap();
        let mut buf = Vec::new();
        File::open("/dev/null")
            .unwrap()
            .read_to_end(&mut buf)
            .unwrap();
        assert!(buf.is_empty());
    }

    #[test]
    fn the_umask_does_not_widen_the_mode() {
        // 0600 is kept even where the creating process's umask is 000: the mode is set on the
        // open file after creation.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let file = create(&path).unwrap();
        file.set_permissions(Permissions::from_mode(0o666)).unwrap();
        drop(file);
        create(&path).unwrap();
        assert_eq!(mode(&path), 0o600);
    }
}
