#!/bin/sh
# The thread-rule checker's cost (bench/bench_threads.c): instructions per
# call under callgrind, then timing. Usage: bench/bench_threads.sh [BUILD_DIR]
# (default: build). docs/benchmarks.md records the figures.
set -eu
build=${1:-build}
prog=$build/bin/bench_threads
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) ($(nproc) cores)"
. "$(dirname "$0")/callgrind_count.sh"
if command -v valgrind >/dev/null 2>&1; then
  cg_count "$dir" "$prog" || exit 1
  sort "$dir/ir.txt" -o "$dir/ir.txt"
  echo "instructions per call (callgrind, 100000 calls per loop):"
  awk '{ split($1, k, "."); ir[k[1] "." k[2]] = $2 }
       END { for (r = 1; r <= 6; r++) printf "  row %d: unchecked %.1f, checked %.1f, added %.1f\n", r,
             ir[r ".base"] / 100000, ir[r ".cand"] / 100000, (ir[r ".cand"] - ir[r ".base"]) / 100000 }' "$dir/ir.txt"
else
  echo "(valgrind not found: timing only)"
fi
"$prog"
