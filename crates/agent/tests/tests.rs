//! End-to-end tests of the agent on real JVMs (one test binary; each module is one area).

mod support;

mod async_sampler;
mod binary;
mod cpu_accuracy;
mod cpu_samples;
mod cpu_times;
mod deep_stacks;
mod exit_paths;
mod heap_dump;
mod heap_sites;
mod heap_sites_fast;
mod kernel_frames;
mod loading;
mod monitors;
mod progress;
mod reliability;
mod sigprof_taken;
mod threads;
