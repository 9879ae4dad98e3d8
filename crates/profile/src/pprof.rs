//! pprof: the `profile.proto` that `go tool pprof`, Pyroscope and Grafana read, gzipped.
//! The messages are declared here with prost's derive (no generated code, no protoc).

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use prost::Message;

use crate::model::{Frame, Kind, Profile};

#[derive(Clone, PartialEq, Message)]
struct PProfile {
    #[prost(message, repeated, tag = "1")]
    sample_type: Vec<ValueType>,
    #[prost(message, repeated, tag = "2")]
    sample: Vec<PSample>,
    #[prost(message, repeated, tag = "4")]
    location: Vec<Location>,
    #[prost(message, repeated, tag = "5")]
    function: Vec<Function>,
    #[prost(string, repeated, tag = "6")]
    string_table: Vec<String>,
    #[prost(int64, tag = "9")]
    time_nanos: i64,
    #[prost(message, optional, tag = "11")]
    period_type: Option<ValueType>,
    #[prost(int64, tag = "12")]
    period: i64,
    #[prost(int64, tag = "14")]
    default_sample_type: i64,
}

#[derive(Clone, PartialEq, Message)]
struct ValueType {
    #[prost(int64, tag = "1")]
    r#type: i64,
    #[prost(int64, tag = "2")]
    unit: i64,
}

#[derive(Clone, PartialEq, Message)]
struct PSample {
    #[prost(uint64, repeated, tag = "1")]
    location_id: Vec<u64>,
    #[prost(int64, repeated, tag = "2")]
    value: Vec<i64>,
    #[prost(message, repeated, tag = "3")]
    label: Vec<Label>,
}

#[derive(Clone, PartialEq, Message)]
struct Label {
    #[prost(int64, tag = "1")]
    key: i64,
    #[prost(int64, tag = "2")]
    str: i64,
}

#[derive(Clone, PartialEq, Message)]
struct Location {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(message, repeated, tag = "4")]
    line: Vec<Line>,
}

#[derive(Clone, PartialEq, Message)]
struct Line {
    #[prost(uint64, tag = "1")]
    function_id: u64,
    #[prost(int64, tag = "2")]
    line: i64,
}

#[derive(Clone, PartialEq, Message)]
struct Function {
    #[prost(uint64, tag = "1")]
    id: u64,
    #[prost(int64, tag = "2")]
    name: i64,
    #[prost(int64, tag = "3")]
    system_name: i64,
    #[prost(int64, tag = "4")]
    filename: i64,
}

/// The string table under construction; index 0 is the empty string.
struct Strings {
    table: Vec<String>,
    index: HashMap<String, i64>,
}

impl Strings {
    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// The encoded (not yet gzipped) profile.proto of `profile`. Each distinct frame is one
/// function (`Class.method`, its source file) and one location (its line); samples list
/// their locations leaf first, as pprof wants; a thread becomes a `thread` label.
pub fn encode(profile: &Profile) -> Vec<u8> {
    let mut strings = Strings {
        table: vec![String::new()],
        index: [(String::new(), 0)].into_iter().collect(),
    };
    let sample_type: Vec<ValueType> = profile
        .sample_types
        .iter()
        .map(|t| ValueType {
            r#type: strings.id(&t.name),
            unit: strings.id(&t.unit),
        })
        .collect();
    let mut functions: Vec<Function> = Vec::new();
    // Frames of one method share their name's and file's `Arc`s: the function is found by
    // those addresses first, and by the texts only when a name is met through another `Arc`.
    let mut by_address: HashMap<(usize, usize), u64> = HashMap::default();
    let mut by_text: HashMap<(&str, &str), u64> = HashMap::default();
    let mut location = Vec::with_capacity(profile.frames.len());
    for (i, frame) in profile.frames.iter().enumerate() {
        let name = frame.name();
        let file = frame.file.as_deref().unwrap_or_default();
        let address = (name.as_ptr() as usize, file.as_ptr() as usize);
        let function_id = match by_address.get(&address) {
            Some(&id) => id,
            None => {
                let id = *by_text.entry((name, file)).or_insert_with(|| {
                    let id = functions.len() as u64 + 1;
                    let name = strings.id(name);
                    functions.push(Function {
                        id,
                        name,
                        system_name: name,
                        filename: strings.id(file),
                    });
                    id
                });
                by_address.insert(address, id);
                id
            }
        };
        location.push(Location {
            id: i as u64 + 1,
            line: vec![Line {
                function_id,
                line: frame.line.map_or(0, i64::from),
            }],
        });
    }
    let thread_key = strings.id("thread");
    let sample = profile
        .samples
        .iter()
        .map(|s| PSample {
            location_id: s.stack.iter().rev().map(|&f| f as u64 + 1).collect(),
            value: s.values.clone(),
            label: s
                .thread
                .as_ref()
                .map(|t| Label {
                    key: thread_key,
                    str: strings.id(t),
                })
                .into_iter()
                .collect(),
        })
        .collect();
    // Wall-clock and CPU samples are both `samples/count`: the period type says which events
    // were sampled, `wall` for wall-clock samples (as Google's wall profiles give it).
    let period_type = match profile.kind {
        Some(Kind::Wall) => Some(ValueType {
            r#type: strings.id("wall"),
            unit: strings.id("count"),
        }),
        _ => sample_type.first().cloned(),
    };
    PProfile {
        sample_type,
        sample,
        location,
        function: functions,
        string_table: strings.table,
        time_nanos: 0,
        period_type,
        period: 1,
        default_sample_type: 0,
    }
    .encode_to_vec()
}

/// Writes `profile` as a gzipped profile.proto. A large one is compressed in two halves, one
/// on each core, written as two gzip members one after the other: a gzip file may hold
/// several, and readers (Go's `compress/gzip`, which `go tool pprof` uses, zcat) join them.
pub fn write(profile: &Profile, out: &mut dyn Write) -> io::Result<()> {
    const SPLIT_ABOVE: usize = 4 << 20;
    let bytes = encode(profile);
    let gzip = |part: &[u8]| -> io::Result<Vec<u8>> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(part)?;
        gz.finish()
    };
    if bytes.len() <= SPLIT_ABOVE {
        return out.write_all(&gzip(&bytes)?);
    }
    let (first, second) = bytes.split_at(bytes.len() / 2);
    let (first, second) = std::thread::scope(|scope| {
        let second = scope.spawn(|| gzip(second));
        (gzip(first), second.join())
    });
    out.write_all(&first?)?;
    out.write_all(&second.map_err(|_| io::Error::other("the compressing thread failed"))??)
}

/// Which sample type indices of a pprof profile make a profile of a kind: (kind, index of
/// its first value, index of its second). Samples are wall-clock samples when the period type
/// (`period`) or a sample type is `wall`, else CPU samples.
fn kinds_of(names: &[&str], period: &str) -> Vec<(Kind, usize, Option<usize>)> {
    let find = |wanted: &[&str]| names.iter().position(|n| wanted.contains(n));
    let mut kinds = Vec::new();
    if let Some(calls) = find(&["calls"]) {
        let time = find(&["cpu", "wall", "time"]).unwrap_or(if calls == 0 { 1 } else { 0 });
        if time < names.len() {
            kinds.push((Kind::Times, time, Some(calls)));
        }
    } else if let Some(at) = find(&["samples"]).or_else(|| find(&["cpu", "wall", "itimer"])) {
        let wall = period == "wall" || find(&["wall"]).is_some();
        kinds.push((if wall { Kind::Wall } else { Kind::Cpu }, at, None));
    }
    // (A JFR recording's allocation samples count samples, not objects: `alloc_samples`.)
    for (kind, space, objects) in [
        (
            Kind::Alloc,
            "alloc_space",
            &["alloc_objects", "alloc_samples"][..],
        ),
        (Kind::Live, "inuse_space", &["inuse_objects"][..]),
    ] {
        match (find(&[space]), find(objects)) {
            (Some(s), o) => kinds.push((kind, s, o)),
            (None, Some(o)) => kinds.push((kind, o, None)),
            (None, None) => {}
        }
    }
    match (find(&["delay"]), find(&["contentions"])) {
        (Some(d), c) => kinds.push((Kind::Lock, d, c)),
        (None, Some(c)) => kinds.push((Kind::Lock, c, None)),
        (None, None) => {}
    }
    if kinds.is_empty() && !names.is_empty() {
        // Sample types we do not know: the first, as CPU samples.
        kinds.push((Kind::Cpu, 0, None));
    }
    kinds
}

/// Reads a (decompressed) profile.proto: one profile per kind its sample types make (see
/// [`kinds_of`]): `go tool pprof`'s, async-profiler's and ours. A location's lines are its
/// inlined frames, callee first; a `thread` label names the sample's thread.
pub(crate) fn read(bytes: &[u8]) -> Result<Vec<Profile>, crate::Error> {
    let decoded = PProfile::decode(bytes).map_err(|e| crate::Error {
        offset: Some(bad_field_offset(bytes)),
        message: format!("not a pprof profile.proto: {e}"),
    })?;
    let text = |i: i64| -> &str {
        usize::try_from(i)
            .ok()
            .and_then(|i| decoded.string_table.get(i))
            .map_or("", String::as_str)
    };
    let names: Vec<&str> = decoded.sample_type.iter().map(|t| text(t.r#type)).collect();
    if names.is_empty() {
        return Err(crate::Error {
            offset: None,
            message: format!(
                "the pprof profile has no sample types (read to its end, at byte offset {})",
                bytes.len()
            ),
        });
    }
    let functions: HashMap<u64, &Function> = decoded.function.iter().map(|f| (f.id, f)).collect();
    // Each location's frames, callee first.
    let frames: HashMap<u64, Vec<Frame>> = decoded
        .location
        .iter()
        .map(|l| {
            let frames = l
                .line
                .iter()
                .map(|line| {
                    let (name, file) = functions
                        .get(&line.function_id)
                        .map_or(("<unknown function>", ""), |f| {
                            (text(f.name), text(f.filename))
                        });
                    let line = u32::try_from(line.line).ok().filter(|&l| l > 0);
                    // Ours give a native or kernel function its library as its file.
                    if !file.is_empty()
                        && name.strip_prefix(file).is_some_and(|f| f.starts_with('.'))
                    {
                        return Frame::code(file, &name[file.len() + 1..]);
                    }
                    let file = (!file.is_empty()).then_some(file);
                    match name.rsplit_once('.') {
                        Some((class, method)) if !name.contains(' ') => {
                            Frame::method(class, method, file, line)
                        }
                        _ => Frame::pseudo(name),
                    }
                })
                .collect();
            (l.id, frames)
        })
        .collect();
    let thread_key = decoded.string_table.iter().position(|s| s == "thread");
    let mut profiles = Vec::new();
    let period = decoded.period_type.as_ref().map_or("", |t| text(t.r#type));
    for (kind, first, second) in kinds_of(&names, period) {
        let mut profile = Profile::new(kind);
        // The file's names and units of the values read (`alloc_samples`, a delay in
        // nanoseconds), where it has them.
        for (t, i) in profile.sample_types.iter_mut().zip([Some(first), second]) {
            if let Some(v) = i.and_then(|i| decoded.sample_type.get(i)) {
                t.name = text(v.r#type).to_string();
                t.unit = text(v.unit).to_string();
            }
        }
        let mut stack: Vec<Frame> = Vec::new();
        for sample in &decoded.sample {
            let value = |i: Option<usize>| i.and_then(|i| sample.value.get(i)).copied();
            let values = match kind.sample_types().len() {
                1 => vec![value(Some(first)).unwrap_or(0)],
                _ => vec![value(Some(first)).unwrap_or(0), value(second).unwrap_or(0)],
            };
            stack.clear();
            for id in sample.location_id.iter().rev() {
                match frames.get(id) {
                    Some(inlined) => stack.extend(inlined.iter().rev().cloned()),
                    None => stack.push(Frame::pseudo("<unknown location>")),
                }
            }
            let thread = sample
                .label
                .iter()
                .find(|l| thread_key.is_some_and(|k| l.key == k as i64))
                .map(|l| text(l.str).to_string());
            profile.add(&stack, thread, values);
        }
        profiles.push(profile);
    }
    Ok(profiles)
}

/// Where a profile.proto that does not decode goes wrong: the offset of the first top-level
/// field whose key, length or value is malformed (each field is decoded on its own, which
/// prost's error, naming no position, does not tell).
fn bad_field_offset(bytes: &[u8]) -> u64 {
    /// A varint at the front of `b`: its value and length.
    fn varint(b: &[u8]) -> Option<(u64, usize)> {
        let mut value = 0u64;
        for (i, &byte) in b.iter().take(10).enumerate() {
            value |= u64::from(byte & 0x7f) << (7 * i);
            if byte & 0x80 == 0 {
                return Some((value, i + 1));
            }
        }
        None
    }
    let mut at = 0usize;
    while at < bytes.len() {
        let start = at;
        let Some((key, n)) = varint(&bytes[at..]) else {
            return start as u64;
        };
        at += n;
        let end = match key & 7 {
            0 => varint(&bytes[at..]).map(|(_, n)| at + n),
            1 => Some(at + 8),
            2 => varint(&bytes[at..])
                .and_then(|(len, n)| usize::try_from(len).ok()?.checked_add(at + n)),
            5 => Some(at + 4),
            _ => None,
        };
        match end {
            Some(end) if end <= bytes.len() && PProfile::decode(&bytes[start..end]).is_ok() => {
                at = end;
            }
            _ => return start as u64,
        }
    }
    // Every field decodes on its own (the error is in how they combine): the message's start.
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind, Profile};

    #[test]
    fn samples_are_wall_clock_ones_when_a_type_says_wall() {
        let kind = |names: &[&str], period: &str| kinds_of(names, period)[0].0;
        assert_eq!(kind(&["samples", "cpu"], "cpu"), Kind::Cpu);
        assert_eq!(kind(&["cpu"], ""), Kind::Cpu);
        assert_eq!(kind(&["samples"], "wall"), Kind::Wall);
        assert_eq!(kind(&["sample", "wall"], "wall"), Kind::Wall);
    }

    #[test]
    fn sample_types_of_every_writer_read_back() {
        // A JFR recording's allocation samples and lock delays in nanoseconds, as
        // `hprof convert` writes them.
        let f = |c: &str, m: &str| Frame::method(c, m, None, None);
        for (kind, first, second) in [
            (
                Kind::Alloc,
                ("alloc_space", "bytes"),
                ("alloc_samples", "count"),
            ),
            (
                Kind::Lock,
                ("delay", "nanoseconds"),
                ("contentions", "count"),
            ),
            (Kind::Cpu, ("samples", "count"), ("", "")),
        ] {
            let mut profile = Profile::new(kind);
            profile.sample_types[0].name = first.0.into();
            profile.sample_types[0].unit = first.1.into();
            if let Some(t) = profile.sample_types.get_mut(1) {
                t.name = second.0.into();
                t.unit = second.1.into();
            }
            let values: Vec<i64> = (0..profile.sample_types.len() as i64)
                .map(|v| v + 5)
                .collect();
            profile.add(&[f("A", "main"), f("A", "hot")], None, values.clone());
            let read = read(&encode(&profile)).unwrap();
            assert_eq!(read.len(), 1, "{kind:?}");
            assert_eq!(read[0].kind, Some(kind));
            assert_eq!(read[0].sample_types, profile.sample_types, "{kind:?}");
            assert_eq!(read[0].samples[0].values, values, "{kind:?}");
        }
    }

    #[test]
    fn profiles_read_back_as_written() {
        for kind in Kind::ALL {
            let mut profile = Profile::new(kind);
            let values = |v: i64| kind.sample_types().iter().map(|_| v).collect::<Vec<_>>();
            let f = |c: &str, m: &str, l: u32| Frame::method(c, m, Some("F.java"), Some(l));
            profile.add(
                &[f("A", "main", 3), f("A", "hot", 9)],
                Some("main".into()),
                values(7),
            );
            profile.add(
                &[f("A", "main", 4), f("java.util.B", "cold", 1)],
                None,
                values(2),
            );
            profile.add(
                &[
                    f("A", "main", 5),
                    Frame::code("libc.so.6", "write"),
                    Frame::code("[kernel]", "do_syscall_64"),
                ],
                None,
                values(1),
            );
            let read = read(&encode(&profile)).unwrap();
            assert_eq!(read.len(), 1, "{kind:?}");
            let back = &read[0];
            assert_eq!(back.kind, Some(kind));
            assert_eq!(back.sample_types, profile.sample_types);
            assert_eq!(crate::folded::lines(back), crate::folded::lines(&profile));
            assert_eq!(back.samples[1].values, values(2));
            let leaf = &back.frames[*back.samples[1].stack.last().unwrap()];
            assert_eq!((leaf.name(), leaf.line), ("java.util.B.cold", Some(1)));
            assert_eq!(leaf.kind, crate::model::FrameKind::Jdk);
            let kinds: Vec<_> = back.samples[2]
                .stack
                .iter()
                .map(|&f| back.frames[f].kind)
                .collect();
            use crate::model::FrameKind::{Application, Kernel, Native};
            assert_eq!(kinds, [Application, Native, Kernel]);
        }
    }

    #[test]
    fn a_damaged_profile_names_the_offset_of_its_bad_field() {
        let mut profile = Profile::new(Kind::Cpu);
        let frames = [Frame::method("App", "main", Some("App.java"), Some(3))];
        profile.add(&frames, None, vec![5]);
        let encoded = encode(&profile);
        // A field of wire type 7 (none) after the whole profile.
        let mut bad = encoded.clone();
        bad.push(0x0f);
        let err = read(&bad).unwrap_err();
        assert_eq!(err.offset, Some(encoded.len() as u64), "{err}");
        assert!(
            err.message.starts_with("not a pprof profile.proto"),
            "{err}"
        );
        // A string of the string table that is not UTF-8: its field (key, length, bytes).
        let at = encoded.windows(8).position(|w| w == b"App.java").unwrap();
        let mut bad = encoded.clone();
        bad[at] = 0xff;
        let err = read(&bad).unwrap_err();
        assert_eq!(err.offset, Some(at as u64 - 2), "{err}");
        // Cut inside its last field: that field.
        let err = read(&encoded[..encoded.len() - 1]).unwrap_err();
        let offset = err.offset.unwrap() as usize;
        assert!(offset < encoded.len() - 1, "{err}");
        assert!(PProfile::decode(&encoded[..offset]).is_ok(), "{err}");
    }

    #[test]
    fn a_large_profile_is_two_gzip_members_that_read_back_as_one() {
        let mut profile = Profile::new(Kind::Cpu);
        for i in 0..60_000u32 {
            let frames: Vec<Frame> = (0..8)
                .map(|d| {
                    Frame::method(
                        &format!("C{i}"),
                        &format!("m{d}"),
                        Some("C.java"),
                        Some(i % 90 + 1),
                    )
                })
                .collect();
            profile.add(&frames, None, vec![i64::from(i)]);
        }
        let encoded = encode(&profile);
        assert!(
            encoded.len() > 4 << 20,
            "{} bytes: not split",
            encoded.len()
        );
        let mut file = Vec::new();
        write(&profile, &mut file).unwrap();
        let members = file.windows(3).filter(|w| *w == [0x1f, 0x8b, 8]).count();
        assert!(members >= 2, "{members} gzip members");
        let mut decoded = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::MultiGzDecoder::new(&file[..]),
            &mut decoded,
        )
        .unwrap();
        assert_eq!(decoded, encoded);
    }
}
