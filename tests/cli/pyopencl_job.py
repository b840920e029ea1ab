"""A small PyOpenCL program for `callguard run` tests: builds a kernel (PyOpenCL
may spawn a child process while building), runs it, prints the result."""
import numpy as np
import pyopencl as cl

ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
a = np.arange(64, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
prg = cl.Program(ctx, "__kernel void twice(__global float *x) { int i = get_global_id(0); x[i] = 2 * x[i]; }").build()
prg.twice(q, a.shape, None, buf)
out = np.empty_like(a)
cl.enqueue_copy(q, out, buf).wait()
print("sum", float(out.sum()))
