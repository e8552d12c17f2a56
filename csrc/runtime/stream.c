/* stream.c — one FIFO of work items per device, drained in order by one worker thread (started on first use).
 *
 * The queue is a mutex + three condition variables; it is bounded (TT_RT_QUEUE_CAP items), so a producer that
 * runs far ahead waits for room instead of growing memory without end.
 *
 * Failures: the first item that fails records its status and "<op>: <message>". Until a sync takes that error,
 * every later item of the device is skipped (dropped, with its references released): once one op has failed,
 * the data later ops would read is undefined, and skipping is the simplest rule that keeps the device state
 * consistent with what the user is told ("this op failed; everything after it did not run"). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_RT_SPIN 2000 /* pause instructions (tens of microseconds) before the worker sleeps */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

tt_status tt_rt_stream_init(tt_rt_stream *s, int device) {
    memset(s, 0, sizeof *s);
    atomic_init(&s->n_queued, 0);
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

void tt_rt_work_free(tt_rt_work *w) {
    if (!w) return;
    for (int32_t i = 0; i < w->n_storages; i++) tt_rt_storage_release(w->storages[i]);
    tt_rt_cache_entry_release(w->entry);
    tt_ir_program_destroy(w->program);
    free(w);
}

tt_status tt_rt_work_run(const tt_rt_work *w, char *msg, size_t msg_size) {
    tt_driver *drv = tt_rt_g.driver;
    tt_status st;
    if (w->kind == TT_RT_WORK_LAUNCH) {
        st = drv->iface.execute(drv->ctx, w->device, tt_rt_cache_entry_exe(w->entry),
                                w->args, w->n_args, w->results, w->n_results);
    } else {
        st = drv->iface.write(drv->ctx, w->storages[0]->buffer, w->offset, w->data, w->nbytes);
    }
    if (st != TT_OK) snprintf(msg, msg_size, "%s: %s", w->op_name, tt_last_error());
    return st;
}

static void *worker_main(void *arg) {
    tt_rt_stream *s = arg;
    char msg[TT_RT_MSG_SIZE];
    pthread_mutex_lock(&s->mu);
    for (;;) {
        if (!s->head && !s->stop) {
            /* Spin a little before sleeping: in a loop of small ops the next launch usually comes within
             * microseconds, and catching it here saves the producer a wake-up syscall per launch. */
            pthread_mutex_unlock(&s->mu);
            for (int i = 0; i < TT_RT_SPIN && !atomic_load_explicit(&s->n_queued, memory_order_relaxed); i++)
                cpu_relax();
            pthread_mutex_lock(&s->mu);
        }
        while (!s->head && !s->stop) {
            s->sleeping = true;
            pthread_cond_wait(&s->cv_work, &s->mu);
            s->sleeping = false;
        }
        tt_rt_work *w = s->head;
        if (!w) break; /* stopping, and the queue is drained */
        s->head = w->next;
        if (!s->head) s->tail = NULL;
        if (s->count-- == TT_RT_QUEUE_CAP) pthread_cond_broadcast(&s->cv_space);
        atomic_store_explicit(&s->n_queued, s->count, memory_order_relaxed);
        s->busy = true;
        bool skip = s->error != TT_OK;
        pthread_mutex_unlock(&s->mu);

        tt_status st = skip ? TT_OK : tt_rt_work_run(w, msg, sizeof msg);
        tt_rt_work_free(w); /* may free storages and executables: done before the item counts as finished */

        pthread_mutex_lock(&s->mu);
        if (st != TT_OK && s->error == TT_OK) {
            s->error = st;
            snprintf(s->error_msg, sizeof s->error_msg, "%s", msg);
        }
        s->busy = false;
        if (!s->head) pthread_cond_broadcast(&s->cv_idle);
    }
    pthread_mutex_unlock(&s->mu);
    return NULL;
}

tt_status tt_rt_stream_enqueue(tt_rt_stream *s, tt_rt_work *w) {
    w->next = NULL;
    pthread_mutex_lock(&s->mu);
    if (!s->started) {
        if (pthread_create(&s->thread, NULL, worker_main, s)) {
            pthread_mutex_unlock(&s->mu);
            tt_rt_work_free(w);
            return tt_error(TT_STATUS_INTERNAL, "could not start the worker thread of tpu:%d", s->device);
        }
        s->started = true;
    }
    while (s->count >= TT_RT_QUEUE_CAP) pthread_cond_wait(&s->cv_space, &s->mu);
    if (s->tail) s->tail->next = w;
    else s->head = w;
    s->tail = w;
    s->count++;
    atomic_store_explicit(&s->n_queued, s->count, memory_order_relaxed);
    /* Only a sleeping worker needs the signal (a busy or spinning one finds the item itself). */
    if (s->sleeping) pthread_cond_signal(&s->cv_work);
    pthread_mutex_unlock(&s->mu);
    return TT_OK;
}

void tt_rt_stream_wait_idle(tt_rt_stream *s) {
    pthread_mutex_lock(&s->mu);
    while (s->head || s->busy) pthread_cond_wait(&s->cv_idle, &s->mu);
    pthread_mutex_unlock(&s->mu);
}

tt_status tt_rt_stream_take_error(tt_rt_stream *s, char *msg, size_t msg_size) {
    pthread_mutex_lock(&s->mu);
    tt_status st = s->error;
    if (st != TT_OK) {
        snprintf(msg, msg_size, "%s", s->error_msg);
        s->error = TT_OK;
        s->error_msg[0] = '\0';
    }
    pthread_mutex_unlock(&s->mu);
    return st;
}

void tt_rt_stream_fini(tt_rt_stream *s) {
    pthread_mutex_lock(&s->mu);
    s->stop = true;
    pthread_cond_broadcast(&s->cv_work);
    bool started = s->started;
    pthread_mutex_unlock(&s->mu);
    if (started) pthread_join(s->thread, NULL);
    /* A queue never started has no items; free any anyway so nothing leaks. */
    while (s->head) {
        tt_rt_work *w = s->head;
        s->head = w->next;
        tt_rt_work_free(w);
    }
    pthread_cond_destroy(&s->cv_idle);
    pthread_cond_destroy(&s->cv_space);
    pthread_cond_destroy(&s->cv_work);
    pthread_mutex_destroy(&s->mu);
    s->started = false;
}
