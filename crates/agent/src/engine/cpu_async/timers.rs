//! What interrupts threads for `cpu=samples`: the source chosen at start (perf events, POSIX
//! timers on threads' CPU clocks, or the process-wide `ITIMER_PROF`), a timer for each thread
//! running at start and for each that starts later (ThreadStart also gives it its place in
//! the registry, ThreadEnd takes it out), timers deleted at stop, re-armed or given up when
//! another handler took SIGPROF.

use std::collections::HashMap;
use std::time::Duration;

use super::{AsyncSampler, SampledThread, task_ids};
use crate::engine::{Context, sigprof_watch};
use crate::error::AgentError;
use crate::jvmti::{Jni, jthread};
use crate::options::Timer;
use crate::signal::{self, CpuTimer, ThreadTimer, TimerSource};

/// Why per-thread CPU timers cannot be used here, if they cannot: the kernel refuses them
/// (a seccomp filter, an old kernel), or `_HPROF_NO_THREAD_TIMERS` is set (a diagnostic
/// switch, used by the tests of the fallback).
fn thread_timers_refused() -> Option<String> {
    if std::env::var_os("_HPROF_NO_THREAD_TIMERS").is_some() {
        return Some("_HPROF_NO_THREAD_TIMERS is set".into());
    }
    CpuTimer::start(signal::current_tid(), Duration::from_secs(3600))
        .err()
        .map(|e| format!("the kernel refuses timers on threads' CPU clocks ({e})"))
}

/// Why perf events cannot be the sampler's clock here, if they cannot (the kernel refuses
/// them: `perf_event_paranoid`, a seccomp filter, a container without perf support), or
/// `_HPROF_NO_PERF_EVENTS` is set (a diagnostic switch, used by the tests of the fallback).
fn perf_events_refused() -> Option<String> {
    if std::env::var_os("_HPROF_NO_PERF_EVENTS").is_some() {
        return Some("_HPROF_NO_PERF_EVENTS is set".into());
    }
    signal::perf::refused(signal::current_tid())
}

/// What interrupts threads for `cpu=samples`: `timer=`, or the first the kernel allows of
/// perf events, POSIX timers on threads' CPU clocks and `ITIMER_PROF`; each fallback says
/// why on one verbose line.
///
/// Perf events come first: the kernel measures a task clock with a high-resolution timer, so
/// a thread is interrupted after each `interval` of its CPU time wherever it runs. POSIX CPU
/// timers are checked only at the kernel's tick (4 ms here): a thread that runs in bursts
/// shorter than the tick is interrupted only when a tick happens to land in one, each signal
/// weighted by the intervals it stands for, so its samples are few and bunched where ticks
/// land (measured: a thread bursting 1 ms between 5 ms sleeps had 41 signals for 422 ms of
/// CPU, 8 for 198 ms with the CPUs busy, and 17 % of a Java thread's samples were charged to
/// the return from its sleep, where perf events and Linux `perf` put 1 %).
fn choose_source(ctx: &Context) -> TimerSource {
    let say = |line: String| {
        if ctx.options.verbose {
            eprintln!("HPROF: {line}");
        }
    };
    let requested = ctx.options.timer;
    let perf_refused = if matches!(requested, Timer::Auto | Timer::Perf) {
        match perf_events_refused() {
            None => {
                if signal::perf::excludes_kernel() {
                    say(format!(
                        "cpu=samples takes no stack in the kernel: perf_event_paranoid {} lets perf events sample user code only (time in the kernel is charged to the thread's next stack in user code)",
                        signal::perf::paranoid().unwrap_or(-1)
                    ));
                }
                return TimerSource::Perf;
            }
            Some(why) => Some(why),
        }
    } else {
        None
    };
    let posix_refused = if matches!(requested, Timer::Auto | Timer::Perf | Timer::Cpu) {
        match thread_timers_refused() {
            None => {
                if let Some(why) = &perf_refused {
                    say(format!(
                        "cpu=samples uses POSIX timers on threads' CPU clocks instead of perf events: {why}"
                    ));
                }
                return TimerSource::Posix;
            }
            Some(why) => Some(why),
        }
    } else {
        None
    };
    if requested != Timer::Itimer {
        let why: Vec<String> = [
            posix_refused.map(|w| format!("POSIX timers: {w}")),
            perf_refused.map(|w| format!("perf events: {w}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        say(format!(
            "cpu=samples uses one process-wide CPU timer (ITIMER_PROF): {}",
            why.join("; ")
        ));
    }
    TimerSource::Process
}

impl AsyncSampler {
    /// Chooses what interrupts threads for CPU samples ([`choose_source`]) and starts the
    /// process-wide timer if that is it.
    pub(super) fn start_timer_source(&self, ctx: &Context) -> Result<(), AgentError> {
        let source = choose_source(ctx);
        self.source
            .store(source as u8, std::sync::atomic::Ordering::Relaxed);
        if source == TimerSource::Process {
            signal::process_timer(Some(Self::interval(ctx))).map_err(|e| {
                AgentError::starting(format!("can't start the process-wide CPU timer ({e})"))
            })?;
        }
        Ok(())
    }

    /// Gives a timer to each thread running before VM init (the JVM's own and the main
    /// thread); those that turn out to run no Java lose theirs at their first signal.
    pub(super) fn arm_running_threads(&self, ctx: &Context) {
        let interval = Self::interval(ctx);
        let source = self.source();
        let current = signal::current_tid();
        let mut unknown = HashMap::new();
        for tid in task_ids() {
            if tid == current {
                continue;
            }
            if let Ok(timer) = ThreadTimer::start(source, tid, interval) {
                unknown.insert(tid, timer);
            }
        }
        if let Ok(mut registry) = self.registry.lock() {
            registry.unknown = unknown;
        }
    }

    /// Deletes every thread's timer (at stop, or when the sampler's handler is lost).
    pub(super) fn disarm_thread_timers(&self) {
        if let Ok(mut registry) = self.registry.lock() {
            registry.unknown.clear();
            for thread in registry.by_tid.values_mut() {
                thread.timer = None;
            }
        }
    }

    /// A thread started (called on that thread): it gets a timer on its CPU clock, or a
    /// place in the wall-clock round.
    pub fn thread_started(&self, ctx: &Context, jni: Jni, thread: jthread) {
        let Ok(serial) = ctx.jvmti.thread_local(thread) else {
            return;
        };
        if serial == 0 {
            return;
        }
        let agent = ctx
            .threads
            .lock()
            .ok()
            .and_then(|mut t| t.get_mut(serial as u32).map(|t| t.agent))
            .unwrap_or(false);
        if agent {
            if let Ok(mut registry) = self.registry.lock() {
                registry.agent_envs.insert(jni.raw() as usize);
            }
            return;
        }
        let tid = signal::current_tid();
        let Ok(mut registry) = self.registry.lock() else {
            return;
        };
        let source = self.source();
        let timer = if self.wall || source == TimerSource::Process || signal::displaced_for_good() {
            None
        } else {
            registry
                .unknown
                .remove(&tid)
                .or_else(|| ThreadTimer::start(source, tid, Self::interval(ctx)).ok())
        };
        registry
            .serial_by_env
            .insert(jni.raw() as usize, serial as u32);
        let old = registry.by_tid.insert(
            tid,
            SampledThread {
                thread: jni.new_global_ref(thread),
                timer,
                env: jni.raw() as usize,
            },
        );
        if let Some(old) = old {
            jni.delete_global_ref(old.thread);
        }
    }

    /// A thread ended (called on that thread): its timer is deleted.
    pub fn thread_ended(&self, jni: Jni) {
        let tid = signal::current_tid();
        let Ok(mut registry) = self.registry.lock() else {
            return;
        };
        if let Some(gone) = registry.by_tid.remove(&tid) {
            jni.delete_global_ref(gone.thread);
        }
        registry.idle.remove(&tid);
        registry.unknown.remove(&tid);
        // (An agent thread's environment may be a later thread's.)
        registry.agent_envs.remove(&(jni.raw() as usize));
        registry.ended.push(jni.raw() as usize);
        signal::carriers::forget(jni.raw() as usize);
    }
}

impl sigprof_watch::Displaced for AsyncSampler {
    fn rearm(&self) {
        let Ok(registry) = self.registry.lock() else {
            return;
        };
        let timers = registry
            .by_tid
            .values()
            .filter_map(|t| t.timer.as_ref())
            .chain(registry.unknown.values());
        for timer in timers {
            if let ThreadTimer::Perf(event) = timer {
                signal::perf::rearm(event.fd());
            }
        }
    }

    fn give_up(&self) {
        if !self.wall && self.source() == TimerSource::Process {
            let _ = signal::process_timer(None);
        }
        signal::set_active(false);
        self.disarm_thread_timers();
    }
}
