#!/bin/bash
# The install layout of DESIGN.md, moved after installing: everything is
# still found relative to where it now lies.  usage: install_relocatable.sh BUILD_DIR
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/first" >/dev/null
mv "$tmp/first" "$tmp/moved"
p=$tmp/moved
for f in bin/callguard bin/callguard-gen lib/libcallguard.so lib/libcallguard_cl.so lib/libcallguard_ze.so \
         lib/callguard/drivers/libze_cgsim.so lib/callguard/shims/libOpenCL.so.1 lib/callguard/shims/libze_loader.so.1 \
         include/callguard/callguard.h include/callguard/layer.h lib/pkgconfig/callguard.pc \
         lib/cmake/callguard/callguardConfig.cmake share/callguard/apis/cl.ini share/callguard/apis/ze.ini; do
  [ -e "$p/$f" ] || { echo "missing: $f"; exit 1; }
done
"$p/bin/callguard" list ze | tail -n 1 | grep -q "289 entry points" || { echo "callguard list ze failed"; exit 1; }
"$p/bin/callguard" run --api cl -- /bin/true || { echo "callguard run from the moved tree failed"; exit 1; }
# The shims find libcallguard next to them, whatever the library path says.
if LD_LIBRARY_PATH= ldd "$p/lib/callguard/shims/libOpenCL.so.1" | grep -q "libcallguard.so.0 => not found"; then
  echo "shim cannot find libcallguard"; exit 1
fi
PKG_CONFIG_PATH=$p/lib/pkgconfig pkg-config --cflags callguard | grep -q "$p/lib/pkgconfig/../../include" ||
  { echo "callguard.pc is not relative to itself"; exit 1; }
echo "install is relocatable"
