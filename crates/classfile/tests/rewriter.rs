//! The rewriter on class files built here, byte by byte, and checked by real JVMs with
//! `-Xverify:all`: probes in the right places, offsets and switch padding moved, frames
//! rebuilt, a conditional branch widened when inserted probes push it past 32 KB, and the
//! original behaviour kept.

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;

use hprof_classfile::class::{Attribute, ClassFile, Member};
use hprof_classfile::code::{Code, Kind, decode, op};
use hprof_classfile::frames::{self, Frame, VType};
use hprof_classfile::pool::Pool;
use hprof_classfile::{
    Keying, STATE_CLASS, THREAD_CLASS, THREAD_STATE_FIELD, TRACKER_CLASS, TRACKER_PROBES,
    instrument, state_class, tracker_class, tracker_class_keyed, with_state_field,
};

/// A method body under construction.
struct Method {
    name: &'static str,
    descriptor: &'static str,
    max_stack: u16,
    max_locals: u16,
    code: Vec<u8>,
    frames: Vec<Frame>,
    /// Exception table entries: start, end, handler, catch type.
    handlers: Vec<[u16; 4]>,
}

fn put_u16(code: &mut Vec<u8>, v: u16) {
    code.extend_from_slice(&v.to_be_bytes());
}

/// A public class `name` (version 52) with public static `methods`.
fn class(name: &str, methods: Vec<Method>, pool: &mut Pool<'static>) -> Vec<u8> {
    let this_class = pool.add_class(name.as_bytes()).unwrap();
    let super_class = pool.add_class(b"java/lang/Object").unwrap();
    let code_name = pool.add_utf8(b"Code").unwrap();
    let smt = pool.add_utf8(b"StackMapTable").unwrap();
    let mut members = Vec::new();
    for m in methods {
        let mut attributes = Vec::new();
        if !m.frames.is_empty() {
            attributes.push(Attribute {
                name: smt,
                data: frames::encode(&m.frames, pool).unwrap().into(),
            });
        }
        let mut body = Vec::new();
        put_u16(&mut body, m.max_stack);
        put_u16(&mut body, m.max_locals);
        body.extend_from_slice(&(m.code.len() as u32).to_be_bytes());
        body.extend_from_slice(&m.code);
        put_u16(&mut body, m.handlers.len() as u16);
        for h in &m.handlers {
            for v in h {
                put_u16(&mut body, *v);
            }
        }
        put_u16(&mut body, attributes.len() as u16);
        for a in &attributes {
            put_u16(&mut body, a.name);
            body.extend_from_slice(&(a.data.len() as u32).to_be_bytes());
            body.extend_from_slice(&a.data);
        }
        members.push(Member {
            access: 0x0009,
            name: pool.add_utf8(m.name.as_bytes()).unwrap(),
            descriptor: pool.add_utf8(m.descriptor.as_bytes()).unwrap(),
            attributes: vec![Attribute {
                name: code_name,
                data: body.into(),
            }],
        });
    }
    ClassFile {
        minor: 0,
        major: 52,
        pool: pool.clone(),
        access: 0x0021,
        this_class,
        super_class,
        interfaces: Vec::new(),
        fields: Vec::new(),
        methods: members,
        attributes: Vec::new(),
    }
    .write()
    .unwrap()
}

/// `static int f(int x)`: `code` with its frames and no exception handler.
fn int_f(max_stack: u16, code: Vec<u8>, frames: Vec<Frame>) -> Method {
    Method {
        name: "f",
        descriptor: "(I)I",
        max_stack,
        max_locals: 1,
        code,
        frames,
        handlers: Vec::new(),
    }
}

/// `main` printing `f(x)` for each of `inputs`.
fn main_printing(class: &str, inputs: &[i16], pool: &mut Pool<'static>) -> Method {
    let out = pool
        .add_member(true, b"java/lang/System", b"out", b"Ljava/io/PrintStream;")
        .unwrap();
    let f = pool
        .add_member(false, class.as_bytes(), b"f", b"(I)I")
        .unwrap();
    let println = pool
        .add_member(false, b"java/io/PrintStream", b"println", b"(I)V")
        .unwrap();
    let mut code = Vec::new();
    for &x in inputs {
        code.push(op::GETSTATIC);
        put_u16(&mut code, out);
        code.push(op::SIPUSH);
        put_u16(&mut code, x as u16);
        code.push(op::INVOKESTATIC);
        put_u16(&mut code, f);
        code.push(0xb6); // invokevirtual
        put_u16(&mut code, println);
    }
    code.push(op::RETURN);
    Method {
        name: "main",
        descriptor: "([Ljava/lang/String;)V",
        max_stack: 2,
        max_locals: 1,
        code,
        frames: Vec::new(),
        handlers: Vec::new(),
    }
}

fn int_frame(at: u32) -> Frame {
    Frame {
        at,
        locals: vec![VType::Int],
        stack: Vec::new(),
    }
}

/// Appends `sipush v; ireturn` for each of `values`, each a branch target with its frame;
/// returns their offsets.
fn return_constants(code: &mut Vec<u8>, frames: &mut Vec<Frame>, values: &[i16]) -> Vec<usize> {
    let mut at = Vec::new();
    for &v in values {
        at.push(code.len());
        frames.push(int_frame(code.len() as u32));
        code.push(op::SIPUSH);
        put_u16(code, v as u16);
        code.push(0xac);
    }
    at
}

/// Appends `if (x == v) return x;` (`iload_0; sipush v; if_icmpne +5; iload_0; ireturn`),
/// with the frame after it.
fn return_if_equal(code: &mut Vec<u8>, frames: &mut Vec<Frame>, v: i16) {
    code.push(0x1a);
    code.push(op::SIPUSH);
    put_u16(code, v as u16);
    code.extend_from_slice(&[0xa0, 0x00, 0x05, 0x1a, 0xac]);
    frames.push(int_frame(code.len() as u32));
}

/// Appends a switch opcode and its padding; returns the opcode's offset and the operands'.
fn switch(code: &mut Vec<u8>, opcode: u8) -> (usize, usize) {
    let at = code.len();
    code.push(opcode);
    while !code.len().is_multiple_of(4) {
        code.push(0);
    }
    (at, code.len())
}

fn instrumented(bytes: &[u8]) -> Vec<u8> {
    let mut next = 0;
    let outcome = instrument(bytes, &TRACKER_PROBES, |_| {
        next += 1;
        Some(next)
    })
    .unwrap();
    assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
    outcome.bytes.expect("instrumented")
}

/// The code of method `name`.
fn code_of(bytes: &[u8], name: &str) -> Vec<u8> {
    let data = code_attribute(bytes, name);
    Code::parse(&data, 0).unwrap().code.to_vec()
}

/// The Code attribute of method `name` (for `Code::parse`).
fn code_attribute(bytes: &[u8], name: &str) -> Vec<u8> {
    let cf = ClassFile::parse(bytes).unwrap();
    let m = cf
        .methods
        .iter()
        .find(|m| cf.pool.utf8(m.name).unwrap() == name.as_bytes())
        .unwrap();
    cf.attribute(&m.attributes, "Code").unwrap().data.to_vec()
}

/// JDK 17's `java.lang.Thread`, from its runtime image.
fn jdk_thread_class() -> &'static [u8] {
    static THREAD: OnceLock<Vec<u8>> = OnceLock::new();
    THREAD.get_or_init(|| {
        let jdk = hprof_testkit::java::jdk17();
        let dir = tempfile::tempdir().unwrap();
        let status = Command::new(jdk.bin("jimage"))
            .arg("extract")
            .arg(format!("--dir={}", dir.path().display()))
            .arg(format!("--include=regex:.*/{THREAD_CLASS}\\.class"))
            .arg(jdk.home.join("lib/modules"))
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::read(dir.path().join(format!("java.base/{THREAD_CLASS}.class"))).unwrap()
    })
}

/// JDK 17's `java.lang.Thread` with the tracker's state field, as the agent loads it.
fn thread_with_state_field() -> &'static [u8] {
    static THREAD: OnceLock<Vec<u8>> = OnceLock::new();
    THREAD.get_or_init(|| with_state_field(jdk_thread_class()).unwrap())
}

#[test]
fn thread_gets_the_state_field_once_and_nothing_else_changes() {
    let original = ClassFile::parse(jdk_thread_class()).unwrap();
    let patched = ClassFile::parse(thread_with_state_field()).unwrap();
    let fields = |cf: &ClassFile| -> Vec<(u16, Vec<u8>, Vec<u8>)> {
        cf.fields
            .iter()
            .map(|f| {
                (
                    f.access,
                    cf.pool.utf8(f.name).unwrap().to_vec(),
                    cf.pool.utf8(f.descriptor).unwrap().to_vec(),
                )
            })
            .collect()
    };
    let (before, after) = (fields(&original), fields(&patched));
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after[..before.len()], before[..]);
    // Package-private (the tracker is in java.lang), transient and synthetic.
    assert_eq!(
        after[before.len()],
        (
            0x0080 | 0x1000,
            THREAD_STATE_FIELD.as_bytes().to_vec(),
            format!("L{STATE_CLASS};").into_bytes()
        )
    );
    assert_eq!(patched.methods.len(), original.methods.len());
    assert_eq!(
        (patched.this_class, patched.super_class, patched.access),
        (original.this_class, original.super_class, original.access)
    );
    // Adding it again (as each retransformation does, from the original bytes, or to bytes
    // that have it) changes nothing.
    assert_eq!(
        with_state_field(thread_with_state_field()).unwrap(),
        thread_with_state_field()
    );
}

/// Runs `class` from `dir` with -Xverify:all and the tracker class (with the state field
/// it reads from `java.lang.Thread`) patched into java.base (its probes stay off); returns
/// stdout.
fn run(dir: &Path, class: &str) -> String {
    run_keyed(dir, class, Keying::Field)
}

/// [`run`] with a tracker that finds the threads' states as `keying` says (a
/// [`Keying::Table`] tracker needs no field in `java.lang.Thread`, which stays as it is).
fn run_keyed(dir: &Path, class: &str, keying: Keying) -> String {
    let patch = dir.join("patch");
    std::fs::create_dir_all(patch.join("java/lang")).unwrap();
    std::fs::write(
        patch.join(format!("{TRACKER_CLASS}.class")),
        tracker_class_keyed(TRACKER_CLASS, false, keying),
    )
    .unwrap();
    std::fs::write(patch.join(format!("{STATE_CLASS}.class")), state_class()).unwrap();
    if keying == Keying::Field {
        std::fs::write(
            patch.join(format!("{THREAD_CLASS}.class")),
            thread_with_state_field(),
        )
        .unwrap();
    }
    let jdk = hprof_testkit::java::jdk17();
    let out = hprof_testkit::java::java_launcher(&jdk)
        .arg("-Xverify:all")
        .arg(format!("--patch-module=java.base={}", patch.display()))
        .arg("-cp")
        .arg(dir)
        .arg(class)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Fails the test if the JVM runs past testkit's time limit.
    let out = hprof_testkit::java::finish(out);
    assert_eq!(out.code, Some(0), "{class}: {}", out.stderr);
    out.stdout
}

fn run_both(name: &str, original: &[u8]) -> (String, String) {
    let plain = tempfile::tempdir().unwrap();
    std::fs::write(plain.path().join(format!("{name}.class")), original).unwrap();
    let traced = tempfile::tempdir().unwrap();
    std::fs::write(
        traced.path().join(format!("{name}.class")),
        instrumented(original),
    )
    .unwrap();
    (run(plain.path(), name), run(traced.path(), name))
}

#[test]
fn the_tracker_class_round_trips() {
    let bytes = tracker_class(TRACKER_CLASS);
    let cf = ClassFile::parse(&bytes).unwrap();
    assert_eq!(cf.name(), TRACKER_CLASS.as_bytes());
    assert_eq!(cf.write().unwrap(), bytes);
    // state, find, enter, child, caught, exit, <clinit> and two natives
    assert_eq!(cf.methods.len(), 9);
    let table = tracker_class_keyed(TRACKER_CLASS, true, Keying::Table);
    let cf = ClassFile::parse(&table).unwrap();
    assert_eq!(cf.write().unwrap(), table);
    assert_eq!(cf.methods.len(), 9);
    assert_eq!(cf.fields.len(), 3, "engaged, off and the table");
    let state_bytes = state_class();
    let state = ClassFile::parse(&state_bytes).unwrap();
    assert_eq!(state.name(), STATE_CLASS.as_bytes());
    assert_eq!(state.fields.len(), hprof_classfile::STATE_FIELDS.len());
}

#[test]
fn probes_sit_at_entry_and_before_each_return() {
    let mut pool = Pool::empty();
    // static int f(int x) { return x == 0 ? 1 : x; }  with a frame at the second return.
    let code = vec![0x1a, 0x9a, 0x00, 0x05, 0x04, 0xac, 0x1a, 0xac];
    let f = int_f(1, code, vec![int_frame(6)]);
    let original = class("Probes", vec![f], &mut pool);
    let new = instrumented(&original);
    let code = code_of(&new, "f");
    let insns = decode(&code).unwrap();
    let ops: Vec<u8> = insns.iter().map(|i| i.op).collect();
    // The state goes to a new local, 1, and the caller's trace `enter` returns to another,
    // 2; the exit probes pass both back.
    assert_eq!(
        ops,
        [
            op::INVOKESTATIC,
            op::DUP,
            0x4c, // state, dup, astore_1
            op::SIPUSH,
            op::BIPUSH,
            op::INVOKESTATIC,
            0x3d, // the method's number and cache entry, enter, istore_2
            0x1a,
            0x9a, // iload_0, ifne
            0x04,
            0x2b,
            0x1c,
            op::INVOKESTATIC,
            0xac, // iconst_1, aload_1, iload_2, exit, ireturn
            0x1a,
            0x2b,
            0x1c,
            op::INVOKESTATIC,
            0xac, // iload_0, aload_1, iload_2, exit, ireturn
        ]
    );
    // No handler is added, nor the `caught` probe's constant (the class has no handler).
    assert!(!new.windows(6).any(|w| w == b"caught"));
    let code_attr = code_attribute(&new, "f");
    assert!(Code::parse(&code_attr, 0).unwrap().handlers.is_empty());
    // The branch still lands on `iload_0`, moved by the entry probe (14 bytes) and the
    // first exit probe (5).
    assert_eq!(
        insns[8].kind,
        Kind::Branch {
            target: 25,
            wide: false
        }
    );
    assert_eq!(insns[14].at, 25);
    // The entry probe carries the method's number and its inline cache entry.
    assert_eq!(
        &code[5..10],
        &[
            op::SIPUSH,
            0,
            1,
            op::BIPUSH,
            hprof_classfile::ic_entry(1) as u8
        ]
    );
}

#[test]
fn a_method_without_operands_gets_room_for_the_entry_probe() {
    // static void g() { nop; return; }: max_stack 0, but the entry probe pushes three words.
    let mut pool = Pool::empty();
    let g = Method {
        name: "g",
        descriptor: "()V",
        max_stack: 0,
        max_locals: 0,
        code: vec![op::NOP, op::RETURN],
        frames: Vec::new(),
        handlers: Vec::new(),
    };
    let original = class("NoOperands", vec![g], &mut pool);
    let new = instrumented(&original);
    let code_attr = code_attribute(&new, "g");
    let code = Code::parse(&code_attr, 0).unwrap();
    assert_eq!(code.max_stack, 3);
    assert_eq!(code.max_locals, 2);
}

#[test]
fn handlers_start_with_the_caught_probe_and_their_ranges_leave_it_out() {
    // static int f(int x) { try { return 10 / x; } catch (ArithmeticException e) { return -1; } }
    //   0: bipush 10; iload_0; idiv; ireturn      [0, 5) -> 5 ArithmeticException
    //   5: astore_1; iconst_m1; ireturn            [5, 6) -> 5 any (a handler over itself)
    let mut pool = Pool::empty();
    let arithmetic = pool.add_class(b"java/lang/ArithmeticException").unwrap();
    let code = vec![0x10, 10, 0x1a, 0x6c, 0xac, 0x4c, 0x02, 0xac];
    let f = Method {
        name: "f",
        descriptor: "(I)I",
        max_stack: 2,
        max_locals: 2,
        code,
        frames: vec![Frame {
            at: 5,
            locals: vec![VType::Int],
            stack: vec![VType::object(b"java/lang/Throwable")],
        }],
        handlers: vec![[0, 5, 5, arithmetic], [5, 6, 5, 0]],
    };
    let main = main_printing("Caught", &[0, 5, 0], &mut pool);
    let original = class("Caught", vec![f, main], &mut pool);
    let new = instrumented(&original);
    assert!(new.windows(6).any(|w| w == b"caught"));
    let code_attr = code_attribute(&new, "f");
    let code = Code::parse(&code_attr, 0).unwrap();
    let insns = decode(code.code).unwrap();
    // The state and trace locals are 2 and 3; the handler (after the entry probe, the four
    // instructions of the try block and the exit probe) starts with the caught probe.
    let at = |i: usize| insns[i].at;
    let handler = code.handlers[0].handler;
    let first = insns.iter().position(|i| i.at == handler).unwrap();
    let ops: Vec<u8> = insns[first..first + 5].iter().map(|i| i.op).collect();
    assert_eq!(ops, [0x2c, 0x1d, op::SIPUSH, op::INVOKESTATIC, 0x4c]);
    let probe = (handler, at(first + 4));
    // Every range keeps the probe out, the handler's own range included.
    for h in &code.handlers {
        assert_eq!(h.handler, handler);
        assert!(
            h.end <= probe.0 || h.start >= probe.1,
            "{h:?} covers {probe:?}"
        );
    }
    assert!(code.handlers.iter().any(|h| h.start == probe.1));
    let (plain, traced) = run_both("Caught", &original);
    assert_eq!(plain, "-1\n2\n-1\n");
    assert_eq!(traced, plain);
    // The same with the tracker of an agent loaded into a running JVM, which finds the
    // threads' states in its own table.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("Caught.class"), instrumented(&original)).unwrap();
    assert_eq!(run_keyed(dir.path(), "Caught", Keying::Table), plain);
}

#[test]
fn switches_keep_their_targets_at_every_padding() {
    // static int f(int x): k nops, then tableswitch 0..2 and lookupswitch {-5, 1000}, each
    // case returning a distinct constant; for k = 0..4 the probes shift the switches across
    // every alignment.
    for nops in 0..4u16 {
        let mut pool = Pool::empty();
        let mut code = vec![op::NOP; usize::from(nops)];
        let mut frames = Vec::new();
        code.push(0x1a); // iload_0
        let (sw, table_at) = switch(&mut code, op::TABLESWITCH);
        code.extend_from_slice(&[0; 12 + 12]); // default, low, high, 3 offsets
        let targets = return_constants(&mut code, &mut frames, &[10, 11, 12]);
        // Default: a lookupswitch.
        let default = code.len();
        frames.push(int_frame(default as u32));
        code.push(0x1a);
        let (lsw, lookup_at) = switch(&mut code, op::LOOKUPSWITCH);
        code.extend_from_slice(&[0; 8 + 16]);
        let lookup_targets = return_constants(&mut code, &mut frames, &[20, 21, 22]);
        let put_i32 = |code: &mut Vec<u8>, at: usize, v: i32| {
            code[at..at + 4].copy_from_slice(&v.to_be_bytes());
        };
        put_i32(&mut code, table_at, (default - sw) as i32);
        put_i32(&mut code, table_at + 4, 0);
        put_i32(&mut code, table_at + 8, 2);
        for (i, t) in targets.iter().enumerate() {
            put_i32(&mut code, table_at + 12 + 4 * i, (t - sw) as i32);
        }
        put_i32(&mut code, lookup_at, (lookup_targets[2] - lsw) as i32);
        put_i32(&mut code, lookup_at + 4, 2);
        put_i32(&mut code, lookup_at + 8, -5);
        put_i32(&mut code, lookup_at + 12, (lookup_targets[0] - lsw) as i32);
        put_i32(&mut code, lookup_at + 16, 1000);
        put_i32(&mut code, lookup_at + 20, (lookup_targets[1] - lsw) as i32);
        let f = int_f(1, code, frames);
        let name = format!("Switch{nops}");
        let main = main_printing(&name, &[0, 1, 2, 3, -5, 1000, 7], &mut pool);
        let original = class(&name, vec![f, main], &mut pool);
        let (plain, traced) = run_both(&name, &original);
        assert_eq!(plain, "10\n11\n12\n22\n20\n21\n22\n");
        assert_eq!(traced, plain, "{nops} nops");
    }
}

#[test]
fn a_branch_pushed_past_32_kb_is_widened_and_still_verifies() {
    // static int f(int x):
    //   0: iload_0; ifeq FAR                       (a 16-bit branch of 32,700 bytes)
    //   4: 100 × { iload_0; sipush V; if_icmpne +5; iload_0; ireturn }   (100 returns)
    //      nops up to FAR - 2; iload_0; ireturn     (falling through returns x)
    //   FAR: sipush -1; ireturn                    (x == 0 returns -1)
    // Each of the 101 returns gets a 5-byte probe before it, so the first branch no longer
    // fits in 16 bits.
    let mut pool = Pool::empty();
    let far: usize = 4 + 32_700 - 3;
    let mut code = vec![0x1a, 0x99];
    put_u16(&mut code, (far - 1) as u16);
    let mut frames = Vec::new();
    for v in 0..100i16 {
        return_if_equal(&mut code, &mut frames, 100 + v);
    }
    while code.len() < far - 2 {
        code.push(op::NOP);
    }
    code.extend_from_slice(&[0x1a, 0xac]);
    assert_eq!(code.len(), far);
    frames.push(int_frame(far as u32));
    code.push(op::SIPUSH);
    put_u16(&mut code, (-1i16) as u16);
    code.push(0xac);
    let f = int_f(2, code, frames);
    let main = main_printing("Widen", &[0, 100, 150, 199, 5000], &mut pool);
    let original = class("Widen", vec![f, main], &mut pool);
    let new = instrumented(&original);
    let insns = decode(&code_of(&new, "f")).unwrap();
    // After the entry probe's seven instructions and iload_0, ifeq became ifne +8; goto_w FAR.
    assert_eq!(insns[8].op, 0x9a);
    assert_eq!(insns[9].op, op::GOTO_W);
    let (plain, traced) = run_both("Widen", &original);
    assert_eq!(plain, "-1\n100\n150\n199\n5000\n");
    assert_eq!(traced, plain);
}

#[test]
fn code_that_would_pass_64_kb_is_left_alone() {
    // 61,000 bytes with 1,000 returns: 5,000 more bytes of probes do not fit.
    let mut pool = Pool::empty();
    let mut code = Vec::new();
    let mut frames = Vec::new();
    for v in 0..1000i16 {
        return_if_equal(&mut code, &mut frames, v);
    }
    while code.len() < 61_000 {
        code.push(op::NOP);
    }
    code.extend_from_slice(&[0x1a, 0xac]);
    let f = int_f(2, code, frames);
    let original = class("TooBig", vec![f], &mut pool);
    let outcome = instrument(&original, &TRACKER_PROBES, |_| Some(1)).unwrap();
    assert!(outcome.bytes.is_none());
    assert_eq!(outcome.failed.len(), 1);
    assert!(
        outcome.failed[0].1.contains("64 KB"),
        "{:?}",
        outcome.failed
    );
}

#[test]
fn truncated_and_corrupt_classes_are_errors_with_offsets() {
    let bytes = tracker_class(TRACKER_CLASS);
    for len in [0, 3, 9, 20, bytes.len() / 2, bytes.len() - 1] {
        let err = instrument(&bytes[..len], &TRACKER_PROBES, |_| Some(1)).unwrap_err();
        assert!(err.offset <= len, "{len}: {err}");
    }
    let mut bad = bytes.clone();
    bad[0] = 0;
    assert!(
        instrument(&bad, &TRACKER_PROBES, |_| Some(1))
            .unwrap_err()
            .what
            .contains("magic")
    );
    let mut extra = bytes;
    extra.push(0);
    assert!(
        ClassFile::parse(&extra)
            .unwrap_err()
            .what
            .contains("after the end")
    );
}

#[test]
fn methods_can_be_skipped_and_big_numbers_use_the_pool() {
    let bytes = tracker_class(TRACKER_CLASS);
    // No id: nothing changes.
    let outcome = instrument(&bytes, &TRACKER_PROBES, |_| None).unwrap();
    assert!(outcome.bytes.is_none() && outcome.instrumented == 0);
    // An id past sipush's range is loaded with ldc_w.
    let outcome = instrument(&bytes, &TRACKER_PROBES, |_| Some(1_000_000)).unwrap();
    let new = outcome.bytes.unwrap();
    let code = code_of(&new, "enter");
    // enter has 7 locals: invokestatic state, dup, astore 7, then the number.
    assert_eq!(&code[3..6], &[op::DUP, 0x3a, 7]);
    assert_eq!(code[6], op::LDC_W);
    let cf = ClassFile::parse(&new).unwrap();
    let index = u16::from_be_bytes([code[7], code[8]]);
    assert_eq!(
        cf.pool.get(index),
        Some(&hprof_classfile::pool::Entry::Integer(1_000_000))
    );
}
