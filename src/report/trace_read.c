/* Reading trace files: what a process's rings hold (trace_read.h). */
#define _GNU_SOURCE
#include "trace_read.h"

#include <string.h>

int cgi_trace_view_of_file(const void *map, size_t size, cgi_trace_view *v)
{
    memset(v, 0, sizeof *v);
    const cgi_trace_header *h = map;
    if (size < sizeof *h + CGI_TRACE_TABLE_BYTES || memcmp(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC) != 0 ||
        h->version != CGI_TRACE_VERSION || h->events_per_thread != CGI_TRACE_EVENTS ||
        h->max_threads != CGI_TRACE_MAX_THREADS)
        return -1;
    v->h = h;
    v->threads = (const cgi_trace_thread *)(h + 1);
    uint32_t n = atomic_load(&h->nthreads);
    for (uint32_t i = 0; i < n && i < CGI_TRACE_MAX_THREADS; i++)
        if (atomic_load(&v->threads[i].ready) && CGI_TRACE_RING_OFFSET(i) + CGI_TRACE_RING_BYTES <= size)
            v->ring[i] = (const cgi_trace_event *)((const char *)map + CGI_TRACE_RING_OFFSET(i));
    return 0;
}

void cgi_trace_thread_name(const cgi_trace_thread *t, char out[17])
{
    uint64_t w[2] = {atomic_load_explicit(&t->name[0], memory_order_relaxed),
                     atomic_load_explicit(&t->name[1], memory_order_relaxed)};
    memcpy(out, w, 16);
    out[16] = '\0';
}

void cgi_trace_count(const cgi_trace_view *v, uint64_t *kept, uint64_t *dropped)
{
    *kept = *dropped = 0;
    if (!v->h) return;
    *dropped = atomic_load_explicit(&v->h->lost, memory_order_relaxed);
    uint32_t n = atomic_load_explicit(&v->h->nthreads, memory_order_acquire);
    for (uint32_t i = 0; i < n && i < CGI_TRACE_MAX_THREADS; i++) {
        if (!v->ring[i]) continue;
        uint64_t w = atomic_load_explicit(&v->threads[i].written, memory_order_acquire);
        uint64_t k = w < CGI_TRACE_EVENTS ? w : CGI_TRACE_EVENTS - 1;
        *kept += k;
        *dropped += w - k;
    }
}
