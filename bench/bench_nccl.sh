#!/bin/sh
# bench_nccl.sh BUILD_DIR [NCCL_DIR]: the cost of NCCL's string calls (bench_nccl_strings.c) plainly, under
# callguard run (statistics on: the report) and with the NCCL layer's statistics off (CALLGUARD_REPORT unset,
# the layer preloaded with no policy). NCCL_DIR: the package's folder (default build-venv/nccl). Figures only
# (docs/nccl.md, "Cost").
set -eu
build=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/.." && pwd)
nccl=$(cd "${2:-$src/build-venv/nccl}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -I "$nccl/include" -I /usr/local/cuda/include "$src/bench/bench_nccl_strings.c" -o "$tmp/strings" \
    "$nccl/lib/libnccl.so.2" -Wl,-rpath,"$nccl/lib"
for i in 1 2 3; do
    echo "plain:";            "$tmp/strings"
    echo "layer, no policy:"; LD_PRELOAD="$build/lib/libcallguard_nccl.so" "$tmp/strings"
    echo "callguard run --report (statistics on):"
    "$build/bin/callguard" run --api nccl --report "$tmp/r.json" -- "$tmp/strings" 2>/dev/null
done
