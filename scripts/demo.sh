#!/usr/bin/env bash
# The README's first command: starts the bundled demo program (java/src/HeapPopulation.java),
# takes a heap dump of it with jcmd, and summarises the dump with `hprof summary`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/build-java.sh
cargo build --release --locked --quiet -p hprof-cli
work="$(mktemp -d)"
fifo="$work/stdin"
mkfifo "$fifo"
java -cp target/java/classes HeapPopulation < "$fifo" > "$work/out" &
exec 3> "$fifo"
trap 'exec 3>&-; wait; rm -rf "$work"' EXIT
for _ in $(seq 100); do grep -q READY "$work/out" && break; sleep 0.1; done
pid="$(awk '/READY/ {print $2}' "$work/out")"
jcmd "$pid" GC.heap_dump "$work/demo.hprof" > /dev/null
target/release/hprof summary "$work/demo.hprof" "$@"
