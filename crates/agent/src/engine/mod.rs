//! Owns the profiling engines: one module per engine behind [`Engine`], and the choice of
//! engines from the options. Engines record into the shared tables of [`Context`] and write
//! their sections through the format-neutral [`ProfileOutput`].

pub mod cpu_async;
pub mod cpu_samples;
pub mod cpu_times;
pub mod heap_dump;
pub mod heap_sites;
pub mod monitors;
pub mod object_sites;
pub mod sampling;
pub mod sigprof_watch;
pub mod ticker;
pub mod vm_threads;

pub use heap_dump::merge as heap_merge;

use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::sync::{Mutex, RwLock};

use crate::error::AgentError;
use crate::jvmti::{Capabilities, JavaVm, Jni, Jvmti, jclass, jobject, jthread};
use crate::options::Options;
use crate::output::ProfileOutput;
use crate::threads::ThreadTable;
use crate::trace_store::{ObjectIds, TraceStore};

/// The running session's instance of something (an engine with its context, the profiler):
/// set when the session starts, cleared when an attached session stops, so that a later
/// session can set it again. Event callbacks read it without blocking each other.
#[derive(Debug)]
pub struct Current<T: Copy> {
    slot: RwLock<Option<T>>,
}

impl<T: Copy> Default for Current<T> {
    fn default() -> Current<T> {
        Current::new()
    }
}

impl<T: Copy> Current<T> {
    /// Empty.
    pub const fn new() -> Current<T> {
        Current {
            slot: RwLock::new(None),
        }
    }

    /// The running session's value.
    pub fn get(&self) -> Option<T> {
        *self.slot.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Sets the value; false if a session already set one.
    #[must_use]
    pub fn set(&self, value: T) -> bool {
        let mut slot = self.slot.write().unwrap_or_else(|e| e.into_inner());
        if slot.is_some() {
            return false;
        }
        *slot = Some(value);
        true
    }

    /// Forgets the value (the session stopped).
    pub fn clear(&self) {
        *self.slot.write().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// Forgets what the engines of the session that stopped left in process-wide state, so a new
/// session can start them.
pub fn forget_running() {
    cpu_async::forget_running();
}

/// An engine's context once the engine started: set in [`Engine::start`], read by its event
/// hooks and its agent thread (an engine acts on most events only once started).
#[derive(Debug, Default)]
pub struct Started(std::sync::OnceLock<&'static Context>);

impl Started {
    /// Not started.
    pub const fn new() -> Started {
        Started(std::sync::OnceLock::new())
    }

    /// Marks the engine started in `ctx`; false if it was already.
    #[must_use]
    pub fn set(&self, ctx: &'static Context) -> bool {
        self.0.set(ctx).is_ok()
    }

    /// The context, once started.
    pub fn get(&self) -> Option<&'static Context> {
        self.0.get().copied()
    }
}

/// The JVM events and front-end commands an engine can take: each is delivered through the
/// [`Engine`] hook of the same name to the engines that list it in [`Engine::hooks`] (the
/// profiler builds one subscriber list per hook at load).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// [`Engine::vm_init`].
    VmInit,
    /// [`Engine::thread_start`].
    ThreadStart,
    /// [`Engine::thread_end`].
    ThreadEnd,
    /// [`Engine::class_file_load`].
    ClassFileLoad,
    /// [`Engine::class_prepare`].
    ClassPrepare,
    /// [`Engine::dynamic_code_generated`].
    DynamicCodeGenerated,
    /// [`Engine::sampled_object_alloc`].
    SampledObjectAlloc,
    /// [`Engine::vm_object_alloc`].
    VmObjectAlloc,
    /// [`Engine::monitor_contended_enter`], [`Engine::monitor_contended_entered`],
    /// [`Engine::monitor_wait`], [`Engine::monitor_waited`].
    Monitor,
    /// [`Engine::probe`]: calls of the agent's probes in rewritten Java code.
    Probe,
    /// The front-end's ALLOC SITES, HEAP SUMMARY and CONTROL's allocation sub-commands:
    /// [`Engine::alloc_sites`], [`Engine::heap_summary`], [`Engine::set_tracking`],
    /// [`Engine::clear_sites`].
    Sites,
    /// The front-end's CPU SAMPLES and CONTROL's sampling sub-commands:
    /// [`Engine::cpu_samples`], [`Engine::set_sampling`].
    CpuSamples,
    /// [`Engine::drain_then`]: the engine holds samples not yet in the trace store.
    Drain,
    /// [`Engine::pin_object_sites`]: the engine knows where objects were allocated (heap=dump's
    /// OBJECT SITES ask it, through [`Peers`]).
    ObjectSites,
}

impl Hook {
    /// Every hook.
    pub const ALL: [Hook; 14] = [
        Hook::VmInit,
        Hook::ThreadStart,
        Hook::ThreadEnd,
        Hook::ClassFileLoad,
        Hook::ClassPrepare,
        Hook::DynamicCodeGenerated,
        Hook::SampledObjectAlloc,
        Hook::VmObjectAlloc,
        Hook::Monitor,
        Hook::Probe,
        Hook::Sites,
        Hook::CpuSamples,
        Hook::Drain,
        Hook::ObjectSites,
    ];
}

/// A call of one of the agent's probes in rewritten Java code (the natives of
/// `java.lang.HprofAllocs` and `java.lang.HprofTracker`, which the JVM finds by their JNI
/// names in the agent's library).
#[derive(Debug, Clone, Copy)]
pub enum Probe {
    /// `HprofAllocs.n(Object, int)`: an allocating native method returned `object`, of `kind`.
    NativeAlloc {
        /// What the call returned.
        object: jobject,
        /// The kind of call.
        kind: i32,
    },
    /// `HprofTracker.register(Thread)`: a thread's first call; answered with its state.
    TrackerRegister {
        /// The thread.
        thread: jobject,
    },
    /// `HprofTracker.miss(Object, int, int)`: a trace not in the thread's caches; answered
    /// with its number.
    TrackerMiss {
        /// The thread's state.
        state: jobject,
        /// The method called.
        method: i32,
        /// The calling trace's number.
        parent: i32,
    },
}

/// What a probe returns to Java.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeAnswer {
    /// An object (`TrackerRegister`).
    Object(jobject),
    /// A number (`TrackerMiss`).
    Int(i32),
}

/// What an engine asks of the session's other engines, answered by the profiler through its
/// dispatch table (an engine never names another): handed to [`Engine::prepare_with_output`].
pub trait Peers {
    /// [`Engine::pin_object_sites`] of the first engine that takes [`Hook::ObjectSites`].
    fn pin_object_sites(&self, jni: Jni) -> Option<(object_sites::Pins, object_sites::Pinned)>;
}

/// What every engine shares: the JVM, the options and the agent's tables.
#[derive(Debug)]
pub struct Context {
    /// The JVMTI environment.
    pub jvmti: Jvmti,
    /// The JVM, to find a thread's JNI environment.
    pub vm: JavaVm,
    /// Parsed options.
    pub options: Options,
    /// Live threads.
    pub threads: Mutex<ThreadTable>,
    /// Traces.
    pub traces: Mutex<TraceStore>,
    /// Object ids.
    pub ids: ObjectIds,
    /// Frames per trace: `depth=`, changed by the front-end's CONTROL command.
    pub max_depth: AtomicU32,
    /// The profile's output. Engines write their event-time records (WAIT lines, threads
    /// found by the sampler) through [`Context::with_output`], their sections in dumps through
    /// [`Engine::dump`].
    pub output: Mutex<ProfileOutput>,
    /// The session's lifecycle: [`SESSION_NEW`], [`SESSION_RUNNING`], [`SESSION_TERMINATED`].
    pub state: AtomicU8,
}

/// Lifecycle of a session: loaded, VM not yet initialised.
pub const SESSION_NEW: u8 = 0;
/// VM initialised and not dying: events are acted on.
pub const SESSION_RUNNING: u8 = 1;
/// Stopped (VM death, or `hprof attach … stop`): every callback is a no-op.
pub const SESSION_TERMINATED: u8 = 2;

impl Context {
    /// Frames per trace now.
    pub fn depth(&self) -> usize {
        self.max_depth.load(Ordering::Relaxed) as usize
    }

    /// Whether the VM is initialised and not yet dying: events are acted on only then.
    pub fn is_running(&self) -> bool {
        self.state.load(Ordering::Acquire) == SESSION_RUNNING
    }

    /// Runs `f` on the output (for engines' event-time records such as WAIT lines).
    pub fn with_output(&self, f: impl FnOnce(&mut ProfileOutput)) {
        if let Ok(mut out) = self.output.lock() {
            f(&mut out);
        }
    }
}

/// A profiling engine.
pub trait Engine: Send + Sync {
    /// The text `verbose=y` prints while this engine dumps (` CPU usage by sampling running
    /// threads ...`).
    fn dump_message(&self) -> &'static str;
    /// JVMTI capabilities the engine needs, added to `caps`.
    fn capabilities(&self, caps: &mut Capabilities);
    /// Set-up that must happen in `Agent_OnLoad`, before any Java thread runs.
    fn on_load(&self, _ctx: &Context) -> Result<(), AgentError> {
        Ok(())
    }
    /// Starts the engine once the VM is initialised. Engines live in the profiler, which
    /// lives for the rest of the process, hence `'static`.
    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), AgentError>;
    /// Stops the engine at VM death, before the last dump; must not block indefinitely.
    fn stop(&self, ctx: &Context);
    /// Asks the JVM, before a dump writes, for what the engine's section needs (a garbage
    /// collection, a heap walk, threads' stacks: calls that wait for safepoints), with no lock
    /// held that an event callback may want. What it gathers waits in the engine for the
    /// [`Engine::dump`] that follows.
    fn prepare(&self, _ctx: &Context, _jni: Option<Jni>) {}
    /// [`Engine::prepare`], for an engine that may write its section while the JVM produces
    /// it (the heap dump merges the JVM's file as it grows): it takes the output's lock itself,
    /// from a thread of its own that makes no JVM call. `peers` answers what it asks of the
    /// other engines (the heap dump: which objects heap=sites saw allocated where).
    fn prepare_with_output(
        &self,
        ctx: &Context,
        jni: Option<Jni>,
        _output: &std::sync::Mutex<ProfileOutput>,
        _peers: &dyn Peers,
    ) {
        self.prepare(ctx, jni);
    }
    /// Writes the engine's section of a dump and starts a new interval. `jni` is the dumping
    /// thread's JNI environment, when it has one.
    fn dump(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput);
    /// When an attached session stops, after its last dump: gives back what the engine
    /// changed in the running JVM beyond its events and timers (rewritten classes).
    fn release(&self, _ctx: &Context) {}
    /// A line on the engine's state for `hprof attach PID status`, if it has one.
    fn status(&self) -> Option<String> {
        None
    }
    /// Started in a running JVM: what that costs or leaves out, for `hprof attach`'s output.
    fn late_note(&self) -> Option<String> {
        None
    }

    // Event hooks: each is called only for the hooks listed in `hooks`, from the JVMTI
    // callbacks (any thread; a panic is caught by the caller) or the command listener.

    /// The hooks this engine takes (read once, at load).
    fn hooks(&self) -> &'static [Hook] {
        &[]
    }
    /// VMInit, on the VM init thread, before the session runs and the engines start.
    fn vm_init(&self, _ctx: &Context, _jni: Jni) {}
    /// ThreadStart, after the thread got its serial (while the session runs).
    fn thread_start(&self, _ctx: &Context, _jni: Jni, _thread: jthread) {}
    /// ThreadEnd, on the ending thread, before it loses its serial.
    fn thread_end(&self, _ctx: &Context, _jni: Jni, _thread: jthread) {}
    /// ClassFileLoadHook: `class` (named `name`) rewritten, or `None` to keep it. Engines
    /// rewrite in the order of [`Engine::class_file_order`], each what the previous made.
    fn class_file_load(
        &self,
        _ctx: &Context,
        _name: Option<&[u8]>,
        _class: &[u8],
    ) -> Option<Vec<u8>> {
        None
    }
    /// Where this engine's rewriting comes among the engines' (lower first).
    fn class_file_order(&self) -> u8 {
        0
    }
    /// ClassPrepare.
    fn class_prepare(&self, _ctx: &Context, _jni: Jni, _class: jclass) {}
    /// DynamicCodeGenerated: a stub `name` at `address`, `length` bytes. Called on any
    /// thread, possibly with the JVM's locks held: record only.
    fn dynamic_code_generated(&self, _name: &str, _address: usize, _length: usize) {}
    /// SampledObjectAlloc.
    fn sampled_object_alloc(
        &self,
        _ctx: &Context,
        _jni: Jni,
        _thread: jthread,
        _object: jobject,
        _class: jclass,
        _size: i64,
    ) {
    }
    /// VMObjectAlloc (while the session runs).
    fn vm_object_alloc(
        &self,
        _ctx: &Context,
        _jni: Jni,
        _object: jobject,
        _class: jclass,
        _size: i64,
    ) {
    }
    /// MonitorContendedEnter (while the session runs).
    fn monitor_contended_enter(&self, _ctx: &Context, _jni: Jni, _thread: jthread) {}
    /// MonitorContendedEntered (while the session runs).
    fn monitor_contended_entered(&self, _ctx: &Context, _jni: Jni, _object: jobject) {}
    /// MonitorWait (while the session runs).
    fn monitor_wait(
        &self,
        _ctx: &Context,
        _jni: Jni,
        _thread: jthread,
        _object: jobject,
        _timeout: i64,
    ) {
    }
    /// MonitorWaited (while the session runs).
    fn monitor_waited(&self, _ctx: &Context, _jni: Jni, _thread: jthread, _object: jobject) {}
    /// A call of one of the agent's probes; `None`: not this engine's.
    fn probe(&self, _ctx: &Context, _jni: Jni, _probe: Probe) -> Option<ProbeAnswer> {
        None
    }
    /// Pins, for a heap dump the JVM writes next, the objects whose allocation sites the
    /// engine knows (after a full GC); `None` when it tracks none. The pins are released once
    /// the JVM has written its dump.
    fn pin_object_sites(
        &self,
        _ctx: &Context,
        _jni: Jni,
    ) -> Option<(object_sites::Pins, object_sites::Pinned)> {
        None
    }

    // Front-end commands, from the command listener (the profiler holds its dump lock).

    /// ALLOC SITES: writes the sites with `flags`, cut off at `cutoff`.
    fn alloc_sites(&self, _ctx: &Context, _flags: u16, _cutoff: f64) {}
    /// HEAP SUMMARY: the totals, if the engine keeps them.
    fn heap_summary(&self, _ctx: &Context) -> Option<crate::output::SiteTotals> {
        None
    }
    /// CONTROL: allocation tracking on or off.
    fn set_tracking(&self, _ctx: &Context, _on: bool) {}
    /// CONTROL: clear the sites' counts.
    fn clear_sites(&self, _ctx: &Context) {}
    /// CPU SAMPLES: writes the samples of the interval, cut off at `cutoff`.
    fn cpu_samples(&self, _ctx: &Context, _cutoff: f64) {}
    /// CONTROL: CPU sampling on or off for the thread whose object id is `thread` (0: all).
    fn set_sampling(&self, _ctx: &Context, _thread: u64, _on: bool) {}
    /// Moves the samples the engine holds into the trace store, then runs `then` before any
    /// later sample moves (what `then` changes applies from the samples after the command).
    fn drain_then(&self, _ctx: &Context, _jni: Jni, then: &mut dyn FnMut()) {
        then();
    }
}

/// The engines the options ask for, in the order their sections are dumped, for a JVM whose
/// invocation interface is `vm` and JVMTI environment `jvmti`. `cpu=samples` uses the
/// asynchronous sampler (signals) when the JVM can be sampled so, unless `sampler=jvmti`;
/// `cpu=wall` needs it. `late`: the JVM is running already (`hprof attach`), and some engines
/// start differently. Errors are messages for an `HPROF ERROR:` line.
pub fn select_engines(
    options: &Options,
    vm: JavaVm,
    jvmti: Jvmti,
    late: bool,
) -> Result<Vec<Box<dyn Engine>>, String> {
    let wants_signals = (options.cpu_samples && options.sampler == crate::options::Sampler::Async)
        || options.cpu_wall;
    let asynchronous = if wants_signals {
        cpu_async::available(vm, !options.cpu_wall)
    } else {
        Err("not asked for".to_string())
    };
    if options.cpu_wall
        && let Err(why) = &asynchronous
    {
        return Err(format!("cpu=wall can't run: {why}"));
    }
    crate::vm_options::note_vm_feature(jvmti.feature_version());
    Ok(engines_for(options, &asynchronous, late))
}

/// A heap dump engine for the front-end's DUMP HEAP (whatever `heap=` says: the dump needs no
/// set-up).
pub fn heap_dump_on_request() -> Box<dyn Engine> {
    Box::new(heap_dump::HeapDump::new())
}

/// [`select_engines`], once the asynchronous sampler's availability is known.
fn engines_for(
    options: &Options,
    asynchronous: &Result<(), String>,
    late: bool,
) -> Vec<Box<dyn Engine>> {
    let mut engines: Vec<Box<dyn Engine>> = Vec::new();
    if options.monitor {
        engines.push(Box::new(monitors::Monitors::new(late)));
    }
    if options.heap_dump {
        engines.push(Box::new(heap_dump::HeapDump::new()));
    }
    if options.heap_sites {
        engines.push(Box::new(heap_sites::HeapSites::with_mode(
            options.alloc_interval,
            heap_sites::fast_mode(options, late),
        )));
    }
    if options.cpu_samples {
        match (options.sampler, asynchronous) {
            (crate::options::Sampler::Async, Ok(())) => {
                engines.push(Box::new(cpu_async::AsyncSampler::new(false)));
            }
            (crate::options::Sampler::Async, Err(why)) => {
                if options.verbose {
                    eprintln!(
                        "HPROF: cpu=samples uses the JVMTI sampler (stacks at safepoints): {why}"
                    );
                }
                engines.push(Box::new(cpu_samples::CpuSampler::new()));
            }
            (crate::options::Sampler::Jvmti, _) => {
                engines.push(Box::new(cpu_samples::CpuSampler::new()));
            }
        }
    }
    if options.cpu_wall && asynchronous.is_ok() {
        engines.push(Box::new(cpu_async::AsyncSampler::new(true)));
    }
    if options.cpu_times {
        engines.push(Box::new(if late {
            cpu_times::CpuTimes::late()
        } else {
            cpu_times::CpuTimes::new()
        }));
    }
    engines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_hook_is_listed_once_at_its_own_index() {
        for (i, hook) in Hook::ALL.iter().enumerate() {
            assert_eq!(*hook as usize, i, "{hook:?}");
        }
    }
}
