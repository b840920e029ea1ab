#!/bin/sh
# Statistics on with several threads calling at once (bench/bench_contention.c):
# instructions per call under callgrind (1 and 2 threads: they do not
# change with the thread count, the time does), then timing for every
# thread count (1, 2, 4, ... nproc). Usage: bench/bench_contention.sh
# [BUILD_DIR] [--threads LIST] [--rounds R] (default build). Without
# valgrind it times only. docs/benchmarks.md, "Several threads on one site".
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
prog=$build/bin/bench_contention
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
. "$(dirname "$0")/callgrind_count.sh"
if cg_count "$dir" "$prog" --threads 1,2; then
  "$prog" "$@" --ir "$dir/ir.txt"
else
  "$prog" "$@"
fi
