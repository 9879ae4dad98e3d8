//! THREAD START / THREAD END lines and TRACE blocks.

use std::io::{self, Write};

/// Where in its source a frame is, as the text format prints it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineInfo {
    /// A source line number.
    Line(u32),
    /// No line known (`lineno=n`, native methods, no line table): `Unknown line`.
    Unknown,
    /// A compiled frame without line information: `Compiled method`.
    Compiled,
    /// A native method: `Native method`.
    Native,
    /// A function of native code (a JNI library, libc, the JVM itself) named by its library
    /// and symbol: the frame prints as `libc.so.6.memcpy(Native method)`, without a source.
    NativeCode,
    /// A function of the kernel: the frame prints as `[kernel].do_syscall_64(Kernel)`.
    KernelCode,
}

impl LineInfo {
    /// The line value of a binary STACK FRAME record: a positive number is a line,
    /// -2 a compiled method, -3 a native method, anything else unknown.
    pub fn from_binary(line: i32) -> LineInfo {
        match line {
            n if n > 0 => LineInfo::Line(n as u32),
            -2 => LineInfo::Compiled,
            -3 => LineInfo::Native,
            _ => LineInfo::Unknown,
        }
    }

    /// The line information of a binary STACK FRAME of line `line` and source file `source`:
    /// a frame of native or kernel code is a native method (-3) whose source file is its
    /// library's path (`/usr/lib/x86_64-linux-gnu/libc.so.6`), or a name in brackets
    /// (`[kernel]`, `[vdso]`), which no Java source file has.
    pub fn from_stack_frame(line: i32, source: Option<&str>) -> LineInfo {
        match (line, source) {
            (-3, Some(KERNEL)) => LineInfo::KernelCode,
            (-3, Some(s)) if s.starts_with('/') || s.starts_with('[') => LineInfo::NativeCode,
            _ => LineInfo::from_binary(line),
        }
    }
}

/// The library name (class name and source file) of the kernel's frames.
pub const KERNEL: &str = "[kernel]";

/// One frame of a stack trace. Missing names print as the original's placeholders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame<'a> {
    /// Dotted class name (`java.lang.String`, `int[]`).
    pub class: &'a str,
    /// Method name, or `None` for `<Unknown Method>`.
    pub method: Option<&'a str>,
    /// Source file name, or `None` for `<Unknown Source>`.
    pub source: Option<&'a str>,
    /// Line information.
    pub line: LineInfo,
}

/// Writes `THREAD START (obj=…, id = …, name="…", group="…")`.
pub fn write_thread_start(
    out: &mut dyn Write,
    object_id: u64,
    thread_serial: u32,
    name: &str,
    group: &str,
) -> io::Result<()> {
    writeln!(
        out,
        "THREAD START (obj={object_id:x}, id = {thread_serial}, name=\"{name}\", group=\"{group}\")"
    )
}

/// Writes `THREAD END (id = …)`.
pub fn write_thread_end(out: &mut dyn Write, thread_serial: u32) -> io::Result<()> {
    writeln!(out, "THREAD END (id = {thread_serial})")
}

/// Writes a TRACE block: `TRACE n:` (with ` (thread=N)` when the trace belongs to one
/// thread), then one tab-indented line per frame, or `<empty>` for no frames.
pub fn write_trace(
    out: &mut dyn Write,
    serial: u32,
    thread_serial: Option<u32>,
    frames: &[Frame<'_>],
) -> io::Result<()> {
    write!(out, "TRACE {serial}:")?;
    if let Some(thread) = thread_serial {
        write!(out, " (thread={thread})")?;
    }
    out.write_all(b"\n")?;
    if frames.is_empty() {
        return out.write_all(b"\t<empty>\n");
    }
    for frame in frames {
        let method = frame.method.unwrap_or("<Unknown Method>");
        let source = frame.source.unwrap_or("<Unknown Source>");
        write!(out, "\t{}.{method}(", frame.class)?;
        match frame.line {
            LineInfo::Line(n) => write!(out, "{source}:{n}")?,
            LineInfo::Unknown => write!(out, "{source}:Unknown line")?,
            LineInfo::Compiled => write!(out, "{source}:Compiled method")?,
            LineInfo::Native => write!(out, "{source}:Native method")?,
            LineInfo::NativeCode => out.write_all(b"Native method")?,
            LineInfo::KernelCode => out.write_all(b"Kernel")?,
        }
        out.write_all(b")\n")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(f: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> String {
        let mut out = Vec::new();
        f(&mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn thread_lines_match_the_original() {
        assert_eq!(
            render(|w| write_thread_start(w, 0x50000336, 200004, "Notification Thread", "system")),
            "THREAD START (obj=50000336, id = 200004, name=\"Notification Thread\", group=\"system\")\n"
        );
        assert_eq!(
            render(|w| write_thread_end(w, 200001)),
            "THREAD END (id = 200001)\n"
        );
    }

    #[test]
    fn trace_blocks_match_the_original() {
        assert_eq!(
            render(|w| write_trace(w, 300000, None, &[])),
            "TRACE 300000:\n\t<empty>\n"
        );
        let frames = [
            Frame {
                class: "java.lang.ClassLoader",
                method: Some("defineClass0"),
                source: Some("ClassLoader.java"),
                line: LineInfo::Unknown,
            },
            Frame {
                class: "java.lang.System$2",
                method: Some("defineClass"),
                source: Some("System.java"),
                line: LineInfo::Line(2324),
            },
        ];
        assert_eq!(
            render(|w| write_trace(w, 300031, None, &frames)),
            "TRACE 300031:\n\tjava.lang.ClassLoader.defineClass0(ClassLoader.java:Unknown line)\n\
             \tjava.lang.System$2.defineClass(System.java:2324)\n"
        );
        let unknown = [Frame {
            class: "X",
            method: None,
            source: None,
            line: LineInfo::Native,
        }];
        assert_eq!(
            render(|w| write_trace(w, 301366, Some(200009), &unknown)),
            "TRACE 301366: (thread=200009)\n\tX.<Unknown Method>(<Unknown Source>:Native method)\n"
        );
    }

    #[test]
    fn frames_of_native_and_kernel_code_are_one_line_each() {
        let frames = [
            Frame {
                class: KERNEL,
                method: Some("do_syscall_64"),
                source: Some(KERNEL),
                line: LineInfo::KernelCode,
            },
            Frame {
                class: "libc.so.6",
                method: Some("__getpid"),
                source: Some("/usr/lib/x86_64-linux-gnu/libc.so.6"),
                line: LineInfo::NativeCode,
            },
            Frame {
                class: "libjvm.so",
                method: Some("os::javaTimeNanos"),
                source: Some("/opt/jdk/lib/server/libjvm.so"),
                line: LineInfo::NativeCode,
            },
            Frame {
                class: "Getpid",
                method: Some("main"),
                source: Some("Getpid.java"),
                line: LineInfo::Line(7),
            },
        ];
        assert_eq!(
            render(|w| write_trace(w, 300002, None, &frames)),
            "TRACE 300002:\n\t[kernel].do_syscall_64(Kernel)\n\tlibc.so.6.__getpid(Native method)\n\
             \tlibjvm.so.os::javaTimeNanos(Native method)\n\tGetpid.main(Getpid.java:7)\n"
        );
        // As binary STACK FRAMEs: native methods whose source is a library or [kernel].
        assert_eq!(
            LineInfo::from_stack_frame(-3, Some(KERNEL)),
            LineInfo::KernelCode
        );
        assert_eq!(
            LineInfo::from_stack_frame(-3, Some("/usr/lib/x86_64-linux-gnu/libc.so.6")),
            LineInfo::NativeCode
        );
        assert_eq!(
            LineInfo::from_stack_frame(-3, Some("[vdso]")),
            LineInfo::NativeCode
        );
        assert_eq!(
            LineInfo::from_stack_frame(-3, Some("Thread.java")),
            LineInfo::Native
        );
        assert_eq!(LineInfo::from_stack_frame(-3, None), LineInfo::Native);
        assert_eq!(
            LineInfo::from_stack_frame(12, Some("X.java")),
            LineInfo::Line(12)
        );
    }

    #[test]
    fn binary_line_values_map_to_line_info() {
        assert_eq!(LineInfo::from_binary(12), LineInfo::Line(12));
        assert_eq!(LineInfo::from_binary(0), LineInfo::Unknown);
        assert_eq!(LineInfo::from_binary(-1), LineInfo::Unknown);
        assert_eq!(LineInfo::from_binary(-2), LineInfo::Compiled);
        assert_eq!(LineInfo::from_binary(-3), LineInfo::Native);
    }
}
