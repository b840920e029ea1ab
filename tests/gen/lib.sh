# lib.sh: helpers shared by callguard-gen's tests (sourced, bash).
# The caller sets GEN (the generator) and DATA (tests/gen/data).
set -euo pipefail

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# gen ARGS...: runs the generator, keeping its status in $rc, stdout in
# $WORK/stdout and stderr in $WORK/stderr (also shown, for the test log).
gen() {
    set +e
    "$GEN" "$@" >"$WORK/stdout" 2>"$WORK/stderr"
    rc=$?
    set -e
    cat "$WORK/stderr" >&2
}

# expect_reject MESSAGE ARGS...: the generator exits 2, its stderr holds
# MESSAGE (a fixed string), and the output directory stays empty.
expect_reject() {
    local want=$1
    shift
    local out="$WORK/out"
    rm -rf "$out" && mkdir -p "$out"
    gen "$@" -o "$out"
    [ "$rc" -eq 2 ] || fail "expected exit status 2, got $rc"
    grep -qF -- "$want" "$WORK/stderr" || fail "stderr lacks: $want"
    [ -z "$(ls -A "$out")" ] || fail "wrote files on error: $(ls -A "$out")"
}
