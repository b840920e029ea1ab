"""tests/gpu/threads_check.sh: two Python threads replaying CUDA graphs (torch.cuda.CUDAGraph: cuStreamBeginCapture,
cuGraphInstantiate, cuGraphLaunch, cuGraphExecDestroy, ...). By default each thread has its own graph: correct by CUDA's
graph rules, so `callguard run --check-threads` must report nothing and print the same checksums as a plain run.
With --shared both threads replay one graph, which CUDA's rules forbid without serialization: it must be reported."""
import sys
import threading

import torch

shared = "--shared" in sys.argv
torch.manual_seed(0)
w = torch.randn(1024, 1024, device="cuda") / 32.0
inputs = [torch.randn(1024, 1024, device="cuda") for _ in range(2)]
sums = [None, None]
errors = []


def capture(x, s):
    with torch.cuda.stream(s):
        y = torch.tanh(x @ w) + 0.5  # warm-up outside the capture, as torch asks
        s.synchronize()
        g = torch.cuda.CUDAGraph()
        # thread_local: the other thread's calls do not invalidate this capture (the default, global,
        # refuses any unsafe call in the process while a capture is open).
        with torch.cuda.graph(g, stream=s, capture_error_mode="thread_local"):
            y = torch.tanh(x @ w) + 0.5
    s.synchronize()
    return g, y


one = capture(inputs[0], torch.cuda.Stream()) if shared else None


def worker(i):
    try:
        s = torch.cuda.Stream()
        g, y = one if shared else capture(inputs[i], s)
        with torch.cuda.stream(s):
            for _ in range(200 if shared else 20):
                g.replay()
        s.synchronize()
        torch.cuda.synchronize()
        sums[i] = y.double().sum().item()
    except Exception as e:  # the main thread says it
        errors.append(repr(e))


threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join()
if errors:
    sys.exit("graph_job: " + "; ".join(errors))
print("graph checksums %.6f %.6f" % tuple(sums))
