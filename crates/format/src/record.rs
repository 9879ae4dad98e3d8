//! Owns the top-level record types and how a record body is parsed.

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::heap::HeapRecords;
use crate::tag::Tag;
use crate::types::IdSize;

/// Where a record sits in the file and what its header says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecordHeader {
    /// File offset of the record's tag byte.
    pub offset: u64,
    /// The record's tag.
    pub tag: Tag,
    /// Microseconds since the header's timestamp.
    pub time_us: u32,
    /// Length of the body in bytes.
    pub length: u32,
}

/// The size of a record header: tag, time and length.
pub const RECORD_HEADER_LEN: usize = 9;

/// A list of identifiers borrowed from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdList<'a> {
    bytes: &'a [u8],
    id_size: IdSize,
}

impl<'a> IdList<'a> {
    /// A list over `bytes`, which hold whole identifiers of `id_size`.
    ///
    /// Returns `None` if the length is not a multiple of the identifier size.
    pub fn new(bytes: &'a [u8], id_size: IdSize) -> Option<IdList<'a>> {
        bytes
            .len()
            .is_multiple_of(id_size.bytes())
            .then_some(IdList { bytes, id_size })
    }

    /// A list over bytes the caller has already sized as whole identifiers.
    #[inline]
    pub(crate) fn whole(bytes: &'a [u8], id_size: IdSize) -> IdList<'a> {
        IdList { bytes, id_size }
    }

    /// The number of identifiers.
    #[inline]
    pub fn len(&self) -> usize {
        self.bytes.len() / self.id_size.bytes()
    }

    /// True if the list is empty.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The raw big-endian bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The identifier size.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }

    /// The identifier at `index`.
    pub fn get(&self, index: usize) -> Option<u64> {
        let n = self.id_size.bytes();
        let at = index.checked_mul(n)?;
        let b = self.bytes.get(at..at.checked_add(n)?)?;
        Some(decode_id(b))
    }

    /// Iterates over the identifiers.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + 'a {
        self.bytes.chunks_exact(self.id_size.bytes()).map(decode_id)
    }
}

#[inline]
fn decode_id(b: &[u8]) -> u64 {
    b.iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
}

/// One allocation site of an ALLOC SITES record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AllocSite {
    /// 0 for an instance, else the basic type code of the array's elements.
    pub array_type: u8,
    /// The class's serial number.
    pub class_serial: u32,
    /// The allocation stack trace's serial number.
    pub stack_trace_serial: u32,
    /// Bytes still alive.
    pub live_bytes: u32,
    /// Instances still alive.
    pub live_instances: u32,
    /// Bytes allocated.
    pub bytes_allocated: u32,
    /// Instances allocated.
    pub instances_allocated: u32,
}

/// The size of one site in an ALLOC SITES record.
const ALLOC_SITE_LEN: usize = 25;

/// An ALLOC SITES record.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AllocSites<'a> {
    /// Flags: 0x1 incremental, 0x2 sorted by allocation, 0x4 force GC.
    pub flags: u16,
    /// The cutoff ratio.
    pub cutoff: f32,
    /// Total live bytes.
    pub total_live_bytes: u32,
    /// Total live instances.
    pub total_live_instances: u32,
    /// Total bytes allocated.
    pub total_bytes_allocated: u64,
    /// Total instances allocated.
    pub total_instances_allocated: u64,
    sites: &'a [u8],
}

impl<'a> AllocSites<'a> {
    /// The number of sites.
    pub fn len(&self) -> usize {
        self.sites.len() / ALLOC_SITE_LEN
    }

    /// True if there are no sites.
    pub fn is_empty(&self) -> bool {
        self.sites.is_empty()
    }

    /// Iterates over the sites.
    pub fn sites(&self) -> impl ExactSizeIterator<Item = AllocSite> + 'a {
        self.sites.chunks_exact(ALLOC_SITE_LEN).map(|b| {
            let u4 = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            AllocSite {
                array_type: b[0],
                class_serial: u4(1),
                stack_trace_serial: u4(5),
                live_bytes: u4(9),
                live_instances: u4(13),
                bytes_allocated: u4(17),
                instances_allocated: u4(21),
            }
        })
    }
}

/// An OBJECT SITES record (hprof-rs's extension, tag 0x50): the allocation site of objects
/// of the heap dump that precedes it, as the agent knew them when the JVM wrote the dump.
///
/// Body: `u4 flags`, `u4 interval`, `u4 stride`, then groups to the end of the record, each
/// `u4 class serial`, `u4 stack trace serial`, `u4 count` and `count` object ids. A group
/// with class serial 0 and trace serial 0 holds objects that were in the heap when the agent
/// began counting (the JVM's start-up). A dump's groups may be spread over several records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectSites<'a> {
    /// Flags: [`ObjectSites::SAMPLED`].
    pub flags: u32,
    /// The mean sampling interval in bytes of the allocations the objects were picked from
    /// (0: every allocation was tracked).
    pub interval: u32,
    /// Each object stands for this many tracked allocations (1, unless the agent kept only
    /// every `stride`-th to bound its memory).
    pub stride: u32,
    groups: &'a [u8],
    id_size: IdSize,
}

/// One group of an OBJECT SITES record: objects allocated at one site.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObjectSiteGroup<'a> {
    /// The allocated class's serial (0: objects from before counting began).
    pub class_serial: u32,
    /// The allocation trace's serial (0: objects from before counting began).
    pub stack_trace_serial: u32,
    /// The objects' ids.
    pub objects: IdList<'a>,
}

impl<'a> ObjectSites<'a> {
    /// Flag: the objects are a sample of the allocations (every `interval` bytes on
    /// average), each standing for others; without it, every tracked object is listed.
    pub const SAMPLED: u32 = 0x1;

    /// Iterates over the groups (validated when the record was parsed).
    pub fn groups(&self) -> impl Iterator<Item = ObjectSiteGroup<'a>> + 'a {
        let id_size = self.id_size;
        let mut rest = self.groups;
        std::iter::from_fn(move || {
            let head = rest.get(..12)?;
            let u4 =
                |i: usize| u32::from_be_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
            let n = u4(8) as usize * id_size.bytes();
            let ids = rest.get(12..12 + n)?;
            let group = ObjectSiteGroup {
                class_serial: u4(0),
                stack_trace_serial: u4(4),
                objects: IdList::whole(ids, id_size),
            };
            rest = &rest[12 + n..];
            Some(group)
        })
    }

    /// The raw group bytes.
    pub fn group_bytes(&self) -> &'a [u8] {
        self.groups
    }
}

/// The sample counts of a CPU SAMPLES record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSampleList<'a> {
    bytes: &'a [u8],
}

impl<'a> CpuSampleList<'a> {
    /// The number of traces.
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }

    /// True if there are no traces.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// Iterates over `(sample count, stack trace serial)` pairs.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (u32, u32)> + 'a {
        self.bytes.chunks_exact(8).map(|b| {
            (
                u32::from_be_bytes([b[0], b[1], b[2], b[3]]),
                u32::from_be_bytes([b[4], b[5], b[6], b[7]]),
            )
        })
    }
}

/// The samples of a TIMED SAMPLES record, 21 bytes each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedSampleList<'a> {
    bytes: &'a [u8],
}

/// One sample of a TIMED SAMPLES record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimedSample {
    /// When it was taken: nanoseconds after the header's timestamp.
    pub time_ns: u64,
    /// Its stack trace's serial.
    pub trace_serial: u32,
    /// Its thread's serial (0: unknown).
    pub thread_serial: u32,
    /// The sampling intervals it stands for.
    pub weight: u32,
    /// Flags: 0x1 a wall-clock sample (else CPU time).
    pub flags: u8,
}

/// The bytes of one TIMED SAMPLES entry.
pub const TIMED_SAMPLE_LEN: usize = 21;

impl<'a> TimedSampleList<'a> {
    /// The number of samples.
    pub fn len(&self) -> usize {
        self.bytes.len() / TIMED_SAMPLE_LEN
    }

    /// True if there are none.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The encoded samples.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Iterates over the samples.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = TimedSample> + 'a {
        self.bytes.chunks_exact(TIMED_SAMPLE_LEN).map(|b| {
            let u4 = |i: usize| u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            let mut t = [0; 8];
            t.copy_from_slice(&b[..8]);
            TimedSample {
                time_ns: u64::from_be_bytes(t),
                trace_serial: u4(8),
                thread_serial: u4(12),
                weight: u4(16),
                flags: b[20],
            }
        })
    }
}

/// The body of a HEAP DUMP or HEAP DUMP SEGMENT record: a run of sub-records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeapDumpBody<'a> {
    /// The sub-records' bytes.
    pub data: &'a [u8],
    /// File offset of `data[0]`.
    pub offset: u64,
}

impl<'a> HeapDumpBody<'a> {
    /// Iterates over the sub-records.
    pub fn records(&self, id_size: IdSize) -> HeapRecords<'a> {
        HeapRecords::new(self.data, self.offset, id_size)
    }
}

/// A top-level record. Bodies are borrowed from the file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Record<'a> {
    /// STRING: a UTF-8 string (not NUL-terminated) and its identifier.
    Utf8 {
        /// The string's identifier.
        id: u64,
        /// The string's bytes (modified UTF-8 as the JVM writes it).
        text: &'a [u8],
    },
    /// LOAD CLASS.
    LoadClass {
        /// The class's serial number.
        class_serial: u32,
        /// The class object's identifier.
        class_id: u64,
        /// Stack trace serial number.
        stack_trace_serial: u32,
        /// The identifier of the class name's STRING.
        name_id: u64,
    },
    /// UNLOAD CLASS.
    UnloadClass {
        /// The class's serial number.
        class_serial: u32,
    },
    /// STACK FRAME.
    StackFrame {
        /// The frame's identifier.
        frame_id: u64,
        /// The method name's STRING identifier.
        method_name_id: u64,
        /// The method signature's STRING identifier.
        signature_id: u64,
        /// The source file name's STRING identifier.
        source_file_id: u64,
        /// The class's serial number.
        class_serial: u32,
        /// Line number: > 0 a line, 0 none, -1 unknown, -2 compiled, -3 native.
        line: i32,
    },
    /// STACK TRACE.
    StackTrace {
        /// The trace's serial number.
        serial: u32,
        /// The thread's serial number.
        thread_serial: u32,
        /// The frames' identifiers, innermost first.
        frames: IdList<'a>,
    },
    /// ALLOC SITES.
    AllocSites(AllocSites<'a>),
    /// HEAP SUMMARY.
    HeapSummary {
        /// Total live bytes.
        live_bytes: u32,
        /// Total live instances.
        live_instances: u32,
        /// Total bytes allocated.
        bytes_allocated: u64,
        /// Total instances allocated.
        instances_allocated: u64,
    },
    /// START THREAD.
    StartThread {
        /// The thread's serial number.
        thread_serial: u32,
        /// The thread object's identifier.
        thread_object_id: u64,
        /// Stack trace serial number.
        stack_trace_serial: u32,
        /// The thread name's STRING identifier.
        name_id: u64,
        /// The thread group name's STRING identifier.
        group_name_id: u64,
        /// The parent thread group name's STRING identifier.
        parent_group_name_id: u64,
    },
    /// END THREAD.
    EndThread {
        /// The thread's serial number.
        thread_serial: u32,
    },
    /// HEAP DUMP (1.0.1): a whole heap dump in one record.
    HeapDump(HeapDumpBody<'a>),
    /// HEAP DUMP SEGMENT (1.0.2): part of a heap dump.
    HeapDumpSegment(HeapDumpBody<'a>),
    /// HEAP DUMP END: ends a segmented heap dump.
    HeapDumpEnd,
    /// CPU SAMPLES.
    CpuSamples {
        /// Total number of samples.
        total: u32,
        /// `(count, trace serial)` pairs.
        traces: CpuSampleList<'a>,
    },
    /// TIMED SAMPLES (hprof-rs's extension): a count, then the samples.
    TimedSamples(TimedSampleList<'a>),
    /// CONTROL SETTINGS.
    ControlSettings {
        /// Flags: 0x1 allocation traces on, 0x2 CPU sampling on.
        flags: u32,
        /// The stack trace depth.
        stack_trace_depth: u16,
    },
    /// OBJECT SITES (hprof-rs's extension).
    ObjectSites(ObjectSites<'a>),
}

impl Record<'_> {
    /// The record's tag.
    pub fn tag(&self) -> Tag {
        match self {
            Record::Utf8 { .. } => Tag::Utf8,
            Record::LoadClass { .. } => Tag::LoadClass,
            Record::UnloadClass { .. } => Tag::UnloadClass,
            Record::StackFrame { .. } => Tag::StackFrame,
            Record::StackTrace { .. } => Tag::StackTrace,
            Record::AllocSites(_) => Tag::AllocSites,
            Record::HeapSummary { .. } => Tag::HeapSummary,
            Record::StartThread { .. } => Tag::StartThread,
            Record::EndThread { .. } => Tag::EndThread,
            Record::HeapDump(_) => Tag::HeapDump,
            Record::HeapDumpSegment(_) => Tag::HeapDumpSegment,
            Record::HeapDumpEnd => Tag::HeapDumpEnd,
            Record::CpuSamples { .. } => Tag::CpuSamples,
            Record::ControlSettings { .. } => Tag::ControlSettings,
            Record::TimedSamples(_) => Tag::TimedSamples,
            Record::ObjectSites(_) => Tag::ObjectSites,
        }
    }
}

impl RecordHeader {
    /// Parses the header of the record at the front of `data`, found at file offset `offset`.
    pub fn parse(data: &[u8], offset: u64) -> Result<RecordHeader> {
        parse_record_header(data, offset)
    }
}

impl<'a> Record<'a> {
    /// Parses the body of the record whose header is `header`; `body` is exactly its bytes.
    /// A heap dump's body is only located, its sub-records are read by
    /// [`HeapRecords::over`](crate::HeapRecords::over).
    pub fn parse(header: &RecordHeader, body: &'a [u8], id_size: IdSize) -> Result<Record<'a>> {
        parse_record_body(header, body, id_size)
    }
}

/// Parses a record header at the front of `data` (found at file offset `offset`).
#[inline]
pub(crate) fn parse_record_header(data: &[u8], offset: u64) -> Result<RecordHeader> {
    let mut c = Cursor::new(data, offset, "record header");
    let code = c.u1()?;
    let tag = Tag::from_u8(code).ok_or_else(|| Error::new(offset, ErrorKind::UnknownTag(code)))?;
    let time_us = c.u4()?;
    let length = c.u4()?;
    Ok(RecordHeader {
        offset,
        tag,
        time_us,
        length,
    })
}

/// Parses the body of a record whose header is `header`; `body` is exactly its bytes.
pub(crate) fn parse_record_body<'a>(
    header: &RecordHeader,
    body: &'a [u8],
    id_size: IdSize,
) -> Result<Record<'a>> {
    let start = header.offset + RECORD_HEADER_LEN as u64;
    let declared = u64::from(header.length);
    let what = header.tag.name();
    let mut c = Cursor::new(body, start, what);
    let id = id_size;
    let record = match header.tag {
        Tag::Utf8 => {
            let sid = c.id(id)?;
            let text = c.rest();
            c.bytes(text.len())?;
            Record::Utf8 { id: sid, text }
        }
        Tag::LoadClass => Record::LoadClass {
            class_serial: c.u4()?,
            class_id: c.id(id)?,
            stack_trace_serial: c.u4()?,
            name_id: c.id(id)?,
        },
        Tag::UnloadClass => Record::UnloadClass {
            class_serial: c.u4()?,
        },
        Tag::StackFrame => Record::StackFrame {
            frame_id: c.id(id)?,
            method_name_id: c.id(id)?,
            signature_id: c.id(id)?,
            source_file_id: c.id(id)?,
            class_serial: c.u4()?,
            line: c.u4()? as i32,
        },
        Tag::StackTrace => {
            let serial = c.u4()?;
            let thread_serial = c.u4()?;
            let n = c.u4()?;
            let bytes = c.array(n.into(), id.bytes())?;
            Record::StackTrace {
                serial,
                thread_serial,
                frames: IdList { bytes, id_size: id },
            }
        }
        Tag::AllocSites => {
            let flags = c.u2()?;
            let cutoff = f32::from_bits(c.u4()?);
            let total_live_bytes = c.u4()?;
            let total_live_instances = c.u4()?;
            let total_bytes_allocated = c.u8()?;
            let total_instances_allocated = c.u8()?;
            let n = c.u4()?;
            let sites = c.array(n.into(), ALLOC_SITE_LEN)?;
            Record::AllocSites(AllocSites {
                flags,
                cutoff,
                total_live_bytes,
                total_live_instances,
                total_bytes_allocated,
                total_instances_allocated,
                sites,
            })
        }
        Tag::HeapSummary => Record::HeapSummary {
            live_bytes: c.u4()?,
            live_instances: c.u4()?,
            bytes_allocated: c.u8()?,
            instances_allocated: c.u8()?,
        },
        Tag::StartThread => Record::StartThread {
            thread_serial: c.u4()?,
            thread_object_id: c.id(id)?,
            stack_trace_serial: c.u4()?,
            name_id: c.id(id)?,
            group_name_id: c.id(id)?,
            parent_group_name_id: c.id(id)?,
        },
        Tag::EndThread => Record::EndThread {
            thread_serial: c.u4()?,
        },
        Tag::HeapDump | Tag::HeapDumpSegment => {
            let data = c.rest();
            c.bytes(data.len())?;
            let dump = HeapDumpBody {
                data,
                offset: start,
            };
            if header.tag == Tag::HeapDump {
                Record::HeapDump(dump)
            } else {
                Record::HeapDumpSegment(dump)
            }
        }
        Tag::HeapDumpEnd => Record::HeapDumpEnd,
        Tag::CpuSamples => {
            let total = c.u4()?;
            let n = c.u4()?;
            let bytes = c.array(n.into(), 8)?;
            Record::CpuSamples {
                total,
                traces: CpuSampleList { bytes },
            }
        }
        Tag::ControlSettings => Record::ControlSettings {
            flags: c.u4()?,
            stack_trace_depth: c.u2()?,
        },
        Tag::TimedSamples => {
            let n = c.u4()?;
            let bytes = c.array(n.into(), TIMED_SAMPLE_LEN)?;
            Record::TimedSamples(TimedSampleList { bytes })
        }
        Tag::ObjectSites => {
            let flags = c.u4()?;
            let interval = c.u4()?;
            let stride = c.u4()?;
            let groups = c.rest();
            while !c.is_empty() {
                c.u4()?;
                c.u4()?;
                let n = c.u4()?;
                c.array(n.into(), id.bytes())?;
            }
            Record::ObjectSites(ObjectSites {
                flags,
                interval,
                stride,
                groups,
                id_size: id,
            })
        }
    };
    c.finish(start, declared)?;
    Ok(record)
}

/// Builds an [`AllocSites`] view over encoded site bytes (for the writer's tests and callers
/// that hold raw sites).
impl<'a> AllocSites<'a> {
    /// The raw site bytes, 25 per site.
    pub fn site_bytes(&self) -> &'a [u8] {
        self.sites
    }
}

impl<'a> CpuSampleList<'a> {
    /// The raw bytes, 8 per trace.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}
