"""What the report says of quirks is true for the run: the advice's fix is one the run takes (a run limited
to some APIs, `--api ze`, refuses `--serialize` of another API's entry points; no run takes a name its layer
lacks), and a quirk that cannot be applied says why.

Run: test_advice.py TEST (or --list; tests/cgtest.py), with CG_CLI (callguard), CG_RACE
(tests/ze/compile_race.c linked to the loader), CG_NEWER_LOADER and CG_NEWER_CLIENT (tests/ze/newer_loader*.c)
and ZE_ENABLE_ALT_DRIVERS (the simulator) in the environment (tests/ze/CMakeLists.txt sets them).
Each test is a function named for the behaviour it checks.
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

E = os.environ
TMP = None if listing() else tempfile.mkdtemp(prefix="cgzeadvice-")
# NEO 26.31 (IGC 2.40.13): no quirk matches, and the simulator's compiler does not abort, so 16 threads are
# inside zeModuleCreate at once and the advice names the IGC 2.38 quirks.
UNAFFECTED = {"CGSIM_VENDOR_ID": "0x8086", "CGSIM_DRIVER_VERSION": "26.31.39395.13", "CGSIM_COMPILER_RACE": "off",
              "CGSIM_COMPILE_MS": "50"}



def run(args, **extra):
    env = {k: v for k, v in E.items() if not k.startswith("CALLGUARD_")}
    env.update(UNAFFECTED, **extra)
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


def ze_advice_gives_no_fix_naming_an_entry_point_the_layer_lacks():
    """A quirk serializing zeModuleCreate with zeInitDrivers (which 1.8.12's header, and so the ze layer,
    lacks): every run refuses the whole fix, and zeModuleCreate alone would not fix the bug, so it gives no
    advice, while the shipped IGC 2.38 quirks on the same entry point still do."""
    quirks = os.path.join(TMP, "quirks.ini")
    with open(quirks, "w") as f:
        f.write("[quirk:init-and-compile]\napi = ze\nvendor = 0x1234\nversions = 0 .. 999999999\n"
                "serialize = zeModuleCreate, zeInitDrivers\ndomain = init\nsource = https://example.org/x\n"
                "why = a test quirk naming a newer entry point\n")
    path = os.path.join(TMP, "lacking.json")
    for opts in (["--api", "ze"], []):
        r = run([E["CG_CLI"], "run"] + opts + ["--quirks", quirks, "--report", path, "--", E["CG_RACE"]])
        check(r.returncode == 0 and "created 16 modules" in r.stdout, "the race ran:\n%s%s" % (r.stdout, r.stderr))
        with open(path) as f:
            advice = json.load(f)["advice"]
        check(not [a for a in advice if a["quirk"] == "init-and-compile"], "%s: no advice from it: %s" % (opts, advice))
    shipped = os.path.join(TMP, "shipped.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", shipped, "--", E["CG_RACE"]])
    with open(shipped) as f:
        check({a["quirk"] for a in json.load(f)["advice"]} == {"igc-2.38-zeModuleCreate", "igc-2.38-clBuildProgram"},
              "the IGC quirks still advise")


def ze_loader_quirk_not_applied_says_the_layers_header_lacks_zeInitDrivers():
    """Under a loader newer than Debian's (the stand-in, whose file name has no version, so the shipped
    ze-loader-zeInitDrivers quirk matches any), the quirk cannot be applied: the ze layer was generated from
    1.8.12's header, which does not declare zeInitDrivers. The report says so, not just "a typo"."""
    path = os.path.join(TMP, "newer.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", path, "--", E["CG_NEWER_CLIENT"]],
            CALLGUARD_ZE_LIBRARY=E["CG_NEWER_LOADER"])
    check(r.returncode == 0, "the client ran:\n%s%s" % (r.stdout, r.stderr))
    with open(path) as f:
        quirks = [q for p in json.load(f)["processes"] for q in p.get("quirks", [])]
    q = [q for q in quirks if q["name"] == "ze-loader-zeInitDrivers"]
    check(len(q) == 1 and q[0]["applied"] is False, "the loader quirk matched, not applied: %s" % quirks)
    check(q[0]["not_applied"].startswith("zeInitDrivers is not an entry point of the loaded ze layer (not declared "
                                         "by level_zero/ze_api.h, which it was generated from): nothing serialized"),
          "why: %s" % q[0]["not_applied"])


if __name__ == "__main__":
    main()
