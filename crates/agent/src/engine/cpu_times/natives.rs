//! What the tracker's natives do, `HprofTracker.register` (a thread's first call: its state)
//! and `HprofTracker.miss` (a trace its caches did not have): the rewritten methods' calls
//! into the agent, reached through the `Probe` hook.

use std::sync::atomic::Ordering;

use rustc_hash::FxHashMap;

use hprof_classfile::{Keying, cache_index};

use crate::engine::Context;
use crate::jvmti::{Jni, jobject};
use crate::trace_store::MAX_TRACES;

use super::CpuTimes;
use super::threads::Registered;

/// Most entries a thread's hashed trace cache grows to: `1 << MAX_CACHE_BITS`.
const MAX_CACHE_BITS: u32 = 16;

impl CpuTimes {
    /// `HprofTracker.register(thread)`: the calling thread's first call. Makes its state and
    /// returns it (the tracker keeps it in the thread's field).
    pub(super) fn register(&self, ctx: &Context, jni: Jni, thread: jobject) -> jobject {
        if thread.is_null() {
            return std::ptr::null_mut();
        }
        self.purge_if_due(ctx, jni);
        // The thread's serial, for thread=y and the timing thread, from the thread table
        // (virtual threads have none). No JVMTI thread function is called here: this can
        // run inside a virtual thread's mount, where those would wait on it.
        let serial = ctx
            .threads
            .lock()
            .ok()
            .and_then(|threads| {
                threads
                    .live()
                    .find(|t| jni.is_same_object(t.thread.get(), thread))
                    .map(|t| t.serial)
            })
            .unwrap_or(0);
        // The state is made before the registry's lock is taken (allocating posts allocation
        // events: see `miss`).
        let id = self.next_state.fetch_add(1, Ordering::Relaxed);
        let Ok(state_id) = i32::try_from(id) else {
            return std::ptr::null_mut();
        };
        let Some(state) = self
            .state_class
            .get()
            .and_then(|sc| sc.new_state(jni, serial, state_id))
        else {
            return std::ptr::null_mut();
        };
        let hash = match self.keying {
            Keying::Field => 0,
            Keying::Table => match jni.identity_hash(thread) {
                Some(hash) => hash,
                None => return std::ptr::null_mut(),
            },
        };
        let (Some(thread_ref), Some(state_ref)) = (jni.global(thread), jni.global(state)) else {
            return state;
        };
        let Ok(mut registry) = self.registry.lock() else {
            jni.delete_global_ref(thread_ref);
            jni.delete_global_ref(state_ref);
            return std::ptr::null_mut();
        };
        registry.live.insert(
            id,
            Registered {
                thread: thread_ref,
                state: state_ref,
                serial,
                hash,
                reported: Vec::new(),
                globals: Vec::new(),
                locals: FxHashMap::default(),
            },
        );
        if self.keying == Keying::Table && !self.table_add(jni, &mut registry, id) {
            // Not in the table: the thread would register again at its next call.
            if let Some(gone) = registry.live.remove(&id) {
                self.forget(jni, gone);
            }
            return std::ptr::null_mut();
        }
        state
    }

    /// `HprofTracker.miss(state, method, parent)`: the local trace of `method` called under
    /// the frame whose local trace is `parent` (-1: none), put in the thread's hashed cache,
    /// with room made for it in the thread's arrays; -1 if it cannot be recorded. A thread
    /// whose cache misses more than four times its size gets a cache four times larger (up
    /// to `1 << MAX_CACHE_BITS` entries), so big programs keep their traces cached.
    pub(super) fn miss(
        &self,
        ctx: &Context,
        jni: Jni,
        state: jobject,
        method: i32,
        parent: i32,
    ) -> i32 {
        let Some(sc) = self.state_class.get() else {
            return -1;
        };
        if state.is_null() || method <= 0 {
            return -1;
        }
        self.lookups.fetch_add(1, Ordering::Relaxed);
        // The trace is found under the registry's lock; the thread's arrays are grown after it
        // is released: allocating a Java array posts allocation events (heap=sites takes the
        // allocating thread's stack, which on JDK 21+ waits for every virtual thread's mount or
        // unmount to end, and a carrier inside one may be waiting here for this lock).
        let t = {
            let Ok(mut registry) = self.registry.lock() else {
                return -1;
            };
            let id = jni.int_field(state, sc.id) as u64;
            let Some(r) = registry.live.get_mut(&id) else {
                return -1;
            };
            let thread = if ctx.options.thread { r.serial } else { 0 };
            let global_parent = r.global(parent).map_or(-1, |g| g as i32);
            match self.intern(ctx, method as u32, global_parent, thread) {
                Some(global) => match r.locals.get(&global) {
                    Some(&local) => local,
                    None if r.globals.len() < MAX_TRACES => {
                        let local = r.globals.len() as i32;
                        r.globals.push(global);
                        r.locals.insert(global, local);
                        local
                    }
                    None => -1,
                },
                None => -1,
            }
        };
        jni.with_local_frame(8, || {
            let mut t = t;
            if !sc.make_room(jni, state, t) {
                t = -1;
            }
            let mut shift = jni.int_field(state, sc.shift) as u32 & 31;
            let bits = 32 - shift;
            let misses = jni.int_field(state, sc.misses).saturating_add(1);
            if bits < MAX_CACHE_BITS && misses as u64 >= 4 << bits {
                let bits = (bits + 2).min(MAX_CACHE_BITS);
                if sc.new_cache(jni, state, bits) {
                    shift = 32 - bits;
                }
            } else {
                jni.set_int_field(state, sc.misses, misses);
            }
            let keys = jni.object_field(state, sc.keys);
            let kids = jni.object_field(state, sc.kids);
            if !keys.is_null() && !kids.is_null() {
                let entry = cache_index(method, parent, shift) as i32;
                jni.set_ints(keys, 2 * entry, &[method, parent]);
                jni.set_ints(kids, entry, &[t]);
            }
            t
        })
    }
}
