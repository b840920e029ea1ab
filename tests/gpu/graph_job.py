"""tests/gpu/threads_check.sh: two Python threads, each capturing and replaying its own CUDA graph (torch.cuda.CUDAGraph:
cuStreamBeginCapture, cuGraphInstantiate, cuGraphLaunch, cuGraphExecDestroy, ...). Correct by CUDA's graph rules (no graph
object is shared), so `callguard run --check-threads` must report nothing and print the same checksums as a plain run."""
import threading

import torch

torch.manual_seed(0)
inputs = [torch.randn(1024, 1024, device="cuda") for _ in range(2)]
sums = [None, None]


def worker(i):
    x = inputs[i].clone()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        y = torch.tanh(x @ x / 32.0)  # warm-up outside the capture, as torch asks
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        # thread_local: the other thread's calls do not invalidate this capture (the default, global,
        # refuses any unsafe call in the process while a capture is open).
        with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
            y = torch.tanh(x @ x / 32.0)
        for _ in range(20):
            g.replay()
            x.copy_(y)
    s.synchronize()
    sums[i] = y.double().sum().item()
    del g


threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print("graph checksums %.6f %.6f" % tuple(sums))
