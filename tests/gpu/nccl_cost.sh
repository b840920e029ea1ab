#!/bin/bash
# tests/gpu/nccl_cost.sh OUTDIR [BUILD] [ROUNDS]: where statistics cost a loop of small all-reduces (docs/nccl.md,
# "Cost"). Runs tests/gpu/nccl_torch.py ab under `callguard run --api A --report` for A = nccl, cuda and both (the
# loop through ctypes and through torch.distributed, statistics toggled in one process), then lists the
# entry points the torch loop calls per all_reduce (calls of each site over the loop's all-reduces).
# Writes OUTDIR/nccl-cost.txt (the figures) and OUTDIR/nccl-cost.tar.gz (each run's output and report).
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/nccl_cost.sh OUTDIR [BUILD] [ROUNDS]" >&2; exit 2; }
mkdir -p "$1/cost" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.." || exit 2
SRC=$PWD
B=$(cd "${2:-build}" && pwd) || exit 2
ROUNDS=${3:-16}
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_RUNTIME CALLGUARD_NCCL_LIBRARY
export LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CG=$B/bin/callguard
S=$OUT/nccl-cost.txt
: >"$S"
# The collectives without `blocking` (so without their threads-inside peaks): a policy file read at run time.
printf '[ncclAllReduce]\nblocking = no\n' >"$OUT/cost/nonblocking.ini"
for api in nccl nccl-nonblocking cuda nccl,cuda; do
    pol=()
    [ "$api" = nccl-nonblocking ] && pol=(env CALLGUARD_POLICY="$OUT/cost/nonblocking.ini")
    timeout 200 "${pol[@]}" "$CG" run --api "${api%-nonblocking}" --report "$OUT/cost/$api.json" -- "$PY" \
        "$SRC/tests/gpu/nccl_torch.py" ab "$ROUNDS" 2000 >"$OUT/cost/$api.out" 2>"$OUT/cost/$api.err"
    echo "--api $api (exit $?):" >>"$S"
    sed 's/^/  /' "$OUT/cost/$api.out" >>"$S"
    tail -3 "$OUT/cost/$api.err" | sed 's/^/  stderr: /' >>"$S"
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
