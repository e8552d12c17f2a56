/* host_packcache.c — packed GEMM operands kept across executions.
 *
 * A GEMM packs its B operand (transposed, split into bf16 parts, tiled) before every run; for a model's weights
 * that work repeats unchanged on every call (a MiniLM forward spent a sixth of its time there). An operand read in
 * place from an argument buffer that this execution does not write has an identity: the buffer's id (never
 * reused) and write generation (host_driver.c bumps it at every write, copy and execution that writes the buffer),
 * with the offset and the packing's layout. Its packed bytes are kept here from the second time that identity is
 * packed (a weight a training step rewrites is packed once per generation and never kept) until the generation
 * moves on or the buffer is freed. TORCHTPU_HOST_PACK_CACHE_BYTES bounds the bytes kept (default 256 MiB; 0 turns
 * it off); when full, new operands are packed per call as before and nothing is evicted for them: a model larger
 * than the bound keeps its first weights packed instead of evicting and repacking every one on every call.
 *
 * Entries are reference counted while a GEMM reads them; one being packed is "filling" and counts as a miss for
 * anyone else. The lock is taken once per GEMM call, never per tile. */
#include "host_internal.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define PACK_SLOTS 512      /* hash slots (chained); entries are few: one per weight and layout */
#define PACK_MAX_ENTRIES 8192 /* past it, entries that hold no bytes (only seen) are swept */

struct tt_host_pack_entry {
    tt_host_pack_entry *next;
    tt_host_pack_key key;
    void *data;    /* NULL while only seen */
    size_t bytes;  /* of data */
    int refs;      /* GEMMs reading it */
    bool filling;  /* being packed by its first reader */
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static tt_host_pack_entry *slots[PACK_SLOTS];
static size_t held, cap = (size_t)256 << 20;
static bool configured;
static int64_t n_hits, n_fills, n_entries;

static _Thread_local const tt_host_ro_span *ro_spans;
static _Thread_local int32_t ro_n;

void tt_host_ro_set(const tt_host_ro_span *spans, int32_t n) {
    ro_spans = spans;
    ro_n = spans ? n : 0;
}

bool tt_host_pack_key_for(const void *p, const int64_t *layout, int n_layout, tt_host_pack_key *out) {
    if (!ro_n || n_layout > TT_HOST_PACK_LAYOUT) return false;
    uintptr_t c = (uintptr_t)p; /* as integers: relational compares of pointers into other objects are undefined */
    for (int32_t i = 0; i < ro_n; i++) {
        const tt_host_ro_span *s = &ro_spans[i];
        uintptr_t base = (uintptr_t)s->base;
        if (c < base || c - base >= s->nbytes) continue;
        memset(out, 0, sizeof *out);
        out->id = s->id;
        out->gen = s->gen;
        out->offset = (size_t)(c - base);
        memcpy(out->layout, layout, (size_t)n_layout * sizeof *layout);
        return true;
    }
    return false;
}

static size_t slot_of(const tt_host_pack_key *k) {
    uint64_t h = k->id * 0x9e3779b97f4a7c15ull ^ (uint64_t)k->offset;
    for (int i = 0; i < TT_HOST_PACK_LAYOUT; i++) h = (h ^ (uint64_t)k->layout[i]) * 1099511628211ull;
    return (size_t)(h % PACK_SLOTS);
}

/* Same operand and layout (any generation). */
static bool same_place(const tt_host_pack_key *a, const tt_host_pack_key *b) {
    return a->id == b->id && a->offset == b->offset && !memcmp(a->layout, b->layout, sizeof a->layout);
}

static void drop_data(tt_host_pack_entry *e) {
    if (!e->data) return;
    free(e->data);
    held -= e->bytes;
    e->data = NULL;
    e->bytes = 0;
}

/* Frees the entries of buffer id (by_id) or every entry that holds no bytes (only seen); entries a GEMM holds
 * stay. */
static void sweep_locked(uint64_t id, bool by_id) {
    for (size_t i = 0; i < PACK_SLOTS; i++) {
        tt_host_pack_entry **pp = &slots[i];
        while (*pp) {
            tt_host_pack_entry *e = *pp;
            bool go = e->refs == 0 && (by_id ? e->key.id == id : !e->data);
            if (!go) {
                pp = &e->next;
                continue;
            }
            *pp = e->next;
            drop_data(e);
            free(e);
            n_entries--;
        }
    }
}

void tt_host_pack_forget(uint64_t id) {
    pthread_mutex_lock(&mu);
    if (n_entries) sweep_locked(id, true);
    pthread_mutex_unlock(&mu);
}

static void configure(void) {
    configured = true;
    const char *v = getenv("TORCHTPU_HOST_PACK_CACHE_BYTES");
    if (v && *v) {
        char *end = NULL;
        unsigned long long n = strtoull(v, &end, 10);
        if (end && !*end && v[0] != '-') cap = (size_t)n; /* a bad value keeps the default: an optimisation */
    }
}

tt_host_pack_entry *tt_host_pack_acquire(const tt_host_pack_key *k, size_t bytes, void **data, bool *filled) {
    pthread_mutex_lock(&mu);
    if (!configured) configure();
    if (!cap || bytes > cap / 4) { /* off, or one operand would take much of the room */
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    tt_host_pack_entry **head = &slots[slot_of(k)], *e = *head;
    while (e && !same_place(&e->key, k)) e = e->next;
    if (e && e->key.gen != k->gen) { /* written since: what it holds is stale */
        if (e->refs == 0) drop_data(e);
        if (!e->data) {
            e->key.gen = k->gen;
            e->filling = false;
        }
        pthread_mutex_unlock(&mu);
        return NULL; /* seen once now, at this generation */
    }
    if (!e) {
        if (n_entries >= PACK_MAX_ENTRIES) sweep_locked(0, false);
        e = calloc(1, sizeof *e);
        if (e) {
            e->key = *k;
            e->next = *head;
            *head = e;
            n_entries++;
        }
        pthread_mutex_unlock(&mu);
        return NULL; /* first sighting: remembered, not kept */
    }
    if (e->data && !e->filling) { /* a hit */
        e->refs++;
        n_hits++;
        *data = e->data;
        *filled = true;
        pthread_mutex_unlock(&mu);
        return e;
    }
    if (e->filling || e->refs) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    /* second sighting: keep it, if there is room */
    void *d = held + bytes <= cap ? aligned_alloc(64, (bytes + 63) / 64 * 64) : NULL;
    if (!d) {
        pthread_mutex_unlock(&mu);
        return NULL;
    }
    e->data = d;
    e->bytes = bytes;
    e->filling = true;
    e->refs = 1;
    held += bytes;
    n_fills++;
    *data = d;
    *filled = false;
    pthread_mutex_unlock(&mu);
    return e;
}

void tt_host_pack_release(tt_host_pack_entry *e, bool filled_ok) {
    if (!e) return;
    pthread_mutex_lock(&mu);
    e->refs--;
    if (e->filling) {
        e->filling = false;
        if (!filled_ok && e->refs == 0) drop_data(e);
    }
    pthread_mutex_unlock(&mu);
}

void tt_host_pack_stats(int64_t *hits, int64_t *fills, size_t *bytes) {
    pthread_mutex_lock(&mu);
    *hits = n_hits;
    *fills = n_fills;
    *bytes = held;
    pthread_mutex_unlock(&mu);
}
