#!/usr/bin/env bash
# Load test of Examples/SignalServer, on loopback only, bounded in requests and time.
#
#   bash Examples/LoadTest/run.sh           # the full run: 50 wrk connections for 20 s, 1,000 streams,
#                                           # 50 slow readers of a 1,000,000-row export for 10 s
#   bash Examples/LoadTest/run.sh --smoke   # a few seconds, for CI: 50 connections for 3 s, 100 streams,
#                                           # 10 slow readers of a 100,000-row export for 3 s
#
# Builds the server and the streaming client (release for the full run, debug for the smoke run), starts
# the server on a free port, loads the await routes with wrk (installed from Debian's packages if missing),
# then connects the streaming clients, then reads the export whole and with slow clients (the server
# runs as many exports as there are slow clients: one more must be refused, and a trade posted meanwhile
# accepted), and prints the figures. Exits non-zero when a request failed, an event was lost or
# reordered, a subscription, stream or task was left behind, or the server's memory grew with the export.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
if [[ "${1:-}" == "--smoke" ]]; then mode=smoke; fi
if [[ $mode == full ]]; then
    config=release; build_flags=(); duration=20s; connections=50; clients=1000; trades=200
    export_clients=50; export_rows=1000000; export_seconds=10
else
    config=debug; build_flags=(-debug-info-format none); duration=3s; connections=50; clients=100; trades=50
    export_clients=10; export_rows=100000; export_seconds=3
fi

if ! command -v wrk > /dev/null; then
    echo "--- Installing wrk"
    sudo=""; if [[ $(id -u) != 0 ]]; then sudo=sudo; fi
    $sudo apt-get update -qq > /dev/null && $sudo apt-get install -y -qq wrk > /dev/null
fi
# A thousand streams need a thousand descriptors in the server and as many in the client.
ulimit -n 65536 2> /dev/null || ulimit -n "$(ulimit -Hn)"

echo "--- Building ($config)"
# A fixed hash seed for SwiftPM: 6.3 orders a package's trait flags by the seed, so a build after another
# SwiftPM command (swift test, say) could recompile Hummingbird for nothing (swift-package-manager#10525).
export SWIFT_DETERMINISTIC_HASHING=1
# The smoke run's debug build has no debug information (-debug-info-format none), like CI's other
# builds of the example, which it then reuses: without it the example's first build took 13% more CPU
# time and 30% more wall time here (a link of DWARF-heavy objects runs on one core).
swift build -c $config "${build_flags[@]}" --package-path SignalServer --product SignalServer
swift build -c $config "${build_flags[@]}" --package-path SignalServer --product StreamLoad
server_bin="$(swift build -c $config "${build_flags[@]}" --package-path SignalServer --show-bin-path)/SignalServer"
load_bin="$(swift build -c $config "${build_flags[@]}" --package-path SignalServer --show-bin-path)/StreamLoad"
unset SWIFT_DETERMINISTIC_HASHING

work="$(mktemp -d)"
"$server_bin" --port 0 --export-limit "$export_clients" > "$work/server.log" 2>&1 &
server=$!
cleanup() { kill "$server" 2> /dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 1 300); do
    if grep -q "listening on" "$work/server.log"; then break; fi
    sleep 0.1
done
url="$(grep -o 'http://[0-9.:]*' "$work/server.log" | head -1)"
if [[ -z "$url" ]]; then echo "the server did not start:"; cat "$work/server.log"; exit 1; fi
echo "server: $url (pid $server)"
rss() { awk -v key="$1:" '$1 == key {printf "%.1f MiB", $2 / 1024}' "/proc/$server/status" 2> /dev/null || echo n/a; }
rss_start="$(rss VmRSS)"

echo "--- wrk: $connections connections for $duration on the await routes"
# Each connection takes the next path in turn: a cached quote, a converted quote (exchange and the
# bridged async rates service), the queue-confined ledger.
cat > "$work/routes.lua" << 'LUA'
local paths = { "/quotes/ACME", "/quotes/GLOBEX/in/EUR", "/symbols/ACME/stats" }
local i = 0
request = function()
  i = i + 1
  return wrk.format("GET", paths[(i % #paths) + 1])
end
LUA
curl -sf "$url/quotes/ACME" > /dev/null   # warms the cache, so /quotes/ACME answers from it
wrk -t2 -c"$connections" -d"$duration" --latency -s "$work/routes.lua" "$url" | tee "$work/wrk.txt"
non2xx="$(grep -o 'Non-2xx or 3xx responses: [0-9]*' "$work/wrk.txt" | grep -o '[0-9]*$' || echo 0)"
socket_errors="$(grep -o 'Socket errors:.*' "$work/wrk.txt" || true)"
rss_after_wrk="$(rss VmRSS)"

echo "--- $clients streaming clients, $trades trades"
status=0
"$load_bin" --url "$url" --pid "$server" --clients "$clients" --trades "$trades" --limit 240 \
    --export-clients "$export_clients" --export-rows "$export_rows" --export-seconds "$export_seconds" \
    | tee "$work/stream.txt" || status=$?

echo "--- Summary"
echo "requests per second: $(awk '/Requests\/sec/ {print $2}' "$work/wrk.txt")"
echo "latency p50: $(awk '$1 == "50%" {print $2}' "$work/wrk.txt"), p99: $(awk '$1 == "99%" {print $2}' "$work/wrk.txt")"
echo "request errors: non-2xx $non2xx${socket_errors:+, $socket_errors}"
echo "server memory: $rss_start at start, $rss_after_wrk after wrk, $(rss VmHWM) peak, $(rss VmRSS) at the end"
curl -sf "$url/metrics"; echo
kill -TERM "$server"
wait "$server" && echo "server exited 0 on SIGTERM" || { echo "server exit code $? on SIGTERM"; status=1; }
if [[ "$non2xx" != 0 || -n "$socket_errors" ]]; then echo "FAILED: wrk saw errors"; status=1; fi
exit $status
