#!/bin/bash
# generates.sh GEN DATA CC INCLUDE CASE: cases that generate a layer from
# tests/gen/data/shapes.h and check what came out.
GEN=$1 DATA=$2 CC=$3 INCLUDE=$4
source "$(dirname "$0")/lib.sh"
cd "$DATA"

gen_selects_by_declaring_file() {
    # shapes.h includes shapes_helper.h, whose shHelperNotApi has the API's
    # prefix: like clearenv for prefix `cl`, it is not an entry point.
    gen shapes.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed"
    grep -q "^CG_EXPORT sh_result_t SH_APICALL shCreate(" "$WORK/cg_shapes.c" || fail "shCreate not selected"
    ! grep -q "shHelperNotApi" "$WORK/cg_shapes.c" || fail "shHelperNotApi (declared by an included header) selected"
    # A redeclaration does not make a second site; static and variadic functions are skipped.
    [ "$(grep -c "^    CG_shCreate,$" "$WORK/cg_shapes.c")" -eq 1 ] || fail "shCreate has more than one site"
    ! grep -q "CG_shInline\|CG_shVariadic" "$WORK/cg_shapes.c" || fail "static or variadic function wrapped"
    grep -q "skipping shVariadic" "$WORK/stderr" || fail "no warning for the variadic function"
    expect_reject "not_api_entry_point.ini:9: unknown entry point shHelperNotApi" not_api_entry_point.ini -I .
}

gen_handles_fnptr_array_const_params() {
    gen shapes.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed"
    local out="$WORK/cg_shapes.c"
    # Wrappers repeat the header's prototypes; frames hold decayed arrays.
    local want=(
        "CG_EXPORT sh_result_t SH_APICALL shCallback(sh_ctx_t ctx, void (*pfn_notify)(sh_ctx_t, void *), void *user)"
        "CG_EXPORT sh_result_t SH_APICALL shArrays(sh_ctx_t ctx, const uint32_t dims[3], const char *names[], int grid[2][4])"
        "    const uint32_t *dims;"
        "    int (*grid)[4];"
        "CG_EXPORT sh_result_t SH_APICALL shConst(const sh_ctx_t ctx, const char *const text, char *const *argv, const void *restrict p)"
        "CG_EXPORT sh_result_t SH_APICALL shEnum(sh_ctx_t cg_a0, sh_mode_t cg_a1, enum sh_mode cg_a2, const sh_desc_t *cg_a3)"
        "CG_EXPORT void SH_APICALL shVoid(void)"
        "CG_EXPORT int (*shReturnsFnptr(int which))(double, sh_mode_t)"
        "CG_EXPORT sh_result_t SH_APICALL shFnType(sh_fn_t *fn, int inner(int), void (*cbs[2])(int))"
        "    void (**cbs)(int);"
        # the first parameter is the key only when it is an opaque handle
        "(const void *)ctx, cg_th_shCallback"
        "cg_call(&cg_sites[CG_shCreate], NULL,"
        # policy values, escaped; the [defaults] transition where a site sets none
        '[CG_shCreate] = {"shCreate", NULL, 1, 1, 1, "takes \"a while\" \\ (in the driver)", "sh.create-domain"},'
        '[CG_shAlloc] = {"shAlloc", NULL, 2, 0, 0, NULL, NULL},'
        '[CG_shVoid] = {"shVoid", NULL, 1, 0, 0, NULL, NULL},'
        # a variant names its base and carries the base's policy
        '[CG_shVoidArgs] = {"shVoidArgs", "shAlloc", 2, 0, 0, NULL, NULL},'
        # result names: one case per value (SH_ERROR_B_ALIAS repeats SH_ERROR_B)
        'case SH_ERROR_B: return "SH_ERROR_B";'
        "return (sh_result_t)(SH_MISSING);"
        "#define SH_UNUSED_FLAG 1"
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    ! grep -q "SH_ERROR_B_ALIAS" "$out" || fail "a repeated result value got a second case"
    # The proof: it compiles as strictly as the layers are built.
    "$CC" -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations -fPIC -fvisibility=hidden -shared \
        -I "$INCLUDE" -I . "$out" -o "$WORK/cg_shapes.so" || fail "the generated layer does not compile"
    # Every wrapper is exported with the API's name.
    nm -D --defined-only "$WORK/cg_shapes.so" | grep -q " T shFnType$" || fail "shFnType not exported"
}

gen_forwards_passthrough_names() {
    # Names listed in the pass-through file are exported and reach the real
    # function with every argument register intact, resolved once each.
    gen passthrough.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed"
    local out="$WORK/cg_shapes.c"
    grep -qF '.passthrough = cg_passthrough,' "$out" || fail "the layer does not list its pass-through names"
    grep -qF '.dlsym_next = cg_dlsym_next,' "$out" || fail "the layer does not set dlsym_next"
    "$CC" -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations -fPIC -fvisibility=hidden -shared \
        -I "$INCLUDE" -I . "$out" -o "$WORK/libcg_shapes.so" || fail "the generated layer does not compile"
    for n in shPassMany shPassSecond shCreate; do
        nm -D --defined-only "$WORK/libcg_shapes.so" | grep -q " T $n$" || fail "$n not exported"
    done
    "$CC" -std=gnu11 -Wall -Wextra -Werror -I "$INCLUDE" passthrough_main.c "$WORK/libcg_shapes.so" -rdynamic \
        -Wl,-rpath,"$WORK" -o "$WORK/passthrough_main" || fail "the test program does not link"
    local got
    got=$("$WORK/passthrough_main") || fail "a pass-through call went wrong: $got"
    [ "$got" = "resolves=2" ] || fail "expected one resolution per name, got: $got"
    expect_reject "passthrough: shCreate is declared by the API headers" passthrough_entry_point.ini -I .
    expect_reject "passthrough = @no-such.exports: cannot read" passthrough_missing_file.ini -I .
}

gen_output_is_reproducible() {
    # Same command, same bytes; no absolute path of this machine in the output.
    gen shapes.ini -o "$WORK" -I .
    cp "$WORK/cg_shapes.c" "$WORK/first.c"
    gen "$DATA/shapes.ini" -o "$WORK" -I "$DATA"
    [ "$rc" -eq 0 ] || fail "generation failed"
    ! grep -qF "$DATA" "$WORK/cg_shapes.c" || fail "the output holds the absolute path $DATA"
    ! grep -qF "$WORK" "$WORK/cg_shapes.c" || fail "the output holds the absolute path $WORK"
    diff <(tail -n +2 "$WORK/first.c") <(tail -n +2 "$WORK/cg_shapes.c") || fail "output differs between runs"
}

"$5"
echo "PASS: $5"
