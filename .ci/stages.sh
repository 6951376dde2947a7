# Sourced by .ci/quick and .ci/run: `stage "what it checks"` prints the heading of a stage and the time
# the previous one took, and the total when the script exits, so a slow stage shows in the log.
STAGE_NAME=""
STAGE_START=$SECONDS
CI_START=$SECONDS

stage() {
    if [ -n "$STAGE_NAME" ]; then
        echo "    (took $((SECONDS - STAGE_START)) s)"
    fi
    STAGE_NAME="$1"
    STAGE_START=$SECONDS
    echo "--- $1"
}

# `beside LOG COMMAND...` starts COMMAND in the background, its output kept in LOG, so that two stages
# run together (`.ci/run` builds the example server beside the README's test command); `beside_wait`
# waits for it, prints its output and returns its status. The exit trap stops it if the script ends
# first.
BESIDE_PID=""
BESIDE_LOG=""

beside() {
    BESIDE_LOG="$1"
    shift
    "$@" > "$BESIDE_LOG" 2>&1 &
    BESIDE_PID=$!
}

beside_wait() {
    local status=0
    wait "$BESIDE_PID" || status=$?
    BESIDE_PID=""
    cat "$BESIDE_LOG"
    return $status
}

stages_finished() {
    local status=$?
    if [ -n "$BESIDE_PID" ]; then
        kill "$BESIDE_PID" 2>/dev/null || true
        wait "$BESIDE_PID" 2>/dev/null || true
    fi
    if [ -n "$STAGE_NAME" ]; then
        echo "    (took $((SECONDS - STAGE_START)) s)"
    fi
    echo "=== $(basename "$0"): $((SECONDS - CI_START)) s in all, exit status $status"
}
trap stages_finished EXIT
