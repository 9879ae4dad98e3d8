#!/usr/bin/env bash
# Benchmark: `hprof summary` against hprof-slurp 0.10 on the same jcmd heap dump (>= 1 GB) of
# java/src/bench/BigHeap.java, warm page cache, runs interleaved, median of N (default 5).
# Prints a Markdown section; with --write it also replaces that section in bench/RESULTS.md.
#   bench/summary.sh [--write] [--runs N]
# DUMP=/path/big.hprof reuses or creates the dump there (default /tmp/hprof-bench/big.hprof).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
write=0
runs=5
while [[ $# -gt 0 ]]; do
    case "$1" in
        --write) write=1 ;;
        --runs) runs="$2"; shift ;;
        *) echo "usage: bench/summary.sh [--write] [--runs N]" >&2; exit 2 ;;
    esac
    shift
done
dump="${DUMP:-/tmp/hprof-bench/big.hprof}"
slurp="$root/.tools/hprof-slurp/bin/hprof-slurp"

if [[ ! -x "$slurp" ]]; then
    echo "installing hprof-slurp 0.10 into .tools/hprof-slurp (outside the workspace)" >&2
    cargo install hprof-slurp --version '~0.10' --locked --root "$root/.tools/hprof-slurp" >&2
fi
scripts/build-java.sh
cargo build --release --locked --quiet -p hprof-cli
hprof="$root/target/release/hprof"

if [[ ! -f "$dump" ]]; then
    echo "making the dump $dump" >&2
    mkdir -p "$(dirname "$dump")"
    work="$(mktemp -d)"
    mkfifo "$work/in"
    java -Xmx3g -XX:+UseParallelGC -cp target/java/classes bench.BigHeap < "$work/in" > "$work/out" &
    exec 3> "$work/in"
    for _ in $(seq 600); do grep -q READY "$work/out" && break; sleep 0.5; done
    jcmd "$(awk '/READY/ {print $2}' "$work/out")" GC.heap_dump "$dump" >&2
    exec 3>&-
    wait
    rm -rf "$work"
fi
size=$(stat -c %s "$dump")

# Warm the page cache, and check both tools read the file.
cat "$dump" > /dev/null
"$hprof" summary "$dump" > /dev/null
"$slurp" "$dump" > /dev/null

times_ours=()
times_slurp=()
rss_ours=0
for _ in $(seq "$runs"); do
    t=$( { /usr/bin/time -f '%e %M' "$hprof" summary "$dump" > /dev/null; } 2>&1 | tail -1)
    times_ours+=("${t% *}"); rss_ours="${t#* }"
    t=$( { /usr/bin/time -f '%e %M' "$slurp" "$dump" > /dev/null; } 2>&1 | tail -1)
    times_slurp+=("${t% *}")
done

report=$(python3 - "$size" "$rss_ours" "${times_ours[*]}" "${times_slurp[*]}" <<'PY'
import statistics, sys
size, rss = int(sys.argv[1]), int(sys.argv[2])
ours = [float(x) for x in sys.argv[3].split()]
slurp = [float(x) for x in sys.argv[4].split()]
mo, ms = statistics.median(ours), statistics.median(slurp)
gb = size / 1e9
print(f"| tool | median time (s) | throughput (GB/s) | runs (s) |")
print(f"|---|---|---|---|")
print(f"| `hprof summary` | {mo:.2f} | {gb/mo:.2f} | {' '.join(f'{t:.2f}' for t in ours)} |")
print(f"| hprof-slurp 0.10 | {ms:.2f} | {gb/ms:.2f} | {' '.join(f'{t:.2f}' for t in slurp)} |")
print()
print(f"Ratio (hprof-slurp time / hprof time): **{ms/mo:.1f}x**. Peak RSS of `hprof summary`: {rss/1024:.0f} MiB.")
PY
)
section="## hprof summary vs hprof-slurp

Command: \`bench/summary.sh --write\` ($(date -u +%Y-%m-%d), $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1)).
Dump: jcmd GC.heap_dump of \`java/src/bench/BigHeap.java\` on JDK $(java -version 2>&1 | sed -n 's/.*version "\([^"]*\)".*/\1/p'), $size bytes; warm page cache; runs interleaved, median of $runs.

$report
"
echo "$section"
if [[ $write == 1 ]]; then
    python3 - "$root/bench/RESULTS.md" "$section" <<'PY'
import re, sys, os
path, section = sys.argv[1], sys.argv[2]
text = open(path).read() if os.path.exists(path) else "# Benchmark results\n\nLatest results of the benchmarks in bench/ (see bench/README.md).\n"
pattern = re.compile(r"## hprof summary vs hprof-slurp\n.*?(?=\n## |\Z)", re.S)
if pattern.search(text):
    text = pattern.sub(section.strip() + "\n", text)
else:
    text = text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
fi
