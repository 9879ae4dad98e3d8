//! Owns the profiling engines: one module per engine behind [`Engine`], and the choice of
//! engines from the options. Engines record into the shared tables of [`Context`] and write
//! their sections through the format-neutral [`ProfileOutput`].

pub mod alloc_counts;
pub mod cpu_async;
pub mod cpu_samples;
pub mod cpu_times;
pub mod heap_dump;
pub mod heap_merge;
pub mod heap_sites;
pub mod monitors;
pub mod object_sites;
pub mod sigprof_watch;
pub mod ticker;
pub mod vm_threads;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, RwLock};

use crate::jvmti::{Capabilities, JavaVm, Jni, Jvmti};
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

/// Forgets every engine of the session that stopped, so a new session can start them.
pub fn forget_running() {
    cpu_async::SAMPLER.clear();
    cpu_samples::SAMPLER.clear();
    cpu_times::STATE.clear();
    heap_sites::ENGINE.clear();
    alloc_counts::RUNNING.clear();
    monitors::ENGINE.clear();
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
}

impl Context {
    /// Frames per trace now.
    pub fn depth(&self) -> usize {
        self.max_depth.load(Ordering::Relaxed) as usize
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
    fn on_load(&self, _jvmti: Jvmti) -> Result<(), String> {
        Ok(())
    }
    /// Starts the engine once the VM is initialised. Engines live in the profiler, which
    /// lives for the rest of the process, hence `'static`.
    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), String>;
    /// Stops the engine at VM death, before the last dump; must not block indefinitely.
    fn stop(&self, ctx: &Context);
    /// Asks the JVM, before a dump writes, for what the engine's section needs (a garbage
    /// collection, a heap walk, threads' stacks: calls that wait for safepoints), with no lock
    /// held that an event callback may want. What it gathers waits in the engine for the
    /// [`Engine::dump`] that follows.
    fn prepare(&self, _ctx: &Context, _jni: Option<Jni>) {}
    /// [`Engine::prepare`], for an engine that may write its section while the JVM produces
    /// it (the heap dump merges the JVM's file as it grows): it takes the output's lock itself,
    /// from a thread of its own that makes no JVM call.
    fn prepare_with_output(
        &self,
        ctx: &Context,
        jni: Option<Jni>,
        _output: &std::sync::Mutex<ProfileOutput>,
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
}

/// The engines the options ask for, in the order their sections are dumped. `asynchronous`
/// says whether the JVM can be sampled with signals (else why not): `cpu=samples` then uses
/// the asynchronous sampler unless `sampler=jvmti`. `late`: the JVM is running already
/// (`hprof attach`), and some engines start differently.
pub fn select_engines(
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
