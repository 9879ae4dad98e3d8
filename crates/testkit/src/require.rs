//! What a test needs from the machine (a JDK, Chromium, Go, root, perf events, namespaces) and
//! what happens when it is missing: in CI (`CI=true`) the test fails with a message naming what
//! is missing; elsewhere the test records a skip, with its reason, in the skip log that
//! `scripts/test.sh` reports (`scripts/test-report.py`: the test is listed as skipped, or
//! passed only in part, and counted so in the summary, never as passed).

use std::fmt::Display;
use std::io::Write;
use std::path::PathBuf;

/// Whether this is CI's run (`CI=true`, as CI services set it): there nothing may be skipped.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v.eq_ignore_ascii_case("true") || v == "1")
}

/// How much of a test a skip leaves out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skipped {
    /// All of it: the test returns without checking anything.
    Test,
    /// A part (one JDK of several, one variant): the rest still ran.
    Part,
}

/// The skip log: `$HPROF_TEST_SKIPS`, or `target/test-skips.log` of the workspace.
pub fn skip_log() -> PathBuf {
    match std::env::var_os("HPROF_TEST_SKIPS") {
        Some(path) => PathBuf::from(path),
        None => crate::java::repo_root().join("target/test-skips.log"),
    }
}

/// The running test's name (libtest names each test's thread after it).
fn test_name() -> String {
    std::thread::current()
        .name()
        .unwrap_or("<unnamed test>")
        .to_string()
}

/// Reports that `what` is missing, so that `skipped` of the running test cannot run. In CI this
/// fails the test (panics) with `what` in its message; elsewhere it appends a line
/// `test|part <TAB> test name <TAB> what` to the skip log and returns, and the caller leaves the
/// part out.
pub fn skip(skipped: Skipped, what: impl Display) {
    let name = test_name();
    if in_ci() {
        panic!("{name}: {what} (CI=true: a missing tool, JDK or permission fails the run)");
    }
    let scope = match skipped {
        Skipped::Test => "test",
        Skipped::Part => "part",
    };
    let line = format!("{scope}\t{name}\t{what}\n").replace(['\r'], " ");
    let path = skip_log();
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One write of one short line to a file opened for appending: lines of tests running at
    // once never interleave.
    let logged = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(line.as_bytes()));
    if let Err(e) = logged {
        panic!(
            "{name}: {what}, and the skip could not be logged in {}: {e}",
            path.display()
        );
    }
    eprintln!("SKIPPED ({scope}) {name}: {what}");
}

/// The whole running test cannot run for want of `what` (see [`skip`]); the caller returns.
pub fn skip_test(what: impl Display) {
    skip(Skipped::Test, what);
}

/// A part of the running test cannot run for want of `what` (see [`skip`]).
pub fn skip_part(what: impl Display) {
    skip(Skipped::Part, what);
}

/// A path from `.tools/env` (written by `scripts/setup.sh`), or `None` after a skip of
/// `skipped` (see [`skip`]) naming `what` is missing.
fn tool(skipped: Skipped, key: &str, what: &str) -> Option<PathBuf> {
    match crate::java::tools_env().get(key) {
        Some(path) if std::path::Path::new(path).exists() => Some(PathBuf::from(path)),
        Some(path) => {
            skip(
                skipped,
                format!("{what} is missing: {key}={path} does not exist"),
            );
            None
        }
        None => {
            skip(
                skipped,
                format!("{what} is missing: no {key} in .tools/env (scripts/setup.sh installs it)"),
            );
            None
        }
    }
}

/// Headless Chromium, the browser the HTML pages are loaded in, or `None` after a skip of
/// `skipped`.
pub fn chromium(skipped: Skipped) -> Option<PathBuf> {
    tool(
        skipped,
        "HPROF_CHROMIUM",
        "Chromium (the browser HTML pages are checked in)",
    )
}

/// Go, whose `go tool pprof` reads the pprof files, or `None` after a skip of `skipped`.
pub fn go(skipped: Skipped) -> Option<PathBuf> {
    tool(
        skipped,
        "HPROF_GO",
        "Go (`go tool pprof` reads the pprof files)",
    )
}

/// The effective user id of this process (from `/proc/self/status`).
pub fn euid() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            let uids = s.lines().find_map(|l| l.strip_prefix("Uid:"))?.to_string();
            uids.split_whitespace().nth(1)?.parse().ok()
        })
        .expect("the effective uid in /proc/self/status")
}

/// Whether the tests run as root (attaching as another user, namespaces); `false` after a
/// skip of the whole test naming `why` root is needed.
pub fn root(why: &str) -> bool {
    let euid = euid();
    if euid == 0 {
        return true;
    }
    skip_test(format!("root is missing (euid {euid}): {why}"));
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The only test of this crate, so nothing else reads the environment it changes.
    #[test]
    fn a_skip_is_logged_outside_ci_and_fails_in_ci() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("skips.log");
        // SAFETY: this crate's only test: no other thread reads or writes the environment.
        unsafe {
            std::env::set_var("HPROF_TEST_SKIPS", &log);
            std::env::remove_var("CI");
        }
        skip_part("JDK 99 is missing: for the test");
        skip_test("Chromium is missing: for the test");
        let name = std::thread::current().name().unwrap().to_string();
        assert_eq!(
            std::fs::read_to_string(&log).unwrap(),
            format!(
                "part\t{name}\tJDK 99 is missing: for the test\ntest\t{name}\tChromium is missing: for the test\n"
            )
        );
        // SAFETY: as above.
        unsafe { std::env::set_var("CI", "true") };
        let failed = std::panic::catch_unwind(|| skip_test("Go is missing: for the test"));
        // SAFETY: as above.
        unsafe { std::env::remove_var("CI") };
        let message = failed.expect_err("a skip in CI fails the test");
        let message = message
            .downcast_ref::<String>()
            .expect("a formatted message");
        assert!(message.contains("Go is missing: for the test"), "{message}");
        assert!(message.contains("CI=true"), "{message}");
        // Nothing more was logged.
        assert_eq!(std::fs::read_to_string(&log).unwrap().lines().count(), 2);
    }
}
