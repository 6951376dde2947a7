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
# prints its output and returns its status. `beside_pause` and `beside_resume` stop (SIGSTOP) and continue
# it with every process it started: SwiftPM starts each compiler in a process group of its own, so a
# signal to the command's group would miss them. The exit trap ends them all.
BESIDE_PID=""
BESIDE_LOG=""

beside() {
    BESIDE_LOG="$1"
    shift
    "$@" > "$BESIDE_LOG" 2>&1 &
    BESIDE_PID=$!
}

# The command's process and its descendants, parents before their children.
beside_processes() {
    [ -n "$BESIDE_PID" ] || return 0
    ps -e -o pid= -o ppid= | awk -v root="$BESIDE_PID" '
        { parent[$1] = $2; order[NR] = $1 }
        END {
            keep[root] = 1; print root
            do {
                added = 0
                for (i = 1; i <= NR; i++) {
                    pid = order[i]
                    if (!(pid in keep) && (parent[pid] in keep)) { keep[pid] = 1; print pid; added = 1 }
                }
            } while (added)
        }'
}

beside_signal() {
    local pid
    for pid in $(beside_processes); do kill "-$1" "$pid" 2>/dev/null || true; done
}

beside_pause() {
    # Twice: a process not yet stopped can start a compiler between the listing and the signal.
    beside_signal STOP
    beside_signal STOP
}

beside_resume() {
    beside_signal CONT
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
        beside_signal TERM
        beside_signal CONT
        wait "$BESIDE_PID" 2>/dev/null || true
    fi
    if [ -n "$STAGE_NAME" ]; then
        echo "    (took $((SECONDS - STAGE_START)) s)"
    fi
    echo "=== $(basename "$0"): $((SECONDS - CI_START)) s in all, exit status $status"
}
trap stages_finished EXIT
