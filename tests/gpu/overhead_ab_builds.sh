#!/bin/bash
# tests/gpu/overhead_ab_builds.sh OUTDIR ROUNDS LAUNCHES BUILD SCRIPT [BUILD SCRIPT ...]: the launch-bound loop
# (overhead_ab.py, statistics on against off in one process) under each build in turn, twice, alternating, so
# that two builds are compared on one machine in one call (a figure from another day's machine is no baseline).
# SCRIPT: the overhead_ab.py of that build's tree. Writes OUTDIR/ab-builds.txt.
set -u
[ $# -ge 5 ] || { echo "usage: tests/gpu/overhead_ab_builds.sh OUTDIR ROUNDS LAUNCHES BUILD SCRIPT [...]" >&2; exit 2; }
OUT=$1 ROUNDS=$2 LAUNCHES=$3
shift 3
mkdir -p "$OUT" || exit 2
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
export TRITON_LIBCUDA_PATH=$(dirname "$REAL") LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
S=$OUT/ab-builds.txt
: >"$S"
for pass in 1 2; do
    args=("$@")
    for ((i = 0; i < ${#args[@]}; i += 2)); do
        b=${args[i]} script=${args[i + 1]}
        echo "== $b (pass $pass)" >>"$S"
        timeout 250 "$b/bin/callguard" run --api cuda --report "$OUT/ab-$i-$pass.json" -- "$PY" "$script" "$ROUNDS" \
            "$LAUNCHES" >>"$S" 2>&1
    done
done
cat "$S"
