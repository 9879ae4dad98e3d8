#!/usr/bin/env python3
"""Benchmark: cpu=samples (interval=10 ms) against no agent and against JFR
(-XX:StartFlightRecording=settings=profile) on a CPU-bound program (java/src/bench/CpuBench.java)
and on javac compiling java.util (354 files, from Debian's openjdk-17-source), runs interleaved,
median wall time of N each. Also the agent's start-up cost: `java -version` with and without it.

    bench/cpu_samples.py [--runs N] [--write]

--write replaces the "cpu=samples overhead" section of bench/RESULTS.md.
"""
import argparse, os, platform, re, shutil, statistics, subprocess, tempfile, time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / ".tools"
SECTION = "## cpu=samples overhead"


def sh(*args, **kw):
    return subprocess.run(args, check=True, **kw)


def java_util_sources():
    src = TOOLS / "jdk-src"
    util = src / "src/java.base/java/util"
    if not util.exists():
        deb_dir = TOOLS / "debs"
        deb_dir.mkdir(parents=True, exist_ok=True)
        if not list(deb_dir.glob("openjdk-17-source_*.deb")):
            sh("apt-get", "download", "openjdk-17-source", cwd=deb_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deb = next(deb_dir.glob("openjdk-17-source_*.deb"))
        sh("dpkg-deb", "-x", str(deb), str(src))
        zip_path = next(src.rglob("src.zip"))
        sh("unzip", "-q", "-o", str(zip_path), "java.base/java/util/*", "-d", str(src / "src"))
    return src / "src/java.base", sorted(str(p) for p in util.rglob("*.java"))


def timed(cmd, cwd):
    start = time.perf_counter()
    subprocess.run(cmd, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start


def prepare(prebuilt=None):
    """Builds the agent (unless `prebuilt`, the path of one built already, is given) and the
    Java programs; returns a fresh work directory, a copy of the agent in it (so every run
    loads the agent just built, even if target/ is rebuilt meanwhile), the Java classes, and
    the javac-of-java.util workload."""
    if prebuilt is None:
        sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    module_root, sources = java_util_sources()
    work = Path(tempfile.mkdtemp(prefix="hprof-bench-"))
    agent = work / "libhprof.so"
    shutil.copy2(prebuilt or ROOT / "target/release/libhprof.so", agent)
    javac = lambda flags: [
        "javac", *[f"-J{f}" for f in flags], "-nowarn", "-Xmaxwarns", "0", "-d", str(work / "classes"),
        "--patch-module", f"java.base={module_root}", *sources]
    return work, agent, ROOT / "target/java/classes", (f"javac java.util ({len(sources)} files)", javac)


def interleaved(workloads, profilers, runs, cwd, warmup=1):
    """Wall times of each workload under each profiler: `warmup` untimed rounds, then `runs`
    rounds, each running every profiler in turn; {workload: {profiler: [seconds]}}."""
    results = {}
    for workload, make in workloads.items():
        for _ in range(warmup):
            for flags in profilers.values():
                timed(make(flags), cwd)
        times = {name: [] for name in profilers}
        for _ in range(runs):
            for name, flags in profilers.items():
                times[name].append(timed(make(flags), cwd))
        results[workload] = times
    return results


def raw_runs(results, digits=3):
    """The "Raw runs (s):" lines: every run of every profiler on every workload."""
    lines = ["Raw runs (s):", ""]
    for workload, times in results.items():
        for name, values in times.items():
            lines.append(f"- {workload}, {name}: {' '.join(f'{v:.{digits}f}' for v in values)}")
    return lines


def machine():
    """The "N cores, CPU, java -version" part of a Command line."""
    cpu = re.sub(r"\s+", " ", next((l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())).strip()
    java_version = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return f"{os.cpu_count()} cores, {cpu}, {java_version}"


def publish(title, lines, write):
    """Prints the section made of `lines` and, when `write`, puts it in bench/RESULTS.md."""
    section = "\n".join(lines) + "\n"
    print(section)
    if write:
        write_section(title, section)


def write_section(title, section):
    """Replaces the section of bench/RESULTS.md that starts with `title` (or appends it)."""
    path = ROOT / "bench/RESULTS.md"
    text = path.read_text() if path.exists() else "# Benchmark results\n"
    pattern = re.compile(re.escape(title) + r"\n.*?(?=\n## |\Z)", re.S)
    text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
    path.write_text(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()

    work, agent, classes, (javac_name, javac) = prepare()
    profilers = {
        "no agent": [],
        "hprof cpu=samples": [f"-agentpath:{agent}=cpu=samples,interval=10,file={work}/out.txt"],
        "JFR profile": [f"-XX:StartFlightRecording=settings=profile,filename={work}/out.jfr"],
    }
    workloads = {
        "CpuBench (CPU-bound)": lambda flags: ["java", *flags, "-cp", str(classes), "bench.CpuBench"],
        javac_name: javac,
    }
    results = interleaved(workloads, profilers, args.runs, work)
    assert "CPU SAMPLES END" in (work / "out.txt").read_text()

    startup = {"no agent": [], "hprof cpu=samples": []}
    for _ in range(15):
        for name in startup:
            startup[name].append(timed(["java", *profilers[name], "-version"], work))

    lines = [SECTION, "",
             f"Command: `bench/cpu_samples.py --write --runs {args.runs}` ({time.strftime('%Y-%m-%d')}, {machine()}).",
             "Wall time of the whole JVM run; runs interleaved (none, hprof, JFR, none, ...), one warm-up round, median.", "",
             "| workload | no agent (s) | hprof cpu=samples (s) | ratio | JFR profile (s) | ratio |", "|---|---|---|---|---|---|"]
    for workload, times in results.items():
        base = statistics.median(times["no agent"])
        h = statistics.median(times["hprof cpu=samples"])
        j = statistics.median(times["JFR profile"])
        lines.append(f"| {workload} | {base:.3f} | {h:.3f} | **{h / base:.3f}** | {j:.3f} | {j / base:.3f} |")
    s0 = statistics.median(startup["no agent"])
    s1 = statistics.median(startup["hprof cpu=samples"])
    lines += ["", f"Start-up: `java -version` median of 15: {s0 * 1000:.0f} ms without the agent, {s1 * 1000:.0f} ms with "
              f"`cpu=samples` (agent load to VM init done, plus writing the file): **{(s1 - s0) * 1000:.0f} ms**.", ""]
    lines += raw_runs(results)
    publish(SECTION, lines, args.write)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
