//! Owns the functions the JVM calls: `Agent_OnLoad` (and its refusals), `Agent_OnAttach`, the
//! JVMTI event callbacks and the natives of the agent's probes. Each one catches panics, so
//! none crosses into the JVM, and stays small: it hands the event to [`crate::profiler`],
//! which dispatches it to the engines that take it.

#![allow(unsafe_code)]

use std::ffi::{CStr, c_char, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{Context, Engine, Probe, ProbeAnswer};
use crate::error::{ErrorKind, report};
use crate::jvmti::{Callbacks, JavaVm, Jni, Jvmti, guarded, jthread, sys};
use crate::options::{Options, Parsed, help_text};
use crate::profiler::{self, Profiler};

const JNI_OK: sys::jint = 0;
const JNI_ERR: sys::jint = -1;

static LOADED: AtomicBool = AtomicBool::new(false);

/// Whether the exit handler is registered (once per process, whichever way the agent came).
static AT_EXIT: AtomicBool = AtomicBool::new(false);

fn register_at_exit() {
    if AT_EXIT.swap(true, Ordering::AcqRel) {
        return;
    }
    // SAFETY: `at_exit` is an `extern "C" fn()` that lives as long as the process
    // (libhprof.so is never unloaded) and catches its panics.
    if unsafe { libc::atexit(at_exit) } != 0 {
        report(
            ErrorKind::Load,
            "can't register an exit handler; an exit without VM death will lose the last dump",
        );
    }
}

/// Loads the agent into a running JVM (`hprof attach`, or `jcmd PID JVMTI.agent_load`):
/// starts, dumps, stops or reports on a profiling session as the `session=` option says.
/// The answer goes to the `reply=` file (for `hprof attach`) and, for a failure, to the
/// return code; the JVM keeps running whatever happens.
///
/// # Safety
/// Called by the JVM only: `vm` is its invocation interface and `options` a NUL-terminated
/// string or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnAttach(
    vm: *mut sys::JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> sys::jint {
    guarded("Agent_OnAttach", JNI_ERR, || {
        let opts = if options.is_null() {
            String::new()
        } else {
            // SAFETY: the JVM passes the option string as a NUL-terminated C string that
            // stays valid for this call.
            unsafe { CStr::from_ptr(options) }
                .to_string_lossy()
                .into_owned()
        };
        let options = match Options::parse(&opts, None) {
            Ok(Parsed::Run(options)) => options,
            Ok(Parsed::Help) => {
                reply_to(reply_option(&opts).as_deref(), help_text());
                return JNI_OK;
            }
            Err(err) => {
                match reply_option(&opts) {
                    Some(path) => reply_to(Some(&path), &format!("error: {err}\n")),
                    None => eprintln!("{err}"),
                }
                return JNI_ERR;
            }
        };
        let reply = options.reply.clone();
        let (code, answer) = attach(JavaVm::from_raw(vm), options);
        reply_to(reply.as_deref(), &answer);
        if code != JNI_OK && reply.is_none() {
            report(ErrorKind::Command, &answer);
        }
        code
    })
}

/// The `reply=` option of a string that did not parse.
fn reply_option(options: &str) -> Option<String> {
    options
        .split(',')
        .find_map(|o| o.strip_prefix("reply="))
        .map(str::to_string)
}

/// Writes `text` to the reply file, if there is one.
fn reply_to(path: Option<&str>, text: &str) {
    let Some(path) = path else { return };
    match hprof_outfile::create(std::path::Path::new(path)) {
        Ok(mut file) => {
            use std::io::Write;
            let _ = file.write_all(text.as_bytes());
        }
        Err(e) => report(
            ErrorKind::Command,
            format!("can't write the reply for hprof attach to {path} ({e})"),
        ),
    }
}

/// What an attach does: (return code, answer).
fn attach(vm: JavaVm, options: Options) -> (sys::jint, String) {
    use crate::options::Session;
    let running = profiler::get().filter(|p| p.is_running());
    match (options.session, running) {
        (Session::Start, Some(p)) => (
            JNI_ERR,
            format!(
                "error: a profiling session is already running in this JVM ({}); stop it first (hprof attach PID stop)\n",
                p.ctx.options.text
            ),
        ),
        (Session::Start, None) => {
            let Some(jni) = vm.jni() else {
                return (
                    JNI_ERR,
                    "error: the attaching thread has no JNI environment\n".into(),
                );
            };
            // SAFETY: `vm` is the JavaVM pointer the JVM passed to Agent_OnAttach; each
            // session gets its own JVMTI environment.
            let jvmti = match unsafe { Jvmti::from_vm(vm.raw()) } {
                Ok(jvmti) => jvmti,
                Err(code) => {
                    return (
                        JNI_ERR,
                        format!("error: no JVMTI environment (GetEnv returned {code})\n"),
                    );
                }
            };
            let text = options.text.clone();
            match Profiler::attach(vm, jvmti, options, &callbacks(), crate::listener::run, jni) {
                Ok(profiler) => {
                    register_at_exit();
                    (
                        JNI_OK,
                        format!(
                            "started: {text}\n{}{}",
                            file_line(profiler.output_path()),
                            profiler.late_notes()
                        ),
                    )
                }
                Err(message) => (JNI_ERR, format!("error: {message}\n")),
            }
        }
        (Session::Dump, Some(p)) => {
            let missing = p.dump_now();
            (
                JNI_OK,
                format!(
                    "dumped\n{}{}",
                    file_line(p.output_path()),
                    incomplete_lines(&missing)
                ),
            )
        }
        (Session::Stop, Some(p)) => {
            let path = p.output_path();
            let missing = p.stop_session();
            (
                JNI_OK,
                format!("stopped\n{}{}", file_line(path), incomplete_lines(&missing)),
            )
        }
        (Session::Status, Some(p)) => (
            JNI_OK,
            format!("{}{}", p.status(), file_line(p.output_path())),
        ),
        (Session::Status, None) => (JNI_OK, "running: no\n".into()),
        (Session::Dump | Session::Stop, None) => (
            JNI_ERR,
            "error: no profiling session is running in this JVM (hprof attach PID start)\n".into(),
        ),
    }
}

/// The `file: PATH` line of an answer: where the session's profile is.
fn file_line(path: Option<std::path::PathBuf>) -> String {
    path.map(|p| format!("file: {}\n", p.display()))
        .unwrap_or_default()
}

/// The `incomplete: WHY` lines of an answer: why the dump just written is incomplete.
fn incomplete_lines(missing: &[String]) -> String {
    missing
        .iter()
        .map(|why| format!("incomplete: {why}\n"))
        .collect()
}

fn callbacks() -> Callbacks {
    Callbacks {
        vm_init: Some(vm_init),
        vm_death: Some(vm_death),
        thread_start: Some(thread_start),
        thread_end: Some(thread_end),
        data_dump_request: Some(data_dump_request),
        sampled_object_alloc: Some(sampled_object_alloc),
        vm_object_alloc: Some(vm_object_alloc),
        monitor_contended_enter: Some(monitor_contended_enter),
        monitor_contended_entered: Some(monitor_contended_entered),
        monitor_wait: Some(monitor_wait),
        monitor_waited: Some(monitor_waited),
        class_file_load_hook: Some(class_file_load_hook),
        class_load: Some(class_load),
        class_prepare: Some(class_prepare),
        compiled_method_load: Some(compiled_method_load),
        dynamic_code_generated: Some(dynamic_code_generated),
    }
}

/// Loads the agent: `-agentpath:…/libhprof.so=OPTS`, `-agentlib:hprof=OPTS`, `-Xrunhprof:OPTS`.
///
/// # Safety
/// Called by the JVM only: `vm` is its invocation interface and `options` a NUL-terminated
/// string or null.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn Agent_OnLoad(
    vm: *mut sys::JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> sys::jint {
    guarded("Agent_OnLoad", JNI_ERR, || {
        if LOADED.swap(true, Ordering::AcqRel) {
            report(
                ErrorKind::Load,
                "Cannot load this JVM TI agent twice, check your java command line for duplicate hprof options.",
            );
            return JNI_ERR;
        }
        let opts = if options.is_null() {
            String::new()
        } else {
            // SAFETY: the JVM passes the option string as a NUL-terminated C string that
            // stays valid for this call.
            unsafe { CStr::from_ptr(options) }
                .to_string_lossy()
                .into_owned()
        };
        let env = std::env::var("_JAVA_HPROF_OPTIONS").ok();
        let options = match Options::parse(&opts, env.as_deref()) {
            Ok(Parsed::Help) => {
                println!("{}", help_text());
                std::process::exit(0);
            }
            Ok(Parsed::Run(options)) => options,
            Err(err) => {
                eprintln!("{err}");
                std::process::exit(1);
            }
        };
        // SAFETY: `vm` is the JavaVM pointer the JVM passed to Agent_OnLoad.
        let jvmti = match unsafe { Jvmti::from_vm(vm) } {
            Ok(jvmti) => jvmti,
            Err(code) => {
                report(
                    ErrorKind::Load,
                    format!(
                        "Unable to access JVMTI Version 1.2, JNIEnv's GetEnv() returned {code}"
                    ),
                );
                std::process::exit(1);
            }
        };
        match Profiler::load(
            JavaVm::from_raw(vm),
            jvmti,
            options,
            &callbacks(),
            crate::listener::run,
        ) {
            Ok(_) => {
                register_at_exit();
                JNI_OK
            }
            Err(error) => {
                error.report();
                std::process::exit(1);
            }
        }
    })
}

/// Runs when the process exits: if the JVM never posted VM death (it could not begin its
/// shutdown), the profiler writes its last dump and closes its output from here.
extern "C" fn at_exit() {
    guarded("the exit handler", (), || {
        if let Some(p) = profiler::get() {
            p.process_exit();
        }
    });
}

/// Nothing to undo: the output was closed at VM death.
#[unsafe(no_mangle)]
pub extern "C" fn Agent_OnUnload(_vm: *mut sys::JavaVM) {}

extern "C" fn vm_init(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: jthread) {
    guarded("VMInit", (), || {
        if let Some(p) = profiler::get() {
            p.vm_init(Jni::from_raw(jni), thread);
        }
    });
}

extern "C" fn vm_death(_jvmti: *mut sys::jvmtiEnv, _jni: *mut sys::JNIEnv) {
    guarded("VMDeath", (), || {
        if let Some(p) = profiler::get() {
            p.vm_death();
        }
    });
}

extern "C" fn thread_start(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: jthread) {
    guarded("ThreadStart", (), || {
        if let Some(p) = profiler::get() {
            p.on_thread_start(Jni::from_raw(jni), thread);
        }
    });
}

extern "C" fn thread_end(_jvmti: *mut sys::jvmtiEnv, jni: *mut sys::JNIEnv, thread: jthread) {
    guarded("ThreadEnd", (), || {
        if let Some(p) = profiler::get() {
            p.thread_end(Jni::from_raw(jni), thread);
        }
    });
}

extern "C" fn data_dump_request(_jvmti: *mut sys::jvmtiEnv) {
    guarded("DataDumpRequest", (), || {
        if let Some(p) = profiler::get() {
            p.data_dump_request();
        }
    });
}

extern "C" fn sampled_object_alloc(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    guarded("SampledObjectAlloc", (), || {
        if let Some(p) = profiler::get() {
            p.sampled_object_alloc(Jni::from_raw(jni), thread, object, class, size);
        }
    });
}

/// VMObjectAlloc: an object the VM made where bytecode could not count it (heap=sites' fast
/// mode).
extern "C" fn vm_object_alloc(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    _thread: jthread,
    object: sys::jobject,
    class: sys::jclass,
    size: sys::jlong,
) {
    guarded("VMObjectAlloc", (), || {
        if let Some(p) = profiler::get() {
            p.vm_object_alloc(Jni::from_raw(jni), object, class, size);
        }
    });
}

/// Runs a monitor event on the engines that take it.
fn monitor_event(what: &str, event: impl Fn(&dyn Engine, &Context)) {
    guarded(what, (), || {
        if let Some(p) = profiler::get() {
            p.monitor_event(event);
        }
    });
}

extern "C" fn monitor_contended_enter(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: jthread,
    _object: sys::jobject,
) {
    monitor_event("MonitorContendedEnter", |engine, ctx| {
        engine.monitor_contended_enter(ctx, Jni::from_raw(jni), thread)
    });
}

extern "C" fn monitor_contended_entered(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    _thread: jthread,
    object: sys::jobject,
) {
    monitor_event("MonitorContendedEntered", |engine, ctx| {
        engine.monitor_contended_entered(ctx, Jni::from_raw(jni), object)
    });
}

extern "C" fn monitor_wait(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: jthread,
    object: sys::jobject,
    timeout: sys::jlong,
) {
    monitor_event("MonitorWait", |engine, ctx| {
        engine.monitor_wait(ctx, Jni::from_raw(jni), thread, object, timeout)
    });
}

extern "C" fn monitor_waited(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    thread: jthread,
    object: sys::jobject,
    _timed_out: sys::jboolean,
) {
    monitor_event("MonitorWaited", |engine, ctx| {
        engine.monitor_waited(ctx, Jni::from_raw(jni), thread, object)
    });
}

/// ClassLoad: enabled only because AsyncGetCallTrace refuses to walk without it; nothing to do.
extern "C" fn class_load(
    _jvmti: *mut sys::jvmtiEnv,
    _jni: *mut sys::JNIEnv,
    _thread: jthread,
    _class: sys::jclass,
) {
}

/// ClassPrepare: the class's jmethodIDs are created now, so a stack walk in a signal handler
/// (which cannot create them) finds them.
extern "C" fn class_prepare(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    _thread: jthread,
    class: sys::jclass,
) {
    guarded("ClassPrepare", (), || {
        if let Some(p) = profiler::get() {
            p.class_prepare(Jni::from_raw(jni), class);
        }
    });
}

/// CompiledMethodLoad: enabled only so the JIT keeps debug information at every instruction
/// (an asynchronous walk then resolves inlined frames); nothing to do.
extern "C" fn compiled_method_load(
    _jvmti: *mut sys::jvmtiEnv,
    _method: sys::jmethodID,
    _code_size: sys::jint,
    _code_addr: *const c_void,
    _map_length: sys::jint,
    _map: *const sys::jvmtiAddrLocationMap,
    _compile_info: *const c_void,
) {
}

/// DynamicCodeGenerated: a stub's range and name, for the CPU sampler's stack walk (how to
/// unwind it) and its frames' names. Called on any thread, possibly with the JVM's locks
/// held: it only records.
extern "C" fn dynamic_code_generated(
    _jvmti: *mut sys::jvmtiEnv,
    name: *const std::ffi::c_char,
    address: *const c_void,
    length: sys::jint,
) {
    guarded("DynamicCodeGenerated", (), || {
        if name.is_null() || length <= 0 {
            return;
        }
        // SAFETY: the JVM passes a NUL-terminated name valid during the callback.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        if let Some(p) = profiler::get() {
            p.dynamic_code_generated(&name, address as usize, length as usize);
        }
    });
}

/// ClassFileLoadHook: the engines that rewrite classes (`cpu=times`, heap=sites' fast mode).
extern "C" fn class_file_load_hook(
    jvmti: *mut sys::jvmtiEnv,
    _jni: *mut sys::JNIEnv,
    _class_being_redefined: sys::jclass,
    _loader: sys::jobject,
    name: *const c_char,
    _protection_domain: sys::jobject,
    class_data_len: sys::jint,
    class_data: *const u8,
    new_class_data_len: *mut sys::jint,
    new_class_data: *mut *mut u8,
) {
    guarded("ClassFileLoadHook", (), || {
        if class_data.is_null()
            || class_data_len <= 0
            || new_class_data.is_null()
            || new_class_data_len.is_null()
        {
            return;
        }
        // SAFETY: the JVM passes the class file as `class_data_len` readable bytes that stay
        // valid for this call, and the class name (or null) as a NUL-terminated string.
        let (bytes, name) = unsafe {
            (
                std::slice::from_raw_parts(class_data, class_data_len as usize),
                (!name.is_null()).then(|| CStr::from_ptr(name).to_bytes()),
            )
        };
        let Some(new) = profiler::get().and_then(|p| p.class_file_load(name, bytes)) else {
            return;
        };
        let Ok(len) = sys::jint::try_from(new.len()) else {
            return;
        };
        if let Ok(mem) = Jvmti::from_raw(jvmti).allocate_copy(&new) {
            // SAFETY: both out-pointers were checked non-null above and point to the JVM's
            // out-values for this call; the JVM takes ownership of the JVMTI-allocated bytes.
            unsafe {
                *new_class_data_len = len;
                *new_class_data = mem;
            }
        }
    });
}

/// `java.lang.HprofAllocs.n(Object, int)`: the probe after a call of an allocating native
/// method (heap=sites' fast mode), with the object it returned and the kind of call.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofAllocs_n(
    jni: *mut sys::JNIEnv,
    _class: sys::jclass,
    object: sys::jobject,
    kind: sys::jint,
) {
    guarded("HprofAllocs.n", (), || {
        probe(jni, Probe::NativeAlloc { object, kind });
    })
}

// The tracker's natives, found by the JVM under their JNI names (it searches agent
// libraries for natives of boot classes), so nothing is registered from native code. The
// tracker calls them only off its common path.

/// `java.lang.HprofTracker.register(Thread)`: a thread's first call; returns its state.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofTracker_register(
    jni: *mut sys::JNIEnv,
    _class: sys::jclass,
    thread: sys::jobject,
) -> sys::jobject {
    guarded(
        "HprofTracker.register",
        std::ptr::null_mut(),
        || match probe(jni, Probe::TrackerRegister { thread }) {
            Some(ProbeAnswer::Object(state)) => state,
            _ => std::ptr::null_mut(),
        },
    )
}

/// `java.lang.HprofTracker.miss(Object, int, int)`: a trace not in the thread's caches.
#[unsafe(no_mangle)]
pub extern "system" fn Java_java_lang_HprofTracker_miss(
    jni: *mut sys::JNIEnv,
    _class: sys::jclass,
    state: sys::jobject,
    method: sys::jint,
    parent: sys::jint,
) -> sys::jint {
    guarded("HprofTracker.miss", -1, || {
        match probe(
            jni,
            Probe::TrackerMiss {
                state,
                method,
                parent,
            },
        ) {
            Some(ProbeAnswer::Int(number)) => number,
            _ => -1,
        }
    })
}

/// A call of one of the agent's probes, answered by the engine that takes it.
fn probe(jni: *mut sys::JNIEnv, probe: Probe) -> Option<ProbeAnswer> {
    profiler::get()?.probe(Jni::from_raw(jni), probe)
}
