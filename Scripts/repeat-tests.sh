#!/usr/bin/env bash
# Runs the README's test command (`swift test`) several times in a row and reports each run's result and
# time: the check that the suite passes every time, not most times (issue #27).
#
#   Scripts/repeat-tests.sh [--runs N] [--load K]
#
# --runs N   how many runs (default 20).
# --load K   also keeps K busy processes (one spinning shell loop each) running for the whole check, so
#            the tests run on a machine whose cores are taken by something else; they are started before
#            the first run and stopped when the script ends, however it ends.
#
# The tests are built once first (`swift build --build-tests`), so every run times the tests alone.
# Prints one line per run and a summary; exits 1 if any run failed. Each run's output is kept in
# .build/repeat-tests/run-N.log.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20
load=0
while [[ $# -gt 0 ]]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --load) load="$2"; shift 2 ;;
        *) echo "usage: $0 [--runs N] [--load K]" >&2; exit 2 ;;
    esac
done

busy=()
stop_load() {
    if [[ ${#busy[@]} -gt 0 ]]; then kill "${busy[@]}" 2>/dev/null || true; fi
}
trap stop_load EXIT

swift build --build-tests > /dev/null
logs=.build/repeat-tests
mkdir -p "$logs"

for ((k = 0; k < load; k++)); do
    bash -c 'while :; do :; done' &
    busy+=("$!")
done
[[ $load -gt 0 ]] && echo "started $load busy processes: ${busy[*]}"

failed=0
for ((run = 1; run <= runs; run++)); do
    start=$(date +%s%N)
    if swift test > "$logs/run-$run.log" 2>&1; then result=passed; else result=FAILED; failed=$((failed + 1)); fi
    if [[ $result == FAILED ]]; then grep -E "✘|error:|Fatal error" "$logs/run-$run.log" | head -40 || true; fi
    end=$(date +%s%N)
    summary=$(grep -E "Test run with [0-9]+ tests" "$logs/run-$run.log" | tail -1 | sed -E 's/^.*(Test run with)/\1/' || true)
    tenths=$(((end - start) / 100000000))
    printf 'run %2d: %s in %3d.%d s  (%s)\n' "$run" "$result" $((tenths / 10)) $((tenths % 10)) "$summary"
done
echo "$((runs - failed)) of $runs runs passed$([[ $load -gt 0 ]] && echo " with $load busy processes")"
# The last run's own closing lines, as `swift test` printed them (XCTest's, then Swift Testing's).
grep -E "^(Executed [0-9]+ tests|✔ Test run with|✘ Test run with)" "$logs/run-$runs.log" | tail -2 || true
[[ $failed -eq 0 ]]
