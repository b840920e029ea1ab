"""Part d of tests/gpu/run.sh: the two PyTorch loops whose wall time is compared plain and under `callguard
run --report`. Times the loops only (start-up, CUDA initialization and one warm-up pass excluded), each
repeated REPS times; prints "mm MS launch MS" with the median of the repetitions, in milliseconds.

    overhead.py REPS [LOOPS]   LOOPS: mm,launch (default), mm or launch. REPS 0: start-up and warm-up
                               only (run.sh counts the guarded calls of one repetition of a loop as the
                               report of `REPS=1 LOOP` minus that of `REPS=0`)
  mm:     20 products of 4096 x 4096 float32 matrices, then synchronize
  launch: 10,000 small elementwise kernels (add on 1,024 floats), then synchronize"""
import statistics
import sys
import time

import torch

reps = int(sys.argv[1])
loops = (sys.argv[2] if len(sys.argv) > 2 else "mm,launch").split(",")
torch.backends.cuda.matmul.allow_tf32 = False
a = torch.randn(4096, 4096, device="cuda")
b = torch.randn(4096, 4096, device="cuda")
v = torch.zeros(1024, device="cuda")


def mm():
    c = a
    for _ in range(20):
        c = torch.mm(a, b)
    torch.cuda.synchronize()
    return c


def launch():
    for _ in range(10000):
        v.add_(1.0)
    torch.cuda.synchronize()


def timed(f):
    t0 = time.perf_counter()
    f()
    return (time.perf_counter() - t0) * 1000


mm(), launch()  # warm-up: cuBLAS handles, kernels loaded
out = []
for name, f in (("mm", mm), ("launch", launch)):
    if name in loops and reps:
        out.append("%s %.3f" % (name, statistics.median(timed(f) for _ in range(reps))))
print(" ".join(out) or "warm-up only")
