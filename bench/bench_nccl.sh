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

# A loop of ncclAllReduce on the stand-in libnccl.so.2 (tests/nccl: communicators without a GPU; a collective
# returns at once, so all of its cost is callguard's): ns a call plainly, with the layer idle (preloaded, no
# report) and under callguard run --report, rounds interleaved, the medians and their ratios to plain.
comms=$build/bin/nccl_comms
[ -x "$comms" ] || { echo "(no $comms: the stand-in is built with the tests)"; exit 0; }
n=3000000
ns() { # [ENV=V...]: ns a call of n all-reduces, the start-up taken off (a run of 0)
    a0=$(date +%s%N); env "$@" "$comms" 0 1 0 0 0 >/dev/null 2>&1; a1=$(date +%s%N)
    env "$@" "$comms" 0 1 0 $n 0 >/dev/null 2>&1; a2=$(date +%s%N)
    echo $(( ((a2 - a1) - (a1 - a0)) * 1000 / n ))
}
: >"$tmp/plain" && : >"$tmp/idle" && : >"$tmp/on"
for i in 1 2 3 4 5; do
    ns X=1 >>"$tmp/plain"
    ns LD_PRELOAD="$build/lib/libcallguard_nccl.so" >>"$tmp/idle"
    ns LD_PRELOAD="$build/lib/libcallguard_nccl.so" CALLGUARD_REPORT="$tmp/a.json" >>"$tmp/on"
done
med() { sort -n "$1" | sed -n 3p; }
p=$(med "$tmp/plain") i=$(med "$tmp/idle") o=$(med "$tmp/on")
echo "ncclAllReduce on the stand-in, median of 5 rounds of $n calls (ps a call): plain $p, layer idle $i" \
    "($(awk "BEGIN{printf \"%.2f\", $i/$p}")x), statistics on $o ($(awk "BEGIN{printf \"%.2f\", $o/$p}")x)"
