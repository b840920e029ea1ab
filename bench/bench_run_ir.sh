#!/bin/sh
# Instruction counts of bench_run.py's workload (PyOpenCL, many small
# enqueues on PoCL) under callgrind, where timing cannot resolve a few per
# cent: plain, and with the OpenCL layer preloaded as `callguard run` sets
# it up (CALLGUARD_* variables in the process itself, so callgrind counts
# the python process only). Prints one line per variant: its Ir, the
# difference to plain, and that difference per guarded call; then the same
# for the main thread alone (every guarded call is made there; PoCL's
# worker thread is left out, as its waits differ from run to run).
# PYTHONHASHSEED=0: with random string hashes the interpreter's own count
# moves by ~2 M from run to run.
# usage: bench/bench_run_ir.sh [BUILD_DIR] [ENQUEUES] [VARIANT...]
#   report    statistics on (what every callguard run has: CALLGUARD_STATS_DIR)
#   blocking  + CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=blocking  (--release-gil --transition blocking)
#   always    + CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always    (--release-gil --transition always)
#   lean      CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always, statistics off
#             (preloaded without callguard run: the lean leave-CPython path)
#   trace     + CALLGUARD_TRACE=FILE (--trace)
# default variants: report blocking always lean. Takes about a minute per variant.
# plain runs PLAIN_RUNS times (default 3) and the variants are set against the
# median: the same plain program moves by up to ~1 % in Ir from run to run here,
# all of it in glibc's allocator on the main thread (malloc_consolidate,
# _int_malloc), which depends on how PoCL's worker thread and the main thread
# interleave; valgrind runs one thread at a time, and which one resumes first
# after a system call is up to the host's scheduler. Every plain run is printed.
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-20000}
[ $# -ge 2 ] && shift 2 || shift $#
variants=${*:-report blocking always lean}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
layer=$build/lib/libcallguard_cl.so
one() { # name env...: prints "PROCESS_IR MAIN_THREAD_IR"
  name=$1; shift
  rm -rf "$dir/stats" && mkdir -p "$dir/stats"
  env PYTHONHASHSEED=0 POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR="$dir/pocl" "$@" \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/$name.out" \
    /usr/bin/python3 "$here/pyopencl_enqueues.py" "$n" >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log" >&2; exit 1; }
  for f in "$dir/$name.out"-*; do awk '/^(totals|summary): / { print $2; exit }' "$f"; done |
    awk 'NR == 1 { main = $1 } { all += $1 } END { print all, main }'
}
calls() { # guarded calls per run, from a report
  env POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR="$dir/pocl" LD_PRELOAD="$layer" CALLGUARD_REPORT="$dir/r.json" \
    /usr/bin/python3 "$here/pyopencl_enqueues.py" "$n" >/dev/null
  /usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["totals"]["calls"])' "$dir/r.json"
}
one warm >/dev/null # the PoCL kernel cache
ncalls=$(calls)
runs=${PLAIN_RUNS:-3}
: >"$dir/plain.txt"
i=0
while [ $i -lt "$runs" ]; do one plain >>"$dir/plain.txt"; i=$((i + 1)); done
set -- $(sort -n "$dir/plain.txt" | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }')
plain=$1 plain_main=$2
echo "PyOpenCL, $n enqueues ($ncalls guarded calls), /usr/bin/python3, callgrind Ir of the python process (and of its main thread)"
echo "plain, $runs runs: $(awk '{ printf "%s%d", (NR > 1 ? ", " : ""), $1 }' "$dir/plain.txt"); the variants against their median"
printf '  %-10s %14s %14s %10s %10s  %14s %10s\n' variant Ir "+Ir" "+Ir/call" "+%" "main +Ir" "main +%"
printf '  %-10s %14s %14s %10s %10s  %14s\n' plain "$plain" "" "" "" "($plain_main)"
pre="LD_PRELOAD=$layer"
for v in $variants; do
  case $v in
    report) r=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats") ;;
    blocking) r=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=blocking) ;;
    always) r=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always) ;;
    lean) r=$(one "$v" "$pre" CALLGUARD_RUNTIME=cpython CALLGUARD_TRANSITION=always) ;;
    trace) r=$(one "$v" "$pre" CALLGUARD_STATS_DIR="$dir/stats" CALLGUARD_TRACE="$dir/t.json") ;;
    *) echo "bench_run_ir.sh: unknown variant '$v': expected report, blocking, always, lean or trace" >&2; exit 2 ;;
  esac
  set -- $r
  awk -v v="$v" -v ir="$1" -v m="$2" -v p="$plain" -v pm="$plain_main" -v c="$ncalls" \
    'BEGIN { printf "  %-10s %14d %+14d %10.1f %+9.2f%%  %+14d %+9.2f%%\n", v, ir, ir - p, (ir - p) / c, 100 * (ir - p) / p, m - pm, 100 * (m - pm) / p }'
done
