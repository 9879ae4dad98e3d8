#!/usr/bin/env python3
"""Mutated inputs for every `hprof` command that reads a file: real seeds (the agent's text and
binary profiles, gzip ones, a `jcmd GC.heap_dump` file and the agent's own heap dump) mutated
(bit flips, bytes set to 0x00/0xff/0x7f/0x80, a length field set to 0xffffffff, cuts, inserted
or deleted runs, duplicated chunks, garbage appended; in text, numbers made huge, lines dropped
or doubled, a NUL put in; inside gzip, the compressed bytes mutated) and fed to `hprof top`,
`convert`, `summary`, `print`, `analyze` and `path`, each run bounded (`ulimit -v` 2 GiB and a
timeout of 20 s). Counts per command: runs, exit statuses, panics (status 101 or "panicked"),
other signals, timeouts, errors without a byte offset, the largest resident set (wait4's
ru_maxrss) and the slowest run. A command fails the check on any panic, signal or timeout.

    fuzz/mutate.py [--per-command N] [--seed S] [--jobs J] [--write] [--list DIR] [--hprof BIN]
                   [--commands top,convert,...]

--write replaces the "Mutated inputs" section of bench/RESULTS.md. --list prints every distinct
error without an offset (not only the three most frequent per command) and keeps one mutant of
each in DIR, to reproduce it. --hprof tests another build of the `hprof` command (an older one,
to compare); the seeds are still made with this checkout's agent.
"""
import argparse, gzip, os, random, re, resource, shutil, signal, subprocess, sys, tempfile, threading, time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from cpu_samples import machine, sh, write_section  # noqa: E402

SECTION = "## Mutated inputs"
HPROF = ROOT / "target/release/hprof"
LIMIT_KIB = 2 << 20
TIMEOUT = 20


def make_seeds(work):
    """Real files to mutate: {kind: [paths]} with kind "profile" or "dump"."""
    agent = ROOT / "target/release/libhprof.so"
    classes = ROOT / "target/java/classes"
    seeds = {"profile": [], "dump": []}

    def java(options, main, *args, name):
        out = work / name
        sh("java", f"-agentpath:{agent}={options},file={out}", "-cp", str(classes), main, *args, cwd=work,
           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return out

    seeds["profile"].append(java("cpu=samples,depth=12", "CpuHot", "800", name="cpu.txt"))
    seeds["profile"].append(java("cpu=samples,format=b,depth=12", "CpuHot", "800", name="cpu.hprof"))
    seeds["profile"].append(java("heap=sites,depth=6", "AllocSites", name="sites.txt"))
    seeds["profile"].append(java("cpu=times", "CallCounts", name="times.txt"))
    seeds["profile"].append(java("cpu=samples,depth=8", "CpuHot", "500", name="cpu.txt.gz"))
    # A heap dump of HeapPopulation, by jcmd, and the agent's own of a small program.
    proc = subprocess.Popen(["java", "-Xmx64m", "-XX:+UseSerialGC", "-cp", str(classes), "HeapPopulation"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    pid = proc.stdout.readline().split()[1]
    dump = work / "jcmd.hprof"
    sh("jcmd", pid, "GC.heap_dump", str(dump), stdout=subprocess.DEVNULL)
    proc.stdin.close()
    proc.wait()
    seeds["dump"].append(dump)
    seeds["dump"].append(java("heap=dump,format=b,depth=4", "ThreadStacks", name="agent.hprof"))
    gz = work / "jcmd.hprof.gz"
    gz.write_bytes(gzip.compress(dump.read_bytes(), 1))
    seeds["dump"].append(gz)
    return seeds


def object_id(dump):
    """An object id of the jcmd dump, for `hprof path`."""
    out = subprocess.run([str(HPROF), "analyze", "--json", "--top", "1", str(dump)], capture_output=True, text=True)
    match = re.search(r'"id": "(0x[0-9a-f]+)"', out.stdout)
    return match.group(1) if match else "0x1"


def mutate(data, rng, text):
    """One mutant of `data`."""
    data = bytearray(data)
    if not data:
        return bytes(rng.randbytes(rng.randint(1, 64)))
    ops = ["flip", "set", "length", "cut", "insert", "delete", "duplicate", "append"]
    if text:
        ops += ["huge", "drop_line", "double_line", "nul"]
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        op = rng.choice(ops)
        at = rng.randrange(len(data)) if data else 0
        if op == "flip":
            for _ in range(rng.randint(1, 8)):
                i = rng.randrange(len(data))
                data[i] ^= 1 << rng.randrange(8)
        elif op == "set":
            data[at] = rng.choice([0x00, 0xff, 0x7f, 0x80, 0x01])
        elif op == "length":
            data[at:at + 4] = b"\xff\xff\xff\xff"
        elif op == "cut":
            del data[at:]
        elif op == "insert":
            data[at:at] = rng.randbytes(rng.randint(1, 32))
        elif op == "delete":
            del data[at:at + rng.randint(1, 64)]
        elif op == "duplicate":
            chunk = data[at:at + rng.randint(1, 4096)]
            data[at:at] = chunk
        elif op == "append":
            data += rng.randbytes(rng.randint(1, 4096))
        elif op == "huge":
            numbers = [m.span() for m in re.finditer(rb"\d+", data)]
            if numbers:
                s, e = rng.choice(numbers)
                data[s:e] = rng.choice([b"18446744073709551617", b"9223372036854775807", b"-1", b"1e23", b"99999999999"])
        elif op in ("drop_line", "double_line"):
            lines = data.split(b"\n")
            i = rng.randrange(len(lines))
            if op == "drop_line":
                del lines[i]
            else:
                lines.insert(i, lines[i])
            data = bytearray(b"\n".join(lines))
        elif op == "nul":
            data[at] = 0
        if not data:
            break
    return bytes(data)


def one(command, path, out_dir):
    """Runs one command on one mutant; (status or "timeout"/"signal N", stderr, maxrss KiB, seconds)."""
    argv = [str(HPROF)]
    name = command[0]
    if name == "convert":
        argv += ["convert", str(path), str(out_dir / f"{path.stem}.collapsed")]
    elif name == "path":
        argv += ["path", str(path), command[1]]
    else:
        argv += [name, str(path)]

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (LIMIT_KIB << 10, LIMIT_KIB << 10))

    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit)
    timer = threading.Timer(TIMEOUT, lambda: proc.kill())
    timer.start()
    err = proc.stderr.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = 0
    elapsed = time.perf_counter() - start
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        outcome = "timeout" if sig == signal.SIGKILL and elapsed >= TIMEOUT else f"signal {sig}"
    else:
        outcome = os.WEXITSTATUS(status)
    return outcome, err, usage.ru_maxrss, elapsed


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--per-command", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=26)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--write", action="store_true")
    parser.add_argument("--list", metavar="DIR", type=Path,
                        help="print every distinct error without an offset; keep one mutant of each in DIR")
    parser.add_argument("--hprof", metavar="BIN", type=Path, help="the hprof command to test")
    parser.add_argument("--commands", help="the commands to run, comma-separated (default: all)")
    args = parser.parse_args()
    global HPROF
    if args.hprof:
        HPROF = args.hprof.resolve()
    sh("cargo", "build", "--release", "--locked", "--quiet", "-p", "hprof-agent", "-p", "hprof-cli", cwd=ROOT)
    sh(str(ROOT / "scripts/build-java.sh"))
    work = Path(tempfile.mkdtemp(prefix="hprof-fuzz-"))
    seeds = make_seeds(work)
    oid = object_id(seeds["dump"][0])
    commands = {
        "top": (["top"], "profile"),
        "convert": (["convert"], "profile"),
        "summary": (["summary"], "dump"),
        "print": (["print"], "dump"),
        "analyze": (["analyze"], "dump"),
        "path": (["path", oid], "dump"),
    }
    if args.commands:
        wanted = args.commands.split(",")
        commands = {name: c for name, c in commands.items() if name in wanted}
    rng = random.Random(args.seed)
    rows, started = [], time.time()
    failures, notes = [], []
    for name, (command, kind) in commands.items():
        # Heap dump commands also get the profiles (records they must read or refuse); the
        # profile commands also get the dumps (files they must refuse at once).
        pool = seeds[kind] * 4 + seeds["profile" if kind == "dump" else "dump"]
        mutants = work / name
        mutants.mkdir()
        jobs = []
        for i in range(args.per_command):
            seed = rng.choice(pool)
            raw = seed.read_bytes()
            text = seed.suffix == ".txt"
            if seed.suffix == ".gz":
                if rng.random() < 0.5:
                    data = mutate(raw, rng, False)  # the compressed bytes
                else:
                    data = gzip.compress(mutate(gzip.decompress(raw), rng, ".txt" in seed.name), 1)
            else:
                data = mutate(raw, rng, text)
            path = mutants / f"m{i}{''.join(seed.suffixes)}"
            path.write_bytes(data)
            jobs.append(path)
        counts, worst_rss, slowest, no_offset = Counter(), 0, 0.0, 0
        no_offset_kinds = Counter()
        with ThreadPoolExecutor(args.jobs) as pool_exec:
            for path, (outcome, err, rss, secs) in zip(jobs, pool_exec.map(lambda p: one(command, p, mutants), jobs)):
                panicked = outcome == 101 or "panicked" in err
                key = "panic" if panicked else outcome
                counts[key] += 1
                worst_rss, slowest = max(worst_rss, rss), max(slowest, secs)
                if panicked or isinstance(outcome, str):
                    failures.append(f"{name} {path}: {outcome} {err[:300]!r}")
                    shutil.copy(path, work / f"failure-{name}-{path.name}")
                elif outcome == 1 and "offset" not in err and "incomplete" not in err:
                    no_offset += 1
                    # What such errors say, without the file's name and numbers.
                    kind = re.sub(r"\d+", "N", err.strip().splitlines()[-1].replace(str(path), "FILE"))
                    if args.list and not no_offset_kinds[kind[:110]]:
                        args.list.mkdir(parents=True, exist_ok=True)
                        kept = args.list / f"{name}-{len(no_offset_kinds)}{''.join(path.suffixes)}"
                        shutil.copy(path, kept)
                        print(f"no offset: {name} {kept}: {err.strip().splitlines()[-1][:300]}", flush=True)
                    no_offset_kinds[kind[:110]] += 1
                path.unlink()
        statuses = ", ".join(f"{k}: {v}" for k, v in sorted(counts.items(), key=lambda kv: str(kv[0])))
        bad = sum(v for k, v in counts.items() if k == "panic" or isinstance(k, str))
        rows.append(f"| `{name}` | {args.per_command} | {statuses} | {bad} | {no_offset} | {worst_rss / 1024:.0f} MB | {slowest:.2f} s |")
        notes.extend(f"- `{name}`, {n} x: `{kind}`"
                     for kind, n in no_offset_kinds.most_common(None if args.list else 3))
        print(rows[-1], flush=True)
    minutes = (time.time() - started) / 60
    section = "\n".join([
        SECTION, "",
        f"Command: `fuzz/mutate.py --per-command {args.per_command} --seed {args.seed} --jobs {args.jobs}` "
        f"({machine()}; shared, loaded machine; {minutes:.0f} min). Seeds: the agent's text profiles (cpu=samples, "
        "heap=sites, cpu=times), its binary and gzip profiles, a `jcmd GC.heap_dump` of HeapPopulation (plain and "
        "gzip) and the agent's own heap dump of ThreadStacks; profile commands also get mutated dumps and dump "
        "commands mutated profiles. Each run: `ulimit -v` 2 GiB, 20 s timeout. \"Failures\" are panics, "
        "signals and timeouts; \"no offset\" counts status-1 errors whose message names no byte offset (nor an "
        "incomplete file).", "",
        "| command | runs | exit statuses | failures | no offset | largest RSS | slowest |",
        "|---|---|---|---|---|---|---|", *rows, "",
        "The errors without an offset, most frequent first (each names the file; mutants of the other kind "
        "of input are refused for what they are):", "", *notes, ""])
    if failures:
        section += "\nFailures:\n\n" + "\n".join(f"- {f}" for f in failures[:20]) + "\n"
    print(section)
    if args.write:
        write_section(SECTION, section)
    if not failures:
        shutil.rmtree(work, ignore_errors=True)
    else:
        print(f"failing inputs kept in {work}")
        sys.exit(1)


if __name__ == "__main__":
    main()
