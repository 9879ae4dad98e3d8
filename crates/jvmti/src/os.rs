//! Owns the operating system's primitives the agent needs beside JVMTI: the monotonic clock
//! that times samples and events, and the calling thread's kernel id.

/// `CLOCK_MONOTONIC` in nanoseconds: the time base of samples (async-signal-safe: the vDSO
/// reads it without a system call or a lock). Inlined: the SIGPROF handler calls it per sample.
#[inline]
pub fn monotonic_nanos() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}

/// The calling thread's kernel id (inlined: the SIGPROF handler calls it per sample).
#[inline]
pub fn current_tid() -> i32 {
    // SAFETY: gettid has no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}
