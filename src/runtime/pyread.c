/* Reading another thread's Python frames without the GIL (pyread.h).
 *
 * Why every read goes through selfread.h (process_vm_readv on our own pid,
 * or pread on /proc/self/mem where that is refused or a seccomp filter is
 * present): the thread read may leave its call, free a frame or end while
 * we read, and a plain load through a stale pointer can fault in the
 * program. Either way copies what is mapped and fails on what is not, with
 * no signal; it takes no lock the program can hold and allocates nothing.
 *
 * Why "never wrong": every object is checked before it is believed (a code
 * object's type is PyCode_Type, a string's is PyUnicode_Type, a thread
 * state points back at its interpreter, an instruction lies inside its code)
 * and the top frame is read again at the end; a check that fails makes the
 * whole answer CGI_PYREAD_CHANGED. Every loop is bounded: the thread lists,
 * the frame chain (a cycle ends at the bound), the line table, the strings. */
#define _GNU_SOURCE
#include "pyread.h"

#include "probe.h"
#include "pynames.h"
#include "selfread.h"

#include <elf.h>
#include <link.h>
#include <sched.h>
#include <string.h>

/* One layout: where each field pyread reads lies, in bytes; -1 where the
 * version has no such field. The generated table (3.9-3.12) and the debug
 * offsets (3.13+) both fill one. */
typedef struct cgi_pyread_table {
    int minor;
    long runtime_interpreters_head, interp_next, interp_threads_head;
    long tstate_next, tstate_interp, tstate_thread_id, tstate_native_thread_id, tstate_frame;
    long cframe_current_frame; /* 3.11, 3.12: tstate->cframe->current_frame */
    long frame_previous, frame_code, frame_instr, frame_owner;
    long code_adaptive; /* 3.11+: the instructions, inside the code object */
    long code_filename, code_name, code_firstlineno, code_linetable;
    long object_type, bytes_size, bytes_data;
    long unicode_length, unicode_state, unicode_ascii_size, unicode_compact_size;
} cgi_pyread_table;

/* Where the GIL's state lies: in _PyRuntime (3.9-3.11), or behind a
 * pointer in each interpreter (3.12+: the interpreter's own `_gil`, or
 * the main interpreter's, which lies inside _PyRuntime). */
typedef struct cgi_pyread_gil_table {
    int minor;
    long runtime_gil, interp_gil_ptr, interp_gil_storage;
    long gil_holder, gil_locked, gil_switches;
} cgi_pyread_gil_table;

#include "pyread_offsets.h"

enum { LIMIT_INTERPRETERS = 256, LIMIT_THREADS = 65536, LIMIT_SKIPPED = 64, LIMIT_LINETABLE = 1 << 20 };
enum { FRAME_OWNED_BY_CSTACK = 3 }; /* 3.12+: the C stack's entry frames, not Python code */
#define BLOCK 256                   /* bytes read of a thread state, a frame, a code object */

static struct {
    _Atomic int state; /* a cgi_pyread_result; OK once filled */
    cgi_pyread_table t;
    uintptr_t runtime, runtime_size;
    uintptr_t code_type, unicode_type, bytes_type, frame_type; /* frame_type: 3.9, 3.10 */
    const cgi_pyread_gil_table *gil;       /* NULL: where the GIL lies is not known for this version */
    int tagged;                            /* 3.14: f_executable is a stack reference, its low bits a tag */
    size_t ts_need, frame_need, code_need; /* bytes read of each: up to its last field read */
    atomic_flag preparing;
} L = {.state = CGI_PYREAD_NOT_READY, .preparing = ATOMIC_FLAG_INIT};

/* ---- reading ---------------------------------------------------------------- */

/* A series of reads (one answer) begins with cgi_selfread_begin. */
static int peek(uintptr_t addr, void *buf, size_t len) { return cgi_selfread(addr, buf, len); }

static int peek_ptr(uintptr_t addr, uintptr_t *v) { return peek(addr, v, sizeof *v); }

static uintptr_t at_ptr(const unsigned char *block, long off)
{
    uintptr_t v;
    memcpy(&v, block + off, sizeof v);
    return v;
}

static int at_int(const unsigned char *block, long off)
{
    int v;
    memcpy(&v, block + off, sizeof v);
    return v;
}

/* ---- strings -------------------------------------------------------------- */

static size_t put_utf8(char *out, size_t room, uint32_t c)
{
    unsigned char b[4];
    size_t n;
    if (c < 0x80)
        b[0] = (unsigned char)c, n = 1;
    else if (c < 0x800)
        b[0] = (unsigned char)(0xC0 | c >> 6), b[1] = (unsigned char)(0x80 | (c & 63)), n = 2;
    else if (c < 0x10000)
        b[0] = (unsigned char)(0xE0 | c >> 12), b[1] = (unsigned char)(0x80 | ((c >> 6) & 63)),
        b[2] = (unsigned char)(0x80 | (c & 63)), n = 3;
    else
        b[0] = (unsigned char)(0xF0 | c >> 18), b[1] = (unsigned char)(0x80 | ((c >> 12) & 63)),
        b[2] = (unsigned char)(0x80 | ((c >> 6) & 63)), b[3] = (unsigned char)(0x80 | (c & 63)), n = 4;
    if (n > room) return 0;
    memcpy(out, b, n);
    return n;
}

/* A compact str object into `out` as UTF-8 (its tail after "..." where it
 * does not fit). Returns 0, or -1 where it is not a compact str. */
static int read_str(uintptr_t obj, char *out, size_t cap)
{
    unsigned char head[BLOCK];
    if (!obj || peek(obj, head, (size_t)L.t.unicode_compact_size) != 0) return -1;
    if (at_ptr(head, L.t.object_type) != L.unicode_type) return -1;
    long len;
    unsigned state;
    memcpy(&len, head + L.t.unicode_length, sizeof len);
    memcpy(&state, head + L.t.unicode_state, sizeof state);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (!compact || (kind != 1 && kind != 2 && kind != 4) || len < 0 || len > (1L << 30)) return -1;
    uintptr_t data = obj + (uintptr_t)(ascii ? L.t.unicode_ascii_size : L.t.unicode_compact_size);
    /* The most characters that surely fit: ASCII one byte each, else four. */
    long fit = (long)(cap - 1) / (ascii ? 1 : 4), from = 0;
    size_t o = 0;
    if (len > fit) {
        fit = (long)(cap - 4) / (ascii ? 1 : 4), from = len - fit;
        memcpy(out, "...", 3), o = 3;
    }
    unsigned char chunk[128];
    for (long i = from; i < len;) {
        long n = len - i < (long)(sizeof chunk / kind) ? len - i : (long)(sizeof chunk / kind);
        if (peek(data + (uintptr_t)i * kind, chunk, (size_t)n * kind) != 0) return -1;
        for (long k = 0; k < n; k++) {
            uint32_t c = chunk[k * kind];
            if (kind == 2) c = (uint32_t)chunk[k * 2] | (uint32_t)chunk[k * 2 + 1] << 8;
            if (kind == 4) memcpy(&c, chunk + k * 4, 4);
            size_t w = put_utf8(out + o, cap - 1 - o, c);
            if (!w) return -1;
            o += w;
        }
        i += n;
    }
    out[o] = 0;
    return 0;
}

int cgi_pyread_str(uintptr_t obj, char *out, size_t cap)
{
    return atomic_load_explicit(&L.state, memory_order_acquire) == CGI_PYREAD_OK ? read_str(obj, out, cap) : -1;
}

int cgi_pyread_str_is(uintptr_t obj, const char *want)
{
    unsigned char head[BLOCK];
    if (atomic_load_explicit(&L.state, memory_order_acquire) != CGI_PYREAD_OK || !obj ||
        peek(obj, head, (size_t)L.t.unicode_ascii_size) != 0 || at_ptr(head, L.t.object_type) != L.unicode_type)
        return -1;
    long len;
    unsigned state;
    memcpy(&len, head + L.t.unicode_length, sizeof len);
    memcpy(&state, head + L.t.unicode_state, sizeof state);
    size_t n = strlen(want);
    /* Compact ASCII only: every name looked for is ASCII, so another kind is another string. */
    if (!((state >> 5) & 1) || !((state >> 6) & 1) || len != (long)n) return 0;
    char data[128];
    if (n > sizeof data || peek(obj + (uintptr_t)L.t.unicode_ascii_size, data, n) != 0) return -1;
    return memcmp(data, want, n) == 0;
}

int cgi_pyread_minor(void)
{
    return atomic_load_explicit(&L.state, memory_order_acquire) == CGI_PYREAD_OK ? L.t.minor : 0;
}

/* ---- line tables ---------------------------------------------------------- */

/* The bytes of a line table, read a block at a time. */
typedef struct table_reader {
    uintptr_t at, end;
    unsigned char buf[BLOCK];
    size_t pos, len;
} table_reader;

static int open_table(table_reader *r, uintptr_t bytes_obj)
{
    unsigned char head[64];
    if (!bytes_obj || peek(bytes_obj, head, (size_t)L.t.bytes_data) != 0) return -1;
    if (at_ptr(head, L.t.object_type) != L.bytes_type) return -1;
    long size;
    memcpy(&size, head + L.t.bytes_size, sizeof size);
    if (size < 0 || size > LIMIT_LINETABLE) return -1;
    r->at = bytes_obj + (uintptr_t)L.t.bytes_data, r->end = r->at + (uintptr_t)size, r->pos = r->len = 0;
    return 0;
}

/* The next byte without taking it; -1 at the end, -2 where a read failed. */
static int look(table_reader *r)
{
    if (r->pos == r->len) {
        if (r->at == r->end) return -1;
        size_t n = r->end - r->at < sizeof r->buf ? r->end - r->at : sizeof r->buf;
        if (peek(r->at, r->buf, n) != 0) return -2;
        r->at += n, r->pos = 0, r->len = n;
    }
    return r->buf[r->pos];
}

static int take(table_reader *r)
{
    int b = look(r);
    if (b >= 0) r->pos++;
    return b;
}

/* Line results below: >= 1 a line, -1 no line (CPython says None), -2 the
 * table could not be read or is malformed. */
enum { NO_LINE = -1, BAD = -2 };

/* 3.9 co_lnotab: (address step, signed line step) pairs; addresses in bytes. */
static int line_lnotab(table_reader *r, int line, int addrq)
{
    for (int addr = 0;;) {
        int a = take(r), l;
        if (a == -1) return line;
        if (a < 0 || (l = take(r)) < 0) return BAD;
        addr += a;
        if (addr > addrq) return line;
        line += (signed char)l;
    }
}

/* 3.10 co_linetable (PEP 626): (address step, signed line step or -128 for
 * no line) pairs; addresses in bytes. */
static int line_pep626(table_reader *r, int line, int addrq)
{
    int end = 0, found = NO_LINE;
    while (end <= addrq) {
        int a = take(r), l;
        if (a == -1) return NO_LINE;
        if (a < 0 || (l = take(r)) < 0) return BAD;
        end += a;
        if ((signed char)l == -128)
            found = NO_LINE;
        else
            line += (signed char)l, found = line;
    }
    return found;
}

static int varint(table_reader *r, unsigned *v)
{
    int b = take(r);
    if (b < 0) return -1;
    *v = (unsigned)b & 63;
    for (unsigned shift = 6; b & 64; shift += 6) {
        if (shift > 30 || (b = take(r)) < 0) return -1;
        *v |= ((unsigned)b & 63) << shift;
    }
    return 0;
}

/* 3.11+ location table: an entry starts with a byte whose top bit is set,
 * code (bits 3-6) and length in code units (bits 0-2, + 1); codes 13 and 14
 * carry a signed line step, 10-12 a step of code - 10, 15 means no line. */
static int line_locations(table_reader *r, int line, int index)
{
    int end = 0, found = NO_LINE;
    while (end <= index) {
        int b = take(r);
        if (b == -1) return NO_LINE;
        if (b < 0 || !(b & 0x80)) return BAD;
        int code = (b >> 3) & 15, step = 0;
        if (code == 13 || code == 14) {
            unsigned u;
            if (varint(r, &u) != 0) return BAD;
            step = (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (code >= 10 && code <= 12) {
            step = code - 10;
        }
        for (int c; (c = look(r)) >= 0 && !(c & 0x80);)
            r->pos++;
        if (look(r) == -2) return BAD;
        end += (b & 7) + 1;
        if (code == 15)
            found = NO_LINE;
        else
            line += step, found = line;
    }
    return found;
}

/* ---- one frame ------------------------------------------------------------ */

/* A frame's code object, where it has one; its instruction: the byte
 * offset f_lasti (3.9, 3.10) or a pointer into the code (3.11+). */
typedef struct frame_view {
    uintptr_t previous, code, instr;
    int skip; /* not Python code: a C stack's entry frame */
} frame_view;

static int view_frame(uintptr_t frame, frame_view *v)
{
    unsigned char b[BLOCK];
    if (peek(frame, b, L.frame_need) != 0) return -1;
    if (L.frame_type && at_ptr(b, L.t.object_type) != L.frame_type) return -1;
    v->previous = at_ptr(b, L.t.frame_previous);
    v->code = at_ptr(b, L.t.frame_code);
    if (L.tagged) v->code &= ~(uintptr_t)3;
    v->instr = L.t.code_adaptive < 0 ? (uintptr_t)(long)at_int(b, L.t.frame_instr) : at_ptr(b, L.t.frame_instr);
    v->skip = L.t.frame_owner >= 0 && b[L.t.frame_owner] >= FRAME_OWNED_BY_CSTACK;
    return 0;
}

/* The line of `code` at the frame's instruction (NO_LINE, BAD as above). */
static int code_line(const unsigned char *co, uintptr_t code, uintptr_t instr, uintptr_t table)
{
    int first = at_int(co, L.t.code_firstlineno);
    table_reader r;
    if (open_table(&r, table) != 0) return BAD;
    if (L.t.minor == 9) return line_lnotab(&r, first, (int)(long)instr);
    if (L.t.minor == 10) return (long)instr < 0 ? first : line_pep626(&r, first, (int)(long)instr * 2);
    long units;
    memcpy(&units, co + L.t.bytes_size, sizeof units);
    intptr_t index = ((intptr_t)instr - (intptr_t)(code + (uintptr_t)L.t.code_adaptive)) / 2;
    if (index < -1 || index >= units || (instr & 1)) return BAD;
    return index < 0 ? first : line_locations(&r, first, (int)index);
}

/* Fills `out` from the code object and instruction; -1 where a check fails. */
static int read_frame(const frame_view *v, cgi_pyframe *out)
{
    unsigned char co[BLOCK];
    if (peek(v->code, co, L.code_need) != 0 || at_ptr(co, L.t.object_type) != L.code_type) return -1;
    int line = code_line(co, v->code, v->instr, at_ptr(co, L.t.code_linetable));
    if (line == BAD) return -1;
    out->line = line;
    if (read_str(at_ptr(co, L.t.code_filename), out->file, sizeof out->file) != 0) return -1;
    if (read_str(at_ptr(co, L.t.code_name), out->function, sizeof out->function) != 0) return -1;
    return 0;
}

/* ---- the thread ----------------------------------------------------------- */

/* The top frame of a thread state (through the cframe on 3.11 and 3.12). */
static int top_frame(uintptr_t tstate, uintptr_t *frame)
{
    if (peek_ptr(tstate + (uintptr_t)L.t.tstate_frame, frame) != 0) return -1;
    if (L.t.cframe_current_frame < 0 || !*frame) return 0;
    return peek_ptr(*frame + (uintptr_t)L.t.cframe_current_frame, frame);
}

static int matches(const unsigned char *ts, pid_t tid, unsigned long pthread_id)
{
    if (tid && L.t.tstate_native_thread_id >= 0) return at_int(ts, L.t.tstate_native_thread_id) == tid;
    return pthread_id && at_ptr(ts, L.t.tstate_thread_id) == pthread_id;
}

/* The thread state of that thread, in any interpreter: its address, or 0
 * with a result. Where a thread has several (one per interpreter), the
 * first that runs Python code. */
static uintptr_t find_thread(pid_t tid, unsigned long pthread_id, int *result)
{
    uintptr_t interp, found = 0;
    *result = CGI_PYREAD_CHANGED;
    if (peek_ptr(L.runtime + (uintptr_t)L.t.runtime_interpreters_head, &interp) != 0) return 0;
    int threads = 0;
    for (int i = 0; interp && i < LIMIT_INTERPRETERS; i++) {
        uintptr_t ts;
        if (peek_ptr(interp + (uintptr_t)L.t.interp_threads_head, &ts) != 0) return 0;
        for (; ts && threads < LIMIT_THREADS; threads++) {
            unsigned char b[BLOCK];
            if (peek(ts, b, L.ts_need) != 0 || at_ptr(b, L.t.tstate_interp) != interp) return 0;
            if (matches(b, tid, pthread_id)) {
                uintptr_t frame;
                if (top_frame(ts, &frame) != 0) return 0;
                if (frame) return ts;
                if (!found) found = ts;
            }
            ts = at_ptr(b, L.t.tstate_next);
        }
        if (ts || peek_ptr(interp + (uintptr_t)L.t.interp_next, &interp) != 0) return 0;
    }
    if (interp) return 0;
    *result = found ? CGI_PYREAD_OK : CGI_PYREAD_NO_THREAD;
    return found;
}

/* The frames of thread state ts, innermost first (at most max); *more: 1
 * when a frame of Python code lies past them. A result code. */
static int walk(uintptr_t ts, cgi_pyframe *out, int max, int *n, int *more)
{
    uintptr_t top, frame;
    int seen = 0, skipped = 0;
    *more = 0;
    if (top_frame(ts, &top) != 0) return CGI_PYREAD_CHANGED;
    frame_view first = {0}, v;
    frame = top;
    for (; frame && skipped <= LIMIT_SKIPPED; frame = v.previous) {
        if (view_frame(frame, &v) != 0) return CGI_PYREAD_CHANGED;
        if (frame == top) first = v;
        if (v.skip) {
            skipped++;
        } else if (seen == max) {
            *more = 1;
            break;
        } else if (read_frame(&v, &out[seen++]) != 0) {
            return CGI_PYREAD_CHANGED;
        }
    }
    /* Still where it was? A thread that moved on while we read gives
     * unknown rather than a mix of two moments. */
    uintptr_t again;
    if (top_frame(ts, &again) != 0 || again != top) return CGI_PYREAD_CHANGED;
    if (top && (view_frame(top, &v) != 0 || v.instr != first.instr || v.code != first.code)) return CGI_PYREAD_CHANGED;
    *n = seen;
    return CGI_PYREAD_OK;
}

int cgi_pyread_frames(pid_t tid, unsigned long pthread_id, cgi_pyframe *out, int max, int *n)
{
    *n = 0;
    int st = atomic_load_explicit(&L.state, memory_order_acquire), result, more;
    if (st != CGI_PYREAD_OK) return st;
    if (cgi_selfread_begin() != 0) return CGI_PYREAD_NO_ACCESS;
    uintptr_t ts = find_thread(tid, pthread_id, &result);
    if (!ts) return result;
    return walk(ts, out, max, n, &more);
}

int cgi_pyread_threads(cgi_pythread *out, int max, int *n)
{
    *n = 0;
    int st = atomic_load_explicit(&L.state, memory_order_acquire), k = 0;
    if (st != CGI_PYREAD_OK) return st;
    if (cgi_selfread_begin() != 0) return CGI_PYREAD_NO_ACCESS;
    uintptr_t interp;
    if (peek_ptr(L.runtime + (uintptr_t)L.t.runtime_interpreters_head, &interp) != 0) return CGI_PYREAD_CHANGED;
    int threads = 0;
    for (int i = 0; interp && i < LIMIT_INTERPRETERS; i++) {
        uintptr_t ts;
        if (peek_ptr(interp + (uintptr_t)L.t.interp_threads_head, &ts) != 0) return CGI_PYREAD_CHANGED;
        for (; ts && threads < LIMIT_THREADS; threads++) {
            unsigned char b[BLOCK];
            if (peek(ts, b, L.ts_need) != 0 || at_ptr(b, L.t.tstate_interp) != interp) return CGI_PYREAD_CHANGED;
            if (k < max) {
                cgi_pythread *t = &out[k++];
                t->ts = ts, t->interp = interp, t->ident = at_ptr(b, L.t.tstate_thread_id);
                t->tid = L.t.tstate_native_thread_id >= 0 ? at_int(b, L.t.tstate_native_thread_id) : 0;
            }
            ts = at_ptr(b, L.t.tstate_next);
        }
        if (ts || peek_ptr(interp + (uintptr_t)L.t.interp_next, &interp) != 0) return CGI_PYREAD_CHANGED;
    }
    if (interp) return CGI_PYREAD_CHANGED;
    *n = k;
    return CGI_PYREAD_OK;
}

/* Is t's thread state still that thread's, in its interpreter? */
static int still(const cgi_pythread *t)
{
    unsigned char b[BLOCK];
    return peek(t->ts, b, L.ts_need) == 0 && at_ptr(b, L.t.tstate_interp) == t->interp &&
           at_ptr(b, L.t.tstate_thread_id) == t->ident;
}

int cgi_pyread_stack(const cgi_pythread *t, cgi_pyframe *out, int max, int *n, int *more)
{
    *n = 0, *more = 0;
    int st = atomic_load_explicit(&L.state, memory_order_acquire);
    if (st != CGI_PYREAD_OK) return st;
    if (cgi_selfread_begin() != 0) return CGI_PYREAD_NO_ACCESS;
    if (!still(t)) return CGI_PYREAD_NO_THREAD;
    return walk(t->ts, out, max, n, more);
}

/* ---- the GIL ------------------------------------------------------------- */

typedef struct gil_view {
    uintptr_t holder;
    unsigned long switches;
    int locked;
} gil_view;

/* The GIL of interpreter `interp`: its address, checked (3.12+: the
 * pointer must lead to the interpreter's own lock or into _PyRuntime,
 * where the main interpreter's lies), or 0. */
static uintptr_t gil_of(uintptr_t interp)
{
    if (L.gil->runtime_gil >= 0) return L.runtime + (uintptr_t)L.gil->runtime_gil;
    uintptr_t g;
    if (peek_ptr(interp + (uintptr_t)L.gil->interp_gil_ptr, &g) != 0) return 0;
    int own = g == interp + (uintptr_t)L.gil->interp_gil_storage;
    int main = g >= L.runtime && g < L.runtime + L.runtime_size;
    return own || main ? g : 0;
}

static int read_gil(uintptr_t g, gil_view *v)
{
    if (peek_ptr(g + (uintptr_t)L.gil->gil_holder, &v->holder) != 0 ||
        peek(g + (uintptr_t)L.gil->gil_locked, &v->locked, sizeof v->locked) != 0 ||
        peek(g + (uintptr_t)L.gil->gil_switches, &v->switches, sizeof v->switches) != 0)
        return -1;
    return v->locked == 0 || v->locked == 1 ? 0 : -1;
}

/* Does thread state ts of interpreter interp hold the GIL? 1, 0, -1. */
static int gil_held_by(uintptr_t ts, uintptr_t interp)
{
    uintptr_t g = gil_of(interp);
    if (!g) return -1;
    /* take_gil marks the lock taken before it names its new holder: read
     * twice, a moment apart, and believe only an answer that held still.
     * A GIL that changed hands meanwhile is read again, a few times: a
     * thread waking for a moment (a signal, a timed wait) must not leave a
     * holder that never let go unknown. */
    for (int tries = 0; tries < 4; tries++) {
        gil_view a, b;
        if (read_gil(g, &a) != 0) return -1;
        sched_yield();
        if (read_gil(g, &b) != 0) return -1;
        if (a.holder == b.holder && a.locked == b.locked && a.switches == b.switches) return a.locked && a.holder == ts;
    }
    return -1;
}

int cgi_pyread_gil_held(pid_t tid, unsigned long pthread_id)
{
    int result;
    if (atomic_load_explicit(&L.state, memory_order_acquire) != CGI_PYREAD_OK || !L.gil) return -1;
    if (cgi_selfread_begin() != 0) return -1;
    uintptr_t ts = find_thread(tid, pthread_id, &result), interp;
    if (!ts || peek_ptr(ts + (uintptr_t)L.t.tstate_interp, &interp) != 0) return -1;
    return gil_held_by(ts, interp);
}

int cgi_pyread_gil_of(const cgi_pythread *t)
{
    if (atomic_load_explicit(&L.state, memory_order_acquire) != CGI_PYREAD_OK || !L.gil) return -1;
    if (cgi_selfread_begin() != 0 || !still(t)) return -1;
    return gil_held_by(t->ts, t->interp);
}

/* ---- the layout ----------------------------------------------------------- */

/* Where each field pyread reads lies in _Py_DebugOffsets, counted in its
 * uint64_t words, by CPython's SECTION_FIELD names: pyread_debug.h,
 * generated from CPython's headers (scripts/pyoffsets.py --debug). 3.14's
 * shape changed during its development, so one version may have several
 * rows; one is taken only where all of its fixed values read as they must
 * (check_debug). */
typedef struct cgi_pyread_debug_words {
    int minor;
    int runtime_state_interpreters_head, interpreter_state_next, interpreter_state_threads_head;
    int thread_state_size, thread_state_next, thread_state_interp, thread_state_current_frame, thread_state_thread_id,
        thread_state_native_thread_id;
    int interpreter_frame_size, interpreter_frame_previous, interpreter_frame_executable, interpreter_frame_instr_ptr,
        interpreter_frame_owner;
    int code_object_size, code_object_filename, code_object_name, code_object_linetable, code_object_firstlineno,
        code_object_co_code_adaptive;
    int pyobject_size, pyobject_ob_type, bytes_object_ob_size, bytes_object_ob_sval;
    int unicode_object_state, unicode_object_length, unicode_object_asciiobject_size;
} cgi_pyread_debug_words;

#include "pyread_debug.h"

/* The values every build of these versions has (PyObject, PyBytesObject
 * and PyASCIIObject heads), and offsets that lie inside their structs:
 * a shape read at the wrong words fails these. */
static int check_debug(const uint64_t *w, const cgi_pyread_debug_words *d)
{
    if (w[d->pyobject_size] != 16 || w[d->pyobject_ob_type] != 8 || w[d->bytes_object_ob_size] != 16 ||
        w[d->bytes_object_ob_sval] != 32 || w[d->unicode_object_length] != 16 || w[d->unicode_object_state] != 32 ||
        w[d->unicode_object_asciiobject_size] != 40)
        return 0;
    uint64_t ts = w[d->thread_state_size], fr = w[d->interpreter_frame_size], co = w[d->code_object_size];
    if (ts > 65536 || fr > 4096 || co > 4096) return 0;
    return w[d->thread_state_next] < ts && w[d->thread_state_interp] < ts && w[d->thread_state_current_frame] < ts &&
           w[d->thread_state_thread_id] < ts && w[d->thread_state_native_thread_id] < ts &&
           w[d->interpreter_frame_previous] < fr && w[d->interpreter_frame_executable] < fr &&
           w[d->interpreter_frame_instr_ptr] < fr && w[d->interpreter_frame_owner] < fr &&
           w[d->code_object_filename] < co && w[d->code_object_name] < co && w[d->code_object_linetable] < co &&
           w[d->code_object_firstlineno] < co && w[d->code_object_co_code_adaptive] <= co;
}

/* Read with a plain copy: _PyRuntime is the interpreter's own static
 * data, mapped while it is loaded, and the words are its initializer's. No
 * read of prepare() goes through selfread: it runs on a program's thread,
 * and the way of reading is chosen by the reader, as it reads. */
static int layout_from_debug(int minor)
{
    uint64_t w[CGI_PYREAD_DEBUG_WORDS];
    if (L.runtime_size < sizeof w) return CGI_PYREAD_UNSUPPORTED;
    memcpy(w, (const void *)L.runtime, sizeof w);
    if (memcmp(w, "xdebugpy", 8) != 0 || (int)((w[1] >> 16) & 0xff) != minor || w[2] != 0)
        return CGI_PYREAD_UNSUPPORTED; /* not the cookie, not this version, or free-threaded */
    for (size_t i = 0; i < sizeof cgi_pyread_debug_layouts / sizeof *cgi_pyread_debug_layouts; i++) {
        const cgi_pyread_debug_words *d = &cgi_pyread_debug_layouts[i];
        if (d->minor != minor || !check_debug(w, d)) continue;
        L.t = (cgi_pyread_table){.minor = minor,
                                 .runtime_interpreters_head = (long)w[d->runtime_state_interpreters_head],
                                 .interp_next = (long)w[d->interpreter_state_next],
                                 .interp_threads_head = (long)w[d->interpreter_state_threads_head],
                                 .tstate_next = (long)w[d->thread_state_next],
                                 .tstate_interp = (long)w[d->thread_state_interp],
                                 .tstate_thread_id = (long)w[d->thread_state_thread_id],
                                 .tstate_native_thread_id = (long)w[d->thread_state_native_thread_id],
                                 .tstate_frame = (long)w[d->thread_state_current_frame],
                                 .cframe_current_frame = -1,
                                 .frame_previous = (long)w[d->interpreter_frame_previous],
                                 .frame_code = (long)w[d->interpreter_frame_executable],
                                 .frame_instr = (long)w[d->interpreter_frame_instr_ptr],
                                 .frame_owner = (long)w[d->interpreter_frame_owner],
                                 .code_adaptive = (long)w[d->code_object_co_code_adaptive],
                                 .code_filename = (long)w[d->code_object_filename],
                                 .code_name = (long)w[d->code_object_name],
                                 .code_firstlineno = (long)w[d->code_object_firstlineno],
                                 .code_linetable = (long)w[d->code_object_linetable],
                                 .object_type = 8,
                                 .bytes_size = 16,
                                 .bytes_data = 32,
                                 .unicode_length = 16,
                                 .unicode_state = 32,
                                 .unicode_ascii_size = 40,
                                 .unicode_compact_size = 56};
        L.tagged = minor >= 14;
        return CGI_PYREAD_OK;
    }
    return CGI_PYREAD_UNSUPPORTED;
}

/* The minor version before 3.11 (no Py_Version): from the interpreter's
 * own version string, "3.N.M (...", which Py_GetVersion() returns; 0 where
 * it is not 3.N. Never from a file's name: a program linked with its
 * interpreter is named by whoever installed it (Debian's python3, a
 * wrapper's python3.9 running 3.10). Py_GetVersion needs no GIL and no
 * initialized interpreter; on 3.9 and 3.10 it formats PY_VERSION, the build
 * and the compiler into a static buffer, the same bytes at every call. */
static int minor_from_version(void)
{
    const char *(*get_version)(void);
    *(void **)&get_version = cgi_probe_sym(RTLD_DEFAULT, "Py_GetVersion");
    const char *v = get_version ? get_version() : NULL;
    if (!v || v[0] != '3' || v[1] != '.') return 0;
    int minor = 0;
    const char *p = v + 2;
    for (; *p >= '0' && *p <= '9' && minor < 100; p++)
        minor = minor * 10 + (*p - '0');
    return p > v + 2 && (*p == '.' || *p == ' ' || *p == 0 || *p == 'a' || *p == 'b' || *p == 'r') ? minor : 0;
}

static size_t need(int count, const long *offsets)
{
    long last = 0;
    for (int i = 0; i < count; i++)
        last = offsets[i] > last ? offsets[i] : last;
    return (size_t)last + 8;
}

/* How much of each struct a read takes: up to the last field used, so a
 * read never runs past an object into memory that may not be mapped. */
static int set_needs(void)
{
    const cgi_pyread_table *t = &L.t;
    L.ts_need = need(5, (long[]){t->tstate_next, t->tstate_interp, t->tstate_thread_id, t->tstate_native_thread_id,
                                 t->tstate_frame});
    L.frame_need = need(5, (long[]){t->object_type, t->frame_previous, t->frame_code, t->frame_instr, t->frame_owner});
    L.code_need = need(6, (long[]){t->object_type, t->bytes_size, t->code_filename, t->code_name, t->code_firstlineno,
                                   t->code_linetable});
    return L.ts_need <= BLOCK && L.frame_need <= BLOCK && L.code_need <= BLOCK ? CGI_PYREAD_OK : CGI_PYREAD_UNSUPPORTED;
}

static int layout_of(int minor)
{
    int st = CGI_PYREAD_UNSUPPORTED;
    for (size_t i = 0; i < sizeof cgi_pyread_gil_tables / sizeof *cgi_pyread_gil_tables; i++)
        if (cgi_pyread_gil_tables[i].minor == minor) L.gil = &cgi_pyread_gil_tables[i];
    if (minor >= 13) st = layout_from_debug(minor);
    for (size_t i = 0; minor < 13 && i < sizeof cgi_pyread_tables / sizeof *cgi_pyread_tables; i++)
        if (cgi_pyread_tables[i].minor == minor) L.t = cgi_pyread_tables[i], st = CGI_PYREAD_OK;
    return st == CGI_PYREAD_OK ? set_needs() : st;
}

static int prepare(void)
{
    int st;
    void *runtime = cgi_probe_sym(RTLD_DEFAULT, "_PyRuntime");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (!runtime || !dladdr1(runtime, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym) return CGI_PYREAD_NO_PYTHON;
    L.runtime = (uintptr_t)runtime, L.runtime_size = sym->st_size;
    L.code_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyCode_Type");
    L.unicode_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyUnicode_Type");
    L.bytes_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyBytes_Type");
    const unsigned long *version = cgi_probe_sym(RTLD_DEFAULT, "Py_Version");
    int minor = version ? (int)((*version >> 16) & 0xff) : minor_from_version();
    if (!L.code_type || !L.unicode_type || !L.bytes_type) return CGI_PYREAD_NO_PYTHON;
    if ((version && (*version >> 24) != 3) || (!version && minor != 9 && minor != 10))
        st = CGI_PYREAD_UNSUPPORTED;
    else
        st = layout_of(minor);
    if (st == CGI_PYREAD_OK && minor <= 10) {
        L.frame_type = (uintptr_t)cgi_probe_sym(RTLD_DEFAULT, "PyFrame_Type");
        if (!L.frame_type) st = CGI_PYREAD_UNSUPPORTED;
    }
    /* Threads' names, read only when asked for, are looked up now too (dlsym). */
    if (st == CGI_PYREAD_OK) cgi_pynames_prepare(minor);
    return st;
}

int cgi_pyread_prepare(void)
{
    int st = atomic_load_explicit(&L.state, memory_order_acquire);
    if (st == CGI_PYREAD_OK) return st;
    /* One thread fills the layout; readers look at it only once state says OK. */
    if (atomic_flag_test_and_set(&L.preparing)) return CGI_PYREAD_NOT_READY;
    st = prepare();
    atomic_store_explicit(&L.state, st, memory_order_release);
    atomic_flag_clear(&L.preparing);
    return st;
}

const char *cgi_pyread_result_name(int result)
{
    static const char *const names[] = {
        "ok", "no python", "unsupported python", "no access", "no such thread", "changed while read", "not prepared"};
    return result >= 0 && result < (int)(sizeof names / sizeof *names) ? names[result] : "unknown";
}
