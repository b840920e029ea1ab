"""Tests of the HIP layer (libcallguard_hip.so) on Debian 12's real HIP runtime, without a GPU.

Run: test_hip.py TEST, with the paths in the environment (tests/hip/CMakeLists.txt sets them):
CG_CLI (callguard), CG_LAYER (the layer), CG_ANSWERS / CG_ANSWERS_DLOPEN (answers.c linked to
libamdhip64, and opening it by soname), CG_CC and CG_HIP_INCLUDE (to read the header as the generator does).
Each test is a function named for the behaviour it checks.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

E = os.environ
TMP = tempfile.mkdtemp(prefix="cghip-")
# What answers.c calls, once each.
CALLS = ["hipInit", "hipGetDeviceCount", "hipDriverGetVersion", "hipRuntimeGetVersion", "hipSetDevice",
         "hipGetErrorName", "hipModuleLoadData"]


def run(args, env=None):
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    e.update(env or {})
    return subprocess.run(args, env=e, capture_output=True, text=True, timeout=60)


def check(cond, what, r=None):
    if not cond:
        if r is not None:
            what += "\n-- exit %s\n-- stdout:\n%s-- stderr:\n%s" % (r.returncode, r.stdout, r.stderr)
        raise AssertionError(what)


def report(path):
    with open(path) as f:
        rep = json.load(f)
    rows = {}
    for proc in rep["processes"]:
        for s in proc["sites"]:
            rows[s["name"]] = rows.get(s["name"], 0) + s["calls"]
    return rows


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
    answers_alike([E["CG_ANSWERS"]])


def hip_real_runtime_answers_alike_dlopened_plain_and_under_callguard_run():
    """A program that dlopens libamdhip64.so.5 and dlsyms each name: only the soname shim reaches it."""
    answers_alike([E["CG_ANSWERS_DLOPEN"], "libamdhip64.so.5"])


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
                 E["CG_ANSWERS_DLOPEN"], "libamdhip64.so.5"])
        check(r.returncode == 0, "the program ran", r)
        with open(path) as f:
            q = [x for p in json.load(f)["processes"] for x in p.get("quirks", [])]
        if not applied:
            check(q == [], "no quirk for 7.2 on 5.2: %s" % q)
            continue
        check(len(q) == 1 and q[0]["applied"] and q[0]["name"] == "test-hip-5.2", "the quirk applied: %s" % q)
        check(q[0]["matched"]["version"] == "5.2.21153", "HIP_VERSION 50221153 read as 5.2.21153: %s" % q)


if __name__ == "__main__":
    globals()[sys.argv[1]]()
