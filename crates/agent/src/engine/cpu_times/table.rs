//! The identity-hashed table of (thread, state) pairs in which a
//! [`Keying::Table`](hprof_classfile::Keying::Table) tracker (cpu=times started late, when
//! `java.lang.Thread` can get no field) finds each thread's state: adding a thread (growing
//! the table), taking one out, clearing it.

use hprof_classfile::{OFF, STATE_CLASS, TABLE, TABLE_DESCRIPTOR};

use crate::jvmti::{Jni, jobject};

use super::threads::{Registered, Registry};
use super::{CpuTimes, jni_name};

/// A [`Keying::Table`](hprof_classfile::Keying::Table) tracker's table has at least this many
/// pairs when it is rebuilt.
const MIN_TABLE_PAIRS: usize = 64;

impl CpuTimes {
    /// The tracker's static field `name` of type `signature` (a local reference, or null).
    fn tracker_static(&self, jni: Jni, name: &str, signature: &str) -> jobject {
        match self.tracker.get() {
            Some(class) => jni.static_object(class.get(), &jni_name(name), &jni_name(signature)),
            None => std::ptr::null_mut(),
        }
    }

    /// A [`Keying::Table`](hprof_classfile::Keying::Table) tracker's table (a local reference,
    /// or null).
    fn table(&self, jni: Jni) -> jobject {
        self.tracker_static(jni, TABLE, TABLE_DESCRIPTOR)
    }

    /// Makes `table` the tracker's table.
    fn set_table(&self, jni: Jni, table: jobject) -> bool {
        self.tracker.get().is_some_and(|class| {
            jni.set_static_object(
                class.get(),
                &jni_name(TABLE),
                &jni_name(TABLE_DESCRIPTOR),
                table,
            )
        })
    }

    /// Gives the tracker an empty table (no thread has a state: each finds the tracker
    /// disengaged, or registers again).
    pub(super) fn clear_table(&self, jni: Jni, registry: &mut Registry) -> bool {
        registry.table_used = 0;
        jni.with_local_frame(4, || {
            jni.new_object_array(2)
                .is_some_and(|empty| self.set_table(jni, empty))
        })
    }

    /// Puts (thread, state) in the first free pair of `table` from the thread's hash: the
    /// state first, so a probe that finds the thread finds its state.
    fn place(jni: Jni, table: jobject, r: &Registered) -> bool {
        let len = jni.array_length(table);
        if len < 2 {
            return false;
        }
        let mask = len - 2;
        let mut slot = r.hash.wrapping_shl(1) & mask;
        for _ in 0..len / 2 {
            let key = jni.object_array_element(table, slot);
            let free = key.is_null();
            jni.delete_local_ref(key);
            if free {
                return jni.set_object_array_element(table, slot + 1, r.state.get())
                    && jni.set_object_array_element(table, slot, r.thread.get());
            }
            slot = (slot + 2) & mask;
        }
        false
    }

    /// Adds registered thread `id` to the table; when the table would be more than half
    /// full, a new table four times the live threads' pairs (or more) replaces it.
    pub(super) fn table_add(&self, jni: Jni, registry: &mut Registry, id: u64) -> bool {
        jni.with_local_frame(8, || {
            let table = self.table(jni);
            let pairs = (jni.array_length(table).max(0) / 2) as usize;
            if !table.is_null() && 2 * (registry.table_used + 1) <= pairs {
                let placed = registry
                    .live
                    .get(&id)
                    .is_some_and(|r| Self::place(jni, table, r));
                if placed {
                    registry.table_used += 1;
                }
                return placed;
            }
            let pairs = (4 * registry.live.len())
                .max(MIN_TABLE_PAIRS)
                .next_power_of_two();
            let Ok(len) = i32::try_from(2 * pairs) else {
                return false;
            };
            let Some(bigger) = jni.new_object_array(len) else {
                return false;
            };
            if !registry.live.values().all(|r| Self::place(jni, bigger, r)) {
                return false;
            }
            registry.table_used = registry.live.len();
            self.set_table(jni, bigger)
        })
    }

    /// Takes `r`'s thread out of the table: its pair gets the `off` state as its key, which
    /// no thread matches, and no state.
    pub(super) fn table_remove(&self, jni: Jni, r: &Registered) {
        jni.with_local_frame(8, || {
            let table = self.table(jni);
            let off = self.tracker_static(jni, OFF, &format!("L{STATE_CLASS};"));
            let len = jni.array_length(table);
            if table.is_null() || off.is_null() || len < 2 {
                return;
            }
            let mask = len - 2;
            let mut slot = r.hash.wrapping_shl(1) & mask;
            for _ in 0..len / 2 {
                let key = jni.object_array_element(table, slot);
                let (empty, found) = (key.is_null(), jni.is_same_object(key, r.thread.get()));
                jni.delete_local_ref(key);
                if empty {
                    return;
                }
                if found {
                    jni.set_object_array_element(table, slot, off);
                    jni.set_object_array_element(table, slot + 1, std::ptr::null_mut());
                    return;
                }
                slot = (slot + 2) & mask;
            }
        });
    }
}
