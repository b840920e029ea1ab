#!/bin/bash
# tests/gpu/gil_check.sh OUTDIR [BUILD]: does `callguard run` without --release-gil keep the GIL where the
# program keeps it, on the real driver with PyTorch loaded (issue 32)? Runs tests/gpu/gil_probe.py plainly
# and under callguard in several modes, tests/gpu/pause.py (the same wait without PyTorch) as a control,
# and once with tests/gpu/btsig.c's stack dump of the waiting thread. Writes OUTDIR/gil.txt (one line per
# run: the mode, then the probe's "worst_pause_ms W waited_ms T overlap N"), each run's stderr and report.
# PASS when the default mode's pause is within 20 % of the plain one and --release-gil's is under 50 ms.
set -u
[ $# -ge 1 ] || { echo "usage: tests/gpu/gil_check.sh OUTDIR [BUILD]" >&2; exit 2; }
mkdir -p "$1" || exit 2
OUT=$(cd "$1" && pwd)
cd "$(dirname "$0")/../.."
SRC=$PWD
B=$(cd "${2:-build}" && pwd) || exit 2
PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
REAL=${CUDA_REAL:-/usr/local/nvidia/lib64/libcuda.so.1}
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_RUNTIME CALLGUARD_CUDA_LIBRARY
export LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$B/lib"
CG=$B/bin/callguard
G=$OUT/gil.txt
: >"$G"
probe() { # NAME [ENV=V...] [callguard options --] SCRIPT ARGS  (no options: plainly)
    local name=$1
    shift
    local out
    out=$(timeout 120 "$@" 2>"$OUT/gil-$name.err" | tail -1)
    echo "$name $out" >>"$G"
    echo "$out"
}
gp=$SRC/tests/gpu/gil_probe.py
plain=$(probe plain "$PY" "$gp")
probe plain2 "$PY" "$gp" >/dev/null
detect=$(probe detect "$CG" run --report "$OUT/gil-detect.json" -- "$PY" "$gp")
probe detect2 "$CG" run --report "$OUT/gil-detect2.json" -- "$PY" "$gp" >/dev/null
probe detect_api_cuda "$CG" run --api cuda --report "$OUT/gil-api.json" -- "$PY" "$gp" >/dev/null
probe runtime_none env CALLGUARD_RUNTIME=none "$CG" run --report "$OUT/gil-none.json" -- "$PY" "$gp" >/dev/null
probe timing_exact "$CG" run --timing exact --report "$OUT/gil-exact.json" -- "$PY" "$gp" >/dev/null
probe quirks_off "$CG" run --quirks off --report "$OUT/gil-quirks.json" -- "$PY" "$gp" >/dev/null
probe no_report "$CG" run -- "$PY" "$gp" >/dev/null
probe real_path "$CG" run --report "$OUT/gil-real.json" -- "$PY" "$gp" "$REAL" >/dev/null
probe pause_py_plain "$PY" "$SRC/tests/gpu/pause.py" >/dev/null
probe pause_py_detect "$CG" run --api cuda --report "$OUT/gil-pause.json" -- "$PY" "$SRC/tests/gpu/pause.py" >/dev/null
release=$(probe release "$CG" run --release-gil --report "$OUT/gil-release.json" -- "$PY" "$gp")
if [ -e "$B/lib/libcg_btsig.so" ]; then
    probe bt_detect env BTSIG="$B/lib/libcg_btsig.so" "$CG" run --report "$OUT/gil-bt.json" -- "$PY" "$gp" >/dev/null
    probe bt_plain env BTSIG="$B/lib/libcg_btsig.so" "$PY" "$gp" >/dev/null
fi
for j in "$OUT"/gil-*.json; do [ -e "$j" ] && "$CG" report "$j" >"${j%.json}.txt" 2>&1; done
{ "$PY" -VV; uname -r; command -v gdb eu-stack py-spy; ldd --version | head -1; } >"$OUT/gil-env.txt" 2>&1
p=$(awk '{print $2}' <<<"$plain")
d=$(awk '{print $2}' <<<"$detect")
r=$(awk '{print $2}' <<<"$release")
if awk -v p="${p:-0}" -v d="${d:-0}" 'BEGIN {exit !(p > 100 && d > 0.8 * p && d < 1.2 * p)}'; then
    echo "PASS gil: the default mode's longest pause ${d} ms, plainly ${p} ms (a PyDLL wait keeps the GIL)" >>"$G"
else
    echo "FAIL gil: the default mode's longest pause '${d:-?}' ms, plainly '${p:-?}' ms" >>"$G"
fi
if awk -v r="${r:-999}" 'BEGIN {exit !(r < 50)}'; then
    echo "PASS gil: --release-gil's longest pause ${r} ms" >>"$G"
else
    echo "FAIL gil: --release-gil's longest pause '${r:-?}' ms" >>"$G"
fi
cat "$G"
! grep -q '^FAIL' "$G"
