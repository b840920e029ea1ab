#!/bin/sh
# The OpenCL layer's cost on a cheap call (docs/benchmarks.md, "OpenCL"):
# builds bench/bench_cl.c against ocl-icd, then runs it with the layer
# preloaded, under callgrind (instructions) and timed (ns).
# Usage: bench/bench_cl.sh [BUILD_DIR]   (default: build; the layer must be built)
set -eu
build=${1:-build}
here=$(cd "$(dirname "$0")" && pwd)
layer=$build/lib/libcallguard_cl.so
[ -f "$layer" ] || layer=$build/src/layers/cl/libcallguard_cl.so
[ -f "$layer" ] || { echo "bench_cl.sh: $layer not built" >&2; exit 1; }
layer=$(cd "$(dirname "$layer")" && pwd)/$(basename "$layer")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT INT TERM
export POCL_CACHE_DIR="$dir/pocl" POCL_MAX_PTHREAD_COUNT=1
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_TRACE CALLGUARD_POLICY

${CC:-cc} -O2 -std=gnu11 -Wall -Wextra -Werror "$here/bench_cl.c" -lOpenCL -o "$dir/bench_cl"

model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
echo "CPU: $model ($(nproc) cores); valgrind: $(valgrind --version 2>/dev/null || echo none)"
echo "layer: $layer (preloaded, no policy)"
if command -v valgrind >/dev/null 2>&1; then
  LD_PRELOAD=$layer valgrind --tool=callgrind --collect-atstart=no --callgrind-out-file="$dir/cg.out" \
    "$dir/bench_cl" --count >"$dir/valgrind.log" 2>&1 || { cat "$dir/valgrind.log" >&2; exit 1; }
  for f in "$dir"/cg.out.*; do
    awk '/^desc: Trigger: Client Request: / { name = $5 }
         /^(totals|summary): / { ir = $2 }
         END { if (name != "") print name, ir }' "$f"
  done | awk '{ ir[$1] = $2 }
    END { printf "instructions per call: direct %.2f, guarded %.2f, +%.2f\n",
                 ir["direct"] / 100000, ir["guarded"] / 100000, (ir["guarded"] - ir["direct"]) / 100000 }'
fi
LD_PRELOAD=$layer "$dir/bench_cl"
