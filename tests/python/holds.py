"""The CPython adapter's holds() inside a running interpreter, through
ctypes: 1 with the GIL (ctypes.PYFUNCTYPE keeps it), 0 without it
(CFUNCTYPE releases it), the same on a threading.Thread; while the
interpreter finalizes, 0 on 3.12+ and 1 on 3.11 and earlier (the
finalizing thread holds the GIL there). Any CPython 3.8+: 3.12 and later take the
thread-local path, 3.11 and earlier the comparison with this thread's state.
usage: python holds.py BUILD/lib/libcallguard.so  (prints one line per check)
"""
import ctypes
import os
import sys
import threading


class Adapter(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("holds", ctypes.c_void_p), ("call_outside", ctypes.c_void_p)]


lib = ctypes.PyDLL(sys.argv[1])
lib.cg_adapter_cpython.restype = ctypes.POINTER(Adapter)
holds = lib.cg_adapter_cpython().contents.holds
with_gil = ctypes.PYFUNCTYPE(ctypes.c_int)(holds)
without_gil = ctypes.CFUNCTYPE(ctypes.c_int)(holds)
# call_outside(fn, arg) with the GIL kept on the way in, so that the adapter
# itself releases it; fn is libc's free, given NULL: a C function that does
# nothing and needs no interpreter.
outside = ctypes.PYFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p)(lib.cg_adapter_cpython().contents.call_outside)
c_nothing = ctypes.cast(ctypes.CDLL(None).free, ctypes.c_void_p).value

failed = []
WANT_AT_FINALIZATION = 0 if sys.version_info >= (3, 12) else 1


def check(what, got, want):
    print("%s: %d" % (what, got))
    if got != want:
        failed.append("%s: holds() said %d, expected %d" % (what, got, want))


check("main thread, GIL held", with_gil(), 1)
check("main thread, GIL released", without_gil(), 0)
seen = []
t = threading.Thread(target=lambda: seen.extend([with_gil(), without_gil()]))
t.start()
t.join()
check("threading.Thread, GIL held", seen[0], 1)
check("threading.Thread, GIL released", seen[1], 0)


class AtFinalization:
    # Module globals are cleared after Py_FinalizeEx has begun: holds() says
    # 0 there on 3.12+ (Py_IsInitialized is false), 1 on 3.11 and earlier,
    # where the finalizing thread holds the GIL and may release it
    # (src/runtime/python.h). The test's regex fails on the other value.
    # Where it says 1, the adapter's call_outside really releases and re-takes
    # the GIL there, and the interpreter goes on finalizing (exit status 0).
    def __del__(self, fn=with_gil, write=os.write, want=WANT_AT_FINALIZATION, outside=outside, c=c_nothing):
        got = fn()
        if got:
            outside(c, None)
        if got == want:
            write(1, b"during finalization: right (%d)\n" % got)
        else:
            write(1, b"during finalization: wrong, holds() said %d, expected %d\n" % (got, want))


last = AtFinalization()
print("python %s" % sys.version.split()[0], flush=True)
if failed:
    sys.exit("\n".join(failed))
