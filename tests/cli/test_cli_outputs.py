"""Tests of the report and timeline files `callguard run` writes: the names it
refuses or replaces, and an output that is lost.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import signal
import subprocess
import tempfile

from clitest import CG, PROG, TOYLAYER, TMP, run, guarded, calls, check, trace_of, calls_in, check_complete_events, main


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


def report_names_host_names_of_63_and_64_bytes():
    """A host name of 63 or 64 bytes (HOST_NAME_MAX is 64 on Linux) is the report's `host`, the host part
    of a report folder's file name, and what `callguard report` of the saved report names, as a short one
    is; they were "" and "unknown-host". Each run is
    in a UTS namespace of its own with that name (`unshare --uts`, as root: else skipped)."""
    if os.geteuid() != 0 or subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        print("skipped: needs root and unshare --uts")
        return 77
    for n in (63, 64, 8):
        name = ("h%d-" % n + "x" * n)[:n]
        folder = os.path.join(TMP, "hosts-%d" % n)
        single = os.path.join(TMP, "host-%d.json" % n)
        script = ('hostname "$1" && shift && "$@" --report "%s/" -- %s calls 2 && '
                  '"$@" --report "%s" -- %s calls 2') % (folder, PROG, single, PROG)
        r = run(["unshare", "--uts", "sh", "-c", script, "sh", name, CG, "run", "--layer", TOYLAYER])
        check(r.returncode == 0, "%d bytes: the runs: %d %r" % (n, r.returncode, r.stderr))
        files = os.listdir(folder)
        check(len(files) == 1 and files[0].startswith("callguard-%s-pid" % name),
              "%d bytes: the folder's file is named by the host: %s" % (n, files))
        for path in (os.path.join(folder, files[0]), single):
            host = json.load(open(path))["processes"][0]["host"]
            check(host == name, "%d bytes: %s: host %r" % (n, path, host))
        r = run([CG, "report", single])
        head = [l for l in r.stdout.splitlines() if l.startswith("callguard: pid ")]
        check(r.returncode == 0 and head and (" on %s " % name) in head[0],
              "%d bytes: `callguard report` of the saved report names the host: %r" % (n, r.stdout[:200]))


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


def run_names_each_file_it_wrote_and_only_those():
    """One closing line on stderr per file written (the report, the file a
    --report DIR/ made, the timeline, the call lines), naming its path; none
    for the table on stderr, a device, or a run that writes nothing."""
    d = tempfile.mkdtemp(prefix="wrote-", dir=TMP)
    rep, tl, lines = os.path.join(d, "r.json"), os.path.join(d, "t.json"), os.path.join(d, "calls.txt")
    r = guarded([PROG, "calls", "3"], "--report", rep, "--trace", tl, "--trace-lines", lines)
    check(r.returncode == 0, r.stderr)
    wrote = [l for l in r.stderr.splitlines() if l.startswith("callguard: wrote ")]
    check(len(wrote) == 3 and r.stderr.endswith(wrote[-1] + "\n"), "three closing lines: %r" % r.stderr)
    for path, what in ((rep, "the report"), (tl, "the timeline"), (lines, "the call lines")):
        check(sum(l.startswith("callguard: wrote %s %s" % (what, path)) for l in wrote) == 1, "%s: %r" % (path, wrote))
        check(os.path.getsize(path) > 0, path)
    check([l for l in wrote if tl in l][0].endswith(" (3 events)"), "the timeline's events: %r" % wrote)
    folder = os.path.join(d, "out") + "/"
    r = guarded([PROG, "calls", "3"], "--report", folder)
    said = [l[len("callguard: wrote the report "):] for l in r.stderr.splitlines() if l.startswith("callguard: wrote ")]
    check(r.returncode == 0 and len(said) == 1 and os.path.dirname(said[0]) + "/" == folder, r.stderr)
    check(os.listdir(folder) == [os.path.basename(said[0])] and json.load(open(said[0]))["processes"], said)
    for opts in (["--report", "-"], ["--report", "/dev/null"], []):
        r = guarded([PROG, "calls", "3"], *opts)
        check(r.returncode == 0 and "callguard: wrote" not in r.stderr, "%s: nothing said: %r" % (opts, r.stderr))


if __name__ == "__main__":
    main()
