"""Part b of tests/gpu/run.sh: a Python thread waits about a second in cuStreamSynchronize through
ctypes.PyDLL (which keeps the GIL for the whole call) on a kernel that spins on %globaltimer, while the main
thread ticks every millisecond. Prints "LONGEST_PAUSE_MS WAITED_MS". Run under `callguard run`: PyDLL opens
libcuda.so.1 by soname, which is callguard's shim there.

    pause.py [LIBRARY]   (default libcuda.so.1)"""
import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pausetimer import longest_pause  # noqa: E402 (tests/pausetimer.py)

cu = ctypes.PyDLL(sys.argv[1] if len(sys.argv) > 1 else "libcuda.so.1")
ptx = b"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry spin(.param .u64 ns)
{
  .reg .pred p;
  .reg .b64 t0, t1, d, n;
  ld.param.u64 n, [ns];
  mov.u64 t0, %globaltimer;
loop:
  mov.u64 t1, %globaltimer;
  sub.s64 d, t1, t0;
  setp.lt.s64 p, d, n;
  @p bra loop;
  ret;
}
"""


def ok(r, what):
    if r != 0:
        raise SystemExit("%s: CUresult %d" % (what, r))


waited = 0.0


def worker():
    global waited
    time.sleep(0.2)  # the main thread ticks first
    dev, ctx, mod, fn = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
    ok(cu.cuInit(0), "cuInit")
    ok(cu.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
    ok(cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    ok(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
    ok(cu.cuModuleLoadData(ctypes.byref(mod), ptx), "cuModuleLoadData")
    ok(cu.cuModuleGetFunction(ctypes.byref(fn), mod, b"spin"), "cuModuleGetFunction")
    ns = ctypes.c_uint64(1000000000)
    params = (ctypes.c_void_p * 1)(ctypes.addressof(ns))
    u = ctypes.c_uint
    ok(cu.cuLaunchKernel(fn, u(1), u(1), u(1), u(1), u(1), u(1), u(0), None, params, None), "cuLaunchKernel")
    t0 = time.monotonic()
    ok(cu.cuStreamSynchronize(None), "cuStreamSynchronize")
    waited = time.monotonic() - t0


t = threading.Thread(target=worker)
t.start()
longest = longest_pause(t)
print("%.1f %.1f" % (longest * 1000, waited * 1000))
