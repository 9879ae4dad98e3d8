//! Owns the agent's layer order and the test that keeps every import going down it. From the
//! top: the exported entry points; the profiler (sessions, dispatch); the engines; the
//! sampling support under them (the SIGPROF handler, the stack walker, perf events, and the
//! naming of native and kernel frames); the output writers; the shared tables (traces,
//! threads, options, progress lines, the JVM's own options); and at the bottom the FFI layer
//! (JVMTI, JNI, the operating system's primitives, agent threads, the panic barrier) with the
//! agent's error type. A module may import its own layer and those below it, never one above: what a lower
//! layer needs from a higher one is handed down (callbacks, trait objects, plain data).
//! docs/architecture.md draws the map.

/// The layers, top first: the modules (top-level names under `crate::`) each holds.
pub const LAYERS: &[(&str, &[&str])] = &[
    ("entry points", &["lib", "entry", "listener"]),
    ("profiler", &["profiler"]),
    ("engines", &["engine"]),
    ("sampling support", &["signal", "code_names"]),
    ("output", &["output"]),
    (
        "shared tables",
        &[
            "trace_store",
            "threads",
            "options",
            "progress",
            "vm_options",
        ],
    ),
    ("FFI layer", &["jvmti", "error", "layers"]),
];

/// The engines (modules of `engine/` with an `Engine`): none names another; what two share
/// is a helper of `engine/` (its ticker, the CPU samplers' `sampling`, object sites, VM
/// threads, SIGPROF watch) or a shared table.
pub const ENGINES: &[&str] = &[
    "cpu_samples",
    "cpu_async",
    "cpu_times",
    "heap_sites",
    "heap_dump",
    "monitors",
];

/// The layer of the top-level module `module` (0 is the top), if it has one.
pub fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .position(|(_, modules)| modules.contains(&module))
}

/// The top-level modules that `source` (a module's Rust text) names through `crate::` paths,
/// comments left out: `crate::a::b` and each name of `crate::{a, b::c}` give `a` (and `b`).
pub fn imported_modules(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in source.lines() {
        let code = match line.find("//") {
            Some(at) => &line[..at],
            None => line,
        };
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let after = &rest[at + "crate::".len()..];
            if let Some(group) = after.strip_prefix('{') {
                // Top-level names of a group, up to its closing brace (on this line).
                let mut depth = 0usize;
                let mut name_start = true;
                for (i, c) in group.char_indices() {
                    match c {
                        '{' => depth += 1,
                        '}' if depth == 0 => break,
                        '}' => depth -= 1,
                        ',' if depth == 0 => name_start = true,
                        _ if name_start && (c.is_ascii_alphabetic() || c == '_') => {
                            let name: String = group[i..]
                                .chars()
                                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                                .collect();
                            found.push(name);
                            name_start = false;
                        }
                        _ => {}
                    }
                }
            } else {
                let name: String = after
                    .chars()
                    .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    found.push(name);
                }
            }
            rest = after;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `.rs` file under `dir`, with its top-level module (`engine/cpu_async/drain.rs`:
    /// `engine`).
    fn sources(dir: &std::path::Path, top: Option<&str>, out: &mut Vec<(String, String)>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("the agent's sources")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for path in entries {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                sources(&path, Some(top.unwrap_or(&name)), out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let module = top.map_or(name, str::to_string);
                let text = std::fs::read_to_string(&path).expect("a source file");
                out.push((module, text));
            }
        }
    }

    #[test]
    fn no_module_imports_one_above_it() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut files = Vec::new();
        sources(&root, None, &mut files);
        assert!(files.len() > 20, "found the agent's sources");
        let mut upward = Vec::new();
        // (This module's own tests hold `crate::` paths as text.)
        for (module, text) in files.iter().filter(|(m, _)| m != "layers") {
            let from = layer_of(module)
                .unwrap_or_else(|| panic!("module {module} is in no layer of LAYERS"));
            for target in imported_modules(text) {
                let to = layer_of(&target)
                    .unwrap_or_else(|| panic!("crate::{target} (from {module}) is in no layer"));
                if to < from {
                    upward.push(format!(
                        "{module} ({}) imports crate::{target} ({})",
                        LAYERS[from].0, LAYERS[to].0
                    ));
                }
            }
        }
        upward.sort();
        upward.dedup();
        assert!(upward.is_empty(), "upward imports:\n{}", upward.join("\n"));
    }

    #[test]
    fn no_engine_names_another() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/engine");
        let mut files = Vec::new();
        sources(&root, None, &mut files);
        let mut crossing = Vec::new();
        for (engine, text) in files.iter().filter(|(m, _)| ENGINES.contains(&m.as_str())) {
            for line in text.lines().map(|l| l.split("//").next().unwrap_or("")) {
                for other in ENGINES.iter().filter(|&o| o != engine) {
                    if line.contains(&format!("engine::{other}"))
                        || line.contains(&format!("super::{other}"))
                    {
                        crossing.push(format!("{engine}: {}", line.trim()));
                    }
                }
            }
        }
        assert!(
            files.iter().filter(|(m, _)| m == "heap_sites").count() > 5,
            "found the engines' sources"
        );
        // Every module with an `Engine` is listed (a new engine cannot escape the check).
        let mut unlisted: Vec<&String> = files
            .iter()
            .filter(|(m, text)| text.contains("impl Engine for") && m != "mod")
            .map(|(m, _)| m)
            .filter(|m| !ENGINES.contains(&m.as_str()))
            .collect();
        unlisted.dedup();
        assert!(
            unlisted.is_empty(),
            "engines missing from ENGINES: {unlisted:?}"
        );
        assert!(
            crossing.is_empty(),
            "engine to engine:\n{}",
            crossing.join("\n")
        );
    }

    /// The FFI layer is its own crate (`crates/jvmti`, re-exported as `crate::jvmti` and
    /// `crate::error`): it must depend on no crate of ours, so nothing of the agent can reach
    /// it, and its sources must name nothing of the agent.
    #[test]
    fn the_ffi_crate_depends_on_nothing_of_the_agent() {
        let ffi = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../jvmti");
        let manifest = std::fs::read_to_string(ffi.join("Cargo.toml")).expect("the FFI crate");
        assert!(manifest.contains("name = \"hprof-jvmti\""), "{manifest}");
        let ours: Vec<&str> = manifest
            .lines()
            .filter(|l| l.trim_start().starts_with("hprof-") || l.contains("path ="))
            .collect();
        assert!(ours.is_empty(), "the FFI crate depends on: {ours:?}");
        let mut files = Vec::new();
        sources(&ffi.join("src"), None, &mut files);
        assert!(files.len() >= 8, "found the FFI crate's sources");
        for (module, text) in &files {
            let code = text.lines().map(|l| l.split("//").next().unwrap_or(""));
            for line in code {
                for name in ["hprof::", "hprof_agent", "hprof_jvmti"] {
                    assert!(
                        !line.contains(name),
                        "{module} of the FFI crate names {name}"
                    );
                }
            }
        }
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        assert!(!src.join("jvmti").exists() && !src.join("error.rs").exists());
    }

    #[test]
    fn imports_are_found_in_paths_and_groups_but_not_comments() {
        let text = "use crate::engine::Context;\nuse crate::{jvmti::{Jni, sys}, output};\n\
                    let x = crate::signal::current_tid(); // crate::profiler\n/// [`crate::entry`]\n";
        assert_eq!(
            imported_modules(text),
            ["engine", "jvmti", "output", "signal"]
        );
    }

    #[test]
    fn an_upward_import_is_caught() {
        let from = layer_of("output").unwrap();
        let to = layer_of(&imported_modules("use crate::engine::object_sites::Group;")[0]).unwrap();
        assert!(to < from);
    }
}
