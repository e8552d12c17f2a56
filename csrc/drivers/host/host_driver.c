/* host_driver.c — the host driver's vtable: buffers as 64-byte aligned host memory with per-device accounting,
 * byte copies, and the compile/execute entry points (implemented in host_compile.c and host_exec.c). */
#include "host_internal.h"
#include "../device_bytes.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct tt_buffer {
    void *data;    /* 64-byte aligned, never NULL */
    size_t nbytes; /* requested size */
    size_t charged;
    int device;
    uint64_t id;          /* never reused: the packed-operand cache's name for it (host_packcache.c) */
    _Atomic uint64_t gen; /* bumped by every write, copy and execution that writes it */
    _Atomic uint64_t stamp; /* the last execution that writes it */
};

static _Atomic uint64_t next_id = 1, next_stamp = 1;

typedef struct host_ctx {
    tt_device_bytes bytes;
} host_ctx;

static int host_device_count(void *ctx) { return ((host_ctx *)ctx)->bytes.n_devices; }

static tt_status host_buffer_alloc(void *ctx, int device, size_t nbytes, tt_buffer **out) {
    host_ctx *c = ctx;
    *out = NULL;
    tt_status st = tt_device_bytes_check(&c->bytes, device);
    if (st != TT_OK) return st;
    if (nbytes > SIZE_MAX - 128)
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "tpu:%d out of memory: tried to allocate %zu bytes", device, nbytes);
    size_t rounded = (nbytes + 63) / 64 * 64;
    if (rounded == 0) rounded = 64;
    if ((st = tt_device_bytes_reserve(&c->bytes, device, nbytes)) != TT_OK) return st;
    tt_buffer *b = malloc(sizeof *b);
    void *data = aligned_alloc(64, rounded);
    if (!b || !data) {
        free(b);
        free(data);
        tt_device_bytes_release(&c->bytes, device, nbytes);
        return tt_error(TT_STATUS_OUT_OF_MEMORY,
                        "tpu:%d out of memory: tried to allocate %zu bytes; the host allocation failed", device,
                        nbytes);
    }
    b->data = data;
    b->nbytes = nbytes;
    b->charged = nbytes;
    b->device = device;
    b->id = atomic_fetch_add(&next_id, 1);
    atomic_init(&b->gen, 0);
    atomic_init(&b->stamp, 0);
    *out = b;
    return TT_OK;
}

static void host_buffer_free(void *ctx, tt_buffer *buf) {
    host_ctx *c = ctx;
    if (!buf) return;
    tt_device_bytes_release(&c->bytes, buf->device, buf->charged);
    tt_host_pack_forget(buf->id);
    free(buf->data);
    free(buf);
}

static void *host_buffer_address(void *ctx, tt_buffer *buf) {
    (void)ctx;
    return buf ? buf->data : NULL;
}

static tt_status check_range(const tt_buffer *b, size_t off, size_t n, const char *what) {
    if (!b) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: NULL buffer", what);
    if (off > b->nbytes || n > b->nbytes - off)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: range [%zu, %zu) outside a buffer of %zu bytes", what, off,
                        off + n, b->nbytes);
    return TT_OK;
}

static tt_status host_write(void *ctx, tt_buffer *dst, size_t off, const void *src, size_t n) {
    (void)ctx;
    tt_status st = check_range(dst, off, n, "write");
    if (st != TT_OK) return st;
    if (n) memcpy((char *)dst->data + off, src, n);
    atomic_fetch_add(&dst->gen, 1);
    return TT_OK;
}

static tt_status host_read(void *ctx, tt_buffer *src, size_t off, void *dst, size_t n) {
    (void)ctx;
    tt_status st = check_range(src, off, n, "read");
    if (st != TT_OK) return st;
    if (n) memcpy(dst, (const char *)src->data + off, n);
    return TT_OK;
}

static tt_status host_copy(void *ctx, tt_buffer *dst, size_t doff, tt_buffer *src, size_t soff, size_t n) {
    (void)ctx;
    tt_status st = check_range(dst, doff, n, "copy");
    if (st == TT_OK) st = check_range(src, soff, n, "copy");
    if (st != TT_OK) return st;
    if (n) memmove((char *)dst->data + doff, (const char *)src->data + soff, n);
    atomic_fetch_add(&dst->gen, 1);
    return TT_OK;
}

void *tt_host_buffer_data(tt_buffer *buf) { return buf ? buf->data : NULL; }
size_t tt_host_buffer_size(const tt_buffer *buf) { return buf ? buf->nbytes : 0; }

static tt_status host_compile(void *ctx, tt_ir_program *p, tt_executable **out) {
    (void)ctx;
    return tt_host_compile(p, out);
}

static void host_executable_free(void *ctx, tt_executable *exe) {
    (void)ctx;
    tt_host_executable_free(exe);
}

static size_t host_executable_scratch_bytes(void *ctx, const tt_executable *exe) {
    (void)ctx;
    return tt_host_executable_scratch_bytes(exe);
}

static tt_status host_execute(void *ctx, int device, tt_executable *exe, const tt_exec_arg *args, int32_t n_args,
                              const tt_exec_arg *results, int32_t n_results) {
    host_ctx *c = ctx;
    tt_status st = tt_device_bytes_check(&c->bytes, device);
    if (st != TT_OK) return st;
    /* The arguments this execution does not write are read-only for it: GEMMs may keep their packed form
     * (host_packcache.c). The buffers it writes get a new generation afterwards (every read of an argument comes
     * before the writes of an execution, so what was packed during it was the old generation's bytes). */
    uint64_t stamp = atomic_fetch_add(&next_stamp, 1);
    for (int32_t j = 0; j < n_results; j++)
        if (results[j].buffer) atomic_store_explicit(&results[j].buffer->stamp, stamp, memory_order_relaxed);
    tt_host_ro_span few[16], *spans = n_args <= 16 ? few : malloc((size_t)n_args * sizeof *spans);
    int32_t n_spans = 0;
    for (int32_t i = 0; spans && i < n_args; i++) {
        tt_buffer *b = args[i].buffer;
        if (!b || atomic_load_explicit(&b->stamp, memory_order_relaxed) == stamp) continue;
        spans[n_spans++] = (tt_host_ro_span){b->data, b->nbytes, b->id, atomic_load(&b->gen)};
    }
    tt_host_ro_set(spans, n_spans);
    st = tt_host_execute(exe, args, n_args, results, n_results);
    tt_host_ro_set(NULL, 0);
    if (spans != few) free(spans);
    for (int32_t j = 0; j < n_results; j++)
        if (results[j].buffer) atomic_fetch_add(&results[j].buffer->gen, 1);
    return st;
}

static bool host_supports_op(void *ctx, tt_ir_op op, tt_dtype dtype) {
    (void)ctx;
    (void)dtype;
    return (unsigned)op < TT_OP_COUNT; /* custom calls included: registered kernels are called directly */
}

/* TORCHTPU_HOST_OPAQUE=1: the driver claims no capability, so the runtime treats its buffers as opaque (whole,
 * dense, views as IR ops), as it must a PJRT driver's: proof that nothing above relies on in-place views. */
static uint64_t host_capabilities(void *ctx) {
    (void)ctx;
    const char *v = getenv("TORCHTPU_HOST_OPAQUE");
    return v && !strcmp(v, "1") ? 0 : TT_DRIVER_CAP_STRIDED_VIEWS;
}

static tt_status host_memory_stats(void *ctx, int device, tt_driver_memory_stats *out) {
    return tt_device_bytes_stats(&((host_ctx *)ctx)->bytes, device, out);
}

static void host_destroy(void *ctx) {
    host_ctx *c = ctx;
    if (!c) return;
    tt_device_bytes_free(&c->bytes);
    free(c);
}

tt_driver *tt_host_driver_create(int n_devices, size_t memory_limit) {
    if (n_devices < 1) n_devices = 1;
    tt_driver *d = calloc(1, sizeof *d);
    host_ctx *c = calloc(1, sizeof *c);
    if (!d || !c || tt_device_bytes_init(&c->bytes, n_devices, memory_limit) != TT_OK) {
        free(d);
        free(c);
        return NULL;
    }
    d->ctx = c;
    d->iface.struct_size = sizeof(tt_driver_i);
    d->iface.name = "host";
    d->iface.version = 1;
    d->iface.device_count = host_device_count;
    d->iface.buffer_alloc = host_buffer_alloc;
    d->iface.buffer_free = host_buffer_free;
    d->iface.buffer_address = host_buffer_address;
    d->iface.write = host_write;
    d->iface.read = host_read;
    d->iface.copy = host_copy;
    d->iface.compile = host_compile;
    d->iface.executable_free = host_executable_free;
    d->iface.execute = host_execute;
    d->iface.supports_op = host_supports_op;
    d->iface.memory_stats = host_memory_stats;
    d->iface.destroy = host_destroy;
    d->iface.executable_scratch_bytes = host_executable_scratch_bytes;
    d->iface.capabilities = host_capabilities;
    return d;
}

void tt_driver_destroy(tt_driver *d) {
    if (!d) return;
    if (d->iface.destroy) d->iface.destroy(d->ctx);
    free(d);
}
