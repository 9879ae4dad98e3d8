//! Kernel frames: where the kernel allows perf events with the kernel's code, a sample taken
//! in a system call carries the kernel's frames (from the event's call chain, named from
//! `/proc/kallsyms`) on top of the Java frames that made the call
//! (`java/src/KernelCalls.java`), in text and binary output.

use std::collections::HashMap;

use hprof_format::{Record, Records};

use crate::support::{TextProfile, jdk17, jdks, profile, profile_with_env, read_text, text_output};

/// Whether the kernel lets this process sample the kernel's code with perf events (as root,
/// or with `perf_event_paranoid` below 2), and why not.
fn kernel_sampling_refused() -> Option<String> {
    if let Some(why) = crate::support::perf_events_refused_here() {
        return Some(why);
    }
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or(3);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    (paranoid >= 2 && !root).then(|| format!("perf_event_paranoid {paranoid}, not root"))
}

/// Whether /proc/kallsyms shows the kernel's addresses to this process.
fn kallsyms_readable() -> bool {
    std::fs::read_to_string("/proc/kallsyms").is_ok_and(|text| {
        text.lines()
            .take(100)
            .any(|l| !l.starts_with("0000000000000000 "))
    })
}

/// A kernel frame of the text output: `[kernel].NAME(Kernel)`.
fn is_kernel(frame: &str) -> bool {
    frame.starts_with("[kernel].") && frame.ends_with("(Kernel)")
}

/// (samples of thread `name`, those with kernel frames, those whose kernel frames include a
/// function with `write` in its name), checking that every trace of the thread with kernel
/// frames has them all on top, above Java frames that reach `java_below`.
fn kernel_samples(p: &TextProfile, name: &str, java_below: &str) -> (u64, u64, u64) {
    let thread = p.thread(name).unwrap_or_else(|| panic!("thread {name}"));
    let cpu = p.cpu.last().expect("a CPU SAMPLES section");
    let (mut all, mut kernel, mut write) = (0, 0, 0);
    for row in &cpu.rows {
        let trace = &p.traces[&row.trace];
        if trace.thread != Some(thread) {
            continue;
        }
        all += row.count;
        let on_top = trace.frames.iter().take_while(|f| is_kernel(f)).count();
        assert_eq!(
            on_top,
            trace.frames.iter().filter(|f| is_kernel(f)).count(),
            "kernel frames below others: {:?}",
            trace.frames
        );
        if on_top == 0 {
            continue;
        }
        kernel += row.count;
        let below = &trace.frames[on_top..];
        assert!(
            below.iter().any(|f| f.starts_with(java_below))
                // A walk that broke (a deoptimization, say) ends in the pseudo-frame that says
                // why, below the native and stub frames it walked.
                || trace.frames.last().is_some_and(|f| f.starts_with("<hprof>."))
                // A thread before or past its Java code, starting or ending in the JVM (seen
                // once in 16 runs: `JavaThread::exit`, the agent's ThreadEnd callback asking
                // for its thread id) has native frames alone below the kernel's.
                || (below
                    .iter()
                    .all(|f| f.contains(".so.") && f.ends_with("(Native method)"))
                    && below.iter().any(|f| f.starts_with("libjvm.so.JavaThread::"))),
            "no {java_below} below the kernel frames: {:?}",
            trace.frames
        );
        if trace.frames[..on_top].iter().any(|f| f.contains("write")) {
            write += row.count;
        }
    }
    (all, kernel, write)
}

#[test]
fn a_thread_in_system_calls_shows_the_kernels_frames_above_its_java_frames() {
    if let Some(why) = kernel_sampling_refused() {
        println!("SKIPPED: the kernel's code cannot be sampled here: {why}");
        return;
    }
    let named = kallsyms_readable();
    for jdk in jdks() {
        let (run, dir) = profile(
            &jdk,
            "cpu=samples,interval=1,thread=y,depth=48",
            "KernelCalls",
            &["1"],
        );
        assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
        assert!(
            run.stdout.contains("done") && !run.stderr.contains("HPROF ERROR"),
            "JDK {}: {}",
            jdk.version,
            run.stderr
        );
        let p = TextProfile::parse(&read_text(&text_output(dir.path())));
        // (Above KernelCalls.writeBytes: FileOutputStream.write, or where compiled code called
        // into the JVM, which may enter the kernel too.)
        let (all, kernel, write) = kernel_samples(&p, "syscalls", "KernelCalls.");
        // A write() of one byte to /dev/null is mostly the kernel's entry and exit: about
        // 40 % of the thread's samples on this machine. (Each thread works until it has used
        // 1 s of CPU time, about 1,000 samples at 1 ms however busy the machine is: with a
        // fixed 3 s of wall time, at load 16 the thread got 0 to 48 ms of CPU in 3 of 7 runs.)
        assert!(all >= 50, "JDK {}: {all} samples", jdk.version);
        assert!(
            kernel * 100 >= all * 15,
            "JDK {}: {kernel} of {all} samples in the kernel",
            jdk.version
        );
        if named {
            // The kernel's write path is named (`ksys_write`, `vfs_write`, ...) in a good
            // share of them; the rest are the entry and exit of every system call.
            assert!(
                write * 100 >= kernel * 10,
                "JDK {}: {write} of {kernel} kernel samples name a write function",
                jdk.version
            );
        }
        // A thread that makes (nearly) no system call is (nearly) never in the kernel: its
        // samples there are the reading of its CPU time every ~5 ms, interrupts and the
        // scheduler's switches, 0.6-1.0 % of them in 3 runs on JDK 25 beside two fresh clones
        // (load 7). (Read every 0.1 ms, those reads alone were 2.4-3.4 %, and a fresh clone
        // saw 5.0 %: the bound then measured the program, not the sampler.)
        let (all, kernel, _) = kernel_samples(&p, "compute", "KernelCalls.");
        assert!(all >= 50, "JDK {}: compute {all}", jdk.version);
        assert!(
            kernel * 100 <= all * 5,
            "JDK {}: compute: {kernel} of {all} samples in the kernel",
            jdk.version
        );
    }
}

#[test]
fn kernel_frames_are_binary_stack_frames_of_the_kernel_class() {
    if let Some(why) = kernel_sampling_refused() {
        println!("SKIPPED: the kernel's code cannot be sampled here: {why}");
        return;
    }
    let (run, dir) = profile(
        &jdk17(),
        "cpu=samples,interval=1,depth=48,format=b",
        "KernelCalls",
        &["1"],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let bytes = std::fs::read(dir.path().join("java.hprof")).unwrap();
    let (_, mut records) = Records::new(&bytes).unwrap();
    let mut strings: HashMap<u64, String> = HashMap::new();
    let mut classes: HashMap<u32, String> = HashMap::new();
    let mut kernel_frames = 0;
    while let Some((_, record)) = records.next().unwrap() {
        match record {
            Record::Utf8 { id, text } => {
                strings.insert(id, String::from_utf8(text.to_vec()).unwrap());
            }
            Record::LoadClass {
                class_serial,
                name_id,
                ..
            } => {
                classes.insert(class_serial, strings[&name_id].clone());
            }
            Record::StackFrame {
                method_name_id,
                source_file_id,
                class_serial,
                line,
                ..
            } if classes[&class_serial] == "[kernel]" => {
                // A native method of the class [kernel], from the source "[kernel]".
                assert_eq!(line, -3);
                assert_eq!(strings[&source_file_id], "[kernel]");
                assert!(!strings[&method_name_id].is_empty());
                kernel_frames += 1;
            }
            _ => {}
        }
    }
    assert!(kernel_frames >= 2, "{kernel_frames} kernel frames");
}

#[test]
fn posix_timers_give_no_kernel_frames() {
    // Where perf events are refused, POSIX timers sample: no call chain, no kernel frame.
    let (run, dir) = profile_with_env(
        &jdk17(),
        &[],
        "cpu=samples,interval=1,depth=48",
        "KernelCalls",
        &["1"],
        &[("_HPROF_NO_PERF_EVENTS", "1")],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let text = read_text(&text_output(dir.path()));
    assert!(!text.contains("(Kernel)"), "{text}");
    let p = TextProfile::parse(&text);
    assert!(p.cpu.last().unwrap().total >= 100);
}
