#!/usr/bin/env bash
# Benchmark: `hprof analyze` (its whole report: suspects, dominators, duplicate strings,
# collections, class loaders) against hprof-analyzer (crates.io), plain and with its
# equivalent options (--find-duplicates --collections), and VisualVM's heap library
# (java/tools/RetainedCheck.java --classes: retained size by class) on jcmd heap dumps of
# java/src/bench/BigHeap.java at 25 %, 50 % and 100 % (about 1.1 GB, 14 million objects); warm
# page cache; end-to-end wall time (median of N runs, default 3, on the biggest dump; one run on
# the others) and peak RSS, per object beyond the file's size.
# Prints a Markdown section; with --write it also replaces that section in bench/RESULTS.md.
#   bench/analyze.sh [--write] [--runs N]
# DUMPS=/dir reuses or creates the dumps there (default /tmp/hprof-bench). BEFORE=/path/to/hprof
# also measures another build of hprof (e.g. the last release) side by side, as "before".
# hprof-analyzer gets at most ANALYZER_LIMIT seconds per run (default 600): with
# --find-duplicates --collections it ran for over 30 minutes on the 1.1 GB dump.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
write=0
runs=3
while [[ $# -gt 0 ]]; do
    case "$1" in
        --write) write=1 ;;
        --runs) runs="$2"; shift ;;
        *) echo "usage: bench/analyze.sh [--write] [--runs N]" >&2; exit 2 ;;
    esac
    shift
done
dir="${DUMPS:-/tmp/hprof-bench}"
analyzer="$root/.tools/hprof-analyzer/bin/hprof-analyzer"
if [[ ! -x "$analyzer" ]]; then
    echo "installing hprof-analyzer into .tools/hprof-analyzer (outside the workspace)" >&2
    cargo install hprof-analyzer --locked --root "$root/.tools/hprof-analyzer" >&2
fi
scripts/build-java.sh
cargo build --release --locked --quiet -p hprof-cli
hprof="$root/target/release/hprof"
source "$root/.tools/env"
# VisualVM gets at most VISUALVM_LIMIT seconds (default 1200).
analyzer_limit="${ANALYZER_LIMIT:-600}"
visualvm=(timeout "${VISUALVM_LIMIT:-1200}" "$(command -v java)" -Xmx8g -cp "$HPROF_VISUALVM_JAR:$root/target/java/tools" RetainedCheck --classes)

make_dump() { # PERCENT FILE
    [[ -f "$2" ]] && return
    echo "making the dump $2" >&2
    mkdir -p "$(dirname "$2")"
    local work
    work="$(mktemp -d)"
    mkfifo "$work/in"
    java -Xmx4g -XX:+UseParallelGC -cp target/java/classes bench.BigHeap "$1" < "$work/in" > "$work/out" &
    exec 3> "$work/in"
    for _ in $(seq 600); do grep -q READY "$work/out" && break; sleep 0.5; done
    jcmd "$(awk '/READY/ {print $2}' "$work/out")" GC.heap_dump "$2" >&2
    exec 3>&-
    wait
    rm -rf "$work"
}

# One run of a command: "<seconds> <peak RSS KiB> <CPU seconds: user + system> <peak RssAnon
# KiB>". RssAnon (anonymous memory: the heap, not the mapped file's pages, of which a tool
# may never touch some) is read every 10 ms from /proc of the command and its children.
measure() {
    local out timer pid pids="" anon=0 key value tick=0 idle
    out="$(mktemp)"
    # A pipe nobody writes: reading it with a timeout waits without starting a process.
    exec {idle}<> <(:)
    /usr/bin/time -o "$out" -f '%e %M %U %S' "$@" > /dev/null 2>&1 &
    timer=$!
    while kill -0 "$timer" 2>/dev/null; do
        if (( tick++ % 50 == 0 )); then
            pids="$(pgrep -P "$timer" || true)"
            for pid in $pids; do pids+=" $(pgrep -P "$pid" || true)"; done
        fi
        for pid in $pids; do
            while read -r key value _; do
                if [[ $key == RssAnon: ]] && (( value > anon )); then anon=$value; fi
            done 2>/dev/null < "/proc/$pid/status" || true
        done
        read -r -t 0.01 -u "$idle" _ || true
    done
    exec {idle}<&-
    wait "$timer" || true
    tail -1 "$out" | awk -v anon="$anon" '{printf "%s %s %.2f %s\n", $1, $2, $3 + $4, anon}'
    rm -f "$out"
}

rows=""
for percent in 25 50 100; do
    dump="$dir/big$percent.hprof"
    make_dump "$percent" "$dump"
    size=$(stat -c %s "$dump")
    objects=$("$hprof" analyze --json --top 1 "$dump" | python3 -c 'import json,sys; print(json.load(sys.stdin)["totals"]["objects"])')
    cat "$dump" > /dev/null
    n=1
    [[ $percent == 100 ]] && n=$runs
    for _ in $(seq "$n"); do
        rows+="ours $percent $size $objects $(measure "$hprof" analyze "$dump")"$'\n'
        if [[ -n "${BEFORE:-}" ]]; then
            rows+="before $percent $size $objects $(measure "$BEFORE" analyze "$dump")"$'\n'
        fi
        rows+="analyzer $percent $size $objects $(measure timeout "$analyzer_limit" "$analyzer" "$dump")"$'\n'
        rows+="analyzer_waste $percent $size $objects $(measure timeout "$analyzer_limit" "$analyzer" --find-duplicates --collections "$dump")"$'\n'
    done
    if [[ $percent == 100 ]]; then
        rows+="visualvm $percent $size $objects $(measure "${visualvm[@]}" "$dump")"$'\n'
    fi
done

report=$(python3 - "$rows" "$analyzer_limit" <<'PY'
import statistics, sys
rows = [l.split() for l in sys.argv[1].strip().splitlines()]
limit = float(sys.argv[2])
def at_least(tool, t):
    """hprof-analyzer's time, marked when it reached the limit (then stopped: a lower bound)."""
    return "≥ " if tool.startswith("analyzer") and t >= limit - 1 else ""
names = {"ours": "`hprof analyze`", "before": "`hprof analyze` before (BEFORE)", "analyzer": "hprof-analyzer", "analyzer_waste": "hprof-analyzer --find-duplicates --collections", "visualvm": "VisualVM heap library"}
by = {}
for tool, pct, size, objects, t, rss, cpu, anon in rows:
    by.setdefault((tool, int(pct)), []).append((float(t), int(rss) * 1024, int(size), int(objects), float(cpu), int(anon) * 1024))
print("| dump | tool | median time (s) | runs (s) | median CPU time (s) | peak RSS (MiB) | RSS beyond the file, per object (B) | peak anonymous memory, per object (B) |")
print("|---|---|---|---|---|---|---|---|")
for (tool, pct), runs in sorted(by.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    times = [r[0] for r in runs]
    rss, size, objects = max(r[1] for r in runs), runs[0][2], runs[0][3]
    print(f"| {pct} % ({size/1e9:.2f} GB, {objects/1e6:.1f} M objects) | {names[tool]} | {at_least(tool, statistics.median(times))}{statistics.median(times):.2f} | "
          f"{' '.join(f'{t:.2f}' for t in times)} | {statistics.median(r[4] for r in runs):.2f} | {rss/2**20:.0f} | {(rss-size)/objects:.1f} | {max(r[5] for r in runs)/objects:.1f} |")
print()
ours = statistics.median(r[0] for r in by[("ours", 100)])
theirs = statistics.median(r[0] for r in by[("analyzer", 100)])
print(f"On the biggest dump: hprof-analyzer time / `hprof analyze` time = **{at_least('analyzer', theirs)}{theirs/ours:.1f}x**; "
      f"in CPU time (user + system, both cores): {statistics.median(r[4] for r in by[('analyzer', 100)]) / statistics.median(r[4] for r in by[('ours', 100)]):.1f}x.")
waste = statistics.median(r[0] for r in by[("analyzer_waste", 100)])
print(f"With its equivalent options (--find-duplicates --collections): hprof-analyzer time / `hprof analyze` time = **{at_least('analyzer', waste)}{waste/ours:.1f}x**{' (stopped at the limit of ' + format(limit, '.0f') + ' s, unfinished)' if at_least('analyzer', waste) else ''}; "
      f"in CPU time: {statistics.median(r[4] for r in by[('analyzer_waste', 100)]) / statistics.median(r[4] for r in by[('ours', 100)]):.1f}x.")
per_gb = [(pct, statistics.median(r[0] for r in by[("ours", pct)]) / (by[("ours", pct)][0][2] / 1e9)) for pct in (25, 50, 100)]
print("`hprof analyze` seconds per GB: " + ", ".join(f"{pct} %: {s:.2f}" for pct, s in per_gb) + ".")
if ("before", 100) in by:
    b = by[("before", 100)]
    o = by[("ours", 100)]
    print(f"Before: {statistics.median(r[0] for r in b):.2f} s, {(max(r[1] for r in b) - b[0][2]) / b[0][3]:.1f} bytes per object of RSS beyond the file "
          f"and {max(r[5] for r in b) / b[0][3]:.1f} of anonymous memory; "
          f"now {ours:.2f} s, {(max(r[1] for r in o) - o[0][2]) / o[0][3]:.1f} and {max(r[5] for r in o) / o[0][3]:.1f}: "
          f"**{ours / statistics.median(r[0] for r in b):.2f}x** the time before "
          f"({statistics.median(r[4] for r in o) / statistics.median(r[4] for r in b):.2f}x in CPU time).")
if ("visualvm", 100) in by:
    v = by[("visualvm", 100)][0][0]
    print(f"VisualVM heap library time / `hprof analyze` time = **{v/ours:.1f}x** (a time at the limit means it was stopped there).")
PY
)
section="## hprof analyze vs hprof-analyzer and VisualVM's heap library

Command: \`${ANALYZER_LIMIT:+ANALYZER_LIMIT=$ANALYZER_LIMIT }${VISUALVM_LIMIT:+VISUALVM_LIMIT=$VISUALVM_LIMIT }${BEFORE:+BEFORE=$BEFORE }bench/analyze.sh --write\` ($(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)).
Dumps: jcmd GC.heap_dump of \`java/src/bench/BigHeap.java\` at 25, 50 and 100 % of its objects, JDK $(java -version 2>&1 | sed -n 's/.*version \"\([^\"]*\)\".*/\1/p'); warm page cache. End to end: \`hprof analyze FILE\` (text report, with duplicate strings, collections and class loaders), \`hprof-analyzer FILE\` and \`hprof-analyzer --find-duplicates --collections FILE\`, VisualVM: \`HeapFactory.createHeap\` then \`getRetainedSizeByClass\` of every class. RSS includes the mapped file's pages (ours maps the file whole), but only those a tool touched (ours never reads the inside of big primitive arrays), so RSS less the file's size understates what a tool adds; peak anonymous memory (RssAnon from /proc every 10 ms) is that memory itself.${VISUALVM_LIMIT:+ The VisualVM library was stopped after $VISUALVM_LIMIT s (VISUALVM_LIMIT): a time at that limit means it had not finished.}

$report
"
echo "$section"
if [[ $write == 1 ]]; then
    python3 - "$root/bench/RESULTS.md" "$section" <<'PY'
import re, sys, os
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pattern = re.compile(r"## hprof analyze vs hprof-analyzer.*?(?=\n## |\Z)", re.S)
if pattern.search(text):
    text = pattern.sub(section.strip() + "\n", text)
else:
    text = text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
fi
