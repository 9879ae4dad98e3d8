//! Owns the tag numbers of top-level records and heap dump sub-records, and their names.

macro_rules! tags {
    ($(#[$meta:meta])* $ty:ident { $($(#[$vmeta:meta])* $variant:ident = $code:literal, $name:literal;)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum $ty {
            $($(#[$vmeta])* $variant = $code,)*
        }

        impl $ty {
            /// Every tag, in the order the format describes them.
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)*];

            /// The tag with this byte value.
            #[inline]
            pub fn from_u8(code: u8) -> Option<$ty> {
                match code {
                    $($code => Some($ty::$variant),)*
                    _ => None,
                }
            }

            /// The record kind's name as the format spells it, e.g. `HEAP DUMP SEGMENT`.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)*
                }
            }
        }
    };
}

tags! {
    /// The tag of a top-level record.
    Tag {
        /// A UTF-8 string with an identifier.
        Utf8 = 0x01, "STRING";
        /// A class was loaded.
        LoadClass = 0x02, "LOAD CLASS";
        /// A class was unloaded.
        UnloadClass = 0x03, "UNLOAD CLASS";
        /// One frame of a stack trace.
        StackFrame = 0x04, "STACK FRAME";
        /// A stack trace: a list of frames.
        StackTrace = 0x05, "STACK TRACE";
        /// A set of allocation sites.
        AllocSites = 0x06, "ALLOC SITES";
        /// Heap totals.
        HeapSummary = 0x07, "HEAP SUMMARY";
        /// A thread started.
        StartThread = 0x0A, "START THREAD";
        /// A thread ended.
        EndThread = 0x0B, "END THREAD";
        /// A whole heap dump (format 1.0.1).
        HeapDump = 0x0C, "HEAP DUMP";
        /// CPU sample counts per trace.
        CpuSamples = 0x0D, "CPU SAMPLES";
        /// The profiler's settings.
        ControlSettings = 0x0E, "CONTROL SETTINGS";
        /// One segment of a heap dump (format 1.0.2).
        HeapDumpSegment = 0x1C, "HEAP DUMP SEGMENT";
        /// The end of a segmented heap dump.
        HeapDumpEnd = 0x2C, "HEAP DUMP END";
        /// hprof-rs's extension: samples with the times they were taken (readers that do not
        /// know it skip it by its length).
        TimedSamples = 0x70, "TIMED SAMPLES";
        /// hprof-rs's extension: the allocation site of objects of the heap dump before it
        /// (see [`ObjectSites`](crate::ObjectSites)); other readers skip it by its length
        /// (VisualVM's reader only below 0x80: it indexes a table with the signed byte).
        ObjectSites = 0x50, "OBJECT SITES";
    }
}

tags! {
    /// The tag of a heap dump sub-record.
    SubTag {
        /// A root of unknown kind.
        RootUnknown = 0xFF, "ROOT UNKNOWN";
        /// A JNI global reference.
        RootJniGlobal = 0x01, "ROOT JNI GLOBAL";
        /// A JNI local reference.
        RootJniLocal = 0x02, "ROOT JNI LOCAL";
        /// A local variable of a Java frame.
        RootJavaFrame = 0x03, "ROOT JAVA FRAME";
        /// A reference from a native stack.
        RootNativeStack = 0x04, "ROOT NATIVE STACK";
        /// A system class.
        RootStickyClass = 0x05, "ROOT STICKY CLASS";
        /// A reference from a thread block.
        RootThreadBlock = 0x06, "ROOT THREAD BLOCK";
        /// An object used as a monitor.
        RootMonitorUsed = 0x07, "ROOT MONITOR USED";
        /// A thread object.
        RootThreadObject = 0x08, "ROOT THREAD OBJECT";
        /// A class, its statics and its field layout.
        ClassDump = 0x20, "CLASS DUMP";
        /// An object with its field values.
        InstanceDump = 0x21, "INSTANCE DUMP";
        /// An array of references.
        ObjectArrayDump = 0x22, "OBJECT ARRAY DUMP";
        /// An array of a primitive type.
        PrimitiveArrayDump = 0x23, "PRIMITIVE ARRAY DUMP";
    }
}

impl SubTag {
    /// True for the GC root kinds.
    pub fn is_root(self) -> bool {
        !matches!(
            self,
            SubTag::ClassDump
                | SubTag::InstanceDump
                | SubTag::ObjectArrayDump
                | SubTag::PrimitiveArrayDump
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip() {
        for &t in Tag::ALL {
            assert_eq!(Tag::from_u8(t as u8), Some(t));
        }
        for &t in SubTag::ALL {
            assert_eq!(SubTag::from_u8(t as u8), Some(t));
        }
        assert_eq!(Tag::ALL.len(), 16);
        assert_eq!(SubTag::ALL.len(), 13);
        assert_eq!(Tag::from_u8(0x09), None);
        assert_eq!(SubTag::from_u8(0x24), None);
        assert_eq!(Tag::HeapDumpSegment.name(), "HEAP DUMP SEGMENT");
        assert_eq!(Tag::from_u8(0x70), Some(Tag::TimedSamples));
        assert_eq!(SubTag::RootThreadObject.name(), "ROOT THREAD OBJECT");
    }
}
