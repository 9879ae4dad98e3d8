//! What the two CPU samplers (`cpu_samples`, and `cpu_async` through signals) share: the
//! CPU SAMPLES listing of the trace store's counts, and turning a thread's sampling on or off.

use crate::engine::Context;
use crate::output::ProfileOutput;

/// Writes the CPU SAMPLES of the interval since the last listing, cut off at `cutoff`, and
/// starts a new interval (both samplers record into the trace store's counts).
pub fn write_samples(ctx: &Context, out: &mut ProfileOutput, cutoff: f64) {
    let Ok(mut traces) = ctx.traces.lock() else {
        return;
    };
    let mut rows = traces.hits();
    let total: u64 = rows.iter().map(|(_, n)| n).sum();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.serial.cmp(&b.0.serial)));
    let shown = rows
        .iter()
        .position(|(_, n)| total == 0 || (*n as f64 / total as f64) < cutoff)
        .unwrap_or(rows.len());
    rows.truncate(shown);
    out.write(|w| w.cpu_samples(&rows, total));
    traces.clear_hits();
}

/// Turns sampling on or off for the thread whose object id is `thread` (0: all threads).
pub fn set_sampling(ctx: &Context, thread: u64, on: bool) {
    if let Ok(mut threads) = ctx.threads.lock() {
        for t in threads
            .live_mut()
            .filter(|t| thread == 0 || t.object_id == thread)
        {
            if on && !t.sampled {
                // The CPU time it used while off is not credited when it is back on.
                t.last_cpu_ns = None;
                t.cpu_credit_ns = 0;
            }
            t.sampled = on;
        }
    }
}
