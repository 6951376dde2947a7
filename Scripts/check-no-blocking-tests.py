#!/usr/bin/env python3
"""House rule: a test never blocks a thread of the cooperative pool.

    Scripts/check-no-blocking-tests.py     # exit status 1, with the offending lines, if a test blocks

`swift test` runs Swift Testing's tests as tasks on the cooperative pool, which has as many threads as
the machine has cores (two in CI), all tests at once. A test that waits on a semaphore or a group, spins,
or runs a yielding loop until another thread has done something holds a pool thread for as long as it
waits; two such tests at once leave every async test of the suite without a thread, and they stall
(issue #27). Synchronous stress work therefore runs on threads the test starts, through the helpers in
Tests/Shared/TestThreads.swift (`onThread`, `concurrently`, `await wait(_:seconds:)`, `await spin(until:)`),
and the test awaits their end. Their blocking forms (`blockingWait`, `blockingSpin`, `yieldProcessor`)
stop the process when called from a task, so what this script cannot see is caught when the test runs.

Fails on, in the test sources that `swift test` builds (Tests/, Migration/Examples/Tests/):
- a raw wait: `.wait(` not awaited (a semaphore's, a group's, XCTest's), `DispatchGroup`,
  `concurrentPerform`, `pthread_join`, `sched_yield(`, `usleep(`;
- a loop that polls with `await Task.yield()` (write `await eventually { ... }`).

A line that must keep one says why with a trailing `// blocking-check: <reason>`: a test about a
consumer that blocks, a wait on a thread the test started, XCTest (which runs its tests on the main
thread). The helpers' own file, Tests/Shared/, is exempt: it is where the waits live, checked at run time.
Comment lines are not code. Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCOPES = [ROOT / "Tests", ROOT / "Migration" / "Examples" / "Tests"]
EXEMPT = ROOT / "Tests" / "Shared"
MARKER = re.compile(r"//\s*blocking-check:\s*\S")
RAW_WAIT = re.compile(r"(?<!await )(?<![\w.])(?:[A-Za-z_][\w]*(?:\[[^\]]*\])?\.)+wait\(")
PRIMITIVES = re.compile(r"\bDispatchGroup\b|\bconcurrentPerform\b|\bpthread_join\b|\bsched_yield\(|\busleep\(")
YIELD = re.compile(r"\bawait Task\.yield\(\)")
LOOP = re.compile(r"^\s*(?:while|repeat)\b")


def code(line):
    """The line without a trailing comment and string contents (roughly: enough for these patterns)."""
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return line.split("//", 1)[0]


def violations(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    loop_depth = []  # brace depths at which a polling loop's body starts
    depth = 0
    for number, line in enumerate(lines, start=1):
        if line.lstrip().startswith("//") or MARKER.search(line):
            depth += code(line).count("{") - code(line).count("}")
            continue
        text = code(line)
        if RAW_WAIT.search(text) or PRIMITIVES.search(text):
            found.append((number, line.strip()))
        if YIELD.search(text) and (LOOP.match(text) or loop_depth):
            found.append((number, line.strip()))
        if LOOP.match(text) and "{" in text:
            loop_depth.append(depth + 1)
        depth += text.count("{") - text.count("}")
        while loop_depth and depth < loop_depth[-1]:
            loop_depth.pop()
    return found


def main():
    report = []
    for scope in SCOPES:
        for path in sorted(scope.rglob("*.swift")):
            if path.is_symlink() or EXEMPT in path.parents:
                continue
            for number, line in violations(path):
                report.append(f"{path.relative_to(ROOT)}:{number}: {line}")
    if report:
        print("A test blocks a thread of the task pool (see Scripts/check-no-blocking-tests.py):")
        print("\n".join(report))
        return 1
    print("No test blocks a thread of the task pool.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
