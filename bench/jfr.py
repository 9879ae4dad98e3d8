#!/usr/bin/env python3
"""Benchmark: JFR in and out, side by side in one run.

1. Reading: `hprof top` and `hprof convert` (folded stacks) against the JDK's `jfr print` and
   async-profiler's converter (`jfrconv`, folded stacks) on two recordings of about 100 MB or
   more: a real one (JDK 17, java/src/Stress.java with JFR's `profile` settings, execution
   samples every 1 ms and TLAB events, 30 s; its chunks repeated until the file passes
   100 MB, as `jfr assemble` joins chunks) and a synthetic one of 10 M execution samples
   (`cargo run --example synth`, 20,000 stacks, 16 threads). Wall time and peak RSS.
2. `format=jfr` overhead against the text output: `cpu=samples,interval=10` on
   java/src/bench/CpuBench.java, no agent / text / binary / JFR, interleaved, median wall and
   CPU time.
3. The HTML page with the timeline for the 10 M sample recording: `hprof convert` time, and
   the time from navigation to the page's load event (all scripts run, the timeline and the
   whole profile's flame graph drawn) in headless Chromium, median of 3.

async-profiler's `jfrconv` is /work/ap/build/bin/jfrconv, or built by this script from the
mirror of its public source when that exists (`git archive HEAD | tar -x; make`); without
either it is left out, and the results say so.

    bench/jfr.py [--runs N] [--write] [--skip-slow]
    (--skip-slow leaves out `jfr print`'s rows, minutes each on the big files, while iterating;
     a written run keeps them: --write refuses it)
    bench/jfr.py --record-fixtures DIR   # async-profiler's test recordings, recorded again
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from cpu_samples import machine, raw_runs, write_section  # noqa: E402
from timeline_page import page_load  # noqa: E402

SECTION = "## JFR in and out"
MIRROR = Path("/work/.mirror/async-profiler+async-profiler/repo")


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def async_profiler_dir():
    """The build directory of async-profiler: /work/ap's, or one built from the mirror."""
    if Path("/work/ap/build/bin/jfrconv").exists():
        return Path("/work/ap/build")
    conv, _ = jfrconv()
    return conv.parent.parent if conv else None


def record_fixtures(out, classes, hprof):
    """Records the async-profiler files of crates/cli/tests/data/async-profiler again into `out`
    (the commands its README lists) and checks that hprof reads each as the tests expect."""
    build = async_profiler_dir()
    if build is None:
        sys.exit("async-profiler is not available: no /work/ap build and no mirror to build it from")
    lib = build / "lib/libasyncProfiler.so"
    out.mkdir(parents=True, exist_ok=True)
    runs = [("cpuhot-cpu.jfr", "start,event=cpu,interval=5ms", "CpuHot", ["2000"]),
            ("allochot-alloc.jfr", "start,alloc=1m", "AllocHot", ["1000"]),
            ("lockcontention-lock.jfr", "start,lock=0", "LockContention", []),
            ("cpuhot-wall.jfr", "start,wall=10ms", "CpuHot", ["1000"])]
    for name, opts, program, args in runs:
        sh("java", f"-agentpath:{lib}={opts},file={out / name},jfr", "-cp", str(classes), program, *args,
           stdout=subprocess.DEVNULL)
    sh("gzip", "-9", "-f", str(out / "cpuhot-wall.jfr"))
    top = subprocess.run([str(hprof), "top", str(out / "cpuhot-cpu.jfr"), "-n", "1"], capture_output=True, text=True, check=True).stdout
    assert "CpuHot.hot" in top, top
    print(f"recorded into {out}:\n{top}")


def jfrconv():
    built = Path("/work/ap/build/bin/jfrconv")
    if built.exists():
        return built, "async-profiler at /work/ap"
    if MIRROR.exists():
        src = ROOT / ".tools/async-profiler-src"
        if not (src / "build/bin/jfrconv").exists():
            src.mkdir(parents=True, exist_ok=True)
            archive = subprocess.run(["git", "-C", str(MIRROR), "archive", "HEAD"], check=True, capture_output=True).stdout
            subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
            sh("make", "-C", str(src), stdout=subprocess.DEVNULL)
        return src / "build/bin/jfrconv", "async-profiler built from the mirror"
    return None, "async-profiler: not available (no build, no mirror)"


def measured(cmd, cwd=None):
    """(wall seconds, peak RSS MB, CPU seconds: user + sys) of `cmd`."""
    start = time.perf_counter()
    out = subprocess.run(["/usr/bin/time", "-f", "%M %U %S", *map(str, cmd)], cwd=cwd, check=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    rss, user, system = out.stderr.strip().splitlines()[-1].split()
    return wall, int(rss) / 1024, float(user) + float(system)


def real_recording(work, classes):
    one = work / "stress.jfr"
    sh("java", f"-XX:StartFlightRecording=filename={one},settings=profile,"
       "jdk.ExecutionSample#period=1ms,jdk.ObjectAllocationInNewTLAB#enabled=true,"
       "jdk.ObjectAllocationOutsideTLAB#enabled=true",
       "-cp", str(classes), "Stress", "30000", "alloc", "locks", "cpu",
       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    data = one.read_bytes()
    big = work / "real.jfr"
    with open(big, "wb") as f:
        copies = -(-100_000_000 // len(data))
        for _ in range(copies):
            f.write(data)
    return big, len(data), copies


def reading(work, hprof, conv, runs, skip_slow=False):
    rows = []
    for name, path in [("real", work / "real.jfr"), ("synthetic 10 M samples", work / "synth.jfr")]:
        size = path.stat().st_size / 1e6
        tools = {
            "hprof top": [hprof, "top", path, "-n", "5"],
            "hprof convert .collapsed": [hprof, "convert", path, work / "out.collapsed"],
            "jfr print --events jdk.ExecutionSample": ["jfr", "print", "--events", "jdk.ExecutionSample", path],
            "jfr print (all events)": ["jfr", "print", path],
        }
        if skip_slow:
            tools = {k: v for k, v in tools.items() if not k.startswith("jfr print")}
        if conv:
            tools["jfrconv --cpu (collapsed)"] = [conv, "--cpu", path, work / "conv.collapsed"]
        # hprof and jfrconv interleaved, run by run, so both see the same load; the slow
        # `jfr print` rows once.
        results = {tool: [] for tool in tools}
        for i in range(runs):
            for tool, cmd in tools.items():
                if i == 0 or not tool.startswith("jfr print"):
                    results[tool].append(measured(cmd))
        for tool, rs in results.items():
            wall = statistics.median(r[0] for r in rs)
            rss = max(r[1] for r in rs)
            cpu = statistics.median(r[2] for r in rs)
            rows.append((name, size, tool, wall, rss, len(rs), cpu))
    return rows


def overhead(work, agent, classes, runs):
    profilers = {
        "no agent": [],
        "cpu=samples text": [f"-agentpath:{agent}=cpu=samples,interval=10,file={work}/o.txt"],
        "cpu=samples format=b": [f"-agentpath:{agent}=cpu=samples,interval=10,format=b,file={work}/o.hprof"],
        "cpu=samples format=jfr": [f"-agentpath:{agent}=cpu=samples,interval=10,file={work}/o.jfr"],
    }
    walls = {name: [] for name in profilers}
    cpus = {name: [] for name in profilers}
    cmd = lambda flags: ["java", *flags, "-cp", str(classes), "bench.CpuBench"]
    for flags in profilers.values():
        sh(*cmd(flags), cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(runs):
        for name, flags in profilers.items():
            wall, _, cpu = measured(cmd(flags), cwd=work)
            walls[name].append(wall)
            cpus[name].append(cpu)
    return walls, cpus


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--skip-slow", action="store_true",
                        help="leave out the `jfr print` rows (minutes on the big files) while iterating")
    parser.add_argument("--record-fixtures", metavar="DIR", type=Path,
                        help="only record the async-profiler test recordings again, into DIR")
    args = parser.parse_args()
    if args.skip_slow and args.write:
        parser.error("--write keeps every tool's row: drop --skip-slow")
    if args.record_fixtures:
        sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-cli", cwd=ROOT)
        sh(str(ROOT / "scripts/build-java.sh"))
        record_fixtures(args.record_fixtures, ROOT / "target/java/classes", ROOT / "target/release/hprof")
        return
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", "-p", "hprof-cli", cwd=ROOT)
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-jfr", "--example", "synth", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    work = Path(tempfile.mkdtemp(prefix="hprof-bench-jfr-"))
    try:
        hprof = ROOT / "target/release/hprof"
        agent = work / "libhprof.so"
        shutil.copy2(ROOT / "target/release/libhprof.so", agent)
        classes = ROOT / "target/java/classes"
        conv, conv_note = jfrconv()
        loads = [os.getloadavg()[0]]
        _, one, copies = real_recording(work, classes)
        sh(str(ROOT / "target/release/examples/synth"), str(work / "synth.jfr"), "10000000")
        read_rows = reading(work, hprof, conv, args.runs, args.skip_slow)
        loads.append(os.getloadavg()[0])
        over, over_cpu = overhead(work, agent, classes, max(args.runs, 5))
        loads.append(os.getloadavg()[0])
        convert, page_mb, page_loads = page_load(work, hprof, args.runs)
        loads.append(os.getloadavg()[0])
    finally:
        shutil.rmtree(work, ignore_errors=True)

    lines = [SECTION, "",
             f"Command: `bench/jfr.py --runs {args.runs}` on {machine()}; one-minute load average "
             f"{' '.join(f'{l:.1f}' for l in loads)} (before the reading rows, before and after the "
             "overhead rows, after the page loads).", "",
             f"Reading (real: a 30 s JDK 17 recording of Stress, {one / 1e6:.1f} MB, its chunks repeated "
             f"{copies} times; {conv_note}). hprof's and jfrconv's rows are medians of {args.runs} runs interleaved "
             "(hprof, jfrconv, hprof, ...), `jfr print`'s one run; CPU is user + sys:", "",
             "| recording | MB | tool | runs | wall s | CPU s | MB/s (wall) | peak RSS MB |",
             "|---|---|---|---|---|---|---|---|"]
    for name, size, tool, wall, rss, n, cpu in read_rows:
        lines.append(f"| {name} | {size:.0f} | {tool} | {n} | {wall:.2f} | {cpu:.2f} | {size / wall:.0f} | {rss:.0f} |")
    lines += ["", f"`format=jfr` overhead, CpuBench, cpu=samples interval=10 ms, median of {len(over['no agent'])} "
              "interleaved runs (CPU: user + sys of the JVM):", "",
              "| run | wall s | vs no agent | vs text | CPU s | vs no agent | vs text |",
              "|---|---|---|---|---|---|---|"]
    base, text = (statistics.median(over[k]) for k in ("no agent", "cpu=samples text"))
    base_cpu, text_cpu = (statistics.median(over_cpu[k]) for k in ("no agent", "cpu=samples text"))
    for name, values in over.items():
        m, c = statistics.median(values), statistics.median(over_cpu[name])
        lines.append(f"| {name} | {m:.3f} | {m / base:.3f}x | {m / text:.3f}x "
                     f"| {c:.3f} | {c / base_cpu:.3f}x | {c / text_cpu:.3f}x |")
    lines += ["", f"HTML with the timeline, 10 M samples: `hprof convert` {convert[0]:.1f} s (peak RSS "
              f"{convert[1]:.0f} MB), page {page_mb:.0f} MB; headless Chromium, navigation to the load "
              f"event (timeline and whole-profile flame graph drawn): {' '.join(f'{l[0]:.2f}' for l in page_loads)} s, "
              f"median {statistics.median(l[0] for l in page_loads):.2f} s. Then in each load, a range of 10 % to "
              f"90 % of the span drawn: {' '.join(f'{l[1]:.2f}' for l in page_loads)} s; its callers view: "
              f"{' '.join(f'{l[2]:.2f}' for l in page_loads)} s; a search in it (`m12`): "
              f"{' '.join(f'{l[3]:.2f}' for l in page_loads)} s.", ""]
    lines += raw_runs({"CpuBench wall": over, "CpuBench CPU": over_cpu})
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()
