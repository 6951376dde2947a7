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

stages_finished() {
    local status=$?
    if [ -n "$STAGE_NAME" ]; then
        echo "    (took $((SECONDS - STAGE_START)) s)"
    fi
    echo "=== $(basename "$0"): $((SECONDS - CI_START)) s in all, exit status $status"
}
trap stages_finished EXIT
