"""Tests of the stalls of an embedded CPython (tests/python's pause program),
which run alone.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os

from clitest import CG, TOYLAYER, TMP, run, check, calls_in, check_complete_events, main


def run_release_gil_ends_the_stall():
    """The second bug through the CLI: an embedded CPython whose thread waits
    1 s in the driver holding the GIL. Plain `run` only reports the stall;
    `run --release-gil` leaves the GIL and the main thread keeps ticking."""
    pause = os.environ["CG_PAUSE"]
    out = os.path.join(TMP, "pause.txt")
    path = os.path.join(TMP, "stall.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--report", path, "--", pause, "stall", "1", out])
    check(r.returncode == 0, "detect only: the whole wait is a pause and one stall: %s %s" % (r.stdout, r.stderr))
    rep = json.load(open(path))
    waits = [s for p in rep["processes"] for s in p["sites"] if s["name"] == "toyWait"]
    check(waits and waits[0]["stalls"] == 1, "the report shows the stall: %s" % waits)
    r = run([CG, "run", "--layer", TOYLAYER, "--release-gil", "--", pause, "no-stall", "0", out])
    check(r.returncode == 0, "--release-gil: pauses of at most 50 ms: %s %s" % (r.stdout, r.stderr))


def run_reports_the_stall_with_its_python_line():
    """The stall of the embedded CPython, as a user reads it: which call,
    how long, which thread, holding which runtime, and the Python line that
    made the call (toyext.wait(1000) on line 4 of the script, in worker())."""
    pause = os.environ["CG_PAUSE"]
    out = os.path.join(TMP, "pause.txt")
    path = os.path.join(TMP, "where.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--report", path, "--", pause, "stall", "1", out])
    check(r.returncode == 0, "%s %s" % (r.stdout, r.stderr))
    rep = json.load(open(path))
    p = rep["processes"][0]
    check(len(p["stalls"]) == 1 and p["stalls_dropped"] == 0, "one stall: %s" % p["stalls"])
    st = p["stalls"][0]
    check(st["api"] == "toy" and st["name"] == "toyWait" and st["ns"] >= 900e6, st)
    check(st["runtime"] == "cpython" and st["tid"] > 0 and st["tid"] != p["pid"], "a thread of its own: %s" % st)
    check(st["python"] == {"file": "<string>", "line": 4, "function": "worker"}, "the Python line: %s" % st)
    # The main thread, ticking, waited for the GIL all the while: it blocked one thread (the watchdog and
    # the stalled thread itself are not counted).
    check(st["waiters"] == 1, "one other thread waited for the GIL: %s" % st)
    check(p["in_flight"] == [], "nothing in flight at a clean exit: %s" % p["in_flight"])
    # The table, from the saved report: in the summary first, the stall and its fix; in the process's
    # section the stall first, then what to do (each line whole: COLUMNS).
    r = run([CG, "report", path], env={"COLUMNS": "1000"})
    lines = r.stdout.splitlines()
    head = [k for k, l in enumerate(lines) if l.startswith("callguard: pid ")]
    check(r.returncode == 0 and head and [l for l in lines[1:head[0]] if l.startswith("  1 stall held the runtime ") and
                                          "while other threads waited" in l and "1 waiting" in l and
                                          l.endswith(": callguard run --release-runtime")], r.stdout)
    lines = lines[head[0]:]
    check("1 stall blocked other threads" in lines[1], r.stdout)
    check("toy toyWait" in lines[2] and "holding cpython, 1 other thread waiting" in lines[2] and
          "at <string>:4 in worker()" in lines[2], r.stdout)
    check("--release-runtime" in lines[3] and "entry point" in lines[4], r.stdout)


def run_trace_marks_a_stall():
    """A 1 s driver wait made holding the GIL is a stall on the timeline."""
    pause = os.environ["CG_PAUSE"]
    out = os.path.join(TMP, "pause-trace.txt")
    path = os.path.join(TMP, "stall-trace.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--trace", path, "--", pause, "stall", "1", out])
    check(r.returncode == 0, r.stdout + r.stderr)
    trace = json.load(open(path))
    check_complete_events(trace)
    stalls = [e for e in calls_in(trace, name="toyWait") if e["cat"] == "call,stall"]
    check(len(stalls) == 1 and stalls[0]["args"]["stall"] is True and stalls[0]["args"]["runtime_held"] is True
          and stalls[0]["dur"] >= 900000, "the 1 s stall: %s" % calls_in(trace, name="toyWait"))
    check(all("stall" not in e["args"] and e["cat"] == "call" for e in calls_in(trace) if e not in stalls),
          "nothing else is a stall (a key that would say false is left out)")


if __name__ == "__main__":
    main()
