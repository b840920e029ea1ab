#!/bin/sh
# The guarded toy call benchmark: instruction counts under callgrind, then
# timing, printed as one table per program. Usage: bench/run.sh [BUILD_DIR]
# (default: build). Row 4 runs in each interpreter PYTHON names (default:
# python3; several, space-separated: PYTHON="python3.11 python3.12").
# Takes well under a minute per program. See docs/benchmarks.md.
set -eu
build=${1:-build}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM

# Instructions: each loop of the --count run is collected alone and dumped
# under its row's name (bench/callgrind_count.sh).
. "$(dirname "$0")/callgrind_count.sh"
count() { cg_count "$dir" "$@"; } # program [args]

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "CPU: $model ($(nproc) cores); valgrind: $(valgrind --version 2>/dev/null || echo none)"
here=$(dirname "$0")
run() { # program [args]: counted, then timed with the counts
  echo
  if count "$@"; then
    "$@" --ir "$dir/ir.txt"
  else
    "$@"
  fi
}
if [ -x "$build/bin/bench_call" ]; then run "$build/bin/bench_call"; else echo "($build/bin/bench_call not built)"; fi
# Row 4 embedded in the CPython found at build time (when its development files were there).
# A tree carried to another machine may lack that libpython: say so and go on.
if [ -x "$build/bin/bench_call_py_embed" ]; then
  echo
  echo "embedded CPython:"
  run "$build/bin/bench_call_py_embed" || echo "(bench_call_py_embed cannot run here: its libpython is missing?)"
fi
if [ -f "$build/bench/libcgbench_call_py.so" ]; then
  for py in ${PYTHON:-python3}; do
    # The interpreter itself, not a wrapper script (pyenv's shims are shell
    # scripts: valgrind would count the shell).
    exe=$("$py" -c 'import sys; print(sys.executable)') || { echo "($py: cannot run)"; continue; }
    run "$exe" "$here/bench_call_py.py" "$build"
  done
else
  echo "($build/bench/libcgbench_call_py.so not built)"
fi
