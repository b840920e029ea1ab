"""A torchrun job of 2 ranks that stops making progress (issue 36, item 6): rank 1 waits in
cuStreamSynchronize on a kernel that spins for ~1000 s (torch.cuda._sleep), rank 0 waits for it in a
gloo barrier (no guarded call). Prints "rank R waiting" on each rank first.

    callguard run --report OUT/ -- torchrun --nproc-per-node 2 torch_hang.py"""
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()
torch.cuda.set_device(0)
x = torch.ones(16, device="cuda")
torch.cuda.synchronize()
print("rank %d waiting" % rank, flush=True)
if rank == 1:
    torch.cuda._sleep(2 * 10**12)  # spins on the GPU for about 1000 s
    torch.cuda.current_stream().synchronize()  # line 19: the wait in cuStreamSynchronize
dist.barrier()
print("rank %d done (pid %d)" % (rank, os.getpid()), flush=True)
