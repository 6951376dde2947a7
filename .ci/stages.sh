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
# run together (`.ci/run` builds the example server beside the other stages); `beside_wait` waits for it,
# prints its output and returns its status. The command runs in a process group of its own, so that
# `beside_pause` and `beside_resume` (SIGSTOP, SIGCONT) and the exit trap reach every compiler it starts.
BESIDE_PID=""
BESIDE_LOG=""

beside() {
    BESIDE_LOG="$1"
    shift
    rm -f "$BESIDE_LOG.pgid"
    # A process group of its own, in this session: a new session (setsid) would also get a scheduling
    # group of its own where the kernel groups by session (autogroup), and compete with this session's
    # stages as an equal whatever its nice value. The group's number is the command's process number,
    # kept through exec, written for beside_pause and the exit trap.
    python3 -c 'import os, sys
os.setpgid(0, 0)
with open(sys.argv[1], "w") as file:
    file.write(str(os.getpid()))
os.execvp(sys.argv[2], sys.argv[2:])' "$BESIDE_LOG.pgid" "$@" > "$BESIDE_LOG" 2>&1 &
    BESIDE_PID=$!
}

beside_group() {
    [ -n "$BESIDE_PID" ] && [ -s "$BESIDE_LOG.pgid" ] && cat "$BESIDE_LOG.pgid"
}

beside_pause() {
    local group
    if group=$(beside_group); then kill -STOP -- "-$group" 2>/dev/null || true; fi
}

beside_resume() {
    local group
    if group=$(beside_group); then kill -CONT -- "-$group" 2>/dev/null || true; fi
}

beside_wait() {
    local status=0
    beside_resume
    wait "$BESIDE_PID" || status=$?
    BESIDE_PID=""
    cat "$BESIDE_LOG"
    return $status
}

stages_finished() {
    local status=$?
    if [ -n "$BESIDE_PID" ]; then
        local group
        if group=$(beside_group); then
            kill -- "-$group" 2>/dev/null || true
            kill -CONT -- "-$group" 2>/dev/null || true
        fi
        kill "$BESIDE_PID" 2>/dev/null || true
        wait "$BESIDE_PID" 2>/dev/null || true
    fi
    if [ -n "$STAGE_NAME" ]; then
        echo "    (took $((SECONDS - STAGE_START)) s)"
    fi
    echo "=== $(basename "$0"): $((SECONDS - CI_START)) s in all, exit status $status"
}
trap stages_finished EXIT
