#!/usr/bin/env bash
# The project's test command (the README's second command, and what CI runs): installs what the
# tests need into .tools/ (scripts/setup.sh), then runs every test of the workspace, end-to-end
# tests on real JVMs included. Extra arguments go to `cargo test`.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
scripts/setup.sh
scripts/build-java.sh
cargo test --workspace --locked "$@"
