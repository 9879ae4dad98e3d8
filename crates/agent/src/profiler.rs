//! Owns the agent's lifetime: loading (options, output, capabilities, events), the start of
//! the engines at VM init, thread bookkeeping, dumps (at SIGQUIT and at VM death) and the
//! orderly stop at VM death, after which every callback is a no-op.
//!
//! A SIGQUIT dump runs on the agent's own dump thread, never inside the DataDumpRequest
//! callback: that callback runs on the JVM's Signal Dispatcher, which also serves the attach
//! mechanism and thread dumps, and a dump asks the JVM for garbage collections, heap walks and
//! stack traces that wait for safepoints.

use std::collections::HashSet;
use std::io::Write;
use std::sync::atomic::{AtomicU8, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use crate::engine::object_sites::{Pinned, Pins};
use crate::engine::ticker::Ticker;
use crate::engine::{
    Context, Current, Engine, Hook, Peers, Probe, ProbeAnswer, SESSION_NEW, SESSION_RUNNING,
    SESSION_TERMINATED, select_engines,
};
use crate::error::{AgentError, ErrorKind, report};
use crate::jvmti::{
    Callbacks, Capabilities, Event, JavaVm, Jni, Jvmti, ThreadStartError, jclass, jobject, jthread,
};
use crate::options::Options;
use crate::output::{self, ProfileOutput};
use crate::threads::ThreadTable;
use crate::trace_store::{ClassInfo, ObjectIds, TraceStore};

/// The profiler of the running session: set by `Agent_OnLoad` (for the life of the JVM) or by
/// `Agent_OnAttach` (until `hprof attach … stop`). Never dropped: a stopped session's profiler
/// stays allocated, as event callbacks already running may still hold it.
static PROFILER: Current<&'static Profiler> = Current::new();

/// The agent.
pub struct Profiler {
    /// Tables and options shared with the engines.
    pub ctx: Context,
    engines: Vec<Box<dyn Engine>>,
    /// The dispatch table: for each [`Hook`] (by its position in [`Hook::ALL`]), the engines
    /// that take it, by index into `engines`. Built once at load.
    subscribers: Vec<Vec<usize>>,
    /// The `net=` connection, until the command listener takes it.
    commands: Mutex<Option<std::net::TcpStream>>,
    /// What the command listener thread runs.
    serve_commands: CommandLoop,
    /// The dump thread: SIGQUIT dumps run there.
    dumper: Ticker,
    /// When the session started, and whether it was attached to a running JVM.
    started: std::time::SystemTime,
    /// Held by whoever dumps (the dump thread, the command listener, VM death), from the
    /// engines' preparation to the end of the writing, so dumps never interleave. No event
    /// callback takes it.
    dumping: Mutex<()>,
}

/// How long an exit without VM death waits for the last dump, and then for the output.
const EXIT_DUMP_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(20);
const EXIT_CLOSE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Name of the dump thread (agent threads' names start with `HPROF `).
pub const DUMP_THREAD_NAME: &str = "HPROF dump thread";

/// Name of the `net=` command listener thread.
pub const LISTENER_THREAD_NAME: &str = "HPROF listener thread";

/// The body of the `net=` command listener thread, handed down by the entry points (the
/// listener sits above the profiler: it reads the front-end's commands and calls the
/// profiler's).
pub type CommandLoop = fn(Jni);

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("engines", &self.engines.len())
            .field("state", &self.ctx.state)
            .finish()
    }
}

/// The dispatch table of `engines`: for each hook of [`Hook::ALL`], the engines that take it,
/// in the engines' order (class rewriters in their [`Engine::class_file_order`]).
fn subscribers(engines: &[Box<dyn Engine>]) -> Vec<Vec<usize>> {
    Hook::ALL
        .iter()
        .map(|&hook| {
            let mut list: Vec<usize> = (0..engines.len())
                .filter(|&i| engines[i].hooks().contains(&hook))
                .collect();
            if hook == Hook::ClassFileLoad {
                list.sort_by_key(|&i| engines[i].class_file_order());
            }
            list
        })
        .collect()
}

/// The profiler, once loaded.
pub fn get() -> Option<&'static Profiler> {
    PROFILER.get()
}

impl Profiler {
    /// Sets up the agent in `Agent_OnLoad`: opens the output, asks for capabilities and
    /// enables the events. Errors are messages for an `HPROF ERROR:` line.
    pub fn load(
        vm: JavaVm,
        jvmti: Jvmti,
        options: Options,
        callbacks: &Callbacks,
        serve_commands: CommandLoop,
    ) -> Result<&'static Profiler, AgentError> {
        Profiler::load_in(vm, jvmti, options, callbacks, serve_commands, false)
    }

    /// [`Profiler::load`]; `late`: into a JVM already running.
    fn load_in(
        vm: JavaVm,
        jvmti: Jvmti,
        options: Options,
        callbacks: &Callbacks,
        serve_commands: CommandLoop,
        late: bool,
    ) -> Result<&'static Profiler, AgentError> {
        crate::jvmti::report::install(&crate::progress::LINES);
        let engines = select_engines(&options, vm, jvmti, late).map_err(AgentError::loading)?;
        let subscribers = subscribers(&engines);
        let mut caps = Capabilities {
            line_numbers: true,
            source_file_name: true,
            tag_objects: true,
            ..Default::default()
        };
        for engine in &engines {
            engine.capabilities(&mut caps);
        }
        jvmti.add_capabilities(caps).map_err(|e| {
            AgentError::loading(format!("can't get the JVMTI capabilities it needs ({e})"))
        })?;
        let opened = output::open(&options, std::process::id()).map_err(AgentError::loading)?;
        let commands = opened.socket.as_ref().and_then(|s| s.try_clone().ok());
        let ctx = Context {
            jvmti,
            vm,
            threads: Mutex::new(ThreadTable::new()),
            traces: Mutex::new(TraceStore::new(options.lineno, options.thread)),
            ids: ObjectIds::new(),
            max_depth: AtomicU32::new(options.depth),
            options,
            output: Mutex::new(ProfileOutput::new(opened)),
            state: AtomicU8::new(SESSION_NEW),
        };
        let profiler = Profiler {
            ctx,
            engines,
            subscribers,
            commands: Mutex::new(commands),
            serve_commands,
            dumper: Ticker::new(),
            dumping: Mutex::new(()),
            started: std::time::SystemTime::now(),
        };
        let profiler: &'static Profiler = Box::leak(Box::new(profiler));
        if !PROFILER.set(profiler) {
            return Err(AgentError::loading("the profiler was loaded twice"));
        }
        jvmti
            .set_callbacks(callbacks)
            .map_err(|e| AgentError::loading(format!("can't set event callbacks ({e})")))?;
        for engine in &profiler.engines {
            engine.on_load(&profiler.ctx)?;
        }
        // ObjectFree is never enabled: with it, JDK 17+ can deadlock when its Service Thread
        // posts the events while another thread flushes them (VM death does) and a safepoint
        // is requested meanwhile (see docs/compatibility.md, "Reliability").
        for event in [Event::VmInit, Event::VmDeath, Event::DataDumpRequest] {
            jvmti
                .set_event(event, true)
                .map_err(|e| AgentError::loading(format!("can't enable {event:?} ({e})")))?;
        }
        Ok(profiler)
    }

    /// Starts a session in a running JVM (`Agent_OnAttach`, on the JVM's attach listener
    /// thread): set up as `Agent_OnLoad` does, then started as at VM init.
    pub fn attach(
        vm: JavaVm,
        jvmti: Jvmti,
        options: Options,
        callbacks: &Callbacks,
        serve_commands: CommandLoop,
        jni: Jni,
    ) -> Result<&'static Profiler, AgentError> {
        let profiler = Profiler::load_in(vm, jvmti, options, callbacks, serve_commands, true)?;
        let thread = jvmti
            .current_thread()
            .map_err(|e| AgentError::loading(format!("can't get the attaching thread ({e})")))?;
        profiler.vm_init(jni, thread);
        jni.delete_local_ref(thread);
        Ok(profiler)
    }

    /// Ends an attached session (`hprof attach PID stop`): the engines stop (timers deleted,
    /// events disabled), the last dump is written and the output closed; every event of the
    /// session's JVMTI environment is disabled and its capabilities relinquished, and a new
    /// session may start. The environment itself is not disposed: an agent thread that
    /// outlived its two-second stop would then call into freed memory.
    pub fn stop_session(&self) -> Vec<String> {
        let missing = self.vm_death();
        for engine in &self.engines {
            engine.release(&self.ctx);
        }
        let jvmti = self.ctx.jvmti;
        for event in [
            Event::VmInit,
            Event::VmDeath,
            Event::DataDumpRequest,
            Event::ThreadStart,
            Event::ThreadEnd,
            Event::SampledObjectAlloc,
            Event::MonitorContendedEnter,
            Event::MonitorContendedEntered,
            Event::MonitorWait,
            Event::MonitorWaited,
            Event::ClassFileLoadHook,
            Event::ClassLoad,
            Event::ClassPrepare,
            Event::CompiledMethodLoad,
            Event::DynamicCodeGenerated,
        ] {
            let _ = jvmti.set_event(event, false);
        }
        let _ = jvmti.relinquish_all_capabilities();
        crate::engine::forget_running();
        PROFILER.clear();
        missing
    }

    /// What starting late costs or leaves out, engine by engine (`note: ` lines for `hprof
    /// attach`).
    pub fn late_notes(&self) -> String {
        self.engines
            .iter()
            .filter_map(|e| e.late_note())
            .map(|note| format!("note: {note}\n"))
            .collect()
    }

    /// A dump now, written before this returns (`hprof attach PID dump`); why it is
    /// incomplete (empty when it is whole).
    pub fn dump_now(&self) -> Vec<String> {
        if self.is_running() {
            self.dump()
        } else {
            vec!["the session is not running".into()]
        }
    }

    /// The path of the session's output file, when it writes one.
    pub fn output_path(&self) -> Option<std::path::PathBuf> {
        let out = self.ctx.output.lock().unwrap_or_else(|e| e.into_inner());
        out.path().map(std::path::Path::to_path_buf)
    }

    /// What `hprof attach PID status` prints.
    pub fn status(&self) -> String {
        let since = self
            .started
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let samples: u64 = match self.ctx.traces.lock() {
            Ok(traces) => traces.hits().iter().map(|(_, n)| n).sum(),
            Err(_) => 0,
        };
        let running = std::time::SystemTime::now()
            .duration_since(self.started)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let engines: String = self
            .engines
            .iter()
            .filter_map(|e| e.status())
            .map(|line| format!("{line}\n"))
            .collect();
        format!(
            "running: yes\nsince: {since}\nseconds: {running}\noptions: {}\nsamples since the last dump: {samples}\n{engines}",
            self.ctx.options.text
        )
    }

    /// Whether the VM is initialised and not yet dying: events are acted on only then.
    pub fn is_running(&self) -> bool {
        self.ctx.is_running()
    }

    fn write(&self, f: impl FnOnce(&mut dyn output::ProfileWriter) -> std::io::Result<()>) {
        if let Ok(mut out) = self.ctx.output.lock() {
            out.write(f);
        }
    }

    /// VMInit: threads already running get serials (the VM init thread first), then the
    /// engines start.
    pub fn vm_init(&'static self, jni: Jni, init_thread: jthread) {
        for engine in self.subscribers(Hook::VmInit) {
            engine.vm_init(&self.ctx, jni);
        }
        if self
            .ctx
            .state
            .compare_exchange(
                SESSION_NEW,
                SESSION_RUNNING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return;
        }
        let jvmti = self.ctx.jvmti;
        for event in [Event::ThreadStart, Event::ThreadEnd] {
            if let Err(e) = jvmti.set_event(event, true) {
                report(
                    ErrorKind::Start,
                    format!("can't enable {event:?} events ({e})"),
                );
            }
        }
        self.thread_start(jni, init_thread);
        jni.with_local_frame(64, || {
            if let Ok(threads) = jvmti.all_threads() {
                for thread in threads {
                    self.thread_start(jni, thread);
                    jni.delete_local_ref(thread);
                }
            }
        });
        for engine in &self.engines {
            if let Err(error) = engine.start(&self.ctx, jni) {
                error.report();
            }
        }
        if let Err(message) =
            self.dumper
                .start(jvmti, jni, DUMP_THREAD_NAME, "the dump thread", move |_| {
                    self.serve_dumps()
                })
        {
            report(
                ErrorKind::Dump,
                format!("{message}; SIGQUIT dumps will run on the signal thread"),
            );
        }
        if self.commands.lock().map(|c| c.is_some()).unwrap_or(false) {
            let serve = self.serve_commands;
            let started = jvmti
                .start_agent_thread(jni, LISTENER_THREAD_NAME, "the command listener", serve)
                .map_err(|e| match e {
                    ThreadStartError::NoThreadObject => {
                        "can't create the listener thread object".to_string()
                    }
                    ThreadStartError::Run(e) => e.to_string(),
                });
            if let Err(message) = started {
                report(
                    ErrorKind::Start,
                    format!("can't start the command listener ({message})"),
                );
            }
        }
    }

    /// ThreadStart (and threads found at VM init): a serial and a THREAD START record.
    pub fn thread_start(&self, jni: Jni, thread: jthread) {
        if !self.is_running() {
            return;
        }
        let start = match self.ctx.threads.lock() {
            Ok(mut table) => table.register(self.ctx.jvmti, jni, thread, || {
                self.ctx.ids.of(self.ctx.jvmti, thread)
            }),
            Err(_) => None,
        };
        if let (Some(start), Ok(mut out)) = (start, self.ctx.output.lock()) {
            out.write(|w| w.thread_start(&start));
        }
    }

    /// ThreadStart: the thread's serial and THREAD START record, then the engines'.
    pub fn on_thread_start(&self, jni: Jni, thread: jthread) {
        self.thread_start(jni, thread);
        if self.is_running() {
            for engine in self.subscribers(Hook::ThreadStart) {
                engine.thread_start(&self.ctx, jni, thread);
            }
        }
    }

    /// ThreadEnd: the engines', then a THREAD END record.
    pub fn thread_end(&self, jni: Jni, thread: jthread) {
        for engine in self.subscribers(Hook::ThreadEnd) {
            engine.thread_end(&self.ctx, jni, thread);
        }
        if !self.is_running() {
            return;
        }
        let serial = match self.ctx.threads.lock() {
            Ok(mut table) => table.unregister(self.ctx.jvmti, jni, thread),
            Err(_) => None,
        };
        if let Some(serial) = serial {
            self.write(|w| w.thread_end(serial));
        }
    }

    /// The `net=` connection, for the command listener (once).
    pub fn take_command_stream(&self) -> Option<std::net::TcpStream> {
        self.commands.lock().ok()?.take()
    }

    /// The front-end's FORCE GC.
    pub fn command_gc(&self) {
        let _ = self.ctx.jvmti.force_garbage_collection();
    }

    /// The front-end's DUMP HEAP (whatever `heap=` says: the dump needs no set-up).
    pub fn command_dump_heap(&self, jni: Jni) {
        let engine = crate::engine::heap_dump_on_request();
        let _dumping = self.dumping.lock();
        engine.prepare_with_output(&self.ctx, Some(jni), &self.ctx.output, self);
        self.with_output(|out| engine.dump(&self.ctx, Some(jni), out));
    }

    /// The front-end's ALLOC SITES.
    pub fn command_alloc_sites(&self, flags: u16, cutoff: f64) {
        for engine in self.subscribers(Hook::Sites) {
            let _dumping = self.dumping.lock();
            engine.alloc_sites(&self.ctx, flags, cutoff);
        }
    }

    /// The front-end's HEAP SUMMARY.
    pub fn command_heap_summary(&self) {
        for engine in self.subscribers(Hook::Sites) {
            let _dumping = self.dumping.lock();
            if let Some(totals) = engine.heap_summary(&self.ctx) {
                self.write(|w| w.heap_summary(&totals));
            }
        }
    }

    /// The front-end's DUMP TRACES: every trace not written yet.
    pub fn command_dump_traces(&self) {
        let traces = match self.ctx.traces.lock() {
            Ok(t) => t.all(),
            Err(_) => return,
        };
        self.write(|w| w.traces(&traces));
    }

    /// The front-end's CPU SAMPLES.
    pub fn command_cpu_samples(&self, cutoff: f64) {
        for engine in self.subscribers(Hook::CpuSamples) {
            // An engine that holds samples drains them first, under the dump lock.
            let _dumping = engine
                .hooks()
                .contains(&Hook::Drain)
                .then(|| self.dumping.lock());
            engine.cpu_samples(&self.ctx, cutoff);
        }
    }

    /// Runs `change` (to which samples count) once the samples engines hold are in the trace
    /// store (the asynchronous sampler's ring drained), before their next drain: the samples
    /// taken before the front-end's command follow the rules before it, wherever the sampling
    /// thread's periodic drain was.
    fn after_drain(&self, change: impl FnOnce()) {
        let mut change = Some(change);
        let mut run = || {
            if let Some(change) = change.take() {
                change();
            }
        };
        let jni = self.ctx.vm.jni();
        for engine in self.subscribers(Hook::Drain) {
            let _dumping = self.dumping.lock();
            match jni {
                Some(jni) => {
                    jni.with_local_frame(64, || engine.drain_then(&self.ctx, jni, &mut run))
                }
                None => run(),
            }
        }
        run();
    }

    /// The front-end's CONTROL: allocation tracking on/off, CPU sampling on/off (for one
    /// thread by object id, or all for 0), clear CPU samples, clear sites, set the depth.
    pub fn command_control(&self, sub: u16, argument: u64) -> Result<(), String> {
        let sites = || self.subscribers(Hook::Sites);
        let samplers = || self.subscribers(Hook::CpuSamples);
        match sub {
            1 | 2 => {
                if sites().next().is_none() {
                    return Err("allocation tracking needs heap=sites".into());
                }
                for engine in sites() {
                    engine.set_tracking(&self.ctx, sub == 1);
                }
            }
            3 | 4 => {
                if samplers().next().is_none() {
                    return Err("CPU sampling needs cpu=samples or cpu=wall".into());
                }
                self.after_drain(|| {
                    for engine in samplers() {
                        engine.set_sampling(&self.ctx, argument, sub == 3);
                    }
                });
            }
            5 => self.after_drain(|| {
                if let Ok(mut traces) = self.ctx.traces.lock() {
                    traces.clear_hits();
                }
            }),
            6 => {
                for engine in sites() {
                    engine.clear_sites(&self.ctx);
                }
            }
            7 => self
                .ctx
                .max_depth
                .store(argument.min(u64::from(u16::MAX)) as u32, Ordering::Relaxed),
            other => return Err(format!("unknown CONTROL sub-command {other}")),
        }
        Ok(())
    }

    /// The engines that take `hook`, in their dispatch order.
    fn subscribers(&self, hook: Hook) -> impl Iterator<Item = &dyn Engine> {
        self.subscribers[hook as usize]
            .iter()
            .map(|&i| self.engines[i].as_ref())
    }

    // JVM events, from the entry points: each goes to the engines that take it.

    /// SampledObjectAlloc.
    pub fn sampled_object_alloc(
        &self,
        jni: Jni,
        thread: jthread,
        object: jobject,
        class: jclass,
        size: i64,
    ) {
        for engine in self.subscribers(Hook::SampledObjectAlloc) {
            engine.sampled_object_alloc(&self.ctx, jni, thread, object, class, size);
        }
    }

    /// VMObjectAlloc.
    pub fn vm_object_alloc(&self, jni: Jni, object: jobject, class: jclass, size: i64) {
        if self.is_running() {
            for engine in self.subscribers(Hook::VmObjectAlloc) {
                engine.vm_object_alloc(&self.ctx, jni, object, class, size);
            }
        }
    }

    /// The monitor events: `event` runs for each engine that takes them, while the session
    /// runs.
    pub fn monitor_event(&self, event: impl Fn(&dyn Engine, &Context)) {
        if self.is_running() {
            for engine in self.subscribers(Hook::Monitor) {
                event(engine, &self.ctx);
            }
        }
    }

    /// ClassFileLoadHook: the class as the engines rewrote it, each what the previous made
    /// of it; `None` if none did.
    pub fn class_file_load(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        let mut rewritten: Option<Vec<u8>> = None;
        for engine in self.subscribers(Hook::ClassFileLoad) {
            if let Some(new) =
                engine.class_file_load(&self.ctx, name, rewritten.as_deref().unwrap_or(class))
            {
                rewritten = Some(new);
            }
        }
        rewritten
    }

    /// ClassPrepare.
    pub fn class_prepare(&self, jni: Jni, class: jclass) {
        for engine in self.subscribers(Hook::ClassPrepare) {
            engine.class_prepare(&self.ctx, jni, class);
        }
    }

    /// DynamicCodeGenerated.
    pub fn dynamic_code_generated(&self, name: &str, address: usize, length: usize) {
        for engine in self.subscribers(Hook::DynamicCodeGenerated) {
            engine.dynamic_code_generated(name, address, length);
        }
    }

    /// A call of one of the agent's probes in rewritten Java code: the first answer of an
    /// engine that takes it.
    pub fn probe(&self, jni: Jni, probe: Probe) -> Option<ProbeAnswer> {
        self.subscribers(Hook::Probe)
            .find_map(|engine| engine.probe(&self.ctx, jni, probe))
    }

    /// The classes the profile named that the JVM has unloaded since: those no longer among
    /// its loaded classes (found by their tags, the classes' object ids).
    fn unloaded_classes(&self, jni: Option<Jni>) -> Vec<Arc<ClassInfo>> {
        let (Some(jni), Ok(loaded)) = (jni, self.ctx.jvmti.loaded_classes()) else {
            return Vec::new();
        };
        let mut live = HashSet::with_capacity(loaded.len());
        for class in loaded {
            if let Ok(tag) = self.ctx.jvmti.tag(class)
                && tag != 0
            {
                live.insert(tag as u64);
            }
            jni.delete_local_ref(class);
        }
        match self.ctx.traces.lock() {
            Ok(mut traces) => traces.unload_classes_not_in(&live),
            Err(_) => Vec::new(),
        }
    }

    /// Runs `f` on the output (for engines' event-time records such as WAIT lines).
    pub fn with_output(&self, f: impl FnOnce(&mut ProfileOutput)) {
        self.ctx.with_output(f);
    }

    /// DataDumpRequest (SIGQUIT, Ctrl-\): asks the dump thread for a dump of everything
    /// collected since the last one, and returns at once. Requests that arrive while a dump
    /// runs are served by one more dump.
    pub fn data_dump_request(&self) {
        if self.is_running() && !self.dumper.request() {
            self.dump();
        }
    }

    /// The dump thread's body: a dump per request until VM death.
    pub fn serve_dumps(&self) {
        self.dumper.serve(|| {
            if self.is_running() {
                self.dump();
            }
        });
    }

    /// The process is exiting and VM death never came: the JVM could not begin its shutdown
    /// (with the Java heap exhausted, DestroyJavaVM cannot even attach its thread, and the
    /// launcher exits). Runs in a libc exit handler, on a thread the JVM may not know: the last
    /// dump runs on the dump thread, waited for a bounded time, then the output is closed.
    pub fn process_exit(&self) {
        if self.ctx.state.load(Ordering::Acquire) != SESSION_RUNNING {
            return;
        }
        report(
            ErrorKind::Dump,
            "the JVM is exiting without its VM death event (it could not begin its \
             shutdown, most often because the Java heap is exhausted); writing the last dump \
             from the exit handler",
        );
        let dumped = !self.ctx.options.doe || self.dumper.request_and_wait(EXIT_DUMP_TIMEOUT);
        if self.ctx.state.swap(SESSION_TERMINATED, Ordering::AcqRel) != SESSION_RUNNING {
            return;
        }
        // The dump thread may still hold the output if its dump did not finish in time.
        let deadline = std::time::Instant::now() + EXIT_CLOSE_TIMEOUT;
        loop {
            match self.ctx.output.try_lock() {
                Ok(mut out) => {
                    if !dumped {
                        let note = "the last dump could not be written: the JVM exited without its VM death event";
                        report(ErrorKind::Dump, note);
                        out.note_incomplete(note);
                    }
                    out.close();
                    return;
                }
                Err(std::sync::TryLockError::Poisoned(p)) => {
                    p.into_inner().close();
                    return;
                }
                Err(std::sync::TryLockError::WouldBlock) => {
                    if std::time::Instant::now() >= deadline {
                        report(
                            ErrorKind::Dump,
                            "the last dump did not finish before the process exited",
                        );
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
            }
        }
    }

    /// VMDeath: stop the engines, write the last dump (`doe=y`), close the output. Returns
    /// why the last dump is incomplete (empty when it is whole, or not written).
    pub fn vm_death(&self) -> Vec<String> {
        if self.ctx.state.swap(SESSION_TERMINATED, Ordering::AcqRel) != SESSION_RUNNING {
            return Vec::new();
        }
        self.dumper.stop();
        for engine in &self.engines {
            engine.stop(&self.ctx);
        }
        let missing = if self.ctx.options.doe {
            self.dump()
        } else {
            Vec::new()
        };
        if let Ok(mut out) = self.ctx.output.lock() {
            out.close();
        }
        missing
    }

    /// A dump of every engine: first each engine's preparation (the JVM calls that wait for
    /// safepoints), then the writing, under the output's lock. Returns why the dump is
    /// incomplete (empty when it is whole).
    fn dump(&self) -> Vec<String> {
        let Ok(_dumping) = self.dumping.lock() else {
            return vec!["another dump failed".into()];
        };
        let jni = self.ctx.vm.jni();
        for engine in &self.engines {
            engine.prepare_with_output(&self.ctx, jni, &self.ctx.output, self);
        }
        let unloaded = self.unloaded_classes(jni);
        let Ok(mut out) = self.ctx.output.lock() else {
            return vec!["the output is unusable after a failure".into()];
        };
        let mut message = String::from("Dumping");
        for engine in &self.engines {
            message.push_str(engine.dump_message());
            engine.dump(&self.ctx, self.ctx.vm.jni(), &mut out);
        }
        for class in &unloaded {
            out.write(|w| w.class_unload(class));
        }
        let missing = out.end_dump();
        // Written whole once the dump is done, so error lines never split it. A dump known
        // to be incomplete is never announced as done (its reasons are on the HPROF ERROR
        // lines above, and in the output).
        if self.ctx.options.verbose && !self.engines.is_empty() {
            if missing.is_empty() {
                eprintln!("{message} done.");
            } else {
                eprintln!("{message} INCOMPLETE: {}.", missing.join("; "));
            }
            let _ = std::io::stderr().flush();
        }
        missing
    }
}

impl Peers for Profiler {
    fn pin_object_sites(&self, jni: Jni) -> Option<(Pins, Pinned)> {
        self.subscribers(Hook::ObjectSites)
            .find_map(|engine| engine.pin_object_sites(&self.ctx, jni))
    }
}
