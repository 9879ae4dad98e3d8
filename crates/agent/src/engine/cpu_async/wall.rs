//! `cpu=wall`'s ticker: each tick queues SIGPROF, with the thread's state, to the next few
//! Java threads (round robin), asks JVMTI for the stacks of those in native code instead of
//! interrupting their system calls, and counts a waiting thread's last sample again, without
//! a signal, while it has not run since; the states' pseudo-frames (`<SLEEPING>`, ...).

use super::drain::unsampled_threads;
use super::{AsyncSampler, JVMTI_THREAD_STATE_ALIVE};
use crate::engine::Context;
use crate::jvmti::{Jni, jlocation, jmethodID, jthread};
use crate::signal;

/// Threads signalled per wall-clock tick, at most: with more Java threads than this, each
/// one is sampled every ⌈threads / 16⌉ ticks, so a JVM with 10,000 threads is never stalled.
const WALL_THREADS_PER_TICK: usize = 16;

/// A thread CPU time below which a thread sampled by the wall clock as waiting (sleeping,
/// blocked, parked) counts as not having run since: 10 us, a few wake-ups of a timed wait
/// that found nothing to do (the figure async-profiler's wall clock uses).
const IDLE_CPU_NS: u64 = 10_000;

/// A thread's last wall-clock sample, while it waits: the ticker counts that sample again,
/// without a signal, for as long as the thread neither runs nor changes state.
#[derive(Debug)]
pub(super) struct IdleWall {
    /// The thread's serial the sample was recorded for.
    pub(super) serial: u32,
    /// Its state's pseudo-frame (`<SLEEPING>`, `<BLOCKED>`, ...).
    pub(super) state: &'static str,
    /// The frames recorded (methods as addresses), state pseudo-frame included.
    pub(super) frames: Vec<(usize, jlocation)>,
    /// The thread's CPU time when the handler took it.
    pub(super) cpu: u64,
}

/// `JVMTI_THREAD_STATE_IN_NATIVE`.
const JVMTI_THREAD_STATE_IN_NATIVE: u32 = 0x0040_0000;

/// The state frame of a thread in native code.
const NATIVE_STATE: &str = "<RUNNABLE in native>";

impl AsyncSampler {
    /// Queues SIGPROF, with its state, to the next [`WALL_THREADS_PER_TICK`] threads; takes
    /// the stacks of those in native code through JVMTI instead, and counts the last sample
    /// again for those that wait and have not run since it (see [`IdleWall`]).
    pub(super) fn signal_wall_threads(&self, ctx: &Context, jni: Jni) {
        if signal::displaced_for_good() {
            return;
        }
        let chosen: Vec<(i32, jthread)> = {
            let Ok(mut registry) = self.registry.lock() else {
                return;
            };
            let after = registry.wall_cursor;
            let mut chosen: Vec<(i32, jthread)> = registry
                .by_tid
                .range(after.saturating_add(1)..)
                .chain(registry.by_tid.range(..=after))
                .take(WALL_THREADS_PER_TICK)
                .map(|(&tid, t)| (tid, t.thread.get()))
                .collect();
            if let Some(&(last, _)) = chosen.last() {
                registry.wall_cursor = last;
            }
            chosen.dedup_by_key(|(tid, _)| *tid);
            chosen
        };
        // The registry's lock is released: GetThreadState waits for no safepoint, but a
        // thread that ends meanwhile must be able to unregister. Its global reference stays
        // valid until it does, and a dead thread's state is simply TERMINATED.
        let mut in_native = Vec::new();
        let mut others = Vec::new();
        for (tid, thread) in chosen {
            let Ok(state) = ctx.jvmti.thread_state(thread) else {
                continue;
            };
            if state & JVMTI_THREAD_STATE_ALIVE == 0 {
                continue;
            }
            if state & JVMTI_THREAD_STATE_IN_NATIVE != 0 {
                // A thread in native code may sit in a system call that a signal would end with
                // EINTR (poll, select, epoll_wait, nanosleep: SA_RESTART does not restart them,
                // and JDK 11's ServerSocket.accept then throws SocketTimeoutException). Its Java
                // stack cannot change until it returns, so the JVM is asked for it instead.
                in_native.push(thread);
            } else {
                others.push((tid, state));
            }
        }
        // A waiting thread that has not run since its last sample is counted again without a
        // signal: its stack cannot have changed, and a signal would wake it (a thread blocked
        // on a monitor then spins for it again, and on a busy machine waits for a core with
        // the next signal pending, which merges with it: such threads lost a third of their
        // samples to sleeping ones at a load of 10).
        let idle = self.idle_samples(&mut others);
        for (tid, state) in others {
            signal::signal_thread(tid, state);
        }
        self.record_idle_samples(ctx, jni, idle);
        if in_native.is_empty() || ctx.depth() == 0 {
            return;
        }
        let Ok(stacks) = ctx.jvmti.stack_traces(&in_native, ctx.depth()) else {
            return;
        };
        let serials: Vec<u32> = in_native
            .iter()
            .map(|&t| ctx.jvmti.thread_local(t).unwrap_or(0) as u32)
            .collect();
        let Ok(state) = ctx
            .traces
            .lock()
            .map(|mut traces| traces.pseudo_method(&ctx.ids, NATIVE_STATE))
        else {
            return;
        };
        let stacks = stacks
            .into_iter()
            .zip(serials)
            .filter(|(frames, _)| !frames.is_empty())
            .map(|(mut frames, serial)| {
                frames.truncate(ctx.depth().saturating_sub(1).max(1));
                frames.push((state, -1));
                (serial, frames)
            })
            .collect();
        record_wall_stacks(ctx, jni, stacks);
    }

    /// Takes out of `threads` (kernel id, state) those that wait in the state of their last
    /// wall-clock sample and have used at most [`IDLE_CPU_NS`] of CPU since; returns that
    /// sample of each (serial, frames).
    fn idle_samples(&self, threads: &mut Vec<(i32, u32)>) -> Vec<(u32, Vec<(usize, jlocation)>)> {
        let Ok(registry) = self.registry.lock() else {
            return Vec::new();
        };
        let mut idle = Vec::new();
        threads.retain(|&(tid, state)| {
            let name = state_name(state);
            let Some(last) = registry.idle.get(&tid) else {
                return true;
            };
            if name != last.state || name == "<RUNNABLE>" || name == NATIVE_STATE {
                return true;
            }
            match signal::thread_cpu_nanos(tid) {
                Some(cpu) if cpu.saturating_sub(last.cpu) <= IDLE_CPU_NS => {
                    idle.push((last.serial, last.frames.clone()));
                    false
                }
                _ => true,
            }
        });
        idle
    }

    /// Counts once more each waiting thread's last sample ([`Self::idle_samples`]).
    fn record_idle_samples(
        &self,
        ctx: &Context,
        jni: Jni,
        idle: Vec<(u32, Vec<(usize, jlocation)>)>,
    ) {
        let stacks = idle
            .into_iter()
            .map(|(serial, frames)| {
                let frames = frames
                    .into_iter()
                    .map(|(method, location)| (method as jmethodID, location))
                    .collect();
                (serial, frames)
            })
            .collect();
        record_wall_stacks(ctx, jni, stacks);
    }
}

/// Counts one wall-clock sample of each (serial, frames) the ticker took without a signal
/// (from JVMTI, or a waiting thread's last sample again), with its time for timed output.
fn record_wall_stacks(ctx: &Context, jni: Jni, stacks: Vec<(u32, Vec<(jmethodID, jlocation)>)>) {
    if stacks.is_empty() {
        return;
    }
    let unsampled = unsampled_threads(ctx);
    let Ok(mut traces) = ctx.traces.lock() else {
        return;
    };
    let time = signal::monotonic_nanos();
    let mut timed = Vec::new();
    for (serial, frames) in stacks {
        if unsampled.contains(&serial) {
            continue;
        }
        if let Some(trace) = traces.record(ctx.jvmti, jni, &ctx.ids, &frames, serial, 1)
            && ctx.options.format != crate::options::Format::Text
        {
            timed.push(crate::output::TimedSample {
                time,
                trace,
                thread: serial,
                weight: 1,
                wall: true,
            });
        }
    }
    drop(traces);
    if !timed.is_empty() {
        ctx.with_output(|out| out.write(|w| w.timed_samples(&timed)));
    }
}

/// The pseudo-frame of a thread state in a wall-clock sample.
pub(super) fn state_name(state: u32) -> &'static str {
    const BLOCKED_ON_MONITOR_ENTER: u32 = 0x0400;
    const SLEEPING: u32 = 0x0040;
    const IN_OBJECT_WAIT: u32 = 0x0100;
    const PARKED: u32 = 0x0200;
    const WAITING_WITH_TIMEOUT: u32 = 0x0020;
    const WAITING: u32 = 0x0080;
    const IN_NATIVE: u32 = 0x0040_0000;
    const RUNNABLE: u32 = 0x0004;
    if state & BLOCKED_ON_MONITOR_ENTER != 0 {
        "<BLOCKED>"
    } else if state & SLEEPING != 0 {
        "<SLEEPING>"
    } else if state & IN_OBJECT_WAIT != 0 {
        "<WAITING in Object.wait>"
    } else if state & PARKED != 0 {
        "<PARKED>"
    } else if state & (WAITING | WAITING_WITH_TIMEOUT) != 0 {
        "<WAITING>"
    } else if state & IN_NATIVE != 0 {
        NATIVE_STATE
    } else if state & RUNNABLE != 0 {
        "<RUNNABLE>"
    } else {
        "<unknown state>"
    }
}
