//! Names addresses of a running process: `symbolize PID ADDRESS...` (hex addresses; a
//! `k` prefix marks a kernel address), with the time each took and the memory held.

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(pid) = args.next().and_then(|p| p.parse().ok()) else {
        eprintln!("usage: symbolize PID [k]ADDRESS...");
        std::process::exit(2);
    };
    let mut symbolizer = hprof_symbols::Symbolizer::of_process(pid);
    for arg in args {
        let (kernel, hex) = match arg.strip_prefix('k') {
            Some(hex) => (true, hex),
            None => (false, arg.as_str()),
        };
        let Ok(address) = u64::from_str_radix(hex.trim_start_matches("0x"), 16) else {
            eprintln!("{arg}: not a hex address");
            continue;
        };
        let started = std::time::Instant::now();
        let at = if kernel {
            symbolizer.kernel(address)
        } else {
            symbolizer.user(address)
        };
        println!(
            "{address:#x}: {} {}+{:#x} ({:?})",
            at.library,
            at.symbol.as_deref().unwrap_or("?"),
            at.offset,
            started.elapsed()
        );
    }
    println!("memory: {} bytes", symbolizer.memory_used());
}
