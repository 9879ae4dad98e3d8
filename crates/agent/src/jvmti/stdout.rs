//! Filtering what the JVM prints on standard output while the agent does one thing: the
//! output goes to an unnamed temporary file, and when the thing is done every line but those
//! the filter drops is written to standard output, in order. Used around the retransformation
//! that takes the intrinsic mark off allocating methods, for which HotSpot prints a notice
//! per method (`Compiler intrinsic is defined for method [...]`) on the program's output.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::fd::AsRawFd;

/// Runs `f` with file descriptor 1 sent to a temporary file, then writes to descriptor 1
/// the lines of that file that `keep` accepts. Without a temporary file, `f` runs with
/// standard output as it is.
pub fn filtered<T>(f: impl FnOnce() -> T, keep: impl Fn(&[u8]) -> bool) -> T {
    let Ok(mut file) = tempfile::tempfile() else {
        return f();
    };
    // SAFETY: dup of descriptor 1, which the process owns; a negative result is handled.
    let saved = unsafe { libc::dup(1) };
    if saved < 0 {
        return f();
    }
    // SAFETY: both descriptors are open (the file's is owned by `file`, alive here).
    if unsafe { libc::dup2(file.as_raw_fd(), 1) } < 0 {
        // SAFETY: `saved` is the descriptor dup returned above, closed once.
        unsafe { libc::close(saved) };
        return f();
    }
    let result = f();
    // SAFETY: `saved` is open; dup2 puts standard output back on descriptor 1.
    unsafe { libc::dup2(saved, 1) };
    // SAFETY: `saved` is the descriptor dup returned above, closed once.
    unsafe { libc::close(saved) };
    let mut captured = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_ok() && file.read_to_end(&mut captured).is_ok() {
        let mut out = Vec::with_capacity(captured.len());
        for line in captured.split_inclusive(|&b| b == b'\n') {
            if keep(line) {
                out.extend_from_slice(line);
            }
        }
        // Standard output is descriptor 1 again: written directly, unbuffered, like the
        // JVM's own output.
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(&out);
        let _ = stdout.flush();
    }
    result
}
