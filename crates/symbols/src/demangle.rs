//! Readable names from symbol names: C++ (Itanium ABI) and Rust names demangled, without
//! parameter lists and return types (`os::javaTimeNanos`, not `os::javaTimeNanos()`), and
//! ELF symbol versions dropped (`clock_gettime`, not `clock_gettime@@GLIBC_2.17`).

/// Longest mangled name demangled; longer ones are kept as they are (a bound on the
/// demangler's time and memory).
const MAX_MANGLED: usize = 4096;

/// The readable form of symbol `raw`.
pub fn demangle(raw: &str) -> String {
    let name = raw.split_once('@').map_or(raw, |(name, _)| name);
    if name.len() <= MAX_MANGLED {
        if let Ok(rust) = rustc_demangle::try_demangle(name) {
            // `{:#}` leaves out the hash suffix.
            return format!("{rust:#}");
        }
        if name.starts_with("_Z")
            && let Some(cpp) = cpp(name)
        {
            return cpp;
        }
    }
    name.to_string()
}

fn cpp(name: &str) -> Option<String> {
    let symbol = cpp_demangle::Symbol::new(name).ok()?;
    let options = cpp_demangle::DemangleOptions::new()
        .no_params()
        .no_return_type();
    symbol.demangle_with_options(&options).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_demangled_without_parameters_or_versions() {
        assert_eq!(demangle("_ZN2os13javaTimeNanosEv"), "os::javaTimeNanos");
        assert_eq!(
            demangle("_ZN10JavaThread17thread_main_innerEv"),
            "JavaThread::thread_main_inner"
        );
        assert_eq!(
            demangle("_ZN20G1ParScanThreadState23trim_queue_to_thresholdEj"),
            "G1ParScanThreadState::trim_queue_to_threshold"
        );
        assert_eq!(demangle("clock_gettime@@GLIBC_2.17"), "clock_gettime");
        assert_eq!(demangle("memcpy@GLIBC_2.2.5"), "memcpy");
        assert_eq!(demangle("__vdso_clock_gettime"), "__vdso_clock_gettime");
        assert_eq!(
            demangle("_ZN4core3fmt5write17h0123456789abcdefE"),
            "core::fmt::write"
        );
        // Not a valid mangling: kept.
        assert_eq!(demangle("_Znot_a_name"), "_Znot_a_name");
    }
}
