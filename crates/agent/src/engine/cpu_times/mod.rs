//! The `cpu=times` (and `cpu=old`) engine: every method of every class is rewritten (by
//! `hprof-classfile`) to call the tracker at entry, before each return and on exceptional
//! exit. The tracker's common path is bytecode the JIT inlines: per thread, the current
//! trace, inline caches of the traces each trace calls, and the calls by trace, all in a Java
//! object (see `hprof_classfile::tracker`). This engine does the rest: it makes each thread's
//! state on its first call, interns the traces the caches miss, and collects the counts at
//! each dump. Call counts are exact.
//!
//! CPU time is the thread's CPU time, not wall time: an agent thread reads each thread's CPU
//! clock every millisecond and credits what it used to the thread's current trace (self
//! time); for `cpu=old`, also to every (callee, caller) pair on the thread's real stack
//! (inclusive time).
//!
//! Classes loaded before the VM is live (before the tracker class can exist) are rewritten
//! by retransformation at VM init; every later class as it loads. Only `java.lang.Thread` is
//! changed earlier, at its first load (the JVM's early class hook): it gets the field that
//! holds each thread's state, which no later rewriting could add.
//!
//! Started late (`hprof attach`), `java.lang.Thread` is loaded already and can get no field:
//! the tracker then finds the threads' states in its own table, keyed by identity hash
//! ([`Keying::Table`]), which the agent fills as threads make their first call. Every loaded
//! class is rewritten by retransformation at the start and given back its own code by
//! retransformation when the session stops ([`Engine::release`]); methods running at either
//! moment keep the code they started with until they return.
//!
//! This file holds the engine itself: its state, its construction and its [`Engine`] hooks.
//! Each job has its own file: `class_hook` (rewriting classes as they load), `methods` (the
//! method numbers and their jmethodIDs), `natives` (the tracker's `register` and `miss`),
//! `state` (a thread's Java state object), `threads` (the registered threads), `table` (the
//! late start's table of threads), `traces` (traces and their costs), `install` (installing
//! and engaging the tracker, at VM init or late), `timer` (the timing thread) and `report`
//! (the dump).

mod class_hook;
mod install;
mod methods;
mod natives;
mod report;
mod state;
mod table;
mod threads;
mod timer;
mod traces;

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

use hprof_classfile::Keying;

use crate::engine::ticker::Ticker;
use crate::engine::{Context, Engine, Hook, Probe, ProbeAnswer, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Event, FieldId, GlobalRef, Jni, jclass, jthread};
use crate::output::ProfileOutput;

use class_hook::transform_early;
use methods::Methods;
use state::StateClass;
use threads::Registry;
use traces::{Costs, Traces};

/// Name of the timing thread.
pub const THREAD_NAME: &str = "HPROF cpu timing thread";

/// `name` for JNI (the tracker's names have no NUL; an empty name would only fail a lookup).
fn jni_name(name: &str) -> CString {
    CString::new(name).unwrap_or_default()
}

/// The engine.
#[derive(Debug)]
pub struct CpuTimes {
    methods: Mutex<Methods>,
    traces: Mutex<Traces>,
    costs: Costs,
    /// Threads with a tracker state.
    registry: Mutex<Registry>,
    /// The id the next registered thread's state gets.
    next_state: std::sync::atomic::AtomicU64,
    /// The tracker class.
    tracker: OnceLock<GlobalRef>,
    /// The class of the threads' states.
    state_class: OnceLock<StateClass>,
    /// `java.lang.Thread`'s field holding a thread's state.
    thread_state: OnceLock<FieldId>,
    /// The early class hook was asked for (not under `-Xshare:on`), so Thread has the field.
    early_hooks: AtomicBool,
    /// Where the tracker finds the threads' states: [`Keying::Table`] when started in a
    /// running JVM.
    keying: Keying,
    /// For `cpu=old`: inclusive CPU ns by (callee, caller, thread) method numbers (caller 0:
    /// none), since the last dump.
    old_times: Mutex<HashMap<(u32, u32, u32), u64>>,
    /// The tracker class is defined: classes loading now can be rewritten.
    ready: AtomicBool,
    ticker: Ticker,
    /// Classes and methods rewritten, methods that could not be.
    classes_instrumented: AtomicU64,
    methods_instrumented: AtomicU64,
    methods_failed: AtomicU64,
    /// Traces not kept because the table was full.
    dropped: AtomicU32,
    /// Milliseconds the retransformation of the loaded classes took at the start.
    install_ms: AtomicU64,
    /// Nanoseconds spent finding method ids (see [`CpuTimes::resolve_class`]), for `verbose=y`.
    resolve_ns: AtomicU64,
    /// Started late: how the start went, for `hprof attach PID status`.
    late_status: Mutex<String>,
    /// Calls of `miss`: traces the threads' caches did not have.
    lookups: AtomicU64,
    /// Set once started.
    started: Started,
}

impl Default for CpuTimes {
    fn default() -> Self {
        CpuTimes::new()
    }
}

impl CpuTimes {
    /// An engine not yet started, loaded with the JVM.
    pub fn new() -> CpuTimes {
        CpuTimes::keyed(Keying::Field)
    }

    /// An engine for a JVM already running (`hprof attach`).
    pub fn late() -> CpuTimes {
        CpuTimes::keyed(Keying::Table)
    }

    fn keyed(keying: Keying) -> CpuTimes {
        CpuTimes {
            keying,
            methods: Mutex::new(Methods::default()),
            traces: Mutex::new(Traces::default()),
            costs: Costs::new(),
            registry: Mutex::new(Registry::default()),
            next_state: std::sync::atomic::AtomicU64::new(0),
            tracker: OnceLock::new(),
            state_class: OnceLock::new(),
            thread_state: OnceLock::new(),
            early_hooks: AtomicBool::new(false),
            old_times: Mutex::new(HashMap::new()),
            ready: AtomicBool::new(false),
            ticker: Ticker::new(),
            classes_instrumented: AtomicU64::new(0),
            methods_instrumented: AtomicU64::new(0),
            methods_failed: AtomicU64::new(0),
            dropped: AtomicU32::new(0),
            install_ms: AtomicU64::new(0),
            resolve_ns: AtomicU64::new(0),
            late_status: Mutex::new("rewriting the loaded classes".into()),
            lookups: AtomicU64::new(0),
            started: Started::new(),
        }
    }

    fn verbose(&self) -> bool {
        self.started.get().is_some_and(|ctx| ctx.options.verbose)
    }
}

impl Engine for CpuTimes {
    fn dump_message(&self) -> &'static str {
        " CPU usage in times ..."
    }

    fn hooks(&self) -> &'static [Hook] {
        &[
            Hook::ThreadEnd,
            Hook::ClassFileLoad,
            Hook::ClassPrepare,
            Hook::Probe,
        ]
    }

    fn class_prepare(&self, ctx: &Context, _jni: Jni, class: jclass) {
        if self.started.get().is_some() {
            self.resolve_class(ctx.jvmti, class);
        }
    }

    /// The ending thread's calls are kept.
    fn thread_end(&self, _ctx: &Context, jni: Jni, thread: jthread) {
        if self.started.get().is_some() {
            CpuTimes::thread_end(self, jni, thread);
        }
    }

    /// Before the engine starts, only `java.lang.Thread` changes (see
    /// `class_hook::transform_early`).
    fn class_file_load(
        &self,
        _ctx: &Context,
        name: Option<&[u8]>,
        class: &[u8],
    ) -> Option<Vec<u8>> {
        if self.started.get().is_some() {
            self.transform(name, class)
        } else {
            transform_early(name, class)
        }
    }

    fn probe(&self, ctx: &Context, jni: Jni, probe: Probe) -> Option<ProbeAnswer> {
        self.started.get()?;
        match probe {
            Probe::TrackerRegister { thread } => {
                Some(ProbeAnswer::Object(self.register(ctx, jni, thread)))
            }
            Probe::TrackerMiss {
                state,
                method,
                parent,
            } => Some(ProbeAnswer::Int(self.miss(ctx, jni, state, method, parent))),
            Probe::NativeAlloc { .. } => None,
        }
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.thread_cpu_time = true;
        caps.class_hooks = true;
        if self.keying == Keying::Table {
            // A running JVM gives no early class hook, and needs none.
            return;
        }
        // The early class hook turns class data sharing off, which -Xshare:on forbids: the
        // JVM would refuse to start. cpu=times then reports it cannot run (see install).
        let early = !crate::vm_options::sharing_required();
        self.early_hooks.store(early, Ordering::Release);
        caps.early_class_hooks = early;
    }

    fn on_load(&self, ctx: &Context) -> Result<(), AgentError> {
        let jvmti = ctx.jvmti;
        // From now on: java.lang.Thread loads in the primordial phase (see transform_early).
        jvmti
            .set_event(Event::ClassFileLoadHook, true)
            .map_err(|e| AgentError::loading(format!("can't enable class file load hooks ({e})")))
    }

    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), AgentError> {
        if !self.started.set(ctx) {
            return Err(AgentError::starting("the CPU timer was started twice"));
        }
        // Method ids are found as classes are prepared (see resolve_class); those of the
        // classes loaded before now once the install has rewritten them.
        ctx.jvmti
            .set_event(Event::ClassPrepare, true)
            .map_err(|e| AgentError::starting(format!("can't enable ClassPrepare ({e})")))?;
        self.install(ctx, jni).map_err(AgentError::starting)?;
        self.ticker.start(
            ctx.jvmti,
            jni,
            THREAD_NAME,
            "the CPU timing thread",
            move |jni| self.run(ctx, jni),
        )
    }

    fn stop(&self, ctx: &Context) {
        if let Some(jni) = ctx.vm.jni() {
            let _ = self.set_engaged(jni, false);
            self.turn_off_threads(jni);
        }
        self.ticker.stop();
    }

    fn dump(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        self.write_times(ctx, jni, out);
    }

    fn late_note(&self) -> Option<String> {
        Some(
            "cpu=times started late: every loaded class is rewritten now (and gets its own \
             code back at stop); calls are counted from then on, and methods already running \
             (a main loop) keep their old code until they return, so their callees' traces \
             start below them; without the field java.lang.Thread gets at start-up, each call \
             finds its thread's counters through an identity-hashed table (see docs/options.md)"
                .into(),
        )
    }

    fn status(&self) -> Option<String> {
        (self.keying == Keying::Table)
            .then(|| {
                self.late_status
                    .lock()
                    .ok()
                    .map(|s| format!("cpu=times: {s}"))
            })
            .flatten()
    }

    fn release(&self, ctx: &Context) {
        if self.keying != Keying::Table || !self.ready.swap(false, Ordering::AcqRel) {
            return;
        }
        let Some(jni) = ctx.vm.jni() else { return };
        let started = std::time::Instant::now();
        ctx.jvmti.retransform_loaded(jni);
        if ctx.options.verbose {
            eprintln!(
                "HPROF: cpu=times gave {} classes back their own code in {} ms",
                self.classes_instrumented.load(Ordering::Relaxed),
                started.elapsed().as_millis()
            );
        }
    }
}
