#!/usr/bin/env python3
"""What one `callguard run` costs beyond the guarded calls: the CLI (loading
layers, checking values, the run's directory and shims, merging the report
and the trace afterwards) and each process's start-up under the preload
(the statistics file, the layers' registration, the quirks file). Measured
on programs that make no guarded call, plain and under callguard, in one
benchmark run (interleaved rounds, medians). Not a test: prints the ratios.

usage: bench/bench_fixed.py [BUILD_DIR] [ROUNDS] [PROGRAMS] [VARIANTS] [--ir]
PROGRAMS: comma-separated (default: true,import):
  true      /bin/true
  import    /usr/bin/python3 -c 'import pyopencl'
  job       bench/pyopencl_enqueues.py 20000 (bench_run.py's workload, whose
            40,093 guarded calls put the report and the trace to work)
VARIANTS: comma-separated, each against plain (default: all five):
  run       callguard run --api cl
  report    callguard run --api cl --report FILE
  trace     callguard run --api cl --report FILE --trace FILE.json
  all       callguard run --report FILE            (every installed layer)
--ir: instead of timing, instruction counts of the process tree under
callgrind (--trace-children=yes), once per variant: the CLI and the
program apart, each process's main thread (PoCL's worker thread is left
out: its waits differ from run to run), and only the CLI and processes of
the program itself (not the ld(1) that PoCL runs now and then). Timing on a shared VM moves by more than these costs; the
counts are exact, but leave out the kernel (page faults, file system).
"""
import glob
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

from timed import timed_run, usage_error

if any(a in ("-h", "--help") for a in sys.argv[1:]):
    print(__doc__.strip())
    sys.exit(0)
unknown = [a for a in sys.argv[1:] if a.startswith("-") and a != "--ir"]
if unknown:
    usage_error(f"bench_fixed.py: unknown option {unknown[0]}: expected --ir or --help")
args = [a for a in sys.argv[1:] if not a.startswith("--")]
ir_mode = "--ir" in sys.argv[1:]
build = args[0] if len(args) > 0 else "build"
rounds = int(args[1]) if len(args) > 1 else 21
chosen = (args[2] if len(args) > 2 else "true,import").split(",")
only = args[3].split(",") if len(args) > 3 else None
here = os.path.dirname(os.path.abspath(__file__))
programs = {
    "true": ["/bin/true"],
    "import": ["/usr/bin/python3", "-c", "import pyopencl"],  # PyOpenCL loads only in Debian's python
    "job": ["/usr/bin/python3", os.path.join(here, "pyopencl_enqueues.py"), "20000"],
}
bad = [p for p in chosen if p not in programs]
if bad:
    usage_error("bench_fixed.py: unknown program %s: expected %s" % (", ".join(bad), ", ".join(programs)))
cg = os.path.abspath(os.path.join(build, "bin", "callguard"))
tmp = tempfile.mkdtemp(prefix="cgfixed-")
env = dict(os.environ, POCL_CACHE_DIR=os.path.join(tmp, "pocl"), POCL_MAX_PTHREAD_COUNT="1", PYTHONHASHSEED="0")
for v in [k for k in env if k.startswith("CALLGUARD_")]:
    env.pop(v)
report, trace = os.path.join(tmp, "r.json"), os.path.join(tmp, "t.json")


def variants(prog):
    run = [cg, "run"]
    v = {
        "plain": prog,
        "run": [*run, "--api", "cl", "--", *prog],
        "report": [*run, "--api", "cl", "--report", report, "--", *prog],
        "trace": [*run, "--api", "cl", "--report", report, "--trace", trace, "--", *prog],
        "all": [*run, "--report", report, "--", *prog],
    }
    bad = [k for k in only or [] if k not in v]
    if bad:
        usage_error("bench_fixed.py: unknown variant %s: expected %s" % (", ".join(bad), ", ".join(v)))
    return {k: c for k, c in v.items() if k == "plain" or not only or k in only}


def once(cmd):
    """CPU time (user + system) of the process tree, and wall time, in ms."""
    cpu, wall, _ = timed_run(cmd, env)
    return 1000 * cpu, 1000 * wall


def timing(name, prog):
    vs = variants(prog)
    for cmd in vs.values():  # warm the page cache
        once(cmd)
    times = {v: [] for v in vs}
    for i in range(rounds):
        order = list(vs.items()) if i % 2 == 0 else list(vs.items())[::-1]
        for v, cmd in order:
            times[v].append(once(cmd))
    base_cpu = statistics.median(t[0] for t in times["plain"])
    base_wall = statistics.median(t[1] for t in times["plain"])
    print("%s: %s, %d interleaved rounds, medians" % (name, " ".join(prog), rounds))
    print("  %-8s %9s %8s %9s   %9s %8s %9s" % ("", "CPU ms", "ratio", "+ms", "wall ms", "ratio", "+ms"))
    for v, ts in times.items():
        c = statistics.median(t[0] for t in ts)
        w = statistics.median(t[1] for t in ts)
        print("  %-8s %9.2f %7.3fx %+9.2f   %9.2f %7.3fx %+9.2f" %
              (v, c, c / base_cpu, c - base_cpu, w, w / base_wall, w - base_wall))


def callgrind(cmd, out):
    """Ir of each process of the tree, main thread only: [(command, Ir)].
    Other threads are left out: PoCL's worker thread waits differently from
    run to run (callgrind runs one thread at a time), which moves a
    process's total by 10 % where its main thread moves by 0.1 %."""
    for f in glob.glob(out + ".*"):
        os.unlink(f)
    r = subprocess.run(["valgrind", "--tool=callgrind", "--trace-children=yes", "--separate-threads=yes",
                        "--callgrind-out-file=%s.%%p" % out, *cmd], env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit("%s failed under callgrind: %s" % (cmd, r.stderr[-2000:]))
    procs = []
    for f in sorted(glob.glob(out + ".*")):
        if not re.search(r"\.\d+-0*1$", f):  # out.PID-01: the main thread
            continue
        text = open(f, errors="replace").read()
        c = re.search(r"^cmd:\s*(.*)$", text, re.M)
        n = re.search(r"^(?:summary|totals):\s*(\d+)", text, re.M)
        procs.append((c.group(1) if c else "?", int(n.group(1)) if n else 0))
    return procs


def instructions(name, prog):
    vs = variants(prog)
    out = os.path.join(tmp, "cg")
    once(vs["plain"])  # the PoCL cache, the page cache

    def counted(procs):
        # The CLI and the program's own processes: PoCL sometimes runs ld(1)
        # to link a kernel it has cached already (60 M), run to run.
        return [(c, ir) for c, ir in procs if c.startswith(cg) or c.startswith(prog[0])]

    plain = sum(ir for _, ir in counted(callgrind(vs["plain"], out)))
    print("%s: %s, callgrind Ir of the process tree's main threads (--trace-children=yes)" % (name, " ".join(prog)))
    print("  %-8s %14s %12s %9s  %12s %12s" % ("", "Ir", "+Ir", "+%", "CLI", "program +Ir"))
    print("  %-8s %14d" % ("plain", plain))
    for v, cmd in vs.items():
        if v == "plain":
            continue
        procs = counted(callgrind(cmd, out))
        total = sum(ir for _, ir in procs)
        cli = sum(ir for c, ir in procs if c.startswith(cg))
        print("  %-8s %14d %+12d %+8.2f%%  %12d %+12d" % (v, total, total - plain, 100.0 * (total - plain) / plain, cli,
                                                          total - cli - plain))


try:
    for p in chosen:
        (instructions if ir_mode else timing)(p, programs[p])
finally:
    shutil.rmtree(tmp, ignore_errors=True)
