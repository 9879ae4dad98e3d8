//! The allocation-counting rewriter on a real JVM (JDK 17, `-Xverify:all`): a program with
//! known allocations is rewritten, run with the counter class and `java.lang.Thread` with its
//! counts field patched into java.base, and reads its own threads' counts by reflection. The
//! program's own output must not change.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use hprof_classfile::{
    ALLOCATING_INTRINSICS, AllocKind, ArrayLayout, COUNTER_CLASS, ClassFile, Element, THREAD_CLASS,
    count_allocations, count_allocations_with, counter_class, with_counts_field,
};

const PROGRAM: &str = r#"
import java.lang.reflect.Field;

public class CountMe {
    static Object[] keep = new Object[100];
    static final class P { int x; P(int x) { this.x = x; } }

    public static void main(String[] args) throws Exception {
        long sum = 0;
        for (int i = 0; i < 1000; i++) { P p = new P(i); keep[i % 100] = p; sum += p.x; }
        for (int i = 0; i < 500; i++) { int[] a = new int[i % 7]; keep[i % 100] = a; sum += a.length; }
        keep[0] = new long[3][4][];
        keep[1] = new String[2][5];
        keep[2] = new int[0][7];
        for (int i = 0; i < 50; i++) { final int n = i; java.util.function.IntSupplier s = () -> n; keep[3] = s; sum += s.getAsInt(); }
        Runnable same = () -> {};
        keep[4] = same;
        Thread t = new Thread(() -> { for (int i = 0; i < 300; i++) keep[50] = new P(i); });
        t.start();
        t.join();
        System.out.println("result " + sum);
        if (args.length > 0) {
            Field f = Thread.class.getDeclaredField("hprofAllocs");
            f.setAccessible(true);
            print("main", (long[][]) f.get(Thread.currentThread()));
            print("thread", (long[][]) f.get(t));
        }
    }

    static void print(String who, long[][] chunks) {
        StringBuilder b = new StringBuilder(who);
        for (int c = 0; chunks != null && c < chunks.length; c++) {
            long[] counts = chunks[c];
            for (int i = 0; counts != null && i < counts.length; i++) {
                if (counts[i] != 0) b.append(' ').append(c * counts.length + i).append('=').append(counts[i]);
            }
        }
        System.out.println(b);
    }
}
"#;

fn jdk_thread_class(dir: &Path) -> Vec<u8> {
    jdk_class(dir, THREAD_CLASS)
}

/// The class file of java.base's class `name` (internal name) in JDK 17.
fn jdk_class(dir: &Path, name: &str) -> Vec<u8> {
    let jdk = hprof_testkit::java::jdk17();
    let status = Command::new(jdk.bin("jimage"))
        .arg("extract")
        .arg(format!("--dir={}", dir.display()))
        .arg(format!("--include=regex:.*/{name}\\.class"))
        .arg(jdk.home.join("lib/modules"))
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(dir.join(format!("java.base/{name}.class"))).unwrap()
}

/// The RuntimeVisibleAnnotations body of each method of `class` (empty if none), by name
/// and descriptor, and the constant pool index of the intrinsic mark's name (0 if none).
fn method_annotations(class: &[u8]) -> (HashMap<(String, String), Vec<u8>>, u16) {
    let cf = ClassFile::parse(class).unwrap();
    let text = |i: u16| String::from_utf8_lossy(cf.pool.utf8(i).unwrap_or_default()).into_owned();
    let mark = (1..cf.pool.count() as u16)
        .find(|&i| {
            cf.pool
                .utf8(i)
                .is_ok_and(|t| t == b"Ljdk/internal/vm/annotation/IntrinsicCandidate;")
        })
        .unwrap_or(0);
    let mut out = HashMap::new();
    for m in &cf.methods {
        let body = m
            .attributes
            .iter()
            .find(|a| text(a.name) == "RuntimeVisibleAnnotations")
            .map(|a| a.data.to_vec())
            .unwrap_or_default();
        out.insert((text(m.name), text(m.descriptor)), body);
    }
    (out, mark)
}

#[test]
fn the_allocating_intrinsics_lose_their_mark_and_nothing_else_does() {
    let dir = tempfile::tempdir().unwrap();
    for (holder, count) in [
        ("java/util/Arrays", 2),
        ("jdk/internal/misc/Unsafe", 1),
        ("java/lang/StringUTF16", 1),
        ("java/math/BigInteger", 1),
    ] {
        let original = jdk_class(dir.path(), holder);
        let (before, _) = method_annotations(&original);
        let mut next = 0u32;
        let mut number = |_: &hprof_classfile::AllocSite<'_>| {
            next += 2;
            Some(next)
        };
        let kept = count_allocations_with(&original, false, &mut number).unwrap();
        assert_eq!(kept.intrinsics, 0, "{holder}");
        if let Some(bytes) = &kept.bytes {
            assert_eq!(method_annotations(bytes).0, before, "{holder}");
        }
        let stripped = count_allocations(&original, &mut number).unwrap();
        assert_eq!(stripped.intrinsics, count, "{holder}");
        let (after, mark) = method_annotations(stripped.bytes.as_deref().unwrap());
        assert_ne!(mark, 0, "{holder}");
        let mark = mark.to_be_bytes();
        for (key, body) in &before {
            let listed = ALLOCATING_INTRINSICS
                .iter()
                .any(|(h, n, d)| *h == holder && *n == key.0 && *d == key.1);
            let what = format!("{holder}.{}{}", key.0, key.1);
            if !listed {
                assert_eq!(&after[key], body, "{what}");
                continue;
            }
            // One element-less annotation fewer, the mark, and the others as they were.
            let new = &after[key];
            assert_eq!(new.len() + 4, body.len(), "{what}");
            assert_eq!(
                u16::from_be_bytes([new[0], new[1]]) + 1,
                u16::from_be_bytes([body[0], body[1]]),
                "{what}"
            );
            let at = (2..body.len() - 3)
                .find(|&i| body[i..i + 2] == mark && body[i + 2..i + 4] == [0, 0])
                .unwrap_or_else(|| panic!("{what}: no mark"));
            let mut expected = body.clone();
            expected.drain(at..at + 4);
            expected[0..2].copy_from_slice(&new[0..2]);
            assert_eq!(new, &expected, "{what}");
        }
    }
}

fn run(dir: &Path, patch: &Path, args: &[&str]) -> String {
    let jdk = hprof_testkit::java::jdk17();
    let out = Command::new(jdk.bin("java"))
        .arg("-Xverify:all")
        .arg(format!("--patch-module=java.base={}", patch.display()))
        .arg("--add-opens=java.base/java.lang=ALL-UNNAMED")
        .arg("-cp")
        .arg(dir)
        .arg("CountMe")
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Fails the test if the JVM runs past testkit's time limit.
    let out = hprof_testkit::java::finish(out);
    assert_eq!(out.code, Some(0), "{}", out.stderr);
    out.stdout
}

/// Slot → count of one output line (`who 3=1000 4=...`).
fn counts(out: &str, who: &str) -> HashMap<u32, u64> {
    let line = out
        .lines()
        .find(|l| l.split(' ').next() == Some(who))
        .unwrap_or_else(|| panic!("no {who} line in {out}"));
    line.split(' ')
        .skip(1)
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.parse().unwrap(), v.parse().unwrap())
        })
        .collect()
}

#[test]
fn allocations_are_counted_exactly_and_the_program_runs_as_before() {
    let work = tempfile::tempdir().unwrap();
    let src = work.path().join("src");
    let plain = work.path().join("plain");
    let counted = work.path().join("counted");
    let patch = work.path().join("patch");
    for d in [&src, &plain, &counted, &patch.join("java/lang")] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(src.join("CountMe.java"), PROGRAM).unwrap();
    let jdk = hprof_testkit::java::jdk17();
    let status = Command::new(jdk.bin("javac"))
        .arg("-d")
        .arg(&plain)
        .arg(src.join("CountMe.java"))
        .status()
        .unwrap();
    assert!(status.success());

    // Rewrite every class of the program, numbering sites as the agent does.
    let mut sites: Vec<(u32, String, String, AllocKind)> = Vec::new();
    let mut implementations: Vec<(String, String, String)> = Vec::new();
    let mut next = 0u32;
    for entry in std::fs::read_dir(&plain).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let outcome = count_allocations(&bytes, |s| {
            if s.kind == AllocKind::Lambda {
                implementations.push((
                    String::from_utf8_lossy(s.implementation.0).into_owned(),
                    String::from_utf8_lossy(s.implementation.1).into_owned(),
                    String::from_utf8_lossy(s.implementation.2).into_owned(),
                ));
            }
            // An array's two slots share a chunk: arrays start at even slots. Sites are
            // spread over several chunks (a gap of a chunk after each) to check chunks.
            if s.kind != AllocKind::Instance
                && s.kind != AllocKind::Lambda
                && !next.is_multiple_of(2)
            {
                next += 1;
            }
            if next.is_multiple_of(5) {
                next += hprof_classfile::CHUNK as u32;
            }
            let n = next;
            next += match s.kind {
                AllocKind::Instance | AllocKind::Lambda | AllocKind::Native(_) => 1,
                AllocKind::Array(_) => 2,
                AllocKind::Multi { dims, .. } => 2 * u32::from(dims),
            };
            sites.push((
                n,
                String::from_utf8_lossy(s.method).into_owned(),
                String::from_utf8_lossy(s.allocated).into_owned(),
                s.kind,
            ));
            Some(n)
        })
        .unwrap();
        assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
        std::fs::write(
            counted.join(path.file_name().unwrap()),
            outcome.bytes.as_deref().unwrap_or(&bytes),
        )
        .unwrap();
    }
    let layout = ArrayLayout::default();
    std::fs::write(
        patch.join(format!("{COUNTER_CLASS}.class")),
        counter_class(&layout, false),
    )
    .unwrap();
    std::fs::write(
        patch.join(format!("{THREAD_CLASS}.class")),
        with_counts_field(&jdk_thread_class(work.path())).unwrap(),
    )
    .unwrap();

    let before = run(&plain, &patch, &[]);
    let after = run(&counted, &patch, &["counts"]);
    let result = |s: &str| {
        s.lines()
            .find(|l| l.starts_with("result "))
            .map(str::to_owned)
    };
    assert_eq!(result(&before), result(&after), "{after}");
    assert!(result(&before).is_some());

    let slot = |method: &str, allocated: &str| -> u32 {
        sites
            .iter()
            .find(|(_, m, a, _)| m == method && a == allocated)
            .unwrap_or_else(|| panic!("no site {method} {allocated} in {sites:?}"))
            .0
    };
    let main = counts(&after, "main");
    let thread = counts(&after, "thread");
    let p = slot("main", "CountMe$P");
    assert_eq!(main.get(&p), Some(&1000), "{after}");
    // The lambda's allocations are counted in the thread that ran it.
    let lambda = sites
        .iter()
        .find(|(_, m, a, _)| m.starts_with("lambda$") && a == "CountMe$P")
        .unwrap()
        .0;
    assert_eq!(thread.get(&lambda), Some(&300), "{after}");
    assert_eq!(main.get(&lambda), None, "{after}");
    let ints = slot("main", "[I");
    assert_eq!(main.get(&ints), Some(&500));
    let int_bytes: u64 = (0..500).map(|i| layout.size(Element::Int, i % 7)).sum();
    assert_eq!(main.get(&(ints + 1)), Some(&int_bytes));
    // new long[3][4][]: one long[][][] and three long[][] of four.
    let multi = slot("main", "[[[J");
    assert_eq!(main.get(&multi), Some(&1));
    assert_eq!(
        main.get(&(multi + 1)),
        Some(&layout.size(Element::Reference, 3))
    );
    assert_eq!(main.get(&(multi + 2)), Some(&3));
    assert_eq!(
        main.get(&(multi + 3)),
        Some(&(3 * layout.size(Element::Reference, 4)))
    );
    // new String[2][5]: one String[][] and two String[] of five.
    let strings = slot("main", "[[Ljava/lang/String;");
    assert_eq!(main.get(&strings), Some(&1));
    assert_eq!(main.get(&(strings + 2)), Some(&2));
    // new int[0][7]: the outer array only.
    // A capturing lambda: one object per call; a non-capturing one is not counted.
    let lambda = slot("main", "java/util/function/IntSupplier");
    assert_eq!(main.get(&lambda), Some(&50));
    assert!(
        sites
            .iter()
            .filter(|(_, _, _, k)| *k == AllocKind::Lambda)
            .count()
            == 1
    );
    // The site knows the method the lambda's body is (javac's lambda$main$N, taking the
    // captured int), which its hidden class will call.
    assert_eq!(implementations.len(), 1);
    let (class, name, descriptor) = &implementations[0];
    assert_eq!(class, "CountMe");
    assert!(name.starts_with("lambda$main$"), "{name}");
    assert_eq!(descriptor, "(I)I");
    let empty = slot("main", "[[I");
    assert_eq!(main.get(&empty), Some(&1));
    assert_eq!(main.get(&(empty + 2)), None);
}

/// The calls `(opcode, class, name)` of method `name` `descriptor` of `class`, in order.
fn calls(class: &[u8], name: &str, descriptor: &str) -> Vec<(u8, String, String)> {
    let cf = ClassFile::parse(class).unwrap();
    let text = |i: u16| String::from_utf8_lossy(cf.pool.utf8(i).unwrap()).into_owned();
    let m = cf
        .methods
        .iter()
        .find(|m| text(m.name) == name && text(m.descriptor) == descriptor)
        .unwrap();
    let code = m
        .attributes
        .iter()
        .find(|a| text(a.name) == "Code")
        .unwrap();
    let code = hprof_classfile::code::Code::parse(&code.data, 0).unwrap();
    let mut out = Vec::new();
    for insn in hprof_classfile::code::decode(code.code).unwrap() {
        if matches!(insn.op, 0xb6..=0xb8) {
            let at = insn.at as usize;
            let index = u16::from_be_bytes([code.code[at + 1], code.code[at + 2]]);
            let (c, n, _) = cf.pool.member(index).unwrap();
            out.push((
                insn.op,
                String::from_utf8_lossy(c).into_owned(),
                String::from_utf8_lossy(n).into_owned(),
            ));
        }
    }
    out
}

#[test]
fn calls_of_allocating_natives_are_followed_by_the_native_probe() {
    let dir = tempfile::tempdir().unwrap();
    let mut next = 0u32;
    let mut number = |_: &hprof_classfile::AllocSite<'_>| {
        next += 2;
        Some(next)
    };
    let probe = (0xb8, COUNTER_CLASS.to_string(), "n".to_string());
    let after = |calls: &[(u8, String, String)], class: &str, name: &str| -> usize {
        calls
            .windows(2)
            .filter(|w| w[0].1 == class && w[0].2 == name && w[1] == probe)
            .count()
    };
    // ArrayList.clone(): super.clone() (invokespecial Object.clone) and an array's clone
    // through Arrays.copyOf (not a native call: not probed).
    let list = count_allocations(&jdk_class(dir.path(), "java/util/ArrayList"), &mut number)
        .unwrap()
        .bytes
        .unwrap();
    let c = calls(&list, "clone", "()Ljava/lang/Object;");
    assert_eq!(after(&c, "java/lang/Object", "clone"), 1, "{c:?}");
    assert_eq!(c.iter().filter(|x| **x == probe).count(), 1, "{c:?}");
    // Array.newInstance calls the native newArray.
    let array = count_allocations(
        &jdk_class(dir.path(), "java/lang/reflect/Array"),
        &mut number,
    )
    .unwrap()
    .bytes
    .unwrap();
    let c = calls(
        &array,
        "newInstance",
        "(Ljava/lang/Class;I)Ljava/lang/Object;",
    );
    assert_eq!(after(&c, "java/lang/reflect/Array", "newArray"), 1, "{c:?}");
    // An array's clone (`invokevirtual [Ljava/lang/Class;.clone`):
    // MethodType.parameterArray() returns a clone of its array.
    let mt = count_allocations(
        &jdk_class(dir.path(), "java/lang/invoke/MethodType"),
        &mut number,
    )
    .unwrap()
    .bytes
    .unwrap();
    let c = calls(&mt, "parameterArray", "()[Ljava/lang/Class;");
    assert_eq!(after(&c, "[Ljava/lang/Class;", "clone"), 1, "{c:?}");
}
