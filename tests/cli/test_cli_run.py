"""Tests of `callguard run` running a program: its exit status, its whole
process tree, exec, orphans, descriptors and relative paths.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile

from clitest import CG, PROG, TOY_RACE, TOYLAYER, TMP, run, guarded, report_of, calls, check, main


def run_leaves_dlerror_null_at_main_and_after_calls_as_plainly():
    """dlerror() says NULL at the program's main and after its guarded calls, as plainly, under `callguard
    run` (with --release-gil too) and with the layer preloaded alone: callguard's probes of what may be
    absent (Julia's jl_get_pgcstack at start-up, CPython's _PyRuntime at the first call) drop the message
    of their own failed lookup, which the program's dlerror() returned ("libcallguard.so.0: undefined
    symbol: jl_get_pgcstack")."""
    want = "at main: NULL\nafter calls: NULL\n"
    plain = run([PROG, "dlerror", "3"])
    check(plain.returncode == 0 and plain.stdout == want, "plainly: %r %r" % (plain.stdout, plain.stderr))
    for opts in ([], ["--release-gil"]):
        r = guarded([PROG, "dlerror", "3"], *opts)
        check(r.returncode == 0 and r.stdout == want, "callguard run %s: %r %r" % (opts, r.stdout, r.stderr))
    r = run([PROG, "dlerror", "3"], env={"LD_PRELOAD": TOYLAYER})
    check(r.returncode == 0 and r.stdout == want, "the layer preloaded: %r %r" % (r.stdout, r.stderr))


def run_starts_a_program_built_with_asan_as_plainly():
    """A program built with gcc -fsanitize=address (tests/cli/asan_prog.c, linked to libasan.so) starts
    under `callguard run` as plainly: ASan's runtime checks that it comes first among the program's
    libraries, and libcallguard, preloaded, comes before it. callguard adds verify_asan_link_order=0 to
    the program's ASAN_OPTIONS, keeping what they say."""
    prog = os.environ.get("CG_ASAN_PROG")
    if not prog:
        return 77
    env = {"ASAN_OPTIONS": ""}  # not the tests' own verify_asan_link_order=0
    plain = run([prog], env=env)
    check(plain.returncode == 0 and plain.stdout == "asan program: ok\n",
          "plainly: %r %r" % (plain.stdout, plain.stderr))
    r = guarded([prog], env=env)
    check(r.returncode == 0 and r.stdout == plain.stdout,
          "callguard run: exit %d %r %r" % (r.returncode, r.stdout, r.stderr[-400:]))
    r = guarded([prog, "options"], env={"ASAN_OPTIONS": "detect_leaks=0"})
    check(r.returncode == 0 and r.stdout == "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0\n",
          "the program's own options kept: %r %r" % (r.stdout, r.stderr[-400:]))


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
    it, and callguard exits the way the program did. The report says the
    program died of it (no clock: a loaded machine may take seconds)."""
    path = os.path.join(TMP, "sigterm.json")
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    p = subprocess.Popen([CG, "run", "--layer", TOYLAYER, "--report", path, "--", PROG, "wait-signal", "3"],
                         env=e, stdout=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline() == "ready\n", "the program started")
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=60)  # the program waits for a signal: only the forwarded one ends it
    finally:
        if p.poll() is None:
            kids = open("/proc/%d/task/%d/children" % (p.pid, p.pid)).read().split()
            for k in kids:
                os.kill(int(k), signal.SIGKILL)
            p.kill()
            p.wait()
    check(rc == -signal.SIGTERM, "callguard died of SIGTERM: %d" % rc)
    with open(path) as f:
        procs = json.load(f)["processes"]
    check(len(procs) == 1 and calls(procs[0]) == 3 and procs[0]["exit"] == {"state": "signaled", "signal": 15},
          "the program died of SIGTERM: %s" % procs)


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


def run_waits_for_orphans_before_the_report():
    r = guarded([PROG, "orphan"], "--report", "-")
    check(r.returncode == 0, r.stderr)
    check("exit 5" in r.stderr and "2 processes, 8 calls" in r.stderr.replace("8 calls (0 nested", "8 calls"),
          "the orphan's 7 calls and exit 5 are in the table: %s" % r.stderr)


def run_serialize_prevents_the_compile_race():
    r = guarded([TOY_RACE])
    check(r.returncode == -signal.SIGABRT, "unserialized: the toy compiler aborts (%d)" % r.returncode)
    r = guarded([TOY_RACE], "--serialize", "toyCompile")
    check(r.returncode == 0 and "8 compiles finished" in r.stdout, "serialized: %d %s" % (r.returncode, r.stderr))


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


if __name__ == "__main__":
    main()
