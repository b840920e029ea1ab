"""What a Level Zero call's timeline event shows: apis/ze.ini's outputs (a count, a created handle) as the
values the call returned, read after it succeeded, on Debian's loader with the simulator driver.

Run: test_trace.py TEST (or --list; tests/cgtest.py), with CG_CLI (callguard) and ZE_ENABLE_ALT_DRIVERS (the
simulator) in the environment (tests/ze/CMakeLists.txt sets them). Each test is a function named for the
behaviour it checks.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

E = os.environ
TMP = None if listing() else tempfile.mkdtemp(prefix="cgzetrace-")

JOB = """import ctypes
ze = ctypes.CDLL("libze_loader.so.1")
n, drv, ctx = ctypes.c_uint32(0), ctypes.c_void_p(), ctypes.c_void_p()
assert ze.zeInit(0) == 0 and ze.zeDriverGet(ctypes.byref(n), None) == 0 and n.value >= 1
one = ctypes.c_uint32(1)
assert ze.zeDriverGet(ctypes.byref(one), ctypes.byref(drv)) == 0
desc = (ctypes.c_uint32 * 6)(0x0d, 0, 0, 0, 0, 0)  # ze_context_desc_t: ZE_STRUCTURE_TYPE_CONTEXT_DESC
assert ze.zeContextCreate(drv, desc, ctypes.byref(ctx)) == 0
print(n.value, hex(ctx.value), hex(ctypes.addressof(ctx)))
"""


def ze_trace_shows_the_count_and_the_handle_a_call_returned():
    """zeDriverGet's pCount shows the number of drivers it wrote, and zeContextCreate's phContext the context it
    made, not the addresses of the caller's variables."""
    job = os.path.join(TMP, "job.py")
    with open(job, "w") as f:
        f.write(JOB)
    path = os.path.join(TMP, "trace.json")
    env = {k: v for k, v in E.items() if not k.startswith("CALLGUARD_")}
    r = subprocess.run([E["CG_CLI"], "run", "--api", "ze", "--trace", path, "--", sys.executable, job], env=env,
                       capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "the job runs: %s %s" % (r.stdout, r.stderr))
    count, ctx, where = r.stdout.split()
    with open(path) as f:
        ev = [e["args"] for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    get = [a for a in ev if "pCount" in a and a.get("phDrivers") is None]
    made = [a for a in ev if "phContext" in a]
    check(get and get[0]["pCount"] == int(count), "zeDriverGet's count: %s" % get)
    check(made and made[0]["phContext"] == ctx and ctx != where, "zeContextCreate's context %s: %s" % (ctx, made))


if __name__ == "__main__":
    main()
