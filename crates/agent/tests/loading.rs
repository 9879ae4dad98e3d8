//! Loading the agent (-agentpath, -agentlib, -Xrunhprof, twice), `help`, option errors and
//! output file naming.

use hprof::options::help_text;

use crate::support::{
    TextProfile, agentpath, jdk17, jdks, libhprof, profile, read_text, run_java, text_output,
};

#[test]
fn help_prints_the_usage_text_and_exits_0() {
    let (run, _dir) = profile(&jdk17(), "help", "CpuHot", &["100"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout, format!("{}\n", help_text()));
    assert!(
        run.stdout
            .contains("cpu=samples|times|old  CPU usage                      off\n")
    );
}

#[test]
fn option_errors_print_the_original_line_and_exit_1() {
    let jdk = jdk17();
    for (options, description) in [
        (
            "cpu=fast",
            "cpu option value must be y|samples|wall|times|old",
        ),
        ("sampler=fast", "sampler option value must be async|jvmti"),
        (
            "cpu=wall,cpu=samples",
            "cpu=wall cannot be used with cpu=samples",
        ),
        ("heap=none", "heap option value must be dump|sites|all"),
        ("depth=-1", "depth option value must be decimal and >= 0"),
        (
            "interval=0",
            "interval option value must be decimal and > 0",
        ),
        (
            "cutoff=x",
            "cutoff option value must be floating point and >= 0",
        ),
        ("thread=maybe", "thread option value must be y|n"),
        (
            "file=a,file=b",
            "file or net options should only appear once",
        ),
        ("net=nohost", "net option missing ':'"),
        (
            "format=b,cpu=times",
            "cpu=times|old is not supported with format=b",
        ),
        (
            "format=b,monitor=y",
            "monitor=y is not supported with format=b",
        ),
        ("bogus=1", "Unknown option: bogus"),
        ("cpu,heap=sites", "Unknown option: cpu,heap"),
        (
            "averyveryverylongoption=1",
            "general syntax error parsing options",
        ),
    ] {
        let (run, dir) = profile(&jdk, options, "CpuHot", &["100"]);
        assert_eq!(run.code, Some(1), "{options}: {}", run.stderr);
        let line = format!("HPROF ERROR: hprof option error: {description} ({options})");
        assert!(
            run.stderr.lines().any(|l| l == line),
            "{options}: {}",
            run.stderr
        );
        assert!(!run.stdout.contains("done"), "{options}: the program ran");
        assert!(!text_output(dir.path()).exists());
    }
}

#[test]
fn environment_options_are_appended_to_the_error_line() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = crate::support::java_command(
        &jdk17(),
        dir.path(),
        &[&agentpath("cpu=samples")],
        "CpuHot",
        &["100"],
    );
    command
        .env("_JAVA_HPROF_OPTIONS", "depth=x")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let run = crate::support::finish(command.spawn().unwrap());
    assert_eq!(run.code, Some(1));
    assert!(run.stderr.contains(
        "HPROF ERROR: hprof option error: depth option value must be decimal and >= 0 (cpu=samples,depth=x)"
    ), "{}", run.stderr);
}

#[test]
fn agentlib_and_xrunhprof_load_it_from_the_library_path_on_every_jdk() {
    let lib_dir = libhprof().parent().unwrap().to_path_buf();
    for jdk in crate::support::jdks() {
        for flag in ["-agentlib:hprof=cpu=samples", "-Xrunhprof:cpu=samples"] {
            let dir = tempfile::tempdir().unwrap();
            let mut command =
                crate::support::java_command(&jdk, dir.path(), &[flag], "CpuHot", &["300"]);
            command
                .env("LD_LIBRARY_PATH", &lib_dir)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let run = crate::support::finish(command.spawn().unwrap());
            assert_eq!(
                run.code,
                Some(0),
                "JDK {} {flag}: {}",
                jdk.version,
                run.stderr
            );
            let p = TextProfile::parse(&read_text(&text_output(dir.path())));
            assert_eq!(p.cpu.len(), 1, "JDK {} {flag}", jdk.version);
            assert_eq!(
                p.cpu[0].rows[0].method, "CpuHot.hot",
                "JDK {} {flag}",
                jdk.version
            );
        }
    }
}

#[test]
fn loading_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let run = run_java(
        &jdk17(),
        dir.path(),
        &[&agentpath("cpu=samples"), &agentpath("cpu=samples")],
        "CpuHot",
        &["100"],
    );
    assert_ne!(run.code, Some(0));
    assert!(
        run.stderr
            .contains("HPROF ERROR: Cannot load this JVM TI agent twice"),
        "{}",
        run.stderr
    );
}

#[test]
fn file_and_force_name_the_output() {
    let jdk = jdk17();
    let dir = tempfile::tempdir().unwrap();
    let run = run_java(
        &jdk,
        dir.path(),
        &[&agentpath("cpu=samples,file=out.txt")],
        "CpuHot",
        &["200"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(read_text(&dir.path().join("out.txt")).contains("CPU SAMPLES END"));

    // force=n keeps an existing file and writes java.hprof.<pid>.txt beside it.
    std::fs::write(dir.path().join("java.hprof.txt"), "keep me").unwrap();
    let run = run_java(
        &jdk,
        dir.path(),
        &[&agentpath("cpu=samples,force=n")],
        "CpuHot",
        &["200"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(read_text(&dir.path().join("java.hprof.txt")), "keep me");
    let unique: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("java.hprof.") && n.ends_with(".txt") && n != "java.hprof.txt")
        .collect();
    assert_eq!(unique.len(), 1, "{unique:?}");
    let pid = unique[0]
        .trim_start_matches("java.hprof.")
        .trim_end_matches(".txt");
    assert!(pid.parse::<u32>().is_ok(), "{unique:?}");

    // force=y (the default) replaces it.
    let run = run_java(
        &jdk,
        dir.path(),
        &[&agentpath("cpu=samples")],
        "CpuHot",
        &["200"],
    );
    assert_eq!(run.code, Some(0));
    assert!(read_text(&dir.path().join("java.hprof.txt")).starts_with("JAVA PROFILE 1.0.1"));
}

#[test]
fn an_unwritable_output_file_is_an_error_at_startup() {
    let (run, _dir) = profile(
        &jdk17(),
        "cpu=samples,file=/nonexistent/dir/out.txt",
        "CpuHot",
        &["100"],
    );
    assert_eq!(run.code, Some(1));
    assert!(
        run.stderr
            .contains("HPROF ERROR: can't create profile file: /nonexistent/dir/out.txt"),
        "{}",
        run.stderr
    );
}

#[test]
fn a_failing_output_is_reported_once_and_the_program_runs_on() {
    // /dev/full accepts the open and fails every write with ENOSPC.
    let (run, _dir) = profile(&jdk17(), "cpu=samples,file=/dev/full", "CpuHot", &["300"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(run.stdout.starts_with("done "), "{}", run.stdout);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("HPROF ERROR:"))
        .collect();
    // Once, with the device's own error: the writes did fail (ENOSPC), and were stopped.
    assert_eq!(
        errors,
        [
            "HPROF ERROR: can't write profile output: No space left on device (os error 28); no more output will be written; /dev/full is incomplete"
        ],
        "{}",
        run.stderr
    );
}

#[test]
fn with_no_options_the_program_runs_and_the_file_lists_its_threads() {
    let (run, dir) = profile(&jdk17(), "", "CpuHot", &["200"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let p = TextProfile::parse(&read_text(&text_output(dir.path())));
    assert_eq!(p.thread("main"), Some(200001));
    assert!(p.thread("acceptor").is_some());
    assert!(p.cpu.is_empty());
}

#[test]
fn net_to_a_closed_port_is_an_error_at_startup() {
    // A port the system just gave this test and that it closed again: nothing listens there
    // (no other program is given it again this soon; the kernel hands out ports in turn).
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let (run, _dir) = profile(
        &jdk17(),
        &format!("cpu=samples,net=127.0.0.1:{port}"),
        "CpuHot",
        &["100"],
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    assert!(
        run.stderr
            .contains(&format!("HPROF ERROR: can't connect to 127.0.0.1:{port}")),
        "{}",
        run.stderr
    );
}

#[test]
fn net_streams_the_output_to_a_front_end() {
    for jdk in jdks() {
        // (Shown with the assertion that fails.)
        eprintln!("JDK {}", jdk.version);
        let (port, reader) = fake_front_end("127.0.0.1:0", |_| {});
        let (run, dir) = profile(
            &jdk,
            &format!("cpu=samples,net=127.0.0.1:{port}"),
            "CpuHot",
            &["400"],
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        let text = reader.join().unwrap();
        assert!(!text_output(dir.path()).exists());
        let p = TextProfile::parse(&text);
        assert_eq!(p.cpu[0].rows[0].method, "CpuHot.hot");
    }
}

#[test]
fn an_unknown_command_is_reported_and_ignored() {
    let (port, front_end) = fake_front_end("127.0.0.1:0", |socket| {
        use std::io::Write;
        std::thread::sleep(std::time::Duration::from_millis(500));
        // An unknown tag 0x42 with a 3-byte body, then EXIT THE VM.
        socket
            .write_all(&[0x42, 0, 0, 0, 1, 0, 0, 0, 3, 9, 9, 9])
            .unwrap();
        socket.write_all(&[0x05, 0, 0, 0, 2, 0, 0, 0, 0]).unwrap();
    });
    let (run, _dir) = profile(
        &jdk17(),
        &format!("cpu=samples,net=127.0.0.1:{port}"),
        "ExitPaths",
        &["wait"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.stderr
            .contains("HPROF ERROR: unknown command 0x42 from the front-end, ignored"),
        "{}",
        run.stderr
    );
    assert!(front_end.join().unwrap().ends_with("CPU SAMPLES END\n"));
}

#[test]
fn net_works_over_ipv6_and_host_names() {
    for (bind, host) in [("[::1]:0", "[::1]"), ("127.0.0.1:0", "localhost")] {
        let (port, reader) = fake_front_end(bind, |_| {});
        let (run, _dir) = profile(
            &jdk17(),
            &format!("cpu=samples,net={host}:{port}"),
            "CpuHot",
            &["200"],
        );
        assert_eq!(run.code, Some(0), "{host}: {}", run.stderr);
        assert_eq!(
            TextProfile::parse(&reader.join().unwrap()).cpu.len(),
            1,
            "{host}"
        );
    }
}

/// A front-end on loopback that accepts one connection, runs `talk` on it, then reads what
/// the agent sends until it closes the connection. Returns the port and the received text.
fn fake_front_end(
    bind: &str,
    talk: impl FnOnce(&mut std::net::TcpStream) + Send + 'static,
) -> (u16, std::thread::JoinHandle<String>) {
    let listener =
        std::net::TcpListener::bind(bind).unwrap_or_else(|e| panic!("cannot bind {bind}: {e}"));
    let port = listener.local_addr().unwrap().port();
    let reader = std::thread::spawn(move || {
        let (mut socket, _) = listener.accept().unwrap();
        talk(&mut socket);
        let mut text = String::new();
        std::io::Read::read_to_string(&mut socket, &mut text).unwrap();
        text
    });
    (port, reader)
}
