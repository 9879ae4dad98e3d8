#!/usr/bin/env python3
"""Soak: the stress suite's SIGQUIT storms (crates/agent/tests/stress.rs), longer and repeated,
for release checks. Runs java/src/Stress.java under every profiler combination on every JDK
(11, 17, 21, 25 where installed), SIGQUIT every 0.25 s, each run bounded by a timeout; counts
the runs that ended with status 0 and a complete profile, and those that hung, crashed or left
an incomplete file.

    bench/soak.py [--seconds S] [--repeat N] [--jdk 17 ...] [--write]

--write replaces the "Soak" section of bench/RESULTS.md.
"""
import argparse, os, platform, shutil, signal, subprocess, sys, tempfile, threading, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import ROOT, TOOLS, sh, write_section  # noqa: E402

SECTION = "## Soak: SIGQUIT storms"
COMBINATIONS = [
    ("heap=sites,cpu=samples", ["alloc", "churn"]),
    ("cpu=samples,monitor=y,thread=y", ["locks", "churn", "cpu"]),
    ("heap=all,cpu=samples,monitor=y,thread=y", ["alloc", "vthreads", "unload"]),
    ("cpu=times,heap=sites,alloc_interval=65536", ["cpu", "unload", "churn"]),
    ("heap=sites,cpu=samples,format=b", ["alloc", "vthreads", "locks"]),
    ("cpu=samples,heap=sites,monitor=y,thread=y", ["alloc", "locks", "churn", "vthreads", "unload", "cpu"]),
]
ENDS = ("CPU SAMPLES END\n", "SITES END\n", "CPU TIME (ms) END\n", "MONITOR TIME END\n")


def jdks(wanted):
    homes = {17: None}
    env = TOOLS / "env"
    if env.exists():
        for line in env.read_text().splitlines():
            key, _, value = line.partition("=")
            if key.startswith("HPROF_JDK"):
                homes[int(key[9:])] = value
    found = {}
    for version, home in sorted(homes.items()):
        if wanted and version not in wanted:
            continue
        found[version] = "java" if home is None else f"{home}/bin/java"
    return found


def one_run(java, agent, classes, options, loads, seconds):
    work = Path(tempfile.mkdtemp(prefix="hprof-soak-"))
    cmd = [java, f"-agentpath:{agent}={options}", "-cp", str(classes), "Stress", str(seconds * 1000), *loads]
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    stop = threading.Event()

    def quitter():
        time.sleep(0.6)
        while not stop.is_set() and proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGQUIT)
            except ProcessLookupError:
                return
            time.sleep(0.25)

    t = threading.Thread(target=quitter)
    t.start()
    try:
        _, err = proc.communicate(timeout=seconds + 120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        stop.set()
        t.join()
        return "hung", work
    stop.set()
    t.join()
    if proc.returncode != 0:
        return f"status {proc.returncode}", work
    if "format=b" in options:
        out = subprocess.run([str(ROOT / "target/release/hprof"), "summary", str(work / "java.hprof")],
                             capture_output=True, text=True)
        return ("ok" if out.returncode == 0 else "incomplete"), work
    text = (work / "java.hprof.txt").read_text(errors="replace")
    return ("ok" if text.endswith(ENDS) else "incomplete"), work


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--jdk", type=int, action="append", default=[])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", "-p", "hprof-cli", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    classes = ROOT / "target/java/classes"
    agent = Path(tempfile.mkdtemp(prefix="hprof-soak-agent-")) / "libhprof.so"
    agent.write_bytes((ROOT / "target/release/libhprof.so").read_bytes())
    rows = []
    for version, java in jdks(set(args.jdk)).items():
        for options, loads in COMBINATIONS:
            outcomes = []
            for _ in range(args.repeat):
                outcome, work = one_run(java, agent, classes, options, loads, args.seconds)
                outcomes.append(outcome)
                print(f"JDK {version} {options} {' '.join(loads)}: {outcome} ({work})", flush=True)
                if outcome == "ok":
                    shutil.rmtree(work, ignore_errors=True)
            ok = outcomes.count("ok")
            bad = ", ".join(o for o in outcomes if o != "ok") or "none"
            rows.append(f"| {version} | `{options}` | {' '.join(loads)} | {ok} of {len(outcomes)} | {bad} |")
    section = "\n".join([
        SECTION, "",
        f"`bench/soak.py --seconds {args.seconds} --repeat {args.repeat}` on {platform.node()} "
        f"({os.cpu_count()} cores), {time.strftime('%Y-%m-%d')}: java/src/Stress.java for "
        f"{args.seconds} s per run, SIGQUIT every 0.25 s, each run bounded by a timeout.", "",
        "| JDK | options | loads | complete runs | other outcomes |",
        "|---|---|---|---|---|", *rows, ""])
    shutil.rmtree(agent.parent, ignore_errors=True)
    print(section)
    if args.write:
        write_section(SECTION, section)


if __name__ == "__main__":
    main()
