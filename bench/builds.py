#!/usr/bin/env python3
"""Benchmark: two builds of the agent side by side, for changes that must not cost anything (a
refactoring). Each profiler mode on the workload it stresses, the two builds' runs interleaved
(base, new, base, new, ...) after one warm-up round, median wall time and median CPU time (user +
system of the JVM, less noisy than wall time on a shared machine) of N runs each:

- cpu=samples (interval=10 ms) on java/src/bench/CpuBench.java and on javac java.util;
- cpu=times on java/src/bench/CallBench.java (2000 iterations) and on javac java.util;
- heap=sites (fast mode, the default) on java/src/bench/AllocBench.java (3000) and javac;
- heap=dump (format=b, at exit) of java/src/bench/BigHeap.java at 10 % (about 1.4 M objects).

    bench/builds.py --base BASE.so [--new NEW.so] [--runs N] [--write]

--new defaults to this checkout's build (`cargo build --release`). --write replaces the "Two
builds side by side" section of bench/RESULTS.md.
"""
import argparse, os, resource, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import machine, prepare, publish  # noqa: E402

SECTION = "## Two builds side by side"


def run(cmd, cwd):
    """Wall and CPU seconds (user + system of the child) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True, help="the base build's libhprof.so")
    parser.add_argument("--new", help="the new build's libhprof.so (default: this checkout's)")
    parser.add_argument("--base-name", default="base")
    parser.add_argument("--new-name", default="new")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    work, new_agent, classes, (javac_name, javac) = prepare(args.new)
    base_agent = work / "libhprof-base.so"
    shutil.copy2(args.base, base_agent)
    builds = {args.base_name: base_agent, args.new_name: new_agent}
    java = lambda main, *rest: (lambda flags: ["java", *flags, "-cp", str(classes), main, *rest])
    dump = str(work / "dump.hprof")
    cases = [
        ("cpu=samples,interval=10", "CpuBench", java("bench.CpuBench")),
        ("cpu=samples,interval=10", javac_name, javac),
        ("cpu=times", "CallBench 2000", java("bench.CallBench", "2000")),
        ("cpu=times", javac_name, javac),
        ("heap=sites", "AllocBench 3000", java("bench.AllocBench", "3000")),
        ("heap=sites", javac_name, javac),
        (f"heap=dump,format=b,file={dump}", "BigHeap 10 %",
         lambda flags: ["java", "-Xmx2g", *flags, "-cp", str(classes), "bench.BigHeap", "10"]),
    ]
    rows, raw = [], []
    for options, workload, make in cases:
        out = work / "out.txt"
        flags = {name: [f"-agentpath:{agent}={options}" + ("" if "file=" in options else f",file={out}")]
                 for name, agent in builds.items()}
        times = {name: [] for name in builds}
        for round_ in range(args.runs + 1):
            for name in builds:
                result = run(make(flags[name]), work)
                if round_ > 0:
                    times[name].append(result)
        mode = options.split(",file=")[0]
        med = {name: (statistics.median(t[0] for t in ts), statistics.median(t[1] for t in ts))
               for name, ts in times.items()}
        (bw, bc), (nw, nc) = med[args.base_name], med[args.new_name]
        rows.append(f"| {mode} | {workload} | {bw:.2f} | {nw:.2f} | {nw / bw:.3f}x | {bc:.2f} | {nc:.2f} | {nc / bc:.3f}x |")
        for name, ts in times.items():
            raw.append(f"- {mode}, {workload}, {name}: wall " + " ".join(f"{t[0]:.2f}" for t in ts)
                       + "; CPU " + " ".join(f"{t[1]:.2f}" for t in ts))
        print(rows[-1], flush=True)
    load = os.getloadavg()
    lines = [SECTION, "",
             f"Command: `bench/builds.py --base BASE.so --runs {args.runs}` ({machine()}; load average "
             f"{load[0]:.1f} at the end). {args.base_name} and {args.new_name} interleaved, one warm-up "
             "round, medians; CPU is the JVM's user + system time.", "",
             f"| mode | workload | {args.base_name} wall (s) | {args.new_name} wall (s) | ratio | "
             f"{args.base_name} CPU (s) | {args.new_name} CPU (s) | ratio |",
             "|---|---|---|---|---|---|---|---|", *rows, "", "Raw runs:", "", *raw, ""]
    publish(SECTION, lines, args.write)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
