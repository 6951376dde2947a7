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

Fails on, in the test sources that `swift test` builds (Tests/, Migration/Examples/Tests/, and the
example server's Examples/SignalServer/Tests/):
- a raw wait: `.wait(` not awaited (a semaphore's, a group's, XCTest's), however the receiver is
  spelled or wrapped; XCTest's `wait(for:)`, `waitForExpectations` and `XCTWaiter`; `DispatchGroup`,
  `concurrentPerform`, `pthread_join`, `pthread_cond_wait`, `NSConditionLock.lock(whenCondition:)`,
  `sched_yield(`, `usleep(`;
- a barrier that only waits for a queue's backlog, `queue.sync {}` (write `await drain(queue)`);
- a loop that polls: a `while` or `repeat` loop with `await Task.yield()` in it (write
  `await eventually { ... }`), or with an empty body. A `for` loop of a fixed count of yields is
  cooperative work (a transform that yields a few times), not a wait.

A line that must keep one says why with a trailing `// blocking-check: <reason>`: a test about a
consumer that blocks, a wait on a thread the test started, XCTest (which runs its tests on the main
thread). The helpers' own file, Tests/Shared/, is exempt: it is where the waits live, checked at run time.
Comment lines are not code, and the marker counts only in a line's comment. What this script cannot see,
such as a non-empty `queue.sync { ... }` whose block waits for a task, is for review; the helpers' run-time
check covers their own waits. Python 3 standard library only.
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCOPES = [ROOT / "Tests", ROOT / "Migration" / "Examples" / "Tests", ROOT / "Examples" / "SignalServer" / "Tests"]
EXEMPT = ROOT / "Tests" / "Shared"
MARKER = re.compile(r"//\s*blocking-check:\s*\S")
# `.wait(` after any receiver (`sem.wait(`, `sem!.wait(`, `sems[i].wait(`, `make().wait (`), or at the start
# of a line that continues a call; not `await gate.wait()`, an async wait (see `raw_wait`).
WAIT_CALL = re.compile(r"(?:[\w\]\)!?]\s*|^\s*)\.wait\s*\(")
RECEIVER = re.compile(r"[\w\[\]().!?\s]*$")
PRIMITIVES = re.compile(
    r"\bDispatchGroup\b|\bconcurrentPerform\b|\bpthread_join\b|\bpthread_cond_(?:timed)?wait\b|\bsched_yield\s*\("
    r"|\busleep\s*\(|\block\(whenCondition|\bwaitForExpectations\b|\bXCTWaiter\b|(?<![\w.])wait\(for:"
)
BARRIER = re.compile(r"\.sync\s*(?:\(\s*flags:[^)]*\))?\s*\{\s*\}")
YIELD = re.compile(r"\bawait\s+(?:Swift\.)?Task\.yield\(\)")
LOOP = re.compile(r"^\s*(?:\w+:\s*)?(?:while|repeat)\b")
EMPTY_LOOP = re.compile(r"^\s*(?:\w+:\s*)?while\b.*\{\s*\}\s*$")


def split(line):
    """The line's code and its trailing comment, with string contents blanked (roughly: enough for these
    patterns)."""
    code, _, comment = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line).partition("//")
    return code, comment


def raw_wait(text):
    """Whether `text` calls `.wait(` on something without `await` before the receiver."""
    for match in WAIT_CALL.finditer(text):
        before = text[: match.start() + 1]
        receiver_start = RECEIVER.search(before).start()
        # The receiver chain may swallow a leading `await ` (its letters and space are receiver
        # characters): look for it at the chain's start.
        chain = before[receiver_start:].lstrip()
        if not (chain.startswith("await ") or before[:receiver_start].rstrip().endswith("await")):
            return True
    return False


def violations(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    found = []
    loop_depth = []  # brace depths at which a polling loop's body starts
    loop_pending = False  # a `while` or `repeat` whose `{` is on a later line
    depth = 0
    for number, line in enumerate(lines, start=1):
        text, comment = split(line)
        if line.lstrip().startswith("//") or MARKER.search("//" + comment):
            depth += text.count("{") - text.count("}")
            continue
        if raw_wait(text) or PRIMITIVES.search(text) or BARRIER.search(text) or EMPTY_LOOP.match(text):
            found.append((number, line.strip()))
        elif YIELD.search(text) and (LOOP.match(text) or loop_depth):
            found.append((number, line.strip()))
        if (LOOP.match(text) or loop_pending) and "{" in text:
            loop_depth.append(depth + 1)
            loop_pending = False
        elif LOOP.match(text):
            loop_pending = True
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
