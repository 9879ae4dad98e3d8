#!/usr/bin/env python3
"""Benchmark: how right the CPU samplers' shares are, and what they cost, side by side with
async-profiler built from its public source.

Accuracy: java/src/FourKernels.java (math in 1 ms bursts reading System.nanoTime at every
step, sort, HashMap, Math.sin/cos; each thread prints its own CPU time) on every installed JDK
(11, 17, 21, 25), at 1 ms, alone and two JVMs at once on the machine's cores, under
  hprof cpu=samples (the default clock, perf events), hprof timer=cpu (POSIX timers),
  async-profiler event=cpu (perf events) and event=ctimer (POSIX timers):
the worst kernel error in points, by thread (each kernel's thread's share of the samples
against its share of the CPU time: the clock) and by frame (the share of the samples whose
stack holds the kernel's method: the clock and the walk), and the samples of the four threads.

The clocks alone: bench/floor/timer_bursts.c (compiled here with cc), a C thread computing in
1 ms bursts between 5 ms sleeps for 4 s, with a perf event on its task clock or a POSIX timer on
its CPU clock every 1 ms of its CPU time, alone and beside two spinning threads: its CPU time,
the signals it got and the intervals they stand for.

Overhead: CpuBench (java/src/bench) and javac compiling java.util at 10 ms and 1 ms: CPU time
(user + system of the JVM) and wall time against no agent, runs interleaved, medians.

    bench/cpu_accuracy.py [--seconds S] [--runs N] [--skip-overhead] [--write]

async-profiler: built from /work/.mirror/async-profiler+async-profiler/repo when present
(`git archive HEAD | tar -x`, `make`, into .tools/async-profiler-COMMIT), else the copy at
/work/ap/build/lib; its rows are left out when neither exists.
--write replaces the "CPU accuracy under contention" section of bench/RESULTS.md.
"""
import argparse, re, resource, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402

ROOT = common.ROOT
SECTION = "## CPU accuracy under contention"
MIRROR = Path("/work/.mirror/async-profiler+async-profiler/repo")
PREBUILT = Path("/work/ap/build/lib/libasyncProfiler.so")
KERNELS = {"math": "FourKernels.kernelMath", "sort": "FourKernels.kernelSort",
           "hashmap": "FourKernels.kernelHashMap", "trig": "FourKernels.kernelTrig"}


def async_profiler():
    """The path of libasyncProfiler.so and how it was had, or (None, why)."""
    if MIRROR.exists():
        commit = subprocess.run(["git", "-C", str(MIRROR), "rev-parse", "--short=8", "HEAD"],
                                capture_output=True, text=True, check=True).stdout.strip()
        src = ROOT / ".tools" / f"async-profiler-{commit}"
        lib = src / "build/lib/libasyncProfiler.so"
        if not lib.exists():
            src.mkdir(parents=True, exist_ok=True)
            archive = subprocess.Popen(["git", "-C", str(MIRROR), "archive", "HEAD"], stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, check=True)
            archive.wait()
            subprocess.run(["make", "-C", str(src)], check=True, stdout=subprocess.DEVNULL)
        return lib, f"built from its source at commit {commit}"
    if PREBUILT.exists():
        return PREBUILT, f"the copy at {PREBUILT}"
    return None, "not measured: no source mirror and no built copy"


def jdks():
    """[(version, java)] of the installed JDKs: 17 from PATH, the others from .tools/env."""
    env = {}
    env_file = ROOT / ".tools/env"
    if env_file.exists():
        for line in env_file.read_text().splitlines():
            if "=" in line:
                key, value = line.split("=", 1)
                env[key] = value
    found = [(17, "java")]
    for version in (11, 21, 25):
        home = env.get(f"HPROF_JDK{version}")
        if home and Path(home, "bin/java").exists():
            found.append((version, str(Path(home, "bin/java"))))
    return sorted(found)


def hprof_flags(agent, out, extra=""):
    return [f"-agentpath:{agent}=cpu=samples,interval=1,thread=y,depth=64{extra},file={out}"]


def ap_flags(lib, out, event):
    return [f"-agentpath:{lib}=start,event={event},interval=1ms,threads,collapsed,file={out}"]


def hprof_counts(path):
    """{kernel: (thread samples, frame samples)} from a text profile with thread=y."""
    text = path.read_text()
    names = dict(re.findall(r'THREAD START \(obj=\w+, id = (\d+), name="([^"]*)"', text))
    traces = {}
    for m in re.finditer(r"TRACE (\d+): \(thread=(\d+)\)\n((?:\t.*\n)*)", text):
        traces[m.group(1)] = (names.get(m.group(2)), m.group(3))
    section = text[text.rfind("CPU SAMPLES BEGIN"):]
    counts = {k: [0, 0] for k in KERNELS}
    for count, trace in re.findall(r"^\s*\d+\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+(\d+)", section, re.M):
        thread, frames = traces.get(trace, (None, ""))
        if thread in counts:
            counts[thread][0] += int(count)
            if KERNELS[thread] + "(" in frames:
                counts[thread][1] += int(count)
    return counts


def ap_counts(path):
    """{kernel: (thread samples, frame samples)} from async-profiler's collapsed output with
    `threads` (the root frame is `[NAME tid=N]`)."""
    counts = {k: [0, 0] for k in KERNELS}
    for line in path.read_text().splitlines():
        stack, _, n = line.rpartition(" ")
        frames = stack.split(";")
        m = re.match(r"\[(\w+) tid=\d+\]", frames[0])
        if m and m.group(1) in counts:
            counts[m.group(1)][0] += int(n)
            if any(f.startswith(KERNELS[m.group(1)]) for f in frames):
                counts[m.group(1)][1] += int(n)
    return counts


def errors(stdout, counts):
    """(worst error by thread, worst by frame, samples) in points."""
    cpu = {k: int(v) for k, v in re.findall(r"^kernel (\w+) (\d+)$", stdout, re.M)}
    cpu_total = sum(cpu.values())
    samples = sum(c[0] for c in counts.values())
    if not cpu_total or not samples:
        return float("nan"), float("nan"), samples
    worst = lambda i: max(abs(counts[k][i] / samples - cpu[k] / cpu_total) * 100 for k in KERNELS)
    return worst(0), worst(1), samples


def accuracy(work, agent, ap, seconds):
    """{(jdk, profiler, jvms): [(thread error, frame error, samples)]}."""
    profilers = {
        "hprof (perf events, default)": ("hprof", ""),
        "hprof timer=cpu": ("hprof", ",timer=cpu"),
    }
    if ap:
        profilers["async-profiler event=cpu"] = ("ap", "cpu")
        profilers["async-profiler event=ctimer"] = ("ap", "ctimer")
    rows = {}
    for version, java in jdks():
        for name, (kind, option) in profilers.items():
            for jvms in (1, 2):
                procs = []
                for i in range(jvms):
                    out = work / f"acc-{i}.{'txt' if kind == 'hprof' else 'collapsed'}"
                    out.unlink(missing_ok=True)
                    flags = hprof_flags(agent, out, option) if kind == "hprof" else ap_flags(ap, out, option)
                    cmd = [java, *flags, "-cp", str(common.ROOT / "target/java/classes"), "FourKernels", str(seconds)]
                    procs.append((subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                                   text=True), out))
                for proc, out in procs:
                    stdout, stderr = proc.communicate(timeout=600)
                    if proc.returncode != 0:
                        raise SystemExit(f"JDK {version} {name}: {stderr[-2000:]}")
                    counts = hprof_counts(out) if kind == "hprof" else ap_counts(out)
                    rows.setdefault((version, name, jvms), []).append(errors(stdout, counts))
    return rows


def timer_bursts(work):
    """The lines timer_bursts.c prints for each clock, alone and beside two spinners."""
    binary = work / "timer_bursts"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-o", str(binary), str(ROOT / "bench/floor/timer_bursts.c"),
                    "-lpthread"], check=True)
    lines = []
    for spinners in (0, 2):
        for mode in (0, 1):
            out = subprocess.run([str(binary), str(mode), str(spinners)], capture_output=True, text=True, timeout=120)
            lines.append(out.stdout.strip() or out.stderr.strip())
    return lines


def cpu_and_wall(command, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), wall


def overhead(work, agent, ap, javac, runs):
    """{workload: {profiler: [(cpu s, wall s)]}}."""
    profilers = {"no agent": []}
    for interval in (10, 1):
        profilers[f"hprof default (perf), {interval} ms"] = [
            f"-agentpath:{agent}=cpu=samples,interval={interval},file={work}/o.txt"]
        profilers[f"hprof timer=cpu, {interval} ms"] = [
            f"-agentpath:{agent}=cpu=samples,interval={interval},timer=cpu,file={work}/o.txt"]
        if ap:
            for event in ("ctimer", "cpu"):
                profilers[f"async-profiler {event}, {interval} ms"] = [
                    f"-agentpath:{ap}=start,event={event},interval={interval}ms,collapsed,file={work}/o.collapsed"]
    workloads = {
        "CpuBench": lambda flags: ["java", *flags, "-cp", str(common.ROOT / "target/java/classes"), "bench.CpuBench"],
        javac[0]: javac[1],
    }
    results = {}
    for workload, make in workloads.items():
        for flags in profilers.values():
            cpu_and_wall(make(flags), work)
        times = {name: [] for name in profilers}
        for _ in range(runs):
            for name, flags in profilers.items():
                times[name].append(cpu_and_wall(make(flags), work))
        results[workload] = times
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-overhead", action="store_true")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    work, agent, _, javac = common.prepare()
    ap, ap_how = async_profiler()
    load = open("/proc/loadavg").read().split()[:3]
    lines = [SECTION, "",
             f"Command: `bench/cpu_accuracy.py{' --write' if args.write else ''} --seconds {args.seconds:g} --runs {args.runs}` "
             f"({time.strftime('%Y-%m-%d')}, {common.machine()}; load average {' '.join(load)} at the start: the machine "
             f"was shared with other work, so CPU shares and times move between runs). async-profiler: {ap_how}.", "",
             f"Accuracy: java/src/FourKernels.java for {args.seconds:g} s at 1 ms, one JVM, then two at once; worst kernel "
             "error in points against the CPU time each kernel's thread measured, by thread (the clock) and by the "
             "kernel's frame (the clock and the walk); samples of the four threads (each JVM's, for two).", "",
             "| JDK | profiler | alone: by thread | by frame | samples | two JVMs: by thread | by frame | samples |",
             "|---|---|---|---|---|---|---|---|"]
    rows = accuracy(work, agent, ap, args.seconds)
    for (version, name, jvms), results in sorted(rows.items()):
        if jvms != 1:
            continue
        alone = results[0]
        pair = rows[(version, name, 2)]
        fmt = lambda r: f"{r[0]:.2f} | {r[1]:.2f} | {r[2]}"
        pair_text = " / ".join(f"{r[0]:.2f}" for r in pair) + " | " + " / ".join(f"{r[1]:.2f}" for r in pair) \
            + " | " + " / ".join(str(r[2]) for r in pair)
        lines.append(f"| {version} | {name} | {fmt(alone)} | {pair_text} |")
    lines += ["", "The clocks alone (bench/floor/timer_bursts.c: a C thread in 1 ms bursts between 5 ms sleeps, "
              "a signal asked for every 1 ms of its CPU time; `intervals` counts a POSIX signal's overruns and "
              "a perf event's count):", "", "```"]
    lines += timer_bursts(work)
    lines += ["```"]
    if not args.skip_overhead:
        results = overhead(work, agent, ap, javac, args.runs)
        lines += ["", f"Overhead: CPU time (user + system of the JVM) and wall time, medians of {args.runs} interleaved runs "
                  "(one warm-up round), ratio to no agent.", "",
                  "| workload | profiler | CPU (s) | ratio | wall (s) | ratio |", "|---|---|---|---|---|---|"]
        for workload, times in results.items():
            base_cpu = statistics.median(t[0] for t in times["no agent"])
            base_wall = statistics.median(t[1] for t in times["no agent"])
            for name, values in times.items():
                cpu = statistics.median(t[0] for t in values)
                wall = statistics.median(t[1] for t in values)
                lines.append(f"| {workload} | {name} | {cpu:.2f} | {cpu / base_cpu:.3f} | {wall:.2f} | {wall / base_wall:.3f} |")
        lines += ["", "Raw runs (CPU s / wall s):", ""]
        for workload, times in results.items():
            for name, values in times.items():
                lines.append(f"- {workload}, {name}: {' '.join(f'{c:.2f}/{w:.2f}' for c, w in values)}")
    common.publish(SECTION, lines, args.write)


if __name__ == "__main__":
    main()
