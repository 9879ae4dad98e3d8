//! Owns the life of an agent thread that works in rounds: its start, the raw monitor it sleeps
//! on between rounds (woken by its period or by a request), the stop request, and VM death's
//! bounded wait for it to finish its round.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::error::AgentError;
use crate::jvmti::{Jni, Jvmti, RawMonitor, ThreadStartError};

/// How long VM death waits for the thread to finish its tick.
const STOP_TIMEOUT: Duration = Duration::from_secs(2);

/// A periodic agent thread's controls.
#[derive(Debug, Default)]
pub struct Ticker {
    monitor: OnceLock<RawMonitor>,
    stop: AtomicBool,
    running: AtomicBool,
    requested: AtomicBool,
    /// Rounds begun and finished by [`Ticker::serve`].
    begun: AtomicU64,
    finished: AtomicU64,
}

impl Ticker {
    /// Controls for a thread not yet started.
    pub fn new() -> Ticker {
        Ticker::default()
    }

    /// Starts the agent thread `name`, which runs `main` (whose body calls [`Ticker::run`] or
    /// [`Ticker::serve`]); a panic in it is reported as `internal error in {what}`. A thread that
    /// could not start is an [`AgentError::starting`] error.
    pub fn start(
        &self,
        jvmti: Jvmti,
        jni: Jni,
        name: &str,
        what: &'static str,
        main: impl FnOnce(Jni) + Send + 'static,
    ) -> Result<(), AgentError> {
        let monitor = jvmti.raw_monitor(name).map_err(|e| {
            AgentError::starting(format!("can't create the monitor of {name} ({e})"))
        })?;
        let _ = self.monitor.set(monitor);
        self.running.store(true, Ordering::Release);
        jvmti
            .start_agent_thread(jni, name, what, main)
            .map_err(|e| {
                self.running.store(false, Ordering::Release);
                let message = match e {
                    ThreadStartError::NoThreadObject => {
                        format!("can't create the thread object of {name}")
                    }
                    ThreadStartError::Run(e) => format!("can't start {name} ({e})"),
                };
                AgentError::starting(message)
            })
    }

    /// Whether [`Ticker::stop`] was called.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
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

    /// The thread's body for work done on request: `round` once per [`Ticker::request`] (requests
    /// made while a round runs are served by one more round), until [`Ticker::stop`].
    pub fn serve(&self, mut round: impl FnMut()) {
        let Some(monitor) = self.monitor.get() else {
            return;
        };
        loop {
            {
                let Ok(guard) = monitor.enter() else { break };
                while !self.requested.load(Ordering::Acquire) && !self.stop.load(Ordering::Acquire)
                {
                    // Timed, so an interrupted or failed wait never spins.
                    let _ = guard.wait(1000);
                }
                if self.stop.load(Ordering::Acquire) {
                    break;
                }
                self.requested.store(false, Ordering::Release);
                self.begun.fetch_add(1, Ordering::AcqRel);
            }
            round();
            self.finished.fetch_add(1, Ordering::AcqRel);
        }
        if let Ok(guard) = monitor.enter() {
            self.running.store(false, Ordering::Release);
            let _ = guard.notify_all();
        }
    }

    /// Asks a thread in [`Ticker::serve`] for one more round; returns at once. False if the
    /// thread is not running.
    pub fn request(&self) -> bool {
        let Some(monitor) = self.monitor.get() else {
            return false;
        };
        if !self.running.load(Ordering::Acquire) {
            return false;
        }
        let Ok(guard) = monitor.enter() else {
            return false;
        };
        self.requested.store(true, Ordering::Release);
        let _ = guard.notify_all();
        true
    }

    /// From a thread the JVM may not know (an exit handler): asks a thread in
    /// [`Ticker::serve`] for one more round and waits for it to finish, at most `timeout`.
    /// Makes no JVMTI call (a raw monitor entered from a thread the JVM does not know crashes
    /// JDK 11): the serving thread's timed wait sees the request within a second.
    pub fn request_and_wait(&self, timeout: Duration) -> bool {
        if !self.running.load(Ordering::Acquire) {
            return false;
        }
        // A round that begins after this point serves the request.
        let target = self.begun.load(Ordering::Acquire) + 1;
        self.requested.store(true, Ordering::Release);
        let deadline = Instant::now() + timeout;
        while self.finished.load(Ordering::Acquire) < target {
            if Instant::now() >= deadline || !self.running.load(Ordering::Acquire) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        true
    }

    /// Asks the thread to stop and waits (at most two seconds) for its round to end.
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
