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

    def __init__(self, two, n, per_host, report, *args, options=(), mca=()):
        cmd = [MPIRUN, "--allow-run-as-root", "-n", str(n), "--host", two.host_list(per_host), *hosts.mca(), *mca,
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


HUNG = ("MPI_Barrier", "MPI_Recv")  # what rank 0 (host A) and rank 1 (host B) of `twohosts hang` wait in
# and what they wait for (apis/mpi.ini wait_args; docs/report.md, "What a call waits for")
ARGS = ({"comm": "MPI_COMM_WORLD (size 2)"}, {"source": "0", "tag": "99", "comm": "MPI_COMM_WORLD (size 2)"})
WAITS = tuple(" ".join("%s=%s" % kv for kv in a.items()) for a in ARGS)  # as status's text shows them


def status_on(two, host, folder, *options):
    """`callguard status [OPTIONS] DIR/` on one host (0 is A, 1 is B), run as that host's own shell would
    run it: in its network namespace, under its host name (its gethostname picks the runs of the folder)."""
    return subprocess.run(two.on(host, [CG, "status", *options, folder + "/"]), capture_output=True, text=True,
                          timeout=remaining(10), env={**os.environ, "COLUMNS": "100"})


def hung_for_a_second(two, folder, job):
    """Polls each host's `callguard status --json DIR/` until it shows the call its rank hangs in a
    second old (the hang page has it then), for up to 15 s: the last answer of each host, as [(run, JSON
    or None)]. About 1.5 s here; 15 s leaves room for a loaded machine (docs/development.md, "Two hosts")."""
    last = [None, None]

    def hung(host):
        r = status_on(two, host, folder, "--json")
        got = json.loads(r.stdout) if r.returncode == 0 else None
        last[host] = (r, got)
        return got and any(c["name"] == HUNG[host] and c["age_ns"] >= 10**9 and c["args"]
                           for p in got["processes"] for c in p["in_flight"])
    wait_until(lambda: all([hung(0), hung(1)]) or job.p.poll() is not None, 15)
    return last


def check_status_json(two, host, r, got):
    """Host `host`'s status shows its own rank, and only it, in its call for a second or more."""
    rank, other = host, 1 - host
    check(got is not None, "status --json on %s found no run of the job" % two.names[host], r)
    procs = got["processes"]
    shown = [(p["rank"], p["host"], p["world_size"]) for p in procs]
    check(shown == [(rank, two.names[host], 2)], "status on %s shows (rank, host, world size) %s: rank %d is on "
          "%s, another host\n%s" % (two.names[host], shown, other, two.names[other], r.stdout))
    flight = [(c["api"], c["name"], c["waiting"], c["python"], c["args"]) for c in procs[0]["in_flight"]]
    check(flight == [("mpi", HUNG[rank], False, None, ARGS[rank])] and procs[0]["in_flight"][0]["age_ns"] >= 10**9,
          "status on %s: rank %d's calls in flight, not %s a second old (a C program: no Python line)\n%s"
          % (two.names[host], rank, HUNG[rank], r.stdout))
    check([(g["ranks"], g["pids"]) for g in got["groups"]] == [([rank], [procs[0]["pid"]])],
          "status on %s: groups %s" % (two.names[host], got["groups"]))
    return procs[0]["pid"]


def check_status_text(two, host, folder, pid):
    """The same as text: its host in the head, the other rank missing here, its rank's line and call."""
    rank, name = host, two.names[host]
    r = status_on(two, host, folder)
    text = r.stdout
    check(r.returncode == 0 and text.startswith("callguard status: 1 process on %s\n" % name),
          "status on %s: its head" % name, r)
    check("  missing: 1 of 2 ranks (%d): not running here, or ended\n" % (1 - rank) in text,
          "status on %s: rank %d (on %s) is missing here:\n%s" % (name, 1 - rank, two.names[1 - rank], text))
    check("  rank %d pid %d on %s, up " % (rank, pid, name) in text and two.names[1 - rank] not in text,
          "status on %s: rank %d, pid %d, and not the other host:\n%s" % (name, rank, pid, text))
    m = re.search(r"^    tid \d+ \"[^\"]*\" in mpi %s %s for (\d+\.\d) s$" % (HUNG[rank], re.escape(WAITS[rank])), text,
                  re.M)
    check(m and float(m.group(1)) >= 1.0, "status on %s: rank %d in %s %s a second or more:\n%s"
          % (name, rank, HUNG[rank], WAITS[rank], text))
    return text


def hung_job_on_two_hosts_shows_each_rank_live_on_its_host_then_in_its_report():
    """Rank 1 (host B) waits in an MPI_Recv nobody sends, rank 0 (host A) in MPI_Barrier. While they
    hang, `callguard status DIR/` run on each host (its network namespace and host name, as a shell there
    would) shows that host's rank in its call, a second old or more, and not the other host's rank, which
    it lists as missing (text and --json). Then SIGTERM to mpirun ends the job (Open MPI sends SIGTERM to
    each rank's process group: `callguard run` and the program). Each rank's report is still written by
    the process status showed, says it died of SIGTERM on its own host, and lists its call in flight; no
    run's live note is left in the folder; the merged view names both."""
    need_mpi()
    with hosts.TwoHosts() as two:
        folder = os.path.join(TMP, "hang")
        os.mkdir(folder)  # so that no report at all reads as none, not as no folder
        # Open MPI sends SIGKILL 1 s after its SIGTERM (and waits that long whether the ranks ended or not);
        # a rank's report under ASan on a busy machine can take longer to write (docs/report.md): 3 s, which
        # makes the job end about 10 s after SIGTERM instead of 4.
        job = Job(two, 2, 1, folder + "/", "hang", mca=("--mca", "odls_base_sigkill_timeout", "3"))
        live = hung_for_a_second(two, folder, job)
        check(job.p.poll() is None, "the job ended before both ranks hung a second:\n%s" % job.said())
        pids = [check_status_json(two, host, *live[host]) for host in (0, 1)]
        screens = [check_status_text(two, host, folder, pids[host]) for host in (0, 1)]
        if os.environ.get("CG_MULTIHOST_SHOW"):
            print("".join("-- on %s:\n%s" % (two.names[h], screens[h]) for h in (0, 1)), end="")
        job.p.send_signal(signal.SIGTERM)  # ip netns exec, unshare and sh exec'd: this is mpirun
        ended = job.wait(25)
        check(ended is not None, "mpirun still ran 25 s after SIGTERM\n%s" % job.said())
        check(not two.left(5), "left running 5 s after mpirun ended: %s" % two.left(0))
        notes = [n for n in os.listdir(folder) if n.endswith(".live")]
        check(not notes, "live notes left after the job: %s" % notes)
        got = reports(folder)
        check(sorted(got) == [0, 1], "a report per rank (missing: %s): %s\n%s"
              % (sorted({0, 1} - set(got)), sorted(os.listdir(folder)), job.said()))
        for rank, name in enumerate(HUNG):
            p = got[rank][1]
            killed = {"state": "signaled", "signal": 15}
            check((p["pid"], p["host"], p["exit"]) == (pids[rank], two.names[rank], killed),
                  "rank %d: pid %r (status showed %d), host %r, exit %s" % (rank, p["pid"], pids[rank], p["host"],
                                                                          p["exit"]))
            flight = [(c["api"], c["name"], c["state"]) for c in p["in_flight"]]
            check(flight == [("mpi", name, "inside")], "rank %d's calls in flight: %s" % (rank, p["in_flight"]))
        text = cli("report", folder + "/")
        for rank, name in enumerate(HUNG):
            line = "callguard: pid %d on %s, rank %d (local 0) (killed by SIGTERM)" % (got[rank][1]["pid"],
                                                                                       two.names[rank], rank)
            check(line in text and "died of SIGTERM with 1 thread inside %s" % name in text,
                  "the merged view says rank %d died inside %s:\n%s" % (rank, name, text))


def stuck_job_on_two_hosts_is_seen_from_each_host_through_the_shared_folder():
    """Rank 1 (host B) waits in an MPI_Recv nobody sends, rank 0 (host A) in MPI_Barrier, each `callguard run
    --stuck 1s` with one report folder for both hosts (one file system: a shared DIR/). Each host's run,
    speaking for its host, leaves a note in the folder while its rank is stuck; `callguard status --stuck 1s
    DIR/` on either host exits 1 naming its own rank and, from the note, the other host's rank and call.
    The notes are gone once the job has ended."""
    need_mpi()
    with hosts.TwoHosts() as two:
        folder = os.path.join(TMP, "stuck")
        os.mkdir(folder)
        job = Job(two, 2, 1, folder + "/", "hang", options=("--stuck", "1s"))
        hung_for_a_second(two, folder, job)
        check(job.p.poll() is None, "the job ended before both ranks hung a second:\n%s" % job.said())
        got = [None, None]

        def seen(host):
            r = status_on(two, host, folder, "--stuck", "1s")
            got[host] = r
            return r.returncode == 1 and "stuck on another host" in r.stdout
        wait_until(lambda: seen(0) and seen(1), 10)
        for host in (0, 1):
            r, other = got[host], 1 - host
            mine = "stuck over --stuck 1s: rank %d (pid " % host
            theirs = re.search(r"^callguard status: stuck on another host \(its run's note in the folder\): "
                               r"rank %d \(pid \d+ on %s\) in %s for \d+\.\d s, over --stuck 1s$"
                               % (other, re.escape(two.names[other]), HUNG[other]), r.stdout, re.M)
            check(r.returncode == 1 and mine in r.stdout and theirs, "status --stuck 1s on %s: exit 1, rank %d "
                  "here and rank %d in %s on %s (the folder: %s)" % (two.names[host], host, other, HUNG[other],
                                                                    two.names[other], sorted(os.listdir(folder))) + "\n" + job.said(), r)
        job.p.send_signal(signal.SIGTERM)
        check(job.wait(15) is not None, "mpirun still ran 15 s after SIGTERM\n%s" % job.said())
        check(not [n for n in os.listdir(folder) if n.startswith(".")], "notes left: %s" % os.listdir(folder))


def mpi_job_on_two_hosts_with_two_clocks_traces_into_one_timeline():
    """Each rank under `callguard run --trace DIR/`, host B's processes in a time namespace whose
    CLOCK_MONOTONIC is 100,000 s ahead (host A's rsh agent wrapped in `unshare --time`): a trace per
    rank named by its host, rank and pid; `callguard trace DIR/` merges them on realtime, a process
    group per host and rank, and each of the 7 MPI_Allreduce calls on MPI_COMM_WORLD overlaps on the
    two ranks, as a collective's must (within the merge's stated uncertainty)."""
    need_mpi()
    unshare = shutil.which("unshare")
    if not unshare or not os.path.exists("/proc/self/ns/time"):
        print("no time namespace here: skipped")
        return 77
    with hosts.TwoHosts() as two:
        agent = os.path.join(TMP, "agent-ahead.sh")
        with open(agent, "w") as f:
            f.write('#!/bin/sh\nexec %s --time --monotonic 100000 --fork %s "$@"\n' % (unshare, hosts.AGENT))
        os.chmod(agent, 0o755)
        folder = os.path.join(TMP, "traces") + "/"
        mca = [agent if a == hosts.AGENT else a for a in hosts.mca()]
        cmd = [MPIRUN, "--allow-run-as-root", "-n", "2", "--host", two.host_list(1), *mca, CG, "run", "--api",
               "mpi", "--trace", folder, "--", PROG, "count", str(ROUNDS)]
        r = subprocess.run(two.on_a(cmd), env=environment(two), capture_output=True, text=True,
                           timeout=remaining(20))
        check(r.returncode == 0, "the job", r)
        check(not two.left(5), "left running after the job: %s" % two.left(0))
        files = sorted(os.listdir(folder))
        check(len(files) == 2 and [f.split("-pid")[0] for f in files] ==
              ["trace-%s-rank%d" % (two.names[k], k) for k in (0, 1)], "a trace per rank: %s" % files)
        own = [json.load(open(folder + f))["otherData"]["clock_pair"] for f in files]
        check(own[1]["monotonic_ns"] - own[0]["monotonic_ns"] > 99000 * 10 ** 9, "host B's clock is ahead: %s" % own)
        job = folder.rstrip("/") + ".json"
        r = subprocess.run([CG, "trace", folder, "-o", job], capture_output=True, text=True, timeout=30)
        check(r.returncode == 0 and "2 processes on 2 hosts" in r.stderr and "2 clocks aligned" in r.stderr,
              "callguard trace", r)
        with open(job) as f:
            trace = json.load(f)
        meta = trace["otherData"]["job"]
        check(meta["clocks"] == 2 and meta["realtime_sync"].startswith("not measured"), "metadata: %s" % meta)
        names = {e["pid"]: e["args"]["name"] for e in trace["traceEvents"] if e.get("name") == "process_name"}
        by_rank = {int(n.split()[2]): pid for pid, n in names.items()}
        check(sorted(names.values()) == sorted("%s rank %d pid %d" % (two.names[k], k, by_rank[k] % 4194304)
                                               for k in (0, 1)), "process groups: %s" % names)
        ar = {k: sorted((e for e in trace["traceEvents"] if e["ph"] == "X" and e["pid"] == pid and
                         e["name"] == "MPI_Allreduce"), key=lambda e: e["ts"]) for k, pid in by_rank.items()}
        check([len(ar[0]), len(ar[1])] == [ROUNDS, ROUNDS + 1], "MPI_Allreduce events: %s" % ar)
        slack = meta["max_uncertainty_ns"] / 1000.0
        for i in range(ROUNDS):
            a, b = ar[0][i], ar[1][i]
            check(a["ts"] <= b["ts"] + b["dur"] + slack and b["ts"] <= a["ts"] + a["dur"] + slack,
                  "MPI_Allreduce %d overlaps on both hosts: %s %s" % (i, a, b))
        if os.environ.get("CG_MULTIHOST_SHOW"):
            print(json.dumps(trace["otherData"], indent=1))


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
