/* cache.c — the compile cache: program structure (+ driver) -> executable, shared by every mode and front door.
 *
 * A chained hash table keyed by the program's structural hash mixed with the driver's name; a hit is confirmed
 * with tt_ir_program_equal, so hash collisions are harmless. Entries are reference counted: the table holds one
 * reference and every launch in flight holds one, so tt_rt_cache_clear never frees an executable a queued launch
 * still needs (no sync required) — the last release frees it, on whichever thread that is.
 *
 * The caller's thread compiles on a miss, outside the lock so that lookups by other threads are not held up by
 * a long compile; if two threads miss on the same program at once, the first insert wins and the other
 * executable is dropped.
 *
 * The table is bounded (TORCHTPU_CACHE_ENTRIES, default TT_RT_CACHE_DEFAULT_ENTRIES): entries sit on a list in
 * order of last use (a hit moves its entry to the front, under the lock the lookup takes anyway) and an insert
 * over the bound drops the least recently used. A dropped entry's executable, and with it the driver's scratch
 * arenas, is freed when the last launch holding it is done. Telemetry (requests, hits, compilations, per-entry
 * compile time, last use and hit count) is kept under the same lock. */
#include "rt_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TT_RT_CACHE_DEFAULT_ENTRIES 4096
#define TT_RT_CACHE_OP_NAME 64

struct tt_rt_cache_entry {
    tt_rt_cache_entry *next;
    uint64_t key;
    const char *driver_name; /* part of the key: one cache may serve several drivers later */
    tt_driver *driver;       /* frees the executable */
    tt_ir_program *program;  /* one reference: the structure the key stands for */
    tt_executable *exe;
    _Atomic int64_t refs;
    _Atomic int64_t cost_ns; /* measured by the stream worker; -1 = not yet */
    /* under cache_mu: */
    tt_rt_cache_entry *lru_prev, *lru_next; /* the use order; head = most recent */
    int64_t read_count;
    double last_read;        /* CLOCK_REALTIME seconds */
    int64_t compile_ns;
    char first_op[TT_RT_CACHE_OP_NAME];
};

static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_rt_cache_entry **cache_buckets;
static size_t cache_n_buckets; /* a power of two, or 0 before first use */
static int64_t cache_count;
/* Under cache_mu: */
static tt_rt_cache_entry *lru_head, *lru_tail;
static int64_t cache_capacity = TT_RT_CACHE_DEFAULT_ENTRIES;
static int64_t n_requests, n_hits, n_compilations, n_evictions;
/* Read without the lock on every miss (a flag set from Python): atomics. */
static _Atomic bool cache_only, cache_disallowed, dump_on_miss;

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

const tt_ir_program *tt_rt_cache_entry_program(const tt_rt_cache_entry *e) { return e->program; }
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

/* Wall-clock seconds for last_read. The coarse clock (a few ns, tick-resolution) where there is one: it is read
 * on every hit. */
static double wall_seconds(void) {
    struct timespec ts;
#ifdef CLOCK_REALTIME_COARSE
    clock_gettime(CLOCK_REALTIME_COARSE, &ts);
#else
    clock_gettime(CLOCK_REALTIME, &ts);
#endif
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- the use order (caller holds cache_mu) ---- */
static void lru_unlink(tt_rt_cache_entry *e) {
    if (e->lru_prev) e->lru_prev->lru_next = e->lru_next;
    else lru_head = e->lru_next;
    if (e->lru_next) e->lru_next->lru_prev = e->lru_prev;
    else lru_tail = e->lru_prev;
    e->lru_prev = e->lru_next = NULL;
}

static void lru_push_front(tt_rt_cache_entry *e) {
    e->lru_prev = NULL;
    e->lru_next = lru_head;
    if (lru_head) lru_head->lru_prev = e;
    lru_head = e;
    if (!lru_tail) lru_tail = e;
}

/* Takes e out of its bucket chain and the use order; the table's reference passes to the caller. */
static void unlink_locked(tt_rt_cache_entry *e) {
    tt_rt_cache_entry **link = &cache_buckets[e->key & (cache_n_buckets - 1)];
    while (*link && *link != e) link = &(*link)->next;
    if (*link) *link = e->next;
    e->next = NULL;
    lru_unlink(e);
    cache_count--;
}

/* Drops least recently used entries until at most cap remain; returns them (linked by next) for release outside
 * the lock. */
static tt_rt_cache_entry *evict_locked(int64_t cap) {
    tt_rt_cache_entry *list = NULL;
    while (cache_count > cap && lru_tail) {
        tt_rt_cache_entry *e = lru_tail;
        unlink_locked(e);
        e->next = list;
        list = e;
        n_evictions++;
    }
    return list;
}

static void release_list(tt_rt_cache_entry *e) {
    while (e) {
        tt_rt_cache_entry *next = e->next;
        tt_rt_cache_entry_release(e);
        e = next;
    }
}

/* Scratch the driver's executable holds now (0 if the driver cannot tell: an older vtable or no query). */
static size_t entry_scratch(const tt_rt_cache_entry *e) {
    const tt_driver_i *i = &e->driver->iface;
    if (i->struct_size < offsetof(tt_driver_i, executable_scratch_bytes) + sizeof i->executable_scratch_bytes ||
        !i->executable_scratch_bytes)
        return 0;
    return i->executable_scratch_bytes(e->driver->ctx, e->exe);
}

/* The persistent cache's key: what an executable's bytes depend on, the program's StableHLO text (its
 * precision included) last. NULL when the program cannot be printed (no disk then). */
static char *disk_key(const tt_driver *drv, tt_ir_program *program, size_t *klen) {
    char *text = NULL;
    if (tt_ir_print_stablehlo(program, &text) != TT_OK || !text) {
        free(text);
        return NULL;
    }
    const tt_driver_i *i = &drv->iface;
    const char *ident = TT_RT_HAS_MEMBER(i, identity) ? i->identity(drv->ctx) : NULL;
    char head[512];
    int hn = snprintf(head, sizeof head, "torchtpu persistent cache 1\ntorchtpu %d.%d\ndriver %s %d %s\n",
                      TT_VERSION_MAJOR, TT_VERSION_MINOR, i->name, (int)i->version, ident ? ident : "");
    size_t tn = strlen(text);
    char *key = (hn > 0 && (size_t)hn < sizeof head) ? malloc((size_t)hn + tn + 1) : NULL;
    if (key) {
        memcpy(key, head, (size_t)hn);
        memcpy(key + hn, text, tn + 1);
        *klen = (size_t)hn + tn;
    }
    free(text);
    return key;
}

/* The driver's compile, through the persistent cache when the driver serializes executables and the cache is on:
 * an entry on disk is deserialized instead of compiled; a compiled executable is written there. */
static tt_status compile_program(tt_driver *drv, tt_ir_program *program, tt_executable **exe) {
    const tt_driver_i *i = &drv->iface;
    if (!tt_rt_disk_on() || !TT_RT_HAS_MEMBER(i, executable_serialize) || !TT_RT_HAS_MEMBER(i, executable_deserialize))
        return i->compile(drv->ctx, program, exe);
    size_t klen = 0;
    char *key = disk_key(drv, program, &klen);
    if (!key) return i->compile(drv->ctx, program, exe);
    void *bytes = NULL;
    size_t n = 0;
    tt_rt_disk_get(key, klen, &bytes, &n);
    if (bytes) {
        tt_status st = i->executable_deserialize(drv->ctx, program, bytes, n, exe);
        free(bytes);
        if (st == TT_OK) {
            free(key);
            return TT_OK;
        }
        tt_clear_error();
    }
    tt_status st = i->compile(drv->ctx, program, exe);
    if (st == TT_OK && i->executable_serialize(drv->ctx, *exe, &bytes, &n) == TT_OK && bytes) {
        tt_rt_disk_put(key, klen, bytes, n);
        free(bytes);
    } else if (st == TT_OK) {
        tt_clear_error();
    }
    free(key);
    return st;
}

tt_status tt_rt_cache_acquire(tt_ir_program *program, const char *op_name, tt_rt_cache_entry **out) {
    tt_driver *drv = tt_rt_g.driver;
    const char *dname = driver_name_of(drv);
    uint64_t key = cache_key(program->hash, dname);
    bool allow = !atomic_load_explicit(&cache_disallowed, memory_order_relaxed);

    pthread_mutex_lock(&cache_mu);
    n_requests++;
    tt_rt_cache_entry *e = allow ? find_locked(key, dname, program) : NULL;
    if (e) {
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        n_hits++;
        e->read_count++;
        e->last_read = wall_seconds();
        if (e != lru_head) {
            lru_unlink(e);
            lru_push_front(e);
        }
    }
    pthread_mutex_unlock(&cache_mu);
    if (e) {
        atomic_fetch_add_explicit(&tt_rt_g.cache_hits, 1, memory_order_relaxed);
        *out = e;
        return TT_OK;
    }
    if (atomic_load_explicit(&cache_only, memory_order_relaxed))
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "compile cache miss in cache-only mode (torch.tpu._set_cache_only(True)): this program is "
                        "not in the cache, and compiling is off");
    if (atomic_load_explicit(&dump_on_miss, memory_order_relaxed)) {
        char *text = NULL;
        if (tt_ir_print_stablehlo(program, &text) == TT_OK && text)
            fprintf(stderr, "torchtpu: compile cache miss (%s):\n%s\n", op_name ? op_name : "?", text);
        free(text);
    }

    /* Every program is verified once, before a driver first sees it (a miss is rare; the check is cheap). */
    tt_status vst = tt_ir_verify(program);
    if (vst != TT_OK) return tt_error(TT_STATUS_INTERNAL, "invalid IR program: %s", tt_last_error());
    tt_rt_cache_entry *ne = calloc(1, sizeof *ne);
    if (!ne) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a compile cache entry");
    int64_t t0 = now_ns();
    tt_status st = compile_program(drv, program, &ne->exe);
    int64_t dt = now_ns() - t0;
    atomic_fetch_add(&tt_rt_g.compile_ns, dt);
    if (st != TT_OK) {
        free(ne);
        return st;
    }
    ne->key = key;
    ne->driver_name = dname;
    ne->driver = drv;
    tt_ir_program_retain(program);
    ne->program = program;
    ne->compile_ns = dt;
    ne->last_read = wall_seconds();
    snprintf(ne->first_op, sizeof ne->first_op, "%s", op_name ? op_name : "");
    atomic_init(&ne->refs, 2); /* the table's and the caller's */
    atomic_init(&ne->cost_ns, -1);

    tt_rt_cache_entry *evicted = NULL;
    pthread_mutex_lock(&cache_mu);
    e = allow ? find_locked(key, dname, program) : NULL;
    if (e) {
        /* Lost a race with another thread's compile of the same program: use the winner's, and count this request
         * as the hit it ends up being, so compiles + hits == requests and one program is one compile. */
        atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
        n_hits++;
        e->read_count++;
        atomic_fetch_add_explicit(&tt_rt_g.cache_hits, 1, memory_order_relaxed);
    } else {
        n_compilations++;
        atomic_fetch_add(&tt_rt_g.compiles, 1);
        if (allow && cache_capacity > 0) grow_locked();
        if (!allow || cache_capacity <= 0 || !cache_n_buckets) {
            pthread_mutex_unlock(&cache_mu);
            atomic_init(&ne->refs, 1);
            *out = ne; /* uncached, but usable: freed when the launch is done */
            return TT_OK;
        }
        size_t b = key & (cache_n_buckets - 1);
        ne->next = cache_buckets[b];
        cache_buckets[b] = ne;
        cache_count++;
        lru_push_front(ne);
        evicted = evict_locked(cache_capacity);
    }
    pthread_mutex_unlock(&cache_mu);
    release_list(evicted);
    if (e) {
        entry_free(ne);
        *out = e;
    } else {
        *out = ne;
    }
    return TT_OK;
}

void tt_rt_cache_clear(void) {
    pthread_mutex_lock(&cache_mu);
    tt_rt_cache_entry *list = NULL;
    while (lru_head) {
        tt_rt_cache_entry *e = lru_head;
        unlink_locked(e);
        e->next = list;
        list = e;
    }
    pthread_mutex_unlock(&cache_mu);
    release_list(list); /* outside the lock: a free may take a while */
}

int64_t tt_rt_cache_size(void) {
    pthread_mutex_lock(&cache_mu);
    int64_t n = cache_count;
    pthread_mutex_unlock(&cache_mu);
    return n;
}

void tt_rt_cache_stats_get(tt_rt_cache_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&cache_mu);
    out->requests = n_requests;
    out->hits = n_hits;
    out->compilations = n_compilations;
    out->evictions = n_evictions;
    out->entries = cache_count;
    out->capacity = cache_capacity;
    for (tt_rt_cache_entry *e = lru_head; e; e = e->lru_next) out->scratch_bytes += entry_scratch(e);
    pthread_mutex_unlock(&cache_mu);
}

void tt_rt_cache_foreach(void (*fn)(void *user, const tt_rt_cache_entry_stats *e), void *user) {
    if (!fn) return;
    pthread_mutex_lock(&cache_mu);
    for (tt_rt_cache_entry *e = lru_head; e; e = e->lru_next) {
        tt_rt_cache_entry_stats es = {
            .key = e->key,
            .compilation_duration = (double)e->compile_ns * 1e-9,
            .last_read = e->last_read,
            .read_count = e->read_count,
            .scratch_bytes = entry_scratch(e),
            .first_op = e->first_op,
        };
        fn(user, &es);
    }
    pthread_mutex_unlock(&cache_mu);
}

void tt_rt_cache_reset_stats(void) {
    pthread_mutex_lock(&cache_mu);
    n_requests = n_hits = n_compilations = n_evictions = 0;
    pthread_mutex_unlock(&cache_mu);
}

tt_status tt_rt_cache_set_capacity(int64_t n) {
    if (n < 0) return tt_error(TT_STATUS_INVALID_ARGUMENT, "compile cache capacity must be >= 0, got %lld", (long long)n);
    pthread_mutex_lock(&cache_mu);
    cache_capacity = n;
    tt_rt_cache_entry *evicted = evict_locked(n);
    pthread_mutex_unlock(&cache_mu);
    release_list(evicted);
    return TT_OK;
}

void tt_rt_cache_limit(int64_t max) {
    pthread_mutex_lock(&cache_mu);
    bool over = max > 0 && cache_capacity > max;
    pthread_mutex_unlock(&cache_mu);
    if (over) tt_rt_cache_set_capacity(max);
}

void tt_rt_cache_set_only(bool on) { atomic_store(&cache_only, on); }
bool tt_rt_cache_get_only(void) { return atomic_load(&cache_only); }
void tt_rt_cache_set_allow(bool allow) { atomic_store(&cache_disallowed, !allow); }
bool tt_rt_cache_get_allow(void) { return !atomic_load(&cache_disallowed); }
void tt_rt_cache_set_dump_on_miss(bool on) { atomic_store(&dump_on_miss, on); }

tt_status tt_rt_cache_configure(void) {
    int64_t cap = TT_RT_CACHE_DEFAULT_ENTRIES;
    const char *v = getenv("TORCHTPU_CACHE_ENTRIES");
    if (v && *v) {
        char *end = NULL;
        long long n = strtoll(v, &end, 10);
        if (*v < '0' || *v > '9' || !end || *end || n < 0 || n > INT64_MAX / 2)
            return tt_error(TT_STATUS_INVALID_ARGUMENT,
                            "TORCHTPU_CACHE_ENTRIES='%s' must be a number of compiled programs to keep (0 = none)", v);
        cap = (int64_t)n;
    }
    tt_status st = tt_rt_disk_configure();
    return st != TT_OK ? st : tt_rt_cache_set_capacity(cap);
}

void tt_rt_cache_fini(void) {
    tt_rt_cache_clear();
    pthread_mutex_lock(&cache_mu);
    free(cache_buckets);
    cache_buckets = NULL;
    cache_n_buckets = 0;
    pthread_mutex_unlock(&cache_mu);
}

/* ---- capture: the programs executed between start and stop (torchtpu.aot_compile compiles them for another
 * target). Process-wide (windows run on stream threads); off, it costs the execute sites one relaxed load. ---- */

static pthread_mutex_t capture_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_ir_program **captured;
static int32_t n_captured, cap_captured;

static void capture_clear_locked(void) {
    for (int32_t i = 0; i < n_captured; i++) tt_ir_program_destroy(captured[i]);
    free(captured);
    captured = NULL;
    n_captured = cap_captured = 0;
}

tt_status tt_rt_capture_start(void) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    pthread_mutex_lock(&capture_mu);
    capture_clear_locked();
    atomic_store(&tt_rt_g.capturing, true);
    pthread_mutex_unlock(&capture_mu);
    return TT_OK;
}

void tt_rt_capture_note(const tt_rt_cache_entry *entry) {
    tt_ir_program *p = entry->program;
    pthread_mutex_lock(&capture_mu);
    bool seen = !atomic_load(&tt_rt_g.capturing);
    for (int32_t i = 0; i < n_captured && !seen; i++)
        seen = captured[i]->hash == p->hash && tt_ir_program_equal(captured[i], p);
    if (!seen && n_captured == cap_captured) {
        int32_t cap = cap_captured ? cap_captured * 2 : 16;
        tt_ir_program **grown = realloc(captured, sizeof *grown * (size_t)cap);
        if (grown) captured = grown, cap_captured = cap;
    }
    if (!seen && n_captured < cap_captured) { /* out of memory: the program is left out (rare; counted nowhere) */
        tt_ir_program_retain(p);
        captured[n_captured++] = p;
    }
    pthread_mutex_unlock(&capture_mu);
}

int32_t tt_rt_capture_stop(tt_ir_program ***programs) {
    pthread_mutex_lock(&capture_mu);
    atomic_store(&tt_rt_g.capturing, false);
    *programs = captured;
    int32_t n = n_captured;
    captured = NULL;
    n_captured = cap_captured = 0;
    pthread_mutex_unlock(&capture_mu);
    return n;
}
