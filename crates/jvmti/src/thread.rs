//! Owns the agent's own threads and the panic barrier: [`Jvmti::start_agent_thread`], the one
//! helper every engine (and the profiler) starts its threads with, and [`guarded`], which
//! turns a panic into an `HPROF ERROR:` line instead of unwinding into the JVM.

use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

use super::{Jni, Jvmti, JvmtiError, sys};
use crate::error::{ErrorKind, report};

/// Runs `f`, turning a panic into an `HPROF ERROR:` line instead of unwinding into the JVM.
pub fn guarded<T>(what: &str, fallback: T, f: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(value) => value,
        Err(panic) => {
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            report(
                ErrorKind::Internal,
                format!("internal error in {what}: {message}"),
            );
            fallback
        }
    }
}

/// Why an agent thread did not start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadStartError {
    /// The thread's `java.lang.Thread` object could not be made.
    NoThreadObject,
    /// RunAgentThread failed.
    Run(JvmtiError),
}

/// What the thread runs: handed to [`agent_thread_main`] through RunAgentThread's argument.
struct Body {
    what: &'static str,
    run: Box<dyn FnOnce(Jni) + Send>,
}

impl Jvmti {
    /// Starts the agent thread `name` (a Java daemon thread the JVM never suspends), which runs
    /// `run` with its JNI environment; a panic in `run` becomes an `HPROF ERROR: internal error
    /// in {what}` line.
    pub fn start_agent_thread(
        self,
        jni: Jni,
        name: &str,
        what: &'static str,
        run: impl FnOnce(Jni) + Send + 'static,
    ) -> Result<(), ThreadStartError> {
        let thread = jni
            .new_thread(name)
            .ok_or(ThreadStartError::NoThreadObject)?;
        let body = Box::into_raw(Box::new(Body {
            what,
            run: Box::new(run),
        }));
        let started = self.run_agent_thread(thread, agent_thread_main, body as usize);
        jni.delete_local_ref(thread);
        if let Err(e) = started {
            // SAFETY: the thread did not start, so `body` (from Box::into_raw above) was not
            // handed over: it is freed here, once.
            drop(unsafe { Box::from_raw(body) });
            return Err(ThreadStartError::Run(e));
        }
        Ok(())
    }
}

/// The entry point of every agent thread: runs the [`Body`] its starter handed over.
extern "C" fn agent_thread_main(
    _jvmti: *mut sys::jvmtiEnv,
    jni: *mut sys::JNIEnv,
    arg: *mut c_void,
) {
    if arg.is_null() {
        return;
    }
    // SAFETY: `arg` is the `Body` that `start_agent_thread` leaked with Box::into_raw for this
    // thread alone; the thread takes it back once.
    let body = unsafe { Box::from_raw(arg.cast::<Body>()) };
    let Body { what, run } = *body;
    guarded(what, (), || run(Jni::from_raw(jni)));
}
