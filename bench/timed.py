"""What bench_run.py and bench_fixed.py share: one timed run of a command, and
the usage error."""
import resource
import subprocess
import sys
import time


def timed_run(cmd, env):
    """Runs cmd; returns (CPU seconds of the process tree, user + system;
    wall seconds; its stdout). Exits naming the command if it fails. CPU
    time is the figure: on a shared 2-core VM wall time swings by +-30 %."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode != 0:
        sys.exit("%s failed: %s" % (cmd, r.stderr))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall, r.stdout


def usage_error(message):
    """A bad argument: the message on stderr, exit status 2."""
    print(message, file=sys.stderr)
    sys.exit(2)
