"""What the tests of the `callguard` command share (tests/cli/test_cli_*.py).

Each script is run as `test_cli_NAME.py TEST CALLGUARD PROG PROG_DLOPEN
TOY_RACE TOYLIBDIR TOYLAYER` (tests/cli/CMakeLists.txt): it runs real
programs linked to the toy library under `callguard run` and checks what they
print, how they exit, and the report. A test is a function of no arguments
named for the behaviour it checks (tests/cgtest.py).
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

if listing():
    CG = PROG = PROG_DLOPEN = TOY_RACE = TOYLIB = TOYLAYER = TMP = None
else:
    CG, PROG, PROG_DLOPEN, TOY_RACE, TOYLIB, TOYLAYER = sys.argv[2:8]
    TMP = tempfile.mkdtemp(prefix="cgcli-")


def run(args, env=None, timeout=60, **kw):
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout, **kw)


def guarded(prog_args, *opts, env=None):
    return run([CG, "run", "--layer", TOYLAYER, *opts, "--", *prog_args], env=env)


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None


class Running:
    """`callguard run OPTS -- PROG ARGS` in the background, its output collected by threads; on exit, whatever is
    left of it and of its children is killed. `popen` goes to subprocess.Popen (start_new_session, ...)."""

    def __init__(self, prog_args, *opts, env=None, cmd=None, **popen):
        e = dict(os.environ)
        e.pop("CALLGUARD_REPORT", None)
        e.update(env or {})
        cmd = cmd or [CG, "run", "--layer", TOYLAYER, *opts, "--", *prog_args]
        self.p = subprocess.Popen(cmd, env=e, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, **popen)
        self.out, self.err = [], []
        self.threads = [threading.Thread(target=lambda f, to: to.extend(f), args=(f, to), daemon=True)
                        for f, to in ((self.p.stdout, self.out), (self.p.stderr, self.err))]
        for t in self.threads:
            t.start()

    def wait_for(self, line, seconds=30):
        """Whether stdout has `line` (a whole line) within `seconds`."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and line + "\n" not in self.out and self.p.poll() is None:
            time.sleep(0.01)
        return line + "\n" in self.out

    def children(self, witness=False):
        """callguard's children: the program (and orphans of its tree), and with `witness` its signal witness
        (cg-sigwatch, docs/design.md)."""
        try:
            with open("/proc/%d/task/%d/children" % (self.p.pid, self.p.pid)) as f:
                kids = [int(k) for k in f.read().split()]
        except OSError:
            return []
        return [k for k in kids if witness or comm(k) != "cg-sigwatch"]

    def wait(self, seconds=60):
        """callguard's exit status (-N: killed by signal N), its output read to the end; None when it still runs
        after `seconds`."""
        try:
            rc = self.p.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            return None
        for t in self.threads:
            t.join(timeout=10)
        return rc

    def said(self):
        return "-- stdout:\n%s-- stderr:\n%s" % ("".join(self.out), "".join(self.err))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.p.poll() is None:
            for k in self.children(witness=True):
                try:
                    os.kill(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            self.p.kill()
        self.wait()


def report_of(prog_args, *opts, env=None):
    path = os.path.join(TMP, "r%d.json" % len(os.listdir(TMP)))
    r = guarded(prog_args, "--report", path, *opts, env=env)
    with open(path) as f:
        return r, json.load(f)


def calls(proc, name="toyAdd"):
    return sum(s["calls"] for s in proc["sites"] if s["name"] == name)


def trace_of(prog_args, *opts, env=None):
    """Runs with --trace and --report; returns the run, the parsed trace and the report."""
    n = len(os.listdir(TMP))
    tpath, rpath = os.path.join(TMP, "t%d.json" % n), os.path.join(TMP, "tr%d.json" % n)
    r = guarded(prog_args, "--trace", tpath, "--report", rpath, *opts, env=env)
    with open(tpath) as f:
        trace = json.load(f)  # the whole file is one JSON document
    r.report_path = rpath
    with open(rpath) as f:
        return r, trace, json.load(f)


def calls_in(trace, pid=None, name="toyAdd"):
    return [e for e in trace["traceEvents"]
            if e["ph"] == "X" and e["name"] == name and (pid is None or e["pid"] == pid)]


def check_complete_events(trace):
    for e in trace["traceEvents"]:
        check(e["ph"] in ("X", "M"), "only complete and metadata events: %s" % e)
        check(isinstance(e["pid"], int) and isinstance(e["tid"], int), "pid and tid: %s" % e)
        if e["ph"] == "X":
            check(isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float)) and e["dur"] >= 0
                  and e["ts"] > 0, "ts and dur in microseconds: %s" % e)
            check(e["cat"].split(",")[0] in ("call", "lock_wait"), "category: %s" % e)
            check(("api" in e["args"]) == (e["cat"].split(",")[0] == "call"), "a call names its API: %s" % e)
            check(all(v is not False for v in e["args"].values()), "no key that says false: %s" % e)
            check(("stall" in e["cat"].split(",")) == (e["args"].get("stall") is True), "a stall says so twice: %s" % e)
