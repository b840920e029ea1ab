"""Every Python thread in `callguard status` (docs/report.md, "Live: callguard
status"), on the real OpenCL stack, in the interpreter that runs this script
(tests/watchdog/CMakeLists.txt runs it in each one the build was given):
threads_prog.py's threads wait in time.sleep, on an Event, in join, in
clFinish through ctypes.CDLL and through ctypes.PyDLL (the GIL held), in a
generator and in a coroutine, and status's names and stacks are compared
with CPython's own (threading.enumerate(), sys._current_frames()).

Run as `test_threads.py TEST CALLGUARD` (a test is a function named for the
behaviour it checks, tests/cgtest.py).
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

HERE = os.path.dirname(os.path.abspath(__file__))
PROG = os.path.join(HERE, "threads_prog.py")
CG = None if listing() else sys.argv[2]
TMP = None if listing() else tempfile.mkdtemp(prefix="cgthreads-")
SETPRIV = ["setpriv", "--inh-caps=-sys_ptrace", "--bounding-set=-sys_ptrace", "--"]


def wait_lines(path=PROG):
    """{NAME: line} of threads_prog.py's "# wait: NAME" lines."""
    with open(path) as f:
        found = [(re.search(r"  # wait: (\w+)(  #.*)?$", t), n) for n, t in enumerate(f, 1)]
    return {m.group(1): n for m, n in found if m}


def skip_unless_runnable(oldest=(3, 9)):
    if os.environ.get("CG_SANITIZE"):  # an ASan-built layer cannot be preloaded into python3
        print("skipped: a sanitizer build")
        sys.exit(77)
    if sys.version_info < oldest:  # the frame reader's versions: 3.9 and later
        print("skipped: CPython %d.%d" % sys.version_info[:2])
        sys.exit(77)


class Program:
    """`[PREFIX] callguard run --api cl --report DIR/ -- python threads_prog.py ARGS`
    in its own process group, until it prints "ready"; killed (the group) on exit."""

    def __init__(self, *args, prefix=(), run_opts=()):
        self.folder = tempfile.mkdtemp(prefix="run-", dir=TMP) + "/"
        env = dict(os.environ, POCL_MAX_PTHREAD_COUNT="1")
        self.p = subprocess.Popen([*prefix, CG, "run", "--api", "cl", *run_opts, "--report", self.folder, "--",
                                   sys.executable, PROG, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True, env=env, start_new_session=True)
        ready, _, _ = select.select([self.p.stdout], [], [], 60)
        line = self.p.stdout.readline() if ready else "(nothing within 60 s)"
        if line.strip() != "ready":
            self.kill()
            check(False, "the program never got ready: %r\n%s" % (line, self.p.stderr.read()))

    def status(self, *opts, prefix=()):
        return subprocess.run([*prefix, CG, "status", *opts, self.folder], capture_output=True, text=True,
                              timeout=60)

    def kill(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait(timeout=30)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def threads_of(r):
    """The one process's "threads" and "threads_read" of `callguard status --json`."""
    check(r.returncode == 0, "status", r)
    procs = json.loads(r.stdout)["processes"]
    check(len(procs) == 1, "one process: %s" % r.stdout)
    return procs[0]["threads"], procs[0]["threads_read"]


def status_shows_every_python_thread_as_cpython_sees_it():
    """Side by side with CPython: every thread threading.enumerate() names
    is in `callguard status --json --all` under its name and OS thread id,
    its stack frame by frame (file, line, function, innermost first) as
    sys._current_frames() gave it while every thread waited, its own
    frame the first in threads_prog.py, the GIL held by the PyDLL caller
    alone, and the two clFinish callers in their guarded call."""
    skip_unless_runnable()
    truth_path = os.path.join(TMP, "truth.json")
    with Program("side", truth_path) as prog:
        # "ready" comes a moment before the holder's clFinish: until status sees it there (a loaded
        # machine may take a while), the holder still runs Python and the GIL may change hands. A
        # GIL read while it changed hands is unknown (null): asked again, it must come out held.
        asks = []
        for _ in range(50):
            r = prog.status("--json", "--all")
            threads, read = threads_of(r)
            asks.append([(t["name"], t["gil"], (t["in_call"] or {}).get("name")) for t in threads])
            if any(t["name"] == "holder" and (t["in_call"] or {}).get("name") == "clFinish" and t["gil"] is not None
                   for t in threads):
                break
            time.sleep(0.1)
        text = prog.status("--all").stdout
    with open(truth_path) as f:
        truth = json.load(f)
    check(read["answered"] and read["result"] == "ok", "answered: %s" % read)
    got = {str(t["tid"]): t for t in threads}
    check(sorted(got) == sorted(truth), "the threads: %s, CPython: %s" % (
        [(t["tid"], t["name"]) for t in threads], [(k, v["name"]) for k, v in truth.items()]))
    for tid, want in truth.items():
        t = got[tid]
        stack = [[f["file"], f["line"], f["function"]] for f in t["stack"]]
        check(t["name"] == want["name"] and t["name_from"] == "threading", "name: %s, CPython: %s" % (t, want))
        check(stack == want["stack"] and not t["more_frames"], "%s: stack\n%s\nCPython:\n%s" % (
            want["name"], "\n".join(map(str, stack)), "\n".join(map(str, want["stack"]))))
        mine = next((i for i, f in enumerate(want["stack"]) if f[0] == PROG), None)
        user = t["user_frame"]
        check(mine is not None and user and user["depth"] == mine and user["file"] == PROG,
              "%s: the user's frame: %s, expected the first in %s" % (want["name"], user, PROG))
        check(t["gil"] is (want["name"] == "holder"), "%s: gil %s; %d asks, the last ones (name, gil, call):\n%s\n%s"
              % (want["name"], t["gil"], len(asks), "\n".join(map(str, asks[-3:])), text))
        in_call = (t["in_call"] or {}).get("name")
        check(in_call == ("clFinish" if want["name"] in ("driver", "holder") else None),
              "%s: in %s" % (want["name"], in_call))


def in_a_filter_without_ptrace(argv):
    """argv run without CAP_SYS_PTRACE and under a seccomp filter that fails
    ptrace, process_vm_readv and process_vm_writev (tests/seccomp_deny.py)."""
    code = "import os, sys; sys.path.insert(0, %r); import seccomp_deny; seccomp_deny.deny_debugging(); " \
           "os.execv(sys.argv[1], sys.argv[1:])" % os.path.join(HERE, "..")
    return [*SETPRIV, sys.executable, "-c", code, *argv]


def status_names_every_threads_line_where_debugging_is_denied():
    """A program of four threads (clFinish through a helper, time.sleep, an
    Event, the main thread in join) under a seccomp filter that denies
    ptrace, process_vm_readv and process_vm_writev, without
    CAP_SYS_PTRACE, read by `callguard status DIR/` under the same filter
    and without it: each thread by its Python name, with its line in the
    program's own file, read within the second status waits."""
    skip_unless_runnable()
    if not shutil.which("setpriv"):
        print("skipped: no setpriv")
        return 77
    import seccomp_deny
    if not seccomp_deny.known():
        print("skipped: no seccomp filter written for this machine")
        return 77
    lines = wait_lines()
    with Program("four", "seccomp", prefix=SETPRIV) as prog:
        pid = int(re.search(r"pid (\d+)", prog.status("--depth", "0").stdout).group(1))
        with open("/proc/%d/status" % pid) as f:
            st = dict(line.split(":", 1) for line in f.read().splitlines())
        r = subprocess.run(in_a_filter_without_ptrace([CG, "status", prog.folder]), capture_output=True,
                           text=True, timeout=60)
    check(st["Seccomp"].strip() == "2" and not int(st["CapBnd"], 16) & (1 << 19),
          "the program runs under a filter, without CAP_SYS_PTRACE: %s %s" % (st["Seccomp"], st["CapBnd"]))
    text = " ".join(r.stdout.split())
    check(r.returncode == 0 and "Python threads: 4, answered in" in text, "status", r)
    for name, line in (("driver", lines["driver"]), ("sleeper", lines["sleeper"]), ("waiter", lines["waiter"]),
                       ("MainThread", lines["main_four"])):
        check(re.search(r'thread "%s" tid \d+, GIL not held(, in cl clFinish for [\d.]+ s)?: at [^"]*%s:%d' % (
            name, re.escape(PROG), line), text) or re.search(r'thread "%s" tid \d+, GIL not held: at .*?, from %s:%d' % (
                name, re.escape(PROG), line), text), "%s at line %d:\n%s" % (name, line, r.stdout))


def status_says_a_process_without_a_watchdog_did_not_answer_within_a_second():
    """A process that runs no watchdog (exact timing, hang page off) never
    answers: status waits a second, shows the rest and says so; --depth 0
    asks nothing and shows no threads."""
    skip_unless_runnable()
    with Program("four", run_opts=("--timing", "exact", "--hang-ms", "off")) as prog:
        start = time.monotonic()
        r = prog.status()
        waited = time.monotonic() - start
        quiet = prog.status("--depth", "0")
        threads, read = threads_of(prog.status("--json", "--depth", "0"))
    check(r.returncode == 0 and "Python threads: no answer within 1.0 s (its watchdog did not look" in
          " ".join(r.stdout.split()), "status", r)
    check(waited >= 1.0, "status waited %.2f s for the answer" % waited)
    check(quiet.returncode == 0 and "Python threads" not in quiet.stdout, "--depth 0", quiet)
    check(threads is None and read is None, "--depth 0 in JSON: %s %s" % (threads, read))


def status_depth_refuses_bad_values():
    """--depth takes 0 to 256 frames; anything else is a usage error naming it (exit 2)."""
    skip_unless_runnable()
    for value in ("-1", "257", "many", ""):
        r = subprocess.run([CG, "status", "--depth", value], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "'%s'" % value in r.stderr and len(r.stderr.splitlines()) == 1, "--depth", r)


if __name__ == "__main__":
    main()
