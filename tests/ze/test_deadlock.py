"""The GIL / loader-lock deadlock (triton-lang/triton PR #11265) on the Level Zero simulator, plain and under
callguard run (loader_lock_deadlock.py says how the child deadlocks).

Run: test_deadlock.py TEST (or --list; tests/cgtest.py), with CG_CLI (callguard), CG_PYTHON (the child's
interpreter) and ZE_ENABLE_ALT_DRIVERS (the simulator) in the environment (tests/ze/CMakeLists.txt sets them).
Each test is a function named for the behaviour it checks; a hung child is killed with its whole process group.
"""
import os
import re
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from cgtest import check, hang_lines, main  # noqa: E402  (tests/cgtest.py)

E = os.environ
HANG_S = 5  # the deadlock is forced, not timed: a child still running after this is hung for good
CHILD = [E.get("CG_PYTHON", "python3"), os.path.join(HERE, "loader_lock_deadlock.py")]


def run_group(args, seconds):
    """Runs args in a process group of its own: (status, stdout, stderr), the status None when it was still
    running after `seconds` (the group, callguard's child included, is then killed, so nothing is left behind;
    the output is what it wrote until then)."""
    env = {k: v for k, v in E.items() if not k.startswith("CALLGUARD_")}
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        return None, out, err


def ze_gil_loader_lock_deadlock_hangs_plain_and_in_detect_mode_completes_with_release_gil():
    check(run_group(CHILD, HANG_S)[0] is None, "plainly the child deadlocks (still running after %d s)" % HANG_S)
    cli = [E["CG_CLI"], "run", "--api", "ze"]
    check(run_group(cli + ["--"] + CHILD, HANG_S)[0] is None,
          "under callguard run (detect mode) the child deadlocks (still running after %d s)" % HANG_S)
    r = run_group(cli + ["--release-gil", "--"] + CHILD, 60)
    check(r[0] is not None, "with --release-gil the child ends (hung 60 s)")
    check(r[0] == 0 and r[1] == "zeModuleCreate 0, compiler library loaded\n",
          "with --release-gil the module is created after the compiler library's load:\n-- exit %s\n-- stdout:\n%s"
          "-- stderr:\n%s" % r)


def ze_gil_loader_lock_deadlock_hang_report_names_zeModuleCreate_the_gil_and_the_python_line():
    """Under callguard run --hang-ms 1000 the hung child is reported on stderr while it hangs (docs/report.md,
    "Hangs"): the main thread in zeModuleCreate, holding the GIL and waiting for the dynamic loader's lock, called
    from the child's line that calls it; and the other side, the thread that waits for the GIL in no guarded call."""
    with open(CHILD[1]) as f:
        line = next(i for i, text in enumerate(f, 1) if text.startswith("r = module_create("))
    r = run_group([E["CG_CLI"], "run", "--api", "ze", "--hang-ms", "1000", "--"] + CHILD, HANG_S)
    check(r[0] is None, "the child deadlocks under --hang-ms too (still running after %d s)" % HANG_S)
    block = "\n".join(hang_lines(r[2]))  # each line with the lines it went on to
    call = re.search(r'^callguard: hang:   tid \d+ "[^"]*": ze zeModuleCreate, (\d+) ms, (.*)$', block, re.M)
    check(call, "a hang report names zeModuleCreate within %d s:\n%s" % (HANG_S, r[2]))
    check(int(call.group(1)) >= 1000, "its age is at least --hang-ms: %s" % call.group(0))
    check("holds the GIL (cpython)" in call.group(2), "it holds the GIL: %s" % call.group(0))
    check("waits for the dynamic loader's lock (glibc)" in call.group(2),
          "inside it, the simulator's dlopen waits for the loader's lock: %s" % call.group(0))
    check(call.group(2).endswith("python %s:%d in <module>" % (CHILD[1], line)),
          "the Python line %d: %s" % (line, call.group(0)))
    # The other side: thread B, in no guarded call (inside glibc's dl_iterate_phdr, in a ctypes callback),
    # asleep on the GIL.
    other = re.findall(r'^callguard: hang:   tid (\d+) "[^"]*": in no guarded call, waits for the GIL \(cpython\)$',
                       block, re.M)
    holder = re.search(r'^callguard: hang:   tid (\d+) ', call.group(0)).group(1)
    check(len(other) == 1 and other[0] != holder, "the thread waiting for the GIL is named:\n" + r[2])

if __name__ == "__main__":
    main()
