#!/usr/bin/env bash
# Benchmark: the agent's heap dump (heap=dump,format=b, triggered by SIGQUIT) against
# `jcmd GC.heap_dump` on the same JVM running java/src/bench/BigHeap.java (about 14 million
# objects, 1.1 GB dump): wall time of each, and the process's peak extra RSS during ours.
#   bench/heap_dump.sh [--write]     (--write replaces the section in bench/RESULTS.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
cargo build --release --locked --quiet -p hprof-agent
scripts/build-java.sh
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkfifo "$work/in"
java -Xmx4g -XX:+UseParallelGC -agentpath:"$root/target/release/libhprof.so=heap=dump,format=b,doe=n,file=$work/agent.hprof" \
    -cp target/java/classes bench.BigHeap < "$work/in" > "$work/out" 2> "$work/err" &
exec 3> "$work/in"
for _ in $(seq 600); do grep -q READY "$work/out" && break; sleep 0.5; done
pid="$(awk '/READY/ {print $2}' "$work/out")"
objects=$(jcmd "$pid" GC.class_histogram | awk '/^Total/ {print $2}')
rss_before=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
t0=$(date +%s.%N)
jcmd "$pid" GC.heap_dump "$work/jcmd.hprof" > /dev/null
t1=$(date +%s.%N)
kill -QUIT "$pid"
peak=$rss_before
until grep -q "Dumping Java heap ... done" "$work/err"; do
    r=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status"); if [ "$r" -gt "$peak" ]; then peak=$r; fi
    sleep 0.05
done
t2=$(date +%s.%N)
exec 3>&-
wait || true
jcmd_s=$(echo "$t1 - $t0" | bc)
ours_s=$(echo "$t2 - $t1" | bc)
size_ours=$(stat -c %s "$work/agent.hprof")
size_jcmd=$(stat -c %s "$work/jcmd.hprof")
section="## heap=dump against jcmd

Command: \`bench/heap_dump.sh --write\` ($(date -u +%Y-%m-%d), $(nproc) cores, JDK 17, BigHeap with -Xmx4g, $objects live objects).

| | time (s) | file (bytes) |
|---|---|---|
| \`jcmd GC.heap_dump\` | $jcmd_s | $size_jcmd |
| agent heap=dump (SIGQUIT) | $ours_s | $size_ours |

Ratio: **$(echo "scale=2; $ours_s / $jcmd_s" | bc)x** jcmd's time. Peak extra RSS of the process during our dump: $(( (peak - rss_before) / 1024 )) MiB, **$(( (peak - rss_before) * 1024 / objects )) bytes per live object** (JVMTI's tag map holds an entry per object during the walk)."
echo "$section"
if [[ "${1:-}" == "--write" ]]; then
    python3 - "$root/bench/RESULTS.md" "$section" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pattern = re.compile(r"## heap=dump against jcmd\n.*?(?=\n## |\Z)", re.S)
text = pattern.sub(lambda _: section.strip() + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
fi
