"""Tests of the MPI layer (libcallguard_mpi.so) on Debian's Open MPI 4.1, two ranks under mpirun, and of its
thread fix on Debian's MPICH 4.0.2 too, under mpiexec.mpich.

Run: test_mpi.py TEST (or --list), with the paths in the environment (tests/mpi/CMakeLists.txt sets them): CG_CLI
(callguard), CG_THREADS (threads.c: two threads per rank), CG_MPIRUN, CG_MPI_INCLUDE and CG_CC (to read
mpi.h as the generator does); CG_MPIEXEC_MPICH, CG_MPICH_THREADS and CG_MPICH_ERRORS (threads.c and errors.c
built by mpicc.mpich) when the build found MPICH. The mpi4py tests run Debian's /usr/bin/python3 (python3-mpi4py).
Each test is a function named for the behaviour it checks.

Every mpirun runs in a session of its own. Open MPI puts each rank in a process group of its own, so a
run still going at its deadline gets SIGTERM (mpirun then ends its ranks), and after 5 s every process
of its session gets SIGKILL: nothing is left behind.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import main  # noqa: E402  (tests/cgtest.py)

E = os.environ
TMP = tempfile.mkdtemp(prefix="cgmpi-")
TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
PYTHON = "/usr/bin/python3"  # Debian's: python3-mpi4py loads only there
MPIRUN = [E.get("CG_MPIRUN") or "mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2"]
MPICH = [E.get("CG_MPIEXEC_MPICH") or "mpiexec.mpich", "-n", "2"]  # Hydra: runs as root, passes the environment


def check(cond, what, r=None):
    if not cond:
        if r is not None:
            what += "\n-- exit %s\n-- stdout:\n%s-- stderr:\n%s" % (r[0], r[1], r[2])
        raise AssertionError(what)


def session_pids(sid):
    pids = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                # Bytes: a process's name (another user's) need not be UTF-8.
                with open("/proc/%s/stat" % d, "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid:  # after the command: state, ppid, pgrp, session
                pids.append(int(d))
    return pids


def run(args, env=None, seconds=60):
    """Runs args in a session of its own; returns (status, stdout, stderr), status None when it was still
    running after `seconds` (then ended, with everything it started)."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    e.update(env or {})
    if args[0] in (MPIRUN[0], MPICH[0]):
        # Open MPI's own allocations outlive MPI_Finalize in components it has unloaded, MPICH's too: not ours
        # to report in a sanitizer build.
        e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + (":" if e.get("ASAN_OPTIONS") else "") + "detect_leaks=0"
    p = subprocess.Popen(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=seconds)
        status = p.returncode
    except subprocess.TimeoutExpired:
        p.send_signal(signal.SIGTERM)
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = "", ""
        status = None
    for pid in session_pids(p.pid):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    if p.poll() is None:
        p.kill()
        p.communicate()
    deadline = time.monotonic() + 5
    while session_pids(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    check(not session_pids(p.pid), "processes left behind: %s" % session_pids(p.pid))
    return status, out, err


def guarded(folder, *options):
    """`callguard run` inside mpirun, one report per rank in FOLDER (--report DIR/)."""
    return [E["CG_CLI"], "run", "--api", "mpi", "--report", folder + "/"] + list(options) + ["--"]


def report(folder, rank):
    """Rank RANK's report in FOLDER: the one file named for it (callguard-HOST-rankN-pidP.json)."""
    files = [f for f in os.listdir(folder) if re.fullmatch(r"callguard-.+-rank%d-pid\d+\.json" % rank, f)]
    check(len(files) == 1, "one report of rank %d in %s: %s" % (rank, folder, os.listdir(folder)))
    with open(os.path.join(folder, files[0])) as f:
        return json.load(f)


def rows(rep):
    out = {}
    for proc in rep["processes"]:
        for s in proc["sites"]:
            out[s["name"]] = out.get(s["name"], 0) + s["calls"]
    return out


def mpi_list_names_every_function_of_the_header():
    """`callguard list mpi` has a row for every MPI_ function Open MPI 4.1's mpi.h declares (its MPI-1
    functions removed in MPI 3.0 too), read from the preprocessed header as the generator reads it, but
    MPI_Pcontrol (variadic: cannot be forwarded), and no PMPI_ one; the other ABIs' functions besides
    (test_mpi5.py)."""
    src = os.path.join(TMP, "h.c")
    with open(src, "w") as f:
        f.write("#include <mpi.h>\n")
    pp = subprocess.run([E["CG_CC"], "-E", "-DOMPI_OMIT_MPI1_COMPAT_DECLS=0", "-I", E["CG_MPI_INCLUDE"], src],
                        capture_output=True, text=True)
    check(pp.returncode == 0, "mpi.h preprocesses", (pp.returncode, pp.stdout, pp.stderr))
    # OMPI_DECLSPEC becomes __attribute__((visibility("default"))) before the return type.
    declared = set(re.findall(r"^(?:__attribute__\(\(.*?\)\)\s*)?[A-Za-z_][\w \t*]*?\b(MPI_\w*)\s*\(", pp.stdout, re.M))
    check("MPI_Pcontrol" in declared and len(declared) > 400, "the header's functions: %d" % len(declared))
    declared.discard("MPI_Pcontrol")
    r = subprocess.run([E["CG_CLI"], "list", "mpi"], capture_output=True, text=True)
    check(r.returncode == 0, "callguard list mpi", (r.returncode, r.stdout, r.stderr))
    listed = set(re.findall(r"^(P?MPI_\w+)", r.stdout, re.M))
    check(declared <= listed and all(n.startswith("MPI_") for n in listed),
          "missing %s; not MPI_ %s" % (sorted(declared - listed), sorted(n for n in listed if n[0] == "P")))


def mpi_each_rank_counts_its_calls_and_prints_as_plain():
    """threads.c (two threads per rank, MULTIPLE) prints the same under `callguard run` inside mpirun as
    plainly, and each rank's report counts its calls exactly: per thread and round one MPI_Send, one
    MPI_Recv, one MPI_Sendrecv and one MPI_Allreduce. The layer calls PMPI_Query_thread's twin
    PMPI_* functions, so the program's own PMPI_Query_thread is not counted."""
    rounds = 5
    plain = run(MPIRUN + [E["CG_THREADS"], "multiple", str(rounds)])
    check(plain[0] == 0 and "checksum" in plain[1], "plain run", plain)
    prefix = os.path.join(TMP, "counts")
    g = run(MPIRUN + guarded(prefix) + [E["CG_THREADS"], "multiple", str(rounds)])
    check(g[0] == 0, "under callguard run", g)
    check(g[1] == plain[1], "the same output:\n%s-- plain:\n%s" % (g[1], plain[1]))
    want = {"MPI_Init_thread": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Comm_dup": 2, "MPI_Send": 2 * rounds,
            "MPI_Recv": 2 * rounds, "MPI_Sendrecv": 2 * rounds, "MPI_Allreduce": 2 * rounds, "MPI_Reduce": 2,
            "MPI_Comm_free": 2, "MPI_Finalize": 1}
    for rank in (0, 1):
        got = rows(report(prefix, rank))
        check(got == want, "rank %d counted %s, expected %s" % (rank, got, want))


def threads_run(level, rounds, env=None, seconds=60, options=()):
    prefix = os.path.join(TMP, "threads-%s-%d" % (level, len(os.listdir(TMP))))
    args = MPIRUN + (guarded(prefix, *options) if options or env else []) + [E["CG_THREADS"], level, str(rounds)]
    return run(args, env, seconds)


def mpi_threads_deadlock_under_one_lock_and_complete_with_mpi_threads_serialize():
    """Two threads per rank, a receive waiting for a send of the other thread of its rank, collectives of
    both threads at once: the reference is a MULTIPLE run. One lock held through each call (every call the
    program makes serialized into one domain) deadlocks: still hung after 20 s. Plain Open MPI 4.1
    initialized SERIALIZED happens to complete here (the program breaks the level's rule, and nothing
    checks it). Under CALLGUARD_MPI_THREADS=serialize the program asks for MULTIPLE, the library is
    initialized SERIALIZED (PMPI_Query_thread), the program is told MULTIPLE, and it completes with the
    MULTIPLE run's checksum, MPI_Recv serialized into the same domain by hand or not."""
    rounds = 20
    ref = threads_run("multiple", rounds)
    check(ref[0] == 0 and "told multiple library multiple" in ref[1], "the MULTIPLE run", ref)
    checksum = re.search(r"checksum \d+\n", ref[1]).group(0)
    one_lock = ",".join("%s=mpi" % n for n in ["MPI_Send", "MPI_Recv", "MPI_Sendrecv", "MPI_Allreduce"])
    hung = threads_run("multiple", rounds, seconds=20, options=("--serialize", one_lock))
    check(hung[0] is None, "one lock held through blocking calls deadlocks", hung)
    # A --serialize of a converted call into "mpi" too: it must not take the lock twice.
    fixed = threads_run("multiple", rounds, env={"CALLGUARD_MPI_THREADS": "serialize"},
                        options=("--serialize", "MPI_Recv=mpi"))
    check(fixed[0] == 0, "completes with CALLGUARD_MPI_THREADS=serialize", fixed)
    check("asked multiple told multiple library serialized\n" in fixed[1], "levels: %s" % fixed[1], fixed)
    check(checksum in fixed[1], "the MULTIPLE run's %s" % checksum, fixed)


def mpich_threads_complete_with_mpi_threads_serialize():
    """The same test on MPICH 4.0.2 (threads.c built by mpicc.mpich, mpiexec.mpich): under
    CALLGUARD_MPI_THREADS=serialize the program asks for MULTIPLE, the library is initialized SERIALIZED,
    the program is told MULTIPLE, and it completes with the plain MULTIPLE run's checksum; each rank's
    report counts its calls as on Open MPI. (MPICH aborted in MPI_Testall when the fix passed it Open
    MPI's 8-byte requests, and in MPI_Test given Open MPI's MPI_STATUS_IGNORE, NULL.)"""
    if not E.get("CG_MPICH_THREADS"):
        return 77  # no MPICH (mpich, libmpich-dev)
    rounds = 20
    ref = run(MPICH + [E["CG_MPICH_THREADS"], "multiple", str(rounds)])
    check(ref[0] == 0 and "told multiple library multiple" in ref[1], "the MULTIPLE run on MPICH", ref)
    checksum = re.search(r"checksum \d+\n", ref[1]).group(0)
    prefix = os.path.join(TMP, "mpich-threads")
    fixed = run(MPICH + guarded(prefix) + [E["CG_MPICH_THREADS"], "multiple", str(rounds)],
                {"CALLGUARD_MPI_THREADS": "serialize"})
    check(fixed[0] == 0, "completes on MPICH with CALLGUARD_MPI_THREADS=serialize", fixed)
    check("asked multiple told multiple library serialized\n" in fixed[1], "levels: %s" % fixed[1], fixed)
    check(checksum in fixed[1], "the MULTIPLE run's %s" % checksum, fixed)
    want = {"MPI_Init_thread": 1, "MPI_Comm_rank": 1, "MPI_Comm_size": 1, "MPI_Comm_dup": 2, "MPI_Send": 2 * rounds,
            "MPI_Recv": 2 * rounds, "MPI_Sendrecv": 2 * rounds, "MPI_Allreduce": 2 * rounds, "MPI_Reduce": 2,
            "MPI_Comm_free": 2, "MPI_Finalize": 1}
    for rank in (0, 1):
        got = rows(report(prefix, rank))
        check(got == want, "rank %d counted %s, expected %s" % (rank, got, want))


def mpi_sendrecv_fills_the_status_as_plainly_under_mpi_threads_serialize():
    """errors.c's status mode: MPI_Sendrecv's status (source, tag, count, and the MPI_ERROR the program set,
    which a successful call leaves) after an exchange, after a receive from MPI_PROC_NULL, and with both
    halves MPI_PROC_NULL: the same under CALLGUARD_MPI_THREADS=serialize as plainly, on Open MPI and on
    MPICH. (Open MPI's MPI_Testall set MPI_ERROR 0 for the MPI_PROC_NULL receive, MPICH's left source and
    tag 0.)"""
    serialize = {"CALLGUARD_MPI_THREADS": "serialize"}
    libraries = [("Open MPI", MPIRUN, E["CG_ERRORS"])]
    if E.get("CG_MPICH_ERRORS"):
        libraries.append(("MPICH", MPICH, E["CG_MPICH_ERRORS"]))
    for name, launcher, program in libraries:
        plain = run(launcher + [program, "status"], seconds=30)
        want = sorted(plain[1].splitlines())
        check(plain[0] == 0 and len(want) == 6 and "MPI_ERROR 12345" in want[0], "%s: plain run" % name, plain)
        r = run(launcher + guarded(os.path.join(TMP, "status-%s" % name.replace(" ", ""))) + [program, "status"],
                serialize, seconds=30)
        got = sorted(r[1].splitlines())
        check(r[0] == 0 and got == want, "%s: the same lines as plainly:\n%s\n-- plain:\n%s"
              % (name, "\n".join(got), "\n".join(want)), r)


# A stand-in for an MPI library that callguard's thread fix is not tested on: a few functions, a name.
STANDIN_LIB = r"""/* stand-in for an MPI library (tests/mpi/test_mpi.py): PMPI_Get_library_version says NAME */
#include <stdio.h>
#include <string.h>
int PMPI_Get_library_version(char *v, int *len) { strcpy(v, NAME "\nbuilt for a test"); *len = strlen(v); return 0; }
int PMPI_Init_thread(int *c, char ***v, int required, int *provided) { (void)c; (void)v; *provided = required; return 0; }
int MPI_Init_thread(int *c, char ***v, int required, int *provided) { return PMPI_Init_thread(c, v, required, provided); }
"""
STANDIN_MAIN = r"""
#include <stdio.h>
int MPI_Init_thread(int *, char ***, int, int *);
int main(int argc, char **argv) { int p = -1; MPI_Init_thread(&argc, &argv, 3, &p); printf("provided %d\n", p); return 0; }
"""


def mpi_threads_setting_refuses_an_untested_library_by_name():
    """CALLGUARD_MPI_THREADS=serialize with an MPI library it is not tested on (a stand-in that calls itself
    MVAPICH, of MPICH's ABI; one that calls itself MPICH but is a libmpi_abi that does not say its ABI
    version: no MPI_Abi_get_version) stops the program at MPI_Init_thread, exit status 2, naming the
    library; without the setting it runs."""
    for soname, name in (("libmpi.so.12", "MVAPICH2 Version:\t2.3.7"),
                         ("libmpi_abi.so.0", "MPICH Version:\t5.0.0")):
        folder = tempfile.mkdtemp(dir=TMP)
        for base, text in (("lib.c", STANDIN_LIB), ("main.c", STANDIN_MAIN)):
            with open(os.path.join(folder, base), "w") as f:
                f.write(text)
        lib, prog = os.path.join(folder, soname), os.path.join(folder, "prog")
        for cmd in ([E["CG_CC"], "-shared", "-fPIC", "-DNAME=%s" % json.dumps(name), "-Wl,-soname," + soname, "-o", lib,
                     os.path.join(folder, "lib.c")],
                    [E["CG_CC"], "-o", prog, os.path.join(folder, "main.c"), lib, "-Wl,-rpath," + folder]):
            c = subprocess.run(cmd, capture_output=True, text=True)
            check(c.returncode == 0, "builds: %s" % cmd, (c.returncode, c.stdout, c.stderr))
        args = [E["CG_CLI"], "run", "--api", "mpi", "--", prog]
        r = run(args)
        check(r[0] == 0 and r[1] == "provided 3\n", "%s: runs without the setting" % name, r)
        r = run(args, {"CALLGUARD_MPI_THREADS": "serialize"})
        first = name.split("\n")[0]
        check(r[0] == 2 and r[1] == "" and '"%s"' % first in r[2] and soname in r[2] and
              "tested on Open MPI, MPICH, Intel MPI and the MPI 5.0 standard ABI only" in r[2], "%s: refused, named" % name, r)

MPI_QUIRKS = """; test quirks keyed on the MPI library's version string (docs/quirks.md)
[quirk:ompi-4.1]
api       = mpi
driver    = Open MPI
versions  = 4.1 .. 4.1
serialize = MPI_Allreduce
advice    = a test's advice
source    = https://example.org/ompi-4.1
why       = a test quirk of Open MPI 4.1

[quirk:ompi-5]
api       = mpi
driver    = Open MPI
versions  = 5.0 .. 5.0
serialize = MPI_Allreduce
domain    = never
source    = https://example.org/ompi-5
why       = a test quirk of Open MPI 5.0
"""


def mpi_quirks_match_the_library_version_string():
    """The layer's probe reads MPI_Get_library_version after MPI_Init_thread: Debian's "Open MPI v4.1.4, ..."
    is Open MPI 4.1.4. A quirk for Open MPI 4.1 matches (advice only: nothing serialized), one for 5.0 does
    not; the shipped file's MPICH 5.0.0 entry matches no rank here, whose MPI drivers were checked."""
    path = os.path.join(TMP, "mpi-quirks.ini")
    with open(path, "w") as f:
        f.write(MPI_QUIRKS)
    for quirks, want in ((path, ["ompi-4.1"]), (None, [])):
        prefix = os.path.join(TMP, "quirks-%d" % len(os.listdir(TMP)))
        options = ("--quirks", quirks) if quirks else ()
        g = run(MPIRUN + guarded(prefix, *options) + [E["CG_THREADS"], "multiple", "2"])
        check(g[0] == 0, "under callguard run", g)
        for rank in (0, 1):
            p = report(prefix, rank)["processes"][0]
            check([q["name"] for q in p["quirks"]] == want and p["quirks_probed"] == ["mpi"],
                  "rank %d: %s %s" % (rank, p["quirks"], p["quirks_probed"]))
            if want:
                q = p["quirks"][0]
                check(q["matched"]["driver"] == "Open MPI" and q["matched"]["version"] == "4.1.4" and
                      q["applied"] is False and q["not_applied"] == "advice only: a test's advice", q)
            allreduce = next(s for s in p["sites"] if s["name"] == "MPI_Allreduce")["policy"]["serialize"]
            check(allreduce is None, "nothing serialized: %s" % allreduce)

SHIPPED_QUIRKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "apis", "quirks.ini")


def mpi_quirk_ompi_13347_names_the_osc_ucx_thread_bug_with_its_advice():
    """open-mpi/ompi#13347 (osc/ucx on Open MPI 5.0.0 to 5.0.9: a one-sided call from a thread other than
    MPI's aborts in UCX): no Open MPI 5.0.9 here, so the shipped entry runs rekeyed on Debian's 4.1.4 (the
    test's copy: versions 4.1 .. 4.1), with osc_threads.c, whose second thread makes every one-sided call.
    With the quirks off no rank names it; with the entry each rank does, matched and not applied, its advice
    naming the fixed release, and nothing serialized (no lock fixes a bug of which thread calls); the
    program's output is the plain one. The shipped entry itself does not match 4.1.4."""
    with open(SHIPPED_QUIRKS) as f:
        body = f.read().split("[quirk:ompi-13347-osc-ucx-thread]")[1].split("\n\n")[0]
    path = os.path.join(TMP, "ompi-13347.ini")
    with open(path, "w") as f:
        f.write("[quirk:ompi-13347-osc-ucx-thread]" + body.replace("5.0.0 .. 5.0.9", "4.1 .. 4.1") + "\n")
    plain = run(MPIRUN + [E["CG_OSC_THREADS"], "20"])
    check(plain[0] == 0 and plain[1] == "rounds 20\n", "plainly", plain)
    for options, want in ((("--quirks", "off"), False), (("--quirks", path), True), ((), False)):
        prefix = os.path.join(TMP, "osc-%d" % len(os.listdir(TMP)))
        g = run(MPIRUN + guarded(prefix, *options) + [E["CG_OSC_THREADS"], "20"])
        check(g[0] == 0 and g[1] == plain[1], "%s: the plain output" % (options,), g)
        for rank in (0, 1):
            p = report(prefix, rank)["processes"][0]
            q = {x["name"]: x for x in p["quirks"]}
            sites = {s["name"]: s for s in p["sites"]}
            check(sites["MPI_Put"]["calls"] == 20 and sites["MPI_Put"]["policy"]["serialize"] is None, sites["MPI_Put"])
            if not want:
                check("ompi-13347-osc-ucx-thread" not in q, "%s, rank %d: %s" % (options, rank, q))
                continue
            e = q.get("ompi-13347-osc-ucx-thread")
            check(e and e["applied"] is False and e["matched"]["version"] == "4.1.4" and
                  e["not_applied"].startswith("advice only: use Open MPI 5.0.10 or later"), "rank %d: %s" % (rank, q))


def mpi_osc_ucx_owner_check_aborts_serialized_or_not_and_only_the_advice_names_it():
    """Why the ompi#13347 entry is advice only: osc_spy.c, below the layer, stands in for UCX's owner check
    (a one-sided call from a thread other than the window's maker aborts, as osc/ucx's single-threaded
    worker does on Open MPI 5.0.0 to 5.0.9). osc_threads.c's second thread aborts plainly, under callguard
    run with the quirks off, and with its one-sided calls serialized (what the issue asked for): calls one at
    a time from that thread abort alike. With the entry (rekeyed on Debian's 4.1.4) it aborts too, and the
    report of each rank that ran names the bug and its advice; with the quirks off none does."""
    spy = {"LD_PRELOAD": E["CG_OSC_SPY"]}
    assertion = "ucs_async_check_owner_thread"
    r = run(MPIRUN + [E["CG_OSC_THREADS"], "5"], spy)
    check(r[0] != 0 and assertion in r[2], "plainly the stand-in's owner check aborts", r)
    with open(SHIPPED_QUIRKS) as f:
        body = f.read().split("[quirk:ompi-13347-osc-ucx-thread]")[1].split("\n\n")[0]
    path = os.path.join(TMP, "ompi-13347-spy.ini")
    with open(path, "w") as f:
        f.write("[quirk:ompi-13347-osc-ucx-thread]" + body.replace("5.0.0 .. 5.0.9", "4.1 .. 4.1") + "\n")
    serialized = "MPI_Put=osc,MPI_Get=osc,MPI_Win_fence=osc"
    for options, named in ((("--quirks", "off"), False), (("--quirks", "off", "--serialize", serialized), False),
                           (("--quirks", path), True)):
        prefix = os.path.join(TMP, "osc-spy-%d" % len(os.listdir(TMP)))
        g = run(MPIRUN + guarded(prefix, *options) + [E["CG_OSC_THREADS"], "5"], spy)
        check(g[0] != 0 and assertion in g[2], "%s: it aborts all the same" % (options,), g)
        reports = [f for f in os.listdir(prefix) if f.endswith(".json")]
        check(reports, "%s: the ranks' reports were written: %s" % (options, os.listdir(prefix)))
        for name in reports:
            with open(os.path.join(prefix, name)) as f:
                p = json.load(f)["processes"][0]
            q = {x["name"]: x for x in p.get("quirks", [])}
            check(("ompi-13347-osc-ucx-thread" in q) == named, "%s, %s: %s" % (options, name, q))
            if "--serialize" in options:  # the second thread's first call, serialized, reached the check
                fence = {s["name"]: s for s in p["sites"]}["MPI_Win_fence"]
                check(fence["calls"] >= 1 and fence["policy"]["serialize"] == "osc", fence)


def mpi_threads_setting_refuses_a_bad_value():
    """CALLGUARD_MPI_THREADS=multiple is refused before the program starts, in one line, exit status 2."""
    r = run([E["CG_CLI"], "run", "--api", "mpi", "--", "true"], {"CALLGUARD_MPI_THREADS": "multiple"})
    check(r[0] == 2, "exit status 2", r)
    check("CALLGUARD_MPI_THREADS" in r[2] and "expected library or serialize" in r[2], "names it", r)


def errors_run(env=None, *options):
    """errors.c's sendrecv mode: its lines sorted (mpirun interleaves the ranks' lines)."""
    args = MPIRUN + (guarded(os.path.join(TMP, "errors-%d" % len(os.listdir(TMP))), *options) if env is not None
                     else []) + [E["CG_ERRORS"], "sendrecv"]
    r = run(args, env, seconds=30)
    return r, sorted(r[1].splitlines())


def mpi_calls_that_fail_leave_nothing_posted_and_return_as_plainly_under_mpi_threads_serialize():
    """MPI_ERRORS_RETURN: an MPI_Sendrecv whose send names no rank returns MPI_ERR_RANK and leaves no
    receive posted, so the MPI_Recv after it gets the message rank 1 sent (a receive left posted took it,
    and that MPI_Recv never returned); one whose receive names no rank sends nothing; a receive that
    does not fit, and MPI_Send, MPI_Recv, MPI_Bcast, MPI_Allreduce given a bad rank, root or count
    return what they return plainly. The same lines under `callguard run` and under
    CALLGUARD_MPI_THREADS=serialize as plainly."""
    plain, want = errors_run()
    check(plain[0] == 0 and "rank 0: received 42, sendrecv's buffer -1" in want and "rank 1: received 1" in want,
          "plain run", plain)
    for env in ({}, {"CALLGUARD_MPI_THREADS": "serialize"}):
        r, got = errors_run(env)
        check(r[0] is not None, "%s: hung (a receive left posted took rank 1's message)" % env, r)
        check(r[0] == 0 and got == want, "%s: the same lines as plainly:\n%s\n-- plain:\n%s"
              % (env, "\n".join(got), "\n".join(want)), r)


def mpi_init_thread_of_a_level_that_is_none_answers_as_plainly_under_mpi_threads_serialize():
    """MPI_Init_thread(42): plain Open MPI 4.1 aborts the program (exit status 1, naming MPI_Init_thread);
    so it does under CALLGUARD_MPI_THREADS=serialize, which passes the level through (it told the program
    `provided 42`). A valid level above SERIALIZED is still told as asked."""
    one = MPIRUN[:-1] + ["1"]
    serialize = {"CALLGUARD_MPI_THREADS": "serialize"}
    for level in ("42", "-1"):
        plain = run(one + [E["CG_ERRORS"], "init", level], seconds=30)
        check(plain[0] not in (0, None) and "MPI_Init_thread" in plain[2], "plain Open MPI refuses %s" % level, plain)
        r = run(one + guarded(os.path.join(TMP, "init-%s" % level)) + [E["CG_ERRORS"], "init", level], serialize,
                seconds=30)
        check(r[0] == plain[0] and "provided" not in r[1] and "MPI_Init_thread" in r[2],
              "level %s: as plainly (exit %s)" % (level, plain[0]), r)
    r = run(one + guarded(os.path.join(TMP, "init-3")) + [E["CG_ERRORS"], "init", "3"], serialize, seconds=30)
    check(r[0] == 0 and "init_thread 3: rc 0 provided 3 query 3" in r[1], "MULTIPLE asked, MULTIPLE told", r)


MPI4PY_CHILD = r"""
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
other = 1 - rank
obj = comm.sendrecv({"from": rank, "items": list(range(rank, rank + 3))}, dest=other, source=other)
total = comm.allreduce(rank + 1, op=MPI.SUM)
root = comm.bcast("hello from 0" if rank == 0 else None, root=0)
gathered = comm.gather(rank * 10, root=0)
import array
buf = array.array("d", [rank + 0.5] * 4)
out = array.array("d", [0.0] * 4)
comm.Allreduce(buf, out, op=MPI.SUM)
req = comm.isend(rank, dest=other, tag=3)
got = comm.recv(source=other, tag=3)
req.wait()
comm.Barrier()
import sys
with open("%s.%d" % (sys.argv[1], rank), "w") as f:  # mpirun interleaves the ranks' stdout
    print(rank, size, MPI.Query_thread(), obj, total, root, gathered, list(out), got, file=f)
"""


def mpi4py_results_alike_plain_and_under_callguard_run():
    """mpi4py (Debian's python3-mpi4py): point to point, collectives on objects and buffers, a
    nonblocking send: the same output under `callguard run` as plainly, and its MPI calls are counted;
    and the same under CALLGUARD_MPI_THREADS=serialize (mpi4py asks for MULTIPLE and is told it)."""
    child = os.path.join(TMP, "mpi4py_child.py")
    with open(child, "w") as f:
        f.write(MPI4PY_CHILD)
    prefix = os.path.join(TMP, "mpi4py")  # the ranks' output files; the report folder
    plain = run(MPIRUN + [PYTHON, child, prefix + ".plain"])
    check(plain[0] == 0, "plain mpi4py", plain)
    g = run(MPIRUN + guarded(prefix) + [PYTHON, child, prefix + ".guarded"])
    check(g[0] == 0, "mpi4py under callguard run", g)
    for rank in (0, 1):
        with open("%s.plain.%d" % (prefix, rank)) as f, open("%s.guarded.%d" % (prefix, rank)) as h:
            a, b = f.read(), h.read()
        check(a == b and a.startswith("%d 2 3 " % rank), "rank %d: the same output:\n%s-- plain:\n%s" % (rank, b, a))
        got = rows(report(prefix, rank))
        for name in ("MPI_Init_thread", "MPI_Mprobe", "MPI_Mrecv", "MPI_Allreduce", "MPI_Bcast", "MPI_Barrier",
                     "MPI_Finalize"):
            check(got.get(name, 0) >= 1, "rank %d: %s counted: %s" % (rank, name, got))
    s = run(MPIRUN + guarded(prefix + "-serialized") + [PYTHON, child, prefix + ".serialized"],
            {"CALLGUARD_MPI_THREADS": "serialize"})
    check(s[0] == 0, "mpi4py under CALLGUARD_MPI_THREADS=serialize", s)
    for rank in (0, 1):
        with open("%s.plain.%d" % (prefix, rank)) as f, open("%s.serialized.%d" % (prefix, rank)) as h:
            a, b = f.read(), h.read()
        check(a == b, "rank %d serialized: the same output:\n%s-- plain:\n%s" % (rank, b, a))


# Rank 0: a thread waits about a second in MPI_Recv through ctypes.PyDLL (which keeps the GIL for the whole
# call) for a message rank 1 sends after 1.2 s, while the main thread ticks every millisecond; rank 0 prints
# the longest pause the main thread saw and the wait, in milliseconds. PyDLL(None) looks MPI_Recv up in the
# process's global scope, as a C extension linked to libmpi binds it: the preloaded layer's when there is
# one. libmpi is made global first, so the plain run finds it too.
PAUSE_CHILD = r"""
import ctypes, sys, threading, time
sys.path.insert(0, sys.argv[1])
from pausetimer import longest_pause  # tests/pausetimer.py
ctypes.CDLL("libmpi.so.40", mode=ctypes.RTLD_GLOBAL)
from mpi4py import MPI
lib = ctypes.PyDLL(None)
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
def recv():
    comm_world = ctypes.c_void_p.from_address(MPI._addressof(comm))
    long_t = ctypes.c_void_p.from_address(MPI._addressof(MPI.LONG))
    got = ctypes.c_long(0)
    time.sleep(0.2)  # let the main thread start ticking first
    t0 = time.monotonic()
    args = (ctypes.byref(got), 1, long_t, 1, 5, comm_world, None)
    if sys.argv[2:] == ["stdlib"]:  # made from the standard library's code (contextlib), called from here
        import contextlib, functools, types
        done = types.SimpleNamespace(close=functools.partial(lib.MPI_Recv, *args))
        with contextlib.closing(done):  # the stdlib call
            pass
        r = 0
    else:
        r = lib.MPI_Recv(*args)  # the blocking call
    global waited
    waited = time.monotonic() - t0
    assert r == 0 and got.value == 42, (r, got.value)
waited = 0.0
if rank == 0:
    t = threading.Thread(target=recv)
    t.start()
    longest = longest_pause(t)
    print("%.1f %.1f" % (longest * 1000, waited * 1000), flush=True)
else:
    time.sleep(1.2)
    comm.Send([__import__("array").array("l", [42]), MPI.LONG], dest=0, tag=5)
comm.Barrier()
"""


def line_of(text, mark):
    """The line number in text (a child's source) of the line with mark."""
    lines = text.lstrip("\n").splitlines()
    return [k + 1 for k, x in enumerate(lines) if mark in x][0]


# The line of the blocking call in PAUSE_CHILD, for the stall's Python line.
PAUSE_LINE = line_of(PAUSE_CHILD, "# the blocking call")


def pause(*options, mode=None):
    child = os.path.join(TMP, "pause_child.py")
    with open(child, "w") as f:
        f.write(PAUSE_CHILD.lstrip("\n"))
    prefix = os.path.join(TMP, "pause" + (mode or ""))
    r = run(MPIRUN + guarded(prefix, *options) + [PYTHON, child, TESTS] + ([mode] if mode else []), seconds=60)
    check(r[0] == 0, "the ranks ran", r)
    longest, waited = (float(x) for x in r[1].split())
    check(waited >= 900, "MPI_Recv waited for rank 1's message (%.1f ms)" % waited, r)
    rep = report(prefix, 0)
    recv = [s for p in rep["processes"] for s in p["sites"] if s["name"] == "MPI_Recv"]
    check(len(recv) == 1, "rank 0 counted MPI_Recv: %s" % rows(rep))
    return longest, recv[0], rep, child


def mpi_recv_holding_the_gil_is_a_stall_with_its_python_line():
    """Detect only (no --release-gil): the GIL stays held through the second in MPI_Recv, the main thread's
    longest pause is about that second, and rank 0's report (its process: rank 0, this host) has the stall
    with the Python line that made the call."""
    longest, recv, rep, child = pause()
    check(longest >= 800, "detect only: the GIL stays held: %.1f ms" % longest)
    print("longest pause %.1f ms while MPI_Recv waited" % longest)
    check(recv["stalls"] == 1, "MPI_Recv reported as a stall: %s" % recv)
    stalls = [s for p in rep["processes"] for s in p.get("stalls", []) if s["name"] == "MPI_Recv"]
    check(len(stalls) == 1, "one MPI_Recv stall: %s" % stalls)
    proc = rep["processes"][0]
    check(proc.get("rank") == 0 and proc.get("host") == os.uname().nodename,
          "the stall's process is rank 0 on %s: rank %s, host %s" % (os.uname().nodename, proc.get("rank"),
                                                                     proc.get("host")))
    where = stalls[0].get("python") or {}
    check(where.get("file") == child and where.get("line") == PAUSE_LINE and where.get("function") == "recv",
          "the stall's Python line is %s:%d in recv(): %s" % (child, PAUSE_LINE, where))
    # The main thread, ticking, waited for the GIL: the stall blocked it, and the summary says so.
    check(stalls[0].get("waiters") == 1, "one other thread waited for the GIL: %s" % stalls[0])
    folder = os.path.join(TMP, "pause")
    text = run([E["CG_CLI"], "report"] + [os.path.join(folder, f) for f in os.listdir(folder)], {"COLUMNS": "100"})
    head = text[1].split("\n\n")[0]
    check("stall held the runtime" in head and "while other threads waited" in head and "1 waiting" in head,
          "the summary counts the stall as blocking:\n%s" % text[1])


def mpi_recv_from_the_stdlib_names_the_first_frame_outside_it():
    """A stall whose Python frame is the standard library's (contextlib's __exit__ calls MPI_Recv) also
    names the first frame outside it: the child's `with` line in recv()."""
    longest, recv, rep, child = pause(mode="stdlib")
    stalls = [s for p in rep["processes"] for s in p.get("stalls", []) if s["name"] == "MPI_Recv"]
    check(len(stalls) == 1, "one MPI_Recv stall: %s" % stalls)
    where = stalls[0].get("python") or {}
    line = line_of(PAUSE_CHILD, "# the stdlib call")
    check(os.path.basename(where.get("file", "")) == "contextlib.py" and
          where.get("from") == {"file": child, "line": line, "function": "recv"},
          "at contextlib.py, from %s:%d in recv(): %s" % (child, line, where))


# A program with one thread that only imports mpi4py.MPI (MPI_Init_thread runs then, holding the GIL).
IMPORT_CHILD = r"""
import sys
from mpi4py import MPI  # the import
MPI.COMM_WORLD.Barrier()
"""


def mpi4py_import_stall_names_the_import_line_and_blocks_no_one():
    """MPI_Init_thread at `from mpi4py import MPI` in a one-thread program is a stall that blocked no one:
    `waiters` 0, located at the import line (never importlib's frozen frames) with the module being imported,
    not in the summary, listed as harmless with mpi4py's own advice once and no generic advice."""
    child = os.path.join(TMP, "import_child.py")
    with open(child, "w") as f:
        f.write(IMPORT_CHILD.lstrip("\n"))
    folder = os.path.join(TMP, "import")
    r = run(MPIRUN + guarded(folder, "--stall-ms", "20") + [PYTHON, child])
    check(r[0] == 0, "the ranks ran", r)
    line = line_of(IMPORT_CHILD, "# the import")
    for rank in (0, 1):
        rep = report(folder, rank)
        stalls = [s for p in rep["processes"] for s in p.get("stalls", []) if s["name"] == "MPI_Init_thread"]
        check(len(stalls) == 1, "rank %d: MPI_Init_thread is a stall (at least 20 ms): %s" % (rank, rows(rep)))
        st = stalls[0]
        where = st.get("python") or {}
        check(st.get("waiters") == 0, "rank %d: no other thread waited: %s" % (rank, st))
        check(where.get("file") == child and where.get("line") == line and where.get("function") == "<module>"
              and where.get("package") == "mpi4py" and "/mpi4py/MPI" in where.get("importing", ""),
              "rank %d: at the import line %s:%d, importing mpi4py.MPI: %s" % (rank, child, line, where))
        with open(os.path.join(folder, [f for f in os.listdir(folder) if "rank%d-" % rank in f][0])) as f:
            check("<frozen" not in f.read(), "rank %d: no frozen importlib frame in the report" % rank)
    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))]
    text = run([E["CG_CLI"], "report"] + files, {"COLUMNS": "100"})[1]
    head = text.split("\n\n")[0]
    check("stall" not in head, "a stall that blocked no one is not in the summary:\n%s" % text)
    # A line each rank, no advice: it cost nothing.
    check(text.count("  1 stall, harmless (no other thread wanted the runtime): MPI_Init_thread ") == 2 and
          text.count("import_child.py:%d\n" % line) == 2 and "what to do" not in text and "<frozen" not in text,
          text)
    text = run([E["CG_CLI"], "report", "--all"] + files)[1]  # every stall in full
    check(text.count("held the runtime while no other thread wanted it (harmless in this run)") == 2 and
          "<frozen" not in text, text)
    check(text.count("what to do (mpi4py): nothing while the program has one thread") == 1 and
          "what to do (mpi4py): as above" in text and "--release-gil" not in text and
          "--release-runtime" not in text, "mpi4py's advice once, no generic advice:\n%s" % text)


def mpi_recv_with_release_gil_pauses_the_other_threads_at_most_50ms():
    """With --release-gil the GIL is left around MPI_Recv: the main thread's longest pause is at most 50 ms
    while the other thread waits a second, and there is no stall."""
    longest, recv, rep, child = pause("--release-gil")
    check(longest <= 50, "the main thread paused %.1f ms (at most 50)" % longest)
    print("longest pause %.1f ms while MPI_Recv waited" % longest)
    check(recv["stalls"] == 0 and recv["calls"] == 1, "no stall: %s" % recv)


HANG_JOB = """from mpi4py import MPI
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
print("ready", rank, flush=True)
if rank == 2:
    comm.Recv(bytearray(8), source=0, tag=7)  # line 6: nobody sends
comm.Barrier()  # line 7
"""


def status_of(folder, *options):
    r = subprocess.run([E["CG_CLI"], "status", *options, folder + "/"], capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout, r.stderr


def mpi4py_hang_status_names_the_rank_out_of_step_live_and_after_sigterm():
    """Three ranks: rank 2 waits in an MPI_Recv nobody sends, ranks 0 and 1 in MPI_Barrier for it. While
    it hangs, `callguard status DIR/` names rank 2 first (the odd one out), then ranks 0-1, each with its
    Python line, from the statistics files alone; after SIGTERM to mpirun every rank's report is written
    (none killed while writing) and keeps its call in flight with the line."""
    job = os.path.join(TMP, "hang_job.py")
    with open(job, "w") as f:
        f.write(HANG_JOB)
    folder = os.path.join(TMP, "hang")
    args = MPIRUN[:-1] + ["3"] + guarded(folder) + [PYTHON, job]
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    p = subprocess.Popen(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        text, deadline = "", time.monotonic() + 10
        while time.monotonic() < deadline:
            time.sleep(0.5)
            rc, text, err = status_of(folder)
            if "rank 2: in MPI_Recv at" in text and "ranks 0, 1: in MPI_Barrier at" in text:
                break
        check("rank 2: in MPI_Recv at %s:6 in <module>" % job in text, "status within 10 s:\n" + text + err)
        check("ranks 0, 1: in MPI_Barrier at %s:7 in <module>" % job in text, "status:\n" + text)
        check(text.index("rank 2: in") < text.index("ranks 0, 1: in"), "the rank out of step first:\n" + text)
        rc, out, err = status_of(folder, "--json")
        live = json.loads(out)
        check([g["ranks"] for g in live["groups"]] == [[2], [0, 1]], "JSON groups: %s" % live["groups"])
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate(timeout=30)
    finally:
        for pid in session_pids(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for rank, name, line in ((0, "MPI_Barrier", 7), (1, "MPI_Barrier", 7), (2, "MPI_Recv", 6)):
        flight = [c for proc in report(folder, rank)["processes"] for c in proc["in_flight"]]
        check([(c["name"], c["python"] and c["python"]["line"]) for c in flight] == [(name, line)],
              "rank %d's report keeps its call and line: %s" % (rank, flight))
    check(not [f for f in os.listdir(folder) if f.endswith(".live")], "the runs' live notes are gone")
    # The merged report says the same, the rank out of step first: in the summary and in JSON.
    r = subprocess.run([E["CG_CLI"], "report", folder + "/"], capture_output=True, text=True, timeout=60)
    text = r.stdout
    check("3 processes ended inside calls, the odd ones first:" in text, "report:\n" + text + r.stderr)
    at2, at01 = text.find("rank 2: in MPI_Recv at %s:6" % job), text.find("ranks 0, 1: in MPI_Barrier at %s:7" % job)
    check(0 <= at2 < at01, "report's summary, rank 2 first:\n" + text)
    # MPI_Barrier is a collective (apis/mpi.ini): rank 2 never reached it.
    check("rank 2 made 0 MPI_Barrier calls, the others 1 (a collective" in text, "the count out of step:\n" + text)
    merged = os.path.join(TMP, "hang-merged.json")
    subprocess.run([E["CG_CLI"], "report", "--json", merged, folder + "/"], capture_output=True, timeout=60)
    merged_rep = json.load(open(merged))
    barrier = [s for s in merged_rep["across_ranks"]["sites"] if s["name"] == "MPI_Barrier"]
    check(barrier and barrier[0]["collective"] and barrier[0]["usual_calls"] == 1 and
          [(o["rank"], o["calls"]) for o in barrier[0]["out_of_step"]] == [(2, 0)], "across_ranks: %s" % barrier)
    groups = merged_rep["in_flight_groups"]
    check([(g["ranks"], g["name"], g["python"]["line"]) for g in groups] == [([2], "MPI_Recv", 6),
                                                                          ([0, 1], "MPI_Barrier", 7)],
          "in_flight_groups: %s" % groups)


def hang_job(name):
    """HANG_JOB written to TMP/NAME; its path."""
    job = os.path.join(TMP, name)
    with open(job, "w") as f:
        f.write(HANG_JOB)
    return job


def mpi4py_stuck_abort_around_mpirun_names_rank_2_then_ends_the_job_with_124():
    """`callguard run --report DIR/ --stuck 4s --on-stuck abort -- mpirun -n 3 python3 job.py` (rank 2 in an
    MPI_Recv nobody matches, ranks 0-1 in MPI_Barrier): callguard says rank 2's call and line on stderr once,
    with the view `callguard status` writes, ends the whole job by itself, exits 124 and keeps the report:
    its calls in flight and a `stuck` member, which `callguard report` keeps (text and JSON)."""
    job, folder = hang_job("stuck_around.py"), os.path.join(TMP, "stuck-around")
    start = time.monotonic()
    r = run([E["CG_CLI"], "run", "--api", "mpi", "--report", folder + "/", "--stuck", "4s", "--on-stuck", "abort",
             "--", *MPIRUN[:-1], "3", PYTHON, job], seconds=40)
    took = time.monotonic() - start
    check(r[0] == 124, "exit status 124 (aborted)", r)
    said = "callguard: stuck over --stuck 4s: rank 2 (pid "
    check(r[2].count(said) == 1 and "in MPI_Recv at %s:6 in <module>" % job in r[2], "rank 2 named once", r)
    check("ranks 0, 1: in MPI_Barrier at %s:7" % job in r[2] and "--on-stuck abort: SIGTERM" in r[2],
          "the view and the abort", r)
    check(took < 20, "the job ended by itself in %.1f s (at most 20)" % took, r)
    reports = [f for f in os.listdir(folder) if f.endswith(".json")]
    check(len(reports) == 1, "one report: %s" % reports)
    rep = json.load(open(os.path.join(folder, reports[0])))
    flight = sorted((c["name"], c["python"]["line"]) for p in rep["processes"] for c in p["in_flight"])
    check(flight == [("MPI_Barrier", 7), ("MPI_Barrier", 7), ("MPI_Recv", 6)], "calls in flight kept: %s" % flight)
    stuck = rep["stuck"]
    check(stuck["aborted"] and stuck["action"] == "abort" and stuck["after_ms"] == 4000 and stuck["views"] == 1,
          "stuck: %s" % {k: v for k, v in stuck.items() if k != "view"})
    check(sorted((p["rank"], p["name"]) for p in stuck["processes"]) ==
          [(0, "MPI_Barrier"), (1, "MPI_Barrier"), (2, "MPI_Recv")] and stuck["view"]["groups"][0]["ranks"] == [2],
          "stuck processes, rank 2's group first: %s" % stuck)
    print("said %d ms after AFTER; the job ended %d ms after SIGTERM" % (stuck["said_late_ms"], stuck["ended_ms"]))
    t = subprocess.run([E["CG_CLI"], "report", folder + "/"], capture_output=True, text=True, timeout=60)
    check("stuck: rank 2 (pid" in t.stdout and "(over\n" not in t.stdout and "--on-stuck abort ended the job" in
          t.stdout.replace("\n      ", " "), "callguard report keeps it:\n" + t.stdout + t.stderr)
    merged = os.path.join(TMP, "stuck-merged.json")
    subprocess.run([E["CG_CLI"], "report", "--json", merged, folder + "/"], capture_output=True, timeout=60)
    check(json.load(open(merged))["stuck"] == stuck, "the merged JSON keeps the stuck member as it was")


def mpi4py_stuck_inside_mpirun_one_run_speaks_for_the_job_and_every_rank_ends():
    """`mpirun -n 3 callguard run --report DIR/ --stuck 4s --on-stuck abort`: the three runs look at the same
    folder, one of them (the lease holder) says the view, once; every rank's run ends its own rank and exits
    124; each report keeps its call in flight and the `stuck` member; no lease or note is left."""
    job, folder = hang_job("stuck_inside.py"), os.path.join(TMP, "stuck-inside")
    start = time.monotonic()
    r = run(MPIRUN[:-1] + ["3"] + guarded(folder, "--stuck", "4s", "--on-stuck", "abort") + [PYTHON, job],
            seconds=40)
    took = time.monotonic() - start
    check(r[0] not in (0, None) and took < 20, "the job ended by itself, not 0, in %.1f s" % took, r)
    check(r[2].count("callguard: stuck over --stuck 4s: ") == 1 and
          "rank 2 (pid" in r[2] and "in MPI_Recv at %s:6" % job in r[2], "one view, naming rank 2", r)
    for rank, name in ((0, "MPI_Barrier"), (1, "MPI_Barrier"), (2, "MPI_Recv")):
        rep = report(folder, rank)
        check([c["name"] for p in rep["processes"] for c in p["in_flight"]] == [name], "rank %d's call" % rank)
        check(rep["stuck"]["aborted"], "rank %d's report: stuck, aborted" % rank)
    check(sum(report(folder, k)["stuck"]["spoke"] for k in range(3)) == 1, "one run spoke")
    check(not [f for f in os.listdir(folder) if f.startswith(".")], "no lease or note left: %s" % os.listdir(folder))


def mpi4py_stuck_command_gets_the_view_on_stdin_and_its_failure_leaves_the_job_going():
    """--on-stuck CMD: run once when the job becomes stuck, with the view as JSON on its stdin; a command that
    fails is said (its exit status) and the job goes on as under --on-stuck report, until it is stopped."""
    job, folder = hang_job("stuck_command.py"), os.path.join(TMP, "stuck-command")
    got = os.path.join(TMP, "stuck-command.json")
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    p = subprocess.Popen([E["CG_CLI"], "run", "--api", "mpi", "--report", folder + "/", "--stuck", "2s",
                          "--on-stuck", "cat > %s; exit 3" % got, "--", *MPIRUN[:-1], "3", PYTHON, job], env=e,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (os.path.exists(got) and os.path.getsize(got)):
            time.sleep(0.2)
        time.sleep(1.5)
        check(p.poll() is None, "the job goes on after the command failed")
        os.killpg(p.pid, signal.SIGTERM)
        out, err = p.communicate(timeout=30)
    finally:
        end_jobs(p)
    view = json.load(open(got))
    check(view["headline"].startswith("rank 2 (pid") and view["action"] == "command" and
          view["view"]["groups"][0]["ranks"] == [2], "the view on its stdin: %s" % view)
    check(err.count("callguard: stuck over --stuck 2s") == 1 and "failed (exited 3); the job goes on" in err,
          "said once, its failure said:\n" + err)
    rep = json.load(open(os.path.join(folder, [f for f in os.listdir(folder) if f.endswith(".json")][0])))
    check(rep["stuck"]["command_result"] == "exited 3" and not rep["stuck"].get("aborted"), "report: %s" %
          {k: v for k, v in rep["stuck"].items() if k != "view"})


HEALTHY_JOB = """import time
from mpi4py import MPI
comm = MPI.COMM_WORLD
print("ready", comm.Get_rank(), flush=True)
end = time.monotonic() + 12
while time.monotonic() < end:
    comm.Barrier()
    time.sleep(0.05)
"""


def start_job(folder, source, name):
    """`mpirun -n 3 callguard run --report FOLDER/ -- python3 SOURCE` in a session of its own, started."""
    job = os.path.join(TMP, name)
    with open(job, "w") as f:
        f.write(source)
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    return job, subprocess.Popen(MPIRUN[:-1] + ["3"] + guarded(folder) + [PYTHON, job], env=e,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def end_jobs(*procs):
    for p in procs:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            p.communicate(timeout=30)
        finally:
            for pid in session_pids(p.pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass


def mpi4py_status_stuck_is_a_probe_watch_says_each_rank_and_prometheus_parses():
    """While a job hangs (mpirun callguard run --report DIR/), `callguard status --stuck 2s DIR/` exits 1
    naming rank 2's call and line, and on a healthy job's folder exits 0; `--watch --json` writes one object a
    line as each rank becomes stuck and as each exits; `--format prometheus` is read by prometheus_client's
    own parser: calls by entry point, calls in flight, the oldest call's age, MPI_Barrier out of step."""
    hung, healthy = os.path.join(TMP, "probe-hung"), os.path.join(TMP, "probe-healthy")
    job, p = start_job(hung, HANG_JOB, "probe_hang.py")
    _, q = start_job(healthy, HEALTHY_JOB, "probe_healthy.py")
    watch = None
    try:
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and status_of(hung)[1].count(" calls: ") < 3:
            time.sleep(0.2)
        watch = subprocess.Popen([E["CG_CLI"], "status", "--watch", "--json", "--stuck", "2s", hung + "/"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        rc, out, err = 0, "", ""
        while time.monotonic() < deadline and rc != 1:
            time.sleep(0.25)
            rc, out, err = status_of(hung, "--stuck", "2s")
        check(rc == 1 and "stuck over --stuck 2s: rank 2 (pid" in out and "in MPI_Recv at %s:6" % job in out,
              "--stuck 2s on the hung job: exit 1 and rank 2 named\n%s%s" % (out, err))
        check(status_of(hung, "--stuck", "1m")[0] == 0, "--stuck 1m on the hung job: nothing that old yet")
        rc, out, err = status_of(healthy, "--stuck", "2s")
        check(rc == 0 and "nothing stuck: 3 processes" in out, "--stuck 2s on the healthy job: 0\n" + out + err)
        check(status_of(hung, "--stuck", "2")[0] == 2, "--stuck without a unit: a usage error")
        rc, prom, err = status_of(hung, "--format", "prometheus")
        check(rc == 0, "prometheus: exit 0\n" + err)
        parsed = subprocess.run([os.path.join(E["CG_VENV"], "bin", "python"), "-c", PROM_READ], input=prom,
                                capture_output=True, text=True, timeout=60)
        check(parsed.returncode == 0, "prometheus_client read it:\n%s%s" % (parsed.stderr, prom))
        fams = json.loads(parsed.stdout)
        check(fams["callguard_processes"] == [["callguard_processes", {}, 3.0]], "processes: %s" % fams)
        recv = [s for s in fams["callguard_calls"] if s[1]["entry"] == "MPI_Recv"]
        check([(s[1]["rank"], s[2]) for s in recv] == [("2", 1.0)], "MPI_Recv calls: %s" % recv)
        check(sorted(s[2] for s in fams["callguard_calls_in_flight"]) == [1.0, 1.0, 1.0], "in flight: %s" % fams)
        oldest = {s[1]["rank"]: (s[1]["entry"], s[2]) for s in fams["callguard_oldest_call_seconds"]}
        check(oldest["2"][0] == "MPI_Recv" and oldest["2"][1] >= 2, "oldest: %s" % oldest)
        check(fams["callguard_collective_ranks_out_of_step"] ==
              [["callguard_collective_ranks_out_of_step", {"api": "mpi", "entry": "MPI_Barrier"}, 1.0]],
              "out of step: %s" % fams)
    finally:
        end_jobs(p, q)
    events, _ = watch.communicate(timeout=30)
    lines = [json.loads(line) for line in events.splitlines()]
    stuck = sorted((e["rank"], e["name"]) for e in lines if e["event"] == "stuck")
    check(stuck == [(0, "MPI_Barrier"), (1, "MPI_Barrier"), (2, "MPI_Recv")], "watch: each rank stuck once: %s"
          % lines)
    check(sorted(e["rank"] for e in lines if e["event"] == "exited") == [0, 1, 2], "watch: each exited: %s" % lines)
    check(watch.returncode == 0, "watch ends when none runs")


# prometheus_client's parser (build-venv) reads the exposition: its families as JSON, pid and host left out.
PROM_READ = """import json, sys
from prometheus_client.parser import text_string_to_metric_families
families = text_string_to_metric_families(sys.stdin.read())
out = {f.name: [[s.name, s.labels, s.value] for s in f.samples] for f in families}
for samples in out.values():
    for s in samples:
        s[1].pop("pid", None), s[1].pop("host", None)
print(json.dumps(out))
"""


# Three ranks: rank 2 in comm.Recv (MPI_Recv) and rank 1 in comm.recv (mpi4py's MPI_Mprobe) from rank 0 with
# tag 99, which nobody sends; rank 0 in MPI_Barrier.
ARGS_JOB = """from mpi4py import MPI
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
if rank == 2:
    comm.Recv(bytearray(8), source=0, tag=99)
elif rank == 1:
    comm.recv(source=0, tag=99)
comm.Barrier()
"""


def mpi4py_hang_status_names_what_each_rank_waits_for():
    """Three ranks under mpirun, each under `callguard run --report DIR/`: while they hang, `callguard
    status DIR/` names the arguments each call waits on (apis/mpi.ini wait_args): rank 2's MPI_Recv and
    rank 1's MPI_Mprobe (mpi4py's comm.recv) source=0 tag=99 on MPI_COMM_WORLD of 3 ranks, rank 0's
    MPI_Barrier its communicator; --json the same as "args". mpirun then gets SIGTERM, and each rank's
    report keeps them in in_flight."""
    job = os.path.join(TMP, "args_job.py")
    with open(job, "w") as f:
        f.write(ARGS_JOB)
    folder = os.path.join(TMP, "args")
    args = MPIRUN[:-1] + ["3"] + guarded(folder) + [PYTHON, job]
    e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    p = subprocess.Popen(args, env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    world = "comm=MPI_COMM_WORLD (size 3)"
    want = {2: "in mpi MPI_Recv source=0 tag=99 " + world, 1: "in mpi MPI_Mprobe source=0 tag=99 " + world,
            0: "in mpi MPI_Barrier " + world}
    try:
        text, deadline = "", time.monotonic() + 10
        while time.monotonic() < deadline and not all(w in text for w in want.values()):
            time.sleep(0.5)
            rc, text, err = status_of(folder)
        for rank, w in want.items():
            check(w in text, "rank %d: status within 10 s names %r:\n%s" % (rank, w, text))
        rc, out, err = status_of(folder, "--json")
        args_of = {proc["rank"]: [c["args"] for c in proc["in_flight"]] for proc in json.loads(out)["processes"]}
        recv = {"source": "0", "tag": "99", "comm": "MPI_COMM_WORLD (size 3)"}
        check(args_of == {0: [{"comm": "MPI_COMM_WORLD (size 3)"}], 1: [recv], 2: [recv]}, "JSON: %s" % args_of)
        os.killpg(p.pid, signal.SIGTERM)
        p.communicate(timeout=30)
    finally:
        for pid in session_pids(p.pid):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    for rank, name in ((1, "MPI_Mprobe"), (2, "MPI_Recv")):
        flight = [(c["name"], c["args"]) for proc in report(folder, rank)["processes"] for c in proc["in_flight"]]
        check(flight == [(name, recv)], "rank %d's report keeps its call's arguments: %s" % (rank, flight))


if __name__ == "__main__":
    main()
