#!/bin/bash
# policy_loads.sh CHECK REPO [LAYER.so...]: every shipped policy file
# (apis/*.ini, [api] section and all) loads in the runtime, through
# CALLGUARD_POLICY and through cg_policy_load, with the layers given
# preloaded so that each file's entry points are checked against a layer.
CHECK=$1 REPO=$2
shift 2
set -euo pipefail
preload=$(IFS=:; echo "$*")
n=0
# A file whose layer is not among those given (no CUDA layer yet) is kept
# and its entry points are named at exit: that line, and only that, may
# come on stderr.
only_kept() { ! grep -v "^callguard: never applied, no loaded layer has" <<<"$1" | grep -q .; }
for ini in "$REPO"/apis/*.ini; do
    out=$(LD_PRELOAD="$preload" CALLGUARD_POLICY="$ini" "$CHECK" 2>&1) || {
        echo "FAIL: CALLGUARD_POLICY=$ini: $out" >&2
        exit 1
    }
    grep -qx loaded <<<"$out" && only_kept "$(grep -vx loaded <<<"$out")" ||
        { echo "FAIL: CALLGUARD_POLICY=$ini: $out" >&2; exit 1; }
    out=$(LD_PRELOAD="$preload" "$CHECK" "$ini" 2>&1) || {
        echo "FAIL: cg_policy_load($ini): $out" >&2
        exit 1
    }
    n=$((n + 1))
done
[ "$n" -ge 3 ] || { echo "FAIL: only $n policy files in $REPO/apis" >&2; exit 1; }
echo "PASS: $n policy files load"
