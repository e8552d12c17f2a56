/* stream.c — one bounded ring of work slots per device, drained in order by one worker thread (started on
 * first use).
 *
 * The producer's path (a STRICT launch) takes no lock and allocates nothing: claim a ticket (compare-and-swap),
 * fill the slot in place, publish it (a release store), and signal the worker only if it is asleep. The ring is
 * the bounded multi-producer queue of D. Vyukov's design reduced to one consumer: slot i holds seq == ticket when
 * free for that ticket and ticket + 1 once published; the worker hands the slot to ticket + CAP when done. The
 * worker spins a little before it sleeps, so a stream of small launches costs no wake-up syscalls; the
 * "sleeping" flag and the waiters' counters follow one pattern (store mine, full fence, load theirs) so no
 * wake-up is lost without any lock on the fast paths.
 *
 * A thread that waits for the queue runs the items itself when nobody is running one (the "running" role, taken
 * with a compare-and-swap by whoever runs the next item): a sync after small work then costs no wake-up of the
 * worker and no wake-up back, two scheduler trips that measured 30-70 us a sync on a 2-vCPU VM, and its core
 * does the work instead of idling next to a worker that competes with the host pool for the other one. The
 * worker keeps everything else: work that is published while nobody waits still runs asynchronously.
 *
 * Failures: the first item that fails records its status and "<op>: <message>". Until a sync takes that error,
 * every later item of the device is skipped (its references released): once one op has failed, the data later
 * ops would read is undefined, and skipping is the simplest rule that keeps the device state consistent with
 * what the user is told ("this op failed; everything after it did not run"). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Pause-and-look rounds (about a microsecond) before the worker sleeps. Short on purpose: with the wake-up rule
 * below, small ops arrive in batches, and a long spin makes the worker take them one by one, bouncing every
 * cache line of the ring and of the storages' counts between the two cores, and steals a core on a busy box. */
#ifndef TT_RT_SPIN
#define TT_RT_SPIN 32
#endif
#ifndef TT_RT_WAKE_NS
#define TT_RT_WAKE_NS 20000   /* estimated queued work that is worth waking a sleeping worker for */
#endif
#ifndef TT_RT_HELP_ITEM_NS
#define TT_RT_HELP_ITEM_NS 2000 /* queued items this cheap on average (a launch's own cost) the producer runs */
#endif
#ifndef TT_RT_WAKE_DEPTH
#define TT_RT_WAKE_DEPTH 64   /* ... or this many queued items, whatever they cost */
#endif

static int64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

tt_status tt_rt_stream_init(tt_rt_stream *s, int device) {
    memset(s, 0, sizeof *s);
    atomic_init(&s->ring, NULL);
    atomic_init(&s->enq, 0);
    atomic_init(&s->deq, 0);
    atomic_init(&s->running, 0);
    atomic_init(&s->sleeping, 0);
    atomic_init(&s->space_waiters, 0);
    atomic_init(&s->idle_waiters, 0);
    atomic_init(&s->wake_at, UINT64_MAX);
    atomic_init(&s->error, TT_OK);
    s->device = device;
    if (pthread_mutex_init(&s->mu, NULL)) goto fail0;
    if (pthread_cond_init(&s->cv_work, NULL)) goto fail1;
    if (pthread_cond_init(&s->cv_space, NULL)) goto fail2;
    if (pthread_cond_init(&s->cv_idle, NULL)) goto fail3;
    return TT_OK;
fail3:
    pthread_cond_destroy(&s->cv_space);
fail2:
    pthread_cond_destroy(&s->cv_work);
fail1:
    pthread_mutex_destroy(&s->mu);
fail0:
    return tt_error(TT_STATUS_INTERNAL, "could not create the synchronisation objects of tpu:%d's stream", device);
}

static void event_release(tt_rt_event *e);

void tt_rt_work_clear(tt_rt_work *w) {
    for (int32_t i = 0; i < w->n_storages; i++) tt_rt_storage_release(w->storages[i]);
    tt_rt_cache_entry_release(w->entry);
    if (w->kind == TT_RT_WORK_EVENT) event_release(w->event);
    free(w->heap);
    w->heap = NULL;
    w->entry = NULL;
    w->event = NULL;
    w->n_storages = 0;
    w->kind = TT_RT_WORK_NOP;
}

/* The op that recorded the failing node: its origin in the program that was compiled (same structure as this
 * launch's, so the same op order), looked up in the launch's origins. NULL when unknown. */
static const char *failed_origin(const tt_rt_work *w) {
    if (!w->origins || w->n_origins < 1) return NULL;
    if (w->n_origins == 1) return w->origins;
    const tt_ir_program *p = tt_rt_cache_entry_program(w->entry);
    int32_t node = tt_error_node();
    if (!p || !p->node_origin || node < 0 || node >= p->n_nodes) return NULL;
    int32_t k = p->node_origin[node];
    if (k < 0 || k >= w->n_origins) return NULL;
    const char *o = w->origins;
    for (int32_t i = 0; i < 2 * k; i++) o += strlen(o) + 1;
    return o;
}

tt_status tt_rt_work_run(const tt_rt_work *w, char *msg, size_t msg_size) {
    tt_driver *drv = tt_rt_g.driver;
    tt_status st;
    int64_t t0 = tt_rt_activity_on() ? tt_rt_activity_clock_ns() : 0;
    if (w->kind == TT_RT_WORK_LAUNCH) {
        tt_rt_capture_maybe(w->entry);
        st = drv->iface.execute(drv->ctx, w->device, tt_rt_cache_entry_exe(w->entry), w->args, w->n_args,
                                w->results, w->n_results);
    } else if (w->kind == TT_RT_WORK_WRITE) {
        st = drv->iface.write(drv->ctx, w->storages[0]->buffer, w->offset, w->data, w->nbytes);
    } else if (w->kind == TT_RT_WORK_COPY_ROWS) {
        st = tt_rt_copy_rows_now(w->storages[1], w->offset, w->dst_stride, w->storages[0], w->src_offset,
                                 w->src_stride, w->nbytes, w->rows);
    } else {
        return TT_OK;
    }
    if (t0)
        tt_rt_activity_note(w->op_name, w->device,
                            w->kind == TT_RT_WORK_LAUNCH ? TT_RT_ACTIVITY_KERNEL : TT_RT_ACTIVITY_COPY, t0);
    if (st == TT_OK) return st;
    /* "<op>[ (recorded at <line>)][, in <window>]: <message>", or "<launch>: <message>" when the op is unknown */
    const char *op = w->kind == TT_RT_WORK_LAUNCH ? failed_origin(w) : NULL;
    const char *at = op ? op + strlen(op) + 1 : "";
    bool in_window = op && w->n_origins > 1;
    snprintf(msg, msg_size, "%s%s%s%s%s%s: %s", op ? op : w->op_name, at[0] ? " (recorded at " : "", at,
             at[0] ? ")" : "", in_window ? ", in " : "", in_window ? w->op_name : "", tt_last_error());
    return st;
}

static inline bool published(const tt_rt_work *w, uint64_t ticket) {
    return atomic_load_explicit(&w->seq, memory_order_acquire) == ticket + 1;
}

/* Under nobody's lock: wakes the sleepers a finished ticket concerns. */
static void after_item(tt_rt_stream *s, uint64_t done) {
    atomic_thread_fence(memory_order_seq_cst); /* the slot's seq and deq stores before the waiters' loads */
    if (atomic_load_explicit(&s->space_waiters, memory_order_relaxed)) {
        pthread_mutex_lock(&s->mu);
        pthread_cond_broadcast(&s->cv_space);
        pthread_mutex_unlock(&s->mu);
    }
    if (atomic_load_explicit(&s->idle_waiters, memory_order_relaxed) &&
        (done >= atomic_load_explicit(&s->wake_at, memory_order_relaxed) ||
         done == atomic_load_explicit(&s->enq, memory_order_relaxed))) {
        pthread_mutex_lock(&s->mu);
        atomic_store(&s->wake_at, UINT64_MAX); /* every waiter wakes and registers again if not done */
        pthread_cond_broadcast(&s->cv_idle);
        pthread_mutex_unlock(&s->mu);
    }
}

/* The next item is published and nobody runs one: the worker has something to do. */
static bool runnable(tt_rt_stream *s, tt_rt_work *ring) {
    uint64_t ticket = atomic_load_explicit(&s->deq, memory_order_acquire);
    return published(&ring[ticket & (TT_RT_QUEUE_CAP - 1)], ticket) &&
           atomic_load_explicit(&s->running, memory_order_relaxed) == 0;
}

/* The worker waits (spin, then sleep) until it has something to run; false when stopping with nothing left. */
static bool wait_runnable(tt_rt_stream *s, tt_rt_work *ring) {
    for (int i = 0; i < TT_RT_SPIN; i++) {
        if (runnable(s, ring)) return true;
        cpu_relax();
    }
    pthread_mutex_lock(&s->mu);
    for (;;) {
        atomic_store(&s->sleeping, 1);
        atomic_thread_fence(memory_order_seq_cst); /* "sleeping" before the look at the slot and the role */
        if (runnable(s, ring)) break;
        if (s->stop && atomic_load(&s->running) == 0) {
            atomic_store(&s->sleeping, 0);
            pthread_mutex_unlock(&s->mu);
            return runnable(s, ring);
        }
        pthread_cond_wait(&s->cv_work, &s->mu);
    }
    atomic_store(&s->sleeping, 0);
    pthread_mutex_unlock(&s->mu);
    return true;
}

static void event_reached(tt_rt_event *e, int device, uint64_t target);

static _Thread_local bool t_is_worker; /* a stream's worker never runs another stream's items while it waits */

static bool take_role(tt_rt_stream *s) {
    int idle = 0;
    return atomic_load_explicit(&s->running, memory_order_relaxed) == 0 &&
           atomic_compare_exchange_strong_explicit(&s->running, &idle, 1, memory_order_acquire, memory_order_relaxed);
}

/* Runs item ticket (published, the role held) and retires it. */
static void run_item(tt_rt_stream *s, tt_rt_work *w, uint64_t ticket) {
    char msg[TT_RT_MSG_SIZE];
    bool skip = atomic_load_explicit(&s->error, memory_order_relaxed) != TT_OK;
    tt_status st = TT_OK;
    /* Timing every run would cost two clock reads (tens of ns each on a VM) per small op: time an executable's
     * first run, then one item in 16. */
    if (!skip && w->kind == TT_RT_WORK_LAUNCH && ((ticket & 15) == 0 || tt_rt_cache_entry_cost(w->entry) < 0)) {
        int64_t t0 = now_ns();
        st = tt_rt_work_run(w, msg, sizeof msg);
        if (st == TT_OK) tt_rt_cache_entry_note_cost(w->entry, now_ns() - t0);
    } else if (!skip) {
        st = tt_rt_work_run(w, msg, sizeof msg);
    }
    /* A marker is reached even when items are being skipped: the event completes, its sync reports the error. */
    if (w->kind == TT_RT_WORK_EVENT) event_reached(w->event, w->device, ticket + 1);
    if (!skip && s->failure) { /* the error was taken by a sync: a new epoch */
        tt_rt_poison_release(s->failure);
        s->failure = NULL;
    }
    if (st != TT_OK && !s->failure) s->failure = tt_rt_poison_new(st, msg);
    if (w->kind == TT_RT_WORK_LAUNCH || w->kind == TT_RT_WORK_WRITE || w->kind == TT_RT_WORK_COPY_ROWS) {
        int32_t n_written = w->kind == TT_RT_WORK_LAUNCH ? w->n_results : 1;
        for (int32_t i = w->n_storages - n_written; i < w->n_storages; i++) {
            if (skip || st != TT_OK) tt_rt_storage_poison(w->storages[i], s->failure);
            else tt_rt_storage_unpoison(w->storages[i]);
        }
    }
    tt_rt_work_clear(w); /* may free storages and executables: done before the item counts as finished */
    if (st != TT_OK) {
        pthread_mutex_lock(&s->mu);
        if (atomic_load(&s->error) == TT_OK) {
            snprintf(s->error_msg, sizeof s->error_msg, "%s", msg);
            atomic_store(&s->error, (int)st);
        }
        pthread_mutex_unlock(&s->mu);
    }
    atomic_store_explicit(&w->seq, ticket + TT_RT_QUEUE_CAP, memory_order_release);
    atomic_store_explicit(&s->deq, ticket + 1, memory_order_release);
    after_item(s, ticket + 1);
}

/* Runs the next item if it is published and nobody else is running one; false otherwise. */
static bool run_next(tt_rt_stream *s, tt_rt_work *ring) {
    if (!take_role(s)) return false;
    uint64_t ticket = atomic_load_explicit(&s->deq, memory_order_acquire);
    tt_rt_work *w = &ring[ticket & (TT_RT_QUEUE_CAP - 1)];
    bool ran = published(w, ticket);
    if (ran) run_item(s, w, ticket);
    atomic_store_explicit(&s->running, 0, memory_order_release);
    return ran;
}

static void *worker_main(void *arg) {
    tt_rt_stream *s = arg;
    tt_rt_work *ring = atomic_load(&s->ring);
    char name[16];
    t_is_worker = true;
    snprintf(name, sizeof name, "tpu%d-stream", s->device % 1000);
    pthread_setname_np(pthread_self(), name); /* for profilers and top; a failure changes nothing */
    for (;;)
        if (!run_next(s, ring) && !wait_runnable(s, ring)) break;
    return NULL;
}

/* Slow path of the first reserve: makes the ring and starts the worker. */
static tt_status start_ring(tt_rt_stream *s, tt_rt_work **out) {
    pthread_mutex_lock(&s->mu);
    tt_rt_work *ring = atomic_load(&s->ring);
    if (!ring) {
        ring = calloc(TT_RT_QUEUE_CAP, sizeof *ring);
        if (!ring) {
            pthread_mutex_unlock(&s->mu);
            return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for the work queue of tpu:%d", s->device);
        }
        uint64_t base = atomic_load(&s->enq);
        for (uint64_t i = 0; i < TT_RT_QUEUE_CAP; i++) atomic_init(&ring[(base + i) & (TT_RT_QUEUE_CAP - 1)].seq, base + i);
        atomic_store(&s->ring, ring);
        if (pthread_create(&s->thread, NULL, worker_main, s)) {
            atomic_store(&s->ring, NULL);
            free(ring);
            pthread_mutex_unlock(&s->mu);
            return tt_error(TT_STATUS_INTERNAL, "could not start the worker thread of tpu:%d", s->device);
        }
        s->started = true;
    }
    pthread_mutex_unlock(&s->mu);
    *out = ring;
    return TT_OK;
}

/* Caller has published something (or waits on the worker) and made a full fence since. */
static void wake_worker(tt_rt_stream *s) {
    if (!atomic_load_explicit(&s->sleeping, memory_order_relaxed)) return;
    atomic_store_explicit(&s->deferred_ns, 0, memory_order_relaxed);
    pthread_mutex_lock(&s->mu);
    pthread_cond_signal(&s->cv_work);
    pthread_mutex_unlock(&s->mu);
}

/* Sleeps until the worker frees the slot of ticket pos (the ring is full). */
static void wait_space(tt_rt_stream *s, tt_rt_work *w, uint64_t pos) {
    pthread_mutex_lock(&s->mu);
    atomic_fetch_add(&s->space_waiters, 1);
    atomic_thread_fence(memory_order_seq_cst); /* the registration before the look at the slot */
    if (atomic_load(&s->sleeping)) pthread_cond_signal(&s->cv_work); /* the depth rule woke it already: insurance */
    while ((int64_t)(atomic_load(&w->seq) - pos) < 0) pthread_cond_wait(&s->cv_space, &s->mu);
    atomic_fetch_sub(&s->space_waiters, 1);
    pthread_mutex_unlock(&s->mu);
}

tt_status tt_rt_stream_reserve(tt_rt_stream *s, tt_rt_work **out, uint64_t *ticket) {
    tt_rt_work *ring = atomic_load_explicit(&s->ring, memory_order_acquire);
    if (!ring) {
        tt_status st = start_ring(s, &ring);
        if (st != TT_OK) return st;
    }
    uint64_t pos = atomic_load_explicit(&s->enq, memory_order_relaxed);
    for (;;) {
        tt_rt_work *w = &ring[pos & (TT_RT_QUEUE_CAP - 1)];
        int64_t diff = (int64_t)(atomic_load_explicit(&w->seq, memory_order_acquire) - pos);
        if (diff == 0) {
            if (atomic_compare_exchange_weak_explicit(&s->enq, &pos, pos + 1, memory_order_relaxed,
                                                      memory_order_relaxed)) {
                *ticket = pos;
                *out = w;
                return TT_OK;
            }
        } else if (diff < 0) {
            wait_space(s, w, pos); /* full: the worker still holds this slot from a lap ago */
            pos = atomic_load_explicit(&s->enq, memory_order_relaxed);
        } else {
            pos = atomic_load_explicit(&s->enq, memory_order_relaxed); /* another producer took it */
        }
    }
}

/* A wake-up costs the producer a syscall and, on a busy machine, the worker a trip through the scheduler: many
 * times a small op's run time. So a sleeping worker is left asleep while the work queued for it is small (known
 * cost, little in total): the next sync or a costly op wakes it and it runs the batch. Once the queue is deep or
 * its work worth a wake-up, items costing on average no more than a launch are run by the producer itself (as a
 * sync's helper would): the worker taking them would also pull every storage, refcount and allocator line across
 * cores (strict add of 16 floats: 1.63 -> 1.1-1.3 us per op).
 * Programs not yet timed count as costly; while a sync waits every publish wakes. Order and error reporting do
 * not change, only when and where small ops run. */
static void help(tt_rt_stream *s, uint64_t target);
/* A window cut by a read or a sync is waited for at once, so its program runs on the waiting thread (which would
 * only idle) unless the worker is awake already: waking it costs the producer a futex syscall and an interrupt to
 * an idle vCPU, which measured 20-30 us per wake-up on this VM kind (a 512 x 512 add + sync on one thread:
 * 83 -> 49 us). */
static _Thread_local bool t_hold_wakes;
void tt_rt_stream_hold_wakes(bool hold) { t_hold_wakes = hold; }

void tt_rt_stream_publish(tt_rt_stream *s, tt_rt_work *w, uint64_t ticket, int64_t cost_ns) {
    atomic_store_explicit(&w->seq, ticket + 1, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst); /* the publish before the look at "sleeping" */
    if (t_hold_wakes || !atomic_load_explicit(&s->sleeping, memory_order_relaxed)) return;
    if (cost_ns >= 0 && cost_ns < TT_RT_WAKE_NS && !atomic_load_explicit(&s->idle_waiters, memory_order_relaxed)) {
        int64_t pending = atomic_fetch_add_explicit(&s->deferred_ns, cost_ns, memory_order_relaxed) + cost_ns;
        uint64_t depth = ticket + 1 - atomic_load_explicit(&s->deq, memory_order_acquire);
        if (pending < TT_RT_WAKE_NS && depth < TT_RT_WAKE_DEPTH) return;
        if (pending < (int64_t)depth * TT_RT_HELP_ITEM_NS) { /* small items: cheaper here than a wake-up and
                                                               * cache lines crossing */
            atomic_store_explicit(&s->deferred_ns, 0, memory_order_relaxed);
            help(s, ticket + 1);
            return;
        }
    }
    wake_worker(s);
}

void tt_rt_stream_wait_idle(tt_rt_stream *s) { tt_rt_stream_wait_until(s, atomic_load(&s->enq)); }

/* The waiter runs items below target while nobody else runs one (the worker asleep or between items). The
 * thread's last error message is kept: a caller may still be about to report its own. */
static void help(tt_rt_stream *s, uint64_t target) {
    tt_rt_work *ring = atomic_load_explicit(&s->ring, memory_order_acquire);
    if (!ring || t_is_worker) return;
    char saved[TT_RT_MSG_SIZE];
    bool ran = false;
    while (atomic_load_explicit(&s->deq, memory_order_acquire) < target) {
        if (!ran) { /* copied, not formatted: this runs for every small op */
            size_t n = strnlen(tt_last_error(), sizeof saved - 1);
            memcpy(saved, tt_last_error(), n);
            saved[n] = '\0';
        }
        if (!run_next(s, ring)) break;
        ran = true;
    }
    if (!ran) return;
    if (strcmp(saved, tt_last_error()) != 0) {
        if (saved[0]) tt_error(TT_STATUS_INTERNAL, "%s", saved);
        else tt_clear_error();
    }
    /* The worker slept while this thread held the role; what others published meanwhile is its again. */
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load(&s->deq) < atomic_load(&s->enq)) wake_worker(s);
}

void tt_rt_stream_wait_until(tt_rt_stream *s, uint64_t target) {
    if (atomic_load_explicit(&s->deq, memory_order_acquire) >= target) return;
    help(s, target);
    if (atomic_load_explicit(&s->deq, memory_order_acquire) >= target) return;
    atomic_thread_fence(memory_order_seq_cst);
    wake_worker(s); /* small work may wait for a sync to run */
    for (int i = 0; i < TT_RT_SPIN; i++) {
        if (atomic_load_explicit(&s->deq, memory_order_acquire) >= target) return;
        cpu_relax();
    }
    pthread_mutex_lock(&s->mu);
    atomic_fetch_add(&s->idle_waiters, 1);
    for (;;) {
        uint64_t w = atomic_load(&s->wake_at);
        while (target < w && !atomic_compare_exchange_weak(&s->wake_at, &w, target)) {
        }
        atomic_thread_fence(memory_order_seq_cst); /* the registration before the look at deq */
        if (atomic_load(&s->deq) >= target) break;
        /* A producer that published after the wake above saw no waiter and may have let the worker sleep on
         * (one that publishes from now on sees this waiter and wakes it). */
        if (atomic_load(&s->sleeping)) pthread_cond_signal(&s->cv_work);
        pthread_cond_wait(&s->cv_idle, &s->mu);
    }
    atomic_fetch_sub(&s->idle_waiters, 1);
    pthread_mutex_unlock(&s->mu);
}

tt_status tt_rt_stream_take_error(tt_rt_stream *s, char *msg, size_t msg_size) {
    if (atomic_load(&s->error) == TT_OK) return TT_OK;
    pthread_mutex_lock(&s->mu);
    tt_status st = (tt_status)atomic_load(&s->error);
    if (st != TT_OK) {
        snprintf(msg, msg_size, "%s", s->error_msg);
        s->error_msg[0] = '\0';
        atomic_store(&s->error, TT_OK);
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

void tt_rt_stream_fini(tt_rt_stream *s) {
    tt_rt_stream_wait_idle(s); /* everything published runs before the worker stops */
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv_work);
    bool started = s->started;
    pthread_mutex_unlock(&s->mu);
    if (started) pthread_join(s->thread, NULL);
    tt_rt_poison_release(s->failure);
    s->failure = NULL;
    free(atomic_load(&s->ring));
    atomic_store(&s->ring, NULL);
    pthread_cond_destroy(&s->cv_idle);
    pthread_cond_destroy(&s->cv_space);
    pthread_cond_destroy(&s->cv_work);
    pthread_mutex_destroy(&s->mu);
    s->started = false;
}

/* ---- events ----
 * An event is a (device, target) pair: complete once the device's deq >= target. Recording in STRICT mode
 * enqueues a marker item (target = its ticket + 1) so that the worker can stamp the time it reached it; the
 * marker holds a reference, so an event destroyed while its marker is queued stays valid until the worker
 * passes it. The mutex orders a re-record against the worker's stamp of an older marker (the stamp counts only
 * if the marker is still the event's current one). Events are rare next to launches: a lock is cheap here. */
struct tt_rt_event {
    _Atomic int64_t refs;
    bool timing;
    pthread_mutex_t mu;
    int device;          /* -1 until recorded */
    uint64_t target;
    int64_t done_ns;     /* timing: when its marker was reached; -1 while pending */
    uint32_t generation; /* tt_rt_g.generation when recorded: a marker of an earlier start-up counts as complete */
};

static tt_status take_error_status(tt_rt_stream *s);

static void event_release(tt_rt_event *e) {
    if (!e || atomic_fetch_sub_explicit(&e->refs, 1, memory_order_acq_rel) != 1) return;
    pthread_mutex_destroy(&e->mu);
    free(e);
}

static void event_reached(tt_rt_event *e, int device, uint64_t target) {
    pthread_mutex_lock(&e->mu);
    if (e->device == device && e->target == target && e->timing) e->done_ns = now_ns();
    pthread_mutex_unlock(&e->mu);
}

tt_status tt_rt_event_create(bool timing, tt_rt_event **out) {
    if (!out) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_event_create: out is NULL");
    tt_rt_event *e = calloc(1, sizeof *e);
    if (!e) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for an event");
    if (pthread_mutex_init(&e->mu, NULL)) {
        free(e);
        return tt_error(TT_STATUS_INTERNAL, "could not create an event's lock");
    }
    atomic_init(&e->refs, 1);
    e->timing = timing;
    e->device = -1;
    e->done_ns = -1;
    *out = e;
    return TT_OK;
}

void tt_rt_event_destroy(tt_rt_event *e) { event_release(e); }

int tt_rt_event_device(const tt_rt_event *e) {
    if (!e) return -1;
    pthread_mutex_lock((pthread_mutex_t *)&e->mu);
    int d = e->device;
    pthread_mutex_unlock((pthread_mutex_t *)&e->mu);
    return d;
}

bool tt_rt_event_timing(const tt_rt_event *e) { return e && e->timing; }

tt_status tt_rt_event_record(tt_rt_event *e, int device) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (!e) return tt_error(TT_STATUS_INVALID_ARGUMENT, "event record: event is NULL");
    if (!tt_rt_device_valid(device))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "event record: tpu:%d does not exist (%d devices)", device,
                        tt_rt_g.n_devices);
    /* the event follows the ops a fused window deferred */
    if (tt_rt_window_busy(device) && (st = tt_rt_window_cut(device, TT_RT_CUT_SYNC)) != TT_OK) return st;
    tt_rt_stream *s = &tt_rt_g.streams[device];
    uint32_t gen = atomic_load(&tt_rt_g.generation);
    if (atomic_load_explicit(&tt_rt_g.mode, memory_order_relaxed) == TT_EAGER_DEBUG) {
        /* Launches ran on the calling thread; the queue was drained when the mode was set. */
        pthread_mutex_lock(&e->mu);
        e->device = device;
        e->target = atomic_load(&s->enq);
        e->generation = gen;
        e->done_ns = e->timing ? now_ns() : -1;
        pthread_mutex_unlock(&e->mu);
        return TT_OK;
    }
    uint64_t ticket;
    tt_rt_work *w = NULL;
    if ((st = tt_rt_stream_reserve(s, &w, &ticket)) != TT_OK) return st;
    atomic_fetch_add_explicit(&e->refs, 1, memory_order_relaxed);
    pthread_mutex_lock(&e->mu);
    e->device = device;
    e->target = ticket + 1;
    e->generation = gen;
    e->done_ns = -1;
    pthread_mutex_unlock(&e->mu);
    w->kind = TT_RT_WORK_EVENT;
    w->device = device;
    w->n_args = w->n_results = w->n_storages = 0;
    w->entry = NULL;
    w->heap = NULL;
    w->event = e;
    w->op_name = "event record";
    /* A timing marker wakes a sleeping worker, so its stamp is not delayed by the wake-up rule; a plain one
     * may wait for the next wake-up (a query or sync of it wakes the worker). */
    tt_rt_stream_publish(s, w, ticket, e->timing ? -1 : 0);
    return TT_OK;
}

/* The event's stream, position and generation, read together; false if never recorded. */
static bool event_position(tt_rt_event *e, int *device, uint64_t *target, int64_t *done_ns) {
    pthread_mutex_lock(&e->mu);
    bool recorded = e->device >= 0 && e->generation == atomic_load(&tt_rt_g.generation) &&
                    atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire);
    *device = e->device;
    *target = e->target;
    if (done_ns) *done_ns = e->done_ns;
    pthread_mutex_unlock(&e->mu);
    return recorded;
}

bool tt_rt_event_query(tt_rt_event *e) {
    int device;
    uint64_t target;
    if (!e || !event_position(e, &device, &target, NULL)) return true;
    tt_rt_stream *s = &tt_rt_g.streams[device];
    if (atomic_load_explicit(&s->deq, memory_order_acquire) >= target) return true;
    atomic_thread_fence(memory_order_seq_cst);
    wake_worker(s); /* small queued work may be waiting for a wake-up: polling must not spin forever */
    return false;
}

tt_status tt_rt_event_synchronize(tt_rt_event *e) {
    int device;
    uint64_t target;
    if (!e || !event_position(e, &device, &target, NULL)) return TT_OK;
    tt_rt_stream *s = &tt_rt_g.streams[device];
    atomic_fetch_add_explicit(&tt_rt_g.syncs, 1, memory_order_relaxed);
    tt_rt_stream_wait_until(s, target);
    return take_error_status(s);
}

tt_status tt_rt_event_block(tt_rt_event *e, int device) {
    int edev;
    uint64_t target;
    if (!e || !event_position(e, &edev, &target, NULL) || edev == device) return TT_OK;
    tt_rt_stream_wait_until(&tt_rt_g.streams[edev], target);
    return TT_OK;
}

tt_status tt_rt_event_elapsed_ms(tt_rt_event *start, tt_rt_event *end, double *ms) {
    if (!start || !end || !ms) return tt_error(TT_STATUS_INVALID_ARGUMENT, "elapsed_time: NULL argument");
    if (!start->timing || !end->timing)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "Both events must be created with argument 'enable_timing=True'.");
    int d0, d1;
    uint64_t t0, t1;
    int64_t n0, n1;
    bool r0 = event_position(start, &d0, &t0, &n0), r1 = event_position(end, &d1, &t1, &n1);
    if (!r0 || !r1) return tt_error(TT_STATUS_INVALID_ARGUMENT, "Both events must be recorded before calculating elapsed time.");
    if (n0 < 0 || n1 < 0)
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "elapsed_time: an event is recorded but not yet complete (call its synchronize() first)");
    *ms = (double)(n1 - n0) * 1e-6;
    return TT_OK;
}

uint64_t tt_rt_stream_enqueued(int device) {
    if (tt_rt_ensure() != TT_OK || !tt_rt_device_valid(device)) return 0;
    return atomic_load(&tt_rt_g.streams[device].enq);
}

uint64_t tt_rt_stream_completed(int device) {
    if (tt_rt_ensure() != TT_OK || !tt_rt_device_valid(device)) return 0;
    return atomic_load(&tt_rt_g.streams[device].deq);
}

bool tt_rt_stream_query(int device) {
    if (tt_rt_ensure() != TT_OK || !tt_rt_device_valid(device)) return true;
    /* deferred ops are work not done: queue them (a failure to is reported by the next sync) */
    if (tt_rt_window_busy(device)) (void)tt_rt_window_cut(device, TT_RT_CUT_SYNC);
    tt_rt_stream *s = &tt_rt_g.streams[device];
    if (atomic_load_explicit(&s->deq, memory_order_acquire) >= atomic_load(&s->enq)) return true;
    atomic_thread_fence(memory_order_seq_cst);
    wake_worker(s);
    return false;
}

static tt_status take_error_status(tt_rt_stream *s) {
    char msg[TT_RT_MSG_SIZE];
    tt_status st = tt_rt_stream_take_error(s, msg, sizeof msg);
    return st == TT_OK ? TT_OK : tt_error(st, "%s", msg);
}

tt_status tt_rt_event_poll(tt_rt_event *e, bool *done) {
    int device;
    uint64_t target;
    *done = tt_rt_event_query(e);
    if (!*done || !e || !event_position(e, &device, &target, NULL)) return TT_OK;
    return take_error_status(&tt_rt_g.streams[device]);
}

tt_status tt_rt_stream_poll(int device, bool *done) {
    *done = tt_rt_stream_query(device);
    if (!*done || !tt_rt_device_valid(device)) return TT_OK;
    return take_error_status(&tt_rt_g.streams[device]);
}
