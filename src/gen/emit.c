/* emit.c: writes a layer's C file: the site table with each site's default
 * policy, the result-code names, the layer descriptor and its constructor,
 * and per entry point a frame, a thunk and the exported wrapper. The shape
 * is documented in include/callguard/layer.h. */
#include "gen.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* A C string literal of `s`, or NULL. Policy text is free-form: escape
 * quotes, backslashes, `?` (trigraphs) and anything not printable ASCII. */
static void literal(FILE *out, const char *s)
{
    if (!s) {
        fputs("NULL", out);
        return;
    }
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\' || *c == '?')
            fprintf(out, "\\%c", *c);
        else if (isprint(*c) && *c < 0x80)
            fputc(*c, out);
        else
            fprintf(out, "\\%03o", *c);
    }
    fputc('"', out);
}

static void emit_defines(FILE *out, const policy *p)
{
    /* The header was read with the policy's -D/-U flags; the layer must
     * see the same declarations without the build having to repeat them. */
    int any = 0;
    for (size_t i = 0; i < p->cflags.n; i++) {
        const char *f = p->cflags.v[i];
        int def = strncmp(f, "-D", 2) == 0, undef = strncmp(f, "-U", 2) == 0;
        if (!def && !undef)
            continue;
        const char *name = f[2] ? f + 2 : (i + 1 < p->cflags.n ? p->cflags.v[++i] : "");
        if (!*name)
            continue;
        const char *eq = strchr(name, '=');
        int len = eq ? (int)(eq - name) : (int)strlen(name);
        if (!any)
            fputs("/* From the policy's cflags: the header must read as it did for the generator. */\n", out);
        any = 1;
        if (undef)
            fprintf(out, "#undef %.*s\n", len, name);
        else
            fprintf(out, "#ifndef %.*s\n#define %.*s %s\n#endif\n", len, name, len, name, eq ? eq + 1 : "1");
    }
    if (any)
        fputc('\n', out);
}

static void emit_includes(FILE *out, const policy *p)
{
    fprintf(out, "#include <%s>\n", p->header);
    const char *slash = strrchr(p->header, '/');
    for (size_t i = 0; i < p->headers.n; i++) {
        if (slash && !strchr(p->headers.v[i], '/'))
            fprintf(out, "#include <%.*s/%s>\n", (int)(slash - p->header), p->header, p->headers.v[i]);
        else
            fprintf(out, "#include <%s>\n", p->headers.v[i]);
    }
    fputs("\n#include <callguard/layer.h>\n#include <dlfcn.h>\n#include <stddef.h>\n\n", out);
}

static void emit_sites(FILE *out, const policy *p, const gen_api *api)
{
    fputs("enum {\n", out);
    for (size_t i = 0; i < api->nfuncs; i++)
        fprintf(out, "    CG_%s,\n", api->funcs[i].name);
    fputs("    CG_NSITES\n};\n\nstatic cg_site cg_sites[CG_NSITES];\n\n", out);

    fputs("/* {name, base, transition (0 always, 1 blocking, 2 never), blocking, scope (0 process, 1 handle),\n"
          " *  reason, serialize}; a variant (base != NULL) carries its base's policy. */\n",
          out);
    fputs("static const cg_site_default cg_defaults[CG_NSITES] = {\n", out);
    for (size_t i = 0; i < api->nfuncs; i++) {
        const char *name = api->funcs[i].name;
        const site_policy *sp = policy_find_site(p, name);
        const char *base = sp ? sp->variant_of : NULL;
        if (base)
            sp = policy_find_site(p, base);
        int transition = sp && sp->transition != POLICY_UNSET ? sp->transition : p->default_transition;
        fprintf(out, "    [CG_%s] = {", name);
        literal(out, name);
        fputs(", ", out);
        literal(out, base);
        fprintf(out, ", %d, %d, %d, ", transition, sp && sp->blocking == 1,
                sp && sp->scope != POLICY_UNSET ? sp->scope : SCOPE_PROCESS);
        literal(out, sp ? sp->reason : NULL);
        fputs(", ", out);
        literal(out, sp ? sp->serialize : NULL);
        fputs("},\n", out);
    }
    fputs("};\n\n", out);
}

static void emit_result_name(FILE *out, const policy *p, const gen_api *api)
{
    if (!p->result)
        return;
    fprintf(out, "/* Names a %s; codes that repeat a value are left to their first name. */\n", p->result);
    fputs("static const char *cg_result_name(long r)\n{\n    switch (r) {\n", out);
    for (size_t i = 0; i < api->ncodes; i++)
        fprintf(out, "    case %s: return \"%s\";\n", api->codes[i].name, api->codes[i].name);
    fputs("    default: return NULL;\n    }\n}\n\n", out);
}

static void emit_layer_struct(FILE *out, const policy *p)
{
    char *upper = xstrdup(p->name);
    for (char *c = upper; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    fprintf(out, "static cg_layer cg_layer_%s = {\n", p->name);
    fputs("    .abi = CG_LAYER_ABI,\n", out);
    fprintf(out, "    .api = \"%s\",\n", p->name);
    fputs("    .prefixes = \"", out);
    for (size_t i = 0; i < p->prefixes.n; i++)
        fprintf(out, "%s%s", i ? "," : "", p->prefixes.v[i]);
    fputs("\",\n    .soname = ", out);
    literal(out, p->library);
    fprintf(out, ",\n    .library_env = \"CALLGUARD_%s_LIBRARY\",\n", upper);
    fprintf(out, "#ifdef CG_LIBRARY_PATH_%s\n    .library_path = CG_LIBRARY_PATH_%s,\n#else\n", upper, upper);
    fputs("    .library_path = NULL,\n#endif\n    .header = ", out);
    literal(out, p->header);
    if (p->result)
        fprintf(out, ",\n    .missing_result = (long)(%s),\n    .result_name = cg_result_name,\n", p->missing);
    else
        fputs(",\n    .missing_result = 0,\n    .result_name = NULL,\n", out);
    fputs("    .nsites = CG_NSITES,\n    .sites = cg_sites,\n    .defaults = cg_defaults,\n", out);
    fprintf(out, "    .passthrough = %s,\n    .dlsym_next = cg_dlsym_next,\n};\n\n",
            p->passthrough.n ? "cg_passthrough" : "NULL");
    fprintf(out, "__attribute__((constructor)) static void cg_register(void) { cg_layer_register(&cg_layer_%s); }\n",
            p->name);
    free(upper);
}

/* dlsym(RTLD_NEXT) answers "next after the object that calls it": the
 * layer asks from its own object, not from libcallguard. */
static void emit_dlsym_next(FILE *out)
{
    fputs("/* dlsym(RTLD_NEXT) from this object: \"next\" means after the layer, not after libcallguard.\n"
          " * dlsym takes \"this object\" from its return address: the empty asm keeps the call from\n"
          " * becoming a tail call, whose return address would be in libcallguard. */\n"
          "static void *cg_dlsym_next(const char *name)\n{\n"
          "    void *p = dlsym(RTLD_NEXT, name);\n"
          "    __asm__ __volatile__(\"\" : \"+r\"(p));\n"
          "    return p;\n}\n\n",
          out);
}

static void emit_passthrough_names(FILE *out, const policy *p)
{
    if (!p->passthrough.n)
        return;
    fputs("/* Exported by the vendor library but not declared by the header: forwarded unguarded. */\n"
          "static const char *const cg_passthrough[] = {\n",
          out);
    for (size_t i = 0; i < p->passthrough.n; i++)
        fprintf(out, "    \"%s\",\n", p->passthrough.v[i]);
    fputs("    NULL,\n};\n\n", out);
}

/* The pass-through names' code. Their prototypes are unknown, so each is a
 * jump through a slot, written in assembly. A slot starts at a lazy stub
 * that pushes the name's index and enters cg_pt_common, which saves every
 * argument register (rdi rsi rdx rcx r8 r9, rax for varargs, xmm0-7), asks
 * cg_pt_resolve for the real function (stored in the slot, never NULL), restores
 * the registers and jumps there, so the real function sees the original call. */
static void emit_passthrough_code(FILE *out, const policy *p)
{
    if (!p->passthrough.n)
        return;
    fprintf(out,
            "/* Called by cg_pt_common (below) on the first call of pass-through name i. */\n"
            "__attribute__((used, visibility(\"hidden\"))) void *cg_pt_resolve(unsigned i)\n"
            "{\n"
            "    return cg_resolve_passthrough(&cg_layer_%s, cg_passthrough[i]);\n"
            "}\n\n",
            p->name);
    fputs("#if !defined(__x86_64__)\n#error \"pass-through names need the x86-64 trampolines below\"\n#endif\n", out);
    fputs("/* name: jmp *slot; slot: lazy stub until resolved. Slots are 8-byte aligned stores: atomic on x86-64. */\n"
          "__asm__(\n"
          "    \".pushsection .data\\n\"\n"
          "    \".p2align 3\\n\"\n"
          "    \"cg_pt_slot:\\n\"\n",
          out);
    for (size_t i = 0; i < p->passthrough.n; i++)
        fprintf(out, "    \"    .quad cg_pt_lazy_%zu\\n\"\n", i);
    fputs("    \".popsection\\n\"\n    \".pushsection .text\\n\"\n", out);
    for (size_t i = 0; i < p->passthrough.n; i++) {
        const char *n = p->passthrough.v[i];
        fprintf(out,
                "    \".p2align 4\\n.globl %s\\n.type %s, @function\\n%s:\\n"
                "    jmp *cg_pt_slot+%zu(%%rip)\\n.size %s, .-%s\\n\"\n",
                n, n, n, 8 * i, n, n);
    }
    for (size_t i = 0; i < p->passthrough.n; i++)
        fprintf(out, "    \"cg_pt_lazy_%zu:\\n    pushq $%zu\\n    jmp cg_pt_common\\n\"\n", i, i);
    fputs("    /* entry: rsp = index, return address; 16-byte aligned after push rbp and the 184-byte save area */\n"
          "    \".p2align 4\\n.type cg_pt_common, @function\\ncg_pt_common:\\n\"\n"
          "    \"    pushq %rbp\\n    movq %rsp, %rbp\\n    subq $184, %rsp\\n\"\n"
          "    \"    movdqu %xmm0, 0(%rsp)\\n    movdqu %xmm1, 16(%rsp)\\n    movdqu %xmm2, 32(%rsp)\\n\"\n"
          "    \"    movdqu %xmm3, 48(%rsp)\\n    movdqu %xmm4, 64(%rsp)\\n    movdqu %xmm5, 80(%rsp)\\n\"\n"
          "    \"    movdqu %xmm6, 96(%rsp)\\n    movdqu %xmm7, 112(%rsp)\\n\"\n"
          "    \"    movq %rdi, 128(%rsp)\\n    movq %rsi, 136(%rsp)\\n    movq %rdx, 144(%rsp)\\n\"\n"
          "    \"    movq %rcx, 152(%rsp)\\n    movq %r8, 160(%rsp)\\n    movq %r9, 168(%rsp)\\n\"\n"
          "    \"    movq %rax, 176(%rsp)\\n\"\n"
          "    \"    movl 8(%rbp), %edi\\n    call cg_pt_resolve\\n\"\n"
          "    \"    movl 8(%rbp), %ecx\\n    leaq cg_pt_slot(%rip), %rdx\\n    movq %rax, (%rdx,%rcx,8)\\n\"\n"
          "    \"    movq %rax, %r11\\n\"\n"
          "    \"    movdqu 0(%rsp), %xmm0\\n    movdqu 16(%rsp), %xmm1\\n    movdqu 32(%rsp), %xmm2\\n\"\n"
          "    \"    movdqu 48(%rsp), %xmm3\\n    movdqu 64(%rsp), %xmm4\\n    movdqu 80(%rsp), %xmm5\\n\"\n"
          "    \"    movdqu 96(%rsp), %xmm6\\n    movdqu 112(%rsp), %xmm7\\n\"\n"
          "    \"    movq 128(%rsp), %rdi\\n    movq 136(%rsp), %rsi\\n    movq 144(%rsp), %rdx\\n\"\n"
          "    \"    movq 152(%rsp), %rcx\\n    movq 160(%rsp), %r8\\n    movq 168(%rsp), %r9\\n\"\n"
          "    \"    movq 176(%rsp), %rax\\n\"\n"
          "    \"    leave\\n    addq $8, %rsp\\n    jmp *%r11\\n.size cg_pt_common, .-cg_pt_common\\n\"\n"
          "    \".popsection\\n\");\n\n",
          out);
}

/* `a, b, c` with `prefix` before each name. */
static void emit_args(FILE *out, const gen_func *f, const char *prefix)
{
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "%s%s%s", i ? ", " : "", prefix, f->params[i].name);
}

static void emit_func(FILE *out, const policy *p, const gen_func *f)
{
    const char *n = f->name;
    fprintf(out, "\n/* %s: %s; %s */\n", n,
            f->ret_void     ? "returns void"
            : f->ret_result ? "returns the result type: checked"
                            : "returns no result code: never an error",
            f->key_is_handle ? "keyed by its first parameter (a handle)" : "no handle key");

    /* The frame: every argument, then the return value. */
    fprintf(out, "struct cg_fr_%s {\n", n);
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "    %s;\n", f->params[i].frame_decl);
    if (!f->ret_void)
        fprintf(out, "    %s;\n", f->ret_member);
    if (f->ret_void && f->nparams == 0)
        fputs("    char cg_unused; /* C has no empty structs */\n", out);
    fputs("};\n", out);

    /* The thunk: the real call, made by cg_call() on the slow path. */
    fprintf(out, "static int cg_th_%s(void *cg_frame)\n{\n", n);
    fprintf(out, "    struct cg_fr_%s *cg_f = cg_frame;\n", n);
    if (f->ret_void && f->nparams == 0)
        fputs("    (void)cg_f;\n", out);
    fprintf(out, "    %s((__typeof__(%s) *)atomic_load_explicit(&cg_sites[CG_%s].real, memory_order_relaxed))(",
            f->ret_void ? "" : "cg_f->cg_ret = ", n, n);
    emit_args(out, f, "cg_f->");
    fputs(");\n", out);
    if (f->ret_result)
        fprintf(out, "    return cg_f->cg_ret != %s;\n}\n", p->success);
    else
        fputs("    return 0;\n}\n", out);

    /* The wrapper: the fast path, else the frame through cg_call(). */
    fprintf(out, "CG_EXPORT %s\n{\n", f->decl_head);
    fprintf(out,
            "    __typeof__(%s) *cg_fn = (__typeof__(%s) *)atomic_load_explicit(&cg_sites[CG_%s].direct, "
            "memory_order_relaxed);\n",
            n, n, n);
    fprintf(out, "    if (CG_LIKELY(cg_fn != NULL)) %s", f->ret_void ? "{ cg_fn(" : "return cg_fn(");
    emit_args(out, f, "");
    fputs(f->ret_void ? "); return; }\n" : ");\n", out);
    /* Designated: the members left out (cg_ret) start at zero without -Wextra's complaint. */
    fprintf(out, "    struct cg_fr_%s cg_fr = {", n);
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "%s.%s = %s", i ? ", " : "", f->params[i].name, f->params[i].name);
    if (!f->nparams)
        fputs("0", out);
    fputs("};\n", out);
    char *key = f->key_is_handle ? xasprintf("(const void *)%s", f->params[0].name) : xstrdup("NULL");
    if (f->ret_void) {
        fprintf(out, "    (void)cg_call(&cg_sites[CG_%s], %s, cg_th_%s, &cg_fr);\n}\n", n, key, n);
    } else if (f->ret_result) {
        fprintf(out, "    if (cg_call(&cg_sites[CG_%s], %s, cg_th_%s, &cg_fr) != 0) return (%s)(%s);\n", n, key, n,
                f->ret, p->missing);
        fputs("    return cg_fr.cg_ret;\n}\n", out);
    } else if (f->ret_scalar) {
        /* A handle or pointer return: NULL, and the missing result through the errcode parameter if it has one. */
        const char *ec = NULL;
        for (size_t i = 0; p->errcode && i < f->nparams; i++)
            if (strcmp(f->params[i].name, p->errcode) == 0)
                ec = p->errcode;
        if (ec)
            fprintf(out,
                    "    if (cg_call(&cg_sites[CG_%s], %s, cg_th_%s, &cg_fr) != 0) {\n"
                    "        if (%s) *%s = (%s)(%s);\n        return (%s)0;\n    }\n",
                    n, key, n, ec, ec, p->result, p->missing, f->ret);
        else
            fprintf(out, "    if (cg_call(&cg_sites[CG_%s], %s, cg_th_%s, &cg_fr) != 0) return (%s)0;\n", n, key, n,
                    f->ret);
        fputs("    return cg_fr.cg_ret;\n}\n", out);
    } else {
        /* A struct return: the frame's zero-initialized `cg_ret` is the missing-library value. */
        fprintf(out, "    (void)cg_call(&cg_sites[CG_%s], %s, cg_th_%s, &cg_fr);\n    return cg_fr.cg_ret;\n}\n", n,
                key, n);
    }
    free(key);
}

int emit_layer(FILE *out, const policy *p, const gen_api *api, const char *command)
{
    fprintf(out, "/* Generated by callguard-gen, do not edit: %s\n * from %s", command, p->header);
    for (size_t i = 0; i < p->headers.n; i++)
        fprintf(out, ", %s", p->headers.v[i]);
    fputs(" */\n#define _GNU_SOURCE /* RTLD_NEXT */\n", out);
    emit_defines(out, p);
    emit_includes(out, p);
    fputs("/* Each wrapper has the header's exact prototype. Calling-convention macros are copied from the\n"
          " * header where they stand right before the name (they expand to nothing on Linux); attributes\n"
          " * (deprecation, visibility) are not copied. */\n\n",
          out);
    emit_sites(out, p, api);
    emit_result_name(out, p, api);
    emit_dlsym_next(out);
    emit_passthrough_names(out, p);
    emit_layer_struct(out, p);
    emit_passthrough_code(out, p);
    for (size_t i = 0; i < api->nfuncs; i++)
        emit_func(out, p, &api->funcs[i]);
    fflush(out);
    return ferror(out) ? 1 : 0;
}
