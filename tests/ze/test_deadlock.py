"""The GIL / loader-lock deadlock (triton-lang/triton PR #11265) on the Level Zero simulator, plain and under
callguard run (loader_lock_deadlock.py says how the child deadlocks).

Run: test_deadlock.py TEST (or --list; tests/cgtest.py), with CG_CLI (callguard), CG_PYTHON (the child's
interpreter) and ZE_ENABLE_ALT_DRIVERS (the simulator) in the environment (tests/ze/CMakeLists.txt sets them).
Each test is a function named for the behaviour it checks; a hung child is killed with its whole process group.
"""
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from cgtest import check, main  # noqa: E402  (tests/cgtest.py)

E = os.environ
HANG_S = 5  # the deadlock is forced, not timed: a child still running after this is hung for good
CHILD = [E.get("CG_PYTHON", "python3"), os.path.join(HERE, "loader_lock_deadlock.py")]


def run_group(args, seconds):
    """Runs args in a process group of its own; None when it is still running after `seconds` (the group,
    callguard's child included, is then killed, so nothing is left behind), else (status, stdout, stderr)."""
    env = {k: v for k, v in E.items() if not k.startswith("CALLGUARD_")}
    p = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None


def ze_gil_loader_lock_deadlock_hangs_plain_and_in_detect_mode_completes_with_release_gil():
    check(run_group(CHILD, HANG_S) is None, "plainly the child deadlocks (still running after %d s)" % HANG_S)
    cli = [E["CG_CLI"], "run", "--api", "ze"]
    check(run_group(cli + ["--"] + CHILD, HANG_S) is None,
          "under callguard run (detect mode) the child deadlocks (still running after %d s)" % HANG_S)
    r = run_group(cli + ["--release-gil", "--"] + CHILD, 60)
    check(r is not None, "with --release-gil the child ends (hung 60 s)")
    check(r[0] == 0 and r[1] == "zeModuleCreate 0, compiler library loaded\n",
          "with --release-gil the module is created after the compiler library's load:\n-- exit %s\n-- stdout:\n%s"
          "-- stderr:\n%s" % r)


if __name__ == "__main__":
    main()
