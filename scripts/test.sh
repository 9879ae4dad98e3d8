#!/usr/bin/env bash
# The project's test command (the README's second command, and what CI runs): installs what the
# tests need into .tools/ (scripts/setup.sh), then runs every test of the workspace, end-to-end
# tests on real JVMs included (every test binary, even after one fails). Extra arguments go to
# `cargo test`.
#
# In CI (CI=true) everything is required: a setup that fails ends the run, and a test that
# finds a JDK, tool or permission missing fails. Elsewhere such a test records a skip, and the
# output (through scripts/test-report.py) lists it as skipped, counts it apart from the tests
# that passed, and ends with every skip and its reason.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if ! scripts/setup.sh; then
    if [[ "${CI:-}" == true ]]; then
        echo "test.sh: scripts/setup.sh failed, and CI=true requires everything it installs" >&2
        exit 1
    fi
    echo "test.sh: scripts/setup.sh failed: the tests that need what it could not install are reported as skipped" >&2
fi
scripts/build-java.sh
HPROF_TEST_SKIPS="$(mktemp "${TMPDIR:-/tmp}/hprof-test-skips.XXXXXX")"
export HPROF_TEST_SKIPS
trap 'rm -f "$HPROF_TEST_SKIPS"' EXIT
set +e
cargo test --workspace --locked --no-fail-fast "$@" 2>&1 | python3 scripts/test-report.py "$HPROF_TEST_SKIPS"
status=${PIPESTATUS[0]}
set -e
exit "$status"
