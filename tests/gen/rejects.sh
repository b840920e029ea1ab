#!/bin/bash
# rejects.sh GEN DATA CASE: each case feeds callguard-gen one bad input and
# checks that it exits 2 with a message naming the problem (and its line),
# writing nothing.
GEN=$1 DATA=$2
source "$(dirname "$0")/lib.sh"
cd "$DATA"

gen_rejects_unknown_key() {
    expect_reject "unknown_key.ini:8: unknown key blockng in [shCreate]: an entry point section accepts blocking, reason," \
        unknown_key.ini -I .
}

gen_rejects_duplicate_key() {
    # libinih passes the second `reason` as a second call; it must not silently win.
    expect_reject "duplicate_key.ini:10: duplicate key reason in [shCreate] (first set at line 9)" duplicate_key.ini -I .
}

gen_rejects_duplicate_section() {
    expect_reject "duplicate_section.ini:11: duplicate section [shCreate] (first at line 7)" duplicate_section.ini -I .
}

gen_rejects_blocking_without_reason() {
    expect_reject "blocking_without_reason.ini:7: [shCreate] has blocking = yes without reason" \
        blocking_without_reason.ini -I .
}

gen_rejects_bad_transition() {
    expect_reject "bad_transition.ini:8: transition = sometimes: expected always, blocking or never" bad_transition.ini -I .
}

gen_rejects_unknown_entry_point() {
    expect_reject "unknown_entry_point.ini:10: unknown entry point shFoo" unknown_entry_point.ini -I .
}

gen_rejects_bad_variant() {
    expect_reject "bad_variant.ini:8: variant_of = shNope: expected another entry point the header declares" \
        bad_variant.ini -I .
    # A variant shares its base's policy: setting its own would be ignored.
    expect_reject "variant_with_keys.ini:7: [shVoidArgs] is a variant_of shAlloc and shares its policy" \
        variant_with_keys.ini -I .
}

gen_rejects_missing_required_key() {
    expect_reject "missing_key.ini:1: [api] has no library" missing_key.ini -I .
}

gen_rejects_unparsable_header() {
    # The compiler's own first error, with the header's file and line.
    expect_reject "broken.h:4: error: expected ')'" broken.ini -I .
    expect_reject "error: 'no_such_header.h' file not found" no_header.ini -I .
}

gen_rejects_unreadable_policy() {
    expect_reject "cannot read no_such_policy.ini: No such file or directory" no_such_policy.ini -I .
}

gen_rejects_bad_usage() {
    gen --help
    [ "$rc" -eq 0 ] && grep -q "^usage: callguard-gen" "$WORK/stdout" || fail "--help: status $rc"
    gen
    [ "$rc" -eq 2 ] && grep -q "no policy file given" "$WORK/stderr" || fail "no arguments: status $rc"
    gen shapes.ini
    [ "$rc" -eq 2 ] && grep -q "no output directory given" "$WORK/stderr" || fail "no -o: status $rc"
    gen shapes.ini -o "$WORK" --frobnicate
    [ "$rc" -eq 2 ] && grep -q "unknown option --frobnicate" "$WORK/stderr" || fail "bad option: status $rc"
    [ "$(wc -l <"$WORK/stderr")" -eq 1 ] || fail "a usage error must be one line"
}

gen_writes_nothing_on_error() {
    # A layer generated earlier stays as it was, and no temporary file is left.
    local out="$WORK/keep"
    mkdir -p "$out"
    echo "previous layer" >"$out/cg_shapes.c"
    for bad in unknown_key.ini blocking_without_reason.ini unknown_entry_point.ini; do
        gen "$bad" -o "$out" -I .
        [ "$rc" -eq 2 ] || fail "$bad: expected exit status 2, got $rc"
        [ "$(cat "$out/cg_shapes.c")" = "previous layer" ] || fail "$bad: the previous layer was overwritten"
        [ "$(ls -A "$out")" = "cg_shapes.c" ] || fail "$bad: left files behind: $(ls -A "$out")"
    done
    gen shapes.ini -o "$WORK/no/such/dir" -I .
    [ "$rc" -ne 0 ] || fail "writing into a missing directory succeeded"
}

"$3"
echo "PASS: $3"
