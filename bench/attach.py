#!/usr/bin/env python3
"""Benchmark: what `hprof attach` costs a running program, and that `stop` gives it all back.
A CPU-bound program (java/src/bench/Throughput.java) reports its own speed every second: 5 s
before the attach, 5 s with a session running (cpu=samples at 10 ms, then cpu=samples at 1 ms,
then cpu=wall), 5 s after `stop`; against the same program never attached, interleaved, on
JDK 17. The figure for each phase is the median of its per-second rates over the runs; the
first second of each phase is left out (the attach itself, the stop itself).

A second table measures what cpu=times costs per call when it starts late, against the same
agent loaded at start-up: `bench.Throughput SECONDS calls` makes 10,000 calls of a small
method per round; with no agent, with `-agentpath:libhprof.so=cpu=times` from the start, and
with `hprof attach PID start cpu=times` (whose tracker finds each thread's counters in an
identity-hashed table instead of a field of java.lang.Thread).

    bench/attach.py [--runs N] [--write]

--write replaces the "hprof attach: before, during, after" section of bench/RESULTS.md.
"""
import argparse, os, platform, re, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## hprof attach: before, during, after"
PHASE = 5


def rates(options, classes, hprof, agent, mode="kernel", jvm=()):
    """Per-second rates of one run: {phase: [rates]}; options None = never attached."""
    proc = subprocess.Popen(["java", *jvm, "-cp", str(classes), "bench.Throughput", str(3 * PHASE), mode],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    pid = proc.stdout.readline().split()[1]
    env = {**os.environ, "HPROF_AGENT": str(agent)}
    phases = {"before": [], "during": [], "after": []}
    for second in range(3 * PHASE):
        line = proc.stdout.readline()
        rate = int(line.split()[1])
        phase = ["before", "during", "after"][second // PHASE]
        if second % PHASE:
            phases[phase].append(rate)
        if options is not None and second == PHASE - 1:
            subprocess.run([hprof, "attach", pid, "start", options], env=env, check=True,
                           capture_output=True)
        if options is not None and second == 2 * PHASE - 1:
            subprocess.run([hprof, "attach", pid, "stop", "-o", "/tmp/hprof-attach-bench.txt"],
                           env=env, check=True, capture_output=True)
    proc.wait(timeout=60)
    return phases


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", "-p", "hprof-cli"],
                   cwd=ROOT, check=True)
    subprocess.run([str(ROOT / "scripts/build-java.sh")], check=True)
    classes = ROOT / "target/java/classes"
    hprof = str(ROOT / "target/release/hprof")
    agent = ROOT / "target/release/libhprof.so"
    configs = {"never attached": None, "cpu=samples 10 ms": "cpu=samples,interval=10",
               "cpu=samples 1 ms": "cpu=samples,interval=1", "cpu=wall 10 ms": "cpu=wall,interval=10",
               "cpu=times": "cpu=times"}
    results = {name: {"before": [], "during": [], "after": []} for name in configs}
    for _ in range(args.runs):
        for name, options in configs.items():
            for phase, values in rates(options, classes, hprof, agent).items():
                results[name][phase] += values
    base = statistics.median(results["never attached"]["during"] + results["never attached"]["after"])
    lines = [SECTION, "",
             f"Command: `bench/attach.py --write --runs {args.runs}` ({time.strftime('%Y-%m-%d')}, {common.machine()}).",
             "Rounds per second of `bench.Throughput` (median of the per-second rates over the runs, the first second of each phase left out), and the ratio to the never-attached program's rate in the same seconds:", "",
             "| session | before | during | after stop |", "|---|---|---|---|"]
    for name, phases in results.items():
        cells = [f"{statistics.median(v):.0f} ({statistics.median(v) / base:.3f})" for v in phases.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    # What a call costs under cpu=times started late, against at start-up.
    calls = {"no agent": [], "cpu=times at start-up": [], "cpu=times attached": []}
    for _ in range(args.runs):
        calls["no agent"] += sum(rates(None, classes, hprof, agent, "calls").values(), [])
        loaded = rates(None, classes, hprof, agent, "calls", [f"-agentpath:{agent}=cpu=times,file=/dev/null"])
        calls["cpu=times at start-up"] += sum(loaded.values(), [])
        calls["cpu=times attached"] += rates("cpu=times", classes, hprof, agent, "calls")["during"]
    plain = statistics.median(calls["no agent"])
    lines += ["", "What a call costs under cpu=times (`bench.Throughput 15 calls`: rounds of 10,000 calls of a small method per second, median over the runs; for the attached session, its seconds while attached):", "",
              "| agent | rounds/s | ratio | ns per call added |", "|---|---|---|---|"]
    for name, values in calls.items():
        rate = statistics.median(values)
        added = (1e9 / rate - 1e9 / plain) / 10_000
        lines.append(f"| {name} | {rate:.0f} | {plain / rate:.2f}x | {added:.1f} |")
    common.publish(SECTION, lines, args.write)


if __name__ == "__main__":
    main()
