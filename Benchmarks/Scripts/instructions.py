#!/usr/bin/env python3
"""Instructions per operation, counted by valgrind's callgrind: a measure that, unlike wall time, does
not move with the machine's load. For the single-threaded (or thread-handoff) workloads whose targets sit
close to their ratio, and for A2 (`get()` of an available value), whose target is a ratio to a checked
continuation rather than to the limit.

Run from Benchmarks/ after building the profile executable (see README.md, "Profiling one workload"):

    python3 Scripts/instructions.py > instructions.md

Each figure is the difference between two runs of the workload (1 and 2 repetitions, or 10 and 30 for
the workloads of 1,000 operations), so the process's start-up cost cancels out.

    python3 Scripts/instructions.py --ci [--profile PATH]

checks the renovation's gate (#43, README.md, "The renovation's gate"): the library's count on each
gated workload at most 5% above its count at `5782380`. Only the library's variant is counted, two
runs at a time, and the workloads of 1,000,000 operations run 100,000 (`SSK_WORKLOAD_MILLION`), a
tenth of the time under valgrind for the same counts per operation. It takes the profile executable
built by `swift build -c release --product profile` unless `--profile` names another, and counts a
copy without debug information (this valgrind cannot read the DWARF 5 a plain build writes; the code
is the same, and so are the counts). About 25 seconds on two cores.
"""
import concurrent.futures
import os
import re
import subprocess
import sys
import tempfile

PROFILE = ".build-profile/release/profile"
# The renovation's gate (#43): each workload's count at `5782380`, the commit the renovation was filed
# against, counted on 2026-11-29 with this script. No count may exceed it by more than 5%.
GATE = {
    "W1 map+filter per event": 254,
    "W2 build+start+dispose per subscription": 3_400,
    "W3 delivery to 10 subscribers per delivery": 128,
    "W3 churn of 1000 subscribers per subscriber": 2_575,
    "W4 combineLatest of 8 per emission": 753,
    "W5 mapToSignal per outer value": 2_524,
    "W6 ValuePromise.set to 10 subscribers per set": 1_662,
    "W6 Promise.set(single) to 10 subscribers per set": 2_569,
    "A2 await an available value per await": 1_003,
}
GATE_MARGIN = 1.05
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


def instructions(workload, variant, repetitions, profile=PROFILE, million=None):
    environment = dict(os.environ)
    if million is not None:
        environment["SSK_WORKLOAD_MILLION"] = str(million)
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", profile, workload, variant,
         str(repetitions)], capture_output=True, text=True, check=True, env=environment)
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


def check_gate(profile):
    """Counts the library's variant of each gated workload and fails when one exceeds the gate."""
    million = 100_000
    operations = {workload: million if count >= 1_000_000 else count for workload, count, _, _ in WORKLOADS}
    runs = []
    for workload in GATE:
        low, high = (1, 2) if operations[workload] == million else (10, 30)
        runs += [(workload, low), (workload, high)]
    with tempfile.TemporaryDirectory() as folder:
        stripped = os.path.join(folder, "profile")
        subprocess.run(["objcopy", "--strip-debug", profile, stripped], check=True)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            counts = dict(zip(runs, pool.map(
                lambda run: instructions(run[0], "SignalKit", run[1], stripped, million), runs)))
    print("| Workload | at 5782380 | limit (+5%) | now | change |")
    print("|---|---:|---:|---:|---:|")
    over = []
    for workload, before in GATE.items():
        (low_run, low), (high_run, high) = [(run, count) for run, count in counts.items() if run[0] == workload]
        now = (high - low) / ((high_run[1] - low_run[1]) * operations[workload])
        limit = before * GATE_MARGIN
        print(f"| {workload} | {before:,} | {limit:,.0f} | {now:,.0f} | {now / before - 1:+.1%} |")
        if now > limit:
            over.append(workload)
    if over:
        sys.exit("over the renovation's gate (#43: at most 5% above the count at 5782380): " + ", ".join(over)
                 + ". Find what the change added to that path (callgrind_annotate on the workload, before "
                 "and after) and take it out, or take the question to the planners.")
    print("every gated count is within 5% of its count at 5782380")


if __name__ == "__main__":
    if "--ci" in sys.argv[1:]:
        arguments = sys.argv[1:]
        check_gate(arguments[arguments.index("--profile") + 1] if "--profile" in arguments else
                   ".build/release/profile")
    else:
        main()
