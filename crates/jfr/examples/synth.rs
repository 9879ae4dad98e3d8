//! Writes a synthetic recording for benchmarks: `synth OUT SAMPLES [STACKS] [THREADS]
//! [SECONDS]`: SAMPLES `jdk.ExecutionSample` events spread evenly over SECONDS (default 100) on
//! THREADS threads (default 16), drawn from STACKS distinct stacks (default 20,000) 10 to 40
//! frames deep over 400 methods, one chunk per million events.

use hprof_jfr::pools::{FRAME_JIT, FrameRef, Pools};
use hprof_jfr::schema::{self, id};
use hprof_jfr::writer::{self, Put};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .ok_or("usage: synth OUT SAMPLES [STACKS] [THREADS] [SECONDS]")?;
    let arg = |i: usize, default: u64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(default);
    let samples = arg(2, 10_000_000);
    let stacks = arg(3, 20_000);
    let threads = arg(4, 16);
    let seconds = arg(5, 100);
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Stacks share prefixes: each is a walk down a tree of methods.
    let shapes: Vec<Vec<(u64, i32)>> = (0..stacks)
        .map(|s| {
            let depth = 10 + (s * 7919 % 31);
            let mut seed = s / 8;
            (0..depth)
                .map(|d| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(d);
                    let m = if d < 4 {
                        d * 13 % 400
                    } else {
                        (seed >> 33) % 400
                    };
                    (m, (d % 50 + 1) as i32)
                })
                .collect()
        })
        .collect();
    let start_nanos = 1_700_000_000_000_000_000i64;
    let span = seconds as i64 * 1_000_000_000;
    let mut file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let per_chunk = 1_000_000u64;
    let mut done = 0u64;
    let metadata = schema::metadata();
    while done < samples {
        let n = per_chunk.min(samples - done);
        let mut pools = Pools::new();
        let mut stack_keys = vec![0i64; shapes.len()];
        let thread_keys: Vec<i64> = (0..threads)
            .map(|t| pools.thread(t as i64 + 1, 1000 + t as i64, &format!("worker-{t}")))
            .collect();
        let mut events = Vec::with_capacity(n as usize * 12);
        let mut body = Vec::with_capacity(32);
        let chunk_start = done as i64 * span / samples as i64;
        for i in done..done + n {
            let s = (next() % shapes.len() as u64) as usize;
            if stack_keys[s] == 0 {
                let frames: Vec<FrameRef> = shapes[s]
                    .iter()
                    .rev()
                    .map(|&(m, line)| {
                        let class = pools.class(&format!("com/example/C{}", m % 40));
                        FrameRef {
                            method: pools.method(class, &format!("m{m}"), "()V"),
                            line,
                            bci: 0,
                            kind: FRAME_JIT,
                        }
                    })
                    .collect();
                stack_keys[s] = pools.stack(&frames, false);
            }
            body.clear();
            body.long(i as i64 * span / samples as i64);
            body.long(thread_keys[(next() % threads) as usize]);
            body.long(stack_keys[s]);
            body.long(0);
            writer::event(&mut events, id::EXECUTION_SAMPLE, &body);
        }
        let chunk_end = (done + n) as i64 * span / samples as i64;
        file.write_all(&writer::chunk(
            start_nanos + chunk_start,
            chunk_end - chunk_start,
            chunk_start,
            1_000_000_000,
            &events,
            pools.constant_pools(),
            &metadata,
        ))?;
        done += n;
    }
    file.flush()?;
    Ok(())
}
