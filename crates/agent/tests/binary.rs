//! format=b: a well-formed HPROF 1.0.2 file with every record written before first use; each
//! sample also in a TIMED SAMPLES record with its time.

use std::collections::{HashMap, HashSet};

use hprof_format::{IdSize, Record, Records, Tag, Version};

use crate::support::{jdks, profile};

#[test]
fn binary_output_parses_and_names_the_hot_method() {
    for jdk in jdks() {
        // 1500 ms of main's CPU, as the text output's test: at 800 ms the samples of the JVM's
        // start-up on main (27 of 93 on JDK 25 on a busy machine, in 19 traces) left hot()
        // 71 %, under the 80 % checked below.
        let (run, dir) = profile(&jdk, "cpu=samples,format=b", "CpuHot", &["1500"]);
        assert_eq!(run.code, Some(0), "JDK {}: {}", jdk.version, run.stderr);
        assert!(!dir.path().join("java.hprof.txt").exists());
        let bytes = std::fs::read(dir.path().join("java.hprof")).unwrap();
        let (header, mut records) = Records::new(&bytes).unwrap();
        assert_eq!(
            (header.version, header.id_size),
            (Version::V1_0_2, IdSize::Eight)
        );
        let mut strings: HashMap<u64, String> = HashMap::new();
        let mut classes: HashMap<u32, String> = HashMap::new();
        let mut frames: HashMap<u64, (u64, u32)> = HashMap::new();
        let mut traces: HashMap<u32, Vec<u64>> = HashMap::new();
        let mut threads: HashSet<u32> = HashSet::new();
        let mut tags = Vec::new();
        let mut samples = Vec::new();
        let mut timed: Vec<hprof_format::TimedSample> = Vec::new();
        let started = std::time::SystemTime::now();
        while let Some((_, record)) = records.next().unwrap() {
            tags.push(record.tag());
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
                    frame_id,
                    method_name_id,
                    class_serial,
                    source_file_id,
                    signature_id,
                    ..
                } => {
                    assert!(
                        classes.contains_key(&class_serial),
                        "frame before its class"
                    );
                    assert!(strings.contains_key(&signature_id));
                    assert!(source_file_id == 0 || strings.contains_key(&source_file_id));
                    frames.insert(frame_id, (method_name_id, class_serial));
                }
                Record::StackTrace {
                    serial,
                    frames: ids,
                    ..
                } => {
                    let ids: Vec<u64> = ids.iter().collect();
                    assert!(
                        ids.iter().all(|f| frames.contains_key(f)),
                        "trace before its frames"
                    );
                    traces.insert(serial, ids);
                }
                Record::StartThread {
                    thread_serial,
                    name_id,
                    group_name_id,
                    ..
                } => {
                    assert!(strings.contains_key(&name_id) && strings.contains_key(&group_name_id));
                    threads.insert(thread_serial);
                }
                Record::EndThread { thread_serial } => assert!(threads.contains(&thread_serial)),
                Record::CpuSamples {
                    total,
                    traces: list,
                } => {
                    let list: Vec<(u32, u32)> = list.iter().collect();
                    assert!(
                        list.iter().all(|(_, t)| traces.contains_key(t)),
                        "CPU SAMPLES before its traces"
                    );
                    samples.push((total, list));
                }
                Record::TimedSamples(list) => {
                    for sample in list.iter() {
                        assert!(
                            traces.contains_key(&sample.trace_serial),
                            "TIMED SAMPLES before its trace"
                        );
                        assert!(
                            sample.thread_serial == 0 || threads.contains(&sample.thread_serial)
                        );
                        timed.push(sample);
                    }
                }
                _ => {}
            }
        }
        // Every sample the section counts has its time, within the run.
        let weights: u64 = timed.iter().map(|s| u64::from(s.weight)).sum();
        assert_eq!(
            weights,
            u64::from(samples[0].0),
            "JDK {}: timed samples against CPU SAMPLES' total",
            jdk.version
        );
        let run_ns = started
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as u64
            - header.timestamp_ms * 1_000_000;
        assert!(
            timed.iter().all(|s| s.time_ns > 0 && s.time_ns <= run_ns),
            "JDK {}: a time outside the run",
            jdk.version
        );
        assert_eq!(tags[0], Tag::ControlSettings, "JDK {}", jdk.version);
        for tag in [
            Tag::Utf8,
            Tag::LoadClass,
            Tag::StackFrame,
            Tag::StackTrace,
            Tag::StartThread,
            Tag::EndThread,
            Tag::CpuSamples,
        ] {
            assert!(tags.contains(&tag), "JDK {}: no {tag:?}", jdk.version);
        }
        assert_eq!(samples.len(), 1);
        let (total, list) = &samples[0];
        // CpuHot computes for 1500 ms of its main thread's CPU: about 150 samples at 10 ms.
        assert!(
            *total >= 30 && list.iter().map(|(n, _)| *n).sum::<u32>() == *total,
            "{samples:?}"
        );
        // The counts are listed largest first, and the largest is of hot().
        assert!(list.windows(2).all(|w| w[0].0 >= w[1].0), "{samples:?}");
        let top_method = |trace: u32| {
            let (method, class) = frames[&traces[&trace][0]];
            (strings[&method].clone(), classes[&class].clone())
        };
        assert_eq!(
            top_method(list[0].1),
            ("hot".to_string(), "CpuHot".to_string()),
            "JDK {}",
            jdk.version
        );
        // hot() holds at least 80 % of the samples, as in the text output's test
        // (cpu_samples.rs): the same program, the same sampler.
        let hot: u32 = list
            .iter()
            .filter(|(_, t)| top_method(*t) == ("hot".to_string(), "CpuHot".to_string()))
            .map(|(n, _)| n)
            .sum();
        assert!(hot * 10 >= total * 8, "JDK {}: {samples:?}", jdk.version);
    }
}

#[test]
fn an_unloaded_class_gets_an_unload_class_record() {
    let (run, dir) = profile(
        &crate::support::jdk17(),
        "heap=sites,format=b,cutoff=0,depth=6",
        "UnloadClasses",
        &[],
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "unloaded", "the JVM kept the class");
    let bytes = std::fs::read(dir.path().join("java.hprof")).unwrap();
    let (_, mut records) = Records::new(&bytes).unwrap();
    let mut strings = HashMap::new();
    let mut loaded = HashMap::new();
    let mut unloaded = Vec::new();
    while let Some((_, record)) = records.next().unwrap() {
        match record {
            Record::Utf8 { id, text } => {
                strings.insert(id, String::from_utf8_lossy(text).into_owned());
            }
            Record::LoadClass {
                class_serial,
                name_id,
                ..
            } => {
                loaded.insert(class_serial, strings[&name_id].clone());
            }
            Record::UnloadClass { class_serial } => {
                assert!(
                    loaded.contains_key(&class_serial),
                    "UNLOAD CLASS before LOAD CLASS"
                );
                unloaded.push(loaded[&class_serial].clone());
            }
            _ => {}
        }
    }
    assert!(
        unloaded.iter().any(|name| name == "Unloadable"),
        "unloaded: {unloaded:?}"
    );
    assert!(
        !unloaded.iter().any(|name| name == "UnloadClasses"),
        "{unloaded:?}"
    );
}
