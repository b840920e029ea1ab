"""The CPython adapter's holds() inside a running interpreter, through
ctypes: 1 with the GIL (ctypes.PYFUNCTYPE keeps it), 0 without it
(CFUNCTYPE releases it), the same on a threading.Thread, and 0 while the
interpreter finalizes. Any CPython 3.8+: 3.12 and later take the
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

failed = []


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
    # Module globals are cleared after Py_FinalizeEx has begun: holds() must
    # say 0 there, where PyGILState_Check says 1.
    def __del__(self, fn=with_gil, write=os.write):
        write(1, b"during finalization: %d\n" % fn())


last = AtFinalization()
print("python %s" % sys.version.split()[0], flush=True)
if failed:
    sys.exit("\n".join(failed))
