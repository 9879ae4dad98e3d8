#!/usr/bin/env python3
"""Benchmark: what each CPU timer source of the asynchronous sampler costs on javac compiling
java.util, at interval=10 ms and 1 ms, against no agent: interleaved runs (one untimed round
first), median wall time and median CPU time (user + system of the JVM) over the runs.

    bench/timer_overhead.py [--runs N] [--write]

--write replaces the "CPU timer sources on javac" section of bench/RESULTS.md.
"""
import argparse, resource, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402

SECTION = "## CPU timer sources on javac"


def once(command, cwd):
    """(wall seconds, CPU seconds) of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.time()
    subprocess.run(command, cwd=cwd, check=True, capture_output=True)
    wall = time.time() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    work, agent, _, (workload, javac) = common.prepare()
    configs = {"no agent": []}
    for interval in (10, 1):
        for timer in ("cpu", "perf"):
            configs[f"timer={timer}, {interval} ms"] = [
                f"-agentpath:{agent}=cpu=samples,interval={interval},timer={timer},file=/dev/null"]
    results = {name: ([], []) for name in configs}
    for flags in configs.values():
        once(javac(flags), work)
    for _ in range(args.runs):
        for name, flags in configs.items():
            wall, cpu = once(javac(flags), work)
            results[name][0].append(wall)
            results[name][1].append(cpu)
    base_wall = statistics.median(results["no agent"][0])
    base_cpu = statistics.median(results["no agent"][1])
    lines = [SECTION, "",
             f"Command: `bench/timer_overhead.py --write --runs {args.runs}` ({time.strftime('%Y-%m-%d')}, {common.machine()}).",
             f"{workload}, cpu=samples with each timer source; medians of {args.runs} interleaved runs, ratio to no agent:", "",
             "| profiler | wall (s) | ratio | CPU (s) | ratio |", "|---|---|---|---|---|"]
    for name, (walls, cpus) in results.items():
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        lines.append(f"| {name} | {wall:.2f} | {wall / base_wall:.3f} | {cpu:.2f} | {cpu / base_cpu:.3f} |")
    lines += ["", "Raw runs (wall s):", ""]
    lines += [f"- {name}: {' '.join(f'{w:.2f}' for w in walls)}" for name, (walls, _) in results.items()]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        common.write_section(SECTION, section)


if __name__ == "__main__":
    main()
