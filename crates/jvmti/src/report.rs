//! Owns the hook through which this layer's long JVM calls (a full GC, heap walks) report
//! their progress: the agent above installs its progress lines once at load; until it does,
//! nothing is reported.

use std::sync::OnceLock;

/// What a step's figures count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Objects (a heap walk): the percentage is of the heap's bytes.
    Objects,
    /// Bytes (a file): the percentage is of the file's size.
    Bytes,
}

/// Where progress goes.
pub trait Progress: Sync {
    /// A step begins: `name`, what its figures count and how many units make 100 % (0: unknown).
    fn step(&self, name: &'static str, unit: Option<Unit>, total: u64);
    /// A heap walk step begins, its percentage of the heap's used bytes.
    fn heap_walk_step(&self, name: &'static str);
    /// The step ends, `completed` or not.
    fn end_step(&self, completed: bool);
    /// Work done in the step (atomics only: called from heap walk callbacks).
    fn advance(&self, count: u64, done: u64);
}

static PROGRESS: OnceLock<&'static dyn Progress> = OnceLock::new();

/// Installs where progress goes (once; later calls are ignored).
pub fn install(progress: &'static dyn Progress) {
    let _ = PROGRESS.set(progress);
}

pub(crate) fn step(name: &'static str, unit: Option<Unit>, total: u64) {
    if let Some(p) = PROGRESS.get() {
        p.step(name, unit, total);
    }
}

pub(crate) fn heap_walk_step(name: &'static str) {
    if let Some(p) = PROGRESS.get() {
        p.heap_walk_step(name);
    }
}

pub(crate) fn end_step(completed: bool) {
    if let Some(p) = PROGRESS.get() {
        p.end_step(completed);
    }
}

pub(crate) fn advance(count: u64, done: u64) {
    if let Some(p) = PROGRESS.get() {
        p.advance(count, done);
    }
}
