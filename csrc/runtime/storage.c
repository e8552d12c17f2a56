/* storage.c — reference-counted device buffers, the caching allocator, per-device memory statistics.
 *
 * A storage is released from any thread: the shim's deleter on the Python thread, or the stream worker dropping
 * the last reference a queued launch held. At refcount zero the record and its buffer go to the device's cache
 * (free lists by size class, one mutex per device) instead of back to the driver, so a loop that allocates the
 * same shapes again and again costs no driver allocation after the first round. Like PyTorch's CUDA caching
 * allocator in spirit, much simpler: no splitting or merging of blocks, a reused buffer may be up to 1.5x the
 * request. The driver's memory limit sees reserved bytes (live + cached); an allocation that fails with
 * OUT_OF_MEMORY waits for the device's queued work (its storages then reach the cache), empties the cache and,
 * if that gave anything back, tries once more.
 *
 * Counters are atomics so reading stats takes no lock. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_RT_CLASS_SCAN 8 /* entries of a free list searched for a buffer that fits before looking one class up */

/* Size class of a capacity: the largest class boundary <= n. */
static int size_class(size_t n) {
    if (n < 16) return (int)(n >> 2);
    int e = 63 - __builtin_clzll((unsigned long long)n); /* >= 4 */
    return 4 + (e - 4) * 4 + (int)((n >> (e - 2)) & 3);
}

static void max_update(_Atomic size_t *peak, size_t now) {
    size_t p = atomic_load(peak);
    while (now > p && !atomic_compare_exchange_weak(peak, &p, now)) {
    }
}

static void mem_add(int device, size_t capacity) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    max_update(&m->peak, atomic_fetch_add(&m->allocated, capacity) + capacity);
    atomic_fetch_add_explicit(&m->n_allocs, 1, memory_order_relaxed);
}

/* Gives a record's buffer back to the driver and frees the record (its bytes were already taken off allocated). */
static void buffer_return(tt_rt_storage *s) {
    tt_driver *drv = tt_rt_g.driver;
    drv->iface.buffer_free(drv->ctx, s->buffer);
    atomic_fetch_sub(&tt_rt_g.mem[s->device].reserved, s->capacity);
    free(s);
}

/* ---- live storages by address ---- */
typedef struct tt_rt_live_slot {
    const void *addr; /* NULL: empty */
    tt_rt_storage *s;
} tt_rt_live_slot;

static size_t live_home(const void *a, size_t mask) {
    return (size_t)((((uint64_t)(uintptr_t)a >> 4) * 0x9E3779B97F4A7C15ull) >> 32) & mask;
}

/* Caller holds m->mu. False when growing the table ran out of host memory. */
static bool live_insert_locked(tt_rt_device_mem *m, tt_rt_storage *s) {
    if ((m->live_n + 1) * 4 > m->live_cap * 3) {
        size_t cap = m->live_cap ? m->live_cap * 2 : 256;
        tt_rt_live_slot *t = calloc(cap, sizeof *t);
        if (!t) return false;
        for (size_t i = 0; i < m->live_cap; i++) {
            if (!m->live[i].addr) continue;
            size_t h = live_home(m->live[i].addr, cap - 1);
            while (t[h].addr) h = (h + 1) & (cap - 1);
            t[h] = m->live[i];
        }
        free(m->live);
        m->live = t;
        m->live_cap = cap;
    }
    size_t mask = m->live_cap - 1, h = live_home(s->address, mask);
    while (m->live[h].addr) h = (h + 1) & mask;
    m->live[h] = (tt_rt_live_slot){s->address, s};
    m->live_n++;
    return true;
}

/* Caller holds m->mu. Backward-shift deletion: no tombstones, every probe run stays unbroken. */
static void live_remove_locked(tt_rt_device_mem *m, const tt_rt_storage *s) {
    if (!m->live_cap) return;
    size_t mask = m->live_cap - 1, h = live_home(s->address, mask);
    while (m->live[h].addr && m->live[h].s != s) h = (h + 1) & mask;
    if (!m->live[h].addr) return;
    size_t hole = h;
    for (size_t j = (hole + 1) & mask; m->live[j].addr; j = (j + 1) & mask) {
        size_t home = live_home(m->live[j].addr, mask);
        /* the entry at j stays when its home lies cyclically in (hole, j] */
        if (hole < j ? (home > hole && home <= j) : (home > hole || home <= j)) continue;
        m->live[hole] = m->live[j];
        hole = j;
    }
    m->live[hole] = (tt_rt_live_slot){NULL, NULL};
    m->live_n--;
}

static tt_status live_insert(int device, tt_rt_storage *s) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    pthread_mutex_lock(&m->mu);
    bool ok = live_insert_locked(m, s);
    pthread_mutex_unlock(&m->mu);
    return ok ? TT_OK : tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for the table of live storages");
}

tt_rt_storage *tt_rt_storage_find(const void *address) {
    if (!address || !atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) return NULL;
    for (int d = 0; d < tt_rt_g.n_devices; d++) {
        tt_rt_device_mem *m = &tt_rt_g.mem[d];
        tt_rt_storage *s = NULL;
        pthread_mutex_lock(&m->mu);
        if (m->live_cap) {
            size_t mask = m->live_cap - 1, h = live_home(address, mask);
            while (m->live[h].addr && m->live[h].addr != address) h = (h + 1) & mask;
            s = m->live[h].s;
        }
        pthread_mutex_unlock(&m->mu);
        if (s) return s;
    }
    return NULL;
}

/* A cached record whose buffer fits nbytes, or NULL. Same class first (where equal sizes live: the common case),
 * then the head of the class above (every buffer there is larger than nbytes). live: the record is entered as a
 * live storage in the same critical section (false: a donor whose buffer moves to a pending record). */
static tt_rt_storage *cache_take(int device, size_t nbytes, bool live) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    int c = size_class(nbytes);
    tt_rt_storage *s = NULL;
    pthread_mutex_lock(&m->mu);
    tt_rt_storage **link = &m->free_lists[c];
    for (int i = 0; *link && i < TT_RT_CLASS_SCAN; i++, link = &(*link)->next_free) {
        if ((*link)->capacity >= nbytes) {
            s = *link;
            *link = s->next_free;
            break;
        }
    }
    if (!s && c + 1 < TT_RT_N_CLASSES && (s = m->free_lists[c + 1]) != NULL) m->free_lists[c + 1] = s->next_free;
    if (s && live && !live_insert_locked(m, s)) { /* out of host memory: back to the cache, the caller fails */
        s->next_free = m->free_lists[size_class(s->capacity)];
        m->free_lists[size_class(s->capacity)] = s;
        s = NULL;
    }
    pthread_mutex_unlock(&m->mu);
    return s;
}

/* Detaches a device's whole cache (under its lock); the caller frees the list outside it. */
static tt_rt_storage *cache_detach(int device) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    tt_rt_storage *list = NULL;
    if (!m->mu_ready) return NULL;
    pthread_mutex_lock(&m->mu);
    for (int c = 0; c < TT_RT_N_CLASSES; c++) {
        while (m->free_lists[c]) {
            tt_rt_storage *s = m->free_lists[c];
            m->free_lists[c] = s->next_free;
            s->next_free = list;
            list = s;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return list;
}

/* Frees every cached buffer of device; returns how many bytes went back to the driver. */
static size_t cache_flush(int device) {
    size_t freed = 0;
    tt_rt_storage *s = cache_detach(device);
    while (s) {
        tt_rt_storage *next = s->next_free;
        freed += s->capacity;
        buffer_return(s);
        s = next;
    }
    return freed;
}

static size_t cached_bytes(int device) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    size_t r = atomic_load(&m->reserved), a = atomic_load(&m->allocated);
    return r > a ? r - a : 0; /* the two loads are not one snapshot */
}

/* A fresh record and buffer from the driver; on OUT_OF_MEMORY with a non-empty cache, empties it and retries. */
static tt_status storage_alloc(int device, size_t nbytes, tt_rt_storage **out) {
    tt_rt_storage *s = calloc(1, sizeof *s);
    if (!s) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a storage record");
    tt_driver *drv = tt_rt_g.driver;
    tt_status st = drv->iface.buffer_alloc(drv->ctx, device, nbytes, &s->buffer);
    if (st == TT_STATUS_OUT_OF_MEMORY) {
        /* Queued work may hold the last reference to storages the program has dropped: let it finish so their
         * buffers reach the cache, then give the whole cache back and try once more. */
        tt_rt_stream_wait_idle(&tt_rt_g.streams[device]);
        if (cache_flush(device) > 0) st = drv->iface.buffer_alloc(drv->ctx, device, nbytes, &s->buffer);
    }
    if (st != TT_OK) {
        free(s);
        if (st == TT_STATUS_OUT_OF_MEMORY) {
            /* Keep the driver's words and add what the runtime knows. */
            char msg[TT_RT_MSG_SIZE];
            snprintf(msg, sizeof msg, "%s", tt_last_error());
            tt_rt_device_mem *m = &tt_rt_g.mem[device];
            return tt_error(st, "%s (tpu:%d: allocating %zu bytes; allocated %zu, peak %zu, reserved %zu)", msg,
                            device, nbytes, atomic_load(&m->allocated), atomic_load(&m->peak),
                            atomic_load(&m->reserved));
        }
        return st;
    }
    s->capacity = nbytes;
    s->device = device;
    s->address = drv->iface.buffer_address ? drv->iface.buffer_address(drv->ctx, s->buffer) : (void *)s->buffer;
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    max_update(&m->peak_reserved, atomic_fetch_add(&m->reserved, nbytes) + nbytes);
    *out = s;
    return TT_OK;
}

/* The checks both ways of creating a storage make (the runtime started, an out pointer, a device). */
static tt_status check_create(int device, tt_rt_storage **out, const char *fn) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (!out) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: out is NULL", fn);
    *out = NULL;
    if (!tt_rt_device_valid(device))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "tpu:%d does not exist (%d device%s)", device, tt_rt_g.n_devices,
                        tt_rt_g.n_devices == 1 ? "" : "s");
    return TT_OK;
}

tt_status tt_rt_storage_create(int device, size_t nbytes, tt_rt_storage **out) {
    tt_status st = check_create(device, out, "tt_rt_storage_create");
    if (st != TT_OK) return st;
    /* A reused buffer keeps its old bytes (like torch.empty). */
    tt_rt_storage *s = tt_rt_g.cache_max ? cache_take(device, nbytes, true) : NULL;
    if (!s) {
        if ((st = storage_alloc(device, nbytes, &s)) != TT_OK) return st;
        if ((st = live_insert(device, s)) != TT_OK) {
            buffer_return(s);
            return st;
        }
    }
    atomic_init(&s->refcount, 1);
    atomic_store(&s->has_buffer, true);
    atomic_store(&s->wslot, -1);
    atomic_store(&s->poison, NULL);
    atomic_store(&s->mark, NULL);
    s->generation = atomic_load(&tt_rt_g.generation);
    s->nbytes = nbytes;
    s->next_free = NULL;
    mem_add(device, s->capacity);
    *out = s;
    return TT_OK;
}

tt_status tt_rt_storage_create_pending(int device, size_t nbytes, tt_rt_storage **out) {
    tt_status st = check_create(device, out, "tt_rt_storage_create_pending");
    if (st != TT_OK) return st;
    if (tt_rt_mode_now() != TT_EAGER_FUSED) return tt_rt_storage_create(device, nbytes, out);
    /* Pending: a record without a buffer; its address is the record's own (unique while it lives). */
    tt_rt_storage *p = calloc(1, sizeof *p);
    if (!p) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a storage record");
    atomic_init(&p->refcount, 1);
    atomic_init(&p->has_buffer, false);
    atomic_init(&p->wslot, -1);
    atomic_init(&p->poison, NULL);
    atomic_init(&p->mark, NULL);
    p->device = device;
    p->generation = atomic_load(&tt_rt_g.generation);
    p->nbytes = nbytes;
    p->address = p;
    if ((st = live_insert(device, p)) != TT_OK) {
        free(p);
        return st;
    }
    *out = p;
    return TT_OK;
}

tt_rt_poison *tt_rt_poison_new(tt_status st, const char *msg) {
    tt_rt_poison *p = malloc(sizeof *p);
    if (!p) return NULL;
    atomic_init(&p->refs, 1);
    p->status = st;
    snprintf(p->msg, sizeof p->msg, "%s", msg);
    return p;
}

void tt_rt_poison_release(tt_rt_poison *p) {
    if (p && atomic_fetch_sub(&p->refs, 1) == 1) free(p);
}

void tt_rt_storage_poison(tt_rt_storage *s, tt_rt_poison *p) {
    if (p) atomic_fetch_add(&p->refs, 1);
    tt_rt_poison_release(atomic_exchange(&s->poison, p));
}

tt_status tt_rt_storage_materialize(tt_rt_storage *s) {
    if (tt_rt_storage_has_buffer(s)) return TT_OK;
    /* A buffer from the cache or the driver, moved into this record (the donor record is freed). */
    tt_rt_storage *donor = tt_rt_g.cache_max ? cache_take(s->device, s->nbytes, false) : NULL;
    tt_status st;
    if (!donor && (st = storage_alloc(s->device, s->nbytes, &donor)) != TT_OK) return st;
    tt_rt_device_mem *m = &tt_rt_g.mem[s->device];
    pthread_mutex_lock(&m->mu);
    bool raced = tt_rt_storage_has_buffer(s); /* another thread materialized it meanwhile */
    if (!raced) {
        s->buffer = donor->buffer;
        s->capacity = donor->capacity;
        atomic_store_explicit(&s->has_buffer, true, memory_order_release);
    }
    pthread_mutex_unlock(&m->mu);
    if (raced) {
        buffer_return(donor);
        return TT_OK;
    }
    free(donor);
    mem_add(s->device, s->capacity);
    return TT_OK;
}

void tt_rt_storage_retain(tt_rt_storage *s) {
    if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void tt_rt_storage_release(tt_rt_storage *s) {
    if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    tt_rt_storage_unpoison(s);
    tt_rt_mark_free(s);
    /* After tt_rt_shutdown the driver that made the buffer is gone (and with it the buffer): only the record is
     * left to free. The generation tells a storage of an earlier start-up from one of the current. */
    if (!tt_rt_g.driver || !atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire) ||
        s->generation != atomic_load(&tt_rt_g.generation)) {
        free(s);
        return;
    }
    tt_rt_device_mem *m = &tt_rt_g.mem[s->device];
    if (!tt_rt_storage_has_buffer(s)) { /* pending to the end: it never had memory */
        pthread_mutex_lock(&m->mu);
        live_remove_locked(m, s);
        pthread_mutex_unlock(&m->mu);
        free(s);
        return;
    }
    atomic_fetch_sub(&m->allocated, s->capacity);
    /* Cache the buffer unless that takes the cache over its cap (then it goes back to the driver). reserved -
     * allocated already counts this buffer as cached. */
    bool cache = tt_rt_g.cache_max && cached_bytes(s->device) <= tt_rt_g.cache_max;
    pthread_mutex_lock(&m->mu);
    live_remove_locked(m, s);
    if (cache) {
        int c = size_class(s->capacity);
        s->next_free = m->free_lists[c];
        m->free_lists[c] = s;
    }
    pthread_mutex_unlock(&m->mu);
    if (!cache) buffer_return(s);
}

void *tt_rt_storage_address(const tt_rt_storage *s) { return s ? s->address : NULL; }
size_t tt_rt_storage_nbytes(const tt_rt_storage *s) { return s ? s->nbytes : 0; }
int tt_rt_storage_device(const tt_rt_storage *s) { return s ? s->device : -1; }

/* ---- memory statistics ---- */

tt_status tt_rt_memory_stats_get(int device, tt_rt_memory_stats *out) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (!out) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_memory_stats_get: out is NULL");
    if (!tt_rt_device_valid(device))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "tpu:%d does not exist (%d devices)", device, tt_rt_g.n_devices);
    memset(out, 0, sizeof *out);
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    out->allocated = atomic_load(&m->allocated);
    out->peak_allocated = atomic_load(&m->peak);
    out->reserved = atomic_load(&m->reserved);
    if (out->reserved < out->allocated) out->reserved = out->allocated; /* two loads, not one snapshot */
    out->peak_reserved = atomic_load(&m->peak_reserved);
    if (out->peak_reserved < out->reserved) out->peak_reserved = out->reserved;
    out->n_allocs = atomic_load(&m->n_allocs);
    out->limit = tt_rt_g.memory_limit;
    tt_driver *drv = tt_rt_g.driver;
    tt_driver_memory_stats ds;
    if (drv->iface.memory_stats && drv->iface.memory_stats(drv->ctx, device, &ds) == TT_OK) out->limit = ds.bytes_limit;
    return TT_OK;
}

/* No start-up here: also called while the runtime starts (with the start-up lock held). */
void tt_rt_memory_reset_peak(int device) {
    if (!tt_rt_device_valid(device)) return;
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    atomic_store(&m->peak, atomic_load(&m->allocated));
    atomic_store(&m->peak_reserved, atomic_load(&m->reserved));
}

/* Waits for queued work first: storages it still holds go to the cache when it is done, and are freed here. */
void tt_rt_empty_cache(int device) {
    if (tt_rt_ensure() != TT_OK) return;
    for (int d = 0; d < tt_rt_g.n_devices; d++) {
        if (device >= 0 && d != device) continue;
        tt_rt_stream_wait_idle(&tt_rt_g.streams[d]);
        cache_flush(d);
    }
}

tt_status tt_rt_memory_init(int n_devices) {
    for (int d = 0; d < TT_RT_MAX_DEVICES; d++) {
        tt_rt_device_mem *m = &tt_rt_g.mem[d];
        atomic_store(&m->allocated, 0);
        atomic_store(&m->peak, 0);
        atomic_store(&m->reserved, 0);
        atomic_store(&m->peak_reserved, 0);
        atomic_store(&m->n_allocs, 0);
        memset(m->free_lists, 0, sizeof m->free_lists);
        free(m->live); /* NULL after a fini */
        m->live = NULL;
        m->live_cap = m->live_n = 0;
        if (d < n_devices && !m->mu_ready) {
            if (pthread_mutex_init(&m->mu, NULL)) {
                tt_rt_memory_fini();
                return tt_error(TT_STATUS_INTERNAL, "could not create the memory cache lock of tpu:%d", d);
            }
            m->mu_ready = true;
        }
    }
    return TT_OK;
}

void tt_rt_memory_fini(void) {
    for (int d = 0; d < TT_RT_MAX_DEVICES; d++) {
        tt_rt_device_mem *m = &tt_rt_g.mem[d];
        if (!m->mu_ready) continue;
        if (tt_rt_g.driver) cache_flush(d);
        free(m->live); /* storages still alive are of this generation no more: released, only freed */
        m->live = NULL;
        m->live_cap = m->live_n = 0;
        pthread_mutex_destroy(&m->mu);
        m->mu_ready = false;
    }
}
