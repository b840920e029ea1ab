#!/bin/bash
# tests/gpu/nccl_check.sh OUTDIR [BUILD [cost [ROUNDS]]]: the NCCL layer on the GPU machine (docs/nccl.md). Writes
# OUTDIR/nccl.txt (PASS/FAIL/SKIP lines, then figures) with each run's output, stderr and report beside it:
#  1. torch.distributed (NCCL backend) at world size 1 plainly and under callguard run: the same output, and
#     the report counts ncclAllReduce (>= 100), ncclBroadcast, ncclAllGather and a communicator's creation;
#     again with CALLGUARD_NCCL_LIBRARY naming PyTorch's own libnccl.so.2 (the shim linked to it);
#  2. CuPy's cupy.cuda.nccl likewise (SKIP where CuPy has no NCCL);
#  3. the cost: a loop of small ncclAllReduce calls, statistics on against off in one process (and the same
#     through torch.distributed), tests/gpu/nccl_torch.py ab; the target is <= 1 %;
#  4. with 2 GPUs only: a 2-rank torchrun job, each rank under `callguard run --report DIR/`, rank 1 skipping
#     one all_reduce. While it hangs, `callguard status DIR/` must show both ranks in calls (rank 0 waiting in
#     CUDA behind the all-reduce rank 1 never joins, rank 1 in ncclCommInitRank) and ncclAllReduce's counts
#     out of step (10 and 9: a tie of two ranks, so both are listed and neither named odd); after SIGTERM, `callguard
#     report DIR/` must name the ranks' ncclAllReduce counts out of step (10 and 9).
# With `cost`, only where statistics cost the loop of part 3: nccl_torch.py ab under `callguard run --api A` for
# A = nccl, cuda and both (ROUNDS rounds, default 16), and the entry points one torch all_reduce calls; writes
# OUTDIR/nccl-cost.txt and OUTDIR/nccl-cost.tar.gz (each run's output and report).
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/nccl_check.sh OUTDIR [BUILD [cost [ROUNDS]]]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.." || exit 2
SRC=$PWD
B=$(cd "${2:-build}" && pwd) || exit 2
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_RUNTIME CALLGUARD_NCCL_LIBRARY
LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LD_LIBRARY_PATH
CG=$B/bin/callguard
if [ "${3:-}" = cost ]; then
    S=$OUT/nccl-cost.txt
    mkdir -p "$OUT/cost" || exit 2
    : >"$S"
    for api in nccl cuda nccl,cuda; do
        timeout 200 "$CG" run --api "$api" --report "$OUT/cost/$api.json" -- "$PY" "$SRC/tests/gpu/nccl_torch.py" ab \
            "${4:-16}" 2000 >"$OUT/cost/$api.out" 2>"$OUT/cost/$api.err"
        echo "--api $api (exit $?):" >>"$S"
        sed 's/^/  /' "$OUT/cost/$api.out" >>"$S"
    done
    # The entry points per all-reduce: every site's calls over ncclAllReduce's (both loops, all rounds).
    "$PY" - "$OUT/cost/nccl,cuda.json" >>"$S" 2>&1 <<'PYEOF'
import json, sys
calls = {}
for p in json.load(open(sys.argv[1]))["processes"]:
    for s in p["sites"]:
        calls[(s["api"], s["name"])] = calls.get((s["api"], s["name"]), 0) + s["calls"]
n = calls.get(("nccl", "ncclAllReduce"), 0)
print("calls per ncclAllReduce (%d all-reduces counted):" % n)
for (api, name), c in sorted(calls.items(), key=lambda kv: -kv[1])[:25]:
    print("  %-40s %10d  %.2f" % (api + " " + name, c, c / n if n else 0))
PYEOF
    "$CG" report "$OUT/cost/nccl,cuda.json" >"$OUT/cost/report.txt" 2>&1
    tar -C "$OUT" -czf "$OUT/nccl-cost.tar.gz" cost && rm -rf "$OUT/cost"
    cat "$S"
    exit 0
fi
S=$OUT/nccl.txt
: >"$S"
say() { echo "$*" >>"$S"; }
count() { # REPORT NAME: the calls of NAME (its variants' rows are its own) summed over processes
    "$PY" -c 'import json,sys; r=json.load(open(sys.argv[1]))
print(sum(s["calls"] for p in r["processes"] for s in p["sites"] if s["name"] == sys.argv[2]))' "$1" "$2" 2>/dev/null || echo 0
}
[ -e "$B/lib/libcallguard_nccl.so" ] || { say "FAIL nccl: no $B/lib/libcallguard_nccl.so in the build"; cat "$S"; exit 1; }
TORCH_NCCL=$("$PY" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "lib", "libnccl.so.2"))' 2>/dev/null)
{ "$PY" -VV; "$PY" -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
  echo "torch's libnccl.so.2: $TORCH_NCCL"; ldconfig -p | grep libnccl; nvidia-smi -L
  readelf -d "$("$PY" -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cuda.so"))')" | grep -i path
  "$CG" list nccl | head -4; } >"$OUT/nccl-env.txt" 2>&1

# ---- 1. torch.distributed, world size 1 ----
tp=$SRC/tests/gpu/nccl_torch.py
timeout 300 "$PY" "$tp" ws1 >"$OUT/nccl-torch-plain.out" 2>"$OUT/nccl-torch-plain.err"
rc_plain=$?
timeout 300 "$CG" run --report "$OUT/nccl-torch.json" -- "$PY" "$tp" ws1 >"$OUT/nccl-torch-cg.out" 2>"$OUT/nccl-torch-cg.err"
rc_cg=$?
timeout 300 env CALLGUARD_NCCL_LIBRARY="$TORCH_NCCL" "$CG" run --report "$OUT/nccl-torch-shim.json" -- "$PY" "$tp" ws1 \
    >"$OUT/nccl-torch-shim.out" 2>"$OUT/nccl-torch-shim.err"
rc_shim=$?
for j in "$OUT"/nccl-torch*.json; do [ -e "$j" ] && "$CG" report "$j" >"${j%.json}.txt" 2>&1; done
ar=$(count "$OUT/nccl-torch.json" ncclAllReduce)
bc=$(count "$OUT/nccl-torch.json" ncclBroadcast)
ag=$(count "$OUT/nccl-torch.json" ncclAllGather)
init=$(( $(count "$OUT/nccl-torch.json" ncclCommInitRank) + $(count "$OUT/nccl-torch.json" ncclCommInitRankConfig) \
    + $(count "$OUT/nccl-torch.json" ncclCommInitRankScalable) ))
if [ "$rc_plain" -eq 0 ] && [ "$rc_cg" -eq 0 ] && cmp -s "$OUT/nccl-torch-plain.out" "$OUT/nccl-torch-cg.out" &&
   [ "$ar" -ge 100 ] && [ "$bc" -ge 1 ] && [ "$ag" -ge 1 ] && [ "$init" -ge 1 ]; then
    say "PASS torch ws1: same output plainly and under callguard run; ncclAllReduce $ar, ncclBroadcast $bc, ncclAllGather $ag, init $init"
else
    say "FAIL torch ws1: rc plain $rc_plain, callguard $rc_cg, same output $(cmp -s "$OUT/nccl-torch-plain.out" "$OUT/nccl-torch-cg.out" && echo yes || echo no); ncclAllReduce $ar, ncclBroadcast $bc, ncclAllGather $ag, init $init"
fi
ar=$(count "$OUT/nccl-torch-shim.json" ncclAllReduce)
if [ "$rc_shim" -eq 0 ] && cmp -s "$OUT/nccl-torch-plain.out" "$OUT/nccl-torch-shim.out" && [ "$ar" -ge 100 ]; then
    say "PASS torch ws1 with CALLGUARD_NCCL_LIBRARY=PyTorch's: same output, ncclAllReduce $ar"
else
    say "FAIL torch ws1 with CALLGUARD_NCCL_LIBRARY=$TORCH_NCCL: rc $rc_shim, ncclAllReduce $ar"
fi

# ---- 2. CuPy ----
cp=$SRC/tests/gpu/nccl_cupy.py
timeout 300 "$PY" "$cp" >"$OUT/nccl-cupy-plain.out" 2>"$OUT/nccl-cupy-plain.err"
rc_plain=$?
if [ "$rc_plain" -eq 77 ]; then
    say "SKIP cupy: $(head -1 "$OUT/nccl-cupy-plain.out")"
else
    timeout 300 "$CG" run --report "$OUT/nccl-cupy.json" -- "$PY" "$cp" >"$OUT/nccl-cupy-cg.out" 2>"$OUT/nccl-cupy-cg.err"
    rc_cg=$?
    "$CG" report "$OUT/nccl-cupy.json" >"$OUT/nccl-cupy.txt" 2>&1
    ar=$(count "$OUT/nccl-cupy.json" ncclAllReduce)
    if [ "$rc_plain" -eq 0 ] && [ "$rc_cg" -eq 0 ] && cmp -s "$OUT/nccl-cupy-plain.out" "$OUT/nccl-cupy-cg.out" && [ "$ar" -eq 50 ]; then
        say "PASS cupy: same output plainly and under callguard run; ncclAllReduce $ar"
    else
        say "FAIL cupy: rc plain $rc_plain, callguard $rc_cg; ncclAllReduce $ar (want 50)"
    fi
fi

# ---- 3. the cost of statistics on a loop of small all-reduces ----
timeout 400 "$CG" run --report "$OUT/nccl-ab.json" -- "$PY" "$tp" ab 30 2000 >"$OUT/nccl-ab.out" 2>"$OUT/nccl-ab.err" ||
    say "FAIL cost: nccl_torch.py ab exited $? (nccl-ab.err)"
sed 's/^/figure /' "$OUT/nccl-ab.out" >>"$S"

# ---- 4. two ranks, one skipping an all_reduce ----
ngpu=$("$PY" -c 'import torch; print(torch.cuda.device_count())' 2>/dev/null || echo 0)
if [ "${ngpu:-0}" -lt 2 ]; then
    say "SKIP 2-rank job: $ngpu GPU(s) visible"
else
    D=$OUT/nccl-job
    rm -rf "$D" && mkdir -p "$D"
    setsid "$PY" -m torch.distributed.run --nproc_per_node 2 --master_port 29513 --no-python \
        "$CG" run --report "$D/" -- "$PY" "$tp" job 10 >"$OUT/nccl-job.out" 2>"$OUT/nccl-job.err" &
    job=$!
    seen=""
    for _ in $(seq 60); do
        sleep 1
        "$CG" status --json "$D/" >"$OUT/nccl-job-status.json" 2>"$OUT/nccl-job-status.err" || continue
        if grep -q '"ncclCommInitRank"' "$OUT/nccl-job-status.json" && grep -q 'Synchronize"' "$OUT/nccl-job-status.json"; then
            seen=yes
            break
        fi
    done
    "$CG" status "$D/" >"$OUT/nccl-job-status.txt" 2>&1
    kill -TERM "$job" 2>/dev/null
    sleep 5
    kill -KILL -- -"$job" 2>/dev/null
    wait "$job" 2>/dev/null
    "$CG" report "$D/" >"$OUT/nccl-job-report.txt" 2>&1
    "$CG" report --json "$OUT/nccl-job-merged.json" "$D/" >/dev/null 2>&1
    if grep -q '"name": "ncclAllReduce"' <(sed -n '/"out_of_step"/,$p' "$OUT/nccl-job-status.json"); then
        say "PASS 2-rank job: status names ncclAllReduce out of step: $(grep -A3 "collectives out of step" "$OUT/nccl-job-status.txt" | tr -s ' \n' ' ')"
    else
        say "FAIL 2-rank job: status's out_of_step has no ncclAllReduce (nccl-job-status.json)"
    fi
    if [ -n "$seen" ]; then
        say "PASS 2-rank job: status showed both ranks in calls (rank 0 in a synchronize, rank 1 in ncclCommInitRank)"
    else
        say "FAIL 2-rank job: status never showed both ranks' calls in 60 s (nccl-job-status.*)"
    fi
    if grep -q "ranks 0, 1 made 10, 9 ncclAllReduce calls, no count most ranks made" "$OUT/nccl-job-report.txt"; then
        say "PASS 2-rank job: the report names the ranks' ncclAllReduce counts out of step: $(grep -o "ranks 0, 1 made [0-9, ]* ncclAllReduce calls[^(]*" "$OUT/nccl-job-report.txt" | head -1)"
    else
        say "FAIL 2-rank job: the report does not name ncclAllReduce out of step (nccl-job-report.txt)"
    fi
fi
cat "$S"
! grep -q '^FAIL' "$S"
