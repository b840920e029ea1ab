"""Tests of timelines: --trace, --trace-lines and CALLGUARD_TRACE.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os

from clitest import (CG, PROG, TOY_RACE, TOYLAYER, TMP, run, guarded, calls, check, trace_of, calls_in,
                    check_complete_events, main)


def run_trace_lines_writes_a_line_per_call():
    path = os.path.join(TMP, "trace.txt")
    r = guarded([PROG, "calls", "7"], "--trace-lines", path)
    check(r.returncode == 0, r.stderr)
    lines = [l.split() for l in open(path).read().splitlines()]
    adds = [l for l in lines if l[:2] == ["toy", "toyAdd"]]
    check(len(adds) == 7, "one line per toyAdd call: %s" % lines)
    check(all(len(l) == 5 and l[2].isdigit() and l[3].isdigit() and l[4] == "0" for l in adds),
          "api site call_ns lock_wait_ns error: %s" % adds)


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


if __name__ == "__main__":
    main()
