"""A Python program whose threads all wait, each somewhere else, for
`callguard status` to show (tests/watchdog/test_threads.py), on the real
OpenCL stack (ocl-icd and PoCL): a clFinish on a queue whose barrier waits
for a user event that nothing completes, so it never returns.

    threads_prog.py four [seccomp]
        the main thread in join, "driver" in clFinish through ctypes.CDLL
        (called through the helper finish()), "sleeper" in time.sleep,
        "waiter" on a threading.Event. With `seccomp` it first installs a
        filter that fails ptrace, process_vm_readv and process_vm_writev
        with EPERM (tests/seccomp_deny.py). Prints "ready" once every
        thread waits.
    threads_prog.py side TRUTH
        those four, and a generator and a coroutine (asyncio) each asleep
        inside, and "holder" in clFinish through ctypes.PyDLL, holding the
        GIL. "holder" waits until every other thread is still at its wait,
        writes CPython's own view of them to TRUTH (sys._current_frames()
        and threading.enumerate(): {native id: {"name", "stack": [[file,
        line, function], ...]}}, innermost first), its own taken on the
        line of its call, prints "ready" and enters it.
The lines the threads wait on end with "# wait: NAME"."""
import asyncio
import ctypes
import json
import os
import re
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MODE = sys.argv[1]
vp = ctypes.c_void_p


def opencl(lib):
    """A queue whose barrier waits for a user event nobody completes."""
    lib.clCreateContext.restype = vp
    lib.clCreateUserEvent.restype = vp
    lib.clCreateCommandQueue.restype = vp
    n, platform, device, err = ctypes.c_uint32(), vp(), vp(), ctypes.c_int32()
    assert lib.clGetPlatformIDs(1, ctypes.byref(platform), ctypes.byref(n)) == 0 and n.value >= 1
    assert lib.clGetDeviceIDs(platform, 0xFFFFFFFF, 1, ctypes.byref(device), ctypes.byref(n)) == 0
    ctx = vp(lib.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err)))
    assert err.value == 0, err.value
    queue = vp(lib.clCreateCommandQueue(ctx, device, 0, ctypes.byref(err)))
    assert err.value == 0, err.value
    event = vp(lib.clCreateUserEvent(ctx, ctypes.byref(err)))
    assert err.value == 0, err.value
    assert lib.clEnqueueBarrierWithWaitList(queue, 1, ctypes.byref(event), None) == 0
    return queue


CL = ctypes.CDLL("libOpenCL.so.1")
QUEUE = opencl(CL)
if MODE == "side":
    PYCL = ctypes.PyDLL("libOpenCL.so.1")
    HOLDER_QUEUE = opencl(PYCL)
if "seccomp" in sys.argv[2:]:
    import seccomp_deny
    seccomp_deny.deny_debugging()
NEVER = threading.Event()


def finish(queue):
    CL.clFinish(queue)  # wait: driver


def driver():
    finish(QUEUE)


def sleeper():
    time.sleep(3600)  # wait: sleeper


def waiter():
    NEVER.wait()  # wait: waiter


def numbers():
    yield 1
    time.sleep(3600)  # wait: generator
    yield 2


def generator():
    for _ in numbers():
        pass


async def inner():
    time.sleep(3600)  # wait: coroutine


async def outer():
    await inner()


def coroutine():
    asyncio.run(outer())


def lines():
    """{NAME: line} of this file's "# wait: NAME" lines."""
    with open(__file__) as f:
        found = [(re.search(r"  # wait: (\w+)(  #.*)?$", t), n) for n, t in enumerate(f, 1)]
    return {m.group(1): n for m, n in found if m}


def truth():
    """{native id: {"name", "stack"}} of every thread, CPython's own view."""
    frames, out = sys._current_frames(), {}
    for t in threading.enumerate():
        f, stack = frames.get(t.ident), []
        while f:
            stack.append([f.f_code.co_filename, f.f_lineno, f.f_code.co_name])
            f = f.f_back
        out[str(t.native_id)] = {"name": t.name, "stack": stack}
    return out


def parked(want):
    """Every thread of `want` ({name: line}) waits on its line in this file,
    and their stacks held still for 0.1 s (the main thread inside join)."""
    here, before = os.path.abspath(__file__), None
    for _ in range(600):
        now = truth()
        names = {v["name"]: v["stack"] for v in now.values()}
        at = all(any(f[0] == here and f[1] == line for f in names.get(name, [])) for name, line in want.items())
        if at and now == before:
            return
        before = now if at else None
        time.sleep(0.1)
    sys.exit("the threads never all waited: %s" % truth())


def holder():
    want = {k: v for k, v in lines().items() if k not in ("holder", "main_four")}
    parked(want)
    mine = threading.current_thread().native_id
    write(truth(), mine); PYCL.clFinish(HOLDER_QUEUE)  # wait: holder  # noqa: E702


def write(views, mine):
    """TRUTH: the others' views, and this thread's own taken on the line of
    its call (truth()'s and this function's frames above it left out)."""
    stack = views[str(mine)]["stack"]
    views[str(mine)]["stack"] = stack[next(i for i, f in enumerate(stack) if f[2] == "holder"):]
    with open(sys.argv[2], "w") as f:
        json.dump(views, f)
    print("ready", flush=True)


def start(name, target):
    t = threading.Thread(target=target, name=name, daemon=True)
    t.start()
    return t


first = start("sleeper", sleeper)
start("waiter", waiter)
start("driver", driver)
if MODE == "side":
    start("generator", generator)
    start("coroutine", coroutine)
    start("holder", holder)
    first.join()  # wait: MainThread
else:
    parked({k: v for k, v in lines().items() if k in ("sleeper", "waiter", "driver")})
    print("ready", flush=True); first.join()  # wait: main_four  # noqa: E702
