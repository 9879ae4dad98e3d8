//! Owns `Writer`, which writes HPROF records and splits heap dumps into segments.

use crate::heap::{ClassDump, HeapRecord};
use crate::record::{AllocSite, Record};
use crate::tag::{SubTag, Tag};
use crate::types::{BasicType, Header, IdSize, Value, Version};
use std::io::{self, Write};

/// The default largest HEAP DUMP SEGMENT body the writer produces.
pub const DEFAULT_SEGMENT_LIMIT: usize = 64 << 20;

/// Appends `id` as an identifier of `id_size`; a 4-byte identifier that does not fit is an error.
#[inline]
pub(crate) fn push_id(out: &mut Vec<u8>, id: u64, id_size: IdSize) -> io::Result<()> {
    match id_size {
        IdSize::Eight => out.extend_from_slice(&id.to_be_bytes()),
        IdSize::Four => {
            let small = u32::try_from(id).map_err(|_| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!("identifier {id:#x} does not fit in 4 bytes"),
                )
            })?;
            out.extend_from_slice(&small.to_be_bytes());
        }
    }
    Ok(())
}

fn too_long(what: &str, len: usize) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} of {len} bytes does not fit in an HPROF record"),
    )
}

fn count_u32(what: &str, n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| too_long(what, n))
}

fn count_u16(what: &str, n: usize) -> io::Result<u16> {
    u16::try_from(n).map_err(|_| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{what}: {n} entries do not fit in a u16 count"),
        )
    })
}

/// A heap dump being written.
#[derive(Debug)]
struct OpenDump {
    time_us: u32,
    buf: Vec<u8>,
}

/// Writes an HPROF file: the header, then records, with heap dumps split into
/// HEAP DUMP SEGMENTs (1.0.2) or written as one HEAP DUMP (1.0.1).
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    id_size: IdSize,
    version: Version,
    segment_limit: usize,
    dump: Option<OpenDump>,
    scratch: Vec<u8>,
}

impl<W: Write> Writer<W> {
    /// Writes `header` to `out` and returns a writer for the records.
    pub fn new(mut out: W, header: Header) -> io::Result<Writer<W>> {
        header.write_to(&mut out)?;
        Ok(Writer {
            out,
            id_size: header.id_size,
            version: header.version,
            segment_limit: DEFAULT_SEGMENT_LIMIT,
            dump: None,
            scratch: Vec::new(),
        })
    }

    /// Sets the largest segment body for 1.0.2 heap dumps (clamped to 1 KiB ..= 2 GiB).
    pub fn set_segment_limit(&mut self, bytes: usize) {
        self.segment_limit = bytes.clamp(1 << 10, 1 << 31);
    }

    /// The identifier size being written.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }

    /// The underlying writer.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    fn emit(&mut self, tag: Tag, time_us: u32) -> io::Result<()> {
        let len = count_u32(tag.name(), self.scratch.len())?;
        let mut head = [0u8; 9];
        head[0] = tag as u8;
        head[1..5].copy_from_slice(&time_us.to_be_bytes());
        head[5..9].copy_from_slice(&len.to_be_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(&self.scratch)
    }

    fn ensure_no_dump(&self, what: &str) -> io::Result<()> {
        if self.dump.is_some() {
            return Err(io::Error::other(format!(
                "cannot write {what} while a heap dump is open"
            )));
        }
        Ok(())
    }

    /// Writes any record as it is; a record read from a file is written back byte for byte.
    pub fn write_record(&mut self, time_us: u32, record: &Record<'_>) -> io::Result<()> {
        let tag = record.tag();
        self.ensure_no_dump(tag.name())?;
        let id = self.id_size;
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        let result = encode_record(record, id, &mut b);
        self.scratch = b;
        result?;
        self.emit(tag, time_us)
    }

    fn write_body(
        &mut self,
        tag: Tag,
        time_us: u32,
        fill: impl FnOnce(&mut Vec<u8>, IdSize) -> io::Result<()>,
    ) -> io::Result<()> {
        self.ensure_no_dump(tag.name())?;
        let id = self.id_size;
        let mut b = std::mem::take(&mut self.scratch);
        b.clear();
        let result = fill(&mut b, id);
        self.scratch = b;
        result?;
        self.emit(tag, time_us)
    }

    /// Writes a STRING record.
    pub fn utf8(&mut self, time_us: u32, id: u64, text: &[u8]) -> io::Result<()> {
        self.write_record(time_us, &Record::Utf8 { id, text })
    }

    /// Writes a LOAD CLASS record.
    pub fn load_class(
        &mut self,
        time_us: u32,
        class_serial: u32,
        class_id: u64,
        stack_trace_serial: u32,
        name_id: u64,
    ) -> io::Result<()> {
        self.write_record(
            time_us,
            &Record::LoadClass {
                class_serial,
                class_id,
                stack_trace_serial,
                name_id,
            },
        )
    }

    /// Writes an UNLOAD CLASS record.
    pub fn unload_class(&mut self, time_us: u32, class_serial: u32) -> io::Result<()> {
        self.write_record(time_us, &Record::UnloadClass { class_serial })
    }

    /// Writes a STACK FRAME record.
    #[allow(clippy::too_many_arguments)]
    pub fn stack_frame(
        &mut self,
        time_us: u32,
        frame_id: u64,
        method_name_id: u64,
        signature_id: u64,
        source_file_id: u64,
        class_serial: u32,
        line: i32,
    ) -> io::Result<()> {
        self.write_record(
            time_us,
            &Record::StackFrame {
                frame_id,
                method_name_id,
                signature_id,
                source_file_id,
                class_serial,
                line,
            },
        )
    }

    /// Writes a STACK TRACE record with `frames` innermost first.
    pub fn stack_trace(
        &mut self,
        time_us: u32,
        serial: u32,
        thread_serial: u32,
        frames: &[u64],
    ) -> io::Result<()> {
        self.write_body(Tag::StackTrace, time_us, |b, id| {
            b.extend_from_slice(&serial.to_be_bytes());
            b.extend_from_slice(&thread_serial.to_be_bytes());
            b.extend_from_slice(&count_u32("STACK TRACE", frames.len())?.to_be_bytes());
            frames.iter().try_for_each(|&f| push_id(b, f, id))
        })
    }

    /// Writes an ALLOC SITES record.
    #[allow(clippy::too_many_arguments)]
    pub fn alloc_sites(
        &mut self,
        time_us: u32,
        flags: u16,
        cutoff: f32,
        total_live_bytes: u32,
        total_live_instances: u32,
        total_bytes_allocated: u64,
        total_instances_allocated: u64,
        sites: &[AllocSite],
    ) -> io::Result<()> {
        self.write_body(Tag::AllocSites, time_us, |b, _| {
            b.extend_from_slice(&flags.to_be_bytes());
            b.extend_from_slice(&cutoff.to_bits().to_be_bytes());
            b.extend_from_slice(&total_live_bytes.to_be_bytes());
            b.extend_from_slice(&total_live_instances.to_be_bytes());
            b.extend_from_slice(&total_bytes_allocated.to_be_bytes());
            b.extend_from_slice(&total_instances_allocated.to_be_bytes());
            b.extend_from_slice(&count_u32("ALLOC SITES", sites.len())?.to_be_bytes());
            for s in sites {
                b.push(s.array_type);
                for v in [
                    s.class_serial,
                    s.stack_trace_serial,
                    s.live_bytes,
                    s.live_instances,
                    s.bytes_allocated,
                    s.instances_allocated,
                ] {
                    b.extend_from_slice(&v.to_be_bytes());
                }
            }
            Ok(())
        })
    }

    /// Writes a HEAP SUMMARY record.
    pub fn heap_summary(
        &mut self,
        time_us: u32,
        live_bytes: u32,
        live_instances: u32,
        bytes_allocated: u64,
        instances_allocated: u64,
    ) -> io::Result<()> {
        self.write_record(
            time_us,
            &Record::HeapSummary {
                live_bytes,
                live_instances,
                bytes_allocated,
                instances_allocated,
            },
        )
    }

    /// Writes a START THREAD record.
    #[allow(clippy::too_many_arguments)]
    pub fn start_thread(
        &mut self,
        time_us: u32,
        thread_serial: u32,
        thread_object_id: u64,
        stack_trace_serial: u32,
        name_id: u64,
        group_name_id: u64,
        parent_group_name_id: u64,
    ) -> io::Result<()> {
        self.write_record(
            time_us,
            &Record::StartThread {
                thread_serial,
                thread_object_id,
                stack_trace_serial,
                name_id,
                group_name_id,
                parent_group_name_id,
            },
        )
    }

    /// Writes an END THREAD record.
    pub fn end_thread(&mut self, time_us: u32, thread_serial: u32) -> io::Result<()> {
        self.write_record(time_us, &Record::EndThread { thread_serial })
    }

    /// Writes a CPU SAMPLES record from `(count, trace serial)` pairs.
    pub fn cpu_samples(
        &mut self,
        time_us: u32,
        total: u32,
        traces: &[(u32, u32)],
    ) -> io::Result<()> {
        self.write_body(Tag::CpuSamples, time_us, |b, _| {
            b.extend_from_slice(&total.to_be_bytes());
            b.extend_from_slice(&count_u32("CPU SAMPLES", traces.len())?.to_be_bytes());
            for &(count, trace) in traces {
                b.extend_from_slice(&count.to_be_bytes());
                b.extend_from_slice(&trace.to_be_bytes());
            }
            Ok(())
        })
    }

    /// Writes a TIMED SAMPLES record (hprof-rs's extension).
    pub fn timed_samples(
        &mut self,
        time_us: u32,
        samples: &[crate::TimedSample],
    ) -> io::Result<()> {
        self.write_body(Tag::TimedSamples, time_us, |b, _| {
            b.extend_from_slice(&count_u32("TIMED SAMPLES", samples.len())?.to_be_bytes());
            for s in samples {
                b.extend_from_slice(&s.time_ns.to_be_bytes());
                b.extend_from_slice(&s.trace_serial.to_be_bytes());
                b.extend_from_slice(&s.thread_serial.to_be_bytes());
                b.extend_from_slice(&s.weight.to_be_bytes());
                b.push(s.flags);
            }
            Ok(())
        })
    }

    /// Writes OBJECT SITES records (hprof-rs's extension, see
    /// [`ObjectSites`](crate::ObjectSites)) for `groups` of `(class serial, trace serial,
    /// object ids)`, split into records of at most 64 MiB.
    pub fn object_sites(
        &mut self,
        time_us: u32,
        flags: u32,
        interval: u32,
        stride: u32,
        groups: &[(u32, u32, &[u64])],
    ) -> io::Result<()> {
        const LIMIT: usize = 64 << 20;
        let id = self.id_size.bytes();
        let mut pending: &[(u32, u32, &[u64])] = groups;
        // (group index, first object) where the next record starts.
        let mut first = 0usize;
        while !pending.is_empty() {
            let mut size = 12;
            let mut body: Vec<(u32, u32, &[u64])> = Vec::new();
            while let Some(&(class, trace, objects)) = pending.first() {
                let objects = &objects[first..];
                let room = (LIMIT.saturating_sub(size + 12) / id).max(1);
                let take = objects.len().min(room);
                body.push((class, trace, &objects[..take]));
                size += 12 + take * id;
                if take < objects.len() {
                    first += take;
                    break;
                }
                first = 0;
                pending = &pending[1..];
                if size >= LIMIT {
                    break;
                }
            }
            self.write_body(Tag::ObjectSites, time_us, |b, id| {
                for v in [flags, interval, stride] {
                    b.extend_from_slice(&v.to_be_bytes());
                }
                for (class, trace, objects) in body {
                    b.extend_from_slice(&class.to_be_bytes());
                    b.extend_from_slice(&trace.to_be_bytes());
                    b.extend_from_slice(&count_u32("OBJECT SITES", objects.len())?.to_be_bytes());
                    objects.iter().try_for_each(|&o| push_id(b, o, id))?;
                }
                Ok(())
            })?;
        }
        Ok(())
    }

    /// Writes a CONTROL SETTINGS record.
    pub fn control_settings(
        &mut self,
        time_us: u32,
        flags: u32,
        stack_trace_depth: u16,
    ) -> io::Result<()> {
        self.write_record(
            time_us,
            &Record::ControlSettings {
                flags,
                stack_trace_depth,
            },
        )
    }

    /// Starts a heap dump; sub-records follow until [`Writer::end_heap_dump`].
    pub fn begin_heap_dump(&mut self, time_us: u32) -> io::Result<()> {
        self.ensure_no_dump("a second heap dump")?;
        self.dump = Some(OpenDump {
            time_us,
            buf: Vec::new(),
        });
        Ok(())
    }

    fn heap_body(
        &mut self,
        what: SubTag,
        fill: impl FnOnce(&mut Vec<u8>, IdSize) -> io::Result<()>,
    ) -> io::Result<()> {
        let id = self.id_size;
        let mut rec = std::mem::take(&mut self.scratch);
        rec.clear();
        rec.push(what as u8);
        let result = fill(&mut rec, id).and_then(|()| self.push_sub_record(&rec));
        self.scratch = rec;
        result
    }

    fn push_sub_record(&mut self, rec: &[u8]) -> io::Result<()> {
        let limit = self.segment_limit;
        let segmented = self.version == Version::V1_0_2;
        let Some(dump) = self.dump.as_mut() else {
            return Err(io::Error::other(
                "heap dump sub-record written outside a heap dump",
            ));
        };
        if segmented && !dump.buf.is_empty() && dump.buf.len() + rec.len() > limit {
            let time = dump.time_us;
            let buf = std::mem::take(&mut dump.buf);
            let result = self.write_segment(time, &buf);
            let dump = self
                .dump
                .as_mut()
                .ok_or_else(|| io::Error::other("heap dump closed"))?;
            dump.buf = buf;
            dump.buf.clear();
            result?;
            dump.buf.extend_from_slice(rec);
            return Ok(());
        }
        if !segmented && dump.buf.len() + rec.len() > u32::MAX as usize {
            return Err(too_long("a 1.0.1 HEAP DUMP", dump.buf.len() + rec.len()));
        }
        dump.buf.extend_from_slice(rec);
        Ok(())
    }

    fn write_segment(&mut self, time_us: u32, body: &[u8]) -> io::Result<()> {
        let tag = match self.version {
            Version::V1_0_1 => Tag::HeapDump,
            Version::V1_0_2 => Tag::HeapDumpSegment,
        };
        let len = count_u32(tag.name(), body.len())?;
        let mut head = [0u8; 9];
        head[0] = tag as u8;
        head[1..5].copy_from_slice(&time_us.to_be_bytes());
        head[5..9].copy_from_slice(&len.to_be_bytes());
        self.out.write_all(&head)?;
        self.out.write_all(body)
    }

    /// Adds `body`, whole sub-records already encoded with this writer's identifier size, to
    /// the open heap dump as one HEAP DUMP SEGMENT of its own (after the sub-records buffered
    /// so far). In a 1.0.1 file it joins the single HEAP DUMP.
    pub fn heap_segment(&mut self, body: &[u8]) -> io::Result<()> {
        let Some(dump) = self.dump.as_mut() else {
            return Err(io::Error::other(
                "heap dump segment written outside a heap dump",
            ));
        };
        if self.version == Version::V1_0_1 {
            if dump.buf.len() + body.len() > u32::MAX as usize {
                return Err(too_long("a 1.0.1 HEAP DUMP", dump.buf.len() + body.len()));
            }
            dump.buf.extend_from_slice(body);
            return Ok(());
        }
        let time = dump.time_us;
        if !dump.buf.is_empty() {
            let buf = std::mem::take(&mut dump.buf);
            let result = self.write_segment(time, &buf);
            if let Some(dump) = self.dump.as_mut() {
                dump.buf = buf;
                dump.buf.clear();
            }
            result?;
        }
        self.write_segment(time, body)
    }

    /// Adds any sub-record to the open heap dump.
    pub fn heap_record(&mut self, record: &HeapRecord<'_>) -> io::Result<()> {
        self.heap_body(record.sub_tag(), |b, id| encode_heap_body(record, id, b))
    }

    /// Adds an INSTANCE DUMP with already-encoded field values.
    pub fn instance_dump(
        &mut self,
        object_id: u64,
        stack_trace_serial: u32,
        class_id: u64,
        values: &[u8],
    ) -> io::Result<()> {
        self.heap_record(&HeapRecord::InstanceDump {
            object_id,
            stack_trace_serial,
            class_id,
            values,
        })
    }

    /// Adds a CLASS DUMP.
    #[allow(clippy::too_many_arguments)]
    pub fn class_dump(
        &mut self,
        class_id: u64,
        stack_trace_serial: u32,
        super_class_id: u64,
        class_loader_id: u64,
        signers_id: u64,
        protection_domain_id: u64,
        instance_size: u32,
        constant_pool: &[(u16, Value)],
        static_fields: &[(u64, Value)],
        instance_fields: &[(u64, BasicType)],
    ) -> io::Result<()> {
        self.heap_body(SubTag::ClassDump, |b, id| {
            push_id(b, class_id, id)?;
            b.extend_from_slice(&stack_trace_serial.to_be_bytes());
            for v in [
                super_class_id,
                class_loader_id,
                signers_id,
                protection_domain_id,
                0,
                0,
            ] {
                push_id(b, v, id)?;
            }
            b.extend_from_slice(&instance_size.to_be_bytes());
            b.extend_from_slice(&count_u16("constant pool", constant_pool.len())?.to_be_bytes());
            for (index, value) in constant_pool {
                b.extend_from_slice(&index.to_be_bytes());
                b.push(value.basic_type() as u8);
                value.encode(id, b)?;
            }
            b.extend_from_slice(&count_u16("static fields", static_fields.len())?.to_be_bytes());
            for (name, value) in static_fields {
                push_id(b, *name, id)?;
                b.push(value.basic_type() as u8);
                value.encode(id, b)?;
            }
            b.extend_from_slice(
                &count_u16("instance fields", instance_fields.len())?.to_be_bytes(),
            );
            for (name, ty) in instance_fields {
                push_id(b, *name, id)?;
                b.push(*ty as u8);
            }
            Ok(())
        })
    }

    /// Adds an OBJECT ARRAY DUMP.
    pub fn object_array(
        &mut self,
        array_id: u64,
        stack_trace_serial: u32,
        array_class_id: u64,
        elements: &[u64],
    ) -> io::Result<()> {
        self.heap_body(SubTag::ObjectArrayDump, |b, id| {
            push_id(b, array_id, id)?;
            b.extend_from_slice(&stack_trace_serial.to_be_bytes());
            b.extend_from_slice(&count_u32("OBJECT ARRAY DUMP", elements.len())?.to_be_bytes());
            push_id(b, array_class_id, id)?;
            elements.iter().try_for_each(|&e| push_id(b, e, id))
        })
    }

    /// Adds a PRIMITIVE ARRAY DUMP; `data` holds `length` packed big-endian elements.
    pub fn primitive_array(
        &mut self,
        array_id: u64,
        stack_trace_serial: u32,
        element_type: BasicType,
        length: u32,
        data: &[u8],
    ) -> io::Result<()> {
        self.heap_record(&HeapRecord::PrimitiveArrayDump {
            array_id,
            stack_trace_serial,
            element_type,
            length,
            data,
        })
    }

    /// Adds a ROOT record of any kind (see [`HeapRecord`]).
    pub fn root(&mut self, root: &HeapRecord<'_>) -> io::Result<()> {
        if !root.sub_tag().is_root() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} is not a root", root.sub_tag().name()),
            ));
        }
        self.heap_record(root)
    }

    /// Ends the open heap dump: writes the last segment and HEAP DUMP END (1.0.2),
    /// or the single HEAP DUMP record (1.0.1).
    pub fn end_heap_dump(&mut self) -> io::Result<()> {
        let Some(dump) = self.dump.take() else {
            return Err(io::Error::other("no heap dump is open"));
        };
        match self.version {
            Version::V1_0_1 => self.write_segment(dump.time_us, &dump.buf),
            Version::V1_0_2 => {
                if !dump.buf.is_empty() {
                    self.write_segment(dump.time_us, &dump.buf)?;
                }
                self.scratch.clear();
                self.emit(Tag::HeapDumpEnd, dump.time_us)
            }
        }
    }

    /// Flushes the underlying writer.
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    /// Finishes the file and returns the underlying writer. Fails if a heap dump is open.
    pub fn finish(mut self) -> io::Result<W> {
        self.ensure_no_dump("the end of the file")?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Encodes the body of a top-level record.
fn encode_record(record: &Record<'_>, id: IdSize, b: &mut Vec<u8>) -> io::Result<()> {
    match *record {
        Record::Utf8 { id: sid, text } => {
            push_id(b, sid, id)?;
            b.extend_from_slice(text);
        }
        Record::LoadClass {
            class_serial,
            class_id,
            stack_trace_serial,
            name_id,
        } => {
            b.extend_from_slice(&class_serial.to_be_bytes());
            push_id(b, class_id, id)?;
            b.extend_from_slice(&stack_trace_serial.to_be_bytes());
            push_id(b, name_id, id)?;
        }
        Record::UnloadClass { class_serial } => b.extend_from_slice(&class_serial.to_be_bytes()),
        Record::StackFrame {
            frame_id,
            method_name_id,
            signature_id,
            source_file_id,
            class_serial,
            line,
        } => {
            for v in [frame_id, method_name_id, signature_id, source_file_id] {
                push_id(b, v, id)?;
            }
            b.extend_from_slice(&class_serial.to_be_bytes());
            b.extend_from_slice(&line.to_be_bytes());
        }
        Record::StackTrace {
            serial,
            thread_serial,
            frames,
        } => {
            b.extend_from_slice(&serial.to_be_bytes());
            b.extend_from_slice(&thread_serial.to_be_bytes());
            b.extend_from_slice(&count_u32("STACK TRACE", frames.len())?.to_be_bytes());
            frames.iter().try_for_each(|f| push_id(b, f, id))?;
        }
        Record::AllocSites(sites) => {
            b.extend_from_slice(&sites.flags.to_be_bytes());
            b.extend_from_slice(&sites.cutoff.to_bits().to_be_bytes());
            b.extend_from_slice(&sites.total_live_bytes.to_be_bytes());
            b.extend_from_slice(&sites.total_live_instances.to_be_bytes());
            b.extend_from_slice(&sites.total_bytes_allocated.to_be_bytes());
            b.extend_from_slice(&sites.total_instances_allocated.to_be_bytes());
            b.extend_from_slice(&count_u32("ALLOC SITES", sites.len())?.to_be_bytes());
            b.extend_from_slice(sites.site_bytes());
        }
        Record::HeapSummary {
            live_bytes,
            live_instances,
            bytes_allocated,
            instances_allocated,
        } => {
            b.extend_from_slice(&live_bytes.to_be_bytes());
            b.extend_from_slice(&live_instances.to_be_bytes());
            b.extend_from_slice(&bytes_allocated.to_be_bytes());
            b.extend_from_slice(&instances_allocated.to_be_bytes());
        }
        Record::StartThread {
            thread_serial,
            thread_object_id,
            stack_trace_serial,
            name_id,
            group_name_id,
            parent_group_name_id,
        } => {
            b.extend_from_slice(&thread_serial.to_be_bytes());
            push_id(b, thread_object_id, id)?;
            b.extend_from_slice(&stack_trace_serial.to_be_bytes());
            for v in [name_id, group_name_id, parent_group_name_id] {
                push_id(b, v, id)?;
            }
        }
        Record::EndThread { thread_serial } => b.extend_from_slice(&thread_serial.to_be_bytes()),
        Record::HeapDump(body) | Record::HeapDumpSegment(body) => b.extend_from_slice(body.data),
        Record::HeapDumpEnd => {}
        Record::CpuSamples { total, traces } => {
            b.extend_from_slice(&total.to_be_bytes());
            b.extend_from_slice(&count_u32("CPU SAMPLES", traces.len())?.to_be_bytes());
            b.extend_from_slice(traces.as_bytes());
        }
        Record::ControlSettings {
            flags,
            stack_trace_depth,
        } => {
            b.extend_from_slice(&flags.to_be_bytes());
            b.extend_from_slice(&stack_trace_depth.to_be_bytes());
        }
        Record::TimedSamples(samples) => {
            b.extend_from_slice(&count_u32("TIMED SAMPLES", samples.len())?.to_be_bytes());
            b.extend_from_slice(samples.as_bytes());
        }
        Record::ObjectSites(sites) => {
            for v in [sites.flags, sites.interval, sites.stride] {
                b.extend_from_slice(&v.to_be_bytes());
            }
            b.extend_from_slice(sites.group_bytes());
        }
    }
    Ok(())
}

/// Encodes a sub-record's body (after its tag byte).
fn encode_heap_body(record: &HeapRecord<'_>, id: IdSize, b: &mut Vec<u8>) -> io::Result<()> {
    let u4 = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_be_bytes());
    match *record {
        HeapRecord::RootUnknown { object_id }
        | HeapRecord::RootStickyClass { object_id }
        | HeapRecord::RootMonitorUsed { object_id } => push_id(b, object_id, id)?,
        HeapRecord::RootJniGlobal {
            object_id,
            jni_global_ref_id,
        } => {
            push_id(b, object_id, id)?;
            push_id(b, jni_global_ref_id, id)?;
        }
        HeapRecord::RootJniLocal {
            object_id,
            thread_serial,
            frame_number,
        }
        | HeapRecord::RootJavaFrame {
            object_id,
            thread_serial,
            frame_number,
        } => {
            push_id(b, object_id, id)?;
            u4(b, thread_serial);
            u4(b, frame_number);
        }
        HeapRecord::RootNativeStack {
            object_id,
            thread_serial,
        }
        | HeapRecord::RootThreadBlock {
            object_id,
            thread_serial,
        } => {
            push_id(b, object_id, id)?;
            u4(b, thread_serial);
        }
        HeapRecord::RootThreadObject {
            thread_object_id,
            thread_serial,
            stack_trace_serial,
        } => {
            push_id(b, thread_object_id, id)?;
            u4(b, thread_serial);
            u4(b, stack_trace_serial);
        }
        HeapRecord::ClassDump(ref class) => encode_class_dump(class, id, b)?,
        HeapRecord::InstanceDump {
            object_id,
            stack_trace_serial,
            class_id,
            values,
        } => {
            push_id(b, object_id, id)?;
            u4(b, stack_trace_serial);
            push_id(b, class_id, id)?;
            u4(b, count_u32("INSTANCE DUMP", values.len())?);
            b.extend_from_slice(values);
        }
        HeapRecord::ObjectArrayDump {
            array_id,
            stack_trace_serial,
            array_class_id,
            elements,
        } => {
            push_id(b, array_id, id)?;
            u4(b, stack_trace_serial);
            u4(b, count_u32("OBJECT ARRAY DUMP", elements.len())?);
            push_id(b, array_class_id, id)?;
            if elements.id_size() == id {
                b.extend_from_slice(elements.as_bytes());
            } else {
                elements.iter().try_for_each(|e| push_id(b, e, id))?;
            }
        }
        HeapRecord::PrimitiveArrayDump {
            array_id,
            stack_trace_serial,
            element_type,
            length,
            data,
        } => {
            let expected = (length as usize).checked_mul(element_type.size(id));
            if element_type == BasicType::Object || expected != Some(data.len()) {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    format!(
                        "PRIMITIVE ARRAY DUMP of {length} {} needs {expected:?} bytes, got {}",
                        element_type.java_name(),
                        data.len()
                    ),
                ));
            }
            push_id(b, array_id, id)?;
            u4(b, stack_trace_serial);
            u4(b, length);
            b.push(element_type as u8);
            b.extend_from_slice(data);
        }
    }
    Ok(())
}

fn encode_class_dump(c: &ClassDump<'_>, id: IdSize, b: &mut Vec<u8>) -> io::Result<()> {
    push_id(b, c.class_id, id)?;
    b.extend_from_slice(&c.stack_trace_serial.to_be_bytes());
    for v in [
        c.super_class_id,
        c.class_loader_id,
        c.signers_id,
        c.protection_domain_id,
        c.reserved1,
        c.reserved2,
    ] {
        push_id(b, v, id)?;
    }
    b.extend_from_slice(&c.instance_size.to_be_bytes());
    b.extend_from_slice(&count_u16("constant pool", c.constant_pool_len())?.to_be_bytes());
    for (index, value) in c.constant_pool() {
        b.extend_from_slice(&index.to_be_bytes());
        b.push(value.basic_type() as u8);
        value.encode(id, b)?;
    }
    b.extend_from_slice(&count_u16("static fields", c.static_fields_len())?.to_be_bytes());
    for (name, value) in c.static_fields() {
        push_id(b, name, id)?;
        b.push(value.basic_type() as u8);
        value.encode(id, b)?;
    }
    b.extend_from_slice(&count_u16("instance fields", c.instance_fields_len())?.to_be_bytes());
    for (name, ty) in c.instance_fields() {
        push_id(b, name, id)?;
        b.push(ty as u8);
    }
    Ok(())
}
