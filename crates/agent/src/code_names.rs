//! Names the frames that are no Java method the signal handler recorded as addresses
//! ([`FRAME_NATIVE`], [`FRAME_KERNEL`], [`FRAME_STUB`], [`FRAME_BROKEN`]): the library and
//! function of native and kernel code, from the libraries' ELF symbols and `/proc/kallsyms`
//! (`hprof-symbols`); the code-cache stubs, as the JVM named them (library `[stub]`); the
//! reason the stack walk broke. On the agent's thread at the drain, never in the handler.
//! Names are kept per address (a bounded cache).
//!
//! [`FRAME_NATIVE`]: crate::signal::FRAME_NATIVE
//! [`FRAME_KERNEL`]: crate::signal::FRAME_KERNEL
//! [`FRAME_STUB`]: crate::signal::FRAME_STUB
//! [`FRAME_BROKEN`]: crate::signal::FRAME_BROKEN

use std::collections::HashMap;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use hprof_symbols::{KernelSymbols, Location, Symbolizer};

use crate::jvmti::{jlocation, jmethodID};
use crate::signal::{self, FRAME_BROKEN, FRAME_KERNEL, FRAME_NATIVE, FRAME_STUB};
use crate::trace_store::{Code, ObjectIds, TraceStore};

/// The library of the code-cache stubs' frames (the JVM's generated code that is no Java
/// method: intrinsics, runtime stubs, vtable stubs, adapters).
pub const STUB_LIBRARY: &str = "[stub]";

/// Addresses whose names are kept, at most (the cache starts over past it).
const CACHED: usize = 1 << 16;

struct Names {
    symbolizer: Symbolizer,
    cache: HashMap<(Code, u64), Location>,
}

static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// Most bytes the kernel's symbols may hold.
const KERNEL_SYMBOLS_LIMIT: usize = 64 << 20;

/// The kernel's symbols, once read (`None` inside: the kernel hides their addresses).
static KERNEL: OnceLock<Option<KernelSymbols>> = OnceLock::new();
static KERNEL_LOADER: Once = Once::new();

/// Starts reading the kernel's symbols on a thread of the agent's own (reading
/// `/proc/kallsyms` takes the kernel 0.1 s or more: neither the application's threads nor the
/// sampler's drain wait for it). The thread blocks SIGPROF: the sampler's handler must never
/// run on it (the JVM's `GetEnv` on a thread that never entered the JVM allocates its
/// thread-local storage, and this thread allocates all the time).
pub fn load_kernel_symbols() {
    KERNEL_LOADER.call_once(|| {
        let spawned = std::thread::Builder::new()
            .name("HPROF kallsyms".into())
            .spawn(|| {
                crate::signal::block_in_this_thread();
                let _ = KERNEL.set(KernelSymbols::read(KERNEL_SYMBOLS_LIMIT));
            });
        if spawned.is_err() {
            let _ = KERNEL.set(KernelSymbols::read(KERNEL_SYMBOLS_LIMIT));
        }
    });
}

/// Whether the kernel's symbols were read (or found hidden): kernel frames can be named.
pub fn kernel_symbols_ready() -> bool {
    KERNEL.get().is_some()
}

/// Waits at most `timeout` for the kernel's symbols; whether they were read.
pub fn wait_for_kernel_symbols(timeout: Duration) -> bool {
    load_kernel_symbols();
    let deadline = Instant::now() + timeout;
    while !kernel_symbols_ready() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Where the address `address` of code `code` (native or kernel) is; `returns` says it is a
/// return address (a frame below the innermost), named by the call before it. A kernel
/// address met before the kernel's symbols were read is named by its address.
pub fn locate(code: Code, address: u64, returns: bool) -> Location {
    let mut names = match NAMES.lock() {
        Ok(names) => names,
        Err(poisoned) => poisoned.into_inner(),
    };
    let names = names.get_or_insert_with(|| Names {
        symbolizer: Symbolizer::new(),
        cache: HashMap::new(),
    });
    let lookup = if returns {
        address.saturating_sub(1)
    } else {
        address
    };
    if let Some(location) = names.cache.get(&(code, lookup)) {
        return location.clone();
    }
    if names.cache.len() >= CACHED {
        names.cache.clear();
    }
    let location = match code {
        Code::Kernel => match KERNEL.get() {
            Some(Some(kernel)) => kernel.locate(lookup),
            Some(None) => unnamed_kernel(lookup),
            // (Not read yet: named by address, not kept.)
            None => return unnamed_kernel(lookup),
        },
        _ => names.symbolizer.user(lookup),
    };
    names.cache.insert((code, lookup), location.clone());
    location
}

/// A kernel address named by itself.
fn unnamed_kernel(address: u64) -> Location {
    Location {
        library: hprof_symbols::KERNEL.into(),
        path: hprof_symbols::KERNEL.into(),
        symbol: None,
        offset: address,
    }
}

/// The function name a frame at `location` gets: its symbol, or its offset in its library
/// (`0x1a2b`, what `addr2line -e LIBRARY` takes) when the library has no symbol there.
pub fn function(location: &Location) -> String {
    match &location.symbol {
        Some(symbol) => symbol.to_string(),
        None => format!("{:#x}", location.offset),
    }
}

/// The key (a jmethodID for [`TraceStore::record`]) of the frame at `location`.
pub fn key(traces: &mut TraceStore, ids: &ObjectIds, code: Code, location: &Location) -> jmethodID {
    traces.code_method(
        ids,
        code,
        &location.library,
        &location.path,
        &function(location),
    )
}

/// The location a drained frame carries for code of kind `code` (what `(address, location)`
/// pairs of native and kernel frames hold in place of a bytecode index).
pub fn frame_location(code: Code) -> jlocation {
    match code {
        Code::Kernel => jlocation::from(crate::signal::FRAME_KERNEL),
        Code::Native => jlocation::from(crate::signal::FRAME_NATIVE),
        Code::Java => -1,
    }
}

/// The kind of code of a drained frame by its location ([`frame_location`]).
pub fn code_of(location: jlocation) -> Code {
    if location == jlocation::from(crate::signal::FRAME_KERNEL) {
        Code::Kernel
    } else if location == jlocation::from(crate::signal::FRAME_NATIVE) {
        Code::Native
    } else {
        Code::Java
    }
}

/// Whether a drained frame's location marks a frame that is no Java method (its method then
/// holds a pc, or a broken walk's reason).
pub fn is_code_frame(location: jlocation) -> bool {
    [FRAME_NATIVE, FRAME_KERNEL, FRAME_STUB, FRAME_BROKEN]
        .iter()
        .any(|&kind| location == jlocation::from(kind))
}

/// How many of a sample's walked frames (innermost first, each with its bytecode index) a
/// trace keeps: up to `depth` Java frames, with the native and stub frames among and above
/// them (`depth=` counts Java frames, as the original's did).
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

/// Which frames of a drained sample (kernel frames first, then the walked ones) hold return
/// addresses: all but the innermost kernel frame and the innermost walked frame, which hold
/// the interrupted pc.
pub fn returns(frames: &[(usize, jlocation)]) -> impl Fn(usize) -> bool + use<> {
    let kernel = frame_location(Code::Kernel);
    let first_walked = frames.iter().take_while(|f| f.1 == kernel).count();
    move |index| index != 0 && index != first_walked
}

/// Where the code of a drained frame (`location` a frame kind, `address` its pc) is, with
/// what code it is: native and kernel code by [`locate`], stubs by [`locate_stub`]. `None`
/// for a Java frame and a broken walk's reason.
pub fn locate_frame(
    location: jlocation,
    address: usize,
    returns: bool,
) -> Option<(Code, Location)> {
    match location {
        l if l == jlocation::from(FRAME_STUB) => Some((Code::Native, locate_stub(address))),
        l => match code_of(l) {
            Code::Java => None,
            code => Some((code, locate(code, address as u64, returns))),
        },
    }
}

/// Where the code-cache stub that holds `pc` is: library [`STUB_LIBRARY`], function the
/// name the JVM gave it in its DynamicCodeGenerated events (`StubRoutines::dsin`,
/// `vtable stub`, `I2C/C2I adapters`), or its code blob's name.
pub fn locate_stub(pc: usize) -> Location {
    let blob = signal::blob_name(pc);
    let in_stub_routines = blob
        .as_deref()
        .is_some_and(|b| b.starts_with("StubRoutines") || b.starts_with("Stub Generator"));
    let symbol = match (signal::stubs::name(pc), blob) {
        (Some(name), _) if in_stub_routines => Some(format!("StubRoutines::{name}")),
        (Some(name), _) => Some(name),
        (None, blob) => blob,
    };
    Location {
        library: STUB_LIBRARY.into(),
        path: STUB_LIBRARY.into(),
        symbol: symbol.map(Into::into),
        offset: pc as u64,
    }
}

/// The reason a broken walk's frame ([`FRAME_BROKEN`], its number in place of a pc) gives.
pub fn broken_reason(number: usize) -> &'static str {
    signal::walker::Failure::from_code(number).map_or("<unknown>", signal::walker::Failure::name)
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

    #[test]
    fn the_innermost_kernel_and_walked_frames_are_not_return_addresses() {
        let kernel = frame_location(Code::Kernel);
        let native = frame_location(Code::Native);
        let frames = [(1, kernel), (2, kernel), (3, native), (4, native)];
        let returns = returns(&frames);
        assert_eq!(
            (0..4).map(&returns).collect::<Vec<_>>(),
            [false, true, false, true]
        );
        let walked = [(3, native), (4, native)];
        let returns = super::returns(&walked);
        assert_eq!((0..2).map(returns).collect::<Vec<_>>(), [false, true]);
    }
}
