"""A setuid program ignores every CALLGUARD_* variable that names a file or a library.

Run: test_privilege.py SECURE_PROG TOYLIB. Needs root (to make a copy of the
program setuid to an unprivileged user): exits 77 (skipped) otherwise.

The copy is setuid to `nobody`: any effective uid other than the real one
makes the kernel set AT_SECURE, so no way to root is ever left behind. The
program prints getauxval(AT_SECURE): a nosuid mount would make the copy run
unprivileged and the test pass for nothing, so that is checked, not assumed.
The copy lives in a directory only root can enter and is removed at the end.
"""
import os
import pwd
import shutil
import subprocess
import sys
import tempfile

PROG, TOYLIB = sys.argv[1:3]


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def main():
    if os.geteuid() != 0:
        print("skipped: needs root to make a setuid copy of the test program")
        return 77
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        print("skipped: no user 'nobody'")
        return 77
    base = os.path.dirname(os.path.abspath(PROG))
    priv = tempfile.mkdtemp(prefix="cgpriv-", dir=base)  # 0700, root's
    shared = tempfile.mkdtemp(prefix="cgpriv-out-")       # anyone may write here
    os.chmod(shared, 0o1777)
    try:
        setuid_copy = os.path.join(priv, "secure_prog")
        shutil.copy(PROG, setuid_copy)
        os.chown(setuid_copy, nobody.pw_uid, nobody.pw_gid)
        os.chmod(setuid_copy, 0o4755)
        report, trace, lines = (os.path.join(shared, n) for n in ("report.json", "trace.json", "lines.txt"))
        stats = os.path.join(shared, "stats")
        os.mkdir(stats)
        os.chmod(stats, 0o1777)
        bad_policy = os.path.join(shared, "bad.ini")
        with open(bad_policy, "w") as f:
            f.write("[toyAdd]\nserialize = ???\n")
        bad_quirks = os.path.join(shared, "bad-quirks.ini")
        with open(bad_quirks, "w") as f:
            f.write("[quirk:q]\nversions = 2 .. 1\n")
        env = dict(os.environ, CALLGUARD_TOY_LIBRARY=TOYLIB, CALLGUARD_REPORT=report, CALLGUARD_TRACE=trace,
                   CALLGUARD_TRACE_LINES=lines, CALLGUARD_STATS_DIR=stats, CALLGUARD_SERIALIZE="toyAdd")

        # The same program, not setuid: every variable is taken.
        plain = subprocess.run([PROG], env=env, capture_output=True, text=True, timeout=60)
        check(plain.returncode == 0 and plain.stdout.split() == ["secure=0", "0", "5"],
              "unprivileged run finds the library: %r %r" % (plain.stdout, plain.stderr))
        check(os.path.exists(report) and os.listdir(stats) and os.path.exists(lines),
              "unprivileged run writes the report, statistics and lines")
        pol = subprocess.run([PROG], env=dict(env, CALLGUARD_POLICY=bad_policy), capture_output=True, text=True,
                             timeout=60)
        check(pol.returncode == 2 and "bad.ini" in pol.stderr, "unprivileged run reads the policy: %r" % pol.stderr)
        qk = subprocess.run([PROG], env=dict(env, CALLGUARD_QUIRKS=bad_quirks), capture_output=True, text=True,
                            timeout=60)
        check(qk.returncode == 2 and "bad-quirks.ini:2" in qk.stderr, "unprivileged run reads the quirks file: %r" % qk.stderr)
        for p in (report, trace, lines):
            if os.path.exists(p):
                os.unlink(p)
        for n in os.listdir(stats):
            os.unlink(os.path.join(stats, n))

        r = subprocess.run([setuid_copy], env=dict(env, CALLGUARD_POLICY=bad_policy, CALLGUARD_QUIRKS=bad_quirks),
                           capture_output=True, text=True, timeout=60)
        out = r.stdout.split()
        check(out[:1] == ["secure=1"],
              "the setuid copy really runs with AT_SECURE (a nosuid mount would not): %r %r" % (r.stdout, r.stderr))
        check(r.returncode == 0, "the bad policy and quirks files were ignored, not read: %d %r" % (r.returncode, r.stderr))
        check(out[1:] == ["-4", "0"], "CALLGUARD_TOY_LIBRARY ignored: the real toyAdd is not found: %r" % r.stdout)
        check(not os.path.exists(report) and not os.path.exists(trace) and not os.path.exists(lines),
              "no report, trace or lines written: %s" % os.listdir(shared))
        check(not os.listdir(stats), "no statistics file created: %s" % os.listdir(stats))
        said = [l for l in r.stderr.splitlines() if "AT_SECURE" in l]
        check(len(said) == 1, "said once: %r" % r.stderr)
        for v in ("CALLGUARD_TOY_LIBRARY", "CALLGUARD_REPORT", "CALLGUARD_TRACE", "CALLGUARD_TRACE_LINES",
                  "CALLGUARD_STATS_DIR", "CALLGUARD_POLICY", "CALLGUARD_QUIRKS"):
            check(v in said[0], "names %s: %s" % (v, said[0]))
        check("CALLGUARD_SERIALIZE" not in said[0], "a value that names no file is still taken: %s" % said[0])
        print("ok:", said[0])
        return 0
    finally:
        shutil.rmtree(priv, ignore_errors=True)
        shutil.rmtree(shared, ignore_errors=True)
        check(not os.path.exists(priv), "the setuid copy is removed")


if __name__ == "__main__":
    sys.exit(main())
