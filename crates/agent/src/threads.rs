//! Owns the table of Java threads the agent knows: their serial numbers (from 200001, in
//! order of first sight), names and the references engines use to reach them.

use std::collections::BTreeMap;

use crate::jvmti::{GlobalRef, Jni, Jvmti, jthread};

/// The first thread serial; 200000 stands for "no thread" in the original's numbering.
pub const FIRST_THREAD_SERIAL: u32 = 200_001;

/// What the agent knows of a live thread.
#[derive(Debug)]
pub struct LiveThread {
    /// Thread serial.
    pub serial: u32,
    /// A global reference to the thread object.
    pub thread: GlobalRef,
    /// Thread name.
    pub name: String,
    /// Whether the agent itself runs this thread (it is never sampled).
    pub agent: bool,
    /// CPU time at the last sample, in ns; `None` until the first sample sets a baseline.
    pub last_cpu_ns: Option<i64>,
    /// CPU time used since the last sample was credited, in ns.
    pub cpu_credit_ns: i64,
    /// Object id of the thread object.
    pub object_id: u64,
    /// Whether CPU samples are taken of it (the front-end can turn this off).
    pub sampled: bool,
}

/// A thread as the output records it when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadStart {
    /// Thread serial.
    pub serial: u32,
    /// Object id of the thread object.
    pub object_id: u64,
    /// Thread name.
    pub name: String,
    /// Thread group name.
    pub group: String,
    /// Parent thread group name.
    pub parent_group: String,
}

/// The table of live threads.
#[derive(Debug, Default)]
pub struct ThreadTable {
    next_serial: u32,
    live: BTreeMap<u32, LiveThread>,
}

/// Names of the agent's own threads start with this.
pub const AGENT_THREAD_PREFIX: &str = "HPROF ";

impl ThreadTable {
    /// An empty table.
    pub fn new() -> ThreadTable {
        ThreadTable {
            next_serial: FIRST_THREAD_SERIAL,
            live: BTreeMap::new(),
        }
    }

    /// Registers `thread` (a local reference of the calling thread) unless it already has a
    /// serial. Returns what to record of its start, or `None` if it was known or has died.
    pub fn register(
        &mut self,
        jvmti: Jvmti,
        jni: Jni,
        thread: jthread,
        object_id: impl FnOnce() -> u64,
    ) -> Option<ThreadStart> {
        if jvmti.thread_local(thread).ok()? != 0 {
            return None;
        }
        let info = jvmti.thread_info(thread).ok()?;
        let serial = self.next_serial;
        jvmti.set_thread_local(thread, serial as usize).ok()?;
        self.next_serial += 1;
        let (group, parent_group) = match jvmti.thread_group_info(info.group) {
            Ok((group, parent)) => {
                let parent_name = if parent.is_null() {
                    String::new()
                } else {
                    let name = jvmti
                        .thread_group_info(parent)
                        .map(|(n, _)| n)
                        .unwrap_or_default();
                    jni.delete_local_ref(parent);
                    name
                };
                (group, parent_name)
            }
            Err(_) => (String::new(), String::new()),
        };
        jni.delete_local_ref(info.group);
        let agent = info.name.starts_with(AGENT_THREAD_PREFIX);
        let object_id = object_id();
        self.live.insert(
            serial,
            LiveThread {
                serial,
                thread: jni.new_global_ref(thread),
                name: info.name.clone(),
                agent,
                last_cpu_ns: None,
                cpu_credit_ns: 0,
                object_id,
                sampled: true,
            },
        );
        Some(ThreadStart {
            serial,
            object_id,
            name: info.name,
            group,
            parent_group,
        })
    }

    /// A new thread serial for a thread the table does not hold (one a heap dump names that
    /// the agent never saw start, such as a virtual thread).
    pub fn reserve_serial(&mut self) -> u32 {
        let serial = self.next_serial;
        self.next_serial += 1;
        serial
    }

    /// Forgets an ending thread; returns its serial if it was known.
    pub fn unregister(&mut self, jvmti: Jvmti, jni: Jni, thread: jthread) -> Option<u32> {
        let serial = jvmti.thread_local(thread).ok()? as u32;
        let entry = self.live.remove(&serial)?;
        jni.delete_global_ref(entry.thread);
        Some(serial)
    }

    /// Forgets the thread with this serial (a virtual thread found ended: JVMTI reports no
    /// ThreadEnd for those); whether it was known.
    pub fn remove(&mut self, jni: Jni, serial: u32) -> bool {
        match self.live.remove(&serial) {
            Some(entry) => {
                jni.delete_global_ref(entry.thread);
                true
            }
            None => false,
        }
    }

    /// The live thread with this serial.
    pub fn get_mut(&mut self, serial: u32) -> Option<&mut LiveThread> {
        self.live.get_mut(&serial)
    }

    /// (serial, a new local reference of the calling thread) of every live thread that `keep`
    /// accepts: what an engine takes under the table's lock before it asks the JVM anything
    /// about the threads, which it must do with the lock released.
    pub fn local_refs(&self, jni: Jni, keep: impl Fn(&LiveThread) -> bool) -> Vec<(u32, jthread)> {
        self.live
            .values()
            .filter(|t| keep(t))
            .map(|t| (t.serial, jni.new_local_ref(t.thread.get())))
            .collect()
    }

    /// The live threads, by serial.
    pub fn live_mut(&mut self) -> impl Iterator<Item = &mut LiveThread> {
        self.live.values_mut()
    }

    /// The live threads, by serial.
    pub fn live(&self) -> impl Iterator<Item = &LiveThread> {
        self.live.values()
    }

    /// How many threads are live.
    pub fn len(&self) -> usize {
        self.live.len()
    }

    /// Whether no thread is live.
    pub fn is_empty(&self) -> bool {
        self.live.is_empty()
    }
}
