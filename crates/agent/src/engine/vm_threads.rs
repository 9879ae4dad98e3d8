//! Owns what `cpu=samples` knows of the JVM's threads that run no Java code, sampled with
//! `vmthreads=y` (garbage collection, JIT compilation, the VM thread): their thread serials
//! and THREAD START / THREAD END records, named as the kernel names them (`/proc`), and
//! which new ones appeared since the last look.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::engine::Context;
use crate::threads::{AGENT_THREAD_PREFIX, ThreadStart};

/// How often the process's threads are listed for new (and ended) JVM threads.
const SCAN_PERIOD: Duration = Duration::from_secs(1);

/// The JVM's threads sampled so far, by kernel id.
#[derive(Debug, Default)]
pub struct VmThreads {
    serials: HashMap<i32, u32>,
    last_scan: Option<Instant>,
}

/// The kernel's name of thread `tid` of this process (`/proc/self/task/TID/comm`: at most
/// 15 characters, as `pthread_setname_np` allows).
fn kernel_name(tid: i32) -> String {
    std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
        .map(|name| name.trim_end().to_string())
        .unwrap_or_else(|_| format!("thread {tid}"))
}

/// Whether the thread named `name` is one of the agent's own (never sampled).
fn is_agent(name: &str) -> bool {
    name.starts_with(AGENT_THREAD_PREFIX.trim_end())
}

impl VmThreads {
    /// The serial of JVM thread `tid`, if it has one.
    pub fn serial(&self, tid: i32) -> Option<u32> {
        self.serials.get(&tid).copied()
    }

    /// Gives each of `tids` (JVM threads whose samples came, without a serial) a serial and
    /// a THREAD START record (written now); the agent's own threads get none.
    pub fn register(&mut self, ctx: &Context, tids: &[i32]) {
        let mut starts = Vec::new();
        for &tid in tids {
            if self.serials.contains_key(&tid) {
                continue;
            }
            let name = kernel_name(tid);
            if is_agent(&name) {
                continue;
            }
            let Ok(mut threads) = ctx.threads.lock() else {
                return;
            };
            let serial = threads.reserve_serial();
            drop(threads);
            self.serials.insert(tid, serial);
            starts.push(ThreadStart {
                serial,
                object_id: ctx.ids.fresh(),
                name,
                group: String::new(),
                parent_group: String::new(),
            });
        }
        if starts.is_empty() {
            return;
        }
        ctx.with_output(|out| {
            for start in &starts {
                out.write(|w| w.thread_start(start));
            }
        });
    }

    /// Once a second: the threads of the process that are new since the last look (to get a
    /// timer), and the JVM threads sampled so far that ended (each gets its THREAD END now).
    pub fn scan(&mut self, ctx: &Context, known: impl Fn(i32) -> bool) -> Vec<i32> {
        if self
            .last_scan
            .is_some_and(|last| last.elapsed() < SCAN_PERIOD)
        {
            return Vec::new();
        }
        self.last_scan = Some(Instant::now());
        let live = super::cpu_async::task_ids();
        let ended: Vec<(i32, u32)> = self
            .serials
            .iter()
            .filter(|(tid, _)| !live.contains(tid))
            .map(|(&tid, &serial)| (tid, serial))
            .collect();
        if !ended.is_empty() {
            ctx.with_output(|out| {
                for &(tid, serial) in &ended {
                    out.write(|w| w.thread_end(serial));
                    let _ = tid;
                }
            });
        }
        for (tid, _) in ended {
            self.serials.remove(&tid);
        }
        let current = crate::signal::current_tid();
        live.into_iter()
            .filter(|&tid| tid != current && !known(tid) && !self.serials.contains_key(&tid))
            .filter(|&tid| !is_agent(&kernel_name(tid)))
            .collect()
    }
}
