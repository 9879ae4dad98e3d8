//! `hprof print`: renders a binary HPROF file in the `java.hprof.txt` text layout.

use std::borrow::Cow;
use std::io::{self, BufWriter, Write};
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;
use hprof_format::{
    BasicType, ClassDump, Header, HeapDumpBody, HeapRecord, IdList, Record, Records, Symbols,
    Value, primitive_array_name,
    shallow::{self, object_array_size, primitive_array_size},
};
use hprof_text::{
    CostKind, CostRow, Frame, HeapLine, LineInfo, SiteRow, SitesOrder, ctime_from_millis,
    write_class_lines, write_cost_section, write_file_header, write_heap_begin, write_heap_end,
    write_heap_line, write_object_array_lines, write_root_line, write_sites, write_thread_end,
    write_thread_start, write_trace,
};
use rustc_hash::FxHashMap;

use crate::input::Input;

/// Arguments of `hprof print`.
#[derive(Debug, Args)]
#[command(
    about = "Render an HPROF binary file as text (the java.hprof.txt layout)",
    long_about = "Renders a binary HPROF file (from the hprof agent with format=b, or from \
`jcmd <pid> GC.heap_dump`) in the text layout of java.hprof.txt: THREAD START/END, TRACE, \
SITES, CPU SAMPLES and HEAP DUMP sections with ROOT, OBJ, ARR and CLS lines, so tools made for \
the text format can read binary files."
)]
pub struct PrintArgs {
    /// The HPROF file to read (`-` reads standard input).
    pub file: PathBuf,
    /// Write the text to this file instead of standard output.
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,
    /// Accept a truncated file (one still being written, or cut short): read up to its last
    /// complete record, warn about what is missing, and exit 0.
    #[arg(long = "allow-truncated", visible_alias = "partial")]
    pub partial: bool,
}

/// Runs `hprof print`.
pub fn run(args: &PrintArgs, stdout: &mut dyn Write) -> Result<()> {
    let name = args.file.display().to_string();
    let input = Input::open(&args.file)?;
    let completeness = crate::input::completeness(&input, &name, args.partial)?;
    let index = Index::build(&input, args.partial).with_context(|| name.clone())?;
    match &args.output {
        Some(path) => {
            let file = hprof_outfile::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::with_capacity(1 << 20, file);
            render(&input, &index, &mut out).with_context(|| name.clone())?;
            out.flush()
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        None => render(&input, &index, stdout).with_context(|| name.clone())?,
    }
    crate::input::finish_reading(&name, &completeness, args.partial)
}

/// One heap dump: its record bodies (one HEAP DUMP, or the segments up to HEAP DUMP END)
/// and the time of its first record.
#[derive(Debug)]
struct Dump<'a> {
    bodies: Vec<HeapDumpBody<'a>>,
    time_us: u32,
}

/// What the first pass learns: names, frames, class layouts and where the dumps are.
#[derive(Debug)]
struct Index<'a> {
    /// Stop quietly at a record cut short by the end of the file.
    partial: bool,
    header: Header,
    symbols: Symbols<'a>,
    classes: FxHashMap<u64, ClassDump<'a>>,
    dumps: Vec<Dump<'a>>,
}

impl<'a> Index<'a> {
    fn build(input: &'a Input, partial: bool) -> hprof_format::Result<Index<'a>> {
        let (header, mut records) = Records::new(input.bytes())?;
        let mut index = Index {
            partial,
            header,
            symbols: Symbols::new(),
            classes: FxHashMap::default(),
            dumps: Vec::new(),
        };
        let progress = input.progress("indexing", input.bytes().len() as u64);
        let mut walk = progress.walk(input, 0);
        let mut open_dump = false;
        while let Some((record_header, record)) = crate::input::next_record(&mut records, partial)?
        {
            index.symbols.add(&record);
            match record {
                Record::HeapDump(body) | Record::HeapDumpSegment(body) => {
                    let mut heap = body.records(header.id_size);
                    while let Some((offset, sub)) = heap.next()? {
                        if let HeapRecord::ClassDump(class) = sub {
                            index.classes.insert(class.class_id, class);
                        }
                        walk.at(offset);
                    }
                    let segmented = matches!(record, Record::HeapDumpSegment(_));
                    if segmented && open_dump {
                        if let Some(dump) = index.dumps.last_mut() {
                            dump.bodies.push(body);
                        }
                    } else {
                        index.dumps.push(Dump {
                            bodies: vec![body],
                            time_us: record_header.time_us,
                        });
                    }
                    open_dump = segmented;
                }
                Record::HeapDumpEnd => open_dump = false,
                _ => {}
            }
            walk.at(records.offset());
        }
        Ok(index)
    }

    fn string(&self, id: u64) -> Option<Cow<'a, str>> {
        self.symbols.text(id)
    }

    fn class_name(&self, class_id: u64) -> String {
        self.symbols
            .class_name(class_id)
            .unwrap_or_else(|| format!("<unknown class 0x{class_id:x}>"))
    }

    fn class_name_by_serial(&self, serial: u32) -> Option<String> {
        self.symbols.class_name_by_serial(serial)
    }

    fn date(&self, time_us: u32) -> String {
        ctime_from_millis(self.header.timestamp_ms + u64::from(time_us) / 1000)
    }

    /// `class.method` of a trace's top frame.
    fn top_method(&self, trace: u32) -> Option<String> {
        let frame = self
            .symbols
            .frame(self.symbols.trace(trace)?.frames.get(0)?)?;
        let class = self
            .class_name_by_serial(frame.class_serial)
            .unwrap_or_else(|| "<Unknown Class>".into());
        let method = self
            .string(frame.method_name_id)
            .unwrap_or(Cow::Borrowed("<Unknown Method>"));
        Some(format!("{class}.{method}"))
    }

    /// Shallow size of an instance of `class_id` (see `hprof summary --help`).
    fn instance_size(&self, class_id: u64) -> u64 {
        let mut fields = 0u64;
        self.for_each_class_in_chain(class_id, |class| {
            fields += shallow::own_field_bytes(class);
        });
        shallow::instance_size(fields)
    }

    fn for_each_class_in_chain(&self, class_id: u64, mut f: impl FnMut(&ClassDump<'a>)) {
        let mut id = class_id;
        for _ in 0..4096 {
            let Some(class) = self.classes.get(&id) else {
                break;
            };
            f(class);
            if class.super_class_id == 0 {
                break;
            }
            id = class.super_class_id;
        }
    }
}

fn render(input: &Input, index: &Index<'_>, out: &mut dyn Write) -> Result<()> {
    let (_, mut records) = Records::new(input.bytes())?;
    write_file_header(out, &ctime_from_millis(index.header.timestamp_ms))?;
    let progress = input.progress("printing", input.bytes().len() as u64);
    let mut walk = progress.walk(input, 0);
    let mut dumps = index.dumps.iter();
    let mut open_dump = false;
    while let Some((record_header, record)) =
        crate::input::next_record(&mut records, index.partial)?
    {
        match record {
            Record::StartThread {
                thread_serial,
                thread_object_id,
                name_id,
                group_name_id,
                ..
            } => {
                let name = index.string(name_id).unwrap_or_default();
                let group = index.string(group_name_id).unwrap_or_default();
                write_thread_start(out, thread_object_id, thread_serial, &name, &group)?;
            }
            Record::EndThread { thread_serial } => write_thread_end(out, thread_serial)?,
            Record::StackTrace {
                serial,
                thread_serial,
                frames,
            } => {
                let thread = (thread_serial != 0).then_some(thread_serial);
                render_trace(index, serial, thread, frames, out)?;
            }
            Record::AllocSites(sites) => {
                let by_allocation = sites.flags & 0x2 != 0;
                let names: Vec<String> = sites
                    .sites()
                    .map(|s| {
                        index
                            .class_name_by_serial(s.class_serial)
                            .unwrap_or_else(|| match BasicType::from_u8(s.array_type) {
                                Some(ty) if ty != BasicType::Object => primitive_array_name(ty),
                                _ => format!("<unknown class {}>", s.class_serial),
                            })
                    })
                    .collect();
                let rows: Vec<SiteRow<'_>> = sites
                    .sites()
                    .zip(&names)
                    .map(|(s, name)| SiteRow {
                        live_bytes: u64::from(s.live_bytes),
                        live_objects: u64::from(s.live_instances),
                        allocated_bytes: u64::from(s.bytes_allocated),
                        allocated_objects: u64::from(s.instances_allocated),
                        trace: s.stack_trace_serial,
                        class: name,
                    })
                    .collect();
                let (order, total) = if by_allocation {
                    (SitesOrder::AllocatedBytes, sites.total_bytes_allocated)
                } else {
                    (SitesOrder::LiveBytes, u64::from(sites.total_live_bytes))
                };
                write_sites(out, order, &index.date(record_header.time_us), &rows, total)?;
            }
            Record::CpuSamples { total, traces } => {
                let methods: Vec<Option<String>> =
                    traces.iter().map(|(_, t)| index.top_method(t)).collect();
                let rows: Vec<CostRow<'_>> = traces
                    .iter()
                    .zip(&methods)
                    .map(|((count, trace), method)| CostRow {
                        cost: u64::from(count),
                        count: u64::from(count),
                        trace,
                        method: method.as_deref(),
                    })
                    .collect();
                write_cost_section(
                    out,
                    CostKind::Samples,
                    &index.date(record_header.time_us),
                    &rows,
                    u64::from(total),
                )?;
            }
            Record::HeapDump(_) | Record::HeapDumpSegment(_) => {
                let continues = open_dump && matches!(record, Record::HeapDumpSegment(_));
                // The next dump is taken only where one starts, not at each further segment.
                if !continues && let Some(dump) = dumps.next() {
                    render_dump(index, dump, out)?;
                }
                open_dump = matches!(record, Record::HeapDumpSegment(_));
            }
            Record::HeapDumpEnd => open_dump = false,
            _ => {}
        }
        walk.at(records.offset());
    }
    out.flush()?;
    Ok(())
}

/// A frame's names, looked up, for one TRACE block.
struct NamedFrame<'a> {
    class: String,
    method: Option<Cow<'a, str>>,
    source: Option<Cow<'a, str>>,
    line: LineInfo,
}

fn render_trace(
    index: &Index<'_>,
    serial: u32,
    thread: Option<u32>,
    frame_ids: IdList<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    let named: Vec<NamedFrame<'_>> = frame_ids
        .iter()
        .map(|id| match index.symbols.frame(id) {
            Some(f) => NamedFrame {
                class: index
                    .class_name_by_serial(f.class_serial)
                    .unwrap_or_else(|| "<Unknown Class>".into()),
                method: index.string(f.method_name_id),
                source: index.string(f.source_file_id).filter(|s| !s.is_empty()),
                line: LineInfo::from_stack_frame(f.line, index.string(f.source_file_id).as_deref()),
            },
            None => NamedFrame {
                class: format!("<unknown frame 0x{id:x}>"),
                method: None,
                source: None,
                line: LineInfo::Unknown,
            },
        })
        .collect();
    let frames: Vec<Frame<'_>> = named
        .iter()
        .map(|f| Frame {
            class: &f.class,
            method: f.method.as_deref(),
            source: f.source.as_deref(),
            line: f.line,
        })
        .collect();
    write_trace(out, serial, thread, &frames)
}

/// Visits every sub-record of a dump.
fn each_record<'a>(
    index: &Index<'a>,
    dump: &Dump<'a>,
    mut f: impl FnMut(HeapRecord<'a>) -> io::Result<()>,
) -> Result<()> {
    for body in &dump.bodies {
        let mut heap = body.records(index.header.id_size);
        while let Some((_, record)) = heap.next()? {
            f(record)?;
        }
    }
    Ok(())
}

fn render_dump(index: &Index<'_>, dump: &Dump<'_>, out: &mut dyn Write) -> Result<()> {
    let (mut objects, mut bytes) = (0u64, 0u64);
    each_record(index, dump, |record| {
        let size = match record {
            HeapRecord::InstanceDump { class_id, .. } => index.instance_size(class_id),
            HeapRecord::ObjectArrayDump { elements, .. } => {
                object_array_size(elements.len() as u64)
            }
            HeapRecord::PrimitiveArrayDump {
                element_type,
                length,
                ..
            } => primitive_array_size(element_type, u64::from(length)),
            _ => return Ok(()),
        };
        objects += 1;
        bytes += size;
        Ok(())
    })?;
    write_heap_begin(out, objects, bytes, &index.date(dump.time_us))?;
    each_record(index, dump, |record| render_root(index, &record, out))?;
    each_record(index, dump, |record| render_object(index, &record, out))?;
    each_record(index, dump, |record| match record {
        HeapRecord::ClassDump(class) => render_class(index, &class, out),
        _ => Ok(()),
    })?;
    write_heap_end(out)?;
    Ok(())
}

fn render_root(index: &Index<'_>, record: &HeapRecord<'_>, out: &mut dyn Write) -> io::Result<()> {
    // Binary files carry no trace for a JNI global root: 0.
    write_root_line(out, record, 0, &|id| index.class_name(id))
}

fn render_object(
    index: &Index<'_>,
    record: &HeapRecord<'_>,
    out: &mut dyn Write,
) -> io::Result<()> {
    match *record {
        HeapRecord::InstanceDump {
            object_id,
            stack_trace_serial,
            class_id,
            values,
        } => {
            let class = index.class_name(class_id);
            write_heap_line(
                out,
                &HeapLine::Object {
                    id: object_id,
                    size: index.instance_size(class_id),
                    trace: stack_trace_serial,
                    class: &class,
                    class_id,
                },
            )?;
            let mut rest = values;
            let mut result = Ok(());
            index.for_each_class_in_chain(class_id, |class| {
                for (name_id, ty) in class.instance_fields() {
                    let Some((value, tail)) = Value::read(ty, index.header.id_size, rest) else {
                        return;
                    };
                    rest = tail;
                    if let (Value::Object(id @ 1..), true) = (value, result.is_ok()) {
                        {
                            let name = index.string(name_id).unwrap_or_default();
                            result = write_heap_line(
                                out,
                                &HeapLine::Field {
                                    name: &name,
                                    value: id,
                                },
                            );
                        }
                    }
                }
            });
            result
        }
        HeapRecord::ObjectArrayDump {
            array_id,
            stack_trace_serial,
            array_class_id,
            elements,
        } => write_object_array_lines(
            out,
            array_id,
            object_array_size(elements.len() as u64),
            stack_trace_serial,
            &index.class_name(array_class_id),
            array_class_id,
            elements,
        ),
        HeapRecord::PrimitiveArrayDump {
            array_id,
            stack_trace_serial,
            element_type,
            length,
            ..
        } => {
            let type_name = primitive_array_name(element_type);
            write_heap_line(
                out,
                &HeapLine::PrimitiveArray {
                    id: array_id,
                    size: primitive_array_size(element_type, u64::from(length)),
                    trace: stack_trace_serial,
                    length: u64::from(length),
                    type_name: &type_name,
                },
            )
        }
        _ => Ok(()),
    }
}

fn render_class(index: &Index<'_>, class: &ClassDump<'_>, out: &mut dyn Write) -> io::Result<()> {
    let statics = class
        .static_fields()
        .map(|(name_id, value)| (index.string(name_id).unwrap_or_default(), value));
    write_class_lines(
        out,
        class.class_id,
        &index.class_name(class.class_id),
        class.stack_trace_serial,
        [
            class.super_class_id,
            class.class_loader_id,
            class.signers_id,
            class.protection_domain_id,
        ],
        statics,
        class.constant_pool(),
    )
}
