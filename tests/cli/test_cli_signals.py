"""Tests of processes that die under `callguard run`: calls in flight, the
fatal-signal hook (--signals record), and the signals sent to callguard
passed to the program once.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import pty
import select
import shutil
import signal
import sys
import time

from clitest import (CG, PROG, TOY_RACE, TOYLIB, TOYLAYER, TMP, Running, comm, run, guarded, report_of, calls,
                     check, main)
from cgtest import no_core


def run_report_names_calls_in_flight_and_how_the_process_died():
    """The toy compiler aborts with threads inside toyCompile. Reaped by
    callguard, the report says it died of SIGABRT; reaped by its own parent
    (a shell), the report says how it died is not known; both name the
    calls it died inside, and count them."""
    r = guarded([TOY_RACE], "--report", "-")
    check(r.returncode == -signal.SIGABRT, "%d %s" % (r.returncode, r.stderr))
    check("(killed by SIGABRT)" in r.stderr and "  died of SIGABRT with " in r.stderr, r.stderr)
    r, rep = report_of(["/bin/sh", "-c", '"$0"; echo "shell saw $?"', TOY_RACE])
    check(r.returncode == 0 and "shell saw 134" in r.stdout, "%d %s %s" % (r.returncode, r.stdout, r.stderr))
    race = [p for p in rep["processes"] if TOY_RACE in p["command"]]
    check(len(race) == 1 and race[0]["exit"] == {"state": "unknown"}, "how it died is not known: %s" % race)
    inside = [f for f in race[0]["in_flight"] if f["name"] == "toyCompile" and f["state"] == "inside"]
    check(len(inside) >= 2, "the threads inside toyCompile: %s" % race[0]["in_flight"])
    compiles = [x for x in race[0]["sites"] if x["name"] == "toyCompile"]
    check(compiles and compiles[0]["calls"] >= len(inside), "calls that never returned are counted: %s" % compiles)
    path = os.path.join(TMP, "unknown.json")
    json.dump(rep, open(path, "w"))
    t = run([CG, "report", path])
    check("  ended without exit handlers with %d threads inside toyCompile\n    (how is not known: callguard did not "
          "reap it; --signals record would note a fatal signal)\n" % len(inside) in t.stdout, t.stdout)


def run_signals_record_names_the_signal_of_a_process_it_did_not_reap():
    """--signals record: the toy compiler aborts with threads inside toyCompile, reaped by its own parent (a
    shell). The hook noted SIGABRT in the process's statistics file: the report says it died of SIGABRT with the
    calls in flight, in the JSON and in the table, and the process died as it would have (the shell saw 134)."""
    r, rep = report_of(["/bin/sh", "-c", '"$0"; echo "shell saw $?"', TOY_RACE], "--signals", "record")
    check(r.returncode == 0 and "shell saw 134" in r.stdout, "%d %s %s" % (r.returncode, r.stdout, r.stderr))
    race = [p for p in rep["processes"] if TOY_RACE in p["command"]]
    check(len(race) == 1 and race[0]["exit"] == {"state": "signaled", "signal": 6, "signal_hook": True},
          "the signal the hook noted: %s" % race)
    inside = [f for f in race[0]["in_flight"] if f["name"] == "toyCompile" and f["state"] == "inside"]
    check(len(inside) >= 2, "the threads inside toyCompile: %s" % race[0]["in_flight"])
    path = os.path.join(TMP, "hooked.json")
    json.dump(rep, open(path, "w"))
    t = run([CG, "report", path])
    check("  died of SIGABRT with %d threads inside toyCompile" % len(inside) in t.stdout, t.stdout)
    # The same through the environment; and a process that exits normally is not "signaled".
    r, rep = report_of([PROG, "calls"], env={"CALLGUARD_SIGNALS": "record"})
    check(r.returncode == 0 and rep["processes"][0]["exit"] == {"state": "exited", "status": 0}, "%s" % rep)


def run_signals_record_keeps_the_programs_own_handler():
    """--signals record and a program's own SIGSEGV handler: set after callguard's (sigaction or signal, in
    main: it reads its own handler back), or before it (the C API turns the hook on later), it still runs on a
    real fault, and the program exits as its handler says; a handler that repairs the fault lets the program go
    on. A fault with no handler still kills the program with SIGSEGV."""
    for how in ("sigaction", "signal"):
        r = guarded([PROG, "own-segv", how], "--signals", "record")
        check(r.returncode == 42 and r.stdout == "own handler ran\n", "%s: %d %r %s" % (how, r.returncode, r.stdout,
                                                                                         r.stderr))
    r = guarded([PROG, "own-segv", "before"])
    check(r.returncode == 42 and r.stdout == "own handler ran\n", "before: %d %r %s" % (r.returncode, r.stdout, r.stderr))
    r, rep = report_of([PROG, "own-segv", "recover"], "--signals", "record")
    check(r.returncode == 0 and r.stdout == "own handler ran\nrecovered\n", "recover: %d %r" % (r.returncode, r.stdout))
    check(rep["processes"][0]["exit"] == {"state": "exited", "status": 0}, "%s" % rep["processes"][0]["exit"])
    # No handler of the program's: it ends as it does without the hook (killed by SIGSEGV; in a sanitizer
    # build, the sanitizer's own handler, set before callguard's, reports and exits).
    plain = guarded([PROG, "segv"])
    r = guarded([PROG, "segv"], "--signals", "record")
    check(r.returncode == plain.returncode and r.returncode != 0, "no handler: %d, without the hook %d %s"
          % (r.returncode, plain.returncode, r.stderr))


def run_signals_rejects_a_bad_value():
    """--signals and CALLGUARD_SIGNALS take record or off; anything else stops the run before the program."""
    marker = os.path.join(TMP, "started-signals")
    for opts, env in ((["--signals", "on"], None), ([], {"CALLGUARD_SIGNALS": "yes"})):
        r = guarded([PROG, "touch", marker], *opts, env=env)
        check(r.returncode == 2 and "expected record" in r.stderr and not os.path.exists(marker),
              "%s %s: %d %s" % (opts, env, r.returncode, r.stderr))


def signals_record_lets_a_handler_call_sigaction():
    """--signals record: a SIGUSR1 handler reads SIGBUS's action (sigaction is async-signal-safe) while the
    thread it interrupted is inside sigaction for SIGBUS; the program completes (a hang ends as SIGALRM), and
    each read sees a whole action."""
    prog = os.environ["CG_SIGPROG"]
    for r in (run([prog, "reenter"]), guarded([prog, "reenter"], "--signals", "record")):
        check(r.returncode == 0 and r.stdout == "done\n", "%d %r %s" % (r.returncode, r.stdout, r.stderr))


def signals_record_keeps_nodefer_resethand_and_the_programs_mask():
    """--signals record: a program's SIGSEGV handler runs with exactly the mask and flags the program asked for.
    SA_NODEFER and a jump out without restoring the mask catch three faults; without SA_NODEFER the second
    fault kills; sa_mask stays blocked after such a jump; SA_RESETHAND reads back SIG_DFL in the handler, and
    the repeated fault kills; SA_SIGINFO gets the fault's address; an ignored SIGBUS sent stays ignored. Each
    prints and ends the same with the hook as without it."""
    prog = os.environ["CG_SIGPROG"]
    modes = (["fault-3", "nodefer", "0"], ["fault-3", "nodefer", "1"], ["fault-3", "defer", "0"],
             ["fault-3", "defer", "1"], ["resethand"], ["ignore"])
    for mode in modes:
        plain = run([prog, *mode])
        r = guarded([prog, *mode], "--signals", "record")
        check((r.returncode, r.stdout) == (plain.returncode, plain.stdout),
              "%s: with the hook %d %r, without %d %r %s" % (mode, r.returncode, r.stdout, plain.returncode,
                                                           plain.stdout, r.stderr))
        if mode == modes[0]:
            check(plain.returncode == 0 and "caught 3" in plain.stdout, "%d %r" % (plain.returncode, plain.stdout))
        if mode == ["resethand"]:
            check(plain.returncode == -signal.SIGSEGV and "reads back SIG_DFL" in plain.stdout, plain.stdout)
    # After SA_RESETHAND the hook is still there to note the death, in a process callguard did not reap.
    r, rep = report_of(["/bin/sh", "-c", '"$0" resethand >/dev/null; echo "shell saw $?"', prog], "--signals", "record")
    died = [p["exit"] for p in rep["processes"] if prog in p["command"]]
    check("shell saw 139" in r.stdout and died == [{"state": "signaled", "signal": 11, "signal_hook": True}],
          "%r %s" % (r.stdout, died))


# What the hook may add to the deepest use of a program's alternate signal stack, in bytes. Its handler adds
# nothing (0 measured: it jumps to the program's); the interposed sigaction() and signal(), called from a
# handler, about 100 more than libc's.
ALT_STACK_MARGIN = 128


def signals_record_fits_the_programs_alternate_stack():
    """--signals record: a fault's handler on an alternate stack, alone or putting SIG_DFL back first, uses at
    most ALT_STACK_MARGIN bytes more of it with the hook than without (the deepest byte that lost a fill pattern,
    both measured in this run, with lazy binding and with LD_BIND_NOW: the dynamic linker's binding of a first
    call is a few thousand bytes), and a stack overflow caught on an alternate stack that plainly fits with that
    margin is still caught."""
    prog = os.environ["CG_SIGPROG"]
    used = {}
    for env in ({}, {"LD_BIND_NOW": "1"}):
        for handler in ("quiet", "reset"):
            plain = run([prog, "alt-used", handler], env=env)
            r = guarded([prog, "alt-used", handler], "--signals", "record", env=env)
            check(plain.returncode == 0 and r.returncode == 0, "%d %d %s" % (plain.returncode, r.returncode, r.stderr))
            used[handler, bool(env)] = int(plain.stdout)
            check(int(r.stdout) <= int(plain.stdout) + ALT_STACK_MARGIN, "%s %s: the hook used %s bytes of the "
                  "alternate stack, the program alone %s" % (handler, env, r.stdout.strip(), plain.stdout.strip()))
    size = max((used["quiet", False] + ALT_STACK_MARGIN + 63) // 64 * 64, 2048)
    for r in (run([prog, "overflow", str(size)]), guarded([prog, "overflow", str(size)], "--signals", "record")):
        check(r.returncode == 0 and r.stdout.endswith("caught the overflow\n"),
              "a %d-byte alternate stack (%d used): %d %r %s" % (size, used["quiet", False], r.returncode, r.stdout,
                                                                 r.stderr))


# A Python program that makes 3 guarded calls (the toy library by its soname: callguard's shim), says "ready",
# then sleeps 60 s. With "count": a SIGINT handler counts, and a second after the first SIGINT (or 20 s without
# one) it prints how many came and exits 0; with "self" also, it sends SIGINT to its own process group.
WAITER = """
import ctypes, os, signal, sys, time
toy = ctypes.CDLL("libcgtoy.so")
for i in range(3):
    toy.toyNop(i)
got = []
if sys.argv[1:]:
    signal.signal(signal.SIGINT, lambda sig, frame: got.append(sig))
print("ready", flush=True)
if sys.argv[1:] == ["self"]:
    os.killpg(0, signal.SIGINT)
end = time.monotonic() + (20 if sys.argv[1:] else 60)
while not got and time.monotonic() < end:
    time.sleep(0.01)
time.sleep(1)
print("SIGINTs: %d" % len(got), flush=True)
"""
WAITER_ENV = None if TOYLIB is None else {"LD_LIBRARY_PATH": TOYLIB}


def waiter(*args, guard=True, **popen):
    cmd = None if guard else [sys.executable, "-c", WAITER, *args]
    return Running([sys.executable, "-c", WAITER, *args], "--report", os.path.join(TMP, "w%d.json" % len(
        os.listdir(TMP))), env=WAITER_ENV, cmd=cmd, preexec_fn=no_core, **popen)


def run_passes_sigint_sighup_sigquit_to_the_program_and_exits_as_it_did():
    """SIGINT, SIGHUP or SIGQUIT sent to `callguard run`'s pid alone (subprocess's send_signal, as a supervisor or
    Jupyter's fallback sends one; the test in callguard's process group, as a parent that starts it plainly is,
    and outside it) reaches the program: Python dies of it as it does run plainly (KeyboardInterrupt for
    SIGINT), callguard then dies of the same signal, and its report says the program died of it, with its 3
    calls."""
    for sig, session in ((signal.SIGINT, False), (signal.SIGINT, True), (signal.SIGHUP, False),
                         (signal.SIGQUIT, False)):
        runs = []
        for guard in (False, True):
            with waiter(guard=guard, start_new_session=session) as w:
                check(w.wait_for("ready"), "%s: the program started\n%s" % (sig.name, w.said()))
                w.p.send_signal(sig)
                rc = w.wait(20)
                check(rc is not None, "%s: %s still ran 20 s after it\n%s" % (
                    sig.name, "callguard" if guard else "the program", w.said()))
                runs.append((rc, "".join(w.err), w))
        (plain, plain_err, _), (rc, err, w) = runs
        check(plain == -sig and rc == plain, "%s (own session %s): plainly %d, under callguard %d\n%s" % (
            sig.name, session, plain, rc, w.said()))
        check(sig != signal.SIGINT or ("KeyboardInterrupt" in plain_err and "KeyboardInterrupt" in err), w.said())
        with open(w.p.args[w.p.args.index("--report") + 1]) as f:
            procs = json.load(f)["processes"]
        check(len(procs) == 1 and procs[0]["exit"] == {"state": "signaled", "signal": sig} and
              calls(procs[0], "toyNop") == 3, "%s: the report: %s" % (sig.name, procs))


def read_pty(fd, until, seconds):
    """What the pty says until `until` is in it (None: its end) or `seconds` pass."""
    out, end = b"", time.monotonic() + seconds
    while (until is None or until not in out) and time.monotonic() < end:
        if not select.select([fd], [], [], max(0.0, end - time.monotonic()))[0]:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        out += data
    return out


def ctrl_c_on_a_terminal(args):
    """`callguard run -- WAITER ARGS` on a pty of its own (its session and foreground group) sent Ctrl-C:
    what the pty said and callguard's wait status."""
    pid, fd = pty.fork()
    if pid == 0:
        try:
            env = dict(os.environ, **WAITER_ENV)
            env.pop("CALLGUARD_REPORT", None)
            os.execve(CG, [CG, "run", "--layer", TOYLAYER, "--", sys.executable, "-c", WAITER, *args], env)
        finally:
            os._exit(127)
    try:
        out = read_pty(fd, b"ready", 30)
        os.write(fd, b"\x03")
        out += read_pty(fd, None, 40)
    finally:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
        os.close(fd)
    return out.decode(errors="replace"), status


def run_passes_a_signal_sent_to_its_whole_group_to_the_program_once():
    """A SIGINT sent to the whole process group reached the program already and is not sent to it again: the
    program's handler counts one, whether the terminal sent it (Ctrl-C on a pty: the kernel's, to the
    foreground group), a process outside the group (os.killpg, as Jupyter interrupts a kernel) or the program
    itself (os.killpg(0)); one sent to callguard's pid alone also counts one. callguard exits 0 as the program
    does."""
    out, status = ctrl_c_on_a_terminal(["count"])
    check(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0 and "SIGINTs: 1" in out,
          "Ctrl-C: status %d\n%s" % (status, out))
    for how in ("killpg", "self", "pid"):
        with waiter("self" if how == "self" else "count", start_new_session=how != "pid") as w:
            check(w.wait_for("ready"), "%s: the program started\n%s" % (how, w.said()))
            if how == "killpg":
                os.killpg(w.p.pid, signal.SIGINT)
            elif how == "pid":
                w.p.send_signal(signal.SIGINT)
            rc = w.wait(40)
            check(rc == 0 and "SIGINTs: 1\n" in w.out, "%s: exit %s\n%s" % (how, rc, w.said()))


def descendants(pid):
    """Every process under pid, from /proc."""
    parents = {}
    for d in os.listdir("/proc"):
        try:
            with open("/proc/%s/stat" % d) as f:
                parents[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    found, todo = [], [pid]
    while todo:
        kids = [k for k, p in parents.items() if p == todo[-1]]
        todo.pop()
        found += kids
        todo += kids
    return found


def run_passes_sigint_to_a_guarded_mpirun_which_stops_the_job():
    """`callguard run -- mpirun -n 1 sleep 120` (Open MPI) sent SIGINT to callguard's pid alone: mpirun gets it
    and stops its job, and callguard exits as mpirun did, the same status as plain mpirun sent SIGINT."""
    mpirun = shutil.which("mpirun")
    if not mpirun:
        print("skipped: no mpirun")
        return 77
    cmd = [mpirun, "-n", "1", *(["--allow-run-as-root"] if os.geteuid() == 0 else []), "sleep", "120"]
    runs = []
    for guard in (False, True):
        with Running(cmd, cmd=None if guard else cmd, start_new_session=True) as m:
            top = m.p.pid
            end = time.monotonic() + 30
            while time.monotonic() < end and not any(comm(k) == "sleep" for k in descendants(top)):
                time.sleep(0.05)
            tree = descendants(top)
            try:
                check(any(comm(k) == "sleep" for k in tree), "the job started\n" + m.said())
                m.p.send_signal(signal.SIGINT)
                runs.append(m.wait(20))
                check(runs[-1] is not None, "%s still ran 20 s after SIGINT\n%s" % (
                    "callguard" if guard else "mpirun", m.said()))
            finally:
                for k in tree:
                    try:
                        os.kill(k, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
    check(runs[1] == runs[0], "under callguard %d, plainly %d" % (runs[1], runs[0]))


if __name__ == "__main__":
    main()
