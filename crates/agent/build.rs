//! Builds the C crash guard of the asynchronous CPU sampler (`src/signal/guard.c`): the one
//! piece of the agent Rust cannot express, a function that returns twice (`sigsetjmp`).

fn main() {
    println!("cargo:rerun-if-changed=src/signal/guard.c");
    cc::Build::new()
        .file("src/signal/guard.c")
        .flag_if_supported("-fno-omit-frame-pointer")
        .warnings(true)
        .compile("hprof_guard");
}
