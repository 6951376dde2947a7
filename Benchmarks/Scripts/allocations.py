#!/usr/bin/env python3
"""Allocations per operation of the library's variant of each workload in malloc-thresholds.json,
checked against its threshold: CI's allocation gate (`.ci/run`), without package-benchmark.

Run from Benchmarks/ after building the profile executable:

    swift build -c release --product profile
    python3 Scripts/allocations.py --ci [--profile PATH]

It compiles Scripts/allocation-counter.c, preloads it into the profile executable, and runs each
workload five times in one process. The executable counts the allocations inside each run's measured
window (between the body's `startMeasurement()` and `stopMeasurement()`), as package-benchmark's
`mallocCountTotal` does; the figure is the median run's count divided by the run's operations. The
first run, which pays for the process's first use of each type and thread, is one of five and never the
median. Linux and glibc only (the counter forwards to glibc's allocator); `Scripts/run.sh` measures the
same counts with package-benchmark on any platform. About 3 seconds on two cores.

Counts, not times: they do not move with the machine's load, except for the workloads whose buffers grow
with a producer thread's lead (A1, A3-A5), whose thresholds have slack for that.
"""
import concurrent.futures
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
THRESHOLDS = os.path.join(HERE, "..", "malloc-thresholds.json")
RUNS = 5


def compile_counter(folder):
    compiler = shutil.which("cc") or shutil.which("clang")
    if compiler is None:
        sys.exit("no C compiler (cc or clang) to build Scripts/allocation-counter.c")
    library = os.path.join(folder, "allocation-counter.so")
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-Wall", "-Werror",
                    os.path.join(HERE, "allocation-counter.c"), "-o", library], check=True)
    return library


def per_operation(profile, counter, workload):
    """The median run's allocations per operation."""
    # The workloads of a million operations run 100,000 (`SSK_WORKLOAD_MILLION`): the same counts per
    # operation (checked on all 26 at both sizes), in 2 s instead of 27.
    environment = dict(os.environ, LD_PRELOAD=counter, SSK_COUNT_ALLOCATIONS="1", SSK_WORKLOAD_MILLION="100000")
    result = subprocess.run([profile, workload, "SignalKit", str(RUNS)], capture_output=True, text=True,
                            env=environment)
    runs = [line.split() for line in result.stdout.splitlines() if line.startswith("allocations ")]
    if result.returncode != 0 or len(runs) != RUNS:
        sys.exit(f"{workload}: the profile executable failed (status {result.returncode}):\n"
                 f"{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return statistics.median(int(run[1]) / int(run[3]) for run in runs)


def check(profile):
    with open(THRESHOLDS) as f:
        thresholds = {workload: limit for workload, limit in json.load(f).items() if not workload.startswith("_")}
    with tempfile.TemporaryDirectory() as folder:
        counter = compile_counter(folder)
        # Two at a time, on two cores: the counts do not depend on the load.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            measured = dict(zip(thresholds, pool.map(lambda workload: per_operation(profile, counter, workload),
                                                     thresholds)))
    failures = []
    for workload, limit in sorted(thresholds.items()):
        if measured[workload] > limit:
            failures.append(f"{workload}: {measured[workload]:.3f} allocations per operation, threshold {limit}")
        else:
            print(f"ok   {workload}: {measured[workload]:.3f} <= {limit}")
    for failure in failures:
        print(f"FAIL {failure}")
    if failures:
        sys.exit("over malloc-thresholds.json (above). Find the new allocation (Scripts/run.sh, or valgrind "
                 "--tool=dhat on the profile executable) and take it out; or, after a deliberate change, "
                 "raise the threshold and say why in the commit.")
    print(f"every workload allocates within malloc-thresholds.json ({len(thresholds)} workloads)")


if __name__ == "__main__":
    arguments = sys.argv[1:]
    if "--ci" not in arguments:
        sys.exit(__doc__)
    check(arguments[arguments.index("--profile") + 1] if "--profile" in arguments else ".build/release/profile")
