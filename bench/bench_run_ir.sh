#!/bin/sh
# Instruction counts of bench_run.py's workload (PyOpenCL, many small
# enqueues on PoCL) under callgrind, where timing cannot resolve a few per
# cent: plain, and with the OpenCL layer preloaded as `callguard run` sets
# it up (CALLGUARD_* variables in the process itself, so callgrind counts
# the python process only). Prints one line per variant: its Ir, the
# difference to plain, and that difference per guarded call; then the same
# outside glibc's allocator (below).
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
# The same program's Ir moves by up to ~1 % from run to run here, all of it in
# glibc's allocator (malloc_consolidate, _int_malloc, unlink_chunk: how much work
# a malloc does depends on how PoCL's worker thread and the main thread
# interleave, and valgrind runs one thread at a time, the next one chosen by
# the host's scheduler after a system call); outside the allocator three plain
# runs agreed within 6,000 Ir. So each run is also counted without the
# functions of glibc's malloc/ (callgrind_annotate; callguard itself allocates
# only at start-up and on a site's first call), and plain runs PLAIN_RUNS times
# (default 3): the variants are set against the medians, and percentages are
# of plain's whole process. Every plain run is printed.
set -eu
build=$(cd "${1:-build}" && pwd)
n=${2:-20000}
[ $# -ge 2 ] && shift 2 || shift $#
variants=${*:-report blocking always lean}
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
layer=$build/lib/libcallguard_cl.so
one() { # name env...: prints "PROCESS_IR MAIN_THREAD_IR PROCESS_IR_OUTSIDE_THE_ALLOCATOR"
  name=$1; shift
  rm -rf "$dir/stats" && mkdir -p "$dir/stats"
  env PYTHONHASHSEED=0 POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR="$dir/pocl" "$@" \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$dir/$name.out" \
    /usr/bin/python3 "$here/pyopencl_enqueues.py" "$n" >"$dir/$name.log" 2>&1 || { cat "$dir/$name.log" >&2; exit 1; }
  for f in "$dir/$name.out"-*; do
    callgrind_annotate --inclusive=no --threshold=100 "$f" 2>/dev/null |
      awk '$1 ~ /^[0-9,]+$/ { v = $1; gsub(",", "", v); if (/PROGRAM TOTALS/) all = v; else if (/\/malloc\/.*libc\.so/) alloc += v }
           END { print all, all - alloc }'
  done | awk 'NR == 1 { main = $1 } { all += $1; rest += $2 } END { print all, main, rest }'
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
set -- $(sort -n -k3 "$dir/plain.txt" | awk '{ v[NR] = $3 } END { print v[int((NR + 1) / 2)] }')
plain_rest=$1
echo "PyOpenCL, $n enqueues ($ncalls guarded calls), /usr/bin/python3, callgrind Ir of the python process, and of it outside glibc's allocator"
echo "plain, $runs runs: $(awk '{ printf "%s%d", (NR > 1 ? ", " : ""), $1 }' "$dir/plain.txt");"
echo "  outside the allocator: $(awk '{ printf "%s%d", (NR > 1 ? ", " : ""), $3 }' "$dir/plain.txt"); the variants against the medians"
printf '  %-10s %14s %14s %10s %10s  %14s %10s %10s\n' variant Ir "+Ir" "+Ir/call" "+%" "outside +Ir" "+Ir/call" "+%"
printf '  %-10s %14s %14s %10s %10s  %14s\n' plain "$plain" "" "" "" "($plain_rest)"
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
  awk -v v="$v" -v ir="$1" -v r="$3" -v p="$plain" -v pr="$plain_rest" -v c="$ncalls" \
    'BEGIN { printf "  %-10s %14d %+14d %10.1f %+9.2f%%  %+14d %10.1f %+9.2f%%\n", v, ir, ir - p, (ir - p) / c, 100 * (ir - p) / p, r - pr, (r - pr) / c, 100 * (r - pr) / p }'
done
