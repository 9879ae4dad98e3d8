#!/usr/bin/env python3
"""Benchmark: the JVM's own cost for the JVMTI mechanisms heap=sites and heap=dump are built on,
measured with a minimal C agent (bench/floor/jvmti_floor.c) whose callbacks do nothing else,
beside the real agent:

- heap=sites (exact): AllocBench (3000 rounds) with no agent; SampledObjectAlloc at interval 0
  with an empty callback; plus a 4-frame GetStackTrace; plus SetTag on every object (ObjectFree
  on); both; and hprof heap=sites. Runs interleaved, median wall time.
- heap=dump: on BigHeap (-Xmx4g, ParallelGC, as bench/heap_dump.sh), `jcmd GC.heap_dump`, then
  a full GC and a FollowReferences walk that only tags each object (first SIGQUIT), then the
  same walk also receiving every primitive value (second SIGQUIT): time, and the process's peak
  extra RSS during each walk per live object.

    bench/jvmti_floor.py [--runs N] [--write]
    bench/jvmti_floor.py --heap-only --jdk JAVA_HOME [--jdk JAVA_HOME ...] [--write]

--write replaces the "JVMTI floors" section of bench/RESULTS.md (with --heap-only: the "JVMTI heap
walk floor on other JDKs" section).
"""
import argparse, os, platform, re, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import interleaved, prepare, raw_runs, write_section  # noqa: E402

SECTION = "## JVMTI floors"
JDKS_SECTION = "## JVMTI heap walk floor on other JDKs"
HERE = Path(__file__).resolve().parent


def java_home():
    """The JDK whose javac is on the PATH (its headers build the floor agent)."""
    return Path(shutil.which("javac")).resolve().parent.parent


def build_floor(work):
    home = java_home()
    lib = work / "libfloor.so"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-shared", "-fPIC", f"-I{home}/include", f"-I{home}/include/linux",
                    "-o", str(lib), str(HERE / "floor/jvmti_floor.c")], check=True)
    return lib


def rss_kb(pid):
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def heap_floor(work, floor, classes, bin_dir=""):
    """jcmd's dump, then the two floor walks, on one BigHeap JVM (java and jcmd from `bin_dir`,
    else from the PATH)."""
    err_path = work / "floor-err.txt"
    java, jcmd = (os.path.join(bin_dir, t) if bin_dir else t for t in ("java", "jcmd"))
    with open(err_path, "w") as err:
        p = subprocess.Popen([java, "-Xmx4g", "-XX:+UseParallelGC", f"-agentpath:{floor}=walk", "-cp", str(classes), "bench.BigHeap"],
                             cwd=work, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True)
        line = p.stdout.readline()
        assert line.startswith("READY"), line
        hist = subprocess.run([jcmd, str(p.pid), "GC.class_histogram"], capture_output=True, text=True, check=True).stdout
        objects = int(re.search(r"^Total\s+(\d+)", hist, re.M).group(1))
        start = time.perf_counter()
        subprocess.run([jcmd, str(p.pid), "GC.heap_dump", str(work / "jcmd.hprof")], check=True, stdout=subprocess.DEVNULL)
        jcmd_s = time.perf_counter() - start
        (work / "jcmd.hprof").unlink()
        walks = []
        for n in (1, 2):
            before = rss_kb(p.pid)
            peak = before
            start = time.perf_counter()
            os.kill(p.pid, 3)
            while err_path.read_text().count("FLOOR walk") < n:
                peak = max(peak, rss_kb(p.pid))
                time.sleep(0.05)
            seconds = time.perf_counter() - start
            walks.append((seconds, (peak - before) * 1024 / objects))
        p.stdin.close()
        p.wait()
    lines = [l for l in err_path.read_text().splitlines() if l.startswith("FLOOR walk")]
    return objects, jcmd_s, walks, lines


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--heap-only", action="store_true")
    parser.add_argument("--jdk", action="append", default=[], help="JAVA_HOME of a JDK for --heap-only")
    args = parser.parse_args()

    work, agent, classes, _ = prepare()
    floor = build_floor(work)
    if args.heap_only:
        lines = [JDKS_SECTION, "",
                 f"Command: `bench/jvmti_floor.py --heap-only {' '.join('--jdk ' + j for j in args.jdk)}{' --write' if args.write else ''}` "
                 f"({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores). The heap walk of the section above, on BigHeap, "
                 "each JDK's own `jcmd`; RSS per live object for the first walk only (see above).", "",
                 "| JDK | live objects | `jcmd GC.heap_dump` | floor: full GC + walk that only tags | peak extra RSS per live object | also receiving every primitive value |",
                 "|---|---|---|---|---|---|"]
        own_lines = []
        for jdk in args.jdk:
            version = subprocess.run([os.path.join(jdk, "bin", "java"), "-version"], capture_output=True, text=True).stderr.splitlines()[0]
            objects, jcmd_s, walks, walk_lines = heap_floor(work, floor, classes, os.path.join(jdk, "bin"))
            lines.append(f"| {version} | {objects} | {jcmd_s:.2f} s | {walks[0][0]:.2f} s ({walks[0][0] / jcmd_s:.2f}x) | "
                         f"{walks[0][1]:.0f} bytes | {walks[1][0]:.2f} s ({walks[1][0] / jcmd_s:.2f}x) |")
            own_lines += [f"- {version}: `{l}`" for l in walk_lines]
        lines += ["", "The floor agent's own lines:", ""] + own_lines
        section = "\n".join(lines) + "\n"
        print(section)
        if args.write:
            write_section(JDKS_SECTION, section)
        return
    profilers = {
        "no agent": [],
        "floor: every allocation sampled, empty callback": [f"-agentpath:{floor}=alloc"],
        "floor: + GetStackTrace (4 frames)": [f"-agentpath:{floor}=alloc,stack"],
        "floor: + SetTag (ObjectFree on)": [f"-agentpath:{floor}=alloc,tag"],
        "floor: + GetStackTrace + SetTag": [f"-agentpath:{floor}=alloc,stack,tag"],
        "hprof heap=sites (exact)": [f"-agentpath:{agent}=heap=sites,file={work}/exact.txt"],
    }
    workload = "AllocBench 3000 rounds"
    results = interleaved({workload: lambda flags: ["java", *flags, "-cp", str(classes), "bench.AllocBench", "3000"]},
                          profilers, args.runs, work, warmup=0)
    base = statistics.median(results[workload]["no agent"])
    objects, jcmd_s, walks, walk_lines = heap_floor(work, floor, classes)

    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    lines = [SECTION, "",
             f"Command: `bench/jvmti_floor.py --runs {args.runs}{' --write' if args.write else ''}` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, "
             f"{platform.processor() or platform.machine()}, {java}).",
             "What the JVM itself charges for the JVMTI mechanisms heap=sites and heap=dump use, measured with a minimal C "
             "agent (`bench/floor/jvmti_floor.c`) whose callbacks do nothing but the named calls: no agent built on these "
             "mechanisms can be faster than these floors.", "",
             f"### Exact allocation tracking ({workload}; median of {args.runs}, interleaved)", "",
             "| agent | wall time | ratio to no agent |", "|---|---|---|"]
    for name, times in results[workload].items():
        m = statistics.median(times)
        lines.append(f"| {name} | {m:.2f} s | {m / base:.2f}x |")
    lines += ["", f"### Heap walk (BigHeap, {objects} live objects, -Xmx4g, ParallelGC)", "",
              "| | time | peak extra RSS per live object |", "|---|---|---|",
              f"| `jcmd GC.heap_dump` (writes the whole file) | {jcmd_s:.2f} s | |",
              f"| floor: full GC + FollowReferences tagging every object | {walks[0][0]:.2f} s ({walks[0][0] / jcmd_s:.2f}x jcmd) | {walks[0][1]:.0f} bytes |",
              f"| floor: the same, also receiving every primitive value | {walks[1][0]:.2f} s ({walks[1][0] / jcmd_s:.2f}x jcmd) | {walks[1][1]:.0f} bytes (same JVM: the C allocator reuses the first walk's freed memory, so only the first walk's figure counts) |",
              "", "The floor agent's own lines:", ""] + [f"- `{l}`" for l in walk_lines] + [""] + raw_runs(results)
    section = "\n".join(lines) + "\n"
    print(section)
    if args.write:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()
