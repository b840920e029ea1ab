"""A Python program stuck in a driver wait: through ctypes.PyDLL (which keeps
the GIL for the whole call), or ctypes.CDLL with the argument `cdll` (which
lets go of it), in clWaitForEvents on an OpenCL user event that nothing ever
completes, on the real OpenCL stack (ocl-icd and PoCL). Prints "waiting"
first; it never returns."""
import ctypes
import sys

ocl = (ctypes.CDLL if sys.argv[1:] == ["cdll"] else ctypes.PyDLL)("libOpenCL.so.1")
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
print("waiting", flush=True)
ocl.clWaitForEvents(1, ctypes.byref(event))  # the line a hang report names
sys.exit("clWaitForEvents returned")
