//! Java class files for the HPROF agent: a strict reader, one rewriting pipeline
//! (`rewrite.rs`: decode, insertion plan, layout, emit, exception handlers, StackMapTable frames,
//! line-number and local-variable tables) run with two probe kinds: `cpu=times`' tracker calls
//! at every method entry, before every return and on exceptional exit ([`instrument`]), and
//! `heap=sites`' allocation counters after every allocating instruction ([`count_allocations`]);
//! and the classes those probes call ([`tracker_class`], [`counter_class`]), assembled by one
//! generated-class assembler. No JVM is needed; the agent calls both rewriters from its
//! ClassFileLoadHook.
//!
//! ```
//! use hprof_classfile::{TRACKER_CLASS, TRACKER_PROBES, instrument, tracker_class};
//!
//! // The tracker class is itself a class file; nothing in it is instrumented.
//! let tracker = tracker_class(TRACKER_CLASS);
//! let outcome = instrument(&tracker, &TRACKER_PROBES, |m| Some(m.index as u32)).unwrap();
//! // Every method with a body: state, find, enter, child, caught, exit and <clinit>.
//! assert_eq!(outcome.instrumented, 7);
//! ```

#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod alloc;
pub mod asm;
mod bytes;
pub mod class;
pub mod code;
mod error;
pub mod frames;
mod generate;
mod instrument;
pub mod interp;
pub mod pool;
mod rewrite;
mod tracker;

pub use alloc::{
    ALLOCATING_INTRINSICS, AllocKind, AllocOutcome, AllocSite, AllocatingIntrinsic, ArrayLayout,
    CHUNK, CHUNK_BITS, COUNTER_CLASS, Element, INTRINSIC_PROBE_DESCRIPTOR, MULTI, NATIVE_PROBE,
    NativeAlloc, RAN, THREAD_COUNTS_DESCRIPTOR, THREAD_COUNTS_FIELD, THREAD_LAST_DESCRIPTOR,
    THREAD_LAST_FIELD, count_allocations, counter_class, intrinsic_probe, with_counts_field,
};
pub use class::ClassFile;
pub use error::{Error, Result};
pub use instrument::{MethodRef, Outcome, Probes, instrument};
pub use tracker::{
    CACHE_BITS, CAUGHT, CAUGHT_DESCRIPTOR, ENGAGED, ENTER, ENTER_DESCRIPTOR, EXIT, EXIT_DESCRIPTOR,
    IC_INTS, Keying, NATIVES, OFF, STATE, STATE_CLASS, STATE_DESCRIPTOR, STATE_FIELDS, TABLE,
    TABLE_DESCRIPTOR, THREAD_CLASS, THREAD_STATE_FIELD, TRACKER_CLASS, TRACKER_PROBES, cache_index,
    ic_entry, state_class, tracker_class, tracker_class_for, tracker_class_keyed, with_state_field,
};
