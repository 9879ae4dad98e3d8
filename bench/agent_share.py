#!/usr/bin/env python3
"""Benchmark: the CPU a sampling profiler itself uses, attributed by `perf record`, side by side
in one run: hprof cpu=samples (its default clock, native frames on) and async-profiler
(event=ctimer), at 10 ms and 1 ms, on javac compiling java.util (354 files, as
bench/cpu_samples.py) and on java/src/bench/CpuBench.java.

Wall and CPU times of whole runs (bench/stack_walk.py) move by several per cent from run to run
on two cores (javac's JIT compiles differently each time), more than the overhead targets (1.02x
at 10 ms, 1.05x at 1 ms). Here each run is sampled by perf (`-F 999`, every thread of the JVM)
and the profiler's share is counted directly: samples in its library on any thread (the signal
handler), plus every sample of its own threads (drain, naming, symbol reading), over all the
run's samples. What this leaves out: the kernel's cost of delivering the signals and running the
timers, counted in the interrupted thread's kernel samples; the run's kernel share is shown
beside it for comparison with no agent.

    bench/agent_share.py [--runs N] [--write]

--write replaces the "Profiler CPU share" section of bench/RESULTS.md.
"""
import argparse, re, shutil, statistics, subprocess, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402
import stack_walk  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Profiler CPU share"
ROW = re.compile(r"^\s*[\d.]+%\s+(\d+)\s+(.+?)\s{2,}(\S.*?)\s*$")


def shares(data, library, own_threads):
    """(profiler share %, kernel share %, samples) of one perf recording."""
    report = subprocess.run(["perf", "report", "-i", str(data), "--stdio", "-n", "--sort", "comm,dso"],
                            capture_output=True, text=True, check=True).stdout
    total = mine = kernel = 0
    for line in report.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        n, comm, dso = int(m.group(1)), m.group(2), m.group(3)
        total += n
        if dso == library or comm.startswith(own_threads):
            mine += n
        if dso == "[kernel.kallsyms]":
            kernel += n
    return 100 * mine / max(total, 1), 100 * kernel / max(total, 1), total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    if not shutil.which("perf"):
        raise SystemExit("perf is needed (Debian: linux-perf)")
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent"], cwd=ROOT, check=True)
    subprocess.run([str(ROOT / "scripts/build-java.sh")], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    ap_lib = stack_walk.async_profiler()
    work = Path(tempfile.mkdtemp(prefix="hprof-share-"))
    try:
        lib = work / "libhprof.so"
        shutil.copy(ROOT / "target/release/libhprof.so", lib)
        src, files = common.java_util_sources()
        classes = ROOT / "target/java/classes"
        workloads = {
            "javac java.util (354 files)": lambda flags: ["javac", *[f"-J{f}" for f in flags], "-nowarn", "-Xmaxwarns", "0",
                                                          "-d", str(work / "classes"), "--patch-module", f"java.base={src}", *files],
            "CpuBench": lambda flags: ["java", *flags, "-cp", str(classes), "bench.CpuBench"],
        }
        profilers = {
            "no agent": ([], None, ()),
            "hprof 10 ms": ([f"-agentpath:{lib}=cpu=samples,interval=10,file={work}/o.txt"], "libhprof.so", ("HPROF",)),
            "hprof 1 ms": ([f"-agentpath:{lib}=cpu=samples,interval=1,file={work}/o.txt"], "libhprof.so", ("HPROF",)),
            "async-profiler 10 ms": ([f"-agentpath:{ap_lib}=start,event=ctimer,interval=10ms,collapsed,file={work}/o.ap"],
                                     "libasyncProfiler.so", ("Async-profiler",)),
            "async-profiler 1 ms": ([f"-agentpath:{ap_lib}=start,event=ctimer,interval=1ms,collapsed,file={work}/o.ap"],
                                    "libasyncProfiler.so", ("Async-profiler",)),
        }
        rows = {}
        for workload, make in workloads.items():
            for _ in range(args.runs):
                for name, (flags, library, threads) in profilers.items():
                    data = work / "perf.data"
                    subprocess.run(["perf", "record", "-q", "-F", "999", "-o", str(data), "--", *make(flags)], cwd=work,
                                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                    rows.setdefault((workload, name), []).append(shares(data, library or "-", threads or ("\0",)))
                    data.unlink()
        lines = [SECTION, "",
                 f"Command: `bench/agent_share.py --runs {args.runs}` ({common.machine()}); async-profiler: `{ap_lib}`. "
                 "Each run sampled by `perf record -F 999` (all threads of the JVM); the profiler's share: samples in its "
                 "library on any thread (its signal handler) and every sample of its own threads, over the run's samples; "
                 "median (highest) of the runs. The kernel's share of the run beside it (signal delivery and timers are "
                 "counted there, on the interrupted thread).", "",
                 "| workload | profiler | profiler's share of the CPU | kernel's share | perf samples per run |",
                 "|---|---|---|---|---|"]
        for (workload, name), runs in rows.items():
            mine = [r[0] for r in runs]
            lines.append(f"| {workload} | {name} | {statistics.median(mine):.2f} % ({max(mine):.2f} %) | "
                         f"{statistics.median(r[1] for r in runs):.2f} % | {statistics.median(r[2] for r in runs):.0f} |")
        common.publish(SECTION, lines, args.write)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
