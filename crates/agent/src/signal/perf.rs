//! Perf events as the sampler's CPU clock: one `PERF_COUNT_SW_TASK_CLOCK` event per thread,
//! overflowing after each `interval` of the CPU time that thread used, whose overflow the
//! kernel turns into SIGPROF for that thread (`O_ASYNC`, `F_SETSIG`, `F_SETOWN_EX` with
//! `F_OWNER_TID`).
//!
//! The kernel measures a task clock with a high-resolution timer, not at its tick, so each
//! signal is one interval, even at `interval=1` on a kernel with a 4 ms tick.
//!
//! Each event is armed for one overflow (`PERF_EVENT_IOC_REFRESH` 1): the overflow disables it
//! and raises the signal, and the handler arms it again ([`rearm`], one `ioctl`, a system
//! call, async-signal-safe). On Linux 6.16 and 6.17, whose `PERF_EVENT_IOC_REFRESH` can hang
//! the whole system, the event runs enabled instead and the handler disables it while it
//! walks ([`quiet`]) and enables it after. The handler knows the signal is the sampler's from
//! its `si_code` (`POLL_IN`, or `POLL_HUP` when the refresh count ran out) and its `si_fd`,
//! marked in `OWN`, a table of every possible descriptor allocated before the first event
//! is opened.
//!
//! Where the kernel's code is sampled too, each event also records the kernel's call chain
//! (`PERF_SAMPLE_CALLCHAIN`, user frames left out) into a ring of its own the agent maps (one
//! metadata page and one data page), and the handler copies the kernel frames of the last
//! record into the sample ([`kernel_frames`]): plain loads from memory mapped before the
//! event was armed, async-signal-safe.
//!
//! Each sample weighs the intervals of CPU time the event counted since the thread's last
//! sample ([`weight`], the count read in the handler): one, unless overflows were lost (a
//! signal still pending when the next came) or skipped (where the kernel's code is left
//! out, the kernel drops overflows that land in it, and the time counts for the thread's
//! next sample).

use std::ffi::c_int;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use perf_event_open_sys as sys;

/// Descriptors up to this number can be the sampler's (a thread whose event gets a higher one,
/// or that would exceed a quarter of the descriptor limit, falls back to a POSIX timer).
pub const MAX_FD: usize = 1 << 16;

/// Which descriptors are the sampler's perf events (written before an event is armed and
/// cleared before it is closed; read by the signal handler).
static OWN: [AtomicBool; MAX_FD] = [const { AtomicBool::new(false) }; MAX_FD];

/// The sampler's events open now.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// Per descriptor: the count (CPU time, ns) its event had when the thread's last sample was
/// weighed, plus the part of an interval the weights gave ahead. Written by the owner thread's
/// signal handler only (and reset before the event is armed).
static WEIGHED: [AtomicU64; MAX_FD] = [const { AtomicU64::new(0) }; MAX_FD];

/// Per descriptor: the address of its event's mapped ring (0: none).
static RINGS: [AtomicUsize; MAX_FD] = [const { AtomicUsize::new(0) }; MAX_FD];

/// Signal handlers reading a ring now (a ring is unmapped only when none is).
static RING_READERS: AtomicUsize = AtomicUsize::new(0);

/// Whether events record the kernel's call chain (set before they are opened).
static KERNEL_FRAMES: AtomicBool = AtomicBool::new(true);

/// Pages of an event's ring: one of metadata, one of records (a record of the kernel's
/// deepest chain, 127 frames, takes about 1 KB).
const RING_PAGES: usize = 2;

/// The sample period of the events, ns (one `interval` for every thread).
static PERIOD: AtomicU64 = AtomicU64::new(0);

/// Whether this kernel's `PERF_EVENT_IOC_REFRESH` must be avoided (Linux 6.16 and 6.17 can hang
/// in it): events then run enabled, and the handler disables them while it walks.
fn refresh_hangs() -> bool {
    static HANGS: OnceLock<bool> = OnceLock::new();
    *HANGS.get_or_init(|| {
        std::fs::read_to_string("/proc/sys/kernel/osrelease")
            .is_ok_and(|release| refresh_hangs_on(release.trim()))
    })
}

/// Whether kernel release `release` (`uname -r`) is one whose `PERF_EVENT_IOC_REFRESH` can
/// hang the system.
fn refresh_hangs_on(release: &str) -> bool {
    release.starts_with("6.16.") || release.starts_with("6.17.")
}

/// How many events the sampler keeps open at most: a quarter of the process's descriptor
/// limit (the application's own files and sockets keep the rest), at most [`MAX_FD`].
fn budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let mut limit = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes `limit`.
        let soft = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 {
            limit.rlim_cur as usize
        } else {
            1024
        };
        (soft / 4).min(MAX_FD)
    })
}

/// Whether events must leave the kernel out (`exclude_kernel`): `perf_event_paranoid` ≥ 2
/// without `CAP_PERFMON` refuses events that count kernel time. 0: not decided, 1: include
/// the kernel, 2: exclude it.
static EXCLUDE_KERNEL: AtomicU8 = AtomicU8::new(0);

/// `fcntl` commands and values the libc crate does not define (Linux, every architecture).
const F_SETSIG: c_int = 10;
const F_SETOWN_EX: c_int = 15;
const F_OWNER_TID: c_int = 0;
/// `si_code` of a signal a descriptor raised with `F_SETSIG`: data (an overflow) ...
pub const POLL_IN: c_int = 1;
/// ... or the event's refresh count ran out (the overflow disabled it).
pub const POLL_HUP: c_int = 6;

#[repr(C)]
struct OwnerEx {
    kind: c_int,
    pid: libc::pid_t,
}

/// A perf event counting one thread's CPU time that sends it SIGPROF after each interval.
#[derive(Debug)]
pub struct PerfTimer(c_int);

/// `/proc/sys/kernel/perf_event_paranoid`, if readable.
pub fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The sample period of an event for `interval`, ns (at least 10 µs).
fn period(interval: Duration) -> u64 {
    (interval.as_nanos() as u64).max(10_000)
}

/// Whether the events opened from now on record the kernel's call chain (where they may
/// sample the kernel).
pub fn set_kernel_frames(on: bool) {
    KERNEL_FRAMES.store(on, Ordering::Relaxed);
}

/// Whether the events record the kernel's call chain (they may sample the kernel, and
/// [`set_kernel_frames`] left it on).
pub fn records_kernel_frames() -> bool {
    KERNEL_FRAMES.load(Ordering::Relaxed) && !excludes_kernel()
}

/// The system's page size.
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(size).unwrap_or(4096).max(4096)
}

fn open(tid: i32, interval: Duration, exclude_kernel: bool) -> std::io::Result<c_int> {
    let mut attr = sys::bindings::perf_event_attr {
        type_: sys::bindings::PERF_TYPE_SOFTWARE,
        size: std::mem::size_of::<sys::bindings::perf_event_attr>() as u32,
        config: u64::from(sys::bindings::PERF_COUNT_SW_TASK_CLOCK),
        ..Default::default()
    };
    attr.__bindgen_anon_1.sample_period = period(interval);
    attr.__bindgen_anon_2.wakeup_events = 1;
    attr.set_disabled(1);
    attr.set_exclude_kernel(u64::from(exclude_kernel));
    attr.set_exclude_hv(1);
    if !exclude_kernel && KERNEL_FRAMES.load(Ordering::Relaxed) {
        attr.sample_type = u64::from(sys::bindings::PERF_SAMPLE_CALLCHAIN);
        // The user part of the stack is walked by the handler itself.
        attr.set_exclude_callchain_user(1);
    }
    // SAFETY: `attr` is a complete, zero-padded perf_event_attr; the event writes into this
    // process's memory only through a ring the agent maps for it.
    let fd = unsafe {
        sys::perf_event_open(
            &mut attr,
            tid,
            -1,
            -1,
            libc::c_ulong::from(sys::bindings::PERF_FLAG_FD_CLOEXEC),
        )
    };
    if fd < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(fd)
    }
}

impl PerfTimer {
    /// Opens and arms the event of thread `tid` (an id of this process's pid namespace).
    pub fn start(tid: i32, interval: Duration) -> std::io::Result<PerfTimer> {
        if OPEN.load(Ordering::Relaxed) >= budget() {
            return Err(std::io::Error::other(format!(
                "{} perf events open, a quarter of the descriptor limit",
                budget()
            )));
        }
        let fd = match EXCLUDE_KERNEL.load(Ordering::Relaxed) {
            1 => open(tid, interval, false)?,
            2 => open(tid, interval, true)?,
            _ => match open(tid, interval, false) {
                Ok(fd) => {
                    EXCLUDE_KERNEL.store(1, Ordering::Relaxed);
                    fd
                }
                Err(e) if matches!(e.raw_os_error(), Some(libc::EACCES | libc::EPERM)) => {
                    let fd = open(tid, interval, true)?;
                    EXCLUDE_KERNEL.store(2, Ordering::Relaxed);
                    fd
                }
                Err(e) => return Err(e),
            },
        };
        OPEN.fetch_add(1, Ordering::Relaxed);
        let timer = PerfTimer(fd);
        let Some(own) = OWN.get(fd as usize) else {
            return Err(std::io::Error::other(format!(
                "descriptor {fd} is above the {MAX_FD} the signal handler knows"
            )));
        };
        let owner = OwnerEx {
            kind: F_OWNER_TID,
            pid: tid,
        };
        // SAFETY: fcntl on the descriptor just opened; F_SETOWN_EX reads `owner`.
        let setup = unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFL);
            flags >= 0
                && libc::fcntl(fd, libc::F_SETFL, flags | libc::O_ASYNC) == 0
                && libc::fcntl(fd, F_SETSIG, super::SIGNAL) == 0
                && libc::fcntl(fd, F_SETOWN_EX, &owner as *const OwnerEx) == 0
        };
        if !setup {
            return Err(std::io::Error::last_os_error());
        }
        if records_kernel_frames() {
            map_ring(fd);
        }
        PERIOD.store(period(interval), Ordering::Relaxed);
        if let Some(weighed) = WEIGHED.get(fd as usize) {
            weighed.store(0, Ordering::Relaxed);
        }
        own.store(true, Ordering::Release);
        // SAFETY: arms the event for one overflow (the handler arms it again), or for good
        // where REFRESH hangs.
        let armed = unsafe {
            if refresh_hangs() {
                sys::ioctls::ENABLE(fd, 0)
            } else {
                sys::ioctls::REFRESH(fd, 1)
            }
        };
        if armed != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(timer)
    }

    /// The event's descriptor.
    pub fn fd(&self) -> c_int {
        self.0
    }
}

/// Maps the ring event `fd` records its call chains into (none if the kernel refuses: the
/// locked-memory limit of a user without `CAP_IPC_LOCK`; its samples then have no kernel
/// frames).
fn map_ring(fd: c_int) {
    let Some(ring) = RINGS.get(fd as usize) else {
        return;
    };
    // SAFETY: maps the event's ring, shared with the kernel, at an address the kernel picks.
    let base = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            RING_PAGES * page_size(),
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_SHARED,
            fd,
            0,
        )
    };
    if base != libc::MAP_FAILED {
        ring.store(base as usize, Ordering::SeqCst);
    }
}

/// Unmaps the ring of event `fd`, once no signal handler reads it.
fn unmap_ring(fd: c_int) {
    let Some(ring) = RINGS.get(fd as usize) else {
        return;
    };
    let base = ring.swap(0, Ordering::SeqCst);
    if base == 0 {
        return;
    }
    // A handler that saw the address counted itself a reader first.
    while RING_READERS.load(Ordering::SeqCst) != 0 {
        std::thread::yield_now();
    }
    // SAFETY: unmaps the ring mapped by `map_ring`; no handler can read it any more.
    unsafe { libc::munmap(base as *mut libc::c_void, RING_PAGES * page_size()) };
}

/// Copies the kernel frames of the last call chain event `fd` recorded into `out`,
/// innermost first, as `(FRAME_KERNEL, address)`; returns how many (called in the signal
/// handler of the event's thread: plain loads and stores in the mapped ring).
pub fn kernel_frames(fd: c_int, out: &mut [super::CallFrame]) -> usize {
    let Some(ring) = RINGS.get(fd as usize) else {
        return 0;
    };
    RING_READERS.fetch_add(1, Ordering::SeqCst);
    let base = ring.load(Ordering::SeqCst);
    let copied = if base == 0 {
        0
    } else {
        // SAFETY: `base` is the ring of this event, mapped (RING_PAGES pages) until
        // `unmap_ring`, which waits for readers (counted above) after clearing the address.
        unsafe { read_last_chain(base as *mut u8, out) }
    };
    RING_READERS.fetch_sub(1, Ordering::SeqCst);
    copied
}

/// `PERF_RECORD_SAMPLE`.
const RECORD_SAMPLE: u32 = 9;
/// Call-chain entries at or above this mark a context (kernel, user, ...), not an address.
const CONTEXT_MAX: u64 = -4095i64 as u64;
/// The entry that opens the kernel's part of a call chain.
const CONTEXT_KERNEL: u64 = -128i64 as u64;

/// Reads the records of the ring at `base` from its tail to its head, copies the kernel
/// addresses of the last sample into `out`, and moves the tail to the head.
///
/// # Safety
/// `base` must be a perf event ring of [`RING_PAGES`] pages, mapped.
unsafe fn read_last_chain(base: *mut u8, out: &mut [super::CallFrame]) -> usize {
    use std::ptr::{addr_of, addr_of_mut};
    use std::sync::atomic::{Ordering as O, fence};
    let page = base.cast::<sys::bindings::perf_event_mmap_page>();
    // SAFETY: the metadata page is the ring's first; the kernel writes `data_head`, the
    // reader `data_tail` (read_volatile/write_volatile: shared with the kernel).
    let (head, tail, offset, size) = unsafe {
        (
            std::ptr::read_volatile(addr_of!((*page).data_head)),
            std::ptr::read_volatile(addr_of!((*page).data_tail)),
            std::ptr::read_volatile(addr_of!((*page).data_offset)),
            std::ptr::read_volatile(addr_of!((*page).data_size)),
        )
    };
    // The records up to `head` are written before it moved.
    fence(O::Acquire);
    let pages = (RING_PAGES * page_size()) as u64;
    if size == 0 || size % 8 != 0 || offset.saturating_add(size) > pages || head < tail {
        return 0;
    }
    // SAFETY: `offset + size` is inside the mapping (checked); reads are 8-byte aligned words
    // at indices taken modulo `size`.
    let word = |at: u64| unsafe {
        std::ptr::read_volatile(base.add((offset + at % size) as usize).cast::<u64>())
    };
    let mut copied = 0;
    let mut at = tail.max(head.saturating_sub(size));
    while at < head {
        let header = word(at);
        let (kind, record) = (header as u32, header >> 48);
        if record < 8 || record % 8 != 0 || at + record > head {
            break;
        }
        if kind == RECORD_SAMPLE && record >= 16 {
            let entries = word(at + 8).min((record - 16) / 8);
            copied = 0;
            let mut kernel = false;
            for i in 0..entries {
                let address = word(at + 16 + 8 * i);
                if address >= CONTEXT_MAX {
                    kernel = address == CONTEXT_KERNEL;
                } else if kernel && let Some(frame) = out.get_mut(copied) {
                    *frame = super::CallFrame {
                        bci: super::FRAME_KERNEL,
                        method: address as usize as crate::jvmti::sys::jmethodID,
                    };
                    copied += 1;
                }
            }
        }
        at += record;
    }
    fence(O::Release);
    // SAFETY: as above; the tail tells the kernel the records before `head` were read.
    unsafe { std::ptr::write_volatile(addr_of_mut!((*page).data_tail), head) };
    copied
}

impl Drop for PerfTimer {
    fn drop(&mut self) {
        if let Some(own) = OWN.get(self.0 as usize) {
            own.store(false, Ordering::Release);
        }
        unmap_ring(self.0);
        // SAFETY: the descriptor was opened by `start` and is closed once, here; a signal it
        // raised that is still pending finds it unmarked and goes to the previous handler.
        unsafe {
            sys::ioctls::DISABLE(self.0, 0);
            libc::close(self.0);
        }
        OPEN.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether `fd` is one of the sampler's events (called in the signal handler).
pub fn is_own(fd: c_int) -> bool {
    fd >= 0
        && OWN
            .get(fd as usize)
            .is_some_and(|own| own.load(Ordering::Acquire))
}

/// Stops the event from overflowing while the handler copies its call chain, where it runs
/// enabled (called in the signal handler, first; [`rearm`] follows before the stack walk).
pub fn quiet(fd: c_int) {
    if refresh_hangs() {
        // SAFETY: an ioctl, a system call: async-signal-safe. The descriptor is the sampler's
        // (checked by the caller); if it was closed since, the ioctl fails harmlessly.
        unsafe { sys::ioctls::DISABLE(fd, 0) };
    }
}

/// Arms the event again for one overflow (called in the signal handler once the sample's
/// call chain is copied, before the stack walk: the walk's CPU time is counted, and an
/// overflow during it waits, as SIGPROF is blocked in its handler, and is sampled after).
pub fn rearm(fd: c_int) {
    // SAFETY: an ioctl, a system call: async-signal-safe. The descriptor is the sampler's
    // (checked by the caller); if it was closed since, the ioctl fails harmlessly.
    unsafe {
        if refresh_hangs() {
            sys::ioctls::ENABLE(fd, 0);
        } else {
            sys::ioctls::REFRESH(fd, 1);
        }
    }
}

/// The intervals of CPU time the sample of event `fd` stands for (called in its thread's
/// signal handler): the event's count since the last sample, in periods, rounded, at least
/// one; what the rounding gave ahead or left is carried to the next sample.
pub fn weight(fd: c_int) -> u32 {
    let (Some(weighed), period) = (WEIGHED.get(fd as usize), PERIOD.load(Ordering::Relaxed)) else {
        return 1;
    };
    let mut count: u64 = 0;
    // SAFETY: read(2) of a perf event's descriptor writes its count (8 bytes, the default
    // read format) into `count`; async-signal-safe. A closed descriptor fails harmlessly.
    let read = unsafe { libc::read(fd, (&mut count as *mut u64).cast(), 8) };
    if read != 8 || period == 0 {
        return 1;
    }
    let last = weighed.load(Ordering::Relaxed);
    let (weight, next) = weigh(count, last, period);
    weighed.store(next, Ordering::Relaxed);
    weight
}

/// The weight of a sample taken at event count `count` when the last one was weighed at
/// `last` (periods of `period` ns, rounded, at least 1, at most 2^20), and the count the
/// next one is weighed from.
fn weigh(count: u64, last: u64, period: u64) -> (u32, u64) {
    let elapsed = count.saturating_sub(last);
    let weight = ((elapsed + period / 2) / period).clamp(1, 1 << 20);
    (weight as u32, last.saturating_add(weight * period))
}

/// Why perf events cannot be the sampler's clock here, if they cannot: an event on the
/// calling thread is opened, set up to signal it, and closed. The verbose line that says
/// the sampler uses another clock gives this reason.
pub fn refused(tid: i32) -> Option<String> {
    let paranoid = paranoid().map_or_else(|| "unknown".into(), |p| p.to_string());
    match PerfTimer::start(tid, Duration::from_secs(3600)) {
        Ok(timer) => {
            drop(timer);
            None
        }
        Err(e) => Some(format!(
            "the kernel refuses perf events ({e}; perf_event_paranoid {paranoid})"
        )),
    }
}

/// Whether events leave the kernel's time out (decided by the first event opened).
pub fn excludes_kernel() -> bool {
    EXCLUDE_KERNEL.load(Ordering::Relaxed) == 2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_weigh_the_periods_counted_since_the_last() {
        let ms = 1_000_000;
        // On time: one interval each.
        assert_eq!(weigh(ms, 0, ms), (1, ms));
        assert_eq!(weigh(2 * ms + 3_000, ms, ms), (1, 2 * ms));
        // Early (the count a little short of the period): still one; the next gives it back.
        assert_eq!(weigh(ms - 20_000, 0, ms), (1, ms));
        assert_eq!(weigh(2 * ms - 30_000, ms, ms), (1, 2 * ms));
        // Three overflows skipped in the kernel, or lost while a signal was pending.
        assert_eq!(weigh(4 * ms + 100, 0, ms), (4, 4 * ms));
        assert_eq!(weigh(4 * ms + 600_000, 0, ms), (5, 5 * ms));
        // Over many samples the weights add up to the count.
        let (mut last, mut total) = (0, 0);
        for i in 1..=1000u64 {
            let count = i * ms + (i * 7919 % 400_000);
            let (w, next) = weigh(count, last, ms);
            total += u64::from(w);
            last = next;
        }
        assert!((999..=1001).contains(&total), "{total}");
    }

    #[test]
    fn refresh_is_avoided_on_the_kernels_where_it_hangs() {
        assert!(refresh_hangs_on("6.16.3-arch1-1"));
        assert!(refresh_hangs_on("6.17.0"));
        assert!(!refresh_hangs_on("6.18.44-fc-v657"));
        assert!(!refresh_hangs_on("6.1.0-18-amd64"));
        assert!(!refresh_hangs_on("5.16.1"));
    }
}
