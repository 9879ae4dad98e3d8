//! The `cpu=times` (and `cpu=old`) engine: every method of every class is rewritten (by
//! `hprof-classfile`) to call the tracker at entry, before each return and on exceptional
//! exit; the tracker's natives keep a shadow stack per thread and count each finished call
//! against its trace, exactly. CPU time is the thread's CPU time, not wall time: an agent
//! thread reads each thread's CPU clock every millisecond and credits what it used to the
//! trace on top of its shadow stack (self time) and to every trace on it (total time).
//!
//! Classes loaded before the VM is live (before the tracker class can exist) are rewritten
//! by retransformation at VM init; every later class as it loads.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

use hprof_classfile::{
    ENGAGED, ENTER, EXIT, Probes, TRACKER_CLASS, UNWIND, instrument, tracker_class,
};

use crate::engine::{Context, Engine};
use crate::jvmti::{Capabilities, Event, Jni, Jvmti, RawMonitor, jclass, jmethodID};
use crate::output::ProfileOutput;
use crate::trace_store::{MAX_TRACES, Trace};

/// Name of the timing thread.
pub const THREAD_NAME: &str = "HPROF cpu timing thread";

/// How often the timing thread reads the threads' CPU clocks.
const TICK_MS: i64 = 1;
/// How long VM death waits for the timing thread.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);
/// Deepest shadow stack kept per thread; deeper calls are counted but not recorded.
const MAX_SHADOW: usize = 64 * 1024;
const SHADOW_CHUNK: usize = 1024;
/// How far down the shadow stack a return looks for its method's frame.
const MAX_UNWIND_SEARCH: usize = 256;
/// Classes per RetransformClasses call at VM init.
const RETRANSFORM_BATCH: usize = 256;
/// "No trace": the parent of a thread's bottom frame.
const NO_TRACE: u32 = u32::MAX;

/// The probes the rewriter inserts, named as the generated tracker class has them.
const PROBES: Probes<'static> = Probes {
    tracker: TRACKER_CLASS.as_bytes(),
    enter: ENTER.as_bytes(),
    exit: EXIT.as_bytes(),
    unwind: UNWIND.as_bytes(),
};

/// Per-trace costs, updated without locks by the threads that run the calls.
#[derive(Debug, Default)]
struct Cost {
    calls: AtomicU64,
    self_ns: AtomicU64,
    total_ns: AtomicU64,
}

/// A fixed-capacity table of costs by trace index, grown chunk by chunk without moving.
#[derive(Debug)]
struct Costs {
    chunks: Box<[OnceLock<Box<[Cost]>>]>,
}

const COST_CHUNK: usize = 4096;

impl Costs {
    fn new() -> Costs {
        Costs {
            chunks: (0..MAX_TRACES.div_ceil(COST_CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    fn get(&self, index: u32) -> Option<&Cost> {
        let index = index as usize;
        let chunk = self.chunks.get(index / COST_CHUNK)?;
        let chunk = chunk.get_or_init(|| (0..COST_CHUNK).map(|_| Cost::default()).collect());
        chunk.get(index % COST_CHUNK)
    }
}

/// A method the rewriter numbered.
#[derive(Debug, Clone)]
struct MethodName {
    class: String,
    name: String,
    signature: String,
}

/// (class name, method name, descriptor), as the class file spells them.
type MethodKey = (Box<[u8]>, Box<[u8]>, Box<[u8]>);

/// Method numbers: one per [`MethodKey`], from 1.
#[derive(Debug, Default)]
struct Methods {
    ids: HashMap<MethodKey, u32>,
    names: Vec<MethodName>,
    /// The jmethodID each number was first seen running as (0: not yet).
    resolved: Vec<usize>,
}

/// Traces as sequences of method numbers, innermost first, with the thread for `thread=y`.
#[derive(Debug, Default)]
struct Traces {
    index: HashMap<(Box<[u32]>, u32), u32>,
    entries: Vec<(Box<[u32]>, u32)>,
}

/// A thread's shadow stack, readable by the timing thread while the owner pushes and pops.
/// Each slot holds `method << 32 | trace`.
#[derive(Debug)]
struct Shadow {
    len: AtomicUsize,
    chunks: Box<[OnceLock<Box<[AtomicU64]>>]>,
}

impl Shadow {
    fn new() -> Shadow {
        Shadow {
            len: AtomicUsize::new(0),
            chunks: (0..MAX_SHADOW / SHADOW_CHUNK)
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    fn slot(&self, index: usize) -> Option<&AtomicU64> {
        let chunk = self.chunks.get(index / SHADOW_CHUNK)?;
        chunk.get()?.get(index % SHADOW_CHUNK)
    }

    fn slot_or_grow(&self, index: usize) -> Option<&AtomicU64> {
        let chunk = self.chunks.get(index / SHADOW_CHUNK)?;
        let chunk = chunk.get_or_init(|| (0..SHADOW_CHUNK).map(|_| AtomicU64::new(0)).collect());
        chunk.get(index % SHADOW_CHUNK)
    }
}

/// What a thread keeps for itself.
struct Local {
    shadow: Arc<Shadow>,
    /// Frames pushed beyond [`MAX_SHADOW`], counted so pops match.
    overflow: usize,
    /// (method, parent trace) → trace; FxHash, as this lookup is on every call.
    cache: FxHashMap<(u32, u32), u32>,
    serial: u32,
}

impl Drop for Local {
    fn drop(&mut self) {
        if let Some((_, engine)) = STATE.get()
            && let Ok(mut shadows) = engine.shadows.lock()
            && shadows
                .get(&self.serial)
                .is_some_and(|s| Arc::ptr_eq(s, &self.shadow))
        {
            shadows.remove(&self.serial);
        }
    }
}

thread_local! {
    static LOCAL: RefCell<Option<Local>> = const { RefCell::new(None) };
}

/// The engine.
#[derive(Debug)]
pub struct CpuTimes {
    methods: Mutex<Methods>,
    traces: Mutex<Traces>,
    costs: Costs,
    /// Shadow stacks by thread serial, for the timing thread.
    shadows: Mutex<HashMap<u32, Arc<Shadow>>>,
    /// The tracker class is defined: classes loading now can be rewritten.
    ready: AtomicBool,
    /// Calls are being recorded (from VM init to VM death).
    engaged: AtomicBool,
    monitor: OnceLock<RawMonitor>,
    stop: AtomicBool,
    running: AtomicBool,
    /// Classes and methods rewritten, methods that could not be.
    classes_instrumented: AtomicU64,
    methods_instrumented: AtomicU64,
    methods_failed: AtomicU64,
    /// Traces not kept because the table was full.
    dropped: AtomicU32,
}

static STATE: OnceLock<(&'static Context, &'static CpuTimes)> = OnceLock::new();

/// The running engine and its context, if `cpu=times` or `cpu=old` is on.
pub fn running() -> Option<(&'static Context, &'static CpuTimes)> {
    STATE.get().copied()
}

impl Default for CpuTimes {
    fn default() -> Self {
        CpuTimes::new()
    }
}

impl CpuTimes {
    /// An engine not yet started.
    pub fn new() -> CpuTimes {
        CpuTimes {
            methods: Mutex::new(Methods::default()),
            traces: Mutex::new(Traces::default()),
            costs: Costs::new(),
            shadows: Mutex::new(HashMap::new()),
            ready: AtomicBool::new(false),
            engaged: AtomicBool::new(false),
            monitor: OnceLock::new(),
            stop: AtomicBool::new(false),
            running: AtomicBool::new(false),
            classes_instrumented: AtomicU64::new(0),
            methods_instrumented: AtomicU64::new(0),
            methods_failed: AtomicU64::new(0),
            dropped: AtomicU32::new(0),
        }
    }

    /// The class file load hook: the rewritten class, or `None` to keep it as it is.
    pub fn transform(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        if !self.ready.load(Ordering::Acquire) || name == Some(TRACKER_CLASS.as_bytes()) {
            return None;
        }
        let outcome = instrument(class, &PROBES, |m| {
            self.method_id(m.class, m.name, m.descriptor)
        })
        .ok()?;
        self.methods_failed
            .fetch_add(outcome.failed.len() as u64, Ordering::Relaxed);
        if self.verbose() {
            for (method, why) in &outcome.failed {
                eprintln!(
                    "HPROF: {}.{method} left uninstrumented: {why}",
                    String::from_utf8_lossy(name.unwrap_or(b"?"))
                );
            }
        }
        let bytes = outcome.bytes?;
        self.classes_instrumented.fetch_add(1, Ordering::Relaxed);
        self.methods_instrumented
            .fetch_add(u64::from(outcome.instrumented), Ordering::Relaxed);
        Some(bytes)
    }

    fn verbose(&self) -> bool {
        STATE.get().is_some_and(|(ctx, _)| ctx.options.verbose)
    }

    fn method_id(&self, class: &[u8], name: &[u8], descriptor: &[u8]) -> Option<u32> {
        let mut methods = self.methods.lock().ok()?;
        let key = (Box::from(class), Box::from(name), Box::from(descriptor));
        if let Some(&id) = methods.ids.get(&key) {
            return Some(id);
        }
        if methods.names.len() >= i32::MAX as usize - 1 {
            return None;
        }
        methods.names.push(MethodName {
            class: String::from_utf8_lossy(class).into_owned(),
            name: String::from_utf8_lossy(name).into_owned(),
            signature: String::from_utf8_lossy(descriptor).into_owned(),
        });
        methods.resolved.push(0);
        let id = methods.names.len() as u32;
        methods.ids.insert(key, id);
        Some(id)
    }

    /// `HprofTracker.enter(method)`: pushes a frame for `method`.
    pub fn enter(&self, ctx: &Context, method: u32) {
        if !self.engaged.load(Ordering::Relaxed) {
            return;
        }
        let _ = LOCAL.try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return;
            };
            let local = slot.get_or_insert_with(|| self.new_local(ctx));
            let len = local.shadow.len.load(Ordering::Relaxed);
            if len >= MAX_SHADOW {
                local.overflow += 1;
                return;
            }
            let parent = match len.checked_sub(1).and_then(|i| local.shadow.slot(i)) {
                Some(top) => top.load(Ordering::Relaxed) as u32,
                None => NO_TRACE,
            };
            let trace = match local.cache.get(&(method, parent)) {
                Some(&t) => t,
                None => match self.intern(ctx, local, method, parent) {
                    Some(t) => {
                        local.cache.insert((method, parent), t);
                        t
                    }
                    None => NO_TRACE,
                },
            };
            if let Some(slot) = local.shadow.slot_or_grow(len) {
                slot.store(
                    (u64::from(method) << 32) | u64::from(trace),
                    Ordering::Relaxed,
                );
                local.shadow.len.store(len + 1, Ordering::Release);
            }
        });
    }

    /// `HprofTracker.exit(method)` and `unwind(method)`: pops frames down to and including
    /// the nearest frame of `method` (frames above it left without a probe, such as a
    /// constructor that threw before its super call, end there too), counting each as a
    /// finished call.
    pub fn exit(&self, method: u32) {
        if !self.engaged.load(Ordering::Relaxed) {
            return;
        }
        let _ = LOCAL.try_with(|cell| {
            let Ok(mut slot) = cell.try_borrow_mut() else {
                return;
            };
            let Some(local) = slot.as_mut() else { return };
            if local.overflow > 0 {
                local.overflow -= 1;
                return;
            }
            let len = local.shadow.len.load(Ordering::Relaxed);
            let lowest = len.saturating_sub(MAX_UNWIND_SEARCH);
            let mut found = None;
            for i in (lowest..len).rev() {
                let Some(slot) = local.shadow.slot(i) else {
                    break;
                };
                if (slot.load(Ordering::Relaxed) >> 32) as u32 == method {
                    found = Some(i);
                    break;
                }
            }
            let Some(base) = found else { return };
            for i in base..len {
                if let Some(slot) = local.shadow.slot(i) {
                    let trace = slot.load(Ordering::Relaxed) as u32;
                    if let Some(cost) = self.costs.get(trace).filter(|_| trace != NO_TRACE) {
                        cost.calls.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
            local.shadow.len.store(base, Ordering::Release);
        });
    }

    fn new_local(&self, ctx: &Context) -> Local {
        let serial = ctx
            .jvmti
            .thread_local(std::ptr::null_mut())
            .map(|s| s as u32)
            .unwrap_or(0);
        let shadow = Arc::new(Shadow::new());
        if serial != 0
            && let Ok(mut shadows) = self.shadows.lock()
        {
            shadows.insert(serial, shadow.clone());
        }
        Local {
            shadow,
            overflow: 0,
            cache: FxHashMap::default(),
            serial,
        }
    }

    /// The trace of `method` called under the frame whose trace is `parent`.
    fn intern(&self, ctx: &Context, local: &Local, method: u32, parent: u32) -> Option<u32> {
        let depth = ctx.depth();
        let thread = if ctx.options.thread { local.serial } else { 0 };
        let traces = self.traces.lock().ok()?;
        let mut key: Vec<u32> = Vec::with_capacity(depth);
        if depth > 0 {
            key.push(method);
            if parent != NO_TRACE
                && let Some((frames, _)) = traces.entries.get(parent as usize)
            {
                key.extend(frames.iter().take(depth - 1));
            }
        }
        let key = (key.into_boxed_slice(), thread);
        if let Some(&t) = traces.index.get(&key) {
            return Some(t);
        }
        if traces.entries.len() >= MAX_TRACES {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return None;
        }
        drop(traces);
        self.resolve(ctx, method);
        let mut traces = self.traces.lock().ok()?;
        if let Some(&t) = traces.index.get(&key) {
            return Some(t);
        }
        let t = traces.entries.len() as u32;
        traces.entries.push(key.clone());
        traces.index.insert(key, t);
        Some(t)
    }

    /// Learns the jmethodID of `method` from the running frame: the native probe is frame
    /// 0, the tracker's method frame 1 and the instrumented method frame 2.
    fn resolve(&self, ctx: &Context, method: u32) {
        let known = self
            .methods
            .lock()
            .ok()
            .and_then(|m| m.resolved.get(method as usize - 1).copied())
            .unwrap_or(1);
        if known != 0 {
            return;
        }
        if let Ok(id) = ctx.jvmti.frame_method(2)
            && !id.is_null()
            && let Ok(mut methods) = self.methods.lock()
            && let Some(slot) = methods.resolved.get_mut(method as usize - 1)
        {
            *slot = id as usize;
        }
    }

    /// Defines the tracker class (its natives are found by name in this library), engages
    /// it and rewrites the classes already loaded.
    fn install(&self, ctx: &Context, jni: Jni) -> Result<(), String> {
        let bytes = tracker_class(TRACKER_CLASS);
        let class = jni
            .define_boot_class(c"java/lang/HprofTracker", &bytes)
            .ok_or("can't define the tracker class java.lang.HprofTracker")?;
        let engaged = std::ffi::CString::new(ENGAGED).map_err(|e| e.to_string())?;
        if !jni.set_static_boolean(class, &engaged, true) {
            return Err("can't engage the tracker".into());
        }
        jni.delete_local_ref(class);
        self.ready.store(true, Ordering::Release);
        self.engaged.store(true, Ordering::Release);
        ctx.jvmti
            .set_event(Event::ClassFileLoadHook, true)
            .map_err(|e| format!("can't enable class file load hooks ({e})"))?;
        self.retransform_loaded(ctx.jvmti, jni);
        Ok(())
    }

    fn retransform_loaded(&self, jvmti: Jvmti, jni: Jni) {
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        let modifiable: Vec<jclass> = classes
            .iter()
            .copied()
            .filter(|&c| jvmti.is_modifiable_class(c))
            .collect();
        for batch in modifiable.chunks(RETRANSFORM_BATCH) {
            if jvmti.retransform_classes(batch).is_err() {
                // One bad class fails the batch: retry one by one.
                for &class in batch {
                    let _ = jvmti.retransform_classes(&[class]);
                }
            }
        }
        for class in classes {
            jni.delete_local_ref(class);
        }
    }

    /// The body of the timing thread.
    pub fn run(_jni: Jni) {
        let Some(&(ctx, engine)) = STATE.get() else {
            return;
        };
        let Some(monitor) = engine.monitor.get() else {
            return;
        };
        let mut last: HashMap<u32, i64> = HashMap::new();
        let mut seen: Vec<u32> = Vec::new();
        loop {
            {
                let Ok(guard) = monitor.enter() else { break };
                if engine.stop.load(Ordering::Acquire) {
                    break;
                }
                let _ = guard.wait(TICK_MS);
                if engine.stop.load(Ordering::Acquire) {
                    break;
                }
            }
            engine.tick(ctx, &mut last, &mut seen);
        }
        if let Ok(guard) = monitor.enter() {
            engine.running.store(false, Ordering::Release);
            let _ = guard.notify_all();
        }
    }

    /// Credits each thread's CPU time since the last tick to the traces on its shadow stack.
    fn tick(&self, ctx: &Context, last: &mut HashMap<u32, i64>, seen: &mut Vec<u32>) {
        let mut used: Vec<(u32, u64)> = Vec::new();
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
                if let Some(before) = last.insert(thread.serial, cpu)
                    && cpu > before
                {
                    used.push((thread.serial, (cpu - before) as u64));
                }
            }
            last.retain(|serial, _| alive.contains(serial));
        }
        if used.is_empty() {
            return;
        }
        let shadows: Vec<(u64, Arc<Shadow>)> = match self.shadows.lock() {
            Ok(s) => used
                .iter()
                .filter_map(|(serial, ns)| s.get(serial).map(|sh| (*ns, sh.clone())))
                .collect(),
            Err(_) => return,
        };
        for (ns, shadow) in shadows {
            let len = shadow.len.load(Ordering::Acquire).min(MAX_SHADOW);
            if len == 0 {
                continue;
            }
            seen.clear();
            for i in (0..len).rev() {
                let Some(slot) = shadow.slot(i) else { continue };
                let trace = slot.load(Ordering::Relaxed) as u32;
                if trace == NO_TRACE {
                    continue;
                }
                if i == len - 1
                    && let Some(cost) = self.costs.get(trace)
                {
                    cost.self_ns.fetch_add(ns, Ordering::Relaxed);
                }
                seen.push(trace);
            }
            seen.sort_unstable();
            seen.dedup();
            for &trace in seen.iter() {
                if let Some(cost) = self.costs.get(trace) {
                    cost.total_ns.fetch_add(ns, Ordering::Relaxed);
                }
            }
        }
    }

    /// Takes the costs since the last dump: (trace index, calls, self ns, total ns) of every
    /// trace with calls or time.
    fn take_costs(&self) -> Vec<(u32, u64, u64, u64)> {
        let n = self.traces.lock().map(|t| t.entries.len()).unwrap_or(0);
        (0..n as u32)
            .filter_map(|t| {
                let cost = self.costs.get(t)?;
                let calls = cost.calls.swap(0, Ordering::Relaxed);
                let self_ns = cost.self_ns.swap(0, Ordering::Relaxed);
                let total_ns = cost.total_ns.swap(0, Ordering::Relaxed);
                (calls > 0 || self_ns > 0).then_some((t, calls, self_ns, total_ns))
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

    /// `class.method(signature)` of method number `m`, dotted, for cpu=old.
    fn old_name(&self, m: u32) -> Option<String> {
        let methods = self.methods.lock().ok()?;
        let name = methods.names.get(m as usize - 1)?;
        Some(format!(
            "{}.{}{}",
            name.class.replace('/', "."),
            name.name,
            name.signature
        ))
    }

    /// Writes the CPU TIME (ms) section (or the cpu=old listing) of the interval since the
    /// last dump, and starts a new interval.
    pub fn write_times(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        let costs = self.take_costs();
        if ctx.options.cpu_old {
            let mut rows: Vec<(u64, Option<String>, Option<String>, u64)> = Vec::new();
            for &(t, calls, _, total_ns) in &costs {
                if calls == 0 {
                    continue;
                }
                let frames = self
                    .traces
                    .lock()
                    .ok()
                    .and_then(|tr| tr.entries.get(t as usize).map(|e| e.0.clone()))
                    .unwrap_or_default();
                let callee = frames.first().and_then(|&m| self.old_name(m));
                let caller = frames.get(1).and_then(|&m| self.old_name(m));
                rows.push((calls, callee, caller, total_ns / 1_000_000));
            }
            rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            out.write(|w| w.cpu_old(&rows));
            return;
        }
        let Some(jni) = jni else { return };
        let mut rows: Vec<(Arc<Trace>, u64, u64)> = Vec::new();
        for &(t, calls, self_ns, _) in &costs {
            if let Some(trace) = jni.with_local_frame(16, || self.agent_trace(ctx, jni, t)) {
                rows.push((trace, calls, self_ns / 1_000_000));
            }
        }
        let total: u64 = rows.iter().map(|r| r.2).sum();
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
    }

    /// Classes and methods rewritten so far, and methods that could not be.
    pub fn instrumented(&self) -> (u64, u64, u64) {
        (
            self.classes_instrumented.load(Ordering::Relaxed),
            self.methods_instrumented.load(Ordering::Relaxed),
            self.methods_failed.load(Ordering::Relaxed),
        )
    }
}

impl Engine for CpuTimes {
    fn dump_message(&self) -> &'static str {
        " CPU usage in times ..."
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.thread_cpu_time = true;
        caps.class_hooks = true;
    }

    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), String> {
        STATE
            .set((ctx, self))
            .map_err(|_| "the CPU timer was started twice".to_string())?;
        let monitor = ctx
            .jvmti
            .raw_monitor("HPROF cpu timer")
            .map_err(|e| format!("can't create the timer monitor ({e})"))?;
        let _ = self.monitor.set(monitor);
        self.install(ctx, jni)?;
        let thread = jni
            .new_thread(THREAD_NAME)
            .ok_or("can't create the timing thread object")?;
        self.running.store(true, Ordering::Release);
        ctx.jvmti
            .run_agent_thread(thread, crate::entry::cpu_timer_thread, 0)
            .map_err(|e| {
                self.running.store(false, Ordering::Release);
                format!("can't start the timing thread ({e})")
            })?;
        jni.delete_local_ref(thread);
        Ok(())
    }

    fn stop(&self, _ctx: &Context) {
        self.engaged.store(false, Ordering::Release);
        let Some(monitor) = self.monitor.get() else {
            return;
        };
        let Ok(guard) = monitor.enter() else { return };
        self.stop.store(true, Ordering::Release);
        let _ = guard.notify_all();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while self.running.load(Ordering::Acquire) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = guard.wait(left.as_millis().max(1) as i64);
        }
    }

    fn dump(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        self.write_times(ctx, jni, out);
    }
}
