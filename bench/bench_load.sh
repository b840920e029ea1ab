#!/bin/sh
# The module-loading phase of a start-up (bench_load.c), four ways: the
# compiles serialized or not, the module cache cold (empty) or warm (filled
# by the previous run), each the median of ROUNDS fresh processes run under
# `callguard run` (so the layer is loaded in all four and only the lock
# differs). Figures, never pass/fail; see docs/benchmarks.md.
#
#   bench/bench_load.sh [BUILD_DIR] [ze|cuda] [THREADS] [MODULES] [ROUNDS]
#
# ze (default): the Level Zero simulator, CGSIM_COMPILE_MS (default 300) per
#   SPIR-V compile, a native-binary load costing no compile.
# cuda: real PTX on a GPU (the driver found as libcuda.so.1), the JIT's own
#   cache off (CUDA_CACHE_DISABLE=1) in every run, so cold is really cold and
#   warm is callguard's cache of cubins; PTX_FMAS (default 8000) sizes each
#   kernel.
set -eu
build=${1:-build}
api=${2:-ze}
threads=${3:-8}
modules=${4:-32}
rounds=${5:-3}
cli=$build/bin/callguard
prog=$build/bin/bench_load
[ -x "$cli" ] && [ -x "$prog" ] || { echo "bench_load.sh: build $build first ($cli, $prog)" >&2; exit 2; }
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT INT TERM
export CALLGUARD_CACHE_DIR="$cache"

case $api in
  ze)
    sim=$(find "$build" -name 'libze_cgsim.so' | head -n 1)
    [ -n "$sim" ] || { echo "bench_load.sh: no libze_cgsim.so in $build" >&2; exit 2; }
    export ZE_ENABLE_ALT_DRIVERS="$(cd "$(dirname "$sim")" && pwd)/$(basename "$sim")"
    export CGSIM_COMPILE_MS=${CGSIM_COMPILE_MS:-300}
    serialize=zeModuleCreate
    extra=""
    what="Level Zero simulator, CGSIM_COMPILE_MS=$CGSIM_COMPILE_MS"
    ;;
  cuda)
    export CUDA_CACHE_DISABLE=1
    serialize=cuModuleLoadData=jit,cuLinkComplete=jit
    extra=${PTX_FMAS:-8000}
    what="CUDA PTX ($extra FMAs a kernel), CUDA_CACHE_DISABLE=1"
    ;;
  *) echo "bench_load.sh: API '$api': expected ze or cuda" >&2; exit 2 ;;
esac

# one run: prints its phase in ms; $1: serialize (1/0), $2: cold (1/0)
run_once() {
  [ "$2" = 1 ] && rm -rf "$cache"/load-v1
  if [ "$1" = 1 ]; then ser="--serialize $serialize"; else ser=""; fi
  # shellcheck disable=SC2086
  out=$("$cli" run --api "$api" $ser -- "$prog" "$api" "$threads" "$modules" $extra)
  echo "$out" | sed -n 's/.*phase_ms=\([0-9.]*\).*/\1/p'
  case $2 in
    1) echo "$out" | grep -q "disk_hits=0 " || { echo "bench_load.sh: a cold run hit the cache: $out" >&2; exit 1; } ;;
    0) echo "$out" | grep -q "builds=0 " || { echo "bench_load.sh: a warm run built: $out" >&2; exit 1; } ;;
  esac
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

measure() { # serialize cold
  n=$rounds
  # warm rounds are cheap and short (noisy): three times as many, on a cache
  # filled once by a cold run
  if [ "$2" = 0 ]; then n=$((rounds * 3)); run_once 0 1 >/dev/null || exit 1; fi
  # not `while ...; done | median`: an exit in the loop would end only the
  # pipeline's subshell, and the median would be of the runs before it
  times="" i=0
  while [ $i -lt "$n" ]; do
    t=$(run_once "$1" "$2") || exit 1
    times="$times$t
"
    i=$((i + 1))
  done
  printf '%s' "$times" | median
}

echo "bench_load: $what; $threads threads, $modules modules, median of $rounds cold and $((rounds * 3)) warm runs"
echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1) ($(nproc) cores)"
uc=$(measure 0 1); sc=$(measure 1 1); uw=$(measure 0 0); sw=$(measure 1 0)
awk -v uc="$uc" -v sc="$sc" -v uw="$uw" -v sw="$sw" 'BEGIN {
  printf "%-14s %12s %12s %10s\n", "", "cold ms", "warm ms", "cold/warm"
  printf "%-14s %12.2f %12.3f %9.0fx\n", "unserialized", uc, uw, uc / uw
  printf "%-14s %12.2f %12.3f %9.0fx\n", "serialized", sc, sw, sc / sw
  printf "serialization: +%.1f %% of the phase cold, %+.2f %% warm\n", (sc - uc) / uc * 100, (sw - uw) / uw * 100
}'
