"""Hang reports while the hang lasts (CALLGUARD_HANG_MS, docs/report.md
"Hangs"), on the real OpenCL stack: a Python program waits forever in
clWaitForEvents holding the GIL (cl_hang.py); under `callguard run
--hang-ms 500` stderr names the call, the GIL held and the Python line
while it hangs. The test then kills the program.

Run as `test_hang.py TEST CALLGUARD` (tests/watchdog/CMakeLists.txt; a test
is a function named for the behaviour it checks, tests/cgtest.py).
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, hang_lines, listing, main  # noqa: E402  (tests/cgtest.py)

HERE = os.path.dirname(os.path.abspath(__file__))
HANG = os.path.join(HERE, "cl_hang.py")
with open(HANG) as f:  # the line of cl_hang.py's wait
    WAIT = next(n for n, text in enumerate(f, 1) if "# the line a hang report names" in text)
LATE = os.path.join(HERE, "cl_late.py")
CG = None if listing() else sys.argv[2]
TMP = None if listing() else tempfile.mkdtemp(prefix="cghang-")


def skip_unless_real_stack(why="a sanitizer build"):
    # An ASan-built layer cannot be preloaded into an uninstrumented python3
    # (docs/development.md, "Sanitizers").
    if os.environ.get("CG_SANITIZE"):
        print("skipped: " + why)
        sys.exit(77)


class Hung:
    """`callguard run OPTS -- python3 cl_hang.py` in its own process group,
    its stderr collected by a thread; killed (the group) on exit."""

    def __init__(self, *opts, args=(), script=HANG):
        self.p = subprocess.Popen([CG, "run", "--api", "cl", *opts, "--", sys.executable, script, *args],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  start_new_session=True)
        self.err = []
        self.t = threading.Thread(target=lambda: self.err.extend(self.p.stderr), daemon=True)
        self.t.start()

    def stderr_until(self, text, seconds):
        """stderr so far, once it holds `text` or `seconds` have passed."""
        end = time.monotonic() + seconds
        while time.monotonic() < end and not any(text in line for line in self.err):
            time.sleep(0.05)
        return "".join(self.err)

    def kill(self, sig=signal.SIGKILL):
        try:
            os.killpg(self.p.pid, sig)
        except ProcessLookupError:
            pass
        self.p.wait(timeout=30)
        self.t.join(timeout=5)
        return "".join(self.err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.kill()


def hang_report_names_the_call_the_gil_and_the_python_line_while_it_hangs():
    """While the program hangs: one block on stderr naming the entry point,
    its thread, the GIL held and the Python line of the wait (WAIT of
    cl_hang.py), written once (nothing changes afterwards)."""
    skip_unless_real_stack()
    with Hung("--hang-ms", "500") as h:
        err = h.stderr_until("callguard: hang: end", 20)
        check(h.p.poll() is None, "the program still runs: callguard never stops it\n" + err)
        lines = hang_lines(err)
        check(len(lines) == 3, "one block of three lines:\n" + err)
        check(all(len(l) <= 100 for l in err.splitlines() if l.startswith("callguard: hang:")),
              "each line of the block within 100 columns:\n" + err)
        check("a guarded call in flight for 500 ms or more (CALLGUARD_HANG_MS=500); 1 in flight:" in lines[0], err)
        call = lines[1]
        check(" cl clWaitForEvents num_events=1 event_list=0x" in call and "holds the GIL (cpython)" in call, err)
        check(call.endswith("python %s:%d in <module>" % (HANG, WAIT)), "the Python line of the wait: " + call)
        check(call.startswith('callguard: hang:   tid %d "python' % h.p.pid) or ' tid ' in call, call)
        time.sleep(1.5)
        err = h.kill()
        check(err.count("callguard: hang: end") == 1, "nothing changed: no second report\n" + err)


def hang_report_is_in_the_report_of_a_run_stopped_by_a_signal():
    """The statistics file keeps the hang: `callguard run --report` stopped
    with SIGTERM (passed on to the program) writes a report whose process
    shows the hung call."""
    skip_unless_real_stack()
    path = os.path.join(TMP, "hang.json")
    with Hung("--hang-ms", "300", "--report", path) as h:
        h.stderr_until("callguard: hang: end", 20)
        os.kill(h.p.pid, signal.SIGTERM)
        h.p.wait(timeout=30)
    rep = json.load(open(path))
    check([p["timing"] for p in rep["processes"]] == ["sampled"], "times sampled: %s" % rep["processes"])
    hangs = [p["hang"] for p in rep["processes"] if p.get("hang")]
    check(len(hangs) == 1 and hangs[0]["reports"] == 1, "one process with one hang report: %s" % hangs)
    calls = hangs[0]["calls"]
    check(len(calls) == 1 and calls[0]["name"] == "clWaitForEvents" and calls[0]["runtime"] == "cpython", calls)
    check(calls[0]["python"] == {"file": HANG, "line": WAIT, "function": "<module>"}, calls)
    # Read back (`callguard report`): the saved report keeps the hang, in JSON and in the table.
    again = os.path.join(TMP, "again.json")
    r = subprocess.run([CG, "report", "--json", again, path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    back = [p["hang"] for p in json.load(open(again))["processes"] if p.get("hang")]
    check(back == hangs, "read back: %s, written: %s" % (back, hangs))
    r = subprocess.run([CG, "report", path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "hang reported 1 time" in r.stdout and "cl_hang.py:%d" % WAIT in r.stdout,
          r.stdout + r.stderr)


def hang_report_names_the_python_line_of_a_wait_without_the_gil():
    """A binding that lets go of the GIL around the call (ctypes.CDLL): no
    line was noted at entry, so the hang report reads it from the thread's
    own frames (pyread.c); on stderr while it hangs, and in the report of
    the run stopped with SIGTERM."""
    skip_unless_real_stack()
    path = os.path.join(TMP, "hang-cdll.json")
    with Hung("--hang-ms", "300", "--report", path, args=("cdll",)) as h:
        err = h.stderr_until("callguard: hang: end", 20)
        call = next((l for l in hang_lines(err) if " cl clWaitForEvents num_events=1 " in l), "")
        check(call.endswith("python %s:%d in <module>" % (HANG, WAIT)) and "holds the GIL" not in call,
              "the Python line of a wait without the GIL:\n" + err)
        os.kill(h.p.pid, signal.SIGTERM)
        h.p.wait(timeout=30)
    calls = [c for p in json.load(open(path))["processes"] if p.get("hang") for c in p["hang"]["calls"]]
    check(len(calls) == 1 and calls[0]["python"] == {"file": HANG, "line": WAIT, "function": "<module>"}, calls)


def child_of(pid):
    """The pid of a child of pid (the program callguard run started, not its signal witness cg-sigwatch), or
    None."""
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                stat = f.read()
            if d.isdigit() and int(stat.rsplit(")", 1)[1].split()[1]) == pid and "(cg-sigwatch)" not in stat:
                return int(d)
        except (OSError, ValueError, IndexError):
            continue
    return None


def hang_page_is_live_for_status_and_kept_after_sigterm_without_asking():
    """No hang option: a wait through ctypes.CDLL (the GIL let go) and one
    through ctypes.PyDLL (held) are each on the hang page within 2 s of
    entering it, which `callguard status PID` reads while they hang (the
    call, the GIL held or not, the Python line); nothing on stderr; and the
    report of the run stopped with SIGTERM keeps the line."""
    skip_unless_real_stack()
    for mode, held in (("cdll", False), ("pydll", True)):
        path = os.path.join(TMP, "page-%s.json" % mode)
        with Hung("--report", path, args=(mode,)) as h:
            end = time.monotonic() + 20
            while time.monotonic() < end and not h.p.stdout.readline().startswith("waiting"):
                pass
            entered, pid, live = time.monotonic(), None, {}
            while time.monotonic() < entered + 2.0:
                pid = pid or child_of(h.p.pid)
                r = subprocess.run([CG, "status", "--json", str(pid or 0)], capture_output=True, text=True,
                                   timeout=30)
                calls = [c for p in json.loads(r.stdout)["processes"] for c in p["in_flight"]] if r.stdout else []
                if calls and calls[0]["python"]:
                    live = calls[0]
                    break
                time.sleep(0.1)
            check(live.get("name") == "clWaitForEvents" and live["holds_runtime"] is held and
                  live["python"] == {"file": HANG, "line": WAIT, "function": "<module>"},
                  "%s: status within 2 s: %s" % (mode, live))
            os.kill(h.p.pid, signal.SIGTERM)
            h.p.wait(timeout=30)
            check("callguard: hang" not in "".join(h.err), "nothing on stderr without asking: %s" % h.err)
        calls = [c for p in json.load(open(path))["processes"] for c in p["in_flight"]]
        check(len(calls) == 1 and calls[0]["python"] == {"file": HANG, "line": WAIT, "function": "<module>"},
              "%s: the report keeps the line: %s" % (mode, calls))


def hang_under_a_filter(action):
    """`callguard run --report DIR/` of cl_hang.py waiting through ctypes.CDLL
    after installing a seccomp filter on process_vm_readv (`action`: kill,
    eperm; tests/seccomp_deny.py): the first call `callguard status --json
    DIR/` shows with its Python line, within 5 s of the wait ({} if none),
    `callguard status DIR/` then, whether the program still ran then, and
    the calls in flight in the report of the run stopped with SIGTERM."""
    skip_unless_real_stack()
    sys.path.insert(0, os.path.join(HERE, ".."))
    import seccomp_deny
    if not seccomp_deny.known():
        print("skipped: no seccomp filter written for this machine")
        sys.exit(77)
    folder = tempfile.mkdtemp(prefix="seccomp-%s-" % action, dir=TMP) + "/"
    with Hung("--report", folder, args=("cdll", "seccomp=" + action)) as h:
        end = time.monotonic() + 20
        while time.monotonic() < end and not h.p.stdout.readline().startswith("waiting"):
            pass
        entered, live = time.monotonic(), {}
        while time.monotonic() < entered + 5 and h.p.poll() is None:
            r = subprocess.run([CG, "status", "--json", folder], capture_output=True, text=True, timeout=30)
            calls = [c for p in json.loads(r.stdout)["processes"] for c in p["in_flight"]] if r.stdout else []
            if calls and calls[0]["python"]:
                live = calls[0]
                break
            time.sleep(0.1)
        text = subprocess.run([CG, "status", folder], capture_output=True, text=True, timeout=30).stdout
        alive = h.p.poll() is None
        os.kill(h.p.pid, signal.SIGTERM)
        h.p.wait(timeout=30)
    reports = [os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".json")]
    calls = [c for rep in reports for p in json.load(open(rep))["processes"] for c in p["in_flight"]]
    return live, text, alive, calls, "".join(h.err), reports


def hang_page_reads_the_line_via_proc_self_mem_where_process_vm_readv_fails():
    """A program whose seccomp filter fails process_vm_readv with EPERM:
    `callguard status` names the call's Python line and says it was read
    via /proc/self/mem (text and JSON), the GIL not held; the report of
    the run keeps it so."""
    live, text, alive, calls, err, reports = hang_under_a_filter("eperm")
    line = {"file": HANG, "line": WAIT, "function": "<module>", "read_via": "/proc/self/mem"}
    check(alive and live.get("python") == line and live["holds_runtime"] is False, "status: %s\n%s" % (live, err))
    check("%s:%d in <module> (read via /proc/self/mem)" % (HANG, WAIT) in " ".join(text.split()), text)
    check(len(calls) == 1 and calls[0]["python"] == line, "the report keeps it: %s" % calls)
    again = os.path.join(TMP, "again-eperm.json")
    r = subprocess.run([CG, "report", "--json", again, reports[0]], capture_output=True, text=True, timeout=60)
    back = [c for p in json.load(open(again))["processes"] for c in p["in_flight"]] if r.returncode == 0 else []
    check([c["python"] for c in back] == [line], "read back: %s %s" % (back, r.stderr))


def hang_page_reads_the_line_of_a_program_whose_filter_kills_on_process_vm_readv():
    """A program whose seccomp filter kills it on process_vm_readv
    (SCMP_ACT_KILL_PROCESS allow-lists) runs on under callguard past a
    second in its wait: the watchdog sees the filter and reads the line
    via /proc/self/mem; `callguard status` and the report name it."""
    live, text, alive, calls, err, _ = hang_under_a_filter("kill")
    line = {"file": HANG, "line": WAIT, "function": "<module>", "read_via": "/proc/self/mem"}
    check(alive, "the program still runs a second into its wait:\n" + err)
    check(live.get("python") == line, "status: %s\n%s" % (live, err))
    check("%s:%d in <module> (read via /proc/self/mem)" % (HANG, WAIT) in " ".join(text.split()), text)
    check(len(calls) == 1 and calls[0]["python"] == line, "the report keeps it: %s" % calls)


def line_of(path, marker):
    """The number of the line of path that holds marker."""
    with open(path) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line)


def clfinish_that_returned_after_the_hang_threshold_is_named_with_its_python_line():
    """No option: a clFinish that waits 2 s and returns (cl_late.py) is in
    the report's late_calls with its duration, thread and the Python line
    the hang page read for it; the text report names it, and `callguard
    report` reads it back from the JSON."""
    skip_unless_real_stack()
    path = os.path.join(TMP, "late.json")
    r = subprocess.run([CG, "run", "--api", "cl", "--report", path, "--", sys.executable, LATE, "2"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "finished" in r.stdout, r.stdout + r.stderr)
    queue = r.stdout.split("waiting on queue ")[1].split()[0]
    where = {"file": LATE, "line": line_of(LATE, "the line a late call names"), "function": "<module>"}
    procs = json.load(open(path))["processes"]
    late = [c for p in procs for c in p["late_calls"]]
    check(len(procs) == 1 and len(late) == 1, "one late call: %s" % late)
    c = late[0]
    check(c["api"] == "cl" and c["name"] == "clFinish" and c["duration_ms"] >= 1900 and c["tid"] == procs[0]["pid"]
          and c["thread"] and c["holds_runtime"] is False and c["python"] == where and
          c["args"] == {"command_queue": queue}, "the late call: %s" % c)
    again = os.path.join(TMP, "late-again.json")
    r = subprocess.run([CG, "report", "--json", again, path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    back = [c for p in json.load(open(again))["processes"] for c in p["late_calls"]]
    check(back == late, "read back: %s, written: %s" % (back, late))
    r = subprocess.run([CG, "report", path], capture_output=True, text=True, timeout=60)
    text = re.sub(r"\s+", " ", r.stdout)
    check(r.returncode == 0 and "1 call returned after the hang threshold (1000 ms):" in text and
          "cl clFinish command_queue=%s %d ms, thread %d" % (queue, c["duration_ms"], c["tid"]) in text and
          "at %s:%d in <module>" % (LATE, where["line"]) in text, r.stdout + r.stderr)


def clfinish_that_hangs_names_its_queue_in_status_and_in_the_report():
    """No option: a clFinish that never returns (cl_late.py never) shows the
    queue it waits on, command_queue=0x... as the program printed it, in
    `callguard status PID` (text and --json) once the hang page has the call
    (1 s); the report of the run stopped with SIGTERM keeps it in in_flight,
    and its table names it."""
    skip_unless_real_stack()
    path = os.path.join(TMP, "hung-queue.json")
    with Hung("--report", path, args=("never",), script=LATE) as h:
        first = ""
        end = time.monotonic() + 20
        while time.monotonic() < end and not first.startswith("waiting"):
            first = h.p.stdout.readline()
        queue = first.split("waiting on queue ")[1].split()[0] if "queue" in first else "?"
        pid, live, text = None, {}, ""
        end = time.monotonic() + 10
        while time.monotonic() < end and not live.get("args"):
            pid = pid or child_of(h.p.pid)
            r = subprocess.run([CG, "status", "--json", str(pid or 0)], capture_output=True, text=True, timeout=30)
            calls = [c for p in json.loads(r.stdout)["processes"] for c in p["in_flight"]] if r.stdout else []
            live = calls[0] if calls else {}
            time.sleep(0.1)
        check(live.get("name") == "clFinish" and live.get("args") == {"command_queue": queue},
              "status --json names the queue %s: %s" % (queue, live))
        text = subprocess.run([CG, "status", str(pid)], capture_output=True, text=True, timeout=30).stdout
        check(" in cl clFinish command_queue=%s for " % queue in text, "status names the queue %s:\n%s" % (queue, text))
        os.kill(h.p.pid, signal.SIGTERM)
        h.p.wait(timeout=30)
    calls = [c for p in json.load(open(path))["processes"] for c in p["in_flight"]]
    check(len(calls) == 1 and calls[0]["args"] == {"command_queue": queue}, "the report's in_flight: %s" % calls)
    r = subprocess.run([CG, "report", path], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and "inside cl clFinish command_queue=%s, called " % queue in r.stdout,
          r.stdout + r.stderr)


def clfinish_in_flight_when_the_job_is_stopped_is_on_its_timeline():
    """`callguard run --trace DIR/` stopped with SIGTERM while the program
    waits in clFinish (cl_late.py never) for 2 s: `callguard trace DIR/`
    has the call, marked in flight, from its entry to the end (the
    watchdog's last look: half a second is allowed), with the Python line
    the hang page read for it."""
    skip_unless_real_stack()
    folder = os.path.join(TMP, "flight") + "/"
    with Hung("--trace", folder, script=LATE, args=("never",)) as h:
        end = time.monotonic() + 20
        while time.monotonic() < end and not h.p.stdout.readline().startswith("waiting"):
            pass
        time.sleep(2.0)
        os.kill(h.p.pid, signal.SIGTERM)
        h.p.wait(timeout=30)
    out = os.path.join(TMP, "flight-job.json")
    r = subprocess.run([CG, "trace", folder, "-o", out], capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    job = json.load(open(out))
    calls = [e for e in job["traceEvents"] if e["ph"] == "X" and e["name"] == "clFinish"]
    where = {"file": LATE, "line": line_of(LATE, "the line a late call names"), "function": "<module>"}
    check(len(calls) == 1 and calls[0]["cat"] == "call,in_flight" and calls[0]["args"]["in_flight"] is True and
          calls[0]["args"]["api"] == "cl" and calls[0]["dur"] >= 1.5e6 and calls[0]["args"].get("python") == where,
          "the clFinish in flight: %s" % calls)
    before = [e for e in job["traceEvents"] if e["ph"] == "X" and e["name"] == "clEnqueueMarkerWithWaitList"]
    check(len(before) == 1 and before[0]["ts"] + before[0]["dur"] <= calls[0]["ts"] and
          before[0]["tid"] == calls[0]["tid"], "after the thread's last call: %s %s" % (before, calls))


def status_reads_only_your_own_processes_and_says_why_not():
    """`callguard status PID` of another user's process is refused (exit 1,
    one line), never read; a folder with no live run, and a pid that is not
    under callguard, each say so; a bad argument is a usage error (exit 2)."""
    other = None
    if os.geteuid() == 0:
        other = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"])
    try:
        if other:
            time.sleep(0.2)
            r = subprocess.run([CG, "status", str(other.pid)], capture_output=True, text=True, timeout=30)
            check(r.returncode == 1 and "no such process of yours" in r.stderr and not r.stdout, r.stderr)
        r = subprocess.run([CG, "status", str(os.getpid())], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "not run by callguard run" in r.stderr, r.stderr)
        empty = tempfile.mkdtemp(prefix="cgstatus-", dir=TMP)
        r = subprocess.run([CG, "status", empty], capture_output=True, text=True, timeout=30)
        check(r.returncode == 1 and "no run of it is alive" in r.stderr, r.stderr)
        r = subprocess.run([CG, "status", "soon"], capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and "'soon'" in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr)
    finally:
        if other:
            other.kill()
            other.wait()


def status_of_a_folder_names_missing_and_ended_ranks():
    """A job of 3 ranks (the launcher's world size) in one report folder:
    rank 0 has ended (its report is there), rank 1 hangs, rank 2 never
    started. `callguard status DIR/` shows rank 1's call, names ranks 0 and
    2 missing of 3, and rank 0 among those that ended with a report."""
    skip_unless_real_stack()
    folder = os.path.join(TMP, "ranks") + "/"
    env = dict(os.environ, OMPI_COMM_WORLD_SIZE="3")
    done = subprocess.run([CG, "run", "--api", "cl", "--report", folder, "--", sys.executable, "-c",
                           "import ctypes; ctypes.CDLL('libOpenCL.so.1').clGetPlatformIDs(0, None, None)"],
                          env=dict(env, OMPI_COMM_WORLD_RANK="0"), capture_output=True, text=True, timeout=60)
    check(done.returncode == 0, done.stderr)
    p = subprocess.Popen([CG, "run", "--api", "cl", "--report", folder, "--", sys.executable, HANG, "cdll"],
                         env=dict(env, OMPI_COMM_WORLD_RANK="1"), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True, start_new_session=True)
    try:
        p.stdout.readline()
        time.sleep(1.5)
        r = subprocess.run([CG, "status", folder], capture_output=True, text=True, timeout=30)
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait(timeout=30)
    check(r.returncode == 0 and "missing: 2 of 3 ranks (0, 2)" in r.stdout, r.stdout + r.stderr)
    check(all(len(l) <= 100 for l in r.stdout.splitlines()), "within 100 columns:\n" + r.stdout)
    check("ended, with a report in the folder: rank 0 on " in r.stdout, r.stdout)
    check(re.search(r"rank 1 pid \d+ on .*in cl clWaitForEvents for", r.stdout, re.S), r.stdout)


def status_names_a_launcher_without_a_rank_by_its_pid_beside_the_ranks():
    """A rank and a process without one (a launcher: torchrun, mpirun) in one folder, neither in a call:
    one group, "rank 0 and pid P: no guarded call in flight", not "ranks 0, -1"."""
    skip_unless_real_stack()
    folder = os.path.join(TMP, "launcher") + "/"
    idle = "import ctypes, time; ctypes.CDLL('libOpenCL.so.1').clGetPlatformIDs(0, None, None); " \
           "print('ready', flush=True); time.sleep(60)"
    procs = []
    try:
        for rank in ("0", None):
            env = dict(os.environ, OMPI_COMM_WORLD_SIZE="1", OMPI_COMM_WORLD_RANK=rank) if rank else \
                {k: v for k, v in os.environ.items() if not k.startswith("OMPI_")}
            procs.append(subprocess.Popen([CG, "run", "--api", "cl", "--report", folder, "--", sys.executable, "-c",
                                           idle], env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                          text=True, start_new_session=True))
        for p in procs:
            p.stdout.readline()
        r = subprocess.run([CG, "status", folder], capture_output=True, text=True, timeout=30)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)
    check(r.returncode == 0 and re.search(r"^  rank 0 and pid \d+: no guarded call in flight$", r.stdout, re.M) and
          "-1" not in r.stdout, r.stdout + r.stderr)


def hang_reports_are_off_by_default():
    """Without --hang-ms nothing is printed however long the call hangs (the
    page is kept in the statistics file: the test above)."""
    skip_unless_real_stack()
    with Hung() as h:
        err = h.stderr_until("callguard: hang", 2.5)
        check("hang" not in err, err)


def hang_ms_and_timing_refuse_bad_values():
    """A value out of range is a usage error naming the value (exit 2)."""
    for opts, value in ((["--hang-ms", "soon"], "soon"), (["--timing", "always"], "always")):
        r = subprocess.run([CG, "run", *opts, "--", "true"], capture_output=True, text=True, timeout=60)
        check(r.returncode == 2 and value in r.stderr and len(r.stderr.splitlines()) == 1, r.stderr)


def stuck_and_on_stuck_refuse_bad_values_before_the_program_starts():
    """--stuck takes a duration with its unit from 1s to 24h, or off, and --on-stuck a word or a command; a
    bad one (or CALLGUARD_STUCK's) is one line naming it, exit 2, and the program never runs."""
    marker = os.path.join(tempfile.mkdtemp(prefix="cgstuck-"), "ran")
    cases = ((["--stuck", "3"], {}, "'3'"), (["--stuck", "0s"], {}, "'0s'"), (["--stuck", "25h"], {}, "'25h'"),
             (["--stuck", "5 m"], {}, "'5 m'"), (["--on-stuck", ""], {}, "empty value"),
             ([], {"CALLGUARD_STUCK": "soon"}, "CALLGUARD_STUCK=soon"))
    for opts, env, said in cases:
        r = subprocess.run([CG, "run", *opts, "--", "touch", marker], capture_output=True, text=True, timeout=60,
                           env=dict(os.environ, **env))
        check(r.returncode == 2 and said in r.stderr and len(r.stderr.splitlines()) == 1 and
              not os.path.exists(marker), "%s %s: %s" % (opts, env, r.stderr))
    for opts in (["--stuck", "off"], ["--stuck", "1500ms", "--on-stuck", "abort"], ["--on-stuck", "true"]):
        r = subprocess.run([CG, "run", *opts, "--", "true"], capture_output=True, text=True, timeout=60)
        check(r.returncode == 0 and not r.stderr, "%s: %s" % (opts, r.stderr))


if __name__ == "__main__":
    main()
