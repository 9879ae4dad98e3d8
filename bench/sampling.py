#!/usr/bin/env python3
"""Benchmark: how right and how cheap the CPU samplers are, side by side in one run: hprof's
asynchronous sampler (cpu=samples), its JVMTI sampler (cpu=samples,sampler=jvmti) and JFR's
execution sampler (jdk.ExecutionSample). async-profiler is not measured: its source and
releases are on GitHub, which this machine cannot reach, and no registry it can reach
(crates.io, PyPI, npm, Debian) carries it.

Accuracy, on java/src/Sampling.java and java/src/CpuHot.java:
  - kernels: four threads, each running its own kernel; each measures its own CPU time. The
    worst difference, in points, between a kernel's share of the samples and its share of
    the measured CPU time (and the sampling noise to expect at that many samples);
  - inline: a loop calling a small method that holds > 95 % of the CPU: the share of samples
    whose top frame is the caller;
  - native: a loop reading its own CPU time (a short native call) between slices of
    computation; the native call's share of the samples against its share of the time;
  - accept: a thread blocked in accept() beside a CPU-bound one: samples of the blocked thread.
The asynchronous sampler is measured with each timer source (timer=perf, cpu, itimer).
Overhead: whole-JVM wall time at interval=10 ms and 1 ms on java/src/bench/CpuBench.java and
on javac compiling java.util, against no agent (interleaved runs, median), for each timer source;
and the cost of following virtual threads (thread=y) on 100,000 of them (JDK 21 and 25).

    bench/sampling.py [--runs N] [--seconds S] [--write]

--write replaces the "CPU sampler accuracy" section of bench/RESULTS.md.
"""
import argparse, math, os, platform, re, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402  (prepare, interleaved, raw_runs, write_section)

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## CPU sampler accuracy"


def jfr_settings(work, period_ms):
    """A copy of JFR's `profile` settings with the execution sampler at `period_ms`."""
    java_home = Path(subprocess.run(["java", "-XshowSettings:properties", "-version"], capture_output=True,
                                    text=True).stderr.split("java.home = ")[1].split("\n")[0].strip())
    text = (java_home / "lib/jfr/profile.jfc").read_text()
    text = re.sub(r'(<event name="jdk.ExecutionSample">.*?<setting name="period"[^>]*>)[^<]*(</setting>)',
                  lambda m: f"{m.group(1)}{period_ms} ms{m.group(2)}", text, flags=re.S)
    path = work / f"profile-{period_ms}ms.jfc"
    path.write_text(text)
    return path


def run(cmd, cwd):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {out.stderr[-2000:]}")
    return out.stdout


def hprof_samples(path):
    """[(thread name or None, [frames innermost first], count)] from a java.hprof.txt."""
    text = path.read_text()
    threads = dict(re.findall(r'THREAD START \(obj=\w+, id = (\d+), name="([^"]*)"', text))
    traces = {}
    for m in re.finditer(r"^TRACE (\d+):(?: \(thread=(\d+)\))?\n((?:\t.*\n)*)", text, re.M):
        traces[m.group(1)] = (threads.get(m.group(2)), [l.strip() for l in m.group(3).splitlines()])
    section = text[text.rindex("CPU SAMPLES BEGIN"):]
    samples = []
    for m in re.finditer(r"^\s*\d+\s+\S+%\s+\S+%\s+(\d+)\s+(\d+)\s", section, re.M):
        thread, frames = traces[m.group(2)]
        samples.append((thread, frames, int(m.group(1))))
    return samples


def jfr_samples(path, work):
    """The same from a JFR recording's jdk.ExecutionSample events (`jfr print`)."""
    text = run(["jfr", "print", "--events", "jdk.ExecutionSample", "--stack-depth", "64", str(path)], work)
    samples = []
    for event in text.split("jdk.ExecutionSample")[1:]:
        thread = re.search(r'sampledThread = "([^"]*)"', event)
        frames = re.findall(r"^\s+([\w$.<>/]+)\(.*\) line: ", event, re.M)
        samples.append((thread.group(1) if thread else None, frames, 1))
    return samples


SAMPLERS = {
    "hprof async perf": lambda work, opts: ([f"-agentpath:{work}/libhprof.so=cpu=samples,timer=perf,thread=y,depth=64,{opts},file={work}/out.txt"], "hprof"),
    "hprof async cpu": lambda work, opts: ([f"-agentpath:{work}/libhprof.so=cpu=samples,timer=cpu,thread=y,depth=64,{opts},file={work}/out.txt"], "hprof"),
    "hprof async itimer": lambda work, opts: ([f"-agentpath:{work}/libhprof.so=cpu=samples,timer=itimer,thread=y,depth=64,{opts},file={work}/out.txt"], "hprof"),
    "hprof jvmti": lambda work, opts: ([f"-agentpath:{work}/libhprof.so=cpu=samples,sampler=jvmti,thread=y,depth=64,{opts},file={work}/out.txt"], "hprof"),
    "JFR": lambda work, opts: ([f"-XX:StartFlightRecording=settings={jfr_settings(work, opts.split('=')[1])},filename={work}/out.jfr"], "jfr"),
}


def profile(sampler, interval_ms, work, classes, program):
    flags, kind = SAMPLERS[sampler](work, f"interval={interval_ms}")
    for f in (work / "out.txt", work / "out.jfr"):
        f.unlink(missing_ok=True)
    out = subprocess.run(["java", *flags, "-cp", str(classes), *program], cwd=work, capture_output=True,
                         text=True, timeout=600)
    if out.returncode != 0:
        raise SystemExit(f"{sampler} {program} failed: {out.stderr[-2000:]}")
    if "instead of perf events" in out.stderr or "HPROF: cpu=samples uses one process-wide" in out.stderr:
        # A source the kernel refused: the row would measure the fallback under its name.
        raise SystemExit(f"{sampler}: {out.stderr.strip()}")
    stdout = out.stdout
    samples = hprof_samples(work / "out.txt") if kind == "hprof" else jfr_samples(work / "out.jfr", work)
    return stdout, samples


def share(samples, keep):
    total = sum(n for _, _, n in samples)
    return sum(n for t, f, n in samples if keep(t, f)) / total * 100 if total else float("nan"), total



def accuracy(work, classes, seconds):
    rows = {}
    for sampler in SAMPLERS:
        r = {}
        # Kernels at 1 ms, so the run holds many samples.
        stdout, samples = profile(sampler, 1, work, classes, ["Sampling", "kernels", str(seconds)])
        measured = {k: int(v) for k, v in re.findall(r"^kernel (\w) (\d+)$", stdout, re.M)}
        cpu_total = sum(measured.values())
        in_kernel = [(t, f, n) for t, f, n in samples if any(x.startswith("Sampling.kernel") for x in f)]
        errors = []
        n_total = sum(n for _, _, n in in_kernel)
        for k, v in measured.items():
            s, _ = share(in_kernel, lambda t, f, k=k: any(x.startswith(f"Sampling.kernel{k}") for x in f))
            errors.append(abs(s - v / cpu_total * 100))
        p = max(v / cpu_total for v in measured.values())
        r["kernels"] = (max(errors), n_total, math.sqrt(p * (1 - p) / max(n_total, 1)) * 100)
        # The inlined hot method, at 10 ms.
        _, samples = profile(sampler, 10, work, classes, ["Sampling", "inline", str(seconds)])
        r["inline"] = share(samples, lambda t, f: bool(f) and f[0].startswith("Sampling.loop"))
        # The short native call.
        stdout, samples = profile(sampler, 10, work, classes, ["Sampling", "native", str(seconds)])
        native = int(re.search(r"^native (\d+)$", stdout, re.M).group(1))
        compute = int(re.search(r"^compute (\d+)$", stdout, re.M).group(1))
        s, n = share(samples, lambda t, f: any("getCurrentThreadCpuTime" in x or "getThreadTotalCpuTime" in x for x in f))
        r["native"] = (s, native / (native + compute) * 100, n)
        # A thread blocked in accept().
        _, samples = profile(sampler, 10, work, classes, ["CpuHot", str(int(seconds * 1000))])
        r["accept"] = sum(n for t, f, n in samples if t == "acceptor" or any("accept" in x.lower() and "Net" in x for x in f))
        rows[sampler] = r
    return rows


VTHREAD_PROFILERS = {
    "no agent": lambda agent, work: [],
    "cpu=samples": lambda agent, work: [f"-agentpath:{agent}=cpu=samples,interval=10,verbose=n,file={work}/v.txt"],
    "cpu=samples,thread=y": lambda agent, work: [f"-agentpath:{agent}=cpu=samples,thread=y,interval=10,verbose=n,file={work}/v.txt"],
}


def timed(cmd, cwd):
    """(wall seconds, CPU seconds: user + system of all the JVM's threads) of one run."""
    start = time.perf_counter()
    child = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed with status {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def interleaved(workloads, profilers, runs, cwd, warmup=1):
    """Wall and CPU times of each workload under each profiler, rounds interleaved:
    ({workload: {profiler: [wall s]}}, {workload: {profiler: [CPU s]}})."""
    walls, cpus = {}, {}
    for workload, make in workloads.items():
        for _ in range(warmup):
            for flags in profilers.values():
                timed(make(flags), cwd)
        wall = {name: [] for name in profilers}
        cpu = {name: [] for name in profilers}
        for _ in range(runs):
            for name, flags in profilers.items():
                w, c = timed(make(flags), cwd)
                wall[name].append(w)
                cpu[name].append(c)
        walls[workload], cpus[workload] = wall, cpu
    return walls, cpus


def ratio_table(title_cell, results, profilers, unit="s"):
    """Rows of medians, each with its ratio to the no-agent median."""
    lines = [f"| {title_cell} | " + " | ".join(profilers) + " |", "|---|" + "---|" * len(profilers)]
    for workload, times in results.items():
        base = statistics.median(times["no agent"])
        cells = [f"{statistics.median(times[p]):.3f} {unit}" + ("" if p == "no agent" else f" (**{statistics.median(times[p]) / base:.3f}**)")
                 for p in profilers]
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    return lines


def virtual_thread_cost(agent, classes, work, runs):
    """{"JDK N": {profiler: [seconds]}} of `Sampling vmany` on each installed JDK 21+."""
    env = ROOT / ".tools/env"
    homes = dict(l.split("=", 1) for l in env.read_text().splitlines() if "=" in l) if env.exists() else {}
    workloads = {}
    for version in (21, 25):
        home = homes.get(f"HPROF_JDK{version}")
        if home:
            java = f"{home.strip()}/bin/java"
            workloads[f"JDK {version}"] = lambda flags, java=java: [java, *flags, "-cp", str(classes), "Sampling", "vmany", "0"]
    profilers = {name: make(agent, work) for name, make in VTHREAD_PROFILERS.items()}
    return interleaved(workloads, profilers, runs, work)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    work, agent, classes, (javac_name, javac) = common.prepare()
    acc = accuracy(work, classes, args.seconds)

    profilers = {
        "no agent": [],
        "perf 10 ms": [f"-agentpath:{agent}=cpu=samples,timer=perf,interval=10,file={work}/o.txt"],
        "perf 1 ms": [f"-agentpath:{agent}=cpu=samples,timer=perf,interval=1,file={work}/o.txt"],
        "cpu 10 ms": [f"-agentpath:{agent}=cpu=samples,timer=cpu,interval=10,file={work}/o.txt"],
        "cpu 1 ms": [f"-agentpath:{agent}=cpu=samples,timer=cpu,interval=1,file={work}/o.txt"],
        "itimer 10 ms": [f"-agentpath:{agent}=cpu=samples,timer=itimer,interval=10,file={work}/o.txt"],
        "itimer 1 ms": [f"-agentpath:{agent}=cpu=samples,timer=itimer,interval=1,file={work}/o.txt"],
        "jvmti 10 ms": [f"-agentpath:{agent}=cpu=samples,sampler=jvmti,interval=10,file={work}/o.txt"],
        "JFR 10 ms": [f"-XX:StartFlightRecording=settings={jfr_settings(work, 10)},filename={work}/o.jfr"],
        "JFR 1 ms": [f"-XX:StartFlightRecording=settings={jfr_settings(work, 1)},filename={work}/o.jfr"],
    }
    workloads = {
        "CpuBench (CPU-bound)": lambda flags: ["java", *flags, "-cp", str(classes), "bench.CpuBench"],
        javac_name: javac,
    }
    walls, cpus = interleaved(workloads, profilers, args.runs, work)
    v_walls, v_cpus = virtual_thread_cost(agent, classes, work, args.runs)

    lines = [SECTION, "",
             f"Command: `bench/sampling.py --write --runs {args.runs} --seconds {args.seconds:g}` ({time.strftime('%Y-%m-%d')}, "
             f"{common.machine()}). async-profiler: not measured (GitHub, where its source "
             "and releases are, is unreachable from this machine, and no reachable registry carries it).", "",
             f"Accuracy ({args.seconds:g} s per program; kernels at interval=1 ms, the others at 10 ms; JFR with its "
             "`profile` settings and the execution sampler's period set to the same interval):", "",
             "| sampler | timer source | kernels: worst error (points) | kernels: samples (noise, points) | inline: caller blamed | "
             "native call: sampled / true share | accept(): samples of the blocked thread |",
             "|---|---|---|---|---|---|---|"]
    for sampler, r in acc.items():
        worst, n, noise = r["kernels"]
        caller, n_inline = r["inline"]
        sampled, truth, _ = r["native"]
        source = {"hprof async perf": "perf events (`timer=perf`)", "hprof async cpu": "POSIX CPU-clock timers (`timer=cpu`)",
                  "hprof async itimer": "`ITIMER_PROF` (`timer=itimer`)"}.get(sampler, "—")
        lines.append(f"| {sampler.replace(' perf', '').replace(' cpu', '').replace(' itimer', '')} | {source} | **{worst:.2f}** | "
                     f"{n} ({noise:.2f}) | **{caller:.1f} %** of {n_inline} | "
                     f"**{sampled:.1f} % / {truth:.1f} %** | **{r['accept']}** |")
    lines += ["", "Overhead: CPU time (user + system, all threads) of the whole JVM run, which other load on the "
              "machine disturbs less than wall time; runs interleaved, one warm-up round, median (wall times below):", ""]
    lines += ratio_table("workload", cpus, profilers, "s CPU")
    lines += ["", "Wall time, same runs:", ""]
    lines += ratio_table("workload", walls, profilers)
    if v_cpus:
        lines += ["", "Following virtual threads (`thread=y`, JDK 21+): `Sampling vmany`, 100,000 virtual threads "
                  "(1,000 at a time) each computing a little and parking once (200,000 mounts); CPU time of the whole "
                  "JVM run, interleaved, median; `cpu=samples` at 10 ms with perf events:", ""]
        lines += ratio_table("JDK", v_cpus, VTHREAD_PROFILERS, "s CPU")
        lines += ["", "Wall time, same runs:", ""]
        lines += ratio_table("JDK", v_walls, VTHREAD_PROFILERS)
    lines += ["", "CPU seconds:"] + common.raw_runs({**cpus, **v_cpus})[1:]
    lines += ["", "Wall seconds:"] + common.raw_runs({**walls, **v_walls})[1:]
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        common.write_section(SECTION, section)


if __name__ == "__main__":
    main()
