//! One module per `hprof` subcommand.

pub mod print;
pub mod run;
pub mod summary;
