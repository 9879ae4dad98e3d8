//! Owns where the agent library, `libhprof.so`, is found (for `hprof run` and `hprof
//! attach`).

use std::path::PathBuf;

use anyhow::{Context, Result, bail};

/// `libhprof.so` next to this program, or `$HPROF_AGENT`.
pub fn find_agent() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("HPROF_AGENT") {
        return Ok(PathBuf::from(path));
    }
    let exe = std::env::current_exe().context("cannot find this program's path")?;
    let agent = exe.with_file_name("libhprof.so");
    if !agent.is_file() {
        bail!(
            "libhprof.so not found next to {} (build it with `cargo build --release`, or set HPROF_AGENT)",
            exe.display()
        );
    }
    Ok(agent)
}
