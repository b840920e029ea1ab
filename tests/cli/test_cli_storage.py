"""Tests of a run's statistics files: the room they take, a full disk, a
directory removed during the run.

Run as tests/cli/clitest.py says; each test is a function named for the
behaviour it checks.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from clitest import CG, PROG, TOYLAYER, TMP, run, guarded, report_of, calls, check, main


def run_disk_grows_with_the_processes_alive_not_with_every_process():
    """A run's statistics take room for the processes alive at once, not for
    every process that ran: 300 processes without a guarded call leave no
    file; 100 with calls, one after another, each take a 2.2 MB file while
    they live and a few pages once they ended, so the directory stays far
    below 100 files' room, and ends at a few pages a process; the report
    still counts every process that made a call."""
    import threading
    tmp = tempfile.mkdtemp(prefix="disk-", dir=TMP)
    listing, usage = os.path.join(TMP, "disk-listing"), os.path.join(TMP, "disk-usage")
    region = 2236416
    # Inside the run, after the 100: wait (20 s at most) until callguard has
    # made the ended processes' files small, and say what they take.
    settle = ("import os, sys, time\n"
              "def used():\n"
              "    d = os.environ['CALLGUARD_STATS_DIR']\n"
              "    return sum(os.lstat(os.path.join(d, n)).st_blocks * 512 for n in os.listdir(d) if n.endswith('.stats'))\n"
              "end = time.time() + 20\n"
              "while used() > %d and time.time() < end:\n"
              "    time.sleep(0.01)\n"
              "open(sys.argv[1], 'w').write(str(used()))\n" % (2 * region))
    script = ('for i in $(seq 300); do /bin/true; done; ls "$CALLGUARD_STATS_DIR" > "$1"; '
              'for i in $(seq 100); do "$0" calls 3; done; "$3" -c "$4" "$2"')
    peak, files, done = [0], [0], threading.Event()

    def watch():
        while not done.is_set():
            used, big = 0, 0
            for root, _, names in os.walk(tmp):
                for n in names:
                    try:
                        st = os.lstat(os.path.join(root, n))
                    except OSError:
                        continue
                    used += st.st_blocks * 512
                    big += st.st_blocks * 512 > 1 << 20
            peak[0], files[0] = max(peak[0], used), max(files[0], big)
            done.wait(0.005)

    t = threading.Thread(target=watch)
    t.start()
    try:
        r, rep = report_of(["sh", "-c", script, PROG, listing, usage, sys.executable, settle], env={"TMPDIR": tmp})
    finally:
        done.set()
        t.join()
    check(r.returncode == 0, r.stderr)
    stats = [n for n in open(listing).read().split() if n.endswith(".stats")]
    check(not stats, "no file for 300 processes without calls: %d files" % len(stats))
    procs = rep["processes"]
    check(len(procs) == 100 and all(calls(p) == 3 for p in procs) and "processes_without_statistics" not in rep,
          "every process with calls reported: %d processes, %s" % (len(procs), rep.get("processes_without_statistics")))
    left = int(open(usage).read())
    check(left <= 2 * region and files[0] < 50,
          "after the 100: %d bytes; at most %d full files at once, %d bytes (a file is %d bytes)" %
          (left, files[0], peak[0], region))


def full_storage_counts_in_memory_and_keeps_the_status():
    """Statistics storage that cannot be grown (ENOSPC, injected without
    root: posix_fallocate and ftruncate fail) never harms the program: no
    SIGBUS, its exit status kept, one line per process says what was lost,
    and the report counts the processes that left no statistics."""
    rpath = os.path.join(TMP, "enospc.json")
    e = dict(os.environ, LD_PRELOAD=os.environ["CG_ENOSPC"])
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--", PROG, "exit", "3"], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 3, "the program's status is kept: %d %r" % (r.returncode, r.stderr))
    said = [l for l in r.stderr.splitlines() if "cannot keep statistics" in l]
    check(len(said) == 1 and os.strerror(28) in said[0] and "counting in memory" in said[0], "one line: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics") == 1, "the report records the loss: %s" % rep)
    t = run([CG, "run", "--layer", TOYLAYER, "--report", "-", "--", PROG, "calls"], env={"LD_PRELOAD": os.environ["CG_ENOSPC"]})
    check(t.returncode == 0 and "left no statistics" in t.stderr, "the table says it: %r" % t.stderr)


def full_storage_counts_processes_another_process_reaped():
    """Every process that could not keep statistics is counted, whoever
    reaped it: three programs a shell starts and waits for (callguard reaps
    only the shell, which makes no guarded call and loses nothing)."""
    rpath = os.path.join(TMP, "enospc-sh.json")
    e = dict(os.environ, LD_PRELOAD=os.environ["CG_ENOSPC"])
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run([CG, "run", "--layer", TOYLAYER, "--report", rpath, "--", "sh", "-c",
                        '"$0" calls 3; "$0" calls 2; "$0" exit 4', PROG], env=e, capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 4, "the program's status: %d %r" % (r.returncode, r.stderr))
    check(r.stderr.count("cannot keep statistics") == 3, "one line per process with calls: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics") == 3, "three processes missing: %s" % rep)


def statistics_directory_removed_mid_run_harms_nothing():
    """The run's directory removed while the program runs: later processes
    count in memory and exit as they would; the report is still written and
    says how many processes left no statistics."""
    rpath = os.path.join(TMP, "removed.json")
    r = guarded(["sh", "-c", 'rm -rf "$CALLGUARD_STATS_DIR"; "$0" calls 3 && "$0" exit 4', PROG], "--report", rpath)
    check(r.returncode == 4, "the program's status: %d %r" % (r.returncode, r.stderr))
    check(r.stderr.count("cannot keep statistics") == 2, "one line per later process: %r" % r.stderr)
    rep = json.load(open(rpath))
    check(rep.get("processes_without_statistics", 0) >= 1, "the loss is recorded: %s" % rep)


def full_tmpfs_raises_no_sigbus():
    """A real full file system: a small tmpfs, filled, mounted inside
    `unshare -m` (so a failed test leaves no mount behind). Needs root."""
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("skipped: needs root and unshare(1) to mount a small tmpfs")
        sys.exit(77)
    d = tempfile.mkdtemp(prefix="full-", dir=TMP)
    rpath = os.path.join(TMP, "tmpfs.json")
    script = ('mount -t tmpfs -o size=1m cgfull "$1" || exit 77; '
              'dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; '
              'TMPDIR="$1" "$2" run --layer "$3" --report "$4" -- "$5" exit 3')
    e = dict(os.environ)
    e.pop("CALLGUARD_REPORT", None)
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, rpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 77:
        print("skipped: cannot mount a tmpfs here: %s" % r.stderr)
        sys.exit(77)
    check(r.returncode == 3, "no SIGBUS, the program's status: %d %r" % (r.returncode, r.stderr))
    check("cannot keep statistics" in r.stderr, "the loss is said: %r" % r.stderr)
    check(json.load(open(rpath)).get("processes_without_statistics") == 1, "and recorded")
    # Programs a shell reaps: each is counted all the same.
    sh = script.replace('-- "$5" exit 3', '-- sh -c \'"$0" calls 3; "$0" exit 3\' "$5"')
    r = subprocess.run(["unshare", "-m", "sh", "-c", sh, "sh", d, CG, TOYLAYER, rpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 3 and r.stderr.count("cannot keep statistics") == 2, "%d %r" % (r.returncode, r.stderr))
    check(json.load(open(rpath)).get("processes_without_statistics") == 2, "both recorded, the shell reaped them")
    # With a timeline, whose file takes its space as it grows: still no SIGBUS.
    tpath = os.path.join(TMP, "tmpfs-trace.json")
    script = script.replace('--report "$4" -- "$5" exit 3', '--trace "$4" -- "$5" calls 5000')
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, tpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "no SIGBUS with --trace: %d %r" % (r.returncode, r.stderr))
    check(isinstance(json.load(open(tpath))["traceEvents"], list), "the trace is still one JSON document")
    # Room for the statistics, not for the whole ring: the ring grows until the
    # file system is full, the later events are dropped and counted, no SIGBUS.
    script = script.replace("size=1m", "size=3m").replace('dd if=/dev/zero of="$1/fill" bs=4k 2>/dev/null; ', "")
    script = script.replace("calls 5000", "calls 50000")
    r = subprocess.run(["unshare", "-m", "sh", "-c", script, "sh", d, CG, TOYLAYER, tpath, PROG], env=e,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0, "no SIGBUS when the ring cannot grow: %d %r" % (r.returncode, r.stderr))
    od = json.load(open(tpath))["otherData"]
    check(0 < od["events"] < 50000 and od["events"] + od["dropped"] == 50000 and "dropped" in r.stderr,
          "kept until full, the rest counted: %s %r" % (od, r.stderr))


if __name__ == "__main__":
    main()
