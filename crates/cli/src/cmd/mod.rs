//! One module per `hprof` subcommand.

pub mod print;
pub mod summary;
