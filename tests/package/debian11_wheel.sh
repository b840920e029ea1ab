#!/bin/sh
# The wheel on a foreign system: Debian 11 (glibc 2.31, Python 3.9, PoCL 1.6
# behind ocl-icd), a root made with debootstrap from Debian's registry.
# pip installs the wheel into a venv there from the file alone, then:
#   - a Python program whose threads each build an OpenCL program (ctypes on
#     libOpenCL.so.1) runs plainly and under
#     `callguard run --serialize clBuildProgram --report FILE`: the exit
#     status and every answer are the same, and the report counts each
#     thread's clBuildProgram (PoCL 1.6 cannot build kernels for this CPU,
#     "unknown target CPU 'generic'": the answers compared are its own);
#   - `import callguard` and `python -m callguard --version` there.
#
# Usage: tests/package/debian11_wheel.sh WHEEL|DIR   (DIR: the one callguard-*.whl in it)
# The root is kept in $CG_DEBIAN11_ROOT (default /tmp/callguard-debian11-1:
# the suffix changes with the package list), made the first time (about a
# minute); runs that share it take turns (flock). Exit 77 (skipped) only when
# Debian's registry cannot be reached. Needs root (debootstrap, chroot, mount).
set -eu
wheel=${1:?usage: debian11_wheel.sh WHEEL|DIR}
# A folder: the one callguard wheel in it (what scripts/build-wheel.sh wrote).
[ ! -d "$wheel" ] || wheel=$(ls "$wheel"/callguard-*.whl)
[ -f "$wheel" ] || { echo "debian11_wheel: no wheel $wheel" >&2; exit 1; }
mirror=http://deb.debian.org/debian
packages=python3,python3-venv,python3-pip,ocl-icd-libopencl1,pocl-opencl-icd,binutils,libc6-dev
root=${CG_DEBIAN11_ROOT:-/tmp/callguard-debian11-1}
say() { echo "debian11_wheel: $*"; }
fail() { echo "debian11_wheel: FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "debian11_wheel: needs root (debootstrap, chroot, mount)" >&2; exit 1; }
command -v debootstrap >/dev/null || fail "no debootstrap (scripts/setup-debian.sh installs it)"

exec 9>"$root.lock"
flock 9
# Mounts a killed run left behind go first: nothing below may delete through them.
for m in proc sys dev; do
    while mountpoint -q "$root/$m" 2>/dev/null; do umount -l "$root/$m"; done
done

# ---- the root, made once ------------------------------------------------------------
if [ ! -f "$root/.callguard-complete" ]; then
    if ! curl -sfI -m 20 "$mirror/dists/bullseye/Release" >/dev/null; then
        echo "SKIP: debootstrap cannot reach Debian's registry ($mirror): no Debian 11 root to test the wheel in"
        exit 77
    fi
    say "making the Debian 11 root in $root (debootstrap, about a minute)"
    rm -rf --one-file-system "$root"
    debootstrap --variant=minbase --include="$packages" bullseye "$root" "$mirror" >"$root.log" 2>&1 ||
        { tail -20 "$root.log" >&2; fail "debootstrap failed (all of it: $root.log)"; }
    touch "$root/.callguard-complete"
fi

# ---- mounts, undone whatever happens ---------------------------------------------------
mounted=""
cleanup() {
    for m in $mounted; do
        umount "$root/$m" 2>/dev/null || umount -l "$root/$m" 2>/dev/null || true
    done
}
trap cleanup EXIT
trap 'exit 130' INT TERM
for m in proc sys dev; do
    if [ $m = proc ]; then mount -t proc proc "$root/proc"; else mount --bind /$m "$root/$m"; fi
    mounted="$m $mounted"
done

# ---- the wheel and the program, in the root's /tmp --------------------------------------
work=$root/tmp/callguard-wheel
rm -rf "$work"
mkdir -p "$work"
cp "$wheel" "$work/"
cat >"$work/prog.py" <<'EOF'
# Threads that each build an OpenCL program on the first device, released
# together; prints every answer, one line each, in thread order.
import ctypes, sys, threading
N = 4
cl = ctypes.CDLL("libOpenCL.so.1")
cl.clCreateContext.restype = ctypes.c_void_p
cl.clCreateProgramWithSource.restype = ctypes.c_void_p
platform, device, n = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_uint(0)
print("clGetPlatformIDs", cl.clGetPlatformIDs(1, ctypes.byref(platform), ctypes.byref(n)), n.value)
print("clGetDeviceIDs", cl.clGetDeviceIDs(platform, ctypes.c_uint64(0xFFFFFFFF), 1, ctypes.byref(device), None))
barrier = threading.Barrier(N)
answers = [None] * N
def build(i):
    err = ctypes.c_int(0)
    ctx = ctypes.c_void_p(cl.clCreateContext(None, 1, ctypes.byref(device), None, None, ctypes.byref(err)))
    src = ctypes.c_char_p(b"__kernel void k%d(__global float *x) { x[get_global_id(0)] *= %d.0f; }" % (i, i + 2))
    prog = ctypes.c_void_p(cl.clCreateProgramWithSource(ctx, 1, ctypes.byref(src), None, ctypes.byref(err)))
    barrier.wait()
    rc = cl.clBuildProgram(prog, 1, ctypes.byref(device), None, None, None)
    status = ctypes.c_int(0)  # CL_PROGRAM_BUILD_STATUS
    info = cl.clGetProgramBuildInfo(prog, device, 0x1181, ctypes.sizeof(status), ctypes.byref(status), None)
    answers[i] = (bool(ctx.value), bool(prog.value), rc, info, status.value)
    cl.clReleaseProgram(prog)
    cl.clReleaseContext(ctx)
threads = [threading.Thread(target=build, args=(i,)) for i in range(N)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for i, a in enumerate(answers):
    print("thread %d: context %s program %s clBuildProgram %d build info %d status %d" % ((i,) + a))
EOF
cat >"$work/check.sh" <<'EOF'
set -eu
cd /tmp/callguard-wheel
export POCL_MAX_PTHREAD_COUNT=1 POCL_CACHE_DIR=/tmp/callguard-wheel/pocl
python3 -m venv venv
venv/bin/pip install -q --no-index ./callguard-*.whl
venv/bin/pip list 2>/dev/null | grep callguard
set +e
venv/bin/python prog.py >plain.out 2>plain.err
echo $? >plain.status
venv/bin/callguard run --serialize clBuildProgram --report report.json -- venv/bin/python prog.py >guarded.out 2>guarded.err
echo $? >guarded.status
set -e
(cd / && /tmp/callguard-wheel/venv/bin/python -c 'import os, sys, callguard; print("import callguard:", sys.version.split()[0], callguard.__file__, os.access(callguard.executable(), os.X_OK))')
venv/bin/python -m callguard --version
venv/bin/python - <<'PY'
import json
rep = json.load(open("report.json"))
calls = {}
for p in rep["processes"]:
    for s in p["sites"]:
        calls[s["name"]] = calls.get(s["name"], 0) + s["calls"]
print("report: clBuildProgram %d calls (policy serialize %s), %d OpenCL entry points called" % (
    calls.get("clBuildProgram", 0), [s["policy"]["serialize"] for p in rep["processes"] for s in p["sites"]
                                     if s["name"] == "clBuildProgram"][:1], len(calls)))
PY
EOF
env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 chroot "$root" /bin/sh /tmp/callguard-wheel/check.sh \
    >"$work/check.out" 2>&1 || { cat "$work/check.out" >&2; fail "the check in the root failed"; }
cat "$work/check.out"

# ---- the comparison ------------------------------------------------------------------
plain=$(cat "$work/plain.status")
guarded=$(cat "$work/guarded.status")
say "plain exit $plain, under callguard run exit $guarded"
sed 's/^/  plain:   /' "$work/plain.out"
[ "$plain" = "$guarded" ] || { cat "$work/guarded.err" >&2; fail "exit status $guarded under callguard run, $plain plainly"; }
cmp -s "$work/plain.out" "$work/guarded.out" ||
    { diff "$work/plain.out" "$work/guarded.out" >&2; cat "$work/guarded.err" >&2; fail "the answers differ"; }
grep -q "^thread 3: " "$work/plain.out" || fail "the program did not get to its threads' answers"
grep -q "^report: clBuildProgram 4 calls (policy serialize \['clBuildProgram'\])" "$work/check.out" ||
    fail "the report does not count 4 serialized clBuildProgram calls"
grep -q "^import callguard: 3\.9\..* True$" "$work/check.out" || fail "import callguard on Python 3.9"
grep -q "^callguard 0\." "$work/check.out" || fail "python -m callguard --version"
say "ok: same answers and exit status plainly and under callguard run; 4 clBuildProgram calls counted"
