//! The HPROF JVMTI agent, built as `libhprof.so`: heap and CPU profiling for JDK 11 and later,
//! with the option syntax and output formats of the JDK's former HPROF agent.
//!
//! Layers, top first (imports go down only; [`layers`] lists them and tests it, and
//! docs/architecture.md draws the map): [`entry`] (the exported `Agent_OnLoad`, the JVMTI
//! callbacks and the probes' natives, every one catching panics) and [`listener`] (the `net=`
//! commands); [`profiler`], which owns the session and dispatches events and commands to the
//! engines that take them; [`engine`], one module per profiling engine behind one interface;
//! [`signal`] and [`code_names`], the asynchronous sampler's handler, walker and frame names;
//! [`output`], one writer per format; the shared tables [`trace_store`], [`threads`],
//! [`options`], [`progress`], [`vm_options`]; and the FFI layer [`jvmti`] with [`error`], the
//! agent's one error type, both re-exported from the crate `hprof-jvmti`, which imports
//! nothing of the agent.
//! [`jvmti`], [`signal`] and [`entry`] are the only modules with `unsafe` code.

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod code_names;
pub mod engine;
pub mod entry;
pub use hprof_jvmti as jvmti;
pub use hprof_jvmti::error;
pub mod layers;
pub mod listener;
pub mod options;
pub mod output;
pub mod profiler;
pub mod progress;
pub mod signal;
pub mod threads;
pub mod trace_store;
pub mod vm_options;
