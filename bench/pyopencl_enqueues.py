"""Many small OpenCL enqueues from PyOpenCL: the workload of bench/bench_run.py."""
import sys

import numpy as np
import pyopencl as cl

n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
ctx = cl.create_some_context(interactive=False)
q = cl.CommandQueue(ctx)
a = np.ones(16, dtype=np.float32)
buf = cl.Buffer(ctx, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=a)
prg = cl.Program(ctx, "__kernel void inc(__global float *x) { x[get_global_id(0)] += 1.0f; }").build()
k = prg.inc
k.set_arg(0, buf)
for i in range(n):
    cl.enqueue_nd_range_kernel(q, k, (16,), None)
    if i % 1000 == 999:
        q.finish()
out = np.empty_like(a)
cl.enqueue_copy(q, out, buf).wait()
print("value", float(out[0]))
