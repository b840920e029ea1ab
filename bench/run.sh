#!/bin/sh
# The guarded toy call benchmark: instruction counts under callgrind, then
# timing, printed as one table per program. Usage: bench/run.sh [BUILD_DIR]
# (default: build). Takes well under a minute. See docs/benchmarks.md.
set -eu
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# Instructions: each loop of the --count run is collected alone and dumped
# under its row's name; a dump's "totals:" line is its instruction count.
count() { # program
  if ! command -v valgrind >/dev/null 2>&1; then
    echo "(valgrind not found: timing only)" >&2
    return 1
  fi
  rm -f "$dir"/cg.out*
  valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$dir/cg.out" "$1" --count \
    >"$dir/valgrind.log" 2>&1 || { cat "$dir/valgrind.log" >&2; return 1; }
  for f in "$dir"/cg.out.*; do
    awk '/^desc: Trigger: Client Request: / { name = $5 }
         /^(totals|summary): / { ir = $2 }
         END { if (name != "") print name, ir }' "$f"
  done >"$dir/ir.txt"
}

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "CPU: $model ($(nproc) cores); valgrind: $(valgrind --version 2>/dev/null || echo none)"
for prog in bench_call bench_call_py; do
  exe=$build/bin/$prog
  [ -x "$exe" ] || exe=$build/bench/$prog
  if [ ! -x "$exe" ]; then
    echo "($exe not built)"
    continue
  fi
  echo
  if count "$exe"; then
    "$exe" --ir "$dir/ir.txt"
  else
    "$exe"
  fi
done
