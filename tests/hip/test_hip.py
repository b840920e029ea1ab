"""Tests of the HIP layer (libcallguard_hip.so) on Debian 12's real HIP runtime, without a GPU.

Run: test_hip.py TEST (or --list), with the paths in the environment (tests/hip/CMakeLists.txt sets them):
CG_CLI (callguard), CG_LAYER (the layer), CG_ANSWERS / CG_ANSWERS_DLOPEN (answers.c linked to
libamdhip64, and opening it by soname), CG_CC and CG_HIP_INCLUDE (to read the header as the generator does);
for the stand-in's tests (what needs a device): CG_STANDIN (the stand-in libamdhip64.so.7, standin.c),
CG_RACE (race.c linked to it), CG_FIRST_CALL (first_call.c linked to it), CG_PYTHON (the interpreter of the pause and deadlock children).
Each test is a function named for the behaviour it checks.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from layertest import E, TESTS, check, main, report, run, sites  # noqa: E402  (tests/layertest.py)

TMP = tempfile.mkdtemp(prefix="cghip-")
# What answers.c calls, once each.
CALLS = ["hipInit", "hipGetDeviceCount", "hipDriverGetVersion", "hipRuntimeGetVersion", "hipSetDevice",
         "hipGetErrorName", "hipModuleLoadData"]


def answers(var):
    """answers.c linked to the real runtime (CG_ANSWERS) or opening it by soname (CG_ANSWERS_DLOPEN): built
    only where the build found libamdhip64; the test is skipped elsewhere."""
    if var not in E:
        print("SKIP: no %s: the build found no libamdhip64 (Debian's libamdhip64-dev) to link answers.c to" % var)
        sys.exit(77)
    return E[var]


def answers_alike(prog):
    plain = run(prog)
    check(plain.returncode == 0, "the program ran plainly", plain)
    # Debian 12's runtime without an AMD GPU (ROCm 5.2.3): no device, a driver version all the same.
    check("hipGetDeviceCount 100 " in plain.stdout, "hipErrorNoDevice from hipGetDeviceCount", plain)
    check(re.search(r"hipDriverGetVersion 0 [1-9]", plain.stdout), "a driver version", plain)
    path = os.path.join(TMP, "answers.json")
    guarded = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--"] + prog)
    check(guarded.returncode == 0, "the program ran under callguard run", guarded)
    check(guarded.stdout == plain.stdout, "the same answers:\n%s-- plain:\n%s" % (guarded.stdout, plain.stdout))
    rows = report(path)
    check({n: rows.get(n) for n in CALLS} == {n: 1 for n in CALLS}, "each call counted once: %s" % rows)


def hip_real_runtime_answers_alike_linked_plain_and_under_callguard_run():
    """A program linked to libamdhip64.so.5: reached by the preloaded layer (and the shim its soname gets)."""
    answers_alike([answers("CG_ANSWERS")])


def hip_real_runtime_answers_alike_dlopened_plain_and_under_callguard_run():
    """A program that dlopens libamdhip64.so.5 and dlsyms each name: only the soname shim reaches it."""
    answers_alike([answers("CG_ANSWERS_DLOPEN"), "libamdhip64.so.5"])


def hip_list_names_every_function_of_the_header():
    """`callguard list hip` has a row for every function hip_runtime_api.h (with its _spt forms) and
    hiprtc.h declare, read from the preprocessed header as the generator reads it. hipProfilerStart/Stop
    are declared without a prototype in C: forwarded untouched (apis/hip.exports), no row."""
    src = os.path.join(TMP, "h.c")
    with open(src, "w") as f:
        f.write("#include <hip/hip_runtime_api.h>\n#include <hip/hiprtc.h>\n")
    pp = run([E["CG_CC"], "-E", "-D__HIP_PLATFORM_AMD__", "-I", E["CG_HIP_INCLUDE"], src])
    check(pp.returncode == 0, "the header preprocesses", pp)
    declared = set(re.findall(r"^[A-Za-z_][\w \t*]*?\b(hip\w*)\s*\(", pp.stdout, re.M))
    declared -= {"hipProfilerStart", "hipProfilerStop"}
    check(len(declared) > 380, "the header's functions were found: %d" % len(declared))
    r = run([E["CG_CLI"], "list", "hip"])
    check(r.returncode == 0, "callguard list hip", r)
    listed = set(re.findall(r"^(hip\w*)", r.stdout, re.M))
    check(declared <= listed, "missing from the list: %s" % sorted(declared - listed))


QUIRK = """[quirk:test-hip-5.2]
api       = hip
versions  = 5.2 .. 5.2
serialize = hipModuleLoadData, hipModuleLoad
domain    = hipload
source    = https://github.com/triton-lang/triton/pull/11265
why       = a test quirk matching ROCm 5.2's runtime
"""


def hip_quirk_for_the_runtime_applies_before_the_first_module_load():
    """A HIP quirk matches Debian's runtime (version 5.2.21153, read by the layer's probe) and serializes
    hipModuleLoadData in a program whose first HIP call of that kind is the load itself; a quirk for another
    version matches nothing."""
    for versions, applied in (("5.2 .. 5.2", True), ("7.2 .. 7.2", False)):
        quirks = os.path.join(TMP, "quirks.ini")
        with open(quirks, "w") as f:
            f.write(QUIRK.replace("5.2 .. 5.2", versions))
        path = os.path.join(TMP, "quirk.json")
        r = run([E["CG_CLI"], "run", "--api", "hip", "--quirks", quirks, "--report", path, "--",
                 answers("CG_ANSWERS_DLOPEN"), "libamdhip64.so.5"])
        check(r.returncode == 0, "the program ran", r)
        with open(path) as f:
            q = [x for p in json.load(f)["processes"] for x in p.get("quirks", [])]
        if not applied:
            check(q == [], "no quirk for 7.2 on 5.2: %s" % q)
            continue
        check(len(q) == 1 and q[0]["applied"] and q[0]["name"] == "test-hip-5.2", "the quirk applied: %s" % q)
        check(q[0]["matched"]["version"] == "5.2.21153", "HIP_VERSION 50221153 read as 5.2.21153: %s" % q)


# ---- the stand-in libamdhip64.so.7 (what needs a device) ----------------------------------------
RACE_ENV = {"CGHIP_COMPILER_RACE": "abort", "CGHIP_COMPILE_MS": "50"}


def standin_env(**extra):
    """callguard run takes the stand-in for the real runtime, and links the shim of its soname (.so.7)."""
    env = {"CALLGUARD_HIP_LIBRARY": E["CG_STANDIN"]}
    env.update(extra)
    return env


def hip_standin_compile_race_aborts_plain_and_completes_serialized():
    """16 threads load modules at once in a program linked to libamdhip64.so.7: the stand-in aborts when two
    are inside hipModuleLoadData, plainly and under callguard run without quirks; with --serialize
    hipModuleLoadData every module loads, and the report counts 16 loads. With the shipped quirks file, its
    ROCm 7.2 entry (apis/quirks.ini) matches the stand-in's 7.2.51234 and serializes the loads by itself."""
    r = run([E["CG_RACE"]], RACE_ENV)
    check(r.returncode == -signal.SIGABRT, "plain: the race aborts", r)
    r = run([E["CG_CLI"], "run", "--api", "hip", "--quirks", "off", "--", E["CG_RACE"]], standin_env(**RACE_ENV))
    check(r.returncode == -signal.SIGABRT, "unserialized under callguard run: the race aborts", r)
    path = os.path.join(TMP, "race.json")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--serialize", "hipModuleLoadData", "--report", path, "--",
             E["CG_RACE"]], standin_env(**RACE_ENV))
    check(r.returncode == 0 and "loaded 16 modules" in r.stdout, "serialized: every module loads", r)
    rows = report(path)
    check(rows.get("hipModuleLoadData") == 16, "16 loads counted: %s" % rows)
    r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_RACE"]], standin_env(**RACE_ENV))
    check(r.returncode == 0 and "loaded 16 modules" in r.stdout, "the shipped ROCm 7.2 quirk serializes", r)
    with open(path) as f:
        q = [x["name"] for p in json.load(f)["processes"] for x in p.get("quirks", []) if x["applied"]]
    check(any(n.startswith("rocm-7.2") for n in q), "a ROCm 7.2 quirk applied: %s" % q)


# In a sanitizer build AddressSanitizer would catch the SIGSEGV and exit 1: let it through.
INIT_RACE_ENV = {"CGHIP_INIT_RACE": "segv", "CGHIP_INIT_MS": "50",
                 "ASAN_OPTIONS": ":".join(filter(None, [E.get("ASAN_OPTIONS"), "handle_segv=0"]))}


def hip_standin_first_call_race_crashes_plain_and_not_gated_by_hipinit_once():
    """16 threads make their first HIP call at once: the stand-in's first-call set-up dies of SIGSEGV when two
    are in it (ROCm/rocm-systems #10196), plainly and under callguard run; with --serialize hipInit:once
    every thread initializes, the gate opens at the first success (call 1 of 16) and later calls of hipInit
    take no lock: the report says so, and its other calls wait for no lock."""
    r = run([E["CG_FIRST_CALL"]], INIT_RACE_ENV)
    check(r.returncode == -signal.SIGSEGV, "plain: the first-call race crashes", r)
    r = run([E["CG_CLI"], "run", "--api", "hip", "--quirks", "off", "--", E["CG_FIRST_CALL"]],
            standin_env(**INIT_RACE_ENV))
    check(r.returncode == -signal.SIGSEGV, "unguarded under callguard run: it crashes", r)
    path = os.path.join(TMP, "first-call.json")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--quirks", "off", "--serialize", "hipInit:once", "--report",
             path, "--", E["CG_FIRST_CALL"]], standin_env(**INIT_RACE_ENV))
    check(r.returncode == 0 and "initialized in 16 threads" in r.stdout, "hipInit:once: every thread initializes", r)
    row = sites(path, "hipInit")
    check(len(row) == 1 and row[0]["calls"] == 16, "16 hipInit calls: %s" % row)
    pol = row[0]["policy"]
    check(pol["serialize"] == "hipInit" and pol["scope"] == "once" and pol["opened_at_call"] == 1,
          "opened at the first call: %s" % pol)
    other = sites(path, "hipGetDeviceCount")
    check(other and other[0]["lock_wait_ns"] == 0 and other[0]["policy"]["serialize"] is None,
          "the other calls are not serialized: %s" % other)


def hip_shipped_quirks_match_the_runtime_versions_they_name():
    """The shipped HIP entries against the stand-in's HIP_VERSION (CGHIP_DRIVER_VERSION): 6.4 is inside
    ROCm/hip#3900's (hipStreamDestroy serialized) and rocm-systems#10196's 6.2 and later (the usual first
    calls serialized with scope once, hipSetDevice among them); 6.1 is inside neither; 7.2 inside the
    first-call one and the ROCm 7.2 load one; Debian's real 5.2.21153 inside none of them."""
    path = os.path.join(TMP, "shipped.json")
    first, destroy, load = "rocprofiler-register-first-hip-call", "hip-3900-hipStreamDestroy", "rocm-7.2.3-hipModuleLoad"
    behind = "rocm-11678-hipStreamSynchronize"  # advice only: matched, never applied
    for version, expect in (("60405000", {first, destroy}), ("60100000", set()), ("70251234", {first, load, behind})):
        r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_RACE"]],
                standin_env(CGHIP_DRIVER_VERSION=version))
        check(r.returncode == 0 and "loaded 16 modules" in r.stdout, "HIP_VERSION %s: the program ran" % version, r)
        with open(path) as f:
            p = json.load(f)["processes"][0]
        q = {x["name"]: x for x in p.get("quirks", [])}
        check(set(q) == expect and all(x["applied"] != (n == behind) for n, x in q.items()),
              "HIP_VERSION %s: %s" % (version, q))
        policy = next(s for s in p["sites"] if s["name"] == "hipSetDevice")["policy"]
        want = ("hip-first-call", "once") if first in expect else (None, "process")
        check((policy["serialize"], policy["scope"]) == want, "HIP_VERSION %s: hipSetDevice %s" % (version, policy))
    if "CG_ANSWERS_DLOPEN" in E:
        r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_ANSWERS_DLOPEN"],
                 "libamdhip64.so.5"])
        with open(path) as f:
            q = [x["name"] for p in json.load(f)["processes"] for x in p.get("quirks", [])]
        check(r.returncode == 0 and q == [], "Debian's 5.2.21153: no shipped entry matches: %s" % q)

def hip_rocm_10529_quirk_keeps_pool_calls_and_event_syncs_apart():
    """ROCm/rocm-systems#10529 on the stand-in as HIP 7.14 (CGHIP_POOL_DEADLOCK=on: the pool's and the
    device's locks taken in opposite orders by hipMallocAsync/hipFreeAsync and hipEventSynchronize): one
    thread allocating and freeing, one waiting for events, deadlock with the quirk off (the program's
    alarm ends it) and finish with the shipped quirk, the syncs shared and the pool calls alone in
    hip-mempool. HIP 7.2 does not match it."""
    path = os.path.join(TMP, "r10529.json")
    env = standin_env(CGHIP_DRIVER_VERSION="71425000", CGHIP_POOL_DEADLOCK="on")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--quirks", "off", "--", E["CG_POOL_DEADLOCK"]], env)
    check(r.returncode == -signal.SIGALRM, "quirk off: the two threads deadlock", r)
    r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_POOL_DEADLOCK"]], env)
    check(r.returncode == 0 and "done 150 calls" in r.stdout, "quirk on: every call returns", r)
    with open(path) as f:
        p = json.load(f)["processes"][0]
    q = {x["name"]: x for x in p.get("quirks", [])}
    check(q.get("rocm-10529-hipMallocAsync", {}).get("applied"), q)
    pol = {s["name"]: s["policy"] for s in p["sites"]}
    check(pol["hipEventSynchronize"]["serialize"] == "hip-mempool" and pol["hipEventSynchronize"]["scope"] == "shared",
          pol["hipEventSynchronize"])
    check(pol["hipMallocAsync"]["serialize"] == "hip-mempool" and pol["hipMallocAsync"]["scope"] == "process",
          pol["hipMallocAsync"])
    r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_POOL_DEADLOCK"]],
            standin_env(CGHIP_DRIVER_VERSION="70251234"))
    with open(path) as f:
        q = [x["name"] for x in json.load(f)["processes"][0].get("quirks", [])]
    check(r.returncode == 0 and "rocm-10529-hipMallocAsync" not in q, "HIP 7.2: %s" % q)


def hip_rocm_11678_quirk_says_which_thread_waits_behind_the_synchronize():
    """ROCm/rocm-systems#11678 on the stand-in (CGHIP_EXEC_LOCK=on: hipStreamSynchronize waits for the host
    holding the device's execution lock; hipMemcpy takes that lock): thread A synchronizes, thread B copies
    200 ms later and would then make the progress A's kernel waits for; both hang until the program's alarm
    (4 s), with the quirk or without: no lock fixes it. With the shipped entry (advice only, HIP 7.2 here)
    the hang block on stderr and the report's hang page, text and JSON, say that B waits behind A's
    hipStreamSynchronize on the same device, and name the quirk; with the quirks off they do not. So too where B waits in
    hipStreamWaitEvent, as gloo's worker does."""
    env = standin_env(CGHIP_EXEC_LOCK="on", CALLGUARD_HANG_MS="500")
    for quirks, said in ((["--quirks", "off"], False), ([], True)):
        path = os.path.join(TMP, "r11678-%d.json" % said)
        r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path] + quirks + ["--", E["CG_EXEC_LOCK"]], env)
        check(r.returncode == -signal.SIGALRM, "%s: the two threads hang" % quirks, r)
        with open(path) as f:
            p = json.load(f)["processes"][0]
        calls = {c["name"]: c for c in (p.get("hang") or {}).get("calls", [])}
        check(set(calls) >= {"hipStreamSynchronize", "hipMemcpy"}, "both seen in flight: %s" % p.get("hang"))
        a, b = calls["hipStreamSynchronize"], calls["hipMemcpy"]
        text = run([E["CG_CLI"], "report", path])
        line = 'thread %d "%s" waits behind thread %d "%s"\'s hipStreamSynchronize on the same device' % (
            b["tid"], b["thread"], a["tid"], a["thread"])
        # the hang block on stderr (CALLGUARD_HANG_MS), its folded lines joined
        err = " ".join(r.stderr.replace("callguard: hang:", " ").split())
        if not said:
            check(b["waits_behind"] is None and "waits behind" not in text.stdout + err, "quirks off: %s" % text.stdout)
            continue
        check(line in err, "the hang block on stderr says it: %s" % r.stderr)
        check(b["waits_behind"] == {"tid": a["tid"], "name": "hipStreamSynchronize",
                                    "quirk": "rocm-11678-hipStreamSynchronize"}, b)
        check(a["waits_behind"] is None, a)
        flat = " ".join(text.stdout.split())  # the text report folds long lines
        check(line in flat and "(rocm-11678-hipStreamSynchronize)" in flat, text.stdout)
        q = {x["name"]: x for x in p["quirks"]}["rocm-11678-hipStreamSynchronize"]
        check(q["applied"] is False and q["not_applied"].startswith("advice only: do not hipStreamSynchronize") and
              q["serialize"] == ["hipStreamSynchronize"], q)
    # gloo's worker waits in hipStreamWaitEvent (not a blocking entry point): named the same way.
    path = os.path.join(TMP, "r11678-wait.json")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path, "--", E["CG_EXEC_LOCK"], "waitevent"], env)
    check(r.returncode == -signal.SIGALRM, "waitevent: the two threads hang", r)
    with open(path) as f:
        calls = {c["name"]: c for c in (json.load(f)["processes"][0].get("hang") or {}).get("calls", [])}
    w = calls.get("hipStreamWaitEvent", {}).get("waits_behind")
    check(w and w["tid"] == calls["hipStreamSynchronize"]["tid"], calls)


# A Python thread waits about a second in hipStreamSynchronize through ctypes.PyDLL (which keeps the GIL for
# the whole call) on a kernel the stand-in runs for CGHIP_KERNEL_MS, while the main thread ticks every
# millisecond; the child prints the longest pause the main thread saw and the wait, in milliseconds. It opens
# the runtime by soname, as Triton's AMD backend does: under callguard run, the shim.
PAUSE_CHILD = r"""
import ctypes, sys, threading, time
sys.path.insert(0, sys.argv[1])
from pausetimer import longest_pause  # tests/pausetimer.py
hip = ctypes.PyDLL("libamdhip64.so.7")
def ok(r, what):
    if r != 0:
        raise SystemExit("%s: hipError_t %d" % (what, r))
def worker():
    time.sleep(0.2)  # let the main thread start ticking first
    mod, fn = ctypes.c_void_p(), ctypes.c_void_p()
    ok(hip.hipInit(0), "hipInit")
    ok(hip.hipModuleLoadData(ctypes.byref(mod), b"code object"), "hipModuleLoadData")
    ok(hip.hipModuleGetFunction(ctypes.byref(fn), mod, b"spin"), "hipModuleGetFunction")
    u = ctypes.c_uint
    ok(hip.hipModuleLaunchKernel(fn, u(1), u(1), u(1), u(1), u(1), u(1), u(0), None, None, None), "launch")
    t0 = time.monotonic()
    ok(hip.hipStreamSynchronize(None), "hipStreamSynchronize")
    global waited
    waited = time.monotonic() - t0
waited = 0.0
t = threading.Thread(target=worker)
t.start()
longest = longest_pause(t)
print("%.1f %.1f" % (longest * 1000, waited * 1000))
"""


def pause(*options):
    path = os.path.join(TMP, "pause.json")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--report", path] + list(options) +
            ["--", E["CG_PYTHON"], "-c", PAUSE_CHILD, TESTS], standin_env(CGHIP_KERNEL_MS="1000"))
    check(r.returncode == 0, "the Python child ran", r)
    longest, waited = (float(x) for x in r.stdout.split())
    check(waited >= 1000, "hipStreamSynchronize waited for the kernel (%.1f ms)" % waited, r)
    return longest, sites(path, "hipStreamSynchronize")[0]


def hip_standin_pause_detect_only_is_a_stall():
    longest, sync = pause()
    check(longest >= 900, "detect only: the GIL stays held: %.1f ms" % longest)
    check(sync["stalls"] == 1, "hipStreamSynchronize reported as a stall: %s" % sync)


def hip_standin_pause_with_release_gil_at_most_50ms():
    longest, sync = pause("--release-gil")
    check(longest <= 50, "the main thread paused %.1f ms (at most 50)" % longest)
    check(sync["stalls"] == 0 and sync["calls"] == 1, "no stall: %s" % sync)


# triton-lang/triton PR #11265: hipModuleLoadData, which takes the dynamic loader's lock, is called with the
# GIL held (ctypes.PyDLL), while another thread is inside dl_iterate_phdr (the loader lock held) in a ctypes
# callback that needs the GIL. Thread B enters first and sleeps in its callback (the GIL left, the loader
# lock kept); the main thread then loads a module with the GIL held: plainly each waits for the other.
DEADLOCK_CHILD = r"""
import ctypes, threading, time
libc = ctypes.CDLL(None)
hip = ctypes.PyDLL("libamdhip64.so.7")
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p)
inside = threading.Event()
def visit(info, size, data):
    if not inside.is_set():
        inside.set()
        time.sleep(0.5)  # the GIL left, the loader lock held
    return 0
cb = CB(visit)
b = threading.Thread(target=lambda: libc.dl_iterate_phdr(cb, None))
b.start()
inside.wait()
mod = ctypes.c_void_p()
r = hip.hipModuleLoadData(ctypes.byref(mod), b"code object")
b.join()
print("loaded %d" % r)
"""


def run_group(args, env, seconds):
    """Runs args in a process group of its own; None when it is still running after `seconds` (the group,
    callguard's child included, is then killed, so nothing is left behind), else (status, stdout, stderr)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    e.update(env)
    p = subprocess.Popen(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return None


def hip_standin_gil_loader_lock_deadlock_hangs_plain_and_completes_with_release_gil():
    """With the shipped quirks (the ROCm 7.2 one matches the stand-in, so the layer's probe walks the loaded
    objects under the loader lock before the first load) and without: the probe runs outside the GIL too."""
    plain = {"LD_LIBRARY_PATH": os.path.dirname(E["CG_STANDIN"])}
    check(run_group([E["CG_PYTHON"], "-c", DEADLOCK_CHILD], plain, 5) is None, "plainly the child deadlocks (5 s)")
    for quirks in ([], ["--quirks", "off"]):
        r = run_group([E["CG_CLI"], "run", "--api", "hip", "--release-gil"] + quirks + ["--", E["CG_PYTHON"],
                       "-c", DEADLOCK_CHILD], standin_env(), 20)
        check(r is not None, "%s: with --release-gil the child ends (hung 20 s)" % (quirks or "quirks on"))
        check(r[0] == 0 and r[1] == "loaded 0\n",
              "%s: with --release-gil the load completes:\n%s%s" % (quirks or "quirks on", r[1], r[2]))


def hip_standin_trace_shows_the_values_the_pointers_returned():
    """apis/hip.ini's outputs: under --trace, the events of the stand-in's calls show the count, the version,
    the module and the allocation they returned, read after success, not the addresses of the variables."""
    job = os.path.join(TMP, "outputs.py")
    with open(job, "w") as f:
        f.write("""import ctypes
hip = ctypes.CDLL("libamdhip64.so.7")
n, v, mod, p = ctypes.c_int(), ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
assert hip.hipInit(0) == 0 and hip.hipGetDeviceCount(ctypes.byref(n)) == 0
assert hip.hipDriverGetVersion(ctypes.byref(v)) == 0
assert hip.hipModuleLoadData(ctypes.byref(mod), b"image") == 0
assert hip.hipMallocAsync(ctypes.byref(p), ctypes.c_size_t(64), None) == 0
print(n.value, v.value, hex(mod.value), hex(p.value), hex(ctypes.addressof(mod)))
""")
    path = os.path.join(TMP, "outputs-trace.json")
    r = run([E["CG_CLI"], "run", "--api", "hip", "--trace", path, "--", E["CG_PYTHON"], job], standin_env())
    check(r.returncode == 0, "the job runs", r)
    count, version, mod, ptr, where = r.stdout.split()
    with open(path) as f:
        ev = {e["name"]: e["args"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"}
    check(ev["hipGetDeviceCount"]["count"] == int(count) and ev["hipDriverGetVersion"]["driverVersion"] ==
          int(version), "the count and the version: %s %s" % (ev["hipGetDeviceCount"], ev["hipDriverGetVersion"]))
    check(ev["hipModuleLoadData"]["module"] == mod != where and ev["hipMallocAsync"]["dev_ptr"] == ptr,
          "the module %s and the allocation %s: %s %s" % (mod, ptr, ev["hipModuleLoadData"], ev["hipMallocAsync"]))


if __name__ == "__main__":
    main()
