#!/usr/bin/env python3
"""Benchmark: what the progress lines of long dumps cost. The heap walks count what they see
for the progress lines (two additions per object, published every 65,536 objects); this
times the same dump with the agent built here and with the agent built at a commit before
the progress lines (--base), interleaved: java/src/ManyLive.java keeping N small objects live
(default 20,000,000, -Xmx4g), heap=sites (its dump at exit: full GC, heap walks), whole-JVM
wall time, median. Also the dump's own time as the new agent's last progress line gives it.

    bench/dump_progress.py [--runs N] [--objects N] [--base COMMIT] [--write]

--write replaces the "Dump progress lines" section of bench/RESULTS.md.
"""
import argparse, re, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import ROOT, machine, raw_runs, sh, publish  # noqa: E402

SECTION = "## Dump progress lines"


def build_at(commit, work):
    """The release agent built from `commit`'s sources (exported with git archive)."""
    src = work / f"src-{commit}"
    src.mkdir()
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent",
       "--target-dir", str(work / "target-base"), cwd=src)
    agent = work / f"libhprof-{commit}.so"
    shutil.copy2(work / "target-base/release/libhprof.so", agent)
    return agent


def run(agent, classes, objects, cwd):
    """Wall time of one run and its stderr."""
    cmd = ["java", "-Xmx4g", f"-agentpath:{agent}=heap=sites,verbose=n,file={cwd}/out.txt",
           "-cp", str(classes), "ManyLive", str(objects)]
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    return time.perf_counter() - start, done.stderr


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--objects", type=int, default=20_000_000)
    parser.add_argument("--base", default="1ea3d87")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    classes = ROOT / "target/java/classes"
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout.strip()
    work = Path(tempfile.mkdtemp(prefix="hprof-bench-"))
    agents = {f"base {args.base}": build_at(args.base, work), f"with progress ({head})": work / "libhprof.so"}
    shutil.copy2(ROOT / "target/release/libhprof.so", agents[f"with progress ({head})"])
    times = {name: [] for name in agents}
    dump_lines = []
    for name, agent in agents.items():
        run(agent, classes, args.objects, work)  # warm-up
    for _ in range(args.runs):
        for name, agent in agents.items():
            seconds, stderr = run(agent, classes, args.objects, work)
            times[name].append(seconds)
            dump_lines += [l for l in stderr.splitlines() if l.startswith("HPROF: dump: live objects counted")]
    medians = {name: statistics.median(v) for name, v in times.items()}
    base = medians[f"base {args.base}"]
    lines = [
        SECTION,
        "",
        f"Command: `bench/dump_progress.py --runs {args.runs} --objects {args.objects} --write` "
        f"({time.strftime('%Y-%m-%d')}, {machine()}).",
        f"java/src/ManyLive.java keeping {args.objects:,} objects live, heap=sites (fast mode), -Xmx4g: "
        "whole-JVM wall time (the dump at exit runs a full GC and two heap walks), runs interleaved, median. "
        "The base agent is built from the commit before the progress lines.",
        "",
        "| agent | wall time | ratio to base |",
        "|---|---|---|",
    ]
    for name, m in medians.items():
        lines.append(f"| {name} | {m:.2f} s | {m / base:.3f}x |")
    load = " ".join(f"{x:.2f}" for x in __import__("os").getloadavg())
    lines += ["", "The new agent's own lines: " + "; ".join(dump_lines), "",
              f"Load average at the end of the run: {load}.", ""]
    lines += raw_runs({"ManyLive": times}, digits=2)
    publish(SECTION, lines, args.write)


if __name__ == "__main__":
    main()
