//! Owns HotSpot's shallow sizes of the objects of a heap dump, as a 64-bit JVM with compressed
//! oops and compressed class pointers lays them out (what `jcmd GC.class_histogram`, VisualVM
//! and `java.hprof.txt` show): an instance is a 12-byte header and its fields, references
//! counted as 4 bytes, rounded up to 8; an array is a 16-byte header and its elements, rounded
//! up to 8. A dump records no layout, so every reader of dumps sizes objects by these rules:
//! `hprof summary`, `hprof print`, the heap graph and the agent's text output.

use crate::{BasicType, ClassDump, IdSize};

/// Bytes of an instance's header (mark word and compressed class pointer).
pub const INSTANCE_HEADER: u64 = 12;
/// Bytes of an array's header (mark word, compressed class pointer, length).
pub const ARRAY_HEADER: u64 = 16;
/// Bytes of a reference (a compressed oop).
pub const REFERENCE: u64 = 4;

/// `n` rounded up to a multiple of 8 (objects are 8-byte aligned).
pub fn align8(n: u64) -> u64 {
    n.saturating_add(7) & !7
}

/// Bytes a field or array element of type `ty` takes.
pub fn field_bytes(ty: BasicType) -> u64 {
    match ty {
        BasicType::Object => REFERENCE,
        other => other.size(IdSize::Eight) as u64,
    }
}

/// Shallow size of an instance whose fields (its class's and every superclass's) take
/// `fields` bytes.
pub fn instance_size(fields: u64) -> u64 {
    align8(INSTANCE_HEADER.saturating_add(fields))
}

/// Shallow size of an object array of `length` elements.
pub fn object_array_size(length: u64) -> u64 {
    primitive_array_size(BasicType::Object, length)
}

/// Shallow size of an array of `length` elements of type `element`.
pub fn primitive_array_size(element: BasicType, length: u64) -> u64 {
    align8(ARRAY_HEADER.saturating_add(field_bytes(element).saturating_mul(length)))
}

/// Bytes the instance fields a CLASS DUMP declares take (its own, not its superclasses').
pub fn own_field_bytes(class: &ClassDump<'_>) -> u64 {
    class.instance_fields().map(|(_, ty)| field_bytes(ty)).sum()
}

/// The instance sizes of the classes of a dump, from each class's own fields and its
/// superclass: feed it every CLASS DUMP ([`ClassSizes::add`]), then ask.
#[derive(Debug, Default, Clone)]
pub struct ClassSizes {
    /// Class id → (superclass id, bytes of its own fields).
    layouts: std::collections::HashMap<u64, (u64, u64)>,
}

impl ClassSizes {
    /// An empty table.
    pub fn new() -> ClassSizes {
        ClassSizes::default()
    }

    /// Records the layout a CLASS DUMP gives.
    pub fn add(&mut self, class: &ClassDump<'_>) {
        self.layouts.insert(
            class.class_id,
            (class.super_class_id, own_field_bytes(class)),
        );
    }

    /// Adds every layout of `other`.
    pub fn merge(&mut self, other: ClassSizes) {
        self.layouts.extend(other.layouts);
    }

    /// Shallow size of an instance of `class_id`: its header and the fields of its whole
    /// class chain (a class the dump does not describe adds nothing; a chain longer than any
    /// real one, a corrupt cycle, stops).
    pub fn instance_size(&self, class_id: u64) -> u64 {
        let mut fields = 0u64;
        let mut id = class_id;
        for _ in 0..4096 {
            let Some(&(super_id, own)) = self.layouts.get(&id) else {
                break;
            };
            fields = fields.saturating_add(own);
            if super_id == 0 {
                break;
            }
            id = super_id;
        }
        instance_size(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shallow_sizes_follow_hotspot_with_compressed_oops() {
        assert_eq!(object_array_size(0), 16);
        assert_eq!(object_array_size(1), 24);
        assert_eq!(object_array_size(10), 56);
        assert_eq!(primitive_array_size(BasicType::Byte, 0), 16);
        assert_eq!(primitive_array_size(BasicType::Byte, 9), 32);
        assert_eq!(primitive_array_size(BasicType::Long, 3), 40);
        assert_eq!(primitive_array_size(BasicType::Int, 10), 56);
        assert_eq!(instance_size(0), 16);
        assert_eq!(instance_size(4), 16);
        assert_eq!(instance_size(5), 24);
        assert_eq!(field_bytes(BasicType::Object), 4);
        assert_eq!(field_bytes(BasicType::Double), 8);
        // Lengths from a corrupt file never overflow.
        assert_eq!(
            primitive_array_size(BasicType::Long, u64::MAX),
            align8(u64::MAX)
        );
    }
}
