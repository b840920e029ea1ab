#!/usr/bin/env python3
"""What `callguard run --report` costs a real program: PyOpenCL making many
small enqueues on PoCL, run plain and under callguard, interleaved in one
benchmark run (median of rounds). Not a test: prints the ratio.

usage: bench/bench_run.py [BUILD_DIR] [ROUNDS] [ENQUEUES]
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time

build = sys.argv[1] if len(sys.argv) > 1 else "build"
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
enqueues = sys.argv[3] if len(sys.argv) > 3 else "20000"
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
variants = {
    "plain": job,
    "callguard run --report": [cg, "run", "--api", "cl", "--report", os.path.join(tmp, "r.json"), "--", *job],
}


def once(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (cmd, r.stderr))
    return dt, r.stdout


for cmd in variants.values():  # warm the PoCL cache and the page cache
    once(cmd)
times = {name: [] for name in variants}
outputs = set()
for _ in range(rounds):
    for name, cmd in variants.items():
        dt, out = once(cmd)
        times[name].append(dt)
        outputs.add(out)
if len(outputs) != 1:
    sys.exit("outputs differ: %s" % outputs)
import json

calls = json.load(open(os.path.join(tmp, "r.json")))["totals"]["calls"]
base = statistics.median(times["plain"])
print("PyOpenCL, %s small kernel enqueues, %d interleaved rounds, median wall time" % (enqueues, rounds))
for name, ts in times.items():
    m = statistics.median(ts)
    print("  %-24s %8.3f s  %6.3fx" % (name, m, m / base))
print("  guarded calls per run: %d; target: callguard run <= 1.02x" % calls)
