/* The calls a process had in flight when it ended, as timeline events
 * (trace_flight.h): each from its entry (the slot's `entered`, in the
 * ticks the rings use) to the process's end, a call or the lock wait it
 * was in, marked in flight. */
#define _GNU_SOURCE
#include "trace_flight.h"

#include "internal.h"

#include "../common/utf8.h"

#include <inttypes.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

uint64_t cgi_trace_flight_end(const cgi_stats_region *r, const cgi_trace_clock *clk, int live)
{
    uint64_t seen = atomic_load(&r->hang.seen_ns), mult = atomic_load(&r->h.tick_mult);
    if (!live && seen && mult) {
        /* seen_ns is (ticks - tick0) * mult >> 32: back to ticks, then onto the timeline's clock. */
        unsigned __int128 d = ((unsigned __int128)seen << 32) / mult;
        return cgi_trace_ns(clk, r->h.tick0 + (uint64_t)d);
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* An event's text, built up to CGI_FLIGHT_TEXT_MAX bytes. */
typedef struct cgi_flight_text {
    size_t n;
    char b[CGI_FLIGHT_TEXT_MAX];
} cgi_flight_text;

static void cgi_ft_add(cgi_flight_text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void cgi_ft_add(cgi_flight_text *t, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->b + t->n, sizeof t->b - t->n, fmt, ap);
    va_end(ap);
    if (k > 0) t->n = t->n + (size_t)k < sizeof t->b ? t->n + (size_t)k : sizeof t->b - 1;
}

/* A string, quoted and escaped (at most max bytes of s: 6 bytes a byte fit). */
static void cgi_ft_str(cgi_flight_text *t, const char *s, size_t max)
{
    if (t->n + 6 * max + 2 >= sizeof t->b) return;
    t->b[t->n++] = '"';
    t->n += cgi_json_escape(t->b + t->n, s, max);
    t->b[t->n++] = '"';
}

/* Microseconds with three decimals, as the rings' events have them. */
static void cgi_ft_us(cgi_flight_text *t, uint64_t ns)
{
    cgi_ft_add(t, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* The event of the call in flight on slot, from t0 to end (clock ns). */
static void cgi_ft_event(cgi_flight_text *t, const cgi_stats_region *r, const cgi_slot *slot, int pid, uint64_t t0,
                         uint64_t end)
{
    const cgi_stats_record *rec = cgi_slot_record(r, slot);
    const char *api = rec ? rec->api : "?", *name = rec ? rec->name : "?";
    int wait = cgi_waiting(slot);
    t->n = 0;
    if (wait) {
        cgi_ft_add(t, "{\"ph\":\"X\",\"name\":\"lock wait ");
        t->n += cgi_json_escape(t->b + t->n, rec && rec->domain[0] ? rec->domain : "?", CGI_DOMAIN_NAME_MAX);
        cgi_ft_add(t, "\",\"cat\":\"lock_wait,in_flight\"");
    } else {
        cgi_ft_add(t, "{\"ph\":\"X\",\"name\":");
        cgi_ft_str(t, name, CGI_NAME_MAX);
        cgi_ft_add(t, ",\"cat\":\"call,in_flight\"");
    }
    cgi_ft_add(t, ",\"pid\":%d,\"tid\":%d,\"ts\":", pid, (int)atomic_load(&slot->tid));
    cgi_ft_us(t, t0);
    cgi_ft_add(t, ",\"dur\":");
    cgi_ft_us(t, end > t0 ? end - t0 : 0);
    cgi_ft_add(t, wait ? ",\"args\":{\"entry_point\":" : ",\"args\":{\"api\":");
    cgi_ft_str(t, wait ? name : api, wait ? CGI_NAME_MAX : CGI_API_NAME_MAX);
    cgi_ft_add(t, ",\"in_flight\":true");
    /* What the hang page read of it: the runtime held, its Python line. */
    const cgi_hang_call *e = cgi_hang_of_slot(r, slot);
    if (e && e->held == CGI_HELD_YES) cgi_ft_add(t, ",\"runtime_held\":true");
    if (e && e->py_file[0]) {
        cgi_ft_add(t, ",\"python\":{\"file\":");
        cgi_ft_str(t, e->py_file, sizeof e->py_file);
        cgi_ft_add(t, ",\"line\":%d", e->py_line);
        if (e->py_func[0]) cgi_ft_add(t, ",\"function\":"), cgi_ft_str(t, e->py_func, sizeof e->py_func);
        cgi_ft_add(t, "}");
    }
    cgi_ft_add(t, "}}");
}

size_t cgi_trace_flights(const cgi_stats_region *r, const cgi_trace_clock *clk, uint64_t end_ns, int pid,
                         cgi_flight_fn *fn, void *ctx)
{
    size_t n = 0;
    cgi_flight_text t;
    for (unsigned i = 0; i < CGI_STATS_MAX_SLOTS; i++) {
        const cgi_slot *slot = &r->slot[i];
        if (!cgi_in_flight(slot)) continue;
        n++;
        if (!fn) continue;
        uint64_t entered = atomic_load(&slot->entered);
        uint64_t t0 = entered ? cgi_trace_ns(clk, entered) : end_ns;
        cgi_ft_event(&t, r, slot, pid, t0 < end_ns ? t0 : end_ns, end_ns);
        char thread[sizeof slot->thread + 1];
        snprintf(thread, sizeof thread, "%.*s", (int)sizeof slot->thread, slot->thread);
        fn(atomic_load(&slot->tid), thread, t.b, t.n, ctx);
    }
    return n;
}
