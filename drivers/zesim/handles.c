/*
 * Registry of live handles.
 *
 * Every object the simulator hands out is recorded here together with its kind. A handle is looked up in the
 * registry before it is dereferenced, so a pointer the simulator never created (or already destroyed) is
 * refused with an error instead of being read. An open-addressing hash set keyed by address keeps the lookup
 * cheap; one mutex is enough for a simulator.
 */
#include "internal.h"

#include <stdlib.h>

struct slot {
    const void *ptr; /* NULL = empty, TOMBSTONE = deleted */
    uint32_t kind;
};

static char tombstone_byte;
#define TOMBSTONE ((const void *)&tombstone_byte)

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct slot *slots;
static size_t capacity; /* power of two */
static size_t used;     /* live + tombstones, drives rehashing */

static size_t hash_ptr(const void *p)
{
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x;
}

static struct slot *find_slot(const void *p)
{
    if (capacity == 0) return NULL;
    for (size_t i = hash_ptr(p) & (capacity - 1), n = 0; n < capacity; i = (i + 1) & (capacity - 1), n++) {
        if (slots[i].ptr == NULL) return NULL;
        if (slots[i].ptr == p) return &slots[i];
    }
    return NULL;
}

static bool insert_raw(struct slot *table, size_t cap, const void *p, uint32_t kind)
{
    for (size_t i = hash_ptr(p) & (cap - 1), n = 0; n < cap; i = (i + 1) & (cap - 1), n++) {
        if (table[i].ptr == NULL || table[i].ptr == TOMBSTONE) {
            table[i].ptr = p;
            table[i].kind = kind;
            return true;
        }
    }
    return false;
}

static bool grow(void)
{
    size_t new_cap = capacity ? capacity * 2 : 256;
    struct slot *fresh = calloc(new_cap, sizeof *fresh);
    if (!fresh) return false;
    size_t live = 0;
    for (size_t i = 0; i < capacity; i++) {
        if (slots[i].ptr != NULL && slots[i].ptr != TOMBSTONE) {
            insert_raw(fresh, new_cap, slots[i].ptr, slots[i].kind);
            live++;
        }
    }
    free(slots);
    slots = fresh;
    capacity = new_cap;
    used = live;
    return true;
}

void cgsim_object_init(struct cgsim_object *obj, enum cgsim_kind kind)
{
    obj->magic = CGSIM_MAGIC;
    obj->kind = (uint32_t)kind;
}

bool cgsim_handle_register(struct cgsim_object *obj)
{
    pthread_mutex_lock(&registry_lock);
    bool ok = true;
    if ((used + 1) * 2 > capacity) ok = grow();
    if (ok) {
        ok = insert_raw(slots, capacity, obj, obj->kind);
        if (ok) used++;
    }
    pthread_mutex_unlock(&registry_lock);
    return ok;
}

void cgsim_handle_unregister(struct cgsim_object *obj)
{
    pthread_mutex_lock(&registry_lock);
    struct slot *s = find_slot(obj);
    if (s) s->ptr = TOMBSTONE;
    obj->magic = CGSIM_DEAD_MAGIC;
    pthread_mutex_unlock(&registry_lock);
}

void *cgsim_handle_lookup(const void *handle, enum cgsim_kind kind)
{
    if (handle == NULL) return NULL;
    void *result = NULL;
    pthread_mutex_lock(&registry_lock);
    struct slot *s = find_slot(handle);
    /* Only dereference once the registry vouches for the pointer; the magic check then catches memory that
     * was overwritten by the application. */
    if (s && s->kind == (uint32_t)kind) {
        const struct cgsim_object *obj = handle;
        if (obj->magic == CGSIM_MAGIC && obj->kind == (uint32_t)kind) result = (void *)(uintptr_t)handle;
    }
    pthread_mutex_unlock(&registry_lock);
    return result;
}
