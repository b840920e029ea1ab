#!/bin/bash
# policy_loads.sh CHECK REPO [LAYER.so...]: every shipped policy file
# (apis/*.ini, [api] section and all) loads in the runtime, through
# (and the shipped quirks file through CALLGUARD_QUIRKS)
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
    # The quirks file is no policy file: it loads as CALLGUARD_QUIRKS, and a policy file refuses it.
    if [ "$(basename "$ini")" = quirks.ini ]; then
        out=$(LD_PRELOAD="$preload" CALLGUARD_QUIRKS="$ini" "$CHECK" 2>&1) && [ "$out" = loaded ] ||
            { echo "FAIL: CALLGUARD_QUIRKS=$ini: $out" >&2; exit 1; }
        if out=$(LD_PRELOAD="$preload" CALLGUARD_POLICY="$ini" "$CHECK" 2>&1) ||
            ! grep -q "is a quirk: quirks go in a quirks file" <<<"$out"; then
            echo "FAIL: CALLGUARD_POLICY=$ini was not refused: $out" >&2
            exit 1
        fi
        continue
    fi
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
