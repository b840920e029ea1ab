#!/usr/bin/env python3
"""The OpenCL layer's calls made from Python with the GIL held
(docs/benchmarks.md, "The OpenCL layer"): bench/bench_cl.c's loops, built as
a shared library, called through ctypes.PyDLL, which keeps the GIL held as a
C extension's function would have it. Run with the layer preloaded
(bench/bench_cl.sh does).

usage: PYTHON bench/bench_cl_py.py LIBRARY [--count] [KINDS]
"""
import ctypes
import os
import platform
import sys

if len(sys.argv) < 2:
    sys.exit("usage: bench_cl_py.py LIBRARY [--count] [KINDS]")
# RTLD_GLOBAL: its libOpenCL.so.1 then is in the global scope, as a program's is.
lib = ctypes.PyDLL(os.path.abspath(sys.argv[1]), mode=os.RTLD_GLOBAL | os.RTLD_NOW)
print("CPython %s (%s)" % (platform.python_version(), sys.executable), flush=True)
argv = [b"bench_cl_py"] + [a.encode() for a in sys.argv[2:]]
arr = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
lib.bench_cl_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
rc = lib.bench_cl_main(len(argv), arr)
sys.stdout.flush()
sys.exit(rc)
