#!/usr/bin/env python3
"""Instructions per operation, counted by valgrind's callgrind: a measure that, unlike wall time, does
not move with the machine's load. For the single-threaded (or thread-handoff) workloads whose targets sit
close to their ratio, and for A2 (`get()` of an available value), whose target is a ratio to a checked
continuation rather than to the limit.

Run from Benchmarks/ after building the profile executable (see README.md, "Profiling one workload"):

    python3 Scripts/instructions.py > instructions.md

Each figure is the difference between two runs of the workload (1 and 2 repetitions, or 10 and 30 for
the workloads of 1,000 operations), so the process's start-up cost cancels out.
"""
import re
import subprocess
import sys

PROFILE = ".build-profile/release/profile"
# (workload, operations per repetition, target ratio to the limit, variants)
WORKLOADS = [
    ("W1 map+filter per event", 1_000_000, 1.2, ["SignalKit", "contract floor", "limit"]),
    ("W2 build+start+dispose per subscription", 1_000, 3.0, ["SignalKit", "OpenCombine", "limit"]),
    ("W3 delivery to 10 subscribers per delivery", 1_000_000, 1.3, ["SignalKit", "contract floor", "limit"]),
    ("W3 churn of 1000 subscribers per subscriber", 1_000_000, 3.0, ["SignalKit", "limit"]),
    ("W4 combineLatest of 8 per emission", 1_000_000, 3.0, ["SignalKit", "limit"]),
    ("W5 mapToSignal per outer value", 1_000_000, 3.0, ["SignalKit", "OpenCombine", "limit"]),
    ("W6 ValuePromise.set to 10 subscribers per set", 1_000, 1.3, ["SignalKit", "contract floor", "limit"]),
    ("W6 Promise.set(single) to 10 subscribers per set", 1_000, 2.0, ["SignalKit", "contract floor", "limit"]),
    ("W7 deliverOn per value", 1_000_000, 1.2, ["SignalKit", "contract floor", "limit"]),
    ("A2 await an available value per await", 1_000, 3.0, ["SignalKit", "UnsafeContinuation", "CheckedContinuation"]),
]
# What a workload's ratio is taken against: the limit, unless the workload has none.
REFERENCE = {"A2 await an available value per await": "UnsafeContinuation"}


def instructions(workload, variant, repetitions):
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", PROFILE, workload, variant,
         str(repetitions)], capture_output=True, text=True, check=True)
    match = re.search(r"Collected : (\d+)", result.stderr)
    if not match:
        sys.exit(f"no instruction count for {workload} / {variant}:\n{result.stderr[-2000:]}")
    return int(match.group(1))


def per_operation(workload, variant, operations):
    low, high = (1, 2) if operations >= 1_000_000 else (10, 30)
    return (instructions(workload, variant, high) - instructions(workload, variant, low)) / (
        (high - low) * operations)


def main():
    print("| Workload | SignalKit | limit (or reference) | ratio | target | contract floor | floor ratio "
          "| OpenCombine |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for workload, operations, target, variants in WORKLOADS:
        counts = {variant: per_operation(workload, variant, operations) for variant in variants}
        ours, limit = counts["SignalKit"], counts[REFERENCE.get(workload, "limit")]
        floor = counts.get("contract floor")
        other = counts.get("OpenCombine")
        print(f"| {workload} | {ours:,.0f} | {limit:,.0f} | {ours / limit:.2f}× | ≤ {target}× "
              f"| {'—' if floor is None else f'{floor:,.0f}'} "
              f"| {'—' if floor is None else f'{floor / limit:.2f}×'} "
              f"| {'—' if other is None else f'{other:,.0f}'} |")


if __name__ == "__main__":
    main()
