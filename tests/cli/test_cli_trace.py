"""Tests of timelines: --trace, --trace-lines and CALLGUARD_TRACE.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import glob
import json
import os
import shutil
import socket
import subprocess

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


def run_trace_keeps_every_call_with_its_arguments():
    """More calls than a thread's ring once held (65,535): every one is an
    event, in order, with its arguments by their header names and its
    result; nothing dropped, the program unchanged."""
    n = 200000
    r, trace, rep = trace_of([PROG, "calls", str(n)])
    check(r.returncode == 0, r.stderr)
    check_complete_events(trace)
    ev = calls_in(trace)
    check(len(ev) == n and trace["otherData"]["dropped"] == 0, "%d kept, %s" % (len(ev), trace["otherData"]))
    check(rep["processes"][0]["trace"] == {"events": trace["otherData"]["events"], "dropped": 0},
          "the report: %s" % rep["processes"][0])
    ts = [e["ts"] for e in ev]
    check(ts == sorted(ts), "the calls, in order")
    # toyAdd(int32_t a, int32_t b, int32_t *sum): prog.c adds i + 1.
    check(all(e["args"]["a"] == i and e["args"]["b"] == 1 and e["args"]["result"] == "TOY_SUCCESS"
              and e["args"]["result_code"] == 0 for i, e in enumerate(ev[:1000])),
          "arguments by name, the result named: %s" % ev[:2])
    check("dropped" not in r.stderr and "left out" not in r.stderr, "nothing said left out: %r" % r.stderr)


def run_trace_max_keeps_the_latest_or_the_first_and_says_how_many_it_left_out():
    """--trace-max bounds each process's trace: the latest events kept (the
    default) or the first (:first), the rest counted in the trace, on
    stderr and in the report."""
    n = 200000
    for keep in ("latest", "first"):
        r, trace, rep = trace_of([PROG, "calls", str(n)], "--trace-max", "1M" + (":first" if keep == "first" else ""))
        check(r.returncode == 0, r.stderr)
        check_complete_events(trace)
        ev = calls_in(trace)
        out = trace["otherData"]["dropped"]
        check(0 < len(ev) < n and out > 0 and len(ev) + out >= n, "%s: %d kept, %s" % (keep, len(ev),
                                                                                    trace["otherData"]))
        a = [e["args"]["a"] for e in ev]
        check(a == list(range(a[0], a[0] + len(a))), "%s: consecutive calls" % keep)
        if keep == "first":
            check(a[0] == 0, "the first calls: %s" % a[:3])
        else:
            check(a[-1] == n - 1, "the latest calls: %s" % a[-3:])
        check("%d dropped: --trace-max" % out in r.stderr, "one line says so: %r" % r.stderr)
        labels = [e["args"]["labels"] for e in trace["traceEvents"] if e["name"] == "process_labels"]
        check(labels == ["callguard left out %d events (--trace-max: the %s kept)" % (out, keep)], labels)
        check(rep["processes"][0]["trace"]["dropped"] == out, "the report: %s" % rep["processes"][0])
    r = guarded([PROG, "calls", "1"], "--trace", os.path.join(TMP, "tm.json"), "--trace-max", "lots")
    check(r.returncode == 2 and "--trace-max" in r.stderr, "a usage error: %r" % r.stderr)


def run_trace_args_off_leaves_the_arguments_out():
    """CALLGUARD_TRACE_ARGS=off: events as small as before arguments were kept (the bench's baseline)."""
    r, trace, rep = trace_of([PROG, "calls", "3"])
    check(r.returncode == 0, r.stderr)
    check([e["args"].get("b") for e in calls_in(trace)] == [1, 1, 1], "arguments on by default: %s" % calls_in(trace))
    r, trace, rep = trace_of([PROG, "calls", "3"], env={"CALLGUARD_TRACE_ARGS": "off"})
    check(r.returncode == 0, r.stderr)
    ev = calls_in(trace)
    check(len(ev) == 3 and all(e["args"] == {"api": "toy"} for e in ev), "no arguments: %s" % ev)


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


def trace_folder_of(prog_args, name, *opts, env=None):
    """Runs with --trace DIR/; returns the run and the folder."""
    folder = os.path.join(TMP, name) + "/"
    r = guarded(prog_args, "--trace", folder, *opts, env=env)
    return r, folder


def merge(*inputs, out=None):
    """callguard trace INPUTS -o OUT; returns the run and the parsed merged trace (None if it failed)."""
    out = out or os.path.join(TMP, "job%d.json" % len(os.listdir(TMP)))
    r = run([CG, "trace", *inputs, "-o", out])
    return r, (json.load(open(out)) if r.returncode == 0 else None)


def check_tracks_in_order(trace):
    """Every track's (pid, tid) complete events in file order have ts that never go back."""
    last = {}
    for e in trace["traceEvents"]:
        if e["ph"] != "X":
            continue
        key = (e["pid"], e["tid"])
        check(e["ts"] >= last.get(key, 0), "ts goes back on track %s: %s" % (key, e))
        last[key] = e["ts"]


def process_names(trace):
    return {e["pid"]: e["args"]["name"] for e in trace["traceEvents"]
            if e["ph"] == "M" and e["name"] == "process_name"}


def run_trace_folder_merged_by_callguard_trace_keeps_the_arguments():
    """The job's timeline (`callguard trace DIR/`) keeps each call's arguments and result as its process's file had them."""
    r, folder = trace_folder_of([PROG, "calls", "5"], "argsjob")
    check(r.returncode == 0, r.stderr)
    r, job = merge(folder)
    check(r.returncode == 0, r.stderr)
    ev = calls_in(job)
    check([(e["args"]["a"], e["args"]["b"], e["args"]["result"]) for e in ev] ==
          [(i, 1, "TOY_SUCCESS") for i in range(5)], "the arguments kept: %s" % ev)


def run_trace_folder_merges_a_process_tree_on_one_clock():
    """--trace DIR/: a file per process saying its host and clock pair; `callguard trace DIR/`: one
    process group per process ("HOST pid P"), every call, and the forked child's calls between the
    parent's 3rd and 4th, exactly (one clock)."""
    r, folder = trace_folder_of([PROG, "fork"], "tree")
    check(r.returncode == 0 and "wrote the timeline (a file per process) in %s (9 events)" % folder in r.stderr,
          "the run, and the line naming the folder", r)
    files = sorted(glob.glob(folder + "*.json"))
    check(len(files) == 2, "a file per process: %s" % files)
    host = socket.gethostname()
    for f in files:
        t = json.load(open(f))
        check_complete_events(t)
        proc, pair = t["otherData"]["process"], t["otherData"]["clock_pair"]
        check(os.path.basename(f) == "trace-%s-pid%d.json" % (host, proc["pid"]), "named by host and pid: %s" % f)
        check(proc["host"] == host and proc["rank"] is None and "fork" in proc["command"], "its process: %s" % proc)
        check(pair["realtime_ns"] > 10 ** 18 and pair["gap_ns"] > 0 and len(pair["boot_id"]) == 36 and
              pair["time_namespace"] > 1, "its clock pair: %s" % pair)
        # Where events are TSC ticks, the run made their calibration again over the whole run.
        check(pair.get("tsc_calibrated_over_ns", 1) > 0, "calibrated over the run: %s" % pair)
    r, job = merge(folder)
    check(r.returncode == 0 and "2 processes on 1 host, 9 events; one clock: exact" in r.stderr, "the merge", r)
    check_complete_events(job)
    check_tracks_in_order(job)
    names = process_names(job)
    pids = sorted(names)
    check(sorted(names.values()) == ["%s pid %d" % (host, p) for p in pids], "process groups: %s" % names)
    parent, child = ((pids[0], pids[1]) if len(calls_in(job, pids[0])) == 5 else (pids[1], pids[0]))
    pe, ce = calls_in(job, parent), calls_in(job, child)
    check(len(pe) == 5 and len(ce) == 4, "every call: %d %d" % (len(pe), len(ce)))
    check(all(pe[2]["ts"] < e["ts"] < pe[3]["ts"] for e in ce), "the child's calls between the parent's 3rd and "
          "4th: %s %s" % ([e["ts"] for e in pe], [e["ts"] for e in ce]))
    meta = job["otherData"]["job"]
    check(meta["clocks"] == 1 and meta["max_uncertainty_ns"] == 0 and meta["realtime_sync"].startswith("not needed")
          and meta["events"] == 9 and meta["processes"] == 2, "metadata: %s" % meta)
    check(job["callguard_job"]["ts_zero_unix_ns"] == meta["ts_zero_unix_ns"] and
          len(job["callguard_job"]["processes"]) == 2, "per process: %s" % job["callguard_job"])


def trace_merge_reads_a_file_named_twice_once():
    """`callguard trace` given one file more than once (DIR/ and DIR, a folder and a file of it, a hard link to
    it) merges each file once: the merge of a 2-process folder says 2 processes and 9 events whichever way."""
    r, folder = trace_folder_of([PROG, "fork"], "twice")
    check(r.returncode == 0, "the run", r)
    files = sorted(glob.glob(folder + "*.json"))
    link = os.path.join(TMP, "twice-link.json")
    os.link(files[0], link)
    for inputs in ([folder, folder.rstrip("/")], [folder, files[1]], [files[0], folder, link]):
        r, job = merge(*inputs)
        check(r.returncode == 0 and "2 processes on 1 host, 9 events; one clock: exact" in r.stderr, "%s" % inputs, r)
        check(len(calls_in(job)) == 9 and job["otherData"]["job"]["processes"] == 2, "%s: %d calls, %s" % (
            inputs, len(calls_in(job)), job["otherData"]["job"]))


def in_new_host(cmd, host, monotonic_s):
    """cmd run as on another host: its own host name and a CLOCK_MONOTONIC monotonic_s seconds ahead
    (UTS and time namespaces; None where this kernel or user cannot make them)."""
    unshare = shutil.which("unshare")
    if not unshare or os.geteuid() != 0 or not os.path.exists("/proc/self/ns/time"):
        return None
    return [unshare, "--uts", "--time", "--monotonic", str(monotonic_s), "--fork", "sh", "-c",
            'hostname "$0" && exec "$@"', host, *cmd]


def trace_merge_aligns_hosts_whose_monotonic_clocks_differ():
    """Runs on this host, then on "hostb" (CLOCK_MONOTONIC 100,000 s ahead), then here again, into one
    folder: merged on realtime, hostb's calls lie between the two runs here, and the metadata says two
    clocks, their pairs' uncertainty, and that the hosts' realtime sync is not measured."""
    folder = os.path.join(TMP, "hosts") + "/"
    here = [CG, "run", "--layer", TOYLAYER, "--trace", folder, "--", PROG, "calls", "3"]
    other = in_new_host(here[:-1] + ["2"], "hostb", 100000)
    if other is None:
        print("no time namespace can be made here (root and Linux 5.6 needed): skipped")
        return 77
    probe = run(other[:-len(here)] + ["true"])
    if probe.returncode != 0:
        print("unshare --time failed here: skipped (%s)" % probe.stderr.strip())
        return 77
    for cmd in (here, other, here):
        r = run(cmd)
        check(r.returncode == 0, "%s" % cmd, r)
    files = glob.glob(folder + "*.json")
    check(len(files) == 3 and len(glob.glob(folder + "trace-hostb-pid*.json")) == 1, "files: %s" % files)
    raw = {f: max(e["ts"] for e in calls_in(json.load(open(f)))) for f in files}
    check(max(raw, key=raw.get).startswith(folder + "trace-hostb"), "hostb's own clock is far ahead: %s" % raw)
    r, job = merge(folder)
    check(r.returncode == 0 and "3 processes on 2 hosts, 8 events; 2 clocks aligned within" in r.stderr, "merge", r)
    check_complete_events(job)
    check_tracks_in_order(job)
    names = process_names(job)
    b = [p for p, n in names.items() if n.startswith("hostb pid ")]
    check(len(names) == 3 and len(b) == 1, "process groups: %s" % names)
    be = calls_in(job, b[0])
    ae = sorted((e for p in names if p != b[0] for e in calls_in(job, p)), key=lambda e: e["ts"])
    check(len(be) == 2 and len(ae) == 6, "every call: %d %d" % (len(be), len(ae)))
    check(all(ae[2]["ts"] + ae[2]["dur"] < e["ts"] < ae[3]["ts"] for e in be),
          "hostb ran between the two runs here: %s %s" % ([e["ts"] for e in ae], [e["ts"] for e in be]))
    meta, clocks = job["otherData"]["job"], job["callguard_job"]["clocks"]
    half = sorted((c["pair_gap_ns"] + 1) // 2 for c in clocks)
    check(meta["clocks"] == 2 and meta["hosts"] == 2 and meta["max_uncertainty_ns"] == sum(half[-2:]) and
          meta["realtime_sync"].startswith("not measured"), "metadata: %s" % meta)
    check(len({c["time_namespace"] for c in clocks}) == 2 and len({c["boot_id"] for c in clocks}) == 1,
          "one boot, two time namespaces: %s" % clocks)


def trace_in_process_folder_writes_a_file_per_process():
    """CALLGUARD_TRACE=DIR/ alone: the process and its forked child each write their own trace at exit."""
    folder = os.path.join(TMP, "inproc") + "/"
    r = run([PROG, "fork"], env={"LD_PRELOAD": TOYLAYER, "CALLGUARD_TRACE": folder})
    check(r.returncode == 0, "the run", r)
    files = glob.glob(folder + "*.json")
    check(len(files) == 2, "parent and child: %s" % files)
    pairs = [json.load(open(f))["otherData"]["clock_pair"] for f in files]
    check(all(p.get("tsc_calibrated_over_ns", 1) > 0 for p in pairs), "calibrated again at exit: %s" % pairs)
    r, job = merge(folder)
    check(r.returncode == 0, "merge", r)
    check(sorted(len(calls_in(job, p)) for p in process_names(job)) == [4, 5], "every call of each")


def trace_merge_refuses_what_is_not_a_process_trace():
    """A folder with no traces, a file that is not one, a merged trace, a symlink, another user's or
    a file others may write: one line naming the file, exit 1; no -o, an unknown option: exit 2."""
    r, folder = trace_folder_of([PROG, "calls", "2"], "good")
    good = glob.glob(folder + "*.json")[0]
    cases = {}

    def case(name, setup):
        d = os.path.join(TMP, "bad-" + name)
        os.mkdir(d)
        f = os.path.join(d, "trace.json")
        setup(f)
        cases[name] = (d, f)

    case("empty-folder", lambda f: None)
    case("not-a-trace", lambda f: open(f, "w").write('{"rows": [1, 2]}'))
    case("bad-ts", lambda f: open(f, "w").write('{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":"x"}]}'))
    case("cut-short", lambda f: open(f, "w").write(open(good).read()[:-40]))
    case("symlink", lambda f: os.symlink(good, f))
    case("others-write", lambda f: (shutil.copy(good, f), os.chmod(f, 0o666)))
    r, _ = merge(folder, out=os.path.join(TMP, "merged-once.json"))
    case("merged", lambda f: shutil.copy(os.path.join(TMP, "merged-once.json"), f))
    if os.geteuid() == 0:
        case("other-user", lambda f: (shutil.copy(good, f), os.chown(f, 65534, 65534)))
    for name, (d, f) in cases.items():
        r = run([CG, "trace", d, "-o", os.path.join(TMP, "never.json")])
        line = r.stderr.rstrip("\n")
        check(r.returncode == 1 and "\n" not in line and len(line) <= 200, "%s: exit 1, one line" % name, r)
        check((d if name == "empty-folder" else f) in line, "%s: names the file: %r" % (name, line))
        check(not os.path.exists(os.path.join(TMP, "never.json")), "%s: nothing written" % name)
    for args in (["trace", folder], ["trace", "--bogus", folder, "-o", "x.json"], ["trace", "-o", "x.json"]):
        r = run([CG, *args])
        check(r.returncode == 2 and r.stderr.count("\n") == 1, "%s: a usage error" % args, r)


def trace_merge_keeps_apart_hosts_that_share_a_clock_and_a_pid():
    """Two "hosts" in UTS and pid namespaces of this kernel (as a network-namespace test makes them):
    one CLOCK_MONOTONIC, and the same pid for each program. Two process groups, the second's pid
    moved up by 2^22, each named by its host and real pid; one clock, exact."""
    unshare = shutil.which("unshare")
    if not unshare or os.geteuid() != 0:
        print("no pid namespace can be made here (root needed): skipped")
        return 77
    folder = os.path.join(TMP, "pidns") + "/"
    for host in ("hosta", "hostb"):
        r = run([unshare, "--uts", "--pid", "--mount-proc", "--fork", "sh", "-c", 'hostname "$0" && exec "$@"', host,
                 CG, "run", "--layer", TOYLAYER, "--trace", folder, "--", PROG, "calls", "2"])
        if host == "hosta" and r.returncode != 0 and "unshare" in r.stderr:
            print("unshare --pid failed here: skipped (%s)" % r.stderr.strip())
            return 77
        check(r.returncode == 0, host, r)
    pids = sorted(json.load(open(f))["otherData"]["process"]["pid"] for f in glob.glob(folder + "*.json"))
    check(len(pids) == 2 and pids[0] == pids[1], "one pid in both namespaces: %s" % pids)
    r, job = merge(folder)
    check(r.returncode == 0 and "2 processes on 2 hosts, 4 events; one clock: exact" in r.stderr, "merge", r)
    names = process_names(job)
    check(names == {pids[0]: "hosta pid %d" % pids[0], pids[0] + 4194304: "hostb pid %d" % pids[0]},
          "two groups: %s" % names)
    check(all(len(calls_in(job, p)) == 2 for p in names), "each its calls")


if __name__ == "__main__":
    main()
