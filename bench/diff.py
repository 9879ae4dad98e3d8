#!/usr/bin/env python3
"""Benchmark: `hprof diff`.

Profiles: two synthetic java.hprof.txt files of 100,000 traces (8 to 24 frames, from 5,000
methods of 500 classes) and 10,000,000 samples each (BASE with a skewed split of the samples
over the traces, NEW the same traces with another split and one method's samples doubled);
median wall time of `hprof diff BASE NEW` (the table), with `--json`, `-o diff.html`,
`-o diff.collapsed`, and side by side on the same profiles as folded stacks: `hprof diff`,
async-profiler's converter (`jfrconv --diff`, built from source when the mirror is there, or
/work/ap), inferno (`inferno-diff-folded | inferno-flamegraph`, installed into .tools/ with
cargo) and `go tool pprof -top -normalize -diff_base` on the same profiles as pprof.
Target: the table under 1.5 s.

Heap dumps: jcmd dumps of java/src/bench/BigHeap.java at 95 % and 100 % (about 1.1 GB, 14
million objects each): `hprof diff OLD NEW` against `hprof analyze OLD` plus `hprof analyze NEW`
(run one after the other), median wall time, peak anonymous memory (RssAnon, read every 10 ms)
per object of the bigger dump. Targets: the diff within 1.2x the two analyses, 40 bytes per
object.

    bench/diff.py [--runs N] [--write] [--hprof-only] [--profiles-only | --heap-only]

DUMPS=/dir keeps the dumps there (default /tmp/hprof-bench, which bench/analyze.sh shares).
--write replaces the "hprof diff" sections of bench/RESULTS.md.
"""
import argparse, os, platform, random, re, resource, shutil, statistics, subprocess, sys, tempfile, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROFILE_SECTION = "## hprof diff: profiles"
HEAP_SECTION = "## hprof diff: heap dumps"
TRACES, SAMPLES = 100_000, 10_000_000


def make_profile(path, seed, boost=None):
    """A text profile: the traces are the same for every seed (their frames come from seed 42);
    the seed splits the samples; `boost` doubles the samples of traces whose leaf is that
    method."""
    frames_rng = random.Random(42)
    methods = [(f"com.example.pkg{c % 40}.Class{c}", f"method{m}") for c in range(500) for m in range(10)]
    traces = []
    for _ in range(TRACES):
        depth = frames_rng.randint(8, 24)
        traces.append([methods[frames_rng.randrange(len(methods))] for _ in range(depth)])
    rng = random.Random(seed)
    weights = [1.0 / (i + 1) ** 0.8 for i in range(TRACES)]
    rng.shuffle(weights)
    if boost is not None:
        weights = [w * 2 if traces[i][0] == boost else w for i, w in enumerate(weights)]
    total_w = sum(weights)
    counts = [max(1, int(SAMPLES * w / total_w)) for w in weights]
    top = max(range(TRACES), key=lambda i: counts[i])
    counts[top] += SAMPLES - sum(counts)
    with open(path, "w") as f:
        f.write("JAVA PROFILE 1.0.1, created Tue Nov 24 12:00:00 2026\n\nsynthetic\n--------\n\n")
        f.write('THREAD START (obj=50000001, id = 200001, name="main", group="main")\n')
        for t, frames in enumerate(traces):
            f.write(f"TRACE {300001 + t}: (thread=200001)\n")
            for cls, m in frames:
                f.write(f"\t{cls}.{m}({cls.rsplit('.', 1)[1]}.java:{1 + (t * 7 + len(m)) % 900})\n")
        f.write(f"CPU SAMPLES BEGIN (total = {SAMPLES}) Tue Nov 24 12:00:10 2026\n")
        f.write("rank   self  accum   count trace method\n")
        order = sorted(range(TRACES), key=lambda i: -counts[i])
        accum = 0.0
        for rank, i in enumerate(order, 1):
            share = counts[i] * 100.0 / SAMPLES
            accum += share
            f.write(f"{rank:4} {share:5.2f}% {accum:5.2f}% {counts[i]:7} {300001 + i:5} x.y\n")
        f.write("CPU SAMPLES END\n")


def children(pid):
    """The child processes of `pid` (read from /proc: no process started to find them)."""
    kids = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children") as f:
                kids += [int(p) for p in f.read().split()]
    except OSError:
        pass
    return kids


def measure(cmd):
    """(wall seconds, peak RssAnon bytes of the command and its children, CPU seconds (user and
    system) of the command and its children), stdout discarded."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, shell=isinstance(cmd, str))
    peak = 0

    def poll():
        nonlocal peak
        while proc.poll() is None:
            total = 0
            for pid in [proc.pid] + children(proc.pid):
                try:
                    for line in open(f"/proc/{pid}/status"):
                        if line.startswith("RssAnon:"):
                            total += int(line.split()[1]) * 1024
                except OSError:
                    pass
            peak = max(peak, total)
            time.sleep(0.01)

    watcher = threading.Thread(target=poll)
    watcher.start()
    _, err = proc.communicate()
    elapsed = time.perf_counter() - start
    watcher.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {err.decode(errors='replace')[-2000:]}")
    return elapsed, peak, cpu


def load():
    """The 1-minute load average, as text."""
    return f"{os.getloadavg()[0]:.1f}"


def async_profiler_converter():
    """jfrconv: built from async-profiler's public source when its mirror is here, else /work/ap."""
    mirror = Path("/work/.mirror/async-profiler+async-profiler/repo")
    built = ROOT / ".tools/async-profiler/build/bin/jfrconv"
    if built.exists():
        return str(built)
    if mirror.exists():
        src = ROOT / ".tools/async-profiler"
        src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(mirror), "archive", "HEAD"], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
        if subprocess.run(["make", "-C", str(src)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0 and built.exists():
            return str(built)
    fallback = Path("/work/ap/build/bin/jfrconv")
    return str(fallback) if fallback.exists() else None


def inferno_tools():
    """inferno-diff-folded and inferno-flamegraph, installed into .tools/inferno with cargo."""
    bin_dir = ROOT / ".tools/inferno/bin"
    if not (bin_dir / "inferno-diff-folded").exists():
        print("installing inferno into .tools/inferno (outside the workspace)", flush=True)
        if subprocess.run(["cargo", "install", "inferno", "--locked", "--root", str(ROOT / ".tools/inferno")]).returncode != 0:
            return None
    return bin_dir


def median_runs(cmd, runs):
    measure(cmd)  # warm the page cache and the binary
    results = [measure(cmd) for _ in range(runs)]
    return [r[0] for r in results], max(r[1] for r in results), statistics.median(r[2] for r in results)


def profiles(hprof, runs, hprof_only=False):
    with tempfile.TemporaryDirectory(prefix="hprof-diff-bench-") as work:
        work = Path(work)
        base, new = work / "base.hprof.txt", work / "new.hprof.txt"
        make_profile(base, 1)
        make_profile(new, 2, boost=("com.example.pkg7.Class7", "method3"))
        for name in ("base", "new"):
            for ext in ("collapsed", "pb.gz"):
                subprocess.run([hprof, "convert", str(work / f"{name}.hprof.txt"), str(work / f"{name}.{ext}")],
                               check=True, stderr=subprocess.DEVNULL)
        folded = (str(work / "base.collapsed"), str(work / "new.collapsed"))
        cases = {
            "`hprof diff BASE NEW` (tables)": [hprof, "diff", str(base), str(new)],
            "`hprof diff --json`": [hprof, "diff", "--json", str(base), str(new)],
            "`hprof diff -o diff.html`": [hprof, "diff", str(base), str(new), "-o", str(work / "diff.html")],
            "`hprof diff -o diff.collapsed`": [hprof, "diff", str(base), str(new), "-o", str(work / "diff.collapsed")],
            "`hprof diff` folded stacks, `-o diff.html`": [hprof, "diff", *folded, "-o", str(work / "folded.html")],
        }
        jfrconv = None if hprof_only else async_profiler_converter()
        if jfrconv:
            cases["async-profiler `jfrconv --diff` folded stacks to HTML"] = [jfrconv, "--diff", *folded, str(work / "ap.html")]
        inferno = None if hprof_only else inferno_tools()
        if inferno:
            cases["inferno `inferno-diff-folded | inferno-flamegraph` (SVG)"] = (
                f"{inferno}/inferno-diff-folded {folded[0]} {folded[1]} | {inferno}/inferno-flamegraph > {work}/inferno.svg")
        go = None
        env_file = ROOT / ".tools/env"
        if env_file.exists() and not hprof_only:
            for line in env_file.read_text().splitlines():
                if line.startswith("HPROF_GO="):
                    go = line.split("=", 1)[1]
        if go:
            home = work / "gohome"
            os.environ.update(HOME=str(home), GOPATH=str(home / "go"), GOCACHE=str(home / "cache"))
            cases["`go tool pprof -top -normalize -diff_base` (pprof)"] = [
                go, "tool", "pprof", "-top", "-symbolize=none", "-normalize",
                f"-diff_base={work / 'base.pb.gz'}", str(work / "new.pb.gz")]
        size = base.stat().st_size
        load_before = load()
        results = {name: median_runs(cmd, runs) for name, cmd in cases.items()}
        load_after = load()
    lines = [PROFILE_SECTION, "",
             f"`bench/diff.py {' '.join(sys.argv[1:])}` on {platform.node()} ({os.cpu_count()} cores), {time.strftime('%Y-%m-%d')}: "
             f"two synthetic java.hprof.txt files of {size / 1e6:.0f} MB, each with {TRACES:,} traces (8 to 24 frames) "
             f"and {SAMPLES:,} samples (NEW: the samples split otherwise, one method's doubled); median wall time "
             "of the whole command (reading both, comparing, writing), its median CPU time (user and system, "
             "every thread), peak anonymous memory. The side-by-side "
             "tools read the same profiles converted to folded stacks (or pprof) beforehand. Target: the tables "
             f"under 1.5 s. Load average (1 min) {load_before} before, {load_after} after.", "",
             "| command | median (s) | runs (s) | CPU (s) | peak anonymous memory (MB) |", "|---|---|---|---|---|"]
    for name, (times, peak, cpu) in results.items():
        lines.append(f"| {name} | {statistics.median(times):.3f} | {' '.join(f'{t:.3f}' for t in times)} | "
                     f"{cpu:.3f} | {peak / 1e6:.0f} |")
    return "\n".join(lines) + "\n"


def make_dump(percent, path):
    if path.exists():
        return
    print(f"making the dump {path}", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    java = subprocess.Popen(["java", "-Xmx4g", "-XX:+UseParallelGC", "-cp", str(ROOT / "target/java/classes"),
                             "bench.BigHeap", str(percent)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = java.stdout.readline()
    pid = line.split()[1]
    subprocess.run(["jcmd", pid, "GC.heap_dump", str(path) + ".tmp"], check=True, stdout=subprocess.DEVNULL)
    os.rename(str(path) + ".tmp", path)
    java.stdin.close()
    java.wait()


def heap(hprof, runs):
    dumps = Path(os.environ.get("DUMPS", "/tmp/hprof-bench"))
    old, new = dumps / "big95.hprof", dumps / "big100.hprof"
    make_dump(95, old)
    make_dump(100, new)
    objects = []
    for dump in (old, new):
        out = subprocess.run([hprof, "analyze", "--json", "--top", "1", str(dump)], capture_output=True, text=True, check=True).stdout
        objects.append(int(re.search(r'"objects": (\d+)', out).group(1)))
    both = f"{hprof} analyze {old} > /dev/null && {hprof} analyze {new} > /dev/null"
    cases = {
        "`hprof analyze OLD`, then `hprof analyze NEW`": both,
        "`hprof diff OLD NEW`": [hprof, "diff", str(old), str(new)],
    }
    for dump in (old, new):
        subprocess.run(["cat", str(dump)], stdout=subprocess.DEVNULL, check=True)
    results = {}
    load_before = load()
    # Interleaved runs.
    for name, cmd in cases.items():
        measure(cmd)
    for _ in range(runs):
        for name, cmd in cases.items():
            results.setdefault(name, []).append(measure(cmd))
    load_after = load()
    ratio = statistics.median(r[0] for r in results["`hprof diff OLD NEW`"]) / statistics.median(
        r[0] for r in results["`hprof analyze OLD`, then `hprof analyze NEW`"])
    lines = [HEAP_SECTION, "",
             f"`bench/diff.py {' '.join(sys.argv[1:])}` on {platform.node()} ({os.cpu_count()} cores), {time.strftime('%Y-%m-%d')}: "
             f"jcmd GC.heap_dump of `java/src/bench/BigHeap.java` at 95 % (OLD, {old.stat().st_size / 1e9:.2f} GB, "
             f"{objects[0] / 1e6:.1f} M objects) and 100 % (NEW, {new.stat().st_size / 1e9:.2f} GB, {objects[1] / 1e6:.1f} M "
             "objects); warm page cache, runs interleaved, median wall time; peak anonymous memory (RssAnon every "
             "10 ms) per object of the bigger dump; median CPU time (user and system, every thread). Targets: the "
             "diff within 1.2x the two analyses, 40 bytes per object. "
             f"Load average (1 min) {load_before} before, {load_after} after.", "",
             "| command | median (s) | runs (s) | CPU (s) | peak anonymous memory (MB) | per object (B) |",
             "|---|---|---|---|---|---|"]
    for name, rows in results.items():
        times = [r[0] for r in rows]
        peak = max(r[1] for r in rows)
        cpu = statistics.median(r[2] for r in rows)
        lines.append(f"| {name} | {statistics.median(times):.2f} | {' '.join(f'{t:.2f}' for t in times)} | "
                     f"{cpu:.2f} | {peak / 1e6:.0f} | {peak / max(objects):.1f} |")
    cpu_ratio = statistics.median(r[2] for r in results["`hprof diff OLD NEW`"]) / statistics.median(
        r[2] for r in results["`hprof analyze OLD`, then `hprof analyze NEW`"])
    lines += ["", f"`hprof diff` time / the two analyses' time = **{ratio:.2f}x** (CPU time: {cpu_ratio:.2f}x)."]
    return "\n".join(lines) + "\n"


def write_section(title, section):
    path = ROOT / "bench/RESULTS.md"
    text = path.read_text()
    pattern = re.compile(re.escape(title) + r"\n.*?(?=\n## |\Z)", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--hprof-only", action="store_true",
                        help="profiles: hprof's rows only, not the other tools side by side")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--profiles-only", action="store_true")
    group.add_argument("--heap-only", action="store_true")
    args = parser.parse_args()
    subprocess.run(["bash", str(ROOT / "scripts/build-java.sh")], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-cli"], cwd=ROOT, check=True)
    hprof = str(ROOT / "target/release/hprof")
    sections = []
    if not args.heap_only:
        sections.append((PROFILE_SECTION, profiles(hprof, args.runs, args.hprof_only)))
    if not args.profiles_only:
        sections.append((HEAP_SECTION, heap(hprof, args.runs)))
    for title, section in sections:
        print(section)
        if args.write:
            write_section(title, section)


if __name__ == "__main__":
    main()
