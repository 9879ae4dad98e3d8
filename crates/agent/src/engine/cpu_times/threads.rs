//! The threads that have called cpu=times' tracker: their states (held by global
//! references), their local trace numbers, the calls each has already reported, and what
//! happens when one ends (ThreadEnd, or found terminated) or the session stops.

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use rustc_hash::FxHashMap;

use hprof_classfile::{Keying, OFF};

use crate::engine::Context;
use crate::jvmti::{GlobalRef, Jni, jobject};

use super::{CpuTimes, jni_name};

/// A thread that has called the tracker: its Java state (see `hprof_classfile::tracker`).
#[derive(Debug)]
pub(super) struct Registered {
    pub(super) thread: GlobalRef,
    pub(super) state: GlobalRef,
    pub(super) serial: u32,
    /// The thread's identity hash, its key in a [`Keying::Table`] tracker's table.
    pub(super) hash: i32,
    /// Calls per local trace already reported (the thread's `long[]` only grows).
    pub(super) reported: Vec<u64>,
    /// The thread's local trace numbers: the global trace of each, and back.
    pub(super) globals: Vec<u32>,
    pub(super) locals: FxHashMap<u32, i32>,
}

impl Registered {
    /// The global trace of local trace `local`, if it has one.
    pub(super) fn global(&self, local: i32) -> Option<u32> {
        usize::try_from(local)
            .ok()
            .and_then(|l| self.globals.get(l))
            .copied()
    }
}

/// Threads that have called the tracker (each holds its state in its own field).
#[derive(Debug, Default)]
pub(super) struct Registry {
    pub(super) live: HashMap<u64, Registered>,
    /// Registry size at which dead threads (virtual threads get no ThreadEnd) are purged.
    purge_at: usize,
    /// Pairs of a [`Keying::Table`] tracker's table taken, by threads or by removed threads.
    pub(super) table_used: usize,
}

impl CpuTimes {
    /// Drops the threads that have terminated (virtual threads end without ThreadEnd),
    /// keeping their calls.
    /// Forgets the registered threads that ended, once the registry has doubled since the
    /// last time. Their states are read with the registry's lock released (JDK 21+'s
    /// GetThreadState may wait for a virtual thread's mount or unmount to end, and a carrier
    /// inside one may be waiting for this lock), from local references taken under it.
    pub(super) fn purge_if_due(&self, ctx: &Context, jni: Jni) {
        const TERMINATED: u32 = 0x0002;
        let threads: Vec<(u64, jobject)> = {
            let Ok(registry) = self.registry.lock() else {
                return;
            };
            if registry.live.len() < registry.purge_at {
                return;
            }
            registry
                .live
                .iter()
                .map(|(&id, r)| (id, jni.new_local_ref(r.thread.get())))
                .collect()
        };
        let dead: Vec<u64> = threads
            .into_iter()
            .filter_map(|(id, thread)| {
                let state = ctx.jvmti.thread_state(thread).unwrap_or(0);
                jni.delete_local_ref(thread);
                (state & TERMINATED != 0).then_some(id)
            })
            .collect();
        let Ok(mut registry) = self.registry.lock() else {
            return;
        };
        for id in dead {
            if let Some(gone) = registry.live.remove(&id) {
                if self.keying == Keying::Table {
                    self.table_remove(jni, &gone);
                }
                self.forget(jni, gone);
            }
        }
        registry.purge_at = (registry.live.len() * 2).max(64);
    }

    /// A thread that has ended: its calls go to the shared costs, and its state leaves its
    /// field, so a `Thread` object the program keeps does not keep the state too.
    pub(super) fn forget(&self, jni: Jni, mut gone: Registered) {
        self.fold(jni, &mut gone);
        if let Some(&field) = self.thread_state.get() {
            jni.set_object_field(gone.thread.get(), field, std::ptr::null_mut());
        }
        jni.delete_global_ref(gone.thread);
        jni.delete_global_ref(gone.state);
    }

    /// Turns every registered thread's probes off (their fields get the tracker's `off`
    /// state); threads that have not called yet find the tracker disengaged.
    pub(super) fn turn_off_threads(&self, jni: Jni) {
        if self.keying == Keying::Table {
            if let Ok(mut registry) = self.registry.lock() {
                self.clear_table(jni, &mut registry);
            }
            return;
        }
        let (Some(class), Some(sc), Some(&field), Ok(registry)) = (
            self.tracker.get(),
            self.state_class.get(),
            self.thread_state.get(),
            self.registry.lock(),
        ) else {
            return;
        };
        jni.with_local_frame(4, || {
            let off = jni.static_object(class.get(), &jni_name(OFF), &sc.signature);
            if off.is_null() {
                return;
            }
            for r in registry.live.values() {
                jni.set_object_field(r.thread.get(), field, off);
            }
        });
    }

    /// Adds the calls `r` made since they were last reported to the shared costs.
    fn fold(&self, jni: Jni, r: &mut Registered) {
        for (trace, calls) in self.unreported(jni, r) {
            if let Some(cost) = self.costs.get(trace) {
                cost.calls.fetch_add(calls, Ordering::Relaxed);
            }
        }
    }

    /// The calls per trace `r` made since they were last reported, as (trace, calls).
    pub(super) fn unreported(&self, jni: Jni, r: &mut Registered) -> Vec<(u32, u64)> {
        let Some(sc) = self.state_class.get() else {
            return Vec::new();
        };
        jni.with_local_frame(8, || {
            let calls = jni.object_field(r.state.get(), sc.calls);
            if calls.is_null() {
                return Vec::new();
            }
            let mut now = vec![0i64; jni.array_length(calls).max(0) as usize];
            if !jni.get_longs(calls, 0, &mut now) {
                return Vec::new();
            }
            if r.reported.len() < now.len() {
                r.reported.resize(now.len(), 0);
            }
            let mut out = Vec::new();
            // calls[0] counts the calls of traces not recorded; local trace t is at t + 1.
            for (i, (&n, seen)) in now.iter().zip(r.reported.iter_mut()).enumerate().skip(1) {
                let n = n as u64;
                if n > *seen
                    && let Some(&t) = r.globals.get(i - 1)
                {
                    out.push((t, n - *seen));
                    *seen = n;
                }
            }
            out
        })
    }

    /// ThreadEnd: keeps the ending thread's calls and forgets it.
    pub(super) fn thread_end(&self, jni: Jni, thread: jobject) {
        if self.keying == Keying::Table {
            let Ok(mut registry) = self.registry.lock() else {
                return;
            };
            let id = registry
                .live
                .iter()
                .find(|(_, r)| jni.is_same_object(r.thread.get(), thread))
                .map(|(&id, _)| id);
            if let Some(gone) = id.and_then(|id| registry.live.remove(&id)) {
                self.table_remove(jni, &gone);
                self.forget(jni, gone);
            }
            return;
        }
        let (Some(&field), Some(sc), Ok(mut registry)) = (
            self.thread_state.get(),
            self.state_class.get(),
            self.registry.lock(),
        ) else {
            return;
        };
        // The thread's registry id is in its state; it counts only if the field holds that
        // thread's own state (not the shared `off` one the fields get at VM death, whose id
        // means nothing).
        let gone = jni.with_local_frame(4, || {
            let state = jni.object_field(thread, field);
            if state.is_null() {
                return None;
            }
            let id = u64::try_from(jni.int_field(state, sc.id)).ok()?;
            let own = registry
                .live
                .get(&id)
                .is_some_and(|r| jni.is_same_object(state, r.state.get()));
            if own { registry.live.remove(&id) } else { None }
        });
        if let Some(gone) = gone {
            self.forget(jni, gone);
        }
    }
}
