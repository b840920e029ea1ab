#!/usr/bin/env python3
"""Row 4 of the guarded toy call benchmark (docs/benchmarks.md): the CPython
adapter against a hand-written Py_BEGIN_ALLOW_THREADS, measured inside the
interpreter that runs this script. The loops are C, in
BUILD/bench/libcgbench_call_py.so, called through ctypes.PyDLL, which keeps
the GIL held as a C extension's function would have it.

usage: PYTHON bench/bench_call_py.py [BUILD_DIR] [--ir FILE | --count]
(bench/run.sh runs it; --count is for valgrind --tool=callgrind.)
"""
import ctypes
import os
import platform
import sys

build = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "build"
rest = [a for a in sys.argv[1:] if a != build or a.startswith("--")]
lib = ctypes.PyDLL(os.path.join(os.path.abspath(build), "bench", "libcgbench_call_py.so"))
gil = "free-threaded" if hasattr(sys, "_is_gil_enabled") and not sys._is_gil_enabled() else "with the GIL"
print("CPython %s (%s, %s)" % (platform.python_version(), sys.executable, gil), flush=True)
argv = [b"bench_call_py"] + [a.encode() for a in rest]
arr = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
lib.cgbench_py_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
sys.exit(lib.cgbench_py_main(len(argv), arr))
