//! Owns a chunk's metadata: the classes (event types and the types their fields use), read
//! from the metadata event's string table and element tree.

use rustc_hash::FxHashMap;

use crate::cursor::Cursor;
use crate::error::{Error, Result};
use crate::value::read_string_raw;

/// How a field's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldType {
    /// `boolean`: one byte.
    Boolean,
    /// `byte`: one byte.
    Byte,
    /// `char`: a 16-bit code unit.
    Char,
    /// `short`.
    Short,
    /// `int`.
    Int,
    /// `long`.
    Long,
    /// `float`: 4 bytes, big-endian.
    Float,
    /// `double`: 8 bytes, big-endian.
    Double,
    /// `java.lang.String`: JFR's string encoding.
    String,
    /// A key into the constant pool of the class at this index.
    Ref(u32),
    /// The fields of the class at this index, written in place.
    Inline(u32),
}

/// One field of a class.
#[derive(Debug, Clone)]
pub struct Field {
    /// Its name (`startTime`, `stackTrace`, ...).
    pub name: String,
    /// How its value is written.
    pub ty: FieldType,
    /// Whether it is an array (a count, then the values).
    pub array: bool,
}

impl Field {
    /// Whether its value is one integer or key (not an array, a string, a floating-point
    /// number or an object in place).
    pub fn is_number(&self) -> bool {
        !self.array
            && !matches!(
                self.ty,
                FieldType::String | FieldType::Inline(_) | FieldType::Float | FieldType::Double
            )
    }
}

/// A class of the metadata: an event type, or a type that fields use.
#[derive(Debug, Clone)]
pub struct Class {
    /// The id events and constant pools name it by.
    pub id: u64,
    /// Its name (`jdk.ExecutionSample`, `java.lang.Thread`, ...).
    pub name: String,
    /// The class it extends (`jdk.jfr.Event` for event types).
    pub super_type: Option<String>,
    /// Its fields, in the order they are written.
    pub fields: Vec<Field>,
}

impl Class {
    /// The index of the field named `name`.
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }

    /// How many leading fields are plain numbers or keys (not arrays, strings, floating
    /// point or objects in place): the fields [`crate::Chunk::read_numbers`] reads.
    pub fn numeric_prefix(&self) -> usize {
        self.fields.iter().take_while(|f| f.is_number()).count()
    }

    /// Whether it is an event type.
    pub fn is_event(&self) -> bool {
        self.super_type.as_deref() == Some("jdk.jfr.Event")
    }
}

/// The classes of a chunk.
#[derive(Debug, Clone, Default)]
pub struct Metadata {
    /// Every class, in the order the metadata lists them.
    pub classes: Vec<Class>,
    by_id: FxHashMap<u64, u32>,
    by_name: FxHashMap<String, u32>,
}

impl Metadata {
    /// The index of the class with id `id`.
    pub fn index_of(&self, id: u64) -> Option<u32> {
        self.by_id.get(&id).copied()
    }

    /// The index of the class named `name`.
    pub fn named(&self, name: &str) -> Option<u32> {
        self.by_name.get(name).copied()
    }

    /// The class at `index`.
    pub fn class(&self, index: u32) -> &Class {
        &self.classes[index as usize]
    }
}

/// An element of the metadata tree: its name and attributes as indices into the string
/// table.
struct Element {
    name: u32,
    attributes: Vec<(u32, u32)>,
    children: Vec<Element>,
}

/// Deepest element tree accepted (JDK's is five levels deep).
const MAX_DEPTH: usize = 32;

fn element(c: &mut Cursor<'_>, strings: usize, depth: usize) -> Result<Element> {
    let at = c.offset();
    if depth > MAX_DEPTH {
        return Err(Error::malformed(at, "metadata elements nested too deep"));
    }
    let index = |c: &mut Cursor<'_>| -> Result<u32> {
        let at = c.offset();
        let i = c.int("metadata string index")?;
        if i < 0 || i as usize >= strings {
            return Err(Error::malformed(
                at,
                format!("metadata string index {i} outside the table of {strings}"),
            ));
        }
        Ok(i as u32)
    };
    let name = index(c)?;
    let n = c.count(2, "metadata attributes")?;
    let mut attributes = Vec::with_capacity(n);
    for _ in 0..n {
        attributes.push((index(c)?, index(c)?));
    }
    let n = c.count(3, "metadata children")?;
    let mut children = Vec::with_capacity(n);
    for _ in 0..n {
        children.push(element(c, strings, depth + 1)?);
    }
    Ok(Element {
        name,
        attributes,
        children,
    })
}

/// Reads the body of a metadata event (after its size and type): start time, duration,
/// metadata id, string table, element tree.
pub(crate) fn read(c: &mut Cursor<'_>) -> Result<Metadata> {
    c.long("metadata start time")?;
    c.long("metadata duration")?;
    c.long("metadata id")?;
    let n = c.count(1, "metadata string table")?;
    let mut strings = Vec::with_capacity(n);
    for _ in 0..n {
        strings.push(read_string_raw(c)?.unwrap_or_default());
    }
    let root_at = c.offset();
    let root = element(c, strings.len(), 0)?;
    let s = |i: u32| strings[i as usize].as_str();
    let attr = |e: &Element, key: &str| {
        e.attributes
            .iter()
            .find(|&&(k, _)| s(k) == key)
            .map(|&(_, v)| s(v))
    };
    let mut metadata = Metadata::default();
    // Field types by class id, resolved once every class is known.
    let mut pending: Vec<Vec<(String, u64, bool, bool)>> = Vec::new();
    for section in root.children.iter().filter(|e| s(e.name) == "metadata") {
        for class in section.children.iter().filter(|e| s(e.name) == "class") {
            let name = attr(class, "name").unwrap_or_default().to_string();
            let id = attr(class, "id")
                .and_then(|v| v.parse::<u64>().ok())
                .ok_or_else(|| {
                    Error::malformed(root_at, format!("class {name:?} has no numeric id"))
                })?;
            let fields = class
                .children
                .iter()
                .filter(|e| s(e.name) == "field")
                .map(|f| {
                    let class_id = attr(f, "class").and_then(|v| v.parse::<u64>().ok());
                    (
                        attr(f, "name").unwrap_or_default().to_string(),
                        class_id.unwrap_or(u64::MAX),
                        attr(f, "constantPool") == Some("true"),
                        attr(f, "dimension").is_some_and(|d| d != "0"),
                    )
                })
                .collect();
            let index = metadata.classes.len() as u32;
            if metadata.by_id.insert(id, index).is_some() {
                return Err(Error::malformed(
                    root_at,
                    format!("two classes have the id {id}"),
                ));
            }
            metadata.by_name.entry(name.clone()).or_insert(index);
            metadata.classes.push(Class {
                id,
                name,
                super_type: attr(class, "superType").map(str::to_string),
                fields: Vec::new(),
            });
            pending.push(fields);
        }
    }
    for (index, fields) in pending.into_iter().enumerate() {
        let mut resolved = Vec::with_capacity(fields.len());
        for (name, class_id, constant_pool, array) in fields {
            let Some(target) = metadata.by_id.get(&class_id).copied() else {
                return Err(Error::malformed(
                    root_at,
                    format!(
                        "field {name} of {} names no class of the metadata",
                        metadata.classes[index].name
                    ),
                ));
            };
            let ty = match metadata.classes[target as usize].name.as_str() {
                "java.lang.String" => FieldType::String,
                _ if constant_pool => FieldType::Ref(target),
                "boolean" => FieldType::Boolean,
                "byte" => FieldType::Byte,
                "char" => FieldType::Char,
                "short" => FieldType::Short,
                "int" => FieldType::Int,
                "long" => FieldType::Long,
                "float" => FieldType::Float,
                "double" => FieldType::Double,
                _ => FieldType::Inline(target),
            };
            resolved.push(Field { name, ty, array });
        }
        metadata.classes[index].fields = resolved;
    }
    Ok(metadata)
}
