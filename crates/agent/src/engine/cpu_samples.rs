//! The `cpu=samples,sampler=jvmti` engine: an agent thread that wakes every `interval` ms and records the
//! stack of each thread that used CPU time since the previous tick.
//!
//! Unlike the original, which sampled every RUNNABLE thread, a thread is counted by the CPU
//! time it used: one sample per `interval` of CPU time, credited at the tick. A thread
//! blocked in native code (`accept`, `epollWait`, `read`) is RUNNABLE to the JVM but uses no
//! CPU, and gets no samples.

use std::sync::Mutex;

use crate::engine::sampling::{set_sampling, write_samples};
use crate::engine::ticker::Ticker;
use crate::engine::{Context, Engine, Hook, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Jni};
use crate::output::ProfileOutput;

/// Name of the sampling thread (agent threads' names start with `HPROF `).
pub const THREAD_NAME: &str = "HPROF cpu sampling thread";

/// The sampler.
#[derive(Debug, Default)]
pub struct CpuSampler {
    ticker: Ticker,
    /// Samples whose trace was not kept (table full).
    dropped: Mutex<u64>,
    /// Set once started.
    started: Started,
}

impl CpuSampler {
    /// A sampler not yet started.
    pub fn new() -> CpuSampler {
        CpuSampler::default()
    }

    /// The body of the sampling thread.
    fn run(&self, ctx: &Context, jni: Jni) {
        let sampler = self;
        let interval = i64::from(ctx.options.interval_ms);
        sampler.ticker.run(interval, || {
            let threads = ctx.threads.lock().map(|t| t.len()).unwrap_or(0);
            jni.with_local_frame(threads as i32 + 16, || sampler.tick(ctx, jni))
        });
    }

    /// One sample of every thread that used CPU since the last tick. The thread table's lock
    /// is never held while the JVM is asked for CPU times or stacks (a stack request waits for
    /// a safepoint or a handshake).
    fn tick(&self, ctx: &Context, jni: Jni) {
        let candidates = match ctx.threads.lock() {
            Ok(table) => table.local_refs(jni, |t| !t.agent && t.sampled),
            Err(_) => return,
        };
        let cpu: Vec<Option<i64>> = candidates
            .iter()
            .map(|&(_, thread)| ctx.jvmti.thread_cpu_time(thread).ok())
            .collect();
        let interval_ns = i64::from(ctx.options.interval_ms) * 1_000_000;
        let mut busy = Vec::new();
        {
            let Ok(mut table) = ctx.threads.lock() else {
                return;
            };
            for (&(serial, thread), cpu) in candidates.iter().zip(cpu) {
                let (Some(cpu), Some(t)) = (cpu, table.get_mut(serial)) else {
                    continue;
                };
                // One sample per `interval` of CPU time the thread used: a thread that ran for
                // a few microseconds and then blocked gets none, a busy one gets one per tick.
                if let Some(last) = t.last_cpu_ns {
                    t.cpu_credit_ns += (cpu - last).max(0);
                    let samples = t.cpu_credit_ns / interval_ns;
                    if samples > 0 {
                        t.cpu_credit_ns -= samples * interval_ns;
                        busy.push((serial, thread, samples as u64));
                    }
                }
                t.last_cpu_ns = Some(cpu);
            }
        }
        if busy.is_empty() || ctx.depth() == 0 {
            return;
        }
        let handles: Vec<_> = busy.iter().map(|&(_, t, _)| t).collect();
        let Ok(stacks) = ctx.jvmti.stack_traces(&handles, ctx.depth()) else {
            return;
        };
        let Ok(mut traces) = ctx.traces.lock() else {
            return;
        };
        for ((serial, _, samples), frames) in busy.iter().zip(stacks) {
            if !frames.is_empty()
                && traces
                    .record(ctx.jvmti, jni, &ctx.ids, &frames, *serial, *samples)
                    .is_none()
                && let Ok(mut dropped) = self.dropped.lock()
            {
                *dropped += *samples;
            }
        }
    }
}

impl Engine for CpuSampler {
    fn dump_message(&self) -> &'static str {
        " CPU usage by sampling running threads ..."
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.thread_cpu_time = true;
    }

    fn start(&'static self, ctx: &'static Context, jni: Jni) -> Result<(), AgentError> {
        if !self.started.set(ctx) {
            return Err(AgentError::starting("the CPU sampler was started twice"));
        }
        self.ticker.start(
            ctx.jvmti,
            jni,
            THREAD_NAME,
            "the CPU sampling thread",
            move |jni| self.run(ctx, jni),
        )
    }

    fn stop(&self, _ctx: &Context) {
        self.ticker.stop();
    }

    fn dump(&self, ctx: &Context, _jni: Option<Jni>, out: &mut ProfileOutput) {
        write_samples(ctx, out, ctx.options.cutoff);
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook::CpuSamples]
    }

    fn cpu_samples(&self, ctx: &Context, cutoff: f64) {
        if self.started.get().is_some() {
            ctx.with_output(|out| write_samples(ctx, out, cutoff));
        }
    }

    fn set_sampling(&self, ctx: &Context, thread: u64, on: bool) {
        if self.started.get().is_some() {
            set_sampling(ctx, thread, on);
        }
    }
}
