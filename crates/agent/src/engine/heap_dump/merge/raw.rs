//! The binary format's way of merging: the JVM's file read record by record, its heap dump
//! segments copied whole and rewritten in place (objects given the agent's empty trace, names
//! renumbered, roots that name threads and pinned JNI globals taken out); segments too large
//! to hold are read record by record.

use std::io::{self, Read};

use hprof_format::{BasicType, Event, HeapRecord, IdSize, Record, StreamReader};
use rustc_hash::FxHashMap as HashMap;

use crate::engine::heap_dump::merge::{Held, Merge, MergeError};
use crate::trace_store::EMPTY_TRACE_SERIAL;

/// Rewrites, in place, the name ids of a CLASS DUMP (`record`, from its tag byte) to the
/// output's; `None` if the record is malformed.
fn rename_class_dump(record: &mut [u8], strings: &HashMap<u64, (u64, Box<str>)>) -> Option<()> {
    let u2 = |b: &[u8], at: usize| -> Option<usize> {
        Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]) as usize)
    };
    let rename = |b: &mut [u8], at: usize| -> Option<()> {
        let slot = b.get_mut(at..at + 8)?;
        let mut id = [0u8; 8];
        id.copy_from_slice(slot);
        let our = strings.get(&u64::from_be_bytes(id)).map_or(0, |s| s.0);
        slot.copy_from_slice(&our.to_be_bytes());
        Some(())
    };
    let size = |code: u8| Some(BasicType::from_u8(code)?.size(IdSize::Eight));
    // tag, id, serial, six ids, instance size
    let mut at = 1 + 8 + 4 + 6 * 8 + 4;
    let constants = u2(record, at)?;
    at += 2;
    for _ in 0..constants {
        at += 3 + size(*record.get(at + 2)?)?;
    }
    let statics = u2(record, at)?;
    at += 2;
    for _ in 0..statics {
        rename(record, at)?;
        at += 9 + size(*record.get(at + 8)?)?;
    }
    let fields = u2(record, at)?;
    at += 2;
    for _ in 0..fields {
        rename(record, at)?;
        at += 9;
    }
    Some(())
}

/// Segments of the JVM's file up to this size are rewritten whole in memory (HotSpot 17+
/// writes segments of at most 1 MB, but for a single larger array); larger ones (JDK 11
/// writes the whole heap in segments of up to 2 GB) are read record by record.
const RAW_SEGMENT_LIMIT: u32 = 16 << 20;

impl Merge<'_> {
    /// One segment body of the JVM's, rewritten in place and written whole: objects get the
    /// agent's empty trace, roots that name threads are taken out (held back). Sub-records
    /// are stepped over by their headers alone; CLASS DUMPs, few, are parsed.
    fn raw_segment(&mut self, body: &mut Vec<u8>, offset: u64) -> Result<(), MergeError> {
        let bad = |at: usize, what: &str| {
            MergeError::Input(format!("{what} at offset {}", offset + at as u64))
        };
        let u4 = |b: &[u8], at: usize| u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
        let u8_ = |b: &[u8], at: usize| {
            let mut x = [0u8; 8];
            x.copy_from_slice(&b[at..at + 8]);
            u64::from_be_bytes(x)
        };
        let empty = EMPTY_TRACE_SERIAL.to_be_bytes();
        // (start, end) of the sub-records taken out.
        let mut cut: Vec<(usize, usize)> = Vec::new();
        let len = body.len();
        let mut pos = 0;
        while pos < len {
            let tag = body[pos];
            let fixed = match tag {
                0xFF | 0x05 | 0x07 => 9,
                0x01..=0x03 | 0x08 => 17,
                0x04 | 0x06 => 13,
                0x21 | 0x22 => 25,
                0x23 => 18,
                0x20 => 1,
                _ => {
                    return Err(bad(
                        pos,
                        &format!("unknown heap dump sub-record tag 0x{tag:02x}"),
                    ));
                }
            };
            if pos + fixed > len {
                return Err(bad(pos, "a heap dump sub-record cut short"));
            }
            let end = match tag {
                0x21 => {
                    let n = u4(body, pos + 21) as usize;
                    let end = pos + 25 + n;
                    if end > len {
                        return Err(bad(pos, "an INSTANCE DUMP cut short"));
                    }
                    body[pos + 9..pos + 13].copy_from_slice(&empty);
                    self.stats.objects += 1;
                    let (object_id, class_id) = (u8_(body, pos + 1), u8_(body, pos + 13));
                    self.note_instance(object_id, class_id, &body[pos + 25..end]);
                    end
                }
                0x22 => {
                    let n = u4(body, pos + 13) as usize;
                    let end = pos + 25 + n * 8;
                    if end > len {
                        return Err(bad(pos, "an OBJECT ARRAY DUMP cut short"));
                    }
                    body[pos + 9..pos + 13].copy_from_slice(&empty);
                    self.stats.objects += 1;
                    end
                }
                0x23 => {
                    let n = u4(body, pos + 13) as usize;
                    let size = BasicType::from_u8(body[pos + 17])
                        .filter(|t| *t != BasicType::Object)
                        .ok_or_else(|| bad(pos, "a PRIMITIVE ARRAY DUMP of no primitive type"))?
                        .size(IdSize::Eight);
                    let end = pos + 18 + n * size;
                    if end > len {
                        return Err(bad(pos, "a PRIMITIVE ARRAY DUMP cut short"));
                    }
                    body[pos + 9..pos + 13].copy_from_slice(&empty);
                    self.stats.objects += 1;
                    end
                }
                0x20 => {
                    let mut one = hprof_format::HeapRecords::over(
                        &body[pos..],
                        offset + pos as u64,
                        IdSize::Eight,
                    );
                    let end = match one.next()? {
                        Some((_, HeapRecord::ClassDump(c))) => {
                            self.learn_class(
                                c.class_id,
                                c.super_class_id,
                                c.instance_fields().collect(),
                            );
                            (one.offset() - offset) as usize
                        }
                        _ => return Err(bad(pos, "a CLASS DUMP that can't be read")),
                    };
                    body[pos + 9..pos + 13].copy_from_slice(&empty);
                    rename_class_dump(&mut body[pos..end], &self.strings)
                        .ok_or_else(|| bad(pos, "a CLASS DUMP that can't be read"))?;
                    end
                }
                0x01 => {
                    // ROOT JNI GLOBAL: object id, then the reference's slot address.
                    let end = pos + fixed;
                    if let Some(group) = self.ids.pins().and_then(|p| p.group(u8_(body, pos + 9))) {
                        self.joined.push((u8_(body, pos + 1), group));
                        cut.push((pos, end));
                    }
                    end
                }
                _ => {
                    let end = pos + fixed;
                    let id = u8_(body, pos + 1);
                    let thread = if fixed > 9 { u4(body, pos + 9) } else { 0 };
                    let held = match tag {
                        0x08 => Some(Held::Thread {
                            id,
                            thread,
                            trace: u4(body, pos + 13),
                        }),
                        0x03 => Some(Held::JavaFrame {
                            id,
                            thread,
                            frame: u4(body, pos + 13),
                        }),
                        0x02 => Some(Held::JniLocal {
                            id,
                            thread,
                            frame: u4(body, pos + 13),
                        }),
                        0x04 => Some(Held::NativeStack { id, thread }),
                        0x06 => Some(Held::ThreadBlock { id, thread }),
                        _ => None,
                    };
                    if let Some(held) = held {
                        self.held.push(held);
                        cut.push((pos, end));
                    }
                    end
                }
            };
            pos = end;
        }
        if !cut.is_empty() {
            let mut write = 0;
            let mut read = 0;
            for (start, end) in cut {
                body.copy_within(read..start, write);
                write += start - read;
                read = end;
            }
            body.copy_within(read..len, write);
            write += len - read;
            body.truncate(write);
        }
        if !body.is_empty() {
            self.w.heap_raw_segment(body)?;
        }
        Ok(())
    }
}

/// Reads exactly `buf.len()` bytes; `Ok(false)` at a clean end of input before the first.
fn read_full(src: &mut impl Read, buf: &mut [u8], offset: u64) -> Result<bool, MergeError> {
    let mut got = 0;
    while got < buf.len() {
        match src.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => {
                return Err(MergeError::Input(format!(
                    "the file ends inside a record at offset {offset}"
                )));
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(MergeError::Input(format!(
                    "read error at offset {offset}: {e}"
                )));
            }
        }
    }
    Ok(true)
}
/// Heap dump segments copied whole, rewritten in place (the binary format's way).
pub(super) fn merge_raw(mut src: impl Read, m: &mut Merge<'_>) -> Result<(), MergeError> {
    // The header: the name, a NUL, the id size and the time.
    let mut name = Vec::new();
    let mut byte = [0u8; 1];
    loop {
        if !read_full(&mut src, &mut byte, name.len() as u64)? || name.len() > 64 {
            return Err(MergeError::Input("no HPROF file header".into()));
        }
        name.push(byte[0]);
        if byte[0] == 0 {
            break;
        }
    }
    let mut rest = [0u8; 12];
    if !read_full(&mut src, &mut rest, name.len() as u64)? {
        return Err(MergeError::Input("the file header is cut short".into()));
    }
    name.extend_from_slice(&rest);
    let (header, header_len) = hprof_format::Header::parse(&name)?;
    if header.id_size != IdSize::Eight {
        return Err(MergeError::Input(
            "identifiers are not 8 bytes (a 32-bit JVM)".into(),
        ));
    }
    let mut offset = header_len as u64;
    let mut head = [0u8; hprof_format::RECORD_HEADER_LEN];
    let mut body: Vec<u8> = Vec::new();
    while read_full(&mut src, &mut head, offset)? {
        let record = hprof_format::RecordHeader::parse(&head, offset)?;
        let body_at = offset + hprof_format::RECORD_HEADER_LEN as u64;
        let len = record.length;
        match record.tag {
            hprof_format::Tag::HeapDump | hprof_format::Tag::HeapDumpSegment
                if len > RAW_SEGMENT_LIMIT =>
            {
                m.begin()?;
                // Read record by record: a stream of just this segment behind a header.
                let mut prefix = name[..header_len].to_vec();
                prefix.extend_from_slice(&head);
                let segment = io::Read::chain(&prefix[..], (&mut src).take(u64::from(len)));
                let mut reader = StreamReader::new(segment)?;
                while let Some(event) = reader.next_event()? {
                    if let Event::HeapRecord(_, r) = event {
                        m.heap_record(r)?;
                    }
                }
                if reader.offset() != (header_len + head.len()) as u64 + u64::from(len) {
                    return Err(MergeError::Input(format!(
                        "the heap dump segment at offset {offset} is cut short"
                    )));
                }
            }
            hprof_format::Tag::HeapDump | hprof_format::Tag::HeapDumpSegment => {
                m.begin()?;
                body.resize(len as usize, 0);
                if !read_full(&mut src, &mut body, body_at)? && len > 0 {
                    return Err(MergeError::Input(format!(
                        "the file ends inside the record at offset {offset}"
                    )));
                }
                m.raw_segment(&mut body, body_at)?;
            }
            _ => {
                body.resize(len as usize, 0);
                if !read_full(&mut src, &mut body, body_at)? && len > 0 {
                    return Err(MergeError::Input(format!(
                        "the file ends inside the record at offset {offset}"
                    )));
                }
                let parsed = Record::parse(&record, &body, IdSize::Eight)?;
                m.record(parsed)?;
            }
        }
        offset = body_at + u64::from(len);
    }
    Ok(())
}
