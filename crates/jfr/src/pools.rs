//! Owns the constant pools of a chunk being written: symbols, classes, methods, stack
//! traces and threads interned to keys, each entry written once per chunk with the fields
//! [`crate::schema`] defines.

use rustc_hash::FxHashMap;

use crate::schema::{FRAME_TYPES, THREAD_STATES, id};
use crate::writer::{ConstantPools, Put};

/// One frame of a stack trace to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FrameRef {
    /// The method's key ([`Pools::method`]).
    pub method: i64,
    /// Source line (0 or below: unknown).
    pub line: i32,
    /// Bytecode index (-1: unknown).
    pub bci: i32,
    /// Frame type key ([`FRAME_TYPES`]).
    pub kind: i64,
}

/// The frame type key of a native frame.
pub const FRAME_NATIVE: i64 = 3;
/// The frame type key of a function of the JVM (`libjvm.so`, a code-cache stub), as
/// async-profiler marks them.
pub const FRAME_CPP: i64 = 4;
/// The frame type key of a function of the kernel.
pub const FRAME_KERNEL: i64 = 5;
/// The frame type key of a JIT-compiled frame.
pub const FRAME_JIT: i64 = 1;
/// The frame type key of an interpreted frame.
pub const FRAME_INTERPRETED: i64 = 0;

/// The constant pools of one chunk (keys start at 1; 0 is null).
#[derive(Debug)]
pub struct Pools {
    pools: ConstantPools,
    symbols: FxHashMap<String, i64>,
    classes: FxHashMap<String, i64>,
    packages: FxHashMap<String, i64>,
    methods: FxHashMap<(i64, i64, i64), i64>,
    stacks: FxHashMap<(Vec<FrameRef>, bool), i64>,
    threads: FxHashMap<(i64, String), i64>,
}

impl Default for Pools {
    fn default() -> Self {
        Pools::new()
    }
}

impl Pools {
    /// Empty pools, with the frame types and thread states every chunk has.
    pub fn new() -> Pools {
        let mut pools = ConstantPools::default();
        for (key, name) in FRAME_TYPES {
            let out = pools.entry(id::FRAME_TYPE);
            out.long(key);
            out.string(Some(name));
        }
        for (key, name) in THREAD_STATES {
            let out = pools.entry(id::THREAD_STATE);
            out.long(key);
            out.string(Some(name));
        }
        Pools {
            pools,
            symbols: FxHashMap::default(),
            classes: FxHashMap::default(),
            packages: FxHashMap::default(),
            methods: FxHashMap::default(),
            stacks: FxHashMap::default(),
            threads: FxHashMap::default(),
        }
    }

    /// The key of a symbol (a name, a descriptor).
    pub fn symbol(&mut self, s: &str) -> i64 {
        if let Some(&k) = self.symbols.get(s) {
            return k;
        }
        let key = self.symbols.len() as i64 + 1;
        self.symbols.insert(s.to_string(), key);
        let out = self.pools.entry(id::SYMBOL);
        out.long(key);
        out.string(Some(s));
        key
    }

    /// The key of a class named `name` in the JVM's form (`java/lang/String`, `[I`).
    pub fn class(&mut self, name: &str) -> i64 {
        if let Some(&k) = self.classes.get(name) {
            return k;
        }
        let symbol = self.symbol(name);
        // A hidden class (a lambda's, `pkg/Foo$$Lambda$14/0x0000000800c03000`) is marked so,
        // as the JDK marks it, and its package is its name's without that suffix.
        let hidden = hidden_class_base(name);
        // A Java class's package, as the JVM names it (`java/lang`; JMC groups methods by
        // it); none for an array, a class of the default package or a library of native code.
        let package = match hidden.unwrap_or(name).rsplit_once('/') {
            Some((package, _)) if !name.starts_with('[') => self.package(package),
            _ => 0,
        };
        let key = self.classes.len() as i64 + 1;
        self.classes.insert(name.to_string(), key);
        let out = self.pools.entry(id::CLASS);
        out.long(key);
        out.long(0); // class loader: the boot loader (null)
        out.long(symbol);
        out.long(package);
        out.int(0); // modifiers
        out.byte(u8::from(hidden.is_some()));
        key
    }

    /// The key of the package `name` (`java/lang`).
    fn package(&mut self, name: &str) -> i64 {
        if let Some(&k) = self.packages.get(name) {
            return k;
        }
        let symbol = self.symbol(name);
        let key = self.packages.len() as i64 + 1;
        self.packages.insert(name.to_string(), key);
        let out = self.pools.entry(id::PACKAGE);
        out.long(key);
        out.long(symbol);
        out.long(0); // module: not known
        out.byte(0); // exported: not known
        key
    }

    /// The key of method `name` (`descriptor`) of the class `class` (a key from
    /// [`Pools::class`]).
    pub fn method(&mut self, class: i64, name: &str, descriptor: &str) -> i64 {
        let name = self.symbol(name);
        let descriptor = self.symbol(descriptor);
        if let Some(&k) = self.methods.get(&(class, name, descriptor)) {
            return k;
        }
        let key = self.methods.len() as i64 + 1;
        self.methods.insert((class, name, descriptor), key);
        let out = self.pools.entry(id::METHOD);
        out.long(key);
        out.long(class);
        out.long(name);
        out.long(descriptor);
        out.int(0); // modifiers
        out.byte(0); // hidden
        key
    }

    /// The key of a stack trace (`frames` top first).
    pub fn stack(&mut self, frames: &[FrameRef], truncated: bool) -> i64 {
        if let Some(&k) = self.stacks.get(&(frames.to_vec(), truncated)) {
            return k;
        }
        let key = self.stacks.len() as i64 + 1;
        self.stacks.insert((frames.to_vec(), truncated), key);
        let out = self.pools.entry(id::STACK_TRACE);
        out.long(key);
        out.byte(u8::from(truncated));
        out.int(frames.len() as i32);
        for f in frames {
            out.long(f.method);
            out.int(f.line);
            out.int(f.bci);
            out.long(f.kind);
        }
        key
    }

    /// The key of the thread `name` whose Java thread id is `java_id` (and OS thread id
    /// `os_id`).
    pub fn thread(&mut self, java_id: i64, os_id: i64, name: &str) -> i64 {
        if let Some(&k) = self.threads.get(&(java_id, name.to_string())) {
            return k;
        }
        let key = self.threads.len() as i64 + 1;
        self.threads.insert((java_id, name.to_string()), key);
        let out = self.pools.entry(id::THREAD);
        out.long(key);
        out.string(Some(name));
        out.long(os_id);
        out.string(Some(name));
        out.long(java_id);
        out.long(0); // thread group: not written
        key
    }

    /// The pools, to write into a chunk.
    pub fn constant_pools(&self) -> &ConstantPools {
        &self.pools
    }

    /// The bytes the pools hold so far (a measure for rotating chunks by size).
    pub fn len_hint(&self) -> usize {
        self.symbols.len() * 24 + self.stacks.len() * 64 + self.threads.len() * 40
    }
}

/// The libraries of native code named in brackets (`[kernel]`, `[stub]`, `[vdso]`) that a
/// frame's class names without them, as async-profiler writes them: JDK Mission Control
/// reads a class name that starts with `[` as an array's descriptor and fails on it.
const BRACKETED_LIBRARIES: [&str; 9] = [
    "kernel", "stub", "unknown", "anon", "vdso", "vsyscall", "vvar", "heap", "stack",
];

/// The class name a function of native code of `library` is written with: the library's,
/// without its brackets if it has them (`kernel` for `[kernel]`; no class name may start
/// with `[`). [`bracketed_library`] reads [`BRACKETED_LIBRARIES`] back; another bracketed
/// library (none that hprof names) would read back as a class of that name.
pub fn library_class(library: &str) -> &str {
    library
        .strip_prefix('[')
        .and_then(|l| l.strip_suffix(']'))
        .filter(|l| !l.is_empty())
        .unwrap_or(library)
}

/// The library a frame's class names when it is one of [`BRACKETED_LIBRARIES`] written
/// bare (`[kernel]` for `kernel`); none for any other class.
pub fn bracketed_library(class: &str) -> Option<String> {
    BRACKETED_LIBRARIES
        .contains(&class)
        .then(|| format!("[{class}]"))
}

/// The name of hidden class `name` without its suffix (`pkg/Foo$$Lambda$14` of
/// `pkg/Foo$$Lambda$14/0x0000000800c03000`, as the JVM names a hidden class); none for
/// another class.
fn hidden_class_base(name: &str) -> Option<&str> {
    let (base, suffix) = name.rsplit_once('/')?;
    let hex = suffix.strip_prefix("0x")?;
    (!hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit())).then_some(base)
}

#[cfg(test)]
mod tests {
    use super::{bracketed_library, hidden_class_base, library_class};

    #[test]
    fn bracketed_libraries_are_written_bare_and_read_back() {
        for library in ["[kernel]", "[stub]", "[vdso]"] {
            assert_eq!(
                bracketed_library(library_class(library)).as_deref(),
                Some(library)
            );
        }
        assert_eq!(library_class("libc.so.6"), "libc.so.6");
        assert_eq!(library_class("[]"), "[]");
        assert_eq!(bracketed_library("libc.so.6"), None);
        assert_eq!(bracketed_library("Work"), None);
    }

    #[test]
    fn hidden_classes_are_known_by_their_suffix() {
        assert_eq!(
            hidden_class_base("pkg/Foo$$Lambda$14/0x0000000800c03000"),
            Some("pkg/Foo$$Lambda$14")
        );
        assert_eq!(
            hidden_class_base("Foo$$Lambda$1/0x00007fde60001000"),
            Some("Foo$$Lambda$1")
        );
        assert_eq!(hidden_class_base("java/lang/String"), None);
        assert_eq!(hidden_class_base("pkg/0x"), None);
        assert_eq!(hidden_class_base("Foo"), None);
    }
}
