/* Recording a stall. Runs only when a call has held the runtime for at
 * least the stall limit, so everything here may cost microseconds: the
 * thread's name, for CPython the threads waiting for the GIL (hang.c reads
 * them from /proc) and the file, line and function that made the call,
 * read from the interpreter's frames: the import machinery's frozen frames
 * are skipped (an import's stall names the `import` line, and the file of
 * the module being imported), and a frame of the standard library also
 * names the first frame outside it. The per-call note for hang reports
 * (cgi_where_note) reads only the top frame, as before.
 *
 * The interpreter is read only where that is safe: this thread holds the
 * GIL (it never let go of it during the call: cgi_py_holds() checks it
 * again), and the interpreter is initialized and not finalizing
 * (Py_IsInitialized(), which cgi_py_holds() skips on 3.11: python.h). The
 * frame functions are looked up like the adapter's, with dlsym: no link
 * dependency on libpython, and nothing read when one is missing. A pending
 * exception of the program is set aside and put back. */
#define _GNU_SOURCE
#include "stall.h"

#include "clock.h"
#include "python.h"
#include "stats.h"
#include "watchdog.h"

#include "probe.h"
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct {
    void *(*get_frame)(void);                /* PyEval_GetFrame: borrowed */
    void *(*frame_code)(void *);             /* PyFrame_GetCode: new reference */
    int (*frame_line)(void *);               /* PyFrame_GetLineNumber */
    void *(*get_attr)(void *, const char *); /* PyObject_GetAttrString: new reference */
    const char *(*utf8)(void *);             /* PyUnicode_AsUTF8 */
    void (*decref)(void *);                  /* Py_DecRef */
    void (*err_fetch)(void **, void **, void **);
    void (*err_restore)(void *, void *, void *);
    void (*err_clear)(void);
    int (*frame_lasti)(void *);                 /* PyFrame_GetLasti (3.11+): NULL before */
    void *(*frame_back)(void *);                /* PyFrame_GetBack: new reference */
    void *(*sys_get)(const char *);             /* PySys_GetObject: borrowed */
    void *(*dict_get)(void *, const char *);    /* PyDict_GetItemString: borrowed */
    void *(*mapping_get)(void *, const char *); /* PyMapping_GetItemString: new reference */
    int ok;
} cgi_pyf;
static pthread_once_t cgi_pyf_once = PTHREAD_ONCE_INIT;

static void cgi_pyf_lookup(void)
{
    *(void **)&cgi_pyf.get_frame = cgi_probe_sym(RTLD_DEFAULT, "PyEval_GetFrame");
    *(void **)&cgi_pyf.frame_code = cgi_probe_sym(RTLD_DEFAULT, "PyFrame_GetCode");
    *(void **)&cgi_pyf.frame_line = cgi_probe_sym(RTLD_DEFAULT, "PyFrame_GetLineNumber");
    *(void **)&cgi_pyf.get_attr = cgi_probe_sym(RTLD_DEFAULT, "PyObject_GetAttrString");
    *(void **)&cgi_pyf.utf8 = cgi_probe_sym(RTLD_DEFAULT, "PyUnicode_AsUTF8");
    *(void **)&cgi_pyf.decref = cgi_probe_sym(RTLD_DEFAULT, "Py_DecRef");
    *(void **)&cgi_pyf.err_fetch = cgi_probe_sym(RTLD_DEFAULT, "PyErr_Fetch");
    *(void **)&cgi_pyf.err_restore = cgi_probe_sym(RTLD_DEFAULT, "PyErr_Restore");
    *(void **)&cgi_pyf.err_clear = cgi_probe_sym(RTLD_DEFAULT, "PyErr_Clear");
    *(void **)&cgi_pyf.frame_lasti = cgi_probe_sym(RTLD_DEFAULT, "PyFrame_GetLasti");
    *(void **)&cgi_pyf.frame_back = cgi_probe_sym(RTLD_DEFAULT, "PyFrame_GetBack");
    *(void **)&cgi_pyf.sys_get = cgi_probe_sym(RTLD_DEFAULT, "PySys_GetObject");
    *(void **)&cgi_pyf.dict_get = cgi_probe_sym(RTLD_DEFAULT, "PyDict_GetItemString");
    *(void **)&cgi_pyf.mapping_get = cgi_probe_sym(RTLD_DEFAULT, "PyMapping_GetItemString");
    cgi_pyf.ok = cgi_pyf.get_frame && cgi_pyf.frame_code && cgi_pyf.frame_line && cgi_pyf.get_attr && cgi_pyf.utf8 &&
                 cgi_pyf.decref && cgi_pyf.err_fetch && cgi_pyf.err_restore && cgi_pyf.err_clear;
}

static void cgi_py_str_attr(void *obj, const char *attr, char *out, size_t cap)
{
    void *v = cgi_pyf.get_attr(obj, attr);
    const char *s = v ? cgi_pyf.utf8(v) : NULL;
    if (s) snprintf(out, cap, "%s", s);
    if (v) cgi_pyf.decref(v);
    cgi_pyf.err_clear();
}

/* The standard library's folder (sys._stdlib_dir from 3.11, else the
 * folder of the os module); "" when not known. Found at the first stall,
 * under the GIL, which every caller holds. */
static char cgi_stdlib[256];
static int cgi_stdlib_looked;

static void cgi_stdlib_find(void)
{
    cgi_stdlib_looked = 1;
    if (!cgi_pyf.sys_get) return;
    void *dir = cgi_pyf.sys_get("_stdlib_dir");
    const char *s = dir ? cgi_pyf.utf8(dir) : NULL;
    if (s) {
        snprintf(cgi_stdlib, sizeof cgi_stdlib, "%s", s);
    } else if (cgi_pyf.dict_get) {
        void *mods = cgi_pyf.sys_get("modules");
        void *os = mods ? cgi_pyf.dict_get(mods, "os") : NULL;
        if (os) cgi_py_str_attr(os, "__file__", cgi_stdlib, sizeof cgi_stdlib);
        char *slash = strrchr(cgi_stdlib, '/');
        if (slash)
            *slash = '\0';
        else
            cgi_stdlib[0] = '\0';
    }
    cgi_pyf.err_clear();
}

/* Is file in the standard library (and not in a site-packages under it)? */
static int cgi_in_stdlib(const char *file)
{
    size_t n = strlen(cgi_stdlib);
    return n && strncmp(file, cgi_stdlib, n) == 0 && file[n] == '/' && !strstr(file + n, "/site-packages/") &&
           !strstr(file + n, "/dist-packages/");
}

/* The import machinery's frames: `<frozen importlib._bootstrap>` and the like. */
static int cgi_frozen(const char *file) { return strncmp(file, "<frozen ", 8) == 0; }

/* The file of the module an import machinery frame is loading: its local
 * `spec` (_load_unlocked, module_from_spec, create_module), spec.origin. */
static void cgi_import_origin(void *frame, char *out, size_t cap)
{
    if (!cgi_pyf.mapping_get) return;
    void *locals = cgi_pyf.get_attr(frame, "f_locals");
    void *spec = locals ? cgi_pyf.mapping_get(locals, "spec") : NULL;
    char origin[512] = "";
    if (spec) cgi_py_str_attr(spec, "origin", origin, sizeof origin);
    if (strlen(origin) < cap) memcpy(out, origin, strlen(origin) + 1); /* a path cut short would be wrong */
    if (spec) cgi_pyf.decref(spec);
    if (locals) cgi_pyf.decref(locals);
    cgi_pyf.err_clear();
}

/* Walks from the top frame: the first frame not of the import machinery
 * is the stall's place; when that one is in the standard library, the
 * first frame outside it too. At most 256 frames. */
static void cgi_python_walk(cgi_stall *st, void *frame)
{
    if (!cgi_stdlib_looked) cgi_stdlib_find();
    void *cur = frame, *owned = NULL;
    int located = 0;
    for (int depth = 0; cur && depth < 256; depth++) {
        char file[256] = "";
        void *code = cgi_pyf.frame_code(cur);
        if (code) cgi_py_str_attr(code, "co_filename", file, sizeof file);
        if (cgi_frozen(file)) {
            if (!located && !st->import_file[0]) cgi_import_origin(cur, st->import_file, sizeof st->import_file);
        } else if (!located) {
            located = 1;
            snprintf(st->py_file, sizeof st->py_file, "%s", file);
            st->py_line = cgi_pyf.frame_line(cur);
            if (code) cgi_py_str_attr(code, "co_name", st->py_func, sizeof st->py_func);
            if (!cgi_in_stdlib(file)) depth = 256;
        } else if (!cgi_in_stdlib(file)) {
            /* A path too long to keep whole is not kept: one cut short would be wrong. */
            if (strlen(file) < sizeof st->from_file) memcpy(st->from_file, file, strlen(file) + 1);
            st->from_line = cgi_pyf.frame_line(cur);
            if (code) cgi_py_str_attr(code, "co_name", st->from_func, sizeof st->from_func);
            depth = 256;
        }
        if (code) cgi_pyf.decref(code);
        void *back = depth < 256 && cgi_pyf.frame_back ? cgi_pyf.frame_back(cur) : NULL;
        if (owned) cgi_pyf.decref(owned);
        cur = owned = back;
    }
    if (owned) cgi_pyf.decref(owned);
}

/* Where this thread's Python code made the call; leaves st's fields empty
 * when not known. */
static void cgi_python_where(cgi_stall *st)
{
    pthread_once(&cgi_pyf_once, cgi_pyf_lookup);
    if (!cgi_pyf.ok || !cgi_py_holds() || !cgi_py.is_initialized()) return;
    void *type, *value, *tb;
    cgi_pyf.err_fetch(&type, &value, &tb);
    void *frame = cgi_pyf.get_frame();
    if (frame) cgi_python_walk(st, frame);
    cgi_pyf.err_clear();
    cgi_pyf.err_restore(type, value, tb);
}

/* For a hang report: the Python line of the call `seq` about to enter
 * (the thread holds the GIL; hang reports are on). Only pointers and a
 * number are stored: the file name's UTF-8 stays alive in its code object
 * as long as the frame that makes the call, so the watchdog may copy it
 * while that call is in flight (it checks where_seq around the copy). One
 * reference is kept: to the last code object (the file name's owner); a
 * pending exception is set aside and put back around the name's lookup. */
void cgi_where_note(cgi_slot *slot, uint64_t seq)
{
    pthread_once(&cgi_pyf_once, cgi_pyf_lookup);
    if (!cgi_pyf.ok || !cgi_py.is_initialized()) return;
    void *frame = cgi_pyf.get_frame();
    const char *file = NULL;
    int line = 0;
    if (frame) {
        /* The line of an instruction is found by scanning the code's line
         * table (PyCode_Addr2Line): 8,000 instructions a call from a
         * module's top level here. A loop calls from one instruction: its
         * line is computed once. */
        int lasti = cgi_pyf.frame_lasti ? cgi_pyf.frame_lasti(frame) : -1;
        void *code = cgi_pyf.frame_code(frame);
        if (code && code == slot->py_code && lasti >= 0 && lasti == slot->py_lasti) {
            line = atomic_load_explicit(&slot->py_line, memory_order_relaxed);
            cgi_pyf.decref(code);
        } else if (code) {
            line = cgi_pyf.frame_line(frame);
            if (code != slot->py_code) {
                /* A new code object: its file name, kept with a reference
                 * to it (so the name stays valid) until the next one. */
                void *type, *value, *tb;
                cgi_pyf.err_fetch(&type, &value, &tb);
                void *name = cgi_pyf.get_attr(code, "co_filename");
                const char *utf8 = name ? cgi_pyf.utf8(name) : NULL;
                if (name) cgi_pyf.decref(name); /* the code object keeps it */
                cgi_pyf.err_clear();
                cgi_pyf.err_restore(type, value, tb);
                if (slot->py_code) cgi_pyf.decref(slot->py_code);
                slot->py_code = code, slot->py_code_file = utf8;
            } else {
                cgi_pyf.decref(code);
            }
            slot->py_lasti = lasti;
        }
        file = slot->py_code_file;
    } else {
        slot->py_lasti = -1;
    }
    atomic_store_explicit(&slot->where_seq, 0, memory_order_relaxed);
    atomic_store_explicit(&slot->py_file, file, memory_order_relaxed);
    atomic_store_explicit(&slot->py_line, line, memory_order_relaxed);
    atomic_store_explicit(&slot->where_seq, frame ? seq : 0, memory_order_release);
}

void cgi_stall_record(const cg_site *s, const cg_adapter *held, uint64_t entered, uint64_t call_ns, uint64_t wait_ns)
{
    cgi_stall st;
    memset(&st, 0, sizeof st);
    st.tid = (int32_t)syscall(SYS_gettid);
    st.ns = call_ns + wait_ns;
    st.call_ns = call_ns;
    st.wait_ns = wait_ns;
    st.at_ns = cgi_ticks_ns(entered - cgi_clk.tick0);
    snprintf(st.api, sizeof st.api, "%s", s->layer->api);
    snprintf(st.name, sizeof st.name, "%s", s->name);
    prctl(PR_GET_NAME, st.thread);
    snprintf(st.runtime, sizeof st.runtime, "%s", held->name ? held->name : "?");
    st.waiters = -1;
    if (held == &cgi_cpython_adapter) {
        st.waiters = cgi_hang_gil_waiters();
        cgi_python_where(&st);
    }
    cgi_stats_keep_stall(&st);
}
