//! Helpers shared by the CLI's integration tests: running `hprof`, building test files,
//! starting Java programs and the VisualVM checker.

#![allow(dead_code)]

pub use hprof_testkit::java;
pub mod synthetic;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The `hprof` binary under test.
pub fn hprof() -> Command {
    Command::new(env!("CARGO_BIN_EXE_hprof"))
}

/// Runs `hprof` with `args` and returns its output.
pub fn run_hprof(args: &[&str]) -> Output {
    hprof()
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("hprof runs")
}

/// Runs `hprof` and returns its stdout, failing the test if it fails.
pub fn hprof_ok(args: &[&str]) -> String {
    let out = run_hprof(args);
    assert!(
        out.status.success(),
        "hprof {args:?} failed with {}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8 output")
}

/// Parses `hprof summary --json --top 0 FILE`.
pub fn summary_json(file: &Path) -> serde_json::Value {
    let text = hprof_ok(&["summary", "--json", "--top", "0", file.to_str().unwrap()]);
    serde_json::from_str(&text).expect("summary prints JSON")
}

/// Instances and shallow bytes of one class in a summary, or `None`.
pub fn class_row(summary: &serde_json::Value, name: &str) -> Option<(u64, u64)> {
    summary["classes"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)
        .map(|c| {
            (
                c["instances"].as_u64().unwrap(),
                c["shallow_bytes"].as_u64().unwrap(),
            )
        })
}

/// A fresh temporary directory.
pub fn temp_dir() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// Writes `bytes` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path
}

/// The output of `go tool pprof -top` (Go from .tools/env, its caches in a private home) of
/// `file` with `extra` options.
pub fn go_pprof_top(file: &Path, extra: &[&str]) -> String {
    let go = java::tools_env()
        .get("HPROF_GO")
        .expect("HPROF_GO in .tools/env: run scripts/setup.sh");
    let home = file.parent().unwrap().join("gohome");
    let output = Command::new(go)
        .args(["tool", "pprof", "-top", "-symbolize=none"])
        .args(extra)
        .arg(file)
        .env("HOME", &home)
        .env("GOPATH", home.join("go"))
        .env("GOCACHE", home.join("cache"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{text} {}",
        String::from_utf8_lossy(&output.stderr)
    );
    text
}
