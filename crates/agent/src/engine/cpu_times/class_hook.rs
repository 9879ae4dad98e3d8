//! cpu=times' class file load hook: once the tracker is ready, every class with each method
//! rewritten (by `hprof-classfile`) to call the tracker at entry, before each return and on
//! exceptional exit; before then (from `Agent_OnLoad` to the start), `java.lang.Thread` alone
//! changes, at its first load, getting the field that holds each thread's state. That early
//! hook turns class data sharing off, so whether the JVM requires sharing is read here too.

use std::sync::atomic::{AtomicU32, Ordering};

use hprof_classfile::{
    Keying, STATE_CLASS, THREAD_CLASS, TRACKER_CLASS, TRACKER_PROBES, instrument, with_state_field,
};

use super::CpuTimes;

/// The class file load hook before the tracker exists (from `Agent_OnLoad` to VM init):
/// `java.lang.Thread` gets the field for its state; every other class is left for the
/// retransformation at VM init.
pub(super) fn transform_early(name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
    if name == Some(THREAD_CLASS.as_bytes()) {
        with_state_field(class).ok()
    } else {
        None
    }
}

/// The JVM's feature version, noted in `Agent_OnLoad` (0: not known).
static VM_FEATURE: AtomicU32 = AtomicU32::new(0);

/// Notes the JVM's feature version (for [`sharing_required`]), in `Agent_OnLoad`.
pub(crate) fn note_vm_feature(version: Option<u32>) {
    VM_FEATURE.store(version.unwrap_or(0), Ordering::Relaxed);
}

/// Whether the JVM was told to require class data sharing (no start without it): by the last
/// of `-Xshare:on|auto|off` and, up to JDK 18 (later ones ignore it), `-XX:±RequireSharedSpaces`
/// among `JAVA_TOOL_OPTIONS`, `JDK_JAVA_OPTIONS`, the command line and `_JAVA_OPTIONS`, the
/// order in which the JVM reads them. (Options in `@argfiles` or `-XX:VMOptionsFile` are not
/// seen.)
pub(crate) fn sharing_required() -> bool {
    let env = |name: &str| std::env::var(name).unwrap_or_default();
    let command_line = std::fs::read("/proc/self/cmdline").unwrap_or_default();
    let command_line = String::from_utf8_lossy(&command_line).replace('\0', " ");
    let options = [
        env("JAVA_TOOL_OPTIONS"),
        env("JDK_JAVA_OPTIONS"),
        command_line,
        env("_JAVA_OPTIONS"),
    ];
    let feature = VM_FEATURE.load(Ordering::Relaxed);
    last_share_option(&options.join(" "), feature == 0 || feature <= 18) == Some("on")
}

/// The value of the last `-Xshare:` option in the space-separated `options`, with
/// `-XX:+RequireSharedSpaces` read as `on` and `-XX:-RequireSharedSpaces` as `auto` when
/// `require_flag` (the JVM still has the flag).
fn last_share_option(options: &str, require_flag: bool) -> Option<&str> {
    options
        .split_whitespace()
        .filter_map(|o| match o {
            "-XX:+RequireSharedSpaces" if require_flag => Some("on"),
            "-XX:-RequireSharedSpaces" if require_flag => Some("auto"),
            _ => o.strip_prefix("-Xshare:"),
        })
        .next_back()
}

impl CpuTimes {
    /// The class file load hook: the rewritten class, or `None` to keep it as it is.
    pub(super) fn transform(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        if !self.ready.load(Ordering::Acquire) {
            // Started late, before install and after release: every class keeps (or gets
            // back) its own code.
            return match self.keying {
                Keying::Field => transform_early(name, class),
                Keying::Table => None,
            };
        }
        if name.is_some_and(|n| n == TRACKER_CLASS.as_bytes() || n == STATE_CLASS.as_bytes()) {
            return None;
        }
        if self.keying == Keying::Field && name == Some(THREAD_CLASS.as_bytes()) {
            // Retransformed from its original bytes: the field goes in again, or the class
            // would lose it (which the JVM refuses).
            let rewritten = self.rewrite(name, class);
            return with_state_field(rewritten.as_deref().unwrap_or(class)).ok();
        }
        self.rewrite(name, class)
    }

    /// `class` with every method rewritten, or `None` to keep it as it is.
    fn rewrite(&self, name: Option<&[u8]>, class: &[u8]) -> Option<Vec<u8>> {
        // Code that runs while a virtual thread mounts or unmounts, where the JVM does not
        // expect Java-level agents' calls, is left alone.
        if let Some(name) = name
            && (name.starts_with(b"java/lang/VirtualThread")
                || name.starts_with(b"jdk/internal/vm/Continuation"))
        {
            return None;
        }
        let outcome = instrument(class, &TRACKER_PROBES, |m| {
            self.method_id(m.class, m.name, m.descriptor)
        })
        .ok()?;
        self.methods_failed
            .fetch_add(outcome.failed.len() as u64, Ordering::Relaxed);
        if self.verbose() {
            for (method, why) in &outcome.failed {
                eprintln!(
                    "HPROF: {}.{method} left uninstrumented: {why}",
                    String::from_utf8_lossy(name.unwrap_or(b"?"))
                );
            }
        }
        let bytes = outcome.bytes?;
        self.classes_instrumented.fetch_add(1, Ordering::Relaxed);
        self.methods_instrumented
            .fetch_add(u64::from(outcome.instrumented), Ordering::Relaxed);
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::last_share_option;

    #[test]
    fn the_last_xshare_option_wins() {
        assert_eq!(last_share_option("java -cp x Main", true), None);
        assert_eq!(
            last_share_option("-Xshare:on java -cp x Main", true),
            Some("on")
        );
        assert_eq!(
            last_share_option("-Xshare:on java -Xshare:auto Main", true),
            Some("auto")
        );
        assert_eq!(
            last_share_option("-Xshare:off  -Xshare:on", true),
            Some("on")
        );
    }

    #[test]
    fn require_shared_spaces_counts_where_the_jvm_has_the_flag() {
        let options = "java -XX:+RequireSharedSpaces -cp x Main";
        assert_eq!(last_share_option(options, true), Some("on"));
        assert_eq!(last_share_option(options, false), None);
        assert_eq!(
            last_share_option("-XX:+RequireSharedSpaces -Xshare:auto", true),
            Some("auto")
        );
        assert_eq!(
            last_share_option("-Xshare:on -XX:-RequireSharedSpaces", true),
            Some("auto")
        );
    }
}
