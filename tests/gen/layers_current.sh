#!/bin/bash
# layers_current.sh GEN REPO: regenerates every layer listed in layers.txt
# from the repository root and fails, showing the diff, when a committed
# file differs (someone edited it by hand, or changed the generator, the
# policy or the header without regenerating).
GEN=$1 REPO=$2
source "$(dirname "$0")/lib.sh"
LIST="$(cd "$(dirname "$0")" && pwd)/layers.txt"
cd "$REPO"

stale=0
while read -r -a args; do
    [ "${#args[@]}" -eq 0 ] || [[ "${args[0]}" == \#* ]] && continue
    ini=${args[0]} outdir=${args[2]}
    name=$(sed -n 's/^name *= *\([a-z0-9_]*\).*/\1/p' "$ini")
    committed="$outdir/cg_$name.c"
    # --check compares every file the generator writes (the layer, its
    # list of pass-through names); the C file's diff is shown.
    gen "${args[@]}" --check
    [ "$rc" -eq 0 ] || [ "$rc" -eq 1 ] || fail "callguard-gen ${args[*]} failed"
    if [ "$rc" -ne 0 ]; then
        gen "${args[@]}" --stdout
        diff -u "$committed" "$WORK/stdout" || true
        echo "STALE: regenerate: callguard-gen ${args[*]}" >&2
        stale=1
    fi
done <"$LIST"
[ "$stale" -eq 0 ] || fail "committed layers are not current"
echo "PASS: committed layers are current"
