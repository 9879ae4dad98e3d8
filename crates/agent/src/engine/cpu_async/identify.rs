//! Which kernel thread runs which Java thread, for the Java threads that were running before
//! the sampler started (their ThreadStart came before it): each thread of the process is asked
//! by a queued signal for its JNI environment, and the answers, drained with the samples, give
//! each Java thread its place in the registry, with the timer it got at start; the process's
//! kernel thread ids.

use std::collections::HashMap;
use std::time::Duration;

use super::{AsyncSampler, Registry, SampledThread};
use crate::engine::Context;
use crate::jvmti::Jni;
use crate::signal;

impl AsyncSampler {
    /// Finds which kernel thread runs each Java thread that was running before the sampler
    /// started (the JVM's own, the main thread, and every thread of a JVM attached to late),
    /// whose ThreadStart came before the sampler: each is asked, by a queued signal, for its
    /// JNI environment, which HotSpot keeps at a fixed offset from the thread structure that
    /// `java.lang.Thread.eetop` points to.
    pub(super) fn identify_running_threads(&self, ctx: &Context, jni: Jni) {
        let Some(class) = jni.find_class(c"java/lang/Thread") else {
            return;
        };
        let eetop = jni.field_id(class, c"eetop", c"J");
        jni.delete_local_ref(class);
        let (Some(eetop), Ok(current)) = (eetop, ctx.jvmti.current_thread()) else {
            return;
        };
        let offset = (jni.raw() as usize).wrapping_sub(jni.long_field(current, eetop) as usize);
        jni.delete_local_ref(current);
        let mut unidentified = HashMap::new();
        let mut agents = Vec::new();
        jni.with_local_frame(16, || {
            for thread in ctx.jvmti.all_threads().unwrap_or_default() {
                let serial = ctx.jvmti.thread_local(thread).unwrap_or(0) as u32;
                let agent = ctx
                    .threads
                    .lock()
                    .ok()
                    .and_then(|mut t| t.get_mut(serial).map(|t| t.agent))
                    .unwrap_or(true);
                let top = jni.long_field(thread, eetop) as usize;
                if serial != 0 && agent && top != 0 {
                    agents.push(top.wrapping_add(offset));
                }
                if serial != 0 && !agent && top != 0 {
                    unidentified.insert(
                        top.wrapping_add(offset),
                        (jni.new_global_ref(thread), serial),
                    );
                }
                jni.delete_local_ref(thread);
            }
        });
        let current = signal::current_tid();
        if let Ok(mut registry) = self.registry.lock() {
            let known: Vec<usize> = registry.serial_by_env.keys().copied().collect();
            for env in known {
                if let Some((thread, _)) = unidentified.remove(&env) {
                    jni.delete_global_ref(thread);
                }
            }
            registry.unidentified = unidentified;
            registry.agent_envs.extend(agents);
        }
        let asked = task_ids()
            .into_iter()
            .filter(|&tid| tid != current && signal::signal_thread(tid, signal::IDENTIFY))
            .count();
        // The answers are in the ring once each thread ran its handler: a thread blocked in
        // the kernel runs it at once, a runnable one at its next time slice. Wait for them all,
        // at most 50 ms.
        let deadline = std::time::Instant::now() + Duration::from_millis(50);
        loop {
            self.drain(ctx, jni);
            let answered = self.registry.lock().map(|r| r.answers).unwrap_or(asked);
            if answered >= asked || std::time::Instant::now() >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Registry {
    /// Takes the answers the drain found in the ring: kernel threads that run no Java
    /// (`not_java`) and those that named their JNI environment (`identified`: kernel id,
    /// environment); with `vm_threads` (`vmthreads=y`), hidden threads keep their timers.
    pub(super) fn take_answers(
        &mut self,
        jni: Jni,
        not_java: Vec<i32>,
        identified: Vec<(i32, usize)>,
        vm_threads: bool,
    ) {
        self.answers += identified.len() + not_java.len();
        // Timers of threads the JVM runs no Java on (JIT, GC) are deleted at their first
        // signal.
        for tid in not_java {
            self.unknown.remove(&tid);
        }
        for (tid, env) in identified {
            let Some((thread, serial)) = self.unidentified.remove(&env) else {
                // A thread that runs Java but that JVMTI does not list (the JIT's compiler
                // threads, HotSpot's other hidden threads): not sampled, as JVMTI never
                // shows them (a thread that started meanwhile keeps the timer its
                // ThreadStart gave it).
                if !self.serial_by_env.contains_key(&env) && !vm_threads {
                    self.unknown.remove(&tid);
                }
                continue;
            };
            let timer = self.unknown.remove(&tid);
            self.serial_by_env.insert(env, serial);
            if let Some(old) = self
                .by_tid
                .insert(tid, SampledThread { thread, timer, env })
            {
                jni.delete_global_ref(old.thread);
            }
        }
    }
}

/// Kernel ids of this process's threads, as this process names them (`gettid`): in a pid
/// namespace whose /proc is the host's, /proc/self/task lists the host's ids, and each
/// thread's `NSpid` line ends with its id here.
pub(crate) fn task_ids() -> Vec<i32> {
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    dir.filter_map(|entry| {
        let entry = entry.ok()?;
        let listed: i32 = entry.file_name().to_str()?.parse().ok()?;
        let status = std::fs::read_to_string(entry.path().join("status")).ok();
        let own = status.as_deref().and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("NSpid:"))
                .and_then(|ids| ids.split_whitespace().last()?.parse().ok())
        });
        Some(own.unwrap_or(listed))
    })
    .collect()
}
