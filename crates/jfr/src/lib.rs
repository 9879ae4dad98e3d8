//! Owns JDK Flight Recorder files: a strict, zero-copy reader and the writer primitives the
//! agent's `format=jfr` output needs.
//!
//! A recording is chunks one after another ([`chunks`]); each [`Chunk`] holds a header, the
//! metadata (the classes: event types and the types of their fields), constant pools (the
//! values events refer to by key: threads, stack traces, methods, classes, strings) and the
//! events. The reader checks every length and count against the data, never allocates from
//! a length field it has not checked, and reports the byte offset of any damage.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

mod chunk;
mod cursor;
mod error;
mod flat;
mod metadata;
pub mod pools;
pub mod schema;
mod value;
pub mod writer;

pub use chunk::{
    CONSTANT_POOL_EVENT, Chunk, Chunks, Event, Events, HEADER_SIZE, Header, KeyRange, MAGIC,
    METADATA_EVENT, chunks,
};
pub use error::{Error, ErrorKind, Result};
pub use metadata::{Class, Field, FieldType, Metadata};
pub use value::Value;
