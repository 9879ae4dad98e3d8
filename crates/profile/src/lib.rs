//! Owns the one profile model that hprof's outputs are read into, and the writers of the
//! standard formats made from it.
//!
//! - [`Recording`]: what a file holds, read by [`Recording::read`] from the agent's text
//!   (`java.hprof.txt`) or binary output: its traces and its sections (CPU SAMPLES, CPU TIME,
//!   SITES, MONITOR TIME), one per dump; or from folded stacks or a gzipped pprof profile.
//! - [`Profile`]: stacks of frames (root first) with a value per sample type, made from one
//!   kind of section ([`Kind`]) of one dump or of all of them ([`Recording::profile`]).
//! - Writers, one module each: [`folded`] (Brendan Gregg's collapsed stacks), [`pprof`]
//!   (profile.proto, gzipped), [`flame`] (a self-contained interactive HTML flame graph).
//! - [`Format`]: which of those writers a name or a file's extension picks.
//! - [`top::methods`]: methods ranked by self and total value over every stack, and the text
//!   tables of them ([`top::write_methods`], [`top::write_traces`]).
//! - [`diff`]: two profiles compared, each normalised to its own total: methods and stacks by
//!   change of share, a CI gate, differential folded stacks, a flame graph coloured by change.

#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod diff;
pub mod flame;
mod flame_timeline;
pub mod folded;
mod jfr;
mod model;
mod output;
pub mod pprof;
mod read;
mod timed;
pub mod top;

pub use model::{Frame, FrameKind, Kind, Profile, Sample, SampleType, Selection};
pub use output::Format;
pub use read::{Error, Recording};
pub use timed::{Filter, Timeline};
