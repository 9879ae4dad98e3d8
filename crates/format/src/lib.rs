//! Reads and writes HPROF binary records.
