//! Reads JDK Flight Recorder recordings (JDK 11 to 25, async-profiler) into a recording's
//! timed events: execution and CPU-time samples (CPU), native-method and wall-clock samples
//! (wall, the thread's state as the root frame), allocation samples and TLAB events (the
//! allocated class as the leaf), monitor enters and parks (the monitor's class as the leaf,
//! the time blocked as the value).

use std::sync::Arc;

use hprof_jfr::{Chunk, FieldType, Value};
use rustc_hash::FxHashMap;

use crate::model::FrameKind;
use crate::read::{Error, Recording};
use crate::timed::{Stream, Timed, TimedEvent};

/// The class of hprof's pseudo-frames.
const PSEUDO_CLASS: &str = "<hprof>";

/// Whether `bytes` start like a JFR recording.
pub(crate) fn is_jfr(bytes: &[u8]) -> bool {
    bytes.starts_with(&hprof_jfr::MAGIC)
}

fn error(e: hprof_jfr::Error) -> Error {
    Error {
        offset: Some(e.offset()),
        message: e.what(),
    }
}

/// Where an event type's fields are, for one stream it feeds.
#[derive(Debug, Clone)]
struct Plan {
    stream: Stream,
    time: Option<usize>,
    thread: Option<usize>,
    stack: Option<usize>,
    /// The thread state, and whether it becomes the root frame even when RUNNABLE.
    state: Option<(usize, bool)>,
    /// The class that becomes the leaf frame.
    class: Option<usize>,
    value: Value_,
    /// The second value (objects, calls, ...): a field's integer, else one.
    count: Option<usize>,
}

/// What an event's value is.
#[derive(Debug, Clone, Copy)]
enum Value_ {
    /// One.
    One,
    /// A field's integer.
    Field(usize),
    /// A field's duration in ticks, as nanoseconds.
    Duration(usize),
    /// A field's nanoseconds, as milliseconds.
    Millis(usize),
}

/// How an event type feeds a stream: (stream, thread field, state (as the root always?),
/// leaf class field, value, count field).
type Rule = (
    Stream,
    &'static str,
    Option<bool>,
    Option<&'static str>,
    Option<&'static str>,
    Option<&'static str>,
);

/// The streams an event type feeds.
fn rules(name: &str) -> &'static [Rule] {
    use Stream::*;
    match name {
        // An execution sample's state is RUNNABLE, but for hprof's wall-clock samples.
        "jdk.ExecutionSample" => &[(Execution, "sampledThread", Some(false), None, None, None)],
        "jdk.CPUTimeSample" => &[(CpuTime, "eventThread", None, None, None, None)],
        "jdk.NativeMethodSample" => &[(Wall, "sampledThread", Some(true), None, None, None)],
        "profiler.WallClockSample" => &[(
            Wall,
            "sampledThread",
            Some(true),
            None,
            Some("samples"),
            None,
        )],
        "jdk.ObjectAllocationSample" => &[(
            AllocSample,
            "eventThread",
            None,
            Some("objectClass"),
            Some("weight"),
            None,
        )],
        "jdk.ObjectAllocationInNewTLAB" => &[(
            AllocTlab,
            "eventThread",
            None,
            Some("objectClass"),
            Some("tlabSize"),
            None,
        )],
        "jdk.ObjectAllocationOutsideTLAB" => &[(
            AllocTlab,
            "eventThread",
            None,
            Some("objectClass"),
            Some("allocationSize"),
            None,
        )],
        "jdk.JavaMonitorEnter" => &[(
            Lock,
            "eventThread",
            None,
            Some("monitorClass"),
            Some("duration"),
            None,
        )],
        "jdk.ThreadPark" => &[(
            Lock,
            "eventThread",
            None,
            Some("parkedClass"),
            Some("duration"),
            None,
        )],
        // hprof's own: exact counts per site and per trace, cumulative at each dump.
        "hprof.AllocationSite" => &[
            (
                Sites,
                "eventThread",
                None,
                Some("objectClass"),
                Some("allocatedBytes"),
                Some("allocatedObjects"),
            ),
            (
                LiveSites,
                "eventThread",
                None,
                Some("objectClass"),
                Some("liveBytes"),
                Some("liveObjects"),
            ),
        ],
        "hprof.CpuTime" => &[(
            Times,
            "eventThread",
            None,
            None,
            Some("selfTime"),
            Some("calls"),
        )],
        _ => &[],
    }
}

impl Value_ {
    /// The value of an event whose integer fields `int` gives.
    #[inline]
    fn of(self, chunk: &Chunk<'_>, int: impl Fn(usize) -> i64) -> i64 {
        match self {
            Value_::One => 1,
            Value_::Field(i) => int(i),
            Value_::Duration(i) => chunk.duration_nanos(int(i)),
            Value_::Millis(i) => int(i) / 1_000_000,
        }
    }
}

/// Most leading fields read as integers (sample events read four or five).
const MAX_NUMERIC: usize = 16;

/// How many leading fields of event type `class` its plans read as integers, when every
/// field they read lies there and has the type the plan wants (a time, value or count a
/// number; a thread, stack, state or leaf class a key); none when an event must be decoded.
fn numeric_fields(class: &hprof_jfr::Class, plans: &[Plan]) -> Option<usize> {
    let prefix = class.numeric_prefix();
    let number = |i: usize| i < prefix && !matches!(class.fields[i].ty, FieldType::Ref(_));
    let key = |i: usize| i < prefix && matches!(class.fields[i].ty, FieldType::Ref(_));
    let mut n = 0;
    for plan in plans {
        let value = match plan.value {
            Value_::One => None,
            Value_::Field(i) | Value_::Duration(i) | Value_::Millis(i) => Some(i),
        };
        let numbers = [plan.time, value, plan.count];
        let keys = [
            plan.thread,
            plan.stack,
            plan.state.map(|(i, _)| i),
            plan.class,
        ];
        if !numbers.iter().flatten().all(|&i| number(i)) || !keys.iter().flatten().all(|&i| key(i))
        {
            return None;
        }
        n = plan.fields().fold(n, |n, i| n.max(i + 1));
    }
    (n <= MAX_NUMERIC).then_some(n)
}

impl Plan {
    /// The fields it reads.
    fn fields(&self) -> impl Iterator<Item = usize> + '_ {
        let value = match self.value {
            Value_::One => None,
            Value_::Field(i) | Value_::Duration(i) | Value_::Millis(i) => Some(i),
        };
        [
            self.time,
            self.thread,
            self.stack,
            self.state.map(|(i, _)| i),
            self.class,
            value,
            self.count,
        ]
        .into_iter()
        .flatten()
    }

    fn of(chunk: &Chunk<'_>, class: u32) -> Vec<Plan> {
        let c = chunk.class(class);
        let f = |name: &str| c.field(name);
        rules(&c.name)
            .iter()
            .filter_map(|&(stream, thread, state, leaf, value, count)| {
                let value = match value {
                    None => Value_::One,
                    Some("duration") => Value_::Duration(f("duration")?),
                    Some("selfTime") => Value_::Millis(f("selfTime")?),
                    Some(name) => match f(name) {
                        Some(i) => Value_::Field(i),
                        // Older TLAB events: the allocation's size when there is no TLAB size.
                        None => Value_::Field(f("allocationSize")?),
                    },
                };
                Some(Plan {
                    stream,
                    time: f("startTime"),
                    thread: f(thread).or_else(|| f("eventThread")),
                    stack: f("stackTrace"),
                    state: state.and_then(|always| Some((f("state")?, always))),
                    class: leaf.and_then(f),
                    value,
                    count: count.and_then(f),
                })
            })
            .collect()
    }
}

/// Most `Ref`s followed to reach a string (a symbol's string, a class's name).
const MAX_HOPS: usize = 4;

/// The text a value stands for: a string, a pooled constant that is one, or an object's
/// `string` field (a symbol).
fn text(chunk: &Chunk<'_>, value: &Value<'_>, hops: usize) -> Option<String> {
    match value {
        Value::Str(s) => Some(s.to_string()),
        Value::Ref { class, key } if hops < MAX_HOPS => {
            let v = chunk.constant(*class, *key).ok()??;
            text(chunk, &v, hops + 1)
        }
        Value::Object(class, fields) if hops < MAX_HOPS => {
            let i = chunk.class(*class).field("string")?;
            text(chunk, fields.get(i)?, hops + 1)
        }
        _ => None,
    }
}

/// A field of an object by name.
fn field<'v, 'a>(chunk: &Chunk<'_>, object: &'v Value<'a>, name: &str) -> Option<&'v Value<'a>> {
    match object {
        Value::Object(class, fields) => fields.get(chunk.class(*class).field(name)?),
        _ => None,
    }
}

/// The constant a reference names.
fn deref<'a>(chunk: &Chunk<'a>, value: &Value<'a>) -> Option<Value<'a>> {
    match value {
        Value::Ref { class, key } => chunk.constant(*class, *key).ok()?,
        Value::Object(..) => Some(value.clone()),
        _ => None,
    }
}

/// The name of a class constant, dotted (`java.lang.String`, `int[]`).
fn class_name(chunk: &Chunk<'_>, class: &Value<'_>) -> Option<String> {
    let class = deref(chunk, class)?;
    let name = text(chunk, field(chunk, &class, "name")?, 0)?;
    Some(hprof_format::java_class_name(&name))
}

/// A method's name, kind and library (for a function of native code).
type MethodName = (String, FrameKind, Option<String>);

/// Whether a JFR method's class (its raw name) is a library of native code, as
/// async-profiler and hprof write functions of native and kernel code: none, a file name
/// (`libjvm.so`: a class's name in the JVM's form has no dot), or `[kernel]`, `[stub]`.
fn is_library(raw: &str) -> bool {
    raw.is_empty()
        || (raw.contains('.') && !raw.contains('/'))
        || (raw.starts_with('[') && raw.ends_with(']'))
}

/// What one chunk's constants have become, looked up once each.
#[derive(Default)]
struct Caches {
    threads: FxHashMap<i64, u32>,
    /// Stack trace key to its frames (recording frame indices), root first.
    stacks: FxHashMap<i64, Arc<[u32]>>,
    methods: FxHashMap<i64, Option<MethodName>>,
    frames: FxHashMap<(i64, i32), u32>,
    /// Frame type key to the kind of native code it marks (none: by the library).
    frame_types: FxHashMap<i64, Option<FrameKind>>,
    /// Class or state key to the recording frame of its pseudo-frame.
    pseudo: FxHashMap<(u32, i64), Option<u32>>,
    /// (stack, state, class, state always shown) keys to the timed stack.
    composed: FxHashMap<(i64, i64, i64, bool), u32>,
    /// The last stack frame class and its fields' indices (see [`Reader::frame_layout`]).
    frame_layout: Option<(u32, [Option<usize>; 3])>,
}

struct Reader<'r, 'a> {
    recording: &'r mut Recording,
    timed: Timed,
    chunk: &'r Chunk<'a>,
    caches: Caches,
    /// The pseudo-frame of the RUNNABLE state (left out unless always shown).
    runnable: u32,
}

impl Reader<'_, '_> {
    /// The timed stack of an event's stack, state and leaf class (`keys` their keys, and
    /// whether the state is always shown), composed and cached.
    fn compose(
        &mut self,
        keys: (i64, i64, i64, bool),
        stack: Option<&Value<'_>>,
        state: Option<&Value<'_>>,
        class: Option<&Value<'_>>,
    ) -> u32 {
        let mut composed: Vec<u32> = Vec::new();
        if let Some(state) = state.and_then(|s| self.pseudo(s, true))
            && (keys.3 || state != self.runnable)
        {
            composed.push(state);
        }
        if let Some(v) = stack {
            composed.extend_from_slice(&self.stack(v));
        }
        if composed.is_empty() {
            composed.push(
                self.recording
                    .frame("<empty trace>", FrameKind::Pseudo, None, None) as u32,
            );
        }
        if let Some(class) = class.and_then(|c| self.pseudo(c, false)) {
            composed.push(class);
        }
        let s = self.timed.stack(&composed);
        self.caches.composed.insert(keys, s);
        s
    }

    fn thread(&mut self, v: &Value<'_>) -> u32 {
        let Some(key) = v.as_key() else {
            return u32::MAX;
        };
        if let Some(&t) = self.caches.threads.get(&key) {
            return t;
        }
        let chunk = self.chunk;
        let name = deref(chunk, v).and_then(|t| {
            ["javaName", "osName"]
                .iter()
                .find_map(|n| field(chunk, &t, n).and_then(|v| text(chunk, v, 0)))
                .filter(|n| !n.is_empty())
        });
        let t = match name {
            Some(name) => self.timed.thread(&name),
            None if key == 0 => u32::MAX,
            None => self.timed.thread(&format!("thread {key}")),
        };
        self.caches.threads.insert(key, t);
        t
    }

    /// A method's name and kind, and for a function of native or kernel code its library
    /// (its kind then [`FrameKind::Native`] until its frame's type says more).
    fn method(&mut self, v: &Value<'_>) -> Option<MethodName> {
        let key = v.as_key()?;
        if let Some(m) = self.caches.methods.get(&key) {
            return m.clone();
        }
        let chunk = self.chunk;
        let method = deref(chunk, v).and_then(|m| {
            let name = text(chunk, field(chunk, &m, "name")?, 0)?;
            let raw = field(chunk, &m, "type")
                .and_then(|c| deref(chunk, c))
                .and_then(|c| text(chunk, field(chunk, &c, "name")?, 0))
                .unwrap_or_default();
            Some(if is_library(&raw) {
                // A function of native code (async-profiler's native, C++ and kernel
                // frames, hprof's): its class is its library (none when unknown), named
                // `library.function` as the agent's text output names it.
                let shown = if raw.is_empty() {
                    name
                } else {
                    format!("{raw}.{name}")
                };
                (
                    shown,
                    FrameKind::Native,
                    Some(raw).filter(|r| !r.is_empty()),
                )
            } else {
                let class = hprof_format::java_class_name(&raw);
                if class == PSEUDO_CLASS {
                    // hprof's pseudo-frames (`<GC active>`).
                    (name, FrameKind::Pseudo, None)
                } else {
                    let kind = FrameKind::of_class(&class);
                    (format!("{class}.{name}"), kind, None)
                }
            })
        });
        self.caches.methods.insert(key, method.clone());
        method
    }

    /// Where a stack frame class's `method`, `lineNumber` and `type` fields are (looked up
    /// by name once per chunk, not once per frame).
    fn frame_layout(&mut self, class: u32) -> [Option<usize>; 3] {
        if let Some((c, layout)) = self.caches.frame_layout
            && c == class
        {
            return layout;
        }
        let c = self.chunk.class(class);
        let layout = [c.field("method"), c.field("lineNumber"), c.field("type")];
        self.caches.frame_layout = Some((class, layout));
        layout
    }

    fn stack(&mut self, v: &Value<'_>) -> Arc<[u32]> {
        let Some(key) = v.as_key() else {
            return Arc::from([]);
        };
        if let Some(s) = self.caches.stacks.get(&key) {
            return s.clone();
        }
        let chunk = self.chunk;
        let mut frames: Vec<u32> = Vec::new();
        if let Some(trace) = deref(chunk, v)
            && let Some(Value::Array(items)) = field(chunk, &trace, "frames")
        {
            for frame in items {
                let Value::Object(class, values) = frame else {
                    continue;
                };
                let [method, line, ty] = self.frame_layout(*class);
                let get = |i: Option<usize>| values.get(i?);
                let line = get(line).and_then(Value::as_int).unwrap_or(0) as i32;
                let Some(method) = get(method) else {
                    continue;
                };
                let method_key = method.as_key().unwrap_or(-1);
                let index = match self.caches.frames.get(&(method_key, line)) {
                    Some(&i) => i,
                    None => {
                        let (name, mut kind, library) = self.method(method).unwrap_or_else(|| {
                            ("<unknown method>".into(), FrameKind::Pseudo, None)
                        });
                        if kind == FrameKind::Native {
                            kind = self.code_kind(get(ty), library.as_deref());
                        }
                        let shown = u32::try_from(line).ok().filter(|&l| l > 0);
                        let i = self.recording.frame(&name, kind, library.as_deref(), shown) as u32;
                        self.caches.frames.insert((method_key, line), i);
                        i
                    }
                };
                frames.push(index);
            }
            if field(chunk, &trace, "truncated").and_then(Value::as_int) == Some(1) {
                frames.push(
                    self.recording
                        .frame("<truncated>", FrameKind::Pseudo, None, None)
                        as u32,
                );
            }
        }
        // JFR lists frames top first.
        frames.reverse();
        let frames: Arc<[u32]> = frames.into();
        self.caches.stacks.insert(key, frames.clone());
        frames
    }

    /// The kind of a function of native code of `library` by its frame's
    /// `jdk.types.FrameType`: `Kernel` is the kernel's, `C++` the JVM's (async-profiler's type
    /// for libjvm.so and the code cache's stubs), any other by its library.
    fn code_kind(&mut self, v: Option<&Value<'_>>, library: Option<&str>) -> FrameKind {
        let by_library = library.map_or(FrameKind::Native, FrameKind::of_library);
        let Some(v) = v else {
            return by_library;
        };
        let key = v.as_key().unwrap_or(-1);
        if let Some(&k) = self.caches.frame_types.get(&key) {
            return k.unwrap_or(by_library);
        }
        let chunk = self.chunk;
        let description = deref(chunk, v).and_then(|t| {
            text(chunk, &t, 0).or_else(|| text(chunk, field(chunk, &t, "description")?, 0))
        });
        let kind = match description.as_deref() {
            Some("Kernel") => Some(FrameKind::Kernel),
            Some("C++") => Some(FrameKind::Jvm),
            _ => None,
        };
        self.caches.frame_types.insert(key, kind);
        kind.unwrap_or(by_library)
    }

    /// The pseudo-frame of a class (`is_state`: a thread state) constant.
    fn pseudo(&mut self, v: &Value<'_>, is_state: bool) -> Option<u32> {
        let (class, key) = match *v {
            Value::Ref { class, key } => (class, key),
            _ => return None,
        };
        if let Some(&p) = self.caches.pseudo.get(&(class, key)) {
            return p;
        }
        let chunk = self.chunk;
        let name = if is_state {
            deref(chunk, v)
                .and_then(|s| {
                    text(chunk, &s, 0).or_else(|| text(chunk, field(chunk, &s, "name")?, 0))
                })
                .map(|s| hprof_jfr::schema::state_frame(&s))
        } else {
            class_name(chunk, v)
        };
        let p = name.map(|n| self.recording.frame(&n, FrameKind::Pseudo, None, None) as u32);
        self.caches.pseudo.insert((class, key), p);
        p
    }
}

/// The chunks of a recording: (offset, size), from their headers alone.
fn chunk_bounds(bytes: &[u8]) -> Result<Vec<(usize, usize)>, Error> {
    let mut bounds = Vec::new();
    let mut at = 0usize;
    while at < bytes.len() {
        let header = hprof_jfr::Header::read(&bytes[at..], at as u64).map_err(error)?;
        bounds.push((at, header.size as usize));
        at += header.size as usize;
    }
    Ok(bounds)
}

/// What one chunk holds: its timed events, their frames in a table of its own.
struct Part {
    frames: Recording,
    timed: Timed,
}

/// Reads every chunk of the recording `bytes` into `recording`'s timed events: the chunks
/// (each self-contained) on all cores, then merged in order.
pub(crate) fn read(bytes: &[u8], recording: &mut Recording) -> Result<(), Error> {
    let bounds = chunk_bounds(bytes)?;
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(bounds.len())
        .clamp(1, 8);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut parts: Vec<(usize, Result<Part, Error>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(&(at, size)) = bounds.get(i) else {
                            break;
                        };
                        let part = hprof_jfr::Chunk::read(&bytes[at..at + size], at as u64)
                            .map_err(error)
                            .and_then(|chunk| read_chunk(&chunk));
                        let failed = part.is_err();
                        done.push((i, part));
                        if failed {
                            break;
                        }
                    }
                    done
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| {
                h.join()
                    .unwrap_or_else(|_| vec![(0, Err(Error::new("a reading thread failed")))])
            })
            .collect()
    });
    parts.sort_by_key(|(i, _)| *i);
    let mut timed = Timed::default();
    timed.start = i64::MAX;
    timed.end = i64::MIN;
    for (_, part) in parts {
        merge(recording, &mut timed, part?);
    }
    if timed.start > timed.end {
        timed.start = 0;
        timed.end = 0;
    }
    recording.timed = Some(timed);
    Ok(())
}

/// Adds a chunk's part to the recording's frames and timed events.
fn merge(recording: &mut Recording, timed: &mut Timed, part: Part) {
    let frames: Vec<u32> = part
        .frames
        .frame_list()
        .iter()
        .map(|f| recording.frame(&f.name, f.kind, f.file.as_deref(), f.line) as u32)
        .collect();
    let mut buffer = Vec::new();
    let stacks: Vec<u32> = part
        .timed
        .stacks
        .iter()
        .map(|stack| {
            buffer.clear();
            buffer.extend(stack.iter().map(|&f| frames[f as usize]));
            timed.stack(&buffer)
        })
        .collect();
    let threads: Vec<u32> = part.timed.threads.iter().map(|t| timed.thread(t)).collect();
    timed.start = timed.start.min(part.timed.start);
    timed.end = timed.end.max(part.timed.end);
    for (stream, events) in part.timed.events.into_iter().enumerate() {
        let target = &mut timed.events[stream];
        target.reserve(events.len());
        target.extend(events.into_iter().map(|e| TimedEvent {
            stack: stacks[e.stack as usize],
            thread: if e.thread == u32::MAX {
                u32::MAX
            } else {
                threads[e.thread as usize]
            },
            ..e
        }));
    }
}

/// Reads one chunk's events, into a part with a frame table of its own.
fn read_chunk(chunk: &Chunk<'_>) -> Result<Part, Error> {
    let mut local = Recording::default();
    let recording = &mut local;
    let mut timed = Timed::default();
    let mut values: Vec<Value<'_>> = Vec::new();
    {
        let h = chunk.header;
        timed.start = h.start_nanos;
        timed.end = h.start_nanos.saturating_add(h.duration_nanos);
        let plans: Vec<Vec<Plan>> = (0..chunk.metadata.classes.len() as u32)
            .map(|c| Plan::of(chunk, c))
            .collect();
        // Events whose wanted fields are all numbers and keys are read without decoding the
        // rest.
        let shallow: Vec<bool> = plans
            .iter()
            .enumerate()
            .map(|(class, plans)| {
                let fields = &chunk.class(class as u32).fields;
                plans.iter().all(|p| {
                    p.fields()
                        .all(|i| fields.get(i).is_some_and(hprof_jfr::Field::is_number))
                })
            })
            .collect();
        // Events whose wanted fields lead the event and are numbers and keys of the types
        // they must have are read as integers alone (sample events: the most numerous).
        let numeric: Vec<Option<usize>> = plans
            .iter()
            .enumerate()
            .map(|(class, plans)| numeric_fields(chunk.class(class as u32), plans))
            .collect();
        let runnable = recording.frame("<RUNNABLE>", FrameKind::Pseudo, None, None) as u32;
        let mut reader = Reader {
            recording: &mut *recording,
            timed: std::mem::take(&mut timed),
            chunk,
            caches: Caches::default(),
            runnable,
        };
        let mut ints = [0i64; MAX_NUMERIC];
        for event in chunk.events() {
            let event = event.map_err(error)?;
            let plans = &plans[event.class as usize];
            if plans.is_empty() {
                continue;
            }
            if let Some(n) = numeric[event.class as usize] {
                let ints = &mut ints[..n];
                chunk.read_numbers(&event, ints).map_err(error)?;
                let fields = &chunk.class(event.class).fields;
                for plan in plans {
                    let int = |i: usize| ints[i];
                    let key = |i: Option<usize>| i.map_or(i64::MIN, int);
                    let reference = |i: Option<usize>| {
                        let i = i?;
                        match fields[i].ty {
                            FieldType::Ref(class) => Some(Value::Ref {
                                class,
                                key: ints[i],
                            }),
                            _ => None,
                        }
                    };
                    let time = plan.time.map_or(h.start_nanos, |i| chunk.nanos(ints[i]));
                    let value = plan.value.of(chunk, int);
                    let count = plan.count.map_or(1, int);
                    let thread = match plan.thread {
                        None => u32::MAX,
                        Some(i) => match reader.caches.threads.get(&ints[i]) {
                            Some(&t) => t,
                            None => reference(Some(i)).map_or(u32::MAX, |t| reader.thread(&t)),
                        },
                    };
                    let (state_field, always) =
                        plan.state.map_or((None, false), |(i, a)| (Some(i), a));
                    let keys = (key(plan.stack), key(state_field), key(plan.class), always);
                    let stack = match reader.caches.composed.get(&keys) {
                        Some(&s) => s,
                        None => reader.compose(
                            keys,
                            reference(plan.stack).as_ref(),
                            reference(state_field).as_ref(),
                            reference(plan.class).as_ref(),
                        ),
                    };
                    reader.timed.push(
                        plan.stream,
                        TimedEvent {
                            time,
                            stack,
                            thread,
                            value,
                            count,
                        },
                    );
                }
                continue;
            }
            if shallow[event.class as usize] {
                chunk.read_shallow(&event, &mut values).map_err(error)?;
            } else {
                chunk.read_event(&event, &mut values).map_err(error)?;
            }
            for plan in plans {
                let get = |i: Option<usize>| i.and_then(|i| values.get(i));
                let int = |i: usize| values.get(i).and_then(Value::as_int).unwrap_or(0);
                let time = get(plan.time)
                    .and_then(Value::as_int)
                    .map_or(h.start_nanos, |t| chunk.nanos(t));
                let value = plan.value.of(chunk, int);
                let count = plan.count.map_or(1, int);
                let thread = get(plan.thread).map_or(u32::MAX, |t| reader.thread(t));
                let key = |i: Option<usize>| get(i).and_then(Value::as_key).unwrap_or(i64::MIN);
                let (state_field, always) = plan.state.map_or((None, false), |(i, a)| (Some(i), a));
                let keys = (key(plan.stack), key(state_field), key(plan.class), always);
                let stack = match reader.caches.composed.get(&keys) {
                    Some(&s) => s,
                    None => {
                        reader.compose(keys, get(plan.stack), get(state_field), get(plan.class))
                    }
                };
                reader.timed.push(
                    plan.stream,
                    TimedEvent {
                        time,
                        stack,
                        thread,
                        value,
                        count,
                    },
                );
            }
        }
        timed = reader.timed;
    }
    Ok(Part {
        frames: local,
        timed,
    })
}
