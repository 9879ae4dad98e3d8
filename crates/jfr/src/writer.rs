//! Owns writing JFR: the encodings (LEB128 integers, UTF-8 strings), events with their size
//! and type, the metadata event's element tree built from class definitions, constant pool
//! events, and a chunk's header. What goes in them (which types, which events) is the
//! caller's: the agent's `format=jfr` output.

use rustc_hash::FxHashMap;

use crate::chunk::{CONSTANT_POOL_EVENT, HEADER_SIZE, MAGIC, METADATA_EVENT};

/// The encodings of JFR's basic values, appended to a byte buffer (integers compressed).
pub trait Put {
    /// A LEB128 integer.
    fn varint(&mut self, v: u64);
    /// A `long`.
    fn long(&mut self, v: i64) {
        self.varint(v as u64);
    }
    /// An `int` (its 32 bits, so -1 takes five bytes as the JDK writes it).
    fn int(&mut self, v: i32) {
        self.varint(u64::from(v as u32));
    }
    /// A `boolean` or `byte`.
    fn byte(&mut self, v: u8);
    /// A string, UTF-8 encoded (`None`: the null string).
    fn string(&mut self, s: Option<&str>);
    /// A `float`.
    fn float(&mut self, v: f32);
    /// A `double`.
    fn double(&mut self, v: f64);
}

impl Put for Vec<u8> {
    #[inline]
    fn varint(&mut self, mut v: u64) {
        for _ in 0..8 {
            if v < 0x80 {
                self.push(v as u8);
                return;
            }
            self.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.push(v as u8);
    }

    fn byte(&mut self, v: u8) {
        self.push(v);
    }

    fn string(&mut self, s: Option<&str>) {
        match s {
            None => self.push(0),
            Some("") => self.push(1),
            Some(s) => {
                self.push(3);
                self.int(s.len() as i32);
                self.extend_from_slice(s.as_bytes());
            }
        }
    }

    fn float(&mut self, v: f32) {
        self.extend_from_slice(&v.to_bits().to_be_bytes());
    }

    fn double(&mut self, v: f64) {
        self.extend_from_slice(&v.to_bits().to_be_bytes());
    }
}

/// The bytes a LEB128 integer takes.
fn varint_len(v: u64) -> usize {
    let bits = 64 - v.leading_zeros() as usize;
    bits.div_ceil(7).clamp(1, 9)
}

/// Appends an event: its size (which counts itself), its type id, then `body`.
pub fn event(out: &mut Vec<u8>, type_id: u64, body: &[u8]) {
    let mut head = Vec::with_capacity(12);
    head.varint(type_id);
    let inner = head.len() + body.len();
    let mut size_len = 1;
    while varint_len((inner + size_len) as u64) > size_len {
        size_len += 1;
    }
    out.varint((inner + size_len) as u64);
    out.extend_from_slice(&head);
    out.extend_from_slice(body);
}

/// An annotation on a class or field: the annotation class's id and its `value`, if any.
#[derive(Debug, Clone)]
pub struct AnnotationDef {
    /// The annotation class's id.
    pub class: u64,
    /// Its `value` attribute.
    pub value: Option<String>,
    /// The elements of an array `value` (a category's path), written as `value-0`,
    /// `value-1`, ...
    pub values: Vec<String>,
}

/// A field of a class definition.
#[derive(Debug, Clone)]
pub struct FieldDef {
    /// Its name.
    pub name: String,
    /// The id of its type's class.
    pub class: u64,
    /// Whether the value is a key into the type's constant pool.
    pub constant_pool: bool,
    /// Whether it is an array.
    pub array: bool,
    /// Its annotations (labels, units).
    pub annotations: Vec<AnnotationDef>,
}

/// A class of the metadata.
#[derive(Debug, Clone)]
pub struct ClassDef {
    /// Its id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// The class it extends (`jdk.jfr.Event`, `java.lang.annotation.Annotation`).
    pub super_type: Option<String>,
    /// Whether its one field stands for it (`simpleType`).
    pub simple: bool,
    /// Its fields, in the order they are written.
    pub fields: Vec<FieldDef>,
    /// Its annotations.
    pub annotations: Vec<AnnotationDef>,
}

/// The metadata event's contents: class definitions, and the zone the recording's times are
/// shown in.
#[derive(Debug, Clone, Default)]
pub struct MetadataDef {
    /// The classes, in id order or any order.
    pub classes: Vec<ClassDef>,
}

/// The string table of the metadata event.
#[derive(Default)]
struct Strings {
    list: Vec<String>,
    index: FxHashMap<String, i32>,
}

impl Strings {
    fn id(&mut self, s: &str) -> i32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as i32;
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), i);
        i
    }
}

/// An element of the tree, written as its name, attributes and children.
struct Element {
    name: i32,
    attributes: Vec<(i32, i32)>,
    children: Vec<Element>,
}

impl Element {
    fn new(strings: &mut Strings, name: &str, attributes: &[(&str, &str)]) -> Element {
        Element {
            name: strings.id(name),
            attributes: attributes
                .iter()
                .map(|(k, v)| (strings.id(k), strings.id(v)))
                .collect(),
            children: Vec::new(),
        }
    }

    fn write(&self, out: &mut Vec<u8>) {
        out.int(self.name);
        out.int(self.attributes.len() as i32);
        for &(k, v) in &self.attributes {
            out.int(k);
            out.int(v);
        }
        out.int(self.children.len() as i32);
        for child in &self.children {
            child.write(out);
        }
    }
}

fn annotations(strings: &mut Strings, list: &[AnnotationDef]) -> Vec<Element> {
    list.iter()
        .map(|a| {
            let class = a.class.to_string();
            let mut attrs = vec![("class".to_string(), class)];
            if let Some(v) = &a.value {
                attrs.push(("value".to_string(), v.clone()));
            }
            for (i, v) in a.values.iter().enumerate() {
                attrs.push((format!("value-{i}"), v.clone()));
            }
            let attrs: Vec<(&str, &str)> = attrs
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            Element::new(strings, "annotation", &attrs)
        })
        .collect()
}

impl MetadataDef {
    /// The metadata event (type 0) at `ticks`.
    pub fn encode(&self, ticks: i64) -> Vec<u8> {
        let mut strings = Strings::default();
        let mut root = Element::new(&mut strings, "root", &[]);
        let mut metadata = Element::new(&mut strings, "metadata", &[]);
        for class in &self.classes {
            let id = class.id.to_string();
            let mut attrs = vec![("name", class.name.as_str()), ("id", id.as_str())];
            if let Some(s) = &class.super_type {
                attrs.push(("superType", s.as_str()));
            }
            if class.simple {
                attrs.push(("simpleType", "true"));
            }
            let mut element = Element::new(&mut strings, "class", &attrs);
            element.children = annotations(&mut strings, &class.annotations);
            for field in &class.fields {
                let type_id = field.class.to_string();
                let mut attrs = vec![("name", field.name.as_str()), ("class", type_id.as_str())];
                if field.constant_pool {
                    attrs.push(("constantPool", "true"));
                }
                if field.array {
                    attrs.push(("dimension", "1"));
                }
                let mut f = Element::new(&mut strings, "field", &attrs);
                f.children = annotations(&mut strings, &field.annotations);
                element.children.push(f);
            }
            metadata.children.push(element);
        }
        root.children.push(metadata);
        root.children.push(Element::new(
            &mut strings,
            "region",
            &[("locale", "en_US"), ("gmtOffset", "0")],
        ));
        let mut body = Vec::new();
        body.long(ticks);
        body.long(0);
        body.long(0);
        body.int(strings.list.len() as i32);
        for s in &strings.list {
            body.string(Some(s));
        }
        root.write(&mut body);
        let mut out = Vec::new();
        event(&mut out, METADATA_EVENT, &body);
        out
    }
}

/// Constant pools being filled: for each class id, its entries' count and bytes (key, then
/// the value's fields).
#[derive(Debug, Default)]
pub struct ConstantPools {
    pools: Vec<(u64, u32, Vec<u8>)>,
    index: FxHashMap<u64, usize>,
}

impl ConstantPools {
    /// The buffer to append an entry of class `class` to, after counting it: write its key,
    /// then its fields.
    pub fn entry(&mut self, class: u64) -> &mut Vec<u8> {
        let i = *self.index.entry(class).or_insert_with(|| {
            self.pools.push((class, 0, Vec::new()));
            self.pools.len() - 1
        });
        let pool = &mut self.pools[i];
        pool.1 += 1;
        &mut pool.2
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.pools.is_empty()
    }

    /// The bytes of the entries so far.
    pub fn byte_len(&self) -> usize {
        self.pools.iter().map(|p| p.2.len()).sum()
    }

    /// The constant pool event (type 1) at `ticks`, the last of its chunk (delta 0).
    pub fn encode(&self, ticks: i64) -> Vec<u8> {
        let mut body = Vec::new();
        body.long(ticks);
        body.long(0);
        body.long(0);
        body.byte(1);
        body.int(self.pools.len() as i32);
        for (class, count, bytes) in &self.pools {
            body.long(*class as i64);
            body.int(*count as i32);
            body.extend_from_slice(bytes);
        }
        let mut out = Vec::new();
        event(&mut out, CONSTANT_POOL_EVENT, &body);
        out
    }
}

/// What a chunk header says, written once the chunk is complete.
#[derive(Debug, Clone, Copy)]
pub struct HeaderDef {
    /// The chunk's size.
    pub size: u64,
    /// Offset of its constant pool event.
    pub constant_pool_offset: u64,
    /// Offset of its metadata event.
    pub metadata_offset: u64,
    /// Wall-clock start, nanoseconds since the epoch.
    pub start_nanos: i64,
    /// Length, nanoseconds.
    pub duration_nanos: i64,
    /// Ticks at the start.
    pub start_ticks: i64,
    /// Ticks per second.
    pub ticks_per_second: i64,
}

impl HeaderDef {
    /// The 68 bytes of the header (version 2.0, integers compressed).
    pub fn encode(&self) -> [u8; HEADER_SIZE] {
        let mut out = Vec::with_capacity(HEADER_SIZE);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&2u16.to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes());
        for v in [
            self.size as i64,
            self.constant_pool_offset as i64,
            self.metadata_offset as i64,
            self.start_nanos,
            self.duration_nanos,
            self.start_ticks,
            self.ticks_per_second,
        ] {
            out.extend_from_slice(&v.to_be_bytes());
        }
        out.extend_from_slice(&1u32.to_be_bytes());
        let mut header = [0; HEADER_SIZE];
        header.copy_from_slice(&out);
        header
    }
}

/// A whole chunk in memory: `events` (already encoded), then the constant pools and the
/// metadata, behind a header.
pub fn chunk(
    start_nanos: i64,
    duration_nanos: i64,
    start_ticks: i64,
    ticks_per_second: i64,
    events: &[u8],
    pools: &ConstantPools,
    metadata: &MetadataDef,
) -> Vec<u8> {
    let end_ticks = start_ticks.saturating_add(duration_nanos);
    let pools = pools.encode(end_ticks);
    let metadata = metadata.encode(end_ticks);
    let constant_pool_offset = (HEADER_SIZE + events.len()) as u64;
    let metadata_offset = constant_pool_offset + pools.len() as u64;
    let size = metadata_offset + metadata.len() as u64;
    let header = HeaderDef {
        size,
        constant_pool_offset,
        metadata_offset,
        start_nanos,
        duration_nanos,
        start_ticks,
        ticks_per_second,
    };
    let mut out = Vec::with_capacity(size as usize);
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(events);
    out.extend_from_slice(&pools);
    out.extend_from_slice(&metadata);
    out
}
