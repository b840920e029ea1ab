"""A torchrun job of 2 ranks for `callguard status`'s every-thread view (issue 47): rank 0's worker
thread, named "gpu-worker", waits in torch.cuda.synchronize() on a kernel that spins for ~1000 s,
called through the helper wait_gpu(); rank 0's main thread joins it. Rank 1 waits for rank 0 in a gloo
barrier (no guarded call). Prints "rank R waiting" on each rank first.

    callguard run --report OUT/ -- torchrun --nproc-per-node 2 threads_hang.py"""
import threading

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.cuda.set_device(0)
torch.ones(16, device="cuda")
torch.cuda.synchronize()


def wait_gpu():
    torch.cuda._sleep(2 * 10**12)  # spins on the GPU for about 1000 s
    torch.cuda.synchronize()  # the user's line of rank 0's worker


print("rank %d waiting" % rank, flush=True)
if rank == 0:
    t = threading.Thread(target=wait_gpu, name="gpu-worker")
    t.start()
    t.join()  # rank 0's main thread
dist.barrier()  # rank 1's line
