#!/usr/bin/env bash
# Runs the benchmark suite and reports per-operation results.
#
#   Scripts/run.sh          every workload and implementation; prints the results table (Markdown),
#                           writes results.svg (W3 churn and W4 arity chart) and results.md
#   Scripts/run.sh --ci     only the SignalKit benchmarks, then fails if any of them allocates more per
#                           operation than malloc-thresholds.json allows (allocation counts are stable on
#                           a noisy machine; times are not, so CI checks no times)
#
# Run from anywhere; it works in the Benchmarks package directory.
set -euo pipefail
cd "$(dirname "$0")/.."
# package-benchmark is part of the package only without this variable, which CI sets (see Package.swift).
unset SSK_BENCHMARKS_WITHOUT_PACKAGE_BENCHMARK

if [[ "${1:-}" == "--ci" ]]; then
    # Allocation counts only: each benchmark runs a quarter of a second instead of its timing window.
    SSK_BENCHMARK_ALLOCATIONS_ONLY=1 swift package --allow-writing-to-package-directory benchmark baseline update ci \
        --filter '.* · SignalKit' --no-progress --quiet
    python3 Scripts/report.py ci --check-mallocs malloc-thresholds.json
else
    swift package --allow-writing-to-package-directory benchmark baseline update current --no-progress --quiet
    python3 Scripts/report.py current --chart results.svg | tee results.md
fi
