//! The Java side of a cpu=times thread: the tracker's state class (defined in the boot
//! loader) and each thread's state object, with its current trace, inline caches, calls by
//! trace and hashed trace cache (see `hprof_classfile::tracker`), made and grown through JNI.

use std::ffi::CString;

use hprof_classfile::{CACHE_BITS, IC_INTS, STATE_CLASS, STATE_FIELDS, state_class};

use crate::jvmti::{FieldId, GlobalRef, Jni, jobject};

use super::jni_name;

/// Traces a new state has room for; its arrays double as it needs.
const FIRST_TRACES: usize = 16;

/// The state class and its fields (see `hprof_classfile::STATE_FIELDS`).
#[derive(Debug)]
pub(super) struct StateClass {
    class: GlobalRef,
    /// Its signature (`Ljava/lang/HprofTrackerState;`).
    pub(super) signature: CString,
    pub(super) cur: FieldId,
    ic: FieldId,
    pub(super) calls: FieldId,
    pub(super) keys: FieldId,
    pub(super) kids: FieldId,
    pub(super) shift: FieldId,
    pub(super) misses: FieldId,
    serial: FieldId,
    pub(super) id: FieldId,
}

impl StateClass {
    /// Defines the state class (or finds it, defined by an earlier session in this JVM) and
    /// finds its fields.
    pub(super) fn define(jni: Jni) -> Result<StateClass, String> {
        let name = jni_name(STATE_CLASS);
        let class = jni
            .find_class(&name)
            .or_else(|| jni.define_boot_class(&name, &state_class()))
            .ok_or("can't define the tracker's state class")?;
        let mut ids = Vec::with_capacity(STATE_FIELDS.len());
        for (name, desc) in STATE_FIELDS {
            let name = jni_name(name);
            let desc = jni_name(desc);
            ids.push(
                jni.field_id(class, &name, &desc)
                    .ok_or_else(|| format!("no field {name:?} in the state class"))?,
            );
        }
        let class = jni.new_global_ref(class);
        Ok(StateClass {
            class,
            signature: jni_name(&format!("L{STATE_CLASS};")),
            cur: ids[0],
            ic: ids[1],
            calls: ids[2],
            keys: ids[3],
            kids: ids[4],
            shift: ids[5],
            misses: ids[6],
            serial: ids[7],
            id: ids[8],
        })
    }

    /// A new hashed cache of `1 << bits` entries in `state` (no entry found yet).
    pub(super) fn new_cache(&self, jni: Jni, state: jobject, bits: u32) -> bool {
        let entries = 1i32 << bits;
        let (Some(keys), Some(kids)) = (jni.new_int_array(2 * entries), jni.new_int_array(entries))
        else {
            return false;
        };
        jni.set_object_field(state, self.keys, keys);
        jni.set_object_field(state, self.kids, kids);
        jni.set_int_field(state, self.shift, (32 - bits) as i32);
        jni.set_int_field(state, self.misses, 0);
        jni.delete_local_ref(keys);
        jni.delete_local_ref(kids);
        true
    }

    /// A new thread state (a local reference) for the thread with serial `serial` and
    /// registry id `id`: no current trace, room for [`FIRST_TRACES`] traces, a small hashed
    /// cache; under 2 KB, as virtual threads' carriers and short-lived threads can be many.
    pub(super) fn new_state(&self, jni: Jni, serial: u32, id: i32) -> Option<jobject> {
        let state = jni.alloc_object(self.class.get())?;
        let ic = jni.new_int_array((IC_INTS * FIRST_TRACES) as i32)?;
        let calls = jni.new_long_array(FIRST_TRACES as i32)?;
        jni.set_object_field(state, self.ic, ic);
        jni.set_object_field(state, self.calls, calls);
        jni.delete_local_ref(ic);
        jni.delete_local_ref(calls);
        jni.set_int_field(state, self.cur, -1);
        jni.set_int_field(state, self.serial, serial as i32);
        jni.set_int_field(state, self.id, id);
        self.new_cache(jni, state, CACHE_BITS).then_some(state)
    }

    /// Makes sure the arrays of `state` have room for local trace `t` (`calls[t + 1]`,
    /// `ic[IC_INTS * (t + 1)..][..IC_INTS]`); false if they could not grow.
    pub(super) fn make_room(&self, jni: Jni, state: jobject, t: i32) -> bool {
        let need = (t.max(-1) + 2) as usize;
        let calls = jni.object_field(state, self.calls);
        let ic = jni.object_field(state, self.ic);
        if calls.is_null() || ic.is_null() {
            return false;
        }
        let len = jni.array_length(calls).max(0) as usize;
        if need <= len && IC_INTS * need <= jni.array_length(ic).max(0) as usize {
            return true;
        }
        let new_len = need.next_power_of_two().max(2 * len);
        let mut old_calls = vec![0i64; len];
        let mut old_ic = vec![0i32; IC_INTS * len];
        let (Some(bigger_calls), Some(bigger_ic)) = (
            jni.new_long_array(new_len as i32),
            jni.new_int_array((IC_INTS * new_len) as i32),
        ) else {
            return false;
        };
        if !(jni.get_longs(calls, 0, &mut old_calls)
            && jni.set_longs(bigger_calls, 0, &old_calls)
            && jni.get_ints(ic, 0, &mut old_ic)
            && jni.set_ints(bigger_ic, 0, &old_ic))
        {
            return false;
        }
        jni.set_object_field(state, self.ic, bigger_ic);
        jni.set_object_field(state, self.calls, bigger_calls);
        true
    }
}
