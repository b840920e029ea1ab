"""Tests of the values `callguard run` refuses before the program starts,
and of how its messages show them.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import os
import subprocess
import tempfile

from clitest import CG, PROG, TOYLAYER, TMP, run, check, main


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
        (["--trace", "/nonexistent/dir/t/"], "cannot write traces in /nonexistent/dir"),
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
        (["--report", os.path.join(TMP, "no", "such") + "/"], "No such file or directory"),
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


def run_refuses_a_report_folder_that_is_a_dangling_symlink_before_the_program():
    """`--report LINK/` where LINK is a symbolic link to nothing is refused before the program starts,
    exit status 2, one line naming the link's target: mkdir after the run found the name taken, and the
    run ended with exit 125 and no report. A link to a file is refused the same way (not a directory);
    a link to a folder is a folder, the report in it."""
    base = os.path.join(TMP, "links")
    os.mkdir(base)
    marker = os.path.join(base, "started")
    missing, afile, folder = (os.path.join(base, n) for n in ("missing", "file", "folder"))
    open(afile, "w").close()
    os.mkdir(folder)
    for name, target, says in [("dangling", missing, "a symbolic link to %s, which does not exist" % missing),
                               ("to-file", afile, "Not a directory")]:
        link = os.path.join(base, name)
        os.symlink(target, link)
        r = run([CG, "run", "--layer", TOYLAYER, "--report", link + "/", "--", PROG, "touch", marker])
        check(r.returncode == 2 and says in r.stderr and r.stderr.count("\n") == 1,
              "%s: exit 2, one line: %d %r" % (name, r.returncode, r.stderr))
        check(not os.path.exists(marker), "%s: the program must not start" % name)
        check(not os.path.exists(missing) and os.path.islink(link), "%s: nothing made" % name)
    link = os.path.join(base, "to-folder")
    os.symlink(folder, link)
    r = run([CG, "run", "--layer", TOYLAYER, "--report", link + "/", "--", PROG, "calls"])
    check(r.returncode == 0 and len(os.listdir(folder)) == 1, "a link to a folder: %d %r %s"
          % (r.returncode, r.stderr, os.listdir(folder)))


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
    # COLUMNS wide enough for the header line whatever the build folder's path.
    e = dict(os.environ, LD_PRELOAD=TOYLAYER, CALLGUARD_REPORT="-", COLUMNS="1000")
    r = subprocess.run([PROG, "calls", "1", v], env=e, capture_output=True, timeout=60)
    check(r.returncode == 0 and b"calls 1 a?[31mb?c?d??e" in r.stderr, r.stderr)
    check(not any(b < 0x20 and b != 0x0a or b == 0x7f for b in r.stderr) and b"\xc2\x9b" not in r.stderr,
          "a control byte in the table: %r" % r.stderr)


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


if __name__ == "__main__":
    main()
