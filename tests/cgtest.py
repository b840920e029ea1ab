"""The runner of a test script, as tests/cgtest.c is of a C test file.

A test is a function of no arguments in the script, named for the behaviour
it checks (helpers take arguments). `SCRIPT --list` names the tests, for
ctest (cg_discover_tests, tests/cgtest.cmake); `SCRIPT TEST ARGS...` runs
one and prints "TEST: ok" (a test that returns a number exits with it: 77
is skipped). A script's helper module imports this one; the script ends
with `if __name__ == "__main__": main()`.
"""
import inspect
import resource
import sys


def check(cond, what, r=None):
    """Fails the test with `what`, and the run `r`'s status and output if given."""
    if not cond:
        if r is not None:
            what += "\n-- exit %s\n-- stdout:\n%s-- stderr:\n%s" % (r.returncode, r.stdout, r.stderr)
        raise AssertionError(what)


def hang_lines(text):
    """The `callguard: hang:` lines of stderr text, each with the lines it went on to (the block fits 100
    columns: a longer line goes on at a space, or after a '/' of a path longer than the room, indented 4
    more) joined back to it."""
    out = []
    for line in text.splitlines():
        if line.startswith("callguard: hang:     ") and out:
            out[-1] += ("" if out[-1].endswith("/") else " ") + line[len("callguard: hang:"):].strip()
        elif line.startswith("callguard: hang:"):
            out.append(line)
    return out


def no_core():
    """A child's preexec_fn: a process that aborts (as a test may expect)
    leaves no core file."""
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def listing():
    """Is this run `SCRIPT --list`? (The script's arguments are not given then.)"""
    return sys.argv[1:] == ["--list"]


def main():
    script = sys.modules["__main__"]
    tests = [name for name, f in vars(script).items()
             if inspect.isfunction(f) and f.__module__ == "__main__" and not inspect.signature(f).parameters]
    if listing():
        print("\n".join(tests))
        return
    name = sys.argv[1] if len(sys.argv) > 1 else ""
    if name not in tests:
        sys.exit("%s: no test named '%s' (%s --list names them)" % (sys.argv[0], name, sys.argv[0]))
    rc = getattr(script, name)()
    if rc:
        sys.exit(rc)
    print(name + ": ok")
