//! Attaches the hprof agent to a running HotSpot JVM and runs a profiling session in it.
//!
//! - [`hotspot`]: HotSpot's dynamic-attach mechanism on Linux ([`Target`]: the JVM's socket,
//!   its namespaces and user; the `load` command), with one [`AttachError`] per way it fails,
//!   each with its exit status.
//! - [`session`]: the agent's session protocol over it ([`Session`]: start, dump, stop,
//!   status), its files in private directories of the JVM's /tmp, removed when done.

#![deny(missing_docs)]

pub mod hotspot;
pub mod session;

pub use hotspot::{AttachError, Target, is_plain_file};
pub use session::{Collected, Session, Started};
