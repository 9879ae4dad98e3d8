//! pprof: the `profile.proto` that `go tool pprof`, Pyroscope and Grafana read, gzipped.
//! The messages are declared here with prost's derive (no generated code, no protoc).

use rustc_hash::FxHashMap as HashMap;
use std::io::{self, Write};

use prost::Message;

use crate::model::Profile;

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
    let period_type = sample_type.first().cloned();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Frame, Kind, Profile};

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
