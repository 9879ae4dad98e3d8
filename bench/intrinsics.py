#!/usr/bin/env python3
"""Benchmark: what counting the JIT's allocating intrinsics costs heap=sites' fast mode. The
agent of this checkout against the agent built from an earlier revision (--base, by default
the last commit before the intrinsics were counted), both `heap=sites` (fast mode, default
options), and no agent, runs interleaved, median wall time of N each, on JDK 17:

- AllocBench (java/src/bench/AllocBench.java, 3000 rounds) and javac compiling java.util (354
  files), the workloads of bench/heap_sites.py;
- IntrinsicBench (java/src/bench/IntrinsicBench.java): loops of 2,000,000 compiled calls of
  each allocating intrinsic (clone, Arrays.copyOf, Array.newInstance, string concatenation,
  capturing lambdas, Constructor.newInstance), one JVM per kind, whose own ns/op is reported
  too.

    bench/intrinsics.py [--runs N] [--base REV] [--write]
                        [--agent PATH] [--base-agent PATH] [--intrinsics-only]

--agent and --base-agent run prebuilt agents (this checkout's, the base's) instead of building
them; --intrinsics-only leaves AllocBench and javac out.

--write replaces the "heap=sites fast mode: allocating intrinsics" section of bench/RESULTS.md.
"""
import argparse, re, shutil, statistics, subprocess, tempfile, time
from pathlib import Path

import sys

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import ROOT, machine, prepare, raw_runs, sh, publish  # noqa: E402

SECTION = "## heap=sites fast mode: allocating intrinsics"
BASE = "1ea3d87"
KINDS = ["clone", "copyOf", "newInstance", "concat", "lambda", "reflect"]


def base_agent(rev, work):
    """The agent built from revision `rev` (a release build in a cache under target/)."""
    cache = ROOT / "target/bench-base" / rev
    built = cache / "target/release/libhprof.so"
    if not built.exists():
        src = cache / "src"
        shutil.rmtree(src, ignore_errors=True)
        src.mkdir(parents=True)
        archive = subprocess.run(["git", "archive", rev], cwd=ROOT, check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", cwd=src,
           env={**__import__("os").environ, "CARGO_TARGET_DIR": str(cache / "target")})
    agent = work / "libhprof-base.so"
    shutil.copy2(built, agent)
    return agent


def run(cmd, cwd):
    """Wall time and standard output of one run."""
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=cwd, check=True, capture_output=True, text=True).stdout
    return time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--base", default=BASE)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--agent", help="a prebuilt libhprof.so to run as this checkout's")
    parser.add_argument("--base-agent", help="a prebuilt libhprof.so to run as --base's")
    parser.add_argument("--intrinsics-only", action="store_true")
    args = parser.parse_args()

    work, agent, classes, (javac_name, javac) = prepare(args.agent)
    if args.base_agent:
        base = work / "libhprof-base.so"
        shutil.copy2(args.base_agent, base)
    else:
        base = base_agent(args.base, work)
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
    profilers = {
        "no agent": [],
        f"heap=sites before ({args.base})": [f"-agentpath:{base}=heap=sites,file={work}/base.txt"],
        f"heap=sites now ({rev})": [f"-agentpath:{agent}=heap=sites,file={work}/now.txt"],
    }
    workloads = {} if args.intrinsics_only else {
        "AllocBench (allocation-heavy)": lambda flags: ["java", *flags, "-cp", str(classes), "bench.AllocBench", "3000"],
        javac_name: javac,
    }
    for kind in KINDS:
        workloads[f"IntrinsicBench {kind}"] = (lambda k: lambda flags: ["java", *flags, "-cp", str(classes), "bench.IntrinsicBench", k, "2000000"])(kind)
    times = {w: {p: [] for p in profilers} for w in workloads}
    nanos = {w: {p: [] for p in profilers} for w in workloads}
    load = []
    for _ in range(args.runs):
        for workload, make in workloads.items():
            for name, flags in profilers.items():
                t, out = run(make(flags), work)
                times[workload][name].append(t)
                m = re.search(r"(\d+) ns/op", out)
                if m:
                    nanos[workload][name].append(int(m.group(1)))
        load.append(float(open("/proc/loadavg").read().split()[0]))

    names = list(profilers)
    lines = [SECTION, "",
             f"Command: `bench/intrinsics.py --runs {args.runs}{' --write' if args.write else ''}` ({time.strftime('%Y-%m-%d')}, {machine()}); "
             f"load average (1 min) after each round: {', '.join(f'{x:.1f}' for x in load)}.",
             "Wall time of the whole JVM run, median; ratio against no agent in brackets; for IntrinsicBench also the"
             " program's own time per loop iteration (median ns/op).", "",
             "| workload | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for workload in workloads:
        b = statistics.median(times[workload]["no agent"])
        cells = []
        for n in names:
            t = statistics.median(times[workload][n])
            cell = f"{t:.2f} s ({t / b:.2f}x)"
            if nanos[workload][n]:
                cell += f", {statistics.median(nanos[workload][n]):.0f} ns/op"
            cells.append(cell)
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    lines += ["", ""] + raw_runs(times, digits=2)
    publish(SECTION, lines, args.write)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
