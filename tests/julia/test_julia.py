"""The Julia adapter under `callguard run`, on PoCL, with a stand-in for
libjulia (libjulia_standin.c: Julia cannot be installed here; no real Julia
runs in these tests). Run: test_julia.py TEST CALLGUARD JULIA_GC_PAUSE (or --list)

julia_gc_pause (julia_gc_pause.c) is linked against the stand-in as `julia`
is against libjulia, so callguard's `auto` finds Julia in it.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

if not listing():
    CG, PROG = sys.argv[2:4]
    TMP = tempfile.mkdtemp(prefix="cgjulia-")

# Julia's GC states (julia_threads.h).
UNSAFE, SAFE = 0, 2


def run(opts, mode, env=None):
    """julia_gc_pause MODE under callguard run: its JSON line and the
    report's section of it."""
    e = dict(os.environ)
    for k in ("CALLGUARD_REPORT", "CALLGUARD_RUNTIME"):
        e.pop(k, None)
    # Its own PoCL cache; one PoCL thread (2 cores here).
    e["POCL_CACHE_DIR"] = tempfile.mkdtemp(prefix="pocl-", dir=TMP)
    e["POCL_MAX_PTHREAD_COUNT"] = "1"
    e.update(env or {})
    path = os.path.join(TMP, "r%d.json" % len(os.listdir(TMP)))
    r = subprocess.run([CG, "run", "--api", "cl", "--report", path, *opts, "--", PROG, mode], env=e,
                       capture_output=True, text=True, timeout=100)
    check(r.returncode == 0, "%s %s: exit %d: %s %s" % (opts, mode, r.returncode, r.stdout, r.stderr))
    with open(path) as f:
        rep = json.load(f)
    check(len(rep["processes"]) == 1, [p["command"] for p in rep["processes"]])
    return json.loads(r.stdout), rep["processes"][0], path


def stalls(p, name="clFinish"):
    return [s for s in p["stalls"] if s["name"] == name]


def julia_collection_waits_for_the_whole_driver_call_and_the_stall_is_julias():
    """Detected, not released (the default): a thread Julia knows waits
    about 1 s in clFinish GC-unsafe, so a collection asked 100 ms into it
    waits for the rest of the call; the report names the stall as Julia's,
    with Julia's advice."""
    out, p, path = run([], "pause")
    # The kernel is timed to about 1 s when the program starts; on a machine whose load drops meanwhile it
    # runs faster (388 ms seen at a load of 7): 200 ms still dwarfs the 50 ms pause bound.
    check(out["wait_ms"] >= 200, "the kernel keeps clFinish waiting >= 200 ms: %s" % out)
    check(out["collect_ms"] >= 0.5 * out["wait_ms"], "the collection waited for the call: %s" % out)
    st = stalls(p)
    check(len(st) == 1 and st[0]["runtime"] == "julia" and st[0]["ns"] >= 0.8 * out["wait_ms"] * 1e6,
          "one clFinish stall holding julia: %s vs %s" % (p["stalls"], out))
    check(st[0]["tid"] != p["pid"], "the worker thread's: %s" % st)
    r = subprocess.run([CG, "report", path], capture_output=True, text=True, timeout=30)
    check(r.returncode == 0, r.stderr)
    text = r.stdout
    check("cl clFinish" in text and "holding julia" in text, text)
    check("what to do (julia):" in text and "gc_safe=true" in text and "@gcsafe_ccall" in text
          and "--release-runtime" in text, "Julia's advice: %s" % text)
    check("PyDLL" not in text and "Py_BEGIN" not in text, "no CPython advice for a Julia stall: %s" % text)


def julia_collection_runs_within_50ms_when_callguard_releases_julia():
    """The same wait with Julia left GC-safe around the call, asked three
    ways (`--release-runtime`, its older spelling `--release-gil`, and
    CALLGUARD_RUNTIME=julia): the collection does not wait for it (the
    project's pause bound: at most 50 ms), no stall, and the thread is
    GC-unsafe again after the call."""
    for opts, env in ((["--release-runtime"], None), (["--release-gil"], None), ([], {"CALLGUARD_RUNTIME": "julia"})):
        out, p, _ = run(opts, "pause", env)
        what = "%s %s: %s" % (opts, env, out)
        check(out["wait_ms"] >= 200, what)  # as above: about 1 s, less where the load dropped
        check(out["collect_ms"] <= 50, "the collection ran during the call: " + what)
        check(not stalls(p), "no clFinish stall: %s %s" % (what, p["stalls"]))
        check(out["state_after"] == UNSAFE, "GC-unsafe again after the call: " + what)


def julia_thread_julia_does_not_know_is_left_alone():
    """A thread Julia never adopted waits in clFinish: callguard neither
    calls Julia's GC functions there (the stand-in aborts the process if it
    does, where Julia would crash) nor counts its wait as a stall, detected
    or released; the collection does not wait for it."""
    for opts in ([], ["--release-runtime"]):
        out, p, _ = run(opts, "foreign")
        check(out["wait_ms"] >= 200, "%s: %s" % (opts, out))  # about 1 s, less where the load dropped
        check(out["collect_ms"] <= 50, "%s: the collection never waited for it: %s" % (opts, out))
        check(not stalls(p), "%s: no stall for a thread Julia does not know: %s" % (opts, p["stalls"]))


def julia_call_a_package_made_gc_safe_is_no_stall():
    """A package that calls through @gcsafe_ccall waits in clFinish GC-safe
    already: detected, the call is not reported as a stall (callguard asks
    Julia for the thread's state, not only whether Julia knows the thread),
    and released, it is left as it was; the collection never waits."""
    for opts in ([], ["--release-runtime"]):
        out, p, _ = run(opts, "gcsafe")
        check(out["wait_ms"] >= 200, "%s: %s" % (opts, out))  # about 1 s, less where the load dropped
        check(out["collect_ms"] <= 50, "%s: the package's own release: %s" % (opts, out))
        check(not stalls(p), "%s: no stall for a call made GC-safe: %s" % (opts, p["stalls"]))
        check(out["state_after"] == UNSAFE, "%s: GC-unsafe after the call: %s" % (opts, out))


def julia_callback_during_a_released_call_runs_gc_unsafe_and_nested_calls_stay_put():
    """PoCL calls a build's notify callback during clBuildProgram, on the
    calling thread. With Julia released around the call, the callback (an
    @cfunction: it enters GC-unsafe itself) finds the thread GC-safe and runs
    GC-unsafe; a guarded call it makes is nested and changes no GC state
    (no jl_gc_safe_enter); after clBuildProgram the thread is GC-unsafe."""
    out, p, _ = run(["--release-runtime"], "callback")
    check(out["ran"] == 1 and out["on_caller"] == 1, "PoCL called it during the call, on its thread: %s" % out)
    check(out["prev"] == SAFE, "callguard had left Julia GC-safe around the call: %s" % out)
    check(out["state_in"] == UNSAFE, "the callback runs GC-unsafe: %s" % out)
    check(out["nested_enters"] == 0 and out["state_after_nested"] == UNSAFE,
          "the nested guarded call made no transition: %s" % out)
    check(out["state_after_call"] == UNSAFE, "GC-unsafe after the call: %s" % out)
    info = [s for s in p["sites"] if s["name"] == "clGetProgramInfo"]
    check(info and info[0]["nested"] >= 1, "counted as nested: %s" % info)


if __name__ == "__main__":
    main()
