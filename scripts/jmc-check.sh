#!/usr/bin/env bash
# Opens recordings with JDK Mission Control's own parser and runs its automated analysis (the
# rules JMC shows on opening a file), as JMC would: a check by hand, not part of the tests
# (JMC's core libraries come from Maven Central, which the test machines cannot reach; this
# builds them from a JMC source tree instead).
#
#   scripts/jmc-check.sh JMC [FILE.jfr...]
#
# JMC: a checkout of https://github.com/openjdk/jmc, or its bare git directory. Without
# files, records a set with this tree's release agent first (cpu=samples, cpu=wall,
# heap=sites, monitor=y, cpu=times; KernelCalls for native and kernel frames). For each file:
# every attribute of every event read through JMC's API, the events counted by type with the
# top frames of those with stacks, then JMC's rules report. Fails on any exception.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
[[ $# -ge 1 ]] || { sed -n '2,13p' "$0"; exit 2; }
jmc="$1"; shift
work="$root/target/jmc-check"
modules=(org.openjdk.jmc.common org.openjdk.jmc.flightrecorder org.openjdk.jmc.flightrecorder.rules
         org.openjdk.jmc.flightrecorder.rules.jdk)
source "$root/.tools/env" 2>/dev/null || true
javac="${HPROF_JDK17:+$HPROF_JDK17/bin/}javac"
java="${HPROF_JDK17:+$HPROF_JDK17/bin/}java"

rm -rf "$work/src" "$work/classes"
mkdir -p "$work/src" "$work/classes"
if [[ -d "$jmc/core" ]]; then
    for m in "${modules[@]}"; do mkdir -p "$work/src/core"; cp -r "$jmc/core/$m" "$work/src/core/"; done
else
    git --git-dir="$jmc" archive HEAD "${modules[@]/#/core/}" | tar -x -C "$work/src"
fi
# JMC's core needs lz4-java and the OWASP encoder for things these recordings never use:
# java/jmc-check/stubs stands in for both.
find "$work/src/core" -path '*/src/main/java/*.java' > "$work/sources"
find "$root/java/jmc-check" -name '*.java' >> "$work/sources"
"$javac" -nowarn -encoding UTF-8 -d "$work/classes" @"$work/sources" 2>&1 | grep -v '^Note:' || true
for m in "${modules[@]}"; do
    for d in "$work/src/core/$m/src/main/resources" "$work/src/core/$m/src/main/java"; do
        [[ -d "$d" ]] && (cd "$d" && find . -type f ! -name '*.java' -exec cp --parents {} "$work/classes/" \;)
    done
done
[[ -f "$work/classes/JmcCheck.class" ]] || { echo "jmc-check: JMC's core did not compile" >&2; exit 1; }

files=("$@")
if [[ ${#files[@]} -eq 0 ]]; then
    cargo build --release --locked --quiet -p hprof-agent --manifest-path "$root/Cargo.toml"
    "$root/scripts/build-java.sh"
    agent="$root/target/release/libhprof.so"
    classes="$root/target/java/classes"
    rec="$work/recordings"
    rm -rf "$rec"; mkdir -p "$rec"
    record() {
        local name="$1" options="$2"; shift 2
        timeout 120 "$java" "-agentpath:$agent=$options,file=$rec/$name.jfr" -cp "$classes" "$@" >/dev/null 2>&1
        files+=("$rec/$name.jfr")
    }
    record cpu cpu=samples CpuHot 1500
    record wall cpu=wall CpuHot 1500
    record sites heap=sites AllocHot 1000
    record locks monitor=y LockContention
    record times cpu=times CallCounts
    record kernel cpu=samples,interval=1,depth=48 KernelCalls 1
fi

status=0
for f in "${files[@]}"; do
    "$java" -cp "$work/classes" JmcCheck "$f" || status=1
    report="$("$java" -cp "$work/classes" org.openjdk.jmc.flightrecorder.rules.report.JfrRulesReport \
        -format text "$f" 2>&1)" || status=1
    if grep -q 'Exception\|Error:' <<<"$report"; then status=1; fi
    grep -E '^(Rule|Severity|Summary):' <<<"$report" | paste - - - | sed 's/^/    /'
done
exit $status
