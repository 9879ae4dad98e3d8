//! The agent never loses its output or exposes it: a complete profile after an
//! OutOfMemoryError that keeps the JVM from its orderly shutdown, files created 0600 whatever
//! the umask, and symbolic links at the output path never written through. (SIGQUIT storms,
//! the deadlock and the JDK 25 heap walk crash are in the stress suite, tests/stress.rs.)

use std::os::unix::fs::{PermissionsExt, symlink};
use std::process::{Command, Stdio};

use hprof_format::Records;

use crate::support::{TextProfile, agentpath, finish, jdks, read_text, run_java};
use hprof_testkit::java::classes;

/// The text or binary output in `dir` is complete: every section closed, every record whole;
/// with `busy`, the program ran long enough for CPU samples in its own code.
fn assert_complete(dir: &std::path::Path, binary: bool, busy: bool, what: &str) {
    if binary {
        let bytes = std::fs::read(dir.join("java.hprof")).unwrap();
        let (_, mut records) = Records::new(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
        let mut tags = Vec::new();
        while let Some((_, record)) = records.next().unwrap_or_else(|e| panic!("{what}: {e}")) {
            tags.push(record.tag());
        }
        assert!(
            tags.contains(&hprof_format::Tag::CpuSamples),
            "{what}: no CPU SAMPLES record in {} records",
            tags.len()
        );
    } else {
        let text = read_text(&dir.join("java.hprof.txt"));
        assert!(
            text.ends_with("CPU SAMPLES END\n"),
            "{what}: {}",
            &text[text.len().saturating_sub(200)..]
        );
        let p = TextProfile::parse(&text);
        assert_eq!(p.cpu.len(), 1, "{what}");
        if !busy {
            return;
        }
        assert!(p.cpu[0].total > 0, "{what}: {:?}", p.cpu);
        assert!(
            p.cpu[0]
                .rows
                .iter()
                .any(|r| r.method.starts_with("Stress.")),
            "{what}: {:?}",
            p.cpu[0].rows
        );
    }
}

#[test]
fn output_is_complete_after_an_out_of_memory_error_that_prevents_shutdown() {
    // With the heap full to the end (Stress oom-static leaves no garbage), the JVM can't even
    // attach the thread DestroyJavaVM needs, and exits without VM death; the agent writes its
    // last dump from its exit handler.
    for jdk in jdks() {
        for binary in [false, true] {
            let what = format!("JDK {} binary={binary}", jdk.version);
            let dir = tempfile::tempdir().unwrap();
            let options = if binary {
                "cpu=samples,format=b"
            } else {
                "cpu=samples"
            };
            let run = run_java(
                &jdk,
                dir.path(),
                &["-Xmx32m", &agentpath(options)],
                "Stress",
                &["0", "oom-static"],
            );
            assert_eq!(run.code, Some(1), "{what}: {:?} {}", run.signal, run.stderr);
            assert!(
                run.stderr.contains("OutOfMemoryError"),
                "{what}: {}",
                run.stderr
            );
            assert!(
                run.stderr
                    .contains("HPROF ERROR: the JVM is exiting without its VM death event"),
                "{what}: the cause is not on stderr: {}",
                run.stderr
            );
            assert_complete(dir.path(), binary, false, &what);
        }
    }
}

#[test]
fn output_files_are_private_whatever_the_umask() {
    for jdk in jdks() {
        for (options, name) in [
            ("cpu=samples", "java.hprof.txt"),
            ("cpu=samples,format=b", "java.hprof"),
        ] {
            let what = format!("JDK {} {options}", jdk.version);
            let dir = tempfile::tempdir().unwrap();
            // An existing file, readable by all, is replaced by a private one.
            std::fs::write(dir.path().join(name), "old").unwrap();
            std::fs::set_permissions(
                dir.path().join(name),
                std::fs::Permissions::from_mode(0o666),
            )
            .unwrap();
            let child = Command::new("sh")
                .current_dir(dir.path())
                .arg("-c")
                .arg("umask 000 && exec \"$@\"")
                .arg("sh")
                .arg(jdk.bin("java"))
                .arg(agentpath(options))
                .arg("-cp")
                .arg(classes())
                .args(["Stress", "300", "cpu"])
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let run = finish(child);
            assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
            let meta = std::fs::metadata(dir.path().join(name)).unwrap();
            assert_eq!(meta.permissions().mode() & 0o777, 0o600, "{what}");
            assert_complete(dir.path(), options.contains("format=b"), true, &what);
        }
    }
}

#[test]
fn a_symbolic_link_at_the_output_path_is_never_written_through() {
    for jdk in jdks() {
        let what = format!("JDK {}", jdk.version);
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("precious");
        std::fs::write(&target, "keep me").unwrap();
        symlink(&target, dir.path().join("java.hprof.txt")).unwrap();
        let dangling_target = dir.path().join("created-through-a-link");
        symlink(&dangling_target, dir.path().join("java.hprof")).unwrap();
        for options in ["cpu=samples", "cpu=samples,format=b"] {
            let run = run_java(
                &jdk,
                dir.path(),
                &[&agentpath(options)],
                "Stress",
                &["200", "cpu"],
            );
            assert_eq!(run.code, Some(0), "{what} {options}: {}", run.stderr);
            assert!(
                run.stderr
                    .contains("is a symbolic link; hprof never writes through one"),
                "{what} {options}: {}",
                run.stderr
            );
        }
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "keep me",
            "{what}"
        );
        assert!(
            !dangling_target.exists(),
            "{what}: the dangling link's target was created"
        );
        // The profiles went to new names beside the links: java.hprof.<pid>.txt and java.hprof.<pid>.
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        let text = names
            .iter()
            .find(|n| n.starts_with("java.hprof.") && n.ends_with(".txt") && *n != "java.hprof.txt")
            .unwrap_or_else(|| panic!("{what}: no new text profile in {names:?}"));
        TextProfile::parse(&read_text(&dir.path().join(text)));
        assert!(
            names.iter().any(
                |n| n.starts_with("java.hprof.") && n[11..].chars().all(|c| c.is_ascii_digit())
            ),
            "{what}: no new binary profile in {names:?}"
        );
    }
}

/// Runs `main_class args` under the agent with `options` (its `file=` in a directory of its
/// own) on a file system of `megabytes` (a tmpfs in a mount namespace: a full disk), and
/// copies what the agent wrote out; the run and the output's bytes. Panics where mount
/// namespaces are not allowed (in CI), else `None`.
fn on_a_small_disk(
    jdk: &crate::support::Jdk,
    megabytes: u32,
    options: &str,
    output: &str,
    main_class: &str,
    args: &[&str],
) -> Option<(crate::support::JavaRun, Vec<u8>)> {
    let host = tempfile::tempdir().unwrap();
    let small = host.path().join("small");
    std::fs::create_dir(&small).unwrap();
    // Root mounts in a mount namespace; anyone else in a user namespace of their own.
    let root = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0)
    };
    let unshare: &[&str] = if root {
        &["--mount"]
    } else {
        &["--user", "--map-root-user", "--mount"]
    };
    let probe = Command::new("unshare")
        .args(unshare)
        .args(["sh", "-c"])
        .arg(format!(
            "mount -t tmpfs -o size=1m tmpfs '{}'",
            small.display()
        ))
        .output();
    if !probe.is_ok_and(|o| o.status.success()) {
        assert!(
            std::env::var_os("CI").is_none(),
            "mounting a small tmpfs in a namespace is not allowed here"
        );
        eprintln!("mounting a small tmpfs in a namespace is not allowed here: this test needs it");
        return None;
    }
    let copy = host.path().join("copy");
    let agent = agentpath(&format!("{options},file={}/{output}", small.display()));
    let script = format!(
        "mount -t tmpfs -o size={megabytes}m tmpfs '{small}' && cd '{small}' && \
         \"$0\" \"$@\"; status=$?; cat '{small}/{output}' > '{copy}'; exit $status",
        small = small.display(),
        copy = copy.display(),
    );
    let child = Command::new("unshare")
        .args(unshare)
        .args(["sh", "-c", &script])
        .arg(jdk.bin("java"))
        .arg(&agent)
        .arg("-cp")
        .arg(classes())
        .arg(main_class)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("unshare starts");
    let run = finish(child);
    let bytes = std::fs::read(&copy).unwrap_or_default();
    Some((run, bytes))
}

#[test]
fn a_heap_dump_on_a_full_disk_is_never_announced_as_done_and_the_file_says_it_is_incomplete() {
    // ManyLive keeps half a million objects: a heap dump of about 20 MB, on a 10 MB disk.
    // The JVM's own dumper (its file beside the output) and the agent's writes run out of
    // room. Binary output on every JDK, text on one.
    for jdk in jdks() {
        let formats: &[bool] = if jdk.version == 17 {
            &[true, false]
        } else {
            &[true]
        };
        for &binary in formats {
            let what = format!("JDK {} binary={binary}", jdk.version);
            let (options, output) = if binary {
                ("heap=dump,format=b", "heap.hprof")
            } else {
                ("heap=dump", "heap.txt")
            };
            let Some((run, bytes)) =
                on_a_small_disk(&jdk, 10, options, output, "ManyLive", &["500000"])
            else {
                return;
            };
            // The program is left alone: it ran to its end.
            assert_eq!(run.code, Some(0), "{what}: {}", run.stderr);
            assert!(run.stdout.contains("kept 500000"), "{what}");
            assert!(
                !run.stderr.contains("done."),
                "{what}: announced as done: {}",
                run.stderr
            );
            assert!(
                run.stderr.contains("Dumping Java heap ... INCOMPLETE: "),
                "{what}: {}",
                run.stderr
            );
            assert!(
                run.stderr.contains("No space left on device"),
                "{what}: {}",
                run.stderr
            );
            // What the file holds is whole up to its last complete dump, and says that the
            // rest is missing.
            if binary {
                let completeness = hprof_format::Completeness::scan(&bytes)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let problems = completeness.problems();
                assert!(
                    problems
                        .iter()
                        .all(|p| matches!(p, hprof_format::Problem::WriterNote { .. })),
                    "{what}: {problems:?}"
                );
                assert!(
                    problems
                        .iter()
                        .any(|p| p.to_string().contains("No space left on device")),
                    "{what}: {problems:?}"
                );
            } else {
                let text = String::from_utf8(bytes).unwrap();
                assert!(text.starts_with("JAVA PROFILE 1.0.1"), "{what}: {text}");
                let last = text.lines().last().unwrap_or_default();
                assert!(
                    last.starts_with("HPROF ERROR: ") && last.contains("No space left on device"),
                    "{what}: ends with {last:?}"
                );
            }
        }
    }
}

#[test]
fn net_to_a_closed_port_or_an_unknown_host_ends_the_jvm_saying_why() {
    // As the original did: the JVM ends before main with "can't connect to HOST:PORT", exit
    // status 1; now with the reason.
    let jdk = crate::support::jdk17();
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    for (net, why) in [
        (
            format!("127.0.0.1:{port}"),
            "connection refused by 127.0.0.1:".to_string(),
        ),
        (
            "no-such-host.invalid:7777".to_string(),
            "(no such host: ".to_string(),
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let run = run_java(
            &jdk,
            dir.path(),
            &[&agentpath(&format!("cpu=samples,net={net}"))],
            "CpuHot",
            &["300"],
        );
        assert_eq!(run.code, Some(1), "{net}: {}", run.stderr);
        assert!(
            !run.stdout.contains("hot"),
            "{net}: main ran: {}",
            run.stdout
        );
        assert!(
            run.stderr
                .contains(&format!("HPROF ERROR: can't connect to {net} ")),
            "{net}: {}",
            run.stderr
        );
        assert!(run.stderr.contains(&why), "{net}: {}", run.stderr);
    }
}
