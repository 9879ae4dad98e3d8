#!/usr/bin/env bash
# Compiles the Java programs in java/src with JDK 17's javac (--release 11, so every JDK from 11
# runs them) into target/java/classes. Does nothing when the classes are newer than the sources.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="$root/target/java/classes"
stamp="$out/.stamp"

find_javac() {
    if command -v javac >/dev/null && javac -version 2>&1 | grep -q '^javac 17'; then
        command -v javac
        return
    fi
    for candidate in /usr/lib/jvm/java-17-openjdk-*/bin/javac; do
        if [[ -x "$candidate" ]]; then echo "$candidate"; return; fi
    done
    echo "build-java.sh: JDK 17's javac not found (run scripts/setup.sh)" >&2
    exit 1
}

mapfile -t sources < <(find "$root/java/src" -name '*.java' | sort)
if [[ ! -f "$stamp" ]] || [[ -n "$(find "$root/java/src" -name '*.java' -newer "$stamp" | head -1)" ]]; then
    rm -rf "$out"
    mkdir -p "$out"
    "$(find_javac)" --release 11 -encoding UTF-8 -nowarn -d "$out" "${sources[@]}"
    touch "$stamp"
fi

# The VisualVM checker needs VisualVM's heap library (fetched by scripts/setup.sh).
env_file="$root/.tools/env"
if [[ -f "$env_file" ]]; then
    jar="$(sed -n 's/^HPROF_VISUALVM_JAR=//p' "$env_file")"
    tools_out="$root/target/java/tools"
    if [[ -n "$jar" && ( ! -f "$tools_out/VisualVmCheck.class" || "$root/java/tools/VisualVmCheck.java" -nt "$tools_out/VisualVmCheck.class" ) ]]; then
        mkdir -p "$tools_out"
        "$(find_javac)" --release 11 -encoding UTF-8 -nowarn -cp "$jar" -d "$tools_out" "$root/java/tools/VisualVmCheck.java"
    fi
    if [[ -n "$jar" && ( ! -f "$tools_out/RetainedCheck.class" || "$root/java/tools/RetainedCheck.java" -nt "$tools_out/RetainedCheck.class" ) ]]; then
        mkdir -p "$tools_out"
        "$(find_javac)" --release 11 -encoding UTF-8 -nowarn -cp "$jar" -d "$tools_out" "$root/java/tools/RetainedCheck.java"
    fi
fi
