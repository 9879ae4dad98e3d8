//! Owns the types hprof writes into JFR recordings: the JDK's own (threads, classes, methods,
//! stack traces, and the events `jdk.ExecutionSample`, `jdk.NativeMethodSample`,
//! `jdk.ObjectAllocationSample`, `jdk.JavaMonitorEnter`, so the JDK's `jfr` tool and JMC show
//! them as they show the JDK's) and hprof's own events for the figures JFR has no event for
//! (exact allocation counts per site, CPU time and calls per trace, monitor time per trace).
//! The fields of each event are in the order [`crate::writer`]'s callers write them.

use crate::writer::{AnnotationDef, ClassDef, FieldDef, MetadataDef};

/// Class ids.
#[allow(missing_docs)]
pub mod id {
    pub const BOOLEAN: u64 = 4;
    pub const CHAR: u64 = 5;
    pub const FLOAT: u64 = 6;
    pub const DOUBLE: u64 = 7;
    pub const BYTE: u64 = 8;
    pub const SHORT: u64 = 9;
    pub const INT: u64 = 10;
    pub const LONG: u64 = 11;
    pub const STRING: u64 = 20;
    pub const THREAD: u64 = 21;
    pub const CLASS: u64 = 22;
    pub const CLASS_LOADER: u64 = 23;
    pub const SYMBOL: u64 = 24;
    pub const PACKAGE: u64 = 25;
    pub const METHOD: u64 = 26;
    pub const STACK_TRACE: u64 = 27;
    pub const STACK_FRAME: u64 = 28;
    pub const FRAME_TYPE: u64 = 29;
    pub const THREAD_STATE: u64 = 30;
    pub const THREAD_GROUP: u64 = 31;
    pub const MODULE: u64 = 32;

    pub const LABEL: u64 = 40;
    pub const DESCRIPTION: u64 = 41;
    pub const TIMESTAMP: u64 = 42;
    pub const TIMESPAN: u64 = 43;
    pub const UNSIGNED: u64 = 44;
    pub const DATA_AMOUNT: u64 = 45;
    pub const CATEGORY: u64 = 46;
    pub const NAME: u64 = 47;
    pub const EXPERIMENTAL: u64 = 48;
    pub const CONTENT_TYPE: u64 = 49;

    pub const EXECUTION_SAMPLE: u64 = 100;
    pub const NATIVE_METHOD_SAMPLE: u64 = 101;
    pub const OBJECT_ALLOCATION_SAMPLE: u64 = 102;
    pub const JAVA_MONITOR_ENTER: u64 = 103;
    pub const ALLOCATION_SITE: u64 = 110;
    pub const CPU_TIME: u64 = 111;
    pub const MONITOR_TIME: u64 = 112;
    pub const PROFILE_SETTINGS: u64 = 113;
    pub const ACTIVE_SETTING: u64 = 114;
}

/// Frame type keys of the `jdk.types.FrameType` pool.
pub const FRAME_TYPES: [(i64, &str); 6] = [
    (0, "Interpreted"),
    (1, "JIT compiled"),
    (2, "Inlined"),
    (3, "Native"),
    (4, "C++"),
    (5, "Kernel"),
];

/// Thread state keys of the `jdk.types.ThreadState` pool (the JDK's names, and two of
/// hprof's for JVMTI states the JDK's list lacks).
pub const THREAD_STATES: [(i64, &str); 10] = [
    (0, "STATE_RUNNABLE"),
    (1, "STATE_SLEEPING"),
    (2, "STATE_IN_OBJECT_WAIT"),
    (3, "STATE_IN_OBJECT_WAIT_TIMED"),
    (4, "STATE_PARKED"),
    (5, "STATE_PARKED_TIMED"),
    (6, "STATE_BLOCKED_ON_MONITOR_ENTER"),
    (7, "STATE_IN_NATIVE"),
    (8, "STATE_WAITING"),
    (9, "STATE_UNKNOWN"),
];

/// Thread states and the pseudo-frames hprof's wall-clock samples name them by (the root
/// frame of a `cpu=wall` sample); the first state of a frame is the one written.
pub const STATE_FRAMES: [(&str, &str); 10] = [
    ("STATE_RUNNABLE", "<RUNNABLE>"),
    ("STATE_SLEEPING", "<SLEEPING>"),
    ("STATE_IN_OBJECT_WAIT", "<WAITING in Object.wait>"),
    ("STATE_IN_OBJECT_WAIT_TIMED", "<WAITING in Object.wait>"),
    ("STATE_PARKED", "<PARKED>"),
    ("STATE_PARKED_TIMED", "<PARKED>"),
    ("STATE_BLOCKED_ON_MONITOR_ENTER", "<BLOCKED>"),
    ("STATE_IN_NATIVE", "<RUNNABLE in native>"),
    ("STATE_WAITING", "<WAITING>"),
    ("STATE_UNKNOWN", "<unknown state>"),
];

/// The pseudo-frame of a thread state (`STATE_SLEEPING`: `<SLEEPING>`); an unknown state
/// as `<NAME>` without its `STATE_` prefix.
pub fn state_frame(state: &str) -> String {
    STATE_FRAMES.iter().find(|(s, _)| *s == state).map_or_else(
        || format!("<{}>", state.strip_prefix("STATE_").unwrap_or(state)),
        |(_, f)| f.to_string(),
    )
}

/// The key (in [`THREAD_STATES`]) of the state a pseudo-frame names, if it names one.
pub fn state_key(frame: &str) -> Option<i64> {
    let state = STATE_FRAMES.iter().find(|(_, f)| *f == frame)?.0;
    THREAD_STATES
        .iter()
        .find(|(_, s)| *s == state)
        .map(|&(k, _)| k)
}

fn ann(class: u64, value: Option<&str>) -> AnnotationDef {
    AnnotationDef {
        class,
        value: value.map(str::to_string),
        values: Vec::new(),
    }
}

fn label(text: &str) -> AnnotationDef {
    ann(id::LABEL, Some(text))
}

/// A field: `name` of class `class` (a constant-pool reference for `pool`), labelled, with
/// more annotations.
fn field(name: &str, class: u64, pool: bool, text: &str, more: &[AnnotationDef]) -> FieldDef {
    let mut annotations = vec![label(text)];
    annotations.extend_from_slice(more);
    FieldDef {
        name: name.into(),
        class,
        constant_pool: pool,
        array: false,
        annotations,
    }
}

fn class(id: u64, name: &str, text: Option<&str>, fields: Vec<FieldDef>) -> ClassDef {
    ClassDef {
        id,
        name: name.into(),
        super_type: None,
        simple: false,
        fields,
        annotations: text.map(label).into_iter().collect(),
    }
}

/// `class` as a simple type: its one field stands for it.
fn simple(mut class: ClassDef) -> ClassDef {
    class.simple = true;
    class
}

/// An annotation class marked as a content type (the JDK's tools format the values of
/// fields it annotates: times, durations, sizes).
fn content_type(mut class: ClassDef) -> ClassDef {
    class.annotations.push(ann(id::CONTENT_TYPE, None));
    class
}

/// An annotation class; `value`: whether it has a value (`Some(true)`: an array of them).
fn annotation_class(id: u64, name: &str, value: Option<bool>) -> ClassDef {
    ClassDef {
        id,
        name: name.into(),
        super_type: Some("java.lang.annotation.Annotation".into()),
        simple: false,
        fields: value
            .map(|array| FieldDef {
                name: "value".into(),
                class: id::STRING,
                constant_pool: false,
                array,
                annotations: Vec::new(),
            })
            .into_iter()
            .collect(),
        annotations: Vec::new(),
    }
}

fn start_time() -> FieldDef {
    field(
        "startTime",
        id::LONG,
        false,
        "Start Time",
        &[ann(id::TIMESTAMP, Some("TICKS"))],
    )
}

fn duration() -> FieldDef {
    field(
        "duration",
        id::LONG,
        false,
        "Duration",
        &[ann(id::TIMESPAN, Some("TICKS"))],
    )
}

/// An event type: its `startTime` (and `duration` when `timed`) and its fields.
fn event(
    id: u64,
    name: &str,
    text: &str,
    category: &[&str],
    timed: bool,
    mut fields: Vec<FieldDef>,
) -> ClassDef {
    let mut all = vec![start_time()];
    if timed {
        all.push(duration());
    }
    all.append(&mut fields);
    let mut annotations = vec![label(text)];
    let mut cat = ann(id::CATEGORY, None);
    cat.values = category.iter().map(|c| c.to_string()).collect();
    annotations.push(cat);
    ClassDef {
        id,
        name: name.into(),
        super_type: Some("jdk.jfr.Event".into()),
        simple: false,
        fields: all,
        annotations,
    }
}

fn thread_field(name: &str, text: &str) -> FieldDef {
    field(name, id::THREAD, true, text, &[])
}

fn stack_field() -> FieldDef {
    field("stackTrace", id::STACK_TRACE, true, "Stack Trace", &[])
}

fn bytes_field(name: &str, text: &str) -> FieldDef {
    field(
        name,
        id::LONG,
        false,
        text,
        &[ann(id::DATA_AMOUNT, Some("BYTES"))],
    )
}

/// Every class hprof writes.
pub fn metadata() -> MetadataDef {
    let primitives = [
        (id::BOOLEAN, "boolean"),
        (id::CHAR, "char"),
        (id::FLOAT, "float"),
        (id::DOUBLE, "double"),
        (id::BYTE, "byte"),
        (id::SHORT, "short"),
        (id::INT, "int"),
        (id::LONG, "long"),
        (id::STRING, "java.lang.String"),
    ];
    let mut classes: Vec<ClassDef> = primitives
        .iter()
        .map(|&(i, n)| class(i, n, None, Vec::new()))
        .collect();
    let string = |name: &str, text: &str| field(name, id::STRING, false, text, &[]);
    let mut stack_trace = class(
        id::STACK_TRACE,
        "jdk.types.StackTrace",
        Some("Stack Trace"),
        vec![
            field("truncated", id::BOOLEAN, false, "Truncated", &[]),
            field("frames", id::STACK_FRAME, false, "Stack Frames", &[]),
        ],
    );
    stack_trace.fields[1].array = true;
    classes.extend([
        class(
            id::THREAD,
            "java.lang.Thread",
            Some("Thread"),
            vec![
                string("osName", "OS Thread Name"),
                field("osThreadId", id::LONG, false, "OS Thread Id", &[]),
                string("javaName", "Java Thread Name"),
                field("javaThreadId", id::LONG, false, "Java Thread Id", &[]),
                field("group", id::THREAD_GROUP, true, "Java Thread Group", &[]),
            ],
        ),
        class(
            id::THREAD_GROUP,
            "jdk.types.ThreadGroup",
            Some("Thread Group"),
            vec![
                field("parent", id::THREAD_GROUP, true, "Parent", &[]),
                string("name", "Name"),
            ],
        ),
        class(
            id::CLASS,
            "java.lang.Class",
            Some("Java Class"),
            vec![
                field("classLoader", id::CLASS_LOADER, true, "Class Loader", &[]),
                field("name", id::SYMBOL, true, "Name", &[]),
                field("package", id::PACKAGE, true, "Package", &[]),
                field("modifiers", id::INT, false, "Access Modifiers", &[]),
                field("hidden", id::BOOLEAN, false, "Hidden", &[]),
            ],
        ),
        class(
            id::CLASS_LOADER,
            "jdk.types.ClassLoader",
            Some("Java Class Loader"),
            vec![
                field("type", id::CLASS, true, "Type", &[]),
                field("name", id::SYMBOL, true, "Name", &[]),
            ],
        ),
        simple(class(
            id::SYMBOL,
            "jdk.types.Symbol",
            Some("Symbol"),
            vec![string("string", "String")],
        )),
        class(
            id::PACKAGE,
            "jdk.types.Package",
            Some("Package"),
            vec![
                field("name", id::SYMBOL, true, "Name", &[]),
                field("module", id::MODULE, true, "Module", &[]),
                field("exported", id::BOOLEAN, false, "Exported", &[]),
            ],
        ),
        class(
            id::MODULE,
            "jdk.types.Module",
            Some("Module"),
            vec![
                field("name", id::SYMBOL, true, "Name", &[]),
                field("version", id::SYMBOL, true, "Version", &[]),
                field("location", id::SYMBOL, true, "Location", &[]),
                field("classLoader", id::CLASS_LOADER, true, "Class Loader", &[]),
            ],
        ),
        class(
            id::METHOD,
            "jdk.types.Method",
            Some("Java Method"),
            vec![
                field("type", id::CLASS, true, "Type", &[]),
                field("name", id::SYMBOL, true, "Name", &[]),
                field("descriptor", id::SYMBOL, true, "Descriptor", &[]),
                field("modifiers", id::INT, false, "Access Modifiers", &[]),
                field("hidden", id::BOOLEAN, false, "Hidden", &[]),
            ],
        ),
        stack_trace,
        class(
            id::STACK_FRAME,
            "jdk.types.StackFrame",
            None,
            vec![
                field("method", id::METHOD, true, "Java Method", &[]),
                field("lineNumber", id::INT, false, "Line Number", &[]),
                field("bytecodeIndex", id::INT, false, "Bytecode Index", &[]),
                field("type", id::FRAME_TYPE, true, "Frame Type", &[]),
            ],
        ),
        simple(class(
            id::FRAME_TYPE,
            "jdk.types.FrameType",
            Some("Frame type"),
            vec![string("description", "Description")],
        )),
        simple(class(
            id::THREAD_STATE,
            "jdk.types.ThreadState",
            Some("Java Thread State"),
            vec![string("name", "Name")],
        )),
        annotation_class(id::LABEL, "jdk.jfr.Label", Some(false)),
        annotation_class(id::DESCRIPTION, "jdk.jfr.Description", Some(false)),
        annotation_class(id::CONTENT_TYPE, "jdk.jfr.ContentType", None),
        content_type(annotation_class(
            id::TIMESTAMP,
            "jdk.jfr.Timestamp",
            Some(false),
        )),
        content_type(annotation_class(
            id::TIMESPAN,
            "jdk.jfr.Timespan",
            Some(false),
        )),
        content_type(annotation_class(id::UNSIGNED, "jdk.jfr.Unsigned", None)),
        content_type(annotation_class(
            id::DATA_AMOUNT,
            "jdk.jfr.DataAmount",
            Some(false),
        )),
        annotation_class(id::CATEGORY, "jdk.jfr.Category", Some(true)),
        annotation_class(id::NAME, "jdk.jfr.Name", Some(false)),
        annotation_class(id::EXPERIMENTAL, "jdk.jfr.Experimental", None),
    ]);
    let profiling = ["Java Virtual Machine", "Profiling"];
    let hprof = ["HPROF"];
    classes.extend([
        event(
            id::EXECUTION_SAMPLE,
            "jdk.ExecutionSample",
            "Method Profiling Sample",
            &profiling,
            false,
            vec![
                thread_field("sampledThread", "Thread"),
                stack_field(),
                field("state", id::THREAD_STATE, true, "Thread State", &[]),
            ],
        ),
        event(
            id::NATIVE_METHOD_SAMPLE,
            "jdk.NativeMethodSample",
            "Method Profiling Sample Native",
            &profiling,
            false,
            vec![
                thread_field("sampledThread", "Thread"),
                stack_field(),
                field("state", id::THREAD_STATE, true, "Thread State", &[]),
            ],
        ),
        event(
            id::OBJECT_ALLOCATION_SAMPLE,
            "jdk.ObjectAllocationSample",
            "Object Allocation Sample",
            &["Java Application"],
            false,
            vec![
                thread_field("eventThread", "Event Thread"),
                stack_field(),
                field("objectClass", id::CLASS, true, "Object Class", &[]),
                bytes_field("weight", "Sample Weight"),
            ],
        ),
        event(
            id::JAVA_MONITOR_ENTER,
            "jdk.JavaMonitorEnter",
            "Java Monitor Blocked",
            &["Java Application"],
            true,
            vec![
                thread_field("eventThread", "Event Thread"),
                stack_field(),
                field("monitorClass", id::CLASS, true, "Monitor Class", &[]),
                thread_field("previousOwner", "Previous Monitor Owner"),
                field(
                    "address",
                    id::LONG,
                    false,
                    "Monitor Address",
                    &[ann(id::UNSIGNED, None)],
                ),
            ],
        ),
        event(
            id::ALLOCATION_SITE,
            "hprof.AllocationSite",
            "Allocation Site",
            &hprof,
            false,
            vec![
                stack_field(),
                field("objectClass", id::CLASS, true, "Object Class", &[]),
                bytes_field("allocatedBytes", "Allocated Bytes"),
                field(
                    "allocatedObjects",
                    id::LONG,
                    false,
                    "Allocated Objects",
                    &[],
                ),
                bytes_field("liveBytes", "Live Bytes"),
                field("liveObjects", id::LONG, false, "Live Objects", &[]),
            ],
        ),
        event(
            id::CPU_TIME,
            "hprof.CpuTime",
            "CPU Time by Trace",
            &hprof,
            false,
            vec![
                stack_field(),
                field(
                    "selfTime",
                    id::LONG,
                    false,
                    "Self Time",
                    &[ann(id::TIMESPAN, Some("NANOSECONDS"))],
                ),
                field("calls", id::LONG, false, "Calls", &[]),
            ],
        ),
        event(
            id::MONITOR_TIME,
            "hprof.MonitorTime",
            "Monitor Time by Trace",
            &hprof,
            false,
            vec![
                stack_field(),
                field(
                    "blockedTime",
                    id::LONG,
                    false,
                    "Time Blocked",
                    &[ann(id::TIMESPAN, Some("NANOSECONDS"))],
                ),
                field("contentions", id::LONG, false, "Contended Entries", &[]),
            ],
        ),
        event(
            id::PROFILE_SETTINGS,
            "hprof.Settings",
            "HPROF Options",
            &hprof,
            false,
            vec![string("options", "Options")],
        ),
        // The JDK's record of each event type's settings (`enabled`, `period`, `threshold`):
        // JDK Mission Control's analysis reads them (its hot-methods rule needs the sampling
        // period) and names what a recording has on from them.
        event(
            id::ACTIVE_SETTING,
            "jdk.ActiveSetting",
            "Recording Setting",
            &["Flight Recorder"],
            true,
            vec![
                thread_field("eventThread", "Event Thread"),
                stack_field(),
                field("id", id::LONG, false, "Event Id", &[]),
                string("name", "Setting Name"),
                string("value", "Setting Value"),
            ],
        ),
    ]);
    MetadataDef { classes }
}
