//! Integration tests of the `hprof` command (one test binary; each module is one area).

mod support;

mod cli_attach;
mod cli_code_frames;
mod cli_convert;
mod cli_diff;
mod cli_listen;
mod cli_offsets;
mod cli_print;
mod cli_reliability;
mod cli_run;
mod cli_summary;
mod cli_timeline;
mod cli_top;
mod e2e_analyze;
mod e2e_diff_heap;
mod e2e_heap_dump;
mod e2e_heap_report;
mod e2e_jcmd;
mod e2e_jfr;
mod e2e_visualvm;
