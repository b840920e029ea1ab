#!/bin/bash
# tests/gpu/check.sh [BUILD]: the CUDA layer's checks on a machine with NVIDIA's driver and a GPU.
#
# Builds nothing. Run it from the source tree (it reads tests/cuda/ and apis/) with BUILD (default:
# build) built on the build machine by the README's cmake commands; carry both over.
# Needs there:
#   - the real libcuda.so.1: CUDA_REAL=/path/libcuda.so.1, else the first of
#     /usr/local/nvidia/lib64, /usr/lib/x86_64-linux-gnu, /usr/lib64 and `ldconfig -p` that has one
#     (never the toolkit's lib64/stubs one: it answers every call with CUDA_ERROR_STUB_LIBRARY);
#   - python3 (PYTHON=... to choose one); torch in it for the optional last check;
#   - the build's shared libraries' dependencies: none beyond glibc where the build found Debian's
#     libinih.a; a build that linked libinih.so.1 (absent on Ubuntu) needs it copied into BUILD/lib/
#     (BUILD/lib goes on LD_LIBRARY_PATH here).
# Prints one PASS/FAIL line per check (with what differs), and a summary; exits 1 if any check failed.
set -u
cd "$(dirname "$0")/../.."
B=$(cd "${1:-build}" && pwd) || exit 2
PY=${PYTHON:-python3}
OUT=$(mktemp -d /tmp/cg-gpu-check-XXXXXX)
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
unset CALLGUARD_REPORT CALLGUARD_SERIALIZE CALLGUARD_POLICY
pass=0 fail=0
ok() { echo "PASS: $*"; pass=$((pass + 1)); }
bad() { echo "FAIL: $*"; fail=$((fail + 1)); }

REAL=${CUDA_REAL:-}
if [ -z "$REAL" ]; then
    for d in /usr/local/nvidia/lib64 /usr/lib/x86_64-linux-gnu /usr/lib64; do
        [ -e "$d/libcuda.so.1" ] && REAL=$d/libcuda.so.1 && break
    done
fi
[ -n "$REAL" ] || REAL=$(ldconfig -p 2>/dev/null | awk '$1 == "libcuda.so.1" {print $NF; exit}')
case "$REAL" in */stubs/*) echo "gpu-check: $REAL is the toolkit's link stub, not a driver" >&2; exit 2 ;; esac
[ -n "$REAL" ] && [ -e "$REAL" ] || { echo "gpu-check: no libcuda.so.1 found; set CUDA_REAL" >&2; exit 2; }
LAYER=$B/lib/libcallguard_cuda.so
for f in "$LAYER" "$B/lib/libcgcuda_inside_probe.so" "$B/bin/cuda_procaddr_probe" "$B/bin/cuda_procaddr_calls_linked" "$B/bin/cuda_compile_race_linked" \
    "$B/bin/cuda_compile_race" "$B/bin/callguard"; do
    [ -e "$f" ] || { echo "gpu-check: $f is missing: build the tree first (on the build machine)" >&2; exit 2; }
done
if ldd "$B/lib/libcallguard.so" | grep -q 'not found'; then
    echo "gpu-check: libcallguard.so lacks a library here:" >&2
    ldd "$B/lib/libcallguard.so" | grep 'not found' >&2
    echo "copy it into $B/lib/ (libinih.so.1, where the build linked it: from the build machine's /usr/lib/x86_64-linux-gnu)" >&2
    exit 2
fi
echo "driver: $REAL ($(readlink -f "$REAL"))"
"$PY" - "$REAL" <<'EOF'
import ctypes, sys
cu = ctypes.CDLL(sys.argv[1])
v = ctypes.c_int()
print("driver: cuInit %d, cuDriverGetVersion %d -> %d" % (cu.cuInit(0), cu.cuDriverGetVersion(ctypes.byref(v)), v.value))
EOF

# 1. Exports: the layer (linked in libcuda's place) must export every function the driver does, and no other.
"$PY" - "$REAL" "$LAYER" >"$OUT/exports.txt" <<'EOF'
import struct, sys
def functions(path):
    """The defined global/weak functions of an ELF64 object's .dynsym (no nm needed)."""
    data = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize) for i in range(shnum)]
    names = set()
    for s in secs:
        if s[1] != 11:  # SHT_DYNSYM
            continue
        strtab = secs[s[6]]
        for off in range(s[4], s[4] + s[5], 24):
            st_name, st_info, _, st_shndx, _, _ = struct.unpack_from("<IBBHQQ", data, off)
            if st_shndx == 0 or (st_info & 0xF) != 2 or (st_info >> 4) not in (1, 2):
                continue
            end = data.index(b"\0", strtab[4] + st_name)
            names.add(data[strtab[4] + st_name:end].decode())
    return names
real, layer = functions(sys.argv[1]), functions(sys.argv[2])
layer = {n for n in layer if n.startswith("cu")}
print("real %d functions, layer %d cu* functions" % (len(real), len(layer)))
for n in sorted(real - layer):
    print("only-in-driver %s" % n)
for n in sorted(layer - real):
    print("only-in-layer %s" % n)
EOF
head -1 "$OUT/exports.txt"
if grep -q '^only-in' "$OUT/exports.txt"; then
    bad "exports: the layer's names differ from the driver's (apis/cuda.exports or cuda.h):"
    grep '^only-in' "$OUT/exports.txt" | sed 's/^/    /'
else
    ok "exports: the layer exports exactly the driver's functions"
fi

# 2. The driver's cuGetProcAddress answers as the stand-in says it does (tests/cuda/procaddr_expected.txt).
"$B/bin/cuda_procaddr_probe" "$REAL" >"$OUT/probe-real.txt" 2>&1
if diff -u tests/cuda/procaddr_expected.txt "$OUT/probe-real.txt" >"$OUT/probe-real.diff"; then
    ok "resolver: the driver answers as the stand-in (tests/cuda/procaddr_expected.txt)"
else
    bad "resolver: the driver's answers differ from the stand-in's (- stand-in, + driver):"
    sed 's/^/    /' "$OUT/probe-real.diff"
fi

# 3. Through the layer, the same answers, each pointer the layer's own wrapper ("same"), but cuGetExportTable
#    forwarded untouched: the driver's own ("other"): tests/cuda/procaddr_expected_layer.txt.
CALLGUARD_CUDA_LIBRARY=$REAL "$B/bin/cuda_procaddr_probe" "$LAYER" >"$OUT/probe-layer.txt" 2>&1
if diff -u tests/cuda/procaddr_expected_layer.txt "$OUT/probe-layer.txt" >"$OUT/probe-layer.diff"; then
    ok "resolver through the layer: its own wrappers, for every version and flag asked, and for itself"
else
    bad "resolver through the layer differs (- expected, + layer on the driver):"
    sed 's/^/    /' "$OUT/probe-layer.diff"
fi

rows() { # REPORT NAME...: prints "NAME=calls" for each name
    "$PY" - "$@" <<'EOF'
import json, sys
rep = json.load(open(sys.argv[1]))
rows = {}
for p in rep["processes"]:
    for s in p["sites"]:
        rows[s["name"]] = rows.get(s["name"], 0) + s["calls"]
print(" ".join("%s=%d" % (n, rows.get(n, 0)) for n in sys.argv[2:]))
EOF
}

# 4. The CUDA runtime's way (only pointers from cuGetProcAddress) on the GPU: counted under header names.
r=$(CALLGUARD_CUDA_LIBRARY=$REAL CALLGUARD_REPORT=$OUT/calls.json "$B/bin/cuda_procaddr_calls_linked" default 2>&1)
c=$([ -s "$OUT/calls.json" ] && rows "$OUT/calls.json" cuLaunchKernel cuStreamSynchronize cuCtxCreate cuModuleLoadData cuMemcpyHtoD cuGetProcAddress)
if [ "$r" = ok ] && [ "$c" = "cuLaunchKernel=1 cuStreamSynchronize=1 cuCtxCreate=1 cuModuleLoadData=1 cuMemcpyHtoD=1 cuGetProcAddress=16" ]; then
    ok "calls through cuGetProcAddress pointers on the GPU: $c"
else
    bad "calls through cuGetProcAddress pointers: output '$r', report '$c'"
fi

# 5. 16 threads load a distinct PTX module each, through the layer, unserialized and serialized. The probe
#    below the layer (CALLGUARD_CUDA_LIBRARY, forwarding to the driver through LD_LIBRARY_PATH) counts the
#    threads inside the driver's cuModuleLoadData at once.
INSIDE=$B/lib/libcgcuda_inside_probe.so
race() { # ENV...: runs the linked race with the environment given, prints its line
    env LD_LIBRARY_PATH="$(dirname "$REAL"):$LD_LIBRARY_PATH" CALLGUARD_CUDA_LIBRARY="$INSIDE" "$@" \
        "$B/bin/cuda_compile_race_linked" "$INSIDE" 2>&1 | tail -1
}
r=$(race)
case "$r" in
"loaded 16 modules, at most 1 threads inside") bad "compile race unserialized: never two threads inside at once: $r" ;;
"loaded 16 modules, at most "*) ok "compile race unserialized on the driver: $r" ;;
*) bad "compile race unserialized: $r" ;;
esac
r=$(race CALLGUARD_SERIALIZE=cuModuleLoadData CALLGUARD_REPORT="$OUT/race.json")
c=$([ -s "$OUT/race.json" ] && rows "$OUT/race.json" cuModuleLoadData)
[ "$r" = "loaded 16 modules, at most 1 threads inside" ] && [ "$c" = cuModuleLoadData=16 ] &&
    ok "compile race serialized: $r, $c" || bad "compile race serialized: '$r', report '$c'"
# the same, preloaded into a program linked to libcuda.so.1 (the driver's, by LD_LIBRARY_PATH)
r=$(LD_LIBRARY_PATH="$(dirname "$REAL"):$LD_LIBRARY_PATH" LD_PRELOAD=$LAYER CALLGUARD_SERIALIZE=cuModuleLoadData \
    CALLGUARD_REPORT="$OUT/race-pre.json" "$B/bin/cuda_compile_race" 2>&1 | tail -1)
c=$([ -s "$OUT/race-pre.json" ] && rows "$OUT/race-pre.json" cuModuleLoadData)
[ "${r#loaded 16 modules}" != "$r" ] && [ "$c" = cuModuleLoadData=16 ] && ok "compile race preloaded, serialized: $r, $c" ||
    bad "compile race preloaded, serialized: '$r', report '$c'"

# 6. A Python thread waits ~1 s in cuStreamSynchronize through ctypes.PyDLL (the layer in libcuda's place)
#    on a kernel that spins on %globaltimer; the main thread ticks every millisecond: tests/gpu/pause.py
#    (run.sh's part b).
for mode in auto cpython; do
    r=$(CALLGUARD_CUDA_LIBRARY=$REAL CALLGUARD_RUNTIME=$mode CALLGUARD_REPORT=$OUT/pause-$mode.json "$PY" tests/gpu/pause.py "$LAYER" 2>&1 | tail -1)
    st=$([ -s "$OUT/pause-$mode.json" ] && "$PY" -c "
import json, sys
s = [s for p in json.load(open(sys.argv[1]))['processes'] for s in p['sites'] if s['name'] == 'cuStreamSynchronize']
print(s[0]['stalls'] if s else -1)" "$OUT/pause-$mode.json")
    read -r longest waited <<<"$r"
    echo "pause ($mode): longest main-thread pause ${longest:-?} ms, cuStreamSynchronize waited ${waited:-?} ms, stalls reported ${st:-?}"
    if [ "$mode" = auto ]; then
        [ "$st" = 1 ] && ok "pause, detect only: the 1 s wait is reported as a stall" || bad "pause, detect only: '$r', stalls '$st'"
    else
        "$PY" -c "import sys; sys.exit(not (float(sys.argv[1]) <= 50 and float(sys.argv[2]) >= 900))" "${longest:-999}" "${waited:-0}" &&
            [ "$st" = 0 ] && ok "pause with the CPython adapter: ${longest} ms (tests allow 50, docs/design.md's goal 10)" ||
            bad "pause with the CPython adapter: '$r', stalls '$st'"
    fi
done

# 7. Through the libcuda.so.1 shim of `callguard run` (when the build has one): the program dlopens the soname.
if [ -e "$B/lib/callguard/shims/libcuda.so.1" ]; then
    r=$(CALLGUARD_CUDA_LIBRARY=$REAL "$B/bin/callguard" run --api cuda --report "$OUT/run.json" -- \
        "$B/bin/cuda_procaddr_calls" dlopen 2>&1 | head -1)
    c=$([ -s "$OUT/run.json" ] && rows "$OUT/run.json" cuLaunchKernel cuModuleLoadData cuGetProcAddress)
    [ "$r" = ok ] && [ "$c" = "cuLaunchKernel=1 cuModuleLoadData=1 cuGetProcAddress=16" ] &&
        ok "callguard run, dlopen(libcuda.so.1): $c" || bad "callguard run, dlopen(libcuda.so.1): '$r', report '$c'"
else
    echo "SKIP: no libcuda.so.1 shim in $B/lib/callguard/shims"
fi

# 8. PyTorch under callguard run (optional): the same result, and the runtime's calls in the report.
if "$PY" -c "import torch; assert torch.cuda.is_available()" 2>/dev/null && [ -e "$B/lib/callguard/shims/libcuda.so.1" ]; then
    # not torch.py: the script's folder comes first on sys.path and a torch.py there shadows the package
    cat >"$OUT/torch_check.py" <<'EOF'
import torch
torch.manual_seed(0)
a = torch.randn(1024, 1024, device="cuda")
for _ in range(20):
    a = torch.tanh(a @ a / 32)
torch.cuda.synchronize()
print("%.6f" % a.double().sum().item())
EOF
    plain=$("$PY" "$OUT/torch_check.py" 2>&1 | tail -1)
    guarded=$(CALLGUARD_CUDA_LIBRARY=$REAL "$B/bin/callguard" run --api cuda --report "$OUT/torch.json" -- "$PY" "$OUT/torch_check.py" 2>&1 | grep -v '^callguard: wrote ' | tail -1)
    c=$([ -s "$OUT/torch.json" ] && rows "$OUT/torch.json" cuGetProcAddress cuLaunchKernel cuLaunchKernelEx cuModuleLoadData cuLibraryLoadData cuStreamSynchronize cuCtxSynchronize)
    echo "torch: plain $plain, under callguard $guarded; report: $c"
    # the same checksum (a number), not merely the same last line: two runs failing alike are a failure
    if [[ "$plain" =~ ^-?[0-9]+\.[0-9]+$ ]] && [ "$plain" = "$guarded" ]; then
        ok "PyTorch under callguard run: same result"
    else
        bad "PyTorch: plain '$plain' vs under callguard '$guarded' (a checksum expected from both)"
    fi
else
    echo "SKIP: no torch with CUDA in $PY, or no libcuda.so.1 shim"
fi

echo "$pass passed, $fail failed"
echo "(files: $OUT)"
[ "$fail" -eq 0 ]
