#!/bin/bash
# rejects.sh CASE GEN DATA [POLICY_CHECK] (or --list): each case feeds callguard-gen one
# bad input and checks that it exits 2 with a message naming the problem (and
# its line), writing nothing. Errors of the policy reader that callguard-gen
# and libcallguard share are checked on both sides (expect_policy_error):
# POLICY_CHECK is a program linked to libcallguard (policy_check.c).
source "$(dirname "$0")/../cgtest.sh"
cgtest_list '^(gen|policy)_' "$@"
GEN=$2 DATA=$3 CHECK=${4:-}
source "$(dirname "$0")/lib.sh"
cd "$DATA"

# expect_policy_error FILE MESSAGE: the generator refuses FILE with MESSAGE,
# and so does the runtime, through CALLGUARD_POLICY and through cg_policy_load.
expect_policy_error() {
    local file=$1 want=$2
    expect_reject "$want" "$file" -I .
    [ -n "$CHECK" ] || return 0
    local out
    set +e
    out=$(CALLGUARD_POLICY="$file" "$CHECK" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "CALLGUARD_POLICY=$file: expected exit status 2, got $rc: $out"
    grep -qF -- "$want" <<<"$out" || fail "CALLGUARD_POLICY=$file: stderr lacks: $want (got: $out)"
    [ "$(wc -l <<<"$out")" -eq 1 ] || fail "CALLGUARD_POLICY=$file: the error must be one line: $out"
    set +e
    out=$("$CHECK" "$file" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "cg_policy_load($file): expected status 2, got $rc: $out"
    grep -qF -- "$want" <<<"$out" || fail "cg_policy_load($file): error lacks: $want (got: $out)"
}

gen_rejects_unknown_key() {
    expect_policy_error unknown_key.ini \
        "unknown_key.ini:8: unknown key blockng in [shCreate]: an entry point section accepts blocking, collective, count, reason,"
    # [api] keys are named too, and the runtime accepts every one of them.
    expect_policy_error unknown_api_key.ini "unknown_api_key.ini:6: unknown key frobnicate in [api]: [api] accepts \
name, header, headers, abi_headers, prefix, library, result, success, missing, results, errcode, cflags, passthrough, variants, real_prefix, search, outputs or states"
}

# wait_args: parameters of the prototype (the generator), on a blocking site only (both sides).
gen_rejects_bad_wait_args() {
    local f="$WORK/wait.ini"
    bad() { # VALUE MESSAGE
        { sed -n 1,9p shapes.ini; printf '[shKeywords]\nblocking = yes\nreason = waits\nwait_args = %s\n' "$1"; } >"$f"
        expect_reject "$f:13: wait_args = $1: $2" "$f" -I .
    }
    bad "ctx nope" "shKeywords has no parameter nope; its parameters are ctx, p, f, fn, ret"
    bad "ctx p f fn ret" "parameter ret of shKeywords (\`int ret\`) is one too many: at most 4 are kept"
    bad "p, p" "parameter p of shKeywords (\`int p\`) is named twice"
    bad "p:" "parameter p of shKeywords (\`int p\`) has a \`:\` and no word after it"
    { sed -n 1,9p shapes.ini; printf '[shKeywords]\nwait_args = ctx\n'; } >"$f"
    expect_policy_error "$f" "$f:11: [shKeywords] has wait_args but not blocking = yes"
}

# states: the form on both sides (the shared reader), the names against the
# header (the generator) and against the loaded layer (the runtime).
gen_rejects_bad_states() {
    local f="$WORK/states.ini"
    bad() { # LINE_VALUE MESSAGE
        { sed -n 1,9p shapes.ini; echo "[shCreate]"; echo "states = $1"; } >"$f"
        expect_policy_error "$f" "$f:11: states = $1: expected none, or 1 to 4 different result code names separated by commas"
    }
    bad "SH_ERROR_A, SH_ERROR_A"
    bad "SH_ERROR_A, SH_ERROR_B, SH_MISSING, SH_ERROR_B_ALIAS, SH_X"
    bad "SH-ERROR"
    bad "none, SH_ERROR_A"
    { sed -n 1,9p shapes.ini; echo "[shCreate]"; echo "states ="; } >"$f"
    expect_policy_error "$f" "$f:11: states is empty: expected none, or 1 to 4"
    # an [api] without result has no codes
    printf '[api]\nname = shapes\nheader = shapes.h\nprefix = sh\nlibrary = libshapes.so.1\nstates = SH_ERROR_A\n' >"$f"
    expect_policy_error "$f" "$f:6: [api] sets states without result: name the result type first"
    # the generator: a name the header does not have, success, a function without a result code
    { sed -n 1,9p shapes.ini; echo "states = SH_ERROR_NOPE"; } >"$f"
    expect_reject "$f:10: [api]: states: SH_ERROR_NOPE is not a result code of sh_result_t" "$f" -I .
    { sed -n 1,9p shapes.ini; echo "[shCreate]"; echo "states = SH_SUCCESS"; } >"$f"
    expect_reject "$f:11: [shCreate]: states: SH_SUCCESS is the success code (SH_SUCCESS)" "$f" -I .
    { sed -n 1,9p shapes.ini; echo "[shAlloc]"; echo "states = SH_ERROR_A"; } >"$f"
    expect_reject "$f:11: [shAlloc] has states but returns void *, not sh_result_t" "$f" -I .
    # an alias is a code of its own name
    { sed -n 1,9p shapes.ini; echo "[shCreate]"; echo "states = SH_ERROR_B_ALIAS"; } >"$f"
    gen "$f" -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "an alias of a code was refused: $(cat "$WORK/stderr")"
    # the runtime: a code name the loaded toy layer lacks, with the file and line
    [ -n "$CHECK" ] || return 0
    printf '[api]\nname = toy\nheader = toy.h\nprefix = toy\nlibrary = libcgtoy.so\n\n[toyAdd]\nstates = TOY_ERROR_NOPE\n' >"$f"
    local out
    set +e
    out=$(CALLGUARD_POLICY="$f" "$CHECK" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "CALLGUARD_POLICY=$f: expected exit status 2, got $rc: $out"
    grep -qF -- "$f:8: [toyAdd]: states: TOY_ERROR_NOPE is not a result code of the toy layer" <<<"$out" ||
        fail "CALLGUARD_POLICY=$f: stderr lacks the code's error: $out"
    set +e
    out=$("$CHECK" "$f" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] && grep -qF -- "$f:8: [toyAdd]: states: TOY_ERROR_NOPE is not a result code of the toy layer" <<<"$out" ||
        fail "cg_policy_load($f): expected status 2 and the code's error, got $rc: $out"
}

gen_rejects_duplicate_key() {
    # libinih passes the second `reason` as a second call; it must not silently win.
    expect_policy_error duplicate_key.ini "duplicate_key.ini:10: duplicate key reason in [shCreate] (first set at line 9)"
}

gen_rejects_duplicate_section() {
    expect_policy_error duplicate_section.ini "duplicate_section.ini:11: duplicate section [shCreate] (first at line 7)"
}

gen_rejects_blocking_without_reason() {
    expect_policy_error blocking_without_reason.ini "blocking_without_reason.ini:7: [shCreate] has blocking = yes without reason"
    expect_policy_error empty_reason.ini "empty_reason.ini:9: reason is empty: expected why the call blocks"
}

gen_rejects_bad_transition() {
    expect_policy_error bad_transition.ini "bad_transition.ini:8: transition = sometimes: expected always, blocking or never"
    expect_policy_error bad_wrapper.ini "bad_wrapper.ini:8: wrapper = by hand: expected generated, hand or forward"
    expect_policy_error bad_search.ini "bad_search.ini:6: search = LD_LIBRARY_PATH: expected system or ld_library_path"
}

gen_rejects_unknown_entry_point() {
    expect_reject "unknown_entry_point.ini:10: unknown entry point shFoo" unknown_entry_point.ini -I .
}

gen_rejects_bad_variant() {
    expect_reject "bad_variant.ini:8: variant_of = shNope: expected another entry point the header declares" \
        bad_variant.ini -I .
    # A variant shares its base's policy: setting its own would be ignored.
    expect_policy_error variant_with_keys.ini "variant_with_keys.ini:7: [shVoidArgs] is a variant_of shAlloc and shares its policy"
}

gen_rejects_variant_section() {
    # A variant shares its base's section ([api] variants): its own would be ignored.
    expect_reject "variant_section.ini:9: [toyCompile_v2_ptds] is a variant of toyCompile ([api] variants at line 7)" \
        variant_section.ini -I ../../toy
    expect_reject "variant_of_variant.ini:10: variant_of = toyCompile_v2: that name is a variant of toyCompile" \
        variant_of_variant.ini -I ../../toy
}

gen_rejects_thread_rule_unknown_parameter() {
    expect_reject "rule_unknown_param.ini:9: writes = context: shVoidArgs has no parameter context; its parameters are ctx, n" \
        rule_unknown_param.ini -I .
}

gen_rejects_thread_rule_non_handle_parameter() {
    expect_reject "rule_not_handle.ini:9: reads = n: parameter n of shVoidArgs is \`size_t n\`, not a handle" \
        rule_not_handle.ini -I .
}

policy_rejects_thread_rule_parameter_twice() {
    expect_policy_error rule_param_twice.ini "rule_param_twice.ini:10: reads = ctx: ctx is in writes too"
}

policy_rejects_thread_rule_bad_list() {
    # An empty item is dropped (sets = ctx, is ctx); a name that is no C identifier is refused.
    expect_policy_error rule_bad_list.ini \
        "rule_bad_list.ini:9: launches = 2ctx: expected a comma-separated list of the entry point's handle parameters"
}

policy_rejects_thread_rules_other_than_the_layers() {
    # The runtime's reader: the rules are compiled into the layer; a file may only repeat them.
    [ -n "$CHECK" ] || return 0
    local out rc
    set +e
    out=$(CALLGUARD_POLICY=toy_rules_differ.ini "$CHECK" 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "CALLGUARD_POLICY=toy_rules_differ.ini: expected exit status 2, got $rc: $out"
    grep -qF "toy_rules_differ.ini:9: [toySetDims]: thread rules are built into the toy layer, which has writes = device; sets = device for toySetDims" <<<"$out" ||
        fail "the message names the file, the section and the layer's rules: $out"
    set +e
    out=$("$CHECK" toy_rules_differ.ini 2>&1)
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || fail "cg_policy_load(toy_rules_differ.ini): expected status 2, got $rc: $out"
    # The shipped file, which repeats them, loads (policy_shipped_files_load_in_runtime too).
    CALLGUARD_POLICY=../../../apis/toy.ini "$CHECK" >/dev/null 2>&1 || fail "apis/toy.ini does not load"
}

gen_rejects_missing_required_key() {
    expect_policy_error missing_key.ini "missing_key.ini:1: [api] has no library"
}

gen_rejects_unparsable_header() {
    # The compiler's own first error, with the header's file and line.
    expect_reject "broken.h:4: error: expected ')'" broken.ini -I .
    expect_reject "error: 'no_such_header.h' file not found" no_header.ini -I .
}

gen_rejects_unreadable_policy() {
    expect_policy_error no_such_policy.ini "cannot read policy file no_such_policy.ini: No such file or directory"
}

policy_rejects_line_too_long() {
    # Debian's libinih cuts a line at 199 bytes and reads the rest as a new
    # line: here the tail of a comment would set serialize. Refused instead.
    local f="$WORK/long.ini"
    { sed -n 1,5p shapes.ini; echo; echo "[shCreate]"
      printf '; %0196d serialize = oops\n' 0; echo "blocking = no"; } >"$f"
    expect_policy_error "$f" "long.ini:8: line too long: 215 characters, at most 198"
    # 198 characters is fine.
    { cat shapes.ini; printf '; %0196d\n' 0; } >"$WORK/ok.ini"
    gen "$WORK/ok.ini" -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "a line of 198 characters was refused"
}

policy_rejects_nul_byte() {
    local f="$WORK/nul.ini"
    { sed -n 1,5p shapes.ini; printf '[shCreate]\nreason = a\0b\nblocking = yes\n'; } >"$f"
    expect_policy_error "$f" "nul.ini:7: NUL byte in the line"
}

policy_rejects_key_before_section() {
    expect_policy_error key_before_section.ini "key_before_section.ini:2: name = shapes before any section"
}

policy_rejects_indented_line() {
    # libinih would append an indented line to the value above it.
    expect_policy_error indented_line.ini "indented_line.ini:9: indented line: it would continue the value set at line 8"
}

policy_rejects_bad_section() {
    expect_policy_error bad_section_name.ini \
        "bad_section_name.ini:7: section [sh Create]: expected [api], [defaults], [quirk:NAME] or an entry point name"
    expect_policy_error lacks_prefix.ini \
        "lacks_prefix.ini:8: unknown entry point clBuildProgram: its name lacks the [api] prefix sh"
    expect_policy_error scope_without_serialize.ini \
        "scope_without_serialize.ini:8: [shCreate] has scope = handle without serialize"
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

cgtest_run "$1"
