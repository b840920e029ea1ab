#!/bin/bash
# probe_diff.sh PROBE LIBRARY EXPECTED: runs the resolver probe on LIBRARY and
# fails, showing the difference, unless it prints exactly EXPECTED.
set -u
PROBE=$1 LIB=$2 EXPECTED=$3
out=$(mktemp)
trap 'rm -f "$out"' EXIT
if ! "$PROBE" "$LIB" >"$out"; then
    echo "FAIL: $PROBE $LIB exited $?" >&2
    exit 1
fi
if ! diff -u "$EXPECTED" "$out"; then
    echo "FAIL: the answers of $LIB's cuGetProcAddress differ from $EXPECTED" >&2
    exit 1
fi
echo "PASS: $LIB answers as $EXPECTED says"
