//! Reads and writes HPROF binary files, the heap and profile format of the JVM.
//!
//! # Brief overview
//!
//! - [`Records`] walks the records of a whole file held in memory (a `Vec` or a
//!   memory map) without copying: each [`Record`] borrows its body. Heap dump
//!   bodies ([`HeapDumpBody`]) are walked by [`HeapRecords`], which yields
//!   [`HeapRecord`]s.
//! - [`StreamReader`] yields the same records from any `io::Read` in bounded
//!   memory, delivering heap dumps one sub-record at a time ([`Event`]).
//! - [`Writer`] writes records, splitting heap dumps into HEAP DUMP SEGMENTs.
//! - [`Symbols`] indexes a file's names, classes, frames and traces; [`shallow`] sizes its
//!   objects as HotSpot lays them out.
//! - Every reader is strict: a truncated or corrupt file gives an [`Error`] that
//!   names the record kind and the byte offset, never a panic, and no allocation
//!   is ever sized from a length field.
//!
//! ```
//! use hprof_format::{Header, IdSize, Record, Records, Version, Writer};
//!
//! let header = Header { version: Version::V1_0_2, id_size: IdSize::Eight, timestamp_ms: 0 };
//! let mut w = Writer::new(Vec::new(), header).unwrap();
//! w.utf8(0, 1, b"main").unwrap();
//! let bytes = w.finish().unwrap();
//!
//! let (read_header, mut records) = Records::new(&bytes).unwrap();
//! assert_eq!(read_header, header);
//! let (_, record) = records.next().unwrap().unwrap();
//! assert_eq!(record, Record::Utf8 { id: 1, text: b"main" });
//! ```

#![deny(missing_docs)]
#![deny(missing_debug_implementations)]
#![forbid(unsafe_code)]

pub use crate::{
    completeness::{Completeness, ERROR_NOTE_PREFIX, Problem},
    error::{Error, ErrorKind, Result},
    heap::{ClassDump, HeapRecord, HeapRecords},
    names::{java_class_name, primitive_array_name, stable_class_name},
    reader::Records,
    record::{
        AllocSite, AllocSites, CpuSampleList, HeapDumpBody, IdList, ObjectSiteGroup, ObjectSites,
        RECORD_HEADER_LEN, Record, RecordHeader, TIMED_SAMPLE_LEN, TimedSample, TimedSampleList,
    },
    stream::{Event, StreamReader},
    symbols::{FrameRecord, Symbols, TraceRecord},
    tag::{SubTag, Tag},
    types::{BasicType, Header, IdSize, Value, Version},
    writer::{DEFAULT_SEGMENT_LIMIT, Writer},
};

mod completeness;
mod cursor;
mod error;
mod heap;
mod names;
pub mod net;
mod reader;
mod record;
pub mod shallow;
mod stream;
mod symbols;
mod tag;
mod types;
mod writer;
