//! Owns the symbol index of an HPROF file: what its STRING (UTF8), LOAD CLASS, STACK FRAME
//! and STACK TRACE records say, indexed by their identifiers and serials as a reader meets
//! them, so that every reader of a file (`hprof print`, the heap graph, the profile model)
//! names classes, methods, frames and traces the same way.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use crate::{IdList, Record, java_class_name};

/// What a STACK FRAME record says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameRecord {
    /// The method name's STRING identifier.
    pub method_name_id: u64,
    /// The method signature's STRING identifier.
    pub signature_id: u64,
    /// The source file name's STRING identifier (0: none).
    pub source_file_id: u64,
    /// The class's serial number.
    pub class_serial: u32,
    /// Line number: > 0 a line, 0 none, -1 unknown, -2 compiled, -3 native.
    pub line: i32,
}

/// What a STACK TRACE record says.
#[derive(Debug, Clone, Copy)]
pub struct TraceRecord<'a> {
    /// The thread's serial number (0: none).
    pub thread_serial: u32,
    /// The frames' identifiers, innermost first.
    pub frames: IdList<'a>,
}

/// The names, classes, frames and traces of a file, borrowed from its bytes.
#[derive(Debug, Default)]
pub struct Symbols<'a> {
    strings: FxHashMap<u64, &'a [u8]>,
    /// Class id → its name's STRING id.
    class_names: FxHashMap<u64, u64>,
    /// Class serial → (class id, its name's STRING id), as that serial's LOAD CLASS says
    /// (a class id can be reused by a later class).
    class_serials: FxHashMap<u32, (u64, u64)>,
    frames: FxHashMap<u64, FrameRecord>,
    traces: FxHashMap<u32, TraceRecord<'a>>,
}

impl<'a> Symbols<'a> {
    /// An empty index.
    pub fn new() -> Symbols<'a> {
        Symbols::default()
    }

    /// Takes in `record` if it is one the index holds (STRING, LOAD CLASS, STACK FRAME,
    /// STACK TRACE); says whether it was. A later record with the same identifier replaces
    /// an earlier one.
    pub fn add(&mut self, record: &Record<'a>) -> bool {
        match *record {
            Record::Utf8 { id, text } => {
                self.strings.insert(id, text);
            }
            Record::LoadClass {
                class_serial,
                class_id,
                name_id,
                ..
            } => {
                self.class_names.insert(class_id, name_id);
                self.class_serials.insert(class_serial, (class_id, name_id));
            }
            Record::StackFrame {
                frame_id,
                method_name_id,
                signature_id,
                source_file_id,
                class_serial,
                line,
            } => {
                self.frames.insert(
                    frame_id,
                    FrameRecord {
                        method_name_id,
                        signature_id,
                        source_file_id,
                        class_serial,
                        line,
                    },
                );
            }
            Record::StackTrace {
                serial,
                thread_serial,
                frames,
            } => {
                self.traces.insert(
                    serial,
                    TraceRecord {
                        thread_serial,
                        frames,
                    },
                );
            }
            _ => return false,
        }
        true
    }

    /// The bytes of the STRING `id`.
    pub fn string(&self, id: u64) -> Option<&'a [u8]> {
        self.strings.get(&id).copied()
    }

    /// The text of the STRING `id` (invalid UTF-8 replaced).
    pub fn text(&self, id: u64) -> Option<Cow<'a, str>> {
        self.string(id).map(String::from_utf8_lossy)
    }

    /// The STRING id of the name of the class `class_id`.
    pub fn class_name_id(&self, class_id: u64) -> Option<u64> {
        self.class_names.get(&class_id).copied()
    }

    /// The name of the class `class_id` as Java writes it (`java.lang.String`, `int[]`).
    pub fn class_name(&self, class_id: u64) -> Option<String> {
        let name = self.text(self.class_name_id(class_id)?)?;
        Some(java_class_name(&name))
    }

    /// The class id of the class serial `serial`.
    pub fn class_id(&self, serial: u32) -> Option<u64> {
        self.class_serials.get(&serial).map(|&(id, _)| id)
    }

    /// The name, as Java writes it, of the class of serial `serial`.
    pub fn class_name_by_serial(&self, serial: u32) -> Option<String> {
        let &(_, name_id) = self.class_serials.get(&serial)?;
        Some(java_class_name(&self.text(name_id)?))
    }

    /// The STACK FRAME `frame_id`.
    pub fn frame(&self, frame_id: u64) -> Option<FrameRecord> {
        self.frames.get(&frame_id).copied()
    }

    /// The STACK TRACE of serial `serial`.
    pub fn trace(&self, serial: u32) -> Option<TraceRecord<'a>> {
        self.traces.get(&serial).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Header, IdSize, Records, Version, Writer};

    #[test]
    fn names_frames_and_traces_are_found_by_their_ids() {
        let header = Header {
            version: Version::V1_0_2,
            id_size: IdSize::Eight,
            timestamp_ms: 0,
        };
        let mut w = Writer::new(Vec::new(), header).unwrap();
        w.utf8(0, 1, b"java/lang/String").unwrap();
        w.utf8(0, 2, b"length").unwrap();
        w.utf8(0, 3, b"String.java").unwrap();
        w.load_class(0, 7, 0x100, 0, 1).unwrap();
        w.stack_frame(0, 0x200, 2, 0, 3, 7, 42).unwrap();
        w.stack_trace(0, 5, 9, &[0x200]).unwrap();
        let bytes = w.finish().unwrap();
        let (_, mut records) = Records::new(&bytes).unwrap();
        let mut symbols = Symbols::new();
        while let Some((_, record)) = records.next().unwrap() {
            assert!(symbols.add(&record));
        }
        assert_eq!(symbols.text(2).as_deref(), Some("length"));
        assert_eq!(
            symbols.class_name(0x100).as_deref(),
            Some("java.lang.String")
        );
        assert_eq!(symbols.class_id(7), Some(0x100));
        assert_eq!(
            symbols.class_name_by_serial(7).as_deref(),
            Some("java.lang.String")
        );
        let frame = symbols.frame(0x200).unwrap();
        assert_eq!((frame.method_name_id, frame.line), (2, 42));
        let trace = symbols.trace(5).unwrap();
        assert_eq!(trace.thread_serial, 9);
        assert_eq!(trace.frames.iter().collect::<Vec<_>>(), vec![0x200]);
        assert_eq!(symbols.string(99), None);
        assert!(symbols.trace(6).is_none());
    }
}
