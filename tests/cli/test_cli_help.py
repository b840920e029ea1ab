"""Tests of each command's own help and of the options a command does not
have: short help within 80 columns, and one line naming an unknown option.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
from clitest import CG, run, check, main

COMMANDS = ["run", "report", "list"]


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
    run_help = run([CG, "run", "--help"]).stdout
    for opt in ("--report", "--trace", "--serialize", "--release-runtime", "--api", "--layer", "--all"):
        check(opt in run_help, "run --help names %s" % opt)
    report_help = run([CG, "report", "--help"]).stdout
    for opt in ("--all", "--advice", "--json", "DIR/"):
        check(opt in report_help, "report --help names %s" % opt)


def each_command_refuses_an_unknown_option_in_one_line():
    for args in (["--bogus"], ["run", "--bogus", "--", "true"], ["report", "--bogus", "r.json"],
                 ["report", "r.json", "--bogus"], ["list", "--bogus"], ["help", "bogus"]):
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


if __name__ == "__main__":
    main()
