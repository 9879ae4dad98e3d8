//! Heap dump lines from `hprof-format`'s heap records: the parts of a HEAP DUMP section that
//! `hprof print` (reading a file) and the agent (writing one) render alike.

use std::io::{self, Write};

use hprof_format::{HeapRecord, IdList, Value};

use crate::heap::{HeapLine, RootKind, write_heap_line};

/// Writes the ROOT line of a root sub-record (nothing for other sub-records). `jni_trace` is
/// the trace printed for JNI global roots (binary files carry none); `class_name` names the
/// class of a system-class root.
pub fn write_root_line(
    out: &mut dyn Write,
    record: &HeapRecord<'_>,
    jni_trace: u32,
    class_name: &dyn Fn(u64) -> String,
) -> io::Result<()> {
    let name;
    let (id, kind) = match *record {
        HeapRecord::RootUnknown { object_id } => (object_id, RootKind::Unknown),
        HeapRecord::RootJniGlobal {
            object_id,
            jni_global_ref_id,
        } => (
            object_id,
            RootKind::JniGlobal {
                reference: jni_global_ref_id,
                trace: jni_trace,
            },
        ),
        HeapRecord::RootJniLocal {
            object_id,
            thread_serial,
            frame_number,
        } => (
            object_id,
            RootKind::JniLocal {
                thread: thread_serial,
                frame: frame_number as i32,
            },
        ),
        HeapRecord::RootJavaFrame {
            object_id,
            thread_serial,
            frame_number,
        } => (
            object_id,
            RootKind::JavaStack {
                thread: thread_serial,
                frame: frame_number as i32,
            },
        ),
        HeapRecord::RootNativeStack {
            object_id,
            thread_serial,
        } => (
            object_id,
            RootKind::NativeStack {
                thread: thread_serial,
            },
        ),
        HeapRecord::RootStickyClass { object_id } => {
            name = class_name(object_id);
            (object_id, RootKind::SystemClass { name: &name })
        }
        HeapRecord::RootThreadBlock {
            object_id,
            thread_serial,
        } => (
            object_id,
            RootKind::ThreadBlock {
                thread: thread_serial,
            },
        ),
        HeapRecord::RootMonitorUsed { object_id } => (object_id, RootKind::BusyMonitor),
        HeapRecord::RootThreadObject {
            thread_object_id,
            thread_serial,
            stack_trace_serial,
        } => (
            thread_object_id,
            RootKind::Thread {
                serial: thread_serial,
                trace: stack_trace_serial,
            },
        ),
        _ => return Ok(()),
    };
    write_heap_line(out, &HeapLine::Root { id, kind })
}

/// Writes an object array's ARR line and one line per non-null element; `size` is the
/// array's size in bytes and `class` the array class's name.
pub fn write_object_array_lines(
    out: &mut dyn Write,
    id: u64,
    size: u64,
    trace: u32,
    class: &str,
    class_id: u64,
    elements: IdList<'_>,
) -> io::Result<()> {
    let length = elements.len() as u64;
    write_heap_line(
        out,
        &HeapLine::ObjectArray {
            id,
            size,
            trace,
            length,
            class,
            class_id,
        },
    )?;
    for (index, value) in elements.iter().enumerate() {
        if value != 0 {
            write_heap_line(
                out,
                &HeapLine::Element {
                    index: index as u64,
                    value,
                },
            )?;
        }
    }
    Ok(())
}

/// Writes a class's CLS line and its non-null references: `references` are the super class,
/// loader, signers and protection domain ids (0 for none), then the non-null static object
/// fields and constant pool entries.
#[allow(clippy::too_many_arguments)]
pub fn write_class_lines<S: AsRef<str>>(
    out: &mut dyn Write,
    id: u64,
    name: &str,
    trace: u32,
    references: [u64; 4],
    statics: impl IntoIterator<Item = (S, Value)>,
    constant_pool: impl IntoIterator<Item = (u16, Value)>,
) -> io::Result<()> {
    write_heap_line(out, &HeapLine::Class { id, name, trace })?;
    for (what, value) in ["super", "loader", "signers", "domain"]
        .into_iter()
        .zip(references)
    {
        if value != 0 {
            write_heap_line(out, &HeapLine::ClassReference { what, value })?;
        }
    }
    for (field, value) in statics {
        if let Value::Object(value @ 1..) = value {
            write_heap_line(
                out,
                &HeapLine::Static {
                    name: field.as_ref(),
                    value,
                },
            )?;
        }
    }
    for (index, value) in constant_pool {
        if let Value::Object(value @ 1..) = value {
            write_heap_line(
                out,
                &HeapLine::ConstantPool {
                    index: u32::from(index),
                    value,
                },
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use hprof_format::IdSize;

    #[test]
    fn roots_arrays_and_classes() {
        let mut out = Vec::new();
        let name = |_| "java.lang.Object".to_string();
        write_root_line(
            &mut out,
            &HeapRecord::RootStickyClass { object_id: 0x10 },
            0,
            &name,
        )
        .unwrap();
        write_root_line(
            &mut out,
            &HeapRecord::RootJniGlobal {
                object_id: 0x11,
                jni_global_ref_id: 2,
            },
            300000,
            &name,
        )
        .unwrap();
        let elements = [0u64, 0x20, 0]
            .iter()
            .flat_map(|e| e.to_be_bytes())
            .collect::<Vec<u8>>();
        write_object_array_lines(
            &mut out,
            0x12,
            32,
            300000,
            "X[]",
            0x13,
            IdList::new(&elements, IdSize::Eight).unwrap(),
        )
        .unwrap();
        write_class_lines(
            &mut out,
            0x13,
            "X[]",
            300000,
            [0x10, 0, 0, 0],
            [("s", Value::Object(0x21)), ("n", Value::Int(3))],
            [(2u16, Value::Object(0x22))],
        )
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "ROOT 10 (kind=<system class>, name=java.lang.Object)\n\
             ROOT 11 (kind=<JNI global ref>, id=2, trace=300000)\n\
             ARR 12 (sz=32, trace=300000, nelems=3, elem type=X[]@13)\n\t[1]\t\t20\n\
             CLS 13 (name=X[], trace=300000)\n\tsuper\t\t10\n\tstatic s\t21\n\tconstant pool entry 2\t22\n"
        );
    }
}
