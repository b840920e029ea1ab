"""The frame reader (src/runtime/pyread.c) inside a running CPython: a thread
parks in a native call (ctypes.PyDLL keeps the GIL, ctypes.CDLL releases it)
while a plain C thread reads its Python frames; every line read is compared
with the truth, which each test takes from its own frames.
Run: pyread.py TEST HELPER_SO (or --list), with each CPython 3.9-3.13.
"""
import _thread
import ctypes
import os
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

OK, NO_THREAD, CHANGED = 0, 4, 5
HERE = sys._getframe().f_code.co_filename

if not listing():
    HELPER = sys.argv[2]
    WITH_GIL = ctypes.PyDLL(HELPER)
    WITHOUT_GIL = ctypes.CDLL(HELPER)
    for lib in (WITH_GIL, WITHOUT_GIL):
        lib.cgt_text.restype = ctypes.c_char_p
        lib.cgt_result_name.restype = ctypes.c_char_p
        lib.cgt_first_wrong.restype = ctypes.c_char_p
        lib.cgt_threads.restype = ctypes.c_char_p
        lib.cgt_hammer_start.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_char_p, ctypes.c_int, ctypes.c_int]


def prepared(lib):
    """The reader knows this interpreter: 3.9 to 3.14 must (older: skipped)."""
    if sys.version_info < (3, 9):
        sys.exit(77)
    r = lib.cgt_prepare()
    check(r == OK, "cgt_prepare: %s on %s" % (lib.cgt_result_name(r).decode(), sys.version))


def stack_above(depth):
    """CPython's own view of the caller's frames: (line, function, file)."""
    f, frames = sys._getframe(depth), []
    while f:
        frames.append((f.f_lineno, f.f_code.co_name, f.f_code.co_filename))
        f = f.f_back
    return frames


def read_here(lib, most=64):
    """This thread's frames as the reader saw them while it waited in a
    native call, checked against CPython's own (taken on the same line, so
    every frame is where it was during the call); and that line."""
    r, truth, line = lib.cgt_read_self(most), stack_above(1), sys._getframe().f_lineno
    check(r == OK, "read: %s" % lib.cgt_result_name(r).decode())
    frames = [tuple(row.split(" ", 2)) for row in lib.cgt_text().decode("utf-8").splitlines()]
    frames = [(int(n), fn, f) for n, fn, f in frames]
    check(frames == truth[:most], "read:\n%s\nCPython says:\n%s" % (frames[:8], truth[:8]))
    return frames, line


def expect(frames, truth):
    """The innermost frames are exactly `truth`: (line, function) in this file.
    One comparison; the message is made only when it fails (a 10,000-frame
    truth formatted on every frame took minutes on a loaded machine)."""
    want = [(line, fn, HERE) for line, fn in truth]
    if frames[:len(want)] == want:
        return
    check(len(frames) >= len(want), "only %d frames, expected %d: %s" % (len(frames), len(want), truth[:8]))
    i = next(i for i, (got, w) in enumerate(zip(frames, want)) if got != w)
    check(False, "frame %d: %s, expected %s" % (i, frames[i], want[i]))


def parked(lib):
    return read_here(lib), sys._getframe().f_lineno


def a_call_holding_the_gil_is_read_at_its_line():
    prepared(WITH_GIL)
    ((frames, line), inner), here = parked(WITH_GIL), sys._getframe().f_lineno
    expect(frames, [(line, "read_here"), (inner, "parked"), (here, sys._getframe().f_code.co_name)])


def a_call_without_the_gil_is_read_at_its_line():
    prepared(WITHOUT_GIL)
    ((frames, line), inner), here = parked(WITHOUT_GIL), sys._getframe().f_lineno
    expect(frames, [(line, "read_here"), (inner, "parked"), (here, sys._getframe().f_code.co_name)])


def spin(until):
    while time.monotonic() < until:
        pass


def whether_a_call_holds_the_gil_is_read_from_the_gils_state():
    """PyDLL keeps the GIL through the call: held (1); CDLL lets it go:
    not held (0), also while another Python thread takes it and runs (or
    unknown, -1, when it changed hands while read: never held)."""
    prepared(WITH_GIL)
    check(WITH_GIL.cgt_gil_self() == 1, "a call through PyDLL holds the GIL")
    check(WITHOUT_GIL.cgt_gil_self() == 0, "a call through CDLL does not")
    other = threading.Thread(target=spin, args=(time.monotonic() + 0.5,))
    other.start()
    try:
        time.sleep(0.01)
        answers = {WITHOUT_GIL.cgt_gil_self() for _ in range(50)}
    finally:
        other.join()
    # -1 (unknown) where the GIL changed hands while read; never 1 (wrong).
    check(1 not in answers and 0 in answers, "another thread runs Python: this one's GIL is not held: %s" % answers)


SUBINTERPRETER = """
import ctypes, sys
lib = ctypes.CDLL(%r)
lib.cgt_text.restype = ctypes.c_char_p
assert lib.cgt_prepare() == 0
line = sys._getframe().f_lineno + 1
r = lib.cgt_read_self(8)
frames = lib.cgt_text().decode().splitlines()
assert r == 0 and frames == ["%%d <module> <string>" %% line], (r, frames, line)
assert lib.cgt_gil_self() == 0 and ctypes.PyDLL(%r).cgt_gil_self() == 1
"""


def a_call_in_a_subinterpreter_is_read_at_its_line_with_its_gil():
    """A thread running a sub-interpreter's code (sharing the main GIL;
    ctypes loads in no other kind before 3.13): its frames are found in
    that interpreter's thread list, at the right line, and its GIL held or
    not as ctypes called."""
    prepared(WITH_GIL)
    try:
        import _interpreters as si
    except ImportError:
        try:
            import _xxsubinterpreters as si
        except ImportError:
            print("skipped: no sub-interpreter module in %d.%d" % sys.version_info[:2])
            sys.exit(77)
    try:
        iid = si.create(isolated=False)
    except TypeError:
        iid = si.create()
    try:
        failed = si.run_string(iid, SUBINTERPRETER % (HELPER, HELPER))
    finally:
        si.destroy(iid)
    check(failed is None, "in the sub-interpreter: %s" % (failed,))


def fünf_straße_名前(lib):
    return read_here(lib), sys._getframe().f_lineno


def a_function_named_outside_ascii_is_read_as_utf8():
    prepared(WITHOUT_GIL)
    ((frames, line), inner), here = fünf_straße_名前(WITHOUT_GIL), sys._getframe().f_lineno
    expect(frames, [(line, "read_here"), (inner, "fünf_straße_名前"), (here, sys._getframe().f_code.co_name)])


def winding(lib):
    total = 0
    for i in range(3):
        total += i
    while total > 100:
        total -= 1
    text = """a long gap: line steps past what one line-table entry holds
""" + "\n" * 0 + """
















































































































































"""
    first = read_here(
        lib,
    )
    return (total, text, [
        first,
        read_here(lib),
    ][1], sys._getframe().f_lineno)


def a_call_after_loops_a_long_gap_and_on_a_later_line_of_its_statement_is_read():
    """Line tables with steps back, steps past 127 lines, and a call inside
    a statement of several lines."""
    prepared(WITHOUT_GIL)
    total, text, (frames, line), end = winding(WITHOUT_GIL)
    check(frames[1][1] == "winding" and frames[1][0] > winding.__code__.co_firstlineno + 150, "%s" % (frames[1],))


def deep(k, most):
    if k == 0: return read_here(WITHOUT_GIL, most), sys._getframe().f_lineno  # noqa: E701
    return deep(k - 1, most)


def ten_thousand_frames_deep_are_read_to_the_bound():
    prepared(WITHOUT_GIL)
    sys.setrecursionlimit(20000)
    threading.stack_size(256 << 20)  # 3.9, 3.10: each Python call is a C call too
    got = {}

    def run():
        got["all"] = deep(10000, 12000)
        got["some"] = deep(10000, 100)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    (frames, line), bottom = got["all"]
    recursing = deep.__code__.co_firstlineno + 2
    expect(frames, [(line, "read_here"), (bottom, "deep")] + [(recursing, "deep")] * 10000)
    check(len(frames) > 10002, "%d frames" % len(frames))
    (frames, line), bottom = got["some"]
    check(len(frames) == 100, "asked for 100, got %d" % len(frames))
    expect(frames, [(line, "read_here"), (bottom, "deep")] + [(recursing, "deep")] * 98)


def generator(lib):
    yield read_here(lib), sys._getframe().f_lineno


async def coroutine(lib):
    return read_here(lib), sys._getframe().f_lineno


def a_generator_and_a_coroutine_are_read_at_their_lines():
    prepared(WITH_GIL)
    me = sys._getframe().f_code.co_name
    ((frames, line), inner), here = next(generator(WITH_GIL)), sys._getframe().f_lineno
    expect(frames, [(line, "read_here"), (inner, "generator"), (here, me)])
    c = coroutine(WITHOUT_GIL)
    try:
        c.send(None)
    except StopIteration as stop:
        ((frames, line), inner), here = stop.value, sys._getframe().f_lineno - 2
    expect(frames, [(line, "read_here"), (inner, "coroutine"), (here, me)])


def every_thread_is_listed_with_its_threading_name():
    """Every thread state is listed (cgi_pyread_threads), and threading's
    name and native id of each thread threading knows (pynames.c): an ASCII
    name, one outside ASCII, one longer than the 63 bytes kept (its tail
    after "..."), a thread whose attributes were asked for as a dict (3.11+
    keep them apart from one until then); a thread _thread made, which
    threading does not know, is listed without a name; and the standard
    library's folder is threading's."""
    prepared(WITHOUT_GIL)
    stop, lock = threading.Event(), _thread.allocate_lock()
    names = ["worker", "naïve-名前-Ω", "x" * 40 + "-" + "y" * 40]
    started = [threading.Thread(target=stop.wait, name=n, daemon=True) for n in names]
    for t in started:
        t.start()
    vars(started[0])
    lock.acquire()
    bare = _thread.start_new_thread(lock.acquire, ())
    try:
        time.sleep(0.05)
        text = WITHOUT_GIL.cgt_threads()
    finally:
        stop.set()
        lock.release()
        for t in started:
            t.join()
    check(text is not None, "the thread list could not be read")
    rows = [line.split(" ", 3) for line in text.decode("utf-8").splitlines()]
    listed = {int(r[1]) for r in rows if r[0] == "T"}
    named = {int(r[1]): (int(r[2]), r[3]) for r in rows if r[0] == "N"}
    stdlib = [r[1] for r in rows if r[0] == "S"]
    for t in [threading.main_thread()] + started:
        kept = t.name if len(t.name.encode()) <= 63 else "..." + t.name[-60:]
        check(t.ident in listed and named.get(t.ident) == (t.native_id, kept),
              "%s: listed %s, named %s" % (t.name, t.ident in listed, named.get(t.ident)))
    check(bare in listed and bare not in named, "a thread of _thread: listed, no name: %s" % named.get(bare))
    check(stdlib == [os.path.dirname(threading.__file__)], "the standard library: %s" % stdlib)


def a_thread_made_in_c_has_no_thread_state():
    prepared(WITHOUT_GIL)
    r = WITHOUT_GIL.cgt_read_c_thread()
    check(r == NO_THREAD, "a C thread: %s" % WITHOUT_GIL.cgt_result_name(r).decode())


def linked_into_a_program(folder):
    """This interpreter (3.9 or 3.10) linked into an executable, as Debian's
    and Ubuntu's are (libpython3.N.a and python.o from its LIBPL), or None
    where that cannot be made here."""
    import shutil
    import subprocess
    import sysconfig
    libpl, archive = sysconfig.get_config_var("LIBPL"), sysconfig.get_config_var("LIBRARY")
    cc = shutil.which(sysconfig.get_config_var("CC") or "cc") or shutil.which("cc")
    objs = [os.path.join(libpl or "", "python.o"), os.path.join(libpl or "", archive or "")]
    if not cc or not all(os.path.isfile(o) for o in objs):
        return None
    program = os.path.join(folder, "static")
    flags = " ".join(sysconfig.get_config_var(k) or "" for k in ("LINKFORSHARED", "LIBS", "SYSLIBS")).split()
    r = subprocess.run([cc, "-o", program, *objs, *flags, "-lpthread", "-lutil"], capture_output=True, text=True,
                       timeout=120)
    return program if r.returncode == 0 else None


def an_interpreter_linked_into_its_program_is_read_whatever_the_program_is_named():
    """3.9 and 3.10 have no Py_Version: their version is read from the
    interpreter, never from the program's name. This 3.10 linked into its
    program and run as `python3.9` (a wrapper's name) or `python3` (Debian
    11's, Ubuntu 22.04's) reads its frames at their lines; so does a 3.9
    run as `python3.10` or `python3`."""
    if sys.version_info[:2] not in ((3, 9), (3, 10)):
        print("skipped: for 3.9 and 3.10 (this is %d.%d)" % sys.version_info[:2])
        return 77
    import subprocess
    import tempfile
    with tempfile.TemporaryDirectory(prefix="cgpyread-") as folder:
        program = linked_into_a_program(folder)
        if not program:
            print("skipped: no libpython%d.%d.a, python.o or compiler to link them" % sys.version_info[:2])
            return 77
        other = "python3.9" if sys.version_info[:2] == (3, 10) else "python3.10"
        for name in (other, "python3"):
            path = os.path.join(folder, name)
            os.symlink(program, path)
            r = subprocess.run([path, os.path.abspath(__file__), "a_call_without_the_gil_is_read_at_its_line", HELPER],
                               capture_output=True, text=True, timeout=60,
                               env=dict(os.environ, PYTHONHOME=sys.base_prefix))
            check(r.returncode == 0, "%d.%d linked into a program named %s" % (sys.version_info[:2] + (name,)), r)


def proc_self_mem_fds():
    """This process's descriptors open on its own /proc/PID/mem."""
    mine, fds = "/proc/%d/mem" % os.getpid(), []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink("/proc/self/fd/" + fd) == mine:
                fds.append(int(fd))
        except OSError:  # listdir's own descriptor, closed since
            pass
    return fds


def read_after_fork():
    """In a forked child: its own frames, read through its own /proc/self/mem
    (the parent's descriptor reads the parent's memory). Exit status 0 when
    right."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            ((frames, line), inner), here = parked(WITHOUT_GIL), sys._getframe().f_lineno
            expect(frames, [(line, "read_here"), (inner, "parked"), (here, "read_after_fork")])
            code = 0 if WITHOUT_GIL.cgt_way() == 1 else 2
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1]


def a_process_that_refuses_process_vm_readv_is_read_through_proc_self_mem():
    """A seccomp filter that fails process_vm_readv with EPERM (on every
    thread): the reader falls back to pread on /proc/self/mem, opened once
    (above fd 2, close-on-exec), and reads the lines right; so does a
    forked child, through its own."""
    import seccomp_deny
    if not seccomp_deny.known():
        print("skipped: no seccomp filter written for this machine")
        return 77
    prepared(WITHOUT_GIL)
    seccomp_deny.deny_process_vm_readv("eperm")
    for _ in range(2):
        ((frames, line), inner), here = parked(WITHOUT_GIL), sys._getframe().f_lineno
        expect(frames, [(line, "read_here"), (inner, "parked"), (here, sys._getframe().f_code.co_name)])
    check(WITHOUT_GIL.cgt_way() == 1, "read via /proc/self/mem")
    fds = proc_self_mem_fds()
    check(len(fds) == 1 and fds[0] > 2, "one descriptor, above 2: %s" % fds)
    import fcntl
    check(fcntl.fcntl(fds[0], fcntl.F_GETFD) & fcntl.FD_CLOEXEC, "close-on-exec")
    check(WITH_GIL.cgt_gil_self() == 1 and WITHOUT_GIL.cgt_gil_self() == 0, "the GIL read the same way")
    status = read_after_fork()
    check(status == 0, "a forked child reads its own frames: wait status %d" % status)


def a_process_whose_filter_kills_on_process_vm_readv_is_read_through_proc_self_mem():
    """A seccomp filter that kills the process on process_vm_readv (as
    SCMP_ACT_KILL_PROCESS allow-lists do), installed on every thread after
    the reader has read once the first way: a filter that kills cannot be
    probed, so the reader sees it in /proc/thread-self/status and reads
    through /proc/self/mem; it never calls process_vm_readv again. In a
    forked child, which the filter would kill."""
    import seccomp_deny
    if not seccomp_deny.known():
        print("skipped: no seccomp filter written for this machine")
        return 77
    prepared(WITHOUT_GIL)
    ((frames, line), inner), here = parked(WITHOUT_GIL), sys._getframe().f_lineno
    expect(frames, [(line, "read_here"), (inner, "parked"), (here, sys._getframe().f_code.co_name)])
    check(WITHOUT_GIL.cgt_way() == 0, "read the first way before the filter")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            seccomp_deny.deny_process_vm_readv("kill")
            ((frames, line), inner), here = parked(WITHOUT_GIL), sys._getframe().f_lineno
            expect(frames, [(line, "read_here"), (inner, "parked"),
                            (here, "a_process_whose_filter_kills_on_process_vm_readv_is_read_through_proc_self_mem")])
            code = 0 if WITHOUT_GIL.cgt_way() == 1 and WITH_GIL.cgt_gil_self() == 1 else 2
        finally:
            os._exit(code)
    status = os.waitpid(pid, 0)[1]
    check(status == 0, "the child: %s" % ("killed by signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
                                          else "exit %d" % os.WEXITSTATUS(status)))


def busy(until, nap):
    while time.monotonic() < until:
        nap(50)
    return until


def a_thread_that_runs_and_ends_while_read_is_right_or_unknown():
    """Read over and over while the thread runs Python, naps in native calls
    (returning from them while read) and ends: never a wrong frame."""
    prepared(WITHOUT_GIL)
    counts, wrong = (ctypes.c_int * 8)(), 0
    for _ in range(5):
        t = threading.Thread(target=busy, args=(time.monotonic() + 0.2, ctypes.CDLL(None).usleep))
        t.start()
        first = busy.__code__.co_firstlineno
        native = getattr(t, "native_id", 0) if sys.version_info >= (3, 11) else 0
        WITHOUT_GIL.cgt_hammer_start(native, t.ident, HERE.encode(), first, first + 3)
        t.join()
        # The thread state is unlinked a moment after join() returns.
        until = time.monotonic() + 10
        while WITHOUT_GIL.cgt_hammer_count(NO_THREAD) == 0 and time.monotonic() < until:
            time.sleep(0.01)
        wrong += WITHOUT_GIL.cgt_hammer_stop(counts)
        check(wrong == 0, "wrong frame: %s" % WITHOUT_GIL.cgt_first_wrong().decode())
        check(counts[OK] + counts[CHANGED] > 0 and counts[NO_THREAD] > 0, "answers: %s" % list(counts))
        check(sum(counts) == counts[OK] + counts[CHANGED] + counts[NO_THREAD], "answers: %s" % list(counts))


if __name__ == "__main__":
    main()
