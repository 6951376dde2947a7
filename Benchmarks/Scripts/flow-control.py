#!/usr/bin/env python3
"""Flow control: one async producer and one fast or slow `for await` consumer, elements per second and
peak resident memory, the library against MultiProducerSingleConsumerAsyncChannel and AsyncStream.

Usage (from anywhere; it works in the Benchmarks package directory):
    python3 Scripts/flow-control.py                 # builds, runs each implementation and consumer 3 times,
                                                    # prints the Markdown table of Benchmarks/README.md
    python3 Scripts/flow-control.py --all           # also Signal(sequence), the library's other paced producer
    python3 Scripts/flow-control.py --runs 5 --elements 1000000 --rounds 300 --bound 256 --skip-build

Each run is a process of its own (Sources/FlowControl), so that its peak resident set is that of one
implementation and one consumer. The runs are interleaved (every implementation once, then again), so
that a slow minute of a shared machine does not land on one implementation's runs alone. The table
gives the best throughput of the runs, the largest peak, and the elements that waited between producer
and consumer, sampled by the consumer every 1,024 elements (mean of the runs' means, largest sample).
It takes about five minutes on the two-core machine, more with --all (see README.md, "Flow control").
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = os.path.dirname(HERE)
# Its own build folder: the other suites' builds in .build are neither waited for nor disturbed.
SCRATCH = os.path.join(PACKAGE, ".build-flow-control")
BINARY = os.path.join(SCRATCH, "release", "flow-control")

# The library's row the others are compared with: the async generator.
LIBRARY = "signalkit"
IMPLEMENTATIONS = ["signalkit", "mpsc-channel", "asyncstream"]
ALL_IMPLEMENTATIONS = ["signalkit", "signalkit-sequence", "mpsc-channel", "asyncstream"]
LABELS = {
    "signalkit": "SignalKit: async generator, `waitingForRoom`, `.bounded({bound})`",
    "signalkit-sequence": "SignalKit: `Signal(sequence)`, `.bounded({bound})`",
    "mpsc-channel": "`MultiProducerSingleConsumerAsyncChannel`, `.watermark(low: {low}, high: {bound})`",
    "asyncstream": "`AsyncStream`, `.unbounded`",
}
CONSUMERS = ["fast", "slow"]
MIB = 1 << 20


def build():
    subprocess.run(
        ["swift", "build", "-c", "release", "--product", "flow-control", "--scratch-path", SCRATCH],
        cwd=PACKAGE, check=True, stdout=subprocess.DEVNULL)


def warn_if_busy():
    """Two cores shared with builds give low, noisy figures: say so before they are taken for real.
    Looks at the last second (the load average would still count the runs of a moment ago)."""
    def idle_and_total():
        with open("/proc/stat") as file:
            ticks = [int(field) for field in file.readline().split()[1:]]
        return ticks[3] + ticks[4], sum(ticks)  # idle and I/O wait

    try:
        idle_before, total_before = idle_and_total()
        time.sleep(1)
        idle_after, total_after = idle_and_total()
    except OSError:
        return
    busy = 1 - (idle_after - idle_before) / max(total_after - total_before, 1)
    if busy > 0.1:
        print(f"warning: the cores were {busy:.0%} busy before the runs: the figures will be low and noisy",
              file=sys.stderr)


def run_once(arguments, timeout):
    """One process; its JSON line, or None when it failed or did not finish in time (said on stderr)."""
    try:
        done = subprocess.run([BINARY] + arguments, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"  {' '.join(arguments)}: no result after {timeout} s (a hang?)", file=sys.stderr)
        return None
    if done.returncode != 0:
        print(f"  {' '.join(arguments)}: exit {done.returncode}: {done.stderr.strip()}", file=sys.stderr)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--elements", type=int, default=10_000_000)
    parser.add_argument("--bound", type=int, default=1_024,
                        help="the library's bound and the channel's high watermark (its low one is half)")
    parser.add_argument("--rounds", type=int, help="the slow consumer's work per element (flow-control's default)")
    parser.add_argument("--all", action="store_true", help="also Signal(sequence)")
    parser.add_argument("--timeout", type=int, default=180, help="seconds before a run counts as hung")
    parser.add_argument("--skip-build", action="store_true")
    options = parser.parse_args()

    if not options.skip_build:
        build()
    warn_if_busy()

    rounds = [] if options.rounds is None else ["--rounds", str(options.rounds)]
    common = ["--elements", str(options.elements), "--bound", str(options.bound)] + rounds
    # What the slow consumer's work costs alone: the most it could take per second.
    work = json.loads(subprocess.run([BINARY, "work"] + rounds, capture_output=True, text=True, check=True).stdout)
    implementations = ALL_IMPLEMENTATIONS if options.all else IMPLEMENTATIONS

    started = time.monotonic()
    results = {}  # (consumer, implementation) -> [run]
    failed = set()
    for run in range(options.runs):
        for consumer in CONSUMERS:
            for implementation in implementations:
                print(f"run {run + 1}/{options.runs}: {implementation} {consumer}", file=sys.stderr)
                result = run_once([implementation, consumer] + common, options.timeout)
                if result is None:
                    failed.add((consumer, implementation))
                else:
                    results.setdefault((consumer, implementation), []).append(result)
    elapsed = time.monotonic() - started

    low = options.bound // 2
    print(f"{options.elements:,} elements, best of {options.runs} runs ({elapsed:.0f} s in all). "
          f"Slow consumer: {work['rounds']} rounds of `spin` per element, {work['ns_per_element']:.0f} ns "
          f"alone (at most {1e3 / work['ns_per_element']:.2f} million elements per second).\n")
    print("| consumer | implementation | million elements per second | generator ÷ this "
          "| elements waiting, mean (largest) | peak resident MiB | peak − start MiB |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for consumer in CONSUMERS:
        best = {}
        for implementation in implementations:
            runs = results.get((consumer, implementation), [])
            if runs:
                best[implementation] = max(run["elements_per_second"] for run in runs)
        for implementation in implementations:
            label = LABELS[implementation].format(bound=options.bound, low=low)
            runs = results.get((consumer, implementation), [])
            if not runs:
                print(f"| {consumer} | {label} | failed | — | — | — | — |")
                continue
            rate = best[implementation]
            mine = implementation.startswith("signalkit")
            ratio = "—" if mine or LIBRARY not in best else f"{best[LIBRARY] / rate:.2f}×"
            waiting = sum(run["in_flight_mean"] for run in runs) / len(runs)
            largest = max(run["in_flight_max"] for run in runs)
            peak = max(run["peak_rss_bytes"] for run in runs)
            growth = max(run["peak_rss_bytes"] - run["rss_before_bytes"] for run in runs)
            print(f"| {consumer} | {label} | {rate / 1e6:.2f} | {ratio} | {waiting:,.0f} ({largest:,}) "
                  f"| {peak / MIB:.1f} | {growth / MIB:.1f} |")
    if failed:
        names = ", ".join(f"{implementation} {consumer}" for consumer, implementation in sorted(failed))
        print(f"\nFAILED: {names}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
