//! cpu=times' part of a dump: the calls and CPU time by trace since the last dump, written
//! as the CPU TIME (ms) section (or, for `cpu=old`, the caller/callee listing), and the
//! `verbose=y` line on what the rewriter did.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use crate::engine::Context;
use crate::jvmti::{Jni, jmethodID};
use crate::output::ProfileOutput;
use crate::trace_store::Trace;

use super::CpuTimes;

impl CpuTimes {
    /// Takes the costs since the last dump: (trace index, calls, self ns) of every trace with
    /// calls or time.
    fn take_costs(&self, jni: Option<Jni>) -> Vec<(u32, u64, u64)> {
        let mut live: HashMap<u32, u64> = HashMap::new();
        if let Some(jni) = jni
            && let Ok(mut registry) = self.registry.lock()
        {
            for r in registry.live.values_mut() {
                for (trace, calls) in self.unreported(jni, r) {
                    *live.entry(trace).or_default() += calls;
                }
            }
        }
        let n = self.traces.lock().map(|t| t.entries.len()).unwrap_or(0);
        (0..n as u32)
            .filter_map(|t| {
                let cost = self.costs.get(t)?;
                let calls =
                    cost.calls.swap(0, Ordering::Relaxed) + live.get(&t).copied().unwrap_or(0);
                let self_ns = cost.self_ns.swap(0, Ordering::Relaxed);
                (calls > 0 || self_ns > 0).then_some((t, calls, self_ns))
            })
            .collect()
    }

    /// The agent's trace for our trace `t`, or `None` if it can't be resolved.
    fn agent_trace(&self, ctx: &Context, jni: Jni, t: u32) -> Option<Arc<Trace>> {
        let (frames, thread) = self.traces.lock().ok()?.entries.get(t as usize)?.clone();
        let methods = self.methods.lock().ok()?;
        let mut resolved = Vec::with_capacity(frames.len());
        for &m in frames.iter() {
            let id = *methods.resolved.get(m as usize - 1)?;
            if id == 0 {
                return None;
            }
            resolved.push((id as jmethodID, -1));
        }
        drop(methods);
        ctx.traces
            .lock()
            .ok()?
            .intern(ctx.jvmti, jni, &ctx.ids, &resolved, thread)
    }

    /// Writes the CPU TIME (ms) section (or the cpu=old listing) of the interval since the
    /// last dump, and starts a new interval.
    pub(super) fn write_times(&self, ctx: &Context, jni: Option<Jni>, out: &mut ProfileOutput) {
        let costs = self.take_costs(jni);
        if ctx.options.cpu_old {
            let inclusive = self
                .old_times
                .lock()
                .map(|mut old| std::mem::take(&mut *old))
                .unwrap_or_default();
            let mut rows: Vec<(u64, Option<String>, Option<String>, u64)> = Vec::new();
            for &(t, calls, _) in &costs {
                if calls == 0 {
                    continue;
                }
                let (frames, thread) = self
                    .traces
                    .lock()
                    .ok()
                    .and_then(|tr| tr.entries.get(t as usize).cloned())
                    .unwrap_or_default();
                let callee = frames.first().copied().unwrap_or(0);
                let caller = frames.get(1).copied().unwrap_or(0);
                let ns = inclusive
                    .get(&(callee, caller, thread))
                    .copied()
                    .unwrap_or(0);
                rows.push((
                    calls,
                    self.old_name(callee),
                    self.old_name(caller),
                    ns / 1_000_000,
                ));
            }
            rows.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
            out.write(|w| w.cpu_old(&rows));
            self.report(ctx);
            return;
        }
        let Some(jni) = jni else { return };
        let mut rows: Vec<(Arc<Trace>, u64, u64)> = Vec::new();
        for &(t, calls, self_ns) in &costs {
            if let Some(trace) = jni.with_local_frame(16, || self.agent_trace(ctx, jni, t)) {
                rows.push((trace, calls, self_ns / 1_000_000));
            }
        }
        let total: u64 = rows.iter().map(|r| r.2).sum();
        // CPU time is credited to the traces on the stack whether or not their calls have
        // ended; a trace with time but no finished call (a method still running, like main
        // at a SIGQUIT dump) counts in the total but has no row.
        rows.retain(|r| r.1 > 0);
        rows.sort_by(|a, b| {
            b.2.cmp(&a.2)
                .then(b.1.cmp(&a.1))
                .then(a.0.serial.cmp(&b.0.serial))
        });
        let cutoff = ctx.options.cutoff;
        let shown = rows
            .iter()
            .position(|(_, calls, ms)| {
                *calls == 0 || (total > 0 && (*ms as f64 / total as f64) < cutoff)
            })
            .unwrap_or(rows.len());
        rows.truncate(shown);
        out.write(|w| w.cpu_times(&rows, total));
        self.report(ctx);
    }

    /// With `verbose=y`, one line on what the rewriter did and on traces the table could not
    /// keep.
    fn report(&self, ctx: &Context) {
        if !ctx.options.verbose {
            return;
        }
        eprintln!(
            "HPROF: cpu=times rewrote {} classes ({} methods, {} left as they were); {} traces looked up by the agent (not in the threads' caches); {} traces dropped (table full); method ids found in {} ms",
            self.classes_instrumented.load(Ordering::Relaxed),
            self.methods_instrumented.load(Ordering::Relaxed),
            self.methods_failed.load(Ordering::Relaxed),
            self.lookups.load(Ordering::Relaxed),
            self.dropped.load(Ordering::Relaxed),
            self.resolve_ns.load(Ordering::Relaxed) / 1_000_000
        );
    }
}
