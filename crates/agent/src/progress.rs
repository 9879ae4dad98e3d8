//! Progress lines for long dumps. A dump's slow parts (heap=sites' full GC, heap walks and
//! composing; heap=dump's writing and merging) each run as a [`Phase`]: one that lasts more
//! than a second says so on stderr (`HPROF: dump: counting live objects ...`), then names each
//! step as it begins, gives a step's figures at most once a second (`HPROF: dump: heap walk
//! 40% (12,345,678 objects)`) and at its end, and ends with the time the phase took. A phase
//! that ends within the second prints nothing.
//!
//! The figures are fed without locks or allocation (atomics) by whatever does the work: the
//! heap walks' callbacks (in the VM thread, with the world stopped) and the heap dump's
//! reader. Lines are printed by the thread that runs the phase, between its JVM calls, or by a
//! watcher thread of the phase's own, which makes no JVM call; neither holds a lock of the
//! agent's other than the phase's own while printing. Nothing here runs in a signal handler.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::jvmti::JavaVm;

/// Milliseconds a phase runs before it prints (default 1,000): for tests, which set it to 0
/// to see every line of a short dump.
pub const AFTER_ENV: &str = "_HPROF_PROGRESS_MS";

/// The most often a step's figures are printed.
const EVERY: Duration = Duration::from_secs(1);

/// Work done in the running step: objects seen (or bytes, for byte steps) and the units
/// counted toward the percentage (bytes).
static COUNT: AtomicU64 = AtomicU64::new(0);
static DONE: AtomicU64 = AtomicU64::new(0);

/// The running phase, for the steps begun where the work is done.
static CURRENT: Mutex<Option<Arc<Shared>>> = Mutex::new(None);

pub use crate::jvmti::report::Unit;

/// The progress lines, as the FFI layer's long calls (a full GC, heap walks) report to them:
/// installed with [`crate::jvmti::report::install`] at load.
#[derive(Debug)]
pub struct Lines;

/// The one [`Lines`].
pub static LINES: Lines = Lines;

impl crate::jvmti::report::Progress for Lines {
    fn step(&self, name: &'static str, unit: Option<Unit>, total: u64) {
        step(name, unit, total);
    }
    fn heap_walk_step(&self, name: &'static str) {
        heap_walk_step(name);
    }
    fn end_step(&self, completed: bool) {
        end_step(completed);
    }
    fn advance(&self, count: u64, done: u64) {
        advance(count, done);
    }
}

#[derive(Debug, Clone)]
struct Step {
    name: &'static str,
    unit: Option<Unit>,
    /// Units the step will count (0: unknown, no percentage).
    total: u64,
}

#[derive(Debug)]
struct State {
    announced: bool,
    finished: bool,
    step: Option<Step>,
    /// The figures last printed for the step, and when.
    printed: Option<(u64, u64)>,
    last_line: Instant,
}

#[derive(Debug)]
struct Shared {
    title: String,
    ended: String,
    started: Instant,
    after: Duration,
    /// To ask the heap's size before a walk (from the phase's own thread).
    vm: Option<JavaVm>,
    state: Mutex<State>,
    wake: Condvar,
}

/// How long a phase runs before it prints.
fn threshold() -> Duration {
    let ms = std::env::var(AFTER_ENV)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .unwrap_or(1000);
    Duration::from_millis(ms)
}

/// `n` with thousands separators.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The figures of a step, to follow its name: ` 40% (12,345 objects)` with a total, else
/// `: 512 MB`; `end`: the step is over (100% when a total was known).
fn figures(step: &Step, count: u64, done: u64, end: bool) -> String {
    let amount = match step.unit {
        Some(Unit::Bytes) => format!("{} MB", grouped(count >> 20)),
        _ => format!("{} objects", grouped(count)),
    };
    if step.total == 0 {
        return format!(": {amount}");
    }
    let percent = if end {
        100
    } else {
        ((u128::from(done) * 100 / u128::from(step.total)) as u64).min(99)
    };
    format!(" {percent}% ({amount})")
}

/// Prints one line on stderr; a stderr that can't be written (a closed pipe) is ignored.
fn line(text: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "HPROF: dump: {text}");
}

impl Shared {
    /// Prints the phase's first line (and the running step's), once.
    fn announce(&self, state: &mut State) {
        if state.announced {
            return;
        }
        state.announced = true;
        state.last_line = Instant::now();
        line(&format!("{}...", self.title));
        if let Some(step) = &state.step {
            line(&format!("{}...", step.name));
        }
    }

    /// Ends the running step: its last figures, if it has any, it `completed` and the phase
    /// printed.
    fn end_step(&self, state: &mut State, completed: bool) {
        if let Some(step) = state.step.take()
            && completed
            && state.announced
            && step.unit.is_some()
        {
            let (count, done) = (COUNT.load(Ordering::Relaxed), DONE.load(Ordering::Relaxed));
            line(&format!(
                "{}{}",
                step.name,
                figures(&step, count, done, true)
            ));
        }
        state.printed = None;
    }

    /// The watcher: announces the phase once it has run past the threshold, then prints the
    /// step's figures when they changed, at most once a second.
    fn watch(&self) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        loop {
            if state.finished {
                return;
            }
            let now = Instant::now();
            let wait = if !state.announced {
                let due = self.started + self.after;
                if now >= due {
                    self.announce(&mut state);
                    EVERY
                } else {
                    due - now
                }
            } else if now.duration_since(state.last_line) >= EVERY {
                let figures_now = (COUNT.load(Ordering::Relaxed), DONE.load(Ordering::Relaxed));
                if let Some(step) = &state.step
                    && step.unit.is_some()
                    && state.printed != Some(figures_now)
                {
                    line(&format!(
                        "{}{}",
                        step.name,
                        figures(step, figures_now.0, figures_now.1, false)
                    ));
                    state.printed = Some(figures_now);
                    state.last_line = now;
                }
                EVERY
            } else {
                EVERY - now.duration_since(state.last_line)
            };
            state = match self.wake.wait_timeout(state, wait) {
                Ok((s, _)) => s,
                Err(_) => return,
            };
        }
    }
}

/// A dump phase that says what it does when it runs long; ends when dropped.
#[derive(Debug)]
pub struct Phase {
    shared: Arc<Shared>,
    watcher: Option<std::thread::JoinHandle<()>>,
}

impl Phase {
    /// Begins a phase: `title` says what it does (`counting live objects (full GC, heap
    /// walks)`), `ended` what it did, for the last line (`live objects counted`, then ` in 2.1
    /// s`). `vm` lets heap walks ask the heap's size for their percentage.
    pub fn start(title: &str, ended: &str, vm: Option<JavaVm>) -> Phase {
        let shared = Arc::new(Shared {
            title: title.to_string(),
            ended: ended.to_string(),
            started: Instant::now(),
            after: threshold(),
            vm,
            state: Mutex::new(State {
                announced: false,
                finished: false,
                step: None,
                printed: None,
                last_line: Instant::now(),
            }),
            wake: Condvar::new(),
        });
        if shared.after.is_zero()
            && let Ok(mut state) = shared.state.lock()
        {
            shared.announce(&mut state);
        }
        if let Ok(mut current) = CURRENT.lock() {
            *current = Some(shared.clone());
        }
        let watcher = {
            let shared = shared.clone();
            std::thread::Builder::new()
                .name("HPROF progress".into())
                .spawn(move || shared.watch())
                .ok()
        };
        Phase { shared, watcher }
    }

    /// Begins a step of this phase (see [`step`]).
    pub fn step(&self, name: &'static str, unit: Option<Unit>, total: u64) {
        begin(&self.shared, name, unit, total);
    }
}

impl Drop for Phase {
    fn drop(&mut self) {
        if let Ok(mut current) = CURRENT.lock()
            && current
                .as_ref()
                .is_some_and(|c| Arc::ptr_eq(c, &self.shared))
        {
            *current = None;
        }
        if let Ok(mut state) = self.shared.state.lock() {
            self.shared.end_step(&mut state, true);
            state.finished = true;
            if state.announced {
                line(&format!(
                    "{} in {:.1} s",
                    self.shared.ended,
                    self.shared.started.elapsed().as_secs_f64()
                ));
            }
        }
        self.shared.wake.notify_all();
        if let Some(watcher) = self.watcher.take() {
            let _ = watcher.join();
        }
    }
}

fn begin(shared: &Shared, name: &'static str, unit: Option<Unit>, total: u64) {
    let Ok(mut state) = shared.state.lock() else {
        return;
    };
    shared.end_step(&mut state, true);
    COUNT.store(0, Ordering::Relaxed);
    DONE.store(0, Ordering::Relaxed);
    state.step = Some(Step { name, unit, total });
    if !state.announced && shared.started.elapsed() >= shared.after {
        shared.announce(&mut state);
    } else if state.announced {
        line(&format!("{name}..."));
        state.last_line = Instant::now();
    }
}

/// Begins a step of the running phase, if any: `name` (`heap walk`), what its figures count
/// (`None`: none) and how many units make 100% (0: unknown). Called by the thread that runs
/// the phase, between its JVM calls.
pub fn step(name: &'static str, unit: Option<Unit>, total: u64) {
    let current = CURRENT.lock().ok().and_then(|c| c.clone());
    if let Some(shared) = current {
        begin(&shared, name, unit, total);
    }
}

/// Begins a heap walk step of the running phase, if any: its percentage is of the heap's
/// used bytes (asked of the JVM, by the phase's thread, before the walk).
pub fn heap_walk_step(name: &'static str) {
    let current = CURRENT.lock().ok().and_then(|c| c.clone());
    if let Some(shared) = current {
        let total = shared
            .vm
            .and_then(|vm| vm.jni())
            .and_then(|jni| jni.heap_used())
            .unwrap_or(0);
        begin(&shared, name, Some(Unit::Objects), total);
    }
}

/// Ends the running phase's step, if any: with its last figures if it `completed`.
pub fn end_step(completed: bool) {
    let current = CURRENT.lock().ok().and_then(|c| c.clone());
    if let Some(shared) = current
        && let Ok(mut state) = shared.state.lock()
    {
        shared.end_step(&mut state, completed);
    }
}

/// Counts work done in the running step: `count` objects (or bytes) and `done` units toward
/// its total. Atomics only: callable from heap walk callbacks.
pub fn advance(count: u64, done: u64) {
    COUNT.fetch_add(count, Ordering::Relaxed);
    DONE.fetch_add(done, Ordering::Relaxed);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_grouped_by_thousands() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(12_345_678), "12,345,678");
    }

    #[test]
    fn figures_stop_at_99_percent_until_the_step_ends() {
        let step = Step {
            name: "heap walk",
            unit: Some(Unit::Objects),
            total: 1000,
        };
        assert_eq!(figures(&step, 5, 400, false), " 40% (5 objects)");
        assert_eq!(figures(&step, 9, 1200, false), " 99% (9 objects)");
        assert_eq!(figures(&step, 9, 1200, true), " 100% (9 objects)");
        let file = Step {
            name: "merging",
            unit: Some(Unit::Bytes),
            total: 0,
        };
        assert_eq!(figures(&file, 3 << 20, 0, false), ": 3 MB");
    }
}
