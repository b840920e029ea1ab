#!/bin/bash
# The install layout of docs/design.md, moved after installing: everything is
# still found relative to where it now lies.  usage: install_relocatable.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
p=$tmp/moved
for f in bin/callguard bin/callguard-gen lib/libcallguard.so lib/libcallguard_cl.so lib/libcallguard_ze.so \
         lib/callguard/drivers/libze_cgsim.so lib/callguard/drivers/libze_cgsim_compiler.so \
         lib/callguard/shims/libOpenCL.so.1 lib/callguard/shims/libze_loader.so.1 \
         include/callguard/callguard.h include/callguard/layer.h include/callguard/load.h lib/pkgconfig/callguard.pc \
         lib/cmake/callguard/callguardConfig.cmake share/callguard/apis/cl.ini share/callguard/apis/ze.ini share/callguard/quirks.ini; do
  [ -e "$p/$f" ] || { echo "missing: $f"; exit 1; }
done
"$p/bin/callguard" list ze | tail -n 1 | grep -q "289 entry points" || { echo "callguard list ze failed"; exit 1; }
"$p/bin/callguard" run --api cl -- /bin/true || { echo "callguard run from the moved tree failed"; exit 1; }
# The shipped quirks file is found beside the moved libcallguard: on the simulator
# reporting an affected NEO release, its quirk serializes the compiles (no --serialize).
if [ -x "$build/bin/ze_compile_race" ]; then
  out=$(ZE_ENABLE_ALT_DRIVERS=$p/lib/callguard/drivers/libze_cgsim.so CGSIM_VENDOR_ID=0x8086 \
        CGSIM_DRIVER_VERSION=26.27.39122.11 CGSIM_COMPILER_RACE=abort CGSIM_COMPILE_MS=20 \
        "$p/bin/callguard" run --api ze --report - -- "$build/bin/ze_compile_race" 2>&1) ||
    { echo "the shipped quirk did not fix the race from the moved tree: $out"; exit 1; }
  grep -q "quirk igc-2.38-zeModuleCreate applied" <<<"$out" || { echo "the report names no quirk: $out"; exit 1; }
fi
# The shims find libcallguard next to them, whatever the library path says, and
# outside `callguard run` their libcallguard-real-API.so is the tree's placeholder.
for s in libOpenCL.so.1 libze_loader.so.1; do
  deps=$(LD_LIBRARY_PATH= ldd "$p/lib/callguard/shims/$s")
  if grep -q "not found" <<<"$deps"; then echo "shim $s lacks a dependency: $deps"; exit 1; fi
  grep -q "libcallguard-real-.*=> $p/lib/callguard/shims/placeholder/" <<<"$deps" ||
    { echo "shim $s: no placeholder for its real library: $deps"; exit 1; }
done
PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags callguard | grep -q "$p/lib/pkgconfig/../../include" ||
  { echo "callguard.pc is not relative to itself"; exit 1; }
# The shipped quirks file is read when an API first initializes, not at
# start-up: with it broken, a program that never initializes OpenCL says
# nothing; one that does names the file and line, and runs on unchanged.
printf '[quirk:broken]\napi = cl\nno_such_key = 1\n' >"$p/share/callguard/quirks.ini"
out=$("$p/bin/callguard" run --api cl -- /bin/true 2>&1) || { echo "run /bin/true failed: $out"; exit 1; }
[ -z "$out" ] || { echo "the shipped quirks file was read by a process that never initialized OpenCL: $out"; exit 1; }
if [ -x "$build/bin/cl_vadd" ]; then
  out=$(POCL_MAX_PTHREAD_COUNT=1 "$p/bin/callguard" run --api cl -- "$build/bin/cl_vadd" 2>&1) ||
    { echo "cl_vadd failed: $out"; exit 1; }
  grep -q "the shipped quirks file is not used: .*quirks.ini:3" <<<"$out" ||
    { echo "the broken shipped quirks file is not named at OpenCL's initialization: $out"; exit 1; }
fi
echo "install is relocatable"
