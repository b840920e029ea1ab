/* Reading trace files: what a process's trace holds (trace_read.h). */
#define _GNU_SOURCE
#include "trace_read.h"

#include <string.h>

int cgi_trace_header_ok(const void *head, size_t size)
{
    const cgi_trace_header *h = head;
    return size >= CGI_TRACE_DATA_OFFSET && memcmp(h->magic, CGI_TRACE_MAGIC, sizeof CGI_TRACE_MAGIC) == 0 &&
           h->version == CGI_TRACE_VERSION && h->chunk_bytes == CGI_TRACE_CHUNK_BYTES &&
           h->max_threads == CGI_TRACE_MAX_THREADS;
}

int cgi_trace_view_of_file(const void *head, size_t size, int fd, cgi_trace_view *v)
{
    memset(v, 0, sizeof *v);
    v->fd = -1;
    if (!cgi_trace_header_ok(head, size)) return -1;
    v->h = head;
    v->threads = (const cgi_trace_thread *)(v->h + 1);
    v->fd = fd;
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
        uint64_t w = atomic_load_explicit(&v->threads[i].written, memory_order_acquire);
        uint64_t out = atomic_load_explicit(&v->threads[i].left_out, memory_order_relaxed);
        if (out > w) out = w;
        *kept += w - out;
        *dropped += out;
    }
}
