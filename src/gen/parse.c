/* parse.c: reads the API's header(s) with libclang, selects the entry points,
 * spells their prototypes as C text, collects the result codes, and has
 * check.c check the policy's entry point sections against what it found.
 *
 * Entry points are chosen by the file that declares them, not by prefix
 * alone: with prefix `cl`, <stdlib.h>'s clearenv (pulled in by cl_platform.h)
 * must not become an OpenCL site. */
#include "clang.h"
#include "gen.h"
#include "policy_ini.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The name of the in-memory file that includes the API headers; it shows in
 * errors about headers that cannot be found. */
#define MAIN_FILE "callguard-gen-includes.c"

/* An object-like macro of the API's own headers. */
typedef struct api_macro {
    char *name;
    int is_int; /* expands to an integer literal, possibly negative or parenthesized */
    long long value;
    CXFile file; /* where it is defined */
    unsigned line;
    char *group; /* the comment heading its block (`cl_device_info`), or NULL (macro_groups) */
} api_macro;

typedef struct ctx {
    const policy *p;
    CXTranslationUnit tu;
    strlist includes; /* the API headers as written in #include <...> */
    CXFile *files;    /* the files those resolved to */
    size_t nfiles;
    CXCursor *fns; /* candidate function declarations, in order */
    size_t nfns;
    api_macro *macros; /* the API headers' object-like macros, in order */
    size_t nmacros;
    strlist empty_macros; /* object-like macros (any file) that expand to nothing: calling conventions */
    CXCursor result_decl; /* typedef of the result type, or a null cursor */
    gen_api *api;         /* what is being filled */
} ctx;

static char *str(CXString s)
{
    char *r = xstrdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

/* ---- spelling types as C declarators ------------------------------------ */

static char *declare(CXType t, const char *inner);

static int is_function_type(CXType t) { return t.kind == CXType_FunctionProto || t.kind == CXType_FunctionNoProto; }

static int is_array_type(CXType t)
{
    return t.kind == CXType_ConstantArray || t.kind == CXType_IncompleteArray || t.kind == CXType_VariableArray ||
           t.kind == CXType_DependentSizedArray;
}

/* Declares `inner` as a pointer (with qualifiers `quals`) to `pointee`. */
static char *declare_pointer(CXType pointee, const char *quals, const char *inner)
{
    while (pointee.kind == CXType_Attributed)
        pointee = clang_Type_getModifiedType(pointee);
    char *in = xasprintf("*%s%s%s", quals, *quals && *inner ? " " : "", inner);
    if (is_function_type(pointee) || is_array_type(pointee)) {
        char *paren = xasprintf("(%s)", in);
        free(in);
        in = paren;
    }
    char *r = declare(pointee, in);
    free(in);
    return r;
}

static char *qualifiers(CXType t)
{
    return xasprintf(
        "%s%s%s", clang_isConstQualifiedType(t) ? "const" : "",
        clang_isVolatileQualifiedType(t) ? (clang_isConstQualifiedType(t) ? " volatile" : "volatile") : "",
        clang_isRestrictQualifiedType(t)
            ? (clang_isConstQualifiedType(t) || clang_isVolatileQualifiedType(t) ? " restrict" : "restrict")
            : "");
}

/* The parameter list of a function type, e.g. `(sh_ctx_t, void *)`. */
static char *parameter_types(CXType fn)
{
    if (fn.kind == CXType_FunctionNoProto) return xstrdup("()");
    int n = clang_getNumArgTypes(fn);
    char *s = xstrdup("(");
    for (int i = 0; i < n; i++) {
        char *a = declare(clang_getArgType(fn, (unsigned)i), "");
        char *t = xasprintf("%s%s%s", s, i ? ", " : "", a);
        free(a);
        free(s);
        s = t;
    }
    char *t = xasprintf("%s%s%s)", s, n == 0 ? "void" : "", clang_isFunctionTypeVariadic(fn) ? ", ..." : "");
    free(s);
    return t;
}

/* Spells a declaration of `inner` (a name, or "" for an abstract declarator)
 * with type `t`. Named types (typedefs, struct/enum tags, builtins) keep the
 * header's spelling; pointers, arrays and function types are taken apart so
 * that the name lands inside the declarator: `void (*pfn_notify)(cl_program,
 * void *)`, `const uint32_t dims[3]`. */
static char *declare(CXType t, const char *inner)
{
    switch (t.kind) {
    case CXType_Attributed: return declare(clang_Type_getModifiedType(t), inner);
    case CXType_Pointer: {
        char *q = qualifiers(t);
        char *r = declare_pointer(clang_getPointeeType(t), q, inner);
        free(q);
        return r;
    }
    case CXType_ConstantArray: {
        char *in = xasprintf("%s[%lld]", inner, clang_getArraySize(t));
        char *r = declare(clang_getArrayElementType(t), in);
        free(in);
        return r;
    }
    case CXType_IncompleteArray: {
        char *in = xasprintf("%s[]", inner);
        char *r = declare(clang_getArrayElementType(t), in);
        free(in);
        return r;
    }
    case CXType_FunctionProto:
    case CXType_FunctionNoProto: {
        char *params = parameter_types(t);
        char *in = xasprintf("%s%s", inner, params);
        char *r = declare(clang_getResultType(t), in);
        free(params);
        free(in);
        return r;
    }
    default: {
        char *base = str(clang_getTypeSpelling(t));
        char *r = *inner ? xasprintf("%s %s", base, inner) : xstrdup(base);
        free(base);
        return r;
    }
    }
}

/* The type a frame member needs to hold a parameter: arrays and functions
 * decay to pointers, as they do in the call. */
static char *declare_frame_member(CXType t, const char *name)
{
    if (is_array_type(t)) return declare_pointer(clang_getArrayElementType(t), "", name);
    if (is_function_type(t)) return declare_pointer(t, "", name);
    return declare(t, name);
}

/* ---- the translation unit ------------------------------------------------ */

static int loc_in_api(const ctx *c, CXSourceLocation loc)
{
    CXFile f;
    clang_getSpellingLocation(loc, &f, NULL, NULL, NULL);
    if (!f) return 0;
    for (size_t i = 0; i < c->nfiles; i++)
        if (clang_File_isEqual(f, c->files[i])) return 1;
    return 0;
}

static void add_file(ctx *c, CXFile f)
{
    for (size_t i = 0; i < c->nfiles; i++)
        if (clang_File_isEqual(f, c->files[i])) return;
    c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
    c->files[c->nfiles++] = f;
}

static int ends_with_component(const char *path, const char *tail)
{
    size_t n = strlen(path), m = strlen(tail);
    return n > m && strcmp(path + n - m, tail) == 0 && path[n - m - 1] == '/';
}

/* The API headers are the files the in-memory main file includes directly,
 * plus any file whose path ends with one of their spellings (a header that
 * an earlier API header already included is not entered again). */
static void on_inclusion(CXFile f, CXSourceLocation *stack, unsigned depth, CXClientData data)
{
    (void)stack;
    ctx *c = data;
    if (depth == 1) {
        add_file(c, f);
        return;
    }
    char *name = str(clang_getFileName(f));
    for (size_t i = 0; i < c->includes.n; i++)
        if (ends_with_component(name, c->includes.v[i])) add_file(c, f);
    free(name);
}

/* Reads an integer literal macro body: `0`, `-30`, `(-1)`, `0x10u`. */
static int macro_int(CXTranslationUnit tu, CXCursor m, long long *value)
{
    CXToken *tok;
    unsigned n;
    clang_tokenize(tu, clang_getCursorExtent(m), &tok, &n);
    char text[128] = "";
    for (unsigned i = 1; i < n && strlen(text) < 100; i++) { /* token 0 is the name */
        char *s = str(clang_getTokenSpelling(tu, tok[i]));
        if (strcmp(s, "(") != 0 && strcmp(s, ")") != 0) strncat(text, s, 20);
        free(s);
    }
    clang_disposeTokens(tu, tok, n);
    const char *s = text;
    int neg = *s == '-';
    s += neg;
    if (*s < '0' || *s > '9') return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 0);
    while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
        end++;
    if (errno || *end) return 0;
    *value = neg ? -(long long)v : (long long)v;
    return 1;
}

static int macro_is_empty(CXTranslationUnit tu, CXCursor m)
{
    CXToken *tok;
    unsigned n;
    clang_tokenize(tu, clang_getCursorExtent(m), &tok, &n);
    clang_disposeTokens(tu, tok, n);
    return n == 1;
}

static enum CXChildVisitResult on_top_level(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    ctx *c = data;
    enum CXCursorKind k = clang_getCursorKind(cur);
    if (k == CXCursor_MacroDefinition && clang_Cursor_isMacroFunctionLike(cur) &&
        loc_in_api(c, clang_getCursorLocation(cur))) {
        char *name = str(clang_getCursorSpelling(cur));
        strlist_push(&c->api->fn_macros, name); /* MPI_Aint_add in Open MPI's mpi.h (abi.c) */
        free(name);
    } else if (k == CXCursor_MacroDefinition && !clang_Cursor_isMacroFunctionLike(cur)) {
        char *name = str(clang_getCursorSpelling(cur));
        if (macro_is_empty(c->tu, cur)) strlist_push(&c->empty_macros, name);
        if (loc_in_api(c, clang_getCursorLocation(cur))) {
            c->macros = xrealloc(c->macros, (c->nmacros + 1) * sizeof *c->macros);
            api_macro *m = &c->macros[c->nmacros++];
            m->name = name;
            m->is_int = macro_int(c->tu, cur, &m->value);
            clang_getSpellingLocation(clang_getCursorLocation(cur), &m->file, &m->line, NULL, NULL);
            m->group = NULL;
            return CXChildVisit_Continue;
        }
        free(name);
    } else if (k == CXCursor_FunctionDecl && loc_in_api(c, clang_getCursorLocation(cur))) {
        c->fns = xrealloc(c->fns, (c->nfns + 1) * sizeof *c->fns);
        c->fns[c->nfns++] = cur;
    } else if (k == CXCursor_TypedefDecl && c->p->result && clang_Cursor_isNull(c->result_decl)) {
        char *name = str(clang_getCursorSpelling(cur));
        if (strcmp(name, c->p->result) == 0) c->result_decl = cur;
        free(name);
    }
    return CXChildVisit_Continue;
}

/* Prints the first error diagnostic as `file:line: error: message`. */
static int report_errors(CXTranslationUnit tu)
{
    unsigned n = clang_getNumDiagnostics(tu);
    for (unsigned i = 0; i < n; i++) {
        CXDiagnostic d = clang_getDiagnostic(tu, i);
        enum CXDiagnosticSeverity sev = clang_getDiagnosticSeverity(d);
        if (sev >= CXDiagnostic_Error) {
            CXFile f;
            unsigned line;
            clang_getSpellingLocation(clang_getDiagnosticLocation(d), &f, &line, NULL, NULL);
            char *file = f ? str(clang_getFileName(f)) : xstrdup(MAIN_FILE);
            char *msg = str(clang_getDiagnosticSpelling(d));
            fprintf(stderr, "%s:%u: error: %s\n", file, line, msg);
            free(file);
            free(msg);
            clang_disposeDiagnostic(d);
            return 1;
        }
        clang_disposeDiagnostic(d);
    }
    return 0;
}

static CXTranslationUnit parse_tu(ctx *c, CXIndex index, const strlist *incdirs)
{
    const policy *p = c->p;
    /* The extra headers sit next to the main one: `headers = zes_api.h`
     * with `header = level_zero/ze_api.h` means <level_zero/zes_api.h>. */
    strlist_push(&c->includes, p->header);
    const char *slash = strrchr(p->header, '/');
    for (size_t i = 0; i < p->headers.n; i++) {
        char *h = slash && !strchr(p->headers.v[i], '/')
                      ? xasprintf("%.*s/%s", (int)(slash - p->header), p->header, p->headers.v[i])
                      : xstrdup(p->headers.v[i]);
        strlist_push(&c->includes, h);
        free(h);
    }
    char *src = xstrdup("");
    for (size_t i = 0; i < c->includes.n; i++) {
        char *t = xasprintf("%s#include <%s>\n", src, c->includes.v[i]);
        free(src);
        src = t;
    }

    strlist args = {0};
    strlist_push(&args, "-x");
    strlist_push(&args, "c");
    strlist_push(&args, "-std=gnu11");
    for (size_t i = 0; i < p->cflags.n; i++)
        strlist_push(&args, p->cflags.v[i]);
    for (size_t i = 0; i < incdirs->n; i++) {
        strlist_push(&args, "-I");
        strlist_push(&args, incdirs->v[i]);
    }
    const char *resource = gen_clang_resource_include();
    if (resource) {
        strlist_push(&args, "-isystem");
        strlist_push(&args, resource);
    }

    struct CXUnsavedFile unsaved = {MAIN_FILE, src, (unsigned long)strlen(src)};
    CXTranslationUnit tu = NULL;
    enum CXErrorCode err = clang_parseTranslationUnit2(
        index, MAIN_FILE, (const char *const *)args.v, (int)args.n, &unsaved, 1,
        CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies, &tu);
    strlist_free(&args);
    free(src);
    if (err != CXError_Success || !tu) {
        gen_error("callguard-gen: libclang could not parse %s (error %d)", p->header, (int)err);
        return NULL;
    }
    if (report_errors(tu)) {
        clang_disposeTranslationUnit(tu);
        return NULL;
    }
    return tu;
}

/* ---- entry points ------------------------------------------------------- */

static int has_prefix(const policy *p, const char *name)
{
    for (size_t i = 0; i < p->prefixes.n; i++)
        if (strncmp(name, p->prefixes.v[i], strlen(p->prefixes.v[i])) == 0) return 1;
    return 0;
}

static int is_empty_macro(const ctx *c, const char *name)
{
    for (size_t i = 0; i < c->empty_macros.n; i++)
        if (strcmp(c->empty_macros.v[i], name) == 0) return 1;
    return 0;
}

/* The calling-convention macro written right before the function's name
 * (`CL_API_CALL`, `ZE_APICALL`, `CUDAAPI`), so that the wrapper reads like
 * the header. Only macros that expand to nothing here are copied: anything
 * else before the name is part of the return type. */
static char *calling_convention(const ctx *c, CXCursor fn, const char *name)
{
    CXToken *tok;
    unsigned n;
    char *conv = NULL;
    clang_tokenize(c->tu, clang_getCursorExtent(fn), &tok, &n);
    for (unsigned i = 1; i + 1 < n; i++) {
        char *s = str(clang_getTokenSpelling(c->tu, tok[i]));
        char *next = str(clang_getTokenSpelling(c->tu, tok[i + 1]));
        int here = strcmp(s, name) == 0 && strcmp(next, "(") == 0;
        free(s);
        free(next);
        if (here) {
            char *prev = str(clang_getTokenSpelling(c->tu, tok[i - 1]));
            if (clang_getTokenKind(tok[i - 1]) == CXToken_Identifier && is_empty_macro(c, prev))
                conv = prev;
            else
                free(prev);
            break;
        }
    }
    clang_disposeTokens(c->tu, tok, n);
    return conv;
}

/* An opaque handle: a typedef'd pointer to a struct the header never
 * completes (cl_program, ze_module_handle_t, CUcontext). A pointer to a
 * handle is an out-parameter, and plain `struct x *` parameters are
 * descriptors, so neither is a key. */
static int is_handle(CXType t)
{
    if (t.kind == CXType_Elaborated) t = clang_Type_getNamedType(t);
    if (t.kind != CXType_Typedef) return 0;
    CXType can = clang_getCanonicalType(t);
    if (can.kind != CXType_Pointer) return 0;
    CXType pointee = clang_getCanonicalType(clang_getPointeeType(can));
    return pointee.kind == CXType_Record && clang_Type_getSizeOf(pointee) == CXTypeLayoutError_Incomplete;
}

/* The token written right before the function's name: its return type as
 * the header spells it, before macros expand (MPI's `MPI_Fint` is a macro
 * for int). NULL if the name is not found. */
static char *written_return(const ctx *c, CXCursor fn, const char *name)
{
    CXToken *tok;
    unsigned n;
    char *written = NULL;
    clang_tokenize(c->tu, clang_getCursorExtent(fn), &tok, &n);
    for (unsigned i = 1; i + 1 < n && !written; i++) {
        char *s = str(clang_getTokenSpelling(c->tu, tok[i]));
        char *next = str(clang_getTokenSpelling(c->tu, tok[i + 1]));
        if (strcmp(s, name) == 0 && strcmp(next, "(") == 0) written = str(clang_getTokenSpelling(c->tu, tok[i - 1]));
        free(s);
        free(next);
    }
    clang_disposeTokens(c->tu, tok, n);
    return written;
}

static int returns_result(const ctx *c, CXCursor fn, const char *name, CXType ret)
{
    if (!c->p->result) return 0;
    char *spelling = str(clang_getTypeSpelling(ret));
    int same = strcmp(spelling, c->p->result) == 0;
    free(spelling);
    if (same && clang_Cursor_isNull(c->result_decl)) {
        /* A plain int result (MPI): only where the header writes `int`, not
         * a macro that becomes int (MPI_Fint, a Fortran handle). */
        char *w = written_return(c, fn, name);
        same = !w || strcmp(w, c->p->result) == 0;
        free(w);
        return same;
    }
    if (same || clang_Cursor_isNull(c->result_decl)) return same;
    /* `enum toy_result` is the same type as `toy_result_t`; but for a
     * result type like cl_int (int), `int` is not a result. */
    CXType rt = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c->result_decl));
    return rt.kind == CXType_Enum && clang_equalTypes(rt, clang_getCanonicalType(ret));
}

/* How many bytes a value of type t takes as an argument or result (arrays and functions decay to
 * pointers; 0 for void), and whether it is a floating-point value. */
static int passed_size(CXType t, int *floating)
{
    CXType can = clang_getCanonicalType(t);
    *floating = can.kind >= CXType_Float && can.kind <= CXType_LongDouble;
    if (is_array_type(can) || is_function_type(can)) return (int)sizeof(void *);
    long long n = clang_Type_getSizeOf(can);
    return n > 0 ? (int)n : 0;
}

/* How wait_args shows a value of type t (layer.h CG_WAIT_*): a pointer (a handle among them) in hex, an
 * integer or enum as a number, anything else (a struct, a float) not at all (0). */
static int wait_base(CXType t)
{
    CXType can = clang_getCanonicalType(t);
    if (can.kind == CXType_Pointer || is_array_type(can) || is_function_type(can)) return WAIT_HEX;
    if (can.kind == CXType_Enum) return WAIT_INT;
    if (can.kind == CXType_Bool || (can.kind >= CXType_Char_U && can.kind <= CXType_ULongLong)) return WAIT_UINT;
    if (can.kind >= CXType_Char_S && can.kind <= CXType_LongLong) return WAIT_INT;
    return 0;
}

/* ---- the timeline's view of each parameter (layer.h, cg_arg) --------------- */

static void macro_groups(ctx *c)
{
    for (size_t i = 0; i < c->nmacros; i++) {
        api_macro *m = &c->macros[i];
        if (!m->is_int || !m->file) continue;
        size_t size = 0;
        const char *text = clang_getFileContents(c->tu, m->file, &size);
        if (text) m->group = gen_block_heading(text, size, m->line);
    }
}

static enum CXChildVisitResult on_enum_constant(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    if (clang_getCursorKind(cur) == CXCursor_EnumConstantDecl) {
        char *name = str(clang_getCursorSpelling(cur));
        gen_enum_add(data, name, clang_getEnumConstantDeclValue(cur));
        free(name);
    }
    return CXChildVisit_Continue;
}

/* A type's spelling without a leading const (a by-value parameter's). */
static char *unqualified_spelling(CXType t)
{
    char *s = str(clang_getTypeSpelling(t));
    if (strncmp(s, "const ", 6) == 0) memmove(s, s + 6, strlen(s + 6) + 1);
    return s;
}

/* The names of type t's values (its index in api->enums), or -1 when the header names none. */
static int enum_of(const ctx *c, CXType t)
{
    if (t.kind == CXType_Elaborated) t = clang_Type_getNamedType(t);
    CXType can = clang_getCanonicalType(t);
    char *spelled = unqualified_spelling(t);
    gen_api *api = c->api;
    for (size_t i = 0; i < api->nenums; i++)
        if (strcmp(api->enums[i].type, spelled) == 0) {
            free(spelled);
            return api->enums[i].n ? (int)i : -1;
        }
    gen_enum e = {.type = spelled};
    if (can.kind == CXType_Enum) {
        clang_visitChildren(clang_getTypeDeclaration(can), on_enum_constant, &e);
    } else if (t.kind == CXType_Typedef) {
        for (size_t i = 0; i < c->nmacros; i++)
            if (c->macros[i].is_int && gen_group_names(c->macros[i].group, spelled))
                gen_enum_add(&e, c->macros[i].name, c->macros[i].value);
    }
    gen_enum_sort(&e);
    api->enums = xrealloc(api->enums, (api->nenums + 1) * sizeof *api->enums);
    api->enums[api->nenums++] = e;
    return e.n ? (int)(api->nenums - 1) : -1;
}

/* A value of the result type, but not of C's own (MPI's int): only its return value and `errcode` are. */
static int is_result_type(const ctx *c, CXType t)
{
    if (!c->p->result || clang_getCanonicalType(t).kind == t.kind) return 0;
    char *spelled = unqualified_spelling(t);
    int same = strcmp(spelled, c->p->result) == 0;
    free(spelled);
    return same;
}

/* How the timeline shows a value of type t (CG_ARG_*; 0: not at all), and its names' index. */
static int value_kind(const ctx *c, CXType t, int *enum_index)
{
    CXType can = clang_getCanonicalType(t);
    long long size = clang_Type_getSizeOf(can);
    *enum_index = -1;
    if (size <= 0 || size > 8) return 0;
    if (can.kind == CXType_Pointer || is_array_type(can) || is_function_type(can)) return 3; /* CG_ARG_HEX */
    if (can.kind == CXType_Float || can.kind == CXType_Double) return 8;                     /* CG_ARG_FLOAT */
    int integer = can.kind == CXType_Enum || can.kind == CXType_Bool ||
                  (can.kind >= CXType_Char_U && can.kind <= CXType_LongLong && can.kind != CXType_Char16 &&
                   can.kind != CXType_Char32 && can.kind != CXType_WChar);
    if (!integer) return 0;
    if (is_result_type(c, t)) return 7;               /* CG_ARG_RESULT */
    if ((*enum_index = enum_of(c, t)) >= 0) return 4; /* CG_ARG_ENUM */
    int is_unsigned = can.kind == CXType_Bool || (can.kind >= CXType_Char_U && can.kind <= CXType_ULongLong);
    return is_unsigned ? 2 : 1;
}

static void trace_view(const ctx *c, CXType t, gen_param *pa)
{
    CXType can = clang_getCanonicalType(t);
    pa->out_kind = pa->out_size = 0;
    pa->trace_kind = value_kind(c, t, &pa->enum_index);
    if (can.kind != CXType_Pointer) return;
    CXType pointee = clang_getPointeeType(can);
    CXType pcan = clang_getCanonicalType(pointee);
    if ((pcan.kind == CXType_Char_S || pcan.kind == CXType_Char_U) && clang_isConstQualifiedType(pointee)) {
        pa->trace_kind = 5; /* CG_ARG_STR */
        return;
    }
    if (clang_isConstQualifiedType(pointee) || !gen_is_output(c->p, pa->name)) return;
    int idx, k = value_kind(c, clang_getPointeeType(t), &idx);
    if (!k || k == 8) return;
    if (c->p->errcode && strcmp(c->p->errcode, pa->name) == 0) k = 7;
    pa->trace_kind = 6; /* CG_ARG_OUT */
    pa->out_kind = k;
    pa->out_size = (int)clang_Type_getSizeOf(pcan);
    pa->enum_index = idx;
}

static void build_func(const ctx *c, CXCursor cur, gen_func *f)
{
    memset(f, 0, sizeof *f);
    f->name = str(clang_getCursorSpelling(cur));
    CXType ret = clang_getCursorResultType(cur);
    CXType ret_can = clang_getCanonicalType(ret);
    f->ret = declare(ret, "");
    f->ret_member = declare(ret, "cgl_ret");
    f->ret_void = ret_can.kind == CXType_Void;
    f->ret_scalar = !f->ret_void && ret_can.kind != CXType_Record;
    f->ret_result = returns_result(c, cur, f->name, ret);
    f->ret_size = passed_size(ret, &f->ret_floating);
    /* An integer, enum or pointer of at most a word: passed through cg_leave (layer.h). */
    f->ret_word = (ret_can.kind == CXType_Pointer || ret_can.kind == CXType_Enum ||
                   (ret_can.kind >= CXType_Bool && ret_can.kind <= CXType_LongLong && ret_can.kind != CXType_Char16 &&
                    ret_can.kind != CXType_Char32 && ret_can.kind != CXType_WChar && ret_can.kind != CXType_UInt128)) &&
                  clang_Type_getSizeOf(ret_can) > 0 && clang_Type_getSizeOf(ret_can) <= 8;
    f->callconv = calling_convention(c, cur, f->name);
    f->ret_trace_kind = f->ret_void ? 0 : f->ret_result ? 7 : value_kind(c, ret, &f->ret_enum);
    if (f->ret_result || f->ret_void) f->ret_enum = -1;

    int n = clang_Cursor_getNumArguments(cur);
    f->nparams = n > 0 ? (size_t)n : 0;
    f->params = xrealloc(NULL, f->nparams * sizeof *f->params);
    char *list = xstrdup("");
    for (size_t i = 0; i < f->nparams; i++) {
        CXCursor a = clang_Cursor_getArgument(cur, (unsigned)i);
        CXType t = clang_getCursorType(a);
        gen_param *pa = &f->params[i];
        pa->name = str(clang_getCursorSpelling(a));
        if (!*pa->name) {
            free(pa->name);
            pa->name = xasprintf("cgl_a%zu", i);
        }
        pa->decl = declare(t, pa->name);
        pa->frame_decl = declare_frame_member(t, pa->name);
        pa->is_handle = is_handle(t);
        pa->size = passed_size(t, &pa->floating);
        pa->wait_base = wait_base(t);
        trace_view(c, t, pa);
        if (i == 0) f->key_is_handle = pa->is_handle;
        char *l = xasprintf("%s%s%s", list, i ? ", " : "", pa->decl);
        free(list);
        list = l;
    }
    char *inner = xasprintf("%s%s%s(%s)", f->callconv ? f->callconv : "", f->callconv ? " " : "", f->name,
                            f->nparams ? list : "void");
    f->decl_head = declare(ret, inner);
    free(inner);
    inner = xasprintf("cgl_guarded_%s(%s)", f->name, f->nparams ? list : "void");
    f->guarded_head = declare(ret, inner);
    free(inner);
    inner = xasprintf("cgl_sl_%s(%s)", f->name, f->nparams ? list : "void");
    f->slow_head = declare(ret, inner);
    free(inner);
    inner = xasprintf("cgl_gp_%s(%s)", f->name, f->nparams ? list : "void");
    f->general_head = declare(ret, inner);
    free(inner);
    free(list);
}

static void select_functions(const ctx *c, gen_api *api)
{
    for (size_t i = 0; i < c->nfns; i++) {
        CXCursor cur = c->fns[i];
        char *name = str(clang_getCursorSpelling(cur));
        int skip = !has_prefix(c->p, name);
        for (size_t j = 0; !skip && j < api->nfuncs; j++)
            skip = strcmp(api->funcs[j].name, name) == 0; /* redeclaration: the first one wins */
        CXType t = clang_getCursorType(cur);
        if (!skip && clang_Cursor_getStorageClass(cur) == CX_SC_Static) {
            fprintf(stderr, "callguard-gen: warning: skipping %s: it is static in the header\n", name);
            skip = 1;
        } else if (!skip && t.kind == CXType_FunctionNoProto) {
            fprintf(stderr, "callguard-gen: warning: skipping %s: declared without a prototype\n", name);
            skip = 1;
        } else if (!skip && clang_isFunctionTypeVariadic(t)) {
            fprintf(stderr, "callguard-gen: warning: skipping %s: variadic functions cannot be forwarded\n", name);
            skip = 1;
        }
        free(name);
        if (skip) continue;
        api->funcs = xrealloc(api->funcs, (api->nfuncs + 1) * sizeof *api->funcs);
        build_func(c, cur, &api->funcs[api->nfuncs++]);
    }
}

/* ---- result codes ------------------------------------------------------- */

/* Every name read is kept in `all` (to check success/missing); `api->codes`
 * gets the first name of each value, since a switch cannot repeat a case. */
static void add_code(gen_api *api, strlist *all, const char *name, long long value)
{
    strlist_push(all, name);
    api->names = xrealloc(api->names, (api->nnames + 1) * sizeof *api->names);
    api->names[api->nnames].name = xstrdup(name);
    api->names[api->nnames++].value = value;
    for (size_t i = 0; i < api->ncodes; i++)
        if (api->codes[i].value == value) return;
    api->codes = xrealloc(api->codes, (api->ncodes + 1) * sizeof *api->codes);
    api->codes[api->ncodes].name = xstrdup(name);
    api->codes[api->ncodes++].value = value;
}

typedef struct enum_walk {
    gen_api *api;
    strlist *all;
} enum_walk;

static enum CXChildVisitResult on_enumerator(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    enum_walk *w = data;
    if (clang_getCursorKind(cur) == CXCursor_EnumConstantDecl) {
        char *name = str(clang_getCursorSpelling(cur));
        add_code(w->api, w->all, name, clang_getEnumConstantDeclValue(cur));
        free(name);
    }
    return CXChildVisit_Continue;
}

static int collect_codes(const ctx *c, gen_api *api)
{
    const policy *p = c->p;
    if (!p->result) return 0;
    int by_enum = !p->results || strcmp(p->results, "enum") == 0;
    /* MPI returns plain `int`: a C integer type needs no typedef, and its
     * codes can only be macros. */
    if (clang_Cursor_isNull(c->result_decl) && (by_enum || strcmp(p->result, "int") != 0)) {
        gen_error("%s:%d: result = %s: the header declares no typedef of that name%s", p->path, p->api_line, p->result,
                  by_enum ? "" : " (nor is it int)");
        return 1;
    }
    strlist all = {0};
    int rc = 0;
    if (by_enum) {
        CXType rt = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c->result_decl));
        if (rt.kind != CXType_Enum) {
            gen_error("%s:%d: result = %s is not an enum type: name its codes with results = FIRST..LAST", p->path,
                      p->api_line, p->result);
            return 1;
        }
        enum_walk w = {api, &all};
        clang_visitChildren(clang_getTypeDeclaration(rt), on_enumerator, &w);
    } else {
        const char *dots = strstr(p->results, "..");
        char *first = xstrndup(p->results, (size_t)(dots - p->results));
        const char *last = dots + 2;
        size_t i = 0, j;
        while (i < c->nmacros && strcmp(c->macros[i].name, first) != 0)
            i++;
        for (j = i; j < c->nmacros && strcmp(c->macros[j].name, last) != 0; j++)
            ;
        if (i == c->nmacros || j == c->nmacros) {
            int no_first = i == c->nmacros;
            int exists = 0;
            for (size_t k = 0; k < c->nmacros; k++)
                exists |= strcmp(c->macros[k].name, last) == 0;
            if (no_first)
                gen_error("%s:%d: results = %s: the header defines no macro %s", p->path, p->api_line, p->results,
                          first);
            else if (exists)
                gen_error("%s:%d: results = %s: %s is defined before %s", p->path, p->api_line, p->results, last,
                          first);
            else
                gen_error("%s:%d: results = %s: the header defines no macro %s", p->path, p->api_line, p->results,
                          last);
            rc = 1;
        } else {
            for (size_t k = i; k <= j; k++)
                if (c->macros[k].is_int) add_code(api, &all, c->macros[k].name, c->macros[k].value);
        }
        free(first);
    }
    const char *keys[] = {"success", "missing"};
    const char *vals[] = {p->success, p->missing};
    for (int k = 0; k < 2 && !rc; k++) {
        const char *v = vals[k];
        int known = (*v == '-' || (*v >= '0' && *v <= '9'));
        for (size_t i = 0; i < all.n && !known; i++)
            known = strcmp(all.v[i], v) == 0;
        if (!known) {
            gen_error("%s:%d: %s = %s: not a result code of %s", p->path, p->api_line, keys[k], v, p->result);
            rc = 1;
        }
    }
    strlist_free(&all);
    return rc;
}

int parse_api(const policy *p, const strlist *incdirs, gen_api *api)
{
    memset(api, 0, sizeof *api);
    ctx c = {.p = p, .result_decl = clang_getNullCursor(), .api = api};
    CXIndex index = clang_createIndex(0, 0);
    int rc = 1;
    c.tu = parse_tu(&c, index, incdirs);
    if (c.tu) {
        clang_getInclusions(c.tu, on_inclusion, &c);
        clang_visitChildren(clang_getTranslationUnitCursor(c.tu), on_top_level, &c);
        macro_groups(&c);
        select_functions(&c, api);
        rc = collect_codes(&c, api);
        clang_disposeTranslationUnit(c.tu);
    }
    clang_disposeIndex(index);
    for (size_t i = 0; i < c.nmacros; i++)
        free(c.macros[i].name), free(c.macros[i].group);
    free(c.macros);
    free(c.fns);
    free(c.files);
    strlist_free(&c.includes);
    strlist_free(&c.empty_macros);
    return rc;
}
