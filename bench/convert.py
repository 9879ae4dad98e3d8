#!/usr/bin/env python3
"""Benchmark: `hprof convert` and `hprof top` on a large synthetic profile: a java.hprof.txt
with 100,000 traces (8 to 24 frames each, from 5,000 methods of 500 classes) and one CPU
SAMPLES section whose counts add up to 10,000,000 samples. Median wall time of N runs of each
output format (folded stacks, pprof, HTML flame graph) and of `hprof top`.

    bench/convert.py [--runs N] [--write]

--write replaces the "hprof convert speed" section of bench/RESULTS.md.
"""
import argparse, os, platform, random, statistics, subprocess, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## hprof convert speed"
TRACES, SAMPLES = 100_000, 10_000_000


def make_profile(path):
    rng = random.Random(42)
    methods = [(f"com.example.pkg{c % 40}.Class{c}", f"method{m}") for c in range(500) for m in range(10)]
    # A skewed split of SAMPLES over TRACES (a few hot traces, a long tail), summing exactly.
    weights = [1.0 / (i + 1) ** 0.8 for i in range(TRACES)]
    total_w = sum(weights)
    counts = [max(1, int(SAMPLES * w / total_w)) for w in weights]
    counts[0] += SAMPLES - sum(counts)
    with open(path, "w") as f:
        f.write("JAVA PROFILE 1.0.1, created Tue Nov 24 12:00:00 2026\n\nsynthetic\n--------\n\n")
        f.write('THREAD START (obj=50000001, id = 200001, name="main", group="main")\n')
        for t in range(TRACES):
            f.write(f"TRACE {300001 + t}: (thread=200001)\n")
            depth = rng.randint(8, 24)
            for _ in range(depth):
                cls, m = methods[rng.randrange(len(methods))]
                f.write(f"\t{cls}.{m}({cls.rsplit('.', 1)[1]}.java:{rng.randint(1, 900)})\n")
        f.write(f"CPU SAMPLES BEGIN (total = {SAMPLES}) Tue Nov 24 12:00:10 2026\n")
        f.write("rank   self  accum   count trace method\n")
        order = sorted(range(TRACES), key=lambda i: -counts[i])
        accum = 0.0
        for rank, i in enumerate(order, 1):
            share = counts[i] * 100.0 / SAMPLES
            accum += share
            f.write(f"{rank:4} {share:5.2f}% {accum:5.2f}% {counts[i]:7} {300001 + i:5} x.y\n")
        f.write("CPU SAMPLES END\n")


def timed(cmd):
    start = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-cli"], cwd=ROOT, check=True)
    hprof = str(ROOT / "target/release/hprof")
    with tempfile.TemporaryDirectory(prefix="hprof-convert-bench-") as work:
        work = Path(work)
        profile = work / "big.hprof.txt"
        make_profile(profile)
        size = profile.stat().st_size
        cases = {
            "folded stacks (.collapsed)": [hprof, "convert", str(profile), str(work / "out.collapsed")],
            "pprof (.pb.gz)": [hprof, "convert", str(profile), str(work / "out.pb.gz")],
            "HTML flame graph (.html)": [hprof, "convert", str(profile), str(work / "out.html")],
            "hprof top": [hprof, "top", str(profile)],
        }
        for cmd in cases.values():
            timed(cmd)  # warm the page cache and the binary
        results = {name: [timed(cmd) for _ in range(args.runs)] for name, cmd in cases.items()}
        sizes = {name: (work / out).stat().st_size for name, out in
                 [("folded stacks (.collapsed)", "out.collapsed"), ("pprof (.pb.gz)", "out.pb.gz"), ("HTML flame graph (.html)", "out.html")]}
    lines = [SECTION, "",
             f"`bench/convert.py --runs {args.runs}` on {platform.node()} ({os.cpu_count()} cores), "
             f"{time.strftime('%Y-%m-%d')}: a synthetic java.hprof.txt of {size / 1e6:.0f} MB with "
             f"{TRACES:,} traces (8 to 24 frames) and {SAMPLES:,} samples in one CPU SAMPLES section; "
             "median wall time of the whole command (reading, parsing, writing). Target: under 1 s each.", "",
             "| output | median (s) | runs (s) | output size |", "|---|---|---|---|"]
    for name, times in results.items():
        out_size = f"{sizes[name] / 1e6:.1f} MB" if name in sizes else "(stdout)"
        lines.append(f"| {name} | {statistics.median(times):.3f} | {' '.join(f'{t:.3f}' for t in times)} | {out_size} |")
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        path = ROOT / "bench/RESULTS.md"
        text = path.read_text()
        import re
        pattern = re.compile(re.escape(SECTION) + r"\n.*?(?=\n## |\Z)", re.S)
        text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
        path.write_text(text)


if __name__ == "__main__":
    main()
