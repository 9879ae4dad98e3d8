//! Writes the profile as an HPROF binary file (`JAVA PROFILE 1.0.2`, 8-byte identifiers),
//! through `hprof_format::Writer`: names, classes, frames and traces are written as records
//! before the first record that refers to them.

use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use hprof_format::{AllocSite, Header, IdSize, Version, Writer};

use crate::options::Options;
use crate::output::{HeapFrame, HeapName, ProfileWriter, Site, SiteTotals, TimedSample};
use crate::threads::ThreadStart;
use crate::trace_store::{ClassInfo, EMPTY_TRACE_SERIAL, Trace};

/// CONTROL SETTINGS flag: allocation traces are recorded.
const ALLOC_TRACES_ON: u32 = 0x1;
/// CONTROL SETTINGS flag: CPU sampling is on.
const CPU_SAMPLING_ON: u32 = 0x2;

/// The binary writer.
pub struct BinaryWriter<W: Write + Send> {
    out: Writer<W>,
    start: Instant,
    strings: HashMap<String, u64>,
    classes: HashSet<u32>,
    /// Classes unloaded before their LOAD CLASS was written: UNLOAD CLASS follows it at once.
    unloaded: HashSet<u32>,
    frames: HashSet<u64>,
    traces: HashSet<u32>,
    /// Threads' stacks at the open heap dump, written when it ends.
    heap_traces: Vec<(u32, u32, Vec<HeapFrame>)>,
    /// Threads started while the heap dump is open, written when it ends.
    heap_threads: Vec<ThreadStart>,
    /// Timed samples drained while the heap dump is open, written when it ends.
    heap_timed: Vec<TimedSample>,
    dump_open: bool,
    /// The header's timestamp, nanoseconds since the epoch (TIMED SAMPLES count from it).
    epoch_nanos: i64,
}

impl<W: Write + Send> BinaryWriter<W> {
    /// Writes the header, CONTROL SETTINGS and the empty trace.
    pub fn new(out: W, options: &Options) -> io::Result<BinaryWriter<W>> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: now,
        };
        let mut w = BinaryWriter {
            out: Writer::new(out, header)?,
            start: Instant::now(),
            strings: HashMap::new(),
            classes: HashSet::new(),
            unloaded: HashSet::new(),
            frames: HashSet::new(),
            traces: HashSet::new(),
            heap_traces: Vec::new(),
            heap_threads: Vec::new(),
            heap_timed: Vec::new(),
            dump_open: false,
            epoch_nanos: now as i64 * 1_000_000,
        };
        let mut flags = 0;
        if options.heap_sites || options.heap_dump {
            flags |= ALLOC_TRACES_ON;
        }
        if options.cpu_samples || options.cpu_wall {
            flags |= CPU_SAMPLING_ON;
        }
        let depth = u16::try_from(options.depth).unwrap_or(u16::MAX);
        w.out.control_settings(0, flags, depth)?;
        w.out.stack_trace(0, EMPTY_TRACE_SERIAL, 0, &[])?;
        w.traces.insert(EMPTY_TRACE_SERIAL);
        Ok(w)
    }

    fn time(&self) -> u32 {
        self.start.elapsed().as_micros() as u32
    }

    /// The id of `text`'s STRING record, writing it on first use. 0 is the empty string.
    fn string(&mut self, text: &str) -> io::Result<u64> {
        if let Some(&id) = self.strings.get(text) {
            return Ok(id);
        }
        let id = self.strings.len() as u64 + 1;
        let time = self.time();
        self.out.utf8(time, id, text.as_bytes())?;
        self.strings.insert(text.to_string(), id);
        Ok(id)
    }

    fn class(&mut self, class: &ClassInfo) -> io::Result<()> {
        if self.classes.insert(class.serial) {
            let name = self.string(&class.name)?;
            let time = self.time();
            self.out.load_class(
                time,
                class.serial,
                class.object_id,
                EMPTY_TRACE_SERIAL,
                name,
            )?;
            if self.unloaded.remove(&class.serial) {
                self.classes.remove(&class.serial);
                self.out.unload_class(time, class.serial)?;
            }
        }
        Ok(())
    }

    fn ensure_trace(&mut self, trace: &Trace) -> io::Result<()> {
        if self.traces.contains(&trace.serial) {
            return Ok(());
        }
        for frame in &trace.frames {
            if self.frames.contains(&frame.id) {
                continue;
            }
            let method = &frame.method;
            self.class(&method.class)?;
            let name = self.string(&method.name)?;
            let signature = self.string(&method.signature)?;
            let source = match &method.class.source {
                Some(source) => self.string(source)?,
                None => 0,
            };
            let time = self.time();
            self.out.stack_frame(
                time,
                frame.id,
                name,
                signature,
                source,
                method.class.serial,
                frame.line,
            )?;
            self.frames.insert(frame.id);
        }
        let ids: Vec<u64> = trace.frames.iter().map(|f| f.id).collect();
        let time = self.time();
        self.out
            .stack_trace(time, trace.serial, trace.thread, &ids)?;
        self.traces.insert(trace.serial);
        Ok(())
    }
}

impl<W: Write + Send> ProfileWriter for BinaryWriter<W> {
    fn thread_start(&mut self, start: &ThreadStart) -> io::Result<()> {
        if self.dump_open {
            self.heap_threads.push(start.clone());
            return Ok(());
        }
        let name = self.string(&start.name)?;
        let group = self.string(&start.group)?;
        let parent = self.string(&start.parent_group)?;
        let time = self.time();
        self.out.start_thread(
            time,
            start.serial,
            start.object_id,
            EMPTY_TRACE_SERIAL,
            name,
            group,
            parent,
        )
    }

    fn class_unload(&mut self, class: &ClassInfo) -> io::Result<()> {
        if self.classes.remove(&class.serial) {
            let time = self.time();
            self.out.unload_class(time, class.serial)?;
        } else {
            self.unloaded.insert(class.serial);
        }
        Ok(())
    }

    fn thread_end(&mut self, serial: u32) -> io::Result<()> {
        let time = self.time();
        self.out.end_thread(time, serial)
    }

    fn timed_samples(&mut self, samples: &[TimedSample]) -> io::Result<()> {
        if self.dump_open {
            self.heap_timed.extend_from_slice(samples);
            return Ok(());
        }
        let mut records = Vec::with_capacity(samples.len());
        for sample in samples {
            self.ensure_trace(&sample.trace)?;
            let since = crate::output::wall_nanos(sample.time) - self.epoch_nanos;
            records.push(hprof_format::TimedSample {
                time_ns: since.max(0) as u64,
                trace_serial: sample.trace.serial,
                thread_serial: sample.thread,
                weight: sample.weight,
                flags: u8::from(sample.wall),
            });
        }
        // A record holds at most u32::MAX bytes: 100,000 samples (2.1 MB) a record.
        for part in records.chunks(100_000) {
            let time = self.time();
            self.out.timed_samples(time, part)?;
        }
        Ok(())
    }

    fn cpu_samples(&mut self, rows: &[(Arc<Trace>, u64)], total: u64) -> io::Result<()> {
        for (trace, _) in rows {
            self.ensure_trace(trace)?;
        }
        let counts: Vec<(u32, u32)> = rows
            .iter()
            .map(|(t, n)| (u32::try_from(*n).unwrap_or(u32::MAX), t.serial))
            .collect();
        let time = self.time();
        self.out
            .cpu_samples(time, u32::try_from(total).unwrap_or(u32::MAX), &counts)?;
        self.out.flush()
    }

    fn traces(&mut self, traces: &[Arc<Trace>]) -> io::Result<()> {
        for trace in traces {
            self.ensure_trace(trace)?;
        }
        self.out.flush()
    }

    fn heap_summary(&mut self, totals: &SiteTotals) -> io::Result<()> {
        let u4 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let time = self.time();
        self.out.heap_summary(
            time,
            u4(totals.live_bytes),
            u4(totals.live_objects),
            totals.allocated_bytes,
            totals.allocated_objects,
        )?;
        self.out.flush()
    }

    fn sites(
        &mut self,
        sites: &[Site],
        totals: &SiteTotals,
        cutoff: f64,
        flags: u16,
    ) -> io::Result<()> {
        for site in sites {
            self.class(&site.class)?;
            self.ensure_trace(&site.trace)?;
        }
        let u4 = |n: u64| u32::try_from(n).unwrap_or(u32::MAX);
        let records: Vec<AllocSite> = sites
            .iter()
            .map(|s| AllocSite {
                array_type: s.array_type,
                class_serial: s.class.serial,
                stack_trace_serial: s.trace.serial,
                live_bytes: u4(s.live_bytes),
                live_instances: u4(s.live_objects),
                bytes_allocated: u4(s.allocated_bytes),
                instances_allocated: u4(s.allocated_objects),
            })
            .collect();
        let time = self.time();
        self.out.alloc_sites(
            time,
            flags,
            cutoff as f32,
            u4(totals.live_bytes),
            u4(totals.live_objects),
            totals.allocated_bytes,
            totals.allocated_objects,
            &records,
        )?;
        self.heap_summary(totals)
    }

    fn heap_class(&mut self, class: &ClassInfo) -> io::Result<()> {
        self.class(class)
    }

    fn heap_dump_begin(&mut self) -> io::Result<()> {
        let time = self.time();
        self.out.begin_heap_dump(time)?;
        self.dump_open = true;
        Ok(())
    }

    fn heap_record(&mut self, record: &hprof_format::HeapRecord<'_>) -> io::Result<()> {
        self.out.heap_record(record)
    }

    fn heap_string(&mut self, text: &str) -> io::Result<u64> {
        self.string(text)
    }

    fn heap_class_dump(
        &mut self,
        class_id: u64,
        super_id: u64,
        loader: u64,
        signers: u64,
        domain: u64,
        instance_size: u32,
        constant_pool: &[(u16, hprof_format::Value)],
        statics: &[(HeapName<'_>, hprof_format::Value)],
        fields: &[(HeapName<'_>, hprof_format::BasicType)],
    ) -> io::Result<()> {
        let statics: Vec<(u64, hprof_format::Value)> =
            statics.iter().map(|(n, v)| (n.id, *v)).collect();
        let fields: Vec<(u64, hprof_format::BasicType)> =
            fields.iter().map(|(n, t)| (n.id, *t)).collect();
        self.out.class_dump(
            class_id,
            EMPTY_TRACE_SERIAL,
            super_id,
            loader,
            signers,
            domain,
            instance_size,
            constant_pool,
            &statics,
            &fields,
        )
    }

    fn takes_raw_segments(&self) -> bool {
        true
    }

    fn heap_raw_segment(&mut self, body: &[u8]) -> io::Result<()> {
        self.out.heap_segment(body)
    }

    fn heap_utf8(&mut self, id: u64, text: &[u8]) -> io::Result<()> {
        let time = self.time();
        self.out.utf8(time, id, text)
    }

    fn heap_load_class(&mut self, class: &ClassInfo, name_id: u64) -> io::Result<()> {
        let time = self.time();
        self.out.load_class(
            time,
            class.serial,
            class.object_id,
            EMPTY_TRACE_SERIAL,
            name_id,
        )
    }

    fn heap_thread_trace(
        &mut self,
        serial: u32,
        thread: u32,
        frames: &[HeapFrame],
    ) -> io::Result<()> {
        self.heap_traces.push((serial, thread, frames.to_vec()));
        Ok(())
    }

    fn object_sites(
        &mut self,
        (flags, interval, stride): (u32, u32, u32),
        groups: &[(&crate::output::ObjectSiteGroup, &[u64])],
    ) -> io::Result<()> {
        let mut records: Vec<(u32, u32, &[u64])> = Vec::with_capacity(groups.len());
        for (group, ids) in groups {
            match group {
                Some((class, trace)) => {
                    self.class(class)?;
                    self.ensure_trace(trace)?;
                    records.push((class.serial, trace.serial, ids));
                }
                None => records.push((0, 0, ids)),
            }
        }
        let time = self.time();
        self.out
            .object_sites(time, flags, interval, stride, &records)
    }

    fn heap_dump_end(&mut self) -> io::Result<()> {
        self.out.end_heap_dump()?;
        self.dump_open = false;
        for start in std::mem::take(&mut self.heap_threads) {
            self.thread_start(&start)?;
        }
        for (serial, thread, frames) in std::mem::take(&mut self.heap_traces) {
            let time = self.time();
            for frame in &frames {
                self.out.stack_frame(
                    time,
                    frame.id,
                    frame.method.0,
                    frame.signature.0,
                    frame.source.0,
                    frame.class.serial,
                    frame.line,
                )?;
            }
            let ids: Vec<u64> = frames.iter().map(|f| f.id).collect();
            self.out.stack_trace(time, serial, thread, &ids)?;
        }
        let timed = std::mem::take(&mut self.heap_timed);
        self.timed_samples(&timed)?;
        self.out.flush()
    }

    fn error_note(&mut self, note: &str) -> io::Result<()> {
        self.string(&format!("{}{note}", crate::error::PREFIX))
            .map(|_| ())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}
