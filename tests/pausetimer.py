"""The pause tests' one measurement: how long the calling (main) thread was kept from running while another
thread waits in a driver call. The calling thread ticks every millisecond until the other thread ends; the
longest gap between two ticks is the pause (the whole wait when the waiting thread keeps the GIL, a few ms
when the GIL is released around the wait).

Used by tests/cuda/test_layer.py (its pause child), tests/gpu/pause.py (tests/gpu/run.sh part b and
tests/gpu/check.sh) and tests/cli/cl_long_wait.py; they import it with this folder on sys.path.
"""
import time


def longest_pause(thread, tick_s=0.001):
    """Ticks every tick_s seconds until `thread` (started) has ended, then joins it; returns the longest gap
    between two ticks, in seconds."""
    longest, last = 0.0, time.monotonic()
    while thread.is_alive():
        time.sleep(tick_s)
        now = time.monotonic()
        longest, last = max(longest, now - last), now
    thread.join()
    return longest
