//! Installing cpu=times' tracker: at VM init (the tracker class keyed by `java.lang.Thread`'s
//! field), or started late (`hprof attach`: a table-keyed tracker, its natives linked from
//! the timing thread once the JVM lists this library); then engaging it and rewriting the
//! classes already loaded by retransformation.

use std::sync::atomic::Ordering;

use hprof_classfile::{
    ENGAGED, Keying, NATIVES, STATE_CLASS, THREAD_CLASS, THREAD_STATE_FIELD, TRACKER_CLASS,
    tracker_class_keyed,
};

use crate::engine::Context;
use crate::error::{ErrorKind, report};
use crate::jvmti::{Jni, jclass};

use super::state::StateClass;
use super::{CpuTimes, jni_name};

/// Tries, 20 ms apart, to link the tracker's natives when started late.
const LINK_TRIES: usize = 500;

impl CpuTimes {
    /// Defines the tracker class (its natives are found by name in this library), engages
    /// it and rewrites the classes already loaded.
    pub(super) fn install(&self, ctx: &Context, jni: Jni) -> Result<(), String> {
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
    pub(super) fn finish_late(&self, ctx: &Context, jni: Jni) {
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

    pub(super) fn set_engaged(&self, jni: Jni, on: bool) -> Result<(), String> {
        let class = self.tracker.get().ok_or("no tracker class")?;
        let engaged = jni_name(ENGAGED);
        if !jni.set_static_boolean(class.get(), &engaged, on) {
            return Err("can't engage the tracker".into());
        }
        Ok(())
    }
}
