/* The names of a process's Python threads, read from memory (pynames.h).
 *
 * Why dicts are walked entry by entry instead of looked up by hash: a str's
 * hash is keyed per process (PYTHONHASHSEED), so the reader cannot compute
 * the slot of "threading"; it compares each key's characters (a key of
 * another length costs one read of its head). sys.modules holds a few
 * hundred entries: well under a millisecond, and only when asked.
 *
 * Why "never wrong": every object's type is checked (a dict is a dict, a
 * key a str, an ident an int) and every count is bounded before it is
 * used; a name is reported only for an ident found in _active. */
#define _GNU_SOURCE
#include "pynames.h"

#include "probe.h"
#include "pyread.h"
#include "selfread.h"

#include <string.h>

/* One version's layout (pynames_offsets.h): -1 where it has no such field. */
enum { CGI_NAMES_DICTOFFSET, CGI_NAMES_VALUES_APART, CGI_NAMES_DICT_OR_VALUES, CGI_NAMES_INLINE_VALUES };
typedef struct cgi_pynames_table {
    int minor;
    long interp_modules, module_dict, dict_keys, dict_values;
    long keys_size, keys_log2, keys_index_bytes, keys_kind, keys_nentries, keys_indices;
    long unicode_entry_size, unicode_entry_key, unicode_entry_value, values_values;
    long entry_size, entry_key, entry_value;
    long type_flags, type_dictoffset, type_basicsize, heaptype_cached_keys;
    long values_capacity, values_valid;
    int instance_dict;
    long managed_dict, managed_values, flag_inline_values, flag_managed_dict;
    long long_size, long_tagged, long_digits, long_shift;
} cgi_pynames_table;

#include "pynames_offsets.h"

enum { LIMIT_ENTRIES = 1 << 20, OBJECT_TYPE = 8, DICT_KEYS_GENERAL = 0 };

static struct {
    const cgi_pynames_table *t; /* NULL: this version's layout is not known here */
    uintptr_t dict_type, long_type, module_type, none;
} N;

void cgi_pynames_prepare(int minor)
{
    for (size_t i = 0; i < sizeof cgi_pynames_tables / sizeof *cgi_pynames_tables; i++)
        if (cgi_pynames_tables[i].minor == minor) N.t = &cgi_pynames_tables[i];
    N.dict_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyDict_Type");
    N.long_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyLong_Type");
    N.module_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyModule_Type");
    N.none = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "_Py_NoneStruct");
    if (!N.dict_type || !N.long_type || !N.module_type) N.t = NULL;
}

static int peek(uintptr_t addr, void *buf, size_t len) { return cgi_selfread(addr, buf, len); }

static uintptr_t ptr_at(uintptr_t addr)
{
    uintptr_t v;
    return addr && peek(addr, &v, sizeof v) == 0 ? v : 0;
}

static uintptr_t type_of(uintptr_t obj) { return ptr_at(obj ? obj + OBJECT_TYPE : 0); }

/* ---- dicts ---------------------------------------------------------------- */

/* A dict's entries: `n` of `esize` bytes from `entries`, the key and the
 * value at ekey and evalue; a split table's values apart, at `values`. */
typedef struct dict_view {
    uintptr_t entries, values;
    long n, esize, ekey, evalue;
} dict_view;

/* The entries of keys object `keys`; `values` the values array of a split
 * table (its PyDictValues), or 0. 0, or -1 where a count is out of bounds. */
static int view_keys(uintptr_t keys, uintptr_t values, dict_view *d)
{
    const cgi_pynames_table *t = N.t;
    unsigned char b[64];
    if (!keys || (size_t)t->keys_indices > sizeof b || peek(keys, b, (size_t)t->keys_indices) != 0) return -1;
    long size, index_bytes, n;
    int general = 1;
    if (t->keys_log2) {
        unsigned log2 = b[t->keys_size], log2_bytes = b[t->keys_index_bytes];
        if (log2 > 30 || log2_bytes > 33 || log2_bytes < log2) return -1;
        size = 1L << log2, index_bytes = 1L << log2_bytes, general = b[t->keys_kind] == DICT_KEYS_GENERAL;
    } else {
        memcpy(&size, b + t->keys_size, sizeof size);
        if (size <= 0 || size > (1L << 30) || (size & (size - 1))) return -1;
        index_bytes = size * (size <= 0xff ? 1 : size <= 0xffff ? 2 : 4);
    }
    memcpy(&n, b + t->keys_nentries, sizeof n);
    if (n < 0 || n > size || n > LIMIT_ENTRIES) return -1;
    unsigned char capacity;
    if (values && t->values_capacity >= 0) {
        /* 3.13: the values array says how many it has room for. */
        if (peek(values + (uintptr_t)t->values_capacity, &capacity, 1) != 0) return -1;
        if (n > capacity) n = capacity;
    }
    d->entries = keys + (uintptr_t)t->keys_indices + (uintptr_t)index_bytes;
    d->values = values ? values + (uintptr_t)t->values_values : 0;
    d->n = n;
    d->esize = general ? t->entry_size : t->unicode_entry_size;
    d->ekey = general ? t->entry_key : t->unicode_entry_key;
    d->evalue = general ? t->entry_value : t->unicode_entry_value;
    return d->esize > 0 && d->esize <= 64 ? 0 : -1;
}

/* A dict object's entries; -1 where it is not a dict. */
static int view_dict(uintptr_t dict, dict_view *d)
{
    unsigned char b[64];
    const cgi_pynames_table *t = N.t;
    if (!dict || peek(dict, b, (size_t)t->dict_values + 8) != 0) return -1;
    uintptr_t type, keys, values;
    memcpy(&type, b + OBJECT_TYPE, sizeof type);
    memcpy(&keys, b + t->dict_keys, sizeof keys);
    memcpy(&values, b + t->dict_values, sizeof values);
    return type == N.dict_type ? view_keys(keys, values, d) : -1;
}

/* Calls fn(key, value, arg) for each entry in use, in order, until it
 * returns nonzero (which is returned); 0 at the end, -1 where a read failed. */
static int each_entry(const dict_view *d, int (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
    unsigned char chunk[2048];
    long per = (long)sizeof chunk / d->esize;
    for (long i = 0; i < d->n; i += per) {
        long k = d->n - i < per ? d->n - i : per;
        if (peek(d->entries + (uintptr_t)(i * d->esize), chunk, (size_t)(k * d->esize)) != 0) return -1;
        for (long j = 0; j < k; j++) {
            uintptr_t key, value;
            memcpy(&key, chunk + j * d->esize + d->ekey, sizeof key);
            memcpy(&value, chunk + j * d->esize + d->evalue, sizeof value);
            if (d->values && peek(d->values + (uintptr_t)(i + j) * 8, &value, sizeof value) != 0) return -1;
            if (!key || !value) continue; /* a deleted entry, or no value in this split table */
            int r = fn(key, value, arg);
            if (r) return r;
        }
    }
    return 0;
}

typedef struct lookup {
    const char *name;
    uintptr_t found;
} lookup;

static int match(uintptr_t key, uintptr_t value, void *arg)
{
    lookup *l = arg;
    int r = cgi_pyread_str_is(key, l->name);
    if (r == 1) l->found = value;
    return r;
}

/* The value of the str key `name`; 0 when absent or unreadable. */
static uintptr_t get(const dict_view *d, const char *name)
{
    lookup l = {name, 0};
    return each_entry(d, match, &l) == 1 ? l.found : 0;
}

static uintptr_t dict_get(uintptr_t dict, const char *name)
{
    dict_view d;
    return view_dict(dict, &d) == 0 ? get(&d, name) : 0;
}

/* ---- instances and ints -------------------------------------------------------- */

/* An instance's attribute `name` from its own attributes (not its class's):
 * its dict, or its values where they are kept apart from one. */
static uintptr_t attr(uintptr_t obj, const char *name)
{
    const cgi_pynames_table *t = N.t;
    uintptr_t type = type_of(obj);
    unsigned long flags;
    long dictoffset, basicsize;
    if (!type || peek(type + (uintptr_t)t->type_flags, &flags, sizeof flags) != 0 ||
        peek(type + (uintptr_t)t->type_dictoffset, &dictoffset, sizeof dictoffset) != 0 ||
        peek(type + (uintptr_t)t->type_basicsize, &basicsize, sizeof basicsize) != 0)
        return 0;
    int managed = t->flag_managed_dict && (flags & (unsigned long)t->flag_managed_dict);
    if (!managed) return dictoffset > 0 && dictoffset < 4096 ? dict_get(ptr_at(obj + (uintptr_t)dictoffset), name) : 0;
    uintptr_t keys = ptr_at(type + (uintptr_t)t->heaptype_cached_keys), values = 0, dict = 0;
    if (t->instance_dict == CGI_NAMES_VALUES_APART) {
        values = ptr_at(obj + (uintptr_t)t->managed_values);
        if (!values) dict = ptr_at(obj + (uintptr_t)t->managed_dict);
    } else if (t->instance_dict == CGI_NAMES_DICT_OR_VALUES) {
        uintptr_t v = ptr_at(obj + (uintptr_t)t->managed_dict);
        if (v & 1)
            values = v + 1; /* the tag: stored one below the values (_PyDictOrValues_GetValues) */
        else
            dict = v;
    } else if (t->instance_dict == CGI_NAMES_INLINE_VALUES) {
        dict = ptr_at(obj + (uintptr_t)t->managed_dict);
        unsigned char valid = 0;
        if (!dict && (flags & (unsigned long)t->flag_inline_values) && basicsize > 0 && basicsize < 4096 &&
            peek(obj + (uintptr_t)basicsize + (uintptr_t)t->values_valid, &valid, 1) == 0 && valid == 1)
            values = obj + (uintptr_t)basicsize;
    }
    if (dict) return dict_get(dict, name);
    dict_view d;
    return values && view_keys(keys, values, &d) == 0 ? get(&d, name) : 0;
}

/* A non-negative int that fits 64 bits; -1 where obj is no such int. */
static int read_long(uintptr_t obj, unsigned long *v)
{
    const cgi_pynames_table *t = N.t;
    unsigned char b[48];
    if (!obj || peek(obj, b, (size_t)t->long_digits + 12) != 0) return -1;
    uintptr_t type;
    long size;
    memcpy(&type, b + OBJECT_TYPE, sizeof type);
    memcpy(&size, b + t->long_size, sizeof size);
    if (type != N.long_type) return -1;
    if (t->long_tagged) {
        if ((size & 3) == 2) return -1; /* negative */
        size = (long)((unsigned long)size >> 3);
    }
    if (size < 0 || size > 3) return -1;
    unsigned long x = 0;
    for (long i = size - 1; i >= 0; i--) {
        uint32_t digit;
        memcpy(&digit, b + t->long_digits + i * 4, sizeof digit);
        if (x >> (64 - t->long_shift)) return -1; /* past 64 bits */
        x = (x << t->long_shift) | digit;
    }
    *v = x;
    return 0;
}

/* ---- threading ----------------------------------------------------------- */

typedef struct names_out {
    cgi_pyname *out;
    int max, n;
} names_out;

static int one_thread(uintptr_t key, uintptr_t thread, void *arg)
{
    names_out *o = arg;
    if (o->n == o->max) return 1;
    cgi_pyname *p = &o->out[o->n];
    unsigned long native;
    if (read_long(key, &p->ident) != 0) return 0;
    if (cgi_pyread_str(attr(thread, "_name"), p->name, sizeof p->name) != 0) return 0;
    uintptr_t id = attr(thread, "_native_id");
    p->native_id = id && id != N.none && read_long(id, &native) == 0 && native < (1ul << 31) ? (pid_t)native : 0;
    o->n++;
    return 0;
}

int cgi_pynames_read(uintptr_t interp, cgi_pyname *out, int max, int *n, char *stdlib, size_t cap)
{
    *n = 0;
    if (cap) stdlib[0] = '\0';
    if (!N.t || !cgi_pyread_minor()) return -1;
    uintptr_t modules = ptr_at(interp + (uintptr_t)N.t->interp_modules);
    uintptr_t threading = dict_get(modules, "threading");
    if (!threading || type_of(threading) != N.module_type) return -1;
    uintptr_t globals = ptr_at(threading + (uintptr_t)N.t->module_dict);
    if (cap > 1 && cgi_pyread_str(dict_get(globals, "__file__"), stdlib, cap) == 0) {
        char *slash = strrchr(stdlib, '/');
        if (slash && stdlib[0] != '.')
            *slash = '\0';
        else
            stdlib[0] = '\0'; /* cut short ("..."), or no folder */
    }
    dict_view d;
    names_out o = {out, max, 0};
    if (view_dict(dict_get(globals, "_active"), &d) != 0 || each_entry(&d, one_thread, &o) < 0) return -1;
    *n = o.n;
    return 0;
}
