//! heap=dump in the text layout: HEAP DUMP BEGIN … END with ROOT, OBJ, ARR and CLS lines for
//! java/src/HeapPopulation.java's known population (the binary dump is checked against jcmd
//! in crates/cli/tests/e2e_heap_dump.rs).

use std::collections::{HashMap, HashSet};
use std::process::Stdio;

use hprof_format::{HeapRecord, IdSize, Record, Records, java_class_name};
use hprof_testkit::java::{kill, start_until_ready};

use crate::support::{
    JavaRun, Jdk, agentpath, finish, java_command, jdk17, jdks, read_text, text_output,
};

#[test]
fn text_heap_dump_lists_roots_objects_arrays_and_classes() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = java_command(
        &jdk17(),
        dir.path(),
        &[&agentpath("heap=dump")],
        "HeapPopulation",
        &[],
    );
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, _) = start_until_ready(command);
    drop(child.stdin.take()); // HeapPopulation returns when its input closes
    let run = finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains("Dumping Java heap ... done."),
        "{}",
        run.stderr
    );
    let text = read_text(&text_output(dir.path()));
    let lines: Vec<&str> = text.lines().collect();
    let begin = lines
        .iter()
        .position(|l| l.starts_with("HEAP DUMP BEGIN ("))
        .expect("HEAP DUMP BEGIN");
    let end = lines
        .iter()
        .position(|l| *l == "HEAP DUMP END")
        .expect("HEAP DUMP END");
    let dump = &lines[begin + 1..end];
    let objects = dump
        .iter()
        .filter(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .count();
    let counts: Vec<u64> = lines[begin]
        .trim_start_matches("HEAP DUMP BEGIN (")
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(counts[0], objects as u64, "{}", lines[begin]);

    // Roots first, then objects and arrays, then classes.
    let last_root = dump.iter().rposition(|l| l.starts_with("ROOT ")).unwrap();
    let first_object = dump
        .iter()
        .position(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .unwrap();
    let last_object = dump
        .iter()
        .rposition(|l| l.starts_with("OBJ ") || l.starts_with("ARR "))
        .unwrap();
    let first_class = dump.iter().position(|l| l.starts_with("CLS ")).unwrap();
    assert!(last_root < first_object && last_object < first_class);
    // At exit main has ended; the thread that runs the exit is still a root.
    assert!(
        dump.iter()
            .any(|l| l.starts_with("ROOT ") && l.contains("(kind=<thread>, id=2000")),
        "a thread root"
    );
    assert!(
        dump.iter()
            .any(|l| l.contains("(kind=<system class>, name=java.lang.Object)"))
    );

    // 12345 Nodes of 56 bytes, each with its `leaf` reference (and `next` but for the last).
    let nodes: Vec<usize> = dump
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("OBJ ") && l.contains("class=HeapPopulation$Node@"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(nodes.len(), 12345);
    assert!(nodes.iter().all(|&i| dump[i].contains("(sz=56, ")));
    assert!(nodes.iter().all(|&i| {
        dump[i + 1..]
            .iter()
            .take(2)
            .any(|l| l.starts_with("\tleaf\t\t"))
    }));
    assert_eq!(
        nodes
            .iter()
            .filter(|&&i| dump[i + 1..]
                .iter()
                .take(2)
                .any(|l| l.starts_with("\tnext\t\t")))
            .count(),
        12344
    );

    // 50 Node[7] arrays with 3 elements set: true length, trailing nulls included.
    let arrays: Vec<usize> = dump
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("ARR ") && l.contains("elem type=HeapPopulation$Node[]@"))
        .map(|(i, _)| i)
        .collect();
    assert_eq!(arrays.len(), 50);
    for &i in &arrays {
        assert!(dump[i].contains(", nelems=7, "), "{}", dump[i]);
        let elements: Vec<&&str> = dump[i + 1..]
            .iter()
            .take_while(|l| l.starts_with("\t["))
            .collect();
        assert_eq!(elements.len(), 3, "{elements:?}");
    }
    // Primitive arrays with their real size: HeapPopulation's 100 int[10] (56 bytes each),
    // among the JDK's own.
    let ints = dump
        .iter()
        .filter(|l| l.starts_with("ARR ") && l.ends_with(", nelems=10, elem type=int[])"))
        .count();
    assert!(ints >= 100, "{ints}");
    assert!(
        dump.iter()
            .filter(|l| l.ends_with(", nelems=10, elem type=int[])"))
            .all(|l| l.contains("(sz=56, "))
    );

    // The program's class, with its static references.
    let cls = dump
        .iter()
        .position(|l| l.starts_with("CLS ") && l.contains("(name=HeapPopulation, "))
        .unwrap();
    let body: Vec<&&str> = dump[cls + 1..]
        .iter()
        .take_while(|l| l.starts_with('\t'))
        .collect();
    assert!(
        body.iter()
            .any(|l| l.starts_with("\tstatic staticString\t")),
        "{body:?}"
    );
    assert!(
        body.iter().any(|l| l.starts_with("\tsuper\t\t")),
        "{body:?}"
    );
}

// ---------------------------------------------------------------------------------------------
// The JVM's own dumper: thread stacks, frame roots, consistent ids (java/src/ThreadStacks.java).

/// What a binary profile holds, indexed for checks.
#[derive(Default)]
struct Binary {
    strings: HashMap<u64, String>,
    /// class serial → class ids it was given (one per LOAD CLASS).
    class_serials: HashMap<u32, Vec<u64>>,
    /// class id → name (object ids are addresses at each dump: a later dump's LOAD CLASS may
    /// reuse an id).
    class_names: HashMap<u64, String>,
    /// class serial → the names its LOAD CLASS records give.
    serial_names: HashMap<u32, HashSet<String>>,
    /// frame id → (method, class serial, line).
    frames: HashMap<u64, (String, u32, i32)>,
    /// trace serial → (thread serial, frame ids).
    traces: HashMap<u32, (u32, Vec<u64>)>,
    /// thread serial → name.
    threads: HashMap<u32, String>,
    /// Every heap dump: its sub-records, owned.
    dumps: Vec<Vec<Sub>>,
    /// Trace serials named by CPU SAMPLES and ALLOC SITES, and class serials by ALLOC SITES.
    sample_traces: Vec<u32>,
    site_classes: Vec<u32>,
    /// Frame ids named by STACK TRACEs, class serials by STACK FRAMEs, STRING ids by records.
    trace_frames: Vec<u64>,
    frame_classes: Vec<u32>,
    string_refs: Vec<u64>,
    /// OBJECT SITES groups: (the index of the dump before them, class serial, trace serial,
    /// object ids).
    object_sites: Vec<(usize, u32, u32, Vec<u64>)>,
}

/// A heap dump sub-record, owned.
#[derive(Debug, Clone)]
enum Sub {
    ThreadRoot {
        object: u64,
        thread: u32,
        trace: u32,
    },
    FrameRoot {
        object: u64,
        thread: u32,
        frame: u32,
    },
    OtherRoot {
        thread: Option<u32>,
    },
    Class {
        id: u64,
        trace: u32,
        names: Vec<u64>,
        superclass: u64,
    },
    Instance {
        id: u64,
        trace: u32,
        class: u64,
        values: Vec<u8>,
    },
    Array {
        id: u64,
        trace: u32,
        class: Option<u64>,
    },
}

impl Binary {
    fn read(path: &std::path::Path) -> Binary {
        let mut bytes = std::fs::read(path).unwrap();
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let mut plain = Vec::new();
            std::io::Read::read_to_end(
                &mut flate2::read::MultiGzDecoder::new(&bytes[..]),
                &mut plain,
            )
            .unwrap();
            bytes = plain;
        }
        let (_, mut records) = Records::new(&bytes).unwrap();
        let mut b = Binary::default();
        let mut open = false;
        while let Some((_, record)) = records.next().unwrap() {
            match record {
                Record::Utf8 { id, text } => {
                    b.strings
                        .insert(id, String::from_utf8_lossy(text).into_owned());
                }
                Record::LoadClass {
                    class_serial,
                    class_id,
                    name_id,
                    ..
                } => {
                    b.class_serials
                        .entry(class_serial)
                        .or_default()
                        .push(class_id);
                    b.string_refs.push(name_id);
                    let name = java_class_name(&b.strings[&name_id]);
                    b.serial_names
                        .entry(class_serial)
                        .or_default()
                        .insert(name.clone());
                    b.class_names.insert(class_id, name);
                }
                Record::StackFrame {
                    frame_id,
                    method_name_id,
                    signature_id,
                    source_file_id,
                    class_serial,
                    line,
                } => {
                    b.string_refs.extend([method_name_id, signature_id]);
                    if source_file_id != 0 {
                        b.string_refs.push(source_file_id);
                    }
                    b.frame_classes.push(class_serial);
                    let method = b.strings[&method_name_id].clone();
                    b.frames.insert(frame_id, (method, class_serial, line));
                }
                Record::StackTrace {
                    serial,
                    thread_serial,
                    frames,
                } => {
                    let ids: Vec<u64> = frames.iter().collect();
                    b.trace_frames.extend(&ids);
                    b.traces.insert(serial, (thread_serial, ids));
                }
                Record::StartThread {
                    thread_serial,
                    name_id,
                    ..
                } => {
                    b.threads.insert(thread_serial, b.strings[&name_id].clone());
                }
                Record::CpuSamples { traces, .. } => {
                    b.sample_traces.extend(traces.iter().map(|(_, t)| t));
                }
                Record::AllocSites(sites) => {
                    for site in sites.sites() {
                        b.sample_traces.push(site.stack_trace_serial);
                        b.site_classes.push(site.class_serial);
                    }
                }
                Record::HeapDump(body) | Record::HeapDumpSegment(body) => {
                    if !open {
                        b.dumps.push(Vec::new());
                        open = matches!(record, Record::HeapDumpSegment(_));
                    }
                    let dump = b.dumps.last_mut().unwrap();
                    let mut heap = body.records(IdSize::Eight);
                    while let Some((_, sub)) = heap.next().unwrap() {
                        dump.push(match sub {
                            HeapRecord::RootThreadObject {
                                thread_object_id,
                                thread_serial,
                                stack_trace_serial,
                            } => Sub::ThreadRoot {
                                object: thread_object_id,
                                thread: thread_serial,
                                trace: stack_trace_serial,
                            },
                            HeapRecord::RootJavaFrame {
                                object_id,
                                thread_serial,
                                frame_number,
                            } => Sub::FrameRoot {
                                object: object_id,
                                thread: thread_serial,
                                frame: frame_number,
                            },
                            HeapRecord::RootJniLocal { thread_serial, .. }
                            | HeapRecord::RootNativeStack { thread_serial, .. }
                            | HeapRecord::RootThreadBlock { thread_serial, .. } => Sub::OtherRoot {
                                thread: Some(thread_serial),
                            },
                            HeapRecord::RootUnknown { .. }
                            | HeapRecord::RootJniGlobal { .. }
                            | HeapRecord::RootStickyClass { .. }
                            | HeapRecord::RootMonitorUsed { .. } => Sub::OtherRoot { thread: None },
                            HeapRecord::ClassDump(c) => Sub::Class {
                                id: c.class_id,
                                trace: c.stack_trace_serial,
                                names: c
                                    .static_fields()
                                    .map(|(n, _)| n)
                                    .chain(c.instance_fields().map(|(n, _)| n))
                                    .collect(),
                                superclass: c.super_class_id,
                            },
                            HeapRecord::InstanceDump {
                                object_id,
                                stack_trace_serial,
                                class_id,
                                values,
                            } => Sub::Instance {
                                id: object_id,
                                trace: stack_trace_serial,
                                class: class_id,
                                values: values.to_vec(),
                            },
                            HeapRecord::ObjectArrayDump {
                                array_id,
                                stack_trace_serial,
                                array_class_id,
                                ..
                            } => Sub::Array {
                                id: array_id,
                                trace: stack_trace_serial,
                                class: Some(array_class_id),
                            },
                            HeapRecord::PrimitiveArrayDump {
                                array_id,
                                stack_trace_serial,
                                ..
                            } => Sub::Array {
                                id: array_id,
                                trace: stack_trace_serial,
                                class: None,
                            },
                        });
                    }
                }
                Record::HeapDumpEnd => open = false,
                Record::ObjectSites(sites) => {
                    for g in sites.groups() {
                        b.object_sites.push((
                            b.dumps.len().saturating_sub(1),
                            g.class_serial,
                            g.stack_trace_serial,
                            g.objects.iter().collect(),
                        ));
                    }
                }
                _ => {}
            }
        }
        b
    }

    /// The serial of the thread named `name`.
    fn thread(&self, name: &str) -> u32 {
        *self
            .threads
            .iter()
            .find(|(_, n)| *n == name)
            .unwrap_or_else(|| panic!("no START THREAD for {name}: {:?}", self.threads))
            .0
    }

    /// (method, class name, line) of each frame of a trace, innermost first.
    fn stack(&self, trace: u32) -> Vec<(String, String, i32)> {
        let (_, frames) = &self.traces[&trace];
        frames
            .iter()
            .map(|f| {
                let (method, class_serial, line) = &self.frames[f];
                let class = self.class_serials[class_serial]
                    .iter()
                    .find_map(|id| self.class_names.get(id))
                    .cloned()
                    .unwrap_or_default();
                (method.clone(), class, *line)
            })
            .collect()
    }
}

/// The line of java/src/ThreadStacks.java that holds `marker`.
fn source_line(marker: &str) -> i32 {
    let source = std::fs::read_to_string(
        hprof_testkit::java::repo_root().join("java/src/ThreadStacks.java"),
    )
    .unwrap();
    source
        .lines()
        .position(|l| l.contains(marker))
        .map(|i| i as i32 + 1)
        .unwrap()
}

/// Runs ThreadStacks under `options` to its end (after `before_end` with its pid); returns
/// the run and the directory holding `dump.hprof`.
fn run_thread_stacks(
    jdk: &Jdk,
    options: &str,
    jvm: &[&str],
    args: &[&str],
    before_end: impl FnOnce(u32, &std::path::Path),
) -> (JavaRun, tempfile::TempDir) {
    run_thread_stacks_into("dump.hprof", jdk, options, jvm, args, before_end)
}

/// [`run_thread_stacks`], with the profile written to `file` in the directory.
fn run_thread_stacks_into(
    file: &str,
    jdk: &Jdk,
    options: &str,
    jvm: &[&str],
    args: &[&str],
    before_end: impl FnOnce(u32, &std::path::Path),
) -> (JavaRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath(&format!(
        "{options},file={}",
        dir.path().join(file).display()
    ));
    let mut jvm_options: Vec<&str> = jvm.to_vec();
    jvm_options.push(&agent);
    let mut command = java_command(jdk, dir.path(), &jvm_options, "ThreadStacks", args);
    command.stdin(Stdio::piped()).stderr(Stdio::piped());
    let (mut child, pid) = start_until_ready(command);
    before_end(pid, dir.path());
    drop(child.stdin.take());
    (finish(child), dir)
}

/// The values of the one INSTANCE DUMP of each Marker, by its kind: (object id).
fn markers(b: &Binary, dump: &[Sub]) -> HashMap<i32, u64> {
    let class = b
        .class_names
        .iter()
        .filter(|(_, n)| *n == "ThreadStacks$Marker")
        .map(|(id, _)| *id)
        .collect::<Vec<_>>();
    dump.iter()
        .filter_map(|s| match s {
            Sub::Instance {
                id,
                class: c,
                values,
                ..
            } if class.contains(c) => {
                Some((i32::from_be_bytes(values[..4].try_into().unwrap()), *id))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn threads_stacks_are_in_the_dump_with_their_frames_and_locals() {
    let sleep_line = source_line("// SLEEP-LINE");
    let wait_line = source_line("// WAIT-LINE");
    for jdk in jdks() {
        let what = format!("JDK {}", jdk.version);
        let (run, dir) = run_thread_stacks(&jdk, "heap=dump,format=b", &[], &[], |_, _| {});
        assert!(
            !run.stderr.contains("HPROF WARNING"),
            "{what}: {}",
            run.stderr
        );
        let b = checked_dumps(&run, &dir.path().join("dump.hprof"), 1, &what);
        let dump = &b.dumps[0];
        let sleeper = b.thread("stack-sleeper");
        let waiter = b.thread("stack-waiter");
        let root = |thread: u32| {
            dump.iter()
                .find_map(|s| match s {
                    Sub::ThreadRoot {
                        thread: t,
                        trace,
                        object,
                    } if *t == thread => Some((*trace, *object)),
                    _ => None,
                })
                .unwrap_or_else(|| panic!("{what}: no ROOT THREAD OBJECT for {thread}"))
        };

        // The sleeper: Thread.sleep's frames, then sleepHolding at its line, deeper x4, sleeper.
        let (trace, thread_object) = root(sleeper);
        assert_eq!(b.traces[&trace].0, sleeper, "{what}");
        let stack = b.stack(trace);
        let at = |method: &str| {
            stack
                .iter()
                .position(|(m, c, _)| m == method && c == "ThreadStacks")
                .unwrap_or_else(|| panic!("{what}: no {method} in {stack:?}"))
        };
        let holding = at("sleepHolding");
        assert!(holding >= 1, "{what}: {stack:?}");
        assert!(
            stack[..holding]
                .iter()
                .all(|(_, c, _)| c == "java.lang.Thread"),
            "{what}: {stack:?}"
        );
        assert_eq!(stack[holding].2, sleep_line, "{what}: {stack:?}");
        for depth in 1..=4 {
            assert_eq!(stack[holding + depth].0, "deeper", "{what}: {stack:?}");
        }
        assert_eq!(stack[holding + 5].0, "sleeper", "{what}: {stack:?}");
        // The thread object is the sleeper's Thread.
        assert!(
            dump.iter()
                .any(|s| matches!(s, Sub::Instance { id, .. } if *id == thread_object)),
            "{what}"
        );

        // Its locals: kind 2 only in sleepHolding's frame; kind 1 in sleepHolding's and in
        // every deeper's (a parameter of each).
        let marker = markers(&b, dump);
        let frames_of = |object: u64| {
            let mut frames: Vec<(u32, u32)> = dump
                .iter()
                .filter_map(|s| match s {
                    Sub::FrameRoot {
                        object: o,
                        thread,
                        frame,
                    } if *o == object => Some((*thread, *frame)),
                    _ => None,
                })
                .collect();
            frames.sort();
            frames.dedup();
            frames
        };
        assert_eq!(
            frames_of(marker[&2]),
            vec![(sleeper, holding as u32)],
            "{what}"
        );
        let expected: Vec<(u32, u32)> = (holding..=holding + 4)
            .map(|f| (sleeper, f as u32))
            .collect();
        let found = frames_of(marker[&1]);
        assert!(
            expected.iter().all(|f| found.contains(f)),
            "{what}: {found:?} against {expected:?}"
        );

        // The waiter: Object.wait's frames, then waitOn at its line, holding kind 3.
        let (trace, _) = root(waiter);
        let stack = b.stack(trace);
        let wait_on = stack
            .iter()
            .position(|(m, _, _)| m == "waitOn")
            .unwrap_or_else(|| panic!("{what}: {stack:?}"));
        assert_eq!(stack[wait_on].2, wait_line, "{what}: {stack:?}");
        assert_eq!(
            stack[0].0,
            if jdk.version >= 21 { "wait0" } else { "wait" },
            "{what}: {stack:?}"
        );
        assert_eq!(
            frames_of(marker[&3]),
            vec![(waiter, wait_on as u32)],
            "{what}"
        );
    }
}

/// Checks that every serial and id the file refers to is defined in it.
fn assert_consistent(b: &Binary, what: &str) {
    for id in &b.string_refs {
        assert!(
            b.strings.contains_key(id),
            "{what}: STRING 0x{id:x} missing"
        );
    }
    for serial in b.frame_classes.iter().chain(&b.site_classes) {
        assert!(
            b.class_serials.contains_key(serial),
            "{what}: class serial {serial} missing"
        );
    }
    for frame in &b.trace_frames {
        assert!(
            b.frames.contains_key(frame),
            "{what}: STACK FRAME {frame} missing"
        );
    }
    for trace in &b.sample_traces {
        assert!(
            b.traces.contains_key(trace),
            "{what}: TRACE {trace} missing"
        );
    }
    for (serial, (thread, _)) in &b.traces {
        assert!(
            *thread == 0 || b.threads.contains_key(thread),
            "{what}: TRACE {serial} names thread {thread}, never started"
        );
    }
    for dump in &b.dumps {
        let classes: HashSet<u64> = dump
            .iter()
            .filter_map(|s| match s {
                Sub::Class { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        for sub in dump {
            match sub {
                Sub::ThreadRoot { thread, trace, .. } => {
                    assert!(
                        b.threads.contains_key(thread),
                        "{what}: thread {thread} missing"
                    );
                    assert!(
                        b.traces.contains_key(trace),
                        "{what}: TRACE {trace} missing"
                    );
                    assert_eq!(b.traces[trace].0, *thread, "{what}: trace {trace}'s thread");
                }
                Sub::FrameRoot { thread, .. }
                | Sub::OtherRoot {
                    thread: Some(thread),
                    ..
                } => {
                    assert!(
                        b.threads.contains_key(thread),
                        "{what}: thread {thread} missing"
                    );
                }
                Sub::Class {
                    trace,
                    names,
                    superclass,
                    id,
                    ..
                } => {
                    assert!(
                        b.traces.contains_key(trace),
                        "{what}: TRACE {trace} missing"
                    );
                    assert!(
                        b.class_names.contains_key(id),
                        "{what}: no LOAD CLASS for 0x{id:x}"
                    );
                    assert!(*superclass == 0 || classes.contains(superclass), "{what}");
                    for n in names {
                        assert!(
                            b.strings.contains_key(n),
                            "{what}: field name 0x{n:x} missing"
                        );
                    }
                }
                Sub::Instance { trace, class, .. } => {
                    assert!(
                        b.traces.contains_key(trace),
                        "{what}: TRACE {trace} missing"
                    );
                    assert!(classes.contains(class), "{what}: no CLASS DUMP 0x{class:x}");
                }
                Sub::Array { trace, class, .. } => {
                    assert!(
                        b.traces.contains_key(trace),
                        "{what}: TRACE {trace} missing"
                    );
                    if let Some(class) = class {
                        assert!(classes.contains(class), "{what}: no CLASS DUMP 0x{class:x}");
                    }
                }
                Sub::OtherRoot { thread: None, .. } => {}
            }
        }
    }
    // OBJECT SITES name classes, traces and objects of the dump before them.
    for (dump, class, trace, ids) in &b.object_sites {
        if (*class, *trace) != (0, 0) {
            assert!(
                b.class_serials.contains_key(class),
                "{what}: OBJECT SITES' class serial {class} missing"
            );
            assert!(
                b.traces.contains_key(trace),
                "{what}: OBJECT SITES' TRACE {trace} missing"
            );
        }
        let objects: HashSet<u64> = b.dumps[*dump]
            .iter()
            .filter_map(|s| match s {
                Sub::Instance { id, .. } | Sub::Array { id, .. } => Some(*id),
                _ => None,
            })
            .collect();
        // Every object of a site is in the dump. Of the start-up's group, HotSpot leaves out
        // the archived objects (CDS) no class uses yet: their pins are roots all the same.
        let missing = ids.iter().filter(|id| !objects.contains(id)).count();
        let allowed = if (*class, *trace) == (0, 0) {
            ids.len() / 50
        } else {
            0
        };
        assert!(
            missing <= allowed,
            "{what}: {missing} of OBJECT SITES' {} objects of {class}/{trace} not in dump {dump}",
            ids.len()
        );
    }
    // A class's serial names the same class everywhere: its LOAD CLASS records agree on its name.
    for (serial, names) in &b.serial_names {
        assert!(
            names.len() == 1,
            "{what}: class serial {serial} names {names:?}"
        );
    }
}

/// Checks a run that wrote heap dumps to `file`: its status 0, no `HPROF ERROR`, `dumps` heap
/// dumps in the file, and every id and serial the file refers to defined in it.
fn checked_dumps(run: &JavaRun, file: &std::path::Path, dumps: usize, what: &str) -> Binary {
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    assert!(
        !run.stderr.contains("HPROF ERROR"),
        "{what}: {}",
        run.stderr
    );
    let b = Binary::read(file);
    assert_eq!(b.dumps.len(), dumps, "{what}");
    assert_consistent(&b, what);
    b
}

#[test]
fn every_id_the_merged_file_refers_to_is_defined_in_it() {
    for jdk in jdks() {
        // CPU samples (traces, frames, classes of the agent's own), heap sites (SITES with
        // class serials and traces), and two heap dumps: one on SIGQUIT, one at exit.
        for options in [
            "heap=dump,cpu=samples,format=b",
            "heap=all,cpu=samples,format=b",
        ] {
            let what = format!("JDK {} {options}", jdk.version);
            let (run, dir) = run_thread_stacks(&jdk, options, &[], &[], |pid, dir| {
                kill(pid, "-QUIT");
                wait_for_dumps(&dir.join("dump.hprof"), 1);
            });
            let b = checked_dumps(&run, &dir.path().join("dump.hprof"), 2, &what);
            // The program is idle, so CPU samples may be few; SITES always name traces.
            if options.starts_with("heap=all") {
                assert!(!b.site_classes.is_empty(), "{what}");
                assert!(!b.sample_traces.is_empty(), "{what}");
                // Each dump joins objects to their sites, and to the start-up's group.
                for dump in 0..2 {
                    let groups: Vec<_> = b.object_sites.iter().filter(|g| g.0 == dump).collect();
                    assert!(groups.iter().any(|g| g.1 != 0 && !g.3.is_empty()), "{what}");
                    assert!(
                        groups.iter().any(|g| g.1 == 0 && g.3.len() > 1000),
                        "{what}"
                    );
                }
            }
            // The program's threads keep their serials from one dump to the next.
            let sleeper = b.thread("stack-sleeper");
            for dump in &b.dumps {
                assert!(
                    dump.iter()
                        .any(|s| matches!(s, Sub::ThreadRoot { thread, .. } if *thread == sleeper)),
                    "{what}"
                );
            }
        }
    }
}

/// Waits (at most a minute) until the binary profile at `path` holds `n` whole heap dumps.
fn wait_for_dumps(path: &std::path::Path, n: usize) {
    for _ in 0..600 {
        if let Ok(bytes) = std::fs::read(path)
            && let Ok((_, mut records)) = Records::new(&bytes)
        {
            let mut ends = 0;
            while let Ok(Some((_, record))) = records.next() {
                if record == Record::HeapDumpEnd {
                    ends += 1;
                }
            }
            if ends >= n {
                return;
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("{} never held {n} heap dumps", path.display());
}

#[test]
fn a_dump_with_the_heap_nearly_full_completes() {
    for jdk in jdks() {
        let what = format!("JDK {}", jdk.version);
        // About 52 MB of byte[1024] kept in a 64 MB heap.
        let (run, dir) = run_thread_stacks(
            &jdk,
            "heap=dump,format=b",
            &["-Xmx64m", "-XX:+UseSerialGC"],
            &["fill", "52"],
            |_, _| {},
        );
        let b = checked_dumps(&run, &dir.path().join("dump.hprof"), 1, &what);
        let arrays = b.dumps[0]
            .iter()
            .filter(|s| matches!(s, Sub::Array { class: None, .. }))
            .count();
        assert!(arrays >= 52 * 1024, "{what}: {arrays} primitive arrays");
    }
}

#[test]
fn virtual_threads_alive_no_longer_skip_the_dump() {
    for jdk in jdks().into_iter().filter(|j| j.version >= 21) {
        let what = format!("JDK {}", jdk.version);
        let (run, dir) =
            run_thread_stacks(&jdk, "heap=dump,format=b", &[], &["virtual"], |_, _| {});
        assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
        assert!(
            !run.stderr.contains("heap dump skipped"),
            "{what}: {}",
            run.stderr
        );
        let b = Binary::read(&dir.path().join("dump.hprof"));
        assert_eq!(b.dumps.len(), 1, "{what}");
        assert_consistent(&b, &what);
        let virtual_threads = b
            .class_names
            .iter()
            .filter(|(_, n)| *n == "java.lang.VirtualThread")
            .map(|(id, _)| *id)
            .collect::<HashSet<u64>>();
        let objects = b.dumps[0]
            .iter()
            .filter(|s| matches!(s, Sub::Instance { class, .. } if virtual_threads.contains(class)))
            .count();
        assert!(objects >= 100, "{what}: {objects} VirtualThread objects");
        if jdk.version >= 25 {
            // JDK 25's dumper gives each live virtual thread its stack: parkVirtual's frames.
            let parked = b
                .traces
                .keys()
                .filter(|t| b.stack(**t).iter().any(|(m, _, _)| m == "parkVirtual"))
                .count();
            assert!(parked >= 50, "{what}: {parked} stacks in parkVirtual");
        }
    }
}

/// heap=dump,format=a renders the JVM's records with the text layout: TRACE blocks of the
/// threads' stacks, referenced by the thread roots.
#[test]
fn text_dump_names_threads_stacks() {
    let jdk = jdk17();
    let (run, dir) = run_thread_stacks(&jdk, "heap=dump", &[], &[], |_, _| {});
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = read_text(&dir.path().join("dump.hprof"));
    let p = crate::support::TextProfile::parse(&text);
    let sleeper = p
        .thread("stack-sleeper")
        .expect("THREAD START of stack-sleeper");
    let root = text
        .lines()
        .find(|l| {
            l.starts_with("ROOT ") && l.contains(&format!("(kind=<thread>, id={sleeper}, trace="))
        })
        .expect("the sleeper's thread root");
    let trace: u32 = root
        .rsplit("trace=")
        .next()
        .unwrap()
        .trim_end_matches(')')
        .parse()
        .unwrap();
    let block = p.traces.get(&trace).expect("the sleeper's TRACE");
    assert_eq!(block.thread, Some(sleeper));
    assert!(
        block
            .frames
            .iter()
            .any(|f| f.starts_with("ThreadStacks.sleepHolding(ThreadStacks.java:")),
        "{block:?}"
    );
}

#[test]
fn a_gz_file_name_gives_a_gzip_profile() {
    let jdk = jdk17();
    {
        let what = format!("JDK {}", jdk.version);
        let (run, dir) = run_thread_stacks_into(
            "dump.hprof.gz",
            &jdk,
            "heap=dump,format=b",
            &[],
            &[],
            |_, _| {},
        );
        let file = dir.path().join("dump.hprof.gz");
        let bytes = std::fs::read(&file).unwrap();
        assert_eq!(&bytes[..2], &[0x1f, 0x8b], "{what}: not gzip");
        let b = checked_dumps(&run, &file, 1, &what);
        b.thread("stack-sleeper");
    }
}

/// With the Java heap exhausted at exit (no VM death), the JVM's dumper can't even be called
/// (its path string can't be allocated): the dump falls back to the JVMTI walk and completes.
#[test]
fn with_the_heap_exhausted_the_dump_falls_back_to_the_walk() {
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("dump.hprof");
    let agent = agentpath(&format!("heap=dump,format=b,file={}", file.display()));
    let run = crate::support::run_java(
        &jdk,
        dir.path(),
        &["-Xmx32m", &agent],
        "Stress",
        &["0", "oom-static"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("the heap dump uses the JVMTI heap walk"),
        "{}",
        run.stderr
    );
    let b = Binary::read(&file);
    assert_eq!(b.dumps.len(), 1);
    assert!(
        b.dumps[0]
            .iter()
            .filter(|s| matches!(s, Sub::Instance { .. }))
            .count()
            > 1000
    );
}
