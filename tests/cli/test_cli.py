"""Tests of the `callguard` command. Run: test_cli.py TEST CALLGUARD PROG PROG_DLOPEN TOY_RACE TOYLIBDIR TOYLAYER.

Each test is a function named for the behaviour it checks; it runs real
programs under `callguard run` and checks what they print, how they exit,
and the report.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

TEST, CG, PROG, PROG_DLOPEN, TOY_RACE, TOYLIB, TOYLAYER = sys.argv[1:8]
TMP = tempfile.mkdtemp(prefix="cgcli-")


def run(args, env=None, **kw):
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=60, **kw)


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
    check("ended without exit handlers (how is not known: callguard did not reap it) with %d threads inside toyCompile"
          % len(inside) in t.stdout, t.stdout)


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
    r = run([CG, "run"])
    check(r.returncode == 2 and "no program" in r.stderr, "no program: %r" % r.stderr)
    r = run([CG, "frobnicate"])
    check(r.returncode == 2, "unknown command")
    r = run([CG, "--help"])
    check(r.returncode == 0 and "callguard run" in r.stdout and "--serialize" in r.stdout, "help")


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
    check("15 entry points" in r.stdout, r.stdout)  # toy.h: 11, its two toyCompile variants, toyQuery_v2, toyGetProcAddress
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
    check(all(not e["args"]["stall"] for e in calls_in(trace) if e not in stalls), "nothing else is a stall")


if __name__ == "__main__":
    globals()[TEST]()
    print(TEST + ": ok")
