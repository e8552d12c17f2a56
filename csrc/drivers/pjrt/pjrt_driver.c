/* pjrt_driver.c — the PJRT driver's vtable: tt_buffers over immutable PJRT buffers, byte copies, execute.
 *
 * A PJRT buffer is a typed, immutable value; a tt_buffer is mutable bytes. So a tt_buffer holds up to two
 * copies of its bytes: the device value (a PJRT_Buffer of the type the program that produced or last read it
 * used) and a host shadow. A host write makes the shadow the truth and drops the device value; an execution's
 * result replaces the device value and makes the shadow stale; a read fills the shadow from the device value.
 * An argument whose device value has the parameter's type goes in as it is; otherwise (first use after a host
 * write, or the bytes reinterpreted as another type) the shadow is uploaded with the parameter's type.
 * The runtime gives this driver whole, dense buffers (no TT_DRIVER_CAP_STRIDED_VIEWS): every view is an IR op. */
#include "tt_driver.h"

#if TT_HAVE_PJRT
#include "pjrt_internal.h"
#include "../buffer_uses.h"

#include <stdio.h>
#include <stdlib.h>

struct tt_buffer {
    size_t nbytes;
    int device;
    pthread_mutex_t mu;  /* the two copies change together (a read on one thread, a copy out on another) */
    uint8_t *host;       /* the shadow (allocated when first needed) */
    bool host_valid;     /* the shadow holds the bytes */
    PJRT_Buffer *dev;    /* the device value, or NULL */
    tt_ir_type dev_type; /* its type */
};

static int pj_device_count(void *ctx) { return ((pj_ctx *)ctx)->bytes.n_devices; }

static size_t type_bytes(const tt_ir_type *t) { return (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype); }

static bool same_type(const tt_ir_type *a, const tt_ir_type *b) {
    return a->dtype == b->dtype && a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof a->dims[0] * (size_t)a->rank);
}

static tt_status pj_buffer_alloc(void *ctx, int device, size_t nbytes, tt_buffer **out) {
    pj_ctx *c = ctx;
    *out = NULL;
    tt_status st = tt_device_bytes_reserve(&c->bytes, device, nbytes);
    if (st != TT_OK) return st;
    tt_buffer *b = calloc(1, sizeof *b);
    if (!b || pthread_mutex_init(&b->mu, NULL) != 0) {
        free(b);
        tt_device_bytes_release(&c->bytes, device, nbytes);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "tpu:%d: out of host memory for a buffer record", device);
    }
    b->nbytes = nbytes;
    b->device = device;
    *out = b;
    return TT_OK;
}

static void drop_dev(pj_ctx *c, tt_buffer *b) {
    if (!b->dev) return;
    PJ_ARGS(PJRT_Buffer_Destroy_Args, d);
    d.buffer = b->dev;
    tt_pjrt_status(c->api, c->api->PJRT_Buffer_Destroy(&d), "destroying a buffer");
    b->dev = NULL;
}

static void pj_buffer_free(void *ctx, tt_buffer *b) {
    pj_ctx *c = ctx;
    if (!b) return;
    drop_dev(c, b);
    tt_device_bytes_release(&c->bytes, b->device, b->nbytes);
    pthread_mutex_destroy(&b->mu);
    free(b->host);
    free(b);
}

/* PyTorch's DataPtr needs a unique address; nothing above the driver dereferences it. */
static void *pj_buffer_address(void *ctx, tt_buffer *b) { return (void)ctx, b; }

/* The shadow, allocated (zero: a buffer never written reads as zeros, deterministically). Under b->mu. */
static tt_status ensure_host(tt_buffer *b) {
    if (b->host) return TT_OK;
    b->host = calloc(1, b->nbytes ? b->nbytes : 1);
    return b->host ? TT_OK
                   : tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory for a %zu-byte shadow", b->nbytes);
}

/* The first n bytes of device value v (of dev_bytes in all, ready) into dst. */
static tt_status read_value(pj_ctx *c, PJRT_Buffer *v, size_t dev_bytes, void *dst, size_t n) {
    if (c->unsafe_pointer) { /* the CPU plugin's memory is host memory: no ~20 us ToHostBuffer hand-off */
        PJ_ARGS(PJRT_Buffer_UnsafePointer_Args, p);
        p.buffer = v;
        tt_status st = tt_pjrt_status(c->api, c->api->PJRT_Buffer_UnsafePointer(&p), "reading a buffer");
        if (st == TT_OK && n) memcpy(dst, (const void *)p.buffer_pointer, n);
        return st;
    }
    if (n < dev_bytes) return tt_error(TT_STATUS_INTERNAL, "pjrt: a %zu-byte value read into %zu bytes", dev_bytes, n);
    PJ_ARGS(PJRT_Buffer_ToHostBuffer_Args, t);
    t.src = v;
    t.dst = dst;
    t.dst_size = dev_bytes;
    tt_status st = tt_pjrt_status(c->api, c->api->PJRT_Buffer_ToHostBuffer(&t), "reading a buffer");
    return st == TT_OK ? tt_pjrt_await(c->api, t.event, "reading a buffer") : st;
}

/* Makes the shadow hold the bytes. Under b->mu. */
static tt_status download(pj_ctx *c, tt_buffer *b) {
    if (b->host_valid) return TT_OK;
    tt_status st = ensure_host(b);
    if (st == TT_OK && b->dev) {
        size_t n = type_bytes(&b->dev_type);
        st = n > b->nbytes ? tt_error(TT_STATUS_INTERNAL, "pjrt: a value outgrew its buffer")
                           : read_value(c, b->dev, n, b->host, n);
    }
    if (st == TT_OK) b->host_valid = true;
    return st;
}

/* A new device buffer holding bytes (at least type's size of them) as type, on device. */
static tt_status upload(pj_ctx *c, const void *bytes, const tt_ir_type *type, int device, PJRT_Buffer **out) {
    PJ_ARGS(PJRT_Client_BufferFromHostBuffer_Args, a);
    a.client = c->client;
    a.data = bytes;
    a.type = tt_pjrt_type(type->dtype);
    a.dims = type->dims;
    a.num_dims = (size_t)type->rank;
    a.host_buffer_semantics = PJRT_HostBufferSemantics_kImmutableOnlyDuringCall;
    a.device = c->devices[device];
    tt_status st = tt_pjrt_status(c->api, c->api->PJRT_Client_BufferFromHostBuffer(&a), "copying to the device");
    if (st == TT_OK) st = tt_pjrt_await(c->api, a.done_with_host_buffer, "copying to the device");
    else if (a.done_with_host_buffer) tt_pjrt_await(c->api, a.done_with_host_buffer, "copying to the device");
    if (st != TT_OK && a.buffer) {
        PJ_ARGS(PJRT_Buffer_Destroy_Args, d);
        d.buffer = a.buffer;
        tt_pjrt_status(c->api, c->api->PJRT_Buffer_Destroy(&d), "destroying a buffer");
        a.buffer = NULL;
    }
    *out = a.buffer;
    return st;
}

/* Bytes read as bool: any non-zero byte is true (as PyTorch and the host driver read them), but XLA's predicates
 * must be 0 or 1, so they go up normalised. */
static tt_status upload_bools(pj_ctx *c, const uint8_t *bytes, const tt_ir_type *type, int device, PJRT_Buffer **out) {
    size_t n = type_bytes(type);
    uint8_t *norm = malloc(n ? n : 1);
    if (!norm) return tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory for %zu bools", n);
    for (size_t i = 0; i < n; i++) norm[i] = bytes[i] != 0;
    tt_status st = upload(c, norm, type, device, out);
    free(norm);
    return st;
}

static tt_status check_range(const tt_buffer *b, size_t off, size_t n, const char *what) {
    if (off > b->nbytes || n > b->nbytes - off)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt %s: bytes [%zu, +%zu) outside a %zu-byte buffer", what, off,
                        n, b->nbytes);
    return TT_OK;
}

static tt_status pj_write(void *ctx, tt_buffer *dst, size_t off, const void *src, size_t n) {
    tt_status st = check_range(dst, off, n, "write");
    if (st != TT_OK) return st;
    pthread_mutex_lock(&dst->mu);
    /* a write of the whole buffer needs none of the old bytes */
    st = off == 0 && n == dst->nbytes ? ensure_host(dst) : download(ctx, dst);
    if (st == TT_OK) {
        if (n) memcpy(dst->host + off, src, n);
        dst->host_valid = true;
        drop_dev(ctx, dst);
    }
    pthread_mutex_unlock(&dst->mu);
    return st;
}

static tt_status pj_read(void *ctx, tt_buffer *src, size_t off, void *dst, size_t n) {
    tt_status st = check_range(src, off, n, "read");
    if (st != TT_OK) return st;
    pthread_mutex_lock(&src->mu);
    st = download(ctx, src);
    if (st == TT_OK && n) memcpy(dst, src->host + off, n);
    pthread_mutex_unlock(&src->mu);
    return st;
}

static tt_status pj_copy(void *ctx, tt_buffer *dst, size_t doff, tt_buffer *src, size_t soff, size_t n) {
    tt_status st = check_range(dst, doff, n, "copy");
    if (st == TT_OK) st = check_range(src, soff, n, "copy");
    if (st != TT_OK) return st;
    if (dst == src) {
        pthread_mutex_lock(&src->mu);
        if ((st = download(ctx, src)) == TT_OK) {
            memmove(src->host + doff, src->host + soff, n);
            drop_dev(ctx, src);
        }
        pthread_mutex_unlock(&src->mu);
        return st;
    }
    /* through the source's shadow: copies are rare (cross-device moves, a storage resize) */
    pthread_mutex_lock(&src->mu);
    st = download(ctx, src);
    pthread_mutex_unlock(&src->mu);
    return st == TT_OK ? pj_write(ctx, dst, doff, src->host + soff, n) : st;
}

/* One parameter's device buffer: the argument's device value if it has the parameter's type, else an upload of
 * its bytes (kept as the device value when there was none). *owned: the caller destroys it after the run. */
static tt_status argument(pj_ctx *c, int device, const tt_exec_arg *arg, const tt_ir_type *type, PJRT_Buffer **out,
                          bool *owned) {
    *owned = false;
    if (!arg->buffer) { /* a scalar parameter: a 0-d value of its dtype */
        union {
            double f64;
            float f32;
            int64_t i64;
            int32_t i32;
            int16_t i16;
            int8_t i8;
            uint8_t u8;
            uint16_t h;
        } v;
        memset(&v, 0, sizeof v);
        switch (type->dtype) {
        case TT_F64: v.f64 = arg->f; break;
        case TT_F32: v.f32 = (float)arg->f; break;
        case TT_BF16: v.h = tt_f32_to_bf16((float)arg->f); break;
        case TT_F16: v.h = tt_f32_to_f16((float)arg->f); break;
        case TT_I64: v.i64 = arg->i; break;
        case TT_I32: v.i32 = (int32_t)arg->i; break;
        case TT_I16: v.i16 = (int16_t)arg->i; break;
        case TT_I8: v.i8 = (int8_t)arg->i; break;
        case TT_U8: v.u8 = (uint8_t)arg->i; break;
        case TT_BOOL: v.u8 = arg->i != 0; break;
        default: return tt_error(TT_STATUS_TYPE, "pjrt: a scalar parameter of unknown dtype");
        }
        *owned = true;
        return upload(c, &v, type, device, out);
    }
    tt_buffer *b = arg->buffer;
    if (arg->offset != 0)
        return tt_error(TT_STATUS_INTERNAL, "pjrt: an argument at offset %lld (the driver takes whole buffers)",
                        (long long)arg->offset);
    if (type_bytes(type) > b->nbytes)
        return tt_error(TT_STATUS_INTERNAL, "pjrt: a %zu-byte buffer passed as a %zu-byte parameter", b->nbytes,
                        type_bytes(type));
    if (b->device != device)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt: a buffer of tpu:%d passed to a program on tpu:%d", b->device,
                        device);
    pthread_mutex_lock(&b->mu);
    tt_status st = TT_OK;
    if (b->dev && same_type(&b->dev_type, type)) {
        *out = b->dev;
    } else if ((st = download(c, b)) == TT_OK) {
        st = type->dtype == TT_BOOL ? upload_bools(c, b->host, type, device, out)
                                    : upload(c, b->host, type, device, out);
        if (st == TT_OK && b->dev) *owned = true;
        else if (st == TT_OK) b->dev = *out, b->dev_type = *type;
    }
    pthread_mutex_unlock(&b->mu);
    return st;
}

static void destroy_all(pj_ctx *c, PJRT_Buffer **bufs, const bool *owned, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (!bufs[i] || (owned && !owned[i])) continue;
        PJ_ARGS(PJRT_Buffer_Destroy_Args, d);
        d.buffer = bufs[i];
        tt_pjrt_status(c->api, c->api->PJRT_Buffer_Destroy(&d), "destroying a buffer");
    }
}

/* PyTorch's error for the first bounds check that found a bad index, as the host driver raises it (the runtime
 * names the op that recorded the node). */
static tt_status check_bounds(pj_ctx *c, const tt_ir_bounds_check *checks, int32_t n, PJRT_Buffer *const *flags) {
    for (int32_t i = 0; i < n; i++) {
        int64_t f[2];
        tt_status st = read_value(c, flags[i], sizeof f, f, sizeof f);
        if (st != TT_OK) return st;
        if (f[0] == INT64_MAX) continue;
        int64_t r = f[0] % checks[i].n_components;
        st = tt_ir_bounds_status(checks[i].kind, f[1], checks[i].dim[r], checks[i].size[r]);
        tt_error_set_node(checks[i].node);
        return st;
    }
    return TT_OK;
}

static tt_status pj_execute(void *ctx, int device, tt_executable *exe, const tt_exec_arg *args, int32_t n_args,
                            const tt_exec_arg *results, int32_t n_results) {
    pj_ctx *c = ctx;
    const tt_ir_program *p = tt_pjrt_program(exe);
    if (n_args != p->n_params || n_results != p->n_outputs)
        return tt_error(TT_STATUS_INTERNAL, "pjrt: %d arguments and %d results for a program of %d and %d",
                        (int)n_args, (int)n_results, (int)p->n_params, (int)p->n_outputs);
    tt_status st = tt_device_bytes_check(&c->bytes, device);
    if (st != TT_OK) return st;
    int32_t n_checks = 0;
    const tt_ir_bounds_check *checks = tt_pjrt_checks(exe, &n_checks);
    size_t na = (size_t)n_args, nr = (size_t)n_results, no = nr + (size_t)n_checks;
    /* per execution: argument and result handles, which arguments are this run's own uploads, which must not be
     * donated; on the stack for the usual launch */
    PJRT_Buffer *few_bufs[64];
    bool few_owned[32];
    int64_t few_keep[32];
    bool small = na + no <= 64 && na <= 32;
    PJRT_Buffer **in = small ? few_bufs : malloc((na + no + 1) * sizeof *in);
    bool *owned = small ? few_owned : malloc((na + 1) * sizeof *owned);
    int64_t *keep = small ? few_keep : malloc((na + 1) * sizeof *keep);
    if (!in || !owned || !keep) {
        if (!small) free(in), free(owned), free(keep);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory for an execution");
    }
    memset(in, 0, (na + no) * sizeof *in);
    memset(owned, 0, na * sizeof *owned);
    PJRT_Buffer **out = in + na;
    for (size_t i = 0; i < na && st == TT_OK; i++)
        st = argument(c, device, &args[i], &p->types[p->params[i]], &in[i], &owned[i]);
    for (size_t j = 0; j < nr && st == TT_OK; j++) {
        const tt_exec_arg *r = &results[j];
        if (!r->buffer || r->offset != 0 || type_bytes(&p->types[p->outputs[j]]) > r->buffer->nbytes)
            st = tt_error(TT_STATUS_INTERNAL, "pjrt: result %zu is not a whole buffer of its size", j);
    }
    /* An argument whose buffer this execution overwrites (a result) and that it reads once is donated: XLA may
     * build a result in its memory (an in-place update, an optimizer step, needs no second copy of the tensor).
     * Every other argument must outlive the run. */
    size_t n_keep = 0;
    tt_buffer_uses uses;
    uses.table = NULL;
    if (st == TT_OK) st = tt_buffer_uses_build(&uses, args, n_args, results, n_results);
    for (size_t i = 0; i < na && st == TT_OK; i++) {
        const tt_buffer_use *u = args[i].buffer ? tt_buffer_uses_of(&uses, args[i].buffer) : NULL;
        if (!owned[i] && !(u && u->n_results > 0 && u->n_args == 1)) keep[n_keep++] = (int64_t)i;
    }
    tt_buffer_uses_free(&uses);
    if (st == TT_OK) {
        PJ_ARGS(PJRT_ExecuteOptions, opts);
        opts.non_donatable_input_indices = keep;
        opts.num_non_donatable_input_indices = n_keep;
        PJRT_Buffer *const *arg_list = in;
        PJRT_Buffer **out_list = out;
        PJRT_Event *done = NULL;
        PJ_ARGS(PJRT_LoadedExecutable_Execute_Args, a);
        a.executable = tt_pjrt_loaded(exe);
        a.options = &opts;
        a.argument_lists = &arg_list;
        a.num_devices = 1;
        a.num_args = na;
        a.output_lists = &out_list;
        a.device_complete_events = &done;
        a.execute_device = c->devices[device];
        st = tt_pjrt_status(c->api, c->api->PJRT_LoadedExecutable_Execute(&a), "executing");
        if (st == TT_OK) st = tt_pjrt_await(c->api, done, "executing");
        else if (done) tt_pjrt_await(c->api, done, "executing");
        if (st != TT_OK) destroy_all(c, out, NULL, no);
    }
    /* A bad index does not stop XLA (it clamps or drops): the results are all computed, and those of ops before
     * the failing one are right, as the host driver leaves them; the runtime poisons the failing op's and later. */
    tt_status bad = st == TT_OK ? check_bounds(c, checks, n_checks, out + nr) : TT_OK;
    if (st == TT_OK) destroy_all(c, out + nr, NULL, (size_t)n_checks);
    /* every result computed: now they replace their buffers' values (results may alias arguments) */
    for (size_t j = 0; j < nr && st == TT_OK; j++) {
        tt_buffer *b = results[j].buffer;
        pthread_mutex_lock(&b->mu);
        drop_dev(c, b);
        b->dev = out[j];
        b->dev_type = p->types[p->outputs[j]];
        b->host_valid = false;
        pthread_mutex_unlock(&b->mu);
    }
    destroy_all(c, in, owned, na); /* handles of donated values too: donation gives away the memory, not them */
    if (!small) free(in), free(owned), free(keep);
    return st != TT_OK ? st : bad;
}

static bool pj_supports_op(void *ctx, tt_ir_op op, tt_dtype dtype) {
    const pj_ctx *c = ctx;
    (void)dtype;
    return (op != TT_OP_CUSTOM_CALL || !c->no_kernels[0]) && (unsigned)op < TT_OP_COUNT;
}

static tt_status pj_memory_stats(void *ctx, int device, tt_driver_memory_stats *out) {
    return tt_device_bytes_stats(&((pj_ctx *)ctx)->bytes, device, out);
}

static uint64_t pj_capabilities(void *ctx) { return (void)ctx, 0; }

/* A quarter of the process's memory mappings for executables, at 20-30 each (XLA CPU's JIT code and data); past the
 * limit XLA's JIT fails ("Failed to materialize symbols") and leaves the unwinder broken. */
static int64_t pj_max_executables(void *ctx) {
    (void)ctx;
    long long maps = 65530;
    FILE *f = fopen("/proc/sys/vm/max_map_count", "r");
    if (f) {
        if (fscanf(f, "%lld", &maps) != 1) maps = 65530;
        fclose(f);
    }
    return maps / 128 > 64 ? maps / 128 : 64;
}
static const char *pj_identity(void *ctx) { return ((pj_ctx *)ctx)->identity; }

static void pj_destroy(void *ctx) {
    pj_ctx *c = ctx;
    if (!c) return;
    tt_pjrt_client_destroy(c);
    tt_device_bytes_free(&c->bytes);
    free(c);
}

tt_status tt_pjrt_driver_create(const char *plugin_path, int n_devices, size_t memory_limit, tt_driver **out) {
    *out = NULL;
    if (!plugin_path || !plugin_path[0])
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "pjrt: no plugin: set TORCHTPU_PJRT_PLUGIN to a PJRT plugin's .so (pip install xla-cpu-pjrt)");
    if (n_devices < 1) n_devices = 1;
    const PJRT_Api *api = NULL;
    tt_status st = tt_pjrt_load(plugin_path, &api);
    if (st != TT_OK) return st;
    tt_driver *d = calloc(1, sizeof *d);
    pj_ctx *c = calloc(1, sizeof *c);
    if (!d || !c || tt_device_bytes_init(&c->bytes, n_devices, memory_limit) != TT_OK) {
        free(d);
        free(c);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory for the driver");
    }
    c->api = api;
    if ((st = tt_pjrt_client_create(c, plugin_path, n_devices)) != TT_OK) {
        pj_destroy(c);
        free(d);
        return st;
    }
    d->ctx = c;
    d->iface.struct_size = sizeof(tt_driver_i);
    d->iface.name = "pjrt";
    d->iface.version = 1;
    d->iface.device_count = pj_device_count;
    d->iface.buffer_alloc = pj_buffer_alloc;
    d->iface.buffer_free = pj_buffer_free;
    d->iface.buffer_address = pj_buffer_address;
    d->iface.write = pj_write;
    d->iface.read = pj_read;
    d->iface.copy = pj_copy;
    d->iface.compile = tt_pjrt_compile;
    d->iface.executable_free = tt_pjrt_executable_free;
    d->iface.execute = pj_execute;
    d->iface.supports_op = pj_supports_op;
    d->iface.memory_stats = pj_memory_stats;
    d->iface.destroy = pj_destroy;
    d->iface.capabilities = pj_capabilities;
    d->iface.executable_serialize = tt_pjrt_serialize;
    d->iface.executable_deserialize = tt_pjrt_deserialize;
    d->iface.identity = pj_identity;
    d->iface.max_executables = pj_max_executables;
    *out = d;
    return TT_OK;
}

const char *tt_pjrt_platform(const tt_driver *d) {
    return d && !strcmp(d->iface.name, "pjrt") ? ((const pj_ctx *)d->ctx)->platform : NULL;
}

#else /* built without a pjrt_c_api.h */

tt_status tt_pjrt_driver_create(const char *plugin_path, int n_devices, size_t memory_limit, tt_driver **out) {
    (void)plugin_path;
    (void)n_devices;
    (void)memory_limit;
    *out = NULL;
    return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: this build has no PJRT driver (no pjrt_c_api.h was found when it "
                                           "was built: pip install xla-cpu-pjrt, then rebuild)");
}

const char *tt_pjrt_platform(const tt_driver *d) { return (void)d, NULL; }

#endif
