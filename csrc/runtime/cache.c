/* cache.c — the compile cache: program structure (+ driver) -> executable, shared by every mode and front door.
 *
 * A chained hash table keyed by the program's structural hash mixed with the driver's name; a hit is confirmed
 * with tt_ir_program_equal, so hash collisions are harmless. Entries are reference counted: the table holds one
 * reference and every launch in flight holds one, so tt_rt_cache_clear never frees an executable a queued launch
 * still needs (no sync required) — the last release frees it, on whichever thread that is.
 *
 * The caller's thread compiles on a miss, outside the lock so that lookups by other threads are not held up by
 * a long compile; if two threads miss on the same program at once, the first insert wins and the other
 * executable is dropped. */
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

struct tt_rt_cache_entry {
    tt_rt_cache_entry *next;
    uint64_t key;
    const char *driver_name; /* part of the key: one cache may serve several drivers later */
    tt_driver *driver;       /* frees the executable */
    tt_ir_program *program;  /* one reference: the structure the key stands for */
    tt_executable *exe;
    _Atomic int64_t refs;
    _Atomic int64_t cost_ns; /* measured by the stream worker; -1 = not yet */
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_rt_cache_entry **cache_buckets;
static size_t cache_n_buckets; /* a power of two, or 0 before first use */
static int64_t cache_count;

static uint64_t cache_key(uint64_t program_hash, const char *driver_name) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the name, then mixed with the program hash */
    for (const char *c = driver_name; *c; c++) h = (h ^ (uint8_t)*c) * 1099511628211ull;
    h ^= program_hash + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h;
}

static const char *driver_name_of(const tt_driver *d) { return d->iface.name ? d->iface.name : ""; }

static void entry_free(tt_rt_cache_entry *e) {
    e->driver->iface.executable_free(e->driver->ctx, e->exe);
    tt_ir_program_destroy(e->program);
    free(e);
}

void tt_rt_cache_entry_release(tt_rt_cache_entry *e) {
    if (e && atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) == 1) entry_free(e);
}

tt_executable *tt_rt_cache_entry_exe(const tt_rt_cache_entry *e) { return e->exe; }

int64_t tt_rt_cache_entry_cost(const tt_rt_cache_entry *e) {
    return atomic_load_explicit(&e->cost_ns, memory_order_relaxed);
}

/* A moving average weighting the newest run 1/4: steady after a few runs, and one slow run (a cold cache, a
 * preempted worker) moves it only so far. */
void tt_rt_cache_entry_note_cost(tt_rt_cache_entry *e, int64_t ns) {
    int64_t old = atomic_load_explicit(&e->cost_ns, memory_order_relaxed);
    atomic_store_explicit(&e->cost_ns, old < 0 ? ns : old + (ns - old) / 4, memory_order_relaxed);
}

/* Caller holds cache_mu. Returns the matching entry or NULL. */
static tt_rt_cache_entry *find_locked(uint64_t key, const char *dname, const tt_ir_program *p) {
    if (!cache_n_buckets) return NULL;
    for (tt_rt_cache_entry *e = cache_buckets[key & (cache_n_buckets - 1)]; e; e = e->next)
        if (e->key == key && !strcmp(e->driver_name, dname) && (e->program == p || tt_ir_program_equal(e->program, p)))
            return e;
    return NULL;
}

/* Caller holds cache_mu. Keeps the load factor at most 1; a failed grow only makes chains longer. */
static void grow_locked(void) {
    if ((size_t)cache_count < cache_n_buckets) return;
    size_t n = cache_n_buckets ? cache_n_buckets * 2 : 256;
    tt_rt_cache_entry **nb = calloc(n, sizeof *nb);
    if (!nb) return;
    for (size_t i = 0; i < cache_n_buckets; i++) {
        tt_rt_cache_entry *e = cache_buckets[i];
        while (e) {
            tt_rt_cache_entry *next = e->next;
            e->next = nb[e->key & (n - 1)];
            nb[e->key & (n - 1)] = e;
            e = next;
        }
    }
    free(cache_buckets);
    cache_buckets = nb;
    cache_n_buckets = n;
}

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

tt_status tt_rt_cache_acquire(tt_ir_program *program, tt_rt_cache_entry **out) {
    tt_driver *drv = tt_rt_g.driver;
    const char *dname = driver_name_of(drv);
    uint64_t key = cache_key(program->hash, dname);

    pthread_mutex_lock(&cache_mu);
    tt_rt_cache_entry *e = find_locked(key, dname, program);
    if (e) atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    pthread_mutex_unlock(&cache_mu);
    if (e) {
        atomic_fetch_add_explicit(&tt_rt_g.cache_hits, 1, memory_order_relaxed);
        *out = e;
        return TT_OK;
    }

    /* Every program is verified once, before a driver first sees it (a miss is rare; the check is cheap). */
    tt_status vst = tt_ir_verify(program);
    if (vst != TT_OK) return tt_error(TT_STATUS_INTERNAL, "invalid IR program: %s", tt_last_error());
    tt_rt_cache_entry *ne = calloc(1, sizeof *ne);
    if (!ne) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a compile cache entry");
    int64_t t0 = now_ns();
    tt_status st = drv->iface.compile(drv->ctx, program, &ne->exe);
    atomic_fetch_add(&tt_rt_g.compile_ns, now_ns() - t0);
    if (st != TT_OK) {
        free(ne);
        return st;
    }
    atomic_fetch_add(&tt_rt_g.compiles, 1);
    ne->key = key;
    ne->driver_name = dname;
    ne->driver = drv;
    tt_ir_program_retain(program);
    ne->program = program;
    atomic_init(&ne->refs, 2); /* the table's and the caller's */
    atomic_init(&ne->cost_ns, -1);

    pthread_mutex_lock(&cache_mu);
    e = find_locked(key, dname, program);
    if (e) {
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed); /* lost a race: use the winner's */
    } else {
        grow_locked();
        if (!cache_n_buckets) {
            pthread_mutex_unlock(&cache_mu);
            atomic_init(&ne->refs, 1);
            *out = ne; /* uncached, but usable: freed when the launch is done */
            return TT_OK;
        }
        size_t b = key & (cache_n_buckets - 1);
        ne->next = cache_buckets[b];
        cache_buckets[b] = ne;
        cache_count++;
    }
    pthread_mutex_unlock(&cache_mu);
    if (e) {
        entry_free(ne);
        *out = e;
    } else {
        *out = ne;
    }
    return TT_OK;
}

/* Unlinks every entry, then drops the table's references outside the lock (a free may take a while). */
static tt_rt_cache_entry *detach_all(void) {
    tt_rt_cache_entry *list = NULL;
    pthread_mutex_lock(&cache_mu);
    for (size_t i = 0; i < cache_n_buckets; i++) {
        tt_rt_cache_entry *e = cache_buckets[i];
        while (e) {
            tt_rt_cache_entry *next = e->next;
            e->next = list;
            list = e;
            e = next;
        }
        cache_buckets[i] = NULL;
    }
    cache_count = 0;
    pthread_mutex_unlock(&cache_mu);
    return list;
}

void tt_rt_cache_clear(void) {
    tt_rt_cache_entry *e = detach_all();
    while (e) {
        tt_rt_cache_entry *next = e->next;
        tt_rt_cache_entry_release(e);
        e = next;
    }
}

int64_t tt_rt_cache_size(void) {
    pthread_mutex_lock(&cache_mu);
    int64_t n = cache_count;
    pthread_mutex_unlock(&cache_mu);
    return n;
}

void tt_rt_cache_fini(void) {
    tt_rt_cache_clear();
    pthread_mutex_lock(&cache_mu);
    free(cache_buckets);
    cache_buckets = NULL;
    cache_n_buckets = 0;
    pthread_mutex_unlock(&cache_mu);
}
