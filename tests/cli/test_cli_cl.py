"""`callguard run` on the real OpenCL stack (PoCL through ocl-icd).
Run: test_cli_cl.py TEST CALLGUARD CL_DLOPEN PYOPENCL_JOB (or --list)

Each test runs a real program plain and under `callguard run`, and checks
that the output is identical and that the report counted its calls.
"""
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

if not listing():
    CG, CL_DLOPEN, PYJOB = sys.argv[2:5]
    TMP = tempfile.mkdtemp(prefix="cgclcli-")
LONG_WAIT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cl_long_wait.py")
PY = "/usr/bin/python3"
SHIPPED_QUIRKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apis", "quirks.ini")


def run(args, env=None):
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    # Each test process its own PoCL cache; one PoCL thread (2 cores here).
    e.setdefault("POCL_CACHE_DIR", tempfile.mkdtemp(prefix="pocl-", dir=TMP))
    e["POCL_MAX_PTHREAD_COUNT"] = "1"
    # A real build every run: PoCL then spawns /usr/bin/ld as a child, which
    # inherits the guard, makes no OpenCL call and so gets no section.
    e["PYOPENCL_NO_CACHE"] = "1"
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=300)


def guarded(args, *opts, env=None):
    path = os.path.join(TMP, "r%d.json" % len(os.listdir(TMP)))
    r = run([CG, "run", "--api", "cl", "--report", path, *opts, "--", *args], env)
    with open(path) as f:
        return r, json.load(f)


def site(proc, name):
    return next((s for s in proc["sites"] if s["name"] == name), {"calls": 0})


def uninstrumented(program):
    """clinfo and Debian's python (the only one PyOpenCL loads in) are not
    instrumented: a sanitizer-built layer preloaded into them needs the
    sanitizer's runtime first (docs/development.md, "Sanitizers"). Their
    tests run in the default build and are skipped in the others."""
    if os.environ.get("CG_SANITIZE"):
        print("SKIP: %s is not instrumented, and this build's layer is (CALLGUARD_SANITIZE=%s)" % (program, os.environ["CG_SANITIZE"]))
        sys.exit(77)
    return program


def clinfo_runs_unchanged_without_loader_warnings():
    plain = run([uninstrumented("clinfo")])
    check(plain.returncode == 0, plain.stderr)
    r, rep = guarded(["clinfo"])
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output")
    own = [l for l in r.stderr.splitlines(True) if not l.startswith("callguard: wrote ")]
    check("version information" not in r.stderr and "".join(own) == plain.stderr, "no loader warnings: %r" % r.stderr)
    p = rep["processes"][0]
    check(site(p, "clGetPlatformIDs")["calls"] >= 1 and site(p, "clGetDeviceInfo")["calls"] > 10, "counted: %s" % p)


def run_guards_a_program_that_dlopens_libopencl():
    plain = run([CL_DLOPEN])
    check(plain.returncode == 0, plain.stderr)
    r, rep = guarded([CL_DLOPEN], "--serialize", "clGetPlatformIDs")
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r %r" % (r.stdout, r.stderr))
    p = rep["processes"][0]
    s = site(p, "clGetPlatformIDs")
    check(s["calls"] == 3 and s["policy"]["serialize"] == "clGetPlatformIDs", "3 calls through dlsym, once each: %s" % s)
    check(site(p, "clGetPlatformInfo")["calls"] == 1, "clGetPlatformInfo once")


def run_shim_needs_the_real_loader_not_the_placeholder():
    """Under `callguard run` the shim's libcallguard-real-cl.so is the run's
    link to the real loader: LD_LIBRARY_PATH (the run's shim folder) is
    searched before the shim's run path, which holds the placeholder of that
    name. The loader opens the run's link, never the placeholder, and the
    calls reach PoCL and are counted."""
    plain = run([CL_DLOPEN])
    check(plain.returncode == 0, plain.stderr)
    r, rep = guarded([CL_DLOPEN], "--serialize", "clGetPlatformIDs")
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r %r" % (r.stdout, r.stderr))
    check(site(rep["processes"][0], "clGetPlatformIDs")["calls"] == 3, "counted: %s" % rep)
    r = run([CG, "run", "--api", "cl", "--", CL_DLOPEN], env={"LD_DEBUG": "libs"})
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output under LD_DEBUG: %r" % r.stdout)
    inits = [l.split("calling init: ", 1)[1] for l in r.stderr.splitlines() if "calling init: " in l]
    real = [p for p in inits if p.endswith("/libcallguard-real-cl.so")]
    check(len(real) == 1 and real[0].endswith("/shims/libcallguard-real-cl.so") and "/callguard-" in real[0],
          "the run's link, in the run's folder: %s" % real)
    check("placeholder" not in r.stderr and "works only under" not in r.stderr, "no placeholder: %s" % r.stderr)


def shim_outside_run_loads_and_says_it_needs_callguard_run():
    """The libOpenCL.so.1 shim loaded without `callguard run` (its folder on
    LD_LIBRARY_PATH by hand) finds the placeholder on its run path: it loads,
    names itself and `callguard run` in one line, and its calls return
    OpenCL's error instead of reaching a driver it has not got."""
    shims = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(CG))), "lib", "callguard", "shims")
    r = run([CL_DLOPEN], env={"LD_LIBRARY_PATH": shims})
    check("dlopen:" not in r.stderr, "the shim loads: %r" % r.stderr)
    said = "callguard: libOpenCL.so.1 in %s is callguard's shim and works only under `callguard run`\n" % shims
    check(r.stderr.count(said) == 1, "one line naming the shim: %r" % r.stderr)
    check(r.returncode == 1 and r.stdout == "platforms 0: \n", "no platform: %r" % r.stdout)


def run_pyopencl_counts_each_process():
    py = uninstrumented(PY)
    plain = run([py, PYJOB])
    check(plain.returncode == 0, plain.stderr)
    r, rep = guarded([py, PYJOB], "--serialize", "clBuildProgram")
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r %r" % (r.stdout, r.stderr))
    procs = rep["processes"]
    main = [p for p in procs if PYJOB in p["command"]]
    check(len(main) == 1, "one section for the python process: %s" % [p["command"] for p in procs])
    m = main[0]
    check(site(m, "clBuildProgram")["calls"] >= 1 and site(m, "clEnqueueNDRangeKernel")["calls"] == 1,
          "the build and the launch counted in the python process: %s" % m["sites"])
    check(m["exit"] == {"state": "exited", "status": 0}, m["exit"])
    check(all(p["totals"]["calls"] > 0 for p in procs), "only processes that made calls have sections")


POCL_QUIRKS = """; quirks keyed on PoCL as it is (docs/quirks.md)
[quirk:pocl-builds]
api       = cl
driver    = Portable Computing Language
versions  = 1 .. 99
serialize = clBuildProgram, clGetPlatformInfo
domain    = poclq
source    = https://example.org/pocl-builds
why       = a test quirk matching PoCL's CL_DRIVER_VERSION

[quirk:pocl-too-old]
api       = cl
driver    = Portable Computing Language
versions  = 0 .. 0.9
serialize = clEnqueueNDRangeKernel
domain    = never
source    = https://example.org/pocl-too-old
why       = a test quirk no PoCL this side of 1.0 matches
"""


def quirks_file(text):
    path = os.path.join(TMP, "pocl-quirks.ini")
    with open(path, "w") as f:
        f.write(text)
    return path


def quirk_applied_checks(p):
    names = [q["name"] for q in p["quirks"]]
    check(names == ["pocl-builds"], "only the matching quirk applied: %s" % p["quirks"])
    q = p["quirks"][0]
    check(q["matched"]["driver"] == "Portable Computing Language" and q["matched"]["version"][:1].isdigit(),
          "the identity matched: %s" % q)
    check(q["source"] == "https://example.org/pocl-builds" and q["serialize"] == ["clBuildProgram", "clGetPlatformInfo"],
          q)
    check(site(p, "clEnqueueNDRangeKernel").get("policy", {}).get("serialize") is None, "pocl-too-old is off")


def run_quirk_matching_pocl_serializes_its_builds():
    py = uninstrumented(PY)
    plain = run([py, PYJOB])
    check(plain.returncode == 0, plain.stderr)
    r, rep = guarded([py, PYJOB], "--quirks", quirks_file(POCL_QUIRKS))
    check(r.returncode == 0 and r.stdout == plain.stdout, "same output: %r %r" % (r.stdout, r.stderr))
    m = [p for p in rep["processes"] if PYJOB in p["command"]][0]
    quirk_applied_checks(m)
    b = site(m, "clBuildProgram")
    check(b["calls"] >= 1 and b["policy"]["serialize"] == "poclq", "the quirk serialized the builds: %s" % b)
    # without the file, the shipped quirks leave PoCL's builds alone (only PoCL's user-event bug matches)
    r, rep = guarded([py, PYJOB])
    m = [p for p in rep["processes"] if PYJOB in p["command"]][0]
    check([q["name"] for q in m["quirks"]] == ["pocl-2216-clSetUserEventStatus"] and
          site(m, "clBuildProgram")["policy"]["serialize"] is None, m["quirks"])


def run_quirk_pocl_user_events_failed_at_once_finish_their_waiter_once():
    """pocl PR #2216 on Debian's PoCL 3.1 (inside the shipped entry's 0 .. 7.1): two threads set the two
    user events one read waits on to an error at once; PoCL finishes the read twice now and then and
    aborts (an assertion; plainly about 1 run in 2 of 500 rounds here). With the shipped quirks file the
    entry matches PoCL's CL_DRIVER_VERSION and serializes clSetUserEventStatus: every round ends."""
    race = os.environ["CL_USER_EVENT_RACE"]
    for _ in range(2):
        r, rep = guarded([race, "1500"])
        check(r.returncode == 0 and "rounds: 1500" in r.stdout, "every round ended: %s %s" % (r.returncode, r.stderr))
    p = rep["processes"][0]
    q = [x for x in p["quirks"] if x["name"] == "pocl-2216-clSetUserEventStatus"]
    check(len(q) == 1 and q[0]["applied"] and q[0]["matched"]["driver"] == "Portable Computing Language",
          "the PoCL entry matched and applied: %s" % p["quirks"])
    s = site(p, "clSetUserEventStatus")
    check(s["calls"] == 3000 and s["policy"]["serialize"] == "pocl-user-event", "serialized: %s" % s)
    # outside the entry's versions (a file whose range ends below 3.1), nothing is serialized: PoCL's own
    # race may then abort even this one round (seen once in a full run), as it does plainly
    path = quirks_file(open(SHIPPED_QUIRKS).read().replace("versions  = 0 .. 7.1", "versions  = 0 .. 3.0"))
    r, rep = guarded([race, "1"], "--quirks", path)
    p = rep["processes"][0]
    check(r.returncode in (0, -signal.SIGABRT) and not [x for x in p["quirks"] if x["name"].startswith("pocl-2216")] and
          site(p, "clSetUserEventStatus")["policy"]["serialize"] is None, "no match below 3.1: %s" % p["quirks"])


def run_policy_that_counts_nothing_says_so_and_lists_few_names():
    """A policy file's `[defaults] count = no` leaves every cl entry point uncounted: PoCL's calls go straight
    to the driver, and the report says so (no process made a counted call; how many entry points it called
    that the policy leaves uncounted, the first few named; JSON "not_counted"), not that LD_PRELOAD was
    cleared; `callguard report` of the saved JSON says the same. With one counted again, a program that calls
    more than eight others gets one line: their number and the first three."""
    prog = os.environ["CL_INFO_LOOP"]
    policy = os.path.join(TMP, "count-nothing.ini")
    with open(policy, "w") as f:
        f.write("[defaults]\ncount = no\n")
    path = os.path.join(TMP, "count-nothing.json")
    r = run([CG, "run", "--api", "cl", "--report", path, "--", prog, "10"], {"CALLGUARD_POLICY": policy})
    check(r.returncode == 0, r.stderr)
    with open(path) as f:
        rep = json.load(f)
    # the calls it made: clGetPlatformIDs, clGetDeviceIDs, clGetDeviceInfo (not the 100-odd others)
    nc = rep.get("not_counted", {})
    check(rep["processes"] == [] and nc.get("processes") == 1 and nc.get("entry_points") == 3 and
          nc.get("such_as") == ["clGetPlatformIDs", "clGetDeviceIDs", "clGetDeviceInfo"], "not_counted: %s" % nc)
    live = run([CG, "run", "--api", "cl", "--report", "-", "--", prog, "10"], {"CALLGUARD_POLICY": policy}).stderr
    for text in (live, run([CG, "report", path]).stdout):
        text = " ".join(text.split())  # lines fitted to the width
        check("no process made a counted driver call" in text and "it called 3 entry points its policy leaves "
              "uncounted (count = no): clGetPlatformIDs, clGetDeviceIDs, clGetDeviceInfo a policy file's" in text and
              "LD_PRELOAD" not in text,
              "the text says why:\n" + text)
    vadd = os.environ.get("CG_VADD", "")
    if not os.access(vadd, os.X_OK):
        print("SKIP (in part): no examples/cl_vadd (%s) to call more than eight entry points" % vadd)
        return 77
    with open(policy, "a") as f:
        f.write("[clGetPlatformIDs]\ncount = yes\n")
    # (in a sanitizer build, cl_vadd's leak check would fail it for PoCL's and LLVM's own allocations)
    quiet = (os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
    r = run([CG, "run", "--api", "cl", "--report", "-", "--", vadd], {"CALLGUARD_POLICY": policy, "ASAN_OPTIONS": quiet})
    m = re.search(r"not counted \(their policy's count = no\): (\d+) entry points: ([^.]*), \.\.\.", " ".join(r.stderr.split()))
    check(r.returncode == 0 and m and int(m.group(1)) > 8 and len(m.group(2).split(", ")) == 3 and
          "clGetPlatformIDs" not in m.group(2), "how many, the first three:\n" + r.stderr)


def run_trace_of_200000_device_infos_keeps_each_with_its_arguments_and_result():
    """200,000 clGetDeviceInfo calls on PoCL under --trace: 200,000 events (a thread's ring once kept 65,535), each
    with param_name named by the header (CL_DEVICE_NAME), the size it returned read after the call, and its
    result named; the program's output unchanged; the JSON read by Python's parser."""
    prog, n = os.environ["CL_INFO_LOOP"], 200000
    plain = run([prog, str(n)])
    check(plain.returncode == 0, plain.stderr)
    path = os.path.join(TMP, "info-trace.json")
    r = run([CG, "run", "--api", "cl", "--trace", path, "--", prog, str(n)])
    check(r.returncode == 0 and r.stdout == plain.stdout, "unchanged: %r %r %s" % (r.stdout, plain.stdout, r.stderr))
    with open(path) as f:
        trace = json.load(f)
    ev = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "clGetDeviceInfo"]
    check(len(ev) == n and trace["otherData"]["dropped"] == 0, "%d events, %s" % (len(ev), trace["otherData"]))
    size = int(plain.stdout.split()[-1])
    want = {"api": "cl", "param_name": "CL_DEVICE_NAME", "param_value_size": 256, "param_value_size_ret": size,
            "result": "CL_SUCCESS", "result_code": 0}
    bad = [e for e in ev if any(e["args"].get(k) != v for k, v in want.items()) or
           not re.fullmatch(r"0x[0-9a-f]+", e["args"]["device"])]
    check(not bad, "%d events without their arguments: %s" % (len(bad), bad[:2]))
    ts = [e["ts"] for e in ev]
    check(ts == sorted(ts), "in order")


def run_counts_every_call_of_a_process_killed_in_a_run():
    """A thread's plain counted calls of one site, one after another, are counted in its slot until another
    site's call adds them to its record (layer.h, cg_slot_enter): a process killed (SIGKILL) with such a run
    pending loses none of it. cl_info_loop N kill asks the device's name N times, and the platform's name every
    third time in the first half (a run ended each time), then kills itself: the report counts every call, read
    live and back."""
    prog, n = os.environ["CL_INFO_LOOP"], 1000
    path = os.path.join(TMP, "killed-run.json")
    r = run([CG, "run", "--api", "cl", "--report", path, "--", prog, str(n), "kill"])
    check(r.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL) and r.stdout.strip(), "%d %r %s" % (r.returncode, r.stdout, r.stderr))
    with open(path) as f:
        rep = json.load(f)
    check(len(rep["processes"]) == 1, "one process: %s" % rep["processes"])
    proc = rep["processes"][0]
    calls = {name: site(proc, name)["calls"] for name in ("clGetDeviceInfo", "clGetPlatformInfo", "clGetDeviceIDs")}
    platform = (n // 2 + 2) // 3
    check(calls == {"clGetDeviceInfo": n, "clGetPlatformInfo": platform, "clGetDeviceIDs": 1}, "calls: %s" % calls)
    text = " ".join(run([CG, "report", path]).stdout.split())
    total = n + platform + 2  # and clGetPlatformIDs, clGetDeviceIDs
    check("1 process, %d calls" % total in text, "read back:\n" + text)


def run_trace_reads_no_string_or_output_of_a_failed_call():
    """A call that fails before reading its string (clCreateKernel of no program, kernel_name a bad pointer) or
    writing its output (clGetDeviceInfo of an unknown param_name, param_value_size_ret a bad pointer): under
    --trace the program runs as plainly (the timeline reads neither), and the events show the pointers and the
    results by name; so does a failed call with no output (clRetainContext of no context)."""
    prog = os.environ["CL_INFO_LOOP"]
    plain = run([prog, "bad"])
    check(plain.returncode == 0, plain.stderr)
    path = os.path.join(TMP, "bad-trace.json")
    r = run([CG, "run", "--api", "cl", "--trace", path, "--", prog, "bad"])
    check(r.returncode == 0 and r.stdout == plain.stdout, "unchanged: %r %r %s" % (r.stdout, plain.stdout, r.stderr))
    with open(path) as f:
        ev = {e["name"]: e["args"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"}
    k, i = ev["clCreateKernel"], ev["clGetDeviceInfo"]
    check(k["kernel_name"] == "0x10" and k["errcode_ret"] == "CL_INVALID_PROGRAM" and k["return"] is None, k)
    check(i["param_name"] == 32767 and i["param_value_size_ret"] == "0x10" and i["result"] == "CL_INVALID_VALUE", i)
    # a failure of a call with no output: its words made by the layer's path (layer_args.h), the result named
    c = ev["clRetainContext"]
    check(c["context"] is None and c["result"] == "CL_INVALID_CONTEXT" and c["result_code"] == -34 and c["error"], c)


def run_quirk_reaches_a_program_that_dlopens_libopencl():
    # through the soname shim: the probe runs after its clGetPlatformIDs, before clGetPlatformInfo
    r, rep = guarded([CL_DLOPEN], "--quirks", quirks_file(POCL_QUIRKS))
    check(r.returncode == 0, r.stderr)
    p = rep["processes"][0]
    quirk_applied_checks(p)
    s = site(p, "clGetPlatformInfo")
    check(s["calls"] == 1 and s["policy"]["serialize"] == "poclq", "serialized by the quirk: %s" % s)


def run_quirks_not_applied_are_reported_as_such_and_counted():
    """On PoCL: a matching quirk that names an entry point the cl layer lacks
    serializes nothing and is reported as not applied, with why, beside one
    that applies; a file of 5,000 matching quirks (one lock domain each,
    more than a process has) prints one line on stderr, and the report keeps
    16 with the number of the others, in the JSON and in `callguard report`."""
    path = os.path.join(TMP, "typo-quirks.ini")
    with open(path, "w") as f:
        f.write(POCL_QUIRKS + """
[quirk:pocl-typo]
api       = cl
driver    = Portable Computing Language
versions  = 1 .. 99
serialize = clGetPlatformIDs, clBuildProgramm
domain    = typo
source    = https://example.org/pocl-typo
why       = a test quirk naming an entry point that does not exist
""")
    r, rep = guarded([CL_DLOPEN], "--quirks", path)
    check(r.returncode == 0, r.stderr)
    p = rep["processes"][0]
    q = {x["name"]: x for x in p["quirks"]}
    check(sorted(q) == ["pocl-builds", "pocl-typo"], p["quirks"])
    typo = q["pocl-typo"]
    check(typo.get("applied") is False and "clBuildProgramm is not an entry point" in typo["not_applied"],
          "reported as not applied, with why: %s" % typo)
    check(q["pocl-builds"]["applied"] is True and "not_applied" not in q["pocl-builds"], q["pocl-builds"])
    check(p["quirks_dropped"] == 0, p["quirks_dropped"])
    check(site(p, "clGetPlatformIDs")["policy"]["serialize"] is None, "nothing of it serialized: %s" %
          site(p, "clGetPlatformIDs"))
    says = [l for l in r.stderr.splitlines() if "quirk" in l]
    check(len(says) == 1 and "1 of the 2 quirks" in says[0] and "pocl-typo" in says[0], r.stderr)
    saved = os.path.join(TMP, "typo.json")
    with open(saved, "w") as f:
        json.dump(rep, f)
    t = run([CG, "report", saved])
    check(t.returncode == 0 and "quirk pocl-typo NOT applied: clBuildProgramm" in t.stdout and
          "quirk pocl-builds applied" in t.stdout, t.stdout + t.stderr)

    many = os.path.join(TMP, "many-quirks.ini")
    with open(many, "w") as f:
        for i in range(5000):
            f.write("[quirk:q%04d]\napi = cl\ndriver = Portable Computing Language\nversions = 1 .. 99\n"
                    "serialize = clGetPlatformInfo\ndomain = d%04d\nsource = https://example.org/q\n"
                    "why = one of many\n" % (i, i))
    r, rep = guarded([CL_DLOPEN], "--quirks", many)
    check(r.returncode == 0, r.stderr[-2000:])
    p = rep["processes"][0]
    says = [l for l in r.stderr.splitlines() if l.startswith("callguard:") and not l.startswith("callguard: wrote ")]
    check(len(says) == 1 and "of the 5000 quirks" in says[0], "one line on stderr: %r" % r.stderr[-2000:])
    applied = [x for x in p["quirks"] if x["applied"]]
    check(len(p["quirks"]) == 16 and p["quirks_dropped"] == 5000 - 16, (len(p["quirks"]), p["quirks_dropped"]))
    check(0 < len(applied) < 16 or len(applied) == 16, "the first ones applied: %s" % p["quirks"][:2])
    failed = int(says[0].split("callguard: ")[1].split(" ")[0])
    check(4900 < failed < 5000 and "lock domain" in says[0], "most are not applied, for want of domains: %s" % says[0])
    saved = os.path.join(TMP, "many.json")
    with open(saved, "w") as f:
        json.dump(rep, f)
    t = run([CG, "report", saved])
    check(t.returncode == 0 and t.stdout.count("  quirk q") == 16 and "4984 more quirks matched" in t.stdout,
          t.stdout[:3000] + t.stderr)


def run_peaks_pocl_builds_at_once_advise_the_igc_fix():
    """8 threads build programs at once on PoCL (started on a barrier; the
    test's interposer below the layer sleeps inside each build): the report
    counts them inside clBuildProgram together, exactly, and its advice names
    the IGC 2.38 bug (an Intel driver's) with the command-line fix, though
    PoCL ran. Serialized, one is inside at a time and the others wait, and
    there is no advice. clGetPlatformIDs, entered by one thread, gets none."""
    prog, spy = os.environ["CL_PROGRAM"], os.environ["CL_SPY"]
    r, rep = guarded([prog, "race", "8"], env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "builds=8 failed=0" in r.stdout, r.stdout + r.stderr)
    p = rep["processes"][0]
    b = site(p, "clBuildProgram")
    check(b["peak_kind"] == "exact" and 2 <= b["peak_inside"] <= 8 and b["peak_waiting"] == 0, b)
    spied = int(r.stdout.split("max_inside=")[1].split()[0])
    check(b["peak_inside"] == spied, "the driver's own count agrees: %d, %s" % (spied, b))
    check(site(p, "clGetPlatformIDs")["peak_inside"] == 1, site(p, "clGetPlatformIDs"))
    # a cheap entry point (neither blocking nor serialized): not counted on its path
    check(site(p, "clReleaseProgram")["peak_kind"] == "not_measured", site(p, "clReleaseProgram"))
    items = {a["quirk"]: a for a in rep["advice"] if a["entry_point"] == "clBuildProgram"}
    igc = items.get("igc-2.38-clBuildProgram")
    check(igc and igc["peak_inside"] == b["peak_inside"] and igc["applied"] is False and
          igc["fix"] == "--serialize clBuildProgram=igc,clCompileProgram=igc,clLinkProgram=igc" and
          igc["affects"]["versions"] == "26.27.39122.11 .. 26.27.39122.11" and
          igc["source"].startswith("https://github.com/intel/"), rep["advice"])
    check(all(a["entry_point"] == "clBuildProgram" for a in rep["advice"]), rep["advice"])

    r, rep = guarded([prog, "race", "8"], "--serialize", "clBuildProgram", env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "max_inside=1" in r.stdout, r.stdout + r.stderr)
    b = site(rep["processes"][0], "clBuildProgram")
    check(b["peak_inside"] == 1 and b["peak_waiting"] >= 1, b)
    check(rep["advice"] == [], rep["advice"])


def run_shared_domain_lets_device_queries_in_together_and_a_platform_query_alone():
    """Issue 53: --serialize clGetDeviceInfo=dev:shared,clGetPlatformInfo=dev
    on 4 threads of device queries and one of platform queries (PoCL; the
    test's interposer below the layer sleeps inside each): device queries
    are inside together, never beside a platform query, which waits for
    them; the report says shared. Without :shared, one device query at a
    time."""
    prog, spy = os.environ["CL_PROGRAM"], os.environ["CL_SPY"]
    r, rep = guarded([prog, "info", "4", "25"], "--serialize", "clGetDeviceInfo=dev:shared,clGetPlatformInfo=dev",
                     env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "failed=0" in r.stdout and "together=0" in r.stdout, r.stdout + r.stderr)
    p = rep["processes"][0]
    d, pl = site(p, "clGetDeviceInfo"), site(p, "clGetPlatformInfo")
    spied = int(r.stdout.split("device_info_max_inside=")[1].split()[0])
    check(d["calls"] - d["nested"] >= 100 and d["peak_kind"] == "exact" and 2 <= d["peak_inside"] <= 4, d)
    check(d["peak_inside"] == spied, "the interposer's count agrees: %d, %s" % (spied, d))
    check(d["policy"]["serialize"] == "dev" and d["policy"]["scope"] == "shared", d["policy"])
    check(pl["calls"] - pl["nested"] >= 25 and pl["peak_inside"] == 1 and pl["lock_wait_ns"] > 0, pl)
    check(pl["policy"]["serialize"] == "dev" and pl["policy"]["scope"] == "process", pl["policy"])

    r, rep = guarded([prog, "info", "4", "5"], "--serialize", "clGetDeviceInfo=dev,clGetPlatformInfo=dev",
                     env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "device_info_max_inside=1 together=0" in r.stdout, r.stdout + r.stderr)
    check(site(rep["processes"][0], "clGetDeviceInfo")["peak_inside"] == 1, rep["processes"][0])


def shipped_quirk_on_pocl(name):
    """The shipped quirks file's entry NAME, its driver pattern replaced by PoCL's platform name and its
    versions by every version: the entry's own fix, run on PoCL."""
    with open(SHIPPED_QUIRKS) as f:
        text = f.read()
    body = text.split("[quirk:%s]" % name)[1].split("\n\n")[0]
    lines = [l for l in body.strip().splitlines() if not l.startswith(("driver", "versions"))]
    return "[quirk:%s]\ndriver = Portable Computing Language\nversions = 0 .. 999999999\n%s\n" % (
        name, "\n".join(lines))


def run_quirk_clvk_883_locks_each_queue_apart():
    """clvk PR #883's race, on PoCL: the test's interposer below the layer aborts when two threads are in
    clEnqueueWriteBuffer on one queue, as clvk before the fix raced on the queue's batch. Two threads on
    each of two queues: with the quirks off it aborts; with the shipped clvk entry (rekeyed on PoCL) the
    writes of one queue wait for each other and those of the two queues still run together."""
    prog, spy = os.environ["CL_PROGRAM"], os.environ["CL_SPY"]
    r = run([CG, "run", "--api", "cl", "--quirks", "off", "--", prog, "enqueue", "20"], env={"LD_PRELOAD": spy})
    check(r.returncode != 0 and "two threads in clEnqueueWriteBuffer on one queue" in r.stderr,
          "quirks off: the race aborts", r.stdout + r.stderr)
    path = quirks_file(shipped_quirk_on_pocl("clvk-883-enqueue-one-queue"))
    r, rep = guarded([prog, "enqueue", "20"], "--quirks", path, env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "failed=0" in r.stdout, r.stdout + r.stderr)
    check(int(r.stdout.split("writes_max_inside=")[1].split()[0]) == 2, "the two queues' writes together: " + r.stdout)
    p = rep["processes"][0]
    q = {x["name"]: x for x in p["quirks"]}
    check(q["clvk-883-enqueue-one-queue"]["applied"], p["quirks"])
    w = site(p, "clEnqueueWriteBuffer")
    check(w["policy"]["serialize"] == "clvk-queue" and w["policy"]["scope"] == "handle" and w["peak_inside"] == 2, w)


ONCE_AND_ADVICE = """; a quirk of first calls and advice-only quirks, keyed on PoCL (docs/quirks.md)
[quirk:pocl-once]
api       = cl
driver    = Portable Computing Language
versions  = 1 .. 99
serialize = clBuildProgram
domain    = pocl-once
scope     = once
source    = https://example.org/pocl-once
why       = a test quirk of first calls

[quirk:pocl-advice]
api       = cl
driver    = Portable Computing Language
versions  = 1 .. 99
serialize = clBuildProgram
advice    = build each program once, before the threads start
source    = https://example.org/pocl-advice
why       = a test quirk no lock fixes

[quirk:pocl-advice-old]
api       = cl
driver    = Portable Computing Language
versions  = 0 .. 0.9
serialize = clBuildProgram
advice    = never shown
source    = https://example.org/pocl-advice-old
why       = a test quirk no PoCL this side of 1.0 matches
"""


def run_quirk_scope_once_and_advice_only_quirks_on_pocl():
    """A quirk with scope = once serializes its entry point with that scope (the report's policy says
    once); an advice-only quirk serializes nothing, is reported as matched and not applied ("advice
    only: ..."), and with 8 PoCL builds at once its advice says what to do instead of a fix, in the
    JSON and in `callguard report --advice`; one outside PoCL's version does not match."""
    prog, spy = os.environ["CL_PROGRAM"], os.environ["CL_SPY"]
    r, rep = guarded([prog, "race", "8"], "--quirks", quirks_file(ONCE_AND_ADVICE), env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "builds=8 failed=0" in r.stdout, r.stdout + r.stderr)
    p = rep["processes"][0]
    q = {x["name"]: x for x in p["quirks"]}
    check(sorted(q) == ["pocl-advice", "pocl-once"], "the two in PoCL's range matched: %s" % p["quirks"])
    check(q["pocl-once"]["applied"] is True, q["pocl-once"])
    check(q["pocl-advice"]["applied"] is False and
          q["pocl-advice"]["not_applied"] == "advice only: build each program once, before the threads start",
          q["pocl-advice"])
    b = site(p, "clBuildProgram")
    check(b["policy"]["serialize"] == "pocl-once" and b["policy"]["scope"] == "once", b["policy"])
    check("quirk" not in r.stderr, "an advice-only quirk is no failure to apply: %r" % r.stderr)

    # the advice-only quirk alone: the builds are not serialized, 8 are inside at once
    path = quirks_file(ONCE_AND_ADVICE.split("[quirk:pocl-advice]")[0].replace("[quirk:pocl-once]", "[quirk:x]")
                       .replace("scope     = once\n", "").replace("1 .. 99", "0 .. 0.9") +
                       "[quirk:pocl-advice]" + ONCE_AND_ADVICE.split("[quirk:pocl-advice]")[1])
    r, rep = guarded([prog, "race", "8"], "--quirks", path, env={"LD_PRELOAD": spy})
    check(r.returncode == 0 and "builds=8 failed=0" in r.stdout, r.stdout + r.stderr)
    check(site(rep["processes"][0], "clBuildProgram")["policy"]["serialize"] is None, "nothing serialized")
    a = [x for x in rep["advice"] if x["quirk"] == "pocl-advice"]
    check(len(a) == 1 and a[0]["fix"] is None and a[0]["advice"] == "build each program once, before the threads "
          "start" and a[0]["affects_this_run"] is True and a[0]["peak_inside"] >= 2, rep["advice"])
    old = [x for x in rep["advice"] if x["quirk"] == "pocl-advice-old"]
    check(len(old) == 1 and old[0]["affects_this_run"] is False and
          [q["name"] for q in rep["processes"][0]["quirks"]] == ["pocl-advice"],
          "outside its versions: advice as another driver's bug, no match: %s" % old)
    # `callguard report --advice` reads the shipped file: its advice-only OpenVINO entry, in full
    saved = os.path.join(TMP, "advice.json")
    with open(saved, "w") as f:
        json.dump(rep, f)
    t = run([CG, "report", "--advice", saved])
    said = " ".join(t.stdout.split())
    check(t.returncode == 0 and "known bug openvino-38235-igc-compile breaks on cl drivers" in said and
          "do: a guess, not a known fix: try callguard run --serialize" in said, t.stdout + t.stderr)


def tmux(sock, *args):
    return subprocess.run(["tmux", "-L", sock, "-f", "/dev/null", *args], capture_output=True, text=True, timeout=30)


def screen_of(command, width=100, height=50, timeout=240):
    """What a person sees: command run in a tmux window of width x height,
    its lines as written (a line tmux wrapped is joined again: -J)."""
    sock = "cgtest-%d" % os.getpid()
    done = "CG-SCREEN-DONE"
    try:
        r = tmux(sock, "new-session", "-d", "-x", str(width), "-y", str(height),
                 "%s; echo %s; sleep 600" % (command, done))
        check(r.returncode == 0, "tmux started: %s" % r.stderr)
        for _ in range(timeout * 4):
            out = tmux(sock, "capture-pane", "-p", "-J", "-S", "-").stdout
            if done in out:
                return out.split(done)[0]
            time.sleep(0.25)
        raise AssertionError("the run did not end in %d s:\n%s" % (timeout, out))
    finally:
        tmux(sock, "kill-server")


def run_report_on_a_100_column_screen_leads_with_the_summary_and_fits():
    """The PoCL demo program under `callguard run --report -` in a tmux window 100 columns wide, as a
    person sees it: the summary comes first, no line of the report is wider than the screen (none was
    wrapped), and the table lists entry points by time in the driver, largest first. Known bugs of
    other drivers (IGC's, on PoCL) take one line, not a warning each."""
    vadd = os.environ.get("CG_VADD", "")
    if not shutil.which("tmux") or not os.access(vadd, os.X_OK):
        print("SKIP: needs tmux and examples/cl_vadd (%s)" % (shutil.which("tmux"), vadd))
        return 77
    plain = run([vadd])
    if plain.returncode != 0:
        print("SKIP: the demo program does not run on this OpenCL stack (PoCL): %s" % plain.stderr[-500:])
        return 77
    cache = tempfile.mkdtemp(prefix="pocl-", dir=TMP)
    screen = screen_of("cd %s && env -u COLUMNS -u CALLGUARD_REPORT POCL_CACHE_DIR=%s POCL_MAX_PTHREAD_COUNT=1 %s run "
                       "--report - -- %s" % (shlex.quote(TMP), shlex.quote(cache), shlex.quote(os.path.abspath(CG)),
                                             shlex.quote(vadd)))
    lines = screen.rstrip("\n").splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("callguard:")), None)
    check(first is not None, "a report on the screen:\n" + screen)
    report = lines[first:]
    figures = re.match(r"  \d+ calls, [\d.]+ ms in the driver \(summed over threads\): (\w+) [\d.]+%", report[1])
    check(report[0] == "callguard: 1 process, exit 0" and figures, "the summary first:\n" + screen)
    table = next(i for i, l in enumerate(report) if l.split()[:2] == ["entry", "point"])
    check(0 < table <= 9, "the summary is at most 8 lines, before the table:\n" + screen)
    check(all(len(l) <= 100 for l in report), "no line wider than the screen:\n" +
          "\n".join(l for l in report if len(l) > 100))
    times = []
    for l in report[table + 1:]:
        f = l.split()
        if l.startswith("    "):
            continue  # what is unusual about the row above, its results
        if not l.startswith("  ") or f[0] in ("...", "time:", "policy"):
            break
        times.append(float(f[1]))
    check(len(times) >= 2 and times == sorted(times, reverse=True), "rows by time, largest first: %s\n%s" % (times, screen))
    check(figures.group(1) == report[table + 1].split()[0], "what took the time first:\n" + screen)
    check(not [l for l in report if l.startswith("callguard: advice:")] and
          len([l for l in report if "known" in l and "bug" in l]) == 1,
          "other drivers' bugs in one line, no warning:\n" + screen)


def long_wait(mode, *opts):
    """cl_long_wait.py under callguard run: its own figures and the report's
    section of the python process."""
    r, rep = guarded([PY, LONG_WAIT, mode], *opts)
    check(r.returncode == 0, r.stderr)
    out = json.loads(r.stdout)
    check(out["wait_ms"] >= 500, "the kernel keeps clFinish waiting >= 500 ms: %s" % out)
    main = [p for p in rep["processes"] if LONG_WAIT in p["command"]]
    check(len(main) == 1, [p["command"] for p in rep["processes"]])
    return out, main[0]


def cl_pydll_clfinish_stall_reported_with_python_line():
    """ctypes.PyDLL keeps the GIL in clFinish: the main thread stops for the
    whole wait, and the report names clFinish, the waiting thread and the
    Python line that called it."""
    out, p = long_wait("pydll")
    check(out["longest_ms"] >= 0.5 * out["wait_ms"], "the main thread stopped: %s" % out)
    st = p["stalls"][0]
    check(st["name"] == "clFinish" and st["api"] == "cl" and st["runtime"] == "cpython", "worst first: %s" % p["stalls"])
    check(st["ns"] >= 0.8 * out["wait_ms"] * 1e6, "the whole wait: %s vs %s" % (st, out))
    check(st["python"] == {"file": out["file"], "line": out["line"], "function": "wait"}, "the line: %s vs %s" % (st, out))
    check(st["tid"] != p["pid"], "the worker thread, not the main one: %s" % st)
    check(site(p, "clFinish")["stalls"] >= 1, site(p, "clFinish"))


def cl_pydll_clfinish_release_gil_pause_at_most_50ms():
    """The same program under --release-gil: callguard leaves the GIL around
    clFinish and the main thread keeps ticking."""
    out, p = long_wait("pydll", "--release-gil")
    check(out["longest_ms"] <= 50, "pauses of at most 50 ms: %s" % out)
    check(not [s for s in p["stalls"] if s["name"] == "clFinish"], "no clFinish stall: %s" % p["stalls"])


def cl_pyopencl_finish_releases_gil_no_stall():
    """PyOpenCL releases the GIL around clFinish itself: the same wait is no
    stall, and the main thread keeps ticking without --release-gil."""
    out, p = long_wait("pyopencl")
    check(site(p, "clFinish")["calls"] >= 1 and site(p, "clFinish")["stalls"] == 0, site(p, "clFinish"))
    check(not [s for s in p["stalls"] if s["name"] == "clFinish"], "no clFinish stall: %s" % p["stalls"])
    check(out["longest_ms"] <= 50, "pauses of at most 50 ms: %s" % out)


if __name__ == "__main__":
    main()
