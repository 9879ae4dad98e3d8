//! Times the heap dump merge alone: `cargo run --release -p hprof-agent --example merge_bench
//! -- JVM_DUMP.hprof OUT.hprof` merges a dump HotSpot wrote (`jcmd GC.heap_dump`) into a new
//! binary profile, as `heap=dump,format=b` does, and prints the time and what was merged.

use std::io::BufWriter;

use hprof::engine::heap_merge::{Numbering, merge};
use hprof::options::{Options, Parsed};
use hprof::output::binary::BinaryWriter;

struct Plain(u32, u32, u64);

impl Numbering for Plain {
    fn class_serial(&mut self, _name: &str, _nth: usize) -> u32 {
        self.0 += 1;
        self.0
    }
    fn thread_serial(&mut self, _tid: Option<i64>) -> (u32, Option<String>) {
        self.1 += 1;
        (self.1, Some(String::new()))
    }
    fn trace_serial(&mut self) -> u32 {
        self.1 += 1;
        2_000_000 + self.1
    }
    fn foreign_id(&mut self) -> u64 {
        self.2 += 1;
        self.2
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = &args[..] else {
        eprintln!("usage: merge_bench JVM_DUMP OUT");
        std::process::exit(2);
    };
    let Ok(Parsed::Run(options)) = Options::parse("heap=dump,format=b", None) else {
        panic!("options");
    };
    let out = BufWriter::with_capacity(64 << 10, std::fs::File::create(output).unwrap());
    let mut writer = BinaryWriter::new(out, &options).unwrap();
    let file = std::fs::File::open(input).unwrap();
    let started = std::time::Instant::now();
    let stats = merge(
        std::io::BufReader::with_capacity(1 << 20, file),
        &mut writer,
        &mut Plain(0, 200_000, 1 << 40),
    )
    .unwrap();
    hprof::output::ProfileWriter::flush(&mut writer).unwrap();
    println!("{:.3} s {stats:?}", started.elapsed().as_secs_f64());
}
