#!/usr/bin/env bash
# House rule: tests do not sleep, and do not wait a fixed time to see that something did not happen.
# Timing code is tested on virtual time (SwiftSignalKitTesting); waiting for another thread uses a
# semaphore, a continuation or a yielding loop with a watchdog deadline, never a sleep.
#
# Fails on any sleep, and on real-queue timers (`Queue.after`, `asyncAfter`), in the test targets that
# `swift test` builds. A line that must keep one says why with a trailing `// no-sleep-check: <reason>`
# (for instance, a test of `Queue.after` itself). Comment lines, and matches inside a string on their
# line (a message that names `Queue.after`), are not calls.
set -euo pipefail
cd "$(dirname "$0")/.."

# Sleeps on a clock that a test passes in (virtual time) are fine; the real clocks are not.
pattern='Task\.sleep|Thread\.sleep|\busleep\(|\bnanosleep\(|\bsleep\([0-9]|(Continuous|Suspending)Clock(\(\))?\.sleep|\.after\(|asyncAfter\('
violations=$(grep -rnE "$pattern" Tests Migration/Examples/Tests --include=*.swift \
    | grep -vE '^[^:]+:[0-9]+:\s*//' | grep -vE '// no-sleep-check: \S' \
    | grep -vE '"[^"]*(\.after\(|sleep)[^"]*"' || true)
if [[ -n "$violations" ]]; then
    echo "A test sleeps or waits a fixed time (see Scripts/check-no-sleeps.sh):"
    echo "$violations"
    exit 1
fi
echo "No test sleeps or waits a fixed time."
