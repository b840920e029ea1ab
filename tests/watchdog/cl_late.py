"""A Python program whose clFinish waits SECONDS and returns, on the real
OpenCL stack (ocl-icd and PoCL), through ctypes.CDLL (the GIL let go): the
queue holds a marker behind a user event, which a timer thread completes
after SECONDS. Prints "waiting on queue 0x..." (its address) before clFinish and "finished" once it
returned, and exits 0. With "never" for SECONDS nothing completes it.

  cl_late.py SECONDS|never
"""
import ctypes
import sys
import threading

ocl = ctypes.CDLL("libOpenCL.so.1")
vp = ctypes.c_void_p
n = ctypes.c_uint32()
platform, device = vp(), vp()
err = ctypes.c_int32()
for name in ("clCreateContext", "clCreateCommandQueue", "clCreateUserEvent"):
    getattr(ocl, name).restype = vp
assert ocl.clGetPlatformIDs(1, ctypes.byref(platform), ctypes.byref(n)) == 0 and n.value >= 1
assert ocl.clGetDeviceIDs(platform, 0xFFFFFFFF, 1, ctypes.byref(device), ctypes.byref(n)) == 0
ctx = vp(ocl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err)))
assert err.value == 0, err.value
queue = vp(ocl.clCreateCommandQueue(ctx, device, 0, ctypes.byref(err)))
assert err.value == 0, err.value
event = vp(ocl.clCreateUserEvent(ctx, ctypes.byref(err)))
assert err.value == 0, err.value
assert ocl.clEnqueueMarkerWithWaitList(queue, 1, ctypes.byref(event), None) == 0
if sys.argv[1] != "never":
    threading.Timer(float(sys.argv[1]), lambda: ocl.clSetUserEventStatus(event, 0)).start()
print("waiting on queue 0x%x" % queue.value, flush=True)
assert ocl.clFinish(queue) == 0  # the line a late call names
print("finished", flush=True)
