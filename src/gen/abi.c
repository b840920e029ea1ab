/* abi.c: the API's other ABIs ([api] abi_headers). One API can have several ABIs: MPI's C
 * functions are declared by Open MPI's mpi.h with pointer handles, by MPICH's with int handles,
 * and by the MPI 5.0 standard ABI's mpi_abi.h with pointer handles of other values. The layer is
 * compiled with `header` alone; each ABI header is read here on its own (its own translation unit,
 * on the --abi-dir folders, declarations from the files of its own folder).
 *
 * - A function `header` does not declare is added with ABI-neutral types: a handle (a type that
 *   any ABI header makes an opaque pointer) and every pointer whose pointee is not a builtin type
 *   are `void *`, an integer or floating type is spelled as its C type (int64_t: long), an enum as
 *   its integer type. Each argument then fills the register or stack slot it arrives in, and the
 *   wrapper forwards it bit for bit to the real function of whichever ABI the process has.
 * - A function both declare keeps `header`'s prototype, checked here: each argument and the
 *   result must be at least as wide in `header` as in the other ABI and of the same kind (integer
 *   or floating), or a wrapper of `header`'s type would cut the other ABI's value. An int handle
 *   in a pointer parameter is passed whole: the callee reads its low half.
 *
 * A struct or union passed by value cannot be made neutral: an error names the function. */
#include "clang.h"
#include "gen.h"

#include <stdlib.h>
#include <string.h>

typedef struct abi_ctx {
    const policy *p;
    const char *header; /* as written in #include <...> */
    CXTranslationUnit tu;
    char *dir;     /* the folder of the file it resolved to */
    CXCursor *fns; /* function declarations of the header's folder, in order */
    size_t nfns;
    strlist *handles; /* typedef names that some ABI header makes an opaque pointer */
} abi_ctx;

static char *str(CXString s)
{
    char *r = xstrdup(clang_getCString(s));
    clang_disposeString(s);
    return r;
}

static CXType unwrap(CXType t)
{
    for (;;) {
        if (t.kind == CXType_Attributed)
            t = clang_Type_getModifiedType(t);
        else if (t.kind == CXType_Elaborated)
            t = clang_Type_getNamedType(t);
        else
            return t;
    }
}

static int is_pointerish(CXType can)
{
    return can.kind == CXType_Pointer || can.kind == CXType_ConstantArray || can.kind == CXType_IncompleteArray ||
           can.kind == CXType_VariableArray;
}

static CXType pointee(CXType can)
{
    return can.kind == CXType_Pointer ? clang_getPointeeType(can) : clang_getArrayElementType(can);
}

/* Is what the pointer or array `can` points to const? (clang keeps an array's const on the array.) */
static int pointee_const(CXType can)
{
    return clang_isConstQualifiedType(pointee(can)) || (can.kind != CXType_Pointer && clang_isConstQualifiedType(can));
}

static int in_list(const strlist *l, const char *s)
{
    for (size_t i = 0; i < l->n; i++)
        if (strcmp(l->v[i], s) == 0) return 1;
    return 0;
}

/* A typedef of a pointer to a struct no header completes (MPI_Comm in mpi_abi.h). */
static int is_opaque_pointer(CXType t)
{
    CXType can = clang_getCanonicalType(t);
    if (can.kind != CXType_Pointer) return 0;
    CXType to = clang_getCanonicalType(clang_getPointeeType(can));
    return to.kind == CXType_Record && clang_Type_getSizeOf(to) == CXTypeLayoutError_Incomplete;
}

/* The spelling of a builtin type, or of pointers to one (`const char *`, `char **`, `int *`);
 * NULL for anything else. Qualifiers of the pointers themselves are dropped (no ABI meaning). */
static char *builtin_spelling(CXType t, int is_const)
{
    CXType can = clang_getCanonicalType(t);
    if (is_pointerish(can)) {
        char *in = builtin_spelling(pointee(can), pointee_const(can));
        if (!in) return NULL;
        char *r = xasprintf("%s%s*", in, in[strlen(in) - 1] == '*' ? "" : " ");
        free(in);
        return r;
    }
    if (!(can.kind >= CXType_Void && can.kind <= CXType_LongDouble)) return NULL;
    char *s = str(clang_getTypeSpelling(can));
    if (!is_const || strncmp(s, "const ", 6) == 0) return s;
    char *r = xasprintf("const %s", s);
    free(s);
    return r;
}

/* `type name` for an ABI-neutral parameter of type t (name "" for a result), or NULL for a struct
 * or union by value. Sets *handle for a handle. */
static char *neutral_decl(const abi_ctx *c, CXType t, const char *name, int *handle)
{
    t = unwrap(t);
    *handle = 0;
    char *type = NULL;
    if (t.kind == CXType_Typedef) {
        char *tn = str(clang_getTypeSpelling(t));
        *handle = in_list(c->handles, tn);
        free(tn);
    }
    CXType can = clang_getCanonicalType(t);
    if (*handle) {
        type = xstrdup("void *");
    } else if (is_pointerish(can) || can.kind == CXType_FunctionProto || can.kind == CXType_FunctionNoProto) {
        type = builtin_spelling(can, 0);
        if (!type) type = xstrdup(is_pointerish(can) && pointee_const(can) ? "const void *" : "void *");
    } else if (can.kind == CXType_Enum) {
        type = str(
            clang_getTypeSpelling(clang_getCanonicalType(clang_getEnumDeclIntegerType(clang_getTypeDeclaration(can)))));
    } else if (can.kind >= CXType_Void && can.kind <= CXType_LongDouble) {
        type = str(clang_getTypeSpelling(can)); /* a top-level const of a parameter means nothing here */
        for (const char *q; (q = strstr(type, "const ")) == type || (q = strstr(type, "volatile ")) == type;)
            memmove(type, strchr(q, ' ') + 1, strlen(strchr(q, ' ') + 1) + 1);
    } else {
        return NULL;
    }
    char *r = xasprintf("%s%s%s", type, *name && type[strlen(type) - 1] != '*' ? " " : "", name);
    free(type);
    return r;
}

/* The token before the name: `int` in `int MPI_Send_c(...)`, a macro such as MPI_Fint otherwise. */
static int written_as(CXTranslationUnit tu, CXCursor fn, const char *name, const char *want)
{
    CXToken *tok;
    unsigned n;
    int same = 0;
    clang_tokenize(tu, clang_getCursorExtent(fn), &tok, &n);
    for (unsigned i = 1; i + 1 < n; i++) {
        char *s = str(clang_getTokenSpelling(tu, tok[i]));
        char *next = str(clang_getTokenSpelling(tu, tok[i + 1]));
        int here = strcmp(s, name) == 0 && strcmp(next, "(") == 0;
        free(s);
        free(next);
        if (here) {
            char *prev = str(clang_getTokenSpelling(tu, tok[i - 1]));
            same = strcmp(prev, want) == 0;
            free(prev);
            break;
        }
    }
    clang_disposeTokens(tu, tok, n);
    return same;
}

static int passed_size(CXType t, int *floating)
{
    CXType can = clang_getCanonicalType(t);
    *floating = can.kind >= CXType_Float && can.kind <= CXType_LongDouble;
    if (is_pointerish(can) || can.kind == CXType_FunctionProto) return (int)sizeof(void *);
    long long n = clang_Type_getSizeOf(can);
    return n > 0 ? (int)n : 0;
}

/* How wait_args shows a value (layer.h CG_WAIT_*), as parse.c's wait_base: a handle or pointer in hex,
 * an integer or enum as a number, anything else not at all (0). */
static int wait_base(CXType t, int is_handle)
{
    CXType can = clang_getCanonicalType(t);
    if (is_handle || is_pointerish(can) || can.kind == CXType_FunctionProto) return WAIT_HEX;
    if (can.kind == CXType_Enum) return WAIT_INT;
    if (can.kind == CXType_Bool || (can.kind >= CXType_Char_U && can.kind <= CXType_ULongLong)) return WAIT_UINT;
    if (can.kind >= CXType_Char_S && can.kind <= CXType_LongLong) return WAIT_INT;
    return 0;
}

/* A function only this ABI declares, with neutral types; nonzero (after an error) if it cannot be. */
static int build_neutral(const abi_ctx *c, CXCursor cur, const char *name, gen_func *f)
{
    memset(f, 0, sizeof *f);
    f->name = xstrdup(name);
    f->origin = xstrdup(c->header);
    CXType ret = clang_getCursorResultType(cur);
    CXType ret_can = clang_getCanonicalType(ret);
    int handle;
    char *rtype = neutral_decl(c, ret, "", &handle);
    int bad = !rtype;
    f->ret_void = ret_can.kind == CXType_Void;
    f->ret_scalar = !f->ret_void;
    f->ret_word = !f->ret_void && !(ret_can.kind >= CXType_Float && ret_can.kind <= CXType_LongDouble);
    f->ret_result = c->p->result && written_as(c->tu, cur, name, c->p->result);
    f->ret_size = passed_size(ret, &f->ret_floating);
    f->ret_trace_kind = f->ret_result ? 7 : 0; /* CG_ARG_RESULT; ABI-neutral arguments are not traced */
    f->ret_enum = -1;
    if (f->ret_result) { /* the result type by the main header's name (an enum's typedef) */
        free(rtype);
        rtype = xstrdup(c->p->result);
    }
    int n = clang_Cursor_getNumArguments(cur);
    f->nparams = n > 0 ? (size_t)n : 0;
    f->params = calloc(f->nparams ? f->nparams : 1, sizeof *f->params);
    char *list = xstrdup("");
    for (size_t i = 0; i < f->nparams && !bad; i++) {
        CXCursor a = clang_Cursor_getArgument(cur, (unsigned)i);
        gen_param *pa = &f->params[i];
        pa->name = str(clang_getCursorSpelling(a));
        if (!*pa->name) {
            free(pa->name);
            pa->name = xasprintf("cgl_a%zu", i);
        }
        pa->decl = neutral_decl(c, clang_getCursorType(a), pa->name, &pa->is_handle);
        if (!pa->decl) {
            bad = 1;
            break;
        }
        pa->frame_decl = xstrdup(pa->decl);
        pa->size = pa->is_handle ? (int)sizeof(void *) : passed_size(clang_getCursorType(a), &pa->floating);
        pa->wait_base = wait_base(clang_getCursorType(a), pa->is_handle);
        char *l = xasprintf("%s%s%s", list, i ? ", " : "", pa->decl);
        free(list);
        list = l;
    }
    if (bad) {
        gen_error("callguard-gen: %s: %s passes a struct or union by value: no ABI-neutral wrapper", c->header, name);
        free(rtype);
        free(list);
        return 1;
    }
    f->key_is_handle = f->nparams && f->params[0].is_handle;
    const char *sep = rtype[strlen(rtype) - 1] == '*' ? "" : " ";
    const char *args = f->nparams ? list : "void";
    f->ret = xstrdup(rtype);
    f->ret_member = xasprintf("%s%scgl_ret", rtype, sep);
    f->decl_head = xasprintf("%s%s%s(%s)", rtype, sep, name, args);
    f->guarded_head = xasprintf("%s%scgl_guarded_%s(%s)", rtype, sep, name, args);
    f->slow_head = xasprintf("%s%scgl_sl_%s(%s)", rtype, sep, name, args);
    f->general_head = xasprintf("%s%scgl_gp_%s(%s)", rtype, sep, name, args);
    f->wrapper_head = xasprintf("%s%scgl_w_%s(%s)", rtype, sep, name, args);
    free(rtype);
    free(list);
    return 0;
}

/* One value as `header` passes it (have) against this ABI's (want): nonzero if it would be cut. */
static int narrower(int have, int have_float, int want, int want_float)
{
    return have < want || have_float != want_float;
}

/* A function both declare: `header`'s prototype must carry this ABI's arguments whole. */
static int check_same(const abi_ctx *c, CXCursor cur, const gen_func *f)
{
    const char *where = f->origin ? f->origin : c->p->header;
    int n = clang_Cursor_getNumArguments(cur);
    if (n != (int)f->nparams) {
        gen_error("callguard-gen: %s: %s has %d parameters in %s but %zu in %s", c->header, f->name, n, c->header,
                  f->nparams, where);
        return 1;
    }
    int fl, size = passed_size(clang_getCursorResultType(cur), &fl);
    if (narrower(f->ret_size, f->ret_floating, size, fl)) {
        gen_error("callguard-gen: %s: %s returns %d bytes%s in %s but %d%s in %s: its wrapper would cut the result",
                  c->header, f->name, size, fl ? " (floating)" : "", c->header, f->ret_size,
                  f->ret_floating ? " (floating)" : "", where);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        const gen_param *pa = &f->params[i];
        size = passed_size(clang_getCursorType(clang_Cursor_getArgument(cur, (unsigned)i)), &fl);
        if (narrower(pa->size, pa->floating, size, fl)) {
            gen_error("callguard-gen: %s: %s's parameter %d (%s) is %d bytes%s in %s but %d%s in %s: its wrapper "
                      "would cut the argument",
                      c->header, f->name, i + 1, pa->name, size, fl ? " (floating)" : "", c->header, pa->size,
                      pa->floating ? " (floating)" : "", where);
            return 1;
        }
    }
    return 0;
}

/* ---- reading one ABI header ------------------------------------------------------------------ */

static char *file_dir(CXFile f)
{
    char *name = str(clang_getFileName(f));
    char *slash = strrchr(name, '/');
    if (slash) *slash = '\0';
    return name;
}

static enum CXChildVisitResult on_decl(CXCursor cur, CXCursor parent, CXClientData data)
{
    (void)parent;
    abi_ctx *c = data;
    enum CXCursorKind k = clang_getCursorKind(cur);
    if (k == CXCursor_TypedefDecl && is_opaque_pointer(clang_getTypedefDeclUnderlyingType(cur))) {
        char *name = str(clang_getCursorSpelling(cur));
        if (!in_list(c->handles, name)) strlist_push(c->handles, name);
        free(name);
    }
    if (k != CXCursor_FunctionDecl) return CXChildVisit_Continue;
    CXFile f;
    clang_getSpellingLocation(clang_getCursorLocation(cur), &f, NULL, NULL, NULL);
    if (!f) return CXChildVisit_Continue;
    char *dir = file_dir(f);
    if (strcmp(dir, c->dir) == 0) {
        c->fns = xrealloc(c->fns, (c->nfns + 1) * sizeof *c->fns);
        c->fns[c->nfns++] = cur;
    }
    free(dir);
    return CXChildVisit_Continue;
}

static int parse_abi(abi_ctx *c, CXIndex index, const strlist *abidirs)
{
    char *src = xasprintf("#include <%s>\n", c->header);
    strlist args = {0};
    const char *fixed[] = {"-x", "c", "-std=gnu11"};
    for (size_t i = 0; i < 3; i++)
        strlist_push(&args, fixed[i]);
    for (size_t i = 0; i < abidirs->n; i++) {
        strlist_push(&args, "-I");
        strlist_push(&args, abidirs->v[i]);
    }
    const char *resource = gen_clang_resource_include();
    if (resource) {
        strlist_push(&args, "-isystem");
        strlist_push(&args, resource);
    }
    const char *main_file = "callguard-gen-abi.c";
    struct CXUnsavedFile unsaved = {main_file, src, (unsigned long)strlen(src)};
    enum CXErrorCode err = clang_parseTranslationUnit2(index, main_file, (const char *const *)args.v, (int)args.n,
                                                       &unsaved, 1, CXTranslationUnit_SkipFunctionBodies, &c->tu);
    strlist_free(&args);
    free(src);
    int rc = err != CXError_Success || !c->tu;
    for (unsigned i = 0; !rc && i < clang_getNumDiagnostics(c->tu); i++) {
        CXDiagnostic d = clang_getDiagnostic(c->tu, i);
        if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
            char *msg = str(clang_getDiagnosticSpelling(d));
            gen_error("callguard-gen: abi_headers: %s: %s (give its folder with --abi-dir)", c->header, msg);
            free(msg);
            rc = 1;
        }
        clang_disposeDiagnostic(d);
    }
    if (rc) return 1;
    /* The header's file: the first --abi-dir folder's, as the include found it. */
    CXFile hf = NULL;
    for (size_t i = 0; i < abidirs->n && !hf; i++) {
        char *path = xasprintf("%s/%s", abidirs->v[i], c->header);
        hf = clang_getFile(c->tu, path);
        free(path);
    }
    if (!hf) {
        gen_error("callguard-gen: abi_headers: %s is not in an --abi-dir folder", c->header);
        return 1;
    }
    c->dir = file_dir(hf);
    clang_visitChildren(clang_getTranslationUnitCursor(c->tu), on_decl, c);
    return 0;
}

static int has_prefix(const policy *p, const char *name)
{
    for (size_t i = 0; i < p->prefixes.n; i++)
        if (strncmp(name, p->prefixes.v[i], strlen(p->prefixes.v[i])) == 0) return 1;
    return 0;
}

static gen_func *find_func(gen_api *api, const char *name)
{
    for (size_t i = 0; i < api->nfuncs; i++)
        if (strcmp(api->funcs[i].name, name) == 0) return &api->funcs[i];
    return NULL;
}

/* This ABI's functions: each checked against the wrapper it has, or added. */
static int merge_one(const abi_ctx *c, gen_api *api)
{
    int rc = 0;
    for (size_t i = 0; i < c->nfns && !rc; i++) {
        CXCursor cur = c->fns[i];
        char *name = str(clang_getCursorSpelling(cur));
        CXType t = clang_getCursorType(cur);
        gen_func *have = find_func(api, name);
        if (!has_prefix(c->p, name) || in_list(&c->p->passthrough, name) || in_list(&api->passthrough, name)) {
            /* not an entry point, or forwarded untouched */
        } else if (have) {
            rc = check_same(c, cur, have);
        } else if (clang_Cursor_getStorageClass(cur) != CX_SC_Static && t.kind == CXType_FunctionProto &&
                   !clang_isFunctionTypeVariadic(t)) {
            gen_func f;
            rc = build_neutral(c, cur, name, &f);
            if (!rc) {
                api->funcs = xrealloc(api->funcs, (api->nfuncs + 1) * sizeof *api->funcs);
                api->funcs[api->nfuncs++] = f;
            } else {
                gen_func_free(&f);
            }
        }
        free(name);
    }
    return rc;
}

int abi_merge(const policy *p, const strlist *abidirs, gen_api *api)
{
    if (!p->abi_headers.n) return 0;
    if (!abidirs->n) {
        gen_error("%s:%d: abi_headers = ...: give the folder that holds them with --abi-dir DIR", p->path, p->api_line);
        return 1;
    }
    CXIndex index = clang_createIndex(0, 0);
    size_t n = p->abi_headers.n;
    abi_ctx *c = calloc(n, sizeof *c);
    strlist handles = {0};
    int rc = 0;
    /* Every header first: a handle of one (mpi_abi.h's MPI_Session) is a handle in all (MPICH's
     * mpi.h, where it is an int). */
    for (size_t i = 0; i < n && !rc; i++) {
        c[i] = (abi_ctx){.p = p, .header = p->abi_headers.v[i], .handles = &handles};
        rc = parse_abi(&c[i], index, abidirs);
    }
    for (size_t i = 0; i < n && !rc; i++)
        rc = merge_one(&c[i], api);
    for (size_t i = 0; i < n; i++) {
        if (c[i].tu) clang_disposeTranslationUnit(c[i].tu);
        free(c[i].fns);
        free(c[i].dir);
    }
    free(c);
    strlist_free(&handles);
    clang_disposeIndex(index);
    return rc;
}
