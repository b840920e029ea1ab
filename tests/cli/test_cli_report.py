"""Tests of `callguard report`: saved reports read, refused, printed and
merged.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import signal
import subprocess
import tempfile

from clitest import CG, PROG, TOY_RACE, TOYLAYER, TMP, Running, run, guarded, check, main


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
    empty = tempfile.mkdtemp(prefix="no-reports-", dir=TMP)
    for path, says in [(deep, "nested too deeply"), (fifo, "a FIFO"), (empty, "no *.json report"),
                       ("/dev/zero", "a device"), (end, "truncated")]:
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
    check(live.stderr.splitlines()[-2] == r.stdout.splitlines()[-2] and
          r.stdout.splitlines()[-2].startswith("callguard: 2 processes, "),
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
    r = run([CG, "report", path], env={"COLUMNS": "1000"})  # the line whole, however long its path
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
    wide = {"COLUMNS": "1000"}  # each results line whole
    r = run([CG, "report", path], env=wide)
    check(r.returncode == 0, r.stderr)
    want = ("results: TOY_ERROR_TIMEOUT 3 (a state), TOY_ERROR_INVALID_HANDLE 2, TOY_ERROR_INVALID_VALUE 2, "
            "TOY_ERROR_BUILD_FAILED 2, other failures 2\n")
    check(want in r.stdout, r.stdout)
    r = run([CG, "report", path, path], env=wide)
    check(r.returncode == 0 and r.stdout.count(want) == 2, r.stdout)
    check("results: TOY_ERROR_TIMEOUT 6 (a state), TOY_ERROR_INVALID_HANDLE 4, TOY_ERROR_INVALID_VALUE 4, "
          "TOY_ERROR_BUILD_FAILED 4, other failures 4\n" in r.stdout, "the combined table: " + r.stdout)
    check("(0 nested, 16 failed, 6 returned a state such as NOT_READY)" in r.stdout, r.stdout)


def table_report(name, sites):
    """A saved report of one process with these sites [(name, calls, total_ns, extra fields)], its path."""
    path = os.path.join(TMP, "calls.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    base = rep["processes"][0]["sites"][0]
    rep["processes"][0]["sites"] = [dict(dict(base, name=n, calls=c, total_ns=ns, max_ns=ns // c), **extra)
                                    for n, c, ns, extra in sites]
    out = os.path.join(TMP, name)
    json.dump(rep, open(out, "w"))
    return out


LONG = "toyAnEntryPointWithANameLongerThanTheColumnLeavesRoomFor_x"  # 59 characters


# Out of order; one name longer than the column; a failing and a serialized entry point that took next to
# no time; ten that took next to no time and did nothing unusual.
TABLE_SITES = ([("toyWait", 2, 2000000000, {}), ("toyCompile", 4, 5000000000, {}), (LONG, 1, 1000000000, {}),
                ("toyFails", 3, 10, {"errors": 3}),
                ("toyLocked", 2, 20, {"lock_wait_ns": 7000000, "policy": {"transition": "always", "blocking": False,
                                                                           "serialize": "dom", "scope": "process"}})]
               + [("toySmall%d" % i, 1, 10, {}) for i in range(10)])


def report_table_is_sorted_by_time_fits_100_columns_and_folds_the_rest():
    """The table of `callguard report` lists entry points by time in the driver, largest first, with their
    share, calls, average and longest call, in at most 100 columns: a name longer than its column is cut with
    a marker, never wrapped; the rows that took next to no time and did nothing unusual are one line, those
    with failures or a lock wait are not; a policy other than the default is a legend under the table."""
    path = table_report("table.json", TABLE_SITES)
    r = run([CG, "report", path], env={"COLUMNS": ""})
    check(r.returncode == 0, r.stderr)
    lines = r.stdout.splitlines()
    check(all(len(l) <= 100 for l in lines), "at most 100 columns:\n" + "\n".join(l for l in lines if len(l) > 100))
    head = [k for k, l in enumerate(lines) if l.startswith("callguard: pid ")][0]
    table = [k for k, l in enumerate(lines) if l.split()[:2] == ["entry", "point"]]
    check(table and table[0] == head + 1 and lines[0] == "callguard: 1 process, exit 0",
          "the summary first, then the section and its table:\n" + r.stdout)
    rows = [l.split() for l in lines[table[0] + 1:] if l.startswith("  ") and not l.startswith("    ")]
    names = [f[0] for f in rows]
    check(names[:3] == ["toyCompile", "toyWait", LONG[:45] + "..."], "by time, the long name cut: %s" % names)
    check(rows[0][1:6] == ["5000.000", "62.5", "4", "1250.000", "1250.000"], "time, %%, calls, avg, max: %s" % rows[0])
    check(set(names[3:5]) == {"toyFails", "toyLocked"} and names[5] == "...",
          "the unusual rows shown, then the others folded: %s" % names)
    check("  ... 10 more entry points, 10 calls, 0.000 ms (each under 0.05% of the time; --all lists them)" in lines,
          r.stdout)
    locked = [k for k, l in enumerate(lines) if l.startswith("  toyLocked ")]
    check(locked and lines[locked[0] + 1] == "      7.000 ms lock wait [1]" and
          "  policy other than the default: [1] serialize=dom" in lines,
          "what is unusual under its row (no room beside it), a policy as a legend:\n" + r.stdout)
    check("  time: in the driver, summed over threads (sampled); %: of the table's time; avg, max: a call" in lines,
          "the labels' legend:\n" + r.stdout)


def report_row_never_averages_more_than_its_longest_call():
    """Sampled times: 12 calls seen for 3.708 ms by the watchdog's ticks, the longest seen 0.193 ms (as Open MPI's
    MPI_Barrier was). The row said avg 0.309, max 0.193; now its max is "-", said under the table, in the
    table and with --all; a row whose max is known keeps it."""
    path = table_report("sampled.json", [("toyBarrier", 12, 3708000, {"max_ns": 193000}),
                                         ("toyCompile", 4, 5000000000, {})])
    for args in ([], ["--all"]):
        r = run([CG, "report", *args, path], env={"COLUMNS": ""})
        row = [l.split() for l in r.stdout.splitlines() if "toyBarrier" in l.split()[:2]]
        known = [l.split() for l in r.stdout.splitlines() if "toyCompile" in l.split()[:2]]
        nums = row[0][row[0].index("toyBarrier") + 1:] if row else []
        check(r.returncode == 0 and row and "0.309" in nums and "-" in nums and "0.193" not in nums and
              "1250.000" in known[0] and known[0].count("1250.000") == 2 and
              "calls of about the watchdog's 1 ms tick or shorter" in r.stdout, "%s:\n%s" % (args, r.stdout))


def report_table_follows_columns_and_all_shows_every_row_and_column():
    """COLUMNS, when set, is the table's width (the long name cut shorter); --all shows every row and column
    (the api, nested, errors, states, lock wait, stalls, peaks, the whole policy) at any width, still sorted."""
    path = table_report("columns.json", TABLE_SITES)
    r = run([CG, "report", path], env={"COLUMNS": "80"})
    check(r.returncode == 0, r.stderr)
    lines = r.stdout.splitlines()
    check(all(len(l) <= 80 for l in lines), "at most 80 columns:\n" + "\n".join(l for l in lines if len(l) > 80))
    check([l for l in lines if l.startswith("  " + LONG[:25] + "... ")], "the name cut to 28 columns:\n" + r.stdout)
    r = run([CG, "report", "--all", path], env={"COLUMNS": "80"})
    check(r.returncode == 0, r.stderr)
    lines = r.stdout.splitlines()
    table = [k for k, l in enumerate(lines) if l.split()[:3] == ["api", "entry", "point"]][0]
    check(lines[table].split()[3:] == ["calls", "nested", "errors", "states", "total", "ms", "%", "time", "avg", "ms",
                                       "max", "ms", "lock", "wait", "ms", "stalls", "peak", "in/wt", "policy", "(times",
                                       "sampled)"], "every column: %s" % lines[table])
    rows = [l.split() for l in lines[table + 1:] if l.startswith("  toy ")]
    check([f[1] for f in rows[:3]] == ["toyCompile", "toyWait", LONG] and len(rows) == 15,
          "every row, sorted, names whole:\n" + r.stdout)
    check(not [l for l in lines if "more entry points" in l] and max(len(l) for l in lines) > 80,
          "nothing folded, at any width:\n" + r.stdout)


CORPUS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "report")


def wide(text):
    """The lines of text over 100 columns."""
    return [l for l in text.splitlines() if len(l) > 100]


def report_and_list_fit_100_columns_and_all_says_it_is_wide():
    """Every line of `callguard report` of each saved report of tests/fuzz/corpus/report, and of `callguard
    list` of the toy layer and each installed layer, within 100 columns (not a terminal, COLUMNS unset); but
    for a path longer than the room, on a line of its own. `report --all` is wider, and says so first."""
    env = {"COLUMNS": ""}
    for name in sorted(os.listdir(CORPUS)):
        r = run([CG, "report", os.path.join(CORPUS, name)], env=env)
        check(r.returncode == 0 and not wide(r.stdout), "report %s: %s" % (name, wide(r.stdout)), r)
        a = run([CG, "report", "--all", os.path.join(CORPUS, name)], env=env)
        check(a.returncode == 0 and "callguard: every row and column (--all): lines as wide as they need" in
              a.stdout, "report --all %s says it is wide" % name, a)
    installed = [l.split()[1].rstrip(":") for l in run([CG, "list"], env=env).stdout.splitlines()
                 if l.startswith("layer ")]
    check(len(installed) >= 2, "the installed layers: %s" % installed)
    for layer in [TOYLAYER] + installed:
        r = run([CG, "list", layer], env=env)
        over = [l for l in wide(r.stdout) if len(l.split()[-1]) <= 100 - 24 or "/" not in l.split()[-1]]
        check(r.returncode == 0 and r.stdout.endswith(" entry points\n") and not over,
              "list %s: %s" % (layer, over), r)


def report_into_a_closed_pipe_ends_quietly_and_a_full_file_says_so():
    """`callguard report F | head` with SIGPIPE ignored (as a Python parent or a CI runner leaves it): the
    write into the pipe fails, and callguard ends as a tool whose reader went away does, killed by SIGPIPE,
    saying nothing (it said "cannot write report /dev/stdout: Broken pipe", status 2). A file that cannot
    take the report is still an error: /dev/full, status 2 and the error named."""
    big = os.path.join(TMP, "big.json")
    with open(big, "w") as f:  # a report of some 700 KB of text: more than a pipe holds
        json.dump({"schema": "callguard-report", "version": 1, "processes": [
            {"pid": 100 + i, "command": "./app", "sites": [{"name": "toy%d" % k, "calls": k + 1} for k in range(60)]}
            for i in range(200)]}, f)
    p = subprocess.Popen([CG, "report", "--all", big], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         preexec_fn=lambda: signal.signal(signal.SIGPIPE, signal.SIG_IGN))
    first = p.stdout.read(100)
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    check(first.startswith(b"callguard: ") and p.returncode == -signal.SIGPIPE and err == "",
          "status %s, stderr %r" % (p.returncode, err))
    with open("/dev/full", "w") as full:
        r = subprocess.run([CG, "report", "--all", big], stdout=full, stderr=subprocess.PIPE, text=True, timeout=60)
    check(r.returncode == 2 and "cannot write report /dev/stdout: No space left on device" in r.stderr, r.stderr)


def report_that_cannot_keep_its_sections_aside_is_not_written():
    """The processes' sections wait for the summary that leads them: in memory up to 4 MiB, then in an
    unlinked file in TMPDIR. Where no such file can be made (TMPDIR a folder that does not exist), a report
    of 20,000 processes is not written at all, and the message says why (exit 2), rather than a summary
    without its sections; with a TMPDIR that exists, it is written whole."""
    path = os.path.join(TMP, "many-processes.json")
    with open(path, "w") as f:
        f.write('{"schema": "callguard-report", "version": 1, "processes": [')
        f.write(",".join('{"pid": %d, "command": "p", "exit": {"state": "exited", "status": 0}, "sites": '
                         '[{"api": "toy", "name": "toyAdd", "calls": 1}]}' % (i + 1) for i in range(20000)))
        f.write("]}\n")
    r = run([CG, "report", path], env={"TMPDIR": os.path.join(TMP, "no-such-folder")})
    check(r.returncode == 2 and not r.stdout and "sections could not be kept aside: No such file or directory" in
          r.stderr, "nothing written, and why: %d %r %r" % (r.returncode, r.stdout[:300], r.stderr))
    r = run([CG, "report", path], env={"TMPDIR": TMP})
    check(r.returncode == 0 and r.stdout.startswith("callguard: 20000 processes, all exit 0\n") and
          r.stdout.count("\ncallguard: pid ") == 20000, "the whole report: %d %r" % (r.returncode, r.stderr))


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
    head = [l for l in r.stdout.splitlines() if l.startswith("callguard: pid ")][0]
    check(head.startswith("callguard: pid %d on k\u00f6ln " % p["pid"]) and
          head.endswith(": caf\u00e9 \u0440\u0430\u0431 \U0001f680 bell? c1?"), "the characters: %r" % head)


def report_reads_json_escapes_as_json_says_and_refuses_invalid_ones():
    """A report rewritten by another tool may escape any character as JSON allows: \\r, \\b, \\f (like
    \\n and \\t) are those control characters, printed as '?' (they printed as the letters r, b, f),
    and \\", \\\\, \\/ are the characters. An escape JSON does not have (\\q, \\x, \\0; accepted as
    the letter) is refused, exit status 2, naming the file, the escape and the byte of its backslash."""
    path = os.path.join(TMP, "json-escapes.json")
    guarded([PROG, "calls"], "--report", path)
    rep = json.load(open(path))
    rep["processes"][0]["command"] = 'a\rb\bc\fd"e\\f/g\nh\ti'
    text = json.dumps(rep).replace("f/g", "f\\/g", 1)
    for esc in ("\\r", "\\b", "\\f", '\\"', "\\\\", "\\/"):
        check(esc in text, "%s in the file" % esc)
    open(path, "w").write(text)
    r = run([CG, "report", path])
    head = [l for l in r.stdout.splitlines() if l.startswith("callguard: pid ")]
    check(r.returncode == 0 and head[0].endswith(': a?b?c?d"e\\f/g?h?i'),
          "the characters: %r %r" % (r.stdout[:300], r.stderr))
    for bad, says in [("\\q", "invalid escape '\\q'"), ("\\x41", "invalid escape '\\x'"),
                      ("\\0", "invalid escape '\\0'"), ("\\ ", "invalid escape: '\\' before byte 0x20")]:
        p = os.path.join(TMP, "json-escape-bad.json")
        t = text.replace("a\\rb", "a%sb" % bad, 1)
        open(p, "w").write(t)
        r = run([CG, "report", p])
        at = t.index("a%sb" % bad) + 1
        check(r.returncode == 2 and p in r.stderr and says in r.stderr and ("at byte %d:" % at) in r.stderr
              and r.stderr.count("\n") == 1, "%r: refused where it is (byte %d): %d %r" % (bad, at, r.returncode, r.stderr))


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
    r = run([CG, "report", "--all", a, b])  # every column: the api's, the policy's
    check(r.returncode == 0, r.stderr)
    out = r.stdout.splitlines()
    heads = [l for l in out if l.startswith("callguard: pid ")]
    check(len(heads) == 4 and sum(" on node-b " in l for l in heads) == 2 and sum((" on %s " % host) in l
          for l in heads) == 2, "four sections, by host: %s" % heads)
    i = [k for k, l in enumerate(out) if l.startswith("callguard: all 4 processes on 2 hosts")]
    check(i, "one table over all: %s" % r.stdout)
    row = [l.split() for l in out[i[0]:] if l.split()[1:2] == ["toyAdd"]]
    check(row and row[0][2] == "18" and "serialize=adds" in out[i[0] + 2], "toyAdd: 2 x (5 + 4) calls: %s" % row)
    check(out[-2].startswith("callguard: 4 processes, 18 calls"), out[-2])
    bad = os.path.join(TMP, "node-c.json")
    open(bad, "w").write(open(a).read()[:100])
    r = run([CG, "report", a, bad, b])
    check(r.returncode == 2 and "node-c.json" in r.stderr and "truncated" in r.stderr and not r.stdout,
          "a bad file among good ones: %d %r" % (r.returncode, r.stderr))
    r = run([CG, "report"])
    check(r.returncode == 2 and "report file" in r.stderr, r.stderr)


def report_reads_folders_and_options_after_the_files():
    """`callguard report DIR/` reads the reports `callguard run --report DIR/`
    left there (an empty one, a run still going, is left out and said); an
    option may follow the files."""
    d = tempfile.mkdtemp(prefix="folder-", dir=TMP)
    out = os.path.join(d, "out") + "/"
    for n in ("2", "3"):
        r = guarded([PROG, "calls", n], "--report", out)
        check(r.returncode == 0, r.stderr)
    files = sorted(os.path.join(out, f) for f in os.listdir(out))
    check(len(files) == 2, files)
    by_files = run([CG, "report", "--json", os.path.join(d, "files.json"), *files])
    said = "callguard: wrote the report %s\n" % os.path.join(d, "files.json")
    check(by_files.returncode == 0 and by_files.stderr == said, by_files.stderr)
    open(os.path.join(out, "still-running.json"), "w").close()
    by_folder = run([CG, "report", out, "--json", os.path.join(d, "folder.json")])
    check(by_folder.returncode == 0 and "still-running.json is empty" in by_folder.stderr, by_folder.stderr)
    a, b = (json.load(open(os.path.join(d, f))) for f in ("files.json", "folder.json"))
    check(a["totals"]["calls"] == b["totals"]["calls"] == 5 and b["totals"]["processes"] == 2, (a["totals"], b["totals"]))
    t = run([CG, "report", out.rstrip("/")])
    check(t.returncode == 0 and t.stdout.startswith("callguard: 2 processes"), t.stdout[:300] + t.stderr)


def run_of_a_program_that_failed_before_any_call_says_so():
    """A program that exits before its first driver call: the summary says
    how it ended and what to check, not "0 processes, all exit 0"."""
    r = guarded([PROG, "no-such-mode"], "--report", "-")
    check(r.returncode == 2 and "unknown mode" in r.stderr, r.stderr)
    first = [l for l in r.stderr.splitlines() if l.startswith("callguard: ")][0]
    check(first == "callguard: the program exited with status 2 before any guarded driver call", first)
    check("callguard list" in r.stderr and "LD_PRELOAD" in r.stderr, "what to check: %r" % r.stderr)
    r = guarded(["sh", "-c", "kill -TERM $$"], "--report", "-")
    check("callguard: the program was killed by SIGTERM before any guarded driver call\n" in r.stderr, r.stderr)
    path = os.path.join(TMP, "no-calls.json")
    r = guarded([PROG, "no-such-mode"], "--report", path)
    t = run([CG, "report", path])
    check(t.stdout.startswith("callguard: no process made a guarded driver call\n"), t.stdout)


def report_reads_back_how_many_calls_a_hang_had_in_flight():
    """A saved report whose hang page lists 2 calls of 40 in flight ("in_flight_count"): `callguard report`
    says "40 in flight (2 shown)" under the calls, and its JSON keeps the count; a report without the count
    (older) has as many as it lists."""
    corpus = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fuzz", "corpus", "report", "hang.json")
    text = open(corpus).read()
    check('"over": false, "calls": [' in text, "the corpus's hang page: %s" % text)
    for count, want in ((40, 40), (None, 2)):
        path = os.path.join(TMP, "hang-%s.json" % count)
        with open(path, "w") as f:
            f.write(text.replace('"over": false, "calls": [', '"over": false, "in_flight_count": %d, "calls": ['
                                 % count) if count else text)
        r = run([CG, "report", path])
        line = "    40 in flight (2 shown)\n"
        check(r.returncode == 0 and (line in r.stdout) == (count == 40) and "hang reported 2 times" in r.stdout,
              "the table, count %s" % count, r)
        again = os.path.join(TMP, "hang-again-%s.json" % count)
        r = run([CG, "report", "--json", again, path])
        hang = [p["hang"] for p in json.load(open(again))["processes"]]
        check(r.returncode == 0 and len(hang) == 1 and hang[0]["in_flight_count"] == want and
              len(hang[0]["calls"]) == 2, "read back, count %s: %s" % (count, hang), r)


def status_reads_the_whole_environment_of_a_process():
    """`callguard status PID` finds the statistics of a guarded program whose environment holds a variable of
    70 KiB before callguard's own (CALLGUARD_STATS_DIR past the first 64 KiB of /proc/PID/environ)."""
    with Running([PROG, "wait-signal", "3"], env={"CG_BIG": "x" * 70 * 1024}) as g:
        check(g.wait_for("ready"), "the program started\n" + g.said())
        kids = g.children()
        check(len(kids) == 1, "one program: %s" % kids)
        r = run([CG, "status", str(kids[0])])
        check(r.returncode == 0 and "pid %d on " % kids[0] in r.stdout and "3 calls" in r.stdout, "status", r)


if __name__ == "__main__":
    main()
