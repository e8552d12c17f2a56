/* activity.c — device activity records for profilers (tt_runtime.h, "device activity"). One mutex-guarded growing
 * array: records are few (one per op) and taken in bulk when a profile stops. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static atomic_bool g_on;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static tt_rt_activity *g_recs;
static int64_t g_n, g_cap, g_dropped;

bool tt_rt_activity_on(void) { return atomic_load_explicit(&g_on, memory_order_relaxed); }

int64_t tt_rt_activity_clock_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void tt_rt_activity_note(const char *name, int device, int kind, int64_t start_ns) {
    int64_t end_ns = tt_rt_activity_clock_ns();
    pthread_mutex_lock(&g_mu);
    if (g_n == g_cap) {
        int64_t cap = g_cap ? 2 * g_cap : 1024;
        tt_rt_activity *grown = realloc(g_recs, (size_t)cap * sizeof *grown);
        if (!grown) {
            g_dropped++;
            pthread_mutex_unlock(&g_mu);
            return;
        }
        g_recs = grown;
        g_cap = cap;
    }
    tt_rt_activity *r = &g_recs[g_n++];
    snprintf(r->name, sizeof r->name, "%s", name ? name : "launch");
    r->device = device;
    r->kind = kind;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    pthread_mutex_unlock(&g_mu);
}

void tt_rt_activity_start(void) {
    pthread_mutex_lock(&g_mu);
    g_n = 0;
    g_dropped = 0;
    pthread_mutex_unlock(&g_mu);
    atomic_store(&g_on, true);
}

void tt_rt_activity_stop(void) { atomic_store(&g_on, false); }

int64_t tt_rt_activity_take(tt_rt_activity *out, int64_t cap) {
    pthread_mutex_lock(&g_mu);
    int64_t n = g_n;
    if (out) {
        n = cap < g_n ? (cap > 0 ? cap : 0) : g_n;
        memcpy(out, g_recs, (size_t)n * sizeof *out);
        memmove(g_recs, g_recs + n, (size_t)(g_n - n) * sizeof *g_recs);
        g_n -= n;
        if (g_n == 0) { /* give the memory back between profiles */
            free(g_recs);
            g_recs = NULL;
            g_cap = 0;
        }
    }
    pthread_mutex_unlock(&g_mu);
    return n;
}

int64_t tt_rt_activity_dropped(void) {
    pthread_mutex_lock(&g_mu);
    int64_t d = g_dropped;
    pthread_mutex_unlock(&g_mu);
    return d;
}
