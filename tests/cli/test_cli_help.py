"""Tests of each command's own help and of the options a command does not
have: short help within 80 columns, and one line naming an unknown option;
and of the demo telling how its build goes.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import os
import shutil
import stat

from clitest import CG, TMP, run, check, main

COMMANDS = ["run", "report", "status", "list", "trace"]


def check_help(args, first):
    r = run([CG, *args])
    check(r.returncode == 0 and not r.stderr, "%s: exit %d %r" % (args, r.returncode, r.stderr))
    lines = r.stdout.splitlines()
    check(lines and lines[0].startswith(first), "%s: starts with %r: %r" % (args, first, r.stdout[:200]))
    wide = [l for l in lines if len(l) > 80]
    check(not wide, "%s: lines over 80 columns: %r" % (args, wide))
    check(len(lines) <= 40 and "example" in r.stdout, "%s: short, with an example: %d lines" % (args, len(lines)))
    return r.stdout


def each_command_has_its_own_help_within_80_columns():
    top = check_help(["--help"], "usage: callguard run")
    check(check_help(["help"], "usage: callguard run") == top, "callguard help is callguard --help")
    for cmd in COMMANDS:
        text = check_help([cmd, "--help"], "usage: callguard " + cmd)
        check(check_help([cmd, "-h"], "usage: callguard " + cmd) == text, "%s -h" % cmd)
        check(check_help(["help", cmd], "usage: callguard " + cmd) == text, "help %s" % cmd)
        check(text != top and cmd in top, "%s: its own help, named in callguard's" % cmd)
    check("docs/*.md" in top and "callguard docs [NAME]" in top, "the help says where the documents are: " + top)
    run_help = run([CG, "run", "--help"]).stdout
    for opt in ("--report", "--trace", "--serialize", "--release-runtime", "--api", "--layer", "--all"):
        check(opt in run_help, "run --help names %s" % opt)
    report_help = run([CG, "report", "--help"]).stdout
    for opt in ("--all", "--advice", "--json", "DIR/"):
        check(opt in report_help, "report --help names %s" % opt)


def each_command_refuses_an_unknown_option_in_one_line():
    for args in (["--bogus"], ["run", "--bogus", "--", "true"], ["report", "--bogus", "r.json"],
                 ["report", "r.json", "--bogus"], ["status", "--bogus"], ["list", "--bogus"], ["trace", "--bogus"],
                 ["help", "bogus"]):
        r = run([CG, *args])
        check(r.returncode == 2 and not r.stdout, "%s: exit %d" % (args, r.returncode))
        line = r.stderr.rstrip("\n")
        check("\n" not in line and "bogus" in line and len(line) <= 100, "%s: one line naming it: %r" % (args, r.stderr))
        check("unknown option '--bogus'" in line or "unknown command 'bogus'" in line, "%s: says what: %r" % (args, line))
    r = run([CG, "report", "--bogus", "r.json"])
    check("--all, --advice, --json OUT" in r.stderr, "report lists what it accepts: %r" % r.stderr)


def report_width_option_points_at_columns():
    """`callguard report --width 80 f.json` was read as a file named --width."""
    r = run([CG, "report", "--width", "80", "f.json"])
    check(r.returncode == 2 and "unknown option '--width'" in r.stderr and "COLUMNS" in r.stderr, r.stderr)
    check("cannot read" not in r.stderr and r.stderr.count("\n") == 1, r.stderr)


def run_names_the_option_a_typo_meant():
    r = run([CG, "run", "--reprot", "r.json", "--", "true"])
    check(r.returncode == 2 and "did you mean --report?" in r.stderr, r.stderr)


FAKE_CMAKE = """#!/bin/sh
[ "$1" = --build ] || exit 0
for i in 3 12 25 47 99 100; do echo "[ $i%] Building C object x$i.c.o"; echo "noise $i"; done
echo "x.c:1:1: error: oops" >&2
exit 2
"""


def demo_shows_build_progress_and_a_failed_builds_last_lines():
    """scripts/demo.sh was silent for the 86 s of its build, and a failed
    build ended it with nothing said. Run on a stand-in cmake."""
    root = os.path.join(TMP, "demo")
    os.makedirs(os.path.join(root, "scripts"))
    os.makedirs(os.path.join(root, "fake"))
    here = os.path.dirname(os.path.abspath(__file__))
    shutil.copy(os.path.join(here, "..", "..", "scripts", "demo.sh"), os.path.join(root, "scripts"))
    fake = os.path.join(root, "fake", "cmake")
    with open(fake, "w") as f:
        f.write(FAKE_CMAKE)
    os.chmod(fake, stat.S_IRWXU)
    os.makedirs(os.path.join(root, "build"))
    r = run(["sh", os.path.join(root, "scripts", "demo.sh")],
            env={"PATH": os.path.join(root, "fake") + ":" + os.environ["PATH"]})
    lines = r.stdout.splitlines()
    check(r.returncode == 2, "the build's status: %d %r" % (r.returncode, r.stdout + r.stderr))
    check(lines[0].startswith("== configuring") and lines[1].startswith("== building"), r.stdout)
    check([l for l in lines if l.startswith("   [")] == ["   [ 12%] Building C object x12.c.o",
          "   [ 25%] Building C object x25.c.o", "   [ 47%] Building C object x47.c.o",
          "   [ 99%] Building C object x99.c.o", "   [ 100%] Building C object x100.c.o"], r.stdout)
    shown = lines[:[l.startswith("== the build failed") for l in lines].index(True)]
    check("   x.c:1:1: error: oops" in shown and not [l for l in shown if "noise" in l], "errors shown: %r" % r.stdout)
    check(any(l.startswith("== the build failed (status 2)") for l in lines) and lines[-1] == "x.c:1:1: error: oops",
          "the last lines: %r" % r.stdout)
    check(os.path.exists(os.path.join(root, "build", "demo-build.log")), "the whole log kept")


if __name__ == "__main__":
    main()
