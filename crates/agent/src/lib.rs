//! The HPROF JVMTI agent, built as `libhprof.so`: heap and CPU profiling for JDK 11 and later,
//! with the option syntax and output formats of the JDK's former HPROF agent.
//!
//! Layout, outside in: [`entry`] holds the exported `Agent_OnLoad` and the JVMTI callbacks
//! (every one catches panics); [`profiler`] owns the agent's lifetime and dumps; [`engine`]
//! holds one module per profiling engine behind one interface; [`trace_store`] and
//! [`threads`] are the tables engines record into, [`code_names`] names their frames of native
//! and kernel code; [`output`] has one writer per format.
//! [`jvmti`], [`signal`] (the asynchronous sampler's signal handler, timers and crash guard)
//! and [`entry`], the FFI layer, are the only modules with `unsafe` code.

#![deny(unsafe_code)]
#![deny(missing_docs)]

pub mod code_names;
pub mod engine;
pub mod entry;
pub mod jvmti;
pub mod listener;
pub mod options;
pub mod output;
pub mod profiler;
pub mod progress;
pub mod signal;
pub mod threads;
pub mod trace_store;
