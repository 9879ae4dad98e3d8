//! A JNI library that installs its own SIGPROF handler after the agent's
//! (`java/src/SigTaker.java`, its C library built by the test) does not silence the sampler:
//! the agent names the library's handler in an `HPROF WARNING`, puts its own back in front
//! of it (the library still gets its own signals), and says how many signals were not the
//! sampler's.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{TextProfile, jdk17, jdks, profile, read_text, text_output};

/// The library: its handler counts the SIGPROF signals it gets.
const SIGTAKER_C: &str = r#"
#include <pthread.h>
#include <signal.h>
#include <string.h>

static volatile long got;

void sigtaker_on_sigprof(int signo, siginfo_t *info, void *context) {
    (void) signo; (void) info; (void) context;
    got++;
}

void Java_SigTaker_install(void *env, void *cls) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = sigtaker_on_sigprof;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    sigaction(SIGPROF, &action, 0);
}

static void *raiser(void *arg) {
    int times = *(int *) arg;
    for (int i = 0; i < times; i++) {
        raise(SIGPROF);
    }
    return 0;
}

/* Raised in a thread of the library's own, which the JVM does not know: no sampler signal is
   ever pending there. (A SIGPROF raised in a sampled thread while the sampler's is pending
   on it is merged into that one, as the kernel keeps one pending signal of each standard
   number: a fresh clone saw the library's handler get 99 of its 100.) */
int Java_SigTaker_raiseOwn(void *env, void *cls, int times) {
    pthread_t thread;
    if (pthread_create(&thread, 0, raiser, &times) != 0) {
        return -1;
    }
    pthread_join(thread, 0);
    return times;
}

long long Java_SigTaker_count(void *env, void *cls) {
    return got;
}
"#;

/// Builds libsigtaker.so in `dir` with the system's C compiler.
fn build_library(dir: &Path) -> PathBuf {
    let source = dir.join("sigtaker.c");
    std::fs::write(&source, SIGTAKER_C).unwrap();
    let library = dir.join("libsigtaker.so");
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-pthread", "-o"])
        .arg(&library)
        .arg(&source)
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success(), "cc failed");
    library
}

/// The number in `text` right after `prefix`.
fn number_after(text: &str, prefix: &str) -> Option<u64> {
    let rest = &text[text.find(prefix)? + prefix.len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest[..digits].parse().ok()
}

fn check(jdk_version: u32, options: &str, library: &Path) {
    let (run, dir) = profile(
        &jdk(jdk_version),
        options,
        "SigTaker",
        &[library.to_str().unwrap(), "2", "100"],
    );
    let context = format!("JDK {jdk_version} {options}");
    assert_eq!(run.code, Some(0), "{context}: {}", run.stderr);
    assert!(run.stdout.contains("done"), "{context}: {}", run.stdout);
    // Named, and put back.
    assert!(
        run.stderr.contains(
            "HPROF WARNING: SIGPROF's handler was replaced by libsigtaker.so (sigtaker_on_sigprof): the CPU sampler's is back in front of it"
        ),
        "{context}: {}",
        run.stderr
    );
    // The library's own 100 signals went to its handler, and were counted as not the
    // sampler's.
    let got = number_after(&run.stdout, "handler got ").unwrap();
    assert!(got >= 100, "{context}: {}", run.stdout);
    let foreign = run
        .stderr
        .lines()
        .find(|l| l.contains("SIGPROF signals were not the CPU sampler's"))
        .and_then(|l| number_after(l, "HPROF WARNING: "));
    assert!(
        foreign.is_some_and(|n| n >= 100),
        "{context}: {}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("SIGPROF signals were not the CPU sampler's")
            && run
                .stderr
                .contains("passed to libsigtaker.so (sigtaker_on_sigprof)"),
        "{context}: {}",
        run.stderr
    );
    // The sampler kept sampling: a sample of compute() per 10 ms of the CPU time it took, but
    // for those lost while the library's handler took the signals: the handler's count beyond
    // the library's own 100 (on an idle machine 2 or so; on a loaded one more, as the sampler
    // thread that puts its handler back runs late: a fresh clone beside another saw compute()
    // with 53 samples for 628 ms).
    let compute_ms = number_after(&run.stdout, "compute ").unwrap() / 1_000_000;
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    let in_compute: u64 = cpu
        .rows
        .iter()
        .filter(|r| {
            p.traces[&r.trace]
                .frames
                .iter()
                .any(|f| f.starts_with("SigTaker.compute("))
        })
        .map(|r| r.count)
        .sum();
    let lost = got - 100;
    // (Where the samples went, should it fail.)
    let top = p.top_rows(6);
    assert!(
        (in_compute + lost) * 10 + 30 >= compute_ms * 9 / 10,
        "{context}: {in_compute} samples in compute() and {lost} taken by the library, for \
         {compute_ms} ms of CPU time; stderr: {}; top rows: {top:#?}",
        run.stderr
    );
}

fn jdk(version: u32) -> crate::support::Jdk {
    jdks()
        .into_iter()
        .find(|j| j.version == version)
        .unwrap_or_else(jdk17)
}

#[test]
fn a_library_that_takes_sigprof_is_named_and_the_sampler_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let library = build_library(dir.path());
    for jdk in jdks() {
        check(jdk.version, "cpu=samples", &library);
    }
    // POSIX timers (whose signals the library got until the sampler took SIGPROF back).
    check(17, "cpu=samples,timer=cpu", &library);
}
