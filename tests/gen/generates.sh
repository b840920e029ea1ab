#!/bin/bash
# generates.sh CASE GEN DATA CC INCLUDE (or --list): cases that generate a layer from
# tests/gen/data/shapes.h and check what came out.
source "$(dirname "$0")/../cgtest.sh"
cgtest_list '^gen_' "$@"
GEN=$2 DATA=$3 CC=$4 INCLUDE=$5
PASSTHROUGH_S=$INCLUDE/../src/layers/passthrough.S
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
    [ "$(grep -c "^    CGL_shCreate,$" "$WORK/cg_shapes.c")" -eq 1 ] || fail "shCreate has more than one site"
    ! grep -q "CGL_shInline\|CGL_shVariadic" "$WORK/cg_shapes.c" || fail "static or variadic function wrapped"
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
        "CG_EXPORT sh_result_t SH_APICALL shEnum(sh_ctx_t cgl_a0, sh_mode_t cgl_a1, enum sh_mode cgl_a2, const sh_desc_t *cgl_a3)"
        "CG_EXPORT void SH_APICALL shVoid(void)"
        "CG_EXPORT int (*shReturnsFnptr(int which))(double, sh_mode_t)"
        "CG_EXPORT sh_result_t SH_APICALL shFnType(sh_fn_t *fn, int inner(int), void (*cbs[2])(int))"
        "    void (**cbs)(int);"
        # the first parameter is the key only when it is an opaque handle
        "(const void *)ctx, cgl_th_shCallback"
        "cg_call(&cgl_sites[CGL_shCreate], NULL,"
        # a site the policy marks blocking: its counted call in the short path (layer.h)
        "    CG_BLOCKING_CALL(shCreate, (out), cgl_thunk_code, cgl_left);"
        # policy values, escaped; the [defaults] transition where a site sets none
        '[CGL_shCreate] = {"shCreate", NULL, 1, 1, 1, "takes \"a while\" \\ (in the driver)", "sh.create-domain", NULL, 0, NULL, 0, .args = &cgl_targs_shCreate.a},'
        '[CGL_shAlloc] = {"shAlloc", NULL, 2, 0, 0, NULL, NULL, NULL, 0, cgl_rules_shAlloc, 1, .args = &cgl_targs_shAlloc.a},'
        '[CGL_shVoid] = {"shVoid", NULL, 1, 0, 0, NULL, NULL, NULL, 0, NULL, 0},'
        # a variant names its base and carries the base's policy; its thread rules are its own frame's
        '[CGL_shVoidArgs] = {"shVoidArgs", "shAlloc", 2, 0, 0, NULL, NULL, NULL, 0, cgl_rules_shVoidArgs, 1, .args = &cgl_targs_shVoidArgs.a},'
        '{"ctx", offsetof(struct cgl_fr_shVoidArgs, ctx), sizeof(((struct cgl_fr_shVoidArgs *)0)->ctx), CG_RULE_READ},'
        '{"ctx", offsetof(struct cgl_fr_shCallback, ctx), sizeof(((struct cgl_fr_shCallback *)0)->ctx), CG_RULE_WRITE},'
        # result names: one case per value (SH_ERROR_B_ALIAS repeats SH_ERROR_B)
        'case SH_ERROR_B: return "SH_ERROR_B";'
        # a result code starts as the missing-library result (returned when cg_call finds no real function)
        ".cgl_ret = (sh_result_t)(SH_MISSING)};"
        "#define SH_UNUSED_FLAG 1"
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    ! grep -q "case SH_ERROR_B_ALIAS" "$out" || fail "a repeated result value got a second case"
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
    grep -qF '.passthrough = cgl_passthrough,' "$out" || fail "the layer does not list its pass-through names"
    grep -qF '.dlsym_next = cgl_dlsym_next,' "$out" || fail "the layer does not set dlsym_next"
    grep -qxF 'CGL_PT(1, shPassSecond)' "$WORK/cg_shapes_passthrough.h" || fail "no list of pass-through names"
    # Built without passthrough.S (a shim forwarding through DT_NEEDED), the
    # layer still compiles and links, exporting no pass-through name.
    # (-z defs: nothing left undefined but libcallguard's calls, stubbed here.)
    printf '%s\n' '#include <callguard/layer.h>' 'void cg_layer_register(cg_layer *l) { (void)l; }' \
        'int cg_call(cg_site *s, const void *k, cg_thunk t, void *f) { (void)s, (void)k, (void)t, (void)f; return -1; }' \
        'uintptr_t cg_enter(cg_site *s) { (void)s; return 0; }' \
        'void cg_leave(uintptr_t t) { (void)t; }' 'void cg_leave_code(uintptr_t t, int c) { (void)t, (void)c; }' \
        'uintptr_t cg_enter_args(cg_site *s) { (void)s; return 0; }' \
        'void cg_leave_args(uintptr_t t, const uint64_t *w, uint32_t n, uint32_t o) { (void)t, (void)w, (void)n, (void)o; }' \
        'void cg_leave_args_code(cg_site *s, uintptr_t t, int c, const uint64_t *w, uint32_t n) { (void)s, (void)t, (void)c, (void)w, (void)n; }' \
        'void *cg_resolve_passthrough(cg_layer *l, const char *n) { (void)l, (void)n; return 0; }' \
        '__thread cg_slot *cg_my_slot;' >"$WORK/stubs.c"
    "$CC" -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations -fPIC -fvisibility=hidden -shared \
        -Wl,-z,defs -I "$INCLUDE" -I . "$out" "$WORK/stubs.c" -ldl -o "$WORK/libcg_plain.so" \
        || fail "the layer without passthrough.S does not link"
    ! nm -D --defined-only "$WORK/libcg_plain.so" | grep -q " shPassMany$" || fail "shPassMany exported without the .S"
    # With it, the trampolines: the one assembly file, given this layer's list.
    "$CC" -std=gnu11 -Wall -Wextra -Werror -Wno-deprecated-declarations -fPIC -fvisibility=hidden -shared \
        -I "$INCLUDE" -I . "$out" "$PASSTHROUGH_S" -DCGL_PASSTHROUGH_LIST="\"$WORK/cg_shapes_passthrough.h\"" \
        -Wl,-z,noexecstack -Wl,--fatal-warnings -o "$WORK/libcg_shapes.so" || fail "the generated layer does not build"
    for n in shPassMany shPassSecond shCreate; do
        nm -D --defined-only "$WORK/libcg_shapes.so" | grep -q " T $n$" || fail "$n not exported"
    done
    "$CC" -std=gnu11 -Wall -Wextra -Werror -I "$INCLUDE" passthrough_main.c "$WORK/libcg_shapes.so" -rdynamic \
        -Wl,-rpath,"$WORK" -o "$WORK/passthrough_main" || fail "the test program does not link"
    local got
    got=$("$WORK/passthrough_main") || fail "a pass-through call went wrong: $got"
    [ "$got" = "resolves=2" ] || fail "expected one resolution per name, got: $got"
    expect_reject "passthrough: shCreate is declared by the API headers" passthrough_entry_point.ini -I .
    # A declared name with wrapper = forward: no site, a trampoline like the others.
    gen forward.ini -o "$WORK" -I ../../toy
    [ "$rc" -eq 0 ] || fail "generation with wrapper = forward failed"
    grep -qxF 'CGL_PT(0, toyNop)' "$WORK/cg_toy_passthrough.h" || fail "toyNop is not forwarded"
    ! grep -q "CGL_toyNop\b" "$WORK/cg_toy.c" || fail "a forwarded name got a site"
    "$CC" -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -shared -I "$INCLUDE" -I ../../toy \
        "$WORK/cg_toy.c" "$PASSTHROUGH_S" -DCGL_PASSTHROUGH_LIST="\"$WORK/cg_toy_passthrough.h\"" \
        -o "$WORK/libforward.so" || fail "the layer with a forwarded name does not build"
    nm -D --defined-only "$WORK/libforward.so" | grep -q " T toyNop$" || fail "toyNop not exported"
    # A policy without pass-through names removes a list left from before.
    gen ../../../apis/toy.ini -o "$WORK" -I ../../toy --check
    [ "$rc" -eq 1 ] && grep -q "cg_toy_passthrough.h is no longer generated" "$WORK/stderr" || fail "--check missed a stale list"
    gen ../../../apis/toy.ini -o "$WORK" -I ../../toy
    [ "$rc" -eq 0 ] && [ ! -e "$WORK/cg_toy_passthrough.h" ] || fail "a stale list of pass-through names was left"
    expect_reject "passthrough = @no-such.exports: cannot read" passthrough_missing_file.ini -I .
}

gen_writes_variants_and_hand_wrappers() {
    # apis/toy.ini: variants = _v2, _ptds; [toyGetProcAddress] wrapper = hand.
    gen ../../../apis/toy.ini -o "$WORK" -I ../../toy
    [ "$rc" -eq 0 ] || fail "generation failed"
    local out="$WORK/cg_toy.c"
    local want=(
        # suffixes stack; a variant carries its base's policy
        '[CGL_toyCompile_v2_ptds] = {"toyCompile_v2_ptds", "toyCompile", 0, 1, 0, "compiles a program in the driver", NULL, NULL, 0, NULL, 0, .args = &cgl_targs_toyCompile_v2_ptds.a},'
        # a suffixed name whose base the header lacks stands alone
        '[CGL_toyQuery_v2] = {"toyQuery_v2", NULL, 0, 0, 0, NULL, NULL, NULL, 0, NULL, 0, .args = &cgl_targs_toyQuery_v2.a},'
        # every site's wrapper, for a hand-written resolver
        '[CGL_toyCompile_v2] = (void *)toyCompile_v2,'
        '.wrappers = cgl_wrappers,'
        # wrapper = hand: the guarded call stays, as cgl_guarded_NAME; the hand file is included
        'static __attribute__((unused)) toy_result_t cgl_guarded_toyGetProcAddress(const char *name, uint32_t version, void **pfn)'
        'struct cgl_fr_toyGetProcAddress {'
        'CG_THUNK(toyGetProcAddress, (cgl_f->name, cgl_f->version, cgl_f->pfn), cgl_thunk_code);'
        '    CG_COUNTED_CALL(toyGetProcAddress, (name, version, pfn), cgl_thunk_code, cgl_left);'
        '#include "cg_toy_hand.c"'
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    ! grep -q "^CG_EXPORT .*toyGetProcAddress(" "$out" || fail "a wrapper = hand entry point got a generated export"
    # Without the hand-written file there is no toyGetProcAddress: the include fails.
    ! "$CC" -std=gnu11 -fsyntax-only -I "$INCLUDE" -I ../../toy "$out" 2>/dev/null || fail "compiled without cg_toy_hand.c"
    cp ../../../src/layers/toy/cg_toy_hand.c "$WORK/"
    "$CC" -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden -shared -I "$INCLUDE" -I ../../toy "$out" \
        -o "$WORK/libcallguard_toy.so" || fail "the toy layer does not compile with its hand-written file"
    nm -D --defined-only "$WORK/libcallguard_toy.so" | grep -q " T toyGetProcAddress$" || fail "no toyGetProcAddress"
}

gen_int_results_and_real_prefix() {
    # MPI's shape: result = int with macro codes, no typedef. Only a function the header writes as
    # returning `int` is checked, not one returning a macro for int (MPI_Fint); real_prefix goes into the
    # layer's descriptor (the runtime resolves irDo as PirDo), and PirDo itself is no entry point.
    gen intres.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed: $(cat "$WORK/stderr")"
    local out="$WORK/cg_intres.c"
    local want=(
        '    .real_prefix = "P",'
        '/* irDo: returns the result type: checked; no handle key */'
        '/* irToF: returns no result code: never an error; no handle key */'
        'case IR_ERR_ARG: return "IR_ERR_ARG";'
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    ! grep -q "CGL_PirDo" "$out" || fail "PirDo became an entry point"
    # int needs macro codes; real_prefix must be an identifier.
    expect_reject "int_result_enum.ini:2: result = int: the header declares no typedef of that name" \
        int_result_enum.ini -I .
    expect_reject "bad_real_prefix.ini:11: real_prefix = 1P: expected a C identifier" bad_real_prefix.ini -I .
}

gen_writes_states() {
    # [api] states for every entry point that returns the result type; a
    # section's own list (or none) replaces it; variants follow their base.
    local f="$WORK/states.ini"
    { sed -n 1,10p shapes.ini; echo "states = SH_ERROR_A"; echo "[shCreate]"; echo "states = none";
      echo "[shArrays]"; echo "states = SH_ERROR_B_ALIAS, SH_MISSING"; } >"$f"
    gen "$f" -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed: $(cat "$WORK/stderr")"
    local out="$WORK/cg_shapes.c"
    local want=(
        'static const int cgl_states[] = {SH_ERROR_A};'
        'static const int cgl_states_shArrays[] = {SH_ERROR_B_ALIAS, SH_MISSING};'
        '[CGL_shCreate] = {"shCreate", NULL, 0, 0, 0, NULL, NULL, NULL, 0, NULL, 0, .args = &cgl_targs_shCreate.a},'
        '[CGL_shArrays] = {"shArrays", NULL, 0, 0, 0, NULL, NULL, cgl_states_shArrays, 2, NULL, 0, .args = &cgl_targs_shArrays.a},'
        '[CGL_shConst] = {"shConst", NULL, 0, 0, 0, NULL, NULL, cgl_states, 1, NULL, 0, .args = &cgl_targs_shConst.a},'
        '[CGL_shAlloc] = {"shAlloc", NULL, 0, 0, 0, NULL, NULL, NULL, 0, NULL, 0, .args = &cgl_targs_shAlloc.a},'
        # the thunk's code, by the layer's one rule: success is one compare
        'if (CG_LIKELY(r == SH_SUCCESS)) return 0;'
        'CG_THUNK(shArrays, (cgl_f->ctx, cgl_f->dims, cgl_f->names, cgl_f->grid), cgl_thunk_code);'
        # the wrapper's paths (layer.h): the result type's code and its one cold leave; another
        # return type has no code and a cold leave of its own
        'CG_LEFT_FUNCTION(cgl_left, sh_result_t);'
        '    CG_COUNTED_CALL(shArrays, (ctx, dims, names, grid), cgl_thunk_code, cgl_left);'
        '    CG_SHORT_CALL(shArrays, (ctx, dims, names, grid), cgl_thunk_code);'
        '    CG_COUNTED_CALL(shAlloc, (ctx, size), CG_NO_CODE, cgl_left_shAlloc);'
        '    CG_COUNTED_CALL_VOID(shVoid, ());'
        # names back to codes, aliases included (a CALLGUARD_POLICY file's states)
        '{"SH_ERROR_B_ALIAS", (long)(SH_ERROR_B_ALIAS)},'
        '.result_code = cgl_result_code,'
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    "$CC" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I "$INCLUDE" -I . "$out" || fail "the layer does not compile"
}

gen_both_paths_give_the_runtime_the_same_codes() {
    # Success is CD_OK (7) and CD_ERROR_ZERO (0) a failure: the short path and
    # the thunk give the runtime the same code for each result (layer.h),
    # CG_RESULT_ZERO for the failure of int value 0. codes_main.c stands in
    # for the runtime and calls each wrapper on both paths.
    gen codes.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed"
    local opt got
    for opt in -O0 -O2; do
        "$CC" -std=gnu11 -Wall -Wextra -Werror $opt -fvisibility=hidden -I "$INCLUDE" -I . "$WORK/cg_codes.c" \
            codes_main.c -ldl -o "$WORK/codes_main" || fail "the generated layer does not build ($opt)"
        got=$("$WORK/codes_main") && [ "$got" = ok ] || fail "($opt) $got"
    done
}

gen_variant_rule_falls_on_parameter_at_base_position() {
    # cuda.h names cuGraphLaunch's executable graph hGraph and
    # cuGraphLaunch_ptsz's hGraphExec: a rule on the base's name falls on the
    # variant's parameter of the same type at the same position.
    gen rule_variant.ini -o "$WORK" -I .
    [ "$rc" -eq 0 ] || fail "generation failed"
    local out="$WORK/cg_variants.c"
    local want=(
        '{"hGraph", offsetof(struct cgl_fr_vrLaunch, hGraph), sizeof(((struct cgl_fr_vrLaunch *)0)->hGraph), CG_RULE_WRITE},'
        '{"hGraphExec", offsetof(struct cgl_fr_vrLaunch_ptsz, hGraphExec), sizeof(((struct cgl_fr_vrLaunch_ptsz *)0)->hGraphExec), CG_RULE_WRITE},'
        '{"hStream", offsetof(struct cgl_fr_vrLaunch_ptsz, hStream), sizeof(((struct cgl_fr_vrLaunch_ptsz *)0)->hStream), CG_RULE_READ},'
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    # Another type in that place: the name is still unknown there.
    expect_reject "rule_variant_type.ini:13: writes = hExec: vrBad_ptsz (a variant of vrBad) has no parameter hExec; its parameters are hStream, hOther" \
        rule_variant_type.ini -I .
}

gen_abi_headers_add_neutral_wrappers_and_refuse_narrow_ones() {
    # abi.ini: the layer is compiled with abi_main.h; abi/abi_std.h (pointer handles, as MPI 5's mpi_abi.h)
    # and abi/abi_int.h (int handles, as MPICH's mpi.h, prototypes in a header beside it) are read alone on
    # --abi-dir. What abi_main.h lacks is added with ABI-neutral types: handles (a handle in any of them)
    # and pointers to non-builtin types void *, integers their C type, an enum its integer type; a macro
    # of the main header of the same name is undefined first. What both declare keeps abi_main.h's type.
    gen abi.ini -o "$WORK" -I . --abi-dir abi
    [ "$rc" -eq 0 ] || fail "generation failed: $(cat "$WORK/stderr")"
    local out="$WORK/cg_abi.c"
    local want=(
        "CG_EXPORT int abSend(const void *buf, int count, ab_comm comm)"
        "CG_EXPORT int abSend_c(const void *buf, long count, void *comm);"
        "#undef abAdd /* a macro in abi_main.h; a function in abi_std.h */"
        "CG_EXPORT long abAdd(long a, long b)"
        "CG_EXPORT int abMode(unsigned int mode, const long *counts, void *fn, char **names, double when)"
        "CG_EXPORT void *abComm_fromint(int comm)"
        "CG_EXPORT int abSession_c2f(void *session)"
        "(const void *)session, cgl_th_abSession_c2f"
        "/* abSend_c: not in abi_main.h; from abi_headers' abi_std.h: ABI-neutral types */"
        '[CGL_abSend_c] = {"abSend_c", NULL, 0, 1, 0, "waits for the receive", NULL, NULL, 0, NULL, 0, .args = &cgl_targs_abSend_c},'
        "/* abSend_c: returns the result type: checked; no handle key */"
        "/* abComm_fromint: returns no result code: never an error; no handle key */"
        # exported as an IFUNC: its wrapper only where a loaded library defines the real function
        "static int cgl_w_abSend_c(const void *buf, long count, void *comm)"
        "    [CGL_abSend_c] = (void *)cgl_w_abSend_c,"
        '    return cg_loaded_defines("PabSend_c", (const void *)cgl_if_abSend_c) ? cgl_w_abSend_c : NULL;'
        'CG_EXPORT int abSend_c(const void *buf, long count, void *comm) __attribute__((ifunc("cgl_if_abSend_c")));'
    )
    for w in "${want[@]}"; do
        grep -qF -- "$w" "$out" || fail "output lacks: $w"
    done
    ! grep -q "CGL_abVariadic\|CGL_abPair" "$out" || fail "a variadic function wrapped"
    "$CC" -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -I "$INCLUDE" -I . "$out" || fail "the layer does not compile"
    # A wrapper of abi_main.h's int count would cut abi_narrow.h's long; a struct by value has no
    # neutral type; the headers are looked for on --abi-dir alone.
    expect_reject "abi_narrow.h: abSend's parameter 2 (count) is 8 bytes in abi_narrow.h but 4 in abi_main.h" \
        abi_narrow.ini -I . --abi-dir abi
    expect_reject "abi_struct.h: abPair passes a struct or union by value" abi_struct.ini -I . --abi-dir abi
    expect_reject "abi.ini:4: abi_headers = ...: give the folder that holds them with --abi-dir DIR" abi.ini -I .
    expect_reject "abi_std.h" abi.ini -I . --abi-dir .
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

cgtest_run "$1"
