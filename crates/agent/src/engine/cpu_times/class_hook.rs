//! cpu=times' class file load hook: once the tracker is ready, every class with each method
//! rewritten (by `hprof-classfile`) to call the tracker at entry, before each return and on
//! exceptional exit; before then (from `Agent_OnLoad` to the start), `java.lang.Thread` alone
//! changes, at its first load, getting the field that holds each thread's state. That early
//! hook turns class data sharing off, which a JVM that requires sharing refuses
//! ([`crate::vm_options::sharing_required`]).

use std::sync::atomic::Ordering;

use hprof_classfile::{
    Keying, STATE_CLASS, THREAD_CLASS, TRACKER_CLASS, TRACKER_PROBES, instrument, with_state_field,
};

use super::CpuTimes;

/// The class file load hook before the tracker exists (from `Agent_OnLoad` to VM init):
/// `java.lang.Thread` gets the field for its state; every other class is left for the
/// retransformation at VM init.
pub(super) fn transform_early(name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
    if name == Some(THREAD_CLASS.as_bytes()) {
        with_state_field(class).ok()
    } else {
        None
    }
}

impl CpuTimes {
    /// The class file load hook: the rewritten class, or `None` to keep it as it is.
    pub(super) fn transform(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        if !self.ready.load(Ordering::Acquire) {
            // Started late, before install and after release: every class keeps (or gets
            // back) its own code.
            return match self.keying {
                Keying::Field => transform_early(name, class),
                Keying::Table => None,
            };
        }
        if name.is_some_and(|n| n == TRACKER_CLASS.as_bytes() || n == STATE_CLASS.as_bytes()) {
            return None;
        }
        if self.keying == Keying::Field && name == Some(THREAD_CLASS.as_bytes()) {
            // Retransformed from its original bytes: the field goes in again, or the class
            // would lose it (which the JVM refuses).
            let rewritten = self.rewrite(name, class);
            return with_state_field(rewritten.as_deref().unwrap_or(class)).ok();
        }
        self.rewrite(name, class)
    }

    /// `class` with every method rewritten, or `None` to keep it as it is.
    fn rewrite(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        // Code that runs while a virtual thread mounts or unmounts, where the JVM does not
        // expect Java-level agents' calls, is left alone.
        if let Some(name) = name
            && (name.starts_with(b"java/lang/VirtualThread")
                || name.starts_with(b"jdk/internal/vm/Continuation"))
        {
            return None;
        }
        let outcome = instrument(class, &TRACKER_PROBES, |m| {
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
}
