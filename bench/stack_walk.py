#!/usr/bin/env python3
"""Benchmark: the CPU sampler's stack walk, side by side in one run: hprof's own walk of
HotSpot's frames (cpu=samples, native frames on), hprof with AsyncGetCallTrace alone
(`_HPROF_NO_WALKER=1`, what cpu=samples did before), and async-profiler (event=ctimer, its
default stack walk: HotSpot's structures since 4.2, native frames included).

  - Failed walks: javac compiling 40 small generated classes (interpreted, C1 and C2 code,
    adapters, runtime stubs, deoptimizations), at interval 2 ms and 1 ms: the share of the
    samples whose stack holds a pseudo-frame (hprof's `<hprof>.<reason>`, async-profiler's
    `[reason]` error frames).
  - Stub-heavy kernels (java/src/StackWalk.java `kernels`): three threads running Math.sin/
    cos/sqrt/log/exp/pow (the JIT's intrinsic stubs), System.nanoTime (a leaf call into the
    JVM and the vDSO) and plain arithmetic, each measuring its own CPU time; at 1 ms, each
    kernel's share of the samples (stacks through its method) against its share of the CPU:
    the worst difference in points.
  - Overhead: whole-JVM wall time and CPU time (user + system) of
    java/src/bench/CpuBench.java and of javac compiling java.util (354 files, Debian's
    openjdk-17-source, as bench/cpu_samples.py) under no agent, cpu=samples at 10 ms and 1 ms
    (native frames on), and async-profiler at 10 ms and 1 ms; interleaved runs, median
    (targets: 1.02x at 10 ms, 1.05x at 1 ms).

async-profiler comes from $ASYNC_PROFILER_LIB, /work/ap/build/lib/libasyncProfiler.so, or is
built from the mirror of its repository (`git archive HEAD | tar -x`, `make`) into .tools/.

    bench/stack_walk.py [--runs N] [--cpu-ms MS] [--write]

--write replaces the "Stack walks" section of bench/RESULTS.md.
"""
import argparse, os, re, resource, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples as common  # noqa: E402  (prepare, interleaved, raw_runs, machine, write_section)

ROOT = Path(__file__).resolve().parent.parent
SECTION = "## Stack walks"
MIRROR = Path("/work/.mirror/async-profiler+async-profiler/repo")
KERNELS = {"libm": "StackWalk.libm", "nanotime": "StackWalk.nanotime", "plain": "StackWalk.plain"}
# async-profiler's error frames (besides `[thread name tid=N]` thread frames).
AP_ERROR = re.compile(r"^\[(break_\w+|unknown_\w+|not_walkable_\w+|no_Java_frame|unknown_state|"
                      r"thread_exit|GC_active|deoptimization|safepoint|truncated)\]$")


def async_profiler():
    """The path of libasyncProfiler.so: given, prebuilt, or built from the mirror."""
    for given in (os.environ.get("ASYNC_PROFILER_LIB"), "/work/ap/build/lib/libasyncProfiler.so"):
        if given and Path(given).exists():
            return Path(given)
    if not MIRROR.exists():
        raise SystemExit("async-profiler: set ASYNC_PROFILER_LIB (no prebuilt copy, no mirror)")
    commit = subprocess.run(["git", "-C", str(MIRROR), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    src = ROOT / ".tools" / f"async-profiler-{commit}"
    lib = src / "build/lib/libasyncProfiler.so"
    if not lib.exists():
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", str(MIRROR), "archive", "HEAD"], stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(src)], stdin=archive.stdout, check=True)
        archive.wait()
        subprocess.run(["make", "-C", str(src)], check=True, stdout=subprocess.DEVNULL)
    return lib


def javac_sources(directory):
    """40 small classes that call each other, with lambdas and generics."""
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i in range(40):
        methods = "".join(
            f"""    public static int m{j}(java.util.List<String> xs, int k) {{
        int sum = 0;
        for (String x : xs) {{
            if (x.length() > k) sum += x.hashCode() % {j + 3};
            else sum -= k * {i + 1};
        }}
        java.util.Map<String, Integer> m = new java.util.HashMap<>();
        xs.forEach(x -> m.merge(x, 1, Integer::sum));
        return sum + m.size() + C{(i + 1) % 40}.V + {j};
    }}
""" for j in range(8))
        path = directory / f"C{i}.java"
        path.write_text(f"public class C{i} {{\n    public static final int V = {i};\n{methods}}}\n")
        paths.append(str(path))
    return paths


def hprof_stacks(path):
    """[(thread name, [frames innermost first], count)] from a java.hprof.txt."""
    text = path.read_text()
    threads = dict(re.findall(r'THREAD START \(obj=\w+, id = (\d+), name="([^"]*)"', text))
    traces = {}
    for m in re.finditer(r"^TRACE (\d+):(?: \(thread=(\d+)\))?\n((?:\t.*\n)*)", text, re.M):
        traces[m.group(1)] = (threads.get(m.group(2)), [l.strip().split("(")[0] for l in m.group(3).splitlines()])
    section = text[text.rindex("CPU SAMPLES BEGIN"):]
    return [(*traces[m.group(2)], int(m.group(1)))
            for m in re.finditer(r"^\s*\d+\s+\S+%\s+\S+%\s+(\d+)\s+(\d+)\s", section, re.M)]


def ap_stacks(path):
    """The same from async-profiler's collapsed output (`threads`: the root is the thread)."""
    stacks = []
    for line in path.read_text().splitlines():
        frames, _, count = line.rpartition(" ")
        frames = frames.split(";")
        thread = None
        if frames and frames[0].startswith("[") and " tid=" in frames[0]:
            thread = frames[0][1:].split(" tid=")[0]
            frames = frames[1:]
        stacks.append((thread, [f.removesuffix("_[j]").removesuffix("_[i]") for f in reversed(frames)], int(count)))
    return stacks


def failed(stacks, is_pseudo):
    total = sum(n for _, _, n in stacks)
    bad = sum(n for _, f, n in stacks if any(is_pseudo(x) for x in f))
    return (bad / total * 100 if total else float("nan")), total


def hprof_pseudo(frame):
    return frame.startswith("<hprof>.")


def ap_pseudo(frame):
    return bool(AP_ERROR.match(frame))


def samplers(work, ap_lib):
    """name: (JVM flags for an interval in ms and an output path, reader, pseudo-frame test, env)."""
    hprof = lambda ms, out: [f"-agentpath:{work}/libhprof.so=cpu=samples,interval={ms},depth=64,thread=y,file={out}"]
    ap = lambda ms, out: [f"-agentpath:{ap_lib}=start,event=ctimer,interval={ms}ms,threads,collapsed,file={out}"]
    return {
        "hprof (own walk)": (hprof, hprof_stacks, hprof_pseudo, {}),
        "hprof (AsyncGetCallTrace alone)": (hprof, hprof_stacks, hprof_pseudo, {"_HPROF_NO_WALKER": "1"}),
        "async-profiler 4.x ctimer": (ap, ap_stacks, ap_pseudo, {}),
    }


def run(cmd, cwd, env=None):
    out = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=900,
                         env={**os.environ, **(env or {})})
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(map(str, cmd))} failed: {out.stderr[-2000:]}")
    return out.stdout


def failed_walks(work, ap_lib, runs):
    sources = javac_sources(work / "walk-src")
    rows = {}
    for name, (flags, read, pseudo, env) in samplers(work, ap_lib).items():
        for ms in (2, 1):
            shares, totals = [], []
            for i in range(runs):
                out = work / f"javac-{i}.out"
                out.unlink(missing_ok=True)
                shutil.rmtree(work / "walk-classes", ignore_errors=True)
                run(["javac", *[f"-J{f}" for f in flags(ms, out)], "-d", str(work / "walk-classes"), *sources],
                    work, env)
                share, total = failed(read(out), pseudo)
                shares.append(share)
                totals.append(total)
            rows[(name, ms)] = (statistics.median(shares), max(shares), statistics.median(totals))
    return rows


def kernels(work, classes, ap_lib, cpu_ms):
    rows = {}
    for name, (flags, read, _, env) in samplers(work, ap_lib).items():
        out = work / "kernels.out"
        out.unlink(missing_ok=True)
        stdout = run(["java", *flags(1, out), "-cp", str(classes), "StackWalk", "kernels", str(cpu_ms)], work, env)
        measured = {k: int(v) for k, v in re.findall(r"^cpu (\w+) (\d+)$", stdout, re.M)}
        cpu_total = sum(measured.values())
        stacks = read(out)
        counts = {k: sum(n for _, f, n in stacks if any(x == method for x in f)) for k, method in KERNELS.items()}
        sampled = sum(counts.values())
        errors = {k: counts[k] / max(sampled, 1) * 100 - measured[k] / cpu_total * 100 for k in KERNELS}
        rows[name] = (errors, sampled)
    return rows


def timed(command, cwd):
    """(wall seconds, CPU seconds) of one run: the CPU time of its processes, user and system,
    counts less of the other work on a shared machine than the wall time does."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def overhead(work, classes, ap_lib, runs, javac_workload):
    """{workload: {profiler: [(wall, cpu)]}}: one warm-up round, then `runs` rounds, each
    running every profiler in turn."""
    javac_name, javac = javac_workload
    cpubench = lambda flags: ["java", *flags, "-cp", str(classes), "bench.CpuBench"]
    profilers = {
        "no agent": [],
        "hprof 10 ms": [f"-agentpath:{work}/libhprof.so=cpu=samples,interval=10,file={work}/ov.txt"],
        "hprof 1 ms": [f"-agentpath:{work}/libhprof.so=cpu=samples,interval=1,file={work}/ov.txt"],
        "async-profiler 10 ms": [f"-agentpath:{ap_lib}=start,event=ctimer,interval=10ms,collapsed,file={work}/ov.ap"],
        "async-profiler 1 ms": [f"-agentpath:{ap_lib}=start,event=ctimer,interval=1ms,collapsed,file={work}/ov.ap"],
    }
    results = {}
    for workload, make in {"CpuBench": cpubench, javac_name: javac}.items():
        for flags in profilers.values():
            timed(make(flags), work)
        times = {name: [] for name in profilers}
        for _ in range(runs):
            for name, flags in profilers.items():
                times[name].append(timed(make(flags), work))
        results[workload] = times
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cpu-ms", type=int, default=10600)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    work, _, classes, javac_workload = common.prepare()
    ap_lib = async_profiler()
    walks = failed_walks(work, ap_lib, max(1, args.runs // 2))
    kernel_rows = kernels(work, classes, ap_lib, args.cpu_ms)
    times = overhead(work, classes, ap_lib, args.runs, javac_workload)
    lines = [SECTION, "",
             f"Command: `bench/stack_walk.py --runs {args.runs} --cpu-ms {args.cpu_ms}` ({common.machine()}); "
             f"async-profiler: `{ap_lib}`. The machine was shared with other work (load average "
             f"{os.getloadavg()[0]:.1f} at the end): timings are noisy.", "",
             "Failed walks on javac (40 small classes), median (worst) of the runs: share of samples with a "
             "pseudo-frame (hprof `<hprof>.<reason>`, async-profiler `[reason]`):", "",
             "| sampler | interval | failed walks | samples |", "|---|---|---|---|"]
    for (name, ms), (median, worst, total) in walks.items():
        lines.append(f"| {name} | {ms} ms | {median:.2f} % ({worst:.2f} %) | {total:.0f} |")
    lines += ["", f"Stub-heavy kernels at 1 ms (java/src/StackWalk.java kernels, {args.cpu_ms} ms of CPU): "
              "sampled share minus measured share, in points:", "",
              "| sampler | libm (intrinsic stubs) | nanotime (leaf call, vDSO) | plain | samples |", "|---|---|---|---|---|"]
    for name, (errors, sampled) in kernel_rows.items():
        lines.append(f"| {name} | {errors['libm']:+.2f} | {errors['nanotime']:+.2f} | {errors['plain']:+.2f} | {sampled} |")
    for index, what in ((0, "wall time"), (1, "CPU time (user + system)")):
        lines += ["", f"Overhead, median {what} (s) and ratio to no agent:", "",
                  "| workload | " + " | ".join(next(iter(times.values())).keys()) + " |",
                  "|---|" + "---|" * len(next(iter(times.values())))]
        for workload, by in times.items():
            base = statistics.median(t[index] for t in by["no agent"])
            cells = []
            for runs in by.values():
                median = statistics.median(t[index] for t in runs)
                cells.append(f"{median:.2f} ({median / base:.3f}x)")
            lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    lines += ["", "Raw runs (wall s / CPU s):", ""]
    for workload, by in times.items():
        for name, runs in by.items():
            lines.append(f"- {workload}, {name}: " + " ".join(f"{w:.2f}/{c:.2f}" for w, c in runs))
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        common.write_section(SECTION, section)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
