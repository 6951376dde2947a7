#!/usr/bin/env bash
# Runtime type look-ups per value, operator by operator (Sources/Lookups): builds the check, builds the
# counter it needs (lookup-counter.c) and runs the check with the counter loaded.
#   bash Benchmarks/Scripts/lookups.sh        # the table
#   bash Benchmarks/Scripts/lookups.sh --ci   # fails when a chain makes a type look-up per value
set -euo pipefail
cd "$(dirname "$0")/.."
swift build -c release --product lookups
cc -O2 -shared -fPIC -o .build/lookup-counter.so Scripts/lookup-counter.c -ldl
LD_PRELOAD="$PWD/.build/lookup-counter.so" .build/release/lookups "$@"
