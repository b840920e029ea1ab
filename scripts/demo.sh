#!/bin/sh
# callguard's main job on a real stack, from a fresh checkout: build, then
# run an unmodified OpenCL program on PoCL (through ocl-icd) under
# `callguard run`, with clBuildProgram serialized, and show the report:
# every OpenCL call counted, builds taking turns on one lock.
set -eu
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
start=$(date +%s)
echo "== configuring: cmake -S . -B build"
cmake -S . -B build >/dev/null
echo "== building with $jobs jobs: cmake --build build (a first build takes minutes)"
# cmake's progress, a line each tenth of the way, and its errors; all of it
# in build/demo-build.log. POSIX sh has no pipefail: the build's status
# comes through the pipe as its last line. `read` takes a line as it comes.
{
    status=0
    cmake --build build -j"$jobs" 2>&1 || status=$?
    echo "callguard-demo-status $status"
} | {
    shown=0 status=1 log=build/demo-build.log
    : >"$log"
    while IFS= read -r line; do
        case $line in
        "callguard-demo-status "*) status=${line#callguard-demo-status }; continue ;;
        '['*'%]'*)
            pct=${line#\[}
            pct=$((${pct%%%*} + 0))
            if [ "$pct" -ge $((shown + 10)) ]; then
                shown=$((pct - pct % 10))
                printf '   %.96s\n' "$line"
            fi
            ;;
        *error:* | *warning:*) printf '   %s\n' "$line" ;;
        esac
        printf '%s\n' "$line" >>"$log"
    done
    if [ "$status" != 0 ]; then
        echo "== the build failed (status $status); its last lines ($log has them all):"
        tail -n 20 "$log"
    fi
    exit "$status"
}
echo "== built in $(($(date +%s) - start)) s"
# A fresh PoCL cache, so the builds really compile.
POCL_CACHE_DIR=$(mktemp -d)
export POCL_CACHE_DIR
trap 'rm -rf "$POCL_CACHE_DIR"' EXIT
echo "== callguard run --serialize clBuildProgram --report - -- build/bin/cl_vadd"
./build/bin/callguard run --serialize clBuildProgram --report - -- ./build/bin/cl_vadd
