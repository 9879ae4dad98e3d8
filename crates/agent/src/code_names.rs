//! Names the frames of native and kernel code the signal handler recorded as addresses
//! ([`FRAME_NATIVE`], [`FRAME_KERNEL`]): the library and function of each, from the
//! libraries' ELF symbols and `/proc/kallsyms` (`hprof-symbols`), on the agent's thread at the
//! drain, never in the handler. Names are kept per address (a bounded cache).
//!
//! [`FRAME_NATIVE`]: crate::signal::FRAME_NATIVE
//! [`FRAME_KERNEL`]: crate::signal::FRAME_KERNEL

use std::collections::HashMap;
use std::sync::Mutex;

use hprof_symbols::{Location, Symbolizer};

use crate::jvmti::{jlocation, jmethodID};
use crate::trace_store::{Code, ObjectIds, TraceStore};

/// Addresses whose names are kept, at most (the cache starts over past it).
const CACHED: usize = 1 << 16;

struct Names {
    symbolizer: Symbolizer,
    cache: HashMap<(Code, u64), Location>,
}

static NAMES: Mutex<Option<Names>> = Mutex::new(None);

/// Where the address `address` of code `code` (native or kernel) is; `returns` says it is a
/// return address (a frame below the innermost), named by the call before it.
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
        Code::Kernel => names.symbolizer.kernel(lookup),
        _ => names.symbolizer.user(lookup),
    };
    names.cache.insert((code, lookup), location.clone());
    location
}

/// Whether kernel addresses can be named here (`/proc/kallsyms` shows their addresses).
pub fn kernel_symbols() -> bool {
    let mut names = match NAMES.lock() {
        Ok(names) => names,
        Err(poisoned) => poisoned.into_inner(),
    };
    names
        .get_or_insert_with(|| Names {
            symbolizer: Symbolizer::new(),
            cache: HashMap::new(),
        })
        .symbolizer
        .kernel_symbols()
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
