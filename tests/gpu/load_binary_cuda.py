"""callguard.load_binary(..., api="cuda"): Triton's NVIDIA load path from Python, on PTX.

Usage: load_binary_cuda.py PTX_DIR EXPECT [--launch]
  PTX_DIR  k00.ptx .. k15.ptx (tests/gpu/ptx: nvcc's PTX for sm_90, make_ptx.sh)
  EXPECT   "built" (a cold cache: every module built from PTX) or "disk" (a second process: every module
           from the disk cache's cubins)
  --launch run each kernel once (a real GPU; the stand-in's launches compute nothing)

16 threads of a ThreadPoolExecutor, released together, each load a distinct module in a thread with no
current context (load_binary retains the primary context and makes it current), then check Triton's figures
(registers, spills, max threads), the dynamic shared memory opt-in above 48 KiB, the out-of-resources
exception beyond the device's maximum, an unknown kernel name (CG_ENOENT) and PTX that does not compile (sm_120)
(DriverError with the failed call's result name: the cuda layer's under `callguard run --api cuda`, else the
driver's cuGetErrorName). Prints "PASS: ..." / "FAIL: ..." lines, then one JSON line with the
figures; exits 1 if a check failed. Run by tests/gpu/run.sh (part e) on the H200 and by
tests/package/test_package.py (load_binary_cuda_on_standin) on the stand-in libcuda.so.1.
"""
import concurrent.futures
import ctypes
import json
import math
import os
import re
import sys
import threading

import callguard

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
N = 16

ptx_dir, expect = sys.argv[1], sys.argv[2]
launch = "--launch" in sys.argv[3:]
if expect not in ("built", "disk"):
    sys.exit("EXPECT %r: expected 'built' or 'disk'" % expect)
cuda = ctypes.CDLL("libcuda.so.1")  # under callguard run: the shim, then the driver (or the stand-in)
failures = []


def check(cond, what):
    print(("PASS: " if cond else "FAIL: ") + what, flush=True)
    if not cond:
        failures.append(what)


def ptx(i):
    with open(os.path.join(ptx_dir, "k%02d.ptx" % i), "rb") as f:
        text = f.read()
    m = re.search(rb"\.entry\s+([A-Za-z_][A-Za-z0-9_$]*)", text)
    return m.group(1).decode(), text + b"\0"  # the JIT reads PTX up to its NUL


def run_kernel(function):
    """One launch of k<ID>(out, in, n) on 256 items, `out` filled with NaN before: 0 when the kernel wrote
    a finite value into every item."""
    n = 256
    host_in = (ctypes.c_float * n)(*[i * 0.01 for i in range(n)])
    host_out = (ctypes.c_float * n)(*[float("nan")] * n)
    d_in, d_out = ctypes.c_uint64(), ctypes.c_uint64()
    rc = cuda.cuMemAlloc_v2(ctypes.byref(d_in), n * 4) or cuda.cuMemAlloc_v2(ctypes.byref(d_out), n * 4)
    rc = rc or cuda.cuMemcpyHtoD_v2(d_in, host_in, n * 4) or cuda.cuMemcpyHtoD_v2(d_out, host_out, n * 4)
    count = ctypes.c_int(n)
    params = (ctypes.c_void_p * 3)(ctypes.cast(ctypes.byref(d_out), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(d_in), ctypes.c_void_p),
                                   ctypes.cast(ctypes.byref(count), ctypes.c_void_p))
    rc = rc or cuda.cuLaunchKernel(ctypes.c_void_p(function), 1, 1, 1, n, 1, 1, 0, None, params, None)
    rc = rc or cuda.cuCtxSynchronize() or cuda.cuMemcpyDtoH_v2(host_out, d_out, n * 4)
    cuda.cuMemFree_v2(d_in)
    cuda.cuMemFree_v2(d_out)
    if rc:
        return "CUresult %d" % rc
    if not all(math.isfinite(x) for x in host_out):
        return "wrote %s..." % list(host_out[:4])
    return 0


barrier = threading.Barrier(N)


def load(i):
    name, text = ptx(i)
    barrier.wait()
    r = callguard.load_binary(name, text, 0, 0, api="cuda")
    ctx = ctypes.c_void_p()
    had_context = cuda.cuCtxGetCurrent(ctypes.byref(ctx)) == 0 and bool(ctx.value)
    ran = run_kernel(r.function) if launch else None
    return dict(zip(r._fields, r), name=name, source=r.source, build_log=r.build_log, had_context=had_context,
                local_bytes=r.local_bytes, ran=ran)


with concurrent.futures.ThreadPoolExecutor(N) as pool:
    results = list(pool.map(load, range(N)))
check(all(x["module"] and x["function"] for x in results), "16 modules and functions loaded")
check(all(x["had_context"] for x in results), "each thread has a current context after load_binary (the primary)")
check(all(x["n_regs"] > 0 and x["n_spills"] >= 0 and x["n_max_threads"] > 0 for x in results),
      "registers, spills, max threads: %s" % sorted({(x["n_regs"], x["n_spills"], x["n_max_threads"]) for x in results}))
check(all(x["source"] == expect for x in results), "every module %s: %s" % (expect, [x["source"] for x in results]))
if launch:
    check(all(x["ran"] == 0 for x in results), "every kernel ran: %s" % [x["ran"] for x in results if x["ran"]])

# The dynamic shared memory opt-in above 48 KiB, and beyond the device's maximum an out-of-resources error.
name, text = ptx(0)
r = callguard.load_binary(name, text, 65536, 0, api="cuda")
dyn = ctypes.c_int()
rc = cuda.cuFuncGetAttribute(ctypes.byref(dyn), CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                             ctypes.c_void_p(r.function))
check(rc == 0 and dyn.value >= 65536, "64 KiB of dynamic shared memory: the function opted in to %d bytes" % dyn.value)
try:
    callguard.load_binary(name, text, 1 << 20, 0, api="cuda")
    check(False, "1 MiB of shared memory: loaded")
except callguard.OutOfResources as e:
    check(e.status_name == "CG_LOAD_ERESOURCES" and "shared memory" in str(e),
          "1 MiB of shared memory: OutOfResources (%s)" % e)
try:
    callguard.load_binary("no_such_kernel", text, 0, 0, api="cuda")
    check(False, "an unknown kernel name loaded")
except callguard.DriverError as e:
    check(False, "an unknown kernel name: DriverError %s" % e)
except callguard.Error as e:
    check(e.status_name == "CG_ENOENT" and "no_such_kernel" in str(e), "an unknown kernel name: CG_ENOENT (%s)" % e)
# PTX for an architecture newer than the device's (the H200's is sm_90): the JIT refuses it.
bad = b".version 8.0\n.target sm_120\n.address_size 64\n.visible .entry broken()\n{\n  ret;\n}\n\0"
try:
    callguard.load_binary("broken", bad, 0, 0, api="cuda", cache=False)
    check(False, "PTX that does not compile loaded")
except callguard.OutOfResources as e:
    check(False, "PTX that does not compile: OutOfResources %s" % e)
except callguard.DriverError as e:
    check(bool(e.function) and (e.result_name or "").startswith("CUDA_ERROR_"),
          "PTX that does not compile: DriverError from %s, %s (%s)" % (e.function, e.result_name, e.result))
stats = callguard.load_stats()
if expect == "built":
    check(stats["disk_hits"] == 0 and stats["builds"] >= N and stats["disk_writes"] >= N, "a cold cache: %s" % stats)
else:
    check(stats["disk_hits"] >= N and stats["disk_writes"] == 0, "a warm cache: %s" % stats)
print(json.dumps({"results": [{k: v for k, v in x.items() if k != "build_log"} for x in results], "stats": stats,
                  "cache_dir": callguard.cache_dir(), "failures": failures}))
sys.exit(1 if failures else 0)
