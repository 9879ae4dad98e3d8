//! Names the frames of native and kernel code the signal handler recorded as addresses
//! ([`FRAME_NATIVE`], [`FRAME_KERNEL`]): the library and function of each, from the
//! libraries' ELF symbols and `/proc/kallsyms` (`hprof-symbols`), on the agent's thread at the
//! drain, never in the handler. Names are kept per address (a bounded cache).
//!
//! [`FRAME_NATIVE`]: crate::signal::FRAME_NATIVE
//! [`FRAME_KERNEL`]: crate::signal::FRAME_KERNEL

use std::collections::HashMap;
use std::sync::{Mutex, Once, OnceLock};
use std::time::{Duration, Instant};

use hprof_symbols::{KernelSymbols, Location, Symbolizer};

use crate::jvmti::{jlocation, jmethodID};
use crate::trace_store::{Code, ObjectIds, TraceStore};

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
