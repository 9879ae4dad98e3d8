//! Owns how long computations report their progress.

/// Told what a long computation is doing. Methods may be called from several threads.
pub trait Progress: Sync {
    /// A new phase starts, with `total` units of work to do (0 if unknown).
    fn phase(&self, name: &str, total: u64);
    /// `done` more units of the current phase are done.
    fn advance(&self, done: u64);
}

/// No report.
impl Progress for () {
    fn phase(&self, _name: &str, _total: u64) {}
    fn advance(&self, _done: u64) {}
}
