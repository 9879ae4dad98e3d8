//! Instruments every `.class` file under a directory into another directory (same layout),
//! numbering methods from 1, and prints how many classes and methods were rewritten and
//! which methods could not be. Used by the rewriter's JDK test and handy for debugging:
//!
//! `cargo run --release -p hprof-classfile --example instrument_tree -- IN OUT`

use std::path::{Path, PathBuf};

use hprof_classfile::{
    STATE_CLASS, THREAD_CLASS, TRACKER_CLASS, TRACKER_PROBES, instrument, state_class,
    tracker_class, with_state_field,
};

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "class") {
            out.push(path);
        }
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = args.as_slice() else {
        return Err("usage: instrument_tree IN OUT".into());
    };
    let (input, output) = (Path::new(input), Path::new(output));
    let mut files = Vec::new();
    walk(input, &mut files)?;
    files.sort();
    let (mut classes, mut methods, mut failed, mut errors) = (0u32, 0u32, 0u32, 0u32);
    let mut next = 1u32;
    for file in &files {
        let bytes = std::fs::read(file)?;
        let dest = output.join(file.strip_prefix(input)?);
        std::fs::create_dir_all(dest.parent().unwrap_or(output))?;
        match instrument(&bytes, &TRACKER_PROBES, |_| {
            next += 1;
            Some(next - 1)
        }) {
            Ok(outcome) => {
                for (method, why) in &outcome.failed {
                    println!("not instrumented: {} {method}: {why}", file.display());
                    failed += 1;
                }
                let mut new = outcome.bytes;
                if new.is_some() {
                    classes += 1;
                    methods += outcome.instrumented;
                }
                // java.lang.Thread holds the threads' tracker states, as under the agent.
                if file.ends_with(format!("java.base/{THREAD_CLASS}.class")) {
                    new = Some(with_state_field(new.as_deref().unwrap_or(&bytes))?);
                }
                std::fs::write(&dest, new.as_deref().unwrap_or(&bytes))?;
            }
            Err(e) => {
                println!("unreadable: {}: {e}", file.display());
                errors += 1;
                std::fs::write(&dest, &bytes)?;
            }
        }
    }
    // With java.base among the output, the tracker classes go there too, so the tree can be
    // run with `--patch-module java.base=OUT/java.base` (the probes stay off: `engaged` is
    // false and nothing registers the natives).
    let base = output.join("java.base");
    if base.is_dir() {
        let path = base.join(format!("{TRACKER_CLASS}.class"));
        std::fs::create_dir_all(path.parent().unwrap_or(&base))?;
        std::fs::write(path, tracker_class(TRACKER_CLASS))?;
        std::fs::write(base.join(format!("{STATE_CLASS}.class")), state_class())?;
    }
    println!(
        "instrument_tree: files={} classes={classes} methods={methods} failed_methods={failed} unreadable={errors}",
        files.len()
    );
    Ok(())
}
