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
    let mut function_ids: HashMap<(String, String), u64> = HashMap::default();
    let mut location = Vec::with_capacity(profile.frames.len());
    for (i, frame) in profile.frames.iter().enumerate() {
        let name = frame.name().to_string();
        let file = frame.file.as_deref().unwrap_or_default().to_string();
        let function_id = *function_ids
            .entry((name.clone(), file.clone()))
            .or_insert_with(|| {
                let id = functions.len() as u64 + 1;
                let name = strings.id(&name);
                functions.push(Function {
                    id,
                    name,
                    system_name: name,
                    filename: strings.id(&file),
                });
                id
            });
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

/// Writes `profile` as a gzipped profile.proto.
pub fn write(profile: &Profile, out: &mut dyn Write) -> io::Result<()> {
    let mut gz = flate2::write::GzEncoder::new(out, flate2::Compression::fast());
    gz.write_all(&encode(profile))?;
    gz.finish()?;
    Ok(())
}
