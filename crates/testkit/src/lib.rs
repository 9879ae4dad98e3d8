//! Helpers for the workspace's end-to-end tests: finding JDKs (the system JDK 17 and those
//! `scripts/setup.sh` installs), compiling and starting the Java programs of `java/`, jcmd,
//! VisualVM's heap library, and the built `libhprof.so`; what a test needs from the machine and
//! how a missing need is reported (failed in CI, a counted skip elsewhere).

pub mod browser;
pub mod java;
pub mod require;
