//! Integration tests of hprof-format (one test binary; each module is one area).

mod sample;

mod fuzzish;
mod golden;
mod round_trip;
mod segments;
mod truncation;
