#!/usr/bin/env bash
# Multi-instance test of Examples/SignalServer: three instances share one trade feed through PostgreSQL
# LISTEN/NOTIFY, on loopback only.
#
#   bash Examples/LoadTest/cluster.sh           # the full run: 1,000 streams, 3 x 200 trades (release)
#   bash Examples/LoadTest/cluster.sh --smoke   # the short form, for CI: 90 streams, 3 x 30 trades (debug)
#
# Installs PostgreSQL from Debian's packages if it is missing, creates a database cluster in a temporary
# directory and starts it on a free loopback port, then starts three server instances on it. StreamLoad
# spreads the streaming clients over the instances and publishes through all of them: the measured
# trades first (end-to-end latency p50/p99), then as many with the second instance killed half way (its
# clients resume on another one with Last-Event-ID), then as many after a restart of PostgreSQL. A forged
# notification sent before the clients connect must change nothing. Every
# client must receive every trade, once and in order. Then the export phase reads `/export` from a
# surviving instance, whose rows come from PostgreSQL: once whole (every row, in order), then with slow
# clients while the instance's memory is sampled, which must stay flat; one more export must be refused
# and a trade posted meanwhile accepted (exports read through a pool apart from publishing's). Stops
# everything it started,
# whatever happens.
# Exits non-zero when a check failed.
set -euo pipefail
cd "$(dirname "$0")/.."

mode=full
if [[ "${1:-}" == "--smoke" ]]; then mode=smoke; fi
if [[ $mode == full ]]; then
    config=release; build_flags=(); clients=1000; trades=200; export_clients=50; export_rows=1000000; export_seconds=10
else
    config=debug; build_flags=(-debug-info-format none); clients=90; trades=30; export_clients=10; export_rows=100000; export_seconds=3
fi
sudo=""; if [[ $(id -u) != 0 ]]; then sudo=sudo; fi

if ! ls /usr/lib/postgresql/*/bin/initdb > /dev/null 2>&1; then
    echo "--- Installing PostgreSQL"
    $sudo apt-get update -qq > /dev/null && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq postgresql > /dev/null
fi
pgbin="$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)"
ulimit -n 65536 2> /dev/null || ulimit -n "$(ulimit -Hn)"

echo "--- Building ($config)"
# A fixed hash seed for SwiftPM: 6.3 orders a package's trait flags by the seed, so a build after another
# SwiftPM command (swift test, say) could recompile Hummingbird for nothing (swift-package-manager#10525).
export SWIFT_DETERMINISTIC_HASHING=1
# The smoke run's debug build has no debug information, like CI's other builds of the example (run.sh says why).
swift build -c $config "${build_flags[@]}" --package-path SignalServer --product SignalServer
swift build -c $config "${build_flags[@]}" --package-path SignalServer --product StreamLoad
server_bin="$(swift build -c $config "${build_flags[@]}" --package-path SignalServer --show-bin-path)/SignalServer"
load_bin="$(swift build -c $config "${build_flags[@]}" --package-path SignalServer --show-bin-path)/StreamLoad"
unset SWIFT_DETERMINISTIC_HASHING

work="$(mktemp -d)"
chmod 755 "$work"
mkdir "$work/pg"
# PostgreSQL refuses to run as root: as root, run it as the postgres user the package created.
as_postgres() {
    if [[ $(id -u) == 0 ]]; then su postgres -c "$*"; else bash -c "$*"; fi
}
if [[ $(id -u) == 0 ]]; then chown postgres "$work/pg"; fi
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill -9 "$pid" 2> /dev/null || true; done
    as_postgres "$pgbin/pg_ctl -D $work/pg/data -m immediate stop" > /dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT

port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
echo "--- PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, data in $work/pg"
as_postgres "$pgbin/initdb -D $work/pg/data -A trust -U signal" > "$work/initdb.log" 2>&1 || { cat "$work/initdb.log"; exit 1; }
pg_options="-p $port -k $work/pg -c listen_addresses=127.0.0.1"
as_postgres "$pgbin/pg_ctl -D $work/pg/data -o '$pg_options' -l $work/pg/log -w start" > /dev/null
# StreamLoad runs the restart; the restarted server must not inherit its open connections (it would keep
# them open after StreamLoad closed them), so the script closes every descriptor above stderr first.
cat > "$work/pg/restart.sh" << RESTART
for fd in /proc/\$\$/fd/*; do fd=\${fd##*/}; if (( fd > 2 )); then eval "exec \$fd>&-" 2> /dev/null || true; fi; done
$pgbin/pg_ctl -D $work/pg/data -o '$pg_options' -l $work/pg/log -m fast -w restart > /dev/null
RESTART
chmod 755 "$work/pg/restart.sh"
if [[ $(id -u) == 0 ]]; then restart="su postgres -c 'bash $work/pg/restart.sh'"; else restart="bash $work/pg/restart.sh"; fi

echo "--- Three instances"
database="postgres://signal@127.0.0.1:$port/postgres"
urls=()
for instance in 1 2 3; do
    # Heartbeats every 0.5 s: a client that has every trade learns the goal from the next event.
    "$server_bin" --port 0 --heartbeat 0.5 --export-limit "$export_clients" --database "$database" > "$work/server$instance.log" 2>&1 &
    pids+=($!)
done
for instance in 1 2 3; do
    for _ in $(seq 1 300); do
        if grep -q "listening on" "$work/server$instance.log"; then break; fi
        sleep 0.1
    done
    url="$(grep -o 'http://[0-9.:]*' "$work/server$instance.log" | head -1 || true)"
    if [[ -z "$url" ]]; then echo "instance $instance did not start:"; cat "$work/server$instance.log"; exit 1; fi
    urls+=("$url")
    echo "instance $instance: $url (pid ${pids[$((instance - 1))]})"
done

# Any role that can connect can NOTIFY: a forged notification must put nothing into the feed (the
# instances read trades from the table, not from payloads). Were it trusted, the instances would sit at
# trade 1000 and drop the real trades numbered below it, and StreamLoad would fail.
"$pgbin/psql" -h 127.0.0.1 -p "$port" -U signal -d postgres -qAt \
    -c "SELECT pg_notify('trades', json_build_object('seq', 1, 'symbol', 'ACME', 'price', 666, 'size', 1)::text)" \
    -c "SELECT pg_notify('trades', json_build_object('seq', 1000, 'symbol', 'ACME', 'price', 666, 'size', 1)::text)" > /dev/null

# The table refuses a trade no market accepts (a NaN price could not be sent as JSON to a stream).
if "$pgbin/psql" -h 127.0.0.1 -p "$port" -U signal -d postgres -qAt -c "SELECT publish_trade('ACME', 'NaN', 1)" > /dev/null 2>&1; then
    echo "FAILED: the trades table took a NaN price"
    exit 1
fi

echo "--- $clients streaming clients over three instances; $trades trades measured, $trades with instance 2 killed, $trades after a database restart"
status=0
IFS=,
"$load_bin" --urls "${urls[*]}" --pids "${pids[*]}" --clients "$clients" --trades "$trades" --limit 600 \
    --faults yes --restart-database "$restart" \
    --export-clients "$export_clients" --export-rows "$export_rows" --export-seconds "$export_seconds" || status=$?
unset IFS

echo "--- Shutting down"
for index in 0 2; do
    kill -TERM "${pids[$index]}"
    if wait "${pids[$index]}"; then echo "instance $((index + 1)) exited 0 on SIGTERM"; else
        echo "instance $((index + 1)) exit code $? on SIGTERM"; status=1
    fi
done
if grep -h "error\|fatal" "$work"/server*.log; then echo "(above: what the instances logged)"; fi
# The logs go with the work folder: on a failure, show their ends, so that a run that failed once (an
# instance that did not reconnect after the database restart, seen once in nine runs) can be read.
if [[ $status != 0 ]]; then
    for log in "$work"/server*.log; do
        echo "--- the last lines of $(basename "$log")"
        tail -n 60 "$log"
    done
fi
exit $status
