//! End-to-end tests of the agent on real JVMs (one test binary; each module is one area). The
//! CPU-accuracy tests are in a binary of their own (accuracy.rs), and the SIGQUIT storms
//! (stress.rs).

mod support;

mod binary;
mod cpu_times;
mod deep_stacks;
mod exit_paths;
mod heap_dump;
mod heap_sites;
mod heap_sites_fast;
mod kernel_frames;
mod loading;
mod monitors;
mod program_output;
mod progress;
mod reliability;
mod sigprof_taken;
mod threads;
