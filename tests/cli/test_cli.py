"""Tests of the `callguard` command. Run: test_cli.py TEST CALLGUARD PROG PROG_DLOPEN TOY_RACE TOYLIBDIR TOYLAYER.

Each test is a function of no arguments named for the behaviour it checks
(the helpers take arguments); it runs real programs under `callguard run`
and checks what they print, how they exit, and the report.
"""
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile

# `test_cli.py --list` names the tests, for ctest (tests/cgtest.cmake).
LISTING = sys.argv[1:] == ["--list"]
if not LISTING:
    TEST, CG, PROG, PROG_DLOPEN, TOY_RACE, TOYLIB, TOYLAYER = sys.argv[1:8]
    TMP = tempfile.mkdtemp(prefix="cgcli-")


def run(args, env=None, timeout=60, **kw):
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=timeout, **kw)


def guarded(prog_args, *opts, env=None):
    return run([CG, "run", "--layer", TOYLAYER, *opts, "--", *prog_args], env=env)


def report_of(prog_args, *opts, env=None):
    path = os.path.join(TMP, "r%d.json" % len(os.listdir(TMP)))
    r = guarded(prog_args, "--report", path, *opts, env=env)
    with open(path) as f:
        return r, json.load(f)


def calls(proc, name="toyAdd"):
    return sum(s["calls"] for s in proc["sites"] if s["name"] == name)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run_passes_exit_status_and_signal():
    check(guarded([PROG, "calls"]).returncode == 0, "exit 0")
    check(guarded([PROG, "exit", "3"]).returncode == 3, "exit 3")
    r = guarded([PROG, "abort"])
    check(r.returncode == -signal.SIGABRT, "killed by SIGABRT, got %d" % r.returncode)
    r = guarded(["/nonexistent/program"])
    check(r.returncode == 127 and "/nonexistent/program" in r.stderr, "127: %d %s" % (r.returncode, r.stderr))
    r = guarded(["/etc/passwd"])
    check(r.returncode == 126 and "/etc/passwd" in r.stderr, "126: %d %s" % (r.returncode, r.stderr))


def run_forwards_sigterm_and_dies_of_it():
    """A service manager stops `callguard run` with SIGTERM: the program gets
    it, and callguard exits the way the program did."""
    import time
    e = dict(os.environ)
    p = subprocess.Popen([CG, "run", "--layer", TOYLAYER, "--", "sleep", "30"], env=e)
    time.sleep(0.5)
    t0 = time.monotonic()
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=10)
    check(rc == -signal.SIGTERM and time.monotonic() - t0 < 5, "killed by SIGTERM promptly: %d" % rc)


def run_trace_lines_writes_a_line_per_call():
    path = os.path.join(TMP, "trace.txt")
    r = guarded([PROG, "calls", "7"], "--trace-lines", path)
    check(r.returncode == 0, r.stderr)
    lines = [l.split() for l in open(path).read().splitlines()]
    adds = [l for l in lines if l[:2] == ["toy", "toyAdd"]]
    check(len(adds) == 7, "one line per toyAdd call: %s" % lines)
    check(all(len(l) == 5 and l[2].isdigit() and l[3].isdigit() and l[4] == "0" for l in adds),
          "api site call_ns lock_wait_ns error: %s" % adds)


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


def run_trace_writes_one_timeline_for_the_tree():
    """--trace: Chrome trace-event JSON of parent and forked child, one
    clock: the child's calls lie between the parent's 3rd and 4th."""
    r, trace, rep = trace_of([PROG, "fork"])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    procs = {p["pid"]: p for p in rep["processes"]}
    parent = [p for p in procs.values() if calls(p) == 5][0]
    child = [p for p in procs.values() if calls(p) == 4][0]
    check(child["ppid"] == parent["pid"], "a fork tree: %s" % procs)
    pe, ce = calls_in(trace, parent["pid"]), calls_in(trace, child["pid"])
    check(len(pe) == 5 and len(ce) == 4, "one event per call, by pid: %d %d" % (len(pe), len(ce)))
    check(all(e["tid"] == parent["pid"] for e in pe) and all(e["tid"] == child["pid"] for e in ce),
          "main threads' tids are their pids")
    pe.sort(key=lambda e: e["ts"])
    check(all(pe[2]["ts"] < e["ts"] < pe[3]["ts"] for e in ce), "one clock: the child ran between the parent's "
          "3rd and 4th calls: %s %s" % ([e["ts"] for e in pe], [e["ts"] for e in ce]))
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    pnames = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    check(set(pnames) == set(procs) and all("fork" in n for n in pnames.values()), "process names: %s" % pnames)
    tnames = {(e["pid"], e["tid"]) for e in meta if e["name"] == "thread_name"}
    check(tnames == {(p, p) for p in procs}, "thread names: %s" % tnames)
    check(all(p["trace"] == {"events": calls(p), "dropped": 0} for p in rep["processes"]),
          "the report counts each process's events: %s" % rep["processes"])
    check(trace["otherData"]["dropped"] == 0 and trace["otherData"]["events"] == 9, trace["otherData"])


def run_trace_names_threads():
    r, trace, rep = trace_of([PROG, "threads", "3"])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    pid = rep["processes"][0]["pid"]
    names = {e["tid"]: e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "thread_name"}
    workers = sorted(v for v in names.values() if v.startswith("worker-"))
    check(workers == ["worker-0", "worker-1", "worker-2"], "each thread by its name: %s" % names)
    for tid, name in names.items():
        n = len([e for e in calls_in(trace, pid) if e["tid"] == tid])
        check(n == (4 if name.startswith("worker-") else 2), "%s made %d calls" % (name, n))


def run_trace_keeps_what_abort_and_exit_left():
    for mode, ends in (("abort", {"state": "signaled", "signal": 6}), ("_exit", {"state": "exited", "status": 0})):
        r, trace, rep = trace_of([PROG, mode])
        check(rep["processes"][0]["exit"] == ends, "%s: %s" % (mode, rep))
        check(len(calls_in(trace)) == 5, "%s: the 5 calls before it are in the trace" % mode)


def run_trace_follows_an_exec():
    """Two images of one pid, each with a trace file of its own: both on the
    timeline under the one pid, the new image's name last."""
    r, trace, rep = trace_of([PROG, "exec"])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    pid = rep["processes"][0]["pid"]
    ev = sorted(calls_in(trace, pid), key=lambda e: e["ts"])
    check(len(ev) == 7, "3 + 4 calls: %d" % len(ev))
    names = [e["args"]["name"] for e in trace["traceEvents"] if e["name"] == "process_name" and e["pid"] == pid]
    check(names and names[-1].endswith("calls 4") and names[0].endswith("exec"), "names in order: %s" % names)


def run_trace_shows_lock_waits():
    """Eight threads into one serialized toyCompile: the waits are events of their own."""
    r, trace, rep = trace_of([TOY_RACE], "--serialize", "toyCompile=igc")
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    waits = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["cat"].startswith("lock_wait")]
    compiles = calls_in(trace, name="toyCompile")
    check(len(compiles) == 8, "8 compiles: %d" % len(compiles))
    check(waits and all(w["name"] == "lock wait igc" and w["args"]["entry_point"] == "toyCompile" for w in waits),
          "lock waits, named for their domain: %s" % waits[:2])
    # Each wait ends where its thread's compile starts.
    starts = {(e["tid"], round(e["ts"], 3)) for e in compiles}
    check(all((w["tid"], round(w["ts"] + w["dur"], 3)) in starts for w in waits), "waits end as calls begin")
    waited = sum(s["lock_wait_ns"] for p in rep["processes"] for s in p["sites"]) / 1000.0
    check(abs(sum(w["dur"] for w in waits) - waited) < 1.0 + 0.001 * waited, "the report's lock wait, in the trace")


def run_trace_counts_drops_of_a_full_ring():
    """More calls than a thread's ring holds: the oldest are dropped and
    counted, the trace stays valid, the program is unchanged."""
    n = 200000
    r, trace, rep = trace_of([PROG, "calls", str(n)])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    kept = trace["otherData"]["events_per_thread"]
    ev = calls_in(trace)
    check(len(ev) == kept and trace["otherData"]["dropped"] == n - kept, "%d kept, %s" % (len(ev), trace["otherData"]))
    check(rep["processes"][0]["trace"] == {"events": kept, "dropped": n - kept}, "the report: %s" % rep["processes"][0])
    ts = [e["ts"] for e in ev]
    check(ts == sorted(ts), "the last calls, in order")
    check("%d dropped" % (n - kept) in r.stderr, "one line says so: %r" % r.stderr)
    text = run([CG, "report", r.report_path])
    check("timeline: %d events kept, %d dropped" % (kept, n - kept) in text.stdout, "the table: %s" % text.stdout)


def trace_in_process_writes_json_at_exit():
    """CALLGUARD_TRACE alone, without callguard run: the process writes its own trace at exit."""
    path = os.path.join(TMP, "inproc.json")
    r = run([PROG, "fork"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_TRACE": path})
    check(r.returncode == 0, r.stderr)
    trace = json.load(open(path))
    check_complete_events(trace)
    pids = {e["pid"] for e in calls_in(trace)}
    check(len(calls_in(trace)) == 5 and len(pids) == 1, "the process's own 5 calls (its child is not traced): %s"
          % pids)
    r = run([PROG, "calls"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_TRACE": "/nonexistent/dir/t.json"})
    check(r.returncode == 2 and "/nonexistent/dir/t.json" in r.stderr, "refused at start: %r" % r.stderr)


def run_reports_every_process_of_the_tree():
    r, rep = report_of([PROG, "fork"])
    check(r.returncode == 0, r.stderr)
    procs = rep["processes"]
    check(len(procs) == 2, "two processes: %s" % procs)
    parent = [p for p in procs if p["exit"].get("status") == 0 and p["exit"]["state"] == "exited" and calls(p) == 5]
    child = [p for p in procs if calls(p) == 4 and p["exit"] == {"state": "exited", "status": 0}]
    check(parent and child, "parent 3+2 calls, child 4: %s" % procs)
    check(child[0]["ppid"] == parent[0]["pid"], "child's ppid is the parent")
    check(rep["totals"]["calls"] == sum(p["totals"]["calls"] for p in procs), "totals add up")
    check(all("fork" in p["command"] for p in procs), "command lines")


def run_loses_nothing_on_abort_and_exit():
    r, rep = report_of([PROG, "abort"])
    p = rep["processes"][0]
    check(calls(p) == 5 and p["exit"] == {"state": "signaled", "signal": 6}, "abort: %s" % p)
    r, rep = report_of([PROG, "_exit"])
    p = rep["processes"][0]
    check(calls(p) == 5 and p["exit"] == {"state": "exited", "status": 0}, "_exit: %s" % p)


def run_counts_both_images_across_exec():
    r, rep = report_of([PROG, "exec"])
    check(r.returncode == 0, r.stderr)
    procs = rep["processes"]
    check(len(procs) == 2 and procs[0]["pid"] == procs[1]["pid"], "two images, one pid: %s" % procs)
    check(calls(procs[0]) == 3 and procs[0]["exit"]["state"] == "execed", "first image: %s" % procs[0])
    check(calls(procs[1]) == 4 and procs[1]["exit"] == {"state": "exited", "status": 0}, "second: %s" % procs[1])


def run_names_an_exec_into_an_image_without_calls():
    """An image that makes no guarded call keeps no statistics file, so none
    follows the image it replaced: that one is still reported as replaced by
    exec, not as the later image's exit."""
    # The new image waits until callguard has looked at the old image's file
    # (made it small), as a longer program would.
    wait = ("import glob, os, time\n"
            "end = time.time() + 20\n"
            "while time.time() < end and not any(os.stat(f).st_blocks < 2048 for f in\n"
            "        glob.glob(os.environ['CALLGUARD_STATS_DIR'] + '/cg-%d-*.stats' % os.getpid())):\n"
            "    time.sleep(0.01)\n")
    r, rep = report_of([PROG, "exec-into", sys.executable, "-c", wait])
    check(r.returncode == 0, r.stderr)
    procs = rep["processes"]
    check(len(procs) == 1 and calls(procs[0]) == 3 and procs[0]["exit"] == {"state": "execed"}, "%s" % procs)


def run_disk_grows_with_the_processes_alive_not_with_every_process():
    """A run's statistics take room for the processes alive at once, not for
    every process that ran: 300 processes without a guarded call leave no
    file; 100 with calls, one after another, each take a 2.2 MB file while
    they live and a few pages once they ended, so the directory stays far
    below 100 files' room, and ends at a few pages a process; the report
    still counts every process that made a call."""
    import threading
    tmp = tempfile.mkdtemp(prefix="disk-", dir=TMP)
    listing, usage = os.path.join(TMP, "disk-listing"), os.path.join(TMP, "disk-usage")
    region = 2236416
    # Inside the run, after the 100: wait (20 s at most) until callguard has
    # made the ended processes' files small, and say what they take.
    settle = ("import os, sys, time\n"
              "def used():\n"
              "    d = os.environ['CALLGUARD_STATS_DIR']\n"
              "    return sum(os.lstat(os.path.join(d, n)).st_blocks * 512 for n in os.listdir(d) if n.endswith('.stats'))\n"
              "end = time.time() + 20\n"
              "while used() > %d and time.time() < end:\n"
              "    time.sleep(0.01)\n"
              "open(sys.argv[1], 'w').write(str(used()))\n" % (2 * region))
    script = ('for i in $(seq 300); do /bin/true; done; ls "$CALLGUARD_STATS_DIR" > "$1"; '
              'for i in $(seq 100); do "$0" calls 3; done; "$3" -c "$4" "$2"')
    peak, files, done = [0], [0], threading.Event()

    def watch():
        while not done.is_set():
            used, big = 0, 0
            for root, _, names in os.walk(tmp):
                for n in names:
                    try:
                        st = os.lstat(os.path.join(root, n))
                    except OSError:
                        continue
                    used += st.st_blocks * 512
                    big += st.st_blocks * 512 > 1 << 20
            peak[0], files[0] = max(peak[0], used), max(files[0], big)
            done.wait(0.005)

    t = threading.Thread(target=watch)
    t.start()
    try:
        r, rep = report_of(["sh", "-c", script, PROG, listing, usage, sys.executable, settle], env={"TMPDIR": tmp})
    finally:
        done.set()
        t.join()
    check(r.returncode == 0, r.stderr)
    stats = [n for n in open(listing).read().split() if n.endswith(".stats")]
    check(not stats, "no file for 300 processes without calls: %d files" % len(stats))
    procs = rep["processes"]
    check(len(procs) == 100 and all(calls(p) == 3 for p in procs) and "processes_without_statistics" not in rep,
          "every process with calls reported: %d processes, %s" % (len(procs), rep.get("processes_without_statistics")))
    left = int(open(usage).read())
    check(left <= 2 * region and files[0] < 50,
          "after the 100: %d bytes; at most %d full files at once, %d bytes (a file is %d bytes)" %
          (left, files[0], peak[0], region))


def run_waits_for_orphans_before_the_report():
    r = guarded([PROG, "orphan"], "--report", "-")
    check(r.returncode == 0, r.stderr)
    check("exit 5" in r.stderr and "2 processes, 8 calls" in r.stderr.replace("8 calls (0 nested", "8 calls"),
          "the orphan's 7 calls and exit 5 are in the table: %s" % r.stderr)


def run_guards_a_dlopened_soname():
    plain = run([PROG_DLOPEN, "dlopen"], env={"LD_LIBRARY_PATH": TOYLIB})
    check(plain.returncode == 0, plain.stderr)
    r, rep = report_of([PROG_DLOPEN, "dlopen"], env={"LD_LIBRARY_PATH": TOYLIB})
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r vs %r" % (r.stdout, plain.stdout))
    check(calls(rep["processes"][0]) == 6, "six calls through dlsym counted once each: %s" % rep)


def run_serialize_prevents_the_compile_race():
    r = guarded([TOY_RACE])
    check(r.returncode == -signal.SIGABRT, "unserialized: the toy compiler aborts (%d)" % r.returncode)
    r = guarded([TOY_RACE], "--serialize", "toyCompile")
    check(r.returncode == 0 and "8 compiles finished" in r.stdout, "serialized: %d %s" % (r.returncode, r.stderr))


def run_report_names_calls_in_flight_and_how_the_process_died():
    """The toy compiler aborts with threads inside toyCompile. Reaped by
    callguard, the report says it died of SIGABRT; reaped by its own parent
    (a shell), the report says how it died is not known; both name the
    calls it died inside, and count them."""
    r = guarded([TOY_RACE], "--report", "-")
    check(r.returncode == -signal.SIGABRT, "%d %s" % (r.returncode, r.stderr))
    check("(killed by SIGABRT)" in r.stderr and "  died of SIGABRT with " in r.stderr, r.stderr)
    r, rep = report_of(["/bin/sh", "-c", '"$0"; echo "shell saw $?"', TOY_RACE])
    check(r.returncode == 0 and "shell saw 134" in r.stdout, "%d %s %s" % (r.returncode, r.stdout, r.stderr))
    race = [p for p in rep["processes"] if TOY_RACE in p["command"]]
    check(len(race) == 1 and race[0]["exit"] == {"state": "unknown"}, "how it died is not known: %s" % race)
    inside = [f for f in race[0]["in_flight"] if f["name"] == "toyCompile" and f["state"] == "inside"]
    check(len(inside) >= 2, "the threads inside toyCompile: %s" % race[0]["in_flight"])
    compiles = [x for x in race[0]["sites"] if x["name"] == "toyCompile"]
    check(compiles and compiles[0]["calls"] >= len(inside), "calls that never returned are counted: %s" % compiles)
    path = os.path.join(TMP, "unknown.json")
    json.dump(rep, open(path, "w"))
    t = run([CG, "report", path])
    check("ended without exit handlers (how is not known: callguard did not reap it; --signals record would note a "
          "fatal signal) with %d threads inside toyCompile" % len(inside) in t.stdout, t.stdout)


def run_signals_record_names_the_signal_of_a_process_it_did_not_reap():
    """--signals record: the toy compiler aborts with threads inside toyCompile, reaped by its own parent (a
    shell). The hook noted SIGABRT in the process's statistics file: the report says it died of SIGABRT with the
    calls in flight, in the JSON and in the table, and the process died as it would have (the shell saw 134)."""
    r, rep = report_of(["/bin/sh", "-c", '"$0"; echo "shell saw $?"', TOY_RACE], "--signals", "record")
    check(r.returncode == 0 and "shell saw 134" in r.stdout, "%d %s %s" % (r.returncode, r.stdout, r.stderr))
    race = [p for p in rep["processes"] if TOY_RACE in p["command"]]
    check(len(race) == 1 and race[0]["exit"] == {"state": "signaled", "signal": 6, "signal_hook": True},
          "the signal the hook noted: %s" % race)
    inside = [f for f in race[0]["in_flight"] if f["name"] == "toyCompile" and f["state"] == "inside"]
    check(len(inside) >= 2, "the threads inside toyCompile: %s" % race[0]["in_flight"])
    path = os.path.join(TMP, "hooked.json")
    json.dump(rep, open(path, "w"))
    t = run([CG, "report", path])
    check("  died of SIGABRT with %d threads inside toyCompile" % len(inside) in t.stdout, t.stdout)
    # The same through the environment; and a process that exits normally is not "signaled".
    r, rep = report_of([PROG, "calls"], env={"CALLGUARD_SIGNALS": "record"})
    check(r.returncode == 0 and rep["processes"][0]["exit"] == {"state": "exited", "status": 0}, "%s" % rep)


def run_signals_record_keeps_the_programs_own_handler():
    """--signals record and a program's own SIGSEGV handler: set after callguard's (sigaction or signal, in
    main: it reads its own handler back), or before it (the C API turns the hook on later), it still runs on a
    real fault, and the program exits as its handler says; a handler that repairs the fault lets the program go
    on. A fault with no handler still kills the program with SIGSEGV."""
    for how in ("sigaction", "signal"):
        r = guarded([PROG, "own-segv", how], "--signals", "record")
        check(r.returncode == 42 and r.stdout == "own handler ran\n", "%s: %d %r %s" % (how, r.returncode, r.stdout,
                                                                                         r.stderr))
    r = guarded([PROG, "own-segv", "before"])
    check(r.returncode == 42 and r.stdout == "own handler ran\n", "before: %d %r %s" % (r.returncode, r.stdout, r.stderr))
    r, rep = report_of([PROG, "own-segv", "recover"], "--signals", "record")
    check(r.returncode == 0 and r.stdout == "own handler ran\nrecovered\n", "recover: %d %r" % (r.returncode, r.stdout))
    check(rep["processes"][0]["exit"] == {"state": "exited", "status": 0}, "%s" % rep["processes"][0]["exit"])
    # No handler of the program's: it ends as it does without the hook (killed by SIGSEGV; in a sanitizer
    # build, the sanitizer's own handler, set before callguard's, reports and exits).
    plain = guarded([PROG, "segv"])
    r = guarded([PROG, "segv"], "--signals", "record")
    check(r.returncode == plain.returncode and r.returncode != 0, "no handler: %d, without the hook %d %s"
          % (r.returncode, plain.returncode, r.stderr))


def run_signals_rejects_a_bad_value():
    """--signals and CALLGUARD_SIGNALS take record or off; anything else stops the run before the program."""
    marker = os.path.join(TMP, "started-signals")
    for opts, env in ((["--signals", "on"], None), ([], {"CALLGUARD_SIGNALS": "yes"})):
        r = guarded([PROG, "touch", marker], *opts, env=env)
        check(r.returncode == 2 and "expected record" in r.stderr and not os.path.exists(marker),
              "%s %s: %d %s" % (opts, env, r.returncode, r.stderr))


def signals_record_lets_a_handler_call_sigaction():
    """--signals record: a SIGUSR1 handler reads SIGBUS's action (sigaction is async-signal-safe) while the
    thread it interrupted is inside sigaction for SIGBUS; the program completes (a hang ends as SIGALRM), and
    each read sees a whole action."""
    prog = os.environ["CG_SIGPROG"]
    for r in (run([prog, "reenter"]), guarded([prog, "reenter"], "--signals", "record")):
        check(r.returncode == 0 and r.stdout == "done\n", "%d %r %s" % (r.returncode, r.stdout, r.stderr))


def signals_record_keeps_nodefer_resethand_and_the_programs_mask():
    """--signals record: a program's SIGSEGV handler runs with exactly the mask and flags the program asked for.
    SA_NODEFER and a jump out without restoring the mask catch three faults; without SA_NODEFER the second
    fault kills; sa_mask stays blocked after such a jump; SA_RESETHAND reads back SIG_DFL in the handler, and
    the repeated fault kills; SA_SIGINFO gets the fault's address; an ignored SIGBUS sent stays ignored. Each
    prints and ends the same with the hook as without it."""
    prog = os.environ["CG_SIGPROG"]
    modes = (["fault-3", "nodefer", "0"], ["fault-3", "nodefer", "1"], ["fault-3", "defer", "0"],
             ["fault-3", "defer", "1"], ["resethand"], ["ignore"])
    for mode in modes:
        plain = run([prog, *mode])
        r = guarded([prog, *mode], "--signals", "record")
        check((r.returncode, r.stdout) == (plain.returncode, plain.stdout),
              "%s: with the hook %d %r, without %d %r %s" % (mode, r.returncode, r.stdout, plain.returncode,
                                                           plain.stdout, r.stderr))
        if mode == modes[0]:
            check(plain.returncode == 0 and "caught 3" in plain.stdout, "%d %r" % (plain.returncode, plain.stdout))
        if mode == ["resethand"]:
            check(plain.returncode == -signal.SIGSEGV and "reads back SIG_DFL" in plain.stdout, plain.stdout)
    # After SA_RESETHAND the hook is still there to note the death, in a process callguard did not reap.
    r, rep = report_of(["/bin/sh", "-c", '"$0" resethand >/dev/null; echo "shell saw $?"', prog], "--signals", "record")
    died = [p["exit"] for p in rep["processes"] if prog in p["command"]]
    check("shell saw 139" in r.stdout and died == [{"state": "signaled", "signal": 11, "signal_hook": True}],
          "%r %s" % (r.stdout, died))


# What the hook may add to the deepest use of a program's alternate signal stack, in bytes. Its handler adds
# nothing (0 measured: it jumps to the program's); the interposed sigaction() and signal(), called from a
# handler, about 100 more than libc's.
ALT_STACK_MARGIN = 128


def signals_record_fits_the_programs_alternate_stack():
    """--signals record: a fault's handler on an alternate stack, alone or putting SIG_DFL back first, uses at
    most ALT_STACK_MARGIN bytes more of it with the hook than without (the deepest byte that lost a fill pattern,
    both measured in this run, with lazy binding and with LD_BIND_NOW: the dynamic linker's binding of a first
    call is a few thousand bytes), and a stack overflow caught on an alternate stack that plainly fits with that
    margin is still caught."""
    prog = os.environ["CG_SIGPROG"]
    used = {}
    for env in ({}, {"LD_BIND_NOW": "1"}):
        for handler in ("quiet", "reset"):
            plain = run([prog, "alt-used", handler], env=env)
            r = guarded([prog, "alt-used", handler], "--signals", "record", env=env)
            check(plain.returncode == 0 and r.returncode == 0, "%d %d %s" % (plain.returncode, r.returncode, r.stderr))
            used[handler, bool(env)] = int(plain.stdout)
            check(int(r.stdout) <= int(plain.stdout) + ALT_STACK_MARGIN, "%s %s: the hook used %s bytes of the "
                  "alternate stack, the program alone %s" % (handler, env, r.stdout.strip(), plain.stdout.strip()))
    size = max((used["quiet", False] + ALT_STACK_MARGIN + 63) // 64 * 64, 2048)
    for r in (run([prog, "overflow", str(size)]), guarded([prog, "overflow", str(size)], "--signals", "record")):
        check(r.returncode == 0 and r.stdout.endswith("caught the overflow\n"),
              "a %d-byte alternate stack (%d used): %d %r %s" % (size, used["quiet", False], r.returncode, r.stdout,
                                                                 r.stderr))


def run_prepends_existing_preload():
    other = os.path.join(TOYLIB, "libcgtoy.so")
    r = guarded([PROG, "env", "LD_PRELOAD"], env={"LD_PRELOAD": other})
    parts = r.stdout.strip().split(":")
    check(parts[-1] == other and parts[0].endswith("libcallguard_toy.so"), "layer first, then theirs: %s" % r.stdout)


def run_shim_does_not_loop_through_a_forwarding_interposer():
    spy = os.path.join(TOYLIB, "libcg_toy_spy.so")
    plain = run([PROG, "calls", "9"], env={"LD_PRELOAD": spy})
    check(plain.returncode == 0 and "spy saw 9 toyAdd calls" in plain.stderr, plain.stderr)
    r, rep = report_of([PROG, "calls", "9"], env={"LD_PRELOAD": spy})
    check(r.returncode == 0, "exit %d: %s" % (r.returncode, r.stderr[-300:]))
    check("spy saw 9 toyAdd calls" in r.stderr, "the spy still sees every call once: %s" % r.stderr)
    s = [x for x in rep["processes"][0]["sites"] if x["name"] == "toyAdd"][0]
    # The layer guards the call; the spy forwards into the shim, which passes it
    # straight through as nested (no second lock).
    check(s["calls"] - s["nested"] == 9, "guarded once each: %s" % s)


def run_rejects_bad_options_before_starting():
    marker = os.path.join(TMP, "started")
    bad = [
        (["--serialize", "toyCompil"], "toyCompil"),
        (["--serialize", "toyCompile=bad name"], "bad name"),
        (["--transition", "sometimes"], "expected always, blocking or never"),
        (["--stall-ms", "-5"], "-5"),
        (["--stall-ms", "-1"], "'-1': expected a whole number of milliseconds from 1 to 3600000"),
        (["--stall-ms", "abc"], "'abc': expected a whole number of milliseconds from 1 to 3600000"),
        (["--stall-ms", "0"], "'0': expected a whole number"),
        (["--stall-ms", ""], "expected a whole number"),
        (["--stall-ms", "12ms"], "'12ms'"),
        (["--api", "opengl"], "opengl"),
        (["--report", "/nonexistent/dir/r.json"], "/nonexistent/dir/r.json"),
        (["--trace", "/nonexistent/dir/t.json"], "/nonexistent/dir/t.json"),
        (["--trace", TMP], "is a directory"),
        (["--trace", "-"], "expected a file name"),
        (["--trace-lines", "/nonexistent/dir/t.txt"], "/nonexistent/dir/t.txt"),
        (["--bogus"], "--bogus"),
    ]
    for opts, says in bad:
        r = run([CG, "run", *(["--layer", TOYLAYER] if "--api" not in opts else []), *opts, "--", PROG, "touch", marker])
        check(r.returncode == 2, "%s: exit %d" % (opts, r.returncode))
        check(says in r.stderr and r.stderr.count("\n") == 1, "%s: one line naming it: %r" % (opts, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % opts)
    # The same value from the environment stops the run as early.
    for bad in ("-1", "abc"):
        r = run([CG, "run", "--layer", TOYLAYER, "--", PROG, "touch", marker], env={"CALLGUARD_STALL_MS": bad})
        check(r.returncode == 2 and "CALLGUARD_STALL_MS=%s" % bad in r.stderr, "env %s: %r" % (bad, r.stderr))
        check(not os.path.exists(marker), "env %s: the program must not start" % bad)
    # A refused run creates no --trace-lines file either.
    lines = os.path.join(TMP, "refused-lines.txt")
    r = run([CG, "run", "--layer", TOYLAYER, "--trace-lines", lines, "--report", "/nonexistent/dir/r.json", "--",
             PROG, "touch", marker])
    check(r.returncode == 2 and not os.path.exists(lines), "no lines file left: %d %r" % (r.returncode, r.stderr))
    r = run([CG, "run"])
    check(r.returncode == 2 and "no program" in r.stderr, "no program: %r" % r.stderr)
    r = run([CG, "frobnicate"])
    check(r.returncode == 2, "unknown command")
    r = run([CG, "--help"])
    check(r.returncode == 0 and "callguard run" in r.stdout and "--serialize" in r.stdout, "help")


def run_refuses_one_file_for_two_outputs():
    """--report, --trace and --trace-lines naming one file (by the same name
    or another spelling of it) are refused before the program starts, naming
    both options: the file written last would replace the other with exit
    status 0, and that output would be lost unsaid."""
    marker = os.path.join(TMP, "started-twice")
    d = tempfile.mkdtemp(prefix="twice-", dir=TMP)
    f = os.path.join(d, "out.json")
    cases = [
        (["--report", f, "--trace", f], "--report and --trace"),
        (["--report", f, "--trace", os.path.join(d, ".", "out.json")], "--report and --trace"),
        (["--trace", f, "--trace-lines", f], "--trace and --trace-lines"),
        (["--report", f, "--trace-lines", os.path.join(os.path.dirname(d), os.path.basename(d), "out.json")],
         "--report and --trace-lines"),
    ]
    for opts, says in cases:
        r = run([CG, "run", "--layer", TOYLAYER, *opts, "--", PROG, "touch", marker])
        check(r.returncode == 2 and says in r.stderr and "one file" in r.stderr and r.stderr.count("\n") == 1,
              "%s: %d %r" % (opts, r.returncode, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % opts)
        check(not os.path.exists(f), "%s: no file is left" % opts)
    r = run([CG, "run", "--layer", TOYLAYER, "--report", "/dev/null", "--trace", "/dev/null", "--trace-lines", "-",
             "--", PROG, "touch", marker])
    check(r.returncode == 0 and os.path.exists(marker), "a device takes both, stderr is not a file: %r" % r.stderr)


def cli_own_runtime_reports_and_writes_nothing():
    """The CLI's own libcallguard guards no program: CALLGUARD_REPORT left in
    the environment of `callguard run --report F` neither empties F nor
    writes another file, and the CLI creates nothing where CALLGUARD_STATS_DIR,
    CALLGUARD_TRACE_LINES or CALLGUARD_REPORT point."""
    d = tempfile.mkdtemp(prefix="own-", dir=TMP)
    f = os.path.join(d, "r.json")
    e = os.environ.copy()
    e["CALLGUARD_REPORT"] = f
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", f, "--", PROG, "calls", "3"], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    check(calls(json.load(open(f))["processes"][0]) == 3, "the run's report is kept: %r" % open(f).read())
    e["CALLGUARD_REPORT"] = os.path.join(d, "other.json")
    e["CALLGUARD_STATS_DIR"] = d
    e["CALLGUARD_TRACE_LINES"] = os.path.join(d, "lines.txt")
    for args in (["list"], ["list", TOYLAYER], ["report", f]):
        r = subprocess.run([CG, *args], env=e, capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "%s: %r" % (args, r.stderr))
        check(os.listdir(d) == ["r.json"], "%s wrote nothing: %s" % (args, os.listdir(d)))


def run_refuses_each_validation_gap():
    """Values that used to slip through: each one is refused before the
    program starts, in one line, naming what is accepted."""
    marker = os.path.join(TMP, "started-gap")
    bad = [
        (["--report", "--"], "--report needs a value"),
        (["--trace", "--"], "--trace needs a value"),
        (["--serialize", ","], "empty item"),
        (["--serialize", "toyAdd,,toyCompile"], "empty item"),
        (["--serialize", "toyAdd,"], "empty item"),
        (["--api", "a" * 300], "1 to 31"),
        (["--api", "toy,"], "comma-separated"),
        (["--stall-ms", " 5"], "' 5': expected a whole number"),
        (["--stall-ms", "+5"], "'+5': expected a whole number"),
        (["--serialize", "toy\nAdd"], "toy\\nAdd"),
        (["--serialize", "toyAdd=\x1b[31mred"], "\\x1b[31mred"),
        (["--report", TMP], "is a directory"),
    ]
    for opts, says in bad:
        r = run([CG, "run", *(["--layer", TOYLAYER] if "--api" not in opts else []), *opts, "--", PROG, "touch", marker])
        check(r.returncode == 2, "%s: exit %d %r" % (opts, r.returncode, r.stderr))
        check(says in r.stderr and r.stderr.count("\n") == 1 and "\x1b" not in r.stderr,
              "%s: one line naming it: %r" % (opts, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % opts)
    # In the program itself (no callguard run): refused at start-up, before main.
    for var, value, says in [("CALLGUARD_REPORT", TMP, "is a directory"),
                             ("CALLGUARD_REPORT", "/nonexistent/dir/r.json", "/nonexistent/dir"),
                             ("CALLGUARD_SERIALIZE", "toyAdd,", "empty item"),
                             ("CALLGUARD_STALL_MS", " 5", "' 5'"),
                             ("CALLGUARD_TOY_LIBRARY", "/etc/passwd", "not a shared library"),
                             ("CALLGUARD_SERIALIZE", "a\nb", "a\\nb")]:
        r = run([PROG, "touch", marker], env={"LD_PRELOAD": TOYLAYER, var: value})
        check(r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1,
              "%s=%r: exit 2, one line: %d %r" % (var, value, r.returncode, r.stderr))
        check(not os.path.exists(marker), "%s=%r: main must not run" % (var, value))
        check(not os.path.exists("/nonexistent/dir"), "nothing created")


def run_refuses_output_names_that_can_never_be_created():
    """--report, --trace and --trace-lines names that no file can have (a
    last name over NAME_MAX with the new file's 7-byte suffix, a whole path
    over PATH_MAX, a name under a file, a missing folder) are refused before
    the program starts: exit 2, one line naming the value, nothing created.
    The longest name that fits (248 bytes: 255 less the suffix) is written."""
    marker = os.path.join(TMP, "started-name")
    d = tempfile.mkdtemp(prefix="names-", dir=TMP)
    plain = os.path.join(d, "plain")
    open(plain, "w").close()
    # Folders that exist, and a path of 4,093 bytes: PATH.XXXXXX would have 4,100.
    deep = os.path.join(d, "deep")
    while len(deep) + 201 < 4080:
        deep = os.path.join(deep, "d" * 200)
    deep = os.path.join(deep, "d" * (4088 - len(deep)))
    os.makedirs(deep)
    deep = os.path.join(deep, "r.x")
    check(len(deep) == 4093, len(deep))
    cases = [
        ("--report", os.path.join(d, "a" * 300 + ".json")),
        ("--report", os.path.join(d, "b" * 250)),
        ("--trace", os.path.join(d, "c" * 249)),
        ("--trace-lines", os.path.join(d, "e" * 256)),
        ("--report", os.path.join(d, "x" * 300, "r.json")),
        ("--trace", deep),
        ("--report", os.path.join(plain, "r.json")),
        ("--trace-lines", os.path.join(plain, "t.txt")),
        ("--trace", os.path.join(d, "missing", "t.json")),
    ]
    for flag, value in cases:
        r = run([CG, "run", "--layer", TOYLAYER, flag, value, "--", PROG, "touch", marker])
        check(r.returncode == 2, "%s %s...: exit %d %r" % (flag, value[:60], r.returncode, r.stderr))
        check(flag in r.stderr and (value if len(value) < 400 else value[:200]) in r.stderr and
              r.stderr.count("\n") == 1,
              "%s: one line naming the value: %r" % (flag, r.stderr[:300]))
        check(not os.path.exists(marker), "%s %s...: the program must not start" % (flag, value[:60]))
        check(sorted(os.listdir(d)) == ["deep", "plain"] and not os.path.exists(deep),
              "%s: nothing created: %s" % (flag, os.listdir(d)))
    fits = os.path.join(d, "f" * 248)
    r = guarded([PROG, "calls", "2"], "--report", fits)
    check(r.returncode == 0 and calls(json.load(open(fits))["processes"][0]) == 2, "248 bytes fit: %r" % r.stderr)
    # In the program itself: CALLGUARD_REPORT and CALLGUARD_TRACE refused at start-up.
    for var in ("CALLGUARD_REPORT", "CALLGUARD_TRACE"):
        r = run([PROG, "touch", marker], env={"LD_PRELOAD": TOYLAYER, var: os.path.join(d, "g" * 250)})
        check(r.returncode == 2 and "g" * 250 in r.stderr and "255" in r.stderr and r.stderr.count("\n") == 1,
              "%s: exit 2, one line: %d %r" % (var, r.returncode, r.stderr[-300:]))
        check(not os.path.exists(marker), "%s: main must not run" % var)


def messages_show_control_bytes_of_values_escaped():
    """A value with a terminal escape, a newline, a tab or a C1 control
    (U+009B, CSI for some terminals) reaches stderr as \\x1b, \\n, \\t and
    \\xc2\\x9b, in one line: from CALLGUARD_* variables read by the runtime
    in a program, and from the command's own arguments. The report's table
    on stderr shows such bytes of a program's arguments as '?'."""
    v = "a\x1b[31mb\nc\td\u009be"
    shown = b"a\\x1b[31mb\\nc\\td\\xc2\\x9be"
    marker = os.path.join(TMP, "started-escape")

    def one_line(args, env, what):
        e = dict(os.environ)
        e.pop("CALLGUARD_REPORT", None)
        e.update(env)
        r = subprocess.run(args, env=e, capture_output=True, timeout=60)
        err = r.stderr
        check(r.returncode != 0 and err.count(b"\n") == 1 and shown in err, "%s: %d %r" % (what, r.returncode, err))
        check(not any(b < 0x20 and b != 0x0a or b == 0x7f for b in err) and b"\xc2\x9b" not in err,
              "%s: a control byte on stderr: %r" % (what, err))
        check(not os.path.exists(marker), "%s: the program must not start" % what)

    for var, value in [("CALLGUARD_TRANSITION", v), ("CALLGUARD_SERIALIZE", "toyAdd=" + v),
                       ("CALLGUARD_POLICY", "/nonexistent/" + v), ("CALLGUARD_TOY_LIBRARY", "/nonexistent/" + v),
                       ("CALLGUARD_TRACE_LINES", "/nonexistent/" + v), ("CALLGUARD_REPORT", "/nonexistent/" + v),
                       ("CALLGUARD_QUIRKS", "/nonexistent/" + v), ("CALLGUARD_X" + v, "1")]:
        one_line([PROG, "touch", marker], {"LD_PRELOAD": TOYLAYER, var: value}, var)
    one_line([CG, "run", "--layer", "/nonexistent/" + v, "--", PROG, "touch", marker], {}, "--layer")
    one_line([CG, "run", "--layer", TOYLAYER, "--serialize", "toyAdd=" + v, "--", PROG, "touch", marker], {},
             "--serialize")
    one_line([CG, "run", "--layer", TOYLAYER, "--", "/nonexistent/" + v], {}, "the program's name")
    one_line([CG, "list", "/nonexistent/" + v], {}, "list")
    one_line([CG, "report", "/nonexistent/" + v], {}, "report")
    # A statistics folder that cannot be had: the program runs on, the line says so escaped.
    e = dict(os.environ, LD_PRELOAD=TOYLAYER, CALLGUARD_STATS_DIR="/nonexistent/" + v)
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([PROG, "calls", "1"], env=e, capture_output=True, timeout=60)
    check(r.returncode == 0 and shown in r.stderr and r.stderr.count(b"\n") == 1, "CALLGUARD_STATS_DIR: %r" % r.stderr)
    check(not any(b < 0x20 and b != 0x0a or b == 0x7f for b in r.stderr) and b"\xc2\x9b" not in r.stderr,
          "CALLGUARD_STATS_DIR: a control byte on stderr: %r" % r.stderr)
    # The table on stderr (CALLGUARD_REPORT=-): the program's own arguments as '?'.
    e = dict(os.environ, LD_PRELOAD=TOYLAYER, CALLGUARD_REPORT="-")
    r = subprocess.run([PROG, "calls", "1", v], env=e, capture_output=True, timeout=60)
    check(r.returncode == 0 and b"calls 1 a?[31mb?c?d??e" in r.stderr, r.stderr)
    check(not any(b < 0x20 and b != 0x0a or b == 0x7f for b in r.stderr) and b"\xc2\x9b" not in r.stderr,
          "a control byte in the table: %r" % r.stderr)


def report_replaces_a_planted_symlink_never_follows_it():
    """A symlink planted at the report's name is replaced by the report; its
    target is left as it was. The report is a new file of mode 0600."""
    d = tempfile.mkdtemp(prefix="link-", dir=TMP)
    victim = os.path.join(d, "victim")
    for how in ("run", "in-process"):
        with open(victim, "w") as f:
            f.write("keep\n")
        link = os.path.join(d, "report-%s.json" % how)
        os.symlink(victim, link)
        if how == "run":
            r = guarded([PROG, "calls", "2"], "--report", link)
        else:
            r = run([PROG, "calls", "2"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_REPORT": link})
        check(r.returncode == 0, "%s: %r" % (how, r.stderr))
        check(open(victim).read() == "keep\n", "%s: the symlink's target is untouched" % how)
        check(not os.path.islink(link) and calls(json.load(open(link))["processes"][0], "toyAdd") == 2,
              "%s: the link was replaced by the report" % how)
        check(os.stat(link).st_mode & 0o777 == 0o600, "%s: mode 0600: %o" % (how, os.stat(link).st_mode))
        check(sorted(os.listdir(d)) == sorted(["victim"] + [n for n in os.listdir(d) if n.startswith("report-")])
              and not [n for n in os.listdir(d) if "XXXX" in n or n.count(".") > 1], "no temporary left: %s" % os.listdir(d))
    for how in ("run", "in-process"):
        with open(victim, "w") as f:
            f.write("keep\n")
        link = os.path.join(d, "trace-%s.json" % how)
        os.symlink(victim, link)
        if how == "run":
            r = guarded([PROG, "calls", "2"], "--trace", link)
        else:
            r = run([PROG, "calls", "2"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_TRACE": link})
        check(r.returncode == 0, "trace %s: %r" % (how, r.stderr))
        check(open(victim).read() == "keep\n", "trace %s: the symlink's target is untouched" % how)
        check(not os.path.islink(link) and len(calls_in(json.load(open(link)))) == 2,
              "trace %s: the link was replaced by the trace" % how)
        check(os.stat(link).st_mode & 0o777 == 0o600, "trace %s: mode 0600" % how)
    dangling = os.path.join(d, "dangling")
    os.symlink(os.path.join(d, "created-through-link"), dangling)
    r = guarded(["/nonexistent/program"], "--report", dangling)
    check(r.returncode == 127 and not os.path.exists(os.path.join(d, "created-through-link")),
          "checking the report's name creates nothing through a dangling symlink: %s" % os.listdir(d))


FOREIGN_TRACE = ('{"traceEvents":[{"name":"x","ph":"X","ts":0,"dur":1,"pid":1,"tid":1}],'
                 '"otherData":{"producer":"another tracer 1.0"}}\n')


def run_refuses_to_replace_a_file_not_its_own():
    """--report FILE and --trace FILE naming a file that is not callguard's
    (a typo: `--trace data.csv`) are refused before the program starts, in
    one line naming the option, the file and what is replaced; the file is
    left as it was and nothing is created beside it."""
    marker = os.path.join(TMP, "started-foreign")
    for flag in ("--report", "--trace"):
        for content, says in (("precious\n", "the file exists (9 bytes) and is not a callguard report or timeline"),
                              (FOREIGN_TRACE, "is a timeline of another producer")):
            d = tempfile.mkdtemp(prefix="foreign-", dir=TMP)
            path = os.path.join(d, "data.csv")
            with open(path, "w") as f:
                f.write(content)
            os.chmod(path, 0o644)
            r = guarded(["sh", "-c", "touch " + marker], flag, path)
            check(r.returncode == 2 and r.stderr.count("\n") == 1, "%s: exit 2, one line: %d %r"
                  % (flag, r.returncode, r.stderr))
            check(r.stderr.startswith("callguard: %s %s: " % (flag, path)) and says in r.stderr
                  and "callguard replaces only its own reports and timelines and empty files" in r.stderr,
                  "%s: names the option, the file, what it is and what is replaced: %r" % (flag, r.stderr))
            check(not os.path.exists(marker), "%s: the program must not run" % flag)
            check(open(path).read() == content and os.stat(path).st_mode & 0o777 == 0o644,
                  "%s: the file is untouched" % flag)
            check(os.listdir(d) == ["data.csv"], "%s: nothing left beside it: %s" % (flag, os.listdir(d)))


def run_replaces_its_own_outputs_and_empty_files():
    """Re-running into the same file works: a report or timeline of an
    earlier run (of either kind, JSON or the text table) and an empty file
    are replaced."""
    d = tempfile.mkdtemp(prefix="own-", dir=TMP)
    rep, tl, txt, empty = (os.path.join(d, n) for n in ("r.json", "t.json", "r.txt", "empty"))
    for n in (2, 3):
        r = guarded([PROG, "calls", str(n)], "--report", rep, "--trace", tl)
        check(r.returncode == 0, r.stderr)
        check(calls(json.load(open(rep))["processes"][0]) == n and len(calls_in(json.load(open(tl)))) == n,
              "run %d: both files replaced" % n)
    with open(txt, "w") as f:
        f.write(run([CG, "report", rep]).stdout)
    check(open(txt).read().startswith("callguard: "), "a text report: %r" % open(txt).read()[:80])
    for flag, path in (("--report", txt), ("--trace", rep), ("--report", tl), ("--trace", empty)):
        if path == empty:
            open(empty, "w").close()
        r = guarded([PROG, "calls", "4"], flag, path)
        check(r.returncode == 0, "%s %s: %r" % (flag, path, r.stderr))
        got = json.load(open(path))
        n = calls(got["processes"][0]) if flag == "--report" else len(calls_in(got))
        check(n == 4, "%s %s: replaced by the new output" % (flag, path))
    open(empty, "w").close()
    r = guarded([PROG, "calls", "4"], "--report", empty)
    check(r.returncode == 0 and calls(json.load(open(empty))["processes"][0]) == 4, "an empty file: %r" % r.stderr)
    check(sorted(os.listdir(d)) == ["empty", "r.json", "r.txt", "t.json"], "no temporary left: %s" % os.listdir(d))


def output_never_replaces_a_file_that_appeared_during_the_run():
    """In-process (CALLGUARD_REPORT, CALLGUARD_TRACE) and a file the program
    made under `callguard run`: a file at the name that is not callguard's
    at exit is never replaced. The output is kept beside it as
    FILE.callguard-KIND (or FILE.XXXXXX when that name is taken by a file
    not callguard's either), one line on stderr says where and why, and
    the program's exit status is kept in-process."""
    d = tempfile.mkdtemp(prefix="inproc-foreign-", dir=TMP)
    path = os.path.join(d, "precious")
    for var, kind in (("CALLGUARD_REPORT", "report"), ("CALLGUARD_TRACE", "timeline")):
        kept = path + ".callguard-" + kind
        for attempt in (1, 2):  # the second run replaces the output the first one kept
            with open(path, "w") as f:
                f.write("precious\n")
            r = run([PROG, "exit", "3"], env={"LD_PRELOAD": TOYLAYER, var: path})
            check(r.returncode == 3, "%s: the program's exit status: %d %r" % (var, r.returncode, r.stderr))
            check(open(path).read() == "precious\n", "%s: the file is untouched" % var)
            line = [ln for ln in r.stderr.splitlines() if ln.startswith("callguard: ")]
            check(len(line) == 1 and ("%s written to %s, not %s: the file exists (9 bytes)" % (kind, kept, path))
                  in line[0], "%s: one line says where the output went and why: %r" % (var, r.stderr))
            got = json.load(open(kept))
            check(("processes" in got) if kind == "report" else ("traceEvents" in got), "%s: the output" % var)
            check(sorted(os.listdir(d)) == sorted(["precious", kept[len(d) + 1:]] + (
                ["precious.callguard-report"] if kind == "timeline" else [])), "%s: %s" % (var, os.listdir(d)))
    with open(path + ".callguard-report", "w") as f:
        f.write("mine too\n")
    r = run([PROG, "calls", "2"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_REPORT": path})
    tmp = [n for n in os.listdir(d) if n.startswith("precious.") and not n.startswith("precious.callguard-")]
    check(r.returncode == 0 and len(tmp) == 1 and ("written to %s/%s, not %s" % (d, tmp[0], path)) in r.stderr,
          "the kept name taken: the temporary file stays: %s %r" % (os.listdir(d), r.stderr))
    check(open(path + ".callguard-report").read() == "mine too\n", "and that file is untouched")
    check(calls(json.load(open(os.path.join(d, tmp[0])))["processes"][0]) == 2, "the report")
    fresh = os.path.join(TMP, "made-during-run.csv")
    r = guarded(["sh", "-c", 'echo precious > "$0"', fresh], "--report", fresh)
    check(open(fresh).read() == "precious\n" and r.returncode == 125, "run: untouched, 125: %d" % r.returncode)
    check(("report written to %s.callguard-report, not %s" % (fresh, fresh)) in r.stderr, r.stderr)
    check("processes" in json.load(open(fresh + ".callguard-report")), "run: the report is kept")


def descriptors_are_close_on_exec():
    """No descriptor callguard opens reaches an exec'd program: the lines
    file of CALLGUARD_TRACE_LINES stays open all run long, and the program
    that replaces the guarded one (without the preload) sees none of it."""
    lines = os.path.join(TMP, "cloexec-lines.txt")
    r = run(["sh", "-c", 'exec env -u LD_PRELOAD ls -l /proc/self/fd/'],
            env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_TRACE_LINES": lines, "CALLGUARD_STATS_DIR": ""})
    check(r.returncode == 0, r.stderr)
    check(os.path.exists(lines), "the guarded shell opened the lines file")
    check("cloexec-lines" not in r.stdout, "no descriptor of the lines file leaked:\n%s" % r.stdout)


def run_resolves_relative_paths_once():
    """--trace-lines, --report and CALLGUARD_POLICY given relative are made
    absolute before the program starts: a process that changed directory
    still reads and writes the same files."""
    d = tempfile.mkdtemp(prefix="rel-", dir=TMP)
    os.mkdir(os.path.join(d, "sub"))
    with open(os.path.join(d, "p.ini"), "w") as f:
        f.write("[toyAdd]\nserialize = adds\n")
    e = dict(os.environ, CALLGUARD_POLICY="p.ini")
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", "r.json", "--trace-lines", "l.txt", "--",
                        "sh", "-c", 'cd sub && exec "$0" calls 3', PROG], cwd=d, env=e, capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, r.stderr)
    check(not os.listdir(os.path.join(d, "sub")), "nothing written in the child's directory: %s"
          % os.listdir(os.path.join(d, "sub")))
    adds = [l for l in open(os.path.join(d, "l.txt")).read().splitlines() if l.startswith("toy toyAdd")]
    check(len(adds) == 3, "the exec'd program wrote its lines to the run's file: %s" % adds)
    site = [s for p in json.load(open(os.path.join(d, "r.json")))["processes"] for s in p["sites"]
            if s["name"] == "toyAdd"]
    check(site and site[0]["policy"]["serialize"] == "adds", "the policy file was found from sub/: %s" % site)


def report_appends_to_the_stdout_it_was_given():
    """`callguard report F >> log` appends to log: stdout is not reopened."""
    path = os.path.join(TMP, "append.json")
    guarded([PROG, "calls"], "--report", path)
    log = os.path.join(TMP, "append.log")
    with open(log, "w") as f:
        f.write("first line\n")
    r = subprocess.run(["sh", "-c", '"$0" report "$1" >> "$2"', CG, path, log], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, r.stderr)
    text = open(log).read()
    check(text.startswith("first line\n") and "toyAdd" in text, "appended: %r" % text[:200])


def run_lost_report_is_loud_and_exits_125():
    """A report that cannot be written is named with its path and the error;
    a program that succeeded then gives 125; its own failure or signal wins.
    A run that never started leaves no report file; an in-process report
    records how the process exited."""
    r = guarded([PROG, "calls"], "--report", "/dev/full")
    check(r.returncode == 125, "exit 125: %d %r" % (r.returncode, r.stderr))
    check("/dev/full" in r.stderr and os.strerror(28) in r.stderr, "path and errno: %r" % r.stderr)
    r = guarded([PROG, "exit", "3"], "--report", "/dev/full")
    check(r.returncode == 3, "the program's status wins: %d" % r.returncode)
    r = guarded([PROG, "abort"], "--report", "/dev/full")
    check(r.returncode == -signal.SIGABRT, "the program's signal wins: %d" % r.returncode)
    never = os.path.join(TMP, "never.json")
    r = guarded(["/nonexistent/program"], "--report", never)
    check(r.returncode == 127 and not os.path.exists(never), "no report of a run that never started")
    inproc = os.path.join(TMP, "inproc-exit.json")
    r = run([PROG, "exit", "3"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_REPORT": inproc})
    check(r.returncode == 3, r.stderr)
    ex = json.load(open(inproc))["processes"][0]["exit"]
    check(ex == {"state": "exited", "status": 3}, "in-process report records the exit: %s" % ex)
    r = run([PROG, "calls"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_REPORT": "/dev/full"})
    check("/dev/full" in r.stderr and os.strerror(28) in r.stderr, "in-process: path and errno: %r" % r.stderr)


def run_lost_trace_is_loud_and_leaves_no_half_file():
    """A trace that cannot be written (a full device) is named with its path
    and the error, and a program that succeeded gives 125; a trace that can
    be written is one whole JSON document holding every event, with nothing
    left beside it."""
    r = guarded([PROG, "calls", "300"], "--trace", "/dev/full")
    check(r.returncode == 125, "exit 125: %d %r" % (r.returncode, r.stderr))
    check("/dev/full" in r.stderr and os.strerror(28) in r.stderr, "path and errno: %r" % r.stderr)
    r = guarded([PROG, "exit", "3"], "--trace", "/dev/full")
    check(r.returncode == 3, "the program's status wins: %d" % r.returncode)
    d = tempfile.mkdtemp(prefix="trace-", dir=TMP)
    r, trace, rep = trace_of([PROG, "calls", "3000"])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    check(len(calls_in(trace)) == 3000 and trace["otherData"]["events"] == calls(rep["processes"][0]),
          "every event: %d, %s" % (len(calls_in(trace)), trace["otherData"]))
    path = os.path.join(d, "t.json")
    r = guarded([PROG, "calls", "3"], "--trace", path)
    check(r.returncode == 0 and os.listdir(d) == ["t.json"], "only the trace: %s" % os.listdir(d))


def policy_file_must_be_a_regular_file():
    """CALLGUARD_POLICY=/dev/zero used to hang, a directory read as empty:
    a device, a directory and a FIFO are refused at start-up, in one line,
    in the program and in callguard run."""
    d = tempfile.mkdtemp(prefix="pol-", dir=TMP)
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    marker = os.path.join(d, "started")
    for path, says in [("/dev/zero", "a device"), (d, "a directory"), (fifo, "a FIFO")]:
        r = run([PROG, "touch", marker], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_POLICY": path}, timeout=20)
        check(r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1, "%s: %d %r" % (path, r.returncode, r.stderr))
        r = run([CG, "run", "--layer", TOYLAYER, "--", PROG, "touch", marker], env={"CALLGUARD_POLICY": path}, timeout=20)
        check(r.returncode == 2 and says in r.stderr, "run, %s: %d %r" % (path, r.returncode, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % path)


def full_storage_counts_in_memory_and_keeps_the_status():
    """Statistics storage that cannot be grown (ENOSPC, injected without
    root: posix_fallocate and ftruncate fail) never harms the program: no
    SIGBUS, its exit status kept, one line per process says what was lost,
    and the report counts the processes that left no statistics."""
    rpath = os.path.join(TMP, "enospc.json")
    e = dict(os.environ, LD_PRELOAD=os.environ["CG_ENOSPC"])
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--", PROG, "exit", "3"], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 3, "the program's status is kept: %d %r" % (r.returncode, r.stderr))
    said = [l for l in r.stderr.splitlines() if "cannot keep statistics" in l]
    check(len(said) == 1 and os.strerror(28) in said[0] and "counting in memory" in said[0], "one line: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics") == 1, "the report records the loss: %s" % rep)
    t = run([CG, "run", "--layer", TOYLAYER, "--report", "-", "--", PROG, "calls"], env={"LD_PRELOAD": os.environ["CG_ENOSPC"]})
    check(t.returncode == 0 and "left no statistics" in t.stderr, "the table says it: %r" % t.stderr)


def full_storage_counts_processes_another_process_reaped():
    """Every process that could not keep statistics is counted, whoever
    reaped it: three programs a shell starts and waits for (callguard reaps
    only the shell, which makes no guarded call and loses nothing)."""
    rpath = os.path.join(TMP, "enospc-sh.json")
    e = dict(os.environ, LD_PRELOAD=os.environ["CG_ENOSPC"])
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--", "sh", "-c",
                        '"$0" calls 3; "$0" calls 2; "$0" exit 4', PROG], env=e, capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 4, "the program's status: %d %r" % (r.returncode, r.stderr))
    check(r.stderr.count("cannot keep statistics") == 3, "one line per process with calls: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics") == 3, "three processes missing: %s" % rep)


def report_of_saved_files_keeps_processes_without_statistics():
    """A saved report that counts processes without statistics says so again
    in `callguard report`'s table, as the live `--report -` did; several such
    files add up."""
    rpath = os.path.join(TMP, "lost.json")
    e = dict(os.environ, LD_PRELOAD=os.environ["CG_ENOSPC"])
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--", PROG, "calls"], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and json.load(open(rpath)).get("processes_without_statistics") == 1, r.stderr)
    t = run([CG, "report", rpath])
    check(t.returncode == 0 and "1 more process of the run left no statistics" in t.stdout, "one file: %r" % t.stdout)
    t = run([CG, "report", rpath, rpath])
    check(t.returncode == 0 and "2 more processes of the run left no statistics" in t.stdout, "two: %r" % t.stdout)


def statistics_directory_removed_mid_run_harms_nothing():
    """The run's directory removed while the program runs: later processes
    count in memory and exit as they would; the report is still written and
    says how many processes left no statistics."""
    rpath = os.path.join(TMP, "removed.json")
    r = guarded(["sh", "-c", 'rm -rf "$CALLGUARD_STATS_DIR"; "$0" calls 3 && "$0" exit 4', PROG], "--report", rpath)
    check(r.returncode == 4, "the program's status: %d %r" % (r.returncode, r.stderr))
    check(r.stderr.count("cannot keep statistics") == 2, "one line per later process: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics", 0) >= 1, "the loss is recorded: %s" % rep)


def full_tmpfs_raises_no_sigbus():
    """A real full file system: a small tmpfs, filled, mounted inside
    `unshare -m` (so a failed test leaves no mount behind). Needs root."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: needs root and unshare(1) to mount a small tmpfs")
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="full-", dir=TMP)
    rpath = os.path.join(TMP, "tmpfs.json")
    script = ('mount -t tmpfs -o size=1m cgfull "$1" || exit 77; '
              'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; '
              'TMPDIR="$1" "$2" run --layer "$3" --report "$4" -- "$5" exit 3')
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, rpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 77:
        print("skipped: cannot mount a tmpfs here: %s" % r.stderr)
        sys.exit(77)
    check(r.returncode == 3, "no SIGBUS, the program's status: %d %r" % (r.returncode, r.stderr))
    check("cannot keep statistics" in r.stderr, "the loss is said: %r" % r.stderr)
    check(json.load(open(rpath)).get("processes_without_statistics") == 1, "and recorded")
    # Programs a shell reaps: each is counted all the same.
    sh = script.replace('-- "$5" exit 3', '-- sh -c \'"$0" calls 3; "$0" exit 3\' "$5"')
    r = subprocess.run(["unshare", "-m", "sh", "-c", sh, "sh", d, CG, TOYLAYER, rpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 3 and r.stderr.count("cannot keep statistics") == 2, "%d %r" % (r.returncode, r.stderr))
    check(json.load(open(rpath)).get("processes_without_statistics") == 2, "both recorded, the shell reaped them")
    # With a timeline, whose file takes its space as it grows: still no SIGBUS.
    tpath = os.path.join(TMP, "tmpfs-trace.json")
    script = script.replace('--report "$4" -- "$5" exit 3', '--trace "$4" -- "$5" calls 5000')
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, tpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "no SIGBUS with --trace: %d %r" % (r.returncode, r.stderr))
    check(isinstance(json.load(open(tpath))["traceEvents"], list), "the trace is still one JSON document")
    # Room for the statistics, not for the whole ring: the ring grows until the
    # file system is full, the later events are dropped and counted, no SIGBUS.
    script = script.replace("size=1m", "size=3m").replace('dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; ', "")
    script = script.replace("calls 5000", "calls 50000")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, tpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "no SIGBUS when the ring cannot grow: %d %r" % (r.returncode, r.stderr))
    od = json.load(open(tpath))["otherData"]
    check(0 < od["events"] < 50000 and od["events"] + od["dropped"] == 50000 and "dropped" in r.stderr,
          "kept until full, the rest counted: %s %r" % (od, r.stderr))


def report_refuses_hostile_files():
    """Deep nesting, a number at the very end, a FIFO, a directory, a device
    and terminal escapes: each is refused in one line, or printed harmless."""
    d = tempfile.mkdtemp(prefix="hostile-", dir=TMP)
    deep = os.path.join(d, "deep.json")
    with open(deep, "w") as f:
        f.write('{"schema": "callguard-report", "version": 1, "x": ' + "[" * 200000 + "]" * 200000 + "}")
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    end = os.path.join(d, "end.json")
    with open(end, "w") as f:
        f.write('{"schema": "callguard-report", "version": 1')  # ends without '}'
    esc = os.path.join(d, "esc.json")
    with open(esc, "w") as f:
        f.write('{"schema": "callguard-report", "version": 1, "processes": [{"pid": 1, "command": "a\\u001b]0;owned\\u0007\x1b[2J",'
                ' "sites": [{"api": "toy", "name": "toyAdd\x1b[31m", "calls": 1}]}]}')
    for path, says in [(deep, "nested too deeply"), (fifo, "a FIFO"), (d, "a directory"), ("/dev/zero", "a device"),
                       (end, "truncated")]:
        r = run([CG, "report", path], timeout=20)
        check(r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1,
              "%s: refused in one line: %d %r" % (path, r.returncode, r.stderr[:300]))
    r = run([CG, "report", esc], timeout=20)
    check(r.returncode == 0 and "toyAdd" in r.stdout, r.stderr)
    check("\x1b" not in r.stdout and "\x07" not in r.stdout, "no terminal control printed: %r" % r.stdout)


def report_prints_a_saved_report():
    path = os.path.join(TMP, "saved.json")
    r = guarded([PROG, "fork"], "--report", path, "--serialize", "toyAdd=adds")
    check(r.returncode == 0, r.stderr)
    r = run([CG, "report", path])
    check(r.returncode == 0, r.stderr)
    check("toyAdd" in r.stdout and "serialize=adds" in r.stdout and "2 processes, " in r.stdout, r.stdout)
    live = guarded([PROG, "fork"], "--report", "-", "--serialize", "toyAdd=adds")
    check(live.stderr.splitlines()[-1].split(",")[:2] == r.stdout.splitlines()[-1].split(",")[:2],
          "same totals line as a live run:\n%s\n%s" % (live.stderr, r.stdout))


def report_names_the_python_package_that_held_the_runtime():
    """A stall made from a file under site-packages names its package and
    the distribution whose dist-info lists it (read when the report is
    written): one line to report upstream. A stall from a file outside any
    site-packages names none."""
    site = os.path.join(TMP, "venv", "lib", "python3.11", "site-packages")
    os.makedirs(os.path.join(site, "torch", "cuda"), exist_ok=True)
    os.makedirs(os.path.join(site, "torch-2.11.0.dist-info"), exist_ok=True)
    open(os.path.join(site, "torch-2.11.0.dist-info", "top_level.txt"), "w").write("functorch\ntorch\n")
    os.makedirs(os.path.join(site, "Other_Pkg-1.0.dist-info"), exist_ok=True)
    path = os.path.join(TMP, "stall.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    stall = {"api": "toy", "name": "toyNop", "ns": 188000000, "call_ns": 188000000, "lock_wait_ns": 0,
             "entered_ns": 1, "tid": 7, "thread": "python3", "runtime": "cpython",
             "python": {"file": os.path.join(site, "torch", "cuda", "__init__.py"), "line": 478,
                        "function": "_lazy_init"}}
    mine = dict(stall, ns=60000000, call_ns=60000000, python={"file": "/home/me/job.py", "line": 3, "function": "f"})
    rep["processes"][0]["stalls"] = [stall, mine]
    json.dump(rep, open(path, "w"))
    r = run([CG, "report", path])
    check(r.returncode == 0, r.stderr)
    want = ("  held by torch (distribution torch 2.11.0): _lazy_init() held the GIL through toyNop for 188.000 ms (%s:478)"
            % stall["python"]["file"])
    check(any(l.startswith(want) and l.endswith("report it to the package's maintainers")
              for l in r.stdout.splitlines()), "want %r in:\n%s" % (want, r.stdout))
    check(sum(l.startswith("  held by ") for l in r.stdout.splitlines()) == 1, r.stdout)


def report_names_at_most_4_result_codes_a_site_and_counts_the_rest():
    """A site keeps its first 4 result codes by name; a saved report with more (and two processes of it, merged)
    shows 4 by name and the rest as "other", in the process's table and in the combined one; states stay states."""
    path = os.path.join(TMP, "codes.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    site = rep["processes"][0]["sites"][0]
    names = ["TOY_ERROR_INVALID_HANDLE", "TOY_ERROR_INVALID_VALUE", "TOY_ERROR_BUILD_FAILED", "TOY_ERROR_TIMEOUT",
             "TOY_ERROR_OUT_OF_RESOURCES"]
    site["errors"], site["states"] = 8, 3
    site["results"] = [{"name": "TOY_ERROR_TIMEOUT", "code": -5, "calls": 3, "kind": "state"}] + [
        {"name": n, "code": -1 - i, "calls": 2, "kind": "error"} for i, n in enumerate(names[:4]) if i != 3]
    site["results"].append({"name": names[4], "code": -4, "calls": 2, "kind": "error"})
    json.dump(rep, open(path, "w"))
    r = run([CG, "report", path])
    check(r.returncode == 0, r.stderr)
    want = ("results: TOY_ERROR_TIMEOUT 3 (a state), TOY_ERROR_INVALID_HANDLE 2, TOY_ERROR_INVALID_VALUE 2, "
            "TOY_ERROR_BUILD_FAILED 2, other failures 2\n")
    check(want in r.stdout, r.stdout)
    r = run([CG, "report", path, path])
    check(r.returncode == 0 and r.stdout.count(want) == 2, r.stdout)
    check("results: TOY_ERROR_TIMEOUT 6 (a state), TOY_ERROR_INVALID_HANDLE 4, TOY_ERROR_INVALID_VALUE 4, "
          "TOY_ERROR_BUILD_FAILED 4, other failures 4\n" in r.stdout, "the combined table: " + r.stdout)
    check("(0 nested, 16 errors, 6 states)" in r.stdout, r.stdout)


def report_refuses_what_is_not_a_report():
    path = os.path.join(TMP, "saved2.json")
    guarded([PROG, "calls"], "--report", path)
    text = open(path).read()
    cases = {
        "other.json": ('{"name": "something else"}', "not a callguard report"),
        "truncated.json": (text[: len(text) // 2], "truncated"),
        "v2.json": (text.replace('"version": 1', '"version": 2'), "version 2"),
        "empty.json": ("", "empty"),
    }
    for name, (content, says) in cases.items():
        p = os.path.join(TMP, name)
        open(p, "w").write(content)
        r = run([CG, "report", p])
        check(r.returncode == 2 and says in r.stderr and name in r.stderr, "%s: %d %r" % (name, r.returncode, r.stderr))
    r = run([CG, "report", os.path.join(TMP, "missing.json")])
    check(r.returncode == 2 and "missing.json" in r.stderr, "missing file")


def report_refuses_text_after_the_report():
    """Reports run together into one file (`cat a.json b.json > all.json`),
    or anything after the report's closing brace, are refused, naming the
    file and where: reading only the first report would drop the others'
    processes without a word."""
    path = os.path.join(TMP, "one.json")
    guarded([PROG, "calls"], "--report", path)
    text = open(path).read()
    for name, content in [("two.json", text + text), ("tail.json", text + " garbage\n")]:
        p = os.path.join(TMP, name)
        open(p, "w").write(content)
        r = run([CG, "report", p])
        at = len(content) - len(content[len(text):].lstrip())  # where the text after it starts
        check(r.returncode == 2 and name in r.stderr and "after the end of the report" in r.stderr
              and ("at byte %d:" % at) in r.stderr and r.stderr.count("\n") == 1,
              "%s: %d %r" % (name, r.returncode, r.stderr))
    p = os.path.join(TMP, "spaces.json")
    open(p, "w").write(text + "\n \t\r\n")
    r = run([CG, "report", p])
    check(r.returncode == 0 and "toyAdd" in r.stdout, "white space after it is fine: %r" % r.stderr)


def report_refuses_numbers_a_report_never_holds():
    """A count that is negative, a fraction or an exponent (a report edited
    by hand or by another tool) is refused, naming the file, the key and
    the text found: a negative count read as 0, or a fraction cut at its
    point, would print a table that is not the report's."""
    path = os.path.join(TMP, "numbers.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    for key, value, shown in [("calls", -5, "-5"), ("total_ns", 1.5, "1.5"), ("errors", "1e3", "1e3"),
                              ("stalls", "-0", "-0")]:
        bad = json.loads(json.dumps(rep))
        bad["processes"][0]["sites"][0][key] = 0
        text = json.dumps(bad).replace('"%s": 0' % key, '"%s": %s' % (key, value), 1)
        p = os.path.join(TMP, "numbers-%s.json" % key)
        open(p, "w").write(text)
        r = run([CG, "report", p])
        check(r.returncode == 2 and p in r.stderr and ('"%s"' % key) in r.stderr and ("'%s'" % shown) in r.stderr
              and "whole number" in r.stderr and r.stderr.count("\n") == 1, "%s: %d %r" % (key, r.returncode, r.stderr))
    good = json.loads(json.dumps(rep))
    good["processes"][0]["sites"][0]["results"] = [{"name": "TOY_ERROR_TIMEOUT", "code": -5, "calls": 1, "kind": "error"}]
    good["processes"][0]["sites"][0]["errors"] = 1
    json.dump(good, open(path, "w"))
    r = run([CG, "report", path])
    check(r.returncode == 0 and "TOY_ERROR_TIMEOUT 1" in r.stdout, "a negative result code is one: %r" % r.stderr)


def report_reads_unicode_escapes_as_the_characters():
    """A report rewritten by a tool that escapes every non-ASCII character
    (Python's json.dump by default: "k\\u00f6ln") prints those characters,
    as the report callguard wrote did, a pair of surrogates included; an
    escaped control character still prints as '?'."""
    path = os.path.join(TMP, "escaped.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    p = rep["processes"][0]
    p["host"] = "k\u00f6ln"
    p["command"] = "caf\u00e9 \u0440\u0430\u0431 \U0001f680 bell\u0007 c1\u009b"
    json.dump(rep, open(path, "w"))  # ensure_ascii: every one of them as \\uXXXX
    check("\\u00f6" in open(path).read(), "escaped in the file")
    r = run([CG, "report", path])
    check(r.returncode == 0, r.stderr)
    head = r.stdout.splitlines()[0]
    check(head.startswith("callguard: pid %d on k\u00f6ln " % p["pid"]) and
          head.endswith(": caf\u00e9 \u0440\u0430\u0431 \U0001f680 bell? c1?"), "the characters: %r" % head)


def report_and_timeline_are_utf8_whatever_the_names():
    """A program whose name the kernel cuts inside a UTF-8 character (a
    thread's name keeps 15 bytes) and an argument that is not UTF-8: the
    report and the timeline are still JSON that a strict reader (Python's
    json) loads, each bad byte written as U+FFFD; good UTF-8 is kept."""
    exe = os.path.join(TMP, "\u0440\u0430\u0431\u043e\u0442\u043d\u0438\u043a-x")  # 2 bytes a letter: byte 15 is half of one
    os.symlink(TOY_RACE, exe)
    rpath, tpath = os.path.join(TMP, "utf8.json"), os.path.join(TMP, "utf8-trace.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--trace", tpath, "--", exe, b"caf\xc3\xa9-\xff"])
    check(r.returncode == -signal.SIGABRT, "%d %s" % (r.returncode, r.stderr))
    for path in (rpath, tpath):
        raw = open(path, "rb").read()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise AssertionError("%s is not UTF-8: %s: %r" % (path, e, raw[max(0, e.start - 40):e.start + 10]))
    rep = json.load(open(rpath, encoding="utf-8"))
    race = [p for p in rep["processes"] if p["command"].startswith(exe + " ")]
    check(len(race) == 1 and race[0]["command"].endswith(" caf\u00e9-\ufffd"), "the command: %s" % race)
    names = {f["thread"] for f in race[0]["in_flight"]}
    check(names == {"\u0440\u0430\u0431\u043e\u0442\u043d\u0438\ufffd"}, "the cut thread name: %s" % names)
    trace = json.load(open(tpath, encoding="utf-8"))
    meta = {e["name"]: e["args"]["name"] for e in trace["traceEvents"] if e["ph"] == "M"}
    check(meta.get("process_name", "").endswith(" caf\u00e9-\ufffd") and
          meta.get("thread_name") == "\u0440\u0430\u0431\u043e\u0442\u043d\u0438\ufffd", "the timeline's names: %s" % meta)


def report_merges_reports_of_several_nodes():
    """One report per node (pids repeat across nodes): every process keeps
    its section, named by host, and one table sums them all."""
    import socket
    a = os.path.join(TMP, "node-a.json")
    r = guarded([PROG, "fork"], "--report", a, "--serialize", "toyAdd=adds")
    check(r.returncode == 0, r.stderr)
    rep = json.load(open(a))
    host = socket.gethostname()
    check(all(p["host"] == host for p in rep["processes"]), "each process names its host: %s" % rep["processes"])
    b = os.path.join(TMP, "node-b.json")
    rep_b = dict(rep, processes=[dict(p, host="node-b") for p in rep["processes"]])
    json.dump(rep_b, open(b, "w"))
    r = run([CG, "report", a, b])
    check(r.returncode == 0, r.stderr)
    out = r.stdout.splitlines()
    heads = [l for l in out if l.startswith("callguard: pid ")]
    check(len(heads) == 4 and sum(" on node-b " in l for l in heads) == 2 and sum((" on %s " % host) in l
          for l in heads) == 2, "four sections, by host: %s" % heads)
    i = [k for k, l in enumerate(out) if l.startswith("callguard: all 4 processes on 2 hosts")]
    check(i, "one table over all: %s" % r.stdout)
    row = [l.split() for l in out[i[0]:] if l.split()[1:2] == ["toyAdd"]]
    check(row and row[0][2] == "18" and "serialize=adds" in out[i[0] + 2], "toyAdd: 2 x (5 + 4) calls: %s" % row)
    check(out[-1].startswith("callguard: 4 processes, 18 calls"), out[-1])
    bad = os.path.join(TMP, "node-c.json")
    open(bad, "w").write(open(a).read()[:100])
    r = run([CG, "report", a, bad, b])
    check(r.returncode == 2 and "node-c.json" in r.stderr and "truncated" in r.stderr and not r.stdout,
          "a bad file among good ones: %d %r" % (r.returncode, r.stderr))
    r = run([CG, "report"])
    check(r.returncode == 2 and "report file" in r.stderr, r.stderr)


def list_prints_policies_and_reasons():
    r = run([CG, "list", TOYLAYER])
    check(r.returncode == 0, r.stderr)
    line = [l for l in r.stdout.splitlines() if l.startswith("toyCompile ")]
    check(line and "compiles a program in the driver" in line[0], r.stdout)
    check("16 entry points" in r.stdout, r.stdout)  # toy.h: 12, its two toyCompile variants, toyQuery_v2, toyGetProcAddress
    r = run([CG, "list", "vulkan"])
    check(r.returncode == 2 and "vulkan" in r.stderr, r.stderr)



def run_layer_takes_a_layer_from_anywhere():
    """A layer and its shim in a directory of their own, as a third party
    builds them: --layer finds the shim at DIR/callguard/shims/SONAME, and a
    program that dlopens the soname is guarded."""
    import shutil
    d = os.path.join(TMP, "elsewhere")
    os.makedirs(os.path.join(d, "callguard", "shims"))
    layer = os.path.join(d, "libcallguard_toy.so")
    shutil.copy(TOYLAYER, layer)
    shim = os.path.join(d, "callguard", "shims", "libcgtoy.so")
    shutil.copy(os.path.join(os.path.dirname(TOYLAYER), "callguard", "shims", "libcgtoy.so"), shim)
    env = {"LD_LIBRARY_PATH": TOYLIB}  # libcallguard and the real toy library: the copies' rpath points nowhere
    path = os.path.join(TMP, "elsewhere.json")
    r = run([CG, "run", "--layer", layer, "--report", path, "--", PROG_DLOPEN, "dlopen"], env=env)
    check(r.returncode == 0, r.stderr)
    rep = json.load(open(path))
    check(calls(rep["processes"][0]) == 6, "six calls through the copied shim: %s" % rep)
    r = run([CG, "list", layer], env=env)
    check(r.returncode == 0 and ("layer toy: " + layer) in r.stdout and ("shim " + shim) in r.stdout, r.stdout + r.stderr)


def run_links_the_real_library_for_the_shim():
    """The run's shim directory: SONAME -> the shim, and
    libcallguard-real-API.so -> the real library: the library variable, else
    the layer's build-time path, else the soname where the loader finds it,
    never a callguard shim."""
    import shutil
    listing = 'cd "$CALLGUARD_STATS_DIR/shims" && for f in *; do echo "$f $(readlink "$f")"; done'

    def links(layer, env=None):
        r = run([CG, "run", "--layer", layer, "--", "sh", "-c", listing], env=env)
        check(r.returncode == 0, r.stderr)
        return dict(l.split(" ", 1) for l in r.stdout.splitlines())

    real = os.path.join(TOYLIB, "libcgtoy.so")
    m = links(TOYLAYER)
    check(m.get("libcallguard-real-toy.so") == real, "the build-time path: %s" % m)
    check(m.get("libcgtoy.so", "").endswith("/callguard/shims/libcgtoy.so"), "the shim: %s" % m)
    other = os.path.join(TMP, "libcgtoy-other.so")
    shutil.copy(real, other)
    m = links(TOYLAYER, env={"CALLGUARD_TOY_LIBRARY": other})
    check(m.get("libcallguard-real-toy.so") == other, "the library variable wins: %s" % m)
    # Built without a path: found as the loader would, past a directory holding callguard's shim.
    unlinked = os.path.join(os.path.dirname(TOYLAYER), "libcallguard_toy_unlinked.so")
    shims = os.path.join(os.path.dirname(TOYLAYER), "callguard", "shims")
    m = links(unlinked, env={"LD_LIBRARY_PATH": shims + ":" + TOYLIB})
    check(m.get("libcallguard-real-toy.so") == real, "the loader's search, skipping the shim: %s" % m)


def run_refuses_what_no_chosen_layer_has():
    marker = os.path.join(TMP, "started-refused")
    policy = os.path.join(TMP, "cl-only.ini")
    with open(policy, "w") as f:
        f.write("[clBuildProgram]\nserialize = igc\n")
    cases = [
        (["--serialize", "clBuildProgram"], {}, "'clBuildProgram'"),
        (["--serialize", "ToyCompile"], {}, "did you mean 'toyCompile'"),
        ([], {"CALLGUARD_SERIALIZE": "clBuildProgram"}, "'clBuildProgram'"),
        ([], {"CALLGUARD_POLICY": policy}, "'clBuildProgram'"),
        ([], {"CALLGUARD_CL_LIBRARY": "/bin/sh"}, "CALLGUARD_CL_LIBRARY"),
        (["--api", "toy"], {}, "no toy layer is installed"),  # a test layer is not an installed one
    ]
    for opts, env, says in cases:
        r = run([CG, "run", "--layer", TOYLAYER, *opts, "--", PROG, "touch", marker], env=env)
        what = "%s %s" % (opts, env)
        check(r.returncode == 2, "%s: exit %d" % (what, r.returncode))
        check(says in r.stderr and r.stderr.count("\n") == 1, "%s: one line naming it: %r" % (what, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % what)
    r = run([CG, "run", "--layer", TOYLAYER, "--serialize", "toyAdd", "--", PROG, "touch", marker],
            env={"CALLGUARD_TOY_LIBRARY": os.path.join(TOYLIB, "libcgtoy.so"), "CALLGUARD_SERIALIZE": "toyCompile"})
    check(r.returncode == 0 and os.path.exists(marker) and not r.stderr, "what the layer has runs: %r" % r.stderr)


def run_default_takes_every_installed_layer_and_no_test_layer():
    installed = sorted(f for f in os.listdir(TOYLIB) if f.startswith("libcallguard_") and f.endswith(".so"))
    r = run([CG, "run", "--", PROG, "env", "LD_PRELOAD"], env={"LD_PRELOAD": ""})
    check(r.returncode == 0, r.stderr)
    got = [] if r.stdout.strip() == "(unset)" else [os.path.basename(p) for p in r.stdout.strip().split(":")]
    check(got == installed, "preloaded %s, installed %s" % (got, installed))
    check("libcallguard_toy.so" not in got, "the toy layer is for tests only")
    r = run([CG, "list"])
    check(r.returncode == 0 and "%d layers installed" % len(installed) in r.stdout and "layer toy" not in r.stdout,
          r.stdout + r.stderr)


def run_inside_run_reads_the_preloaded_layer():
    """An inner `callguard run` has the outer one's layers preloaded: loading
    the same layer again registers nothing new, and it still reads it."""
    path = os.path.join(TMP, "inner.json")
    r = run([CG, "run", "--layer", TOYLAYER, "--", CG, "run", "--layer", TOYLAYER, "--report", path, "--", PROG, "calls"])
    check(r.returncode == 0, r.stderr)
    check(calls(json.load(open(path))["processes"][0]) == 5, "the inner run's report")


def list_describes_a_layer_from_a_path():
    r = run([CG, "list", TOYLAYER])
    check(r.returncode == 0, r.stderr)
    check(("layer toy: " + os.path.realpath(TOYLAYER)) in r.stdout and "CALLGUARD_TOY_LIBRARY" in r.stdout
          and "stands in for libcgtoy.so" in r.stdout, r.stdout)
    r = run([CG, "list", os.path.join(TOYLIB, "libcgtoy.so")])
    check(r.returncode == 2 and "not a callguard layer" in r.stderr, r.stderr)
    r = run([CG, "list", "/nonexistent/libcallguard_x.so"])
    check(r.returncode == 2 and "/nonexistent/libcallguard_x.so" in r.stderr, r.stderr)


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
    check(p["in_flight"] == [], "nothing in flight at a clean exit: %s" % p["in_flight"])
    # The table, from the saved report: the stall first, then what to do.
    r = run([CG, "report", path])
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and "1 stall:" in lines[1], r.stdout)
    check("toy toyWait" in lines[2] and "holding cpython" in lines[2] and "at <string>:4 in worker()" in lines[2],
          r.stdout)
    check("--release-gil" in lines[3] and "entry point" in lines[4], r.stdout)
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
    if LISTING:
        for name, f in list(globals().items()):
            if inspect.isfunction(f) and f.__module__ == "__main__" and not inspect.signature(f).parameters:
                print(name)
    else:
        globals()[TEST]()
        print(TEST + ": ok")
