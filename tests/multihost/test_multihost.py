"""Tests of an MPI job on two real hosts. Run: test_multihost.py TEST CALLGUARD PROG MPIRUN (or --list).

The hosts are network and UTS namespaces joined by a veth pair (hosts.py); Debian's Open MPI runs
between them with its TCP transport, one `callguard run --report DIR/` a rank, PROG being twohosts.c.
DIR is on the file system both hosts share, as a cluster's shared folder would be. Each test is a
function named for the behaviour it checks; it is skipped (77) where the hosts cannot be made, and it
leaves no process, namespace or veth behind, whichever way it ends.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from cgtest import check, listing, main  # noqa: E402  (tests/cgtest.py)
import hosts  # noqa: E402  (tests/multihost/hosts.py)

if listing():
    CG = PROG = MPIRUN = TMP = None
else:
    CG, PROG, MPIRUN = sys.argv[2:5]
    TMP = tempfile.mkdtemp(prefix="cgmultihost-")
# The launchers' variables, none inherited from whatever runs the tests (tests/ranks does the same).
LAUNCHER_VARS = ["OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_RANK",
                 "MV2_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "MPI_LOCALRANKID", "PMIX_RANK", "PALS_RANKID",
                 "PALS_LOCAL_RANKID", "FLUX_TASK_RANK", "FLUX_TASK_LOCAL_ID", "RANK", "LOCAL_RANK", "WORLD_SIZE",
                 "SLURM_PROCID", "SLURM_LOCALID"]
ROUNDS = 7  # MPI_Allreduce on MPI_COMM_WORLD; rank R makes R more on MPI_COMM_SELF
# Every wait of a test ends by then, so that the test (hosts made and removed) takes under a minute.
DEADLINE = time.monotonic() + 45


def remaining(seconds):
    return max(1.0, min(seconds, DEADLINE - time.monotonic()))


def environment(two):
    e = {k: v for k, v in os.environ.items()
         if k not in LAUNCHER_VARS and not k.startswith(("CALLGUARD_", "OMPI_", "PMIX_"))}
    # Open MPI's own allocations outlive MPI_Finalize in components it has unloaded: not ours to report in
    # a sanitizer build.
    asan = e.get("ASAN_OPTIONS", "")
    e["ASAN_OPTIONS"] = asan + (":" if asan else "") + "detect_leaks=0"
    e["CG_MULTIHOST_HOSTS"] = two.hosts_variable()
    return e


def need_mpi(what="Open MPI (mpirun, mpi.h) or the MPI layer"):
    if "none" in (PROG, MPIRUN):
        print("no %s in this build: skipped" % what)
        sys.exit(77)


class Job:
    """mpirun on host A with n ranks, per_host a host, each rank `callguard run --report DIR/ -- PROG ARGS`.
    Its stderr is read as it comes (lines), so a test can wait for what a rank says."""

    def __init__(self, two, n, per_host, report, *args, options=()):
        cmd = [MPIRUN, "--allow-run-as-root", "-n", str(n), "--host", two.host_list(per_host), *hosts.mca(),
               CG, "run", "--api", "mpi", "--report", report, *options, "--", PROG, *args]
        self.p = subprocess.Popen(two.on_a(cmd), env=environment(two), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        self.lines, self.out = [], []
        self.readers = [threading.Thread(target=self._read, args=(f, to), daemon=True)
                        for f, to in ((self.p.stderr, self.lines), (self.p.stdout, self.out))]
        for t in self.readers:
            t.start()

    @staticmethod
    def _read(f, to):
        for line in f:
            to.append(line)

    def wait(self, seconds):
        """The job's exit status, or None when it still ran after `seconds` (it is left to TwoHosts)."""
        try:
            status = self.p.wait(timeout=remaining(seconds))
        except subprocess.TimeoutExpired:
            return None
        for t in self.readers:
            t.join(timeout=5)
        return status

    def said(self):
        return "-- stdout:\n%s-- stderr:\n%s" % ("".join(self.out), "".join(self.lines))


def reports(folder):
    """The folder's reports: {rank: (file name, the one process)}; each file holds one process."""
    got = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as f:
            procs = json.load(f)["processes"]
        check(len(procs) == 1, "%s: %d processes" % (name, len(procs)))
        got[procs[0]["rank"]] = (name, procs[0])
    return got


def calls(proc, name):
    return sum(s["calls"] for s in proc["sites"] if s["name"] == name)


def cli(*args):
    r = subprocess.run([CG, *args], capture_output=True, text=True, timeout=30, env={**os.environ, "COLUMNS": "100"})
    check(r.returncode == 0, "callguard %s" % " ".join(args), r)
    return r.stdout


def check_job(two, n, per_host, folder):
    """The reports of a `count` job: a file per rank named by its host, rank and pid; each process on the
    host its rank was placed on, with its counts; and the merged view, as text and as JSON."""
    got = reports(folder)
    check(sorted(got) == list(range(n)), "a report per rank 0..%d: %s" % (n - 1, sorted(os.listdir(folder))))
    host_of = [two.names[r // per_host] for r in range(n)]
    for rank, (name, p) in got.items():
        want = "callguard-%s-rank%d-pid%d.json" % (host_of[rank], rank, p["pid"])
        check(name == want, "rank %d's report is %s, not %s" % (rank, name, want))
        check((p["host"], p["local_rank"]) == (host_of[rank], rank % per_host),
              "rank %d: host %r local rank %r; placed on %s" % (rank, p["host"], p["local_rank"], host_of[rank]))
        counted = {k: calls(p, k) for k in ("MPI_Init", "MPI_Allreduce", "MPI_Barrier", "MPI_Finalize")}
        check(counted == {"MPI_Init": 1, "MPI_Allreduce": ROUNDS + rank, "MPI_Barrier": 1, "MPI_Finalize": 1},
              "rank %d counted %s" % (rank, counted))
    text = cli("report", folder + "/")
    check("callguard: %d processes, %d ranks on 2 hosts, all exit 0\n" % (n, n) in text and
          "callguard: across %d ranks on 2 hosts:\n" % n in text, "the merged view's head:\n%s" % text)
    for rank, (name, p) in got.items():
        # The command follows, on the next line where the path makes it too long for 100 columns.
        line = "callguard: pid %d on %s, rank %d (local %d) (exit 0):" % (p["pid"], host_of[rank], rank,
                                                                         rank % per_host)
        check(line in text, "the merged view has %r:\n%s" % (line, text))
    merged = folder + ".json"
    check(cli("report", "--json", merged, folder + "/") == "", "nothing on stdout with --json")
    with open(merged) as f:
        rep = json.load(f)
    procs = sorted((p["rank"], p["host"]) for p in rep["processes"])
    check(procs == list(enumerate(host_of)), "the merged processes: %s" % procs)
    across = rep["across_ranks"]
    allreduce = {s["name"]: s for s in across["sites"]}["MPI_Allreduce"]
    check((across["ranks"], across["hosts"]) == (n, 2), "across: %s ranks, %s hosts" % (across["ranks"],
                                                                                         across["hosts"]))
    check(allreduce["ranks"] == n and allreduce["calls"] == sum(ROUNDS + r for r in range(n)),
          "MPI_Allreduce across ranks: %s" % allreduce)
    per_rank = allreduce["calls_per_rank"]
    check((per_rank["min"], per_rank["max"], per_rank["max_rank"], per_rank["max_host"]) ==
          (ROUNDS, ROUNDS + n - 1, n - 1, host_of[-1]), "MPI_Allreduce calls per rank: %s" % per_rank)
    return text


def mpi_job_on_two_hosts_reports_each_rank_on_its_host():
    """One rank a host, then two: the job's answer is right on every rank (its host name is its
    namespace's), each rank's report is named by and says its own host, rank and pid, its MPI_Allreduce
    count is its own (7 + rank), and `callguard report DIR/` (text and --json) shows both hosts and every
    rank. Each host has only its loopback and its end of the pair, before and after."""
    need_mpi()
    with hosts.TwoHosts() as two:
        before = [hosts.addresses(ns) for ns in two.ns]
        check(before == [["10.233.0.1/30", "127.0.0.1/8"], ["10.233.0.2/30", "127.0.0.1/8"]],
              "each host has only its loopback and its end of the pair: %s" % before)
        for n, per_host in ((2, 1), (4, 2)):
            folder = os.path.join(TMP, "count%d" % n)
            job = Job(two, n, per_host, folder + "/", "count", str(ROUNDS))
            status = job.wait(20)
            check(status == 0, "the job on two hosts (%d ranks) ended with %s\n%s" % (n, status, job.said()))
            check(not two.left(5), "left running after the job: %s" % two.left(0))
            total = ROUNDS * n * (n + 1) // 2
            want = sorted("rank %d of %d on %s: sum %d\n" % (r, n, two.names[r // per_host], total) for r in range(n))
            check(sorted(job.out) == want, "the ranks' lines:\n%s" % job.said())
            text = check_job(two, n, per_host, folder)
            if n == 2 and os.environ.get("CG_MULTIHOST_SHOW"):
                print(text)
        after = [hosts.addresses(ns) for ns in two.ns]
        check(after == before, "the hosts' addresses changed: %s" % after)


def wait_until(cond, seconds):
    deadline = time.monotonic() + remaining(seconds)
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def hung_job_on_two_hosts_ended_by_sigterm_reports_each_ranks_call_in_flight():
    """Rank 1 (host B) waits in an MPI_Recv nobody sends, rank 0 (host A) in MPI_Barrier. Once both
    said, through --hang-ms, that their call has been in flight 300 ms, SIGTERM to mpirun ends the job
    (Open MPI sends SIGTERM to each rank's process group: `callguard run` and the program). Each rank's
    report is still written, says it died of SIGTERM on its own host, and lists its call in flight; the
    merged view names both."""
    need_mpi()
    with hosts.TwoHosts() as two:
        folder = os.path.join(TMP, "hang")
        os.mkdir(folder)  # so that no report at all reads as none, not as no folder
        job = Job(two, 2, 1, folder + "/", "hang", options=("--hang-ms", "300"))
        hung = re.compile(r"callguard: hang: +tid \d+ \"[^\"]*\": mpi (MPI_Recv|MPI_Barrier), ")
        both = wait_until(lambda: {m.group(1) for m in map(hung.match, list(job.lines)) if m} ==
                          {"MPI_Recv", "MPI_Barrier"} or job.p.poll() is not None, 15)
        check(both and job.p.poll() is None, "both ranks hung in their call:\n%s" % job.said())
        job.p.send_signal(signal.SIGTERM)  # ip netns exec, unshare and sh exec'd: this is mpirun
        status = job.wait(15)
        check(status is not None, "mpirun still ran 15 s after SIGTERM\n%s" % job.said())
        check(not two.left(5), "left running 5 s after mpirun ended: %s" % two.left(0))
        got = reports(folder)
        check(sorted(got) == [0, 1], "a report per rank (missing: %s): %s\n%s"
              % (sorted({0, 1} - set(got)), sorted(os.listdir(folder)), job.said()))
        for rank, name in ((0, "MPI_Barrier"), (1, "MPI_Recv")):
            p = got[rank][1]
            check(p["host"] == two.names[rank] and p["exit"] == {"state": "signaled", "signal": 15},
                  "rank %d: host %r, exit %s" % (rank, p["host"], p["exit"]))
            flight = [(c["api"], c["name"], c["state"]) for c in p["in_flight"]]
            check(flight == [("mpi", name, "inside")], "rank %d's calls in flight: %s" % (rank, p["in_flight"]))
        text = cli("report", folder + "/")
        for rank, name in ((0, "MPI_Barrier"), (1, "MPI_Recv")):
            line = "callguard: pid %d on %s, rank %d (local 0) (killed by SIGTERM)" % (got[rank][1]["pid"],
                                                                                       two.names[rank], rank)
            check(line in text and "died of SIGTERM with 1 thread inside %s" % name in text,
                  "the merged view says rank %d died inside %s:\n%s" % (rank, name, text))


def unwind(sig, frame):
    """SIGTERM or SIGHUP to the test unwinds it, so the hosts are removed, rather than killing it."""
    raise SystemExit("test_multihost.py: ended by signal %d" % sig)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, unwind)
    signal.signal(signal.SIGHUP, unwind)
    status = 0
    try:
        main()
    except hosts.Skip as e:  # the hosts cannot be made here
        print("skipped: %s" % e)
        status = 77
    except SystemExit as e:  # need_mpi's 77, or a message
        status = e.code
    if TMP and status in (0, 77):
        shutil.rmtree(TMP)  # kept when the test fails, to be read
    sys.exit(status)
