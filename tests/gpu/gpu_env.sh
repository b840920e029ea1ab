# Sourced by the GPU checks (tests/gpu/*_check.sh) after `cd` to the source tree, with $2 the build
# (relative to it): sets SRC, B, PY (the GPU machine's PyTorch Python), REAL (libcuda.so.1), CG (the
# callguard command) and TORCHRUN; clears the CALLGUARD_* settings a caller may have left.
SRC=$PWD
B=$(cd "${2:-build}" && pwd) || exit 2
PY=${PYTHON:-}
[ -n "$PY" ] || { [ -x /opt/torch/.venv/bin/python3 ] && PY=/opt/torch/.venv/bin/python3; } || PY=python3
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_RUNTIME CALLGUARD_CUDA_LIBRARY CALLGUARD_HANG_MS
REAL=${CUDA_REAL:-}
for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
    [ -z "$REAL" ] && [ -e "$d/libcuda.so.1" ] && REAL=$d/libcuda.so.1
done
[ -n "$REAL" ] || { echo "$0: no libcuda.so.1 found; set CUDA_REAL" >&2; exit 2; }
export TRITON_LIBCUDA_PATH=$(dirname "$REAL")
export LD_LIBRARY_PATH="$(dirname "$REAL")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$B/lib"
CG=$B/bin/callguard
TORCHRUN=$(dirname "$PY")/torchrun
