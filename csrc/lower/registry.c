/* registry.c — the one lowering table: every family table, found by "aten::name.overload". */
#include "tt_lower.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const tt_lower_entry *const tt_lower_families[] = {
    tt_lower_table_elementwise, tt_lower_table_reduce, tt_lower_table_shape, tt_lower_table_matmul,
    tt_lower_table_conv,        tt_lower_table_index,  tt_lower_table_nn,    tt_lower_table_random,
    tt_lower_table_sort,        tt_lower_table_creation, tt_lower_table_activation, tt_lower_table_dynamic,
    tt_lower_table_resample, tt_lower_table_special, tt_lower_table_search, tt_lower_table_pool,
};
#define TT_LOWER_N_FAMILIES (sizeof tt_lower_families / sizeof tt_lower_families[0])

/* Open-addressing hash of names -> entries, built once. */
static const tt_lower_entry **tt_lower_slots;
static size_t tt_lower_mask;
static int32_t tt_lower_n;
static pthread_once_t tt_lower_once = PTHREAD_ONCE_INIT;

static uint64_t tt_lower_hash_name(const char *s) {
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static void tt_lower_build(void) {
    int32_t n = 0;
    for (size_t f = 0; f < TT_LOWER_N_FAMILIES; f++)
        for (const tt_lower_entry *e = tt_lower_families[f]; e->name; e++) n++;
    size_t cap = 64;
    while (cap < (size_t)n * 2) cap *= 2;
    tt_lower_slots = calloc(cap, sizeof *tt_lower_slots);
    if (!tt_lower_slots) return; /* tt_lower_find then finds nothing: everything falls back */
    tt_lower_mask = cap - 1;
    for (size_t f = 0; f < TT_LOWER_N_FAMILIES; f++) {
        for (const tt_lower_entry *e = tt_lower_families[f]; e->name; e++) {
            size_t i = tt_lower_hash_name(e->name) & tt_lower_mask;
            while (tt_lower_slots[i] && strcmp(tt_lower_slots[i]->name, e->name) != 0) i = (i + 1) & tt_lower_mask;
            if (!tt_lower_slots[i]) tt_lower_n++;
            tt_lower_slots[i] = e; /* a later family overrides an earlier duplicate */
        }
    }
}

tt_lower_fn tt_lower_find(const char *name) {
    pthread_once(&tt_lower_once, tt_lower_build);
    if (!tt_lower_slots || !name) return NULL;
    size_t i = tt_lower_hash_name(name) & tt_lower_mask;
    while (tt_lower_slots[i]) {
        if (strcmp(tt_lower_slots[i]->name, name) == 0) return tt_lower_slots[i]->fn;
        i = (i + 1) & tt_lower_mask;
    }
    return NULL;
}

void tt_lower_foreach(void (*fn)(void *user, const char *name), void *user) {
    pthread_once(&tt_lower_once, tt_lower_build);
    if (!tt_lower_slots) return;
    for (size_t i = 0; i <= tt_lower_mask; i++)
        if (tt_lower_slots[i]) fn(user, tt_lower_slots[i]->name);
}

int32_t tt_lower_count(void) {
    pthread_once(&tt_lower_once, tt_lower_build);
    return tt_lower_n;
}
