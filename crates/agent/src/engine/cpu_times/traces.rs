//! cpu=times' traces, as sequences of method numbers (innermost first) with the thread for
//! `thread=y`, interned as the threads' caches miss them, and the costs (calls of ended
//! threads, CPU time) kept by trace number.

use std::collections::HashMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

use rustc_hash::FxHashMap;

use crate::engine::Context;
use crate::trace_store::MAX_TRACES;

use super::CpuTimes;

/// Per-trace costs: calls of threads that ended (live threads keep theirs in Java), and the
/// CPU time the timing thread credits.
#[derive(Debug, Default)]
pub(super) struct Cost {
    pub(super) calls: AtomicU64,
    pub(super) self_ns: AtomicU64,
}

/// A fixed-capacity table of costs by trace index, grown chunk by chunk without moving.
#[derive(Debug)]
pub(super) struct Costs {
    chunks: Box<[OnceLock<Box<[Cost]>>]>,
}

const COST_CHUNK: usize = 4096;

impl Costs {
    pub(super) fn new() -> Costs {
        Costs {
            chunks: (0..MAX_TRACES.div_ceil(COST_CHUNK))
                .map(|_| OnceLock::new())
                .collect(),
        }
    }

    pub(super) fn get(&self, index: u32) -> Option<&Cost> {
        let index = index as usize;
        let chunk = self.chunks.get(index / COST_CHUNK)?;
        let chunk = chunk.get_or_init(|| (0..COST_CHUNK).map(|_| Cost::default()).collect());
        chunk.get(index % COST_CHUNK)
    }
}

/// Traces as sequences of method numbers, innermost first, with the thread for `thread=y`.
#[derive(Debug, Default)]
pub(super) struct Traces {
    index: HashMap<(Box<[u32]>, u32), u32>,
    pub(super) entries: Vec<(Box<[u32]>, u32)>,
    /// (method, parent trace, thread) → trace: what the threads' caches missed before.
    pairs: FxHashMap<(u32, i32, u32), u32>,
}

impl CpuTimes {
    /// The trace of `method` called under the frame whose trace is `parent`, on thread
    /// `thread` (0 unless `thread=y`).
    pub(super) fn intern(
        &self,
        ctx: &Context,
        method: u32,
        parent: i32,
        thread: u32,
    ) -> Option<u32> {
        let depth = ctx.depth();
        let pair = (method, parent, thread);
        let mut traces = self.traces.lock().ok()?;
        if let Some(&t) = traces.pairs.get(&pair) {
            return Some(t);
        }
        let mut frames: Vec<u32> = Vec::with_capacity(depth);
        if depth > 0 {
            frames.push(method);
            if let Ok(parent) = usize::try_from(parent)
                && let Some((above, _)) = traces.entries.get(parent)
            {
                frames.extend(above.iter().take(depth - 1));
            }
        }
        let key = (frames.into_boxed_slice(), thread);
        let t = match traces.index.get(&key) {
            Some(&t) => t,
            None => {
                if traces.entries.len() >= MAX_TRACES {
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    return None;
                }
                let t = traces.entries.len() as u32;
                traces.entries.push(key.clone());
                traces.index.insert(key, t);
                t
            }
        };
        traces.pairs.insert(pair, t);
        Some(t)
    }
}
