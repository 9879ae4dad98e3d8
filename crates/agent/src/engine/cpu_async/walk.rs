//! What the stack walks need, set up at start: whether this JVM can be walked
//! asynchronously at all (`available`), debug information at every instruction of compiled
//! code, a jmethodID for every method (a walk in a signal handler cannot create one), and the
//! agent's own walker (HotSpot's structures read and checked), with AsyncGetCallTrace where
//! it cannot be used.

use super::AsyncSampler;
use crate::engine::Context;
use crate::error::AgentError;
use crate::jvmti::{Event, Jni, Jvmti};
use crate::signal;

/// Whether this JVM can be sampled asynchronously: it exports `AsyncGetCallTrace`, and (for
/// CPU time, `timers`) the kernel lets the agent put a timer on a thread's CPU clock. When
/// not, the reason, for the verbose line that says the JVMTI sampler is used instead.
pub fn available(vm: crate::jvmti::JavaVm, _timers: bool) -> Result<(), String> {
    signal::find_walker(vm).ok_or("this JVM does not export AsyncGetCallTrace")?;
    Ok(())
}

/// Makes the JIT keep debug information at every instruction, not only at safepoints, for a
/// walk to resolve inlined methods and lines anywhere in compiled code: the
/// DebugNonSafepoints flag, set in HotSpot's flag table. Where that table cannot be read,
/// CompiledMethodLoad events do the same (HotSpot turns the recording on while they are
/// enabled), at the cost of an event per compiled method.
pub(super) fn keep_debug_info(ctx: &Context) -> Result<(), AgentError> {
    if let Err(why) = crate::jvmti::vmstructs::set_bool_flag(ctx.vm, "DebugNonSafepoints", true) {
        if ctx.options.verbose {
            eprintln!("HPROF: DebugNonSafepoints set through CompiledMethodLoad events ({why})");
        }
        ctx.jvmti
            .set_event(Event::CompiledMethodLoad, true)
            .map_err(|e| AgentError::starting(format!("can't enable CompiledMethodLoad ({e})")))?;
    }
    Ok(())
}

/// Creates the jmethodIDs of every class loaded so far; ClassPrepare does the later ones.
pub(super) fn prepare_loaded_classes(ctx: &Context, jni: Jni) {
    jni.with_local_frame(16, || {
        if let Ok(classes) = ctx.jvmti.loaded_classes() {
            for class in classes {
                AsyncSampler::prepare_class(ctx.jvmti, jni, class);
                jni.delete_local_ref(class);
            }
        }
    });
}

impl AsyncSampler {
    /// Turns on the sampler's own stack walk (HotSpot's structures and native code, with
    /// AsyncGetCallTrace where it breaks), once what it reads checked out; where it cannot, one
    /// verbose line says why and AsyncGetCallTrace takes every stack. `_HPROF_NO_WALKER` (a
    /// diagnostic switch, for comparisons) keeps it off.
    pub(super) fn start_walker(ctx: &Context, jni: Jni) {
        // The stubs' ranges and names: those generated from now on, and those made before.
        let events = ctx
            .jvmti
            .set_event(Event::DynamicCodeGenerated, true)
            .and_then(|()| ctx.jvmti.generate_events(Event::DynamicCodeGenerated));
        signal::refresh_walker_tables();
        signal::set_native_frames(ctx.options.native);
        let started = (|| -> Result<(), String> {
            if std::env::var_os("_HPROF_NO_WALKER").is_some() {
                return Err("_HPROF_NO_WALKER is set".into());
            }
            let version = ctx
                .jvmti
                .feature_version()
                .ok_or("the JVM's version is unknown")?;
            let tables = crate::jvmti::vmstructs::VmStructs::read(ctx.vm)?;
            let env_offset = env_offset(ctx, jni)
                .ok_or("the JNI environment's place in HotSpot's thread is unknown")?;
            let layout = signal::hotspot::Layout::read(&tables, version, env_offset)?;
            signal::enable_walker(layout, &sample_methods(ctx, jni), ctx.options.native)
        })();
        if !ctx.options.verbose {
            return;
        }
        if let Err(why) = started {
            eprintln!("HPROF: cpu samples take stacks with AsyncGetCallTrace alone: {why}");
        } else if let Err(e) = events {
            eprintln!(
                "HPROF: stub frames are named from their code blobs (DynamicCodeGenerated: {e})"
            );
        }
    }

    /// Creates the jmethodIDs of every method of `class`, so a stack walk in a signal handler
    /// finds them (it cannot create them).
    pub fn prepare_class(jvmti: Jvmti, jni: Jni, class: crate::jvmti::jclass) {
        let _ = jni;
        let _ = jvmti.class_methods(class);
    }
}

/// Where HotSpot keeps a thread's JNI environment: its offset from the thread structure
/// that `java.lang.Thread.eetop` points to, measured on the calling thread.
fn env_offset(ctx: &Context, jni: Jni) -> Option<usize> {
    let class = jni.find_class(c"java/lang/Thread")?;
    let eetop = jni.field_id(class, c"eetop", c"J");
    jni.delete_local_ref(class);
    let (eetop, current) = (eetop?, ctx.jvmti.current_thread().ok()?);
    let thread = jni.long_field(current, eetop) as usize;
    jni.delete_local_ref(current);
    let env = jni.raw() as usize;
    (thread != 0 && env > thread && env - thread < 1 << 16).then(|| env - thread)
}

/// jmethodIDs the JVM made (the methods of `java.lang.Object` and `java.lang.Thread`), to
/// check the stack walk's reading of HotSpot's methods against.
fn sample_methods(ctx: &Context, jni: Jni) -> Vec<usize> {
    let mut methods = Vec::new();
    for name in [c"java/lang/Object", c"java/lang/Thread"] {
        if let Some(class) = jni.find_class(name) {
            methods.extend(
                ctx.jvmti
                    .class_methods(class)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|m| m as usize),
            );
            jni.delete_local_ref(class);
        }
    }
    methods
}
