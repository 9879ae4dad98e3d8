//! Keeps the asynchronous sampler's SIGPROF handler in place: a JNI library that installs its
//! own SIGPROF handler after the agent's would silently take every sampling signal (the
//! profile would say "total = 0"). The handler is checked at every tick of the sampler's
//! thread and before every dump; a handler that replaced it is named in an `HPROF WARNING`
//! and the sampler's is put back in front of it (that handler still gets every SIGPROF that
//! is not the sampler's), at most [`signal::MAX_REINSTALLS`] times, after which sampling
//! stops, said the same way. Each dump also says how many SIGPROF signals were not the
//! sampler's, when there were new ones.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::code_names;
use crate::signal::{self, HandlerCheck};
use crate::trace_store::Code;

/// The count of foreign signals the last dump reported.
static REPORTED_FOREIGN: AtomicU64 = AtomicU64::new(0);

/// What to do about a handler that replaced the sampler's.
pub trait Displaced {
    /// The sampler's handler is back: re-arm what a handler that took the signals may have
    /// left disarmed (perf events armed for one overflow are re-armed by the handler only).
    fn rearm(&self);
    /// The sampler's handler could not be put back: stop the timers, so no sampling signal
    /// reaches a handler that does not expect it.
    fn give_up(&self);
}

/// A handler at address `handler`, named for a message: `libfoo.so (on_sigprof)`, or the
/// default or ignored disposition.
pub fn handler_name(handler: usize) -> String {
    match handler {
        h if h == libc::SIG_DFL => "the default action (SIG_DFL)".to_string(),
        h if h == libc::SIG_IGN => "SIG_IGN (signal ignored)".to_string(),
        h => {
            let at = code_names::locate(Code::Native, h as u64, false);
            match &at.symbol {
                Some(symbol) => format!("{} ({symbol})", at.library),
                None => format!("{} (handler at {h:#x})", at.library),
            }
        }
    }
}

/// Checks the handler (see the module's doc); `period_ms` is how long it may have been away.
pub fn check(period_ms: u64, sampler: &dyn Displaced) {
    let HandlerCheck::Replaced {
        handler,
        reinstalled,
    } = signal::check_handler()
    else {
        return;
    };
    let name = handler_name(handler);
    if reinstalled {
        sampler.rearm();
        eprintln!(
            "HPROF WARNING: SIGPROF's handler was replaced by {name}: the CPU sampler's is back in front of it (it still gets the SIGPROF signals that are not the sampler's); the samples of up to {period_ms} ms before are missing"
        );
    } else {
        sampler.give_up();
        eprintln!(
            "HPROF WARNING: SIGPROF's handler was replaced by {name} again, {} times: the CPU sampler stops; the CPU samples from now on are missing",
            signal::MAX_REINSTALLS
        );
    }
}

/// Says, before a dump, how many SIGPROF signals were not the sampler's, when there were
/// new ones since the last dump.
pub fn report_foreign() {
    let foreign = signal::foreign_signals();
    let before = REPORTED_FOREIGN.swap(foreign, Ordering::AcqRel);
    if foreign > before {
        let previous = signal::previous_handler();
        let went = if previous == libc::SIG_DFL || previous == libc::SIG_IGN {
            "ignored (no handler was there before the sampler's)".to_string()
        } else {
            format!("passed to {}", handler_name(previous))
        };
        eprintln!(
            "HPROF WARNING: {} SIGPROF signals were not the CPU sampler's ({foreign} in all), {went}",
            foreign - before
        );
    }
}
