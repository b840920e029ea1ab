"""A cuda-python (PyPI cuda-bindings) program: it opens libcuda.so.1 by soname, binds only
cuGetProcAddress_v2 and asks it for every entry point it knows, then runs a kernel. Prints each result."""
from cuda.bindings import driver as cu
err, = cu.cuInit(0)
print("cuInit", err)
err, v = cu.cuDriverGetVersion()
print("version", err, v)
err, dev = cu.cuDeviceGet(0)
err, name = cu.cuDeviceGetName(64, dev)
print("name", err, name.split(b"\0")[0])
err, ctx = cu.cuCtxCreate(None, 0, dev)
print("ctx", err)
ptx = b".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n{\n ret;\n}\n"
err, mod = cu.cuModuleLoadData(ptx)
print("module", err)
err, f = cu.cuModuleGetFunction(mod, b"k")
print("function", err)
err, = cu.cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0)
print("launch", err)
err, = cu.cuStreamSynchronize(0)
print("sync", err)
err, = cu.cuCtxDestroy(ctx)
print("destroy", err)
