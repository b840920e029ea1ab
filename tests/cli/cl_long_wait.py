"""A Python program that waits on a long PoCL kernel (>= 500 ms) from a
worker thread while its main thread ticks every millisecond; prints one JSON
line: the longest pause between ticks, how long the wait took, and the line
of this file that made the wait.

  cl_long_wait.py pydll     waits in clFinish through ctypes.PyDLL, which
                            keeps the GIL for the whole call (a naive binding)
  cl_long_wait.py pyopencl  waits with queue.finish(): PyOpenCL releases the
                            GIL around clFinish itself
"""
import ctypes
import json
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from pausetimer import longest_pause  # noqa: E402 (tests/pausetimer.py)

import numpy as np
import pyopencl as cl

MODE = sys.argv[1]
SRC = """
__kernel void spin(__global float *x, int n) {
    float a = x[0];
    for (int i = 0; i < n; i++) a = a * 0.9999999f + 0.5f;  /* one long dependent chain */
    x[0] = a;
}
"""
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ones(1, dtype=np.float32))
spin = cl.Program(ctx, SRC).build().spin
ocl = ctypes.PyDLL("libOpenCL.so.1")
ocl.clFinish.argtypes = [ctypes.c_void_p]


def launch(n):
    spin(q, (1,), (1,), buf, np.int32(n))


# PoCL compiles the kernel at its first launch: calibrate after that, so the
# wait below is the kernel alone, at about 1 s on an idle machine. On a
# loaded one the sample runs slow and the wait can come out short (336 ms
# seen on 2 busy cores): wait() then runs it again, longer, until it lasts.
launch(1000)
q.finish()
n = 1 << 20
while True:
    t = time.monotonic()
    launch(n)
    q.finish()
    took = time.monotonic() - t
    if took > 0.2 or n > (1 << 34):
        break
    n *= 4
n = min(int(n * 1.0 / took), 2**31 - 1)

waited = {}
LONG_S = 0.6  # the tests want >= 500 ms


def wait():
    """One wait of at least LONG_S: a short one (the calibration ran on a
    busier machine than this) is done again with the kernel scaled up; the
    last is the longest."""
    k = n
    for _ in range(6):
        launch(k)
        t = time.monotonic()
        if MODE == "pydll":
            waited["line"] = sys._getframe().f_lineno + 1
            ocl.clFinish(ctypes.c_void_p(q.int_ptr))
        else:
            waited["line"] = sys._getframe().f_lineno + 1
            q.finish()
        took = time.monotonic() - t
        waited["ms"] = took * 1000
        if took >= LONG_S:
            return
        k = min(int(k * 1.0 / max(took, 0.01)), 2**31 - 1)


def worker():
    time.sleep(0.1)  # the main thread ticks first
    wait()


th = threading.Thread(target=worker, name="waiter")
th.start()
longest = longest_pause(th)
print(json.dumps({"longest_ms": longest * 1000, "wait_ms": waited["ms"], "line": waited["line"],
                  "file": __file__}))
