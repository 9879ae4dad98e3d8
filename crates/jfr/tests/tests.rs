//! The reader on recordings the writer made: every event and constant read back; the JDK's
//! `jfr` tool reads them too; damaged and truncated copies give errors with offsets, never a
//! panic.

use hprof_jfr::pools::{FRAME_JIT, FrameRef, Pools};
use hprof_jfr::schema::{self, id};
use hprof_jfr::writer::{self, Put};
use hprof_jfr::{Value, chunks};

const START_NANOS: i64 = 1_700_000_000_000_000_000;

/// A chunk of `samples` execution samples in `Hot.spin` (from `Hot.main`) one millisecond
/// apart on thread "main", an allocation sample of a lambda (a hidden class) in `Hot.fill`,
/// and a monitor enter of 5 ms on `com.example.Hot$Lock`.
fn recording(samples: i64) -> Vec<u8> {
    let mut pools = Pools::new();
    let hot = pools.class("Hot");
    let main = pools.method(hot, "main", "([Ljava/lang/String;)V");
    let spin = pools.method(hot, "spin", "()J");
    let fill = pools.method(hot, "fill", "()V");
    let frame = |method, line| FrameRef {
        method,
        line,
        bci: 3,
        kind: FRAME_JIT,
    };
    let spin_stack = pools.stack(&[frame(spin, 12), frame(main, 30)], false);
    let fill_stack = pools.stack(&[frame(fill, 20), frame(main, 31)], false);
    let thread = pools.thread(1, 4242, "main");
    let bytes = pools.class("com/example/Hot$$Lambda$3/0x0000000800c03000");
    let lock = pools.class("com/example/Hot$Lock");
    let mut events = Vec::new();
    let mut body = Vec::new();
    for i in 0..samples {
        body.clear();
        body.long(i * 1_000_000);
        body.long(thread);
        body.long(spin_stack);
        body.long(0);
        writer::event(&mut events, id::EXECUTION_SAMPLE, &body);
    }
    body.clear();
    body.long(500_000);
    body.long(thread);
    body.long(fill_stack);
    body.long(bytes);
    body.long(1 << 20);
    writer::event(&mut events, id::OBJECT_ALLOCATION_SAMPLE, &body);
    body.clear();
    body.long(700_000);
    body.long(5_000_000);
    body.long(thread);
    body.long(fill_stack);
    body.long(lock);
    body.long(0);
    body.long(0x1234);
    writer::event(&mut events, id::JAVA_MONITOR_ENTER, &body);
    writer::chunk(
        START_NANOS,
        samples * 1_000_000 + 1,
        0,
        1_000_000_000,
        &events,
        pools.constant_pools(),
        &schema::metadata(),
    )
}

#[test]
fn events_and_constants_read_back() {
    let bytes = recording(10);
    let mut all: Vec<_> = chunks(&bytes).collect();
    assert_eq!(all.len(), 1);
    let chunk = all.pop().unwrap().unwrap();
    let sample = chunk.metadata.named("jdk.ExecutionSample").unwrap();
    let class = chunk.class(sample);
    let (thread_field, stack_field) = (
        class.field("sampledThread").unwrap(),
        class.field("stackTrace").unwrap(),
    );
    let mut values = Vec::new();
    let mut count = 0;
    let mut names = std::collections::BTreeMap::new();
    for event in chunk.events() {
        let event = event.unwrap();
        *names
            .entry(chunk.class(event.class).name.clone())
            .or_insert(0) += 1;
        if event.class != sample {
            continue;
        }
        chunk.read_event(&event, &mut values).unwrap();
        assert_eq!(
            chunk.nanos(values[0].as_int().unwrap()),
            START_NANOS + count * 1_000_000
        );
        let Value::Ref { class, key } = values[thread_field] else {
            panic!("thread {:?}", values[thread_field]);
        };
        let Some(Value::Object(_, thread)) = chunk.constant(class, key).unwrap() else {
            panic!("no thread constant");
        };
        assert_eq!(thread[2].as_str(), Some("main"));
        let Value::Ref { class, key } = values[stack_field] else {
            panic!("stack");
        };
        let Some(Value::Object(_, trace)) = chunk.constant(class, key).unwrap() else {
            panic!("no stack constant");
        };
        let Value::Array(frames) = &trace[1] else {
            panic!("frames")
        };
        assert_eq!(frames.len(), 2);
        count += 1;
    }
    assert_eq!(count, 10);
    assert_eq!(names["jdk.ObjectAllocationSample"], 1);
    assert_eq!(names["jdk.JavaMonitorEnter"], 1);
}

#[test]
fn concatenated_chunks_are_read_one_after_another() {
    let mut bytes = recording(3);
    let second = recording(5);
    bytes.extend_from_slice(&second);
    let offsets: Vec<u64> = chunks(&bytes).map(|c| c.unwrap().offset).collect();
    assert_eq!(offsets, vec![0, (bytes.len() - second.len()) as u64]);
}

#[test]
fn every_truncation_is_an_error_with_an_offset_in_the_file() {
    let bytes = recording(4);
    for len in 0..bytes.len() {
        let cut = &bytes[..len];
        let result: Result<usize, hprof_jfr::Error> = (|| {
            let mut n = 0;
            for chunk in chunks(cut) {
                let chunk = chunk?;
                for e in chunk.events() {
                    e?;
                    n += 1;
                }
            }
            Ok(n)
        })();
        if len == 0 {
            assert_eq!(result, Ok(0));
            continue;
        }
        let err = result.expect_err("a cut recording");
        assert!(err.offset() <= len as u64, "{err} for {len} bytes");
        assert!(err.to_string().contains("byte offset"), "{err}");
    }
}

/// Reads everything a recording holds, every constant resolved; errors are fine, panics are
/// not.
fn read_all(bytes: &[u8]) -> Result<usize, hprof_jfr::Error> {
    let mut n = 0;
    let mut values = Vec::new();
    for chunk in chunks(bytes) {
        let chunk = chunk?;
        for event in chunk.events() {
            let event = event?;
            chunk.read_event(&event, &mut values)?;
            for v in &values {
                if let Value::Ref { class, key } = v {
                    let _ = chunk.constant(*class, *key)?;
                }
            }
            n += 1;
        }
    }
    Ok(n)
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
    #[test]
    fn damaged_recordings_never_panic(
        flips in proptest::collection::vec((0usize..4000, proptest::prelude::any::<u8>()), 1..6)
    ) {
        let mut bytes = recording(4);
        for (at, value) in flips {
            let at = at % bytes.len();
            bytes[at] = value;
        }
        let _ = read_all(&bytes);
    }
}

#[test]
fn the_jdks_jfr_tool_reads_what_the_writer_wrote() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.jfr");
    std::fs::write(&path, recording(25)).unwrap();
    let jfr = hprof_testkit::java::jdk17().bin("jfr");
    let run = |args: &[&str]| {
        let out = std::process::Command::new("timeout")
            .arg("120")
            .arg(&jfr)
            .args(args)
            .arg(&path)
            .output()
            .expect("jfr runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "jfr {args:?}: {text}{err}");
        text
    };
    let summary = run(&["summary"]);
    let count = |name: &str| {
        summary
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|n| n.parse::<u32>().ok())
    };
    assert_eq!(count("jdk.ExecutionSample"), Some(25), "{summary}");
    assert_eq!(count("jdk.ObjectAllocationSample"), Some(1), "{summary}");
    let printed = run(&["print", "--events", "JavaMonitorEnter"]);
    assert!(printed.contains("com.example.Hot$Lock"), "{printed}");
    assert!(printed.contains("5.00 ms"), "{printed}");
    assert!(printed.contains("Hot.fill()"), "{printed}");
    // A class's package, as the JVM writes it (JMC groups methods by it); none for a class
    // of the default package.
    let json = run(&["print", "--json", "--events", "JavaMonitorEnter"]);
    let compact: String = json.split_whitespace().collect();
    assert!(
        compact.contains(r#""name":"com\/example\/Hot$Lock","package":{"name":"com\/example""#),
        "{json}"
    );
    // A hidden class (a lambda's) marked hidden, its package its name's less the suffix.
    let json = run(&["print", "--json", "--events", "ObjectAllocationSample"]);
    let compact: String = json.split_whitespace().collect();
    assert!(
        compact.contains(
            r#""name":"com\/example\/Hot$$Lambda$3\/0x0000000800c03000","package":{"name":"com\/example""#
        ) && compact.contains(r#""hidden":true"#),
        "{json}"
    );
    let frames = run(&["print", "--json", "--events", "ExecutionSample"]);
    let compact: String = frames.split_whitespace().collect();
    assert!(
        compact.contains(r#""name":"Hot","package":null"#),
        "{frames}"
    );
}

/// A chunk whose constants lie in two constant pool events, the last naming the first by its
/// delta (as the JDK writes them): the first holds the stack and its methods, the second the
/// thread. `delta` makes the second's delta from the right one.
fn two_pool_chunk(delta: impl Fn(i64) -> i64) -> Vec<u8> {
    let mut first = Pools::new();
    let hot = first.class("Hot");
    let spin = first.method(hot, "spin", "()J");
    let frame = FrameRef {
        method: spin,
        line: 12,
        bci: 3,
        kind: FRAME_JIT,
    };
    let stack = first.stack(&[frame], true);
    let mut second = Pools::new();
    let thread = second.thread(1, 4242, "main");
    let mut events = Vec::new();
    let mut body = Vec::new();
    for i in 0..3 {
        body.clear();
        body.long(i * 1_000_000);
        body.long(thread);
        body.long(stack);
        body.long(0);
        writer::event(&mut events, id::EXECUTION_SAMPLE, &body);
    }
    let first_pool = first.constant_pools().encode(0);
    // The second pool's event again, with a delta: its body after the ticks, duration and
    // delta the encoder wrote (0, 0, 0: one byte each).
    let encoded = second.constant_pools().encode(0);
    let mut c = 0;
    let skip_varint = |c: &mut usize| {
        while encoded[*c] & 0x80 != 0 {
            *c += 1;
        }
        *c += 1;
    };
    skip_varint(&mut c); // size
    skip_varint(&mut c); // type
    let rest = &encoded[c + 3..];
    let mut second_body = Vec::new();
    second_body.long(0);
    second_body.long(0);
    second_body.long(delta(-(first_pool.len() as i64)));
    second_body.extend_from_slice(rest);
    let mut second_pool = Vec::new();
    writer::event(
        &mut second_pool,
        hprof_jfr::CONSTANT_POOL_EVENT,
        &second_body,
    );
    let metadata = schema::metadata().encode(0);
    let pools_at = (hprof_jfr::HEADER_SIZE + events.len()) as u64;
    let constant_pool_offset = pools_at + first_pool.len() as u64;
    let metadata_offset = constant_pool_offset + second_pool.len() as u64;
    let header = writer::HeaderDef {
        size: metadata_offset + metadata.len() as u64,
        constant_pool_offset,
        metadata_offset,
        start_nanos: START_NANOS,
        duration_nanos: 3_000_000,
        start_ticks: 0,
        ticks_per_second: 1_000_000_000,
    };
    [
        &header.encode()[..],
        &events,
        &first_pool,
        &second_pool,
        &metadata,
    ]
    .concat()
}

/// Every constant an event names, resolved, as (thread name, stack's frame count).
fn threads_and_stacks(bytes: &[u8]) -> Vec<(String, usize)> {
    let chunk = chunks(bytes).next().unwrap().unwrap();
    let mut values = Vec::new();
    let mut out = Vec::new();
    for event in chunk.events() {
        chunk.read_event(&event.unwrap(), &mut values).unwrap();
        let constant = |v: &Value| match *v {
            Value::Ref { class, key } => chunk.constant(class, key).unwrap(),
            _ => None,
        };
        let Some(Value::Object(_, thread)) = constant(&values[1]) else {
            panic!("no thread constant");
        };
        let Some(Value::Object(_, stack)) = constant(&values[2]) else {
            panic!("no stack constant");
        };
        let Value::Array(frames) = &stack[1] else {
            panic!("frames");
        };
        out.push((thread[2].as_str().unwrap().to_string(), frames.len()));
    }
    out
}

#[test]
fn constant_pools_are_found_by_their_chain_and_without_it() {
    let expected = vec![("main".to_string(), 1); 3];
    // The chain whole; a delta forward, onto itself or onto an event that is no pool: every
    // event walked instead.
    for wrong in [|d: i64| d, |_: i64| 0x1000, |_: i64| -1, |d: i64| d - 10] {
        assert_eq!(threads_and_stacks(&two_pool_chunk(wrong)), expected);
    }
    // (A delta of 0 ends the chain: the first pool is then not read, as the JDK's and
    // async-profiler's readers do not read it.)
    let bytes = two_pool_chunk(|_| 0);
    let chunk = chunks(&bytes).next().unwrap().unwrap();
    let stack_class = chunk.metadata.named("jdk.types.StackTrace").unwrap();
    assert!(!chunk.has_constant(stack_class, 1));
}

#[test]
fn a_damaged_pool_the_chain_leads_to_is_the_error_the_walk_meets() {
    let whole = two_pool_chunk(|d| d);
    let pools_at = whole.len() - {
        let chunk = chunks(&whole).next().unwrap().unwrap();
        chunk.header.size as usize - chunk.header.constant_pool_offset as usize
    };
    // The second pool's count of pools, far too large: the same error as walking every
    // event finds, at the same offset.
    let mut count_at = pools_at;
    for _ in 0..5 {
        // Size, type, ticks, duration, delta; then the flush flag.
        while whole[count_at] & 0x80 != 0 {
            count_at += 1;
        }
        count_at += 1;
    }
    count_at += 1;
    let mut damaged = whole.clone();
    damaged[count_at] = 0x7f;
    let err = chunks(&damaged).next().unwrap().unwrap_err();
    assert!(err.to_string().contains("byte offset"), "{err}");
    assert_eq!(err.offset(), count_at as u64, "{err}");
}

#[test]
fn flat_constants_read_as_numbers_as_their_values_read() {
    let bytes = recording(2);
    let chunk = chunks(&bytes).next().unwrap().unwrap();
    let stack_class = chunk.metadata.named("jdk.types.StackTrace").unwrap();
    let thread_class = chunk.metadata.named("java.lang.Thread").unwrap();
    let string_class = chunk.metadata.named("java.lang.String").unwrap();
    assert!(chunk.is_flat(stack_class));
    assert!(!chunk.is_flat(thread_class), "a thread has strings");
    assert!(!chunk.is_flat(string_class));
    fn flatten(v: &Value, out: &mut Vec<i64>) {
        match v {
            Value::Object(_, fields) => fields.iter().for_each(|f| flatten(f, out)),
            Value::Array(items) => {
                out.push(items.len() as i64);
                items.iter().for_each(|i| flatten(i, out));
            }
            Value::Ref { key, .. } => out.push(*key),
            v => out.push(v.as_int().expect("a number")),
        }
    }
    let mut numbers = Vec::new();
    for key in 1..=2 {
        let value = chunk.constant(stack_class, key).unwrap().unwrap();
        let mut expected = Vec::new();
        flatten(&value, &mut expected);
        assert!(
            chunk
                .constant_numbers(stack_class, key, &mut numbers)
                .unwrap()
        );
        assert_eq!(numbers, expected);
    }
    assert!(
        !chunk
            .constant_numbers(stack_class, 99, &mut numbers)
            .unwrap()
    );
    assert!(numbers.is_empty());
    let range = chunk.key_range(stack_class).unwrap();
    assert_eq!((range.min, range.max, range.count), (1, 2, 2));
}
