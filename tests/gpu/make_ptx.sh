#!/bin/sh
# Remakes tests/gpu/ptx/k00.ptx .. k15.ptx (committed) from race_kernel.cu with the toolkit's nvcc: 16
# distinct modules for the compile race, for the H200 (sm_90). Usage: tests/gpu/make_ptx.sh [NVCC]
set -eu
cd "$(dirname "$0")"
nvcc=${1:-/usr/local/cuda/bin/nvcc}
for i in $(seq 0 15); do
    n=$(printf %02d "$i")
    "$nvcc" -ptx -arch=sm_90 -O3 -DID="$i" race_kernel.cu -o "ptx/k$n.ptx"
done
echo "made $(ls ptx/*.ptx | wc -l) modules with $("$nvcc" --version | tail -1)"
