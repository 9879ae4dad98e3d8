//! The CPU sampler's own stack walk (its own test target, `cargo test -p hprof-agent --test
//! stack_walk`, so that no other test's JVMs share the CPUs with these): stacks through
//! HotSpot's intrinsic stubs, leaf calls into the JVM and the vDSO, JNI code, javac's mix of
//! interpreted and compiled code, and a stress run while classes load and unload, code
//! deoptimizes, the heap is collected and threads come and go (java/src/StackWalk.java).
//! Every JVM is bounded by `finish`'s two-minute timeout.

#[allow(unused_imports)]
#[path = "support.rs"]
mod support;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Mutex;

use support::{JavaRun, Jdk, TextProfile, agentpath, jdk17, jdks, read_text, run_java};

/// One JVM at a time: the shares measured are of CPUs nothing else in this binary uses.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `StackWalk args` on `jdk` under `options` (after `jvm_options`); checks it ended
/// well; returns the run and the parsed text profile.
fn walk(jdk: &Jdk, jvm_options: &[&str], options: &str, args: &[&str]) -> (JavaRun, TextProfile) {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let agent = agentpath(options);
    let mut all: Vec<&str> = jvm_options.to_vec();
    all.push(&agent);
    let run = run_java(jdk, dir.path(), &all, "StackWalk", args);
    let what = format!("JDK {} {options} {args:?}", jdk.version);
    assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
    assert!(
        run.stdout.lines().any(|l| l == "done"),
        "{what}: {}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("HPROF ERROR"),
        "{what}: {}",
        run.stderr
    );
    let profile = TextProfile::parse(&read_text(&dir.path().join("java.hprof.txt")));
    (run, profile)
}

/// Samples of the last CPU SAMPLES section whose trace (frames, thread) satisfies `keep`.
fn samples(p: &TextProfile, keep: impl Fn(&[String], Option<u32>) -> bool) -> u64 {
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    cpu.rows
        .iter()
        .filter(|r| {
            let t = &p.traces[&r.trace];
            keep(&t.frames, t.thread)
        })
        .map(|r| r.count)
        .sum()
}

/// A trace's frames below the kernel's (a sample taken in a system call, a fault or an
/// interrupt has the kernel's frames on top of those the walk took).
fn walked(frames: &[String]) -> &[String] {
    let kernel = frames
        .iter()
        .take_while(|x| x.starts_with("[kernel]."))
        .count();
    &frames[kernel..]
}

/// Each thread's CPU time as the program measured it (its `cpu NAME NS` lines).
fn measured(stdout: &str) -> HashMap<String, f64> {
    stdout
        .lines()
        .filter_map(|l| {
            let mut words = l.strip_prefix("cpu ")?.split(' ');
            Some((words.next()?.to_string(), words.next()?.parse().ok()?))
        })
        .collect()
}

/// The most frequent traces of `thread` (or all threads), for assertion messages.
fn listing(p: &TextProfile, thread: Option<u32>) -> String {
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    cpu.rows
        .iter()
        .filter(|r| thread.is_none() || p.traces[&r.trace].thread == thread)
        .take(12)
        .map(|r| format!("\n{} x {:?}", r.count, p.traces[&r.trace].frames))
        .collect()
}

fn is_pseudo(frame: &str) -> bool {
    frame.starts_with("<hprof>.")
}

#[test]
fn intrinsic_stubs_and_leaf_calls_get_the_share_of_cpu_they_used() {
    // Three threads: Math.sin/cos/sqrt/log/exp/pow (the JIT's stubs), System.nanoTime (a
    // leaf call into libjvm, libc and the vDSO), and plain arithmetic; each sampled in
    // proportion to the CPU time it measured, within a point, from 10,000 samples or more.
    const KERNELS: [(&str, &str); 3] = [
        ("libm", "StackWalk.libm("),
        ("nanotime", "StackWalk.nanotime("),
        ("plain", "StackWalk.plain("),
    ];
    for jdk in jdks() {
        let v = jdk.version;
        let (run, p) = walk(
            &jdk,
            &[],
            "cpu=samples,interval=1,depth=16",
            &["kernels", "10600"],
        );
        let cpu = measured(&run.stdout);
        let cpu_total: f64 = KERNELS.iter().map(|(k, _)| cpu[*k]).sum();
        let counts: Vec<u64> = KERNELS
            .iter()
            .map(|(_, method)| samples(&p, |f, _| f.iter().any(|x| x.starts_with(method))))
            .collect();
        let sampled: u64 = counts.iter().sum();
        assert!(
            sampled >= 10_000,
            "JDK {v}: {sampled} samples{}",
            listing(&p, None)
        );
        for ((kernel, _), count) in KERNELS.iter().zip(&counts) {
            let truth = cpu[*kernel] / cpu_total * 100.0;
            let share = *count as f64 / sampled as f64 * 100.0;
            assert!(
                (share - truth).abs() <= 1.0,
                "JDK {v}: {kernel} sampled {share:.2} %, measured {truth:.2} %{}",
                listing(&p, None)
            );
        }
        // The stubs and the leaf call's native code are the top frames of their kernels.
        let libm = counts[0];
        let in_stubs = samples(&p, |f, _| {
            walked(f)
                .first()
                .is_some_and(|x| x.starts_with("[stub].StubRoutines::"))
                && f.iter().any(|x| x.starts_with("StackWalk.libm("))
        });
        assert!(
            in_stubs * 4 >= libm,
            "JDK {v}: {in_stubs} of {libm} in stubs"
        );
        let nanotime = counts[1];
        let in_vdso = samples(&p, |f, _| {
            walked(f)
                .first()
                .is_some_and(|x| x.contains("clock_gettime"))
                && f.iter().any(|x| x.starts_with("StackWalk.nanotime("))
        });
        assert!(
            in_vdso * 4 >= nanotime,
            "JDK {v}: {in_vdso} of {nanotime} in clock_gettime"
        );
    }
}

/// A JNI library whose function burns CPU in C.
const JNI_SOURCE: &str = r#"
#include <jni.h>

JNIEXPORT jlong JNICALL Java_StackWalk_burn(JNIEnv *env, jclass cls, jlong n) {
    volatile jlong x = 1;
    for (jlong i = 0; i < n; i++) {
        x = x * 6364136223846793005LL + 1442695040888963407LL;
    }
    return x;
}
"#;

/// Compiles [`JNI_SOURCE`] into `dir/libstackwalk.so` with the system C compiler.
fn jni_library(dir: &Path) -> String {
    let source = dir.join("stackwalk.c");
    std::fs::write(&source, JNI_SOURCE).unwrap();
    let include = jdk17().home.join("include");
    let library = dir.join("libstackwalk.so");
    let status = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-O2", "-o"])
        .arg(&library)
        .arg(format!("-I{}", include.display()))
        .arg(format!("-I{}", include.join("linux").display()))
        .arg(&source)
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success(), "cc failed");
    library.display().to_string()
}

#[test]
fn a_jni_function_is_named_above_the_java_native_method_that_called_it() {
    let lib = tempfile::tempdir().unwrap();
    let library = jni_library(lib.path());
    for jdk in jdks() {
        let v = jdk.version;
        let (_, p) = walk(
            &jdk,
            &[],
            "cpu=samples,interval=1,depth=8,thread=y",
            &["jni", "3000", &library],
        );
        let jni = p.thread("jni").expect("the jni thread");
        let total = samples(&p, |_, t| t == Some(jni));
        let named = samples(&p, |f, t| {
            t == Some(jni)
                && walked(f)
                    .first()
                    .is_some_and(|x| x.starts_with("libstackwalk.so.Java_StackWalk_burn("))
                && walked(f)
                    .get(1)
                    .is_some_and(|x| x.starts_with("StackWalk.burn("))
        });
        assert!(total >= 500, "JDK {v}: {total} samples");
        assert!(
            named * 100 >= total * 90,
            "JDK {v}: {named} of {total}{}",
            listing(&p, Some(jni))
        );
    }
    // native=n: the Java native method is the top frame, and no native frame shows.
    let (_, p) = walk(
        &jdk17(),
        &[],
        "cpu=samples,interval=1,depth=8,thread=y,native=n",
        &["jni", "2000", &library],
    );
    let jni = p.thread("jni").expect("the jni thread");
    let total = samples(&p, |_, t| t == Some(jni));
    let top = samples(&p, |f, t| {
        t == Some(jni)
            && walked(f)
                .first()
                .is_some_and(|x| x.starts_with("StackWalk.burn("))
    });
    assert!(
        top * 100 >= total * 90,
        "{top} of {total}{}",
        listing(&p, Some(jni))
    );
    let native = samples(&p, |f, _| f.iter().any(|x| x.contains(".so.")));
    assert_eq!(native, 0, "{}", listing(&p, None));
}

/// Writes 40 small classes that call each other, with lambdas and generics, for javac.
fn javac_sources(dir: &Path) -> Vec<String> {
    (0..40)
        .map(|i| {
            let methods: String = (0..8)
                .map(|j| {
                    format!(
                        "    public static int m{j}(java.util.List<String> xs, int k) {{\n\
                         \x20       int sum = 0;\n\
                         \x20       for (String x : xs) {{\n\
                         \x20           if (x.length() > k) sum += x.hashCode() % {};\n\
                         \x20           else sum -= k * {};\n\
                         \x20       }}\n\
                         \x20       java.util.Map<String, Integer> m = new java.util.HashMap<>();\n\
                         \x20       xs.forEach(x -> m.merge(x, 1, Integer::sum));\n\
                         \x20       return sum + m.size() + C{}.V + {j};\n\
                         \x20   }}\n",
                        j + 3,
                        i + 1,
                        (i + 1) % 40
                    )
                })
                .collect();
            let path = dir.join(format!("C{i}.java"));
            std::fs::write(
                &path,
                format!(
                    "public class C{i} {{\n    public static final int V = {i};\n{methods}}}\n"
                ),
            )
            .unwrap();
            path.display().to_string()
        })
        .collect()
}

#[test]
fn few_walks_fail_on_javac() {
    // javac (JDK 17's; the other JDKs here are runtimes without it) compiling 40 small
    // classes: interpreted, C1 and C2 code, adapters, runtime stubs, deoptimizations.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let sources = javac_sources(dir.path());
    let output = dir.path().join("javac.hprof.txt");
    let agent = format!(
        "-J{}",
        agentpath(&format!(
            "cpu=samples,interval=1,depth=32,file={}",
            output.display()
        ))
    );
    let child = std::process::Command::new(jdk.bin("javac"))
        .current_dir(dir.path())
        .arg(&agent)
        .args(["-d", "classes"])
        .args(&sources)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("javac starts");
    let run = support::finish(child);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&output));
    let total = p.cpu.last().expect("a CPU SAMPLES section").total;
    let failed = samples(&p, |f, _| f.iter().any(|x| is_pseudo(x)));
    assert!(total >= 1000, "{total} samples");
    assert!(
        failed * 1000 <= total * 5,
        "{failed} of {total} samples are failed walks{}",
        p.cpu
            .last()
            .unwrap()
            .rows
            .iter()
            .filter(|r| p.traces[&r.trace].frames.iter().any(|x| is_pseudo(x)))
            .map(|r| format!("\n{} x {:?}", r.count, p.traces[&r.trace].frames))
            .collect::<String>()
    );
}

#[test]
fn a_stress_run_ends_well_with_a_well_formed_profile() {
    // 1 ms samples while classes load and unload, code deoptimizes, the heap is collected,
    // threads start and end, and the kernels run in stubs and leaf calls.
    for jdk in jdks() {
        let v = jdk.version;
        let (run, p) = walk(
            &jdk,
            &["-Xmx64m"],
            "cpu=samples,interval=1,depth=64,thread=y,vmthreads=y",
            &["stress", "4000"],
        );
        let total = p.cpu.last().expect("a CPU SAMPLES section").total;
        assert!(total >= 1000, "JDK {v}: {total} samples: {}", run.stdout);
        // vmthreads=y: the JIT's and the collector's threads are sampled too, under the
        // names the kernel gives them, with native (and kernel) frames only.
        let vm_thread = |name: &str| {
            [
                "C1 CompilerThre",
                "C2 CompilerThre",
                "GC Thread",
                "VM Thread",
                "G1 ",
            ]
            .iter()
            .any(|prefix| name.starts_with(prefix))
        };
        let vm_serials: Vec<u32> = p
            .thread_starts
            .iter()
            .filter(|(_, name)| vm_thread(name))
            .map(|(serial, _)| *serial)
            .collect();
        let vm_samples = samples(&p, |f, t| {
            t.is_some_and(|t| vm_serials.contains(&t))
                && f.iter().all(|x| {
                    x.contains(".so.") || x.starts_with("[kernel].") || x.starts_with("[vdso].")
                })
        });
        assert!(
            vm_samples > 0,
            "JDK {v}: no sample of the JVM's threads: {:?}",
            p.thread_starts
        );
        // Every trace's frames are named (none is a bare pc outside any library).
        for trace in p.traces.values() {
            assert!(
                trace
                    .frames
                    .iter()
                    .all(|f| !f.is_empty() && f.contains('(')),
                "JDK {v}: {trace:?}"
            );
        }
        let stubs = samples(&p, |f, _| {
            f.iter().any(|x| x.starts_with("[stub].StubRoutines::"))
        });
        assert!(stubs > 0, "JDK {v}: no stub frame{}", listing(&p, None));
    }
}

#[test]
fn without_the_walk_asynccallgettrace_takes_the_stacks_and_says_so() {
    // The diagnostic switch _HPROF_NO_WALKER leaves AsyncGetCallTrace alone (as a JVM whose
    // structures cannot be read would): one verbose line says why, and no native or stub
    // frame shows.
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let (run, dir) = support::profile_with_env(
        &jdk17(),
        &[],
        "cpu=samples,interval=1,depth=8",
        "StackWalk",
        &["kernels", "1500"],
        &[("_HPROF_NO_WALKER", "1")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "HPROF: cpu samples take stacks with AsyncGetCallTrace alone: _HPROF_NO_WALKER is set"
        ),
        "{}",
        run.stderr
    );
    let p = TextProfile::parse(&read_text(&dir.path().join("java.hprof.txt")));
    let code = samples(&p, |f, _| {
        f.iter()
            .any(|x| x.starts_with("[stub].") || x.contains(".so."))
    });
    assert_eq!(code, 0, "{}", listing(&p, None));
}
