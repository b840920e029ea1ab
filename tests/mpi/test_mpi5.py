"""Tests of the MPI layer on MPI 5.0 as users get it from PyPI: MPICH 5.0.2 (the `mpich` package, in the venv
scripts/setup-venv.sh makes beside build-venv: build-venv-mpich/), with both of its ABIs: MPICH's own
(`mpicc`, libmpi.so.12) and the MPI 5.0 standard ABI (`mpicc_abi`, libmpi_abi.so.1), two ranks under its Hydra
`mpiexec`; and the same program on Debian's Open MPI 4.1 under mpirun.

Run: test_mpi5.py TEST (or --list), with the paths in the environment (tests/mpi/CMakeLists.txt sets them):
CG_CLI, CG_MPIRUN, CG_MPI_INCLUDE, CG_CC, CG_MPI_LIBRARY (Open MPI's libmpi.so.40), CG_LARGE_COUNT
(large_count.c built against Open MPI); CG_MPICH5 (the venv's folder), CG_MPICH5_LARGE_COUNT and
CG_MPICH5_LARGE_COUNT_ABI (large_count.c built by its mpicc and mpicc_abi) when the build found it; CG_OMPI5 and
CG_OMPI5_LARGE_COUNT (PyPI's Open MPI 5, build-venv-ompi5), CG_IMPI, CG_IMPI_LARGE_COUNT and
CG_IMPI_LARGE_COUNT_ABI (PyPI's Intel MPI, build-venv-impi) likewise. Without a venv the tests or parts of tests
that need it are skipped (exit status 77). Its bin/ is put first on PATH only in the commands
that run its mpiexec. Each test is a function named for the behaviour it checks.
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import main  # noqa: E402  (tests/cgtest.py)
from test_mpi import MPIRUN, TMP, check, guarded, report, rows, run  # noqa: E402

E = os.environ
MPICH5 = E.get("CG_MPICH5", "")
OMPI5, IMPI = E.get("CG_OMPI5", ""), E.get("CG_IMPI", "")  # PyPI's Open MPI 5 and Intel MPI, when there
ROUNDS = 200


def hydra(args, env=None, seconds=60):
    """args under pip MPICH's Hydra mpiexec, two ranks, its bin/ first on PATH for this command alone."""
    e = dict(env or {})
    e["PATH"] = os.path.join(MPICH5, "bin") + os.pathsep + os.environ.get("PATH", "")
    # MPICH's own allocations outlive MPI_Finalize: not ours to report in a sanitizer build (as test_mpi.run).
    asan = os.environ.get("ASAN_OPTIONS", "")
    e["ASAN_OPTIONS"] = asan + (":" if asan else "") + "detect_leaks=0"
    return run([os.path.join(MPICH5, "bin", "mpiexec"), "-n", "2"] + args, e, seconds)


def declared(header, *flags):
    """The MPI_ functions HEADER declares, read from the preprocessed header as the generator reads it."""
    src = os.path.join(TMP, "decl.c")
    with open(src, "w") as f:
        f.write("#include <%s>\n" % header)
    pp = subprocess.run([E["CG_CC"], "-E"] + list(flags) + [src], capture_output=True, text=True)
    check(pp.returncode == 0, "%s preprocesses" % header, (pp.returncode, pp.stdout, pp.stderr))
    # Open MPI writes __attribute__((visibility("default"))) before the return type.
    names = set(re.findall(r"^(?!typedef)(?:__attribute__\(\(.*?\)\)\s*)?[A-Za-z_][\w \t*]*?\b(MPI_\w*)\s*\(",
                           pp.stdout, re.M))
    check("MPI_Pcontrol" in names and len(names) > 400, "%s's functions: %d" % (header, len(names)))
    return names


def exported(library):
    """The MPI_ C functions LIBRARY defines (nm -D: T or W; its data symbols are not wrapped), less the Fortran
    bindings' names all in capitals (Open MPI's MPI_DUP_FN, MPI_WTIME_F90)."""
    r = subprocess.run(["nm", "-D", "--defined-only", library], capture_output=True, text=True)
    check(r.returncode == 0, "nm %s" % library, (r.returncode, r.stdout, r.stderr))
    return set(m.group(1) for m in re.finditer(r"^\S+ [TW] (MPI_\w+)$", r.stdout, re.M) if m.group(1) != m.group(1).upper())


def listed(cli):
    """The entry points `callguard list mpi` names."""
    r = subprocess.run([cli, "list", "mpi"], capture_output=True, text=True)
    check(r.returncode == 0, "callguard list mpi", (r.returncode, r.stdout, r.stderr))
    return set(re.findall(r"^(P?MPI_\w+)", r.stdout, re.M))


def mpi_list_names_every_function_of_each_mpi_header_and_library():
    """`callguard list mpi` names exactly the MPI_ functions that Open MPI 4.1's mpi.h (its MPI-1 functions
    removed in MPI 3.0 declared), MPICH 5's mpi.h and MPI 5.0's standard mpi_abi.h declare, MPI_Pcontrol
    (variadic) left out; and every MPI_ function that Open MPI 4.1's libmpi.so.40, MPICH 5's libmpi.so.12
    and libmpi_abi.so.1 define is among them. (Generated from Open MPI 4.1 alone, the layer lacked the 279
    functions of MPI 4 and 5 it has not, MPI_Send_c and MPI_Session_init among them.)"""
    if not MPICH5:
        return 77  # no PyPI MPICH 5 (scripts/setup-venv.sh makes build-venv-mpich)
    inc = os.path.join(MPICH5, "include")
    union = (declared("mpi.h", "-I", E["CG_MPI_INCLUDE"], "-DOMPI_OMIT_MPI1_COMPAT_DECLS=0") |
             declared("mpi.h", "-I", inc) | declared("mpi_abi.h", "-I", inc))
    union.discard("MPI_Pcontrol")
    got = listed(E["CG_CLI"])
    check(got == union, "missing %s; extra %s" % (sorted(union - got), sorted(got - union)))
    libs = [E["CG_MPI_LIBRARY"], os.path.join(MPICH5, "lib", "libmpi.so.12"),
            os.path.join(MPICH5, "lib", "libmpi_abi.so.1")]
    # And PyPI's Open MPI 5 and Intel MPI where their venvs are: Open MPI 5's MPI_Session_set_info is its own,
    # in no standard and no header the layer is generated from: not wrapped (docs/mpi.md).
    libs += [os.path.join(OMPI5, "lib", "libmpi.so.40")] if OMPI5 else []
    libs += [os.path.join(IMPI, "lib", n) for n in ("libmpi.so.12", "libmpi_abi.so.1")] if IMPI else []
    for lib in libs:
        missing = exported(lib) - got - {"MPI_Pcontrol", "MPI_Session_set_info"}
        check(not missing, "%s's functions not wrapped: %s" % (lib, sorted(missing)))


def counts(folder):
    """Each call's count summed over the job's two reports."""
    total = {}
    for rank in (0, 1):
        for name, n in rows(report(folder, rank)).items():
            total[name] = total.get(name, 0) + n
    return total


def mpich5_large_count_calls_are_counted_and_print_as_plainly():
    """large_count.c, two ranks of two threads (one MPI_Send_c and MPI_Recv_c 200 each, the other
    MPI_Allreduce), built by PyPI MPICH's mpicc (libmpi.so.12) and by its mpicc_abi (the standard ABI,
    libmpi_abi.so.1), under its Hydra mpiexec: the same output under `callguard run` as plainly, and the
    job's reports (one per rank, named by Hydra's PMI_RANK) count 400 MPI_Send_c, 400 MPI_Recv_c and 400
    MPI_Allreduce. (Before, MPI_Send_c and MPI_Recv_c were not wrapped: 0 counted.)"""
    if not MPICH5:
        return 77  # no PyPI MPICH 5 (scripts/setup-venv.sh makes build-venv-mpich)
    for abi, prog in (("mpich", E["CG_MPICH5_LARGE_COUNT"]), ("abi", E["CG_MPICH5_LARGE_COUNT_ABI"])):
        plain = hydra([prog, "multiple", str(ROUNDS)])
        check(plain[0] == 0 and "calls MPI_Send_c/MPI_Recv_c asked multiple told multiple library multiple checksum" in plain[1],
              "%s: plain run" % abi, plain)
        folder = os.path.join(TMP, "large-count-%s" % abi)
        g = hydra(guarded(folder) + [prog, "multiple", str(ROUNDS)])
        check(g[0] == 0 and g[1] == plain[1], "%s: the same output:\n%s-- plain:\n%s" % (abi, g[1], plain[1]), g)
        got = counts(folder)
        want = {"MPI_Send_c": 2 * ROUNDS, "MPI_Recv_c": 2 * ROUNDS, "MPI_Allreduce": 2 * ROUNDS}
        check(all(got.get(k) == v for k, v in want.items()), "%s: counted %s, expected %s" % (abi, got, want))


RECV_C = r"""
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank;
    char buf[8];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    printf("rank %d waiting\n", rank);
    fflush(stdout);
    if (rank == 1) MPI_Recv_c(buf, (MPI_Count)8, MPI_CHAR, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    return 0;
}
"""


def mpich5_rank_hung_in_recv_c_is_named_with_its_arguments_in_status():
    """Rank 1 waits in an MPI_Recv_c (large count) from rank 0, tag 99, that nobody sends; rank 0 in
    MPI_Barrier; built by PyPI MPICH's mpicc and by its mpicc_abi (the standard ABI, whose MPI_COMM_WORLD is
    another value), each rank under `callguard run --report DIR/` inside Hydra's mpiexec. Within 20 s,
    `callguard status DIR/` names rank 1 "in mpi MPI_Recv_c source=0 tag=99 comm=MPI_COMM_WORLD (size 2)" and
    rank 0's barrier on MPI_COMM_WORLD. (Before the layer covered MPI 4's _c calls: "no guarded call".)"""
    if not MPICH5:
        return 77
    src = os.path.join(TMP, "recv_c.c")
    with open(src, "w") as f:
        f.write(RECV_C)
    for cc in ("mpicc", "mpicc_abi"):
        prog = os.path.join(TMP, "recv_c_" + cc)
        built = run([os.path.join(MPICH5, "bin", cc), src, "-o", prog], seconds=60)
        check(built[0] == 0, "%s builds recv_c.c" % cc, built)
        folder = os.path.join(TMP, "recv-c-" + cc)
        e = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
        e["PATH"] = os.path.join(MPICH5, "bin") + os.pathsep + e.get("PATH", "")
        e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + (":" if e.get("ASAN_OPTIONS") else "") + "detect_leaks=0"
        job = subprocess.Popen([os.path.join(MPICH5, "bin", "mpiexec"), "-n", "2"] + guarded(folder) + [prog],
                               env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        want = ("in mpi MPI_Recv_c source=0 tag=99 comm=MPI_COMM_WORLD (size 2) for ",
                "in mpi MPI_Barrier comm=MPI_COMM_WORLD (size 2) for ")
        text = ""
        try:
            for _ in range(40):
                time.sleep(0.5)
                r = subprocess.run([E["CG_CLI"], "status", folder + "/"], capture_output=True, text=True, timeout=20)
                text = r.stdout
                if all(w in " ".join(text.split()) for w in want) or job.poll() is not None:
                    break
        finally:
            try:
                os.killpg(job.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            job.wait(timeout=20)
        check(all(w in " ".join(text.split()) for w in want), "%s: status names each rank's call and what it waits for:\n%s" % (cc, text))


def mpi_threads_serialize_completes_large_count_threads_on_each_library():
    """large_count.c asks for MULTIPLE; under CALLGUARD_MPI_THREADS=serialize the library is initialized
    SERIALIZED (PMPI_Query_thread), the program is told MULTIPLE, and it completes with the plain MULTIPLE
    run's checksum: on PyPI's MPICH 5 with MPICH's ABI and with the standard ABI (MPI_Send_c and MPI_Recv_c
    made as MPI_Isend_c and MPI_Irecv_c plus tests; the job's reports count 100 of each at 50 rounds), and
    on Open MPI 4.1 (MPI_Send, MPI_Recv). (Before, MPICH 5's run hung, its MPI_Send_c unlocked, and Hydra
    reported "BAD TERMINATION ... Please see the FAQ page" once it was killed; the standard ABI's was
    refused.)"""
    serialize = {"CALLGUARD_MPI_THREADS": "serialize"}
    runs = [("Open MPI", lambda a, env=None: run(MPIRUN + a, env), E["CG_LARGE_COUNT"], "MPI_Send")]
    if MPICH5:
        runs += [("MPICH", hydra, E["CG_MPICH5_LARGE_COUNT"], "MPI_Send_c"),
                 ("standard ABI", hydra, E["CG_MPICH5_LARGE_COUNT_ABI"], "MPI_Send_c")]
    for name, launch, prog, send in runs:
        ref = launch([prog, "multiple", "50"])
        check(ref[0] == 0 and "told multiple library multiple" in ref[1], "%s: the MULTIPLE run" % name, ref)
        checksum = re.search(r"checksum \d+\n", ref[1]).group(0)
        folder = os.path.join(TMP, "serialize-%s" % name.replace(" ", ""))
        fixed = launch(guarded(folder) + [prog, "multiple", "50"], serialize)
        check(fixed[0] == 0, "%s: completes with CALLGUARD_MPI_THREADS=serialize" % name, fixed)
        check("asked multiple told multiple library serialized " in fixed[1] and checksum in fixed[1],
              "%s: levels and the MULTIPLE run's %s" % (name, checksum), fixed)
        got = counts(folder)
        recv = send.replace("Send", "Recv")
        check(got.get(send) == 100 and got.get(recv) == 100 and got.get("MPI_Allreduce") == 100,
              "%s: counted %s" % (name, got))
        # Completed by tests, the lock taken around each real call: in no domain; every other call in "mpi".
        policy = {st["name"]: st["policy"]["serialize"] for st in report(folder, 0)["processes"][0]["sites"]}
        check(policy[send] is None and policy[recv] is None and policy["MPI_Comm_rank"] == "mpi",
              "%s: %s, %s made by tests: %s" % (name, send, recv, {k: policy[k] for k in (send, recv)}))
    if not MPICH5:
        return 77  # Open MPI only: no PyPI MPICH 5 (scripts/setup-venv.sh makes build-venv-mpich)


def mpich5_sendrecv_fills_the_status_as_plainly_under_mpi_threads_serialize_on_both_abis():
    """errors.c's status mode on PyPI's MPICH 5, built by mpicc and by mpicc_abi: MPI_Sendrecv's status
    (source, tag, count, the MPI_ERROR the program set) after an exchange, a receive from MPI_PROC_NULL and
    both halves MPI_PROC_NULL, the same under CALLGUARD_MPI_THREADS=serialize as plainly. The standard ABI's
    statuses are 32 bytes with MPI_ERROR at 8, its MPI_PROC_NULL -3 and MPI_STATUS_IGNORE NULL (mpi_abi.h):
    the fix takes them once MPI_Abi_get_version says ABI 1.0. (Before, the standard ABI was refused.)"""
    if not MPICH5:
        return 77  # no PyPI MPICH 5 (scripts/setup-venv.sh makes build-venv-mpich)
    for abi, prog in (("mpich", E["CG_MPICH5_ERRORS"]), ("abi", E["CG_MPICH5_ERRORS_ABI"])):
        plain = hydra([prog, "status"], seconds=30)
        want = sorted(plain[1].splitlines())
        check(plain[0] == 0 and len(want) == 6 and "MPI_ERROR 12345" in want[0], "%s: plain run" % abi, plain)
        r = hydra(guarded(os.path.join(TMP, "status-%s" % abi)) + [prog, "status"],
                  {"CALLGUARD_MPI_THREADS": "serialize"}, seconds=30)
        got = sorted(r[1].splitlines())
        check(r[0] == 0 and got == want, "%s: the same lines as plainly:\n%s\n-- plain:\n%s"
              % (abi, "\n".join(got), "\n".join(want)), r)


def launcher(prefix, command):
    """A launcher of two ranks from a PyPI venv (build-venv-ompi5's mpirun, build-venv-impi's Hydra mpiexec),
    its bin/ first on PATH for this command alone: launch(args, env=None, around=None) runs args under it, under
    `callguard run --report AROUND --` when AROUND names a report."""
    cmd = [os.path.join(prefix, "bin", command), "-n", "2"]
    if command == "mpirun":
        cmd[1:1] = ["--allow-run-as-root", "--oversubscribe"]

    def launch(args, env=None, around=None):
        e = dict(env or {})
        e["PATH"] = os.path.join(prefix, "bin") + os.pathsep + os.environ.get("PATH", "")
        asan = os.environ.get("ASAN_OPTIONS", "")  # as hydra()
        e["ASAN_OPTIONS"] = asan + (":" if asan else "") + "detect_leaks=0"
        pre = [E["CG_CLI"], "run", "--report", around, "--"] if around else []
        return run(pre + cmd + args, e)
    return launch


def job_counts(path):
    """Each call's count summed over the processes of one report (callguard run around the launcher), and the
    ranks of the processes that made MPI calls."""
    with open(path) as f:
        procs = json.load(f)["processes"]
    total, ranks = {}, []
    for p in procs:
        calls = {s["name"]: s["calls"] for s in p["sites"] if s["calls"]}
        if calls:
            ranks.append(p.get("rank"))
        for name, n in calls.items():
            total[name] = total.get(name, 0) + n
    return total, sorted(r for r in ranks if r is not None)


def libraries_from_pypi_run_large_count_as_plainly_around_and_inside_the_launcher():
    """large_count.c (50 rounds) on the other MPI libraries users get from PyPI: Open MPI 5.0.11 (its mpicc, its
    mpirun: MPI 3.1, so MPI_Send/MPI_Recv) and Intel MPI 2021.18.1 (its Hydra mpiexec) through MPICH's ABI
    (libmpi.so.12) and the standard ABI (libmpi_abi.so.1). Inside the launcher (`callguard run --report DIR/`
    per rank) and around it (`callguard run --report r.json -- mpiexec ...`): the same output as plainly, 100
    sends, receives and MPI_Allreduce counted over the job, the reports naming ranks 0 and 1 (Open MPI's
    OMPI_COMM_WORLD_RANK, Hydra's PMI_RANK); under CALLGUARD_MPI_THREADS=serialize the plain MULTIPLE run's
    checksum, the library initialized SERIALIZED. (Before, the program on Intel's libmpi.so.12 died of SIGSEGV
    under callguard run: the IFUNC resolvers of the layer, called before it was relocated, docs/configuration.md;
    and the thread fix refused Intel MPI by name.) On Intel's libmpi.so.12 glibc prints its "Relink" lines on
    stderr: only stdout is compared."""
    runs = []
    if OMPI5:
        runs.append(("Open MPI 5", launcher(OMPI5, "mpirun"), E["CG_OMPI5_LARGE_COUNT"], "MPI_Send"))
    if IMPI:
        runs += [("Intel MPI libmpi.so.12", launcher(IMPI, "mpiexec"), E["CG_IMPI_LARGE_COUNT"], "MPI_Send_c"),
                 ("Intel MPI libmpi_abi.so.1", launcher(IMPI, "mpiexec"), E["CG_IMPI_LARGE_COUNT_ABI"], "MPI_Send_c")]
    if not runs:
        return 77  # neither build-venv-ompi5 nor build-venv-impi (scripts/setup-venv.sh)
    for name, launch, prog, send in runs:
        args = [prog, "multiple", "50"]
        plain = launch(args)
        check(plain[0] == 0 and "told multiple library multiple checksum" in plain[1], "%s: plain" % name, plain)
        want = {send: 100, send.replace("Send", "Recv"): 100, "MPI_Allreduce": 100}
        tag = re.sub(r"\W", "", name)
        folder = os.path.join(TMP, "inside-" + tag)
        inside = launch(guarded(folder) + args)
        check(inside[0] == 0 and inside[1] == plain[1], "%s: inside, the same output:\n%s-- plain:\n%s"
              % (name, inside[1], plain[1]), inside)
        got = counts(folder)
        check(all(got.get(k) == v for k, v in want.items()), "%s: inside, counted %s" % (name, got))
        rep = os.path.join(TMP, "around-%s.json" % tag)
        around = launch(args, around=rep)
        check(around[0] == 0 and around[1] == plain[1], "%s: around, the same output:\n%s-- plain:\n%s"
              % (name, around[1], plain[1]), around)
        got, ranks = job_counts(rep)
        check(all(got.get(k) == v for k, v in want.items()) and ranks == [0, 1],
              "%s: around, counted %s, ranks %s" % (name, got, ranks))
        fixed = launch(guarded(os.path.join(TMP, "fix-" + tag)) + args, {"CALLGUARD_MPI_THREADS": "serialize"})
        checksum = re.search(r"checksum \d+\n", plain[1]).group(0)
        check(fixed[0] == 0 and "told multiple library serialized " + checksum in fixed[1],
              "%s: CALLGUARD_MPI_THREADS=serialize" % name, fixed)
    if not (OMPI5 and IMPI):
        return 77  # one of build-venv-ompi5 and build-venv-impi missing (scripts/setup-venv.sh)


# Whether a program sees MPI 4's functions: by a weak reference (as mpi4py 4's extensions choose MPI_Send_c or
# MPI_Send) and by a look-up in the global scope, after MPI_Init.
WEAK_PROGRAM = r"""
#include <dlfcn.h>
#include <stdio.h>
int MPI_Init(int *, char ***);
int MPI_Finalize(void);
extern int MPI_Send_c() __attribute__((weak));
extern int MPI_Session_init() __attribute__((weak));
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    dlerror();
    void *c = dlsym(RTLD_DEFAULT, "MPI_Send_c");
    const char *e = dlerror();
    printf("weak MPI_Send_c %d MPI_Session_init %d dlsym MPI_Send_c %d%s MPI_Send %d\n", MPI_Send_c != 0,
           MPI_Session_init != 0, c != 0, c ? "" : e ? " (dlerror)" : " (no dlerror)", dlsym(RTLD_DEFAULT, "MPI_Send") != 0);
    MPI_Finalize();
    return 0;
}
"""


def mpi4_functions_are_seen_as_plainly_by_weak_references_and_look_ups():
    """A program's weak references to MPI_Send_c and MPI_Session_init, and its dlsym of MPI_Send_c, find them
    under `callguard run` exactly where they are plainly: not on Open MPI 4.1, which lacks them (dlsym failing
    with a dlerror() message), and on PyPI's MPICH 5 (both ABIs). (Exported as plain functions, the layer's wrappers made mpi4py 4 on Open MPI 4.1 call
    MPI_Type_get_extent_c, whose real function does not exist: MPI_ERR_INTERN in its first Allreduce.)"""
    src = os.path.join(TMP, "weak.c")
    with open(src, "w") as f:
        f.write(WEAK_PROGRAM)
    builds = [("Open MPI", [E["CG_CC"], "-I", E["CG_MPI_INCLUDE"], src, E["CG_MPI_LIBRARY"], "-ldl"], None)]
    if MPICH5:
        for cc in ("mpicc", "mpicc_abi"):
            builds.append((cc, [os.path.join(MPICH5, "bin", cc), src, "-ldl"], cc))
    for name, cmd, pip in builds:
        prog = os.path.join(TMP, "weak-" + name.replace(" ", ""))
        c = subprocess.run(cmd + ["-o", prog], capture_output=True, text=True)
        check(c.returncode == 0, "%s: builds" % name, (c.returncode, c.stdout, c.stderr))
        launch = (lambda a, env=None: hydra(a, env)) if pip else (lambda a, env=None: run(MPIRUN[:-1] + ["1"] + a, env))
        plain = launch([prog])
        check(plain[0] == 0 and plain[1].startswith("weak "), "%s: plain" % name, plain)
        g = launch([E["CG_CLI"], "run", "--api", "mpi", "--", prog])
        check(g[0] == 0 and g[1] == plain[1], "%s: the same answers:\n%s-- plain:\n%s" % (name, g[1], plain[1]), g)
        has = "0" if name == "Open MPI" else "1"
        check(plain[1].split("\n")[0] == "weak MPI_Send_c %s MPI_Session_init %s dlsym MPI_Send_c %s MPI_Send 1" %
              (has, has, "0 (dlerror)" if has == "0" else "1"), "%s: %s" % (name, plain[1]))


if __name__ == "__main__":
    main()
