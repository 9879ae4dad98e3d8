//! The allocation-counting rewriter on a real JVM (JDK 17, `-Xverify:all`): a program with
//! known allocations is rewritten, run with the counter class and `java.lang.Thread` with its
//! counts field patched into java.base, and reads its own threads' counts by reflection. The
//! program's own output must not change.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use hprof_classfile::{
    ALLOCATING_INTRINSICS, AllocKind, ArrayLayout, COUNTER_CLASS, ClassFile, Element, RAN,
    THREAD_CLASS, count_allocations, counter_class, intrinsic_probe, with_counts_field,
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
fn the_allocating_intrinsics_keep_their_mark_and_say_what_they_return() {
    let dir = tempfile::tempdir().unwrap();
    for holder in [
        "java/util/Arrays",
        "jdk/internal/misc/Unsafe",
        "java/lang/StringUTF16",
        "java/math/BigInteger",
    ] {
        let original = jdk_class(dir.path(), holder);
        let (before, mark) = method_annotations(&original);
        assert_ne!(mark, 0, "{holder}");
        let mut next = 0u32;
        let mut number = |_: &hprof_classfile::AllocSite<'_>| {
            next += 16;
            Some(next)
        };
        let outcome = count_allocations(&original, &mut number).unwrap();
        let bytes = outcome.bytes.as_deref().unwrap();
        // Every annotation as it was: no method loses its intrinsic mark.
        assert_eq!(method_annotations(bytes).0, before, "{holder}");
        // The bytecode of each intrinsic gives what it returns to `ran`.
        let ran = (0xb8, COUNTER_CLASS.to_string(), RAN.0.to_string());
        for intrinsic in ALLOCATING_INTRINSICS.iter().filter(|m| m.holder == holder) {
            let c = calls(bytes, intrinsic.name, intrinsic.descriptor);
            assert!(c.contains(&ran), "{holder}.{}: {c:?}", intrinsic.name);
        }
    }
}

fn run(dir: &Path, patch: &Path, args: &[&str]) -> String {
    run_class(dir, patch, &[], "CountMe", args)
}

/// Runs `main` from `dir` on JDK 17 with `-Xverify:all`, java.base patched from `patch`;
/// returns its standard output.
fn run_class(dir: &Path, patch: &Path, jvm: &[&str], main: &str, args: &[&str]) -> String {
    let jdk = hprof_testkit::java::jdk17();
    let out = hprof_testkit::java::java_launcher(&jdk)
        .arg("-Xverify:all")
        .arg(format!("--patch-module=java.base={}", patch.display()))
        .arg("--add-opens=java.base/java.lang=ALL-UNNAMED")
        .args(jvm)
        .arg("-cp")
        .arg(dir)
        .arg(main)
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
                AllocKind::Intrinsic(k) => {
                    2 * ALLOCATING_INTRINSICS[usize::from(k)].arrays.len() as u32
                }
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

#[test]
fn calls_of_allocating_intrinsics_are_followed_by_their_probe() {
    let dir = tempfile::tempdir().unwrap();
    let mut next = 0u32;
    let mut number = |_: &hprof_classfile::AllocSite<'_>| {
        next += 16;
        Some(next)
    };
    let probe = |k: usize| (0xb8, COUNTER_CLASS.to_string(), intrinsic_probe(k));
    let ran = (0xb8, COUNTER_CLASS.to_string(), RAN.0.to_string());
    let after = |calls: &[(u8, String, String)], k: usize| -> usize {
        let m = &ALLOCATING_INTRINSICS[k];
        calls
            .windows(2)
            .filter(|w| w[0].1 == m.holder && w[0].2 == m.name && w[1] == probe(k))
            .count()
    };
    // Arrays.copyOf(T[], int) calls copyOf(T[], int, Class), intrinsic 0.
    let arrays = count_allocations(&jdk_class(dir.path(), "java/util/Arrays"), &mut number)
        .unwrap()
        .bytes
        .unwrap();
    let c = calls(
        &arrays,
        "copyOf",
        "([Ljava/lang/Object;I)[Ljava/lang/Object;",
    );
    assert_eq!(after(&c, 0), 1, "{c:?}");
    assert!(!c.contains(&ran), "{c:?}");
    // BigInteger.multiplyToLen calls implMultiplyToLen (intrinsic 4), which may return its
    // last argument: `ran` gets that argument before the call.
    let big = count_allocations(&jdk_class(dir.path(), "java/math/BigInteger"), &mut number)
        .unwrap()
        .bytes
        .unwrap();
    let c = calls(&big, "multiplyToLen", "([II[II[I)[I");
    assert_eq!(after(&c, 4), 1, "{c:?}");
    let at = c.iter().position(|x| x.2 == "implMultiplyToLen").unwrap();
    assert_eq!(c[at - 1], ran, "{c:?}");
}

/// A program that copies object arrays with the allocating intrinsics `Arrays.copyOf` and
/// `copyOfRange` in a thread of its own, then prints that thread's counts.
const COPIES: &str = r#"
import java.lang.reflect.Field;
import java.util.Arrays;

public class Copies {
    static Object[] keep = new Object[64];

    public static void main(String[] args) throws Exception {
        final int n = Integer.parseInt(args[0]);
        Thread t = new Thread(new Runnable() {
            public void run() {
                Object[] src = {"a", "b", "c", "d", "e"};
                for (int i = 0; i < n; i++) {
                    keep[i & 63] = Arrays.copyOf(src, 3);
                    keep[(i + 1) & 63] = Arrays.copyOfRange(src, 1, 4);
                }
            }
        });
        t.start();
        t.join();
        Field f = Thread.class.getDeclaredField("hprofAllocs");
        f.setAccessible(true);
        long[][] chunks = (long[][]) f.get(t);
        StringBuilder b = new StringBuilder("thread");
        for (int c = 0; chunks != null && c < chunks.length; c++) {
            long[] counts = chunks[c];
            for (int i = 0; counts != null && i < counts.length; i++) {
                if (counts[i] != 0) b.append(' ').append(c * counts.length + i).append('=').append(counts[i]);
            }
        }
        System.out.println(b);
        Field last = Thread.class.getDeclaredField("hprofLast");
        last.setAccessible(true);
        System.out.println("last " + last.get(t));
    }
}
"#;

#[test]
fn what_intrinsics_return_is_counted_once_interpreted_or_compiled() {
    // The program's class and java.util.Arrays are rewritten: interpreted, the bytecode of
    // copyOf/copyOfRange counts its `new Object[]` and the probe after the call leaves it
    // alone; compiled by C2, the intrinsic runs instead and the probe counts its array.
    let work = tempfile::tempdir().unwrap();
    let (src, plain, counted, patch) = (
        work.path().join("src"),
        work.path().join("plain"),
        work.path().join("counted"),
        work.path().join("patch"),
    );
    for d in [
        &src,
        &plain,
        &counted,
        &patch.join("java/util"),
        &patch.join("java/lang"),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(src.join("Copies.java"), COPIES).unwrap();
    let jdk = hprof_testkit::java::jdk17();
    let status = Command::new(jdk.bin("javac"))
        .arg("-d")
        .arg(&plain)
        .arg(src.join("Copies.java"))
        .status()
        .unwrap();
    assert!(status.success());
    // (slot, kind, allocated) of every site, numbered as the agent does; the program's own
    // arrays (its `src`) are left out.
    let mut sites: Vec<(u32, AllocKind, String)> = Vec::new();
    let mut next = 0u32;
    let mut number = |s: &hprof_classfile::AllocSite<'_>| {
        next = next.next_multiple_of(2);
        let n = next;
        next += match s.kind {
            AllocKind::Intrinsic(k) => {
                2 * ALLOCATING_INTRINSICS[usize::from(k)].arrays.len() as u32
            }
            AllocKind::Multi { dims, .. } => 2 * u32::from(dims),
            _ => 2,
        };
        if s.class == b"java/util/Arrays" || matches!(s.kind, AllocKind::Intrinsic(_)) {
            sites.push((n, s.kind, String::from_utf8_lossy(s.allocated).into_owned()));
        }
        Some(n)
    };
    for entry in std::fs::read_dir(&plain).unwrap() {
        let path = entry.unwrap().path();
        let bytes = std::fs::read(&path).unwrap();
        let outcome = count_allocations(&bytes, &mut number).unwrap();
        assert!(outcome.failed.is_empty(), "{:?}", outcome.failed);
        std::fs::write(
            counted.join(path.file_name().unwrap()),
            outcome.bytes.as_deref().unwrap_or(&bytes),
        )
        .unwrap();
    }
    let arrays =
        count_allocations(&jdk_class(work.path(), "java/util/Arrays"), &mut number).unwrap();
    assert!(arrays.failed.is_empty(), "{:?}", arrays.failed);
    std::fs::write(patch.join("java/util/Arrays.class"), arrays.bytes.unwrap()).unwrap();
    std::fs::write(
        patch.join(format!("{COUNTER_CLASS}.class")),
        counter_class(&ArrayLayout::default(), false),
    )
    .unwrap();
    std::fs::write(
        patch.join(format!("{THREAD_CLASS}.class")),
        with_counts_field(&jdk_thread_class(work.path())).unwrap(),
    )
    .unwrap();
    let intrinsic_slots: Vec<u32> = sites
        .iter()
        .filter(|(_, k, _)| matches!(k, AllocKind::Intrinsic(0 | 1)))
        .map(|s| s.0)
        .collect();
    assert!(!intrinsic_slots.is_empty(), "{sites:?}");
    const N: u64 = 200_000;
    // Compiled by C2 (its profile from the interpreter, no C1 tier in between), only the loop
    // with what it inlines: elsewhere a compiled call of copyOf on another array class would go
    // to the agent's native `n`, which this test has not.
    let compiled_loop = [
        "-Xbatch",
        "-XX:-TieredCompilation",
        "-XX:CompileCommand=quiet",
        "-XX:CompileCommand=compileonly,Copies$1::run",
    ];
    for (jvm, compiled) in [(&["-Xint"][..], false), (&compiled_loop[..], true)] {
        let out = run_class(&counted, &patch, jvm, "Copies", &[&N.to_string()]);
        let counts = counts(&out, "thread");
        // Every Object[] the thread made: at the bytecode's `anewarray`s and after the calls.
        let objects: u64 = sites
            .iter()
            .filter(|(_, k, a)| match k {
                AllocKind::Array(_) => a == "[Ljava/lang/Object;",
                AllocKind::Intrinsic(0 | 1) => true,
                _ => false,
            })
            .filter_map(|(slot, _, _)| counts.get(slot))
            .sum();
        assert_eq!(objects, 2 * N, "{jvm:?}: {out}");
        let by_probe: u64 = intrinsic_slots.iter().filter_map(|s| counts.get(s)).sum();
        if compiled {
            assert!(
                by_probe > N,
                "{jvm:?}: {by_probe} of {} by the intrinsics: {out}",
                2 * N
            );
        } else {
            assert_eq!(by_probe, 0, "{jvm:?}: {out}");
        }
        assert!(out.contains("last null"), "{out}");
    }
}
