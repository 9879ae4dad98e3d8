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

use crate::engine::ticker::Ticker;
use crate::engine::{Context, Current, Engine, select_engines};
use crate::jvmti::{Callbacks, Capabilities, Event, JavaVm, Jni, Jvmti, jthread};
use crate::options::Options;
use crate::output::{self, ProfileOutput};
use crate::threads::ThreadTable;
use crate::trace_store::{ClassInfo, ObjectIds, TraceStore};

/// The profiler of the running session: set by `Agent_OnLoad` (for the life of the JVM) or by
/// `Agent_OnAttach` (until `hprof attach … stop`). Never dropped: a stopped session's profiler
/// stays allocated, as event callbacks already running may still hold it.
static PROFILER: Current<&'static Profiler> = Current::new();

/// Lifecycle states.
const NEW: u8 = 0;
const RUNNING: u8 = 1;
const TERMINATED: u8 = 2;

/// The agent.
pub struct Profiler {
    /// Tables and options shared with the engines.
    pub ctx: Context,
    engines: Vec<Box<dyn Engine>>,
    output: Mutex<ProfileOutput>,
    state: AtomicU8,
    /// The `net=` connection, until the command listener takes it.
    commands: Mutex<Option<std::net::TcpStream>>,
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

impl std::fmt::Debug for Profiler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Profiler")
            .field("engines", &self.engines.len())
            .field("state", &self.state)
            .finish()
    }
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
    ) -> Result<&'static Profiler, String> {
        Profiler::load_in(vm, jvmti, options, callbacks, false)
    }

    /// [`Profiler::load`]; `late`: into a JVM already running.
    fn load_in(
        vm: JavaVm,
        jvmti: Jvmti,
        options: Options,
        callbacks: &Callbacks,
        late: bool,
    ) -> Result<&'static Profiler, String> {
        let wants_signals = (options.cpu_samples
            && options.sampler == crate::options::Sampler::Async)
            || options.cpu_wall;
        let asynchronous = if wants_signals {
            crate::engine::cpu_async::available(vm, !options.cpu_wall)
        } else {
            Err("not asked for".to_string())
        };
        if options.cpu_wall
            && let Err(why) = &asynchronous
        {
            return Err(format!("cpu=wall can't run: {why}"));
        }
        crate::engine::cpu_times::note_vm_feature(jvmti.feature_version());
        let engines = select_engines(&options, &asynchronous, late);
        let mut caps = Capabilities {
            line_numbers: true,
            source_file_name: true,
            tag_objects: true,
            ..Default::default()
        };
        for engine in &engines {
            engine.capabilities(&mut caps);
        }
        jvmti
            .add_capabilities(caps)
            .map_err(|e| format!("can't get the JVMTI capabilities it needs ({e})"))?;
        let opened = output::open(&options, std::process::id())?;
        let commands = opened.socket.as_ref().and_then(|s| s.try_clone().ok());
        let ctx = Context {
            jvmti,
            vm,
            threads: Mutex::new(ThreadTable::new()),
            traces: Mutex::new(TraceStore::new(options.lineno, options.thread)),
            ids: ObjectIds::new(),
            max_depth: AtomicU32::new(options.depth),
            options,
        };
        let profiler = Profiler {
            ctx,
            engines,
            output: Mutex::new(ProfileOutput::new(opened)),
            commands: Mutex::new(commands),
            state: AtomicU8::new(NEW),
            dumper: Ticker::new(),
            dumping: Mutex::new(()),
            started: std::time::SystemTime::now(),
        };
        let profiler: &'static Profiler = Box::leak(Box::new(profiler));
        if !PROFILER.set(profiler) {
            return Err("the profiler was loaded twice".to_string());
        }
        jvmti
            .set_callbacks(callbacks)
            .map_err(|e| format!("can't set event callbacks ({e})"))?;
        for engine in &profiler.engines {
            engine.on_load(jvmti)?;
        }
        // ObjectFree is never enabled: with it, JDK 17+ can deadlock when its Service Thread
        // posts the events while another thread flushes them (VM death does) and a safepoint
        // is requested meanwhile (see docs/compatibility.md, "Reliability").
        for event in [Event::VmInit, Event::VmDeath, Event::DataDumpRequest] {
            jvmti
                .set_event(event, true)
                .map_err(|e| format!("can't enable {event:?} ({e})"))?;
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
        jni: Jni,
    ) -> Result<&'static Profiler, String> {
        let profiler = Profiler::load_in(vm, jvmti, options, callbacks, true)?;
        let thread = jvmti
            .current_thread()
            .map_err(|e| format!("can't get the attaching thread ({e})"))?;
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
        let out = self.output.lock().unwrap_or_else(|e| e.into_inner());
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
        self.state.load(Ordering::Acquire) == RUNNING
    }

    fn write(&self, f: impl FnOnce(&mut dyn output::ProfileWriter) -> std::io::Result<()>) {
        if let Ok(mut out) = self.output.lock() {
            out.write(f);
        }
    }

    /// VMInit: threads already running get serials (the VM init thread first), then the
    /// engines start.
    pub fn vm_init(&'static self, jni: Jni, init_thread: jthread) {
        if self.ctx.options.heap_sites
            && self.ctx.options.alloc_interval == 0
            && !crate::engine::heap_sites::fast_mode(&self.ctx.options, false)
        {
            crate::engine::heap_sites::warm_up_sampler(jni);
        }
        if self
            .state
            .compare_exchange(NEW, RUNNING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return;
        }
        let jvmti = self.ctx.jvmti;
        for event in [Event::ThreadStart, Event::ThreadEnd] {
            if let Err(e) = jvmti.set_event(event, true) {
                eprintln!("HPROF ERROR: can't enable {event:?} events ({e})");
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
            if let Err(message) = engine.start(&self.ctx, jni) {
                eprintln!("HPROF ERROR: {message}");
            }
        }
        if let Err(message) =
            self.dumper
                .start(jvmti, jni, DUMP_THREAD_NAME, crate::entry::dump_thread)
        {
            eprintln!("HPROF ERROR: {message}; SIGQUIT dumps will run on the signal thread");
        }
        if self.commands.lock().map(|c| c.is_some()).unwrap_or(false) {
            let started = jni
                .new_thread(crate::listener::THREAD_NAME)
                .ok_or_else(|| "can't create the listener thread object".to_string())
                .and_then(|thread| {
                    let result = jvmti
                        .run_agent_thread(thread, crate::entry::listener_thread, 0)
                        .map_err(|e| e.to_string());
                    jni.delete_local_ref(thread);
                    result
                });
            if let Err(message) = started {
                eprintln!("HPROF ERROR: can't start the command listener ({message})");
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
        if let (Some(start), Ok(mut out)) = (start, self.output.lock()) {
            out.write(|w| w.thread_start(&start));
        }
    }

    /// ThreadEnd: a THREAD END record.
    pub fn thread_end(&self, jni: Jni, thread: jthread) {
        crate::engine::heap_sites::clear_thread_cache(jni);
        crate::engine::heap_sites::thread_end(jni, thread);
        crate::engine::cpu_times::thread_end(jni, thread);
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
        use crate::engine::Engine;
        let engine = crate::engine::heap_dump::HeapDump::new();
        let _dumping = self.dumping.lock();
        engine.prepare_with_output(&self.ctx, Some(jni), &self.output);
        self.with_output(|out| engine.dump(&self.ctx, Some(jni), out));
    }

    /// The front-end's ALLOC SITES.
    pub fn command_alloc_sites(&self, flags: u16, cutoff: f64) {
        if let Some((ctx, engine)) = crate::engine::heap_sites::running() {
            let _dumping = self.dumping.lock();
            engine.settle_live_counts(
                ctx.jvmti,
                ctx.vm.jni(),
                flags & crate::engine::heap_sites::FORCE_GC != 0,
            );
            self.with_output(|out| engine.write_sites(out, flags, cutoff));
        }
    }

    /// The front-end's HEAP SUMMARY.
    pub fn command_heap_summary(&self) {
        if let Some((ctx, engine)) = crate::engine::heap_sites::running() {
            let _dumping = self.dumping.lock();
            let totals = engine.totals(ctx, ctx.vm.jni());
            self.write(|w| w.heap_summary(&totals));
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
        use crate::engine::{cpu_async, cpu_samples};
        if let Some((ctx, engine)) = cpu_async::running() {
            let _dumping = self.dumping.lock();
            if let Some(jni) = ctx.vm.jni() {
                jni.with_local_frame(64, || engine.drain(ctx, jni));
            }
            self.with_output(|out| cpu_samples::write_samples(ctx, out, cutoff));
        } else if let Some((ctx, _)) = cpu_samples::running() {
            self.with_output(|out| cpu_samples::write_samples(ctx, out, cutoff));
        }
    }

    /// Runs `change` (to which samples count) once the asynchronous sampler's ring is drained,
    /// before its next drain: the samples taken before the front-end's command follow the
    /// rules before it, wherever the sampling thread's periodic drain was.
    fn after_drain(&self, change: impl FnOnce()) {
        use crate::engine::cpu_async;
        match cpu_async::running() {
            Some((ctx, engine)) => {
                let _dumping = self.dumping.lock();
                match ctx.vm.jni() {
                    Some(jni) => jni.with_local_frame(64, || engine.drain_then(ctx, jni, change)),
                    None => change(),
                }
            }
            None => change(),
        }
    }

    /// The front-end's CONTROL: allocation tracking on/off, CPU sampling on/off (for one
    /// thread by object id, or all for 0), clear CPU samples, clear sites, set the depth.
    pub fn command_control(&self, sub: u16, argument: u64) -> Result<(), String> {
        use crate::engine::{cpu_async, cpu_samples, heap_sites};
        match sub {
            1 | 2 => match heap_sites::running() {
                Some((ctx, engine)) => engine.set_tracking(ctx, sub == 1),
                None => return Err("allocation tracking needs heap=sites".into()),
            },
            3 | 4 => match (cpu_samples::running(), cpu_async::running()) {
                (Some((ctx, _)), _) => cpu_samples::set_sampling(ctx, argument, sub == 3),
                (None, Some((ctx, _))) => self.after_drain(|| {
                    cpu_samples::set_sampling(ctx, argument, sub == 3);
                }),
                (None, None) => return Err("CPU sampling needs cpu=samples or cpu=wall".into()),
            },
            5 => self.after_drain(|| {
                if let Ok(mut traces) = self.ctx.traces.lock() {
                    traces.clear_hits();
                }
            }),
            6 => {
                if let Some((_, engine)) = heap_sites::running() {
                    engine.clear();
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
        if let Ok(mut out) = self.output.lock() {
            f(&mut out);
        }
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
        if self.state.load(Ordering::Acquire) != RUNNING {
            return;
        }
        eprintln!(
            "HPROF ERROR: the JVM is exiting without its VM death event (it could not begin its \
             shutdown, most often because the Java heap is exhausted); writing the last dump \
             from the exit handler"
        );
        let dumped = !self.ctx.options.doe || self.dumper.request_and_wait(EXIT_DUMP_TIMEOUT);
        if self.state.swap(TERMINATED, Ordering::AcqRel) != RUNNING {
            return;
        }
        // The dump thread may still hold the output if its dump did not finish in time.
        let deadline = std::time::Instant::now() + EXIT_CLOSE_TIMEOUT;
        loop {
            match self.output.try_lock() {
                Ok(mut out) => {
                    if !dumped {
                        let note = "the last dump could not be written: the JVM exited without its VM death event";
                        eprintln!("HPROF ERROR: {note}");
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
                        eprintln!(
                            "HPROF ERROR: the last dump did not finish before the process exited"
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
        if self.state.swap(TERMINATED, Ordering::AcqRel) != RUNNING {
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
        if let Ok(mut out) = self.output.lock() {
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
            engine.prepare_with_output(&self.ctx, jni, &self.output);
        }
        let unloaded = self.unloaded_classes(jni);
        let Ok(mut out) = self.output.lock() else {
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
