#!/usr/bin/env bash
# The README's first command: builds hprof and libhprof.so (release) and profiles the bundled
# demo program with `hprof run` (cpu=samples), which prints the top of the profile and leaves
# java.hprof.txt in the current directory. Extra arguments go to `hprof run`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml" -p hprof-cli -p hprof-agent
exec "$root/target/release/hprof" run "$@"
