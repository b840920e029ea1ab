#!/bin/bash
# tests/gpu/cost_ab.sh OUTDIR ROUNDS BUILD [BUILD ...]: issue 50's three figures on the GPU machine for each build,
# twice, the builds alternating, so that builds are compared on one machine in one call: the launch-bound PyTorch
# loop (overhead_ab.py ROUNDS x 2000 launches: statistics on against off loop by loop in one process, the hang
# page on, and the method's own noise, off against off) and ncclAllReduce through ctypes and
# torch.distributed.all_reduce (nccl_torch.py ab ROUNDS x 2000 calls, the same way). Both scripts are this tree's
# for every build: one method. Writes OUTDIR/cost-ab.txt (and each run's report).
set -u
[ $# -ge 3 ] || { echo "usage: tests/gpu/cost_ab.sh OUTDIR ROUNDS BUILD [BUILD ...]" >&2; exit 2; }
OUT=$1 ROUNDS=$2
shift 2
mkdir -p "$OUT" || exit 2
SRC=$(pwd)
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
export TRITON_LIBCUDA_PATH=$(dirname "$REAL") LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_HANG_MS CALLGUARD_TIMING
S=$OUT/cost-ab.txt
: >"$S"
for pass in 1 2; do
    for b in "$@"; do
        n=$(basename "$b")
        echo "== $n (pass $pass)" >>"$S"
        timeout 200 "$b/bin/callguard" run --api cuda --report "$OUT/loop-$n-$pass.json" -- "$PY" \
            "$SRC/tests/gpu/overhead_ab.py" "$ROUNDS" 2000 2>&1 | grep -v '^callguard: wrote' >>"$S"
        timeout 200 "$b/bin/callguard" run --api cuda,nccl --report "$OUT/nccl-$n-$pass.json" -- "$PY" \
            "$SRC/tests/gpu/nccl_torch.py" ab "$ROUNDS" 2000 2>&1 | grep -v '^callguard: wrote' >>"$S"
    done
done
cat "$S"
