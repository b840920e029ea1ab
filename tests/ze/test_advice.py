"""The report's advice gives a fix that the run it is printed for takes: a run limited to some APIs
(`--api ze`) refuses `--serialize` of another API's entry points, so the fix names only the run's.

Run: test_advice.py TEST, with CG_CLI (callguard), CG_RACE (tests/ze/compile_race.c linked to the loader)
and ZE_ENABLE_ALT_DRIVERS (the simulator) in the environment (tests/ze/CMakeLists.txt sets them).
Each test is a function named for the behaviour it checks.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

E = os.environ
TMP = tempfile.mkdtemp(prefix="cgzeadvice-")
# NEO 26.31 (IGC 2.40.13): no quirk matches, and the simulator's compiler does not abort, so 16 threads are
# inside zeModuleCreate at once and the advice names the IGC 2.38 quirks.
UNAFFECTED = {"CGSIM_VENDOR_ID": "0x8086", "CGSIM_DRIVER_VERSION": "26.31.39395.13", "CGSIM_COMPILER_RACE": "off",
              "CGSIM_COMPILE_MS": "50"}


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def run(args):
    env = {k: v for k, v in E.items() if not k.startswith("CALLGUARD_")}
    env.update(UNAFFECTED)
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)


def ze_advice_fix_of_a_run_limited_to_ze_is_taken_by_that_run():
    path = os.path.join(TMP, "first.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", path, "--", E["CG_RACE"]])
    check(r.returncode == 0 and "created 16 modules" in r.stdout, "the race ran:\n%s%s" % (r.stdout, r.stderr))
    with open(path) as f:
        advice = json.load(f)["advice"]
    fixes = {a["fix"] for a in advice if a["entry_point"] == "zeModuleCreate" and not a["applied"]}
    check(fixes, "the advice gives a fix: %s" % advice)
    # Each printed fix, given to the same run: taken, and it leaves nothing to advise.
    for fix in fixes:
        fixed = os.path.join(TMP, "fixed.json")
        r = run([E["CG_CLI"], "run", "--api", "ze", "--report", fixed] + shlex.split(fix) + ["--", E["CG_RACE"]])
        check(r.returncode == 0 and "created 16 modules" in r.stdout,
              "the fix %r is taken:\n%s%s" % (fix, r.stdout, r.stderr))
        with open(fixed) as f:
            check(json.load(f)["advice"] == [], "no advice once fixed with %r" % fix)
    check(fixes == {"--serialize zeModuleCreate=igc"}, "the fix names the ze entry points only: %s" % advice)

if __name__ == "__main__":
    globals()[sys.argv[1]]()
