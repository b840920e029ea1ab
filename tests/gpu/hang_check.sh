#!/bin/bash
# tests/gpu/hang_check.sh OUTDIR [BUILD]: issues 35 and 36 on the GPU machine, in one command.
#   f. torchrun, 2 ranks under `callguard run --report OUT/f/` (no hang option): rank 1 waits in
#      cuStreamSynchronize on a spinning kernel (torch_hang.py:19), rank 0 in a gloo barrier. Within 20 s
#      `callguard status OUT/f/` names rank 1's cuStreamSynchronize with its line and says rank 0 is in no
#      guarded call; after SIGTERM to the run the report keeps rank 1's call and line.
#   g. The launch-bound PyTorch loop in one process (overhead_ab.py): statistics on against off with the
#      hang page on (the default) and off (CALLGUARD_HANG_MS=off), interleaved rounds, medians.
# Writes OUTDIR/summary-hang.txt (PASS/FAIL lines with figures) and the outputs. Same environment as run.sh.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/hang_check.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
. tests/gpu/gpu_env.sh
S=$OUT/summary-hang.txt
: >"$S"
say() { echo "$*" | tee -a "$S"; }
fail=0
ok() { say "PASS: $*"; }
bad() { say "FAIL: $*"; fail=1; }

# ---- f. torchrun: the rank out of step, live and after SIGTERM -------------------------------------------
F=$OUT/f
rm -rf "$F"
mkdir -p "$F"
setsid "$CG" run --api cuda --report "$F/" -- "$TORCHRUN" --nproc-per-node 2 "$SRC/tests/gpu/torch_hang.py" \
    >"$OUT/f-run.out" 2>"$OUT/f-run.err" &
RUN=$!
seen=
for i in $(seq 1 60); do
    sleep 1
    "$CG" status "$F/" >"$OUT/f-status.txt" 2>&1
    # The line is the innermost Python frame: torch's own Stream.synchronize (torch/cuda/streams.py), which
    # torch_hang.py:19 called (seen on the H200, 2026-12-06: streams.py:108 in synchronize).
    if tr -s ' \n' ' ' <"$OUT/f-status.txt" | grep -q "cuStreamSynchronize at [^ ]*streams.py:[0-9]* in synchronize" &&
        [ "$(grep -c 'waiting' "$OUT/f-run.out")" -ge 2 ]; then
        seen=$i
        break
    fi
done
"$CG" status --json "$F/" >"$OUT/f-status.json" 2>&1
if [ -n "$seen" ] && grep -q "no guarded call in flight" "$OUT/f-status.txt"; then
    ok "f. status named rank 1 in cuStreamSynchronize at torch's streams.py synchronize and rank 0 in no guarded call (${seen} s)"
else
    bad "f. status did not name both ranks (f-status.txt)"
fi
kill -TERM "$RUN" 2>/dev/null
wait "$RUN"
echo "exit $?" >>"$OUT/f-run.err"
"$CG" report "$F/" >"$OUT/f-report.txt" 2>&1
if "$PY" - "$F" >"$OUT/f-check.txt" 2>&1 <<'PYEOF'
import json, os, sys
calls = []
for f in os.listdir(sys.argv[1]):
    if f.endswith(".json"):
        for p in json.load(open(os.path.join(sys.argv[1], f)))["processes"]:
            calls += [(p.get("rank"), c["name"], os.path.basename((c.get("python") or {}).get("file") or ""))
                      for c in p["in_flight"]]
print(calls)
sys.exit(0 if (1, "cuStreamSynchronize", "streams.py") in calls else 1)
PYEOF
then ok "f. after SIGTERM the report keeps rank 1's cuStreamSynchronize and its line ($(cat "$OUT/f-check.txt"))"
else bad "f. the report after SIGTERM lacks rank 1's call and line ($(cat "$OUT/f-check.txt"))"; fi

# ---- g. the launch-bound loop: statistics on/off, the hang page on and off ----------------------------
timeout -k 5 400 "$CG" run --api cuda --report "$OUT/g.json" -- "$PY" "$SRC/tests/gpu/overhead_ab.py" "${ROUNDS:-40}" \
    >"$OUT/g-overhead.txt" 2>&1 && ok "g. overhead_ab: $(tr '\n' ' ' <"$OUT/g-overhead.txt" | cut -c1-600)" ||
    bad "g. overhead_ab failed (g-overhead.txt)"
exit $fail
