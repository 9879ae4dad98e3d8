//! Which virtual thread each carrier thread runs, for the signal handler (JDK 21+, with
//! `thread=y`): a preallocated, lock-free table keyed by the carrier's JNI environment (what
//! the handler already has), holding the Java thread id of the virtual thread mounted on it.
//!
//! A carrier's entry is written only on that carrier: by the mount and unmount callbacks
//! ([`mounted`], [`unmounted`]) and by the signal handler, which marks it sampled
//! ([`sampled`]); so the handler always sees the virtual thread that ran when the signal
//! arrived. The draining thread only reads ([`mounted_now`]).

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Carriers the table follows at most (HotSpot's scheduler has one per CPU by default, 256 at
/// most); a carrier beyond them has its samples charged to itself.
pub const SLOTS: usize = 4096;

const FREE: usize = 0;
/// A carrier that ended: its entry can be reused, but lookups go past it.
const GONE: usize = usize::MAX;

struct Carrier {
    env: AtomicUsize,
    vthread: AtomicU64,
    sampled: AtomicBool,
}

static TABLE: [Carrier; SLOTS] = [const {
    Carrier {
        env: AtomicUsize::new(FREE),
        vthread: AtomicU64::new(0),
        sampled: AtomicBool::new(false),
    }
}; SLOTS];

/// Whether mounts are followed (the handler looks its carrier up only then).
static FOLLOWING: AtomicBool = AtomicBool::new(false);

fn home(env: usize) -> usize {
    ((env >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % SLOTS
}

fn find(env: usize) -> Option<&'static Carrier> {
    let start = home(env);
    for i in 0..SLOTS {
        let slot = &TABLE[(start + i) % SLOTS];
        match slot.env.load(Ordering::Acquire) {
            e if e == env => return Some(slot),
            FREE => return None,
            _ => {}
        }
    }
    None
}

fn claim(env: usize) -> Option<&'static Carrier> {
    let start = home(env);
    for i in 0..SLOTS {
        let slot = &TABLE[(start + i) % SLOTS];
        let seen = slot.env.load(Ordering::Acquire);
        if (seen == FREE || seen == GONE)
            && slot
                .env
                .compare_exchange(seen, env, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            return Some(slot);
        }
    }
    None
}

/// Starts or stops following mounts. Starting forgets what an earlier session saw.
pub fn set_following(on: bool) {
    if on {
        for slot in &TABLE {
            slot.vthread.store(0, Ordering::Relaxed);
            slot.sampled.store(false, Ordering::Relaxed);
        }
    }
    FOLLOWING.store(on, Ordering::Release);
}

/// Whether mounts are followed.
pub fn following() -> bool {
    FOLLOWING.load(Ordering::Acquire)
}

/// The carrier with JNI environment `env` (the calling thread) mounted the virtual thread
/// whose Java thread id is `vthread`.
pub fn mounted(env: usize, vthread: u64) {
    if let Some(slot) = find(env).or_else(|| claim(env)) {
        slot.sampled.store(false, Ordering::Relaxed);
        slot.vthread.store(vthread, Ordering::Release);
    }
}

/// The carrier `env` (the calling thread) unmounts its virtual thread: (its Java thread id,
/// whether a sample was taken of it since it mounted).
pub fn unmounted(env: usize) -> (u64, bool) {
    match find(env) {
        Some(slot) => (
            slot.vthread.swap(0, Ordering::AcqRel),
            slot.sampled.swap(false, Ordering::AcqRel),
        ),
        None => (0, false),
    }
}

/// In the signal handler, on the carrier `env`: the virtual thread it runs (0 for none), now
/// marked as sampled.
pub fn sampled(env: usize) -> u64 {
    if !FOLLOWING.load(Ordering::Acquire) {
        return 0;
    }
    let Some(slot) = find(env) else {
        return 0;
    };
    let vthread = slot.vthread.load(Ordering::Acquire);
    if vthread != 0 {
        slot.sampled.store(true, Ordering::Relaxed);
    }
    vthread
}

/// The carrier `env` (the calling thread) ends.
pub fn forget(env: usize) {
    if let Some(slot) = find(env) {
        slot.vthread.store(0, Ordering::Relaxed);
        slot.env.store(GONE, Ordering::Release);
    }
}

/// The virtual threads mounted now: (Java thread id, the carrier's JNI environment).
pub fn mounted_now() -> Vec<(u64, usize)> {
    TABLE
        .iter()
        .filter_map(|slot| {
            let env = slot.env.load(Ordering::Acquire);
            let vthread = slot.vthread.load(Ordering::Acquire);
            (env != FREE && env != GONE && vthread != 0).then_some((vthread, env))
        })
        .collect()
}
