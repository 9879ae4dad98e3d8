//! Keeping HotSpot's notices about the allocating intrinsics off the program's output. The
//! fast mode of `heap=sites` takes the intrinsic mark off a few JDK methods as it rewrites their
//! classes (crates/classfile/src/alloc.rs, `ALLOCATING_INTRINSICS`), and HotSpot, parsing such
//! a class, prints for each of those methods `Compiler intrinsic is defined for method [...],
//! but the method is not annotated with @IntrinsicCandidate. Method will not be inlined.` on
//! its output (standard output; standard error with `-XX:+DisplayVMOutputToStderr`).
//!
//! [`quiet_intrinsic_notices`] runs the agent's class loading and retransformation with
//! descriptors 1 and 2 sent to unnamed temporary files, then writes back every line but those
//! notices, in order; the rewriter strips the mark only while it runs ([`quiet`]).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// How HotSpot's notice about a method that lost its intrinsic mark begins.
const NOTICE: &[u8] = b"Compiler intrinsic is defined for method [";

/// Set while [`quiet_intrinsic_notices`] runs.
static QUIET: AtomicBool = AtomicBool::new(false);

/// Set once the fast mode of `heap=sites` runs: only then are the notices filtered (and the
/// marks taken off), so that no other session has its output held back.
static WANTED: AtomicBool = AtomicBool::new(false);

/// Says that the allocation counts run: from now on the agent's class loading and
/// retransformation may take intrinsic marks off, with HotSpot's notices filtered.
pub fn filter_intrinsic_notices() {
    WANTED.store(true, Ordering::Release);
}

/// Whether HotSpot's intrinsic notices are being filtered out now (so the rewriter may take
/// the intrinsic marks off).
pub fn quiet() -> bool {
    QUIET.load(Ordering::Acquire)
}

/// Runs `f` with HotSpot's intrinsic notices filtered out of standard output and standard
/// error, once [`filter_intrinsic_notices`] was called (else just runs `f`). Nested or
/// concurrent calls just run `f` (the first one's files take every line written meanwhile,
/// whichever thread wrote it).
pub fn quiet_intrinsic_notices<T>(f: impl FnOnce() -> T) -> T {
    if !WANTED.load(Ordering::Acquire) || QUIET.swap(true, Ordering::AcqRel) {
        return f();
    }
    let result = filtered(&[1, 2], f, |line| !line.starts_with(NOTICE));
    QUIET.store(false, Ordering::Release);
    result
}

/// A descriptor sent to a temporary file, and the saved original.
struct Redirect {
    fd: i32,
    saved: i32,
    file: File,
}

/// Runs `f` with each descriptor of `fds` sent to a temporary file, then writes back to each
/// the lines of its file that `keep` accepts. A descriptor that cannot be redirected is left
/// as it is.
fn filtered<T>(fds: &[i32], f: impl FnOnce() -> T, keep: impl Fn(&[u8]) -> bool) -> T {
    let mut redirects = Vec::new();
    for &fd in fds {
        let Ok(file) = tempfile::tempfile() else {
            continue;
        };
        // SAFETY: dup of a descriptor number; a negative result (not open) is handled.
        let saved = unsafe { libc::dup(fd) };
        if saved < 0 {
            continue;
        }
        // SAFETY: both descriptors are open (the file's is owned by `file`, alive here).
        if unsafe { libc::dup2(file.as_raw_fd(), fd) } < 0 {
            // SAFETY: `saved` is the descriptor dup returned above, closed once.
            unsafe { libc::close(saved) };
            continue;
        }
        redirects.push(Redirect { fd, saved, file });
    }
    let result = f();
    for mut r in redirects {
        // SAFETY: `saved` is open; dup2 puts the original back on `fd`.
        unsafe { libc::dup2(r.saved, r.fd) };
        // SAFETY: `saved` is the descriptor dup returned above, closed once.
        unsafe { libc::close(r.saved) };
        let mut captured = Vec::new();
        if r.file.seek(SeekFrom::Start(0)).is_err() || r.file.read_to_end(&mut captured).is_err() {
            continue;
        }
        let mut out = Vec::with_capacity(captured.len());
        for line in captured.split_inclusive(|&b| b == b'\n') {
            if keep(line) {
                out.extend_from_slice(line);
            }
        }
        write_all(r.fd, &out);
    }
    result
}

/// Writes `bytes` to descriptor `fd`, unbuffered like the JVM's own output.
fn write_all(fd: i32, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        // SAFETY: `bytes` is a live slice of `bytes.len()` readable bytes.
        let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if n <= 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        bytes = &bytes[n as usize..];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notices_are_dropped_and_other_lines_kept_in_order() {
        // A file of our own stands for standard output.
        let mut target = tempfile::tempfile().unwrap();
        let fd = target.as_raw_fd();
        let lines: &[u8] = b"first\nCompiler intrinsic is defined for method [java.lang.Object.clone()Ljava/lang/Object;], but ...\nsecond\nno newline";
        let value = filtered(
            &[fd],
            || {
                write_all(fd, lines);
                7
            },
            |line| !line.starts_with(NOTICE),
        );
        assert_eq!(value, 7);
        let mut written = Vec::new();
        target.seek(SeekFrom::Start(0)).unwrap();
        target.read_to_end(&mut written).unwrap();
        assert_eq!(written, b"first\nsecond\nno newline");
        // The descriptor is the file again: a write lands after what was written back.
        write_all(fd, b"!");
        target.seek(SeekFrom::Start(0)).unwrap();
        written.clear();
        target.read_to_end(&mut written).unwrap();
        assert_eq!(written, b"first\nsecond\nno newline!");
    }

    #[test]
    fn quiet_is_set_only_while_filtering() {
        assert!(!quiet());
        filter_intrinsic_notices();
        // Nested: the inner call just runs.
        let n = quiet_intrinsic_notices(|| quiet_intrinsic_notices(|| u8::from(quiet())));
        assert_eq!(n, 1);
        assert!(!quiet());
    }
}
