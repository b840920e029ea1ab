# A small PyOpenCL program (Debian's python3-pyopencl, /usr/bin/python3 only):
# its extension module loads libOpenCL.so.1 RTLD_LOCAL, where a preloaded
# layer's dlsym(RTLD_NEXT) cannot see it. Prints results that must not change
# when the layer is preloaded.
import numpy as np
import pyopencl as cl

platform = cl.get_platforms()[0]
device = platform.get_devices()[0]
ctx = cl.Context([device])
queue = cl.CommandQueue(ctx)
src = """
__kernel void twice_plus(__global const float *x, __global float *y)
{ size_t i = get_global_id(0); y[i] = 2.0f * x[i] + 1.0f; }
"""
prg = cl.Program(ctx, src).build()
x = np.arange(4096, dtype=np.float32)
y = np.empty_like(x)
mf = cl.mem_flags
bx = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
by = cl.Buffer(ctx, mf.WRITE_ONLY, y.nbytes)
knl = cl.Kernel(prg, "twice_plus")
knl.set_args(bx, by)
ev = cl.enqueue_nd_range_kernel(queue, knl, x.shape, None)
ev.wait()
cl.enqueue_copy(queue, y, by).wait()
queue.finish()
print("platform:", platform.name)
print("y[0]=%.1f y[-1]=%.1f sum=%.1f" % (y[0], y[-1], float(y.sum(dtype=np.float64))))
