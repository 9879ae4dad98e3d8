#!/usr/bin/env bash
# Benchmark: the agent's heap dump (heap=dump,format=b, triggered by SIGQUIT; HotSpot's own
# dumper writes a private file that the agent merges into its output) against
# `jcmd GC.heap_dump` on the same JVM running java/src/bench/BigHeap.java (about 14 million
# objects, 1.1 GB dump), side by side in one run, on JDK 17, 21 and 25: wall time of each, and
# the process's peak RSS above its RSS before the dump (VmHWM, reset before each dump through
# /proc/PID/clear_refs), so "extra bytes per live object" is ours minus jcmd's.
#   bench/heap_dump.sh [--write] [--rounds N] [--scale PERCENT]
#   (--write replaces the section in bench/RESULTS.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
write=n rounds=2 scale=100
while [[ $# -gt 0 ]]; do
    case "$1" in
        --write) write=y ;;
        --rounds) rounds="$2"; shift ;;
        --scale) scale="$2"; shift ;;
        *) echo "unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
cargo build --release --locked --quiet -p hprof-agent
scripts/build-java.sh
# shellcheck disable=SC1091
[[ -f .tools/env ]] && source .tools/env
jdks=("17:$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")")
[[ -n "${HPROF_JDK21:-}" ]] && jdks+=("21:$HPROF_JDK21")
[[ -n "${HPROF_JDK25:-}" ]] && jdks+=("25:$HPROF_JDK25")
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
rss_kb() { awk "/^$2:/ {print \$2}" "/proc/$1/status"; }

rows=""
raw=""
for entry in "${jdks[@]}"; do
    version="${entry%%:*}" home="${entry#*:}"
    rm -f "$work"/*.hprof "$work/in" "$work/out" "$work/err"
    mkfifo "$work/in"
    _HPROF_HEAP_TIMES=1 "$home/bin/java" -Xmx4g -XX:+UseParallelGC \
        -agentpath:"$root/target/release/libhprof.so=heap=dump,format=b,doe=n,file=$work/agent.hprof" \
        -cp target/java/classes bench.BigHeap "$scale" < "$work/in" > "$work/out" 2> "$work/err" &
    exec 3> "$work/in"
    for _ in $(seq 600); do grep -q READY "$work/out" && break; sleep 0.5; done
    pid="$(awk '/READY/ {print $2}' "$work/out")"
    objects=$("$home/bin/jcmd" "$pid" GC.class_histogram | awk '/^Total/ {print $2}')
    jcmd_times=() ours_times=() jcmd_extra=() ours_extra=()
    for round in $(seq "$rounds"); do
        # jcmd's dump
        rm -f "$work/jcmd.hprof"
        sync
        before=$(rss_kb "$pid" VmRSS)
        echo 5 > "/proc/$pid/clear_refs"
        t0=$(date +%s.%N)
        "$home/bin/jcmd" "$pid" GC.heap_dump "$work/jcmd.hprof" > /dev/null
        t1=$(date +%s.%N)
        jcmd_times+=("$(echo "$t1 - $t0" | bc)")
        jcmd_extra+=("$(( $(rss_kb "$pid" VmHWM) - before ))")
        size_jcmd=$(stat -c %s "$work/jcmd.hprof")
        rm -f "$work/jcmd.hprof"
        # ours
        sync
        done_before=$(grep -c "Dumping Java heap ... done" "$work/err" || true)
        size_before=$(stat -c %s "$work/agent.hprof")
        before=$(rss_kb "$pid" VmRSS)
        echo 5 > "/proc/$pid/clear_refs"
        t0=$(date +%s.%N)
        kill -QUIT "$pid"
        until [[ $(grep -c "Dumping Java heap ... done" "$work/err" || true) -gt $done_before ]]; do
            sleep 0.02
        done
        t1=$(date +%s.%N)
        ours_times+=("$(echo "$t1 - $t0" | bc)")
        ours_extra+=("$(( $(rss_kb "$pid" VmHWM) - before ))")
        size_ours=$(( $(stat -c %s "$work/agent.hprof") - size_before ))
        raw+="- JDK $version round $round: jcmd ${jcmd_times[-1]} s (peak +${jcmd_extra[-1]} KiB), agent ${ours_times[-1]} s (peak +${ours_extra[-1]} KiB)"$'\n'
    done
    raw+="- JDK $version, the agent's own lines: $(grep "HPROF heap dump" "$work/err" | sed 's/^HPROF heap dump: //' | paste -sd ';' - || true)"$'\n'
    exec 3>&-
    wait || true
    jt=$(printf '%s\n' "${jcmd_times[@]}" | median)
    ot=$(printf '%s\n' "${ours_times[@]}" | median)
    je=$(printf '%s\n' "${jcmd_extra[@]}" | median)
    oe=$(printf '%s\n' "${ours_extra[@]}" | median)
    java_version=$("$home/bin/java" -version 2>&1 | head -1)
    rows+="| $java_version | $objects | $jt | $ot | **$(echo "scale=2; $ot / $jt" | bc)x** | $(( je / 1024 )) | $(( oe / 1024 )) | **$(echo "scale=1; ($oe - $je) * 1024 / $objects" | bc)** | $size_jcmd | $size_ours |"$'\n'
done

section="## heap=dump against jcmd

Command: \`bench/heap_dump.sh --write --rounds $rounds\` ($(date -u +%Y-%m-%d), $(nproc) cores, BigHeap ${scale} % with -Xmx4g -XX:+UseParallelGC, one JVM per JDK, jcmd's dump and ours (SIGQUIT) alternated, medians of $rounds rounds).
heap=dump has HotSpot's own dumper (the one jcmd uses) write a private file next to the output and merges it into the output while the JVM writes it (JDK 15+, binary): the extra time is what the merge's reading, rewriting and writing cost the dump on the shared cores, the extra memory the merge's buffers. The jcmd times include the jcmd tool's own start-up; ours run from the SIGQUIT to the \`Dumping Java heap ... done.\` line. Other sessions shared the machine: see the load average below.

| JDK | live objects | \`jcmd GC.heap_dump\` (s) | agent heap=dump (s) | time ratio | jcmd peak extra RSS (MiB) | agent peak extra RSS (MiB) | agent's extra bytes per live object beyond jcmd's | jcmd file (bytes) | agent's dump (bytes) |
|---|---|---|---|---|---|---|---|---|---|
${rows}
Targets (issue 17): time ratio ≤ 1.3x, extra bytes per live object ≤ 8.

Load average at the end of the run: $(cut -d' ' -f1-3 /proc/loadavg).

Raw rounds:

${raw}"
echo "$section"
if [[ "$write" == y ]]; then
    python3 - "$root/bench/RESULTS.md" "$section" <<'PY'
import re, sys
path, section = sys.argv[1], sys.argv[2]
text = open(path).read()
pattern = re.compile(r"## heap=dump against jcmd\n.*?(?=\n## |\Z)", re.S)
text = pattern.sub(lambda _: section.strip() + "\n", text) if pattern.search(text) else text.rstrip() + "\n\n" + section.strip() + "\n"
open(path, "w").write(text)
PY
fi
