//! The asynchronous sampler behind `cpu=samples` and `cpu=wall`: threads are interrupted by a
//! signal and their Java stack is taken where they are, with HotSpot's `AsyncGetCallTrace`,
//! instead of at the next safepoint.
//!
//! - `cpu=samples`: a timer on each thread's CPU clock sends it SIGPROF after every `interval`
//!   of CPU time it used, so threads are sampled in proportion to their CPU use, wherever the
//!   JIT put them.
//! - `cpu=wall`: every `interval` of wall time, a ticker queues SIGPROF to at most
//!   [`WALL_THREADS_PER_TICK`](wall::WALL_THREADS_PER_TICK) Java threads (round robin), with
//!   the thread's JVMTI state, which becomes the root frame of the sample (`<SLEEPING>`,
//!   `<BLOCKED>`, ...).
//!
//! The signal handler ([`crate::signal`]) writes into a preallocated ring; the agent thread of
//! this engine drains it into the trace store every tick and before every dump. A sample
//! whose walk failed is kept under a pseudo-frame naming why (`<GC active>`, ...).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use crate::code_names;
use crate::engine::sigprof_watch;
use crate::engine::ticker::Ticker;
use crate::engine::vm_threads::VmThreads;
use crate::engine::{Context, Engine, Hook, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Event, GlobalRef, Jni, jlocation, jmethodID, jthread};
use crate::output::ProfileOutput;
use crate::signal::{self, Sample, SampleKind, ThreadTimer, TimerSource};
use crate::trace_store::Code;

mod identify;
mod timers;
mod virtual_threads;
mod walk;
mod wall;

pub(crate) use identify::task_ids;
pub use walk::available;
use wall::{IdleWall, state_name};

/// Name of the sampler's agent thread.
pub const THREAD_NAME: &str = "HPROF cpu sampling thread";

/// Samples the ring holds between two drains, at most (fewer for deep stacks: see
/// [`RING_FRAMES`]).
const RING_SLOTS: usize = 1024;
/// Samples the ring holds between two drains, at least.
const MIN_RING_SLOTS: usize = 32;
/// Frames the ring holds in all (16 bytes each: 8 MB): 1,024 samples of 512 frames, or 32 of
/// 16,384.
const RING_FRAMES: usize = 1024 * 512;
/// Frames per sample the ring has room for, at least (a later attached session may ask for
/// more than the first did).
const MIN_RING_DEPTH: usize = 64;
/// The deepest stack the ring has room for: `depth=` above it is cut to it, with a warning.
pub const MAX_RING_DEPTH: usize = 16_384;

/// How often the agent thread drains the ring, at most (the tick of `cpu=samples`).
const DRAIN_PERIOD_MS: i64 = 20;
/// How often the agent thread drains a ring of fewer slots, at most.
const MIN_DRAIN_PERIOD_MS: i64 = 2;

/// What the engine knows of a Java thread it samples.
#[derive(Debug)]
struct SampledThread {
    /// The thread object, for its state (`cpu=wall`).
    thread: GlobalRef,
    /// What interrupts it after each interval of its CPU time (`cpu=samples`).
    timer: Option<ThreadTimer>,
    /// Its JNI environment.
    env: usize,
}

/// Threads by kernel id, and thread serials by JNI environment (what a sample carries).
#[derive(Debug, Default)]
struct Registry {
    by_tid: BTreeMap<i32, SampledThread>,
    serial_by_env: HashMap<usize, u32>,
    /// Environments of threads that ended, forgotten at the drain after next.
    ended: Vec<usize>,
    /// Timers of threads seen at start that the JVM does not know yet (or never will: JIT
    /// and GC threads, whose first signal tells), by kernel id.
    unknown: HashMap<i32, ThreadTimer>,
    /// The last thread the wall-clock ticker signalled (the next tick starts after it).
    wall_cursor: i32,
    /// Waiting threads' last wall-clock samples, by kernel id.
    idle: HashMap<i32, IdleWall>,
    /// Java threads that were running when the sampler started, by JNI environment, until
    /// their kernel thread answers [`signal::IDENTIFY`]: (thread, serial).
    unidentified: HashMap<usize, (GlobalRef, u32)>,
    /// Threads that answered [`signal::IDENTIFY`] (Java or not).
    answers: usize,
    /// Virtual threads named in the output (`thread=y`, JDK 21+): serial by Java thread id.
    vthreads: HashMap<u64, u32>,
    /// Samples of virtual threads not named yet, by Java thread id (their carrier's serial in
    /// place of the thread's until then).
    pending: HashMap<u64, Vec<Pending>>,
    /// Samples in `pending`.
    pending_count: usize,
    /// When the virtual threads named last had their liveness checked.
    vthreads_checked: Option<std::time::Instant>,
    /// JNI environments of the agent's own threads: never sampled (per-thread clocks give
    /// them no timer; the process-wide timer's signal that lands on one is left out, or the
    /// drain's own work, naming frames, would be sampled and named in turn).
    agent_envs: std::collections::HashSet<usize>,
}

/// The asynchronous sampler.
#[derive(Debug)]
pub struct AsyncSampler {
    wall: bool,
    ticker: Ticker,
    registry: Mutex<Registry>,
    /// What interrupts threads for CPU samples (a [`TimerSource`] as a number), chosen at
    /// start.
    source: std::sync::atomic::AtomicU8,
    /// Samples of threads the front-end turned sampling off for, or over the trace limit.
    dropped: Mutex<u64>,
    /// Whether virtual threads' mounts are followed, to charge their samples to them.
    follows_vthreads: std::sync::atomic::AtomicBool,
    /// Whether the JVM's threads that run no Java are sampled too (`vmthreads=y`).
    samples_vm_threads: std::sync::atomic::AtomicBool,
    /// Those threads' serials.
    vm_threads: Mutex<VmThreads>,
    /// Samples with kernel frames drained before the kernel's symbols were read, which wait
    /// for them (see [`AsyncSampler::until_named`]).
    held: Mutex<Vec<Pending>>,
    /// Held through each drain: a front-end command that changes which samples count
    /// (sampling on or off, clearing) drains the ring and makes its change under it, so the
    /// samples taken before the command follow the rules before it ([`AsyncSampler::drain_then`]).
    draining: Mutex<()>,
    /// Set once started.
    started: Started,
}

/// The running sampler, for the virtual threads' unmount callback (a JVMTI extension event
/// the sampler sets itself, outside the profiler's dispatch).
static SAMPLER: crate::engine::Current<(&'static Context, &'static AsyncSampler)> =
    crate::engine::Current::new();

fn running() -> Option<(&'static Context, &'static AsyncSampler)> {
    SAMPLER.get()
}

/// Forgets the sampler of the session that stopped (see [`crate::engine::forget_running`]).
pub(crate) fn forget_running() {
    SAMPLER.clear();
}

impl AsyncSampler {
    /// A sampler of CPU time (`wall` false) or wall time.
    pub fn new(wall: bool) -> AsyncSampler {
        AsyncSampler {
            wall,
            ticker: Ticker::new(),
            registry: Mutex::new(Registry::default()),
            source: std::sync::atomic::AtomicU8::new(0),
            dropped: Mutex::new(0),
            follows_vthreads: std::sync::atomic::AtomicBool::new(false),
            samples_vm_threads: std::sync::atomic::AtomicBool::new(false),
            vm_threads: Mutex::new(VmThreads::default()),
            held: Mutex::new(Vec::new()),
            draining: Mutex::new(()),
            started: Started::new(),
        }
    }

    /// What interrupts threads for CPU samples.
    pub fn source(&self) -> TimerSource {
        match self.source.load(std::sync::atomic::Ordering::Relaxed) {
            0 => TimerSource::Perf,
            1 => TimerSource::Posix,
            _ => TimerSource::Process,
        }
    }

    /// Whether this is `cpu=wall`.
    pub fn is_wall(&self) -> bool {
        self.wall
    }

    fn interval(ctx: &Context) -> Duration {
        Duration::from_millis(u64::from(ctx.options.interval_ms.max(1)))
    }

    /// The body of the agent thread.
    fn run(&self, ctx: &Context, jni: Jni) {
        let sampler = self;
        if let Ok(mut registry) = sampler.registry.lock() {
            registry.agent_envs.insert(jni.raw() as usize);
        }
        let period = if sampler.wall {
            i64::from(ctx.options.interval_ms.max(1))
        } else {
            // A ring of fewer slots (deep stacks) is drained as much more often.
            let slots = signal::ring_slots().max(1) as i64;
            (DRAIN_PERIOD_MS.max(i64::from(ctx.options.interval_ms)) * slots / RING_SLOTS as i64)
                .max(MIN_DRAIN_PERIOD_MS)
        };
        sampler.ticker.run(period, || {
            jni.with_local_frame(64, || {
                sigprof_watch::check(period as u64, sampler);
                if sampler.wall {
                    sampler.signal_wall_threads(ctx, jni);
                }
                sampler.drain(ctx, jni);
            });
        });
        // (Its environment may be a later thread's.)
        if let Ok(mut registry) = sampler.registry.lock() {
            registry.agent_envs.remove(&(jni.raw() as usize));
        }
    }

    /// Moves the ring's samples into the trace store.
    pub fn drain(&self, ctx: &Context, jni: Jni) {
        self.drain_then(ctx, jni, || ());
    }

    /// Moves the ring's samples into the trace store, then runs `change` before any other
    /// drain: the samples the ring held are counted (or not) as they were taken, before the
    /// change (the front-end's sampling on/off or clear); those taken after, by it.
    pub fn drain_then<T>(&self, ctx: &Context, jni: Jni, change: impl FnOnce() -> T) -> T {
        let _draining = self.draining.lock();
        self.drain_samples(ctx, jni, false);
        change()
    }

    /// Moves the ring's samples into the trace store; samples of virtual threads not named
    /// yet wait for their name, unless `final_drain` (before a dump: they go to their carrier).
    fn drain_samples(&self, ctx: &Context, jni: Jni, final_drain: bool) {
        signal::refresh_walker_tables();
        // The front-end's CONTROL may have changed the depth: the next walks follow it, and
        // the samples taken before are cut to it.
        let depth = ctx.depth();
        signal::set_depth(depth);
        warn_if_deeper_than_the_ring(depth);
        // Which threads the front-end turned sampling off for, before the ring is read: it
        // holds samples taken before now.
        let unsampled = unsampled_threads(ctx);
        let mut pending: Vec<Pending> = Vec::new();
        let mut vm_samples: Vec<(i32, Pending)> = Vec::new();
        // The latest wall-clock sample of each platform thread: serial -> (kernel id, thread
        // CPU time, time taken), for [`IdleWall`].
        let mut latest_wall: HashMap<u32, (i32, u64, u64)> = HashMap::new();
        {
            let Ok(mut registry) = self.registry.lock() else {
                return;
            };
            let vm_threads = self.samples_vm_threads();
            let known_vm = self.vm_threads.lock().ok();
            let mut not_java = Vec::new();
            let mut identified = Vec::new();
            signal::drain(|sample: &Sample<'_>| {
                if sample.num_frames == signal::NOT_JAVA {
                    not_java.push(sample.tid);
                    return;
                }
                if sample.num_frames == signal::IDENTIFIED {
                    identified.push((sample.tid, sample.env));
                    return;
                }
                if registry.agent_envs.contains(&sample.env) {
                    return;
                }
                let carrier = registry
                    .serial_by_env
                    .get(&sample.env)
                    .copied()
                    .or_else(|| known_vm.as_ref().and_then(|vm| vm.serial(sample.tid)));
                let serial = match sample.vthread {
                    0 => carrier,
                    vthread => match registry.vthreads.get(&vthread) {
                        Some(&serial) => Some(serial),
                        None => carrier,
                    },
                };
                // The walked frames kept: `depth=` counts their Java frames (the native and
                // stub frames among and above them come in addition).
                let kept = code_names::kept(sample.frames.iter().map(|f| f.bci), depth);
                // The kernel's frames (a sample in a system call, an interrupt or a fault)
                // above the walked ones.
                let kernel = code_names::frame_location(Code::Kernel);
                let frames: Vec<(usize, jlocation)> = sample
                    .kernel
                    .iter()
                    .map(|f| (f.method as usize, kernel))
                    .chain(sample.frames.iter().take(kept).map(|f| {
                        let location = jlocation::from(f.bci);
                        (
                            f.method as usize,
                            if code_names::is_code_frame(location) || f.bci >= 0 {
                                location
                            } else {
                                -1
                            },
                        )
                    }))
                    .collect();
                let failure = (sample.num_frames <= 0).then(|| failure_name(sample.num_frames));
                let (state, weight) = match sample.kind {
                    SampleKind::Wall(state) => (Some(state_name(state)), 1),
                    SampleKind::Cpu(weight) => (None, u64::from(weight)),
                };
                if state.is_some()
                    && sample.vthread == 0
                    && sample.cpu != 0
                    && let Some(serial) = serial
                    && registry.by_tid.contains_key(&sample.tid)
                {
                    let latest = latest_wall.entry(serial).or_insert((sample.tid, 0, 0));
                    if sample.time >= latest.2 {
                        *latest = (sample.tid, sample.cpu, sample.time);
                    }
                }
                if vm_threads
                    && carrier.is_none()
                    && sample.vthread == 0
                    && !registry.by_tid.contains_key(&sample.tid)
                {
                    // A thread of the JVM's own (vmthreads=y), sampled for the first time.
                    vm_samples.push((
                        sample.tid,
                        (None, frames, failure, state, weight, sample.time),
                    ));
                    return;
                }
                let unnamed = (sample.vthread != 0
                    && !registry.vthreads.contains_key(&sample.vthread))
                .then_some(sample.vthread);
                match unnamed {
                    Some(vthread) if registry.pending_count < virtual_threads::MAX_PENDING => {
                        registry.pending_count += 1;
                        registry.pending.entry(vthread).or_default().push((
                            serial,
                            frames,
                            failure,
                            state,
                            weight,
                            sample.time,
                        ));
                    }
                    _ => pending.push((serial, frames, failure, state, weight, sample.time)),
                }
            });
            // Threads that ended before this drain have had their last samples drained.
            for env in std::mem::take(&mut registry.ended) {
                registry.serial_by_env.remove(&env);
            }
            registry.take_answers(jni, not_java, identified, vm_threads);
        }
        if self.samples_vm_threads() {
            pending.extend(self.vm_thread_samples(ctx, vm_samples));
        }
        let waiting = self.registry.lock().map(|r| r.pending_count).unwrap_or(0) > 0;
        if self.follows_vthreads() || waiting {
            // Once virtual threads are no longer followed (the session stopped), the samples
            // still waiting for a name go to their carriers.
            let all = final_drain || !self.follows_vthreads();
            pending.extend(self.name_virtual_threads(ctx, jni, all));
        }
        let pending = self.until_named(pending, final_drain);
        if pending.is_empty() || ctx.depth() == 0 {
            return;
        }
        // Native and kernel frames are named before the trace table is locked (naming the
        // first address of a library reads its symbols).
        let located = Self::locate_code_frames(&pending);
        let Ok(mut traces) = ctx.traces.lock() else {
            return;
        };
        let mut dropped = 0;
        let timed_output = ctx.options.format != crate::options::Format::Text;
        let mut timed = Vec::new();
        let mut idle = Vec::new();
        for (serial, frames, failure, state, weight, time) in pending {
            if serial.is_some_and(|s| unsampled.contains(&s)) {
                continue;
            }
            let returns = code_names::returns(&frames);
            let mut frames: Vec<(jmethodID, jlocation)> = frames
                .iter()
                .enumerate()
                .map(|(index, &(method, location))| {
                    if location == jlocation::from(signal::FRAME_BROKEN) {
                        let reason = code_names::broken_reason(method);
                        return (traces.pseudo_method(&ctx.ids, reason), -1);
                    }
                    match located.get(&(location, method, returns(index))) {
                        Some((code, at)) => (code_names::key(&mut traces, &ctx.ids, *code, at), -1),
                        None => (method as jmethodID, location),
                    }
                })
                .collect();
            if let Some(reason) = failure {
                // The frames of native and kernel code the handler recorded stay above the
                // reason the walk failed.
                frames.retain(|&(method, _)| traces.is_code_method(method));
                let method = traces.pseudo_method(&ctx.ids, reason);
                frames.push((method, -1));
            }
            if let Some(state) = state {
                let method = traces.pseudo_method(&ctx.ids, state);
                frames.push((method, -1));
                // The thread's latest wall-clock sample, kept while it waits.
                if let Some(serial) = serial
                    && let Some(&(tid, cpu, at)) = latest_wall.get(&serial)
                    && at == time
                {
                    idle.push((
                        tid,
                        IdleWall {
                            serial,
                            state,
                            frames: frames.iter().map(|&(m, l)| (m as usize, l)).collect(),
                            cpu,
                        },
                    ));
                }
            }
            match traces.record(
                ctx.jvmti,
                jni,
                &ctx.ids,
                &frames,
                serial.unwrap_or(0),
                weight,
            ) {
                Some(trace) if timed_output => timed.push(crate::output::TimedSample {
                    time,
                    trace,
                    thread: serial.unwrap_or(0),
                    weight: u32::try_from(weight).unwrap_or(u32::MAX),
                    wall: state.is_some(),
                }),
                Some(_) => {}
                None => dropped += weight,
            }
        }
        drop(traces);
        if !idle.is_empty()
            && let Ok(mut registry) = self.registry.lock()
        {
            for (tid, last) in idle {
                // (Only threads still known: one that ended meanwhile is gone for good.)
                if registry.by_tid.contains_key(&tid) {
                    registry.idle.insert(tid, last);
                }
            }
        }
        if !timed.is_empty() {
            ctx.with_output(|out| out.write(|w| w.timed_samples(&timed)));
        }
        if dropped > 0
            && let Ok(mut total) = self.dropped.lock()
        {
            *total += dropped;
        }
    }

    /// Whether the JVM's threads that run no Java are sampled (`vmthreads=y`).
    fn samples_vm_threads(&self) -> bool {
        self.samples_vm_threads
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The samples of the JVM's own threads (`vmthreads=y`) drained without a serial, with
    /// one: the threads sampled for the first time get theirs (and a THREAD START record)
    /// now. Once a second, the threads that appeared since get a timer, and those that ended
    /// a THREAD END record.
    fn vm_thread_samples(&self, ctx: &Context, samples: Vec<(i32, Pending)>) -> Vec<Pending> {
        // The registry's lock is taken before this one elsewhere (the drain): never inside.
        let known: std::collections::HashSet<i32> = match self.registry.lock() {
            Ok(registry) => registry
                .by_tid
                .keys()
                .chain(registry.unknown.keys())
                .copied()
                .collect(),
            Err(_) => return Vec::new(),
        };
        let Ok(mut vm) = self.vm_threads.lock() else {
            return Vec::new();
        };
        let mut new: Vec<i32> = samples.iter().map(|(tid, _)| *tid).collect();
        new.sort_unstable();
        new.dedup();
        vm.register(ctx, &new);
        let appeared = vm.scan(ctx, |tid| known.contains(&tid));
        let timers: Vec<(i32, ThreadTimer)> = appeared
            .into_iter()
            .filter_map(|tid| {
                ThreadTimer::start(self.source(), tid, Self::interval(ctx))
                    .ok()
                    .map(|timer| (tid, timer))
            })
            .collect();
        let serials: Vec<Option<u32>> = samples.iter().map(|(tid, _)| vm.serial(*tid)).collect();
        drop(vm);
        if let Ok(mut registry) = self.registry.lock() {
            registry.unknown.extend(timers);
        }
        samples
            .into_iter()
            .zip(serials)
            .filter_map(|((_, mut sample), serial)| {
                sample.0 = Some(serial?);
                Some(sample)
            })
            .collect()
    }

    /// The samples of `pending` that can be recorded now, with those held before: samples
    /// with kernel frames wait while the kernel's symbols are being read (on a thread of their
    /// own, `code_names::load_kernel_symbols`), at most [`MAX_HELD`] of them; a final drain
    /// (before a dump) waits for the symbols, at most [`KERNEL_SYMBOLS_WAIT`].
    fn until_named(&self, pending: Vec<Pending>, final_drain: bool) -> Vec<Pending> {
        let Ok(mut held) = self.held.lock() else {
            return pending;
        };
        let kernel = code_names::frame_location(Code::Kernel);
        let has_kernel = |p: &Pending| p.1.iter().any(|&(_, location)| location == kernel);
        if !code_names::kernel_symbols_ready() {
            if final_drain || held.len() >= MAX_HELD {
                code_names::wait_for_kernel_symbols(KERNEL_SYMBOLS_WAIT);
            } else {
                let (waiting, ready): (Vec<Pending>, Vec<Pending>) =
                    pending.into_iter().partition(has_kernel);
                held.extend(waiting);
                return ready;
            }
        }
        let mut all = std::mem::take(&mut *held);
        all.extend(pending);
        all
    }

    /// The locations of the native, kernel and stub frames of `pending` (by frame kind,
    /// address, and whether the address is a return address: see [`code_names::returns`]).
    fn locate_code_frames(
        pending: &[Pending],
    ) -> HashMap<(jlocation, usize, bool), (Code, hprof_symbols::Location)> {
        let mut located = HashMap::new();
        for (_, frames, _, _, _, _) in pending {
            let returns = code_names::returns(frames);
            for (index, &(address, location)) in frames.iter().enumerate() {
                let key = (location, address, returns(index));
                if located.contains_key(&key) {
                    continue;
                }
                if let Some(at) = code_names::locate_frame(location, address, key.2) {
                    located.insert(key, at);
                }
            }
        }
        located
    }
}

/// Samples with kernel frames that wait for the kernel's symbols, at most (past them the drain
/// waits for the symbols).
const MAX_HELD: usize = 1 << 16;

/// Longest a drain waits for the kernel's symbols (then kernel frames are named by address).
const KERNEL_SYMBOLS_WAIT: Duration = Duration::from_secs(10);

/// A drained sample: thread serial, frames (jmethodIDs as numbers), why the walk failed, the thread's state, the
/// intervals it stands for, and when it was taken (`CLOCK_MONOTONIC` nanoseconds).
type Pending = (
    Option<u32>,
    Vec<(usize, jlocation)>,
    Option<&'static str>,
    Option<&'static str>,
    u64,
    u64,
);

/// `JVMTI_THREAD_STATE_ALIVE`.
const JVMTI_THREAD_STATE_ALIVE: u32 = 0x0001;
/// Says once per depth, on an `HPROF WARNING` line, that stacks are cut to the ring's depth
/// when `depth` (`depth=`, or the front-end's CONTROL) asks for more.
fn warn_if_deeper_than_the_ring(depth: usize) {
    static WARNED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let ring = signal::ring_depth();
    if depth > ring && WARNED.swap(depth, std::sync::atomic::Ordering::Relaxed) != depth {
        let why = if ring < MAX_RING_DEPTH {
            "the frames the sampler's ring was made for when it started in this JVM"
        } else {
            "the most the sampler's ring, preallocated for the signal handler, holds"
        };
        eprintln!(
            "HPROF WARNING: depth={depth}: cpu=samples and cpu=wall keep the {ring} innermost frames of each stack ({why}); sampler=jvmti keeps them all"
        );
    }
}

/// Serials of the threads the front-end turned sampling off for.
fn unsampled_threads(ctx: &Context) -> Vec<u32> {
    match ctx.threads.lock() {
        Ok(threads) => threads
            .live()
            .filter(|t| !t.sampled)
            .map(|t| t.serial)
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// The pseudo-frame of a sample whose stack could not be walked, by AsyncGetCallTrace's
/// result code (or the guard's).
fn failure_name(code: i32) -> &'static str {
    match code {
        0 => "<no Java frame>",
        -1 => "<no class load>",
        -2 => "<GC active>",
        -3 => "<unknown not Java>",
        -4 => "<not walkable not Java>",
        -5 => "<unknown Java>",
        -6 => "<not walkable Java>",
        -7 => "<unknown state>",
        -8 => "<thread exit>",
        -9 => "<deoptimizing>",
        -10 => "<safepoint>",
        signal::WALK_CRASHED => "<walk crashed>",
        signal::WALK_SKIPPED => "<walk skipped>",
        _ => "<unknown>",
    }
}

impl Engine for AsyncSampler {
    fn hooks(&self) -> &'static [Hook] {
        &[
            Hook::ThreadStart,
            Hook::ThreadEnd,
            Hook::ClassPrepare,
            Hook::DynamicCodeGenerated,
            Hook::CpuSamples,
            Hook::Drain,
        ]
    }

    fn thread_start(&self, ctx: &Context, jni: Jni, thread: jthread) {
        if self.started.get().is_some() {
            self.thread_started(ctx, jni, thread);
        }
    }

    fn thread_end(&self, _ctx: &Context, jni: Jni, _thread: jthread) {
        if self.started.get().is_some() {
            self.thread_ended(jni);
        }
    }

    fn class_prepare(&self, ctx: &Context, jni: Jni, class: crate::jvmti::jclass) {
        AsyncSampler::prepare_class(ctx.jvmti, jni, class);
    }

    fn dynamic_code_generated(&self, name: &str, address: usize, length: usize) {
        signal::stubs::generated(name, address, length);
    }

    fn cpu_samples(&self, ctx: &Context, cutoff: f64) {
        if self.started.get().is_none() {
            return;
        }
        if let Some(jni) = ctx.vm.jni() {
            jni.with_local_frame(64, || self.drain(ctx, jni));
        }
        ctx.with_output(|out| crate::engine::cpu_samples::write_samples(ctx, out, cutoff));
    }

    fn set_sampling(&self, ctx: &Context, thread: u64, on: bool) {
        if self.started.get().is_some() {
            crate::engine::cpu_samples::set_sampling(ctx, thread, on);
        }
    }

    fn drain_then(&self, ctx: &Context, jni: Jni, then: &mut dyn FnMut()) {
        if self.started.get().is_some() {
            AsyncSampler::drain_then(self, ctx, jni, then);
        } else {
            then();
        }
    }

    fn dump_message(&self) -> &'static str {
        if self.wall {
            " CPU usage by sampling threads' wall time ..."
        } else {
            " CPU usage by sampling running threads ..."
        }
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.compiled_method_load = true;
    }

    fn on_load(&self, ctx: &Context) -> Result<(), AgentError> {
        let jvmti = ctx.jvmti;
        // AsyncGetCallTrace walks only while ClassLoad is enabled; ClassPrepare creates the
        // jmethodIDs it reports.
        for event in [Event::ClassLoad, Event::ClassPrepare] {
            jvmti
                .set_event(event, true)
                .map_err(|e| AgentError::loading(format!("can't enable {event:?} ({e})")))?;
        }
        // thread=y on JDK 21+: virtual threads' samples are charged to them, which needs
        // can_support_virtual_threads, asked for now.
        virtual_threads::ask_for_capability(ctx);
        Ok(())
    }

    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), AgentError> {
        if !self.started.set(ctx) || !SAMPLER.set((ctx, self)) {
            return Err(AgentError::starting("the CPU sampler was started twice"));
        }
        walk::keep_debug_info(ctx)?;
        let depth = (ctx.options.depth as usize).clamp(MIN_RING_DEPTH, MAX_RING_DEPTH);
        let slots = (RING_FRAMES / depth).clamp(MIN_RING_SLOTS, RING_SLOTS);
        signal::install(ctx.vm, slots, depth).map_err(AgentError::starting)?;
        warn_if_deeper_than_the_ring(ctx.depth());
        signal::set_depth(ctx.depth());
        walk::prepare_loaded_classes(ctx, jni);
        Self::start_walker(ctx, jni);
        if !self.wall {
            self.start_timer_source(ctx)?;
        }
        if ctx.options.vm_threads {
            let refused = if self.wall {
                Some("it applies to cpu=samples only")
            } else if self.source() == TimerSource::Process {
                Some("the process-wide timer samples whichever thread runs")
            } else if !signal::walker_enabled() {
                Some("the agent's own stack walk is off")
            } else {
                None
            };
            match refused {
                None => {
                    self.samples_vm_threads
                        .store(true, std::sync::atomic::Ordering::Relaxed);
                    signal::set_vm_threads(true);
                }
                Some(why) if ctx.options.verbose => {
                    eprintln!("HPROF: vmthreads=y samples no thread of the JVM's own: {why}");
                }
                Some(_) => {}
            }
        }
        if !self.wall && self.source() != TimerSource::Process {
            self.arm_running_threads(ctx);
        }
        // The thread that starts the sampler: the main thread at VM init (sampled), or the
        // JVM's attach listener for a late start (not worth sampling: it answers attaches).
        if let Ok(thread) = ctx.jvmti.current_thread() {
            let listener = ctx
                .jvmti
                .thread_info(thread)
                .is_ok_and(|info| info.name == "Attach Listener");
            if !listener {
                self.thread_started(ctx, jni, thread);
            }
            jni.delete_local_ref(thread);
        }
        self.follow_virtual_threads(ctx, jni);
        signal::set_active(true);
        self.identify_running_threads(ctx, jni);
        // (After the running threads were listed, signalled and given timers: the loader's
        // thread gets none.)
        if !self.wall && self.source() == TimerSource::Perf && signal::perf::records_kernel_frames()
        {
            code_names::load_kernel_symbols();
        }
        self.ticker.start(
            ctx.jvmti,
            jni,
            THREAD_NAME,
            "the CPU sampling thread",
            move |jni| self.run(ctx, jni),
        )
    }

    fn stop(&self, ctx: &Context) {
        if ctx.options.verbose
            && let Some(summary) = signal::walk_summary()
        {
            eprintln!("HPROF: cpu samples: {summary}");
        }
        self.unfollow_virtual_threads(ctx);
        if !self.wall && self.source() == TimerSource::Process {
            let _ = signal::process_timer(None);
        }
        signal::set_active(false);
        signal::set_vm_threads(false);
        self.ticker.stop();
        self.disarm_thread_timers();
    }

    fn prepare(&self, ctx: &Context, jni: Option<Jni>) {
        sigprof_watch::check(DRAIN_PERIOD_MS as u64, self);
        sigprof_watch::report_foreign();
        if let Some(jni) = jni {
            let _draining = self.draining.lock();
            jni.with_local_frame(64, || self.drain_samples(ctx, jni, true));
        }
    }

    fn release(&self, ctx: &Context) {
        // The timers are gone (stop): the SIGPROF handler and the walk's crash guard go too,
        // once the signals already sent have been handled.
        if !signal::uninstall() && ctx.options.verbose {
            eprintln!(
                "HPROF: the SIGPROF handler stays installed, idle: a sampling signal was still pending"
            );
        }
    }

    fn dump(&self, ctx: &Context, _jni: Option<Jni>, out: &mut ProfileOutput) {
        crate::engine::cpu_samples::write_samples(ctx, out, ctx.options.cutoff);
    }
}
