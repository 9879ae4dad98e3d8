#!/usr/bin/env python3
"""Benchmark: heap=sites in its fast mode (the default: allocations counted in bytecode, live
objects estimated from 16 KB samples; also with 128 KB samples, the previous default), its exact mode (sites=exact: every allocation a JVMTI
event, every object tagged) and sampled (alloc_interval=512k), against no agent and against
JFR's allocation profiling (-XX:StartFlightRecording=settings=profile, whose
jdk.ObjectAllocationSample is throttled to 300 samples/s) on an allocation-heavy program
(java/src/bench/AllocBench.java) and on javac compiling java.util (354 files from Debian's
openjdk-17-source); runs interleaved, median wall time. Also how close the fast and sampled
modes' per-site shares of allocated and live bytes come to the exact mode's, and how close the
fast mode's live shares come to the truth on java/src/LiveSets.java (six sites of one class and
one array class keeping known shares of what they allocate).

    bench/heap_sites.py [--runs N] [--write] [--modes fast,exact,512k,JFR]
                        [--agent PATH] [--base-agent PATH --base-name NAME]

--write replaces the "heap=sites overhead" section of bench/RESULTS.md. --agent runs a
prebuilt agent instead of building this checkout's; --base-agent adds the fast mode of another
build (named NAME in the tables) beside it, interleaved, for a side-by-side comparison.
"""
import argparse, os, re, resource, shutil, statistics, subprocess, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import cpu_samples  # noqa: E402
from cpu_samples import interleaved, prepare, raw_runs, timed, publish  # noqa: E402

# CPU seconds (user + system) of each run, in the order they ran: on a machine other work
# shares, a run's CPU time moves less than its wall time.
CPU = []


def timed_with_cpu(cmd, cwd):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed(cmd, cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return wall


cpu_samples.timed = timed_with_cpu

SECTION = "## heap=sites overhead"


def site_shares(path, depth=None, column=5):
    """Share of allocated bytes (column 5; live bytes: column 3) of each site, keyed by (class,
    the first `depth` frames of its trace, all if None)."""
    text = Path(path).read_text()
    body = text[text.index("\n--------\n"):]
    traces, rows, current = {}, [], None
    lines = body.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("TRACE "):
            serial = int(line.split()[1].rstrip(":"))
            frames = []
            while i + 1 < len(lines) and lines[i + 1].startswith("\t"):
                i += 1
                frames.append(lines[i].strip())
            # Hidden classes (lambda forms) carry addresses that change from run to run.
            traces[serial] = tuple(re.sub(r"0x[0-9a-f]+", "0x", f) for f in frames)
        elif re.match(r"^\s*\d+ ", line) and current == "sites":
            c = line.split()
            rows.append((c[8], int(c[7]), int(c[column])))
        elif line.startswith("SITES BEGIN"):
            current = "sites"
        elif line == "SITES END":
            current = None
        i += 1
    total = sum(r[2] for r in rows) or 1
    shares = {}
    for name, trace, alloc in rows:
        key = (name, traces[trace][:depth] if depth else traces[trace])
        shares[key] = shares.get(key, 0) + alloc / total * 100
    return shares


def worst(a, b):
    return max((abs(a.get(k, 0) - b.get(k, 0)) for k in set(a) | set(b)), default=0.0)


def measure_accuracy(files):
    """Largest per-site share differences against the exact mode, and the shares."""
    exact_top = site_shares(files["exact"], depth=1)
    accuracy = {
        "fast, allocated, by (class, allocating frame)": worst(exact_top, site_shares(files["fast"], depth=1)),
        "fast, allocated, by (class, trace of 4 frames)": worst(site_shares(files["exact"]), site_shares(files["fast"])),
        "fast, live, by (class, trace of 4 frames)": worst(site_shares(files["exact"], column=3), site_shares(files["fast"], column=3)),
        "alloc_interval=512k, allocated, by (class, trace)": worst(site_shares(files["exact"]), site_shares(files["sampled"])),
        "alloc_interval=512k, live, by (class, trace)": worst(site_shares(files["exact"], column=3), site_shares(files["sampled"], column=3)),
    }
    exact = site_shares(files["exact"])
    fast = site_shares(files["fast"])
    big = sorted((k for k in exact if exact[k] >= 1.0), key=lambda k: -exact[k])
    return accuracy, exact, fast, big


def with_env(flags, cmd):
    """`cmd` with the "env:NAME=VALUE" items of `flags` set in its environment (and taken out
    of its flags)."""
    env = [f[4:] for f in flags if f.startswith("env:")]
    rest = [f for f in flags if not f.startswith("env:")]
    return (["env", *env] if env else []) + cmd(rest)


def live_sets_errors(agent, classes, work, interval, rounds=800_000):
    """The largest difference, in points of the live heap, between a LiveSets site's live
    bytes in the fast mode (sampling every `interval` bytes) and what the program kept."""
    out = work / f"livesets-{interval}.txt"
    run = subprocess.run(["env", f"HPROF_FAST_SAMPLE_INTERVAL={interval}", "java",
                          f"-agentpath:{agent}=heap=sites,depth=1,cutoff=0,file={out}", "-cp", str(classes),
                          "LiveSets", str(rounds)], capture_output=True, text=True, check=True, cwd=work)
    known = {}
    for line in run.stdout.splitlines():
        if line.startswith("site "):
            _, name, at, allocated, kept, lengths, odd = line.split()
            known[int(at)] = (name, int(allocated), int(kept), int(lengths), int(odd))
    text = out.read_text()
    tops = {int(m.group(1)): int(m.group(2))
            for m in re.finditer(r"^TRACE (\d+):\n\tLiveSets\.main\(LiveSets\.java:(\d+)\)", text, re.M)}
    rows = [l.split() for l in text[text.index("SITES BEGIN"):text.index("SITES END")].splitlines()]
    rows = [r for r in rows if len(r) == 9 and r[0].isdigit()]
    total = sum(int(r[3]) for r in rows)
    worst = 0.0
    for r in rows:
        line = tops.get(int(r[7]))
        if line not in known or r[8] not in ("int[]", "LiveSets$Cell"):
            continue
        name, allocated, kept, lengths, odd = known[line]
        size = int(r[5]) // int(r[6])
        # int[]: a 16-byte header, sizes rounded up to 8 bytes (odd lengths take 4 more).
        expected = kept * 16 + 4 * lengths + 4 * odd if r[8] == "int[]" else kept * size
        worst = max(worst, abs(int(r[3]) - expected) / total * 100)
    return worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--modes", help="comma-separated words of the profilers to run, e.g. fast,JFR (default: all); with it, no accuracy runs and nothing written")
    parser.add_argument("--agent", help="a prebuilt libhprof.so to run instead of building this checkout's")
    parser.add_argument("--base-agent", help="another build's libhprof.so, whose fast mode runs beside")
    parser.add_argument("--base-name", default="base", help="what the tables call --base-agent")
    args = parser.parse_args()

    work, agent, classes, (javac_name, javac) = prepare(args.agent)
    profilers = {
        "no agent": [],
        "hprof heap=sites (fast, default: 16 KB samples)": [f"-agentpath:{agent}=heap=sites,file={work}/fast.txt"],
        **({f"hprof heap=sites (fast) {args.base_name}": [f"-agentpath:{shutil.copy2(args.base_agent, work / 'libhprof-base.so')}=heap=sites,file={work}/fast-base.txt"]}
           if args.base_agent else {}),
        "hprof heap=sites fast, 128 KB samples": ["env:HPROF_FAST_SAMPLE_INTERVAL=131072", f"-agentpath:{agent}=heap=sites,file={work}/fast.txt"],
        "hprof heap=sites sites=exact": [f"-agentpath:{agent}=heap=sites,sites=exact,file={work}/exact.txt"],
        "hprof heap=sites alloc_interval=512k": [f"-agentpath:{agent}=heap=sites,alloc_interval=512k,file={work}/sampled.txt"],
        "JFR profile": [f"-XX:StartFlightRecording=settings=profile,filename={work}/out.jfr"],
    }
    if args.modes:
        # Words of the profilers' names: "fast,JFR" runs the fast mode and JFR.
        wanted = [m.strip() for m in args.modes.split(",") if m.strip()]
        profilers = {k: v for k, v in profilers.items() if k == "no agent" or any(w in k for w in wanted)}
    workloads = {
        "AllocBench (allocation-heavy)": lambda flags: with_env(flags, lambda f: ["java", *f, "-cp", str(classes), "bench.AllocBench", "3000"]),
        javac_name: lambda flags: with_env(flags, javac),
    }
    results = interleaved(workloads, profilers, args.runs, work, warmup=0)
    # The CPU seconds of each run, in the shape of `results` (runs went workload by workload,
    # round by round, profiler by profiler).
    cpu_runs, order = {}, iter(CPU)
    for workload, times in results.items():
        cpu_runs[workload] = {n: [] for n in times}
        for _ in range(args.runs):
            for n in times:
                cpu_runs[workload][n].append(next(order))

    if args.modes:
        for workload, times in results.items():
            base = statistics.median(times["no agent"])
            cpu_base = statistics.median(cpu_runs[workload]["no agent"])
            for n, t in times.items():
                c = cpu_runs[workload][n]
                print(f"{workload}, {n}: median {statistics.median(t):.2f} s ({statistics.median(t) / base:.2f}x), runs {' '.join(f'{x:.2f}' for x in t)}; "
                      f"CPU median {statistics.median(c):.2f} s ({statistics.median(c) / cpu_base:.2f}x), runs {' '.join(f'{x:.2f}' for x in c)}")
        shutil.rmtree(work, ignore_errors=True)
        return

    # Accuracy: per-site shares of allocated and live bytes on a longer AllocBench run (10000
    # rounds, 2.4 GB allocated), depth 4, fast and sampled against exact.
    files = {}
    for mode, opts in [("exact", "sites=exact"), ("fast", "sites=fast"), ("sampled", "alloc_interval=512k")]:
        files[mode] = work / f"acc-{mode}.txt"
        timed(["java", f"-agentpath:{agent}=heap=sites,cutoff=0,{opts},file={files[mode]}", "-cp", str(classes), "bench.AllocBench", "10000"], work)

    try:
        accuracy, exact, fast, big = measure_accuracy(files)
    except Exception as e:  # the timings above stay worth writing
        accuracy, exact, fast, big = {f"accuracy not measured ({e})": 0.0}, {}, {}, []
    live_sets = {}
    for interval in (16384, 131072):
        try:
            live_sets[interval] = [live_sets_errors(agent, classes, work, interval) for _ in range(3)]
        except Exception as e:
            live_sets[interval] = [float("nan")]
            print(f"LiveSets at {interval}: {e}", file=sys.stderr)

    cpu = re.sub(r"\s+", " ", next((l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("model name")), "")).strip()
    java_version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    names = list(profilers)
    lines = [SECTION, "",
             f"Command: `bench/heap_sites.py --write --runs {args.runs}` ({time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores, {cpu}, {java_version}).",
             "Wall time of the whole JVM run; runs interleaved; median. Ratio against no agent in brackets.", "",
             "| workload | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for workload, times in results.items():
        base = statistics.median(times["no agent"])
        cells = [f"{statistics.median(times[n]):.2f} s ({statistics.median(times[n]) / base:.2f}x)" for n in names]
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    lines += ["", "Accuracy against sites=exact (AllocBench 10000 rounds, depth 4, cutoff 0): largest difference of a site's share, in percentage points:", ""]
    lines += [f"- {k}: **{v:.2f}**" for k, v in accuracy.items()]
    lines += ["", "Live shares on java/src/LiveSets.java (800,000 rounds, about 145 MB live; six sites of one class and one array class, each keeping a known random share of what it allocates): largest difference between a site's share of the live bytes and the truth, in points, three runs each:", ""]
    lines += [f"- fast, samples every {i // 1024} KB: " + ", ".join(f"{e:.2f}" for e in errs) + f" (worst **{max(errs):.2f}**)" for i, errs in live_sets.items()]
    lines += ["", "Sites over 1% of allocated bytes, exact vs fast: "
              + ", ".join(f"{k[0]} {exact[k]:.2f}% vs {fast.get(k, 0):.2f}%" for k in big[:6]) + ".", "", ""]
    lines += raw_runs(results, digits=2)
    publish(SECTION, lines, args.write)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
