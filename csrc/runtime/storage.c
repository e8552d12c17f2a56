/* storage.c — reference-counted device buffers and the per-device memory statistics.
 *
 * A storage is released from any thread: the shim's deleter on the Python thread, or the stream worker dropping
 * the last reference a queued launch held. Counters are atomics so no lock is taken on these paths. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mem_add(int device, size_t nbytes) {
    tt_rt_device_mem *m = &tt_rt_g.mem[device];
    size_t now = atomic_fetch_add(&m->allocated, nbytes) + nbytes;
    size_t peak = atomic_load(&m->peak);
    while (now > peak && !atomic_compare_exchange_weak(&m->peak, &peak, now)) {
    }
    atomic_fetch_add(&m->n_allocs, 1);
}

tt_status tt_rt_storage_create(int device, size_t nbytes, tt_rt_storage **out) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (!out) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_storage_create: out is NULL");
    *out = NULL;
    if (!tt_rt_device_valid(device))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "tpu:%d does not exist (%d device%s)", device, tt_rt_g.n_devices,
                        tt_rt_g.n_devices == 1 ? "" : "s");
    tt_rt_storage *s = calloc(1, sizeof *s);
    if (!s) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a storage record");
    tt_driver *drv = tt_rt_g.driver;
    st = drv->iface.buffer_alloc(drv->ctx, device, nbytes, &s->buffer);
    if (st != TT_OK) {
        free(s);
        if (st == TT_STATUS_OUT_OF_MEMORY) {
            /* Keep the driver's words and add what the runtime knows. */
            char msg[TT_RT_MSG_SIZE];
            snprintf(msg, sizeof msg, "%s", tt_last_error());
            return tt_error(st, "%s (tpu:%d: allocating %zu bytes; allocated %zu, peak %zu)", msg, device, nbytes,
                            atomic_load(&tt_rt_g.mem[device].allocated), atomic_load(&tt_rt_g.mem[device].peak));
        }
        return st;
    }
    atomic_init(&s->refcount, 1);
    s->device = device;
    s->generation = atomic_load(&tt_rt_g.generation);
    s->nbytes = nbytes;
    s->address = drv->iface.buffer_address ? drv->iface.buffer_address(drv->ctx, s->buffer) : (void *)s->buffer;
    mem_add(device, nbytes);
    *out = s;
    return TT_OK;
}

void tt_rt_storage_retain(tt_rt_storage *s) {
    if (s) atomic_fetch_add_explicit(&s->refcount, 1, memory_order_relaxed);
}

void tt_rt_storage_release(tt_rt_storage *s) {
    if (!s || atomic_fetch_sub_explicit(&s->refcount, 1, memory_order_acq_rel) != 1) return;
    /* After tt_rt_shutdown the driver that made the buffer is gone (and with it the buffer): only the record is
     * left to free. The generation tells a storage of an earlier start-up from one of the current. */
    tt_driver *drv = tt_rt_g.driver;
    if (drv && atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire) &&
        s->generation == atomic_load(&tt_rt_g.generation)) {
        drv->iface.buffer_free(drv->ctx, s->buffer);
        atomic_fetch_sub(&tt_rt_g.mem[s->device].allocated, s->nbytes);
    }
    free(s);
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
    out->reserved = out->allocated; /* no caching allocator yet */
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
}

/* No caching allocator yet, so nothing is held back; waiting for queued work lets storages it held go. */
void tt_rt_empty_cache(int device) {
    if (tt_rt_ensure() != TT_OK) return;
    for (int d = 0; d < tt_rt_g.n_devices; d++)
        if (device < 0 || d == device) tt_rt_stream_wait_idle(&tt_rt_g.streams[d]);
}

void tt_rt_memory_reset_all(void) {
    for (int d = 0; d < TT_RT_MAX_DEVICES; d++) {
        atomic_store(&tt_rt_g.mem[d].allocated, 0);
        atomic_store(&tt_rt_g.mem[d].peak, 0);
        atomic_store(&tt_rt_g.mem[d].n_allocs, 0);
    }
}
