/* A loaded object's dynamic symbols, read from its dynamic section in
 * memory (elfsym.h). Callers: resolve.c (is a name defined outside
 * callguard, without dlopen and dlsym's formatted error for each object
 * that lacks it) and dlsym_interpose.c (the next dlsym, found while a
 * sanitizer's runtime is still starting: nothing here calls the loader or
 * is instrumented). */
#define _GNU_SOURCE
#include "elfsym.h"

CGI_UNINSTRUMENTED uint32_t cgi_gnu_hash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

CGI_UNINSTRUMENTED int cgi_dyn_read(uintptr_t base, const ElfW(Dyn) * dyn, cgi_dyn *d)
{
    /* Field by field: no memset while a sanitizer starts. */
    const uint32_t *gnu_hash = NULL;
    d->base = base, d->symtab = NULL, d->strtab = NULL, d->versym = NULL, d->verdef = NULL, d->bloom = NULL;
    if (!dyn) return 0;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        /* The dynamic linker relocates some of these in place where .dynamic
         * is writable; the others, and all of them where it is not (the
         * vDSO), are still offsets from the load bias. */
        ElfW(Addr) p = dyn->d_un.d_ptr;
        if (p < base) p += base;
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->symtab = (const void *)p; break;
        case DT_STRTAB: d->strtab = (const void *)p; break;
        case DT_GNU_HASH: gnu_hash = (const void *)p; break;
        case DT_VERSYM: d->versym = (const void *)p; break;
        case DT_VERDEF: d->verdef = (const void *)p; break;
        }
    }
    if (!d->symtab || !d->strtab || !gnu_hash) return 0;
    d->nbuckets = gnu_hash[0], d->symoffset = gnu_hash[1], d->bloom_shift = gnu_hash[3];
    /* The filter's size is a power of two (as glibc requires); none: no symbols. */
    d->bloom_mask = gnu_hash[2] - 1;
    if (d->nbuckets && gnu_hash[2] && !(gnu_hash[2] & d->bloom_mask)) d->bloom = (const void *)(gnu_hash + 4);
    d->buckets = (const void *)((const ElfW(Addr) *)(gnu_hash + 4) + gnu_hash[2]);
    d->chain = d->buckets + d->nbuckets;
    return 1;
}

CGI_UNINSTRUMENTED int cgi_dyn_read_phdr(const struct dl_phdr_info *info, cgi_dyn *d)
{
    const ElfW(Dyn) *dyn = NULL;
    for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) dyn = (const void *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return cgi_dyn_read(info->dlpi_addr, dyn, d);
}

CGI_UNINSTRUMENTED uint32_t cgi_dyn_next(const cgi_dyn *d, const char *name, uint32_t hash, uint32_t *at)
{
    uint32_t i;
    if (!*at) {
        if (!cgi_dyn_may_define(d, hash)) return 0;
        i = d->buckets[hash % d->nbuckets];
        if (i < d->symoffset) return 0;
    } else {
        if (*at < d->symoffset || (d->chain[*at - d->symoffset] & 1)) return 0; /* *at ended its chain */
        i = *at + 1;
    }
    for (;; i++) {
        uint32_t h = d->chain[i - d->symoffset];
        const ElfW(Sym) *sym = &d->symtab[i];
        if ((h | 1) == (hash | 1) && sym->st_shndx != SHN_UNDEF && cgi_str_eq(d->strtab + sym->st_name, name))
            return *at = i;
        if (h & 1) return 0;
    }
}

CGI_UNINSTRUMENTED const char *cgi_dyn_version(const cgi_dyn *d, uint32_t i, int *hidden)
{
    *hidden = 0;
    if (!d->versym) return NULL;
    ElfW(Half) v = d->versym[i], ndx = v & 0x7fff;
    *hidden = (v & 0x8000) != 0;
    if (ndx <= 1) return NULL; /* local or global: no version */
    for (const ElfW(Verdef) *vd = d->verdef; vd; vd = (const void *)((const char *)vd + vd->vd_next)) {
        if (vd->vd_ndx == ndx && vd->vd_cnt) {
            const ElfW(Verdaux) *aux = (const void *)((const char *)vd + vd->vd_aux);
            return d->strtab + aux->vda_name;
        }
        if (!vd->vd_next) break;
    }
    return "";
}
