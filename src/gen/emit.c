/* emit.c: writes a layer's C file: the site table with each site's default
 * policy, the result-code names, the layer descriptor and its constructor,
 * the wrapper table, and per entry point a frame, a thunk, its general and
 * short paths and the exported wrapper, each path one line naming a macro of
 * include/callguard/layer.h (which documents the shape); and the list of
 * pass-through names that passthrough.S assembles trampolines for. */
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
        if (!def && !undef) continue;
        const char *name = f[2] ? f + 2 : (i + 1 < p->cflags.n ? p->cflags.v[++i] : "");
        if (!*name) continue;
        const char *eq = strchr(name, '=');
        int len = eq ? (int)(eq - name) : (int)strlen(name);
        /* A function-like macro (NCCL's ncclGroupEnd(...)=ncclGroupEnd(void)): #ifndef takes its name alone. */
        const char *paren = memchr(name, '(', (size_t)len);
        int idlen = paren ? (int)(paren - name) : len;
        if (!any) fputs("/* From the policy's cflags: the header must read as it did for the generator. */\n", out);
        any = 1;
        if (undef)
            fprintf(out, "#undef %.*s\n", len, name);
        else
            fprintf(out, "#ifndef %.*s\n#define %.*s %s\n#endif\n", idlen, name, len, name, eq ? eq + 1 : "1");
    }
    if (any) fputc('\n', out);
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

/* `{A, B}` and the line's end: a states list's initializer. */
static void emit_states_list(FILE *out, const strlist *l)
{
    fputc('{', out);
    for (size_t i = 0; i < l->n; i++)
        fprintf(out, "%s%s", i ? ", " : "", l->v[i]);
    fputs("};\n", out);
}

/* ---- the timeline's arguments (layer.h, cg_args) ---------------------------- */

/* Does a traced call of f record its arguments? Unless its policy (or its base's) says trace_args = no,
 * when it has any argument or a result to show. */
static int traces_args(const policy *p, const gen_func *f)
{
    const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
    if (sp && sp->trace_args == 0) return 0;
    if (f->forward) return 0;
    for (size_t i = 0; i < f->nparams; i++)
        if (f->params[i].trace_kind) return 1;
    return f->ret_trace_kind != 0;
}

static void emit_ll(FILE *out, long long v)
{
    if (v == (-9223372036854775807LL - 1))
        fputs("(-9223372036854775807LL - 1)", out);
    else
        fprintf(out, "%lldLL", v);
}

/* The parameters of f a traced call records. */
static size_t traced_params(const gen_func *f)
{
    size_t n = 0;
    for (size_t i = 0; i < f->nparams; i++)
        n += f->params[i].trace_kind != 0;
    return n;
}

/* The value names the traced arguments use, and each traced site's table declared (defined after its frame). */
static void emit_trace_tables(FILE *out, const policy *p, const gen_api *api)
{
    char *used = calloc(api->nenums + 1, 1);
    int any = 0;
    for (size_t i = 0; i < api->nfuncs; i++) {
        const gen_func *f = &api->funcs[i];
        if (!traces_args(p, f)) continue;
        for (size_t k = 0; k < f->nparams; k++)
            if (f->params[k].trace_kind && f->params[k].enum_index >= 0) used[f->params[k].enum_index] = 1;
        if (f->ret_trace_kind && f->ret_enum >= 0) used[f->ret_enum] = 1;
    }
    for (size_t e = 0; e < api->nenums; e++) {
        if (!used[e]) continue;
        if (!any) fputs("/* The timeline's names of values (layer.h, cg_enum_name), by value. */\n", out);
        any = 1;
        fprintf(out, "static const cg_enum_name cgl_en_%zu[%zu] = { /* %s */\n", e, api->enums[e].n,
                api->enums[e].type);
        for (size_t k = 0; k < api->enums[e].n; k++) {
            fputs("    {", out);
            emit_ll(out, api->enums[e].v[k].value);
            fprintf(out, ", \"%s\"},\n", api->enums[e].v[k].name);
        }
        fputs("};\n", out);
    }
    free(used);
    int decl = 0;
    for (size_t i = 0; i < api->nfuncs; i++) {
        const gen_func *f = &api->funcs[i];
        if (!traces_args(p, f)) continue;
        if (!decl)
            fputs("/* What a traced call records (layer.h, cg_args), each defined after its frame: the table and\n"
                  " * its arguments in one aligned line (up to five), their names apart. */\n",
                  out);
        decl = 1;
        size_t n = traced_params(f);
        if (n)
            fprintf(out,
                    "static const struct __attribute__((aligned(64))) cgl_targs_%s {\n    cg_args a;\n"
                    "    cg_arg arg[%zu];\n} cgl_targs_%s;\n",
                    f->name, n, f->name);
        else
            fprintf(out, "static const cg_args cgl_targs_%s;\n", f->name);
    }
    if (any || decl) fputc('\n', out);
}

/* The site's traced arguments: where each sits in its frame and how it is shown. */
static void emit_trace_args(FILE *out, const policy *p, const gen_func *f)
{
    if (!traces_args(p, f)) return;
    size_t n = traced_params(f);
    if (n) {
        fprintf(out, "static const cg_arg_name cgl_tn_%s[%zu] = {", f->name, n);
        for (size_t i = 0, k = 0; i < f->nparams; i++) {
            const gen_param *pa = &f->params[i];
            if (!pa->trace_kind) continue;
            fprintf(out, "%s{\"%s\", ", k++ ? ", " : "", pa->name);
            if (pa->enum_index >= 0 && (pa->trace_kind == 4 || pa->out_kind == 4))
                fprintf(out, "cgl_en_%d}", pa->enum_index);
            else
                fputs("NULL}", out);
        }
        fputs("};\n", out);
        fprintf(out, "static const struct cgl_targs_%s cgl_targs_%s = {{%zu, ", f->name, f->name, n);
    } else {
        fprintf(out, "static const cg_args cgl_targs_%s = {0, ", f->name);
    }
    if (f->ret_trace_kind)
        fprintf(out, "offsetof(struct cgl_fr_%s, cgl_ret), sizeof(((struct cgl_fr_%s *)0)->cgl_ret), %d, ", f->name,
                f->name, f->ret_trace_kind);
    else
        fputs("0, 0, 0, ", out);
    if (!n) {
        fputs("NULL, NULL};\n", out);
        return;
    }
    fprintf(out, "cgl_targs_%s.arg, cgl_tn_%s}, {\n", f->name, f->name);
    for (size_t i = 0; i < f->nparams; i++) {
        const gen_param *pa = &f->params[i];
        if (!pa->trace_kind) continue;
        fprintf(out, "    {offsetof(struct cgl_fr_%s, %s), sizeof(((struct cgl_fr_%s *)0)->%s), %d, %d, %d, ", f->name,
                pa->name, f->name, pa->name, pa->trace_kind, pa->out_kind, pa->out_size);
        if (pa->enum_index >= 0 && (pa->trace_kind == 4 || pa->out_kind == 4))
            fprintf(out, "sizeof cgl_en_%d / sizeof cgl_en_%d[0]},\n", pa->enum_index, pa->enum_index);
        else
            fputs("0},\n", out);
    }
    fputs("}};\n", out);
}

static void emit_sites(FILE *out, const policy *p, const gen_api *api)
{
    fputs("enum {\n", out);
    for (size_t i = 0; i < api->nfuncs; i++)
        fprintf(out, "    CGL_%s,\n", api->funcs[i].name);
    fputs("    CGL_NSITES\n};\n\nstatic cg_site cgl_sites[CGL_NSITES];\n\n", out);

    /* The states lists: [api]'s once, each section's own. */
    int api_states = 0;
    for (size_t i = 0; i < api->nfuncs; i++)
        api_states |= api->funcs[i].states == &p->states;
    if (api_states) {
        fputs("/* Result codes that report a state, not a failure ([api] states). */\nstatic const int cgl_states[] = ",
              out);
        emit_states_list(out, &p->states);
    }
    for (size_t i = 0; i < api->nfuncs; i++) {
        const gen_func *f = &api->funcs[i];
        if (!f->states || f->states == &p->states || f->base) continue;
        fprintf(out, "static const int cgl_states_%s[] = ", f->name);
        emit_states_list(out, f->states);
    }
    if (api_states || p->nsites) fputc('\n', out);

    int any_rules = 0;
    for (size_t i = 0; i < api->nfuncs; i++)
        if (api->funcs[i].nrules) {
            if (!any_rules)
                fputs("/* Thread rules (layer.h, cg_rule), each defined after its entry point's frame. */\n", out);
            any_rules = 1;
            fprintf(out, "static const cg_rule cgl_rules_%s[%zu];\n", api->funcs[i].name, api->funcs[i].nrules);
        }
    if (any_rules) fputc('\n', out);
    emit_trace_tables(out, p, api);
    fputs("/* {name, base, transition (0 always, 1 blocking, 2 never), blocking, scope (0 process, 1 handle),\n"
          " *  reason, serialize, states, nstates, thread rules, their count[, collective][, uncounted]}; a variant "
          "(base != NULL)\n"
          " *  carries its base's policy (its rules are its own frame's). */\n",
          out);
    fputs("static const cg_site_default cgl_defaults[CGL_NSITES] = {\n", out);
    for (size_t i = 0; i < api->nfuncs; i++) {
        const gen_func *f = &api->funcs[i];
        const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
        int transition = sp && sp->transition != POLICY_UNSET ? sp->transition : p->default_transition;
        fprintf(out, "    [CGL_%s] = {", f->name);
        literal(out, f->name);
        fputs(", ", out);
        literal(out, f->base);
        fprintf(out, ", %d, %d, %d, ", transition, sp && sp->blocking == 1,
                sp && sp->scope != POLICY_UNSET ? sp->scope : SCOPE_PROCESS);
        literal(out, sp ? sp->reason : NULL);
        fputs(", ", out);
        literal(out, sp ? sp->serialize : NULL);
        if (!f->states)
            fputs(", NULL, 0", out);
        else if (f->states == &p->states)
            fprintf(out, ", cgl_states, %zu", f->states->n);
        else
            fprintf(out, ", cgl_states_%s, %zu", f->base ? f->base : f->name, f->states->n);
        if (f->nrules)
            fprintf(out, ", cgl_rules_%s, %zu", f->name, f->nrules);
        else
            fputs(", NULL, 0", out);
        if (sp && sp->collective) fputs(", .collective = 1", out);
        if (sp && sp->uncounted != POLICY_UNSET ? sp->uncounted : p->default_uncounted) fputs(", .uncounted = 1", out);
        if (traces_args(p, f)) fprintf(out, ", .args = &cgl_targs_%s%s", f->name, traced_params(f) ? ".a" : "");
        fputs("},\n", out);
    }
    fputs("};\n\n", out);
}

/* A layer whose wait_args give a word (`comm:mpi_comm`) shows those values with its own
 * cgl_wait_format (layer.h, cg_wait_format), written in its hand-written file. */
static void emit_wait_format_decl(FILE *out, const gen_api *api)
{
    for (size_t i = 0; i < api->nfuncs; i++)
        for (size_t w = 0; w < api->funcs[i].nwaits; w++)
            if (api->funcs[i].waits[w].as) {
                fputs(
                    "/* Shows the values of wait_args with a word (layer.h, cg_wait_format): in the hand-written "
                    "file. */\nstatic int cgl_wait_format(const char *as, uint64_t value, char *out, size_t size);\n\n",
                    out);
                return;
            }
}

static void emit_result_name(FILE *out, const policy *p, const gen_api *api)
{
    if (!p->result) return;
    fprintf(out, "/* Names a %s; codes that repeat a value are left to their first name. */\n", p->result);
    fputs("static const char *cgl_result_name(long r)\n{\n    switch (r) {\n", out);
    for (size_t i = 0; i < api->ncodes; i++)
        fprintf(out, "    case %s: return \"%s\";\n", api->codes[i].name, api->codes[i].name);
    fputs("    default: return NULL;\n    }\n}\n\n", out);
    fputs("/* The code of a result name, aliases included (a CALLGUARD_POLICY file's states). */\n"
          "static int cgl_result_code(const char *name, long *code)\n{\n"
          "    static const struct { const char *name; long code; } names[] = {\n",
          out);
    for (size_t i = 0; i < api->nnames; i++)
        fprintf(out, "        {\"%s\", (long)(%s)},\n", api->names[i].name, api->names[i].name);
    fputs("    };\n"
          "    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)\n"
          "        if (__builtin_strcmp(names[i].name, name) == 0) {\n"
          "            *code = names[i].code;\n"
          "            return 1;\n"
          "        }\n"
          "    return 0;\n}\n\n",
          out);
}

/* The one rule by which a result becomes the code the runtime is given, used by the thunks
 * (cg_call) and the short paths (cg_leave_code) alike; and the cold leave of a counted call
 * (layer.h, CG_LEFT_FUNCTION) that every wrapper returning the result type shares. */
static void emit_thunk_code(FILE *out, const policy *p)
{
    if (!p->result) return;
    fprintf(out,
            "/* The code a thunk returns for a result, and the short paths give cg_leave_code (layer.h,\n"
            " * cg_thunk): 0 for success, one compare; another code as itself; CG_RESULT_ZERO for one whose\n"
            " * int value is 0. */\n"
            "static inline __attribute__((always_inline)) int cgl_thunk_code(%s r)\n{\n"
            "    if (CG_LIKELY(r == %s)) return 0;\n"
            "    return (int)r ? (int)r : CG_RESULT_ZERO;\n}\n\n",
            p->result, p->success);
    fprintf(out,
            "/* Where a counted call that returns a %s ends when the wrapper cannot finish it (layer.h). */\n"
            "CG_LEFT_FUNCTION(cgl_left, %s);\n\n",
            p->result, p->result);
}

/* Each guarded name's wrapper, for a hand-written resolver (cg_wrapper_by_address). */
static void emit_wrappers(FILE *out, const gen_api *api)
{
    fputs("/* The wrapper of each site, exported under the site's name (hand-written where wrapper = hand),\n"
          " * as the process's symbol lookup finds that name: an interposer earlier in the lookup order\n"
          " * wins, as it does for a direct call. */\n"
          "static void *const cgl_wrappers[CGL_NSITES] = {\n",
          out);
    for (size_t i = 0; i < api->nfuncs; i++)
        fprintf(out, "    [CGL_%s] = (void *)%s%s,\n", api->funcs[i].name, api->funcs[i].origin ? "cgl_w_" : "",
                api->funcs[i].name);
    fputs("};\n\n", out);
}

static void emit_layer_struct(FILE *out, const policy *p, const gen_api *api)
{
    char *upper = xstrdup(p->name);
    for (char *c = upper; *c; c++)
        *c = (char)toupper((unsigned char)*c);
    fputs("static cg_layer cgl_layer = {\n", out);
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
        fprintf(out,
                ",\n    .missing_result = (long)(%s),\n    .result_name = cgl_result_name,\n"
                "    .result_code = cgl_result_code,\n",
                p->missing);
    else
        fputs(",\n    .missing_result = 0,\n    .result_name = NULL,\n    .result_code = NULL,\n", out);
    fputs("    .nsites = CGL_NSITES,\n    .sites = cgl_sites,\n    .defaults = cgl_defaults,\n"
          "    .wrappers = cgl_wrappers,\n",
          out);
    if (api->passthrough.n)
        fputs("    .passthrough = cgl_passthrough,\n    .passthrough_missing = cgl_missing,\n", out);
    else
        fputs("    .passthrough = NULL,\n    .passthrough_missing = NULL,\n", out);
    fputs("    .dlsym_next = cgl_dlsym_next,\n", out);
    if (p->real_prefix) fprintf(out, "    .real_prefix = \"%s\",\n", p->real_prefix);
    if (p->search) fputs("    .search = CG_SEARCH_LD_LIBRARY_PATH,\n", out);
    fputs("};\n\n", out);
    fputs("__attribute__((constructor)) static void cgl_register(void) { cg_layer_register(&cgl_layer); }\n", out);
    free(upper);
}

/* dlsym(RTLD_NEXT) answers "next after the object that calls it": the
 * layer asks from its own object, not from libcallguard. */
static void emit_dlsym_next(FILE *out)
{
    fputs("/* dlsym(RTLD_NEXT) from this object: \"next\" means after the layer, not after libcallguard.\n"
          " * dlsym takes \"this object\" from its return address: the empty asm keeps the call from\n"
          " * becoming a tail call, whose return address would be in libcallguard. */\n"
          "static void *cgl_dlsym_next(const char *name)\n{\n"
          "    void *p = dlsym(RTLD_NEXT, name);\n"
          "    __asm__ __volatile__(\"\" : \"+r\"(p));\n"
          "    return p;\n}\n\n",
          out);
}

/* The pass-through names come from the list file that passthrough.S
 * includes too (emit_passthrough_list), each time with its own CGL_PT. */
static void emit_passthrough_names(FILE *out, const policy *p, const gen_api *api)
{
    if (!api->passthrough.n) return;
    fprintf(out,
            "/* Exported by the vendor library but not declared by the header: forwarded unguarded by the\n"
            " * trampolines of passthrough.S, assembled with the same list (layer.h). */\n"
            "static const char *const cgl_passthrough[] = {\n"
            "#define CGL_PT(i, name) #name,\n"
            "#include \"cg_%s_passthrough.h\"\n"
            "#undef CGL_PT\n"
            "    NULL,\n};\n\n",
            p->name);
    fputs("/* What a pass-through name runs when the real library is missing: its prototype is unknown,\n"
          " * so all it can do is return the API's missing result. */\n",
          out);
    if (p->result)
        fprintf(out, "static long cgl_missing(void) { return (long)(%s); }\n\n", p->missing);
    else
        fputs("static long cgl_missing(void) { return 0; }\n\n", out);
}

static void emit_passthrough_resolve(FILE *out, const gen_api *api)
{
    if (!api->passthrough.n) return;
    fputs("\n/* Called by passthrough.S on the first call of pass-through name i: the real function, or\n"
          " * cgl_missing. Never called when the layer is built without passthrough.S. */\n"
          "__attribute__((used, visibility(\"hidden\"))) void *cgl_pt_resolve(unsigned i)\n"
          "{\n"
          "    return cg_resolve_passthrough(&cgl_layer, cgl_passthrough[i]);\n"
          "}\n",
          out);
}

/* `(a, b, c)` with `prefix` before each name: ARGS of layer.h's paths. */
static void emit_args(FILE *out, const gen_func *f, const char *prefix)
{
    fputc('(', out);
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "%s%s%s", i ? ", " : "", prefix, f->params[i].name);
    fputc(')', out);
}

/* `return PREFIXNAME(a, b, c);` (a void function: no `return`) and the closing brace: a tail call. */
static void emit_tail_call(FILE *out, const gen_func *f, const char *prefix)
{
    fprintf(out, "    %s%s%s", f->ret_void ? "" : "return ", prefix, f->name);
    emit_args(out, f, "");
    fputs(";\n}\n", out);
}

/* One of layer.h's paths (CG_COUNTED_CALL, ...): `    MACRO(NAME, (a, b), CODE, LEFT);`, the
 * _VOID form for a void function. CODE by the layer's one rule (emit_thunk_code), LEFT the cold
 * leave of the return type (emit_left); `what` says which the path takes. */
enum { PATH_NAME_ARGS, PATH_CODE, PATH_CODE_LEFT };
static void emit_path(FILE *out, const gen_func *f, const char *macro, int what)
{
    fprintf(out, "    %s%s(%s, ", macro, f->ret_void ? "_VOID" : "", f->name);
    emit_args(out, f, "");
    if (!f->ret_void && what >= PATH_CODE) fputs(f->ret_result ? ", cgl_thunk_code" : ", CG_NO_CODE", out);
    if (!f->ret_void && what == PATH_CODE_LEFT) {
        if (f->ret_result)
            fputs(", cgl_left", out);
        else
            fprintf(out, ", cgl_left_%s", f->name);
    }
    fputs(");\n", out);
}

/* The entry point's thread rules: where each handle sits in its frame. */
static void emit_rules(FILE *out, const gen_func *f)
{
    if (!f->nrules) return;
    static const char *const bits[] = {"CG_RULE_READ", "CG_RULE_WRITE", "CG_RULE_DESTROY", "CG_RULE_SETS",
                                       "CG_RULE_LAUNCHES"};
    fprintf(out, "static const cg_rule cgl_rules_%s[%zu] = {\n", f->name, f->nrules);
    for (size_t r = 0; r < f->nrules; r++) {
        const char *pn = f->params[f->rules[r].param].name;
        fprintf(out, "    {\"%s\", offsetof(struct cgl_fr_%s, %s), sizeof(((struct cgl_fr_%s *)0)->%s), ", pn, f->name,
                pn, f->name, pn);
        int first = 1;
        for (unsigned b = 0; b < sizeof bits / sizeof *bits; b++)
            if (f->rules[r].access & (1u << b)) {
                fprintf(out, "%s%s", first ? "" : " | ", bits[b]);
                first = 0;
            }
        fputs("},\n", out);
    }
    fputs("};\n", out);
}

/* The comment that names the entry point's shape, its frame (every argument, then the return
 * value), its thread rules and its thunk (layer.h, CG_THUNK): the real call cg_call makes on
 * the general path. */
static void emit_frame(FILE *out, const policy *p, const gen_func *f)
{
    const char *n = f->name;
    if (f->origin)
        fprintf(out, "\n/* %s: not in %s; from abi_headers' %s: ABI-neutral types */", n, p->header, f->origin);
    fprintf(out, "\n/* %s: %s; %s%s%s%s */\n", n,
            f->ret_void     ? "returns void"
            : f->ret_result ? "returns the result type: checked"
                            : "returns no result code: never an error",
            f->key_is_handle ? "keyed by its first parameter (a handle)" : "no handle key",
            f->base ? "; a variant of " : "", f->base ? f->base : "",
            f->hand ? "; its exported wrapper is hand-written" : "");
    fprintf(out, "struct cgl_fr_%s {\n", n);
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "    %s;\n", f->params[i].frame_decl);
    if (!f->ret_void) fprintf(out, "    %s;\n", f->ret_member);
    if (f->ret_void && f->nparams == 0) fputs("    char cgl_unused; /* C has no empty structs */\n", out);
    fputs("};\n", out);
    emit_rules(out, f);
    emit_trace_args(out, p, f);
    if (f->ret_void)
        fprintf(out, "CG_THUNK_VOID(%s, ", n);
    else
        fprintf(out, "CG_THUNK(%s, ", n);
    emit_args(out, f, "cgl_f->");
    fputs(f->ret_void ? ");\n" : f->ret_result ? ", cgl_thunk_code);\n" : ", CG_NO_CODE);\n", out);
}

/* The general path, out of line: its frame is not on the short paths' stack. */
static void emit_general(FILE *out, const policy *p, const gen_func *f)
{
    const char *n = f->name;
    fprintf(out, "static __attribute__((noinline)) %s\n{\n", f->general_head);
    /* Designated: the members left out (cgl_ret) start at zero without -Wextra's complaint.
     * A result code starts as the missing-library result: what the wrapper returns when
     * cg_call() finds no real function, so it returns cgl_ret without testing cg_call's. */
    fprintf(out, "    struct cgl_fr_%s cgl_fr = {", n);
    for (size_t i = 0; i < f->nparams; i++)
        fprintf(out, "%s.%s = %s", i ? ", " : "", f->params[i].name, f->params[i].name);
    if (f->ret_result)
        fprintf(out, "%s.cgl_ret = (%s)(%s)", f->nparams ? ", " : "", f->ret, p->missing);
    else if (!f->nparams)
        fputs("0", out);
    fputs("};\n", out);
    char *key = f->key_is_handle ? xasprintf("(const void *)%s", f->params[0].name) : xstrdup("NULL");
    char *call = xasprintf("cg_call(&cgl_sites[CGL_%s], %s, cgl_th_%s, &cgl_fr)", n, key, n);
    /* A handle or pointer return: NULL, and the missing result through the errcode parameter if it has one. */
    const char *ec = NULL;
    for (size_t i = 0; f->ret_scalar && !f->ret_result && p->errcode && i < f->nparams; i++)
        if (strcmp(f->params[i].name, p->errcode) == 0) ec = p->errcode;
    if (f->ret_void)
        fprintf(out, "    (void)%s;\n}\n", call);
    else if (ec)
        fprintf(out,
                "    if (%s != 0) {\n"
                "        if (%s) *%s = (%s)(%s);\n        return (%s)0;\n    }\n"
                "    return cgl_fr.cgl_ret;\n}\n",
                call, ec, ec, p->result, p->missing, f->ret);
    else /* cgl_ret is the missing-library value: the missing result for a result code, else zero (a NULL, a struct) */
        fprintf(out, "    (void)%s;\n    return cgl_fr.cgl_ret;\n}\n", call);
    free(call);
    free(key);
}

/* The cold leave of a counted call (layer.h, CG_LEFT_FUNCTION) for a function that returns
 * another type than the result type, whose one is the layer's cgl_left (emit_thunk_code). */
static void emit_left(FILE *out, const gen_func *f)
{
    if (f->ret_void || f->ret_result) return;
    /* The type by its frame's member: a function pointer's is no prefix. */
    fprintf(out, "CG_LEFT_FUNCTION(cgl_left_%s, __typeof__(((struct cgl_fr_%s *)0)->cgl_ret));\n", f->name, f->name);
}

/* The arguments a blocking call waits on (wait_args; layer.h, cg_wait_args): the site's table of
 * their names, and the stores of their values before the short path's first path (CG_WAIT_ARGS),
 * each as uint64_t by its C type. */
static void emit_wait_table(FILE *out, const gen_func *f)
{
    if (!f->nwaits) return;
    static const char *const base[] = {"", "CG_WAIT_INT", "CG_WAIT_UINT", "CG_WAIT_HEX"};
    int any_as = 0;
    for (size_t i = 0; i < f->nwaits; i++)
        any_as |= f->waits[i].as != NULL;
    fprintf(out, "static const cg_wait_args cgl_wa_%s = {&cgl_sites[CGL_%s], %s, %zu, {", f->name, f->name,
            any_as ? "cgl_wait_format" : "NULL", f->nwaits);
    for (size_t i = 0; i < f->nwaits; i++) {
        const gen_param *pa = &f->params[f->waits[i].param];
        fprintf(out, "%s{\"%s\", ", i ? ", " : "", pa->name);
        literal(out, f->waits[i].as);
        fprintf(out, ", %s}", base[pa->wait_base]);
    }
    fputs("}};\n", out);
}

static void emit_wait_args(FILE *out, const gen_func *f)
{
    if (!f->nwaits) return;
    fprintf(out, "    CG_WAIT_ARGS(%s", f->name);
    for (size_t i = 0; i < f->nwaits; i++) {
        const gen_param *pa = &f->params[f->waits[i].param];
        const char *cast = pa->wait_base == WAIT_HEX   ? "(uint64_t)(uintptr_t)"
                           : pa->wait_base == WAIT_INT ? "(uint64_t)(int64_t)"
                                                       : "(uint64_t)";
        fprintf(out, ", %s%s", cast, pa->name);
    }
    fputs(");\n", out);
}

/* A call whose event carries its arguments (layer_args.h, CG_ARGS_CALL), before cg_enter is asked: the
 * words stored one by one in the table's order (the result, each argument, each output's value). Not for
 * a string, an output of a call with no result code (an errcode_ret says whether it succeeded), or past
 * the event's words: the general path makes those events from the table. */
static void emit_args_path(FILE *out, const policy *p, const gen_func *f)
{
    if (!traces_args(p, f)) return;
    size_t n = traced_params(f), outs = 0;
    for (size_t i = 0; i < f->nparams; i++) {
        int k = f->params[i].trace_kind;
        if (k == 5 || (k == 6 && f->ret_trace_kind != 7)) return; /* CG_ARG_STR; an OUT read out of line */
        outs += k == 6;
    }
    size_t words = (f->ret_trace_kind != 0) + n + outs;
    if (n > 16 || words > 32 || words == 0) return; /* CGI_TRACE_WORDS_MAX: its half for the arguments */
    fprintf(out, "    CG_ARGS_CALL%s(%s, ", f->ret_void ? "_VOID" : "", f->name);
    emit_args(out, f, "");
    if (!f->ret_void) fputs(f->ret_result ? ", cgl_thunk_code" : ", CG_NO_CODE", out);
    fprintf(out, ", %zu", words);
    size_t w = 0, k = 0;
    if (f->ret_trace_kind) fprintf(out, ", CG_ARG_WORD(%zu, cgl_ret)", w++);
    for (size_t i = 0; i < f->nparams; i++)
        if (f->params[i].trace_kind) fprintf(out, "%sCG_ARG_WORD(%zu, %s)", w ? "; " : ", ", w, f->params[i].name), w++;
    for (size_t i = 0; i < f->nparams; i++)
        if (f->params[i].trace_kind == 6) fprintf(out, "; CG_OUT_WORD(%zu, %zu, %s)", w++, k++, f->params[i].name);
    fputs(");\n", out);
}

/* The short paths (layer.h, cg_enter), after the wrapper's fast path and out of line: the
 * registers it keeps across cg_enter are saved here, not on the fast path. First a blocking
 * site's counted call, made here (cg_site_peaks, its threads inside counted), only where the
 * policy marks the site blocking (cg_enter does the same for a site made blocking at run time:
 * the layer stays small); then the real call between cg_enter and cg_leave; else the general
 * path, a tail call. */
static void emit_short(FILE *out, const policy *p, const gen_func *f)
{
    emit_wait_table(out, f);
    fprintf(out, "static __attribute__((noinline)) %s\n{\n", f->slow_head);
    const site_policy *sp = policy_find_site(p, f->base ? f->base : f->name);
    emit_wait_args(out, f);
    if (sp && sp->blocking == 1) emit_path(out, f, "CG_BLOCKING_CALL", PATH_CODE_LEFT);
    emit_args_path(out, p, f);
    emit_path(out, f, "CG_SHORT_CALL", PATH_CODE);
    emit_tail_call(out, f, "cgl_gp_");
}

/* The wrapper: the plain counted call made here (issue 24); else the fast path; else the rest
 * (cgl_sl_NAME, a tail call). The counted call first: a site with a record to count into has
 * no fast path. A hand-written wrapper calls this body as cgl_guarded_NAME. */
static void emit_wrapper(FILE *out, const gen_func *f)
{
    if (f->hand)
        fprintf(out, "static __attribute__((unused)) %s\n{\n", f->guarded_head);
    else if (f->origin)
        fprintf(out, "static %s\n{\n", f->wrapper_head);
    else
        fprintf(out, "CG_EXPORT %s\n{\n", f->decl_head);
    emit_path(out, f, "CG_COUNTED_CALL", PATH_CODE_LEFT);
    emit_path(out, f, "CG_DIRECT_CALL", PATH_NAME_ARGS);
    emit_tail_call(out, f, "cgl_sl_");
}

static void emit_func(FILE *out, const policy *p, const gen_func *f)
{
    emit_frame(out, p, f);
    emit_general(out, p, f);
    emit_left(out, f);
    emit_short(out, p, f);
    emit_wrapper(out, f);
}

/* The exports of the functions only abi_headers declare: each an IFUNC (above). */
static void emit_abi_exports(FILE *out, const policy *p, const gen_api *api)
{
    int any = 0;
    for (size_t i = 0; i < api->nfuncs; i++) {
        const gen_func *f = &api->funcs[i];
        if (!f->origin) continue;
        if (!any)
            fputs("\n/* The IFUNC exports of the functions only abi_headers declare: the wrapper where a loaded\n"
                  " * library defines the real function (layer.h, cg_loaded_defines), else NULL. A library loaded\n"
                  " * with the program and bound at once (-z now) that refers to one (Intel MPI's libmpi.so.12 to\n"
                  " * its MPI_File_read_c) is relocated before this one, preloaded, is: glibc calls the resolver\n"
                  " * then all the same, whose calls would go through a table not yet filled in (a SIGSEGV). So\n"
                  " * the resolver first reads cgl_if_self, which holds its own address only once this library is\n"
                  " * relocated (static: addressed relative to the code), and before that answers the wrapper: the\n"
                  " * library that refers to the function defines it. Not instrumented by a sanitizer, whose\n"
                  " * runtime is not ready then either. */\n"
                  "#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)\n"
                  "#define CGL_IF_UNINSTRUMENTED __attribute__((no_sanitize_thread, no_sanitize_address, "
                  "no_sanitize_undefined))\n"
                  "#else\n"
                  "#define CGL_IF_UNINSTRUMENTED\n"
                  "#endif\n"
                  "static void *volatile cgl_if_self = (void *)&cgl_if_self;\n",
                  out);
        any = 1;
        fprintf(out,
                "static CGL_IF_UNINSTRUMENTED __typeof__(cgl_w_%s) *cgl_if_%s(void)\n{\n"
                "    if (cgl_if_self != (void *)&cgl_if_self) return cgl_w_%s;\n"
                "    return cg_loaded_defines(\"%s%s\", (const void *)cgl_if_%s) ? cgl_w_%s : NULL;\n}\n"
                "CG_EXPORT %s __attribute__((ifunc(\"cgl_if_%s\")));\n",
                f->name, f->name, f->name, p->real_prefix ? p->real_prefix : "", f->name, f->name, f->name,
                f->decl_head, f->name);
    }
}

static void emit_hand_include(FILE *out, const policy *p, const gen_api *api)
{
    int any = 0;
    for (size_t i = 0; i < api->nfuncs; i++)
        any |= api->funcs[i].hand && !api->funcs[i].base;
    if (!any) return;
    fputs("\n/* The hand-written wrappers (wrapper = hand:", out);
    for (size_t i = 0; i < api->nfuncs; i++)
        if (api->funcs[i].hand) fprintf(out, " %s", api->funcs[i].name);
    fprintf(out,
            "), in a file beside this one or on the\n"
            " * include path; they see everything above (layer.h, \"Hand-written wrappers\").%s */\n"
            "#include \"cg_%s_hand.c\"\n",
            p->abi_headers.n
                ? " One of a\n * function only abi_headers declare is static, named cgl_w_NAME (exported below)."
                : "",
            p->name);
}

int emit_layer(FILE *out, const policy *p, const gen_api *api, const char *command)
{
    fprintf(out, "/* Generated by callguard-gen, do not edit: %s\n * from %s", command, p->header);
    for (size_t i = 0; i < p->headers.n; i++)
        fprintf(out, ", %s", p->headers.v[i]);
    for (size_t i = 0; i < p->abi_headers.n; i++)
        fprintf(out, "%s%s", i ? ", " : " and the other ABIs' ", p->abi_headers.v[i]);
    fputs(" */\n#define _GNU_SOURCE /* RTLD_NEXT */\n", out);
    emit_defines(out, p);
    emit_includes(out, p);
    fputs("/* Each wrapper has the header's exact prototype. Calling-convention macros are copied from the\n"
          " * header where they stand right before the name (they expand to nothing on Linux); attributes\n"
          " * (deprecation, visibility) are not copied. Names of this file's own are cgl_ (layer.h). */\n",
          out);
    if (p->abi_headers.n) {
        fputs("/* The functions only the API's other ABIs declare (abi_headers) have ABI-neutral types: each\n"
              " * handle and each pointer to a non-builtin type is void *, each integer its C type, so every\n"
              " * argument is forwarded bit for bit to the process's library, whichever ABI it has. Each is\n"
              " * exported as an IFUNC whose resolver (at the end) answers its wrapper cgl_w_NAME only where a\n"
              " * loaded library defines the real function, and NULL elsewhere, as plainly: a program's weak\n"
              " * reference to it (mpi4py's, to choose MPI_Send_c or MPI_Send) stays NULL on a library\n"
              " * without it. */\n",
              out);
        for (size_t i = 0; i < api->nfuncs; i++) {
            const gen_func *f = &api->funcs[i];
            for (size_t j = 0; f->origin && j < api->fn_macros.n; j++)
                if (strcmp(api->fn_macros.v[j], f->name) == 0)
                    fprintf(out, "#undef %s /* a macro in %s; a function in %s */\n", f->name, p->header, f->origin);
            if (f->origin) fprintf(out, "CG_EXPORT %s;\nstatic %s;\n", f->decl_head, f->wrapper_head);
        }
    }
    fputc('\n', out);
    emit_sites(out, p, api);
    emit_wait_format_decl(out, api);
    emit_result_name(out, p, api);
    emit_thunk_code(out, p);
    emit_dlsym_next(out);
    emit_passthrough_names(out, p, api);
    emit_wrappers(out, api);
    emit_layer_struct(out, p, api);
    emit_passthrough_resolve(out, api);
    for (size_t i = 0; i < api->nfuncs; i++)
        emit_func(out, p, &api->funcs[i]);
    emit_hand_include(out, p, api);
    emit_abi_exports(out, p, api);
    fflush(out);
    return ferror(out) ? 1 : 0;
}

int emit_passthrough_list(FILE *out, const policy *p, const gen_api *api, const char *command)
{
    fprintf(out,
            "/* Generated by callguard-gen, do not edit: %s\n"
            " * The %s layer's pass-through names: exported by %s, not declared by the headers (or\n"
            " * declared, with wrapper = forward), forwarded unguarded. Included by cg_%s.c (their names)\n"
            " * and by passthrough.S (their trampolines), each time with its own CGL_PT(index, name);\n"
            " * no include guard. */\n"
            "#define CGL_PT_COUNT %zu\n",
            command, p->name, p->library, p->name, api->passthrough.n);
    for (size_t i = 0; i < api->passthrough.n; i++)
        fprintf(out, "CGL_PT(%zu, %s)\n", i, api->passthrough.v[i]);
    fflush(out);
    return ferror(out) ? 1 : 0;
}
