/* wtrace.c — the trace cache: a training step records the same windows every time, so a window whose trace was
 * seen before replays the program finished then, without building, finishing or hashing it again.
 *
 * A window's trace (window.c) lists, op by op, the op's program (a pointer: each entry retains the programs its
 * trace names, so no other program can take that address while it lives; the signature cache hands out the same
 * program for the same op signature), and every tensor it reads or writes as (slot, view, and for a new slot its
 * size and whether it had a buffer). With the mask of the slots kept as results at the cut, that decides the
 * window's program and the order of its parameters entirely. Ops' programs are interned first (equal programs
 * share one pointer). Entries are compared word for word after a hash
 * match; the cache is a bounded LRU shared by every device.
 *
 * The miss reasons of TORCHTPU_LOG=fusion compare a newly compiled window program with the last one compiled for
 * the same sequence of op names (a small table kept only while that log is on). */
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>

#define WTRACE_BUCKETS 1024
#define WTRACE_MAX 512 /* entries kept: a training step holds tens of windows */
#define REASON_SLOTS 256

struct tt_rt_wtrace {
    _Atomic int32_t refs;
    uint64_t hash;
    int32_t n_words;      /* trace then mask */
    uint64_t *words;
    int32_t n_progs;
    tt_ir_program **progs; /* the ops' programs the trace names, retained */
    tt_ir_program *program;
    int32_t n_out;
    int32_t *out_slots;
    tt_rt_bucket_plan *plan; /* owned, or NULL */
    tt_rt_wtrace *next, *lru_prev, *lru_next;
};

static pthread_mutex_t wt_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_rt_wtrace *buckets[WTRACE_BUCKETS];
static tt_rt_wtrace *lru_head, *lru_tail;
static int64_t wt_count;

static uint64_t mix(uint64_t h, uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t trace_hash(const tt_rt_window *w, const uint64_t *mask, int32_t n_mask) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (int32_t i = 0; i < w->n_trace; i++) h = mix(h, w->trace[i]);
    for (int32_t i = 0; i < n_mask; i++) h = mix(h, mask[i]);
    return mix(h, (uint64_t)n_mask);
}

static void entry_free(tt_rt_wtrace *t) {
    for (int32_t i = 0; i < t->n_progs; i++) tt_ir_program_destroy(t->progs[i]);
    tt_ir_program_destroy(t->program);
    tt_rt_bucket_plan_free(t->plan);
    free(t->progs);
    free(t->words);
    free(t->out_slots);
    free(t);
}

void tt_rt_wtrace_release(tt_rt_wtrace *t) {
    if (t && atomic_fetch_sub(&t->refs, 1) == 1) entry_free(t);
}

tt_ir_program *tt_rt_wtrace_program(const tt_rt_wtrace *t) { return t->program; }
const tt_rt_bucket_plan *tt_rt_wtrace_plan(const tt_rt_wtrace *t) { return t->plan; }

int32_t tt_rt_wtrace_outputs(const tt_rt_wtrace *t, const int32_t **slots) {
    *slots = t->out_slots;
    return t->n_out;
}

static void lru_unlink(tt_rt_wtrace *t) {
    if (t->lru_prev) t->lru_prev->lru_next = t->lru_next;
    else lru_head = t->lru_next;
    if (t->lru_next) t->lru_next->lru_prev = t->lru_prev;
    else lru_tail = t->lru_prev;
    t->lru_prev = t->lru_next = NULL;
}

static void lru_push_front(tt_rt_wtrace *t) {
    t->lru_prev = NULL;
    t->lru_next = lru_head;
    if (lru_head) lru_head->lru_prev = t;
    lru_head = t;
    if (!lru_tail) lru_tail = t;
}

/* Caller holds wt_mu: takes t out of the cache and drops the cache's reference. */
static void remove_locked(tt_rt_wtrace *t) {
    tt_rt_wtrace **pp = &buckets[t->hash % WTRACE_BUCKETS];
    while (*pp && *pp != t) pp = &(*pp)->next;
    if (*pp) *pp = t->next;
    lru_unlink(t);
    wt_count--;
    tt_rt_wtrace_release(t);
}

static bool same_words(const tt_rt_wtrace *t, const tt_rt_window *w, const uint64_t *mask, int32_t n_mask) {
    return t->n_words == w->n_trace + n_mask &&
           memcmp(t->words, w->trace, sizeof *w->trace * (size_t)w->n_trace) == 0 &&
           memcmp(t->words + w->n_trace, mask, sizeof *mask * (size_t)n_mask) == 0;
}

tt_rt_wtrace *tt_rt_wtrace_find(const tt_rt_window *w, const uint64_t *mask, int32_t n_mask, uint64_t *hash) {
    uint64_t h = *hash = trace_hash(w, mask, n_mask);
    pthread_mutex_lock(&wt_mu);
    tt_rt_wtrace *t = buckets[h % WTRACE_BUCKETS];
    while (t && !(t->hash == h && same_words(t, w, mask, n_mask))) t = t->next;
    if (t) {
        atomic_fetch_add(&t->refs, 1);
        if (t != lru_head) {
            lru_unlink(t);
            lru_push_front(t);
        }
    }
    pthread_mutex_unlock(&wt_mu);
    return t;
}

tt_rt_wtrace *tt_rt_wtrace_insert(const tt_rt_window *w, const uint64_t *mask, int32_t n_mask, uint64_t hash,
                                  tt_ir_program *program, const int32_t *out_slots, int32_t n_out,
                                  tt_rt_bucket_plan *plan) {
    int32_t n_ops = atomic_load(&w->n_ops);
    tt_rt_wtrace *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->n_words = w->n_trace + n_mask;
    t->words = malloc(sizeof *t->words * (size_t)(t->n_words ? t->n_words : 1));
    t->progs = malloc(sizeof *t->progs * (size_t)(n_ops ? n_ops : 1));
    t->out_slots = malloc(sizeof *t->out_slots * (size_t)(n_out ? n_out : 1));
    if (!t->words || !t->progs || !t->out_slots) {
        entry_free(t);
        return NULL;
    }
    memcpy(t->words, w->trace, sizeof *w->trace * (size_t)w->n_trace);
    memcpy(t->words + w->n_trace, mask, sizeof *mask * (size_t)n_mask);
    for (int32_t k = 0; k < n_ops; k++) {
        tt_ir_program_retain(w->ops[k].p);
        t->progs[t->n_progs++] = w->ops[k].p;
    }
    tt_ir_program_retain(program);
    t->program = program;
    memcpy(t->out_slots, out_slots, sizeof *out_slots * (size_t)n_out);
    t->n_out = n_out;
    t->plan = plan;
    t->hash = hash;
    atomic_init(&t->refs, 2); /* the cache's and the caller's */
    pthread_mutex_lock(&wt_mu);
    t->next = buckets[t->hash % WTRACE_BUCKETS];
    buckets[t->hash % WTRACE_BUCKETS] = t;
    lru_push_front(t);
    wt_count++;
    while (wt_count > WTRACE_MAX && lru_tail) remove_locked(lru_tail);
    pthread_mutex_unlock(&wt_mu);
    return t;
}

/* ---- interned op programs ----
 * An op whose scalar arguments change every step (AdamW's bias corrections) misses the signature cache and brings
 * a new program of the same structure each time; traces name the first program equal to it instead. Direct-mapped
 * by hash: a collision replaces the older program (the traces still naming it keep it alive, so its address is
 * not reused while they exist). */
#define INTERN_SLOTS 4096
static pthread_mutex_t intern_mu = PTHREAD_MUTEX_INITIALIZER; /* taken to change a slot */
static _Atomic(tt_ir_program *) interned[INTERN_SLOTS];

tt_ir_program *tt_rt_wtrace_intern(tt_ir_program *p) {
    size_t i = (size_t)(p->hash % INTERN_SLOTS);
    /* the per-op path: a signature-cache program is usually its slot's already (the caller's reference keeps p) */
    if (atomic_load_explicit(&interned[i], memory_order_acquire) == p) {
        tt_ir_program_retain(p);
        return p;
    }
    pthread_mutex_lock(&intern_mu);
    tt_ir_program *q = atomic_load(&interned[i]);
    if (q != p && !(q && tt_ir_program_equal(q, p))) {
        tt_ir_program_retain(p);
        atomic_store(&interned[i], p);
        tt_ir_program_destroy(q);
        q = p;
    }
    tt_ir_program_retain(q);
    pthread_mutex_unlock(&intern_mu);
    return q;
}

/* ---- why a window program was compiled (TORCHTPU_LOG=fusion) ---- */
static struct {
    uint64_t key;
    tt_ir_program *program;
} reasons[REASON_SLOTS];

void tt_rt_wtrace_clear(void) {
    pthread_mutex_lock(&intern_mu);
    for (int i = 0; i < INTERN_SLOTS; i++) tt_ir_program_destroy(atomic_exchange(&interned[i], NULL));
    pthread_mutex_unlock(&intern_mu);
    pthread_mutex_lock(&wt_mu);
    while (lru_tail) remove_locked(lru_tail);
    for (int i = 0; i < REASON_SLOTS; i++) {
        tt_ir_program_destroy(reasons[i].program);
        reasons[i].program = NULL;
        reasons[i].key = 0;
    }
    pthread_mutex_unlock(&wt_mu);
}

int64_t tt_rt_wtrace_count(void) {
    pthread_mutex_lock(&wt_mu);
    int64_t n = wt_count;
    pthread_mutex_unlock(&wt_mu);
    return n;
}

const char *tt_rt_wtrace_miss_reason(const tt_rt_origins *ops, tt_ir_program *program) {
    /* the ops' names (every other string of the origins text) */
    uint64_t key = 0x84222325cbf29ce4ull;
    const char *s = ops->text;
    for (int32_t k = 0; s && k < ops->n; k++) {
        size_t len = strlen(s);
        for (size_t i = 0; i < len; i++) key = mix(key, (unsigned char)s[i]);
        key = mix(key, 0);
        s += len + 1;
        s += strlen(s) + 1;
    }
    pthread_mutex_lock(&wt_mu);
    int slot = (int)(key % REASON_SLOTS);
    const char *why = "new structure";
    if (reasons[slot].program && reasons[slot].key == key) why = tt_ir_program_difference(reasons[slot].program, program);
    tt_ir_program_retain(program);
    tt_ir_program_destroy(reasons[slot].program);
    reasons[slot].program = program;
    reasons[slot].key = key;
    pthread_mutex_unlock(&wt_mu);
    return why;
}
