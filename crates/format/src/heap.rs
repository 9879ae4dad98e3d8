//! Owns the heap dump sub-record types and how they are parsed.

use crate::cursor::Cursor;
use crate::error::{Error, ErrorKind, Result};
use crate::record::IdList;
use crate::tag::SubTag;
use crate::types::{BasicType, IdSize, Value};

/// A CLASS DUMP sub-record. Its variable-length parts are validated when it is
/// parsed and read lazily through iterators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClassDump<'a> {
    /// The class object's identifier.
    pub class_id: u64,
    /// Stack trace serial number.
    pub stack_trace_serial: u32,
    /// The superclass's identifier (0 for none).
    pub super_class_id: u64,
    /// The class loader's identifier (0 for the bootstrap loader).
    pub class_loader_id: u64,
    /// The signers object's identifier.
    pub signers_id: u64,
    /// The protection domain's identifier.
    pub protection_domain_id: u64,
    /// Reserved.
    pub reserved1: u64,
    /// Reserved.
    pub reserved2: u64,
    /// Instance size in bytes, as the writer counted it.
    pub instance_size: u32,
    constant_pool: Section<'a>,
    static_fields: Section<'a>,
    instance_fields: Section<'a>,
    id_size: IdSize,
}

/// A validated run of entries inside a CLASS DUMP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Section<'a> {
    count: u16,
    bytes: &'a [u8],
}

impl<'a> ClassDump<'a> {
    /// The number of constant pool entries.
    pub fn constant_pool_len(&self) -> usize {
        self.constant_pool.count.into()
    }

    /// The number of static fields.
    pub fn static_fields_len(&self) -> usize {
        self.static_fields.count.into()
    }

    /// The number of instance fields declared by this class (not its superclasses).
    pub fn instance_fields_len(&self) -> usize {
        self.instance_fields.count.into()
    }

    /// Constant pool entries: `(index, value)`.
    pub fn constant_pool(&self) -> impl Iterator<Item = (u16, Value)> + 'a {
        let id_size = self.id_size;
        let mut c = Cursor::new(self.constant_pool.bytes, 0, "CLASS DUMP");
        (0..self.constant_pool.count).map_while(move |_| {
            let index = c.u2().ok()?;
            let ty = c.basic_type("constant pool entry").ok()?;
            Some((index, c.value(ty, id_size).ok()?))
        })
    }

    /// Static fields: `(name string id, value)`.
    pub fn static_fields(&self) -> impl Iterator<Item = (u64, Value)> + 'a {
        let id_size = self.id_size;
        let mut c = Cursor::new(self.static_fields.bytes, 0, "CLASS DUMP");
        (0..self.static_fields.count).map_while(move |_| {
            let name = c.id(id_size).ok()?;
            let ty = c.basic_type("static field").ok()?;
            Some((name, c.value(ty, id_size).ok()?))
        })
    }

    /// Instance fields declared by this class: `(name string id, type)`.
    pub fn instance_fields(&self) -> impl Iterator<Item = (u64, BasicType)> + 'a {
        let id_size = self.id_size;
        let mut c = Cursor::new(self.instance_fields.bytes, 0, "CLASS DUMP");
        (0..self.instance_fields.count).map_while(move |_| {
            let name = c.id(id_size).ok()?;
            Some((name, c.basic_type("instance field").ok()?))
        })
    }

    /// The identifier size the record was read with.
    pub fn id_size(&self) -> IdSize {
        self.id_size
    }
}

/// A heap dump sub-record. Bodies are borrowed from the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HeapRecord<'a> {
    /// ROOT UNKNOWN.
    RootUnknown {
        /// The object's identifier.
        object_id: u64,
    },
    /// ROOT JNI GLOBAL.
    RootJniGlobal {
        /// The object's identifier.
        object_id: u64,
        /// The JNI global reference's identifier.
        jni_global_ref_id: u64,
    },
    /// ROOT JNI LOCAL.
    RootJniLocal {
        /// The object's identifier.
        object_id: u64,
        /// The thread's serial number.
        thread_serial: u32,
        /// Frame number in the stack trace (`u32::MAX`, i.e. -1, for empty).
        frame_number: u32,
    },
    /// ROOT JAVA FRAME.
    RootJavaFrame {
        /// The object's identifier.
        object_id: u64,
        /// The thread's serial number.
        thread_serial: u32,
        /// Frame number in the stack trace (`u32::MAX`, i.e. -1, for empty).
        frame_number: u32,
    },
    /// ROOT NATIVE STACK.
    RootNativeStack {
        /// The object's identifier.
        object_id: u64,
        /// The thread's serial number.
        thread_serial: u32,
    },
    /// ROOT STICKY CLASS.
    RootStickyClass {
        /// The object's identifier.
        object_id: u64,
    },
    /// ROOT THREAD BLOCK.
    RootThreadBlock {
        /// The object's identifier.
        object_id: u64,
        /// The thread's serial number.
        thread_serial: u32,
    },
    /// ROOT MONITOR USED.
    RootMonitorUsed {
        /// The object's identifier.
        object_id: u64,
    },
    /// ROOT THREAD OBJECT.
    RootThreadObject {
        /// The thread object's identifier.
        thread_object_id: u64,
        /// The thread's serial number.
        thread_serial: u32,
        /// Stack trace serial number.
        stack_trace_serial: u32,
    },
    /// CLASS DUMP.
    ClassDump(ClassDump<'a>),
    /// INSTANCE DUMP.
    InstanceDump {
        /// The object's identifier.
        object_id: u64,
        /// Stack trace serial number.
        stack_trace_serial: u32,
        /// The class object's identifier.
        class_id: u64,
        /// Field values: this class's, then its superclass's, and so on.
        values: &'a [u8],
    },
    /// OBJECT ARRAY DUMP.
    ObjectArrayDump {
        /// The array's identifier.
        array_id: u64,
        /// Stack trace serial number.
        stack_trace_serial: u32,
        /// The array class's identifier.
        array_class_id: u64,
        /// The elements.
        elements: IdList<'a>,
    },
    /// PRIMITIVE ARRAY DUMP.
    PrimitiveArrayDump {
        /// The array's identifier.
        array_id: u64,
        /// Stack trace serial number.
        stack_trace_serial: u32,
        /// The element type (never `Object`).
        element_type: BasicType,
        /// The number of elements.
        length: u32,
        /// The elements, packed big-endian.
        data: &'a [u8],
    },
}

impl HeapRecord<'_> {
    /// The sub-record's tag.
    pub fn sub_tag(&self) -> SubTag {
        match self {
            HeapRecord::RootUnknown { .. } => SubTag::RootUnknown,
            HeapRecord::RootJniGlobal { .. } => SubTag::RootJniGlobal,
            HeapRecord::RootJniLocal { .. } => SubTag::RootJniLocal,
            HeapRecord::RootJavaFrame { .. } => SubTag::RootJavaFrame,
            HeapRecord::RootNativeStack { .. } => SubTag::RootNativeStack,
            HeapRecord::RootStickyClass { .. } => SubTag::RootStickyClass,
            HeapRecord::RootThreadBlock { .. } => SubTag::RootThreadBlock,
            HeapRecord::RootMonitorUsed { .. } => SubTag::RootMonitorUsed,
            HeapRecord::RootThreadObject { .. } => SubTag::RootThreadObject,
            HeapRecord::ClassDump(_) => SubTag::ClassDump,
            HeapRecord::InstanceDump { .. } => SubTag::InstanceDump,
            HeapRecord::ObjectArrayDump { .. } => SubTag::ObjectArrayDump,
            HeapRecord::PrimitiveArrayDump { .. } => SubTag::PrimitiveArrayDump,
        }
    }
}

/// Parses one sub-record from the front of `c`.
#[inline]
pub(crate) fn parse_heap_record<'a>(c: &mut Cursor<'a>, id: IdSize) -> Result<HeapRecord<'a>> {
    let at = c.offset();
    let code = c.u1()?;
    let Some(tag) = SubTag::from_u8(code) else {
        return Err(Error::new(at, ErrorKind::UnknownSubTag(code)));
    };
    // Errors inside the sub-record name it and point at its tag byte.
    let mut body = Cursor::new(c.rest(), c.offset(), tag.name());
    let rebase = |e: Error| match e.kind() {
        ErrorKind::Truncated {
            needed,
            available,
            what,
        } => Error::new(
            at,
            ErrorKind::Truncated {
                what,
                needed: needed + (e.offset() - at),
                available: available + (e.offset() - at),
            },
        ),
        _ => e,
    };
    let record = parse_sub_body(tag, &mut body, id).map_err(rebase)?;
    let used = body.offset() - c.offset();
    c.bytes(used as usize)?;
    Ok(record)
}

#[inline]
fn parse_sub_body<'a>(tag: SubTag, c: &mut Cursor<'a>, id: IdSize) -> Result<HeapRecord<'a>> {
    Ok(match tag {
        SubTag::InstanceDump => {
            let object_id = c.id(id)?;
            let stack_trace_serial = c.u4()?;
            let class_id = c.id(id)?;
            let n = c.u4()?;
            let values = c.array(n.into(), 1)?;
            HeapRecord::InstanceDump {
                object_id,
                stack_trace_serial,
                class_id,
                values,
            }
        }
        SubTag::ObjectArrayDump => {
            let array_id = c.id(id)?;
            let stack_trace_serial = c.u4()?;
            let n = c.u4()?;
            let array_class_id = c.id(id)?;
            let bytes = c.array(n.into(), id.bytes())?;
            HeapRecord::ObjectArrayDump {
                array_id,
                stack_trace_serial,
                array_class_id,
                elements: IdList::whole(bytes, id),
            }
        }
        SubTag::PrimitiveArrayDump => {
            let array_id = c.id(id)?;
            let stack_trace_serial = c.u4()?;
            let length = c.u4()?;
            let element_type = c.basic_type("PRIMITIVE ARRAY DUMP")?;
            if element_type == BasicType::Object {
                return Err(c.error(ErrorKind::BadBasicType {
                    what: "PRIMITIVE ARRAY DUMP",
                    code: BasicType::Object as u8,
                }));
            }
            let data = c.array(length.into(), element_type.size(id))?;
            HeapRecord::PrimitiveArrayDump {
                array_id,
                stack_trace_serial,
                element_type,
                length,
                data,
            }
        }
        SubTag::ClassDump => HeapRecord::ClassDump(parse_class_dump(c, id)?),
        SubTag::RootUnknown => HeapRecord::RootUnknown {
            object_id: c.id(id)?,
        },
        SubTag::RootJniGlobal => HeapRecord::RootJniGlobal {
            object_id: c.id(id)?,
            jni_global_ref_id: c.id(id)?,
        },
        SubTag::RootJniLocal => HeapRecord::RootJniLocal {
            object_id: c.id(id)?,
            thread_serial: c.u4()?,
            frame_number: c.u4()?,
        },
        SubTag::RootJavaFrame => HeapRecord::RootJavaFrame {
            object_id: c.id(id)?,
            thread_serial: c.u4()?,
            frame_number: c.u4()?,
        },
        SubTag::RootNativeStack => HeapRecord::RootNativeStack {
            object_id: c.id(id)?,
            thread_serial: c.u4()?,
        },
        SubTag::RootStickyClass => HeapRecord::RootStickyClass {
            object_id: c.id(id)?,
        },
        SubTag::RootThreadBlock => HeapRecord::RootThreadBlock {
            object_id: c.id(id)?,
            thread_serial: c.u4()?,
        },
        SubTag::RootMonitorUsed => HeapRecord::RootMonitorUsed {
            object_id: c.id(id)?,
        },
        SubTag::RootThreadObject => HeapRecord::RootThreadObject {
            thread_object_id: c.id(id)?,
            thread_serial: c.u4()?,
            stack_trace_serial: c.u4()?,
        },
    })
}

fn parse_class_dump<'a>(c: &mut Cursor<'a>, id: IdSize) -> Result<ClassDump<'a>> {
    let class_id = c.id(id)?;
    let stack_trace_serial = c.u4()?;
    let super_class_id = c.id(id)?;
    let class_loader_id = c.id(id)?;
    let signers_id = c.id(id)?;
    let protection_domain_id = c.id(id)?;
    let reserved1 = c.id(id)?;
    let reserved2 = c.id(id)?;
    let instance_size = c.u4()?;

    let start = *c;
    let count = c.u2()?;
    for _ in 0..count {
        c.u2()?;
        let ty = c.basic_type("constant pool entry")?;
        c.bytes(ty.size(id))?;
    }
    let constant_pool = section(start, c, count);

    let start = *c;
    let count = c.u2()?;
    for _ in 0..count {
        c.id(id)?;
        let ty = c.basic_type("static field")?;
        c.bytes(ty.size(id))?;
    }
    let static_fields = section(start, c, count);

    let start = *c;
    let count = c.u2()?;
    for _ in 0..count {
        c.id(id)?;
        c.basic_type("instance field")?;
    }
    let instance_fields = section(start, c, count);

    Ok(ClassDump {
        class_id,
        stack_trace_serial,
        super_class_id,
        class_loader_id,
        signers_id,
        protection_domain_id,
        reserved1,
        reserved2,
        instance_size,
        constant_pool,
        static_fields,
        instance_fields,
        id_size: id,
    })
}

/// The entries between `start` (before the u2 count) and `end`.
fn section<'a>(start: Cursor<'a>, end: &Cursor<'a>, count: u16) -> Section<'a> {
    let all = start.rest();
    let used = (end.offset() - start.offset()) as usize;
    Section {
        count,
        bytes: all.get(2..used).unwrap_or(&[]),
    }
}

/// An iterator over the sub-records of a heap dump body.
///
/// After an error it yields nothing more.
#[derive(Clone, Debug)]
pub struct HeapRecords<'a> {
    cursor: Cursor<'a>,
    id_size: IdSize,
    failed: bool,
}

impl<'a> HeapRecords<'a> {
    pub(crate) fn new(data: &'a [u8], offset: u64, id_size: IdSize) -> HeapRecords<'a> {
        HeapRecords {
            cursor: Cursor::new(data, offset, "heap dump"),
            id_size,
            failed: false,
        }
    }

    /// The sub-records of a heap dump body held in `data`, whose first byte is at file
    /// offset `offset`.
    pub fn over(data: &'a [u8], offset: u64, id_size: IdSize) -> HeapRecords<'a> {
        HeapRecords::new(data, offset, id_size)
    }

    /// The file offset of the next sub-record.
    pub fn offset(&self) -> u64 {
        self.cursor.offset()
    }

    /// Reads the next sub-record and the file offset of its tag byte.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> Result<Option<(u64, HeapRecord<'a>)>> {
        if self.failed || self.cursor.is_empty() {
            return Ok(None);
        }
        let at = self.cursor.offset();
        match parse_heap_record(&mut self.cursor, self.id_size) {
            Ok(r) => Ok(Some((at, r))),
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }
}

impl<'a> Iterator for HeapRecords<'a> {
    type Item = Result<(u64, HeapRecord<'a>)>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        HeapRecords::next(self).transpose()
    }
}
