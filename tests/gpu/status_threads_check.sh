#!/bin/bash
# tests/gpu/status_threads_check.sh OUTDIR [BUILD]: issue 47 on the GPU machine. torchrun, 2 ranks under
# `callguard run --report OUT/t/` (threads_hang.py): rank 0's thread "gpu-worker" waits in
# torch.cuda.synchronize() called from wait_gpu(), its main thread joins it; rank 1 waits in a gloo
# barrier. Within 30 s `callguard status OUT/t/` must name, unasked by ptrace: rank 0's worker by its
# Python name in cuCtxSynchronize with its user frame threads_hang.py's wait_gpu line, and rank 1's main
# thread at threads_hang.py's barrier line. Writes OUTDIR/summary-threads.txt and the outputs.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/status_threads_check.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
. tests/gpu/gpu_env.sh
S=$OUT/summary-threads.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
T=$OUT/t
rm -rf "$T"
mkdir -p "$T"
JOB=$SRC/tests/gpu/threads_hang.py
WLINE=$(grep -n "the user's line of rank 0's worker" "$JOB" | cut -d: -f1)
BLINE=$(grep -n "rank 1's line" "$JOB" | cut -d: -f1)
setsid "$CG" run --api cuda --report "$T/" -- "$TORCHRUN" --nproc-per-node 2 "$JOB" >"$OUT/t-run.out" 2>"$OUT/t-run.err" &
RUN=$!
seen=
for i in $(seq 1 30); do
    sleep 1
    [ "$(grep -c 'waiting' "$OUT/t-run.out")" -ge 2 ] || continue
    start=$(date +%s.%N)
    "$CG" status "$T/" >"$OUT/t-status.txt" 2>&1
    end=$(date +%s.%N)
    flat=$(tr -s ' \n' ' ' <"$OUT/t-status.txt")
    if echo "$flat" | grep -q "gpu-worker" && echo "$flat" | grep -q "threads_hang.py:$WLINE in wait_gpu" &&
        echo "$flat" | grep -q "threads_hang.py:$BLINE in <module>"; then
        seen=$i
        break
    fi
done
"$CG" status --json "$T/" >"$OUT/t-status.json" 2>&1
if [ -n "$seen" ]; then
    say "PASS: t. status named rank 0's gpu-worker at threads_hang.py:$WLINE in wait_gpu and rank 1 at" \
        "threads_hang.py:$BLINE (after ${seen} s; status took $(awk "BEGIN{printf \"%.2f\", $end - $start}") s)"
else
    say "FAIL: t. status did not name both ranks' lines (t-status.txt)"
fi
kill -TERM "$RUN" 2>/dev/null
for i in $(seq 1 30); do kill -0 "$RUN" 2>/dev/null || break; sleep 1; done
kill -KILL -- -"$RUN" 2>/dev/null
wait "$RUN" 2>/dev/null
pkill -KILL -f threads_hang.py 2>/dev/null
ls "$T" >"$OUT/t-reports.txt" 2>&1
say "t. reports: $(ls "$T"/*.json 2>/dev/null | wc -l)"
