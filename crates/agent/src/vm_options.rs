//! Owns what the agent knows of the JVM's own options: the JVM's feature version, noted at
//! load, and whether the command line and its environment require class data sharing (which
//! forbids the early class hooks that cpu=times and heap=sites' fast mode use).

use std::sync::atomic::{AtomicU32, Ordering};

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
