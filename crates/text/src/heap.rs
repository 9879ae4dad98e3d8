//! HEAP DUMP sections: the BEGIN/END lines and the ROOT, OBJ, ARR and CLS lines between.

use std::io::{self, Write};

/// What kind of GC root a ROOT line names, with the kind's own details.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind<'a> {
    /// A thread object: `kind=<thread>, id=<serial>, trace=<serial>`.
    Thread {
        /// Thread serial.
        serial: u32,
        /// Trace serial of the thread.
        trace: u32,
    },
    /// An object held by a thread's block: `kind=<thread block>, thread=<serial>`.
    ThreadBlock {
        /// Thread serial.
        thread: u32,
    },
    /// A JNI global reference: `kind=<JNI global ref>, id=<hex>, trace=<serial>`.
    JniGlobal {
        /// Id of the global reference.
        reference: u64,
        /// Trace serial of the object.
        trace: u32,
    },
    /// A JNI local reference: `kind=<JNI local ref>, thread=…, frame=…`.
    JniLocal {
        /// Thread serial.
        thread: u32,
        /// Frame depth.
        frame: i32,
    },
    /// A system class: `kind=<system class>, name=…`.
    SystemClass {
        /// Dotted class name.
        name: &'a str,
    },
    /// A monitor in use: `kind=<busy monitor>`.
    BusyMonitor,
    /// A Java frame's local: `kind=<Java stack>, thread=…, frame=…`.
    JavaStack {
        /// Thread serial.
        thread: u32,
        /// Frame depth.
        frame: i32,
    },
    /// A native stack's reference: `kind=<native stack>, thread=…`.
    NativeStack {
        /// Thread serial.
        thread: u32,
    },
    /// Any other root: `kind=<unknown>`.
    Unknown,
}

/// One line (or one field line) of a heap dump section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeapLine<'a> {
    /// `ROOT <id> (kind=…)`.
    Root {
        /// The root object's id.
        id: u64,
        /// Its kind.
        kind: RootKind<'a>,
    },
    /// `OBJ <id> (sz=…, trace=…, class=<name>@<class id>)`.
    Object {
        /// Object id.
        id: u64,
        /// Object size in bytes.
        size: u64,
        /// Allocation trace serial.
        trace: u32,
        /// Dotted class name.
        class: &'a str,
        /// Class object id.
        class_id: u64,
    },
    /// A non-null reference field of the object above: `\t<name>\t<id>`.
    Field {
        /// Field name.
        name: &'a str,
        /// Referenced object id.
        value: u64,
    },
    /// `ARR <id> (sz=…, trace=…, nelems=…, elem type=<array class>@<class id>)`.
    ObjectArray {
        /// Array id.
        id: u64,
        /// Array size in bytes.
        size: u64,
        /// Allocation trace serial.
        trace: u32,
        /// Number of elements, trailing nulls included.
        length: u64,
        /// Dotted array class name (`java.lang.String[]`).
        class: &'a str,
        /// Array class id.
        class_id: u64,
    },
    /// A non-null element of the object array above: `\t[<index>]\t\t<id>`.
    Element {
        /// Element index.
        index: u64,
        /// Referenced object id.
        value: u64,
    },
    /// `ARR <id> (sz=…, trace=…, nelems=…, elem type=<type>[])`.
    PrimitiveArray {
        /// Array id.
        id: u64,
        /// Array size in bytes (the whole object, header included).
        size: u64,
        /// Allocation trace serial.
        trace: u32,
        /// Number of elements.
        length: u64,
        /// Array type name (`char[]`).
        type_name: &'a str,
    },
    /// `CLS <id> (name=…, trace=…)`.
    Class {
        /// Class object id.
        id: u64,
        /// Dotted class name.
        name: &'a str,
        /// Load trace serial.
        trace: u32,
    },
    /// A non-null reference of the class above: `\tsuper\t\t<id>` and likewise
    /// `loader`, `signers`, `domain`.
    ClassReference {
        /// `super`, `loader`, `signers` or `domain`.
        what: &'a str,
        /// Referenced object id.
        value: u64,
    },
    /// A non-null static reference field of the class above: `\tstatic <name>\t<id>`.
    Static {
        /// Field name.
        name: &'a str,
        /// Referenced object id.
        value: u64,
    },
    /// A resolved constant pool reference: `\tconstant pool entry <index>\t<id>`.
    ConstantPool {
        /// Constant pool index.
        index: u32,
        /// Referenced object id.
        value: u64,
    },
}

/// Writes `HEAP DUMP BEGIN (<n> objects, <n> bytes) <date>`.
pub fn write_heap_begin(
    out: &mut dyn Write,
    objects: u64,
    bytes: u64,
    date: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "HEAP DUMP BEGIN ({objects} objects, {bytes} bytes) {date}"
    )
}

/// Writes `HEAP DUMP END`.
pub fn write_heap_end(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(b"HEAP DUMP END\n")
}

/// Writes one heap dump line.
pub fn write_heap_line(out: &mut dyn Write, line: &HeapLine<'_>) -> io::Result<()> {
    match *line {
        HeapLine::Root { id, kind } => {
            write!(out, "ROOT {id:x} (kind=")?;
            match kind {
                RootKind::Thread { serial, trace } => {
                    writeln!(out, "<thread>, id={serial}, trace={trace})")
                }
                RootKind::ThreadBlock { thread } => {
                    writeln!(out, "<thread block>, thread={thread})")
                }
                RootKind::JniGlobal { reference, trace } => {
                    writeln!(out, "<JNI global ref>, id={reference:x}, trace={trace})")
                }
                RootKind::JniLocal { thread, frame } => {
                    writeln!(out, "<JNI local ref>, thread={thread}, frame={frame})")
                }
                RootKind::SystemClass { name } => writeln!(out, "<system class>, name={name})"),
                RootKind::BusyMonitor => out.write_all(b"<busy monitor>)\n"),
                RootKind::JavaStack { thread, frame } => {
                    writeln!(out, "<Java stack>, thread={thread}, frame={frame})")
                }
                RootKind::NativeStack { thread } => {
                    writeln!(out, "<native stack>, thread={thread})")
                }
                RootKind::Unknown => out.write_all(b"<unknown>)\n"),
            }
        }
        HeapLine::Object {
            id,
            size,
            trace,
            class,
            class_id,
        } => {
            writeln!(
                out,
                "OBJ {id:x} (sz={size}, trace={trace}, class={class}@{class_id:x})"
            )
        }
        HeapLine::Field { name, value } => {
            let pad = if name.len() < 8 { "\t" } else { "" };
            writeln!(out, "\t{name}\t{pad}{value:x}")
        }
        HeapLine::ObjectArray {
            id,
            size,
            trace,
            length,
            class,
            class_id,
        } => writeln!(
            out,
            "ARR {id:x} (sz={size}, trace={trace}, nelems={length}, elem type={class}@{class_id:x})"
        ),
        HeapLine::Element { index, value } => writeln!(out, "\t[{index}]\t\t{value:x}"),
        HeapLine::PrimitiveArray {
            id,
            size,
            trace,
            length,
            type_name,
        } => writeln!(
            out,
            "ARR {id:x} (sz={size}, trace={trace}, nelems={length}, elem type={type_name})"
        ),
        HeapLine::Class { id, name, trace } => {
            writeln!(out, "CLS {id:x} (name={name}, trace={trace})")
        }
        HeapLine::ClassReference { what, value } => writeln!(out, "\t{what}\t\t{value:x}"),
        HeapLine::Static { name, value } => writeln!(out, "\tstatic {name}\t{value:x}"),
        HeapLine::ConstantPool { index, value } => {
            writeln!(out, "\tconstant pool entry {index}\t{value:x}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(lines: &[HeapLine<'_>]) -> String {
        let mut out = Vec::new();
        for line in lines {
            write_heap_line(&mut out, line).unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn root_lines_match_the_original() {
        let text = render(&[
            HeapLine::Root {
                id: 0,
                kind: RootKind::Thread {
                    serial: 200000,
                    trace: 300000,
                },
            },
            HeapLine::Root {
                id: 0x5009a62c,
                kind: RootKind::ThreadBlock { thread: 200005 },
            },
            HeapLine::Root {
                id: 0x5009a62c,
                kind: RootKind::JavaStack {
                    thread: 200000,
                    frame: 2,
                },
            },
            HeapLine::Root {
                id: 1,
                kind: RootKind::JniGlobal {
                    reference: 0x1f,
                    trace: 300000,
                },
            },
            HeapLine::Root {
                id: 2,
                kind: RootKind::JniLocal {
                    thread: 200001,
                    frame: 0,
                },
            },
            HeapLine::Root {
                id: 3,
                kind: RootKind::SystemClass {
                    name: "java.lang.Object",
                },
            },
            HeapLine::Root {
                id: 4,
                kind: RootKind::BusyMonitor,
            },
            HeapLine::Root {
                id: 5,
                kind: RootKind::NativeStack { thread: 200001 },
            },
            HeapLine::Root {
                id: 6,
                kind: RootKind::Unknown,
            },
        ]);
        assert_eq!(
            text,
            "ROOT 0 (kind=<thread>, id=200000, trace=300000)\n\
             ROOT 5009a62c (kind=<thread block>, thread=200005)\n\
             ROOT 5009a62c (kind=<Java stack>, thread=200000, frame=2)\n\
             ROOT 1 (kind=<JNI global ref>, id=1f, trace=300000)\n\
             ROOT 2 (kind=<JNI local ref>, thread=200001, frame=0)\n\
             ROOT 3 (kind=<system class>, name=java.lang.Object)\n\
             ROOT 4 (kind=<busy monitor>)\n\
             ROOT 5 (kind=<native stack>, thread=200001)\n\
             ROOT 6 (kind=<unknown>)\n"
        );
    }

    #[test]
    fn object_array_and_class_lines() {
        let text = render(&[
            HeapLine::Object {
                id: 0x50000116,
                size: 24,
                trace: 300001,
                class: "java.lang.Thread",
                class_id: 0x500000a0,
            },
            HeapLine::Field {
                name: "name",
                value: 0x50000117,
            },
            HeapLine::Field {
                name: "contextClassLoader",
                value: 0x50008c53,
            },
            HeapLine::ObjectArray {
                id: 0x10,
                size: 32,
                trace: 300000,
                length: 4,
                class: "java.lang.String[]",
                class_id: 0x20,
            },
            HeapLine::Element {
                index: 3,
                value: 0x30,
            },
            HeapLine::PrimitiveArray {
                id: 0x11,
                size: 24,
                trace: 300000,
                length: 3,
                type_name: "char[]",
            },
            HeapLine::Class {
                id: 0x20,
                name: "java.lang.String[]",
                trace: 300000,
            },
            HeapLine::ClassReference {
                what: "super",
                value: 0x21,
            },
            HeapLine::Static {
                name: "CACHE",
                value: 0x22,
            },
            HeapLine::ConstantPool {
                index: 7,
                value: 0x23,
            },
        ]);
        assert_eq!(
            text,
            "OBJ 50000116 (sz=24, trace=300001, class=java.lang.Thread@500000a0)\n\
             \tname\t\t50000117\n\
             \tcontextClassLoader\t50008c53\n\
             ARR 10 (sz=32, trace=300000, nelems=4, elem type=java.lang.String[]@20)\n\
             \t[3]\t\t30\n\
             ARR 11 (sz=24, trace=300000, nelems=3, elem type=char[])\n\
             CLS 20 (name=java.lang.String[], trace=300000)\n\
             \tsuper\t\t21\n\
             \tstatic CACHE\t22\n\
             \tconstant pool entry 7\t23\n"
        );
    }

    #[test]
    fn begin_and_end() {
        let mut out = Vec::new();
        write_heap_begin(&mut out, 632363, 54100616, "Sun Nov 22 09:04:45 2026").unwrap();
        write_heap_end(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "HEAP DUMP BEGIN (632363 objects, 54100616 bytes) Sun Nov 22 09:04:45 2026\nHEAP DUMP END\n"
        );
    }
}
