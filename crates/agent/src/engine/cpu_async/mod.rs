//! The asynchronous sampler behind `cpu=samples` and `cpu=wall`: threads are interrupted by a
//! signal and their Java stack is taken where they are, with HotSpot's `AsyncGetCallTrace`,
//! instead of at the next safepoint.
//!
//! - `cpu=samples`: a timer on each thread's CPU clock sends it SIGPROF after every `interval`
//!   of CPU time it used, so threads are sampled in proportion to their CPU use, wherever the
//!   JIT put them.
//! - `cpu=wall`: every `interval` of wall time, a ticker queues SIGPROF to at most
//!   `WALL_THREADS_PER_TICK` (in `wall`) Java threads (round robin), with
//!   the thread's JVMTI state, which becomes the root frame of the sample (`<SLEEPING>`,
//!   `<BLOCKED>`, ...).
//!
//! The signal handler ([`crate::signal`]) writes into a preallocated ring; the agent thread of
//! this engine drains it into the trace store every tick and before every dump. A sample
//! whose walk failed is kept under a pseudo-frame naming why (`<GC active>`, ...).
//!
//! This file is the engine: its state (the registry of sampled threads), the [`Engine`] impl
//! (hooks, start and stop), its agent thread, and the `SAMPLER` slot the unmount callback
//! reads. Its jobs, one file each: `timers` (what interrupts threads, a timer per thread),
//! `identify` (which kernel thread runs which Java thread started before the sampler),
//! `drain` (the ring into the trace store), `wall` (`cpu=wall`'s ticker and thread states),
//! `virtual_threads` (`thread=y` on JDK 21+), `walk` (`available`, what the stack walks need).

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use crate::code_names;
use crate::engine::sigprof_watch;
use crate::engine::ticker::Ticker;
use crate::engine::vm_threads::VmThreads;
use crate::engine::{Context, Engine, Hook, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Event, GlobalRef, Jni, jthread};
use crate::output::ProfileOutput;
use crate::signal::{self, ThreadTimer, TimerSource};

mod drain;
mod identify;
mod timers;
mod virtual_threads;
mod walk;
mod wall;

use drain::{Pending, warn_if_deeper_than_the_ring};
pub(crate) use identify::task_ids;
pub use walk::available;
use wall::IdleWall;

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

/// `JVMTI_THREAD_STATE_ALIVE`.
const JVMTI_THREAD_STATE_ALIVE: u32 = 0x0001;

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
        ctx.with_output(|out| crate::engine::sampling::write_samples(ctx, out, cutoff));
    }

    fn set_sampling(&self, ctx: &Context, thread: u64, on: bool) {
        if self.started.get().is_some() {
            crate::engine::sampling::set_sampling(ctx, thread, on);
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
        crate::engine::sampling::write_samples(ctx, out, ctx.options.cutoff);
    }
}
