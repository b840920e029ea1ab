#!/bin/bash
# tests/gpu/wheel_torch.sh WHEEL [OUTDIR]: the wheel (scripts/build-wheel.sh) on the GPU machine, as a user
# without network would take it: `pip install --no-index --target DIR WHEEL`, then the tree's own
# `callguard run --api cuda --report` around a small PyTorch program (matrix products, a checksum), which
# also runs plainly. Passes when both runs exit 0 with the same checksum and the report counts the CUDA
# calls (kernel launches among them); then `import callguard` and `python -m callguard --version` from DIR.
# Prints each step and its result; the last line is PASS or FAIL. Exits 0 only on PASS.
# Environment:
#   PYTHON     the Python with torch (default /opt/torch/.venv/bin/python3, else python3)
#   CUDA_REAL  the driver's libcuda.so.1 (default: /usr/local/nvidia/lib64, the system's, ldconfig's)
# OUTDIR (default: a new /tmp/callguard-wheel-torch.XXXXXX) keeps the install, the outputs and the report.
set -eu
[ $# -ge 1 ] && [ -f "$1" ] || { echo "usage: tests/gpu/wheel_torch.sh WHEEL [OUTDIR]" >&2; exit 2; }
wheel=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
out=${2:-$(mktemp -d /tmp/callguard-wheel-torch.XXXXXX)}
mkdir -p "$out"
out=$(cd "$out" && pwd)
fail() { echo "wheel_torch: $*"; echo "FAIL"; exit 1; }
say() { echo "wheel_torch: $*"; }
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY CALLGUARD_RUNTIME CALLGUARD_CUDA_LIBRARY

PY=${PYTHON:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=$(command -v python3)
say "python: $PY ($("$PY" -c 'import sys; print(sys.version.split()[0])'))"
"$PY" -c "import torch; assert torch.cuda.is_available()" || fail "no torch with CUDA in $PY"
REAL=${CUDA_REAL:-}
if [ -z "$REAL" ]; then
    for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
        [ -e "$d/libcuda.so.1" ] && REAL=$d/libcuda.so.1 && break
    done
fi
[ -n "$REAL" ] || REAL=$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" {print $NF; exit}')
[ -n "$REAL" ] && [ -e "$REAL" ] || fail "no libcuda.so.1 found; set CUDA_REAL"
say "driver: $REAL"

# ---- the install --------------------------------------------------------------------------------------------
pkg=$out/target
rm -rf "$pkg"
say "pip install --no-index --target $pkg $(basename "$wheel")"
"$PY" -m pip install --disable-pip-version-check -q --no-index --no-deps --target "$pkg" "$wheel" ||
    fail "pip install of the wheel"
CG=$pkg/callguard/_tree/bin/callguard
[ -x "$CG" ] || fail "no $CG in the install"
say "installed: $(du -sk "$pkg" | cut -f1) KiB; $("$CG" --version)"
"$CG" list | grep -q cuda || fail "callguard list names no cuda layer: $("$CG" list 2>&1)"

# ---- plain, then under callguard run ---------------------------------------------------------------------------
cat >"$out/job.py" <<'EOF'
# Matrix products on the GPU, then one checksum (same inputs, same kernels: the same number every run).
import torch
torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda")
b = torch.randn(1024, 1024, device="cuda")
for _ in range(30):
    a = torch.tanh(a @ b / 32.0)
torch.cuda.synchronize()
print("torch checksum %.6f" % a.double().sum().item())
EOF
cd "$out"
set +e
timeout 300 "$PY" job.py >plain.out 2>plain.err
plain=$?
CALLGUARD_CUDA_LIBRARY=$REAL timeout 300 "$CG" run --api cuda --report report.json -- "$PY" job.py \
    >guarded.out 2>guarded.err
guarded=$?
set -e
p=$(grep "^torch checksum" plain.out || true)
g=$(grep "^torch checksum" guarded.out || true)
say "plain:   exit $plain, ${p:-no checksum}"
say "guarded: exit $guarded, ${g:-no checksum}"
[ "$plain" = 0 ] || { tail -20 plain.err >&2; fail "the plain run failed"; }
[ "$guarded" = 0 ] || { tail -20 guarded.err >&2; fail "the run under callguard failed"; }
[ -n "$p" ] && [ "$p" = "$g" ] || fail "the checksums differ"

# ---- the report ------------------------------------------------------------------------------------------------
counts=$("$PY" - report.json <<'EOF'
import json, sys
calls = {}
for p in json.load(open(sys.argv[1]))["processes"]:
    for s in p["sites"]:
        if s["calls"]:
            calls[s["name"]] = calls.get(s["name"], 0) + s["calls"]
launch = sum(n for k, n in calls.items() if k.startswith("cuLaunch"))
top = sorted(calls.items(), key=lambda kv: -kv[1])[:6]
print("%d calls to %d entry points, %d launches; most: %s" % (
    sum(calls.values()), len(calls), launch, ", ".join("%s %d" % kv for kv in top)))
sys.exit(0 if launch > 0 else 1)
EOF
) || fail "the report counts no kernel launch: $counts"
say "report: $counts"

# ---- the module from the target folder ----------------------------------------------------------------------------
m=$(cd / && PYTHONPATH=$pkg "$PY" -c 'import callguard, os; print(callguard.__file__, os.access(callguard.executable(), os.X_OK))') ||
    fail "import callguard from $pkg"
say "import callguard: $m"
v=$(cd / && PYTHONPATH=$pkg "$PY" -m callguard --version) || fail "python -m callguard --version"
say "python -m callguard --version: $v"
echo "PASS"
