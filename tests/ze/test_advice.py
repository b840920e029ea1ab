"""What the report says of quirks and policies is true for the run: the advice's fix is one the run takes (a run limited
to some APIs, `--api ze`, refuses `--serialize` of another API's entry points; no run takes a name its layer
lacks), a quirk that cannot be applied says why, and a once-gate on zeInit opens at its first success.

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


# NEO 26.27 (IGC 2.38.2): the IGC 2.38 quirk of zeModuleCreate matches, and its fix applies.
IGC_2_38 = {"CGSIM_VENDOR_ID": "0x8086", "CGSIM_DRIVER_VERSION": "26.27.39122.11"}


def zeModuleCreate_advice(path):
    with open(path) as f:
        return {a["quirk"]: a for a in json.load(f)["advice"] if a["entry_point"] == "zeModuleCreate"}


def ze_advice_affects_this_run_false_for_drivers_checked_null_for_an_api_never_checked():
    """The simulator as NEO 26.31 (IGC 2.40): its ze driver was checked against the quirks and matched
    none, so the IGC 2.38 bug of zeModuleCreate does not affect this run (false); the run never initialized
    OpenCL, so whether its cl driver has the bug reached through clBuildProgram is not known (null), and a
    report written before runs recorded the APIs they checked knows neither (null). The table says them in
    one line with the command that shows them in full; that command shows each, with whether it affects
    the run, and their one fix once."""
    path = os.path.join(TMP, "unaffected.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", path, "--", E["CG_RACE"]])
    check(r.returncode == 0 and "created 16 modules" in r.stdout, "the race ran:\n%s%s" % (r.stdout, r.stderr))
    with open(path) as f:
        rep = json.load(f)
    check([p["quirks_probed"] for p in rep["processes"]] == [["ze"]], "the run checked its ze driver: %s" %
          [p.get("quirks_probed") for p in rep["processes"]])
    advice = zeModuleCreate_advice(path)
    check(advice["igc-2.38-zeModuleCreate"]["affects_this_run"] is False and
          advice["igc-2.38-clBuildProgram"]["affects_this_run"] is None, "false and null: %s" % advice)
    t = run([E["CG_CLI"], "report", path], COLUMNS="")
    check(t.returncode == 0 and "callguard: advice:" not in t.stdout and
          "\ncallguard: 2 known driver bugs would break this call pattern, none seen in this run (1 unchecked):\n"
          "  callguard report --advice %s\n" % path in t.stdout, "one line for both:\n" + t.stdout)
    t = run([E["CG_CLI"], "report", "--advice", path], COLUMNS="1000")
    check(t.returncode == 0 and t.stdout.count("callguard: advice: zeModuleCreate had ") == 2 and
          "\n  this run: not affected: its ze drivers were checked and none matched\n" in t.stdout and
          "\n  this run: not known: no process checked its cl drivers " in t.stdout and
          t.stdout.count("  fix: callguard run --serialize zeModuleCreate=igc,") == 1,
          "each in full, the fix once:\n" + t.stdout)
    older = os.path.join(TMP, "older.json")
    for p in rep["processes"]:
        del p["quirks_probed"]
    with open(older, "w") as f:
        json.dump(rep, f)
    merged = os.path.join(TMP, "older-merged.json")
    t = run([E["CG_CLI"], "report", "--json", merged, older])
    check(t.returncode == 0 and {a["affects_this_run"] for a in zeModuleCreate_advice(merged).values()} == {None},
          "not known from an older report: %s" % zeModuleCreate_advice(merged))


def ze_advice_affects_this_run_true_where_the_driver_matched():
    """The simulator as NEO 26.27 (IGC 2.38): the quirk matched the ze driver and its fix applied, so the
    compiles waited for each other. The advice says the bug affects this run (true), applied, with no fix
    left to give; the table says it in full, not folded with other drivers' bugs."""
    path = os.path.join(TMP, "affected.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", path, "--", E["CG_RACE"]], **IGC_2_38)
    check(r.returncode == 0 and "created 16 modules" in r.stdout, "the race ran:\n%s%s" % (r.stdout, r.stderr))
    a = zeModuleCreate_advice(path).get("igc-2.38-zeModuleCreate")
    check(a and a["affects_this_run"] is True and a["applied"] is True and a["fix"] is None and a["peak_waiting"] >= 1,
          "affects the run, fixed: %s" % a)
    t = run([E["CG_CLI"], "report", path], COLUMNS="1000")
    check(t.returncode == 0 and "\ncallguard: advice: zeModuleCreate (at most 1 inside, " in t.stdout and
          "quirk igc-2.38-zeModuleCreate matched the running driver and was applied" in t.stdout and
          "known driver bug" not in t.stdout, "said in full:\n" + t.stdout)


def ze_advice_unfixed_bug_of_this_runs_driver_is_a_warning_in_the_summary_with_its_fix():
    """A process matched the IGC 2.38 quirk but did not apply it (its saved report says so) while 16 threads
    were inside zeModuleCreate at once: the summary, before any table, warns of it with the fix as a
    command, and the advice says it affects this run (true) and is not applied."""
    path = os.path.join(TMP, "matched.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--report", path, "--", E["CG_RACE"]], **IGC_2_38)
    check(r.returncode == 0, "the race ran:\n%s%s" % (r.stdout, r.stderr))
    with open(path) as f:
        rep = json.load(f)
    p = rep["processes"][0]
    q = [q for q in p["quirks"] if q["name"] == "igc-2.38-zeModuleCreate"]
    check(q, "the quirk matched: %s" % p["quirks"])
    q[0].update(applied=False, not_applied="not applied, for this test")
    site = [s for s in p["sites"] if s["name"] == "zeModuleCreate"][0]
    site.update(peak_inside=16, peak_waiting=0, lock_wait_ns=0)
    site["policy"]["serialize"] = None
    edited = os.path.join(TMP, "unfixed.json")
    with open(edited, "w") as f:
        json.dump(rep, f)
    t = run([E["CG_CLI"], "report", edited], COLUMNS="1000")
    lines = t.stdout.splitlines()
    head = [k for k, l in enumerate(lines) if l.startswith("callguard: pid ")]
    warn = [k for k, l in enumerate(lines) if l == "  known bug igc-2.38-zeModuleCreate of this run's driver: "
                                                    "zeModuleCreate had 16 threads inside at once"]
    check(head and warn and warn[0] < head[0] and
          lines[warn[0] + 1].startswith("    fix: callguard run --serialize zeModuleCreate=igc,") and
          lines[warn[0] + 1].endswith(" -- PROGRAM"), "a warning with its fix, first:\n" + t.stdout)
    merged = os.path.join(TMP, "unfixed-merged.json")
    t = run([E["CG_CLI"], "report", "--json", merged, edited])
    a = zeModuleCreate_advice(merged).get("igc-2.38-zeModuleCreate")
    check(t.returncode == 0 and a and a["affects_this_run"] is True and a["applied"] is False and a["fix"],
          "affects the run, not fixed: %s" % a)



def ze_zeinit_once_serializes_16_first_calls_until_one_succeeds():
    """16 threads call zeInit at once through the real loader and the simulator, under --serialize zeInit:once:
    the first to hold the lock succeeds and opens the gate (call 1 of 17); the program runs on as plainly."""
    path = os.path.join(TMP, "zeinit-once.json")
    r = run([E["CG_CLI"], "run", "--api", "ze", "--serialize", "zeInit:once", "--report", path, "--", E["CG_RACE"],
             "init"])
    check(r.returncode == 0 and "created 16 modules" in r.stdout, "exit %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    with open(path) as f:
        row = [s for p in json.load(f)["processes"] for s in p["sites"] if s["name"] == "zeInit"]
    check(len(row) == 1 and row[0]["calls"] == 17, "17 zeInit calls: %s" % row)
    pol = row[0]["policy"]
    check(pol["serialize"] == "zeInit" and pol["scope"] == "once" and pol["opened_at_call"] == 1, "policy: %s" % pol)


if __name__ == "__main__":
    main()
