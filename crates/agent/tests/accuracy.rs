//! CPU-accuracy tests of the samplers (a test binary of their own: `cargo test -p hprof-agent
//! --test accuracy`): shares of CPU sampled against what the programs measured, the hot
//! method's share, samples per interval. They run alone: Cargo runs test binaries one after
//! another, and this binary runs its tests one at a time (below), so no other test's JVM
//! competes with theirs for the machine's cores.

mod support;

mod async_sampler;
mod cpu_accuracy;
mod cpu_samples;

/// Sets `RUST_TEST_THREADS=1` before the test harness reads it (a constructor in
/// `.init_array`, run before `main`), so this binary's tests run one at a time however it is
/// started (an explicit `--test-threads` still wins).
#[used]
#[unsafe(link_section = ".init_array")]
static ONE_TEST_AT_A_TIME: extern "C" fn() = one_test_at_a_time;

extern "C" fn one_test_at_a_time() {
    // SAFETY: constructors run before `main`, while this is the process's only thread: nothing
    // reads or writes the environment concurrently.
    unsafe { std::env::set_var("RUST_TEST_THREADS", "1") };
}

#[test]
fn this_binary_runs_one_test_at_a_time() {
    assert_eq!(std::env::var("RUST_TEST_THREADS").as_deref(), Ok("1"));
}
