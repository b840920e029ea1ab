#!/usr/bin/env python3
"""A guarded call from CPython through ctypes, with cold caches (bench/bench_cold.sh runs it under callgrind's
cache simulation; docs/benchmarks.md, "Cold caches"). A Python loop walks 1 MiB (bench_cold.c's walk), then
calls clGetDeviceInfo itself through ctypes.CDLL (the GIL let go around the call, as ctypes does), with
collection on around the call alone: direct from libOpenCL.so.1's handle, guarded as the process binds the name
(the preloaded layer's wrapper). Each side is dumped as direct_py, guarded_py.

usage: PYTHON bench/bench_cold_py.py LIBBENCH_COLD [CALLS]
"""
import ctypes
import sys

if len(sys.argv) < 2:
    sys.exit("usage: bench_cold_py.py LIBBENCH_COLD [CALLS]")
bench = ctypes.CDLL(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
icd = ctypes.CDLL("libOpenCL.so.1", mode=ctypes.RTLD_GLOBAL)
bound = ctypes.CDLL(None)  # RTLD_DEFAULT: the layer's wrapper when it is preloaded
pl, dev = ctypes.c_void_p(), ctypes.c_void_p()
if icd.clGetPlatformIDs(1, ctypes.byref(pl), None) or icd.clGetDeviceIDs(pl, 0xFFFFFFFF, 1, ctypes.byref(dev), None):
    sys.exit("bench_cold_py.py: no OpenCL device")
value = ctypes.c_uint64()
walk, on, off = bench.bench_cold_walk, bench.bench_cold_on, bench.bench_cold_off
for side, lib in (("direct", icd), ("guarded", bound)):
    f = lib.clGetDeviceInfo
    f.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p]
    args = (dev, 0x1000, 8, ctypes.byref(value), None)  # CL_DEVICE_TYPE
    for _ in range(100):  # warm: the guarded site resolves its real function on its first call
        f(*args)
    for _ in range(n):
        walk()
        on()
        f(*args)
        off()
    bench.bench_cold_dump(("%s_py" % side).encode())
