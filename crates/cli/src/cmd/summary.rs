//! `hprof summary`: record counts, GC roots and a class histogram of one HPROF file.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use chrono::{DateTime, Utc};
use clap::Args;
use hprof_format::{
    BasicType, Completeness, ErrorKind, Event, Header, HeapDumpBody, HeapRecord, Record, Records,
    StreamReader, SubTag, Tag, java_class_name, primitive_array_name,
    shallow::{ClassSizes, object_array_size, primitive_array_size},
};
use rustc_hash::FxHashMap;
use serde_json::{Map, Value as Json, json};

use crate::input::Input;

/// Arguments of `hprof summary`.
#[derive(Debug, Args)]
#[command(
    about = "Count records, GC roots and objects per class in an HPROF file",
    long_about = "Counts the records of an HPROF file by kind, its heap dump sub-records and GC \
roots by kind, and prints a class histogram: instances and shallow bytes per class, biggest \
first.\n\nShallow sizes are those of a 64-bit HotSpot JVM with compressed oops and compressed \
class pointers, as Eclipse MAT and VisualVM compute them: an instance takes \
align8(12 + its fields, references counted as 4 bytes), an object array align8(16 + 4 * length), \
a primitive array align8(16 + element size * length)."
)]
pub struct SummaryArgs {
    /// The HPROF file to read (`-` reads standard input).
    pub file: PathBuf,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// How many classes the histogram lists (0 lists all).
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub top: usize,
    /// Accept a truncated file (one still being written, or cut short): read up to its last
    /// complete record, warn about what is missing, and exit 0.
    #[arg(long = "allow-truncated", visible_alias = "partial")]
    pub partial: bool,
}

/// Runs `hprof summary`.
pub fn run(args: &SummaryArgs, out: &mut dyn Write) -> Result<()> {
    let name = args.file.display().to_string();
    let summary = if args.file == Path::new("-") {
        // Standard input is read as a stream; gzip (jcmd -gz) is decompressed on the way, its
        // errors naming both offsets, as for a file.
        let mut stdin = io::stdin().lock();
        let mut stdin = io::BufReader::with_capacity(1 << 20, &mut stdin as &mut dyn io::Read);
        let gzip = io::BufRead::fill_buf(&mut stdin)?.starts_with(&[0x1f, 0x8b]);
        let name = match gzip {
            true => format!(
                "{} (gzip-compressed: its byte offsets count decompressed bytes)",
                crate::input::display_name(&args.file)
            ),
            false => crate::input::display_name(&args.file),
        };
        let mut completeness = Completeness::default();
        let (header, size, tally) = read_stream(
            crate::input::decompressed(Vec::new(), stdin, gzip),
            &mut completeness,
            args.partial,
        )
        .with_context(|| name.clone())?;
        (tally.finish(header, size), completeness)
    } else {
        let input = Input::open(&args.file)?;
        let completeness = crate::input::completeness(&input, &name, args.partial)?;
        let (header, tally) = read_mapped(&input, args.partial).with_context(|| name.clone())?;
        (
            tally.finish(header, input.bytes().len() as u64),
            completeness,
        )
    };
    let (summary, mut completeness) = summary;
    let count = |root: bool| -> u64 {
        let objects = [
            SubTag::InstanceDump,
            SubTag::ObjectArrayDump,
            SubTag::PrimitiveArrayDump,
        ];
        summary
            .heap_records
            .iter()
            .filter(|(t, _)| {
                if root {
                    t.is_root()
                } else {
                    objects.contains(t)
                }
            })
            .map(|&(_, n)| n)
            .sum()
    };
    completeness.heap_counts(count(false), count(true));
    let incomplete = completeness.summary();
    if args.json {
        let mut doc = summary.to_json(&name, args.top);
        doc["complete"] = json!(incomplete.is_none());
        doc["incomplete"] = json!(incomplete);
        serde_json::to_writer_pretty(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        summary.write_text(&name, args.top, out)?;
        if let Some(line) = &incomplete {
            writeln!(out, "\nINCOMPLETE: {line}")?;
        }
    }
    crate::input::finish_reading(&name, &completeness, args.partial)
}

fn read_mapped(input: &Input, partial: bool) -> hprof_format::Result<(Header, Tally<'_>)> {
    let bytes = input.bytes();
    let (header, mut records) = Records::new(bytes)?;
    let mut tally = Tally::new();
    let mut bodies = Vec::new();
    while let Some((_, record)) = crate::input::next_record(&mut records, partial)? {
        match record {
            Record::HeapDump(body) | Record::HeapDumpSegment(body) => {
                tally.record(&record);
                bodies.push(body);
            }
            Record::Utf8 { id, text } => {
                tally.count(Tag::Utf8);
                tally.strings.insert(id, Cow::Borrowed(text));
            }
            _ => tally.record(&record),
        }
    }
    // The pass above touched a page or more per segment; let it go before the big walk.
    input.release(0, bytes.len() as u64);
    // Heap dump bodies are independent: count them on every core, in contiguous runs of
    // about equal size, then merge. Errors are reported for the earliest run that has one.
    let total: u64 = bodies.iter().map(|b| b.data.len() as u64).sum();
    let progress = input.progress("summary", total);
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 8);
    let chunks = split_evenly(&bodies, threads);
    let id_size = header.id_size;
    let results: Vec<hprof_format::Result<HeapTally>> = std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let progress = &progress;
                scope.spawn(move || {
                    let mut heap_tally = HeapTally::new();
                    let mut walk = progress.walk(input, chunk.first().map_or(0, |b| b.offset));
                    for body in *chunk {
                        let mut heap = body.records(id_size);
                        while let Some((offset, sub)) = heap.next()? {
                            heap_tally.heap(&sub);
                            walk.at(offset);
                        }
                    }
                    heap_tally.flush();
                    Ok(heap_tally)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("summary worker panicked"))
            .collect()
    });
    for result in results {
        tally.heap.merge(result?);
    }
    Ok((header, tally))
}

/// Splits `bodies` into at most `parts` contiguous runs of roughly equal byte size.
fn split_evenly<'s, 'a>(
    bodies: &'s [HeapDumpBody<'a>],
    parts: usize,
) -> Vec<&'s [HeapDumpBody<'a>]> {
    let total: usize = bodies.iter().map(|b| b.data.len()).sum();
    let target = total.div_ceil(parts.max(1)).max(1);
    let mut chunks = Vec::new();
    let (mut start, mut size) = (0, 0);
    for (i, body) in bodies.iter().enumerate() {
        size += body.data.len();
        if size >= target {
            chunks.push(&bodies[start..=i]);
            start = i + 1;
            size = 0;
        }
    }
    if start < bodies.len() {
        chunks.push(&bodies[start..]);
    }
    chunks
}

/// Reads a stream; with `partial`, a record cut short by its end is noted in `completeness`
/// instead of failing.
fn read_stream(
    src: impl io::Read,
    completeness: &mut Completeness,
    partial: bool,
) -> hprof_format::Result<(Header, u64, Tally<'static>)> {
    let mut reader = StreamReader::new(io::BufReader::with_capacity(1 << 20, src))?;
    let header = *reader.header();
    let mut tally = Tally::new();
    let mut whole = reader.offset();
    loop {
        let event = match reader.next_event() {
            Ok(Some(event)) => event,
            Ok(None) => break,
            Err(e) if partial && matches!(e.kind(), ErrorKind::Truncated { .. }) => {
                eprintln!("hprof: stopped at the last complete record ({e})");
                if let ErrorKind::Truncated { available, .. } = e.kind() {
                    completeness.set_file_len(e.offset() + available);
                }
                completeness.cut(e);
                break;
            }
            Err(e) => return Err(e),
        };
        match event {
            Event::Record(record_header, record) => {
                completeness.record(&record_header, &record);
                if let Record::Utf8 { id, text } = record {
                    tally.count(Tag::Utf8);
                    tally.strings.insert(id, Cow::Owned(text.to_vec()));
                } else {
                    tally.record(&record);
                }
            }
            Event::HeapDumpStart(record_header) => {
                completeness.tag(record_header.offset, record_header.tag);
                tally.count(record_header.tag);
            }
            Event::HeapRecord(_, sub) => tally.heap.heap(&sub),
            Event::HeapDumpFinish => {}
        }
        whole = reader.offset();
    }
    tally.heap.flush();
    completeness.read_up_to(whole);
    let size = reader.offset().max(whole).max(completeness.file_len());
    completeness.set_file_len(size);
    Ok((header, size, tally))
}

/// Per class id: instances (or arrays) seen and, for arrays, their bytes.
#[derive(Debug, Default, Clone, Copy)]
struct ClassTally {
    count: u64,
    array_bytes: u64,
    is_array: bool,
}

/// What the top-level records tell: counts, strings and class names.
#[derive(Debug)]
struct Tally<'a> {
    records: [u64; 256],
    strings: FxHashMap<u64, Cow<'a, [u8]>>,
    class_names: FxHashMap<u64, u64>,
    heap: HeapTally,
}

/// What heap dump sub-records tell: counts per kind, class layouts and objects per class.
#[derive(Debug)]
struct HeapTally {
    heap_records: [u64; 256],
    layouts: ClassSizes,
    classes: FxHashMap<u64, ClassTally>,
    primitive_arrays: [ClassTally; 16],
    /// Instances of `last_class` seen since it was last added to `classes`: jcmd writes
    /// objects in address order, where runs of one class are common.
    last_class: u64,
    last_count: u64,
}

impl HeapTally {
    fn new() -> HeapTally {
        HeapTally {
            heap_records: [0; 256],
            layouts: ClassSizes::new(),
            classes: FxHashMap::default(),
            primitive_arrays: [ClassTally::default(); 16],
            last_class: 0,
            last_count: 0,
        }
    }

    #[inline]
    fn heap(&mut self, record: &HeapRecord<'_>) {
        self.heap_records[record.sub_tag() as usize] += 1;
        match *record {
            HeapRecord::InstanceDump { class_id, .. } => {
                if class_id == self.last_class {
                    self.last_count += 1;
                } else {
                    self.flush();
                    self.last_class = class_id;
                    self.last_count = 1;
                }
            }
            HeapRecord::ObjectArrayDump {
                array_class_id,
                elements,
                ..
            } => {
                let entry = self.classes.entry(array_class_id).or_default();
                entry.count += 1;
                entry.is_array = true;
                entry.array_bytes += object_array_size(elements.len() as u64);
            }
            HeapRecord::PrimitiveArrayDump {
                element_type,
                length,
                ..
            } => {
                let entry = &mut self.primitive_arrays[element_type as usize & 15];
                entry.count += 1;
                entry.array_bytes += primitive_array_size(element_type, u64::from(length));
            }
            HeapRecord::ClassDump(class) => self.layouts.add(&class),
            _ => {}
        }
    }

    /// Adds the pending run of instances to the per-class counts.
    fn flush(&mut self) {
        if self.last_count > 0 {
            self.classes.entry(self.last_class).or_default().count += self.last_count;
            self.last_count = 0;
        }
    }

    fn merge(&mut self, other: HeapTally) {
        for (a, b) in self.heap_records.iter_mut().zip(other.heap_records) {
            *a += b;
        }
        self.layouts.merge(other.layouts);
        for (id, tally) in other.classes {
            let entry = self.classes.entry(id).or_default();
            entry.count += tally.count;
            entry.array_bytes += tally.array_bytes;
            entry.is_array |= tally.is_array;
        }
        for (a, b) in self.primitive_arrays.iter_mut().zip(other.primitive_arrays) {
            a.count += b.count;
            a.array_bytes += b.array_bytes;
        }
    }
}

impl<'a> Tally<'a> {
    fn new() -> Tally<'a> {
        Tally {
            records: [0; 256],
            strings: FxHashMap::default(),
            class_names: FxHashMap::default(),
            heap: HeapTally::new(),
        }
    }

    fn count(&mut self, tag: Tag) {
        self.records[tag as usize] += 1;
    }

    fn record(&mut self, record: &Record<'_>) {
        self.count(record.tag());
        if let Record::LoadClass {
            class_id, name_id, ..
        } = *record
        {
            self.class_names.insert(class_id, name_id);
        }
    }

    fn class_name(&self, class_id: u64) -> String {
        self.class_names
            .get(&class_id)
            .and_then(|name_id| self.strings.get(name_id))
            .map(|name| java_class_name(&String::from_utf8_lossy(name)))
            .unwrap_or_else(|| format!("<unknown class 0x{class_id:x}>"))
    }

    fn finish(self, header: Header, file_size: u64) -> Summary {
        let heap = &self.heap;
        let mut classes: Vec<ClassRow> = heap
            .classes
            .iter()
            .map(|(&id, tally)| {
                let shallow_bytes = if tally.is_array {
                    tally.array_bytes
                } else {
                    tally.count * heap.layouts.instance_size(id)
                };
                ClassRow {
                    name: self.class_name(id),
                    instances: tally.count,
                    shallow_bytes,
                }
            })
            .collect();
        for code in 0..16u8 {
            let tally = heap.primitive_arrays[usize::from(code)];
            if let (Some(ty), true) = (BasicType::from_u8(code), tally.count > 0) {
                classes.push(ClassRow {
                    name: primitive_array_name(ty),
                    instances: tally.count,
                    shallow_bytes: tally.array_bytes,
                });
            }
        }
        classes.sort_by(|a, b| {
            b.shallow_bytes
                .cmp(&a.shallow_bytes)
                .then(b.instances.cmp(&a.instances))
                .then_with(|| a.name.cmp(&b.name))
        });
        let records = Tag::ALL
            .iter()
            .map(|&tag| (tag.name(), self.records[tag as usize]))
            .filter(|&(_, n)| n > 0)
            .collect();
        let heap_records = SubTag::ALL
            .iter()
            .map(|&tag| (tag, heap.heap_records[tag as usize]))
            .filter(|&(_, n)| n > 0)
            .collect();
        Summary {
            header,
            file_size,
            records,
            heap_records,
            classes,
        }
    }
}

/// One row of the class histogram.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ClassRow {
    name: String,
    instances: u64,
    shallow_bytes: u64,
}

/// The result of a pass, ready to print.
#[derive(Debug)]
struct Summary {
    header: Header,
    file_size: u64,
    records: Vec<(&'static str, u64)>,
    heap_records: Vec<(SubTag, u64)>,
    classes: Vec<ClassRow>,
}

impl Summary {
    fn shown(&self, top: usize) -> &[ClassRow] {
        if top == 0 {
            &self.classes
        } else {
            &self.classes[..top.min(self.classes.len())]
        }
    }

    fn totals(&self) -> (u64, u64) {
        self.classes
            .iter()
            .fold((0, 0), |(n, b), c| (n + c.instances, b + c.shallow_bytes))
    }

    fn to_json(&self, file: &str, top: usize) -> Json {
        let counts = |pairs: &mut dyn Iterator<Item = (&'static str, u64)>| {
            Json::Object(
                pairs
                    .map(|(k, v)| (k.to_string(), json!(v)))
                    .collect::<Map<_, _>>(),
            )
        };
        let (instances, bytes) = self.totals();
        json!({
            "file": file,
            "file_size": self.file_size,
            "header": {
                "version": self.header.version.as_str(),
                "id_size": self.header.id_size.bytes(),
                "timestamp_ms": self.header.timestamp_ms,
            },
            "records": counts(&mut self.records.iter().copied()),
            "heap_records": counts(&mut self.heap_records.iter().map(|&(t, n)| (t.name(), n))),
            "gc_roots": counts(&mut self.heap_records.iter().filter(|(t, _)| t.is_root()).map(|&(t, n)| (t.name(), n))),
            "classes": self.shown(top).iter().map(|c| json!({
                "name": c.name, "instances": c.instances, "shallow_bytes": c.shallow_bytes,
            })).collect::<Vec<_>>(),
            "totals": { "classes": self.classes.len(), "instances": instances, "shallow_bytes": bytes },
        })
    }

    fn write_text(&self, file: &str, top: usize, out: &mut dyn Write) -> io::Result<()> {
        let written = i64::try_from(self.header.timestamp_ms)
            .ok()
            .and_then(DateTime::<Utc>::from_timestamp_millis)
            .map(|t| t.format("%Y-%m-%d %H:%M:%S%.3f UTC").to_string())
            .unwrap_or_else(|| "an invalid time".to_string());
        writeln!(out, "{file}: {} bytes", self.file_size)?;
        writeln!(
            out,
            "{}, identifier size {}, written {written} ({} ms)",
            self.header.version.as_str(),
            self.header.id_size.bytes(),
            self.header.timestamp_ms
        )?;
        writeln!(out, "\nRecords")?;
        for (name, n) in &self.records {
            writeln!(out, "  {name:<24} {n:>12}")?;
        }
        if !self.heap_records.is_empty() {
            writeln!(out, "\nHeap dump records")?;
            for (tag, n) in self.heap_records.iter().filter(|(t, _)| !t.is_root()) {
                writeln!(out, "  {:<24} {n:>12}", tag.name())?;
            }
            writeln!(out, "\nGC roots")?;
            for (tag, n) in self.heap_records.iter().filter(|(t, _)| t.is_root()) {
                writeln!(out, "  {:<24} {n:>12}", tag.name())?;
            }
        }
        let shown = self.shown(top);
        let (instances, bytes) = self.totals();
        writeln!(
            out,
            "\nClasses by shallow size ({} of {})",
            shown.len(),
            self.classes.len()
        )?;
        writeln!(out, "  {:>12} {:>15}  class", "instances", "shallow bytes")?;
        for class in shown {
            writeln!(
                out,
                "  {:>12} {:>15}  {}",
                class.instances, class.shallow_bytes, class.name
            )?;
        }
        writeln!(
            out,
            "  {instances:>12} {bytes:>15}  total ({} classes)",
            self.classes.len()
        )
    }
}
