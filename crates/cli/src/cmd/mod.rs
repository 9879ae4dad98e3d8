//! One module per `hprof` subcommand.

pub mod analyze;
pub mod analyze_html;
pub mod attach;
pub mod convert;
pub mod diff;
pub mod listen;
pub mod print;
pub mod run;
pub mod summary;
pub mod top;
