//! The `hprof` command.

fn main() {}
