/* The Python side of the pause tests (oneAPI.jl's GC-stall test, in
 * CPython): a thread calls MODULE.wait(1000), which blocks in the driver for
 * a second, while the main thread ticks every millisecond and keeps the
 * longest gap between ticks in `longest` (seconds). The test appends what it
 * needs after it, then writes `longest` to the file named by OUT. */
#ifndef CG_PAUSE_SCRIPT_H
#define CG_PAUSE_SCRIPT_H

#define CG_PAUSE_TICKER(module)                                                                                        \
    "import threading, time, " module "\n"                                                                             \
    "def worker():\n"                                                                                                  \
    "    time.sleep(0.2)  # let the main thread start ticking first\n"                                                 \
    "    " module ".wait(1000)\n"                                                                                      \
    "t = threading.Thread(target=worker)\n"                                                                            \
    "t.start()\n"                                                                                                      \
    "longest = 0.0\n"                                                                                                  \
    "last = time.monotonic()\n"                                                                                        \
    "while t.is_alive():\n"                                                                                            \
    "    time.sleep(0.001)\n"                                                                                          \
    "    now = time.monotonic()\n"                                                                                     \
    "    longest = max(longest, now - last)\n"                                                                         \
    "    last = now\n"                                                                                                 \
    "t.join()\n"

#define CG_PAUSE_WRITE "open(OUT, 'w').write('%.1f' % (longest * 1000))\n"

#endif
