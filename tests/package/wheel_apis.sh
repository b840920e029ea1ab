#!/bin/bash
# scripts/build-wheel.sh learns its APIs from the tree (scripts/wheel-apis.sh):
# a new API needs no edit there. usage: wheel_apis.sh SOURCE_DIR
# 1. a made-up API: its headers and files come from apis/NAME.ini alone;
# 2. a built layer without its apis/NAME.ini is an error naming it;
# 3. this tree: the files the script used to list by hand, and no API's
#    header or soname is named in build-wheel.sh any more.
set -euo pipefail
src=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# shellcheck source=scripts/wheel-apis.sh
. "$src/scripts/wheel-apis.sh"
fail() { echo "FAIL: $*" >&2; exit 1; }

mkdir -p "$tmp/t/src/layers/acme" "$tmp/t/src/layers/notalayer" "$tmp/t/apis"
touch "$tmp/t/src/layers/acme/CMakeLists.txt"
cat >"$tmp/t/apis/acme.ini" <<'INI'
; header = not/this.h (a comment)
[api]
name    = acme
header  = acme/acme_api.h
headers = acme_ext.h, other/more.h
library = libacme.so.2, libacme.so.3

[acmeCompile]
header = not/this/either.h
INI
[ "$(wheel_api_names "$tmp/t")" = acme ] || fail "names: $(wheel_api_names "$tmp/t")"
got=$(wheel_api_headers "$tmp/t" acme | tr '\n' ' ')
[ "$got" = "acme/acme_api.h acme/acme_ext.h other/more.h " ] || fail "headers: $got"
got=$(wheel_api_files "$tmp/t" acme | tr '\n' ' ')
want="lib/libcallguard_acme.so share/callguard/apis/acme.ini lib/callguard/shims/placeholder/libcallguard-real-acme.so"
want="$want lib/callguard/shims/libacme.so.2 lib/callguard/shims/libacme.so.3 "
[ "$got" = "$want" ] || fail "files: $got"
# A layer without a shim (NO_SHIM, MPI's) has neither shims nor their placeholder; its header's own folder
# comes from its generator line.
echo "callguard_add_layer(acme SOURCE cg_acme.c NO_SHIM)" >"$tmp/t/src/layers/acme/CMakeLists.txt"
got=$(wheel_api_files "$tmp/t" acme | tr '\n' ' ')
[ "$got" = "lib/libcallguard_acme.so share/callguard/apis/acme.ini " ] || fail "files without a shim: $got"
mkdir -p "$tmp/t/tests/gen"
printf 'apis/other.ini -o src/layers/other -I /nope\napis/acme.ini -o src/layers/acme -I /opt/acme/include -I rel\n' \
    >"$tmp/t/tests/gen/layers.txt"
got=$(wheel_api_include_dirs "$tmp/t" acme | tr '\n' ' ')
[ "$got" = "/opt/acme/include rel " ] || fail "include folders: $got"

mkdir -p "$tmp/t/src/layers/bad" && touch "$tmp/t/src/layers/bad/CMakeLists.txt"
if err=$(wheel_api_names "$tmp/t" 2>&1 >/dev/null); then fail "a layer without its .ini was taken"; fi
grep -q "src/layers/bad is built but there is no apis/bad.ini" <<<"$err" || fail "the error: $err"

files=""
for name in $(wheel_api_names "$src"); do files="$files $(wheel_api_files "$src" "$name")"; done
for f in lib/libcallguard_cl.so lib/libcallguard_ze.so lib/libcallguard_cuda.so lib/libcallguard_hip.so \
         lib/callguard/shims/libOpenCL.so.1 lib/callguard/shims/libze_loader.so.1 lib/callguard/shims/libcuda.so.1 \
         lib/callguard/shims/libamdhip64.so.5 lib/callguard/shims/libamdhip64.so.6 lib/callguard/shims/libamdhip64.so.7 \
         lib/callguard/shims/placeholder/libcallguard-real-cl.so lib/callguard/shims/placeholder/libcallguard-real-ze.so \
         lib/callguard/shims/placeholder/libcallguard-real-cuda.so lib/callguard/shims/placeholder/libcallguard-real-hip.so; do
  grep -qw -- "$f" <<<"$files" || fail "$f is not among this tree's API files: $files"
done
if grep -nE 'CL/cl\.h|ze_api\.h|hip_runtime|libOpenCL|libze_loader|libcuda|libamdhip64' "$src/scripts/build-wheel.sh"; then
  fail "build-wheel.sh names an API's header or soname"
fi
