//! Owns how the asynchronous sampler's frames that are no Java method become methods of the
//! trace store: native functions (named by their library and symbol), JVM stubs (named as
//! the JVM named them), kernel addresses, and the reason a walk broke. Until the `symbols`
//! crate names native code from the libraries' full symbol tables, [`native_name`] is the
//! one place a native pc gets its name.

use std::collections::HashMap;

use crate::jvmti::{jlocation, jmethodID};
use crate::signal::{self, FRAME_BROKEN, FRAME_KERNEL, FRAME_NATIVE, FRAME_STUB};
use crate::trace_store::{ObjectIds, TraceStore};

/// The class of native frames no library holds, and of kernel frames.
const UNKNOWN_LIBRARY: &str = "<unknown library>";
const KERNEL: &str = "[kernel]";
/// The class of JVM stubs outside the `StubRoutines` blobs.
const STUB: &str = "<stub>";
/// At most this many pcs keep their names cached.
const MAX_CACHED: usize = 1 << 16;

/// Whether a drained frame's location marks a frame that is no Java method (its method then
/// holds a pc, or a failure's number).
pub fn is_code_frame(location: jlocation) -> bool {
    [FRAME_NATIVE, FRAME_KERNEL, FRAME_STUB, FRAME_BROKEN]
        .iter()
        .any(|&kind| location == jlocation::from(kind))
}

/// How many of a sample's frames (innermost first, each with its bytecode index) a trace
/// keeps: up to `depth` Java frames, with the native and stub frames among and above them
/// (`depth=` counts Java frames, as the original's did).
pub fn kept(bcis: impl Iterator<Item = i32>, depth: usize) -> usize {
    let mut java = 0;
    let mut kept = 0;
    for bci in bcis {
        if !is_code_frame(jlocation::from(bci)) {
            if java == depth {
                break;
            }
            java += 1;
        }
        kept += 1;
    }
    kept
}

/// A native pc's (library, symbol): the one function the `symbols` crate will replace.
pub fn native_name(pc: usize) -> (String, String) {
    signal::native::name(pc).unwrap_or_else(|| (UNKNOWN_LIBRARY.to_string(), format!("0x{pc:x}")))
}

/// A stub pc's (group, name): `StubRoutines` and the stub's name for the JVM's generated
/// stubs, else `<stub>` and the name the JVM gave the stub (or its code blob).
fn stub_name(pc: usize) -> (String, String) {
    let blob = signal::blob_name(pc);
    let in_stub_routines = blob
        .as_deref()
        .is_some_and(|b| b.starts_with("StubRoutines") || b.starts_with("Stub Generator"));
    match (signal::stubs::name(pc), blob) {
        (Some(name), _) if in_stub_routines => ("StubRoutines".into(), name),
        (Some(name), _) => (STUB.into(), name),
        (None, Some(blob)) => (STUB.into(), blob),
        (None, None) => (STUB.into(), format!("0x{pc:x}")),
    }
}

/// The trace-store methods of non-Java frames, cached by pc for one trace store.
#[derive(Debug, Default)]
pub struct FrameNames {
    /// Pseudo-method keys (see [`TraceStore::code_method`]) by (pc or number, frame kind).
    by_pc: HashMap<(usize, i32), usize>,
}

impl FrameNames {
    /// The method a non-Java frame (`location` one of the frame kinds, `value` its pc or
    /// failure number) stands for in `traces`.
    pub fn method(
        &mut self,
        traces: &mut TraceStore,
        ids: &ObjectIds,
        value: usize,
        location: jlocation,
    ) -> jmethodID {
        let kind = location as i32;
        if let Some(&method) = self.by_pc.get(&(value, kind)) {
            return method as jmethodID;
        }
        let method = match kind {
            FRAME_NATIVE => {
                let (library, symbol) = native_name(value);
                traces.code_method(ids, &library, &symbol, true)
            }
            FRAME_STUB => {
                let (group, name) = stub_name(value);
                traces.code_method(ids, &group, &name, false)
            }
            FRAME_KERNEL => traces.code_method(ids, KERNEL, &format!("0x{value:x}"), true),
            _ => {
                let reason = signal::walker::Failure::from_code(value)
                    .map_or("<unknown>", signal::walker::Failure::name);
                traces.pseudo_method(ids, reason)
            }
        };
        if self.by_pc.len() >= MAX_CACHED {
            self.by_pc.clear();
        }
        self.by_pc.insert((value, kind), method as usize);
        method
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depth_counts_java_frames_only() {
        let frames = [
            FRAME_NATIVE,
            FRAME_NATIVE,
            FRAME_STUB,
            3,
            -1,
            FRAME_NATIVE,
            7,
            9,
            FRAME_BROKEN,
        ];
        assert_eq!(kept(frames.iter().copied(), 2), 6);
        assert_eq!(kept(frames.iter().copied(), 3), 7);
        assert_eq!(kept(frames.iter().copied(), 10), 9);
        assert_eq!(kept(frames.iter().copied(), 0), 3);
    }
}
