"""Does the default (detect) mode of `callguard run` keep the GIL where the program keeps it? (issue 32)

A thread waits about 0.6 s in cuStreamSynchronize through ctypes.PyDLL (which keeps the GIL for the whole
call) behind a PyTorch sleep kernel, while the main thread ticks every millisecond. Plainly the main thread
pauses for the whole wait; under `callguard run` without --release-gil it must too. Prints one line:
"worst_pause_ms W waited_ms T overlap N" (N: ticks the main thread made while the waiter was inside the
call). With BTSIG=PATH.so (tests/gpu/btsig.c), the first tick made while the waiter is inside the call
signals it, and it prints its C stack to stderr: the frame that let the GIL go.

    gil_probe.py [LIBRARY]   (default libcuda.so.1; tests/gpu/pause.py is the same probe without PyTorch)"""
import ctypes
import os
import sys
import threading
import time

lib = sys.argv[1] if len(sys.argv) > 1 else "libcuda.so.1"
bt = None
if os.environ.get("BTSIG"):
    bt = ctypes.CDLL(os.environ["BTSIG"])
    bt.btsig_install()

import torch  # noqa: E402
cuda = ctypes.PyDLL(lib)
inside = False
waited = 0.0


torch.cuda._sleep(1000)
torch.cuda.synchronize()
s = torch.cuda.Stream()
stream = ctypes.c_void_p(s.cuda_stream)


def waiter():
    global inside, waited
    with torch.cuda.stream(s):
        torch.cuda._sleep(int(1.2e9))  # about 0.6 s
    t0 = time.perf_counter()
    inside = True
    cuda.cuStreamSynchronize(stream)
    inside = False
    waited = time.perf_counter() - t0


t = threading.Thread(target=waiter)
t.start()
worst, overlap, signalled = 0.0, 0, False
last = time.perf_counter()
while t.is_alive():
    time.sleep(0.001)
    now = time.perf_counter()
    worst, last = max(worst, now - last), now
    if inside:
        overlap += 1
        if bt is not None and not signalled and overlap > 20:
            signalled = True
            bt.btsig_signal(ctypes.c_ulong(t.ident))
t.join()
print("worst_pause_ms %.1f waited_ms %.1f overlap %d" % (worst * 1e3, waited * 1e3, overlap), flush=True)
