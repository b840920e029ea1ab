/* A loaded object's dynamic symbols, read from memory (elfsym.c): its GNU
 * hash table and its symbol versions, as the dynamic linker reads them,
 * without a call into the loader. */
#ifndef CGI_ELFSYM_H
#define CGI_ELFSYM_H

#include "internal.h"

#include <link.h>

typedef struct cgi_dyn {
    uintptr_t base; /* the load bias (l_addr, dlpi_addr) */
    const ElfW(Sym) * symtab;
    const char *strtab;
    const ElfW(Half) * versym; /* NULL: no version information */
    const ElfW(Verdef) * verdef;
    /* the GNU hash table, decoded */
    uint32_t nbuckets, symoffset, bloom_mask, bloom_shift;
    const ElfW(Addr) * bloom;
    const uint32_t *buckets, *chain;
} cgi_dyn;

/* Strings compared by hand: a sanitizer's runtime, while it starts, has
 * interceptors of strcmp and the like that cannot be called yet. */
CGI_UNINSTRUMENTED static inline int cgi_str_starts(const char *s, const char *prefix)
{
    while (*prefix && *s == *prefix)
        s++, prefix++;
    return !*prefix;
}

CGI_UNINSTRUMENTED static inline int cgi_str_eq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

CGI_HIDDEN uint32_t cgi_gnu_hash(const char *name);
/* From the object's dynamic section `dyn`; 0 when it has no GNU hash
 * table, symbol table or string table (the reader cannot tell). */
CGI_HIDDEN int cgi_dyn_read(uintptr_t base, const ElfW(Dyn) * dyn, cgi_dyn *d);
/* The same, from the object's program headers (dl_iterate_phdr's). */
CGI_HIDDEN int cgi_dyn_read_phdr(const struct dl_phdr_info *info, cgi_dyn *d);
/* 0 when the object's Bloom filter says it defines nothing with this hash
 * (most objects, for most names: one test). */
CGI_UNINSTRUMENTED static inline int cgi_dyn_may_define(const cgi_dyn *d, uint32_t hash)
{
    const unsigned bits = 8 * sizeof(ElfW(Addr));
    if (!d->bloom) return 0;
    ElfW(Addr) word = d->bloom[(hash / bits) & d->bloom_mask];
    ElfW(Addr) mask = ((ElfW(Addr))1 << (hash % bits)) | ((ElfW(Addr))1 << ((hash >> d->bloom_shift) % bits));
    return (word & mask) == mask;
}

/* The symbols named `name` that the object defines, one after another:
 * the index of the next after *at (0 to start), or 0 when none is left. */
CGI_HIDDEN uint32_t cgi_dyn_next(const cgi_dyn *d, const char *name, uint32_t hash, uint32_t *at);
/* Symbol i's version: NULL for none (unversioned, or no version
 * information), "" for one not found; *hidden: a version that is not the
 * default (name@V, not name@@V). */
CGI_HIDDEN const char *cgi_dyn_version(const cgi_dyn *d, uint32_t i, int *hidden);

#endif
