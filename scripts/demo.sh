#!/bin/sh
# callguard's main job on a real stack, from a fresh checkout: build, then
# run an unmodified OpenCL program on PoCL (through ocl-icd) under
# `callguard run`, with clBuildProgram serialized, and show the report:
# every OpenCL call counted, builds taking turns on one lock.
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build >/dev/null
cmake --build build -j"$(nproc 2>/dev/null || echo 2)" >/dev/null
# A fresh PoCL cache, so the builds really compile.
POCL_CACHE_DIR=$(mktemp -d)
export POCL_CACHE_DIR
trap 'rm -rf "$POCL_CACHE_DIR"' EXIT
echo "== callguard run --serialize clBuildProgram --report - -- build/bin/cl_vadd"
./build/bin/callguard run --serialize clBuildProgram --report - -- ./build/bin/cl_vadd
