"""Tests of the NCCL layer (libcallguard_nccl.so) on PyPI's real libnccl.so.2 (nvidia-nccl-cu12 2.32.3), without a GPU.

Run: test_nccl.py TEST (or --list), with the paths in the environment (tests/nccl/CMakeLists.txt sets them):
CG_CLI (callguard), CG_LAYER (the layer), CG_ANSWERS / CG_ANSWERS_DLOPEN (answers.c linked to libnccl.so.2, and
opening it by soname), CG_NCCL_LIB (the real library), CG_CC, CG_NCCL_INCLUDE and CG_CUDA_INCLUDE (to read the
header as the generator does). Each test is a function named for the behaviour it checks.
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
from layertest import E, check, main, report, run, sites  # noqa: E402  (tests/layertest.py)

TMP = tempfile.mkdtemp(prefix="cgnccl-")
# What answers.c calls, once each: every one works, or fails the way it does plainly, without a GPU.
CALLS = ["ncclGetVersion", "ncclGetErrorString", "ncclGetUniqueId", "ncclCommInitRank", "ncclGetLastError",
         "ncclGroupStart", "ncclGroupEnd", "ncclAllReduce", "ncclCommDestroy"]


def answers(var):
    """answers.c linked to the real library (CG_ANSWERS) or opening it by soname (CG_ANSWERS_DLOPEN): built only
    where the build found libnccl.so.2 beside nccl.h; the test is skipped elsewhere."""
    if var not in E:
        print("SKIP: no %s: the build found no libnccl.so.2 beside nccl.h (scripts/setup-venv.sh)" % var)
        sys.exit(77)
    return E[var]


def answers_alike(prog, env=None):
    """prog's answers plainly and under callguard run are the same, each call counted once, and its results
    named from ncclResult_t. Returns the report's path."""
    plain = run(prog, env)
    check(plain.returncode == 0, "the program ran plainly", plain)
    # PyPI's 2.32.3 without a GPU: its version, a unique id, and init failing on CUDA.
    check("ncclGetVersion 0 23203\n" in plain.stdout, "NCCL 2.32.3 answered its version", plain)
    check("ncclGetUniqueId 0\n" in plain.stdout, "a unique id without a GPU", plain)
    check(re.search(r"^ncclCommInitRank [1-9]", plain.stdout, re.M), "init fails without a GPU", plain)
    path = os.path.join(TMP, "answers.json")
    guarded = run([E["CG_CLI"], "run", "--api", "nccl", "--report", path, "--"] + prog, env)
    check(guarded.returncode == 0, "the program ran under callguard run", guarded)
    check(guarded.stdout == plain.stdout, "the same answers:\n%s-- plain:\n%s" % (guarded.stdout, plain.stdout))
    rows = report(path)
    check({n: rows.get(n) for n in CALLS} == {n: 1 for n in CALLS}, "each call counted once: %s" % rows)
    init = int(re.search(r"^ncclCommInitRank (\d+)", plain.stdout, re.M).group(1))
    named = {"ncclCommInitRank": (init, {1: "ncclUnhandledCudaError", 2: "ncclSystemError"}.get(init)),
             "ncclAllReduce": (4, "ncclInvalidArgument")}
    for name, (code, rname) in named.items():
        res = [r for s in sites(path, name) for r in s["results"]]
        check([(r["code"], r["name"], r["kind"]) for r in res] == [(code, rname, "error")],
              "%s's result %d named %s: %s" % (name, code, rname, res))
    return path


def nccl_real_library_answers_alike_linked_plain_and_under_callguard_run():
    """A program linked to libnccl.so.2 (found through its run path): reached under callguard run by the
    preloaded layer, and by the shim the run's library path puts before its run path. CALLGUARD_NCCL_LIBRARY
    names the library the run path finds: else the run would link the shim to the first libnccl.so.2 of the
    loader's own search (here the CUDA toolkit's 2.28.9, in the ld.so cache), and the program would get that
    one (docs/nccl.md, "Which NCCL a run gets")."""
    answers_alike([answers("CG_ANSWERS")], {"CALLGUARD_NCCL_LIBRARY": answers("CG_NCCL_LIB")})


def nccl_program_with_its_own_nccl_gets_it_under_callguard_run_without_the_variable():
    """The same program with no CALLGUARD_NCCL_LIBRARY and no NCCL on LD_LIBRARY_PATH: the run links no NCCL
    shim to the ld.so cache's (the CUDA toolkit's 2.28.9 here), so the program answers from its own 2.32.3, as
    plainly, and the preloaded layer counts its calls."""
    answers_alike([answers("CG_ANSWERS")])


def nccl_real_library_answers_alike_dlopened_plain_and_under_callguard_run():
    """A program that dlopens libnccl.so.2 and dlsyms each name, as CuPy's and PyTorch's loaders do: only the
    soname shim reaches it (a dlsym on the library's handle never meets the preloaded layer), so its calls are
    counted only through the shim. Plainly the library is found on LD_LIBRARY_PATH, where a job's environment
    puts it."""
    lib = os.path.dirname(answers("CG_NCCL_LIB"))
    answers_alike([answers("CG_ANSWERS_DLOPEN"), "libnccl.so.2"], {"LD_LIBRARY_PATH": lib})


def nccl_results_and_collectives_are_marked_in_the_report():
    """The report marks the collectives (ncclAllReduce, ncclCommInitRank, ncclCommDestroy) collective, for the
    view across ranks, and not the others (ncclGetVersion, ncclGroupEnd)."""
    path = answers_alike([answers("CG_ANSWERS")], {"CALLGUARD_NCCL_LIBRARY": answers("CG_NCCL_LIB")})
    for name, want in (("ncclAllReduce", True), ("ncclCommInitRank", True), ("ncclCommDestroy", True),
                       ("ncclGetVersion", False), ("ncclGroupEnd", False), ("ncclGetUniqueId", False)):
        got = [bool(s["policy"].get("collective")) for s in sites(path, name)]
        check(got == [want], "%s collective: %s, want %s" % (name, got, want))


def declared_functions(include):
    """The nccl* functions nccl.h declares, read from the preprocessed header with the policy's flags."""
    src = os.path.join(TMP, "h.c")
    with open(src, "w") as f:
        f.write("#include <nccl.h>\n")
    pp = run([E["CG_CC"], "-E", "-I", include, "-I", E["CG_CUDA_INCLUDE"], src])
    check(pp.returncode == 0, "the header preprocesses", pp)
    return set(re.findall(r"^[A-Za-z_][\w \t*]*?\b(nccl\w*)\s*\(", pp.stdout, re.M))


def nccl_list_names_every_function_of_the_header():
    """`callguard list nccl` has a row for every nccl* function nccl.h declares (ncclGroupStart() and
    ncclGroupEnd() included, declared without a prototype), and none the header lacks."""
    declared = declared_functions(E["CG_NCCL_INCLUDE"])
    check(len(declared) >= 70 and "ncclGroupEnd" in declared, "the header's functions were found: %d" % len(declared))
    r = run([E["CG_CLI"], "list", "nccl"])
    check(r.returncode == 0, "callguard list nccl", r)
    listed = set(re.findall(r"^(nccl\w*)", r.stdout, re.M))
    check(declared == listed, "missing from the list: %s; not in the header: %s"
          % (sorted(declared - listed), sorted(listed - declared)))


def exports(path):
    r = run(["nm", "-D", "--defined-only", path])
    check(r.returncode == 0, "nm reads %s" % path, r)
    return {line.split()[-1] for line in r.stdout.splitlines() if line.split()[-1:] and line.split()[-1][0] != "_"
            and "nccl" in line.split()[-1]}


def nccl_layer_exports_every_name_the_real_library_exports():
    """The layer can stand in for libnccl.so.2: it exports each nccl* and pnccl* name the real library
    exports (guarded or forwarded: apis/nccl.exports), and no other."""
    real, layer = exports(answers("CG_NCCL_LIB")), exports(E["CG_LAYER"])
    check(len(real) > 150, "the real library's names: %d" % len(real))
    check(real == layer, "only the library's: %s; only the layer's: %s" % (sorted(real - layer), sorted(layer - real)))


def nccl_blocking_sites_are_listed_with_their_reasons():
    """callguard list marks the calls that wait for other ranks blocking, with a reason, and not the queries
    nor the collectives and sends (a launch of under a microsecond: apis/nccl.ini)."""
    r = run([E["CG_CLI"], "list", "nccl"])
    check(r.returncode == 0, "callguard list nccl", r)
    rows = {m.group(1): m.group(2).strip() for m in re.finditer(r"^(nccl\w*)(?: \(as \w+\))?\s+\S+\s+\S+\s+\S+\s+(.*)$",
                                                               r.stdout, re.M)}
    for name in ("ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll", "ncclCommFinalize",
                 "ncclCommDestroy", "ncclCommAbort", "ncclGroupEnd"):
        check(rows.get(name, "-") != "-", "%s blocking with a reason: %r" % (name, rows.get(name)))
    for name in ("ncclGetVersion", "ncclCommCount", "ncclGetErrorString", "ncclGroupStart", "ncclAllReduce",
                 "ncclSend"):
        check(rows.get(name) == "-", "%s not blocking: %r" % (name, rows.get(name)))


# ---- a job's ranks compared (crafted per-rank reports: two GPUs are not lent here) ---------------------------
def rank_report(rank, allreduces, stuck_in):
    """Rank `rank`'s report of a PyTorch job as `callguard run --report DIR/` writes it: its NCCL rows
    (ncclAllReduce collective, as the layer's policy marks it), ended by SIGTERM inside `stuck_in`."""
    def row(name, calls, collective):
        return {"api": "nccl", "name": name, "calls": calls, "total_ns": 1000 * calls, "max_ns": 1000,
                "peak_inside": 1, "peak_waiting": 0,
                "policy": {"transition": "always", "blocking": True, "serialize": None, "scope": "process",
                           "collective": collective}}
    sites = [row("ncclCommInitRank", 1, True), row("ncclAllReduce", allreduces, True), row("ncclSend", rank, False)]
    api, name = stuck_in
    return {"pid": 4000 + rank, "ppid": 1, "host": "gpu-node", "rank": rank, "local_rank": rank,
            "command": "python3 job.py", "exit": {"state": "signaled", "signal": 15}, "stalls": [], "sites": sites,
            "in_flight": [{"api": api, "name": name, "tid": 4000 + rank, "thread": "python3", "state": "inside",
                           "entered_ns": 5}]}


def merged(counts, stuck):
    """The merged view of one report per rank (rank r made counts[r] all-reduces, stuck[r] its call in flight),
    in a folder as `callguard run --report DIR/` leaves them: across_ranks' sites by name, and the text."""
    folder = tempfile.mkdtemp(prefix="job-", dir=TMP)
    for rank, n in enumerate(counts):
        with open(os.path.join(folder, "callguard-gpu-node-rank%d-pid%d.json" % (rank, 4000 + rank)), "w") as f:
            json.dump({"schema": "callguard-report", "version": 1,
                       "processes": [rank_report(rank, n, stuck[rank])]}, f)
    out = os.path.join(TMP, "job.json")
    r = run([E["CG_CLI"], "report", "--json", out, folder + "/"])
    check(r.returncode == 0, "merged", r)
    sites_ = {x["name"]: x for x in json.load(open(out))["across_ranks"]["sites"]}
    check(not sites_["ncclSend"].get("collective") and "out_of_step" not in sites_["ncclSend"],
          "ncclSend is not compared: %s" % sites_["ncclSend"])
    text = run([E["CG_CLI"], "report", folder + "/"])
    check(text.returncode == 0 and "ncclSend calls" not in text.stdout, "nothing said of ncclSend", text)
    return sites_, text.stdout


SYNC, DESTROY = ("cuda", "cuStreamSynchronize"), ("nccl", "ncclCommDestroy")


def nccl_job_where_one_rank_skipped_an_allreduce_names_that_rank_and_the_difference():
    """Rank 1 of 4 skipped one all_reduce: the others wait in cuStreamSynchronize behind the all-reduce it never
    joins, rank 1 in ncclCommDestroy at teardown. The merged view names rank 1, its 9 calls and the usual 10,
    in JSON (across_ranks) and in the summary; ncclSend, not collective, differs without a word."""
    sites_, text = merged([10, 9, 10, 10], [SYNC, DESTROY, SYNC, SYNC])
    ar = sites_["ncclAllReduce"]
    check(ar.get("collective") and ar["usual_calls"] == 10 and ar["ranks_out_of_step"] == 1 and
          [(o["rank"], o["calls"]) for o in ar["out_of_step"]] == [(1, 9)], "ncclAllReduce across ranks: %s" % ar)
    check("rank 1 made 9 ncclAllReduce calls, the others 10 (a collective" in text, "the summary:\n" + text)


def nccl_two_rank_job_out_of_step_states_both_counts():
    """Two ranks, rank 1 one all-reduce short: two counts, one rank each, so nothing says which rank is odd:
    the view names neither as the odd one (usual_calls null) and states both ranks' counts."""
    sites_, text = merged([10, 9], [SYNC, DESTROY])
    ar = sites_["ncclAllReduce"]
    check(ar.get("collective") and ar["usual_calls"] is None and ar["ranks_out_of_step"] == 2 and
          [(o["rank"], o["calls"]) for o in ar["out_of_step"]] == [(0, 10), (1, 9)], "ncclAllReduce across ranks: %s" % ar)
    check("ranks 0, 1 made 10, 9 ncclAllReduce calls, no count most ranks made (a collective" in text,
          "the summary:\n" + text)


# ---- counts per communicator (the stand-in libnccl.so.2: communicators without a GPU) ------------------------
def nccl_counts_per_communicator_name_the_rank_out_of_step_in_its_communicator():
    """4 ranks (torchrun's RANK, each under callguard run --report DIR/) on one world communicator, 10
    all-reduces each, split into {0, 1, 2} and {3}: ranks 0 and 2 make 5 all-reduces on theirs, rank 1 makes 4,
    rank 3 makes 7 on its own. The process totals (15, 14, 15, 17) would blame ranks 1 and 3; the rows of each
    communicator (ncclAllReduce@ID, ID from the unique id, the split's from its parent, color and order) name
    rank 1 alone, 4 against 5, and compare no rank outside a communicator with its members."""
    if "CG_COMMS" not in E:
        print("SKIP: no stand-in libnccl.so.2 in this build")
        return 77
    folder = tempfile.mkdtemp(prefix="comms-", dir=TMP)
    env = {"CALLGUARD_NCCL_LIBRARY": E["CG_STANDIN"], "WORLD_SIZE": "4", "LOCAL_WORLD_SIZE": "4"}
    for rank, (color, sub_n) in enumerate([(0, 5), (0, 4), (0, 5), (1, 7)]):
        r = run([E["CG_CLI"], "run", "--api", "nccl", "--report", folder + "/", "--", E["CG_COMMS"], str(rank), "4",
                 str(color), "10", str(sub_n)], dict(env, RANK=str(rank), LOCAL_RANK=str(rank)))
        check(r.returncode == 0 and r.stdout == "rank %d done\n" % rank, "rank %d ran" % rank, r)
    out = os.path.join(TMP, "comms.json")
    r = run([E["CG_CLI"], "report", "--json", out, folder + "/"])
    check(r.returncode == 0, "merged", r)
    rows = {x["name"]: x for x in json.load(open(out))["across_ranks"]["sites"]}
    per = {n: x for n, x in rows.items() if n.startswith("ncclAllReduce@")}
    check(len(per) == 3 and all(re.fullmatch(r"ncclAllReduce@[0-9a-f]{12}", n) for n in per),
          "three communicators' rows: %s" % sorted(rows))
    by_ranks = sorted((x["ranks"], x["calls"], x["usual_calls"], [(o["rank"], o["calls"]) for o in x["out_of_step"]])
                      for x in per.values())
    check(by_ranks == [(1, 7, 7, []), (3, 14, 5, [(1, 4)]), (4, 40, 10, [])],
          "per communicator: (ranks, calls, usual, out of step): %s" % by_ranks)
    whole = rows["ncclAllReduce"]
    check([(o["rank"], o["calls"]) for o in whole["out_of_step"]] == [(1, 14), (3, 17)],
          "the process totals blame ranks 1 and 3: %s" % whole["out_of_step"])
    for name in ("ncclCommInitRank", "ncclCommSplit", "ncclCommDestroy"):
        mine = [x for n, x in rows.items() if n.startswith(name + "@")]
        check(mine and all(not x["out_of_step"] for x in mine), "%s per communicator, in step: %s" % (name, mine))


def nccl_status_of_a_hung_job_names_the_rank_out_of_step_and_each_ranks_call():
    """3 ranks hang in ncclCommDestroy at teardown (the stand-in waits 30 s there), rank 1 having made 9
    all-reduces on the world communicator, the others 10. While they hang, `callguard status DIR/` shows each
    rank in ncclCommDestroy and names rank 1 out of step, 9 against 10, in the process's row and in the
    communicator's (JSON's out_of_step, and the text)."""
    if "CG_COMMS" not in E:
        print("SKIP: no stand-in libnccl.so.2 in this build")
        return 77
    folder = tempfile.mkdtemp(prefix="hung-", dir=TMP)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLGUARD_")}
    env.update(CALLGUARD_NCCL_LIBRARY=E["CG_STANDIN"], CGNCCL_DESTROY_MS="30000", WORLD_SIZE="3")
    procs = [subprocess.Popen([E["CG_CLI"], "run", "--api", "nccl", "--report", folder + "/", "--", E["CG_COMMS"],
                               str(rank), "3", str(rank), str(9 if rank == 1 else 10), "0"],
                              env=dict(env, RANK=str(rank), LOCAL_RANK=str(rank)), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True) for rank in range(3)]
    try:
        st = None
        for _ in range(100):  # the hang page shows a call a second old: at most 20 s
            time.sleep(0.2)
            r = run([E["CG_CLI"], "status", "--json", folder + "/"])
            if r.returncode != 0:
                continue
            st = json.loads(r.stdout)
            calls = sorted((p["rank"], [c["name"] for c in p["in_flight"]]) for p in st["processes"])
            if calls == [(k, ["ncclCommDestroy"]) for k in range(3)]:
                break
        check(st is not None and sorted((p["rank"], [c["name"] for c in p["in_flight"]]) for p in st["processes"]) ==
              [(k, ["ncclCommDestroy"]) for k in range(3)], "each rank in ncclCommDestroy: %s" % st)
        odd = {o["name"]: (o["usual_calls"], [(x["rank"], x["calls"]) for x in o["out_of_step"]])
               for o in st["out_of_step"]}
        world = [n for n in odd if n.startswith("ncclAllReduce@")]
        check(odd.get("ncclAllReduce") == (10, [(1, 9)]) and len(world) == 1 and odd[world[0]] == (10, [(1, 9)]),
              "rank 1 out of step, 9 against 10: %s" % odd)
        r = run([E["CG_CLI"], "status", folder + "/"])
        check(r.returncode == 0 and "collectives out of step now" in r.stdout and
              re.search(r"ncclAllReduce@[0-9a-f]{12}: rank 1 made 9 calls, the others 10", r.stdout),
              "the text names rank 1", r)
    finally:
        for p in procs:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()


if __name__ == "__main__":
    main()
