#!/usr/bin/env python3
"""Filters `cargo test`'s output (on stdin, to stdout) so that skips count as skips.

Tests that cannot run for want of a JDK, a tool or a permission record it in the skip log
(crates/testkit/src/require.rs; lines `test|part <TAB> test name <TAB> what is missing`). Here
each such test's `... ok` line becomes `... SKIPPED: <what>` (the whole test skipped) or
`... ok in part; skipped: <what>` (a part of it, such as one JDK, skipped); each binary's
`test result:` line counts them apart from the tests that passed; and a summary of every skip
ends the output.

    cargo test ... 2>&1 | scripts/test-report.py SKIP_LOG
"""
import re
import sys

TEST_LINE = re.compile(r"^test (\S+) \.\.\. ok$")
RESULT_LINE = re.compile(r"^test result: (\w+)\. (\d+) passed; (.*)$")


def read_log(path):
    skips = {}
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.rstrip("\n").split("\t", 2)
                if len(parts) == 3:
                    scope, name, what = parts
                    entry = skips.setdefault(name, {"test": [], "part": []})
                    if what not in entry[scope]:
                        entry[scope].append(what)
    except FileNotFoundError:
        pass
    return skips


def main():
    log = sys.argv[1]
    whole = part = 0
    in_binary = {"test": 0, "part": 0}
    for line in sys.stdin:
        text = line.rstrip("\n")
        m = TEST_LINE.match(text)
        if m:
            entry = read_log(log).get(m.group(1))
            if entry and entry["test"]:
                text = f"test {m.group(1)} ... SKIPPED: {'; '.join(entry['test'] + entry['part'])}"
                in_binary["test"] += 1
            elif entry and entry["part"]:
                text = f"test {m.group(1)} ... ok in part; skipped: {'; '.join(entry['part'])}"
                in_binary["part"] += 1
        m = RESULT_LINE.match(text)
        if m:
            passed = int(m.group(2)) - in_binary["test"] - in_binary["part"]
            text = (
                f"test result: {m.group(1)}. {passed} passed; {in_binary['test']} skipped; "
                f"{in_binary['part']} passed in part; {m.group(3)}"
            )
            whole += in_binary["test"]
            part += in_binary["part"]
            in_binary = {"test": 0, "part": 0}
        print(text, flush=True)
    skips = read_log(log)
    if skips:
        print(f"\nSKIPPED: {whole} tests entirely, {part} in part (set CI=true to make these failures):")
        for name in sorted(skips):
            for scope in ("test", "part"):
                for what in skips[name][scope]:
                    print(f"  {name} ({'whole test' if scope == 'test' else 'part'}): {what}")
    else:
        print("\nNo test was skipped.")


if __name__ == "__main__":
    main()
