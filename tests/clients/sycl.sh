#!/bin/bash
# Intel's SYCL runtime (PyPI dpctl + intel-sycl-rt) on the Level Zero
# simulator, under `callguard run --api ze`. Not part of the test suite: it
# needs about 900 MB of wheels in a virtual environment.
#
#   python3 -m venv /work/venvs/sycl && /work/venvs/sycl/bin/pip install dpctl intel-sycl-rt
#   apt-get install clang-14 llvm-spirv-14 spirv-tools
#   tests/clients/sycl.sh [BUILD_DIR [VENV]]        (defaults: build, /work/venvs/sycl)
#
# SYCL's Level Zero front end dlopens libze_loader.so.1 and dlsyms names
# Debian's 1.8.12 loader lacks, and 1.8.12's zeLoaderInit is not idempotent:
# SYCL crashes on it with or without callguard (docs/ze.md). So the real
# library chosen here (CALLGUARD_ZE_LIBRARY) is the tests' stand-in for a
# newer loader, tests/ze/newer_loader.c (BUILD_DIR/tests/ze/newer-loader/).
# Checks, each printed with PASS or FAIL:
#   1. dpctl lists the simulator as a level_zero GPU; the report counts the calls;
#   2. a program from real SPIR-V (clang-14 + llvm-spirv-14) has its kernels;
#   3. 16 threads create programs at once with the simulator's compiler race
#      armed (CGSIM_COMPILER_RACE=abort): dpctl keeps the GIL in
#      create_program_from_spirv, so without --release-gil they never race;
#      with --release-gil they race and the process dies of SIGABRT; with
#      --release-gil --serialize zeModuleCreate all 16 are created.
# Exit status: the number of failed checks.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-$here/../../build}" && pwd) || exit 2
venv=${2:-/work/venvs/sycl}
py=$venv/bin/python
cg=$build/bin/callguard
standin=$build/tests/ze/newer-loader/libze_loader.so.1
sim=$(ls "$build"/lib/libze_cgsim.so "$build"/lib/callguard/drivers/libze_cgsim.so 2>/dev/null | head -n 1)

missing=""
[ -x "$cg" ] || missing+=" $cg (build callguard)"
[ -e "$standin" ] || missing+=" $standin (build the ze tests)"
[ -n "$sim" ] || missing+=" libze_cgsim.so (build the simulator)"
"$py" -c 'import dpctl' 2>/dev/null || missing+=" dpctl in $venv (pip install dpctl intel-sycl-rt)"
for t in clang-14 llvm-spirv-14 spirv-dis; do
  command -v $t >/dev/null || missing+=" $t (apt-get install clang-14 llvm-spirv-14 spirv-tools)"
done
if [ -n "$missing" ]; then
  echo "sycl.sh: missing:$missing" >&2
  exit 2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/k.cl" <<'EOF'
__kernel void vadd(__global const float *a, __global const float *b, __global float *c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
__kernel void scale(__global float *a, float s) { a[get_global_id(0)] *= s; }
EOF
clang-14 -c -target spir64 -O1 -emit-llvm -cl-std=CL2.0 "$tmp/k.cl" -o "$tmp/k.bc" &&
  llvm-spirv-14 "$tmp/k.bc" -o "$tmp/k.spv" || { echo "sycl.sh: cannot make SPIR-V" >&2; exit 2; }
echo "SPIR-V entry points: $(spirv-dis "$tmp/k.spv" | grep -o 'OpEntryPoint Kernel %[0-9]* "[a-z]*"' | awk '{print $4}' | tr '\n' ' ')"

cat >"$tmp/list.py" <<'EOF'
import dpctl
for d in dpctl.get_devices():
    print("device:", d.backend, d.device_type, d.name)
EOF
cat >"$tmp/program.py" <<'EOF'
import sys, dpctl, dpctl.program as p
q = dpctl.SyclQueue()
prog = p.create_program_from_spirv(q, open(sys.argv[1], "rb").read(), "")
print("kernels: vadd=%s scale=%s vadd args=%d" % (prog.has_sycl_kernel("vadd"), prog.has_sycl_kernel("scale"),
                                                  prog.get_sycl_kernel("vadd").num_args))
EOF
cat >"$tmp/race.py" <<'EOF'
import sys, threading, dpctl, dpctl.program as p
il, n = open(sys.argv[1], "rb").read(), int(sys.argv[2])
q = dpctl.SyclQueue()
barrier, made = threading.Barrier(n), []
def work():
    barrier.wait()
    made.append(p.create_program_from_spirv(q, il, "").has_sycl_kernel("vadd"))
ts = [threading.Thread(target=work) for _ in range(n)]
for t in ts: t.start()
for t in ts: t.join()
print("created %d programs" % sum(made))
EOF

export ZE_ENABLE_ALT_DRIVERS=$sim ONEAPI_DEVICE_SELECTOR='level_zero:*' CALLGUARD_ZE_LIBRARY=$standin
unset CALLGUARD_REPORT
ulimit -c 0 # the race check aborts on purpose
fails=0
n=0
# run NAME OPTIONS... -- ARGS: callguard run --api ze --report, output in $tmp/NAME.{out,json}, status in $rc
run() {
  local name=$1; shift
  local opts=()
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  echo "\$ callguard run --api ze ${opts[*]:+${opts[*]} }--report $name.json -- python $*" | sed "s|$tmp/||g"
  timeout 600 "$cg" run --api ze "${opts[@]}" --report "$tmp/$name.json" -- "$py" "$@" >"$tmp/$name.out" 2>&1
  rc=$?
  sed 's/^/    /' "$tmp/$name.out" | grep -v '^    \[\?UR\|^    ---> \|^    <--- \|^    *$' | head -n 20
  echo "    exit $rc"
}
calls() { # calls NAME ENTRY [FIELD]: the report of NAME's count of ENTRY's calls (or FIELD)
  "$py" - "$tmp/$1.json" "$2" "${3:-calls}" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
print(sum(s[sys.argv[3]] for p in r["processes"] for s in p["sites"] if s["name"] == sys.argv[2]))
EOF
}
check() { # check WHAT CONDITION...
  local what=$1; shift
  n=$((n + 1))
  if "$@"; then echo "PASS $n: $what"; else echo "FAIL $n: $what"; fails=$((fails + 1)); fi
}

SYCL_UR_TRACE=1 run list -- "$tmp/list.py"
check "dpctl lists the simulator as a level_zero GPU; the report counts zeDeviceGet ($(calls list zeDeviceGet) calls)" \
  eval '[ $rc = 0 ] && grep -q "device: backend_type.level_zero device_type.gpu callguard simulator" "$tmp/list.out" && [ "$(calls list zeDeviceGet)" -gt 0 ]'

run program -- "$tmp/program.py" "$tmp/k.spv"
check "a program from real SPIR-V has both kernels; zeModuleCreate counted ($(calls program zeModuleCreate))" \
  eval '[ $rc = 0 ] && grep -q "kernels: vadd=True scale=True vadd args=3" "$tmp/program.out" && [ "$(calls program zeModuleCreate)" = 1 ]'

export CGSIM_COMPILER_RACE=abort CGSIM_COMPILE_MS=50
run gil -- "$tmp/race.py" "$tmp/k.spv" 16
check "GIL kept (no --release-gil): 16 programs, no race; compiles holding the GIL reported as stalls ($(calls gil zeModuleCreate stalls))" \
  eval '[ $rc = 0 ] && grep -q "created 16 programs" "$tmp/gil.out" && [ "$(calls gil zeModuleCreate stalls)" -gt 0 ]'

run release --release-gil -- "$tmp/race.py" "$tmp/k.spv" 16
check "--release-gil: the threads race in zeModuleCreate and the simulator aborts (exit 134)" \
  eval '[ $rc = 134 ] && grep -q "threads inside zeModuleCreate at once" "$tmp/release.out"'

run serialized --release-gil --serialize zeModuleCreate -- "$tmp/race.py" "$tmp/k.spv" 16
check "--release-gil --serialize zeModuleCreate: all 16 created, 16 zeModuleCreate calls counted ($(calls serialized zeModuleCreate))" \
  eval '[ $rc = 0 ] && grep -q "created 16 programs" "$tmp/serialized.out" && [ "$(calls serialized zeModuleCreate)" = 16 ]'

# For reference, not a check: without the stand-in (Debian's 1.8.12 loader)
# SYCL crashes whether callguard is there or not (docs/development.md, "Real clients from PyPI").
timeout 120 env -u CALLGUARD_ZE_LIBRARY "$py" "$tmp/list.py" >/dev/null 2>&1
echo "note: dpctl on Debian's loader without callguard: exit $?"
timeout 120 env -u CALLGUARD_ZE_LIBRARY "$cg" run --api ze -- "$py" "$tmp/list.py" >/dev/null 2>&1
echo "note: dpctl on Debian's loader under callguard run: exit $?"

echo "$((n - fails)) of $n checks passed"
exit $fails
