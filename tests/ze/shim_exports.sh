#!/bin/bash
# shim_exports.sh SHIM LAYER REAL PASSTHROUGH API: a soname shim exports
# exactly its layer's guarded names (the layer's names less the policy's
# pass-through list), needs libcallguard-real-API.so, and has every symbol
# version node of the real library REAL (none for a loader that has none).
set -euo pipefail
shim=$1 layer=$2 real=$3 pass=$4 api=$5
names() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u; }
nodes() { readelf -V --wide "$1" | awk '/Version definition/ { d = 1 } /Version needs/ { d = 0 } d && /Name:/ && !/Flags: BASE/ { print $NF }' | sort -u; }
fail() { echo "FAIL: $*" >&2; exit 1; }
guarded=$(comm -23 <(names "$layer") <(grep -v '^#' "$pass" | grep . | sort -u))
diff <(echo "$guarded") <(names "$shim") ||
  fail "the shim's exports differ from the layer's guarded names (< guarded only, > shim only)"
readelf -d "$shim" | grep -q "(NEEDED).*\[libcallguard-real-$api.so\]" || fail "the shim does not need libcallguard-real-$api.so"
diff <(nodes "$real") <(nodes "$shim") || fail "the shim's version nodes differ from $real's (< real only, > shim only)"
echo "PASS: $(echo "$guarded" | wc -l) guarded names, $(nodes "$shim" | wc -l) version nodes, needs libcallguard-real-$api.so"
