//! The `monitor=y` engine: contended monitor enters (time and count per trace and monitor
//! class, for MONITOR TIME), `Object.wait` calls (WAIT and WAITED lines as they happen), and
//! at each dump the state of every thread and the monitors they own (MONITOR DUMP).
//!
//! Contention time is measured in nanoseconds of wall time and printed in milliseconds; the
//! original divided milliseconds by a million, which hid the section.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::engine::{Context, Engine, Hook, Started};
use crate::error::AgentError;
use crate::jvmti::{Capabilities, Event, Jni, Jvmti, jobject, jthread};
use crate::output::{MonitorOwner, MonitorTime, ProfileOutput, ThreadState};
use crate::trace_store::{EMPTY_TRACE_SERIAL, Trace, class_name_from_signature};

thread_local! {
    /// When this thread began waiting to enter a contended monitor, the trace there, and
    /// the thread's serial.
    static CONTENDED_SINCE: Cell<Option<(Instant, u32, u32)>> = const { Cell::new(None) };
    /// When this thread entered `Object.wait`.
    static WAITING_SINCE: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Contention per (trace serial, monitor class name): total nanoseconds and count.
#[derive(Debug, Default)]
pub struct Monitors {
    contention: Mutex<HashMap<(u32, String), (u64, u64)>>,
    /// The threads' states a dump's preparation took, for its MONITOR DUMP.
    prepared: Mutex<Option<ThreadStates>>,
    /// Started in a running JVM: no owned monitors (HotSpot grants that capability at
    /// start-up only).
    late: bool,
    /// Set once started: the events count from then on.
    started: Started,
}

/// What MONITOR DUMP lists: threads, their traces, owned monitors.
type ThreadStates = (Vec<ThreadState>, Vec<Arc<Trace>>, Vec<MonitorOwner>);

/// JVMTI thread state bits.
const ALIVE: u32 = 0x1;
const TERMINATED: u32 = 0x2;
const RUNNABLE: u32 = 0x4;
const WAITING: u32 = 0x80;
const SLEEPING: u32 = 0x40;
const BLOCKED_ON_MONITOR_ENTER: u32 = 0x400;
const SUSPENDED: u32 = 0x10_0000;
const INTERRUPTED: u32 = 0x20_0000;
const IN_NATIVE: u32 = 0x40_0000;

/// The original's status string for a JVMTI thread state: optional `S|`, `intr|`, `native|`
/// prefixes, then `ZO`/`NS` (not alive), `SL`, `MW`, `CW`, `R` or `UN`.
pub fn status(state: u32) -> String {
    let mut s = String::new();
    if state & SUSPENDED != 0 {
        s.push_str("S|");
    }
    if state & INTERRUPTED != 0 {
        s.push_str("intr|");
    }
    if state & IN_NATIVE != 0 {
        s.push_str("native|");
    }
    s.push_str(if state & ALIVE == 0 {
        if state & TERMINATED != 0 { "ZO" } else { "NS" }
    } else if state & SLEEPING != 0 {
        "SL"
    } else if state & BLOCKED_ON_MONITOR_ENTER != 0 {
        "MW"
    } else if state & WAITING != 0 {
        "CW"
    } else if state & RUNNABLE != 0 {
        "R"
    } else {
        "UN"
    });
    s
}

impl Monitors {
    /// A monitor engine with no data; `late`: for a JVM already running.
    pub fn new(late: bool) -> Monitors {
        Monitors {
            late,
            ..Monitors::default()
        }
    }

    fn thread_serial(jvmti: Jvmti, thread: jthread) -> Option<u32> {
        jvmti
            .thread_local(thread)
            .ok()
            .map(|s| s as u32)
            .filter(|&s| s != 0)
    }

    /// The JVM signature of an object's class (`Ljava/lang/Object;`).
    fn signature(jvmti: Jvmti, jni: Jni, object: jobject) -> String {
        match jni.object_class(object) {
            Some(class) => {
                let signature = jvmti.class_signature(class).unwrap_or_default();
                jni.delete_local_ref(class);
                signature
            }
            None => String::from("<unknown>"),
        }
    }

    /// The trace serial of the calling thread's stack.
    fn current_trace(ctx: &Context, jni: Jni, thread: u32) -> u32 {
        let mut buf = Vec::new();
        let n = ctx
            .jvmti
            .current_stack_trace(ctx.depth(), &mut buf)
            .unwrap_or(0);
        let frames: Vec<_> = buf[..n].iter().map(|f| (f.method, f.location)).collect();
        ctx.traces
            .lock()
            .ok()
            .and_then(|mut t| t.intern(ctx.jvmti, jni, &ctx.ids, &frames, thread))
            .map_or(EMPTY_TRACE_SERIAL, |t| t.serial)
    }

    /// MonitorContendedEnter, on the thread about to block.
    pub fn on_contended_enter(&self, ctx: &Context, jni: Jni, thread: jthread) {
        let serial = Self::thread_serial(ctx.jvmti, thread).unwrap_or(0);
        let trace = Self::current_trace(ctx, jni, serial);
        CONTENDED_SINCE.with(|c| c.set(Some((Instant::now(), trace, serial))));
    }

    /// MonitorContendedEntered, on the thread that got the monitor.
    pub fn on_contended_entered(&self, ctx: &Context, jni: Jni, object: jobject) {
        let Some((since, trace, thread)) = CONTENDED_SINCE.with(|c| c.take()) else {
            return;
        };
        let nanos = since.elapsed().as_nanos() as u64;
        let class = class_name_from_signature(&Self::signature(ctx.jvmti, jni, object));
        // A recording gets each contended enter as an event, with its time and duration.
        if ctx.options.format == crate::options::Format::Jfr
            && let Some(trace) = ctx.traces.lock().ok().and_then(|t| t.by_serial(trace))
        {
            let enter = crate::output::ContendedEnter {
                start: crate::jvmti::os::monotonic_nanos().saturating_sub(nanos),
                nanos,
                trace,
                class: class.clone(),
                thread,
            };
            ctx.with_output(|out| out.write(|w| w.monitor_contended(&enter)));
        }
        if let Ok(mut table) = self.contention.lock() {
            let entry = table.entry((trace, class)).or_default();
            entry.0 += nanos;
            entry.1 += 1;
        }
    }

    /// MonitorWait: the WAIT line, written as it happens.
    pub fn on_wait(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: jthread,
        object: jobject,
        timeout: i64,
        out: &mut ProfileOutput,
    ) {
        WAITING_SINCE.with(|w| w.set(Some(Instant::now())));
        let signature = Self::signature(ctx.jvmti, jni, object);
        let serial = Self::thread_serial(ctx.jvmti, thread);
        out.write(|w| w.monitor_wait(&signature, timeout, serial));
    }

    /// MonitorWaited: the WAITED line with the time waited in ms.
    pub fn on_waited(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: jthread,
        object: jobject,
        out: &mut ProfileOutput,
    ) {
        let waited = WAITING_SINCE
            .with(|w| w.take())
            .map_or(0, |t| t.elapsed().as_millis() as i64);
        let signature = Self::signature(ctx.jvmti, jni, object);
        let serial = Self::thread_serial(ctx.jvmti, thread);
        out.write(|w| w.monitor_waited(&signature, waited, serial));
    }

    fn thread_states(&self, ctx: &Context, jni: Jni) -> ThreadStates {
        let jvmti = ctx.jvmti;
        // Local references taken under the table's lock; the JVM is asked about the threads
        // (stacks, monitors: safepoints and handshakes) with the lock released.
        let monitors_unsafe = self.late || owned_monitors_would_crash(jvmti, jni);
        let live: Vec<(u32, jthread)> = match ctx.threads.lock() {
            Ok(table) => table.local_refs(jni, |_| true),
            Err(_) => return (Vec::new(), Vec::new(), Vec::new()),
        };
        let handles: Vec<jthread> = live.iter().map(|&(_, t)| t).collect();
        let stacks = jvmti
            .stack_traces(&handles, ctx.depth())
            .unwrap_or_default();
        let mut threads = Vec::new();
        let mut traces = Vec::new();
        let mut monitors = Vec::new();
        for (index, &(serial, thread)) in live.iter().enumerate() {
            let state = jvmti.thread_state(thread).unwrap_or(0);
            let frames = stacks.get(index).cloned().unwrap_or_default();
            let trace = ctx
                .traces
                .lock()
                .ok()
                .and_then(|mut t| t.intern(jvmti, jni, &ctx.ids, &frames, serial));
            threads.push(ThreadState {
                serial,
                trace: trace.as_ref().map_or(EMPTY_TRACE_SERIAL, |t| t.serial),
                status: status(state),
            });
            traces.extend(trace);
            let owned = if monitors_unsafe {
                Vec::new()
            } else {
                jvmti.owned_monitors(thread).unwrap_or_default()
            };
            for monitor in owned {
                if let Ok(usage) = jvmti.monitor_usage(monitor) {
                    let serial_of = |t: jthread| {
                        let s = Self::thread_serial(jvmti, t).unwrap_or(0);
                        jni.delete_local_ref(t);
                        s
                    };
                    let owner = (!usage.owner.is_null()).then(|| serial_of(usage.owner));
                    monitors.push(MonitorOwner {
                        signature: Self::signature(jvmti, jni, monitor),
                        owner,
                        entry_count: usage.entry_count.max(0) as u32,
                        waiting_to_enter: usage.waiters.into_iter().map(serial_of).collect(),
                        waiting_to_be_notified: usage
                            .notify_waiters
                            .into_iter()
                            .map(serial_of)
                            .collect(),
                    });
                }
                jni.delete_local_ref(monitor);
            }
        }
        (threads, traces, monitors)
    }
}

/// Whether asking for threads' owned monitors could crash this JVM. On JDK 21 to 24,
/// GetOwnedMonitorInfo and GetObjectMonitorUsage first undo escape-analysis optimizations
/// (an EscapeBarrier deoptimizing compiled frames) and, with virtual threads in use, that
/// deoptimization crashed JDK 21.0.8 here (SIGSEGV in `Deoptimization::
/// deoptimize_frame_internal`, 1 run in 4 of a SIGQUIT storm with `monitor=y`); JDK 25 did not.
/// Virtual threads are taken to be in use once `java.lang.VirtualThread` is loaded.
fn owned_monitors_would_crash(jvmti: Jvmti, jni: Jni) -> bool {
    static WARNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !matches!(jvmti.feature_version(), Some(21..=24)) {
        return false;
    }
    let Ok(classes) = jvmti.loaded_classes() else {
        return true;
    };
    let mut loaded = false;
    for class in classes {
        loaded |= !loaded
            && jvmti
                .class_signature(class)
                .is_ok_and(|s| s == "Ljava/lang/VirtualThread;");
        jni.delete_local_ref(class);
    }
    if loaded && !WARNED.swap(true, std::sync::atomic::Ordering::Relaxed) {
        eprintln!(
            "HPROF WARNING: MONITOR DUMP lists no owned monitors on this JDK once virtual threads are in use (asking for them crashes it; see docs/compatibility.md)"
        );
    }
    loaded
}

impl Engine for Monitors {
    fn dump_message(&self) -> &'static str {
        " contended monitor usage ..."
    }

    fn hooks(&self) -> &'static [Hook] {
        &[Hook::Monitor]
    }

    fn monitor_contended_enter(&self, ctx: &Context, jni: Jni, thread: jthread) {
        if self.started.get().is_some() {
            self.on_contended_enter(ctx, jni, thread);
        }
    }

    fn monitor_contended_entered(&self, ctx: &Context, jni: Jni, object: jobject) {
        if self.started.get().is_some() {
            self.on_contended_entered(ctx, jni, object);
        }
    }

    fn monitor_wait(
        &self,
        ctx: &Context,
        jni: Jni,
        thread: jthread,
        object: jobject,
        timeout: i64,
    ) {
        if self.started.get().is_some() {
            ctx.with_output(|out| self.on_wait(ctx, jni, thread, object, timeout, out));
        }
    }

    fn monitor_waited(&self, ctx: &Context, jni: Jni, thread: jthread, object: jobject) {
        if self.started.get().is_some() {
            ctx.with_output(|out| self.on_waited(ctx, jni, thread, object, out));
        }
    }

    fn capabilities(&self, caps: &mut Capabilities) {
        caps.monitors = true;
        caps.owned_monitors = !self.late;
    }

    fn late_note(&self) -> Option<String> {
        Some(
            "monitor=y started late: MONITOR DUMP lists the threads, their states and traces \
             but not the monitors they own (HotSpot grants that capability only to agents \
             loaded at start-up); contention (MONITOR TIME) and waits are recorded in full"
                .into(),
        )
    }

    fn start(&'static self, ctx: &'static Context, _jni: Jni) -> Result<(), AgentError> {
        if !self.started.set(ctx) {
            return Err(AgentError::starting("monitor=y was started twice"));
        }
        for event in [
            Event::MonitorContendedEnter,
            Event::MonitorContendedEntered,
            Event::MonitorWait,
            Event::MonitorWaited,
        ] {
            ctx.jvmti.set_event(event, true).map_err(|e| {
                AgentError::starting(format!("can't enable {event:?} events ({e})"))
            })?;
        }
        Ok(())
    }

    fn stop(&self, ctx: &Context) {
        for event in [
            Event::MonitorContendedEnter,
            Event::MonitorContendedEntered,
            Event::MonitorWait,
            Event::MonitorWaited,
        ] {
            let _ = ctx.jvmti.set_event(event, false);
        }
    }

    fn prepare(&self, ctx: &Context, jni: Option<Jni>) {
        let Some(jni) = jni else { return };
        let states = jni.with_local_frame(256, || self.thread_states(ctx, jni));
        if let Ok(mut prepared) = self.prepared.lock() {
            *prepared = Some(states);
        }
    }

    fn dump(&self, ctx: &Context, _jni: Option<Jni>, out: &mut ProfileOutput) {
        let Some((threads, traces, monitors)) =
            self.prepared.lock().ok().and_then(|mut p| p.take())
        else {
            return;
        };
        out.write(|w| w.monitor_dump(&threads, &traces, &monitors));
        let mut rows: Vec<MonitorTime> = match self.contention.lock() {
            Ok(table) => table
                .iter()
                .map(|((trace, class), &(nanos, count))| MonitorTime {
                    trace: *trace,
                    class: class.clone(),
                    nanos,
                    count,
                })
                .collect(),
            Err(_) => Vec::new(),
        };
        rows.sort_by(|a, b| {
            b.nanos
                .cmp(&a.nanos)
                .then(b.count.cmp(&a.count))
                .then(a.trace.cmp(&b.trace))
        });
        let total: u64 = rows.iter().map(|r| r.nanos).sum();
        let cutoff = ctx.options.cutoff;
        let shown = rows
            .iter()
            .position(|r| total > 0 && (r.nanos as f64 / total as f64) < cutoff)
            .unwrap_or(rows.len());
        rows.truncate(shown);
        let traces: Vec<_> = match ctx.traces.lock() {
            Ok(t) => rows.iter().filter_map(|r| t.by_serial(r.trace)).collect(),
            Err(_) => Vec::new(),
        };
        out.write(|w| w.monitor_time(&rows, &traces, total));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_strings_follow_the_original() {
        assert_eq!(status(ALIVE | RUNNABLE), "R");
        assert_eq!(status(ALIVE | RUNNABLE | IN_NATIVE), "native|R");
        assert_eq!(status(ALIVE | WAITING | SLEEPING), "SL");
        assert_eq!(status(ALIVE | BLOCKED_ON_MONITOR_ENTER), "MW");
        assert_eq!(status(ALIVE | WAITING), "CW");
        assert_eq!(status(TERMINATED), "ZO");
        assert_eq!(status(0), "NS");
        assert_eq!(
            status(ALIVE | SUSPENDED | INTERRUPTED | WAITING),
            "S|intr|CW"
        );
        assert_eq!(status(ALIVE), "UN");
    }
}
