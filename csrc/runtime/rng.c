/* rng.c — per-device state of the counter-based generator: (seed, offset).
 *
 * A random op reserves `count` numbers and uses element k = (seed, offset + k), so draws never overlap and a
 * program's structure does not depend on the values (seed and offset travel as scalar parameters). Offsets
 * advance in multiples of 4 so that a 4-wide counter block (Philox-style) never straddles two draws.
 * The default seed is PyTorch's default_rng_seed_val (67280421310721), so a fresh process starts from the same
 * seed a PyTorch user would expect. One mutex guards every device: reservations are rare next to launches. */
#include "rt_internal.h"

#define TT_RT_DEFAULT_SEED 67280421310721ull

static pthread_mutex_t rng_mu = PTHREAD_MUTEX_INITIALIZER;
static uint64_t rng_seed[TT_RT_MAX_DEVICES];
static uint64_t rng_offset[TT_RT_MAX_DEVICES];

/* Devices outside the runtime's range are ignored (getters answer 0). */
static bool rng_device_ok(int device) { return tt_rt_ensure() == TT_OK && tt_rt_device_valid(device); }

void tt_rt_rng_reset(void) {
    pthread_mutex_lock(&rng_mu);
    for (int d = 0; d < TT_RT_MAX_DEVICES; d++) {
        rng_seed[d] = TT_RT_DEFAULT_SEED;
        rng_offset[d] = 0;
    }
    pthread_mutex_unlock(&rng_mu);
}

void tt_rt_manual_seed(int device, uint64_t seed) { tt_rt_rng_set_state(device, seed, 0); }

uint64_t tt_rt_initial_seed(int device) {
    uint64_t seed = 0, offset = 0;
    tt_rt_rng_get_state(device, &seed, &offset);
    return seed;
}

void tt_rt_rng_reserve(int device, uint64_t count, uint64_t *seed, uint64_t *offset) {
    uint64_t s = 0, o = 0;
    if (rng_device_ok(device)) {
        uint64_t step = count + ((4 - count % 4) % 4); /* wraps like the counter itself on absurd counts */
        pthread_mutex_lock(&rng_mu);
        s = rng_seed[device];
        o = rng_offset[device];
        rng_offset[device] = o + step;
        pthread_mutex_unlock(&rng_mu);
    }
    if (seed) *seed = s;
    if (offset) *offset = o;
}

void tt_rt_rng_get_state(int device, uint64_t *seed, uint64_t *offset) {
    uint64_t s = 0, o = 0;
    if (rng_device_ok(device)) {
        pthread_mutex_lock(&rng_mu);
        s = rng_seed[device];
        o = rng_offset[device];
        pthread_mutex_unlock(&rng_mu);
    }
    if (seed) *seed = s;
    if (offset) *offset = o;
}

void tt_rt_rng_set_state(int device, uint64_t seed, uint64_t offset) {
    if (!rng_device_ok(device)) return;
    pthread_mutex_lock(&rng_mu);
    rng_seed[device] = seed;
    rng_offset[device] = offset;
    pthread_mutex_unlock(&rng_mu);
}
