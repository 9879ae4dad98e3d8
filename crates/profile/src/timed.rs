//! Owns samples that carry their times (JFR events, the agent's timed sample records): the
//! stacks and threads they name, the events of each kind, and what a time range and a thread
//! filter make of them — a profile, and its [`Timeline`] for the flame graph page.

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::model::{Kind, Profile, Sample, Selection};
use crate::read::Error;

/// Where a kind's timed events came from; a kind reads one stream (see [`Timed::stream_for`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Stream {
    /// JFR `jdk.ExecutionSample`, the agent's CPU samples.
    Execution,
    /// JFR `jdk.CPUTimeSample` (JDK 25).
    CpuTime,
    /// JFR `jdk.NativeMethodSample`, async-profiler's `profiler.WallClockSample`, the agent's
    /// wall-clock samples.
    Wall,
    /// JFR `jdk.ObjectAllocationSample`.
    AllocSample,
    /// JFR `jdk.ObjectAllocationInNewTLAB` and `jdk.ObjectAllocationOutsideTLAB`.
    AllocTlab,
    /// JFR `jdk.JavaMonitorEnter` and `jdk.ThreadPark`.
    Lock,
    /// hprof's `hprof.AllocationSite`: allocated bytes and objects (cumulative at each dump).
    Sites,
    /// hprof's `hprof.AllocationSite`: live bytes and objects (cumulative at each dump).
    LiveSites,
    /// hprof's `hprof.CpuTime`: self milliseconds and calls (cumulative at each dump).
    Times,
}

impl Stream {
    /// What a user calls the events of this stream.
    pub(crate) fn events(self) -> &'static str {
        match self {
            Stream::Execution => "jdk.ExecutionSample",
            Stream::CpuTime => "jdk.CPUTimeSample",
            Stream::Wall => "jdk.NativeMethodSample or profiler.WallClockSample",
            Stream::AllocSample => "jdk.ObjectAllocationSample",
            Stream::AllocTlab => "jdk.ObjectAllocationInNewTLAB/OutsideTLAB",
            Stream::Lock => "jdk.JavaMonitorEnter or jdk.ThreadPark",
            Stream::Sites | Stream::LiveSites => "hprof.AllocationSite",
            Stream::Times => "hprof.CpuTime",
        }
    }

    /// Whether each dump's events repeat the figures so far (a profile reads the last).
    fn cumulative(self) -> bool {
        matches!(self, Stream::Sites | Stream::LiveSites | Stream::Times)
    }
}

/// How many streams there are.
pub(crate) const STREAMS: usize = 9;

/// One timed event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimedEvent {
    /// Wall-clock nanoseconds since the Unix epoch.
    pub time: i64,
    /// Index into [`Timed::stacks`].
    pub stack: u32,
    /// Index into [`Timed::threads`] (`u32::MAX`: none).
    pub thread: u32,
    /// Its value (samples, bytes, nanoseconds).
    pub value: i64,
    /// Its second value, for kinds that have one (objects, contentions, calls): 1 an event,
    /// or what the event says.
    pub count: i64,
}

/// One timed event as a stream stores it: its value and count kept apart (see [`Events`]).
#[derive(Debug, Clone, Copy)]
struct Entry {
    time: i64,
    stack: u32,
    thread: u32,
}

/// A stream's events, in file order, 16 bytes each while every event's value and count are
/// one (samples), then 32.
#[derive(Debug, Clone, Default)]
pub(crate) struct Events {
    entries: Vec<Entry>,
    /// Each event's value and count; empty while all are one.
    values: Vec<(i64, i64)>,
}

impl Events {
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    #[inline]
    pub(crate) fn push(&mut self, e: TimedEvent) {
        self.entries.push(Entry {
            time: e.time,
            stack: e.stack,
            thread: e.thread,
        });
        if !self.values.is_empty() || (e.value, e.count) != (1, 1) {
            self.values.resize(self.entries.len() - 1, (1, 1));
            self.values.push((e.value, e.count));
        }
    }

    /// The events in `range` (indices in file order).
    pub(crate) fn iter(
        &self,
        range: std::ops::Range<usize>,
    ) -> impl Iterator<Item = TimedEvent> + '_ {
        let values = &self.values;
        self.entries[range.clone()]
            .iter()
            .zip(range)
            .map(move |(e, i)| {
                let (value, count) = values.get(i).copied().unwrap_or((1, 1));
                TimedEvent {
                    time: e.time,
                    stack: e.stack,
                    thread: e.thread,
                    value,
                    count,
                }
            })
    }

    /// Appends `other`'s events, their stacks and threads renamed by `rename`.
    pub(crate) fn append(&mut self, other: Events, mut rename: impl FnMut(u32, u32) -> (u32, u32)) {
        let before = self.entries.len();
        self.entries.reserve(other.entries.len());
        self.entries.extend(other.entries.into_iter().map(|e| {
            let (stack, thread) = rename(e.stack, e.thread);
            Entry {
                time: e.time,
                stack,
                thread,
            }
        }));
        if !other.values.is_empty() {
            self.values.resize(before, (1, 1));
            self.values.extend(other.values);
        }
    }
}

/// The timed events of a file.
#[derive(Debug, Clone, Default)]
pub(crate) struct Timed {
    /// Stacks, root first, as indices into the recording's frames.
    pub stacks: Vec<Arc<[u32]>>,
    /// (One allocation a stack: the index shares the list's.)
    stack_index: FxHashMap<Arc<[u32]>, u32>,
    /// Thread names.
    pub threads: Vec<Arc<str>>,
    thread_index: FxHashMap<Arc<str>, u32>,
    /// The events of each stream (by `Stream as usize`), in file order.
    pub events: [Events; STREAMS],
    /// Where each dump of an HPROF file ends: the index of the first event of each stream
    /// drained after the dump's CPU SAMPLES section (empty for JFR: one dump).
    pub dump_ends: FxHashMap<Stream, Vec<usize>>,
    /// The recording's span: wall-clock nanoseconds since the epoch.
    pub start: i64,
    /// Its end.
    pub end: i64,
}

impl Timed {
    pub(crate) fn stack(&mut self, frames: &[u32]) -> u32 {
        if let Some(&i) = self.stack_index.get(frames) {
            return i;
        }
        let i = self.stacks.len() as u32;
        let frames: Arc<[u32]> = frames.into();
        self.stacks.push(frames.clone());
        self.stack_index.insert(frames, i);
        i
    }

    pub(crate) fn thread(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.thread_index.get(name) {
            return i;
        }
        let i = self.threads.len() as u32;
        let name: Arc<str> = name.into();
        self.threads.push(name.clone());
        self.thread_index.insert(name, i);
        i
    }

    pub(crate) fn push(&mut self, stream: Stream, event: TimedEvent) {
        self.events[stream as usize].push(event);
    }

    /// Whether the file has events of `kind`.
    pub(crate) fn has(&self, kind: Kind) -> bool {
        self.stream_for(kind).is_some()
    }

    /// The stream a profile of `kind` reads: CPU time samples before execution samples (a
    /// recording that has them asked for them), allocation samples before TLAB events (the
    /// JDK's own weights; both would count allocations twice).
    pub(crate) fn stream_for(&self, kind: Kind) -> Option<Stream> {
        let candidates: &[Stream] = match kind {
            Kind::Cpu => &[Stream::CpuTime, Stream::Execution],
            Kind::Wall => &[Stream::Wall],
            Kind::Alloc => &[Stream::Sites, Stream::AllocSample, Stream::AllocTlab],
            Kind::Lock => &[Stream::Lock],
            Kind::Times => &[Stream::Times],
            Kind::Live => &[Stream::LiveSites],
        };
        candidates
            .iter()
            .copied()
            .find(|&s| !self.events[s as usize].is_empty())
    }

    /// The names of the events a profile of `kind` would read.
    pub(crate) fn wanted(kind: Kind) -> String {
        match kind {
            Kind::Cpu => format!(
                "{} or {}",
                Stream::CpuTime.events(),
                Stream::Execution.events()
            ),
            Kind::Wall => Stream::Wall.events().to_string(),
            Kind::Alloc => format!(
                "{}, {} or {}",
                Stream::Sites.events(),
                Stream::AllocSample.events(),
                Stream::AllocTlab.events()
            ),
            Kind::Lock => Stream::Lock.events().to_string(),
            Kind::Times => Stream::Times.events().to_string(),
            Kind::Live => Stream::LiveSites.events().to_string(),
        }
    }
}

/// Which timed events a profile keeps.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Split by thread: each sample names its thread.
    pub by_thread: bool,
    /// Keep only threads whose name matches.
    pub threads: Option<regex::Regex>,
    /// Keep events at or after this time (wall-clock nanoseconds since the epoch).
    pub from: Option<i64>,
    /// Keep events before this time.
    pub to: Option<i64>,
    /// Make the profile's [`Timeline`].
    pub timeline: bool,
}

impl Filter {
    /// Whether it keeps only some events (a time range or a thread pattern).
    pub fn narrows(&self) -> bool {
        self.threads.is_some() || self.from.is_some() || self.to.is_some()
    }
}

/// Samples over time, for the flame graph page: the range in buckets of equal length, each
/// bucket's value by sample (an index into the profile's samples) and by thread.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Timeline {
    /// Wall-clock nanoseconds since the epoch of the first bucket's start.
    pub start: i64,
    /// Nanoseconds since the recording's start of the first bucket's start.
    pub offset: i64,
    /// The length of a bucket, nanoseconds.
    pub bucket: i64,
    /// Thread names.
    pub threads: Vec<Arc<str>>,
    /// Each bucket's (sample, value) pairs.
    pub samples: Vec<Vec<(u32, i64)>>,
    /// Each bucket's (thread, value) pairs.
    pub by_thread: Vec<Vec<(u32, i64)>>,
}

/// About this many buckets in a timeline.
const BUCKETS: i64 = 500;

/// A bucket length near `span / BUCKETS`, rounded up to 1, 2 or 5 times a power of ten
/// (nanoseconds), at least a millisecond.
fn bucket_length(span: i64) -> i64 {
    let want = (span / BUCKETS).max(1_000_000);
    let mut unit = 1_000_000i64;
    loop {
        for m in [1, 2, 5] {
            if unit.saturating_mul(m) >= want {
                return unit.saturating_mul(m);
            }
        }
        unit = unit.saturating_mul(10);
    }
}

impl Timed {
    /// The events of `stream` in the selected dumps (a JFR recording is one dump): their
    /// indices in the stream.
    pub(crate) fn select(
        &self,
        stream: Stream,
        selection: Selection,
        kind: Kind,
    ) -> Result<std::ops::Range<usize>, Error> {
        let len = self.events[stream as usize].len();
        let ends = self.dump_ends.get(&stream).map_or(&[][..], Vec::as_slice);
        let dump = |n: usize| {
            let start = if n >= 2 { ends[n - 2] } else { 0 };
            start.min(len)..ends[n - 1].min(len)
        };
        match selection {
            Selection::All => Ok(0..len),
            Selection::Last if ends.is_empty() => Ok(0..len),
            Selection::Last => Ok(dump(ends.len())),
            Selection::Nth(1) if ends.is_empty() => Ok(0..len),
            Selection::Nth(n) if n >= 1 && n <= ends.len() => Ok(dump(n)),
            Selection::Nth(n) if ends.is_empty() => Err(Error::new(format!(
                "dump {n} does not exist: a JFR recording is one profile (--from and --to pick a time range)"
            ))),
            Selection::Nth(n) => Err(Error::new(format!(
                "dump {n} does not exist: the file has {} {} sections",
                ends.len(),
                kind.section()
            ))),
        }
    }

    /// The profile of the events of `stream` in `range` (see [`Timed::select`]) that
    /// `filter` keeps, added to `profile` (empty, with the recording's frames: stacks index
    /// them).
    pub(crate) fn profile(
        &self,
        stream: Stream,
        range: std::ops::Range<usize>,
        filter: &Filter,
        mut profile: Profile,
    ) -> Profile {
        let all = &self.events[stream as usize];
        if all.values.is_empty()
            && !stream.cumulative()
            && !filter.narrows()
            && !filter.by_thread
            && !filter.timeline
        {
            return self.count_by_stack(&all.entries[range], profile);
        }
        let events = || self.events[stream as usize].iter(range.clone());
        let keep_thread: Vec<bool> = self
            .threads
            .iter()
            .map(|t| filter.threads.as_ref().is_none_or(|r| r.is_match(t)))
            .collect();
        let (from, to) = (
            filter.from.unwrap_or(i64::MIN),
            filter.to.unwrap_or(i64::MAX),
        );
        let two_values = profile.sample_types.len() > 1;
        // (stack, thread) to the sample's index; by stack alone when threads are not split.
        let mut samples: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut by_stack: Vec<u32> = if filter.by_thread {
            Vec::new()
        } else {
            vec![u32::MAX; self.stacks.len()]
        };
        let range_start = filter.from.unwrap_or(self.start).max(self.start);
        let range_end = filter.to.unwrap_or(self.end).min(self.end).max(range_start);
        let bucket = bucket_length(range_end - range_start);
        // Each bucket's (sample, value) pairs as they come, summed per sample at the end (a
        // sort within each bucket: cheaper than a map of millions of pairs).
        let mut timeline_samples: Vec<Vec<(u32, i64)>> = Vec::new();
        let mut timeline_threads: FxHashMap<(u32, u32), i64> = FxHashMap::default();
        let mut buckets = 0u32;
        // A cumulative stream's profile is its last dump in the range: the events of the
        // latest time there.
        let last_dump = stream
            .cumulative()
            .then(|| {
                events()
                    .filter(|e| e.time >= from && e.time < to)
                    .map(|e| e.time)
                    .max()
            })
            .flatten();
        // Each sample's value and count, summed apart from the samples (a small table, not
        // one allocation per sample), in the samples' order.
        let mut sums: Vec<[i64; 2]> = vec![[0, 0]; profile.samples.len()];
        for e in events() {
            if e.time < from || e.time >= to {
                continue;
            }
            if last_dump.is_some_and(|t| e.time != t) {
                continue;
            }
            if e.thread != u32::MAX && !keep_thread[e.thread as usize] {
                continue;
            }
            if e.thread == u32::MAX && filter.threads.is_some() {
                continue;
            }
            let thread = if filter.by_thread { e.thread } else { u32::MAX };
            let next = profile.samples.len() as u32;
            let index = if filter.by_thread {
                *samples.entry((e.stack, thread)).or_insert(next)
            } else {
                let slot = &mut by_stack[e.stack as usize];
                if *slot == u32::MAX {
                    *slot = next;
                }
                *slot
            };
            if index == next {
                sums.push([0, 0]);
                profile.samples.push(Sample {
                    stack: self.sample_stack(e.stack),
                    thread: filter.by_thread.then(|| {
                        self.threads
                            .get(e.thread as usize)
                            .map_or_else(|| "<unknown thread>".to_string(), |t| t.to_string())
                    }),
                    values: if two_values { vec![0, 0] } else { vec![0] },
                });
            }
            let sum = &mut sums[index as usize];
            sum[0] += e.value;
            if two_values {
                sum[1] += e.count;
            }
            if filter.timeline {
                let b = ((e.time.max(range_start) - range_start) / bucket) as u32;
                buckets = buckets.max(b + 1);
                if timeline_samples.len() <= b as usize {
                    timeline_samples.resize_with(b as usize + 1, Vec::new);
                }
                let pairs = &mut timeline_samples[b as usize];
                match pairs.last_mut() {
                    Some((last, value)) if *last == index => *value += e.value,
                    _ => pairs.push((index, e.value)),
                }
                *timeline_threads.entry((b, e.thread)).or_default() += e.value;
            }
        }
        for (sample, sum) in profile.samples.iter_mut().zip(sums) {
            sample.values[0] += sum[0];
            if two_values {
                sample.values[1] += sum[1];
            }
        }
        if filter.timeline {
            let span_buckets = ((range_end - range_start + bucket - 1) / bucket).max(1) as u32;
            let n = buckets.max(span_buckets) as usize;
            let mut timeline = Timeline {
                start: range_start,
                offset: range_start - self.start,
                bucket,
                threads: self.threads.clone(),
                samples: vec![Vec::new(); n],
                by_thread: vec![Vec::new(); n],
            };
            for (b, mut pairs) in timeline_samples.into_iter().enumerate() {
                pairs.sort_unstable_by_key(|&(s, _)| s);
                pairs.dedup_by(|next, kept| {
                    let same = next.0 == kept.0;
                    if same {
                        kept.1 += next.1;
                    }
                    same
                });
                pairs.shrink_to_fit();
                timeline.samples[b] = pairs;
            }
            for ((b, t), v) in timeline_threads {
                if t != u32::MAX {
                    timeline.by_thread[b as usize].push((t, v));
                }
            }
            for list in &mut timeline.by_thread {
                list.sort_unstable();
            }
            profile.timeline = Some(timeline);
        }
        profile
    }

    /// Stack `stack` as a profile sample's frames.
    fn sample_stack(&self, stack: u32) -> Vec<usize> {
        self.stacks[stack as usize]
            .iter()
            .map(|&f| f as usize)
            .collect()
    }

    /// The profile of `entries` whose values and counts are all one, every event kept and
    /// threads not split (the whole of a sampled recording): a count per stack, the samples
    /// in the order their stacks first come, as [`Timed::profile`] makes them.
    fn count_by_stack(&self, entries: &[Entry], mut profile: Profile) -> Profile {
        let mut counts = vec![0i64; self.stacks.len()];
        let mut order = Vec::new();
        for e in entries {
            let count = &mut counts[e.stack as usize];
            if *count == 0 {
                order.push(e.stack);
            }
            *count += 1;
        }
        let two_values = profile.sample_types.len() > 1;
        profile.samples.extend(order.into_iter().map(|stack| {
            let n = counts[stack as usize];
            Sample {
                stack: self.sample_stack(stack),
                thread: None,
                values: if two_values { vec![n, n] } else { vec![n] },
            }
        }));
        profile
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_lengths_are_round() {
        assert_eq!(bucket_length(0), 1_000_000);
        assert_eq!(bucket_length(4_000_000_000), 10_000_000);
        assert_eq!(bucket_length(600_000_000_000), 2_000_000_000);
    }
}
