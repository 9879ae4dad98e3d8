//! Owns the life of a periodic agent thread: its start, the raw monitor it sleeps on between
//! ticks, the stop request, and VM death's bounded wait for it to finish its tick.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::jvmti::{AgentThreadMain, Jni, Jvmti, RawMonitor};

/// How long VM death waits for the thread to finish its tick.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// A periodic agent thread's controls.
#[derive(Debug, Default)]
pub struct Ticker {
    monitor: OnceLock<RawMonitor>,
    stop: AtomicBool,
    running: AtomicBool,
}

impl Ticker {
    /// Controls for a thread not yet started.
    pub fn new() -> Ticker {
        Ticker::default()
    }

    /// Starts the agent thread `name`, which runs `main` (whose body calls [`Ticker::run`]).
    pub fn start(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        name: &str,
        main: AgentThreadMain,
    ) -> Result<(), String> {
        let monitor = jvmti
            .raw_monitor(name)
            .map_err(|e| format!("can't create the monitor of {name} ({e})"))?;
        let _ = self.monitor.set(monitor);
        let thread = jni
            .new_thread(name)
            .ok_or_else(|| format!("can't create the thread object of {name}"))?;
        self.running.store(true, Ordering::Release);
        let started = jvmti.run_agent_thread(thread, main, 0).map_err(|e| {
            self.running.store(false, Ordering::Release);
            format!("can't start {name} ({e})")
        });
        jni.delete_local_ref(thread);
        started
    }

    /// The thread's body: `tick` every `millis` ms until [`Ticker::stop`].
    pub fn run(&self, millis: i64, mut tick: impl FnMut()) {
        let Some(monitor) = self.monitor.get() else {
            return;
        };
        loop {
            {
                let Ok(guard) = monitor.enter() else { break };
                if self.stop.load(Ordering::Acquire) {
                    break;
                }
                let _ = guard.wait(millis);
                if self.stop.load(Ordering::Acquire) {
                    break;
                }
            }
            tick();
        }
        if let Ok(guard) = monitor.enter() {
            self.running.store(false, Ordering::Release);
            let _ = guard.notify_all();
        }
    }

    /// Asks the thread to stop and waits (at most two seconds) for its tick to end.
    pub fn stop(&self) {
        let Some(monitor) = self.monitor.get() else {
            return;
        };
        let Ok(guard) = monitor.enter() else { return };
        self.stop.store(true, Ordering::Release);
        let _ = guard.notify_all();
        let deadline = Instant::now() + STOP_TIMEOUT;
        while self.running.load(Ordering::Acquire) {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            let _ = guard.wait(left.as_millis().max(1) as i64);
        }
    }
}
