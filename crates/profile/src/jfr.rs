//! Reads JDK Flight Recorder recordings (JDK 11 to 25, async-profiler) into a recording's
//! timed events: execution and CPU-time samples (CPU), native-method and wall-clock samples
//! (wall, the thread's state as the root frame), allocation samples and TLAB events (the
//! allocated class as the leaf), monitor enters and parks (the monitor's class as the leaf,
//! the time blocked as the value).

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
    /// The class of the stack's constants.
    stack_class: Option<u32>,
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
                let stack = f("stackTrace");
                Some(Plan {
                    stream,
                    time: f("startTime"),
                    thread: f(thread).or_else(|| f("eventThread")),
                    stack,
                    stack_class: stack.and_then(|i| ref_class(&c.fields[i])),
                    state: state.and_then(|always| Some((f("state")?, always))),
                    class: leaf.and_then(f),
                    value,
                    count: count.and_then(f),
                })
            })
            .collect()
    }
}

/// The class of the constants a field refers to, when it is a reference.
fn ref_class(field: &hprof_jfr::Field) -> Option<u32> {
    match field.ty {
        FieldType::Ref(class) if !field.array => Some(class),
        _ => None,
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

/// What a frame's `jdk.types.FrameType` says of a function whose class is a library's name.
#[derive(Clone, Copy)]
enum CodeKind {
    /// Java code: the class is a Java class after all.
    Java,
    /// Native code of this kind.
    Of(FrameKind),
}

/// Whether a JFR method's class (its raw name) is a library of native code, as
/// async-profiler and hprof write functions of native and kernel code: none, a file name
/// (`libjvm.so`: a class's name in the JVM's form has no dot), or `[kernel]`, `[stub]` (as
/// hprof wrote them before it wrote them bare: see `hprof_jfr::pools::bracketed_library`).
fn is_library(raw: &str) -> bool {
    raw.is_empty()
        || (raw.contains('.') && !raw.contains('/'))
        || (raw.starts_with('[') && raw.ends_with(']'))
}

/// A map from constant keys to small values: a table indexed by key where a class's keys in
/// the chunk are dense (as the JDK and async-profiler number stacks and threads), a hash map
/// for the rest. No entry holds `empty`.
struct KeyMap<V> {
    base: i64,
    dense: Vec<V>,
    sparse: FxHashMap<i64, V>,
    empty: V,
}

/// Most entries of a [`KeyMap`]'s table, and how much wider than its keys' count it may be.
const MAX_DENSE: i64 = 1 << 22;
const DENSE_SLACK: i64 = 4;

impl<V: Copy + PartialEq> KeyMap<V> {
    /// A map for the keys of the constants of `class` (none: a hash map alone).
    fn of_class(chunk: &Chunk<'_>, class: Option<u32>, empty: V) -> KeyMap<V> {
        let dense = class.and_then(|c| chunk.key_range(c)).and_then(|r| {
            let span = r.max.checked_sub(r.min)?.checked_add(1)?;
            (span <= MAX_DENSE && span <= DENSE_SLACK * i64::from(r.count) + 1024)
                .then_some((r.min, span as usize))
        });
        let (base, len) = dense.unwrap_or((0, 0));
        KeyMap {
            base,
            dense: vec![empty; len],
            sparse: FxHashMap::default(),
            empty,
        }
    }

    #[inline]
    fn get(&self, key: i64) -> Option<V> {
        let v = match self.dense.get(key.wrapping_sub(self.base) as u64 as usize) {
            Some(&v) if key >= self.base => v,
            _ => *self.sparse.get(&key)?,
        };
        (v != self.empty).then_some(v)
    }

    fn insert(&mut self, key: i64, v: V) {
        match self
            .dense
            .get_mut(key.wrapping_sub(self.base) as u64 as usize)
        {
            Some(slot) if key >= self.base => *slot = v,
            _ => {
                self.sparse.insert(key, v);
            }
        }
    }
}

/// What one chunk's constants have become, looked up once each.
struct Caches {
    /// Thread key to the timed thread.
    threads: KeyMap<u32>,
    /// Stack trace key to where its frames (recording frame indices, root first) are in
    /// `stack_frames`.
    stacks: FxHashMap<i64, (u32, u32)>,
    stack_frames: Vec<u32>,
    /// Room for a stack's frames as they are found, and for a composed stack.
    found: Vec<u32>,
    composing: Vec<u32>,
    methods: FxHashMap<i64, Option<MethodName>>,
    frames: FxHashMap<(i64, i32), u32>,
    /// Frame type key to the kind of code it marks (none: by the library).
    frame_types: FxHashMap<i64, Option<CodeKind>>,
    /// Class or state key to the recording frame of its pseudo-frame.
    pseudo: FxHashMap<(u32, i64), Option<u32>>,
    /// (stack, state, class, state always shown) keys to the timed stack.
    composed: FxHashMap<(i64, i64, i64, bool), u32>,
    /// The last (state, class, always shown) keys and their number in `variants`: most
    /// events of a type have one state and no class.
    last_variant: ((i64, i64, bool), u32),
    variants: FxHashMap<(i64, i64, bool), u32>,
    /// Stack key (of the class `stack_class`) to the timed stack of its last (variant,
    /// stack): one table look-up for an event whose variant is its stack's last.
    by_stack: KeyMap<(u32, u32)>,
    stack_class: Option<u32>,
    /// The last stack frame class and its fields' indices (see [`Reader::frame_layout`]).
    frame_layout: Option<(u32, [Option<usize>; 3])>,
    /// The last stack trace class and where its flat constants' figures are.
    stack_shape: Option<(u32, Option<StackShape>)>,
    /// A flat stack trace constant's figures (see [`Chunk::constant_numbers`]).
    numbers: Vec<i64>,
}

impl Caches {
    /// Empty caches for `chunk`, whose events name threads and stacks of the classes
    /// `thread_class` and `stack_class`.
    fn new(chunk: &Chunk<'_>, thread_class: Option<u32>, stack_class: Option<u32>) -> Caches {
        Caches {
            threads: KeyMap::of_class(chunk, thread_class, u32::MAX - 1),
            stacks: FxHashMap::default(),
            stack_frames: Vec::new(),
            found: Vec::new(),
            composing: Vec::new(),
            methods: FxHashMap::default(),
            frames: FxHashMap::default(),
            frame_types: FxHashMap::default(),
            pseudo: FxHashMap::default(),
            composed: FxHashMap::default(),
            last_variant: ((i64::MIN, i64::MIN, false), u32::MAX),
            variants: FxHashMap::default(),
            by_stack: KeyMap::of_class(chunk, stack_class, (u32::MAX, u32::MAX)),
            stack_class,
            frame_layout: None,
            stack_shape: None,
            numbers: Vec::new(),
        }
    }
}

/// Where a flat stack trace constant's figures are, as [`Chunk::constant_numbers`] reads
/// them: the count of frames at `frames`, then each frame's `width` figures (its method's key
/// at `method`, its line and type's key at `line` and `ty`, when it has them); a field after
/// the frames moves by their figures.
#[derive(Debug, Clone, Copy)]
struct StackShape {
    frames: usize,
    width: usize,
    truncated: Option<usize>,
    method: (usize, u32),
    line: Option<usize>,
    ty: Option<(usize, u32)>,
}

impl StackShape {
    /// The shape of the stack trace class `class`, when its constants are flat and its
    /// fields have the types the decoding of [`Reader::stack`] reads as numbers: `frames`
    /// the one array, `truncated` and a frame's `lineNumber` numbers, a frame's `method` and
    /// `type` keys.
    fn of(chunk: &Chunk<'_>, class: u32) -> Option<StackShape> {
        if !chunk.is_flat(class) {
            return None;
        }
        let c = chunk.class(class);
        let frames = c.field("frames")?;
        if c.fields.iter().filter(|f| f.array).count() != 1 || !c.fields[frames].array {
            return None;
        }
        let FieldType::Inline(frame_class) = c.fields[frames].ty else {
            return None;
        };
        let number = |f: &hprof_jfr::Field| !matches!(f.ty, FieldType::Ref(_));
        let truncated = match c.field("truncated") {
            Some(i) if !number(&c.fields[i]) => return None,
            t => t,
        };
        let frame = chunk.class(frame_class);
        let key = |name: &str| -> Option<Option<(usize, u32)>> {
            match frame.field(name) {
                None => Some(None),
                Some(i) => match frame.fields[i].ty {
                    FieldType::Ref(class) => Some(Some((i, class))),
                    _ => None,
                },
            }
        };
        let method = key("method")??;
        let ty = key("type")?;
        let line = match frame.field("lineNumber") {
            Some(i) if !number(&frame.fields[i]) => return None,
            l => l,
        };
        Some(StackShape {
            frames,
            width: frame.fields.len(),
            truncated,
            method,
            line,
            ty,
        })
    }
}

/// An event's fields as a [`Plan`] reads them: integers read straight from its body, or
/// decoded values.
trait Fields<'v> {
    /// The integer of field `i` (none: not a number).
    fn int(&self, i: usize) -> Option<i64>;
    /// The constant key of field `i` (none: not a reference).
    fn key(&self, i: usize) -> Option<i64>;
    /// Field `i` as a value, for what the caches lack.
    fn value(&self, i: usize) -> Option<Value<'v>>;
}

/// The leading fields of an event read as integers ([`Chunk::read_numbers`]).
struct Ints<'f> {
    ints: &'f [i64],
    fields: &'f [hprof_jfr::Field],
}

impl<'v> Fields<'v> for Ints<'_> {
    #[inline]
    fn int(&self, i: usize) -> Option<i64> {
        Some(self.ints[i])
    }

    #[inline]
    fn key(&self, i: usize) -> Option<i64> {
        Some(self.ints[i])
    }

    fn value(&self, i: usize) -> Option<Value<'v>> {
        match self.fields[i].ty {
            FieldType::Ref(class) => Some(Value::Ref {
                class,
                key: self.ints[i],
            }),
            _ => None,
        }
    }
}

/// The fields of an event decoded as values.
struct Values<'f, 'v>(&'f [Value<'v>]);

impl<'v> Fields<'v> for Values<'_, 'v> {
    fn int(&self, i: usize) -> Option<i64> {
        self.0.get(i)?.as_int()
    }

    fn key(&self, i: usize) -> Option<i64> {
        self.0.get(i)?.as_key()
    }

    fn value(&self, i: usize) -> Option<Value<'v>> {
        self.0.get(i).cloned()
    }
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
        let mut composed = std::mem::take(&mut self.caches.composing);
        composed.clear();
        if let Some(state) = state.and_then(|s| self.pseudo(s, true))
            && (keys.3 || state != self.runnable)
        {
            composed.push(state);
        }
        if let Some(v) = stack {
            let (start, len) = self.stack(v);
            composed.extend_from_slice(&self.caches.stack_frames[start as usize..][..len as usize]);
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
        self.caches.composing = composed;
        self.caches.composed.insert(keys, s);
        s
    }

    fn thread(&mut self, v: &Value<'_>) -> u32 {
        let Some(key) = v.as_key() else {
            return u32::MAX;
        };
        if let Some(t) = self.caches.threads.get(key) {
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

    /// Adds the event whose fields `f` reads to the stream of `plan`.
    #[inline]
    fn record<'v>(&mut self, plan: &Plan, f: &impl Fields<'v>) {
        let chunk = self.chunk;
        let time = plan
            .time
            .and_then(|i| f.int(i))
            .map_or(chunk.header.start_nanos, |t| chunk.nanos(t));
        let int = |i: usize| f.int(i).unwrap_or(0);
        let value = plan.value.of(chunk, int);
        let count = plan.count.map_or(1, int);
        let thread = match plan.thread.and_then(|i| Some((i, f.key(i)?))) {
            None => u32::MAX,
            Some((i, key)) => match self.caches.threads.get(key) {
                Some(t) => t,
                None => f.value(i).map_or(u32::MAX, |t| self.thread(&t)),
            },
        };
        let key = |i: Option<usize>| i.and_then(|i| f.key(i)).unwrap_or(i64::MIN);
        let (state_field, always) = plan.state.map_or((None, false), |(i, a)| (Some(i), a));
        let keys = (key(plan.stack), key(state_field), key(plan.class), always);
        let stack = self.composed(plan, keys, |i| f.value(i));
        self.timed.push(
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

    /// The timed stack of an event of `plan` whose stack, state, leaf class keys and whether
    /// its state is always shown are `keys` (its fields' values by `value`), found by one
    /// table look-up when its stack's last event had its state and class, else composed once
    /// (see [`Reader::compose`]).
    #[inline]
    fn composed<'v>(
        &mut self,
        plan: &Plan,
        keys: (i64, i64, i64, bool),
        value: impl Fn(usize) -> Option<Value<'v>>,
    ) -> u32 {
        let caches = &mut self.caches;
        let variant = (keys.1, keys.2, keys.3);
        let v = if caches.last_variant.0 == variant {
            caches.last_variant.1
        } else {
            let next = caches.variants.len() as u32;
            let v = *caches.variants.entry(variant).or_insert(next);
            caches.last_variant = (variant, v);
            v
        };
        let by_stack = plan.stack_class == caches.stack_class;
        if by_stack
            && let Some((last, s)) = caches.by_stack.get(keys.0)
            && last == v
        {
            return s;
        }
        let s = match caches.composed.get(&keys) {
            Some(&s) => s,
            None => {
                let (state_field, _) = plan.state.unzip();
                self.compose(
                    keys,
                    plan.stack.and_then(&value).as_ref(),
                    state_field.and_then(&value).as_ref(),
                    plan.class.and_then(&value).as_ref(),
                )
            }
        };
        if by_stack {
            self.caches.by_stack.insert(keys.0, (v, s));
        }
        s
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
            // (A bare `kernel` is `[kernel]`, unless its frame's type says Java: see `frame`.)
            let raw = hprof_jfr::pools::bracketed_library(&raw).unwrap_or(raw);
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

    /// Where the frames of a stack trace constant, root first, are in the chunk's stack
    /// frames: decoded as integers when its class is flat (see [`StackShape`]), else as
    /// values.
    fn stack(&mut self, v: &Value<'_>) -> (u32, u32) {
        let Some(key) = v.as_key() else {
            return (0, 0);
        };
        if let Some(&s) = self.caches.stacks.get(&key) {
            return s;
        }
        let mut frames = std::mem::take(&mut self.caches.found);
        frames.clear();
        if let Value::Ref { class, key } = *v
            && let Some(shape) = self.stack_shape(class)
        {
            self.flat_stack(class, key, shape, &mut frames);
        } else {
            self.stack_of_values(v, &mut frames);
        }
        // JFR lists frames top first.
        let all = &mut self.caches.stack_frames;
        let s = (all.len() as u32, frames.len() as u32);
        all.extend(frames.iter().rev());
        self.caches.found = frames;
        self.caches.stacks.insert(key, s);
        s
    }

    /// The shape of the stack trace class `class` (looked up once per chunk).
    fn stack_shape(&mut self, class: u32) -> Option<StackShape> {
        if let Some((c, shape)) = self.caches.stack_shape
            && c == class
        {
            return shape;
        }
        let shape = StackShape::of(self.chunk, class);
        self.caches.stack_shape = Some((class, shape));
        shape
    }

    /// The frames (top first) of the flat stack trace constant `key` of `class`, as
    /// [`Reader::stack_of_values`] finds them: none when it is missing or damaged.
    fn flat_stack(&mut self, class: u32, key: i64, shape: StackShape, frames: &mut Vec<u32>) {
        let mut numbers = std::mem::take(&mut self.caches.numbers);
        if let Ok(true) = self.chunk.constant_numbers(class, key, &mut numbers) {
            let n = numbers[shape.frames] as usize;
            frames.reserve(n + 1);
            let items = &numbers[shape.frames + 1..][..n * shape.width];
            for item in items.chunks_exact(shape.width) {
                let (method, method_class) = shape.method;
                let line = shape.line.map_or(0, |l| item[l]) as i32;
                let method = Value::Ref {
                    class: method_class,
                    key: item[method],
                };
                let ty = shape.ty.map(|(t, class)| Value::Ref {
                    class,
                    key: item[t],
                });
                frames.push(self.frame(&method, line, ty.as_ref()));
            }
            let truncated = shape.truncated.map(|t| {
                numbers[if t > shape.frames {
                    t + n * shape.width
                } else {
                    t
                }]
            });
            if truncated == Some(1) {
                frames.push(self.truncated());
            }
        }
        self.caches.numbers = numbers;
    }

    /// The frames (top first) of a stack trace constant decoded as values.
    fn stack_of_values(&mut self, v: &Value<'_>, frames: &mut Vec<u32>) {
        let chunk = self.chunk;
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
                frames.push(self.frame(method, line, get(ty)));
            }
            if field(chunk, &trace, "truncated").and_then(Value::as_int) == Some(1) {
                frames.push(self.truncated());
            }
        }
    }

    /// The pseudo-frame that ends a truncated stack.
    fn truncated(&mut self) -> u32 {
        self.recording
            .frame("<truncated>", FrameKind::Pseudo, None, None) as u32
    }

    /// The recording frame of a stack frame: its method, line and frame type.
    fn frame(&mut self, method: &Value<'_>, line: i32, ty: Option<&Value<'_>>) -> u32 {
        let method_key = method.as_key().unwrap_or(-1);
        if let Some(&i) = self.caches.frames.get(&(method_key, line)) {
            return i;
        }
        let (mut name, mut kind, mut library) = self
            .method(method)
            .unwrap_or_else(|| ("<unknown method>".into(), FrameKind::Pseudo, None));
        if kind == FrameKind::Native {
            // A library hprof and async-profiler write without its brackets (`kernel`).
            let bare = library
                .as_deref()
                .map(hprof_jfr::pools::library_class)
                .filter(|&bare| {
                    hprof_jfr::pools::bracketed_library(bare).as_deref() == library.as_deref()
                })
                .map(str::to_owned);
            match (self.code_kind(ty, library.as_deref()), bare) {
                (CodeKind::Java, Some(bare)) => {
                    // A Java class of the default package after all (`kernel.run`).
                    name = format!("{bare}{}", &name[bare.len() + 2..]);
                    kind = FrameKind::of_class(&bare);
                    library = None;
                }
                (CodeKind::Java, None) => {
                    kind = library.as_deref().map_or(kind, FrameKind::of_library)
                }
                (CodeKind::Of(k), _) => kind = k,
            }
        }
        let shown = u32::try_from(line).ok().filter(|&l| l > 0);
        let i = self.recording.frame(&name, kind, library.as_deref(), shown) as u32;
        self.caches.frames.insert((method_key, line), i);
        i
    }

    /// The kind of a function of native code of `library` by its frame's
    /// `jdk.types.FrameType`: `Kernel` is the kernel's, `C++` the JVM's (async-profiler's type
    /// for libjvm.so and the code cache's stubs), a Java type (interpreted, compiled, inlined)
    /// Java code, any other by its library.
    fn code_kind(&mut self, v: Option<&Value<'_>>, library: Option<&str>) -> CodeKind {
        let by_library = CodeKind::Of(library.map_or(FrameKind::Native, FrameKind::of_library));
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
            Some("Kernel") => Some(CodeKind::Of(FrameKind::Kernel)),
            Some("C++") => Some(CodeKind::Of(FrameKind::Jvm)),
            Some("Interpreted" | "JIT compiled" | "C1 compiled" | "Inlined") => {
                Some(CodeKind::Java)
            }
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
        timed.events[stream].append(events, |stack, thread| {
            let thread = if thread == u32::MAX {
                u32::MAX
            } else {
                threads[thread as usize]
            };
            (stacks[stack as usize], thread)
        });
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
        // The classes of the threads and stacks events name (the same for every event type).
        let first_class = |of: fn(&Plan) -> Option<usize>| {
            plans.iter().enumerate().find_map(|(class, plans)| {
                let field = of(plans.first()?)?;
                ref_class(&chunk.class(class as u32).fields[field])
            })
        };
        let caches = Caches::new(chunk, first_class(|p| p.thread), first_class(|p| p.stack));
        let mut reader = Reader {
            recording: &mut *recording,
            timed: std::mem::take(&mut timed),
            chunk,
            caches,
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
                let fields = Ints {
                    ints,
                    fields: &chunk.class(event.class).fields,
                };
                for plan in plans {
                    reader.record(plan, &fields);
                }
                continue;
            }
            if shallow[event.class as usize] {
                chunk.read_shallow(&event, &mut values).map_err(error)?;
            } else {
                chunk.read_event(&event, &mut values).map_err(error)?;
            }
            for plan in plans {
                reader.record(plan, &Values(&values));
            }
        }
        timed = reader.timed;
    }
    Ok(Part {
        frames: local,
        timed,
    })
}

#[cfg(test)]
mod tests {
    use hprof_jfr::pools::{FRAME_CPP, FRAME_JIT, FRAME_KERNEL, FRAME_NATIVE, FrameRef, Pools};
    use hprof_jfr::schema::{self, id};
    use hprof_jfr::writer::{self, Put};

    use crate::model::{FrameKind, Kind, Selection};
    use crate::read::Recording;

    /// One execution sample whose stack has a frame of each (class, method, frame type).
    fn one_sample(frames: &[(&str, &str, i64)]) -> Vec<u8> {
        let mut pools = Pools::new();
        let refs: Vec<FrameRef> = frames
            .iter()
            .map(|&(class, method, kind)| {
                let class = pools.class(class);
                FrameRef {
                    method: pools.method(class, method, "()V"),
                    line: 0,
                    bci: -1,
                    kind,
                }
            })
            .collect();
        let stack = pools.stack(&refs, false);
        let thread = pools.thread(1, 101, "main");
        let mut body = Vec::new();
        body.long(1_000);
        body.long(thread);
        body.long(stack);
        body.long(0);
        let mut events = Vec::new();
        writer::event(&mut events, id::EXECUTION_SAMPLE, &body);
        writer::chunk(
            1_700_000_000_000_000_000,
            1_000_000,
            0,
            1_000_000_000,
            &events,
            pools.constant_pools(),
            &schema::metadata(),
        )
    }

    #[test]
    fn bare_library_names_are_read_as_their_libraries_unless_the_frame_is_java() {
        // As async-profiler and hprof write them: `[kernel]` as `kernel` (JDK Mission Control
        // fails on a class name that starts with `[`), leaf first.
        let bytes = one_sample(&[
            ("kernel", "do_syscall_64", FRAME_KERNEL),
            ("stub", "call_stub", FRAME_CPP),
            ("vdso", "__vdso_clock_gettime", FRAME_NATIVE),
            ("libc.so.6", "write", FRAME_NATIVE),
            // A Java class of the default package with a library's name.
            ("kernel", "run", FRAME_JIT),
            ("Work", "main", FRAME_JIT),
        ]);
        let recording = Recording::read(&bytes).unwrap();
        let profile = recording.profile(Kind::Cpu, Selection::All, false).unwrap();
        let frames: Vec<(String, FrameKind)> = profile.samples[0]
            .stack
            .iter()
            .rev()
            .map(|&f| {
                let f = &profile.frames[f];
                (f.name.to_string(), f.kind)
            })
            .collect();
        let want = [
            ("[kernel].do_syscall_64", FrameKind::Kernel),
            ("[stub].call_stub", FrameKind::Jvm),
            ("[vdso].__vdso_clock_gettime", FrameKind::Native),
            ("libc.so.6.write", FrameKind::Native),
            ("kernel.run", FrameKind::Application),
            ("Work.main", FrameKind::Application),
        ];
        let want: Vec<(String, FrameKind)> =
            want.iter().map(|&(n, k)| (n.to_string(), k)).collect();
        assert_eq!(frames, want);
    }
}
