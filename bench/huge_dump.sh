#!/usr/bin/env bash
# Scheduled check (weekly, and before each release): the heap dump over 4 GB. Runs the test that
# CI leaves out (`#[ignore]`: it needs a 7 GB heap, 5 GB of disk and several minutes, more than a
# 2-core CI machine's budget), e2e_heap_dump::a_dump_over_4_gb_spans_segments_and_reads_back, in
# release mode: HugeHeap keeps 600 long[1,000,000] (4.8 GB) and the agent dumps it at exit; the
# file must span several HEAP DUMP SEGMENTs under 4 GiB each and read back whole (every array's
# pattern checked). Writes its outcome and time to bench/RESULTS.md with --write.
#
#     bench/huge_dump.sh [--write]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
section="## Heap dump over 4 GB (scheduled)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
start=$(date +%s)
status=0
cargo test --release --locked -p hprof-cli --test tests -- --ignored --exact \
    e2e_heap_dump::a_dump_over_4_gb_spans_segments_and_reads_back 2>&1 | tee "$log" || status=$?
seconds=$(( $(date +%s) - start ))
result="$(grep -m1 '^test result:' "$log" || echo "no result (status $status)")"
read -r load1 load5 load15 _ < /proc/loadavg
text="$section

\`bench/huge_dump.sh\` on $(hostname) ($(nproc) cores, $(free -g | awk '/^Mem:/ {print $2}') GB, load average $load1 $load5 $load15 at the end: shared with other work), $(date -u +%Y-%m-%d):
\`$result\` in $seconds s (build included). The test is \`#[ignore]\` in CI (a 7 GB heap, 5 GB
of disk); this script is its schedule: weekly and before each release.
"
echo "$text"
if [[ "${1:-}" == --write ]]; then
    python3 - "$root/bench/RESULTS.md" "$section" "$text" <<'PY'
import re, sys
path, title, section = sys.argv[1], sys.argv[2], sys.argv[3].rstrip() + "\n"
text = open(path).read()
pattern = re.compile(re.escape(title) + r"\n.*?(?=\n## |\Z)", re.S)
text = pattern.sub(lambda _: section, text) if pattern.search(text) else text.rstrip() + "\n\n" + section
open(path, "w").write(text)
PY
fi
exit "$status"
