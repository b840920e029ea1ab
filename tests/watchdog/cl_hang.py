"""A Python program stuck in a driver wait: through ctypes.PyDLL (which keeps
the GIL for the whole call), or ctypes.CDLL with the argument `cdll` (which
lets go of it), in clWaitForEvents on an OpenCL user event that nothing ever
completes, on the real OpenCL stack (ocl-icd and PoCL). With `seccomp=kill`
or `seccomp=eperm` it first installs a seccomp filter on every thread that
kills the process on process_vm_readv or fails it with EPERM
(tests/seccomp_deny.py). Prints "waiting" first; it never returns."""
import ctypes
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ocl = (ctypes.CDLL if "cdll" in sys.argv[1:] else ctypes.PyDLL)("libOpenCL.so.1")
vp = ctypes.c_void_p
n = ctypes.c_uint32()
platform, device = vp(), vp()
err = ctypes.c_int32()
ocl.clCreateContext.restype = vp
ocl.clCreateUserEvent.restype = vp
assert ocl.clGetPlatformIDs(1, ctypes.byref(platform), ctypes.byref(n)) == 0 and n.value >= 1
assert ocl.clGetDeviceIDs(platform, 0xFFFFFFFF, 1, ctypes.byref(device), ctypes.byref(n)) == 0
ctx = ocl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err))
assert err.value == 0, err.value
event = vp(ocl.clCreateUserEvent(vp(ctx), ctypes.byref(err)))
assert err.value == 0, err.value
for arg in sys.argv[1:]:
    if arg.startswith("seccomp="):
        import seccomp_deny
        seccomp_deny.deny_process_vm_readv(arg[8:])
print("waiting", flush=True)
ocl.clWaitForEvents(1, ctypes.byref(event))  # the line a hang report names
sys.exit("clWaitForEvents returned")
