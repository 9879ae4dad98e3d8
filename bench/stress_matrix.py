#!/usr/bin/env python3
"""The stress matrix (issue 26): every profiler mix under SIGQUIT storms on every JDK; attach
loops (start/dump/stop cycles, recordings the JVM's exit ends, requests sent while it exits);
heap dumps on a full disk. Each JVM is bounded by a timeout. Counts what ended as it must and
lists everything else.

- Profiler mixes: each `cpu=` (none, samples, samples with sampler=jvmti, wall, times, old)
  with each `heap=` (none, sites, sites=exact, alloc_interval=64k, dump, all), `monitor=y` and
  `thread=y` on every other one, `format=b` on every fourth (but not with cpu=times, cpu=old and
  monitor=y, which write text only); java/src/Stress.java with every
  load, SIGQUIT every 0.25 s once the JVM catches it. Must: status 0, "done true", no HPROF ERROR but JDK 25's known
  heap dump skip with virtual threads, at least 4 SIGQUITs, the profile whole (binary: `hprof
  summary` exits 0; text: every section that begins ends, `hprof top` reads it when it has a
  profile section).
- Attach loops: LongRunning in a mount namespace with a /tmp of its own (a directory here):
  cycles of start (options varied), dump, stop; recordings its exit ends; requests while it
  exits. Must: documented statuses only (0; 3 once it is gone; 8 for a second start), every
  profile readable, nothing left in its /tmp but its socket, perf data and the agent's copy.
- Full disk: heap=dump (binary) and heap=all (text) of ManyLive (500,000 objects, a 20 MB
  dump) on a 10 MB tmpfs in a mount namespace. Must: the program's status 0, "INCOMPLETE" and
  never "done." on stderr, the file marked (its last record or line an HPROF ERROR note) and
  `hprof summary`/`hprof top` failing on it with "incomplete".

    bench/stress_matrix.py [--seconds S] [--cycles N] [--jdk 17 ...] [--only storms|attach|disk] [--write]

--write replaces the "Stress matrix: ..." sections of bench/RESULTS.md (one per part).
"""
import argparse, os, re, shutil, signal, subprocess, sys, tempfile, threading, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cpu_samples import ROOT, machine, sh, write_section  # noqa: E402
from soak import jdks  # noqa: E402

HPROF = ROOT / "target/release/hprof"
CPU = ["", "cpu=samples", "cpu=samples,sampler=jvmti", "cpu=wall", "cpu=times", "cpu=old"]
HEAP = ["", "heap=sites", "heap=sites,sites=exact", "heap=sites,alloc_interval=64k", "heap=dump", "heap=all"]
LOADS = ["alloc", "churn", "locks", "cpu", "unload", "vthreads"]
SECTIONS = ["CPU SAMPLES", "SITES", "CPU TIME (ms)", "MONITOR TIME", "HEAP DUMP", "MONITOR DUMP"]


def mixes():
    out = []
    for i, cpu in enumerate(CPU):
        for j, heap in enumerate(HEAP):
            n = i * len(HEAP) + j
            parts = [p for p in (cpu, heap) if p]
            if n % 2 == 1 or not parts:
                parts.append("monitor=y,thread=y")
            # cpu=times, cpu=old and monitor=y write text only (the original's rule: format=b
            # refuses them).
            if n % 4 == 0 and cpu not in ("cpu=times", "cpu=old") and "monitor=y" not in parts[-1]:
                parts.append("format=b")
            out.append(",".join(parts))
    return out


def storm(java, version, agent, classes, options, seconds):
    work = Path(tempfile.mkdtemp(prefix="hprof-matrix-"))
    cmd = [java, f"-agentpath:{agent}={options}", "-cp", str(classes), "Stress", str(seconds * 1000), *LOADS]
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stop, sent = threading.Event(), [0]

    def handles_sigquit():
        # A SIGQUIT before the JVM catches it (early in its start) would end it, as any
        # program: the storm starts once /proc says it is caught.
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
        except OSError:
            return False
        mask = next((l.split()[1] for l in status.splitlines() if l.startswith("SigCgt:")), "0")
        return int(mask, 16) & (1 << (signal.SIGQUIT - 1)) != 0

    def quitter():
        time.sleep(0.6)
        while not stop.is_set() and proc.poll() is None and not handles_sigquit():
            time.sleep(0.05)
        while not stop.is_set() and proc.poll() is None:
            try:
                os.kill(proc.pid, signal.SIGQUIT)
                sent[0] += 1
            except ProcessLookupError:
                return
            time.sleep(0.25)

    t = threading.Thread(target=quitter)
    t.start()
    started = time.time()
    try:
        out, err = proc.communicate(timeout=seconds + 180)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        stop.set()
        t.join()
        return "hung", work, 0, time.time() - started
    stop.set()
    t.join()
    elapsed = time.time() - started
    if proc.returncode != 0:
        return f"status {proc.returncode}: {err.strip().splitlines()[-1:] }", work, sent[0], elapsed
    if "done true" not in out:
        return "no 'done true'", work, sent[0], elapsed
    for line in err.splitlines():
        if "HPROF ERROR" in line and not (version >= 25 and line.startswith("HPROF ERROR: heap dump skipped: the heap holds")):
            return f"stderr: {line[:160]}", work, sent[0], elapsed
    if sent[0] < 4:
        return f"only {sent[0]} SIGQUITs", work, sent[0], elapsed
    if "format=b" in options:
        check = subprocess.run([str(HPROF), "summary", str(work / "java.hprof")], capture_output=True, text=True)
        # JDK 25's known skip is noted in the file, which makes it incomplete for summary.
        err = check.stderr
        only_skips = (version >= 25 and err.count("its writer noted") == err.count("heap dump skipped: the heap holds")
                      and not any(p in err for p in ("no HEAP DUMP END", "ends inside a record", "no GC root", "no heap dump record")))
        if check.returncode != 0 and not only_skips:
            return f"summary: {check.stderr.strip()[:200]}", work, sent[0], elapsed
    else:
        text = (work / "java.hprof.txt").read_text(errors="replace")
        for name in SECTIONS:
            begins, ends = text.count(f"\n{name} BEGIN"), text.count(f"\n{name} END")
            if begins != ends:
                return f"{name}: {begins} BEGIN, {ends} END", work, sent[0], elapsed
        if any(f"\n{s} BEGIN" in text for s in SECTIONS[:4]):
            check = subprocess.run([str(HPROF), "top", str(work / "java.hprof.txt")], capture_output=True, text=True)
            if check.returncode != 0:
                return f"top: {check.stderr.strip()[:200]}", work, sent[0], elapsed
    return "ok", work, sent[0], elapsed


def storms(args, versions, agent, classes):
    rows, total, ok, seconds = [], 0, 0, []
    for version, java in versions.items():
        for options in mixes():
            outcome, work, sent, elapsed = storm(java, version, agent, classes, options, args.seconds)
            total += 1
            seconds.append(elapsed)
            print(f"JDK {version} {options}: {outcome} ({sent} SIGQUITs, {elapsed:.1f} s)", flush=True)
            if outcome == "ok":
                ok += 1
                shutil.rmtree(work, ignore_errors=True)
            else:
                rows.append(f"- JDK {version} `{options}`: {outcome} (kept in {work})")
    return [f"Storms: {ok} of {total} runs as they must ({len(mixes())} profiler mixes x {len(versions)} JDKs, "
            f"{args.seconds} s each with every load, SIGQUIT every 0.25 s; slowest run {max(seconds):.1f} s).", "",
            *(rows or ["Every run: status 0, the program's output, no HPROF ERROR, the profile whole."]), ""]


def namespaced_jvm(java, classes, tmp, millis):
    """LongRunning with `tmp` as its /tmp (a mount namespace of its own); (process, pid)."""
    proc = subprocess.Popen(
        ["unshare", "--mount", "--fork", "--kill-child", "sh", "-c", f"mount --bind '{tmp}' /tmp && exec \"$0\" \"$@\"",
         java, "-cp", str(classes), "LongRunning", str(millis)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    return proc, line.split()[1]


def attach(pid, *args, cwd, agent):
    env = dict(os.environ, HPROF_AGENT=str(agent))
    started = time.time()
    out = subprocess.run([str(HPROF), "attach", pid, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    return out.returncode, out.stderr, time.time() - started


def leftovers(tmp):
    return sorted(n for n in os.listdir(tmp) if not n.startswith((".java_pid", "hprof-0", "hsperfdata_")))


def attach_loops(args, versions, agent, classes):
    options = ["", "cpu=wall,interval=5", "heap=sites,alloc_interval=64k", "monitor=y", "cpu=times", "heap=dump,format=b",
               "cpu=samples,sampler=jvmti"]
    lines, problems = [], []
    out_dir = Path(tempfile.mkdtemp(prefix="hprof-matrix-attach-"))
    for version, java in versions.items():
        tmp = Path(tempfile.mkdtemp(prefix="hprof-matrix-tmp-"))
        proc, pid = namespaced_jvm(java, classes, tmp, 600_000)
        codes, times = {}, []
        for cycle in range(args.cycles):
            opts = options[cycle % len(options)]
            for action, extra in (("start", [opts] if opts else []), ("dump", ["-o", f"d{cycle}.txt"]),
                                  ("stop", ["-o", f"s{cycle}.{'hprof' if 'format=b' in opts else 'txt'}"])):
                code, err, secs = attach(pid, action, *extra, cwd=out_dir, agent=agent)
                codes[code] = codes.get(code, 0) + 1
                times.append(secs)
                if code != 0:
                    problems.append(f"JDK {version} cycle {cycle} {action} {opts}: {code} {err.strip()[-200:]}")
            # A second start while one runs is refused with 8.
        code, err, _ = attach(pid, "start", cwd=out_dir, agent=agent)
        code2, err2, _ = attach(pid, "start", cwd=out_dir, agent=agent)
        if (code, code2) != (0, 8) or "already running" not in err2:
            problems.append(f"JDK {version} second start: {code}, {code2} {err2.strip()[-200:]}")
        attach(pid, "stop", "-o", "last.txt", cwd=out_dir, agent=agent)
        left = leftovers(tmp)
        if left:
            problems.append(f"JDK {version}: left in the JVM's /tmp after the cycles: {left}")
        proc.stdin.close()
        proc.wait(timeout=60)
        # Recordings that the JVM's exit ends, and requests while it exits.
        exits = {}
        for round_ in range(args.exits):
            proc, pid = namespaced_jvm(java, classes, tmp, 600_000)
            rec = subprocess.Popen([str(HPROF), "attach", pid, "-d", "60", "-o", f"exit{round_}.txt"], cwd=out_dir,
                                   env=dict(os.environ, HPROF_AGENT=str(agent)), stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
            said = ""
            while "Profiling JVM" not in said:
                line = rec.stderr.readline()
                if not line:
                    break
                said += line
            time.sleep(0.2 * (round_ % 5))
            proc.stdin.close()
            rest = rec.stderr.read()
            rec.wait(timeout=120)
            exits[rec.returncode] = exits.get(rec.returncode, 0) + 1
            if rec.returncode != 0 or "exited during the recording" not in said + rest:
                problems.append(f"JDK {version} exit {round_}: {rec.returncode} {(said + rest).strip()[-200:]}")
            proc.wait(timeout=60)
        proc, pid = namespaced_jvm(java, classes, tmp, 600_000)
        attach(pid, "start", cwd=out_dir, agent=agent)
        threading.Timer(0.5, proc.stdin.close).start()
        during = {}
        while Path(f"/proc/{pid}").exists():
            code, err, secs = attach(pid, ["status", "dump", "stop", "start"][sum(during.values()) % 4], "--timeout", "5",
                                     "-o", "x.txt", cwd=out_dir, agent=agent)
            during[code] = during.get(code, 0) + 1
            if code not in (0, 3, 8) or secs > 5:
                problems.append(f"JDK {version} while exiting: {code} after {secs:.1f} s {err.strip()[-200:]}")
        proc.wait(timeout=60)
        code, err, _ = attach(pid, "status", cwd=out_dir, agent=agent)
        during[code] = during.get(code, 0) + 1
        if code != 3:
            problems.append(f"JDK {version} after exit: {code} {err.strip()[-200:]}")
        left = [n for n in leftovers(tmp) if not n.startswith("hprof-attach-")]
        if left:
            problems.append(f"JDK {version}: left in the JVM's /tmp after its exit: {left}")
        shutil.rmtree(tmp, ignore_errors=True)
        fmt = lambda d: ", ".join(f"{k}: {v}" for k, v in sorted(d.items()))
        lines.append(f"| {version} | {args.cycles} | {fmt(codes)} | {sorted(times)[len(times) // 2]:.2f} s / {max(times):.2f} s "
                     f"| {fmt(exits)} | {fmt(during)} |")
        print(lines[-1], flush=True)
    shutil.rmtree(out_dir, ignore_errors=True)
    return ["Attach loops (a JVM with a /tmp of its own):", "",
            "| JDK | start/dump/stop cycles | their statuses | median / slowest request | recordings ended by the JVM's exit: statuses "
            "| requests while it exits: statuses |", "|---|---|---|---|---|---|", *lines, "",
            *([f"- {p}" for p in problems] or ["Nothing was left in the JVMs' /tmp but their sockets, perf data and the agent's copy "
                                                "(and, after the JVM's exit, the unstopped session's directory holding its last dump)."]), ""]


def full_disk(args, versions, agent, classes):
    rows = []
    for version, java in versions.items():
        for options, output in (("heap=dump,format=b", "heap.hprof"), ("heap=all", "heap.txt")):
            host = Path(tempfile.mkdtemp(prefix="hprof-matrix-disk-"))
            small, copy = host / "small", host / "copy"
            small.mkdir()
            script = (f"mount -t tmpfs -o size=10m tmpfs '{small}' && cd '{small}' && \"$0\" \"$@\"; s=$?; "
                      f"cat '{small}/{output}' > '{copy}'; exit $s")
            out = subprocess.run(["unshare", "--mount", "sh", "-c", script, java,
                                  f"-agentpath:{agent}={options},file={small}/{output}", "-cp", str(classes), "ManyLive", "500000"],
                                 capture_output=True, text=True, timeout=300)
            reader = "summary" if output.endswith(".hprof") else "top"
            check = subprocess.run([str(HPROF), reader, str(copy)], capture_output=True, text=True)
            data = copy.read_bytes() if copy.exists() else b""
            marked = (b"HPROF ERROR: " in data[-400:])
            verdict = all([out.returncode == 0, "INCOMPLETE" in out.stderr, "done." not in out.stderr, marked,
                           (check.returncode != 0 and "incomplete" in check.stderr) if reader == "summary" else "incomplete" in check.stderr])
            rows.append(f"| {version} | `{options}` | {out.returncode} | {'yes' if 'INCOMPLETE' in out.stderr and 'done.' not in out.stderr else 'NO'} "
                        f"| {'yes' if marked else 'NO'} ({len(data)} bytes kept) | {reader} {check.returncode}: "
                        f"{'incomplete' if 'incomplete' in check.stderr else check.stderr.strip()[-80:]} | {'ok' if verdict else 'FAILED'} |")
            print(rows[-1], flush=True)
            shutil.rmtree(host, ignore_errors=True)
    return ["Full disk (a 10 MB tmpfs in a mount namespace; ManyLive's 500,000 objects make a 20 MB dump):", "",
            "| JDK | options | program's status | INCOMPLETE, never done | file marked | reader | verdict |",
            "|---|---|---|---|---|---|---|", *rows, ""]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=4)
    parser.add_argument("--cycles", type=int, default=14)
    parser.add_argument("--exits", type=int, default=5)
    parser.add_argument("--jdk", type=int, action="append", default=[])
    parser.add_argument("--only", choices=["storms", "attach", "disk"])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", "-p", "hprof-cli", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    classes = ROOT / "target/java/classes"
    agent_dir = Path(tempfile.mkdtemp(prefix="hprof-matrix-agent-"))
    agent = agent_dir / "libhprof.so"
    shutil.copy2(ROOT / "target/release/libhprof.so", agent)
    versions = jdks(set(args.jdk))
    parts = {"storms": (storms, "## Stress matrix: SIGQUIT storms"),
             "attach": (attach_loops, "## Stress matrix: attach loops"),
             "disk": (full_disk, "## Stress matrix: full disk")}
    for name, (run, title) in parts.items():
        if args.only not in (None, name):
            continue
        started = time.time()
        lines = run(args, versions, agent, classes)
        section = "\n".join([title, "",
                             f"Command: `bench/stress_matrix.py --only {name} --seconds {args.seconds} --cycles {args.cycles} "
                             f"--exits {args.exits}` ({machine()}; the machine was shared with other engineers' builds and "
                             f"tests; {(time.time() - started) / 60:.0f} min). See the script's doc for what each run must do.",
                             "", *lines])
        print(section)
        if args.write:
            write_section(title, section)
    shutil.rmtree(agent_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
