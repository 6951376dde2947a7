#!/usr/bin/env bash
# House rule: nothing in the library blocks a caller to wait for another thread (no semaphores,
# condition waits, sleeps or spins on a path a user can reach). The only waits allowed are listed here,
# each with its reason; any other match fails.
#
#   ThreadPool.swift   a pool's own worker threads sleep on their semaphore while they have no work;
#                      no caller of the library ever waits on it.
#   Queue.swift, QueueLocalObject*.swift
#                      `Queue.sync` and `QueueLocalObject.syncWith` exist to run work on a queue and
#                      wait for it; that wait is their documented purpose (see their DocC).
#   Internal/Lock.swift
#                      the library's one lock: a thread that finds it held tries again, yielding its
#                      core, before it sleeps in `Mutex.withLock`. That is the lock's own wait, as
#                      `Mutex`'s is; the holder runs a few lines of library code, never user code.
#   SwiftSignalKitTesting/VirtualTimeScheduler+Timeline.swift
#                      a run's driving thread, which the run starts for itself, waits there for a job
#                      from another thread before it reports a stall; the test's task awaits the run
#                      without blocking.
set -euo pipefail
cd "$(dirname "$0")/.."

# Semaphores, groups and conditions (any wait: `.wait()`, `.wait(timeout:)`, `.wait(wallTimeout:)`),
# sleeps, joins and yields. A grep, so it cannot see a spin on an atomic; reviews look for those.
pattern='DispatchSemaphore|DispatchGroup|pthread_cond_(timed)?wait|pthread_join|NSCondition|usleep\(|nanosleep\(|(^|[^.A-Za-z_])sleep\([0-9]|Thread\.sleep|sched_yield|\.wait\(\)|\.wait\((wall)?[Tt]imeout:|\.sync[ ({]'
allowed='^Sources/(SwiftSignalKit/(Threading/(ThreadPool|Queue|QueueLocalObject(\+Deprecated)?)|Internal/Lock)|SwiftSignalKitTesting/VirtualTimeScheduler\+Timeline)\.swift:'

violations=$(grep -rnE "$pattern" Sources/SwiftSignalKit Sources/SwiftSignalKitConcurrency Sources/SwiftSignalKitTesting --include=*.swift \
    | grep -vE '^[^:]+:[0-9]+:\s*///' | grep -vE "$allowed" || true)
if [[ -n "$violations" ]]; then
    echo "A library path blocks its caller (see Scripts/check-no-blocking.sh):"
    echo "$violations"
    exit 1
fi
echo "No blocking wait outside the allowed places."
