#!/bin/bash
# tests/gpu/overhead_modes.sh OUTDIR [BUILD]: part d's launch-bound loop (tests/gpu/overhead.py launch: 10,000
# small PyTorch kernels) plain and under `callguard run --report` in several configurations, in interleaved
# rounds (the order rotating), to tell which part of callguard a launch loop's overhead comes from.
# Prints each configuration's median loop time and its ratio to plain. No threshold: a measurement.
# Environment: PYTHON (default /opt/torch/.venv/bin/python3), CUDA_REAL (as run.sh), ROUNDS (default 6),
# MODES (default "plain sampled exact none"): sampled = --report; exact = --report --timing exact;
# none = --report with CALLGUARD_RUNTIME=none (no adapter asked about the GIL); hang = --report --hang-ms 60000.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/overhead_modes.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
B=$(cd "${2:-build}" && pwd)
CG=$B/bin/callguard
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
REAL=${CUDA_REAL:-}
if [ -z "$REAL" ]; then
    for r in /usr/local/nvidia/lib64/libcuda.so.1 /usr/lib/x86_64-linux-gnu/libcuda.so.1; do
        [ -e "$r" ] && REAL=$r && break
    done
fi
MODES=${MODES:-plain sampled exact none}
ROUNDS=${ROUNDS:-6}
OV=tests/gpu/overhead.py
one() { # MODE -> the loop's median ms
    case $1 in
    plain) timeout 120 "$PY" "$OV" 5 launch ;;
    sampled) CALLGUARD_CUDA_LIBRARY=$REAL timeout 120 "$CG" run --api cuda --report "$OUT/$1.json" -- "$PY" "$OV" 5 launch ;;
    exact) CALLGUARD_CUDA_LIBRARY=$REAL timeout 120 "$CG" run --api cuda --report "$OUT/$1.json" --timing exact -- "$PY" "$OV" 5 launch ;;
    none) CALLGUARD_RUNTIME=none CALLGUARD_CUDA_LIBRARY=$REAL timeout 120 "$CG" run --api cuda --report "$OUT/$1.json" -- "$PY" "$OV" 5 launch ;;
    hang) CALLGUARD_CUDA_LIBRARY=$REAL timeout 120 "$CG" run --api cuda --report "$OUT/$1.json" --hang-ms 60000 -- "$PY" "$OV" 5 launch ;;
    *) echo "unknown mode $1" >&2; return 2 ;;
    esac 2>>"$OUT/stderr.txt" | tail -1 | awk '{print $2}'
}
set -- $MODES
n=$#
for r in $(seq 1 "$ROUNDS"); do
    i=0
    for m in $MODES; do # rotate the order each round
        k=$(( (i + r) % n + 1 ))
        mode=${!k}
        echo "$mode $(one "$mode")" >>"$OUT/rounds.txt"
        i=$((i + 1))
    done
done
"$PY" - "$OUT/rounds.txt" $MODES <<'PYEOF'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 2]
med = {m: statistics.median(float(v) for k, v in rows if k == m) for m in sys.argv[2:] if any(k == m for k, _ in rows)}
base = med.get("plain")
for m, v in med.items():
    print("%-8s median %8.3f ms  ratio %s" % (m, v, "%.4f" % (v / base) if base else "-"))
PYEOF
