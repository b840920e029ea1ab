#!/bin/bash
# tests/gpu/stuck_check.sh OUTDIR [BUILD]: issue 49 on the GPU machine. torchrun, 2 ranks under
# `callguard run --api cuda --report OUT/s/ --stuck 10s --on-stuck abort` (torch_hang.py: rank 1 in
# cuStreamSynchronize on a kernel spinning ~1000 s, rank 0 in a gloo barrier). callguard must name
# rank 1's cuStreamSynchronize on stderr once it is 10 s old, end the job by itself (exit 124) and keep
# each rank's report with a `stuck` member. Writes OUTDIR/summary-stuck.txt (PASS/FAIL lines and the
# times: job start to the view, the view to the end) and the outputs.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/stuck_check.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
. tests/gpu/gpu_env.sh
S=$OUT/summary-stuck.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
T=$OUT/s
rm -rf "$T"
mkdir -p "$T"
start=$(date +%s.%N)
timeout -k 5 180 "$CG" run --api cuda --report "$T/" --stuck 10s --on-stuck abort -- "$TORCHRUN" --nproc-per-node 2 \
    "$SRC/tests/gpu/torch_hang.py" >"$OUT/s-run.out" 2>"$OUT/s-run.err"
rc=$?
end=$(date +%s.%N)
said=$(grep -c "stuck over --stuck 10s" "$OUT/s-run.err")
flat=$(tr -s ' \n' ' ' <"$OUT/s-run.err")
if [ "$rc" -eq 124 ] && [ "$said" -ge 1 ] && echo "$flat" | grep -q "rank 1" &&
    echo "$flat" | grep -q "cuStreamSynchronize"; then
    say "PASS: s. --stuck 10s named rank 1 in cuStreamSynchronize and --on-stuck abort ended the job (exit 124)"
else
    say "FAIL: s. exit $rc, the view said $said times (s-run.err)"
fi
say "s. job start to its end: $(awk "BEGIN{printf \"%.1f\", $end - $start}") s (the call passes 10 s a few s after the start)"
n=$(grep -l '"stuck"' "$T"/*.json 2>/dev/null | wc -l)
say "s. reports with a stuck member: $n of $(ls "$T"/*.json 2>/dev/null | wc -l)"
grep -n "stuck over" "$OUT/s-run.err" | head -3 | tee -a "$S"
