"""The launch-bound loop of part d (tests/gpu/overhead.py: 10,000 small PyTorch kernels), statistics on
against statistics off inside ONE process under `callguard run --report`, alternating loop by loop, so
that the machine's drift between processes (plain runs alone vary by +-15 % on the H200 VM) does not
enter the ratio. Off is callguard's idle path (bench/run.sh row 1: under 1 ns a call), so on/off is what
counting costs the loop, with the hang page on (the default) and off (CALLGUARD_HANG_MS=off). Also exact timing (CALLGUARD_TIMING=exact set with cg_configure) against off, and sampled with
cuLaunchKernel not marked blocking (cg_set_blocking), which spares the launch the two atomic adds of its exact
peak (docs/report.md, "peak_inside").

    callguard run --api cuda --report R.json -- python overhead_ab.py [ROUNDS [LAUNCHES]]

LAUNCHES per loop (default 10000): shorter loops give more, closer pairs (less drift inside a pair).

The first mode toggles nothing (off against off): the method's own noise. Prints one line per mode: the median of the per-round ratios (on/off), and the rounds' medians in ms."""
import ctypes
import statistics
import sys
import time

import torch

rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
launches = int(sys.argv[2]) if len(sys.argv) > 2 else 10000
path = next(l.split()[-1] for l in open("/proc/self/maps") if "libcallguard.so" in l)
cg = ctypes.CDLL(path)
cg.cg_configure.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
v = torch.zeros(1024, device="cuda")


def loop():
    t0 = time.perf_counter()
    for _ in range(launches):
        v.add_(1.0)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) * 1e3


loop()
cg.cg_set_blocking.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p]
# The hang page (calls in flight a second, kept by the watchdog) is on until the last mode turns it off.
modes = ("off against off (the noise)", "sampled", "exact", "sampled, cuLaunchKernel not blocking",
         "sampled, hang page off")
for mode in modes:
    if mode.endswith("hang page off"):
        assert cg.cg_configure(b"CALLGUARD_HANG_MS", b"off") == 0
        assert cg.cg_set_blocking(b"cuLaunchKernel", 1, b"overhead_ab") in (0, 1)
    if mode.startswith("off") or mode.endswith("hang page off"):
        mode_timing = "sampled"
    elif mode.endswith("not blocking"):
        # The launch counted as any other call, without the atomic adds of a blocking site's peak: what they cost.
        mode_timing = "sampled"
        assert cg.cg_set_blocking(b"cuLaunchKernel", 0, b"overhead_ab") in (0, 1)
    else:
        mode_timing = mode
    if cg.cg_configure(b"CALLGUARD_TIMING", mode_timing.encode()) != 0:
        print("%s: CALLGUARD_TIMING=%s refused by this libcallguard" % (mode, mode))
        continue
    ratios, on_ms, off_ms = [], [], []
    for r in range(rounds):
        order = (1, 0) if r % 2 else (0, 1)
        t = {}
        for on in order:
            cg.cg_stats_enable(on and not mode.startswith("off"))
            t[on] = loop()
        ratios.append(t[1] / t[0])
        on_ms.append(t[1])
        off_ms.append(t[0])
    cg.cg_stats_enable(1)
    # Also the mean of the middle 80 % of the ratios, with twice its standard error.
    mid = sorted(ratios)[len(ratios) // 10:len(ratios) - len(ratios) // 10]
    mean = statistics.mean(mid)
    se2 = 2 * statistics.stdev(mid) / len(mid) ** 0.5 if len(mid) > 1 else float("nan")
    print("%s: on/off median %.4f (%+.2f %%), trimmed mean %+.2f %% +- %.2f over %d rounds of %d launches; "
          "on %.3f ms, off %.3f ms (medians)" %
          (mode, statistics.median(ratios), (statistics.median(ratios) - 1) * 100, (mean - 1) * 100, se2 * 100,
           rounds, launches, statistics.median(on_ms), statistics.median(off_ms)))
