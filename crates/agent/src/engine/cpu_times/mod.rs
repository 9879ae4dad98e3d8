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

use std::collections::HashMap;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use hprof_classfile::{
    ENGAGED, Keying, NATIVES, STATE_CLASS, THREAD_CLASS, THREAD_STATE_FIELD, TRACKER_CLASS,
    tracker_class_keyed,
};

use crate::engine::ticker::Ticker;
use crate::engine::{Context, Engine, Hook, Probe, ProbeAnswer, Started};
use crate::error::{AgentError, ErrorKind, report};
use crate::jvmti::{
    Capabilities, Event, FieldId, GlobalRef, Jni, jclass, jmethodID, jobject, jthread,
};
use crate::output::ProfileOutput;
use crate::trace_store::Trace;

mod class_hook;
mod methods;
mod natives;
mod state;
mod table;
mod threads;
mod traces;

pub(crate) use class_hook::{note_vm_feature, sharing_required};

use class_hook::transform_early;
use methods::Methods;
use state::StateClass;
use threads::{Registered, Registry};
use traces::{Costs, Traces};

/// Name of the timing thread.
pub const THREAD_NAME: &str = "HPROF cpu timing thread";

/// How often the timing thread reads the threads' CPU clocks.
const TICK_MS: i64 = 1;
/// Frames of a thread's stack the timing thread reads for `cpu=old`'s inclusive time.
const MAX_OLD_FRAMES: usize = 4096;
/// Tries, 20 ms apart, to link the tracker's natives when started late.
const LINK_TRIES: usize = 500;

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

    /// Defines the tracker class (its natives are found by name in this library), engages
    /// it and rewrites the classes already loaded.
    fn install(&self, ctx: &Context, jni: Jni) -> Result<(), String> {
        if self.keying == Keying::Table {
            return self.install_late(ctx, jni);
        }
        if !self.early_hooks.load(Ordering::Acquire) {
            return Err("cpu=times can't run with -Xshare:on (or -XX:+RequireSharedSpaces): it adds a field to java.lang.Thread as the class first loads, which class data sharing forbids".into());
        }
        let thread = jni
            .find_class(&jni_name(THREAD_CLASS))
            .ok_or("can't find java.lang.Thread")?;
        // On JDK 19 and later, states belong to carrier threads (see tracker_class_for).
        let carrier =
            jni.has_static_method(thread, c"currentCarrierThread", c"()Ljava/lang/Thread;");
        // The threads' states live in a field java.lang.Thread got at its first load; without
        // it, the probes could not run at all.
        let desc = jni_name(&format!("L{STATE_CLASS};"));
        let field = jni.field_id(thread, &jni_name(THREAD_STATE_FIELD), &desc);
        jni.delete_local_ref(thread);
        let field = field.ok_or(
            "java.lang.Thread has no field for the tracker (it was loaded before the agent's class hook)",
        )?;
        let _ = self.thread_state.set(field);
        let state_class = StateClass::define(jni)?;
        let _ = self.state_class.set(state_class);
        let bytes = tracker_class_keyed(TRACKER_CLASS, carrier, Keying::Field);
        let class = jni
            .define_boot_class(&jni_name(TRACKER_CLASS), &bytes)
            .ok_or("can't define the tracker class java.lang.HprofTracker")?;
        let _ = self.tracker.set(jni.new_global_ref(class));
        self.link_and_engage(ctx, jni, class)
    }

    /// Installs the tracker in a running JVM: a [`Keying::Table`] tracker (defined by this
    /// session, or by an earlier one and found), an empty table, then every loaded class
    /// rewritten.
    fn install_late(&self, _ctx: &Context, jni: Jni) -> Result<(), String> {
        let thread = jni
            .find_class(&jni_name(THREAD_CLASS))
            .ok_or("can't find java.lang.Thread")?;
        let carrier =
            jni.has_static_method(thread, c"currentCarrierThread", c"()Ljava/lang/Thread;");
        jni.delete_local_ref(thread);
        let state_class = StateClass::define(jni)?;
        let _ = self.state_class.set(state_class);
        let name = jni_name(TRACKER_CLASS);
        let class = match jni.find_class(&name) {
            Some(class) => class,
            None => jni
                .define_boot_class(
                    &name,
                    &tracker_class_keyed(TRACKER_CLASS, carrier, Keying::Table),
                )
                .ok_or("can't define the tracker class java.lang.HprofTracker")?,
        };
        let _ = self.tracker.set(jni.new_global_ref(class));
        let cleared = self
            .registry
            .lock()
            .is_ok_and(|mut registry| self.clear_table(jni, &mut registry));
        jni.delete_local_ref(class);
        if !cleared {
            return Err("java.lang.HprofTracker has no table of threads: it was defined by another version of the agent".into());
        }
        // The natives are linked, and the classes rewritten, by the timing thread (see
        // `finish_late`): the JVM finds the natives of a library loaded while it runs only
        // once its Agent_OnAttach has returned.
        Ok(())
    }

    /// Started late, on the timing thread: links the tracker's natives (retrying until the
    /// JVM lists this library, at most [`LINK_TRIES`] times), engages the tracker and
    /// rewrites every loaded class.
    fn finish_late(&self, ctx: &Context, jni: Jni) {
        let outcome = (|| {
            let class = jni
                .find_class(&jni_name(TRACKER_CLASS))
                .ok_or("can't find the tracker class")?;
            let mut linked = false;
            for _ in 0..LINK_TRIES {
                linked = NATIVES.iter().all(|(name, signature)| {
                    let args = if *name == "miss" { 3 } else { 1 };
                    jni.call_static_with_defaults(
                        class,
                        &jni_name(name),
                        &jni_name(signature),
                        args,
                    )
                });
                if linked || self.ticker.stopping() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            if !linked {
                jni.delete_local_ref(class);
                return Err("can't link the tracker's natives".to_string());
            }
            self.link_and_engage(ctx, jni, class)?;
            Ok(format!(
                "ready: {} classes rewritten in {} ms",
                self.classes_instrumented.load(Ordering::Relaxed),
                self.install_ms.load(Ordering::Relaxed)
            ))
        })();
        let line = match outcome {
            Ok(ready) => ready,
            Err(why) => {
                report(ErrorKind::Start, format!("cpu=times can't start: {why}"));
                format!("failed: {why}")
            }
        };
        if let Ok(mut status) = self.late_status.lock() {
            *status = line;
        }
    }

    /// Links the tracker's natives, engages it and rewrites the classes already loaded.
    fn link_and_engage(&self, ctx: &Context, jni: Jni, class: jclass) -> Result<(), String> {
        // Link the natives now: the JVM resolves a native on its first call by running
        // ClassLoader.findNative, Java code that would itself call the tracker.
        for (name, signature) in NATIVES {
            let name = jni_name(name);
            let signature = jni_name(signature);
            let args = if name.as_bytes() == b"miss" { 3 } else { 1 };
            if !jni.call_static_with_defaults(class, &name, &signature, args) {
                return Err(format!("can't link the tracker's native {name:?}"));
            }
        }
        jni.delete_local_ref(class);
        if self.ticker.stopping() {
            return Err("the session stopped before cpu=times started".into());
        }
        self.set_engaged(jni, true)?;
        // The class file load hook, on since Agent_OnLoad, now rewrites classes as they load.
        self.ready.store(true, Ordering::Release);
        let started = std::time::Instant::now();
        ctx.jvmti.retransform_loaded(jni);
        self.resolve_loaded(ctx.jvmti, jni);
        self.install_ms
            .store(started.elapsed().as_millis() as u64, Ordering::Relaxed);
        Ok(())
    }

    fn set_engaged(&self, jni: Jni, on: bool) -> Result<(), String> {
        let class = self.tracker.get().ok_or("no tracker class")?;
        let engaged = jni_name(ENGAGED);
        if !jni.set_static_boolean(class.get(), &engaged, on) {
            return Err("can't engage the tracker".into());
        }
        Ok(())
    }

    /// The body of the timing thread.
    fn run(&self, ctx: &Context, jni: Jni) {
        let engine = self;
        if engine.keying == Keying::Table {
            engine.finish_late(ctx, jni);
        }
        let mut last: HashMap<u32, i64> = HashMap::new();
        let mut numbers: HashMap<usize, u32> = HashMap::new();
        engine
            .ticker
            .run(TICK_MS, || engine.tick(ctx, jni, &mut last, &mut numbers));
    }

    /// Credits each thread's CPU time since the last tick to its current trace, and for
    /// `cpu=old` to the (callee, caller) pairs of rewritten methods on its stack. `numbers`
    /// remembers the method number of each jmethodID seen (0: not rewritten).
    fn tick(
        &self,
        ctx: &Context,
        jni: Jni,
        last: &mut HashMap<u32, i64>,
        numbers: &mut HashMap<usize, u32>,
    ) {
        let mut used: Vec<(u32, u64)> = Vec::new();
        // For cpu=old: (thread for the trace key, ns, a local reference to the thread) of each
        // thread that used CPU; its stack is read once the thread table is unlocked.
        let mut stacks: Vec<(u32, u64, jobject)> = Vec::new();
        if let Ok(threads) = ctx.threads.lock() {
            let mut alive = Vec::with_capacity(threads.len());
            for thread in threads.live() {
                if thread.agent {
                    continue;
                }
                alive.push(thread.serial);
                let Ok(cpu) = ctx.jvmti.thread_cpu_time(thread.thread.get()) else {
                    continue;
                };
                let Some(before) = last.insert(thread.serial, cpu) else {
                    continue;
                };
                if cpu <= before {
                    continue;
                }
                let ns = (cpu - before) as u64;
                used.push((thread.serial, ns));
                if ctx.options.cpu_old {
                    let who = if ctx.options.thread { thread.serial } else { 0 };
                    stacks.push((who, ns, jni.new_local_ref(thread.thread.get())));
                }
            }
            last.retain(|serial, _| alive.contains(serial));
        }
        let mut inclusive: Vec<((u32, u32, u32), u64)> = Vec::new();
        let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
        for (who, ns, thread) in stacks {
            if let Ok(frames) = ctx.jvmti.stack_trace(thread, MAX_OLD_FRAMES) {
                let on_stack: Vec<u32> = frames
                    .iter()
                    .map(|&(id, _)| {
                        *numbers
                            .entry(id as usize)
                            .or_insert_with(|| self.method_number(ctx.jvmti, jni, id))
                    })
                    .filter(|&m| m != 0)
                    .collect();
                pairs.clear();
                pairs.extend(
                    (0..on_stack.len())
                        .map(|i| (on_stack[i], on_stack.get(i + 1).copied().unwrap_or(0), who)),
                );
                pairs.sort_unstable();
                pairs.dedup();
                inclusive.extend(pairs.iter().map(|&p| (p, ns)));
            }
            jni.delete_local_ref(thread);
        }
        if !inclusive.is_empty()
            && let Ok(mut old) = self.old_times.lock()
        {
            for (pair, ns) in inclusive {
                *old.entry(pair).or_default() += ns;
            }
        }
        if used.is_empty() {
            return;
        }
        let (Ok(registry), Some(sc)) = (self.registry.lock(), self.state_class.get()) else {
            return;
        };
        let by_serial: HashMap<u32, &Registered> = registry
            .live
            .values()
            .filter(|r| r.serial != 0)
            .map(|r| (r.serial, r))
            .collect();
        for (serial, ns) in used {
            if let Some(r) = by_serial.get(&serial)
                && let Some(current) = r.global(jni.int_field(r.state.get(), sc.cur))
                && let Some(cost) = self.costs.get(current)
            {
                cost.self_ns.fetch_add(ns, Ordering::Relaxed);
            }
        }
    }

    /// Takes the costs since the last dump: (trace index, calls, self ns) of every trace with
    /// calls or time.
    fn take_costs(&self, jni: Option<Jni>) -> Vec<(u32, u64, u64)> {
        let mut live: HashMap<u32, u64> = HashMap::new();
        if let Some(jni) = jni
            && let Ok(mut registry) = self.registry.lock()
        {
            for r in registry.live.values_mut() {
                for (trace, calls) in self.unreported(jni, r) {
                    *live.entry(trace).or_default() += calls;
                }
            }
        }
        let n = self.traces.lock().map(|t| t.entries.len()).unwrap_or(0);
        (0..n as u32)
            .filter_map(|t| {
                let cost = self.costs.get(t)?;
                let calls =
                    cost.calls.swap(0, Ordering::Relaxed) + live.get(&t).copied().unwrap_or(0);
                let self_ns = cost.self_ns.swap(0, Ordering::Relaxed);
                (calls > 0 || self_ns > 0).then_some((t, calls, self_ns))
            })
            .collect()
    }

    /// The agent's trace for our trace `t`, or `None` if it can't be resolved.
    fn agent_trace(&self, ctx: &Context, jni: Jni, t: u32) -> Option<Arc<Trace>> {
        let (frames, thread) = self.traces.lock().ok()?.entries.get(t as usize)?.clone();
        let methods = self.methods.lock().ok()?;
        let mut resolved = Vec::with_capacity(frames.len());
        for &m in frames.iter() {
            let id = *methods.resolved.get(m as usize - 1)?;
            if id == 0 {
                return None;
            }
            resolved.push((id as jmethodID, -1));
        }
        drop(methods);
        ctx.traces
            .lock()
            .ok()?
            .intern(ctx.jvmti, jni, &ctx.ids, &resolved, thread)
    }

    /// Writes the CPU TIME (ms) section (or the cpu=old listing) of the interval since the
    /// last dump, and starts a new interval.
    pub fn write_times(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        let costs = self.take_costs(jni);
        if ctx.options.cpu_old {
            let inclusive = self
                .old_times
                .lock()
                .map(|mut old| std::mem::take(&mut *old))
                .unwrap_or_default();
            let mut rows: Vec<(u64, Option<String>, Option<String>, u64)> = Vec::new();
            for &(t, calls, _) in &costs {
                if calls == 0 {
                    continue;
                }
                let (frames, thread) = self
                    .traces
                    .lock()
                    .ok()
                    .and_then(|tr| tr.entries.get(t as usize).cloned())
                    .unwrap_or_default();
                let callee = frames.first().copied().unwrap_or(0);
                let caller = frames.get(1).copied().unwrap_or(0);
                let ns = inclusive
                    .get(&(callee, caller, thread))
                    .copied()
                    .unwrap_or(0);
                rows.push((
                    calls,
                    self.old_name(callee),
                    self.old_name(caller),
                    ns / 1_000_000,
                ));
            }
            rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            out.write(|w| w.cpu_old(&rows));
            self.report(ctx);
            return;
        }
        let Some(jni) = jni else { return };
        let mut rows: Vec<(Arc<Trace>, u64, u64)> = Vec::new();
        for &(t, calls, self_ns) in &costs {
            if let Some(trace) = jni.with_local_frame(16, || self.agent_trace(ctx, jni, t)) {
                rows.push((trace, calls, self_ns / 1_000_000));
            }
        }
        let total: u64 = rows.iter().map(|r| r.2).sum();
        // CPU time is credited to the traces on the stack whether or not their calls have
        // ended; a trace with time but no finished call (a method still running, like main
        // at a SIGQUIT dump) counts in the total but has no row.
        rows.retain(|r| r.1 > 0);
        rows.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then(b.1.cmp(&a.1))
                .then(a.0.serial.cmp(&b.0.serial))
        });
        let cutoff = ctx.options.cutoff;
        let shown = rows
            .iter()
            .position(|(_, calls, ms)| {
                *calls == 0 || (total > 0 && (*ms as f64 / total as f64) < cutoff)
            })
            .unwrap_or(rows.len());
        rows.truncate(shown);
        out.write(|w| w.cpu_times(&rows, total));
        self.report(ctx);
    }

    /// With `verbose=y`, one line on what the rewriter did and on traces the table could not
    /// keep.
    fn report(&self, ctx: &Context) {
        if !ctx.options.verbose {
            return;
        }
        eprintln!(
            "HPROF: cpu=times rewrote {} classes ({} methods, {} left as they were); {} traces looked up by the agent (not in the threads' caches); {} traces dropped (table full); method ids found in {} ms",
            self.classes_instrumented.load(Ordering::Relaxed),
            self.methods_instrumented.load(Ordering::Relaxed),
            self.methods_failed.load(Ordering::Relaxed),
            self.lookups.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
            self.resolve_ns.load(Ordering::Relaxed) / 1_000_000
        );
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
        let early = !sharing_required();
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
