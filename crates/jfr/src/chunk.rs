//! Owns a chunk: its header, its metadata, the index of its constant pools, and the walk over
//! its events. A recording is chunks one after another, each self-contained (ids and keys
//! mean something only within their chunk).

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::flat;
use crate::metadata::{self, Class, FieldType, Metadata};
use crate::value::{self, MAX_NESTING, RawString, Value};

/// The bytes a chunk starts with.
pub const MAGIC: [u8; 4] = *b"FLR\0";
/// The size of a chunk header.
pub const HEADER_SIZE: usize = 68;
/// The type id of the metadata event.
pub const METADATA_EVENT: u64 = 0;
/// The type id of a constant pool (checkpoint) event.
pub const CONSTANT_POOL_EVENT: u64 = 1;

/// A chunk's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Format version, major (2 for JDK 11+ and async-profiler).
    pub major: u16,
    /// Format version, minor.
    pub minor: u16,
    /// The chunk's size in bytes, header included.
    pub size: u64,
    /// Offset of the last constant pool event, from the chunk's start.
    pub constant_pool_offset: u64,
    /// Offset of the metadata event, from the chunk's start.
    pub metadata_offset: u64,
    /// Wall-clock time of the chunk's start, nanoseconds since the Unix epoch.
    pub start_nanos: i64,
    /// The chunk's length in time, nanoseconds.
    pub duration_nanos: i64,
    /// The tick count at the chunk's start.
    pub start_ticks: i64,
    /// Ticks per second.
    pub ticks_per_second: i64,
    /// Feature bits (bit 0: integers are compressed).
    pub features: u32,
}

impl Header {
    /// Reads the header at the start of `bytes` (which start at file offset `base`).
    pub fn read(bytes: &[u8], base: u64) -> Result<Header> {
        let mut c = Cursor::new(bytes, base, false);
        if c.remaining() < HEADER_SIZE {
            return Err(if bytes.len() >= 4 && bytes[..4] != MAGIC {
                Error::new(base, ErrorKind::BadMagic)
            } else {
                c.truncated("chunk header")
            });
        }
        if c.bytes(4, "magic")? != MAGIC {
            return Err(Error::new(base, ErrorKind::BadMagic));
        }
        let major = c.be_u16("major version")?;
        let minor = c.be_u16("minor version")?;
        if major != 2 {
            return Err(Error::new(
                base + 4,
                ErrorKind::UnsupportedVersion { major, minor },
            ));
        }
        let mut long = |what| c.be_u64(what).map(|v| v as i64);
        let header = Header {
            major,
            minor,
            size: long("chunk size")? as u64,
            constant_pool_offset: long("constant pool offset")? as u64,
            metadata_offset: long("metadata offset")? as u64,
            start_nanos: long("start time")?,
            duration_nanos: long("duration")?,
            start_ticks: long("start ticks")?,
            ticks_per_second: long("ticks per second")?,
            features: c.be_u32("features")?,
        };
        let bad = |at: u64, what: String| Err(Error::malformed(base + at, what));
        if header.size < HEADER_SIZE as u64 {
            return bad(
                8,
                format!("chunk size {} is below the header's", header.size),
            );
        }
        if header.size > bytes.len() as u64 {
            return Err(Error::new(
                base + 8,
                ErrorKind::Malformed(format!(
                    "the chunk's size is {} bytes but only {} remain in the file (a truncated or unfinished recording)",
                    header.size,
                    bytes.len()
                )),
            ));
        }
        if header.metadata_offset < HEADER_SIZE as u64 || header.metadata_offset >= header.size {
            return bad(
                24,
                format!(
                    "metadata offset {} outside the chunk",
                    header.metadata_offset
                ),
            );
        }
        if header.ticks_per_second <= 0 {
            return bad(56, format!("{} ticks per second", header.ticks_per_second));
        }
        Ok(header)
    }

    /// Whether integers are LEB128-compressed.
    pub fn compressed(&self) -> bool {
        self.features & 1 != 0
    }
}

/// An event: its type and where its body (after size and type) lies.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    /// The event type's index in the chunk's metadata.
    pub class: u32,
    /// File offset of the event (its size field).
    pub offset: u64,
    body: &'a [u8],
    body_offset: u64,
}

/// A chunk: header, metadata, constant pools.
#[derive(Debug)]
pub struct Chunk<'a> {
    /// File offset of the chunk.
    pub offset: u64,
    /// The header.
    pub header: Header,
    /// The classes.
    pub metadata: Metadata,
    data: &'a [u8],
    /// Constant-pool entries: (class index, key) to the offset of the value in `data`.
    pool: FxHashMap<(u32, i64), u32>,
    /// Each class's smallest and largest constant key, and how many constants it has.
    key_ranges: Vec<KeyRange>,
    string_class: Option<u32>,
    /// How each class's values are skipped fast (compressed chunks only).
    flat: flat::Plans,
}

/// The keys of one class's constants in a chunk (see [`Chunk::key_range`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyRange {
    /// The smallest key.
    pub min: i64,
    /// The largest key.
    pub max: i64,
    /// How many constants have a key in the range (a key defined twice counts twice).
    pub count: u32,
}

impl Default for KeyRange {
    fn default() -> Self {
        KeyRange {
            min: i64::MAX,
            max: i64::MIN,
            count: 0,
        }
    }
}

impl<'a> Chunk<'a> {
    /// Reads the chunk at the start of `bytes` (file offset `base`): header, metadata, and the
    /// index of every constant pool event. The chunk may be followed by others.
    pub fn read(bytes: &'a [u8], base: u64) -> Result<Chunk<'a>> {
        let header = Header::read(bytes, base)?;
        let data = &bytes[..header.size as usize];
        let compressed = header.compressed();
        let mut c = Cursor::new(
            &data[header.metadata_offset as usize..],
            base + header.metadata_offset,
            compressed,
        );
        let (meta_type, mut body) = event_frame(&mut c)?;
        if meta_type != METADATA_EVENT {
            return Err(Error::malformed(
                base + header.metadata_offset,
                format!("the header's metadata offset holds an event of type {meta_type}"),
            ));
        }
        let metadata = metadata::read(&mut body)?;
        let string_class = metadata.named("java.lang.String");
        let flat = if compressed {
            flat::plans(&metadata, string_class)
        } else {
            Vec::new()
        };
        let mut chunk = Chunk {
            offset: base,
            header,
            metadata,
            data,
            pool: FxHashMap::default(),
            key_ranges: Vec::new(),
            string_class,
            flat,
        };
        chunk.index_pools()?;
        Ok(chunk)
    }

    /// The chunk's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.data
    }

    fn cursor(&self, from: usize) -> Cursor<'a> {
        Cursor::new(
            &self.data[from..],
            self.offset + from as u64,
            self.header.compressed(),
        )
    }

    /// Indexes the constant pools' entries: the pool events the header's constant pool
    /// offset leads to, each naming the one before it (as the JDK and async-profiler write
    /// them), in file order; when that chain is not whole (or indexing it fails), every
    /// event walked once, as a chunk without the chain needs, so a damaged chunk's error is
    /// the one the walk meets first.
    fn index_pools(&mut self) -> Result<()> {
        if let Some(chain) = self.pool_chain()
            && self.index_pool_events(chain.into_iter().rev()).is_ok()
        {
            return Ok(());
        }
        self.pool.clear();
        self.key_ranges.clear();
        let mut c = self.cursor(HEADER_SIZE);
        let mut pools = Vec::new();
        while !c.at_end() {
            let event_at = HEADER_SIZE + c.pos();
            let (ty, _) = event_frame(&mut c)?;
            if ty == CONSTANT_POOL_EVENT {
                pools.push(event_at);
                // (Indexed as met: a broken frame after a broken pool is not the error.)
                self.index_pool_events(pools.drain(..))?;
            }
        }
        Ok(())
    }

    /// The offsets (in the chunk) of its constant pool events, last first, following each
    /// one's delta to the one before from the header's constant pool offset; `None` unless
    /// every link is a constant pool event strictly before the one naming it.
    fn pool_chain(&self) -> Option<Vec<usize>> {
        let mut at = usize::try_from(self.header.constant_pool_offset).ok()?;
        let mut chain = Vec::new();
        loop {
            if at < HEADER_SIZE || at >= self.data.len() {
                return None;
            }
            let mut c = self.cursor(at);
            let (ty, mut body) = event_frame(&mut c).ok()?;
            if ty != CONSTANT_POOL_EVENT {
                return None;
            }
            body.long("constant pool start time").ok()?;
            body.long("constant pool duration").ok()?;
            let delta = body.long("constant pool delta").ok()?;
            chain.push(at);
            if delta == 0 {
                return Some(chain);
            }
            // Each link leads back; a delta forward or onto itself breaks the chain.
            let back = delta.checked_neg().and_then(|d| usize::try_from(d).ok())?;
            at = at.checked_sub(back).filter(|_| back > 0)?;
        }
    }

    /// Indexes the constant pool events at `offsets` (in the chunk), in that order: a key
    /// defined again takes its later definition.
    fn index_pool_events(&mut self, offsets: impl Iterator<Item = usize>) -> Result<()> {
        if self.key_ranges.len() != self.metadata.classes.len() {
            self.key_ranges = vec![KeyRange::default(); self.metadata.classes.len()];
        }
        for at in offsets {
            let mut c = self.cursor(at);
            let event_at = c.offset();
            let (_, mut body) = event_frame(&mut c)?;
            body.long("constant pool start time")?;
            body.long("constant pool duration")?;
            body.long("constant pool delta")?;
            body.u8("constant pool flush flag")?;
            let pools = body.count(2, "constant pools")?;
            for _ in 0..pools {
                let class_at = body.offset();
                let class_id = body.long("constant pool class")? as u64;
                let Some(class) = self.metadata.index_of(class_id) else {
                    return Err(Error::malformed(
                        class_at,
                        format!(
                            "constant pool of class id {class_id}, which the metadata does not define (in the event at {event_at})"
                        ),
                    ));
                };
                let n = body.count(1, "constant pool entries")?;
                for _ in 0..n {
                    let key = body.long("constant key")?;
                    let at = (body.offset() - self.offset) as u32;
                    self.pool.insert((class, key), at);
                    let range = &mut self.key_ranges[class as usize];
                    range.min = range.min.min(key);
                    range.max = range.max.max(key);
                    range.count += 1;
                    self.skip_class(&mut body, class)?;
                }
            }
        }
        Ok(())
    }

    /// Skips a value of class `class` (a constant pool entry's body, an object in place).
    fn skip_class(&self, c: &mut Cursor<'a>, class: u32) -> Result<()> {
        // A pooled `java.lang.String` entry is a string, not an object of fields.
        if Some(class) == self.string_class {
            return RawString::read(c).map(|_| ());
        }
        if let Some(Some(steps)) = self.flat.get(class as usize)
            && flat::skip(c, steps).is_some()
        {
            return Ok(());
        }
        value::skip(c, &self.metadata, FieldType::Inline(class), false, 0)
    }

    /// The events of the chunk, constant pool and metadata events left out.
    pub fn events(&self) -> Events<'a, '_> {
        Events {
            chunk: self,
            cursor: self.cursor(HEADER_SIZE),
        }
    }

    /// The class at `index`.
    pub fn class(&self, index: u32) -> &Class {
        self.metadata.class(index)
    }

    /// Wall-clock nanoseconds since the Unix epoch of a tick count.
    #[inline]
    pub fn nanos(&self, ticks: i64) -> i64 {
        let h = &self.header;
        h.start_nanos.saturating_add(ticks_to_nanos(
            ticks.wrapping_sub(h.start_ticks),
            h.ticks_per_second,
        ))
    }

    /// Nanoseconds of a duration in ticks.
    #[inline]
    pub fn duration_nanos(&self, ticks: i64) -> i64 {
        ticks_to_nanos(ticks, self.header.ticks_per_second)
    }

    /// Decodes the fields of `event` into `out` (cleared first), one value per field of its
    /// class.
    pub fn read_event(&self, event: &Event<'a>, out: &mut Vec<Value<'a>>) -> Result<()> {
        out.clear();
        let mut c = Cursor::new(event.body, event.body_offset, self.header.compressed());
        for field in &self.class(event.class).fields {
            out.push(self.read_value(&mut c, field.ty, field.array, 0)?);
        }
        Ok(())
    }

    /// Decodes the fields of `event` into `out` (cleared first) as [`Chunk::read_event`]
    /// does, but for the top level only: integers, booleans and references are read; a
    /// string, an array or an object in place is skipped and reads as [`Value::Null`]. The
    /// fast path for events whose wanted fields are numbers and keys.
    pub fn read_shallow(&self, event: &Event<'a>, out: &mut Vec<Value<'a>>) -> Result<()> {
        out.clear();
        let mut c = Cursor::new(event.body, event.body_offset, self.header.compressed());
        for field in &self.class(event.class).fields {
            if field.array {
                value::skip(&mut c, &self.metadata, field.ty, true, 0)?;
                out.push(Value::Null);
                continue;
            }
            out.push(match field.ty {
                FieldType::Long => Value::Int(c.long("long")?),
                FieldType::Ref(class) => Value::Ref {
                    class,
                    key: c.long("constant key")?,
                },
                FieldType::Int => Value::Int(i64::from(c.int("int")?)),
                FieldType::Boolean => Value::Bool(c.u8("boolean")? != 0),
                FieldType::Byte => Value::Int(i64::from(c.u8("byte")? as i8)),
                FieldType::Char => Value::Int(i64::from(c.short("char")?)),
                FieldType::Short => Value::Int(i64::from(c.short("short")? as i16)),
                ty => {
                    value::skip(&mut c, &self.metadata, ty, false, 0)?;
                    Value::Null
                }
            });
        }
        Ok(())
    }

    /// Reads the first `out.len()` fields of `event` as integers: a reference as its key, a
    /// boolean as 0 or 1, a character as its code unit; the fields after them are left
    /// unread. The fast path for sample events, whose leading fields are numbers and keys
    /// (see [`Class::numeric_prefix`]): no [`Value`] is made. A field of another type is an
    /// error (at its offset); a body too short for the fields is truncated.
    #[inline]
    pub fn read_numbers(&self, event: &Event<'a>, out: &mut [i64]) -> Result<()> {
        let mut c = Cursor::new(event.body, event.body_offset, self.header.compressed());
        let fields = &self.class(event.class).fields;
        if out.len() > fields.len() {
            return Err(Error::malformed(
                event.offset,
                format!(
                    "an event with {} fields read as {}",
                    fields.len(),
                    out.len()
                ),
            ));
        }
        for (slot, field) in out.iter_mut().zip(fields) {
            *slot = number(&mut c, field)?;
        }
        Ok(())
    }

    /// Whether the constants of class `class` are flat, as [`Chunk::constant_numbers`]
    /// reads them: each field a number or key, or an array of objects in place whose fields
    /// are numbers and keys (a stack trace: its frames).
    pub fn is_flat(&self, class: u32) -> bool {
        Some(class) != self.string_class
            && self.class(class).fields.iter().all(|f| {
                f.is_number()
                    || (f.array
                        && matches!(f.ty, FieldType::Inline(item)
                            if self.class(item).fields.iter().all(crate::Field::is_number)))
            })
    }

    /// Reads the constant of the flat class `class` (see [`Chunk::is_flat`]) with key `key`
    /// into `out` (cleared first) as integers, as [`Chunk::read_numbers`] reads them, without
    /// a [`Value`]: each field in order, an array as its length followed by its objects'
    /// fields, object after object. False when no pool holds the constant; an error where its
    /// bytes are damaged, or for a class that is not flat.
    pub fn constant_numbers(&self, class: u32, key: i64, out: &mut Vec<i64>) -> Result<bool> {
        out.clear();
        let Some(&at) = self.pool.get(&(class, key)) else {
            return Ok(false);
        };
        let mut c = self.cursor(at as usize);
        if Some(class) == self.string_class {
            return Err(Error::malformed(c.offset(), "a string read as numbers"));
        }
        for field in &self.class(class).fields {
            match field.ty {
                FieldType::Inline(item) if field.array => {
                    let fields = &self.class(item).fields;
                    let n = c.count(fields.len(), "array")?;
                    out.push(n as i64);
                    out.reserve(n * fields.len());
                    for _ in 0..n {
                        for field in fields {
                            out.push(number(&mut c, field)?);
                        }
                    }
                }
                _ => out.push(number(&mut c, field)?),
            }
        }
        Ok(true)
    }

    /// Decodes one value of `ty`.
    fn read_value(
        &self,
        c: &mut Cursor<'a>,
        ty: FieldType,
        array: bool,
        depth: usize,
    ) -> Result<Value<'a>> {
        if array {
            let n = c.count(1, "array")?;
            let mut items = Vec::with_capacity(n.min(1024));
            for _ in 0..n {
                items.push(self.read_value(c, ty, false, depth)?);
            }
            return Ok(Value::Array(items));
        }
        Ok(match ty {
            FieldType::Boolean => Value::Bool(c.u8("boolean")? != 0),
            FieldType::Byte => Value::Int(i64::from(c.u8("byte")? as i8)),
            FieldType::Char => Value::Int(i64::from(c.short("char")?)),
            FieldType::Short => Value::Int(i64::from(c.short("short")? as i16)),
            FieldType::Int => Value::Int(i64::from(c.int("int")?)),
            FieldType::Long => Value::Int(c.long("long")?),
            FieldType::Float => Value::Float(f64::from(f32::from_bits(c.be_u32("float")?))),
            FieldType::Double => Value::Float(f64::from_bits(c.be_u64("double")?)),
            FieldType::String => self.string(c)?,
            FieldType::Ref(class) => Value::Ref {
                class,
                key: c.long("constant key")?,
            },
            FieldType::Inline(class) => {
                if depth >= MAX_NESTING {
                    return Err(Error::malformed(c.offset(), "objects nested too deep"));
                }
                let fields = &self.class(class).fields;
                let mut values = Vec::with_capacity(fields.len());
                for field in fields {
                    values.push(self.read_value(c, field.ty, field.array, depth + 1)?);
                }
                Value::Object(class, values)
            }
        })
    }

    /// A string, a pooled one looked up.
    fn string(&self, c: &mut Cursor<'a>) -> Result<Value<'a>> {
        let at = c.offset();
        Ok(match RawString::read(c)? {
            RawString::Pool(key) => match self.pooled_string(key)? {
                Some(s) => Value::Str(s),
                None => {
                    return Err(Error::malformed(
                        at,
                        format!("string constant {key} is in no constant pool"),
                    ));
                }
            },
            RawString::Null => Value::Null,
            raw => Value::Str(raw.text().unwrap_or_default()),
        })
    }

    fn pooled_string(&self, key: i64) -> Result<Option<Cow<'a, str>>> {
        let Some(class) = self.string_class else {
            return Ok(None);
        };
        let Some(&at) = self.pool.get(&(class, key)) else {
            return Ok(None);
        };
        let mut c = self.cursor(at as usize);
        match RawString::read(&mut c)? {
            RawString::Pool(_) => Err(Error::malformed(
                c.offset(),
                "a pooled string refers to the pool again",
            )),
            raw => Ok(raw.text()),
        }
    }

    /// The constant of class `class` with key `key`: its fields (a pooled string is a
    /// [`Value::Str`]); `None` when no pool holds it.
    pub fn constant(&self, class: u32, key: i64) -> Result<Option<Value<'a>>> {
        let Some(&at) = self.pool.get(&(class, key)) else {
            return Ok(None);
        };
        if Some(class) == self.string_class {
            return Ok(self.pooled_string(key)?.map(Value::Str));
        }
        let mut c = self.cursor(at as usize);
        self.read_value(&mut c, FieldType::Inline(class), false, 0)
            .map(Some)
    }

    /// Whether a constant of class `class` with key `key` exists.
    pub fn has_constant(&self, class: u32, key: i64) -> bool {
        self.pool.contains_key(&(class, key))
    }

    /// The keys of the constants of class `class`; `None` when the chunk has none.
    pub fn key_range(&self, class: u32) -> Option<KeyRange> {
        self.key_ranges
            .get(class as usize)
            .copied()
            .filter(|r| r.count > 0)
    }

    /// The number of constant-pool entries.
    pub fn constants(&self) -> usize {
        self.pool.len()
    }
}

/// `ticks` at `per_second` (above 0) in nanoseconds, without 128-bit division (a sample's
/// time is converted for every event).
#[inline]
fn ticks_to_nanos(ticks: i64, per_second: i64) -> i64 {
    const NANOS: i64 = 1_000_000_000;
    if per_second == NANOS {
        return ticks;
    }
    if per_second > 4 * NANOS {
        // (Clocks faster than 4 GHz: the remainder's product could overflow.)
        return (i128::from(ticks) * i128::from(NANOS) / i128::from(per_second)) as i64;
    }
    let whole = ticks / per_second;
    let rest = ticks % per_second;
    whole
        .saturating_mul(NANOS)
        .saturating_add(rest * NANOS / per_second)
}

/// Reads an event's size and type; returns the type and a cursor over its body. The event's
/// bytes must lie within the cursor's data.
fn event_frame<'a>(c: &mut Cursor<'a>) -> Result<(u64, Cursor<'a>)> {
    let start = c.offset();
    let start_pos = c.pos();
    let size = c.int("event size")?;
    let size_field = c.pos() - start_pos;
    if size <= 0 || size as usize <= size_field {
        return Err(Error::malformed(start, format!("event size {size}")));
    }
    let rest = size as usize - size_field;
    if rest > c.remaining() {
        return Err(Error::truncated(start, "event"));
    }
    let mut body = c.take(rest);
    let ty = body.long("event type")? as u64;
    Ok((ty, body))
}

/// The events of a chunk (see [`Chunk::events`]).
#[derive(Debug)]
pub struct Events<'a, 'c> {
    chunk: &'c Chunk<'a>,
    cursor: Cursor<'a>,
}

impl<'a> Iterator for Events<'a, '_> {
    type Item = Result<Event<'a>>;

    fn next(&mut self) -> Option<Result<Event<'a>>> {
        loop {
            if self.cursor.at_end() {
                return None;
            }
            let offset = self.cursor.offset();
            let (ty, body) = match event_frame(&mut self.cursor) {
                Ok(x) => x,
                Err(e) => {
                    // Nothing after a broken frame can be found.
                    self.cursor = Cursor::new(&[], 0, false);
                    return Some(Err(e));
                }
            };
            if ty == METADATA_EVENT || ty == CONSTANT_POOL_EVENT {
                continue;
            }
            let Some(class) = self.chunk.metadata.index_of(ty) else {
                self.cursor = Cursor::new(&[], 0, false);
                return Some(Err(Error::malformed(
                    offset,
                    format!("event of type id {ty}, which the metadata does not define"),
                )));
            };
            return Some(Ok(Event {
                class,
                offset,
                body: body.data(),
                body_offset: body.offset(),
            }));
        }
    }
}

/// The chunks of a recording, one after another.
#[derive(Debug)]
pub struct Chunks<'a> {
    bytes: &'a [u8],
    at: usize,
    failed: bool,
}

/// The chunks of the recording `bytes`.
pub fn chunks(bytes: &[u8]) -> Chunks<'_> {
    Chunks {
        bytes,
        at: 0,
        failed: false,
    }
}

impl<'a> Iterator for Chunks<'a> {
    type Item = Result<Chunk<'a>>;

    fn next(&mut self) -> Option<Result<Chunk<'a>>> {
        if self.failed || self.at >= self.bytes.len() {
            return None;
        }
        match Chunk::read(&self.bytes[self.at..], self.at as u64) {
            Ok(chunk) => {
                self.at += chunk.header.size as usize;
                Some(Ok(chunk))
            }
            Err(e) => {
                self.failed = true;
                Some(Err(e))
            }
        }
    }
}

/// A field that is a number or a key, as an integer: a reference as its key, a boolean as 0
/// or 1, a character as its code unit; any other field is an error at its offset.
#[inline(always)]
fn number(c: &mut Cursor<'_>, field: &crate::metadata::Field) -> Result<i64> {
    Ok(match field.ty {
        _ if field.array => return Err(not_a_number(c, field)),
        FieldType::Long | FieldType::Ref(_) => c.long("long")?,
        FieldType::Int => i64::from(c.int("int")?),
        FieldType::Boolean => i64::from(c.u8("boolean")? != 0),
        FieldType::Byte => i64::from(c.u8("byte")? as i8),
        FieldType::Char => i64::from(c.short("char")?),
        FieldType::Short => i64::from(c.short("short")? as i16),
        _ => return Err(not_a_number(c, field)),
    })
}

/// The error of [`Chunk::read_numbers`] meeting a field that is not a number.
#[cold]
fn not_a_number(c: &Cursor<'_>, field: &crate::metadata::Field) -> Error {
    Error::malformed(
        c.offset(),
        format!("field {} is not a number or a key", field.name),
    )
}

#[cfg(test)]
mod tests {
    use super::ticks_to_nanos;

    #[test]
    fn ticks_convert_exactly_at_any_rate() {
        for (ticks, rate) in [
            (0, 1_000_000_000),
            (123_456_789_012, 1_000_000_000),
            (-5, 1_000_000_000),
            (2_900_000_000_123, 2_900_000_000),
            (-2_900_000_000_123, 2_900_000_000),
            (7_000_000_000_000, 7_000_000_000),
            (1_000, 1_000),
        ] {
            let exact = (i128::from(ticks) * 1_000_000_000 / i128::from(rate)) as i64;
            assert_eq!(ticks_to_nanos(ticks, rate), exact, "{ticks} at {rate}");
        }
    }
}
