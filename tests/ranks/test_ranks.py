"""Tests of distributed jobs. Run: test_ranks.py TEST CALLGUARD PROG MPI_PROG MPIRUN TOYLAYER MPILAYER.

Each test is a function of no arguments named for the behaviour it checks.
PROG is tests/cli's program (`PROG calls N` makes N toyAdd calls); MPI_PROG
(tests/ranks/mpi_ranks.c) makes 10 + R toyAdd calls on rank R, and one
call each of MPI_Init, MPI_Comm_rank, MPI_Comm_size, MPI_Allreduce and
MPI_Finalize, counted too where the MPI layer was built (MPILAYER, else
"none"); both are linked against the toy library. Jobs run under Debian's Open MPI `mpirun`
on this one host, each in a session of its own, killed as a group when it
runs too long; every test checks that none of its processes is left. Many
hosts are simulated by reports that carry different host names.
"""
import glob
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)

if listing():
    CG = PROG = MPI_PROG = MPIRUN = TOYLAYER = MPILAYER = TMP = HOST = None
else:
    CG, PROG, MPI_PROG, MPIRUN, TOYLAYER, MPILAYER = sys.argv[2:8]
    TMP = tempfile.mkdtemp(prefix="cgranks-")
    HOST = socket.gethostname()
    # A job's layers: the toy layer, and the MPI layer where there is one.
    JOB_LAYERS = ["--layer", TOYLAYER] + (["--layer", MPILAYER] if MPILAYER != "none" else [])

# The launchers' variables, none of them inherited from whatever runs the tests.
LAUNCHER_VARS = ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_RANK",
                 "MV2_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "MPI_LOCALRANKID", "PMIX_RANK", "PALS_RANKID",
                 "PALS_LOCAL_RANKID", "FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                 "SLURM_PROCID", "SLURM_LOCALID"]


def environment(env=None):
    e = {k: v for k, v in os.environ.items() if k not in LAUNCHER_VARS and not k.startswith("CALLGUARD_")}
    e.update(env or {})
    return e


def leftovers(marker=None):
    """Processes still running whose command line holds marker (this test's folder), and any orted."""
    marker = marker or TMP
    left = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in cmd or "orted" in cmd.split(" ")[0]:
            left.append("%s: %s" % (pid, cmd))
    return left


def run(args, env=None, timeout=90):
    """Runs args in a session of its own; on a timeout the whole group is killed."""
    if MPIRUN in args:
        # Open MPI's own allocations outlive MPI_Finalize in components it
        # has unloaded: not ours to report in a sanitizer build.
        asan = os.environ.get("ASAN_OPTIONS", "")
        env = {**(env or {}), "ASAN_OPTIONS": asan + (":" if asan else "") + "detect_leaks=0"}
    p = subprocess.Popen(args, env=environment(env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise AssertionError("timed out: %s" % " ".join(args))
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)  # whatever the job left behind
        except ProcessLookupError:
            pass
    return subprocess.CompletedProcess(args, p.returncode, out, err)


def need_mpi(what="Open MPI's mpirun and mpicc"):
    if MPI_PROG == "none" or MPIRUN == "none":
        print("no %s here: skipped" % what)
        sys.exit(77)


def mpirun(n, *cmd):
    return [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-n", str(n), *cmd]


MPI_CALLS = ["MPI_Init", "MPI_Comm_rank", "MPI_Comm_size", "MPI_Allreduce", "MPI_Finalize"]


def calls(proc, name="toyAdd"):
    return sum(s["calls"] for s in proc["sites"] if s["name"] == name)


def plain_job(n):
    r = run(mpirun(n, MPI_PROG, TMP))
    check(r.returncode == 0, "plain job: %s" % r.stderr)
    return sorted(r.stdout.splitlines())


def check_rank_processes(procs, n, what):
    """One process per rank 0..n-1, on this host, each with 10 + rank toyAdd calls and one of each
    MPI call (with the MPI layer)."""
    ranks = sorted(p["rank"] for p in procs)
    check(ranks == list(range(n)), "%s: ranks %s" % (what, ranks))
    for p in procs:
        check(p["host"] == HOST and p["local_rank"] == p["rank"] and p["rank_variable"] == "OMPI_COMM_WORLD_RANK",
              "%s: rank %d: host %r local %r from %r" % (what, p["rank"], p["host"], p["local_rank"],
                                                         p["rank_variable"]))
        check(calls(p) == 10 + p["rank"], "%s: rank %d made %d calls" % (what, p["rank"], calls(p)))
        mpi = {name: calls(p, name) for name in MPI_CALLS}
        check(MPILAYER == "none" or mpi == {name: 1 for name in MPI_CALLS},
              "%s: rank %d's MPI calls: %s" % (what, p["rank"], mpi))


def per_rank(n):
    """What the view across n ranks says of toyAdd: rank r made 10 + r calls."""
    v = [10 + r for r in range(n)]
    return {"min": v[0], "median": (v[(n - 1) // 2] + v[n // 2]) // 2, "max": v[-1], "max_rank": n - 1,
            "max_host": HOST}


def run_around_mpirun_reports_every_rank_with_its_calls():
    """`callguard run --report r.json -- mpirun -n N ./app` (N = 2, 4): every rank with its rank, host and
    exact counts, the view across ranks, and the program's output unchanged."""
    need_mpi()
    for n in (2, 4):
        plain = plain_job(n)
        path = os.path.join(TMP, "r%d.json" % n)
        r = run([CG, "run", *JOB_LAYERS, "--report", path, "--", *mpirun(n, MPI_PROG, TMP)])
        check(r.returncode == 0, "around mpirun -n %d" % n, r)
        check(sorted(r.stdout.splitlines()) == plain, "output changed:\n%s\nplain:\n%s" % (r.stdout, plain))
        report = json.load(open(path))
        ranked = [p for p in report["processes"] if p["rank"] is not None]
        check_rank_processes(ranked, n, "around mpirun -n %d" % n)
        check(all(p["rank"] is None and p["local_rank"] is None for p in report["processes"] if p not in ranked),
              "mpirun itself has no rank")
        toy = {s["name"]: s for s in report["across_ranks"]["sites"]}["toyAdd"]
        check(report["across_ranks"]["ranks"] == n and toy["calls"] == sum(10 + r for r in range(n)),
              "across ranks: %s" % report["across_ranks"])
        check(toy["calls_per_rank"] == per_rank(n), "per rank: %s" % toy["calls_per_rank"])
        if MPILAYER != "none":
            allreduce = {s["name"]: s for s in report["across_ranks"]["sites"]}["MPI_Allreduce"]
            check(allreduce["ranks"] == n and allreduce["calls"] == n and
                  (allreduce["calls_per_rank"]["min"], allreduce["calls_per_rank"]["max"]) == (1, 1),
                  "MPI_Allreduce across ranks: %s" % allreduce)
        check(not leftovers(), "left running: %s" % leftovers())


def run_inside_mpirun_writes_one_report_per_rank_named_by_host_rank_and_pid():
    """`mpirun -n 4 callguard run --report out/ -- ./app`: a file per rank, merged by `callguard report`."""
    need_mpi()
    plain = plain_job(4)
    out = os.path.join(TMP, "out") + "/"
    r = run(mpirun(4, CG, "run", *JOB_LAYERS, "--report", out, "--", MPI_PROG, TMP))
    check(r.returncode == 0, r.stderr)
    check(sorted(r.stdout.splitlines()) == plain, "output changed:\n%s\nplain:\n%s" % (r.stdout, plain))
    files = sorted(glob.glob(out + "*.json"))
    check(len(files) == 4, "files: %s" % os.listdir(out))
    procs = []
    for f in files:
        report = json.load(open(f))
        check(len(report["processes"]) == 1, "%s: %d processes" % (f, len(report["processes"])))
        p = report["processes"][0]
        name = "callguard-%s-rank%d-pid%d.json" % (HOST, p["rank"], p["pid"])
        check(os.path.basename(f) == name, "%s is not named %s" % (f, name))
        procs.append(p)
    check_rank_processes(procs, 4, "inside mpirun")
    r = run([CG, "report", *files])
    check(r.returncode == 0 and "across 4 ranks on 1 host" in r.stdout, "the merged table", r)
    merged = os.path.join(TMP, "merged.json")
    r = run([CG, "report", "--json", merged, *files])
    check(r.returncode == 0 and not r.stdout, "the merged report", r)
    toy = {s["name"]: s for s in json.load(open(merged))["across_ranks"]["sites"]}["toyAdd"]
    check(toy["calls"] == 46 and toy["calls_per_rank"] == per_rank(4), "merged: %s" % toy)
    check(not leftovers(), "left running: %s" % leftovers())


def run_into_one_report_folder_twice_keeps_every_file():
    """Two jobs of 2 ranks into one folder: four files, none of the first job's replaced."""
    need_mpi()
    out = os.path.join(TMP, "twice") + "/"
    job = mpirun(2, CG, "run", *JOB_LAYERS, "--report", out, "--", MPI_PROG, TMP)
    check(run(job).returncode == 0, "first job")
    first = {f: open(f).read() for f in glob.glob(out + "*")}
    check(len(first) == 2, "first job's files: %s" % sorted(first))
    check(run(job).returncode == 0, "second job")
    files = glob.glob(out + "*")
    check(len(files) == 4, "files after two jobs: %s" % sorted(files))
    check(all(open(f).read() == text for f, text in first.items()), "a file of the first job was replaced")
    check(not leftovers(), "left running: %s" % leftovers())


def srun_style_rank_from_slurm_names_the_report():
    """`srun callguard run --report out/` (SLURM_PROCID set by hand): the file and the process say rank 5."""
    out = os.path.join(TMP, "slurm") + "/"
    r = run([CG, "run", "--layer", TOYLAYER, "--report", out, "--", PROG, "calls", "3"],
            env={"SLURM_PROCID": "5", "SLURM_LOCALID": "1"})
    check(r.returncode == 0, r.stderr)
    files = os.listdir(out)
    check(len(files) == 1 and files[0].startswith("callguard-%s-rank5-pid" % HOST), "files: %s" % files)
    p = json.load(open(out + files[0]))["processes"][0]
    check((p["rank"], p["local_rank"], p["rank_variable"]) == (5, 1, "SLURM_PROCID"), "process: %s" % p)
    check(files[0] == "callguard-%s-rank5-pid%d.json" % (HOST, p["pid"]), "named by its pid: %s" % files)


def rank_of(env):
    path = os.path.join(TMP, "env%d.json" % len(os.listdir(TMP)))
    r = run([CG, "run", "--layer", TOYLAYER, "--report", path, "--", PROG, "calls", "2"], env=env)
    check(r.returncode == 0, r.stderr)
    p = json.load(open(path))["processes"][0]
    return p["rank"], p["local_rank"], p["rank_variable"]


def each_launchers_variables_give_rank_and_local_rank():
    """Each launcher's variables, set by hand on a plain program; the innermost launcher wins."""
    for rank_var, local_var, extra in [("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", {}),
                                       ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", {}),
                                       ("PMI_RANK", "MPI_LOCALRANKID", {}),
                                       ("PALS_RANKID", "PALS_LOCAL_RANKID", {}),
                                       ("FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", {}),
                                       ("RANK", "LOCAL_RANK", {"WORLD_SIZE": "16"}),
                                       ("SLURM_PROCID", "SLURM_LOCALID", {})]:
        got = rank_of({rank_var: "12", local_var: "3", **extra})
        check(got == (12, 3, rank_var), "%s: %s" % (rank_var, got))
    check(rank_of({"PMIX_RANK": "7"}) == (7, None, "PMIX_RANK"), "PMIx names no local rank")
    check(rank_of({"RANK": "4", "LOCAL_RANK": "0"}) == (None, None, None), "RANK without WORLD_SIZE is no launcher's")
    check(rank_of({"OMPI_COMM_WORLD_RANK": "2", "SLURM_PROCID": "0", "SLURM_LOCALID": "0"}) ==
          (2, None, "OMPI_COMM_WORLD_RANK"), "mpirun inside a Slurm allocation: Open MPI's rank")
    for bad in ["", "3a", "-1", "+1", " 1", "1234567890", "0x10"]:
        check(rank_of({"SLURM_PROCID": bad}) == (None, None, None), "SLURM_PROCID=%r is no rank" % bad)
    check(rank_of({"SLURM_PROCID": "999999999", "SLURM_LOCALID": "x"}) == (999999999, None, "SLURM_PROCID"),
          "9 digits are a rank; a bad local rank is not known")


def table_names_each_processs_rank_and_host():
    """The text table's process line says rank and local rank, from the run and from a saved report."""
    r = run([CG, "run", "--layer", TOYLAYER, "--report", "-", "--", PROG, "calls", "2"],
            env={"OMPI_COMM_WORLD_RANK": "3", "OMPI_COMM_WORLD_LOCAL_RANK": "1"})
    line = [l for l in r.stderr.splitlines() if l.startswith("callguard: pid")]
    check(len(line) == 1 and (" on %s, rank 3 (local 1) (exit 0)" % HOST) in line[0], r.stderr)
    path = os.path.join(TMP, "table.json")
    run([CG, "run", "--layer", TOYLAYER, "--report", path, "--", PROG, "calls", "2"], env={"PMIX_RANK": "8"})
    r = run([CG, "report", path])
    check(r.returncode == 0 and (" on %s, rank 8 (exit 0)" % HOST) in r.stdout, r.stdout + r.stderr)


def report_folder_that_cannot_be_written_is_refused_before_the_program():
    """--report DIR/ whose parent is missing, or that is a file: status 2, one line saying it is a report
    folder and why it cannot be one, the program not run."""
    marker = os.path.join(TMP, "ran")
    for folder, why in [(os.path.join(TMP, "no", "such") + "/", "No such file or directory"),
                        (os.path.join(TMP, "a-file") + "/", "Not a directory")]:
        open(os.path.join(TMP, "a-file"), "w").close()
        r = run([CG, "run", "--layer", TOYLAYER, "--report", folder, "--", PROG, "touch", marker])
        check(r.returncode == 2 and len(r.stderr.splitlines()) == 1 and why in r.stderr and folder in r.stderr and
              "cannot create a report in" in r.stderr and "one report per process" in r.stderr,
              "%s: %d %s" % (folder, r.returncode, r.stderr))
        check(not os.path.exists(marker), "the program ran")


def process(pid, host, rank, sites, stalls=()):
    return {"pid": pid, "ppid": 1, "host": host, "rank": rank, "local_rank": None, "command": "./app",
            "exit": {"state": "exited", "status": 0}, "stalls": list(stalls),
            "sites": [{"api": "toy", "name": n, "calls": c, "total_ns": ns, "max_ns": ns,
                       "peak_inside": pk, "peak_waiting": 0} for n, c, ns, pk in sites]}


def write_report(name, procs):
    path = os.path.join(TMP, name)
    with open(path, "w") as f:
        json.dump({"schema": "callguard-report", "version": 1, "processes": procs}, f)
    return path


def report_merges_ranks_of_many_hosts_min_median_max_and_where_the_max_was():
    """Reports of 5 ranks on 3 hosts (crafted files: many nodes simulated): per entry point, the sums,
    min / median / max over ranks (a rank that never called it counts 0) and the rank and host of the max;
    a rank of two processes counts once, their sum; the peak and the worst stall keep their rank and host."""
    stall = {"api": "toy", "name": "toyAdd", "ns": 900000000, "call_ns": 900000000, "lock_wait_ns": 0,
             "entered_ns": 1, "tid": 9, "thread": "t", "runtime": "cpython", "python": None}
    files = [write_report("m0.json", [process(100, "node-a", 0, [("toyAdd", 10, 1000, 1), ("toyWait", 1, 5, 2)])]),
             write_report("m1.json", [process(100, "node-b", 1, [("toyAdd", 40, 9000, 1)]),
                                      process(101, "node-b", 3, [("toyAdd", 20, 2000, 4)], [stall])]),
             write_report("m2.json", [process(100, "node-c", 2, [("toyAdd", 25, 3000, 1)]),
                                      process(104, "node-c", 2, [("toyAdd", 5, 100, 1)]),
                                      process(102, "node-c", 4, [("toyAdd", 1, 10, 1)]),
                                      process(103, "node-c", None, [("toyAdd", 500, 50, 1)])])]
    out = os.path.join(TMP, "merged.json")
    r = run([CG, "report", "--json", out, *files])
    check(r.returncode == 0, "merged", r)
    across = json.load(open(out))["across_ranks"]
    check((across["ranks"], across["hosts"], across["processes_without_rank"]) == (5, 3, 1), "across: %s" % across)
    sites = {s["name"]: s for s in across["sites"]}
    add, wait = sites["toyAdd"], sites["toyWait"]
    check((add["ranks"], add["calls"], add["total_ns"]) == (5, 101, 15110), "toyAdd sums: %s" % add)
    check(add["calls_per_rank"] == {"min": 1, "median": 20, "max": 40, "max_rank": 1, "max_host": "node-b"},
          "toyAdd calls per rank: %s" % add["calls_per_rank"])
    check(add["ns_per_rank"] == {"min": 10, "median": 2000, "max": 9000, "max_rank": 1, "max_host": "node-b"},
          "toyAdd ns per rank: %s" % add["ns_per_rank"])
    check(add["peak_inside"] == {"threads": 4, "rank": 3, "host": "node-b"}, "peak: %s" % add["peak_inside"])
    check(add["worst_stall"] == {"ns": 900000000, "rank": 3, "host": "node-b"}, "stall: %s" % add["worst_stall"])
    check(wait["ranks"] == 1 and wait["calls_per_rank"] == {"min": 0, "median": 0, "max": 1, "max_rank": 0,
                                                            "max_host": "node-a"},
          "toyWait, called by rank 0 alone: %s" % wait)
    check(wait["worst_stall"] is None, "no stall of toyWait")
    r = run([CG, "report", *files])
    # In words, only where the ranks differ: each rank made another count of toyAdd, rank 0 alone toyWait.
    check(r.returncode == 0 and "across 5 ranks on 3 hosts (1 process without a rank left out):\n" in r.stdout and
          "\n  toyAdd: 1 to 40 calls a rank, no count most ranks made (rank 1 made the most); 0.015 ms in all; 4\n"
          in r.stdout and "\n  toyWait: rank 0 made 1 call, the others 0; 0.000 ms in all;" in r.stdout and
          max(len(l) for l in r.stdout.splitlines()) <= 100,
          "the view across ranks, each line within 100 columns", r)
    r = run([CG, "report", "--all", *files])  # every column: one row an entry point
    check(r.returncode == 0 and "across 5 ranks on 3 hosts" in r.stdout, "the table", r)
    lines = r.stdout.splitlines()
    across = [k for k, l in enumerate(lines) if l.startswith("callguard: across ")][0]
    row = [l.split() for l in lines[across:] if l.split()[1:2] == ["toyAdd"]][0]
    check(row[2:4] == ["5", "101"] and row[4:8] == ["1", "20", "40", "1@node-b"], "toyAdd across ranks: %s" % row)
    check("peak 4 threads inside at rank 3 on node-b" in r.stdout and "worst stall 900.000 ms at rank 3 on node-b"
          in r.stdout, "peak and stall", r)


def report_without_ranks_has_no_view_across_ranks():
    """Processes no launcher started: no "across_ranks" in the merged JSON, no table across ranks."""
    files = [write_report("n0.json", [process(1, "a", None, [("toyAdd", 3, 30, 1)])]),
             write_report("n1.json", [process(2, "b", None, [("toyAdd", 4, 40, 1)])])]
    out = os.path.join(TMP, "none.json")
    r = run([CG, "report", "--json", out, *files])
    check(r.returncode == 0 and "across_ranks" not in json.load(open(out)), "no view across ranks", r)
    r = run([CG, "report", *files])
    check(r.returncode == 0 and "across" not in r.stdout, "no table across ranks", r)


def collective(pid, rank, calls, in_flight=False):
    """A rank's report with MPI_Allreduce marked collective, and a call in flight if asked."""
    p = process(pid, "node-%d" % (rank % 2), rank, [("MPI_Allreduce", calls, 100, 1)])
    p["sites"][0].update(api="mpi", policy={"transition": "always", "blocking": True, "serialize": None,
                                            "scope": "process", "collective": True})
    if in_flight:
        p["exit"] = {"state": "signaled", "signal": 15}
        p["in_flight"] = [{"api": "mpi", "name": "MPI_Allreduce", "tid": pid, "thread": "app", "state": "inside",
                           "entered_ns": 5}]
    return p


def collective_counts_name_the_ranks_out_of_step_when_the_job_ended_inside_calls():
    """6 ranks of a job, MPI_Allreduce a collective: ranks 2 and 4 made 41 and 43 calls, the others 42.
    JSON's across_ranks names them, lowest rank first, with the count most ranks made; the summary says
    it only when the job ended with calls in flight (a finished job's ranks may use communicators of
    their own: no alarm then). Where two counts are equally common no rank is named odd: all are listed."""
    counts = [42, 42, 41, 42, 43, 42]
    for stuck in (False, True):
        procs = [collective(100 + r, r, c, in_flight=stuck and r == 2) for r, c in enumerate(counts)]
        path = write_report("coll-%d.json" % stuck, procs)
        out = os.path.join(TMP, "coll-merged-%d.json" % stuck)
        r = run([CG, "report", "--json", out, path])
        check(r.returncode == 0, "merged", r)
        site = [x for x in json.load(open(out))["across_ranks"]["sites"] if x["name"] == "MPI_Allreduce"][0]
        check(site["collective"] and site["usual_calls"] == 42 and site["ranks_out_of_step"] == 2 and
              [(o["rank"], o["calls"], o["host"]) for o in site["out_of_step"]] == [(2, 41, "node-0"),
                                                                                    (4, 43, "node-0")],
              "across_ranks: %s" % site)
        r = run([CG, "report", path])
        said = "ranks 2, 4 made 41, 43 MPI_Allreduce calls, most ranks 42 (a collective" in r.stdout
        check(r.returncode == 0 and said == stuck,
              "the summary %s it:\n%s" % ("says" if stuck else "keeps", r.stdout))
    tie = write_report("coll-tie.json",
                       [collective(200 + r, r, c, in_flight=r == 0) for r, c in enumerate([2, 1, 2, 1])])
    out = os.path.join(TMP, "coll-tie-merged.json")
    r = run([CG, "report", "--json", out, tie])
    site = [x for x in json.load(open(out))["across_ranks"]["sites"] if x["name"] == "MPI_Allreduce"][0]
    check(site["usual_calls"] is None and [(o["rank"], o["calls"]) for o in site["out_of_step"]] ==
          [(0, 2), (1, 1), (2, 2), (3, 1)], "a tie: no usual count, every rank: %s" % site)
    r = run([CG, "report", tie])
    check("ranks 0, 1, 2, 3 made 2, 1, 2, 1 MPI_Allreduce calls, no count most ranks made" in r.stdout,
          "a tie: no rank named odd\n" + r.stdout)


def run_inside_mpirun_traces_merge_into_one_timeline_by_rank():
    """`mpirun -n 2 callguard run --trace t/ -- ./app` then `callguard trace t/`: a file per rank named by
    host, rank and pid; merged, a process group "HOST rank R pid P" per rank in rank order with its
    10 + R toyAdd calls, and (with the MPI layer) the ranks' MPI_Allreduce calls overlapping in time, as a
    collective's must, and each rank's MPI_Comm_rank showing the rank it returned."""
    need_mpi()
    out = os.path.join(TMP, "traces") + "/"
    r = run(mpirun(2, CG, "run", *JOB_LAYERS, "--trace", out, "--", MPI_PROG, TMP))
    check(r.returncode == 0, r.stderr)
    files = sorted(glob.glob(out + "*.json"))
    check([os.path.basename(f).split("-pid")[0] for f in files] == ["trace-%s-rank%d" % (HOST, k) for k in (0, 1)],
          "files: %s" % files)
    job = os.path.join(TMP, "job.json")
    r = run([CG, "trace", out, "-o", job])
    check(r.returncode == 0 and "2 processes on 1 host" in r.stderr, r.stderr)
    trace = json.load(open(job))
    meta = [e for e in trace["traceEvents"] if e["ph"] == "M"]
    names = {e["pid"]: e["args"]["name"] for e in meta if e["name"] == "process_name"}
    order = {e["pid"]: e["args"]["sort_index"] for e in meta if e["name"] == "process_sort_index"}
    ranks = {}
    for pid, name in names.items():
        words = name.split()
        check(len(words) == 5 and words[0] == HOST and words[1] == "rank" and words[3:] == ["pid", str(pid)],
              "a group named HOST rank R pid P: %r" % name)
        ranks[int(words[2])] = pid
    check(sorted(ranks) == [0, 1] and order[ranks[0]] < order[ranks[1]], "rank order: %s %s" % (names, order))
    for rank, pid in ranks.items():
        n = len([e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and e["name"] == "toyAdd"])
        check(n == 10 + rank, "rank %d: %d toyAdd events" % (rank, n))
    if MPILAYER != "none":
        ar = [e for e in trace["traceEvents"] if e["ph"] == "X" and e["name"] == "MPI_Allreduce"]
        check(len(ar) == 2 and max(e["ts"] for e in ar) <= min(e["ts"] + e["dur"] for e in ar),
              "the ranks' MPI_Allreduce calls overlap: %s" % ar)
        # MPI's result type is C's int: a count is a number, not a result's name (it was MPI_ERR_BUFFER for 1)
        check(all(e["args"]["count"] == 1 and e["args"]["result"] == "MPI_SUCCESS" for e in ar), "counts: %s" % ar)
        # apis/mpi.ini's outputs: each rank's MPI_Comm_rank shows the rank it returned, not a pointer
        got = {e["pid"]: e["args"].get("rank") for e in trace["traceEvents"] if e["name"] == "MPI_Comm_rank"}
        check(got == {pid: rank for rank, pid in ranks.items()}, "MPI_Comm_rank's rank: %s %s" % (got, ranks))
    check(not leftovers(), "left running: %s" % leftovers())


if __name__ == "__main__":
    main()
