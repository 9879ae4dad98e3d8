//! The symbolizer on this test process: libc, the test binary, the vDSO, a library opened
//! after the first lookup, C++ names, the memory limit, kernel symbols.

use std::ffi::CString;
use std::path::Path;
use std::process::Command;

use hprof_symbols::{KERNEL, Symbolizer, UNKNOWN};

#[inline(never)]
#[unsafe(no_mangle)]
pub extern "C" fn hprof_symbols_marker(x: u64) -> u64 {
    x.wrapping_mul(31).rotate_left(7)
}

#[test]
fn libc_functions_are_named_with_their_library() {
    let mut s = Symbolizer::new();
    let address = libc::getpid as *const () as u64;
    let at = s.user(address + 1);
    assert_eq!(&*at.library, "libc.so.6", "{at:?}");
    assert!(at.path.ends_with("/libc.so.6"), "{at:?}");
    let symbol = at.symbol.as_deref().unwrap_or("");
    assert!(symbol == "getpid" || symbol == "__getpid", "{at:?}");
    assert_eq!(at.offset, 1);
}

#[test]
fn the_programs_own_functions_are_named() {
    let mut s = Symbolizer::new();
    let address = hprof_symbols_marker as *const () as u64;
    let at = s.user(address);
    let exe = std::env::current_exe().unwrap();
    assert_eq!(
        &*at.library,
        exe.file_name().unwrap().to_str().unwrap(),
        "{at:?}"
    );
    assert_eq!(at.symbol.as_deref(), Some("hprof_symbols_marker"));
    // A Rust function, demangled without its hash.
    let at = s.user(Symbolizer::new as *const () as u64);
    assert_eq!(
        at.symbol.as_deref(),
        Some("hprof_symbols::Symbolizer::new"),
        "{at:?}"
    );
    assert_eq!(hprof_symbols_marker(1), 31 << 7);
}

#[test]
fn the_vdso_is_read_from_memory() {
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let Some(line) = maps.lines().find(|l| l.ends_with("[vdso]")) else {
        panic!("no vDSO mapped: {maps}");
    };
    let (start, end) = line.split_once(' ').unwrap().0.split_once('-').unwrap();
    let start = u64::from_str_radix(start, 16).unwrap();
    let end = u64::from_str_radix(end, 16).unwrap();
    let mut s = Symbolizer::new();
    let mut names = std::collections::BTreeSet::new();
    for address in (start..end).step_by(8) {
        let at = s.user(address);
        assert_eq!(&*at.library, "[vdso]");
        if let Some(symbol) = at.symbol {
            names.insert(symbol.to_string());
        }
    }
    assert!(
        names.iter().any(|n| n.contains("clock_gettime")),
        "{names:?}"
    );
}

/// Builds a shared library from `source` (C) in `dir` with the system's C compiler.
fn build_library(dir: &Path, name: &str, source: &str) -> std::path::PathBuf {
    let c = dir.join(format!("{name}.c"));
    std::fs::write(&c, source).unwrap();
    let lib = dir.join(format!("lib{name}.so"));
    let status = Command::new("cc")
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg(&c)
        .status()
        .expect("a C compiler (cc)");
    assert!(status.success());
    lib
}

#[test]
fn a_library_opened_later_is_found_and_cpp_names_are_demangled() {
    let dir = tempfile::tempdir().unwrap();
    // A C++ name given by hand (no C++ compiler needed): ns::Burner::burn(int).
    let lib = build_library(
        dir.path(),
        "hprofsymtest",
        "int burn(int x) __asm__(\"_ZN2ns6Burner4burnEi\");\n\
         int burn(int x) { int y = 0; for (int i = 0; i < x; i++) y += i * x; return y; }\n\
         int plain_c_function(int x) { return x * 3; }\n",
    );
    let mut s = Symbolizer::new();
    // The mappings are read before the library is opened.
    let _ = s.user(libc::getpid as *const () as u64);
    let path = CString::new(lib.to_str().unwrap()).unwrap();
    // SAFETY: opens the library just built; it has no constructors.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
    assert!(!handle.is_null());
    let symbol = |name: &str| {
        let name = CString::new(name).unwrap();
        // SAFETY: looks a symbol up in the library opened above.
        let address = unsafe { libc::dlsym(handle, name.as_ptr()) };
        assert!(!address.is_null());
        address as u64
    };
    std::thread::sleep(hprof_symbols::RELOAD_EVERY);
    let at = s.user(symbol("_ZN2ns6Burner4burnEi") + 2);
    assert_eq!(&*at.library, "libhprofsymtest.so", "{at:?}");
    assert_eq!(at.symbol.as_deref(), Some("ns::Burner::burn"), "{at:?}");
    assert_eq!(at.offset, 2);
    let at = s.user(symbol("plain_c_function"));
    assert_eq!(at.symbol.as_deref(), Some("plain_c_function"), "{at:?}");
    // SAFETY: closes the library; nothing of it is in use.
    unsafe { libc::dlclose(handle) };
}

#[test]
fn over_the_memory_limit_libraries_are_named_without_symbols() {
    let mut s = Symbolizer::new().with_limit(100);
    let at = s.user(libc::getpid as *const () as u64);
    assert_eq!(&*at.library, "libc.so.6");
    assert_eq!(at.symbol, None);
    assert!(s.memory_used() <= 100, "{}", s.memory_used());
    // The unsymbolized offset is the address in the library's own address space.
    let mut full = Symbolizer::new();
    let named = full.user(libc::getpid as *const () as u64);
    assert!(named.symbol.is_some());
    assert!(at.offset > 0 && at.offset < 1 << 32, "{at:?}");
}

#[test]
fn an_address_in_no_mapping_is_unknown() {
    let mut s = Symbolizer::new();
    let at = s.user(8);
    assert_eq!(&*at.library, UNKNOWN);
    assert_eq!((at.symbol, at.offset), (None, 8));
}

#[test]
fn kernel_addresses_are_named_from_kallsyms() {
    let dir = tempfile::tempdir().unwrap();
    let kallsyms = dir.path().join("kallsyms");
    std::fs::write(
        &kallsyms,
        "ffffffff81000000 T _stext\nffffffff81001000 T do_syscall_64\nffffffff81002000 T __x64_sys_getpid\n",
    )
    .unwrap();
    let mut s = Symbolizer::new().with_kallsyms(&kallsyms);
    assert!(s.kernel_symbols());
    let at = s.kernel(0xffffffff81001020);
    assert_eq!(&*at.library, KERNEL);
    assert_eq!(at.symbol.as_deref(), Some("do_syscall_64"));
    assert_eq!(at.offset, 0x20);
    // Hidden addresses: the kernel frame is named by its address.
    std::fs::write(&kallsyms, "0000000000000000 T _stext\n").unwrap();
    let mut s = Symbolizer::new().with_kallsyms(&kallsyms);
    assert!(!s.kernel_symbols());
    let at = s.kernel(0xffffffff81001020);
    assert_eq!((&*at.library, at.symbol), (KERNEL, None));
}

#[test]
fn this_machines_kernel_is_named_where_kallsyms_shows_addresses() {
    let mut s = Symbolizer::new();
    if !s.kernel_symbols() {
        // (Addresses hidden: kptr_restrict, or no CAP_SYSLOG.)
        return;
    }
    let text = std::fs::read_to_string("/proc/kallsyms").unwrap();
    let line = text
        .lines()
        .find(|l| l.ends_with(" T do_syscall_64"))
        .expect("do_syscall_64 in /proc/kallsyms");
    let address = u64::from_str_radix(line.split(' ').next().unwrap(), 16).unwrap();
    // (Another name may share the address.)
    let names: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with(line.split(' ').next().unwrap()))
        .filter_map(|l| l.split(' ').nth(2))
        .collect();
    let at = s.kernel(address + 4);
    assert!(
        names.contains(&at.symbol.as_deref().unwrap_or("")),
        "{at:?} {names:?}"
    );
    assert_eq!(at.offset, 4);
}
