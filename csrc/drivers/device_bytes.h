/* device_bytes.h — per-device byte accounting with an optional limit, shared by the drivers. A reservation is
 * taken before the memory (compare-and-swap: concurrent allocations cannot both pass the limit) and released with
 * it; the out-of-memory message is PyTorch-like and names the device. */
#ifndef TT_DEVICE_BYTES_H
#define TT_DEVICE_BYTES_H

#include "tt_driver.h"

#include <stdatomic.h>

typedef struct tt_device_bytes {
    int n_devices;
    size_t limit;           /* per device, 0 = none */
    _Atomic size_t *in_use; /* per device */
} tt_device_bytes;

tt_status tt_device_bytes_init(tt_device_bytes *a, int n_devices, size_t limit); /* OUT_OF_MEMORY if it cannot */
void tt_device_bytes_free(tt_device_bytes *a);
tt_status tt_device_bytes_check(const tt_device_bytes *a, int device); /* "tpu:N does not exist" */
tt_status tt_device_bytes_reserve(tt_device_bytes *a, int device, size_t nbytes);
void tt_device_bytes_release(tt_device_bytes *a, int device, size_t nbytes);
tt_status tt_device_bytes_stats(const tt_device_bytes *a, int device, tt_driver_memory_stats *out);

#endif /* TT_DEVICE_BYTES_H */
