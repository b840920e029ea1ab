#!/usr/bin/env python3
"""What `callguard run` costs a real program: PyOpenCL making many small
enqueues on PoCL, run plain and under callguard, interleaved in one
benchmark run (median of rounds). Not a test: prints the ratios.

usage: bench/bench_run.py [BUILD_DIR] [ROUNDS] [ENQUEUES] [VARIANTS]
VARIANTS: comma-separated, each run against plain (default: report,trace):
  report    callguard run --api cl --report FILE
  blocking  callguard run --api cl --release-gil --transition blocking
  always    callguard run --api cl --release-gil --transition always
  trace     callguard run --api cl --report FILE --trace FILE.json
"""
import os
import statistics
import sys
import tempfile

from timed import timed_run, usage_error

build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
enqueues = sys.argv[3] if len(sys.argv) > 3 else "20000"
chosen = (sys.argv[4] if len(sys.argv) > 4 else "report,trace").split(",")
here = os.path.dirname(os.path.abspath(__file__))
job = [
    "/usr/bin/python3",  # PyOpenCL loads only in Debian's python
    os.path.join(here, "pyopencl_enqueues.py"),
    enqueues,
]
cg = os.path.join(build, "bin", "callguard")
tmp = tempfile.mkdtemp(prefix="cgbench-")
env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"), POCL_MAX_PTHREAD_COUNT="1")
env.pop("CALLGUARD_REPORT", None)
run = [cg, "run", "--api", "cl"]
known = {
    "report": ("callguard run --report", [*run, "--report", os.path.join(tmp, "r.json"), "--", *job]),
    "blocking": ("--release-gil --transition blocking", [*run, "--release-gil", "--transition", "blocking", "--", *job]),
    "always": ("--release-gil --transition always", [*run, "--release-gil", "--transition", "always", "--", *job]),
    "trace": ("callguard run --report --trace",
              [*run, "--report", os.path.join(tmp, "rt.json"), "--trace", os.path.join(tmp, "t.json"), "--", *job]),
}
bad = [v for v in chosen if v not in known]
if bad:
    usage_error("bench_run.py: unknown variant %s: expected %s" % (", ".join(bad), ", ".join(known)))
variants = {"plain": job}
variants.update(known[v] for v in chosen)


def once(cmd):
    """(CPU time, wall time) of the process tree, and its stdout (timed.py)."""
    cpu, wall, out = timed_run(cmd, env)
    return (cpu, wall), out


for cmd in variants.values():  # warm the PoCL cache and the page cache
    once(cmd)
times = {name: [] for name in variants}
outputs = set()
for i in range(rounds):
    # Alternate which runs first: the second of a pair runs on warmer caches.
    for name, cmd in (list(variants.items()) if i % 2 == 0 else list(variants.items())[::-1]):
        dt, out = once(cmd)
        times[name].append(dt)
        outputs.add(out)
if len(outputs) != 1:
    sys.exit("outputs differ: %s" % outputs)
import json


# The number of guarded calls: from a report of one more run.
once([*run, "--report", os.path.join(tmp, "r.json"), "--", *job])
calls = json.load(open(os.path.join(tmp, "r.json")))["totals"]["calls"]
base_cpu = statistics.median(t[0] for t in times["plain"])
base_wall = statistics.median(t[1] for t in times["plain"])
print("PyOpenCL, %s small kernel enqueues, %d interleaved rounds, medians" % (enqueues, rounds))
print("  %-36s %10s %7s %10s %7s" % ("", "CPU s", "ratio", "wall s", "ratio"))
for name, ts in times.items():
    c = statistics.median(t[0] for t in ts)
    w = statistics.median(t[1] for t in ts)
    print("  %-36s %10.3f %6.3fx %10.3f %6.3fx" % (name, c, c / base_cpu, w, w / base_wall))
print("  guarded calls per run: %d; targets: report and blocking <= 1.02x, trace <= 1.05x" % calls)
