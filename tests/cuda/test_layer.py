"""Tests of the CUDA layer (libcallguard_cuda.so) on the stand-in libcuda.so.1.

Run: test_layer.py TEST (or --list), with the paths in the environment (tests/cuda/CMakeLists.txt sets them):
CG_STANDIN (the stand-in), CG_LAYER (the layer), CG_CLI (callguard),
CG_RACE (compile race linked to the stand-in), CG_RACE_LINKED (linked to the layer),
CG_CALLS / CG_CALLS_LINKED (calls through cuGetProcAddress), CG_PROBE (the resolver probe),
CG_INSIDE (the probe below the layer), CG_EXPECTED_LAYER (what the probe must print for the layer),
CG_SANITIZER_PRELOAD (a sanitizer runtime to preload first, or empty), CG_PYTHON (the interpreter for
the pause tests), CG_CUDA_PYTHON (a Python with PyPI's cuda-bindings, for the cuda-python test).
Each test is a function named for the behaviour it checks.
"""
import json
import os
import signal
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from layertest import E, TESTS, check, main, report, run, sites  # noqa: E402  (tests/layertest.py)

TMP = tempfile.mkdtemp(prefix="cgcuda-")
RACE_ENV = {"CGCUDA_COMPILER_RACE": "abort", "CGCUDA_COMPILE_MS": "50"}


def preload(lib):
    return ":".join(p for p in (E.get("CG_SANITIZER_PRELOAD", ""), lib) if p)


def linked_env(**extra):
    """A program linked to the layer in libcuda's place finds the stand-in by CALLGUARD_CUDA_LIBRARY."""
    env = {"CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]}
    env.update(extra)
    return env


def cuda_layer_compile_race_aborts_unserialized():
    r = run([E["CG_RACE_LINKED"]], linked_env(**RACE_ENV))
    check(r.returncode == -signal.SIGABRT, "expected SIGABRT", r)
    check("cuModuleLoadData" in r.stderr, "the stand-in's abort message", r)


def cuda_layer_compile_race_serialized_loads_every_module():
    path = os.path.join(TMP, "race.json")
    env = linked_env(CALLGUARD_SERIALIZE="cuModuleLoadData", CALLGUARD_REPORT=path, **RACE_ENV)
    r = run([E["CG_RACE_LINKED"], E["CG_STANDIN"]], env)
    check(r.returncode == 0, "exit 0", r)
    check("loaded 16 modules, at most 1 threads inside" in r.stdout, "one thread at a time", r)
    rows = report(path)
    check(rows.get("cuModuleLoadData") == 16, "16 cuModuleLoadData calls in the report: %s" % rows)
    check(rows.get("cuCtxCreate") == 1, "cuCtxCreate_v2 counted as cuCtxCreate: %s" % rows)
    check("cuCtxCreate_v2" not in rows, "no row of a variant's own: %s" % rows)


def cuda_layer_serializes_as_seen_from_below():
    """A forwarding probe set as CALLGUARD_CUDA_LIBRARY counts the threads inside the driver's
    cuModuleLoadData: several at once without serialization, one with it (what tests/gpu checks on the
    H200, here on the stand-in without its abort mode)."""
    env = {"CALLGUARD_CUDA_LIBRARY": E["CG_INSIDE"], "CGCUDA_COMPILE_MS": "50"}
    r = run([E["CG_RACE_LINKED"], E["CG_INSIDE"]], env)
    check(r.returncode == 0 and "loaded 16 modules" in r.stdout, "every module loads", r)
    inside = int(r.stdout.split("at most ")[1].split()[0])
    check(inside > 1, "unserialized, several threads inside at once", r)
    r = run([E["CG_RACE_LINKED"], E["CG_INSIDE"]], dict(env, CALLGUARD_SERIALIZE="cuModuleLoadData"))
    check(r.returncode == 0 and "loaded 16 modules, at most 1 threads inside" in r.stdout, "serialized", r)


def cuda_layer_preloaded_serializes_a_program_linked_to_the_driver():
    r = run([E["CG_RACE"]], dict(RACE_ENV))
    check(r.returncode == -signal.SIGABRT, "without the layer the race aborts", r)
    path = os.path.join(TMP, "preload.json")
    env = dict(RACE_ENV, LD_PRELOAD=preload(E["CG_LAYER"]), CALLGUARD_SERIALIZE="cuModuleLoadData",
               CALLGUARD_REPORT=path)
    r = run([E["CG_RACE"], E["CG_STANDIN"]], env)
    check(r.returncode == 0 and "loaded 16 modules, at most 1 threads inside" in r.stdout, "serialized", r)
    check(report(path).get("cuModuleLoadData") == 16, "counted")


def cuda_layer_procaddress_returns_its_own_wrappers():
    """Every pointer the layer's cuGetProcAddress/_v2 returns for a guarded name is the layer's wrapper of the
    export the real resolver chose (same name, in the layer), for every version and flag asked; asked for
    itself it returns its own resolver; cuGetExportTable (forwarded, no site) comes back as the driver's own
    pointer, and what the driver does not know passes through."""
    r = run([E["CG_PROBE"], E["CG_LAYER"]], linked_env())
    check(r.returncode == 0, "probe ran", r)
    with open(E["CG_EXPECTED_LAYER"]) as f:
        expected = f.read()
    check(r.stdout == expected, "probe output differs from %s:\n%s" % (E["CG_EXPECTED_LAYER"], r.stdout))


def runtime_style(prog, env):
    path = os.path.join(TMP, "calls%d.json" % len(os.listdir(TMP)))
    r = run([prog, "default", E["CG_STANDIN"]], dict(env, CALLGUARD_REPORT=path))
    check(r.returncode == 0 and r.stdout.startswith("ok\n"), "the calls succeed", r)
    counts = dict(kv.split("=") for kv in r.stdout.splitlines()[1].split())
    check(counts["cuLaunchKernel_ptsz"] == "1" and counts["cuLaunchKernel"] == "0", "the _ptsz form ran", r)
    check(counts["cuCtxCreate_v4"] == "1" and counts["cuMemcpyHtoD_v2_ptds"] == "1", "the versioned forms ran", r)
    return report(path)


def cuda_layer_counts_calls_made_through_procaddress_pointers():
    """The CUDA runtime's way: every call through a pointer the resolver returned is guarded and counted in the
    report under the header's name (cuLaunchKernel, not cuLaunchKernel_ptsz)."""
    for prog, env in ((E["CG_CALLS_LINKED"], linked_env()), (E["CG_CALLS"], {"LD_PRELOAD": preload(E["CG_LAYER"])})):
        rows = runtime_style(prog, env)
        for name in ("cuInit", "cuDeviceGet", "cuCtxCreate", "cuModuleLoadData", "cuModuleGetFunction",
                     "cuLaunchKernel", "cuStreamSynchronize", "cuMemAlloc", "cuMemcpyHtoD", "cuMemcpyDtoH",
                     "cuMemFree", "cuModuleUnload", "cuCtxDestroy", "cuDriverGetVersion"):
            check(rows.get(name) == 1, "%s: one call in the report of %s: %s" % (name, prog, rows))
        check(not any(n.endswith(("_v2", "_v4", "_ptsz", "_ptds")) for n in rows), "header names only: %s" % rows)
        # the program's first question, then one per entry point, the 4-argument resolver's included
        check(rows.get("cuGetProcAddress", 0) == 16, "cuGetProcAddress calls: %s" % rows)


def cuda_layer_missing_driver_gives_no_device():
    """No libcuda.so.1 found (none loaded, no CALLGUARD_CUDA_LIBRARY, and no path baked in at build time): a
    program linked to the layer gets CUDA_ERROR_NO_DEVICE from its first call, one line on stderr from
    callguard, and no crash."""
    r = run([E["CG_RACE_LINKED"]])
    check(r.returncode == 1 and "set-up failed: 100" in r.stderr, "CUDA_ERROR_NO_DEVICE (100) from cuInit", r)
    ours = [l for l in r.stderr.splitlines() if "callguard" in l]
    check(len(ours) == 1 and "cuInit" in ours[0], "one line from callguard naming the call", r)


# A Python thread waits about a second in cuStreamSynchronize through ctypes.PyDLL (which keeps the GIL for
# the whole call) on a kernel the stand-in runs for CGCUDA_KERNEL_MS, while the main thread ticks every
# millisecond; the child prints the longest pause the main thread saw, in milliseconds. The layer is loaded
# by path in libcuda's place, as a program linked to it would be.
PAUSE_CHILD = r"""
import ctypes, sys, threading, time
sys.path.insert(0, sys.argv[2])
from pausetimer import longest_pause  # tests/pausetimer.py
cu = ctypes.PyDLL(sys.argv[1])
ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry spin()\n{\n ret;\n}\n"
def ok(r, what):
    if r != 0:
        raise SystemExit("%s: CUresult %d" % (what, r))
def worker():
    time.sleep(0.2)  # let the main thread start ticking first
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuInit(0), "cuInit")
    ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ok(cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev), "cuCtxCreate_v2")
    ok(cu.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
    ok(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin"), "cuModuleGetFunction")
    u = ctypes.c_uint
    ok(cu.cuLaunchKernel(fn, u(1), u(1), u(1), u(1), u(1), u(1), u(0), None, None, None), "cuLaunchKernel")
    t0 = time.monotonic()
    ok(cu.cuStreamSynchronize(None), "cuStreamSynchronize")
    global waited
    waited = time.monotonic() - t0
waited = 0.0
t = threading.Thread(target=worker)
t.start()
longest = longest_pause(t)
print("%.1f %.1f" % (longest * 1000, waited * 1000))
"""


def pause(runtime):
    path = os.path.join(TMP, "pause-%s.json" % runtime)
    env = linked_env(CGCUDA_KERNEL_MS="1000", CALLGUARD_RUNTIME=runtime, CALLGUARD_REPORT=path,
                     ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0")
    if E.get("CG_SANITIZER_PRELOAD"):
        env["LD_PRELOAD"] = E["CG_SANITIZER_PRELOAD"]
    r = run([E["CG_PYTHON"], "-c", PAUSE_CHILD, E["CG_LAYER"], TESTS], env)
    check(r.returncode == 0, "the Python child ran", r)
    longest, waited = (float(x) for x in r.stdout.split())
    check(waited >= 1000, "cuStreamSynchronize waited for the kernel (%.1f ms)" % waited, r)
    return longest, sites(path, "cuStreamSynchronize")[0]


def cuda_pause_without_adapter_is_the_whole_wait():
    longest, sync = pause("none")
    check(longest >= 900, "the main thread waited the whole second: %.1f ms" % longest)


def cuda_pause_detect_only_reports_the_stall():
    longest, sync = pause("auto")
    check(longest >= 900, "detect only: the GIL stays held: %.1f ms" % longest)
    check(sync["stalls"] == 1, "cuStreamSynchronize reported as a stall: %s" % sync)


def cuda_pause_with_adapter_at_most_50ms():
    longest, sync = pause("cpython")
    check(longest <= 50, "the main thread paused %.1f ms (at most 50)" % longest)
    check(sync["stalls"] == 0 and sync["calls"] == 1, "no stall: %s" % sync)


def cuda_callguard_run_serializes_a_program_linked_to_the_driver():
    """`callguard run --api cuda`: the program linked to libcuda.so.1 aborts in the compile race as it is,
    and loads every module with --serialize cuModuleLoadData; the report counts each call once."""
    # The driver is named: where the build has a libcuda.so.1 shim, callguard run links it to that driver.
    env = dict(RACE_ENV, CALLGUARD_CUDA_LIBRARY=E["CG_STANDIN"])
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--", E["CG_RACE"]], env)
    check(r.returncode == -signal.SIGABRT, "unserialized: the race aborts, and callguard dies of it too", r)
    path = os.path.join(TMP, "run.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--serialize", "cuModuleLoadData", "--report", path, "--",
             E["CG_RACE"], E["CG_STANDIN"]], env)
    check(r.returncode == 0 and "loaded 16 modules, at most 1 threads inside" in r.stdout, "serialized", r)
    rows = report(path)
    check(rows.get("cuModuleLoadData") == 16 and rows.get("cuCtxCreate") == 1, "counted: %s" % rows)


def cuda_shipped_quirks_match_the_driver_versions_they_name():
    """The layer's probe reads cuDriverGetVersion after cuInit (the stand-in's CGCUDA_DRIVER_VERSION) and the
    driver's release from libcuda's file name. cuda-tile#23's entry (CUDA 13.2, libcuda.so.595.84) matches
    13.2 with a file named libcuda.so.595.84 (and one whose name has no version: the driver decides) and
    serializes the module loads, so the compile race loads every module; 13.0, or 13.2 with libcuda.so.595.80,
    match it not. The advice-only entries of NVIDIA bug 5570902 and of cuda-python#2416 (every driver)
    match each, serializing nothing; #2416's advice names the cuda-python fix."""
    shutil = __import__("shutil")
    tile, ipc, ft = "cuda-tile-cuModuleUnload", "cuda-5570902-ipc-import-twice", "cuda-python-2416-free-threaded-launch"
    ctx = "nvidia-1277-context-create"  # 13.0 and later, libcuda 610.57.04 and later (or no release)
    path = os.path.join(TMP, "shipped.json")
    for release, version, expect in ((None, "13020", {tile, ipc, ft, ctx}), ("595.84", "13020", {tile, ipc, ft}),
                                     ("595.80", "13020", {ipc, ft}), (None, "13000", {ipc, ft, ctx}),
                                     ("610.57.04", "12080", {ipc, ft})):
        driver = E["CG_STANDIN"]
        if release:
            folder = tempfile.mkdtemp(prefix="drv-", dir=TMP)
            shutil.copy(driver, os.path.join(folder, "libcuda.so." + release))
            os.symlink("libcuda.so." + release, os.path.join(folder, "libcuda.so.1"))
            driver = os.path.join(folder, "libcuda.so.1")
        env = dict(CALLGUARD_CUDA_LIBRARY=driver, CGCUDA_DRIVER_VERSION=version, CGCUDA_COMPILE_MS="20",
                   CGCUDA_COMPILER_RACE="abort" if tile in expect else "off")
        r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_RACE"], driver], env)
        what = "%s %s" % (release, version)
        check(r.returncode == 0 and "loaded 16 modules" in r.stdout, "%s: the program ran" % what, r)
        with open(path) as f:
            p = json.load(f)["processes"][0]
        q = {x["name"]: x for x in p.get("quirks", [])}
        check(set(q) == expect, "%s: the entries matched: %s" % (what, sorted(q)))
        check(q[ipc]["applied"] is False and q[ipc]["not_applied"].startswith("advice only: import each IPC"), q[ipc])
        check(q[ft]["applied"] is False and "cuda-python PR #2417" in q[ft]["not_applied"], q[ft])
        load = next(s for s in p["sites"] if s["name"] == "cuModuleLoadData")["policy"]["serialize"]
        check(load == ("cuda-module" if tile in expect else None), "%s: cuModuleLoadData serialized %s" % (what, load))
        if tile in expect:
            check(q[tile]["applied"] and q[tile]["matched"]["version"] == "13.2", q[tile])
            check(not release or q[tile]["matched"]["library"] == "libcuda.so." + release, q[tile])
            check("at most 1 threads inside" in r.stdout, "the loads one at a time", r)

def cuda_tile_23_quirk_launches_shared_beside_each_other_never_beside_an_unload():
    """NVIDIA/cuda-tile#23 on the stand-in (CGCUDA_UNLOAD_RACE=abort: a launch aborts when a module is
    loaded or unloaded meanwhile, as driver 595.84 segfaults): the issue's loop on 4 threads aborts with
    the quirk off, and with the shipped quirk (CUDA 13.2, libcuda.so.595.84) runs every loop, the launches
    taking the domain shared (several inside at once) and the module calls alone."""
    shutil = __import__("shutil")
    folder = tempfile.mkdtemp(prefix="drv-", dir=TMP)
    shutil.copy(E["CG_STANDIN"], os.path.join(folder, "libcuda.so.595.84"))
    os.symlink("libcuda.so.595.84", os.path.join(folder, "libcuda.so.1"))
    driver = os.path.join(folder, "libcuda.so.1")
    env = dict(CALLGUARD_CUDA_LIBRARY=driver, CGCUDA_DRIVER_VERSION="13020", CGCUDA_UNLOAD_RACE="abort")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--quirks", "off", "--", E["CG_UNLOAD_RACE"], driver], env)
    check(r.returncode == -signal.SIGABRT and "CGCUDA_UNLOAD_RACE=abort" in r.stderr, "quirk off: it aborts", r)
    path = os.path.join(TMP, "tile23.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_UNLOAD_RACE"], driver], env)
    check(r.returncode == 0 and "loops 100," in r.stdout, "quirk on: every loop", r)
    most = int(r.stdout.split("at most ")[1].split()[0])
    check(most >= 2, "launches beside each other: %d" % most, r)
    with open(path) as f:
        p = json.load(f)["processes"][0]
    q = next(x for x in p["quirks"] if x["name"] == "cuda-tile-cuModuleUnload")
    check(q["applied"] and "cuLaunchKernel:shared" in q["serialize"], q)
    pol = {s["name"]: s for s in p["sites"]}
    launch, unload = pol["cuLaunchKernel"], pol["cuModuleUnload"]
    check(launch["policy"]["serialize"] == "cuda-module" and launch["policy"]["scope"] == "shared", launch)
    check(unload["policy"]["serialize"] == "cuda-module" and unload["policy"]["scope"] == "process", unload)
    check(launch["peak_inside"] == most and unload["peak_inside"] == 1, (launch, unload))


def standin_named(release):
    """The stand-in in a folder of its own as libcuda.so.RELEASE, libcuda.so.1 a link to it (as a driver is
    installed): the probe reads RELEASE from the file name."""
    shutil = __import__("shutil")
    folder = tempfile.mkdtemp(prefix="drv-", dir=TMP)
    shutil.copy(E["CG_STANDIN"], os.path.join(folder, "libcuda.so." + release))
    os.symlink("libcuda.so." + release, os.path.join(folder, "libcuda.so.1"))
    return os.path.join(folder, "libcuda.so.1")


def cuda_nvidia_1277_quirk_creates_contexts_one_at_a_time():
    """NVIDIA/open-gpu-kernel-modules#1277 on the stand-in as driver 610.57.04 (CGCUDA_CTX_CREATE_HANG=on:
    two context creations at once never return, every thread waiting behind the "RM lock"): a thread per
    GPU (4) retaining its primary context and creating one hangs with the quirk off (the program's alarm
    ends it), and with the shipped quirk creates all 8, one at a time, in the domain cuda-ctx-create.
    Driver 595.84 does not match it."""
    driver = standin_named("610.57.04")
    env = dict(CALLGUARD_CUDA_LIBRARY=driver, CGCUDA_DRIVER_VERSION="13040", CGCUDA_DEVICES="4",
               CGCUDA_CTX_CREATE_HANG="on")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--quirks", "off", "--", E["CG_CTX_CREATE_RACE"]], env)
    check(r.returncode == -signal.SIGALRM and "RM lock is held for ever" in r.stderr, "quirk off: it hangs", r)
    path = os.path.join(TMP, "nv1277.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_CTX_CREATE_RACE"]], env)
    check(r.returncode == 0 and "contexts 8" in r.stdout, "quirk on: every context is created", r)
    with open(path) as f:
        p = json.load(f)["processes"][0]
    q = {x["name"]: x for x in p.get("quirks", [])}
    check(q.get("nvidia-1277-context-create", {}).get("applied"), q)
    check(q["nvidia-1277-context-create"]["matched"]["library"] == "libcuda.so.610.57.04", q)
    pol = {s["name"]: s for s in p["sites"]}
    for name in ("cuDevicePrimaryCtxRetain", "cuCtxCreate"):
        check(pol[name]["policy"]["serialize"] == "cuda-ctx-create" and pol[name]["peak_inside"] == 1, pol[name])
    env["CALLGUARD_CUDA_LIBRARY"] = standin_named("595.84")
    env["CGCUDA_CTX_CREATE_HANG"] = "off"
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_CTX_CREATE_RACE"]], env)
    with open(path) as f:
        q = [x["name"] for x in json.load(f)["processes"][0].get("quirks", [])]
    check(r.returncode == 0 and "nvidia-1277-context-create" not in q, "595.84: %s" % q)


def cuda_callguard_run_event_query_not_ready_is_a_state():
    """A program polls cuEventQuery and cuStreamQuery until a 200 ms kernel is done: each CUDA_ERROR_NOT_READY
    is a state (apis/cuda.ini declares it for these two), so the report counts no error for the polls and names
    the code; cuEventQuery(NULL) is a real failure, an error by name. The JSON and the text table agree."""
    path = os.path.join(TMP, "query.json")
    env = {"CGCUDA_KERNEL_MS": "200", "CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]}
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_EVENT_QUERY"]], env)
    check(r.returncode == 0, "the program polls to the end", r)
    out = dict(kv.split("=") for kv in r.stdout.split())
    polls = {"cuEventQuery": int(out["event_not_ready"]), "cuStreamQuery": int(out["stream_not_ready"])}
    check(polls["cuEventQuery"] > 0 and polls["cuStreamQuery"] > 0 and out["null_event"] == "400", "polled", r)
    with open(path) as f:
        rep = json.load(f)
    sites = {s["name"]: s for p in rep["processes"] for s in p["sites"]}
    ev, st = sites["cuEventQuery"], sites["cuStreamQuery"]
    check(ev["calls"] == polls["cuEventQuery"] + 2 and ev["states"] == polls["cuEventQuery"] and ev["errors"] == 1,
          "cuEventQuery: %s" % ev)
    results = {(c["name"], c["kind"]): c["calls"] for c in ev["results"]}
    check(results == {("CUDA_ERROR_NOT_READY", "state"): polls["cuEventQuery"],
                      ("CUDA_ERROR_INVALID_HANDLE", "error"): 1}, "cuEventQuery's codes: %s" % ev["results"])
    check(st["errors"] == 0 and st["states"] == polls["cuStreamQuery"] and
          st["results"] == [{"name": "CUDA_ERROR_NOT_READY", "code": 600, "calls": polls["cuStreamQuery"],
                             "kind": "state"}], "cuStreamQuery: %s" % st)
    check(rep["totals"]["errors"] == 1, "one error in all: %s" % rep["totals"])
    t = run([E["CG_CLI"], "report", path])
    check(t.returncode == 0 and "results: CUDA_ERROR_NOT_READY %d (a state), CUDA_ERROR_INVALID_HANDLE 1\n"
          % polls["cuEventQuery"] in t.stdout, "the table names the codes", t)


GETTERS_JOB = """import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx, v = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int()
assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0
for _ in range(5):
    assert cu.cuCtxGetDevice(ctypes.byref(dev)) == 0 and cu.cuCtxGetCurrent(ctypes.byref(ctx)) == 0
assert cu.cuDriverGetVersion(ctypes.byref(v)) == 0
print("ok")
"""


def cuda_getters_are_not_counted_unless_a_policy_file_counts_them():
    """apis/cuda.ini's pure getters (cuCtxGetDevice, cuCtxGetCurrent, cuDevicePrimaryCtxGetState: count = no)
    go straight to the driver with statistics on: no row of theirs, and the report names those called as not counted
    (JSON "uncounted", a line of the text); a policy file's `count = yes` counts one of them again, call for
    call, and `[defaults] count = yes` every one. Under --trace every call is counted (the timeline keeps
    them), and the getters have their rows instead of the line."""
    job = os.path.join(TMP, "getters.py")
    with open(job, "w") as f:
        f.write(GETTERS_JOB)

    def counted(policy, *opts):
        path = os.path.join(TMP, "getters%d.json" % len(os.listdir(TMP)))
        env = {"CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]}
        if policy:
            env["CALLGUARD_POLICY"] = os.path.join(TMP, "count%d.ini" % len(os.listdir(TMP)))
            with open(env["CALLGUARD_POLICY"], "w") as f:
                f.write(policy)
        r = run([E["CG_CLI"], "run", "--api", "cuda", *opts, "--report", path, "--", sys.executable, job], env)
        check(r.returncode == 0 and r.stdout == "ok\n", "the job runs", r)
        with open(path) as f:
            procs = json.load(f)["processes"]
        text = run([E["CG_CLI"], "report", path]).stdout
        return report(path), sorted(n for p in procs for n in p.get("uncounted", [])), text

    rows, uncounted, text = counted(None)
    check("cuCtxGetDevice" not in rows and "cuCtxGetCurrent" not in rows and rows.get("cuDriverGetVersion") == 1,
          "the getters have no row, the rest are counted: %s" % rows)
    # the job calls two of the five: the others' policy says count = no too, but they were never called
    getters = ["cuCtxGetCurrent", "cuCtxGetDevice"]
    check(uncounted == getters, "uncounted: %s" % uncounted)
    check("not counted (their policy's count = no): cuCtxGetDevice" in " ".join(text.split()) or
          "not counted (their policy's count = no):" in text and "cuCtxGetDevice" in text, "the text says so:\n" + text)
    rows, uncounted, _ = counted("[cuCtxGetDevice]\ncount = yes\n")
    check(rows.get("cuCtxGetDevice") == 5 and "cuCtxGetCurrent" not in rows, "count = yes counts it: %s" % rows)
    check(uncounted == [g for g in getters if g != "cuCtxGetDevice"], "uncounted: %s" % uncounted)
    rows, uncounted, _ = counted("[defaults]\ncount = yes\n")
    check(rows.get("cuCtxGetDevice") == 5 and rows.get("cuCtxGetCurrent") == 5 and not uncounted,
          "[defaults] count = yes counts every one: %s %s" % (rows, uncounted))
    rows, uncounted, text = counted(None, "--trace", os.path.join(TMP, "getters-trace.json"))
    check(rows.get("cuCtxGetDevice") == 5 and rows.get("cuCtxGetCurrent") == 5 and not uncounted and
          "not counted" not in text, "under --trace they are counted: %s %s\n%s" % (rows, uncounted, text))


def cuda_trace_shows_the_values_the_pointers_returned():
    """apis/cuda.ini's outputs: under --trace, a call's event shows what its output pointers returned (the
    context cuCtxCreate made, the device cuDeviceGet found, the version), read after the call succeeded, not the
    addresses of the caller's variables; a call that failed reads none."""
    job = os.path.join(TMP, "outputs.py")
    with open(job, "w") as f:
        f.write("""import ctypes
cu = ctypes.CDLL("libcuda.so.1")
dev, ctx, v = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int()
assert cu.cuInit(0) == 0 and cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuCtxCreate_v2(ctypes.byref(ctx), 0, dev) == 0 and cu.cuDriverGetVersion(ctypes.byref(v)) == 0
assert cu.cuDeviceGet(ctypes.byref(dev), 7) != 0
print(hex(ctx.value), dev.value, v.value, hex(ctypes.addressof(ctx)))
""")
    path = os.path.join(TMP, "outputs-trace.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--trace", path, "--", sys.executable, job],
            {"CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]})
    check(r.returncode == 0, "the job runs", r)
    ctx, dev, version, where = r.stdout.split()
    with open(path) as f:
        ev = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    by = {}
    for e in ev:
        by.setdefault(e["name"], []).append(e["args"])
    c, d, v = by["cuCtxCreate"][0], by["cuDeviceGet"], by["cuDriverGetVersion"][0]
    check(c["pctx"] == ctx and c["pctx"] != where and c["result"] == "CUDA_SUCCESS", "pctx: %s, made %s" % (c, ctx))
    check(d[0]["device"] == int(dev) and v["driverVersion"] == int(version), "device, version: %s %s" % (d, v))
    check(d[1]["result"] != "CUDA_SUCCESS" and d[1]["device"] not in (0, int(dev)), "a failed call reads none: %s" % d)


# ---- through the libcuda.so.1 shim (callguard run), when the build has one ----

def cuda_callguard_run_guards_a_program_that_dlopens_libcuda():
    """A program that dlopens libcuda.so.1 and calls only through cuGetProcAddress (the CUDA runtime's way)
    reaches the shim under `callguard run`: its calls are counted once each under their header names, and the
    forms the driver chose (_v4, _ptsz, _v2_ptds) ran."""
    path = os.path.join(TMP, "shim.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", E["CG_CALLS"], "dlopen", E["CG_STANDIN"]],
            {"CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]})
    check(r.returncode == 0 and r.stdout.startswith("ok\n"), "the calls succeed", r)
    counts = dict(kv.split("=") for kv in r.stdout.splitlines()[1].split())
    check(counts["cuLaunchKernel_ptsz"] == "1" and counts["cuCtxCreate_v4"] == "1", "the driver's forms ran", r)
    rows = report(path)
    for name in ("cuInit", "cuCtxCreate", "cuModuleLoadData", "cuLaunchKernel", "cuStreamSynchronize", "cuMemcpyHtoD"):
        check(rows.get(name) == 1, "%s: one call: %s" % (name, rows))
    check(rows.get("cuGetProcAddress") == 16, "each lookup counted once: %s" % rows)


def cuda_callguard_run_without_a_driver_fails_as_without():
    """No libcuda.so.1 anywhere (no CALLGUARD_CUDA_LIBRARY, none on the loader's path): a program that dlopens it
    gets the same error under `callguard run` as without it (the soname's, not the shim's missing dependency)."""
    probe = "import ctypes\ntry:\n    ctypes.CDLL('libcuda.so.1')\n    print('loaded')\n" \
            "except OSError as e:\n    print('no driver:', e)\n"
    plain = run([E["CG_PYTHON"], "-c", probe])
    guarded = run([E["CG_CLI"], "run", "--api", "cuda", "--", E["CG_PYTHON"], "-c", probe])
    check(plain.stdout.startswith("no driver: libcuda.so.1: cannot open shared object file")
          and guarded.stdout == plain.stdout and guarded.returncode == 0,
          "the same failure: %r then %r" % (plain.stdout, guarded.stdout), guarded)


def cuda_callguard_run_without_a_driver_keeps_the_programs_own():
    """callguard run finds no libcuda.so.1, but the program finds its own through its RUNPATH (the stand-in):
    it starts and runs as without callguard (no shim hides its library), and the preloaded layer still guards
    the calls it makes to it: --serialize cuModuleLoadData holds, every call counted."""
    plain = run([E["CG_RACE"]], {"CGCUDA_COMPILE_MS": "50"})
    check(plain.returncode == 0 and "loaded 16 modules" in plain.stdout, "plain: runs on its RUNPATH's driver", plain)
    path = os.path.join(TMP, "runpath.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--serialize", "cuModuleLoadData", "--report", path, "--",
             E["CG_RACE"], E["CG_STANDIN"]], dict(RACE_ENV))
    check(r.returncode == 0 and "loaded 16 modules, at most 1 threads inside" in r.stdout,
          "starts, finds its own driver, serialized", r)
    check("libcallguard-real-cuda.so" not in r.stderr, "no shim in the way", r)
    rows = report(path)
    check(rows.get("cuModuleLoadData") == 16 and rows.get("cuInit") == 1, "counted: %s" % rows)


def cuda_python_under_callguard_run_same_output_and_counted():
    """cuda-python (PyPI cuda-bindings) under `callguard run --report` against the stand-in: the same output as
    without callguard, and its calls counted (its ~500 lookups through cuGetProcAddress_v2 included)."""
    py = E.get("CG_CUDA_PYTHON", "")
    if not os.path.exists(py) or run([py, "-c", "import cuda.bindings.driver"]).returncode != 0:
        print("SKIP: no Python with cuda-bindings at %r: run scripts/setup-venv.sh (makes build-venv/), or "
              "configure with -DCALLGUARD_CUDA_PYTHON=PATH" % py)
        sys.exit(77)
    job = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_python_job.py")
    plain = run([py, job], {"LD_LIBRARY_PATH": os.path.dirname(E["CG_STANDIN"])})
    check(plain.returncode == 0 and "sync <CUresult.CUDA_SUCCESS: 0>" in plain.stdout, "on the stand-in", plain)
    path = os.path.join(TMP, "cuda-python-run.json")
    r = run([E["CG_CLI"], "run", "--api", "cuda", "--report", path, "--", py, job],
            {"CALLGUARD_CUDA_LIBRARY": E["CG_STANDIN"]})
    check(r.returncode == 0 and r.stdout == plain.stdout, "the same output under callguard run", r)
    rows = report(path)
    for name in ("cuInit", "cuModuleLoadData", "cuLaunchKernel", "cuStreamSynchronize", "cuCtxCreate"):
        check(rows.get(name) == 1, "%s: one call: %s" % (name, rows))
    check(rows.get("cuGetProcAddress", 0) > 100, "cuda-python's lookups counted: %s" % rows.get("cuGetProcAddress"))


if __name__ == "__main__":
    main()
