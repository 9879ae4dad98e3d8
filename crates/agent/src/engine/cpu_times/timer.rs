//! cpu=times' timing thread: every millisecond it reads each thread's CPU clock and credits
//! what the thread used to its current trace (self time) and, for `cpu=old`, to every
//! (callee, caller) pair of rewritten methods on its stack (inclusive time).

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use hprof_classfile::Keying;

use crate::engine::Context;
use crate::jvmti::{Jni, jobject};

use super::CpuTimes;
use super::threads::Registered;

/// How often the timing thread reads the threads' CPU clocks.
const TICK_MS: i64 = 1;

/// Frames of a thread's stack the timing thread reads for `cpu=old`'s inclusive time.
const MAX_OLD_FRAMES: usize = 4096;

impl CpuTimes {
    /// The body of the timing thread.
    pub(super) fn run(&self, ctx: &Context, jni: Jni) {
        let engine = self;
        if engine.keying == Keying::Table {
            engine.finish_late(ctx, jni);
        }
        let mut last: HashMap<u32, i64> = HashMap::new();
        let mut numbers: HashMap<usize, u32> = HashMap::new();
        engine
            .ticker
            .run(TICK_MS, || engine.tick(ctx, jni, &mut last, &mut numbers));
    }

    /// Credits each thread's CPU time since the last tick to its current trace, and for
    /// `cpu=old` to the (callee, caller) pairs of rewritten methods on its stack. `numbers`
    /// remembers the method number of each jmethodID seen (0: not rewritten).
    fn tick(
        &self,
        ctx: &Context,
        jni: Jni,
        last: &mut HashMap<u32, i64>,
        numbers: &mut HashMap<usize, u32>,
    ) {
        let mut used: Vec<(u32, u64)> = Vec::new();
        // For cpu=old: (thread for the trace key, ns, a local reference to the thread) of each
        // thread that used CPU; its stack is read once the thread table is unlocked.
        let mut stacks: Vec<(u32, u64, jobject)> = Vec::new();
        if let Ok(threads) = ctx.threads.lock() {
            let mut alive = Vec::with_capacity(threads.len());
            for thread in threads.live() {
                if thread.agent {
                    continue;
                }
                alive.push(thread.serial);
                let Ok(cpu) = ctx.jvmti.thread_cpu_time(thread.thread.get()) else {
                    continue;
                };
                let Some(before) = last.insert(thread.serial, cpu) else {
                    continue;
                };
                if cpu <= before {
                    continue;
                }
                let ns = (cpu - before) as u64;
                used.push((thread.serial, ns));
                if ctx.options.cpu_old {
                    let who = if ctx.options.thread { thread.serial } else { 0 };
                    stacks.push((who, ns, jni.new_local_ref(thread.thread.get())));
                }
            }
            last.retain(|serial, _| alive.contains(serial));
        }
        let mut inclusive: Vec<((u32, u32, u32), u64)> = Vec::new();
        let mut pairs: Vec<(u32, u32, u32)> = Vec::new();
        for (who, ns, thread) in stacks {
            if let Ok(frames) = ctx.jvmti.stack_trace(thread, MAX_OLD_FRAMES) {
                let on_stack: Vec<u32> = frames
                    .iter()
                    .map(|&(id, _)| {
                        *numbers
                            .entry(id as usize)
                            .or_insert_with(|| self.method_number(ctx.jvmti, jni, id))
                    })
                    .filter(|&m| m != 0)
                    .collect();
                pairs.clear();
                pairs.extend(
                    (0..on_stack.len())
                        .map(|i| (on_stack[i], on_stack.get(i + 1).copied().unwrap_or(0), who)),
                );
                pairs.sort_unstable();
                pairs.dedup();
                inclusive.extend(pairs.iter().map(|&p| (p, ns)));
            }
            jni.delete_local_ref(thread);
        }
        if !inclusive.is_empty()
            && let Ok(mut old) = self.old_times.lock()
        {
            for (pair, ns) in inclusive {
                *old.entry(pair).or_default() += ns;
            }
        }
        if used.is_empty() {
            return;
        }
        let (Ok(registry), Some(sc)) = (self.registry.lock(), self.state_class.get()) else {
            return;
        };
        let by_serial: HashMap<u32, &Registered> = registry
            .live
            .values()
            .filter(|r| r.serial != 0)
            .map(|r| (r.serial, r))
            .collect();
        for (serial, ns) in used {
            if let Some(r) = by_serial.get(&serial)
                && let Some(current) = r.global(jni.int_field(r.state.get(), sc.cur))
                && let Some(cost) = self.costs.get(current)
            {
                cost.self_ns.fetch_add(ns, Ordering::Relaxed);
            }
        }
    }
}
