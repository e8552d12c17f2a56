/* device_bytes.c — per-device byte accounting shared by the drivers (device_bytes.h). */
#include "device_bytes.h"

#include <stdint.h>
#include <stdlib.h>

tt_status tt_device_bytes_init(tt_device_bytes *a, int n_devices, size_t limit) {
    a->n_devices = n_devices;
    a->limit = limit;
    a->in_use = calloc((size_t)n_devices, sizeof *a->in_use);
    if (!a->in_use) return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for %d devices", n_devices);
    for (int i = 0; i < n_devices; i++) atomic_init(&a->in_use[i], 0);
    return TT_OK;
}

void tt_device_bytes_free(tt_device_bytes *a) {
    free((void *)a->in_use);
    a->in_use = NULL;
}

tt_status tt_device_bytes_check(const tt_device_bytes *a, int device) {
    if (device < 0 || device >= a->n_devices)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "tpu:%d does not exist (%d devices)", device, a->n_devices);
    return TT_OK;
}

tt_status tt_device_bytes_reserve(tt_device_bytes *a, int device, size_t nbytes) {
    tt_status st = tt_device_bytes_check(a, device);
    if (st != TT_OK) return st;
    size_t cur = atomic_load(&a->in_use[device]);
    for (;;) {
        if (a->limit && (nbytes > a->limit || cur > a->limit - nbytes))
            return tt_error(TT_STATUS_OUT_OF_MEMORY,
                            "tpu:%d out of memory: tried to allocate %zu bytes; %zu bytes in use, limit %zu bytes",
                            device, nbytes, cur, a->limit);
        if (atomic_compare_exchange_weak(&a->in_use[device], &cur, cur + nbytes)) return TT_OK;
    }
}

void tt_device_bytes_release(tt_device_bytes *a, int device, size_t nbytes) {
    atomic_fetch_sub(&a->in_use[device], nbytes);
}

tt_status tt_device_bytes_stats(const tt_device_bytes *a, int device, tt_driver_memory_stats *out) {
    tt_status st = tt_device_bytes_check(a, device);
    if (st != TT_OK) return st;
    out->bytes_in_use = atomic_load(&a->in_use[device]);
    out->bytes_limit = a->limit;
    return TT_OK;
}
