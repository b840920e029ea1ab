#!/bin/sh
# Instruction counts of bench_run.py's workload (PyOpenCL, many small
# enqueues on PoCL) under callgrind, where timing cannot resolve a few per
# cent: plain, and with the OpenCL layer preloaded as `callguard run` sets
# it up (CALLGUARD_* variables in the process itself, so callgrind counts
# the python process only). Prints one line per variant: its Ir, the
# difference to plain, and that difference per guarded call.
# usage: bench/bench_run_ir.sh [BUILD_DIR] [ENQUEUES] [VARIANT...]
#   report    statistics on (what every callguard run has: CALLGUARD_STATS_DIR)
#   blocking  + CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=blocking  (--release-gil --transition blocking)
#   always    + CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always    (--release-gil --transition always)
#   lean      CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always, statistics off
#             (preloaded without callguard run: the lean leave-CPython path)
#   trace     + CALLGUARD_TRACE=FILE (--trace)
# default variants: report blocking always lean. Takes about a minute per variant.
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-20000}
[ $# -ge 2 ] && shift 2 || shift $#
variants=${*:-report blocking always lean}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
layer=$build/lib/libcallguard_cl.so
one() { # name env...
  name=$1; shift
  rm -rf "$dir/stats" && mkdir -p "$dir/stats"
  env POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR="$dir/pocl" "$@" \
    valgrind --tool=callgrind --callgrind-out-file="$dir/$name.out" /usr/bin/python3 "$here/pyopencl_enqueues.py" "$n" \
    >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log" >&2; exit 1; }
  awk '/^(totals|summary): / { print $2; exit }' "$dir/$name.out"
}
calls() { # guarded calls per run, from a report
  env POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR="$dir/pocl" LD_PRELOAD="$layer" CALLGUARD_REPORT="$dir/r.json" \
    /usr/bin/python3 "$here/pyopencl_enqueues.py" "$n" >/dev/null
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["calls"])' "$dir/r.json"
}
one warm >/dev/null # the PoCL kernel cache
ncalls=$(calls)
plain=$(one plain)
echo "PyOpenCL, $n enqueues ($ncalls guarded calls), /usr/bin/python3, callgrind Ir of the python process"
printf '  %-10s %14s %14s %10s\n' variant Ir "+Ir" "+Ir/call"
printf '  %-10s %14s\n' plain "$plain"
pre="LD_PRELOAD=$layer"
for v in $variants; do
  case $v in
    report) ir=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats") ;;
    blocking) ir=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=blocking) ;;
    always) ir=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always) ;;
    lean) ir=$(one "$v" "$pre" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always) ;;
    trace) ir=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_TRACE="$dir/t.json") ;;
    *) echo "bench_run_ir.sh: unknown variant '$v': expected report, blocking, always, lean or trace" >&2; exit 2 ;;
  esac
  awk -v v="$v" -v ir="$ir" -v p="$plain" -v c="$ncalls" \
    'BEGIN { printf "  %-10s %14d %+14d %10.1f  (%+.2f%%)\n", v, ir, ir - p, (ir - p) / c, 100 * (ir - p) / p }'
done
