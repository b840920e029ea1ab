#!/bin/sh
# Makes DIR/k0.spv ... k<N-1>.spv: real SPIR-V (clang-14 to LLVM bitcode for
# spir64, then llvm-spirv-14), kernel k<i> writing a[j] = j * (i + 1) + 7, for
# the OpenCL IL path of cg_load_binary (tests/load/worker_cl.c, mode il).
# Usage: make_spirv.sh CLANG LLVM_SPIRV DIR N
set -eu
clang=$1 spirv=$2 dir=$3 n=$4
mkdir -p "$dir"
i=0
while [ "$i" -lt "$n" ]; do
    printf '__kernel void k%d(__global int *a) { size_t j = get_global_id(0); a[j] = (int)j * %d + 7; }\n' \
        "$i" "$((i + 1))" >"$dir/k$i.cl"
    "$clang" -c -target spir64 -O1 -emit-llvm -cl-std=CL2.0 "$dir/k$i.cl" -o "$dir/k$i.bc"
    "$spirv" "$dir/k$i.bc" -o "$dir/k$i.spv"
    i=$((i + 1))
done
