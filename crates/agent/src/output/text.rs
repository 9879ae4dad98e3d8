//! Writes the profile in the `java.hprof.txt` text layout, through the `hprof-text` crate.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Write};
use std::io::{BufWriter, Read};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use hprof_format::{BasicType, HeapRecord, IdSize, Value, shallow};
use hprof_text::{
    CostKind, CostRow, Frame as TextFrame, HeapLine, LineInfo, MonitorEntry, MonitorThread,
    MonitorTimeRow, OldRow, SiteRow, SitesOrder, ctime, write_class_lines, write_cost_section,
    write_file_header, write_heap_begin, write_heap_end, write_heap_line, write_monitor_dump,
    write_monitor_time, write_object_array_lines, write_old_rows, write_root_line, write_sites,
    write_thread_end, write_thread_start, write_trace, write_wait, write_waited,
};

use crate::output::{
    HeapFrame, HeapName, MonitorOwner, MonitorTime, ProfileWriter, Site, SiteTotals, ThreadState,
};
use crate::threads::ThreadStart;
use crate::trace_store::{ClassInfo, Code, EMPTY_TRACE_SERIAL, Trace};

/// The text writer: each trace is written once, before the first record that uses it.
pub struct TextWriter<W: Write + Send> {
    out: W,
    written: HashSet<u32>,
    /// Classes by id, for heap dumps.
    classes: HashMap<u64, TextClass>,
    /// The heap dump being written: its lines go to a temporary file until the counts for
    /// the HEAP DUMP BEGIN line are known.
    heap: Option<HeapText>,
    /// `cpu=old` alone: the old prof layout, without header, THREAD lines or TRACEs.
    prof_only: bool,
}

/// What heap dump lines need of a class.
struct TextClass {
    name: String,
    super_id: u64,
    /// Own instance fields.
    fields: Vec<(String, BasicType)>,
}

struct HeapText {
    /// Object and array lines.
    file: BufWriter<File>,
    /// ROOT lines, written first (few: a heap's roots are threads' locals, globals and
    /// system classes).
    roots: Vec<u8>,
    /// CLS lines, written last (one group per class).
    classes: Vec<u8>,
    path: PathBuf,
    objects: u64,
    bytes: u64,
}

impl<W: Write + Send> TextWriter<W> {
    /// Writes the file header and returns the writer.
    pub fn new(mut out: W) -> io::Result<TextWriter<W>> {
        write_file_header(&mut out, &ctime(SystemTime::now()))?;
        Ok(TextWriter {
            out,
            written: HashSet::new(),
            classes: HashMap::new(),
            heap: None,
            prof_only: false,
        })
    }

    /// A writer for `cpu=old` alone: the listing is the whole file, as the old `prof`
    /// layout had it (no header, no THREAD lines, no TRACE records).
    pub fn prof_only(out: W) -> TextWriter<W> {
        TextWriter {
            out,
            written: HashSet::new(),
            classes: HashMap::new(),
            heap: None,
            prof_only: true,
        }
    }

    fn class_name(&self, id: u64) -> String {
        self.classes
            .get(&id)
            .map_or_else(|| format!("<unknown class 0x{id:x}>"), |c| c.name.clone())
    }

    /// The instance fields of a class and its superclasses, own class first.
    fn chain_fields(&self, class_id: u64) -> Vec<(String, BasicType)> {
        let mut out = Vec::new();
        let mut id = class_id;
        for _ in 0..4096 {
            let Some(class) = self.classes.get(&id) else {
                break;
            };
            out.extend(class.fields.iter().cloned());
            if class.super_id == 0 {
                break;
            }
            id = class.super_id;
        }
        out
    }

    fn heap_line(&mut self, line: &HeapLine<'_>) -> io::Result<()> {
        match self.heap.as_mut() {
            Some(heap) => write_heap_line(&mut heap.file, line),
            None => Ok(()),
        }
    }

    fn count(&mut self, bytes: u64) {
        if let Some(heap) = self.heap.as_mut() {
            heap.objects += 1;
            heap.bytes += bytes;
        }
    }

    fn ensure_trace(&mut self, trace: &Trace) -> io::Result<()> {
        if self.prof_only || !self.written.insert(trace.serial) {
            return Ok(());
        }
        let frames: Vec<TextFrame<'_>> = trace
            .frames
            .iter()
            .map(|f| TextFrame {
                class: &f.method.class.name,
                method: Some(&f.method.name),
                source: f.method.class.source.as_deref(),
                line: match f.method.code {
                    Code::Native => LineInfo::NativeCode,
                    Code::Kernel => LineInfo::KernelCode,
                    Code::Java if f.line > 0 => LineInfo::Line(f.line as u32),
                    Code::Java => LineInfo::Unknown,
                },
            })
            .collect();
        let thread = (trace.thread != 0).then_some(trace.thread);
        write_trace(&mut self.out, trace.serial, thread, &frames)
    }
}

impl<W: Write + Send> TextWriter<W> {
    /// A CPU SAMPLES or CPU TIME section: `rows` are (trace, cost, count), in order; their
    /// traces are written first.
    fn cost_section(
        &mut self,
        kind: CostKind,
        rows: &[(&Trace, u64, u64)],
        total: u64,
    ) -> io::Result<()> {
        for (trace, _, _) in rows {
            self.ensure_trace(trace)?;
        }
        let methods: Vec<Option<String>> = rows
            .iter()
            .map(|(t, _, _)| {
                t.frames
                    .first()
                    .map(|f| format!("{}.{}", f.method.class.name, f.method.name))
            })
            .collect();
        let cost_rows: Vec<CostRow<'_>> = rows
            .iter()
            .zip(&methods)
            .map(|((trace, cost, count), method)| CostRow {
                cost: *cost,
                count: *count,
                trace: trace.serial,
                method: method.as_deref(),
            })
            .collect();
        write_cost_section(
            &mut self.out,
            kind,
            &ctime(SystemTime::now()),
            &cost_rows,
            total,
        )?;
        self.out.flush()
    }
}

impl<W: Write + Send> ProfileWriter for TextWriter<W> {
    fn thread_start(&mut self, start: &ThreadStart) -> io::Result<()> {
        if self.prof_only {
            return Ok(());
        }
        write_thread_start(
            &mut self.out,
            start.object_id,
            start.serial,
            &start.name,
            &start.group,
        )
    }

    fn thread_end(&mut self, serial: u32) -> io::Result<()> {
        if self.prof_only {
            return Ok(());
        }
        write_thread_end(&mut self.out, serial)
    }

    fn cpu_samples(&mut self, rows: &[(Arc<Trace>, u64)], total: u64) -> io::Result<()> {
        let rows: Vec<(&Trace, u64, u64)> =
            rows.iter().map(|(t, hits)| (&**t, *hits, *hits)).collect();
        self.cost_section(CostKind::Samples, &rows, total)
    }

    fn cpu_times(&mut self, rows: &[(Arc<Trace>, u64, u64)], total: u64) -> io::Result<()> {
        let rows: Vec<(&Trace, u64, u64)> = rows
            .iter()
            .map(|(t, calls, millis)| (&**t, *millis, *calls))
            .collect();
        self.cost_section(CostKind::TimeMillis, &rows, total)
    }

    fn cpu_old(&mut self, rows: &[(u64, Option<String>, Option<String>, u64)]) -> io::Result<()> {
        let rows: Vec<OldRow<'_>> = rows
            .iter()
            .map(|(count, callee, caller, millis)| OldRow {
                count: *count,
                callee: callee.as_deref(),
                caller: caller.as_deref(),
                millis: *millis,
            })
            .collect();
        write_old_rows(&mut self.out, &rows)?;
        self.out.flush()
    }

    fn traces(&mut self, traces: &[Arc<Trace>]) -> io::Result<()> {
        for trace in traces {
            self.ensure_trace(trace)?;
        }
        self.out.flush()
    }

    fn sites(
        &mut self,
        sites: &[Site],
        totals: &SiteTotals,
        _cutoff: f64,
        flags: u16,
    ) -> io::Result<()> {
        for site in sites {
            self.ensure_trace(&site.trace)?;
        }
        let rows: Vec<SiteRow<'_>> = sites
            .iter()
            .map(|s| SiteRow {
                live_bytes: s.live_bytes,
                live_objects: s.live_objects,
                allocated_bytes: s.allocated_bytes,
                allocated_objects: s.allocated_objects,
                trace: s.trace.serial,
                class: &s.class.name,
            })
            .collect();
        let (order, total) = if flags & 0x2 != 0 {
            (SitesOrder::AllocatedBytes, totals.allocated_bytes)
        } else {
            (SitesOrder::LiveBytes, totals.live_bytes)
        };
        write_sites(
            &mut self.out,
            order,
            &ctime(SystemTime::now()),
            &rows,
            total,
        )?;
        self.out.flush()
    }

    fn monitor_wait(
        &mut self,
        signature: &str,
        timeout_ms: i64,
        thread: Option<u32>,
    ) -> io::Result<()> {
        write_wait(&mut self.out, signature, timeout_ms, thread)
    }

    fn monitor_waited(
        &mut self,
        signature: &str,
        waited_ms: i64,
        thread: Option<u32>,
    ) -> io::Result<()> {
        write_waited(&mut self.out, signature, waited_ms, thread)
    }

    fn monitor_dump(
        &mut self,
        threads: &[ThreadState],
        traces: &[Arc<Trace>],
        monitors: &[MonitorOwner],
    ) -> io::Result<()> {
        for trace in traces {
            if trace.serial != crate::trace_store::EMPTY_TRACE_SERIAL {
                self.ensure_trace(trace)?;
            }
        }
        let threads: Vec<MonitorThread<'_>> = threads
            .iter()
            .map(|t| MonitorThread {
                serial: t.serial,
                trace: t.trace,
                status: &t.status,
            })
            .collect();
        let monitors: Vec<MonitorEntry<'_>> = monitors
            .iter()
            .map(|m| MonitorEntry {
                signature: &m.signature,
                owner: m.owner,
                entry_count: m.entry_count,
                waiting_to_enter: &m.waiting_to_enter,
                waiting_to_be_notified: &m.waiting_to_be_notified,
            })
            .collect();
        write_monitor_dump(&mut self.out, &threads, &monitors)
    }

    fn monitor_time(
        &mut self,
        rows: &[MonitorTime],
        traces: &[Arc<Trace>],
        total_nanos: u64,
    ) -> io::Result<()> {
        for trace in traces {
            self.ensure_trace(trace)?;
        }
        let rows: Vec<MonitorTimeRow<'_>> = rows
            .iter()
            .map(|r| MonitorTimeRow {
                millis: r.nanos / 1_000_000,
                count: r.count,
                trace: r.trace,
                class: &r.class,
            })
            .collect();
        write_monitor_time(
            &mut self.out,
            &ctime(SystemTime::now()),
            &rows,
            total_nanos / 1_000_000,
        )?;
        self.out.flush()
    }

    fn heap_class(&mut self, class: &ClassInfo) -> io::Result<()> {
        self.classes
            .entry(class.object_id)
            .or_insert_with(|| TextClass {
                name: class.name.clone(),
                super_id: 0,
                fields: Vec::new(),
            })
            .name = class.name.clone();
        Ok(())
    }

    fn heap_class_layout(
        &mut self,
        class: &ClassInfo,
        super_id: u64,
        fields: &[(String, BasicType)],
    ) -> io::Result<()> {
        self.classes.insert(
            class.object_id,
            TextClass {
                name: class.name.clone(),
                super_id,
                fields: fields.to_vec(),
            },
        );
        Ok(())
    }

    fn heap_dump_begin(&mut self) -> io::Result<()> {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("hprof-heap-{}-{n}.txt", std::process::id()));
        let file = BufWriter::with_capacity(1 << 20, hprof_outfile::create(&path)?);
        self.heap = Some(HeapText {
            file,
            roots: Vec::new(),
            classes: Vec::new(),
            path,
            objects: 0,
            bytes: 0,
        });
        Ok(())
    }

    fn heap_record(&mut self, record: &HeapRecord<'_>) -> io::Result<()> {
        if let Some(heap) = self.heap.as_mut()
            && record.sub_tag().is_root()
        {
            let classes = &self.classes;
            let name = |id: u64| {
                classes
                    .get(&id)
                    .map_or_else(|| format!("<unknown class 0x{id:x}>"), |c| c.name.clone())
            };
            return write_root_line(&mut heap.roots, record, EMPTY_TRACE_SERIAL, &name);
        }
        match *record {
            HeapRecord::InstanceDump {
                object_id,
                stack_trace_serial,
                class_id,
                values,
            } => {
                let fields = self.chain_fields(class_id);
                let size = shallow::instance_size(
                    fields.iter().map(|&(_, t)| shallow::field_bytes(t)).sum(),
                );
                let class = self.class_name(class_id);
                self.count(size);
                self.heap_line(&HeapLine::Object {
                    id: object_id,
                    size,
                    trace: stack_trace_serial,
                    class: &class,
                    class_id,
                })?;
                let mut rest = values;
                for (name, ty) in &fields {
                    let Some((value, tail)) = Value::read(*ty, IdSize::Eight, rest) else {
                        break;
                    };
                    rest = tail;
                    if let Value::Object(id @ 1..) = value {
                        self.heap_line(&HeapLine::Field { name, value: id })?;
                    }
                }
                Ok(())
            }
            HeapRecord::ObjectArrayDump {
                array_id,
                stack_trace_serial,
                array_class_id,
                elements,
            } => {
                let size = shallow::object_array_size(elements.len() as u64);
                let class = self.class_name(array_class_id);
                self.count(size);
                match self.heap.as_mut() {
                    Some(heap) => write_object_array_lines(
                        &mut heap.file,
                        array_id,
                        size,
                        stack_trace_serial,
                        &class,
                        array_class_id,
                        elements,
                    ),
                    None => Ok(()),
                }
            }
            HeapRecord::PrimitiveArrayDump {
                array_id,
                stack_trace_serial,
                element_type,
                length,
                ..
            } => {
                let size = shallow::primitive_array_size(element_type, u64::from(length));
                let type_name = format!("{}[]", element_type.java_name());
                self.count(size);
                self.heap_line(&HeapLine::PrimitiveArray {
                    id: array_id,
                    size,
                    trace: stack_trace_serial,
                    length: u64::from(length),
                    type_name: &type_name,
                })
            }
            _ => Ok(()),
        }
    }

    fn heap_class_dump(
        &mut self,
        class_id: u64,
        super_id: u64,
        loader: u64,
        signers: u64,
        domain: u64,
        _instance_size: u32,
        constant_pool: &[(u16, Value)],
        statics: &[(HeapName<'_>, Value)],
        _fields: &[(HeapName<'_>, BasicType)],
    ) -> io::Result<()> {
        let name = self.class_name(class_id);
        match self.heap.as_mut() {
            Some(heap) => write_class_lines(
                &mut heap.classes,
                class_id,
                &name,
                EMPTY_TRACE_SERIAL,
                [super_id, loader, signers, domain],
                statics.iter().map(|(n, v)| (n.text, *v)),
                constant_pool.iter().copied(),
            ),
            None => Ok(()),
        }
    }

    fn heap_thread_trace(
        &mut self,
        serial: u32,
        thread: u32,
        frames: &[HeapFrame],
    ) -> io::Result<()> {
        let frames: Vec<TextFrame<'_>> = frames
            .iter()
            .map(|f| TextFrame {
                class: &f.class.name,
                method: Some(&f.method.1),
                source: (!f.source.1.is_empty()).then_some(f.source.1.as_str()),
                line: LineInfo::from_binary(f.line),
            })
            .collect();
        write_trace(&mut self.out, serial, Some(thread), &frames)
    }

    fn heap_dump_end(&mut self) -> io::Result<()> {
        let Some(mut heap) = self.heap.take() else {
            return Ok(());
        };
        heap.file.flush()?;
        drop(heap.file);
        let result = (|| {
            write_heap_begin(
                &mut self.out,
                heap.objects,
                heap.bytes,
                &ctime(SystemTime::now()),
            )?;
            self.out.write_all(&heap.roots)?;
            let mut lines = File::open(&heap.path)?;
            let mut buf = vec![0u8; 1 << 20];
            loop {
                let n = lines.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                self.out.write_all(&buf[..n])?;
            }
            self.out.write_all(&heap.classes)?;
            write_heap_end(&mut self.out)?;
            self.out.flush()
        })();
        let _ = std::fs::remove_file(&heap.path);
        result
    }

    fn error_note(&mut self, note: &str) -> io::Result<()> {
        writeln!(self.out, "{}{note}", crate::error::PREFIX)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
