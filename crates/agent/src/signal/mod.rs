//! Owns what runs in signal handlers: the SIGPROF handler that takes a thread's stack (by
//! the agent's own walk of HotSpot's structures and native code, [`walker`], or by HotSpot's
//! `AsyncGetCallTrace` where that walk is not available or breaks), the preallocated ring of
//! samples it writes into, the timers on each thread's CPU clock that deliver the signal,
//! the queued signals of wall-clock sampling, and the crash guard around the stack walk
//! (`guard.c`).
//!
//! The handler is async-signal-safe: it reads atomics, calls `GetEnv` (a read of the current
//! thread's JVM structure), walks inside the crash guard, calls `AsyncGetCallTrace` (written
//! for this use), and writes into memory allocated before the first timer was armed. It
//! never allocates, locks or panics.

#![allow(unsafe_code)]

use std::cell::UnsafeCell;
use std::ffi::{c_int, c_void};
use std::ptr;
use std::sync::OnceLock;
use std::sync::atomic::{
    AtomicBool, AtomicI32, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, Ordering,
};
use std::time::Duration;

use crate::jvmti::{JavaVm, sys};

pub mod carriers;
pub mod hotspot;
pub mod native;
pub mod perf;
pub mod publish;
pub mod stubs;
pub mod walker;

pub use perf::PerfTimer;

/// The signal the sampler uses.
pub const SIGNAL: c_int = libc::SIGPROF;

/// One frame as `AsyncGetCallTrace` fills it: the bytecode index (-3 for a native method, -1
/// when unknown) and the method.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct CallFrame {
    /// Bytecode index, or -3 (native), or -1 (unknown).
    pub bci: i32,
    /// The method; null when the JVM has no jmethodID for it.
    pub method: sys::jmethodID,
}

#[repr(C)]
struct CallTrace {
    env: *mut sys::JNIEnv,
    num_frames: i32,
    frames: *mut CallFrame,
}

type AsyncGetCallTrace = unsafe extern "C" fn(*mut CallTrace, c_int, *mut c_void);

/// What the crash guard calls: (data, depth, signal context).
type GuardedFn = unsafe extern "C" fn(*mut c_void, c_int, *mut c_void);

unsafe extern "C" {
    fn hprof_guard_install() -> c_int;
    fn hprof_guard_uninstall() -> c_int;
    fn hprof_guard_faults() -> libc::c_ulong;
    fn hprof_walk_guarded(
        walk: GuardedFn,
        trace: *mut c_void,
        depth: c_int,
        context: *mut c_void,
    ) -> c_int;
}

/// What [`guarded`] returns: the function returned.
pub const GUARD_RETURNED: c_int = 0;
/// What [`guarded`] returns: the function faulted and was abandoned.
pub const GUARD_CRASHED: c_int = 1;

unsafe extern "C" fn call_closure<F: FnMut()>(data: *mut c_void, _: c_int, _: *mut c_void) {
    // SAFETY: `data` is the `&mut F` that `guarded` passed, alive for this call.
    let f = unsafe { &mut *data.cast::<F>() };
    f();
}

/// Runs `f` inside the crash guard: a fault in it abandons it (its frames are jumped over,
/// so it must own nothing that needs dropping). [`GUARD_RETURNED`], [`GUARD_CRASHED`], or 2
/// when no guard slot was free (`f` did not run). Async-signal-safe; works outside handlers.
pub fn guarded<F: FnMut()>(mut f: F) -> c_int {
    // SAFETY: `call_closure::<F>` takes the pointer to `f` this passes; the guard calls it at
    // most once, before returning.
    unsafe {
        hprof_walk_guarded(
            call_closure::<F>,
            (&mut f as *mut F).cast(),
            0,
            ptr::null_mut(),
        )
    }
}

/// `CallFrame::bci` of a frame in native code of user space (a JNI library, libc, libjvm, the
/// vDSO): `method` holds its program counter, named at the drain from the libraries' symbols.
pub const FRAME_NATIVE: i32 = -10;
/// `CallFrame::bci` of a frame in the kernel: `method` holds a kernel address (from a perf
/// event's call chain), named from `/proc/kallsyms`.
pub const FRAME_KERNEL: i32 = -11;
/// `CallFrame::bci` of a frame in a code-cache blob that is no Java method (an intrinsic or
/// runtime stub, a vtable stub, an adapter): `method` holds a program counter inside it,
/// named at the drain from the blob's name.
pub const FRAME_STUB: i32 = -12;
/// `CallFrame::bci` of the last frame of a walk that broke before the end of the stack:
/// `method` holds why ([`walker::Failure`] as a number).
pub const FRAME_BROKEN: i32 = -13;

/// `num_frames` of a sample whose walk faulted and was abandoned by the guard.
pub const WALK_CRASHED: i32 = -100;
/// `num_frames` of a sample not walked: no guard slot was free.
pub const WALK_SKIPPED: i32 = -101;
/// `num_frames` of a signal that reached a thread the JVM does not run Java on.
pub const NOT_JAVA: i32 = -102;
/// `num_frames` of an answer to [`IDENTIFY`]: the sample says which JNI environment the
/// thread has, and holds no stack.
pub const IDENTIFIED: i32 = -103;
/// The value of [`signal_thread`] that asks a thread who it is instead of for its stack (no
/// JVMTI thread state has every bit set).
pub const IDENTIFY: u32 = u32::MAX;

/// What a sample measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SampleKind {
    /// Intervals of the thread's CPU time: 1, or more when the timer expired again before
    /// the signal was delivered (the kernel checks CPU timers at its tick, so intervals
    /// shorter than the tick arrive together).
    Cpu(u32),
    /// An interval of wall time; the value is what the wall-clock ticker queued with the
    /// signal (the thread's state).
    Wall(u32),
}

/// A sample the handler wrote, as the draining thread reads it.
#[derive(Debug)]
pub struct Sample<'a> {
    /// The thread's JNI environment (0 for a thread the JVM does not run Java on).
    pub env: usize,
    /// The thread's kernel id.
    pub tid: i32,
    /// Frames walked, or one of AsyncGetCallTrace's failure codes (0 or below), or
    /// [`WALK_CRASHED`], [`WALK_SKIPPED`], [`NOT_JAVA`].
    pub num_frames: i32,
    /// The frames, innermost first (empty unless `num_frames > 0`).
    pub frames: &'a [CallFrame],
    /// The kernel's frames above them ([`FRAME_KERNEL`], innermost first), from a perf
    /// event's call chain: the sample was taken in a system call, an interrupt or a fault.
    pub kernel: &'a [CallFrame],
    /// What it measures.
    pub kind: SampleKind,
    /// The Java thread id (`Thread.threadId()`) of the virtual thread the thread ran, 0 for
    /// none (or when virtual threads are not followed).
    pub vthread: u64,
    /// When the handler took it: `CLOCK_MONOTONIC` nanoseconds ([`monotonic_nanos`]).
    pub time: u64,
    /// A wall-clock sample's thread CPU time as the handler ended, in nanoseconds (0 for a
    /// CPU sample): the wall-clock ticker compares it with the thread's CPU time later to
    /// tell a thread that has not run since.
    pub cpu: u64,
}

const FREE: u8 = 0;
const WRITING: u8 = 1;
const READY: u8 = 2;

const KIND_CPU: u8 = 0;
const KIND_WALL: u8 = 1;

#[derive(Debug)]
struct Slot {
    state: AtomicU8,
    kind: AtomicU8,
    env: AtomicUsize,
    tid: AtomicI32,
    num_frames: AtomicI32,
    /// Kernel frames in front of the walked ones.
    kernel: AtomicU32,
    value: AtomicU32,
    vthread: AtomicU64,
    time: AtomicU64,
    cpu: AtomicU64,
}

/// The preallocated samples: `slots.len()` slots of `depth` frames each, and as many again
/// where AsyncGetCallTrace writes when the agent's own walk broke (the better of the two is
/// kept).
struct Ring {
    slots: Box<[Slot]>,
    frames: Box<[UnsafeCell<CallFrame>]>,
    depth: usize,
    next: AtomicUsize,
}

// SAFETY: a slot's frames are written only by the handler that moved the slot from FREE to
// WRITING, and read only by the drain after it saw READY (release/acquire on `state`).
unsafe impl Sync for Ring {}
// SAFETY: the ring owns its memory; the jmethodIDs in it are plain values any thread may read.
unsafe impl Send for Ring {}

/// Counters of what the handler could not record.
#[derive(Debug, Default)]
pub struct Counters {
    /// Samples lost because every slot of the ring was full.
    pub dropped: AtomicU64,
    /// Signals handled (each one a sample, recorded or not).
    pub signals: AtomicU64,
    /// SIGPROF signals that were not the sampler's, passed to the handler before it.
    pub foreign: AtomicU64,
}

static RING: OnceLock<Ring> = OnceLock::new();
static WALK: OnceLock<AsyncGetCallTrace> = OnceLock::new();
static VM: AtomicPtr<sys::JavaVM> = AtomicPtr::new(ptr::null_mut());
static ACTIVE: AtomicBool = AtomicBool::new(false);
static DEPTH: AtomicU32 = AtomicU32::new(0);
/// The SIGPROF action the sampler's replaced, while the sampler's is installed (null
/// otherwise). Each install leaks one small copy, so the handler never reads freed memory.
static PREVIOUS: AtomicPtr<libc::sigaction> = AtomicPtr::new(ptr::null_mut());
/// Whether the sampler's SIGPROF handler (and the walk's crash guard) are installed.
static HANDLER_INSTALLED: AtomicBool = AtomicBool::new(false);
/// Handler invocations running now (and readers of published tables, see [`publish`]).
pub(crate) static IN_HANDLER: AtomicU32 = AtomicU32::new(0);
static PID: AtomicI32 = AtomicI32::new(0);
/// Whether the process-wide CPU timer (ITIMER_PROF) is the sampler's.
static PROCESS_TIMER: AtomicBool = AtomicBool::new(false);
/// What the handler could not record.
pub static COUNTERS: Counters = Counters {
    dropped: AtomicU64::new(0),
    signals: AtomicU64::new(0),
    foreign: AtomicU64::new(0),
};

/// Marks the sampler's own signals in the high half of their value ("HPRO"), so a SIGPROF
/// another tool sends in the same process goes to that tool's handler.
const MARK: usize = 0x4850_524F << 32;

/// `JNI_VERSION_1_6`: any JNI version the JVM knows.
const JNI_VERSION: c_int = 0x0001_0006;

/// Finds `AsyncGetCallTrace` in the JVM that runs this agent: in the library that holds the
/// JVM's invocation interface. `None` when the JVM does not export it.
pub fn find_walker(vm: JavaVm) -> Option<()> {
    let vm = vm.raw();
    if WALK.get().is_some() {
        return Some(());
    }
    if vm.is_null() {
        return None;
    }
    // SAFETY: `vm` is the JVM's invocation interface; reading its function table gives a code
    // address inside libjvm, which dladdr only looks up.
    let get_env = unsafe { (**vm).GetEnv }? as *const c_void;
    let mut info = libc::Dl_info {
        dli_fname: ptr::null(),
        dli_fbase: ptr::null_mut(),
        dli_sname: ptr::null(),
        dli_saddr: ptr::null_mut(),
    };
    // SAFETY: dladdr writes `info` for an address of a loaded library.
    let found = unsafe { libc::dladdr(get_env, &mut info) } != 0 && !info.dli_fname.is_null();
    let handle = if found {
        // SAFETY: `dli_fname` names a library already loaded (RTLD_NOLOAD never loads one);
        // the handle is kept for the life of the process.
        unsafe { libc::dlopen(info.dli_fname, libc::RTLD_NOLOAD | libc::RTLD_LAZY) }
    } else {
        libc::RTLD_DEFAULT
    };
    let handle = if handle.is_null() {
        libc::RTLD_DEFAULT
    } else {
        handle
    };
    // SAFETY: dlsym looks a symbol up in a loaded library; the name is NUL-terminated.
    let symbol = unsafe { libc::dlsym(handle, c"AsyncGetCallTrace".as_ptr()) };
    if symbol.is_null() {
        return None;
    }
    // SAFETY: HotSpot exports AsyncGetCallTrace with this C signature on every release that
    // has it (JDK 6 to 25).
    let walk: AsyncGetCallTrace = unsafe { std::mem::transmute(symbol) };
    let _ = WALK.set(walk);
    Some(())
}

/// Room each sample of the ring has for the kernel's frames beyond the walked ones (a perf
/// event's call chain holds 127 at most by default: `perf_event_max_stack`).
pub const KERNEL_ROOM: usize = 128;

/// Allocates the ring (`slots` samples of at most `depth` walked frames, and
/// [`KERNEL_ROOM`] kernel frames), installs the crash guard
/// and the SIGPROF handler (in front of any handler already there, which still gets the
/// signals that are not the sampler's). Call after [`find_walker`]. A later session (an
/// attached agent started again) reuses the ring and handler of the first.
pub fn install(vm: JavaVm, slots: usize, depth: usize) -> Result<(), String> {
    let vm = vm.raw();
    if WALK.get().is_none() {
        return Err("the JVM does not export AsyncGetCallTrace".into());
    }
    if RING.get().is_some() {
        VM.store(vm, Ordering::Release);
        set_depth(depth);
        return install_handlers();
    }
    let depth = depth.max(1) + KERNEL_ROOM;
    let ring = Ring {
        slots: (0..slots.max(1))
            .map(|_| Slot {
                state: AtomicU8::new(FREE),
                kind: AtomicU8::new(KIND_CPU),
                env: AtomicUsize::new(0),
                tid: AtomicI32::new(0),
                num_frames: AtomicI32::new(0),
                kernel: AtomicU32::new(0),
                value: AtomicU32::new(0),
                vthread: AtomicU64::new(0),
                time: AtomicU64::new(0),
                cpu: AtomicU64::new(0),
            })
            .collect(),
        frames: (0..slots.max(1) * depth * 2)
            .map(|_| {
                UnsafeCell::new(CallFrame {
                    bci: 0,
                    method: ptr::null_mut(),
                })
            })
            .collect(),
        depth,
        next: AtomicUsize::new(0),
    };
    if RING.set(ring).is_err() {
        return Err("the sampler's signal handler was installed twice".into());
    }
    VM.store(vm, Ordering::Release);
    PID.store(std::process::id() as i32, Ordering::Release);
    DEPTH.store((depth - KERNEL_ROOM) as u32, Ordering::Release);
    install_handlers()
}

/// Installs the crash guard and the SIGPROF handler, unless they are installed.
fn install_handlers() -> Result<(), String> {
    if HANDLER_INSTALLED.load(Ordering::Acquire) {
        return Ok(());
    }
    // SAFETY: installs guard.c's SIGSEGV/SIGBUS handler, which passes every fault outside a
    // guarded walk to the handler it replaced.
    if unsafe { hprof_guard_install() } != 0 {
        return Err(format!(
            "can't install the stack walk's crash guard ({})",
            std::io::Error::last_os_error()
        ));
    }
    install_sigprof().map_err(|e| format!("can't install the SIGPROF handler ({e})"))?;
    HANDLER_INSTALLED.store(true, Ordering::Release);
    Ok(())
}

/// Installs the sampler's SIGPROF handler in front of the one there now, which becomes the
/// handler of the signals that are not the sampler's.
fn install_sigprof() -> std::io::Result<()> {
    // SAFETY: a zeroed sigaction is a valid value to fill in.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as *const () as usize;
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: the mask is a field of `action`.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: as above.
    let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: installs `on_signal` for SIGPROF and reads back the handler it replaces.
    if unsafe { libc::sigaction(SIGNAL, &action, &mut previous) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // (The copy it replaces is leaked: a handler running now may still read it.)
    PREVIOUS.store(Box::into_raw(Box::new(previous)), Ordering::Release);
    Ok(())
}

/// Times the sampler put its handler back in front of another ([`check_handler`]), at most
/// (past them, it stays displaced and says so).
pub const MAX_REINSTALLS: u32 = 16;

static REINSTALLS: AtomicU32 = AtomicU32::new(0);

/// What [`check_handler`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HandlerCheck {
    /// The sampler's handler is SIGPROF's (or none is installed).
    Ours,
    /// The sampler gave SIGPROF up to another handler before ([`displaced_for_good`]).
    Abandoned,
    /// Another handler had replaced it: the address of that handler (0 for the default
    /// action, 1 for ignored), and whether the sampler's was put back in front of it.
    Replaced {
        /// The handler's address.
        handler: usize,
        /// Whether the sampler's handler is SIGPROF's again (the other one gets the signals
        /// that are not the sampler's).
        reinstalled: bool,
    },
}

/// Checks that SIGPROF's handler is still the sampler's (a JNI library may install its own
/// after the agent's); when another replaced it, puts the sampler's back in front of it, at
/// most [`MAX_REINSTALLS`] times. Call from an agent thread (never a signal handler).
pub fn check_handler() -> HandlerCheck {
    if !HANDLER_INSTALLED.load(Ordering::Acquire) {
        return HandlerCheck::Ours;
    }
    if displaced_for_good() {
        return HandlerCheck::Abandoned;
    }
    // SAFETY: a zeroed sigaction is a valid value for sigaction to fill in.
    let mut current: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: reads SIGPROF's action without changing it.
    if unsafe { libc::sigaction(SIGNAL, ptr::null(), &mut current) } != 0 {
        return HandlerCheck::Ours;
    }
    if current.sa_sigaction == on_signal as *const () as usize {
        return HandlerCheck::Ours;
    }
    let reinstalled =
        REINSTALLS.fetch_add(1, Ordering::AcqRel) < MAX_REINSTALLS && install_sigprof().is_ok();
    HandlerCheck::Replaced {
        handler: current.sa_sigaction,
        reinstalled,
    }
}

/// Whether the sampler gave its SIGPROF handler up to another, for good ([`check_handler`]
/// replaced it [`MAX_REINSTALLS`] times): no timer or wall-clock signal should be sent.
pub fn displaced_for_good() -> bool {
    REINSTALLS.load(Ordering::Acquire) > MAX_REINSTALLS
}

/// The address of the handler the sampler's passes foreign signals to (`SIG_DFL` for none).
pub fn previous_handler() -> usize {
    let previous = PREVIOUS.load(Ordering::Acquire);
    if previous.is_null() {
        return libc::SIG_DFL;
    }
    // SAFETY: a non-null PREVIOUS points to a leaked copy, never freed.
    unsafe { (*previous).sa_sigaction }
}

/// SIGPROF signals that were not the sampler's so far (passed to the handler before it).
pub fn foreign_signals() -> u64 {
    COUNTERS.foreign.load(Ordering::Relaxed)
}

/// Most time [`uninstall`] waits for signals still on their way.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

/// Whether any thread of this process has a SIGPROF pending (its own or the process's).
fn sigprof_pending() -> bool {
    let bit = 1u64 << (SIGNAL - 1);
    let pending = |status: &str| {
        status.lines().any(|line| {
            ["SigPnd:", "ShdPnd:"].iter().any(|key| {
                line.strip_prefix(key)
                    .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
                    .is_some_and(|mask| mask & bit != 0)
            })
        })
    };
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return false;
    };
    tasks
        .filter_map(|t| t.ok())
        .any(|task| std::fs::read_to_string(task.path().join("status")).is_ok_and(|s| pending(&s)))
}

/// Gives the process back the SIGPROF, SIGSEGV and SIGBUS handlers it had before the
/// sampler (an attached session stops), once every sampling signal already sent has been
/// handled: call after every timer is deleted and sampling is off. A signal still pending
/// after `SETTLE` keeps the handlers installed (idle) rather than let it meet a default
/// action that would end the process; false then.
pub fn uninstall() -> bool {
    if !HANDLER_INSTALLED.load(Ordering::Acquire) {
        return true;
    }
    let deadline = std::time::Instant::now() + SETTLE;
    // One tick of the kernel's timers at least: a CPU timer that expired as it was deleted
    // may still be delivering.
    std::thread::sleep(std::time::Duration::from_millis(20));
    while sigprof_pending() || IN_HANDLER.load(Ordering::Acquire) != 0 {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let previous = PREVIOUS.load(Ordering::Acquire);
    if previous.is_null() {
        return false;
    }
    // SAFETY: `previous` is the action read back when the handler was installed (leaked,
    // never freed); restoring it only replaces the disposition of SIGPROF.
    if unsafe { libc::sigaction(SIGNAL, previous, ptr::null_mut()) } != 0 {
        return false;
    }
    // SAFETY: no walk runs (no sampling signal pending or being handled): the guard's
    // handlers can go, giving the JVM's back.
    let guard = unsafe { hprof_guard_uninstall() } == 0;
    HANDLER_INSTALLED.store(false, Ordering::Release);
    guard
}

/// Whether the sampler's SIGPROF handler is installed now.
pub fn handler_installed() -> bool {
    HANDLER_INSTALLED.load(Ordering::Acquire)
}

/// Turns sampling on or off: signals that arrive while off are ignored.
pub fn set_active(on: bool) {
    ACTIVE.store(on, Ordering::Release);
}

/// The walked frames per sample the ring has room for (0 before it is allocated).
pub fn ring_depth() -> usize {
    RING.get().map_or(0, |r| r.depth - KERNEL_ROOM)
}

/// The samples the ring holds between two drains (0 before it is allocated).
pub fn ring_slots() -> usize {
    RING.get().map_or(0, |r| r.slots.len())
}

/// Sets the frames walked per sample (at most the ring's depth).
pub fn set_depth(depth: usize) {
    DEPTH.store(depth.min(ring_depth()) as u32, Ordering::Release);
}

/// Faults the crash guard caught in stack walks.
pub fn guard_faults() -> u64 {
    // SAFETY: reads an atomic counter.
    unsafe { hprof_guard_faults() }
}

/// Blocks the sampler's signal in the calling thread (a thread of the agent's own that no
/// sampling signal may interrupt: a process-wide timer's signal then goes to another thread).
pub fn block_in_this_thread() {
    // SAFETY: a zeroed sigset_t is a valid value for sigemptyset to fill in.
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: builds a set of one signal and adds it to the calling thread's blocked mask.
    unsafe {
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, SIGNAL);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, ptr::null_mut());
    }
}

pub use crate::jvmti::os::{current_tid, monotonic_nanos};

/// The CPU time of thread `tid` of this process, in nanoseconds (async-signal-safe for the
/// calling thread's own id); `None` if the thread has ended.
pub fn thread_cpu_nanos(tid: i32) -> Option<u64> {
    // The kernel's clock id of a thread's CPU time (CPUCLOCK_SCHED of the thread).
    let clock: libc::clockid_t = ((!tid) << 3) | 6;
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec; an unknown clock id is an error, not UB.
    if unsafe { libc::clock_gettime(clock, &mut now) } != 0 {
        return None;
    }
    Some(
        (now.tv_sec as u64)
            .saturating_mul(1_000_000_000)
            .saturating_add(now.tv_nsec as u64),
    )
}

/// A POSIX timer on a thread's CPU clock that sends it SIGPROF.
#[derive(Debug)]
pub struct CpuTimer(usize);

impl CpuTimer {
    /// Arms a timer that sends SIGPROF to thread `tid` after each `interval` of the CPU time
    /// that thread uses.
    pub fn start(tid: i32, interval: Duration) -> std::io::Result<CpuTimer> {
        // The kernel's clock id of a thread's CPU time (CPUCLOCK_SCHED of the thread).
        let clock: libc::clockid_t = ((!tid) << 3) | 6;
        // SAFETY: a zeroed sigevent is a valid value to fill in.
        let mut event: libc::sigevent = unsafe { std::mem::zeroed() };
        event.sigev_notify = libc::SIGEV_THREAD_ID;
        event.sigev_signo = SIGNAL;
        event.sigev_notify_thread_id = tid;
        event.sigev_value = libc::sigval {
            sival_ptr: MARK as *mut c_void,
        };
        let mut timer: libc::timer_t = ptr::null_mut();
        // SAFETY: timer_create reads `event` and writes the new timer's id.
        if unsafe { libc::timer_create(clock, &mut event, &mut timer) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let period = libc::timespec {
            tv_sec: interval.as_secs() as libc::time_t,
            tv_nsec: interval.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: period,
            it_value: period,
        };
        // SAFETY: `timer` was just created; timer_settime reads `spec`.
        if unsafe { libc::timer_settime(timer, 0, &spec, ptr::null_mut()) } != 0 {
            let error = std::io::Error::last_os_error();
            // SAFETY: deletes the timer created above.
            unsafe { libc::timer_delete(timer) };
            return Err(error);
        }
        Ok(CpuTimer(timer as usize))
    }
}

impl Drop for CpuTimer {
    fn drop(&mut self) {
        // SAFETY: the timer was created by `start` and is deleted once, here.
        unsafe { libc::timer_delete(self.0 as libc::timer_t) };
    }
}

/// What interrupts one thread after each interval of its CPU time.
#[derive(Debug)]
pub enum ThreadTimer {
    /// A perf event on the thread's task clock.
    Perf(PerfTimer),
    /// A POSIX timer on the thread's CPU clock.
    Posix(CpuTimer),
}

/// Where CPU-time samples come from, best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerSource {
    /// One perf event per thread ([`PerfTimer`]).
    Perf,
    /// One POSIX timer per thread ([`CpuTimer`]).
    Posix,
    /// The process-wide `ITIMER_PROF` ([`process_timer`]).
    Process,
}

impl TimerSource {
    /// The name `timer=` gives it.
    pub fn name(self) -> &'static str {
        match self {
            TimerSource::Perf => "perf",
            TimerSource::Posix => "cpu",
            TimerSource::Process => "itimer",
        }
    }
}

impl ThreadTimer {
    /// A timer of `source` (a per-thread one) for thread `tid`; a perf event the kernel
    /// refuses for this thread alone (a descriptor limit) gives way to a POSIX timer.
    pub fn start(source: TimerSource, tid: i32, interval: Duration) -> std::io::Result<Self> {
        if source == TimerSource::Perf
            && let Ok(timer) = PerfTimer::start(tid, interval)
        {
            return Ok(ThreadTimer::Perf(timer));
        }
        CpuTimer::start(tid, interval).map(ThreadTimer::Posix)
    }
}

/// Arms (or, with `None`, disarms) the process-wide CPU timer, ITIMER_PROF: SIGPROF after every
/// `interval` of CPU time the whole process used, delivered to a thread that is running. The
/// fallback when the kernel refuses timers on threads' CPU clocks.
pub fn process_timer(interval: Option<Duration>) -> std::io::Result<()> {
    let period = interval.map_or(
        libc::timeval {
            tv_sec: 0,
            tv_usec: 0,
        },
        |i| libc::timeval {
            tv_sec: i.as_secs() as libc::time_t,
            tv_usec: i.subsec_micros() as libc::suseconds_t,
        },
    );
    let spec = libc::itimerval {
        it_interval: period,
        it_value: period,
    };
    PROCESS_TIMER.store(interval.is_some(), Ordering::Release);
    // SAFETY: setitimer reads `spec`; the old value is not wanted.
    if unsafe { libc::setitimer(libc::ITIMER_PROF, &spec, ptr::null_mut()) } != 0 {
        PROCESS_TIMER.store(false, Ordering::Release);
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The layout of the kernel's `siginfo_t` for a signal a descriptor raised (64-bit Linux).
#[repr(C)]
struct PollInfo {
    signo: c_int,
    errno: c_int,
    code: c_int,
    pad: c_int,
    band: libc::c_long,
    fd: c_int,
}

/// The layout of the kernel's `siginfo_t` for a queued signal (64-bit Linux).
#[repr(C)]
struct QueuedInfo {
    signo: c_int,
    errno: c_int,
    code: c_int,
    pad: c_int,
    pid: c_int,
    uid: libc::uid_t,
    value: usize,
    rest: [u8; 96],
}

/// Sends SIGPROF to thread `tid` of this process with `value` (read back as
/// [`SampleKind::Wall`]). False if the thread is gone.
pub fn signal_thread(tid: i32, value: u32) -> bool {
    let pid = PID.load(Ordering::Acquire);
    let info = QueuedInfo {
        signo: SIGNAL,
        errno: 0,
        code: libc::SI_QUEUE,
        pad: 0,
        pid,
        // SAFETY: getuid cannot fail.
        uid: unsafe { libc::getuid() },
        value: MARK | value as usize,
        rest: [0; 96],
    };
    // SAFETY: rt_tgsigqueueinfo reads `info` (the size of a siginfo_t) and queues the signal
    // for one thread of this process.
    let sent = unsafe {
        libc::syscall(
            libc::SYS_rt_tgsigqueueinfo,
            pid,
            tid,
            SIGNAL,
            &info as *const QueuedInfo,
        )
    };
    sent == 0
}

/// Hands every sample written since the last call to `f`, oldest slot first, and frees its
/// slot. Returns how many there were.
pub fn drain(mut f: impl FnMut(&Sample<'_>)) -> usize {
    let Some(ring) = RING.get() else {
        return 0;
    };
    let mut count = 0;
    for (index, slot) in ring.slots.iter().enumerate() {
        if slot.state.load(Ordering::Acquire) != READY {
            continue;
        }
        let num_frames = slot.num_frames.load(Ordering::Relaxed);
        let kernel = (slot.kernel.load(Ordering::Relaxed) as usize).min(ring.depth);
        let walked = (num_frames.max(0) as usize).min(ring.depth - kernel);
        let start = index * ring.depth * 2;
        let cells = &ring.frames[start..start + kernel + walked];
        // SAFETY: UnsafeCell<CallFrame> has CallFrame's layout; the slot is READY, so the
        // handler that wrote these frames is done and none writes them until it is FREE.
        let all = unsafe {
            std::slice::from_raw_parts(cells.as_ptr().cast::<CallFrame>(), kernel + walked)
        };
        let (kernel, frames) = all.split_at(kernel);
        let value = slot.value.load(Ordering::Relaxed);
        let kind = match slot.kind.load(Ordering::Relaxed) {
            KIND_WALL => SampleKind::Wall(value),
            _ => SampleKind::Cpu(value),
        };
        f(&Sample {
            env: slot.env.load(Ordering::Relaxed),
            tid: slot.tid.load(Ordering::Relaxed),
            num_frames,
            frames,
            kernel,
            kind,
            vthread: slot.vthread.load(Ordering::Relaxed),
            time: slot.time.load(Ordering::Relaxed),
            cpu: slot.cpu.load(Ordering::Relaxed),
        });
        slot.state.store(FREE, Ordering::Release);
        count += 1;
    }
    count
}

/// The SIGPROF handler.
extern "C" fn on_signal(signo: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    // SAFETY: errno is the calling thread's; it is restored so the interrupted code never
    // sees the handler's.
    let errno = unsafe { *libc::__errno_location() };
    IN_HANDLER.fetch_add(1, Ordering::SeqCst);
    let mut perf_fd = None;
    let kind = if info.is_null() {
        None
    } else {
        // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
        let info = unsafe { &*info };
        match info.si_code {
            // A POSIX timer's signal, if the timer is one of the sampler's (its value carries
            // the mark: another tool's timers in this process have their own values).
            libc::SI_TIMER => {
                // SAFETY: si_value and si_overrun are valid for a timer's signal.
                let (value, overrun) = unsafe { (info.si_value(), info.si_overrun()) };
                (value.sival_ptr as usize & !0xFFFF_FFFF == MARK)
                    .then(|| SampleKind::Cpu(1 + overrun.clamp(0, 1 << 20) as u32))
            }
            // A perf event's overflow, if the event is one of the sampler's.
            perf::POLL_IN | perf::POLL_HUP => {
                // SAFETY: a signal raised by a descriptor (F_SETSIG) has si_band and si_fd.
                let fd = unsafe { (*(info as *const libc::siginfo_t).cast::<PollInfo>()).fd };
                perf::is_own(fd).then(|| {
                    perf::quiet(fd);
                    perf_fd = Some(fd);
                    SampleKind::Cpu(perf::weight(fd))
                })
            }
            // The process-wide timer's signal, while it is the sampler's.
            libc::SI_KERNEL if PROCESS_TIMER.load(Ordering::Relaxed) => Some(SampleKind::Cpu(1)),
            // SAFETY: si_pid and si_value are valid for a queued signal.
            libc::SI_QUEUE if unsafe { info.si_pid() } == PID.load(Ordering::Relaxed) => {
                // SAFETY: as above.
                Some(SampleKind::Wall(
                    unsafe { info.si_value() }.sival_ptr as usize as u32,
                ))
            }
            _ => None,
        }
    };
    match kind {
        Some(kind) => take_sample(kind, context, &mut Rearm(perf_fd)),
        None => {
            COUNTERS.foreign.fetch_add(1, Ordering::Relaxed);
            pass_on(signo, info, context)
        }
    }
    IN_HANDLER.fetch_sub(1, Ordering::SeqCst);
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = errno };
}

/// A SIGPROF the sampler did not send goes to the handler that was there before it.
fn pass_on(signo: c_int, info: *mut libc::siginfo_t, context: *mut c_void) {
    let previous = PREVIOUS.load(Ordering::Acquire);
    if previous.is_null() {
        return;
    }
    // SAFETY: a non-null PREVIOUS points to a leaked copy, never freed.
    let previous = unsafe { &*previous };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        return;
    }
    if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed for SA_SIGINFO delivery, so it takes
        // these three arguments.
        let f: extern "C" fn(c_int, *mut libc::siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(handler) };
        f(signo, info, context);
    } else {
        // SAFETY: a handler installed without SA_SIGINFO takes the signal number only.
        let f: extern "C" fn(c_int) = unsafe { std::mem::transmute(handler) };
        f(signo);
    }
}

/// The thread's JNI environment, or null when the JVM runs no Java on it.
fn current_env() -> *mut sys::JNIEnv {
    let vm = VM.load(Ordering::Acquire);
    if vm.is_null() {
        return ptr::null_mut();
    }
    let mut env: *mut c_void = ptr::null_mut();
    // SAFETY: `vm` is the JVM's invocation interface; GetEnv reads the current thread's
    // JVM structure and writes the out-pointer (HotSpot takes no lock there).
    let code = unsafe {
        match (**vm).GetEnv {
            Some(get_env) => get_env(vm, &mut env, JNI_VERSION),
            None => -1,
        }
    };
    if code == 0 {
        env.cast()
    } else {
        ptr::null_mut()
    }
}

/// The agent's own stack walk, once its checks at start passed ([`enable_walker`]).
static LAYOUT: OnceLock<hotspot::Layout> = OnceLock::new();
/// Whether native, stub and kernel frames are written into samples (`native=y`).
static NATIVE_FRAMES: AtomicBool = AtomicBool::new(true);
/// Whether threads the JVM runs no Java on are walked too (`vmthreads=y`).
static VM_THREADS: AtomicBool = AtomicBool::new(false);

/// Walks (`on`) or leaves (`NOT_JAVA`) the stacks of threads the JVM runs no Java on, when
/// the agent's own walk is on.
pub fn set_vm_threads(on: bool) {
    VM_THREADS.store(on, Ordering::Release);
}

/// How the samples' stacks were taken.
#[derive(Debug)]
pub struct WalkCounters {
    /// Walked to their end (or depth) by the agent's own walk.
    pub walked: AtomicU64,
    /// Broken walks that AsyncGetCallTrace took further.
    pub fallback: AtomicU64,
    /// Broken walks kept as they were, by [`walker::Failure`] (index = its number).
    pub broken: [AtomicU64; 12],
}

/// How the samples' stacks were taken.
pub static WALKS: WalkCounters = WalkCounters {
    walked: AtomicU64::new(0),
    fallback: AtomicU64::new(0),
    broken: [const { AtomicU64::new(0) }; 12],
};

/// Writes native, stub and kernel frames into samples (`on`, `native=y`) or Java frames only.
pub fn set_native_frames(on: bool) {
    NATIVE_FRAMES.store(on, Ordering::Release);
}

/// Turns the agent's own stack walk on, once `layout` passed its checks; `native`: native
/// frames are written into samples.
pub fn use_walker(layout: hotspot::Layout, native: bool) {
    set_native_frames(native);
    let _ = LAYOUT.set(layout);
}

/// Checks `layout` against the running JVM ([`hotspot::Layout::check`], inside the crash
/// guard) with `methods` (jmethodIDs the JVM made), then turns the agent's own stack walk on
/// (`native`: native frames are written into samples). An error says why the walk stays off.
pub fn enable_walker(
    layout: hotspot::Layout,
    methods: &[usize],
    native: bool,
) -> Result<(), String> {
    let mut checked: Result<(), &'static str> = Err("the checks did not run");
    let code = guarded(|| checked = layout.check(methods));
    if code != GUARD_RETURNED {
        return Err("reading HotSpot's structures faulted".into());
    }
    checked?;
    use_walker(layout, native);
    Ok(())
}

/// The name HotSpot gave the code blob that holds `pc`, if the agent's walk is on and a
/// blob holds it (read inside the crash guard: a blob may be freed meanwhile).
pub fn blob_name(pc: usize) -> Option<String> {
    let layout = LAYOUT.get()?;
    let mut name = [0u8; 96];
    let mut len = 0;
    let code = guarded(|| {
        len = 0;
        if let Some(blob) = layout.find_blob(pc) {
            let at = layout.blob_name(blob);
            if hotspot::plausible(at, 1) {
                while len < name.len() {
                    let b = hotspot::u8_at(at + len);
                    if b == 0 {
                        break;
                    }
                    name[len] = b;
                    len += 1;
                }
            }
        }
    });
    (code == GUARD_RETURNED && len > 0).then(|| String::from_utf8_lossy(&name[..len]).into_owned())
}

/// Keeps the tables the walk reads up to date (libraries loaded or unloaded, stubs
/// generated) and frees the ones no handler reads any more. Not in the signal handler.
pub fn refresh_walker_tables() {
    native::refresh();
    stubs::refresh();
}

/// What became of the stacks the agent's walk took, for one verbose line: `N stacks walked`,
/// then those AsyncGetCallTrace took further and those that broke, by reason. None before
/// any walk.
pub fn walk_summary() -> Option<String> {
    let walked = WALKS.walked.load(Ordering::Relaxed);
    let fallback = WALKS.fallback.load(Ordering::Relaxed);
    let broken: Vec<String> = walker::Failure::ALL
        .iter()
        .filter_map(|&f| {
            let n = WALKS.broken.get(f as usize)?.load(Ordering::Relaxed);
            (n > 0).then(|| format!("{} {n}", f.name()))
        })
        .collect();
    if walked + fallback == 0 && broken.is_empty() {
        return None;
    }
    let mut line = format!("{walked} stacks walked through HotSpot's frames and native code");
    if fallback > 0 {
        line += &format!(", {fallback} by AsyncGetCallTrace where the walk broke");
    }
    if !broken.is_empty() {
        line += &format!(", broken: {}", broken.join(", "));
    }
    Some(line)
}

/// Whether the agent's own stack walk is on.
pub fn walker_enabled() -> bool {
    LAYOUT.get().is_some()
}

/// The registers a walk starts from, out of the handler's signal context.
#[cfg(target_arch = "x86_64")]
fn registers(context: *mut c_void) -> Option<walker::Regs> {
    if context.is_null() {
        return None;
    }
    // SAFETY: the kernel passes a valid ucontext_t to an SA_SIGINFO handler.
    let regs = unsafe { &(*context.cast::<libc::ucontext_t>()).uc_mcontext.gregs };
    let reg = |r: c_int| regs[r as usize] as usize;
    Some(walker::Regs {
        pc: reg(libc::REG_RIP),
        sp: reg(libc::REG_RSP),
        fp: reg(libc::REG_RBP),
        rbx: reg(libc::REG_RBX),
        r13: reg(libc::REG_R13),
        rax: reg(libc::REG_RAX),
    })
}

#[cfg(not(target_arch = "x86_64"))]
fn registers(_context: *mut c_void) -> Option<walker::Regs> {
    None
}

/// Takes the stack of the interrupted thread (JNI environment `env`) into `frames` (`room`
/// of them, then as many of scratch room): the agent's own walk (at most `depth` Java frames,
/// native and stub frames above them in the rest of the room), with AsyncGetCallTrace where
/// that walk broke and AsyncGetCallTrace gets further. Returns the frames written, or
/// AsyncGetCallTrace's (or the guard's) failure code.
fn walk_stack(
    env: *mut sys::JNIEnv,
    frames: *mut CallFrame,
    room: usize,
    depth: usize,
    context: *mut c_void,
    walk: AsyncGetCallTrace,
) -> i32 {
    let agct = |at: *mut CallFrame, depth: usize| -> i32 {
        let mut trace = CallTrace {
            env,
            num_frames: 0,
            frames: at,
        };
        // SAFETY: `at` points at `depth` or more frames of this slot, which this handler owns
        // (the slot is WRITING); `walk` is AsyncGetCallTrace, called on the interrupted
        // thread with its signal context, inside guard.c's fault guard; its signature differs
        // from the guard's only in the pointer type of its first argument.
        let guarded = unsafe {
            hprof_walk_guarded(
                std::mem::transmute::<AsyncGetCallTrace, GuardedFn>(walk),
                (&mut trace as *mut CallTrace).cast(),
                depth as c_int,
                context,
            )
        };
        match guarded {
            0 => trace.num_frames,
            1 => WALK_CRASHED,
            _ => WALK_SKIPPED,
        }
    };
    let (Some(layout), Some(regs)) = (LAYOUT.get(), registers(context)) else {
        return agct(frames, depth.min(room));
    };
    // SAFETY: `frames` points at this slot's 2 * `room` frames, owned by this handler.
    let (out, scratch) = unsafe {
        (
            std::slice::from_raw_parts_mut(frames, room),
            frames.add(room),
        )
    };
    let mut progress = walker::Progress {
        depth: 0,
        java: 0,
        before_java: 0,
        failure: None,
    };
    let native = NATIVE_FRAMES.load(Ordering::Relaxed);
    let result = guarded(|| {
        walker::Walk::new(
            layout,
            env as usize,
            native,
            &mut *out,
            depth,
            &mut progress,
        )
        .run(&regs)
    });
    // SAFETY: the walk wrote `progress` with volatile stores before any read that could
    // fault; after a fault the guard jumped back here, and this read sees those stores.
    let mut progress = unsafe { ptr::read_volatile(&progress) };
    match result {
        GUARD_RETURNED => {}
        GUARD_CRASHED => progress.failure = Some(walker::Failure::Crashed),
        _ => return WALK_SKIPPED,
    }
    let Some(failure) = progress.failure else {
        WALKS.walked.fetch_add(1, Ordering::Relaxed);
        return progress.depth as i32;
    };
    // The walk broke: AsyncGetCallTrace may get further (its Java frames after the native
    // and stub frames the walk put on top).
    let top = if progress.java > 0 {
        progress.before_java
    } else {
        progress.depth
    };
    let wanted = depth.min(room.saturating_sub(top));
    if wanted > 0 && !env.is_null() {
        let taken = agct(scratch, wanted);
        if taken > 0 && taken as usize > progress.java {
            let taken = (taken as usize).min(wanted);
            // SAFETY: both ranges lie in this slot (scratch after the first `room` frames,
            // `top + taken <= room`), and do not overlap.
            unsafe { ptr::copy_nonoverlapping(scratch, frames.add(top), taken) };
            WALKS.fallback.fetch_add(1, Ordering::Relaxed);
            return (top + taken) as i32;
        }
    }
    if let Some(counter) = WALKS.broken.get(failure as usize) {
        counter.fetch_add(1, Ordering::Relaxed);
    }
    // The frames walked, then why the walk stopped (in place of the last one if full).
    let at = progress.depth.min(room - 1);
    out[at] = CallFrame {
        bci: FRAME_BROKEN,
        method: failure as usize as sys::jmethodID,
    };
    (at + 1) as i32
}

/// The perf event whose overflow the handler is taking a sample for: armed again as soon as
/// its call chain is copied (or when dropped), so that it counts the thread's CPU time while
/// the handler walks the stack (a walk's time, not counted, would be CPU time never sampled).
struct Rearm(Option<c_int>);

impl Rearm {
    /// The event, until it is armed again.
    fn fd(&self) -> Option<c_int> {
        self.0
    }

    /// Arms the event again (once).
    fn now(&mut self) {
        if let Some(fd) = self.0.take() {
            perf::rearm(fd);
        }
    }
}

impl Drop for Rearm {
    fn drop(&mut self) {
        self.now();
    }
}

/// Takes a sample into a free slot of the ring: the kernel frames of the call chain of the
/// perf event in `rearm`, if any (the event is armed again once they are copied), then the
/// walked stack.
fn take_sample(kind: SampleKind, context: *mut c_void, rearm: &mut Rearm) {
    if !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    let (Some(ring), Some(&walk)) = (RING.get(), WALK.get()) else {
        return;
    };
    COUNTERS.signals.fetch_add(1, Ordering::Relaxed);
    let slots = ring.slots.len();
    let mut claimed = None;
    for _ in 0..4 {
        let index = ring.next.fetch_add(1, Ordering::Relaxed) % slots;
        if let Some(slot) = ring.slots.get(index)
            && slot
                .state
                .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            claimed = Some((index, slot));
            break;
        }
    }
    let Some((index, slot)) = claimed else {
        COUNTERS.dropped.fetch_add(1, Ordering::Relaxed);
        return;
    };
    slot.time.store(monotonic_nanos(), Ordering::Relaxed);
    let env = current_env();
    let walk_native_thread = env.is_null()
        && kind != SampleKind::Wall(IDENTIFY)
        && VM_THREADS.load(Ordering::Relaxed)
        && LAYOUT.get().is_some();
    let mut kernel = 0;
    let num_frames = if env.is_null() && !walk_native_thread {
        NOT_JAVA
    } else if kind == SampleKind::Wall(IDENTIFY) {
        IDENTIFIED
    } else {
        let depth = (DEPTH.load(Ordering::Relaxed) as usize).min(ring.depth);
        // Each slot has 2 * `ring.depth` frames: the first `ring.depth` hold the kernel's
        // frames, then the walked ones; the rest is the walk's scratch room (where
        // AsyncGetCallTrace writes when the agent's own walk broke).
        let start = index * ring.depth * 2;
        // The kernel's frames go first, in the room the ring has beyond `depth` (`depth=`
        // counts the walked Java frames).
        let room = ring.depth - depth;
        // (`native=n`: Java frames only, no kernel frame either.)
        let chain = rearm.fd().filter(|_| NATIVE_FRAMES.load(Ordering::Relaxed));
        if let (Some(fd), Some(cells)) = (chain, ring.frames.get(start..start + room)) {
            // SAFETY: UnsafeCell<CallFrame> has CallFrame's layout; this handler owns the
            // slot's frames (the slot is WRITING).
            let out = unsafe {
                std::slice::from_raw_parts_mut(UnsafeCell::raw_get(cells.as_ptr()), room)
            };
            kernel = perf::kernel_frames(fd, out);
        }
        rearm.now();
        let frames = ring
            .frames
            .get(start + kernel)
            .map_or(ptr::null_mut(), UnsafeCell::get);
        if depth == 0 {
            // (depth=0: no frame walked.)
            0
        } else if frames.is_null() {
            WALK_SKIPPED
        } else {
            walk_stack(env, frames, ring.depth - kernel, depth, context, walk)
        }
    };
    let (code, value) = match kind {
        SampleKind::Cpu(weight) => (KIND_CPU, weight),
        SampleKind::Wall(value) => (KIND_WALL, value),
    };
    // A wall-clock sample's thread CPU time as the handler ends (its own work included), so
    // that the ticker can tell whether the thread ran since.
    let cpu = match kind {
        SampleKind::Wall(_) => thread_cpu_nanos(current_tid()).unwrap_or(0),
        SampleKind::Cpu(_) => 0,
    };
    slot.cpu.store(cpu, Ordering::Relaxed);
    slot.kind.store(code, Ordering::Relaxed);
    slot.value.store(value, Ordering::Relaxed);
    slot.env.store(env as usize, Ordering::Relaxed);
    slot.tid.store(current_tid(), Ordering::Relaxed);
    slot.num_frames.store(num_frames, Ordering::Relaxed);
    slot.kernel.store(kernel as u32, Ordering::Relaxed);
    slot.vthread.store(
        if env.is_null() || num_frames == IDENTIFIED {
            0
        } else {
            carriers::sampled(env as usize)
        },
        Ordering::Relaxed,
    );
    slot.state.store(READY, Ordering::Release);
}
