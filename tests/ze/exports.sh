#!/bin/bash
# exports.sh LAYER LOADER: the layer exports exactly the loader's C names
# (ze*, zet*, zes*, zel*), 499 for Debian's 1.8.12; the loader's C++
# internals are not part of its API.
set -euo pipefail
names() { nm -D --defined-only "$1" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | grep '^ze' | sort -u; }
diff <(names "$2") <(names "$1") || { echo "FAIL: the layer's ze* exports differ from the loader's (< loader only, > layer only)" >&2; exit 1; }
echo "PASS: $(names "$1" | wc -l) names, the same as $2"
