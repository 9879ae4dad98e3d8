//! The HPROF agent's FFI layer: every call into the JVM, a thin safe layer over the raw JVMTI
//! and JNI bindings in [`sys`]; the operating system's primitives ([`os`]); agent threads and
//! the panic barrier ([`thread`]); and the agent's error type ([`error`]). It imports nothing
//! of the agent (`hprof-agent` depends on it and re-exports it as `hprof::jvmti`); outside this
//! crate only the agent's signal handler and exported entry points use `unsafe`.
//!
//! Handles (`jthread`, `jclass`, `jmethodID`) are plain values here; they come from the JVM
//! (callbacks, other JVMTI calls) and the layer only passes them back to it.

#![deny(missing_docs)]
// Handles (`jthread`, `jobject`, ...) are opaque JVM values that these wrappers pass back to
// the JVM, never dereference; the JVM checks them (JVMTI_ERROR_INVALID_THREAD, ...).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

pub mod error;
pub mod os;
pub mod report;
pub mod sys;
pub mod thread;
pub mod vmstructs;

use std::ffi::{CStr, CString, c_char, c_void};
use std::fmt;
use std::ptr;

pub use sys::{jclass, jint, jlocation, jlong, jmethodID, jobject, jthread, jvmtiFrameInfo};
pub use thread::{ThreadStartError, guarded};

/// A JVMTI error code, shown with its name.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct JvmtiError(pub u32);

impl JvmtiError {
    /// The function table had no entry for the function (never happens on a real JVM).
    pub const MISSING_FUNCTION: JvmtiError = JvmtiError(u32::MAX);
    /// `JVMTI_ERROR_WRONG_PHASE`: the VM is not (or no longer) live.
    pub const WRONG_PHASE: JvmtiError = JvmtiError(112);
    /// `JVMTI_ERROR_THREAD_NOT_ALIVE`.
    pub const THREAD_NOT_ALIVE: JvmtiError = JvmtiError(15);

    /// The error's JVMTI name.
    pub fn name(self) -> &'static str {
        match self.0 {
            10 => "INVALID_THREAD",
            11 => "INVALID_THREAD_GROUP",
            13 => "THREAD_NOT_SUSPENDED",
            15 => "THREAD_NOT_ALIVE",
            20 => "INVALID_OBJECT",
            21 => "INVALID_CLASS",
            22 => "CLASS_NOT_PREPARED",
            23 => "INVALID_METHODID",
            24 => "INVALID_LOCATION",
            31 => "INVALID_MONITOR",
            32 => "NOT_MONITOR_OWNER",
            52 => "INTERRUPT",
            98 => "NOT_AVAILABLE",
            99 => "MUST_POSSESS_CAPABILITY",
            100 => "NULL_POINTER",
            101 => "ABSENT_INFORMATION",
            102 => "INVALID_EVENT_TYPE",
            103 => "ILLEGAL_ARGUMENT",
            104 => "NATIVE_METHOD",
            106 => "CLASS_LOADER_UNSUPPORTED",
            110 => "OUT_OF_MEMORY",
            111 => "ACCESS_DENIED",
            112 => "WRONG_PHASE",
            113 => "INTERNAL",
            115 => "UNATTACHED_THREAD",
            116 => "INVALID_ENVIRONMENT",
            u32::MAX => "MISSING_FUNCTION",
            _ => "UNKNOWN",
        }
    }
}

impl fmt::Debug for JvmtiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JVMTI Error {}({})", self.name(), self.0)
    }
}

impl fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

impl std::error::Error for JvmtiError {}

/// Result of a JVMTI call.
pub type Result<T> = std::result::Result<T, JvmtiError>;

/// Calls a JVMTI function through the environment's function table.
macro_rules! jvmti {
    ($env:expr, $name:ident $(, $arg:expr)* $(,)?) => {{
        let env: *mut sys::jvmtiEnv = $env.raw;
        // SAFETY: `env` is the live JVMTI environment obtained from GetEnv (JVMTI allows
        // its use from any thread); each argument is either a handle the JVM gave us or a
        // pointer to a local out-value of the type the function writes.
        let code = unsafe {
            match (**env).$name {
                Some(f) => f(env, $($arg),*),
                None => sys::jvmtiError(u32::MAX),
            }
        };
        if code.0 == 0 { Ok(()) } else { Err(JvmtiError(code.0)) }
    }};
}

/// Calls a JNI function through the environment's function table.
macro_rules! jni {
    ($env:expr, $name:ident $(, $arg:expr)* $(,)?) => {{
        let env: *mut sys::JNIEnv = $env.raw;
        // SAFETY: `env` is the calling thread's JNIEnv, handed to us by the JVM for this
        // thread; the arguments are handles or NUL-terminated strings of the right kind.
        unsafe {
            match (**env).$name {
                Some(f) => Some(f(env, $($arg),*)),
                None => None,
            }
        }
    }};
}

/// The JVMTI environment. Copyable: JVMTI environments are usable from every thread.
#[derive(Clone, Copy, Debug)]
pub struct Jvmti {
    raw: *mut sys::jvmtiEnv,
}

// SAFETY: the JVMTI specification allows an environment to be used from any thread.
unsafe impl Send for Jvmti {}
// SAFETY: as above; the environment has no thread affinity.
unsafe impl Sync for Jvmti {}

/// Frees JVMTI-allocated memory when dropped.
struct JvmtiBox<T> {
    env: Jvmti,
    ptr: *mut T,
}

impl<T> Drop for JvmtiBox<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            let _ = jvmti!(self.env, Deallocate, self.ptr.cast::<u8>());
        }
    }
}

/// Copies a JVMTI-allocated C string into a `String` and frees it.
fn take_string(env: Jvmti, ptr: *mut c_char) -> Option<String> {
    let guard = JvmtiBox { env, ptr };
    if guard.ptr.is_null() {
        return None;
    }
    // SAFETY: JVMTI returned a NUL-terminated modified-UTF-8 string it allocated; the guard
    // frees it after we copy it.
    let text = unsafe { CStr::from_ptr(guard.ptr) };
    Some(String::from_utf8_lossy(text.to_bytes()).into_owned())
}

/// Copies a JVMTI-allocated array of `len` items and frees it.
fn take_slice<T: Copy>(env: Jvmti, ptr: *mut T, len: jint) -> Vec<T> {
    let guard = JvmtiBox { env, ptr };
    if guard.ptr.is_null() || len <= 0 {
        return Vec::new();
    }
    // SAFETY: JVMTI returned an array of `len` initialised items that it allocated; the
    // guard frees it after we copy them.
    unsafe { std::slice::from_raw_parts(guard.ptr, len as usize) }.to_vec()
}

/// A thread's name and group.
#[derive(Debug, Clone)]
pub struct ThreadInfo {
    /// Thread name (empty when it has none).
    pub name: String,
    /// Thread group handle (a local reference).
    pub group: jobject,
    /// Whether the thread is a daemon.
    pub is_daemon: bool,
}

/// What GetObjectMonitorUsage reports.
#[derive(Debug, Clone)]
pub struct MonitorUsage {
    /// Owning thread, or null.
    pub owner: jthread,
    /// Times the owner entered it.
    pub entry_count: jint,
    /// Threads waiting to enter it.
    pub waiters: Vec<jthread>,
    /// Threads waiting to be notified.
    pub notify_waiters: Vec<jthread>,
}

/// Which optional JVMTI capabilities the agent asks for.
#[derive(Debug, Default, Clone, Copy)]
pub struct Capabilities {
    /// `can_get_thread_cpu_time`.
    pub thread_cpu_time: bool,
    /// `can_get_line_numbers`.
    pub line_numbers: bool,
    /// `can_get_source_file_name`.
    pub source_file_name: bool,
    /// `can_tag_objects`.
    pub tag_objects: bool,
    /// `can_generate_sampled_object_alloc_events`.
    pub sampled_object_alloc: bool,
    /// `can_generate_monitor_events`, `can_get_monitor_info`.
    pub monitors: bool,
    /// `can_get_owned_monitor_info`: granted only to agents loaded at start-up.
    pub owned_monitors: bool,
    /// `can_generate_all_class_hook_events`, `can_retransform_classes`: rewriting classes
    /// as they load and those loaded before.
    pub class_hooks: bool,
    /// `can_generate_early_class_hook_events`: class file load hooks from the primordial
    /// phase on (the JVM then runs without its class data sharing archive).
    pub early_class_hooks: bool,
    /// `can_generate_vm_object_alloc_events`: objects the VM allocates itself (clone,
    /// reflection, JNI).
    pub vm_object_alloc: bool,
    /// `can_get_constant_pool`: a loaded class's constant pool (to tell lambda classes apart).
    pub constant_pool: bool,
    /// `can_generate_compiled_method_load_events`: with the event enabled, the JIT keeps
    /// debug information at every instruction, so an asynchronous stack walk resolves
    /// inlined methods and lines anywhere in compiled code.
    pub compiled_method_load: bool,
}

/// The event callbacks the agent installs (each a plain `extern "C"` function).
#[derive(Debug, Default, Clone, Copy)]
pub struct Callbacks {
    /// VMInit.
    pub vm_init: sys::jvmtiEventVMInit,
    /// VMDeath.
    pub vm_death: sys::jvmtiEventVMDeath,
    /// ThreadStart.
    pub thread_start: sys::jvmtiEventThreadStart,
    /// ThreadEnd.
    pub thread_end: sys::jvmtiEventThreadEnd,
    /// DataDumpRequest.
    pub data_dump_request: sys::jvmtiEventDataDumpRequest,
    /// SampledObjectAlloc.
    pub sampled_object_alloc: sys::jvmtiEventSampledObjectAlloc,
    /// VMObjectAlloc.
    pub vm_object_alloc: sys::jvmtiEventVMObjectAlloc,
    /// MonitorContendedEnter.
    pub monitor_contended_enter: sys::jvmtiEventMonitorContendedEnter,
    /// MonitorContendedEntered.
    pub monitor_contended_entered: sys::jvmtiEventMonitorContendedEntered,
    /// MonitorWait.
    pub monitor_wait: sys::jvmtiEventMonitorWait,
    /// MonitorWaited.
    pub monitor_waited: sys::jvmtiEventMonitorWaited,
    /// ClassFileLoadHook.
    pub class_file_load_hook: sys::jvmtiEventClassFileLoadHook,
    /// ClassLoad.
    pub class_load: sys::jvmtiEventClassLoad,
    /// ClassPrepare.
    pub class_prepare: sys::jvmtiEventClassPrepare,
    /// CompiledMethodLoad.
    pub compiled_method_load: sys::jvmtiEventCompiledMethodLoad,
    /// DynamicCodeGenerated.
    pub dynamic_code_generated: sys::jvmtiEventDynamicCodeGenerated,
}

/// The events the agent enables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// VMInit.
    VmInit,
    /// VMDeath.
    VmDeath,
    /// ThreadStart.
    ThreadStart,
    /// ThreadEnd.
    ThreadEnd,
    /// DataDumpRequest (SIGQUIT).
    DataDumpRequest,
    /// SampledObjectAlloc.
    SampledObjectAlloc,
    /// VMObjectAlloc.
    VmObjectAlloc,
    /// MonitorContendedEnter.
    MonitorContendedEnter,
    /// MonitorContendedEntered.
    MonitorContendedEntered,
    /// MonitorWait.
    MonitorWait,
    /// MonitorWaited.
    MonitorWaited,
    /// ClassFileLoadHook.
    ClassFileLoadHook,
    /// ClassLoad.
    ClassLoad,
    /// ClassPrepare.
    ClassPrepare,
    /// CompiledMethodLoad.
    CompiledMethodLoad,
    /// DynamicCodeGenerated.
    DynamicCodeGenerated,
}

impl Event {
    fn code(self) -> sys::jvmtiEvent {
        match self {
            Event::VmInit => sys::jvmtiEvent::JVMTI_EVENT_VM_INIT,
            Event::VmDeath => sys::jvmtiEvent::JVMTI_EVENT_VM_DEATH,
            Event::ThreadStart => sys::jvmtiEvent::JVMTI_EVENT_THREAD_START,
            Event::ThreadEnd => sys::jvmtiEvent::JVMTI_EVENT_THREAD_END,
            Event::DataDumpRequest => sys::jvmtiEvent::JVMTI_EVENT_DATA_DUMP_REQUEST,
            Event::SampledObjectAlloc => sys::jvmtiEvent::JVMTI_EVENT_SAMPLED_OBJECT_ALLOC,
            Event::VmObjectAlloc => sys::jvmtiEvent::JVMTI_EVENT_VM_OBJECT_ALLOC,
            Event::MonitorContendedEnter => sys::jvmtiEvent::JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
            Event::MonitorContendedEntered => {
                sys::jvmtiEvent::JVMTI_EVENT_MONITOR_CONTENDED_ENTERED
            }
            Event::MonitorWait => sys::jvmtiEvent::JVMTI_EVENT_MONITOR_WAIT,
            Event::MonitorWaited => sys::jvmtiEvent::JVMTI_EVENT_MONITOR_WAITED,
            Event::ClassFileLoadHook => sys::jvmtiEvent::JVMTI_EVENT_CLASS_FILE_LOAD_HOOK,
            Event::ClassLoad => sys::jvmtiEvent::JVMTI_EVENT_CLASS_LOAD,
            Event::ClassPrepare => sys::jvmtiEvent::JVMTI_EVENT_CLASS_PREPARE,
            Event::CompiledMethodLoad => sys::jvmtiEvent::JVMTI_EVENT_COMPILED_METHOD_LOAD,
            Event::DynamicCodeGenerated => sys::jvmtiEvent::JVMTI_EVENT_DYNAMIC_CODE_GENERATED,
        }
    }
}

/// The JVMTI entry point signature of an agent thread.
pub type AgentThreadMain = unsafe extern "C" fn(*mut sys::jvmtiEnv, *mut sys::JNIEnv, *mut c_void);

impl Jvmti {
    /// Gets a JVMTI 1.2 environment from the VM Agent_OnLoad received.
    ///
    /// # Safety
    /// `vm` must be the `JavaVM` pointer the JVM passed to `Agent_OnLoad`.
    pub unsafe fn from_vm(vm: *mut sys::JavaVM) -> std::result::Result<Jvmti, jint> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: the caller guarantees `vm` is the JVM's invocation interface.
        let code = unsafe {
            match (**vm).GetEnv {
                Some(get_env) => get_env(vm, &mut env, sys::JVMTI_VERSION_1_2.0 as jint),
                None => -1,
            }
        };
        if code != 0 || env.is_null() {
            return Err(code);
        }
        Ok(Jvmti { raw: env.cast() })
    }

    /// Wraps the environment pointer a callback received.
    pub fn from_raw(raw: *mut sys::jvmtiEnv) -> Jvmti {
        Jvmti { raw }
    }

    /// Adds capabilities.
    pub fn add_capabilities(self, wanted: Capabilities) -> Result<()> {
        let mut caps = sys::jvmtiCapabilities::default();
        caps.set_can_get_thread_cpu_time(u32::from(wanted.thread_cpu_time));
        caps.set_can_get_line_numbers(u32::from(wanted.line_numbers));
        caps.set_can_get_source_file_name(u32::from(wanted.source_file_name));
        caps.set_can_tag_objects(u32::from(wanted.tag_objects));
        caps.set_can_generate_sampled_object_alloc_events(u32::from(wanted.sampled_object_alloc));
        caps.set_can_generate_monitor_events(u32::from(wanted.monitors));
        caps.set_can_get_owned_monitor_info(u32::from(wanted.owned_monitors));
        caps.set_can_get_monitor_info(u32::from(wanted.monitors));
        caps.set_can_generate_all_class_hook_events(u32::from(wanted.class_hooks));
        caps.set_can_retransform_classes(u32::from(wanted.class_hooks));
        caps.set_can_generate_early_class_hook_events(u32::from(wanted.early_class_hooks));
        caps.set_can_generate_compiled_method_load_events(u32::from(wanted.compiled_method_load));
        caps.set_can_generate_vm_object_alloc_events(u32::from(wanted.vm_object_alloc));
        caps.set_can_get_constant_pool(u32::from(wanted.constant_pool));
        jvmti!(self, AddCapabilities, &caps)
    }

    /// Gives back every capability this environment holds.
    pub fn relinquish_all_capabilities(self) -> Result<()> {
        let mut caps = sys::jvmtiCapabilities::default();
        jvmti!(self, GetCapabilities, &mut caps)?;
        jvmti!(self, RelinquishCapabilities, &caps)
    }

    /// Installs the event callbacks.
    pub fn set_callbacks(self, callbacks: &Callbacks) -> Result<()> {
        let mut raw = sys::jvmtiEventCallbacks {
            VMInit: callbacks.vm_init,
            VMDeath: callbacks.vm_death,
            ThreadStart: callbacks.thread_start,
            ThreadEnd: callbacks.thread_end,
            DataDumpRequest: callbacks.data_dump_request,
            SampledObjectAlloc: callbacks.sampled_object_alloc,
            VMObjectAlloc: callbacks.vm_object_alloc,
            MonitorContendedEnter: callbacks.monitor_contended_enter,
            MonitorContendedEntered: callbacks.monitor_contended_entered,
            MonitorWait: callbacks.monitor_wait,
            MonitorWaited: callbacks.monitor_waited,
            ClassFileLoadHook: callbacks.class_file_load_hook,
            ClassLoad: callbacks.class_load,
            ClassPrepare: callbacks.class_prepare,
            CompiledMethodLoad: callbacks.compiled_method_load,
            DynamicCodeGenerated: callbacks.dynamic_code_generated,
            ..Default::default()
        };
        let size = std::mem::size_of::<sys::jvmtiEventCallbacks>() as jint;
        jvmti!(self, SetEventCallbacks, &mut raw, size)
    }

    /// Enables or disables an event for all threads.
    pub fn set_event(self, event: Event, enabled: bool) -> Result<()> {
        let mode = if enabled {
            sys::jvmtiEventMode::JVMTI_ENABLE
        } else {
            sys::jvmtiEventMode::JVMTI_DISABLE
        };
        jvmti!(
            self,
            SetEventNotificationMode,
            mode,
            event.code(),
            ptr::null_mut()
        )
    }

    /// Sends the events `event` would have sent for what happened before it was enabled
    /// (GenerateEvents: the DynamicCodeGenerated events of the stubs made so far).
    pub fn generate_events(self, event: Event) -> Result<()> {
        jvmti!(self, GenerateEvents, event.code())
    }

    /// All live threads, as local references of the calling thread.
    pub fn all_threads(self) -> Result<Vec<jthread>> {
        let mut count: jint = 0;
        let mut threads: *mut jthread = ptr::null_mut();
        jvmti!(self, GetAllThreads, &mut count, &mut threads)?;
        Ok(take_slice(self, threads, count))
    }

    /// The calling thread.
    pub fn current_thread(self) -> Result<jthread> {
        let mut thread: jthread = ptr::null_mut();
        jvmti!(self, GetCurrentThread, &mut thread)?;
        Ok(thread)
    }

    /// A thread's name, group and daemon flag.
    pub fn thread_info(self, thread: jthread) -> Result<ThreadInfo> {
        let mut info = sys::jvmtiThreadInfo {
            name: ptr::null_mut(),
            priority: 0,
            is_daemon: 0,
            thread_group: ptr::null_mut(),
            context_class_loader: ptr::null_mut(),
        };
        jvmti!(self, GetThreadInfo, thread, &mut info)?;
        Ok(ThreadInfo {
            name: take_string(self, info.name).unwrap_or_default(),
            group: info.thread_group,
            is_daemon: info.is_daemon != 0,
        })
    }

    /// A thread group's name and parent.
    pub fn thread_group_info(self, group: jobject) -> Result<(String, jobject)> {
        let mut info = sys::jvmtiThreadGroupInfo {
            parent: ptr::null_mut(),
            name: ptr::null_mut(),
            max_priority: 0,
            is_daemon: 0,
        };
        jvmti!(self, GetThreadGroupInfo, group, &mut info)?;
        Ok((
            take_string(self, info.name).unwrap_or_default(),
            info.parent,
        ))
    }

    /// CPU time a thread has used, in nanoseconds.
    pub fn thread_cpu_time(self, thread: jthread) -> Result<i64> {
        let mut nanos: jlong = 0;
        jvmti!(self, GetThreadCpuTime, thread, &mut nanos)?;
        Ok(nanos)
    }

    /// The top `depth` frames of several threads at once; a thread that has ended gives an
    /// empty list.
    pub fn stack_traces(
        self,
        threads: &[jthread],
        depth: usize,
    ) -> Result<Vec<Vec<(jmethodID, jlocation)>>> {
        if threads.is_empty() || depth == 0 {
            return Ok(vec![Vec::new(); threads.len()]);
        }
        let mut infos: *mut sys::jvmtiStackInfo = ptr::null_mut();
        jvmti!(
            self,
            GetThreadListStackTraces,
            threads.len() as jint,
            threads.as_ptr(),
            depth.min(i32::MAX as usize) as jint,
            &mut infos
        )?;
        let guard = JvmtiBox {
            env: self,
            ptr: infos,
        };
        let mut out = Vec::with_capacity(threads.len());
        for i in 0..threads.len() {
            // SAFETY: JVMTI filled `threads.len()` stack infos in one allocation (frames
            // included) that the guard frees after we copy what we need.
            let info = unsafe { *guard.ptr.add(i) };
            let frames = if info.frame_count > 0 && !info.frame_buffer.is_null() {
                // SAFETY: `frame_buffer` holds `frame_count` frames inside that allocation.
                unsafe { std::slice::from_raw_parts(info.frame_buffer, info.frame_count as usize) }
                    .iter()
                    .map(|f| (f.method, f.location))
                    .collect()
            } else {
                Vec::new()
            };
            out.push(frames);
        }
        Ok(out)
    }

    /// The top `depth` frames of one thread.
    pub fn stack_trace(self, thread: jthread, depth: usize) -> Result<Vec<(jmethodID, jlocation)>> {
        let mut frames = vec![
            sys::jvmtiFrameInfo {
                method: ptr::null_mut(),
                location: 0
            };
            depth
        ];
        let mut count: jint = 0;
        if depth == 0 {
            return Ok(Vec::new());
        }
        jvmti!(
            self,
            GetStackTrace,
            thread,
            0,
            depth as jint,
            frames.as_mut_ptr(),
            &mut count
        )?;
        frames.truncate(count.max(0) as usize);
        Ok(frames.into_iter().map(|f| (f.method, f.location)).collect())
    }

    /// A method's name and signature.
    pub fn method_name(self, method: jmethodID) -> Result<(String, String)> {
        let (mut name, mut sig): (*mut c_char, *mut c_char) = (ptr::null_mut(), ptr::null_mut());
        jvmti!(
            self,
            GetMethodName,
            method,
            &mut name,
            &mut sig,
            ptr::null_mut()
        )?;
        Ok((
            take_string(self, name).unwrap_or_default(),
            take_string(self, sig).unwrap_or_default(),
        ))
    }

    /// The class declaring a method (a local reference).
    pub fn method_class(self, method: jmethodID) -> Result<jclass> {
        let mut class: jclass = ptr::null_mut();
        jvmti!(self, GetMethodDeclaringClass, method, &mut class)?;
        Ok(class)
    }

    /// Whether a method is native.
    pub fn is_native(self, method: jmethodID) -> Result<bool> {
        let mut native: sys::jboolean = 0;
        jvmti!(self, IsMethodNative, method, &mut native)?;
        Ok(native != 0)
    }

    /// A method's line number table: (start location, line) pairs.
    pub fn line_numbers(self, method: jmethodID) -> Result<Vec<(jlocation, i32)>> {
        let mut count: jint = 0;
        let mut table: *mut sys::jvmtiLineNumberEntry = ptr::null_mut();
        jvmti!(self, GetLineNumberTable, method, &mut count, &mut table)?;
        Ok(take_slice(self, table, count)
            .into_iter()
            .map(|e| (e.start_location, e.line_number))
            .collect())
    }

    /// A class's JVM signature (`Ljava/lang/String;`).
    pub fn class_signature(self, class: jclass) -> Result<String> {
        let mut sig: *mut c_char = ptr::null_mut();
        jvmti!(self, GetClassSignature, class, &mut sig, ptr::null_mut())?;
        Ok(take_string(self, sig).unwrap_or_default())
    }

    /// A class's constant pool as the class file holds it: `constant_pool_count` and the
    /// entries' bytes (needs `can_get_constant_pool`).
    pub fn constant_pool(self, class: jclass) -> Result<(u16, Vec<u8>)> {
        let mut count: jint = 0;
        let mut len: jint = 0;
        let mut bytes: *mut std::ffi::c_uchar = ptr::null_mut();
        jvmti!(
            self,
            GetConstantPool,
            class,
            &mut count,
            &mut len,
            &mut bytes
        )?;
        let bytes = take_slice(self, bytes, len);
        Ok((u16::try_from(count).unwrap_or(0), bytes))
    }

    /// A system property of the VM (`java.specification.version`, ...).
    pub fn system_property(self, name: &std::ffi::CStr) -> Result<String> {
        let mut value: *mut c_char = ptr::null_mut();
        jvmti!(self, GetSystemProperty, name.as_ptr(), &mut value)?;
        Ok(take_string(self, value).unwrap_or_default())
    }

    /// The VM's feature version (11, 17, 21, 25), from `java.vm.version` (`25.0.2+10-LTS`;
    /// JVMTI sees only the VM's own properties).
    pub fn feature_version(self) -> Option<u32> {
        let version = self.system_property(c"java.vm.version").ok()?;
        let digits: String = version.chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok()
    }

    /// A class's source file name, if it has one.
    pub fn source_file(self, class: jclass) -> Result<String> {
        let mut name: *mut c_char = ptr::null_mut();
        jvmti!(self, GetSourceFileName, class, &mut name)?;
        Ok(take_string(self, name).unwrap_or_default())
    }

    /// An object's tag (0 when untagged).
    pub fn tag(self, object: jobject) -> Result<i64> {
        let mut tag: jlong = 0;
        jvmti!(self, GetTag, object, &mut tag)?;
        Ok(tag)
    }

    /// An object's size in bytes, as the JVM counts it.
    pub fn object_size(self, object: jobject) -> Result<i64> {
        let mut size: sys::jlong = 0;
        jvmti!(self, GetObjectSize, object, &mut size)?;
        Ok(size)
    }

    /// Sets an object's tag.
    pub fn set_tag(self, object: jobject, tag: i64) -> Result<()> {
        jvmti!(self, SetTag, object, tag)
    }

    /// Stores a word in a thread's JVMTI thread-local storage.
    pub fn set_thread_local(self, thread: jthread, value: usize) -> Result<()> {
        jvmti!(self, SetThreadLocalStorage, thread, value as *const c_void)
    }

    /// Reads the word stored by [`Jvmti::set_thread_local`] (0 if none).
    pub fn thread_local(self, thread: jthread) -> Result<usize> {
        let mut value: *mut c_void = ptr::null_mut();
        jvmti!(self, GetThreadLocalStorage, thread, &mut value)?;
        Ok(value as usize)
    }

    /// A thread's JVMTI state bits.
    pub fn thread_state(self, thread: jthread) -> Result<u32> {
        let mut state: jint = 0;
        jvmti!(self, GetThreadState, thread, &mut state)?;
        Ok(state as u32)
    }

    /// The monitors a thread owns (local references).
    pub fn owned_monitors(self, thread: jthread) -> Result<Vec<jobject>> {
        let mut count: jint = 0;
        let mut monitors: *mut jobject = ptr::null_mut();
        jvmti!(self, GetOwnedMonitorInfo, thread, &mut count, &mut monitors)?;
        Ok(take_slice(self, monitors, count))
    }

    /// A monitor's owner, entry count, threads waiting to enter and threads waiting to be
    /// notified (local references).
    pub fn monitor_usage(self, object: jobject) -> Result<MonitorUsage> {
        let mut usage = sys::jvmtiMonitorUsage::default();
        jvmti!(self, GetObjectMonitorUsage, object, &mut usage)?;
        Ok(MonitorUsage {
            owner: usage.owner,
            entry_count: usage.entry_count,
            waiters: take_slice(self, usage.waiters, usage.waiter_count),
            notify_waiters: take_slice(self, usage.notify_waiters, usage.notify_waiter_count),
        })
    }

    /// Every loaded class (local references).
    pub fn loaded_classes(self) -> Result<Vec<jclass>> {
        let mut count: jint = 0;
        let mut classes: *mut jclass = ptr::null_mut();
        jvmti!(self, GetLoadedClasses, &mut count, &mut classes)?;
        Ok(take_slice(self, classes, count))
    }

    /// Every object tagged `tag` in this environment, as local references of the calling
    /// thread (GetObjectsWithTags; the caller deletes them).
    pub fn objects_with_tag(self, tag: i64) -> Result<Vec<jobject>> {
        let tags = [tag as sys::jlong];
        let mut count: jint = 0;
        let mut objects: *mut jobject = ptr::null_mut();
        jvmti!(
            self,
            GetObjectsWithTags,
            1,
            tags.as_ptr(),
            &mut count,
            &mut objects,
            ptr::null_mut()
        )?;
        Ok(take_slice(self, objects, count))
    }

    /// A class's declared methods.
    pub fn class_methods(self, class: jclass) -> Result<Vec<jmethodID>> {
        let mut count: jint = 0;
        let mut methods: *mut jmethodID = ptr::null_mut();
        jvmti!(self, GetClassMethods, class, &mut count, &mut methods)?;
        Ok(take_slice(self, methods, count))
    }

    /// A class's declared fields, in the JVM's order.
    pub fn class_fields(self, class: jclass) -> Result<Vec<sys::jfieldID>> {
        let mut count: jint = 0;
        let mut fields: *mut sys::jfieldID = ptr::null_mut();
        jvmti!(self, GetClassFields, class, &mut count, &mut fields)?;
        Ok(take_slice(self, fields, count))
    }

    /// A field's name and JVM signature.
    pub fn field_name(self, class: jclass, field: sys::jfieldID) -> Result<(String, String)> {
        let (mut name, mut sig): (*mut c_char, *mut c_char) = (ptr::null_mut(), ptr::null_mut());
        jvmti!(
            self,
            GetFieldName,
            class,
            field,
            &mut name,
            &mut sig,
            ptr::null_mut()
        )?;
        Ok((
            take_string(self, name).unwrap_or_default(),
            take_string(self, sig).unwrap_or_default(),
        ))
    }

    /// A field's access flags (0x8 = static).
    pub fn field_modifiers(self, class: jclass, field: sys::jfieldID) -> Result<i32> {
        let mut modifiers: jint = 0;
        jvmti!(self, GetFieldModifiers, class, field, &mut modifiers)?;
        Ok(modifiers)
    }

    /// The interfaces a class or interface declares it implements or extends (local refs).
    pub fn interfaces(self, class: jclass) -> Result<Vec<jclass>> {
        let mut count: jint = 0;
        let mut list: *mut jclass = ptr::null_mut();
        jvmti!(self, GetImplementedInterfaces, class, &mut count, &mut list)?;
        Ok(take_slice(self, list, count))
    }

    /// Whether a class is an interface.
    pub fn is_interface(self, class: jclass) -> Result<bool> {
        let mut flag: sys::jboolean = 0;
        jvmti!(self, IsInterface, class, &mut flag)?;
        Ok(flag != 0)
    }

    /// A new, separate JVMTI environment with object tagging (its own tags): heap walks
    /// number objects there without touching this environment's tags.
    pub fn new_tagging_env(vm: JavaVm) -> Result<Jvmti> {
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: `vm.raw` is the JVM's invocation interface; GetEnv writes a new JVMTI
        // environment pointer to the out-value.
        let code = unsafe {
            match (**vm.raw).GetEnv {
                Some(get_env) => get_env(vm.raw, &mut env, sys::JVMTI_VERSION_1_2.0 as jint),
                None => -1,
            }
        };
        if code != 0 || env.is_null() {
            return Err(JvmtiError::MISSING_FUNCTION);
        }
        let jvmti = Jvmti { raw: env.cast() };
        jvmti.add_capabilities(Capabilities {
            tag_objects: true,
            ..Capabilities::default()
        })?;
        Ok(jvmti)
    }

    /// Disposes of an environment made by [`Jvmti::new_tagging_env`], and its tags.
    pub fn dispose(self) {
        let _ = jvmti!(self, DisposeEnvironment);
    }

    /// Samples allocations every `bytes` bytes on average (0 = every allocation).
    pub fn set_heap_sampling_interval(self, bytes: i32) -> Result<()> {
        jvmti!(self, SetHeapSamplingInterval, bytes)
    }

    /// Runs a full garbage collection.
    pub fn force_garbage_collection(self) -> Result<()> {
        report::step("full GC", None, 0);
        let collected = jvmti!(self, ForceGarbageCollection);
        report::end_step(collected.is_ok());
        collected
    }

    /// The top `depth` frames of the calling thread.
    pub fn current_stack_trace(
        self,
        depth: usize,
        frames: &mut Vec<sys::jvmtiFrameInfo>,
    ) -> Result<usize> {
        frames.clear();
        frames.resize(
            depth,
            sys::jvmtiFrameInfo {
                method: ptr::null_mut(),
                location: 0,
            },
        );
        if depth == 0 {
            return Ok(0);
        }
        let mut count: jint = 0;
        jvmti!(
            self,
            GetStackTrace,
            ptr::null_mut(),
            0,
            depth as jint,
            frames.as_mut_ptr(),
            &mut count
        )?;
        Ok(count.max(0) as usize)
    }

    /// Whether `class` can be retransformed.
    pub fn is_modifiable_class(self, class: jclass) -> bool {
        let mut modifiable: sys::jboolean = 0;
        jvmti!(self, IsModifiableClass, class, &mut modifiable).is_ok() && modifiable != 0
    }

    /// Classes per RetransformClasses call in [`Self::retransform_loaded`].
    const RETRANSFORM_BATCH: usize = 256;

    /// Retransforms `classes` (the class file load hook sees each again).
    pub fn retransform_classes(self, classes: &[jclass]) -> Result<()> {
        if classes.is_empty() {
            return Ok(());
        }
        jvmti!(
            self,
            RetransformClasses,
            classes.len() as jint,
            classes.as_ptr()
        )
    }

    /// Retransforms every modifiable loaded class (the class file load hook sees each again),
    /// `RETRANSFORM_BATCH` (256) classes per call; one bad class fails its batch, which is then
    /// retried class by class. The classes' local references are deleted through `jni`.
    pub fn retransform_loaded(self, jni: Jni) {
        let Ok(classes) = self.loaded_classes() else {
            return;
        };
        let modifiable: Vec<jclass> = classes
            .iter()
            .copied()
            .filter(|&c| self.is_modifiable_class(c))
            .collect();
        for batch in modifiable.chunks(Self::RETRANSFORM_BATCH) {
            if self.retransform_classes(batch).is_err() {
                for &class in batch {
                    let _ = self.retransform_classes(&[class]);
                }
            }
        }
        for class in classes {
            jni.delete_local_ref(class);
        }
    }

    /// Copies `bytes` into memory allocated by JVMTI, which the JVM takes ownership of (as
    /// the class file load hook's new class data).
    pub fn allocate_copy(self, bytes: &[u8]) -> Result<*mut u8> {
        let mut mem: *mut u8 = ptr::null_mut();
        jvmti!(self, Allocate, bytes.len() as jlong, &mut mem)?;
        if mem.is_null() {
            return Err(JvmtiError(110));
        }
        // SAFETY: Allocate returned a fresh block of `bytes.len()` bytes, which cannot
        // overlap `bytes`.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr(), mem, bytes.len()) };
        Ok(mem)
    }

    /// Creates a raw monitor.
    pub fn raw_monitor(self, name: &str) -> Result<RawMonitor> {
        let name = CString::new(name).unwrap_or_default();
        let mut monitor: sys::jrawMonitorID = ptr::null_mut();
        jvmti!(self, CreateRawMonitor, name.as_ptr(), &mut monitor)?;
        Ok(RawMonitor {
            env: self,
            raw: monitor,
        })
    }

    /// Starts an agent thread running `main(arg)` on the Java thread object `thread`.
    pub fn run_agent_thread(
        self,
        thread: jthread,
        main: AgentThreadMain,
        arg: usize,
    ) -> Result<()> {
        jvmti!(
            self,
            RunAgentThread,
            thread,
            Some(main),
            arg as *const c_void,
            10
        )
    }
}

/// A JVMTI raw monitor: a lock with wait/notify that is safe to use in JVMTI callbacks.
#[derive(Debug, Clone, Copy)]
pub struct RawMonitor {
    env: Jvmti,
    raw: sys::jrawMonitorID,
}

// SAFETY: raw monitors are designed to be shared between threads.
unsafe impl Send for RawMonitor {}
// SAFETY: as above.
unsafe impl Sync for RawMonitor {}

impl RawMonitor {
    /// Enters the monitor; it is exited when the guard drops.
    pub fn enter(&self) -> Result<RawMonitorGuard<'_>> {
        jvmti!(self.env, RawMonitorEnter, self.raw)?;
        Ok(RawMonitorGuard { monitor: self })
    }
}

/// Holds a raw monitor; exits it when dropped.
#[derive(Debug)]
pub struct RawMonitorGuard<'a> {
    monitor: &'a RawMonitor,
}

impl RawMonitorGuard<'_> {
    /// Waits on the monitor for at most `millis` ms (0 = until notified).
    pub fn wait(&self, millis: i64) -> Result<()> {
        jvmti!(self.monitor.env, RawMonitorWait, self.monitor.raw, millis)
    }

    /// Wakes every thread waiting on the monitor.
    pub fn notify_all(&self) -> Result<()> {
        jvmti!(self.monitor.env, RawMonitorNotifyAll, self.monitor.raw)
    }
}

impl Drop for RawMonitorGuard<'_> {
    fn drop(&mut self) {
        let _ = jvmti!(self.monitor.env, RawMonitorExit, self.monitor.raw);
    }
}

/// The JVM's invocation interface, kept from `Agent_OnLoad`.
#[derive(Debug, Clone, Copy)]
pub struct JavaVm {
    raw: *mut sys::JavaVM,
}

// SAFETY: the JavaVM pointer is process-wide and its functions may be called from any thread.
unsafe impl Send for JavaVm {}
// SAFETY: as above.
unsafe impl Sync for JavaVm {}

impl JavaVm {
    /// Wraps the pointer `Agent_OnLoad` received.
    pub fn from_raw(raw: *mut sys::JavaVM) -> JavaVm {
        JavaVm { raw }
    }

    /// The pointer, for the signal handler (which calls GetEnv itself).
    pub fn raw(self) -> *mut sys::JavaVM {
        self.raw
    }

    /// The calling thread's JNI environment, if it is attached to the JVM.
    pub fn jni(self) -> Option<Jni> {
        if self.raw.is_null() {
            return None;
        }
        let mut env: *mut c_void = ptr::null_mut();
        // SAFETY: `raw` is the JVM's invocation interface; GetEnv only reads the calling
        // thread's attachment and writes the out-pointer.
        let code = unsafe {
            match (**self.raw).GetEnv {
                Some(get_env) => get_env(self.raw, &mut env, JNI_VERSION_1_8),
                None => -1,
            }
        };
        (code == 0 && !env.is_null()).then(|| Jni { raw: env.cast() })
    }
}

/// `JNI_VERSION_1_8`.
const JNI_VERSION_1_8: jint = 0x0001_0008;

/// A JNI global reference: valid on every thread until deleted.
#[derive(Debug)]
pub struct GlobalRef(jobject);

// SAFETY: a JNI global reference may be used from any attached thread.
unsafe impl Send for GlobalRef {}
// SAFETY: as above; the handle is never written through.
unsafe impl Sync for GlobalRef {}

impl GlobalRef {
    /// The reference, to pass to JVMTI or JNI.
    pub fn get(&self) -> jobject {
        self.0
    }

    /// The address of the reference's slot, as HotSpot's heap dumper writes it in ROOT JNI
    /// GLOBAL records (HotSpot's global references point at an 8-byte aligned slot; JDK 21+
    /// tag the low bits of the reference with its kind).
    pub fn slot_address(&self) -> u64 {
        (self.0 as usize as u64) & !7
    }
}

/// A JNI field ID: valid on every thread while its class is loaded.
#[derive(Debug, Clone, Copy)]
pub struct FieldId(sys::jfieldID);

// SAFETY: JNI field IDs are not thread-bound; the agent only takes them from classes the boot
// loader defined, which are never unloaded.
unsafe impl Send for FieldId {}
// SAFETY: as above; the ID is an opaque handle, never written through.
unsafe impl Sync for FieldId {}

/// A JNI weak global reference: names an object without keeping it alive.
#[derive(Debug)]
pub struct WeakRef(jobject);

// SAFETY: a JNI weak global reference may be used from any attached thread.
unsafe impl Send for WeakRef {}
// SAFETY: as above; the handle is never written through.
unsafe impl Sync for WeakRef {}

impl WeakRef {
    /// The reference, to pass to JNI (`IsSameObject` is false once the object is gone).
    pub fn get(&self) -> jobject {
        self.0
    }
}

/// The JNI environment of the current thread.
#[derive(Debug, Clone, Copy)]
pub struct Jni {
    raw: *mut sys::JNIEnv,
}

impl Jni {
    /// Wraps the JNIEnv pointer a callback received.
    pub fn from_raw(raw: *mut sys::JNIEnv) -> Jni {
        Jni { raw }
    }

    /// The pointer: what identifies the thread in an asynchronous sample.
    pub fn raw(self) -> *mut sys::JNIEnv {
        self.raw
    }

    /// Creates a `java.lang.Thread` named `name` for an agent thread (a local reference).
    pub fn new_thread(self, name: &str) -> Option<jthread> {
        let class = jni!(self, FindClass, c"java/lang/Thread".as_ptr())?;
        let init = jni!(
            self,
            GetMethodID,
            class,
            c"<init>".as_ptr(),
            c"(Ljava/lang/String;)V".as_ptr()
        )?;
        let name = CString::new(name).ok()?;
        let jname = jni!(self, NewStringUTF, name.as_ptr())?;
        if class.is_null() || init.is_null() || jname.is_null() {
            self.clear_exception();
            return None;
        }
        let args = [sys::jvalue { l: jname }];
        let thread = jni!(self, NewObjectA, class, init, args.as_ptr())?;
        if thread.is_null() {
            self.clear_exception();
            return None;
        }
        Some(thread)
    }

    /// Makes a global reference (null in, null out).
    pub fn new_global_ref(self, object: jobject) -> GlobalRef {
        GlobalRef(jni!(self, NewGlobalRef, object).unwrap_or(ptr::null_mut()))
    }

    /// Makes a weak global reference, which does not keep its object alive.
    pub fn new_weak_ref(self, object: jobject) -> WeakRef {
        WeakRef(jni!(self, NewWeakGlobalRef, object).unwrap_or(ptr::null_mut()))
    }

    /// Deletes a weak global reference.
    pub fn delete_weak_ref(self, weak: WeakRef) {
        if !weak.0.is_null() {
            let _ = jni!(self, DeleteWeakGlobalRef, weak.0);
        }
    }

    /// Deletes a global reference.
    pub fn delete_global_ref(self, global: GlobalRef) {
        if !global.0.is_null() {
            let _ = jni!(self, DeleteGlobalRef, global.0);
        }
    }

    /// A class's superclass (a local reference), or `None` for Object and interfaces.
    pub fn superclass(self, class: jclass) -> Option<jclass> {
        jni!(self, GetSuperclass, class).filter(|c| !c.is_null())
    }

    /// The class of an object (a local reference).
    pub fn object_class(self, object: jobject) -> Option<jclass> {
        jni!(self, GetObjectClass, object).filter(|c| !c.is_null())
    }

    /// Whether two references name the same object.
    pub fn is_same_object(self, a: jobject, b: jobject) -> bool {
        jni!(self, IsSameObject, a, b) == Some(1)
    }

    /// Deletes a local reference.
    pub fn delete_local_ref(self, object: jobject) {
        if !object.is_null() {
            let _ = jni!(self, DeleteLocalRef, object);
        }
    }

    /// Runs `f` inside a JNI local frame with room for `capacity` references, so the local
    /// references `f` creates are freed when it returns.
    pub fn with_local_frame<T>(self, capacity: i32, f: impl FnOnce() -> T) -> T {
        let pushed = jni!(self, PushLocalFrame, capacity) == Some(0);
        let result = f();
        if pushed {
            let _ = jni!(self, PopLocalFrame, ptr::null_mut());
        }
        result
    }

    /// Looks up a class by its JVM name (`java/lang/Class`), as a local reference.
    /// Defines the class `name` (internal form) from `bytes` in the boot class loader.
    pub fn define_boot_class(self, name: &std::ffi::CStr, bytes: &[u8]) -> Option<jclass> {
        let class = jni!(
            self,
            DefineClass,
            name.as_ptr(),
            ptr::null_mut(),
            bytes.as_ptr().cast(),
            bytes.len() as jint
        )?;
        if class.is_null() {
            self.clear_exception();
            return None;
        }
        Some(class)
    }

    /// The ID of static field `name` (of type `signature`) of `class`.
    fn static_field_id(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
    ) -> Option<sys::jfieldID> {
        let field = jni!(
            self,
            GetStaticFieldID,
            class,
            name.as_ptr(),
            signature.as_ptr()
        )?;
        if field.is_null() {
            self.clear_exception();
            return None;
        }
        Some(field)
    }

    /// Sets the static boolean field `name` of `class`.
    pub fn set_static_boolean(self, class: jclass, name: &std::ffi::CStr, value: bool) -> bool {
        let Some(field) = self.static_field_id(class, name, c"Z") else {
            return false;
        };
        jni!(self, SetStaticBooleanField, class, field, u8::from(value));
        true
    }

    /// Sets the static int field `name` of `class` (final or not: JNI does not check).
    pub fn set_static_int(self, class: jclass, name: &std::ffi::CStr, value: i32) -> bool {
        let Some(field) = self.static_field_id(class, name, c"I") else {
            return false;
        };
        jni!(self, SetStaticIntField, class, field, value);
        !self.take_exception()
    }

    /// Sets the static reference field `name` (of type `signature`) of `class`.
    pub fn set_static_object(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
        value: jobject,
    ) -> bool {
        let Some(field) = self.static_field_id(class, name, signature) else {
            return false;
        };
        jni!(self, SetStaticObjectField, class, field, value);
        !self.take_exception()
    }

    /// Element `index` of an object array (a local reference, or null), null if out of
    /// bounds.
    pub fn object_array_element(self, array: jobject, index: i32) -> jobject {
        let value = jni!(self, GetObjectArrayElement, array, index).unwrap_or(ptr::null_mut());
        if self.take_exception() {
            return ptr::null_mut();
        }
        value
    }

    /// Sets element `index` of an object array; false if out of bounds or of the wrong type.
    pub fn set_object_array_element(self, array: jobject, index: i32, value: jobject) -> bool {
        jni!(self, SetObjectArrayElement, array, index, value);
        !self.take_exception()
    }

    /// `System.identityHashCode(object)` (a native method: no Java code runs).
    pub fn identity_hash(self, object: jobject) -> Option<i32> {
        let system = self.find_class(c"java/lang/System")?;
        let method = jni!(
            self,
            GetStaticMethodID,
            system,
            c"identityHashCode".as_ptr(),
            c"(Ljava/lang/Object;)I".as_ptr()
        )
        .filter(|m| !m.is_null());
        let hash = method.and_then(|method| {
            let args = [sys::jvalue { l: object }];
            jni!(self, CallStaticIntMethodA, system, method, args.as_ptr())
        });
        self.delete_local_ref(system);
        if self.take_exception() {
            return None;
        }
        hash
    }

    /// Whether an exception is pending; clears it.
    pub fn take_exception(self) -> bool {
        let pending = jni!(self, ExceptionCheck) == Some(1);
        if pending {
            self.clear_exception();
        }
        pending
    }

    /// A new `int[len]` (a local reference), or `None` if the JVM could not make it.
    pub fn new_int_array(self, len: i32) -> Option<jobject> {
        let a = jni!(self, NewIntArray, len)?;
        (!a.is_null() && !self.take_exception()).then_some(a)
    }

    /// A new `long[len]` (a local reference).
    pub fn new_long_array(self, len: i32) -> Option<jobject> {
        let a = jni!(self, NewLongArray, len)?;
        (!a.is_null() && !self.take_exception()).then_some(a)
    }

    /// A new `Object[len]` of nulls (a local reference).
    pub fn new_object_array(self, len: i32) -> Option<jobject> {
        let class = self.find_class(c"java/lang/Object")?;
        let a = jni!(self, NewObjectArray, len, class, ptr::null_mut());
        self.delete_local_ref(class);
        let a = a?;
        (!a.is_null() && !self.take_exception()).then_some(a)
    }

    /// The static reference field `name` (of type `signature`) of `class` (a local
    /// reference, or null).
    pub fn static_object(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
    ) -> jobject {
        let Some(field) = self.static_field_id(class, name, signature) else {
            return ptr::null_mut();
        };
        let value = jni!(self, GetStaticObjectField, class, field).unwrap_or(ptr::null_mut());
        if self.take_exception() {
            return ptr::null_mut();
        }
        value
    }

    /// Length of an array.
    pub fn array_length(self, array: jobject) -> i32 {
        jni!(self, GetArrayLength, array).unwrap_or(0)
    }

    /// Copies `buf.len()` ints from `array` at `start` (false if out of bounds).
    pub fn get_ints(self, array: jobject, start: i32, buf: &mut [i32]) -> bool {
        // The buffer is a live, writable slice of exactly the length passed.
        jni!(
            self,
            GetIntArrayRegion,
            array,
            start,
            buf.len() as jint,
            buf.as_mut_ptr()
        );
        !self.take_exception()
    }

    /// Copies `values` into `array` at `start`.
    pub fn set_ints(self, array: jobject, start: i32, values: &[i32]) -> bool {
        // The buffer is a live slice of exactly the length passed; JNI only reads it.
        jni!(
            self,
            SetIntArrayRegion,
            array,
            start,
            values.len() as jint,
            values.as_ptr()
        );
        !self.take_exception()
    }

    /// Copies `buf.len()` longs from `array` at `start`.
    pub fn get_longs(self, array: jobject, start: i32, buf: &mut [i64]) -> bool {
        // The buffer is a live, writable slice of exactly the length passed.
        jni!(
            self,
            GetLongArrayRegion,
            array,
            start,
            buf.len() as jint,
            buf.as_mut_ptr()
        );
        !self.take_exception()
    }

    /// Copies `values` into `array` at `start`.
    pub fn set_longs(self, array: jobject, start: i32, values: &[i64]) -> bool {
        // The buffer is a live slice of exactly the length passed; JNI only reads it.
        jni!(
            self,
            SetLongArrayRegion,
            array,
            start,
            values.len() as jint,
            values.as_ptr()
        );
        !self.take_exception()
    }

    /// The ID of instance field `name` (of type `signature`) of `class`.
    pub fn field_id(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
    ) -> Option<FieldId> {
        let field = jni!(self, GetFieldID, class, name.as_ptr(), signature.as_ptr())?;
        if field.is_null() {
            self.clear_exception();
            return None;
        }
        Some(FieldId(field))
    }

    /// A new object of `class`, no constructor run (its fields are zero or null).
    pub fn alloc_object(self, class: jclass) -> Option<jobject> {
        let object = jni!(self, AllocObject, class)?;
        if object.is_null() {
            self.clear_exception();
            return None;
        }
        Some(object)
    }

    /// The int field `field` of `object`.
    pub fn int_field(self, object: jobject, field: FieldId) -> i32 {
        jni!(self, GetIntField, object, field.0).unwrap_or(0)
    }

    /// The long field `field` of `object`.
    pub fn long_field(self, object: jobject, field: FieldId) -> i64 {
        jni!(self, GetLongField, object, field.0).unwrap_or(0)
    }

    /// Sets the int field `field` of `object`.
    pub fn set_int_field(self, object: jobject, field: FieldId, value: i32) {
        jni!(self, SetIntField, object, field.0, value);
    }

    /// The reference field `field` of `object` (a local reference, or null).
    pub fn object_field(self, object: jobject, field: FieldId) -> jobject {
        jni!(self, GetObjectField, object, field.0).unwrap_or(ptr::null_mut())
    }

    /// Sets the reference field `field` of `object`.
    pub fn set_object_field(self, object: jobject, field: FieldId, value: jobject) {
        jni!(self, SetObjectField, object, field.0, value);
    }

    /// Calls the static method `name` `signature` of `class` with null or zero arguments
    /// (`args` of them), discarding the result; used to link native methods ahead of use.
    pub fn call_static_with_defaults(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
        args: usize,
    ) -> bool {
        let Some(method) = jni!(
            self,
            GetStaticMethodID,
            class,
            name.as_ptr(),
            signature.as_ptr()
        ) else {
            return false;
        };
        if method.is_null() {
            self.clear_exception();
            return false;
        }
        let zeros = vec![sys::jvalue { j: 0 }; args];
        jni!(self, CallStaticVoidMethodA, class, method, zeros.as_ptr());
        !self.take_exception()
    }

    /// Whether `class` has the static method `name` `signature`.
    pub fn has_static_method(
        self,
        class: jclass,
        name: &std::ffi::CStr,
        signature: &std::ffi::CStr,
    ) -> bool {
        let found = jni!(
            self,
            GetStaticMethodID,
            class,
            name.as_ptr(),
            signature.as_ptr()
        )
        .is_some_and(|m| !m.is_null());
        self.take_exception();
        found
    }

    /// A new local reference to `object`.
    pub fn new_local_ref(self, object: jobject) -> jobject {
        jni!(self, NewLocalRef, object).unwrap_or(ptr::null_mut())
    }

    /// A new global reference to `object`, if it is not null.
    pub fn global(self, object: jobject) -> Option<GlobalRef> {
        (!object.is_null()).then(|| self.new_global_ref(object))
    }

    /// Finds a class by its internal name (`java/lang/Thread`).
    pub fn find_class(self, name: &std::ffi::CStr) -> Option<jclass> {
        let class = jni!(self, FindClass, name.as_ptr())?;
        if class.is_null() {
            self.clear_exception();
            return None;
        }
        Some(class)
    }

    /// The bytes the Java heap holds now (`Runtime.totalMemory() - freeMemory()`, native
    /// methods that allocate nothing), if the JVM answers.
    pub fn heap_used(self) -> Option<u64> {
        // Never called with an exception pending (that would be the caller's to handle).
        if jni!(self, ExceptionCheck) == Some(1) {
            return None;
        }
        self.with_local_frame(8, || {
            let runtime_class = self.find_class(c"java/lang/Runtime")?;
            let method = |name: &std::ffi::CStr, signature: &std::ffi::CStr, is_static: bool| {
                let id = if is_static {
                    jni!(
                        self,
                        GetStaticMethodID,
                        runtime_class,
                        name.as_ptr(),
                        signature.as_ptr()
                    )
                } else {
                    jni!(
                        self,
                        GetMethodID,
                        runtime_class,
                        name.as_ptr(),
                        signature.as_ptr()
                    )
                };
                match id {
                    Some(id) if !id.is_null() => Some(id),
                    _ => {
                        self.clear_exception();
                        None
                    }
                }
            };
            let get = method(c"getRuntime", c"()Ljava/lang/Runtime;", true)?;
            let total = method(c"totalMemory", c"()J", false)?;
            let free = method(c"freeMemory", c"()J", false)?;
            let none: [sys::jvalue; 0] = [];
            let runtime = jni!(
                self,
                CallStaticObjectMethodA,
                runtime_class,
                get,
                none.as_ptr()
            )
            .filter(|r| !r.is_null());
            if self.take_exception() {
                return None;
            }
            let runtime = runtime?;
            let total = jni!(self, CallLongMethodA, runtime, total, none.as_ptr());
            let free = jni!(self, CallLongMethodA, runtime, free, none.as_ptr());
            if self.take_exception() {
                return None;
            }
            Some(total?.saturating_sub(free?).max(0) as u64)
        })
    }

    /// Loads the boot class `name` (a binary name, `java.math.BigInteger`) without
    /// initialising it (`Class.forName(name, false, null)`); false if it could not be.
    pub fn load_boot_class(self, name: &std::ffi::CStr) -> bool {
        let Some(class) = self.find_class(c"java/lang/Class") else {
            return false;
        };
        let method = jni!(
            self,
            GetStaticMethodID,
            class,
            c"forName".as_ptr(),
            c"(Ljava/lang/String;ZLjava/lang/ClassLoader;)Ljava/lang/Class;".as_ptr()
        )
        .filter(|m| !m.is_null());
        let text = jni!(self, NewStringUTF, name.as_ptr()).filter(|s| !s.is_null());
        let mut loaded = false;
        if let (Some(method), Some(text)) = (method, text) {
            let args = [
                sys::jvalue { l: text },
                sys::jvalue { z: 0 },
                sys::jvalue { l: ptr::null_mut() },
            ];
            let found = jni!(self, CallStaticObjectMethodA, class, method, args.as_ptr());
            loaded = !self.take_exception() && found.is_some_and(|c| !c.is_null());
            if let Some(c) = found.filter(|c| !c.is_null()) {
                self.delete_local_ref(c);
            }
        }
        self.clear_exception();
        if let Some(text) = text {
            self.delete_local_ref(text);
        }
        self.delete_local_ref(class);
        loaded
    }

    /// Has Java code allocate a byte array of `len` bytes and drops it: the calling thread
    /// runs `java.util.Arrays.copyOf(new byte[1], len)`, so the allocation takes the same
    /// path as an application's (used to move the thread's allocation sampler past its first
    /// sampling point).
    pub fn allocate_garbage(self, len: i32) {
        let Some(arrays) = self.find_class(c"java/util/Arrays") else {
            return;
        };
        let method = jni!(
            self,
            GetStaticMethodID,
            arrays,
            c"copyOf".as_ptr(),
            c"([BI)[B".as_ptr()
        );
        let source = jni!(self, NewByteArray, 1);
        if let (Some(method), Some(source)) = (method, source)
            && !method.is_null()
            && !source.is_null()
        {
            let args = [sys::jvalue { l: source }, sys::jvalue { i: len }];
            if let Some(copy) = jni!(self, CallStaticObjectMethodA, arrays, method, args.as_ptr()) {
                self.delete_local_ref(copy);
            }
            self.delete_local_ref(source);
        }
        self.clear_exception();
        self.delete_local_ref(arrays);
    }

    /// Calls `System.exit(status)`: the JVM shuts down in order (shutdown hooks, VM death).
    pub fn system_exit(self, status: i32) {
        let Some(system) = self.find_class(c"java/lang/System") else {
            return;
        };
        if let Some(exit) = jni!(
            self,
            GetStaticMethodID,
            system,
            c"exit".as_ptr(),
            c"(I)V".as_ptr()
        ) && !exit.is_null()
        {
            let args = [sys::jvalue { i: status }];
            let _ = jni!(self, CallStaticVoidMethodA, system, exit, args.as_ptr());
        }
        self.clear_exception();
        self.delete_local_ref(system);
    }

    /// Clears a pending Java exception, if any.
    pub fn clear_exception(self) {
        if jni!(self, ExceptionCheck) == Some(1) {
            let _ = jni!(self, ExceptionClear);
        }
    }
}

/// HotSpot's own heap dumper, reached through `com.sun.management.HotSpotDiagnosticMXBean`
/// (the one `jcmd GC.heap_dump` and `dumpHeap` use): the bean and its `dumpHeap` method,
/// looked up once so a dump under memory pressure needs no class loading.
#[derive(Debug)]
pub struct DiagnosticBean {
    bean: GlobalRef,
    dump_heap: jmethodID,
}

// SAFETY: the bean is a global reference and the method ID is not thread-bound (its class, in
// the platform's jdk.management module, is never unloaded).
unsafe impl Send for DiagnosticBean {}
// SAFETY: as above; neither is written through.
unsafe impl Sync for DiagnosticBean {}

impl DiagnosticBean {
    /// Looks the bean up (`ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)`)
    /// or says why it cannot (no jdk.management module, an exception).
    pub fn lookup(jni: Jni) -> std::result::Result<DiagnosticBean, String> {
        jni.with_local_frame(16, || {
            let interface = jni
                .find_class(c"com/sun/management/HotSpotDiagnosticMXBean")
                .ok_or("the JVM has no com.sun.management.HotSpotDiagnosticMXBean (module jdk.management)")?;
            let factory = jni
                .find_class(c"java/lang/management/ManagementFactory")
                .ok_or("the JVM has no java.lang.management.ManagementFactory")?;
            let get = jni!(
                jni,
                GetStaticMethodID,
                factory,
                c"getPlatformMXBean".as_ptr(),
                c"(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;".as_ptr()
            )
            .filter(|m| !m.is_null());
            let Some(get) = get else {
                jni.clear_exception();
                return Err("ManagementFactory.getPlatformMXBean is missing".to_string());
            };
            let args = [sys::jvalue { l: interface }];
            let bean = jni!(jni, CallStaticObjectMethodA, factory, get, args.as_ptr())
                .unwrap_or(ptr::null_mut());
            if let Some(text) = jni.exception_text() {
                return Err(format!("getPlatformMXBean failed: {text}"));
            }
            if bean.is_null() {
                return Err("the JVM has no HotSpotDiagnosticMXBean".to_string());
            }
            let dump_heap = jni!(
                jni,
                GetMethodID,
                interface,
                c"dumpHeap".as_ptr(),
                c"(Ljava/lang/String;Z)V".as_ptr()
            )
            .filter(|m| !m.is_null());
            let Some(dump_heap) = dump_heap else {
                jni.clear_exception();
                return Err("HotSpotDiagnosticMXBean.dumpHeap is missing".to_string());
            };
            Ok(DiagnosticBean {
                bean: jni.new_global_ref(bean),
                dump_heap,
            })
        })
    }

    /// Has the JVM write a heap dump of the live objects (after a full GC) to `path`, which
    /// must not exist and must end in `.hprof`. Blocks until the dump is written.
    pub fn dump_heap(&self, jni: Jni, path: &str) -> std::result::Result<(), String> {
        let path = CString::new(path).map_err(|_| "the path holds a NUL byte".to_string())?;
        jni.with_local_frame(16, || {
            let jpath = jni!(jni, NewStringUTF, path.as_ptr()).unwrap_or(ptr::null_mut());
            if jpath.is_null() {
                let text = jni.exception_text().unwrap_or_default();
                return Err(format!("no memory for the path string: {text}"));
            }
            let args = [sys::jvalue { l: jpath }, sys::jvalue { z: 1 }];
            jni!(
                jni,
                CallVoidMethodA,
                self.bean.get(),
                self.dump_heap,
                args.as_ptr()
            );
            match jni.exception_text() {
                Some(text) => Err(text),
                None => Ok(()),
            }
        })
    }
}

impl Jni {
    /// The pending exception's `toString()`, cleared; `None` if none is pending.
    pub fn exception_text(self) -> Option<String> {
        if jni!(self, ExceptionCheck) != Some(1) {
            return None;
        }
        let throwable = jni!(self, ExceptionOccurred).unwrap_or(ptr::null_mut());
        let _ = jni!(self, ExceptionClear);
        if throwable.is_null() {
            return Some("an exception".into());
        }
        let text = self.with_local_frame(8, || {
            let class = self.object_class(throwable)?;
            let to_string = jni!(
                self,
                GetMethodID,
                class,
                c"toString".as_ptr(),
                c"()Ljava/lang/String;".as_ptr()
            )
            .filter(|m| !m.is_null())?;
            let text = jni!(self, CallObjectMethodA, throwable, to_string, ptr::null())
                .filter(|t| !t.is_null());
            self.clear_exception();
            self.string_text(text?)
        });
        self.delete_local_ref(throwable);
        Some(text.unwrap_or_else(|| "an exception".into()))
    }

    /// The text of a `java.lang.String` (modified UTF-8, decoded lossily).
    pub fn string_text(self, string: jobject) -> Option<String> {
        let chars =
            jni!(self, GetStringUTFChars, string, ptr::null_mut()).filter(|c| !c.is_null())?;
        // SAFETY: GetStringUTFChars returned a NUL-terminated buffer the JVM keeps until the
        // ReleaseStringUTFChars below.
        let text = unsafe { CStr::from_ptr(chars) }
            .to_string_lossy()
            .into_owned();
        let _ = jni!(self, ReleaseStringUTFChars, string, chars);
        Some(text)
    }
}

/// Frees `len` bytes of `file` from `offset` (a hole punched in it, its size kept): the disk
/// blocks and cached pages of a part already read go at once, dirty or not.
pub fn free_file_range(file: &std::fs::File, offset: u64, len: u64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let (Ok(offset), Ok(len)) = (libc::off_t::try_from(offset), libc::off_t::try_from(len)) else {
        return Err(std::io::Error::other("range too large"));
    };
    // SAFETY: fallocate only reads its integer arguments; the descriptor is open for as long
    // as `file` is borrowed.
    let rc = unsafe {
        libc::fallocate(
            file.as_raw_fd(),
            libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE,
            offset,
            len,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

// After the macros above, which it uses.
pub mod vthreads;
pub mod walk;
