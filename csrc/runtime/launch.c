/* launch.c — tt_rt_launch (the hottest path of the project), sync points, host <-> device and device copies.
 *
 * A launch checks its arguments against the program (a few compares per dimension: views the driver will read
 * in place must lie inside their storages), takes the executable from the compile cache, then either runs it on
 * the calling thread (DEBUG) or fills the next slot of the device's work ring in place (STRICT: no lock, no
 * allocation for ops of up to TT_RT_WORK_INLINE tensors). The mode is the calling thread's override, else the
 * process mode. */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TT_RT_STACK_ARGS 16 /* DEBUG launches with at most this many args + results use no heap at all */

/* Re-issues the current error with "<op>: " in front (copied first: tt_error writes the same buffer). */
static tt_status prefixed(tt_status st, const char *op) {
    char msg[TT_RT_MSG_SIZE];
    snprintf(msg, sizeof msg, "%s", tt_last_error());
    return tt_error(st, "%s: %s", op, msg);
}

/* A view must match the program's type and stay inside its storage, on the launch's device. */
static tt_status check_view(const tt_rt_tensor *t, const tt_ir_type *ty, int device, const char *op, const char *what,
                            int32_t idx) {
    const tt_rt_storage *s = t->storage;
    if (!s) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d has no storage", op, what, idx);
    if (s->device != device)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d is on tpu:%d but the op runs on tpu:%d", op, what, idx,
                        s->device, device);
    if (t->dtype != ty->dtype)
        return tt_error(TT_STATUS_TYPE, "%s: %s %d has dtype %s, the program expects %s", op, what, idx,
                        tt_dtype_name(t->dtype), tt_dtype_name(ty->dtype));
    if (t->rank != ty->rank)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d has rank %d, the program expects %d", op, what, idx,
                        (int)t->rank, (int)ty->rank);
    int64_t lo = t->offset, hi = t->offset;
    bool empty = false;
    for (int32_t d = 0; d < t->rank; d++) {
        if (t->dims[d] != ty->dims[d])
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d has size %lld in dim %d, the program expects %lld",
                            op, what, idx, (long long)t->dims[d], (int)d, (long long)ty->dims[d]);
        if (t->dims[d] == 0) empty = true;
        int64_t span;
        if (t->dims[d] > 0 && __builtin_mul_overflow(t->dims[d] - 1, t->strides[d], &span))
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d: stride %lld overflows", op, what, idx,
                            (long long)t->strides[d]);
        if (t->dims[d] > 0 && __builtin_add_overflow(span < 0 ? lo : hi, span, span < 0 ? &lo : &hi))
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %s %d: view extent overflows", op, what, idx);
    }
    if (empty) return TT_OK;
    size_t esize = tt_dtype_size(t->dtype);
    if (lo < 0 || (uint64_t)hi >= (uint64_t)(s->nbytes / (esize ? esize : 1)))
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "%s: %s %d: view (offset %lld, elements %lld..%lld) lies outside its storage of %zu bytes", op,
                        what, idx, (long long)t->offset, (long long)lo, (long long)hi, s->nbytes);
    return TT_OK;
}

static tt_status check_launch(int device, const tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op) {
    if (!tt_rt_device_valid(device))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: tpu:%d does not exist (%d devices)", op, device,
                        tt_rt_g.n_devices);
    if (!p) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: program is NULL", op);
    if (n_args != p->n_params || (n_args > 0 && !args))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %d arguments given, the program has %d parameters", op,
                        (int)n_args, (int)p->n_params);
    if (n_results != p->n_outputs || (n_results > 0 && !results))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %d results given, the program has %d outputs", op,
                        (int)n_results, (int)p->n_outputs);
    for (int32_t i = 0; i < n_args; i++) {
        tt_ir_value v = p->params[i];
        bool scalar = p->nodes[p->value_node[v]].op == TT_OP_SCALAR_PARAMETER;
        if (scalar != (args[i].kind == TT_RT_ARG_SCALAR))
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: argument %d is a %s, the program expects a %s", op,
                            (int)i, args[i].kind == TT_RT_ARG_SCALAR ? "scalar" : "tensor",
                            scalar ? "scalar" : "tensor");
        if (!scalar) {
            tt_status st = check_view(&args[i].tensor, &p->types[v], device, op, "argument", i);
            if (st != TT_OK) return st;
        }
    }
    for (int32_t j = 0; j < n_results; j++) {
        tt_status st = check_view(&results[j], &p->types[p->outputs[j]], device, op, "result", j);
        if (st != TT_OK) return st;
    }
    return TT_OK;
}

/* Buffers for every storage a launch that runs now (not recorded) touches. */
static tt_status materialize_all(const tt_rt_arg *args, int32_t n_args, const tt_rt_tensor *results,
                                 int32_t n_results, const char *op) {
    tt_status st = TT_OK;
    for (int32_t i = 0; st == TT_OK && i < n_args; i++)
        if (args[i].kind == TT_RT_ARG_TENSOR) st = tt_rt_storage_materialize(args[i].tensor.storage);
    for (int32_t j = 0; st == TT_OK && j < n_results; j++) st = tt_rt_storage_materialize(results[j].storage);
    return st == TT_OK ? TT_OK : prefixed(st, op);
}

static inline void view_to_exec(tt_exec_arg *e, const tt_rt_tensor *t) {
    e->buffer = t->storage->buffer;
    e->offset = t->offset;
    memcpy(e->strides, t->strides, sizeof e->strides);
    e->i = 0;
    e->f = 0;
}

static inline void arg_to_exec(tt_exec_arg *e, const tt_rt_arg *a) {
    if (a->kind == TT_RT_ARG_TENSOR) {
        view_to_exec(e, &a->tensor);
    } else {
        memset(e, 0, sizeof *e);
        e->i = a->i;
        e->f = a->f;
    }
}

/* A DEBUG launch after a queued launch failed (the error not yet taken by a sync): every item queued after the
 * failure was skipped, so this launch's inputs may be undefined. It does not run; the queued error stays recorded
 * for the device's next sync point, which raises it to whichever thread syncs (as CUDA's sticky errors). */
static tt_status queued_failure(tt_rt_stream *s, const char *op) {
    if (atomic_load_explicit(&s->error, memory_order_acquire) == TT_OK) return TT_OK;
    char msg[TT_RT_MSG_SIZE];
    pthread_mutex_lock(&s->mu);
    tt_status st = (tt_status)atomic_load(&s->error);
    snprintf(msg, sizeof msg, "%s", s->error_msg);
    pthread_mutex_unlock(&s->mu);
    if (st == TT_OK) return TT_OK;
    return tt_error(st, "%s: not run, because an earlier queued op on tpu:%d failed: %s", op, s->device, msg);
}

static tt_status launch_debug(int device, tt_rt_cache_entry *entry, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op) {
    tt_exec_arg stack[TT_RT_STACK_ARGS];
    int32_t n = n_args + n_results;
    tt_exec_arg *ea = stack;
    if (n > TT_RT_STACK_ARGS && !(ea = malloc((size_t)n * sizeof *ea))) {
        tt_rt_cache_entry_release(entry);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "%s: out of host memory for %d arguments", op, (int)n);
    }
    for (int32_t i = 0; i < n_args; i++) arg_to_exec(&ea[i], &args[i]);
    for (int32_t j = 0; j < n_results; j++) view_to_exec(&ea[n_args + j], &results[j]);
    tt_driver *drv = tt_rt_g.driver;
    int64_t t0 = tt_rt_activity_on() ? tt_rt_activity_clock_ns() : 0;
    tt_rt_capture_maybe(entry);
    tt_status st = drv->iface.execute(drv->ctx, device, tt_rt_cache_entry_exe(entry), ea, n_args, ea + n_args,
                                      n_results);
    if (t0) tt_rt_activity_note(op, device, TT_RT_ACTIVITY_KERNEL, t0);
    if (ea != stack) free(ea);
    tt_rt_cache_entry_release(entry);
    return st == TT_OK ? TT_OK : prefixed(st, op);
}

/* Fills the next slot of the device's ring in place: no heap unless the op has more than TT_RT_WORK_INLINE
 * tensors or a name longer than the slot holds. The program itself is not kept: the cache entry holds the
 * structure and the executable the worker needs. */
static tt_status launch_strict(int device, tt_rt_cache_entry *entry, const tt_rt_arg *args, int32_t n_args,
                               const tt_rt_tensor *results, int32_t n_results, const char *op,
                               const tt_rt_origins *origins) {
    tt_rt_stream *s = &tt_rt_g.streams[device];
    uint64_t ticket;
    tt_rt_work *w = NULL;
    tt_status st = tt_rt_stream_reserve(s, &w, &ticket);
    if (st != TT_OK) {
        tt_rt_cache_entry_release(entry);
        return prefixed(st, op);
    }
    size_t name_len = strlen(op) + 1;
    size_t n = (size_t)n_args + (size_t)n_results;
    size_t heap_exec = n > TT_RT_WORK_INLINE ? n * (sizeof(tt_exec_arg) + sizeof(tt_rt_storage *)) : 0;
    size_t heap_name = name_len > TT_RT_WORK_NAME ? name_len : 0;
    size_t origins_len = origins && origins->n > 0 ? origins->len : 0;
    size_t heap_origins = origins_len > TT_RT_WORK_ORIGINS ? origins_len : 0;
    size_t heap_size = heap_exec + heap_name + heap_origins;
    w->heap = heap_size ? malloc(heap_size) : NULL;
    if (heap_size && !w->heap) {
        w->kind = TT_RT_WORK_NOP;
        w->n_storages = 0;
        w->entry = NULL;
        tt_rt_stream_publish(s, w, ticket, 0);
        tt_rt_cache_entry_release(entry);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "%s: out of host memory to queue the op", op);
    }
    w->kind = TT_RT_WORK_LAUNCH;
    w->device = device;
    w->n_args = n_args;
    w->n_results = n_results;
    w->entry = entry;
    if (heap_exec) {
        w->args = w->heap;
        w->storages = (tt_rt_storage **)(void *)((unsigned char *)w->heap + n * sizeof(tt_exec_arg));
    } else {
        w->args = w->inline_.exec;
        w->storages = w->inline_storages;
    }
    w->results = w->args + n_args;
    char *name = name_len > TT_RT_WORK_NAME ? (char *)w->heap + heap_exec : w->inline_name;
    memcpy(name, op, name_len);
    w->op_name = name;
    w->origins = NULL;
    w->n_origins = 0;
    if (origins_len) {
        char *o = heap_origins ? (char *)w->heap + heap_exec + heap_name : w->inline_origins;
        memcpy(o, origins->text, origins_len);
        w->origins = o;
        w->n_origins = origins->n;
    }
    int32_t ns = 0;
    for (int32_t i = 0; i < n_args; i++) {
        arg_to_exec(&w->args[i], &args[i]);
        if (args[i].kind == TT_RT_ARG_TENSOR) {
            tt_rt_storage_retain(args[i].tensor.storage);
            w->storages[ns++] = args[i].tensor.storage;
        }
    }
    for (int32_t j = 0; j < n_results; j++) {
        view_to_exec(&w->results[j], &results[j]);
        tt_rt_storage_retain(results[j].storage);
        w->storages[ns++] = results[j].storage;
    }
    w->n_storages = ns;
    tt_rt_stream_publish(s, w, ticket, tt_rt_cache_entry_cost(entry));
    return TT_OK;
}

tt_status tt_rt_launch_queued(int device, tt_ir_program *program, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op,
                              const tt_rt_origins *origins) {
    tt_status st = materialize_all(args, n_args, results, n_results, op);
    if (st != TT_OK) return st;
    tt_rt_cache_entry *entry = NULL;
    if ((st = tt_rt_cache_acquire(program, op, &entry)) != TT_OK) return prefixed(st, op);
    return launch_strict(device, entry, args, n_args, results, n_results, op, origins);
}

/* One op's origins, into buf (NULL text when they do not fit: the error then names the op alone). */
static tt_rt_origins one_origin(const char *op, const char *where, char *buf, size_t size) {
    size_t lo = strlen(op) + 1, lw = strlen(where) + 1;
    if (lo + lw > size) return (tt_rt_origins){NULL, 0, 0};
    memcpy(buf, op, lo);
    memcpy(buf + lo, where, lw);
    return (tt_rt_origins){buf, lo + lw, 1};
}

/* A launch over a driver without strided views, in STRICT or DEBUG mode: the op alone as a window, cut at once
 * (its views become IR ops); DEBUG then waits and returns the op's own error. */
static tt_status launch_through_window(int device, tt_ir_program *program, const tt_rt_arg *args, int32_t n_args,
                                       const tt_rt_tensor *results, int32_t n_results, const char *op, int mode,
                                       const char *where) {
    tt_status st = tt_rt_window_record(device, program, args, n_args, results, n_results, op, where);
    if (st == TT_OK) st = tt_rt_window_cut(device, TT_RT_CUT_EAGER);
    if (st != TT_OK || mode != TT_EAGER_DEBUG) return st;
    tt_rt_stream *s = &tt_rt_g.streams[device];
    tt_rt_stream_wait_idle(s);
    char msg[TT_RT_MSG_SIZE];
    st = tt_rt_stream_take_error(s, msg, sizeof msg);
    return st == TT_OK ? TT_OK : tt_error(st, "%s", msg);
}

tt_status tt_rt_launch(int device, tt_ir_program *program, const tt_rt_arg *args, int32_t n_args,
                       const tt_rt_tensor *results, int32_t n_results, const char *op_name) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    const char *op = op_name ? op_name : "launch";
    if ((st = check_launch(device, program, args, n_args, results, n_results, op)) != TT_OK) return st;
    int mode = tt_rt_mode_now();
    atomic_fetch_add_explicit(&tt_rt_g.ops[mode], 1, memory_order_relaxed);
    /* The user's line, for an error found later when the op runs (debug mode raises at the line itself). */
    char where[192] = "", obuf[TT_RT_WORK_ORIGINS];
    if (mode != TT_EAGER_DEBUG && (tt_rt_g.op_lines || tt_rt_g.log_fusion)) tt_rt_where(where, sizeof where);
    if (mode == TT_EAGER_FUSED) {
        st = tt_rt_window_record(device, program, args, n_args, results, n_results, op, where);
        /* not expressible even alone in a window (one storage as two dtypes within the op): a strided driver
         * runs it as it is, queued behind the window */
        if (st == TT_STATUS_UNSUPPORTED && tt_rt_g.driver_strided) {
            tt_rt_origins o = one_origin(op, where, obuf, sizeof obuf);
            return tt_rt_launch_queued(device, program, args, n_args, results, n_results, op, &o);
        }
        return st;
    }
    /* ops another mode deferred run first */
    if (tt_rt_window_busy(device) && (st = tt_rt_window_cut(device, TT_RT_CUT_OTHER_MODE)) != TT_OK) return st;
    if (mode == TT_EAGER_DEBUG) {
        /* Work another thread (or this one, before a switch) queued on the device runs first. Three atomic loads
         * when the queue is empty and healthy. */
        tt_rt_stream_wait_idle(&tt_rt_g.streams[device]);
        if ((st = queued_failure(&tt_rt_g.streams[device], op)) != TT_OK) return st;
    }
    if (!tt_rt_g.driver_strided)
        return launch_through_window(device, program, args, n_args, results, n_results, op, mode, where);
    if ((st = materialize_all(args, n_args, results, n_results, op)) != TT_OK) return st;
    tt_rt_cache_entry *entry = NULL;
    if ((st = tt_rt_cache_acquire(program, op, &entry)) != TT_OK) return prefixed(st, op);
    if (mode == TT_EAGER_DEBUG) return launch_debug(device, entry, args, n_args, results, n_results, op);
    tt_rt_origins o = where[0] ? one_origin(op, where, obuf, sizeof obuf) : (tt_rt_origins){NULL, 0, 0};
    return launch_strict(device, entry, args, n_args, results, n_results, op, &o);
}

/* ---- sync points ---- */

/* Waits for device (-1: every device) and takes the recorded errors; the first (lowest device) is returned. */
static tt_status sync_devices(int device) {
    char msg[TT_RT_MSG_SIZE], other[TT_RT_MSG_SIZE];
    tt_status first = TT_OK;
    int more = 0;
    for (int d = 0; d < tt_rt_g.n_devices; d++) {
        if (device >= 0 && d != device) continue;
        tt_rt_stream_wait_idle(&tt_rt_g.streams[d]);
        tt_status st = tt_rt_stream_take_error(&tt_rt_g.streams[d], first == TT_OK ? msg : other, sizeof msg);
        if (st != TT_OK && first == TT_OK) first = st;
        else if (st != TT_OK) more++;
    }
    if (first == TT_OK) return TT_OK;
    if (more) return tt_error(first, "%s (and %d more failure%s on other devices)", msg, more, more == 1 ? "" : "s");
    return tt_error(first, "%s", msg);
}

tt_status tt_rt_synchronize(int device) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (device < -1 || device >= tt_rt_g.n_devices)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "synchronize: tpu:%d does not exist (%d devices)", device,
                        tt_rt_g.n_devices);
    atomic_fetch_add_explicit(&tt_rt_g.syncs, 1, memory_order_relaxed);
    tt_rt_stream_hold_wakes(true);
    tt_status cst = tt_rt_window_cut(device, TT_RT_CUT_SYNC);
    tt_rt_stream_hold_wakes(false);
    st = sync_devices(device);
    return cst != TT_OK ? cst : st;
}

static tt_status check_range(const tt_rt_storage *s, size_t offset, size_t nbytes, const char *what) {
    if (!s) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: storage is NULL", what);
    if (offset > s->nbytes || nbytes > s->nbytes - offset)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: bytes [%zu, %zu + %zu) lie outside a storage of %zu bytes",
                        what, offset, offset, nbytes, s->nbytes);
    return TT_OK;
}

tt_status tt_rt_read(tt_rt_storage *src, size_t offset, void *dst, size_t nbytes) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if ((st = check_range(src, offset, nbytes, "read from device")) != TT_OK) return st;
    if (nbytes && !dst) return tt_error(TT_STATUS_INVALID_ARGUMENT, "read from device: destination is NULL");
    atomic_fetch_add_explicit(&tt_rt_g.syncs, 1, memory_order_relaxed);
    if (tt_rt_window_busy(src->device)) {
        tt_rt_stream_hold_wakes(true);
        st = tt_rt_window_cut(src->device, TT_RT_CUT_READ);
        tt_rt_stream_hold_wakes(false);
        if (st != TT_OK) return st;
    }
    if ((st = sync_devices(src->device)) != TT_OK) return st;
    if (!nbytes) return TT_OK;
    if ((st = tt_rt_storage_materialize(src)) != TT_OK) return st; /* never written: undefined bytes, as torch.empty */
    tt_rt_poison *p = atomic_load(&src->poison);
    if (p) /* racy only against a concurrent write of the same storage, which a correct program does not do */
        return tt_error(p->status, "%s (this tensor was to be written by that failed op, or by work after it)", p->msg);
    tt_driver *drv = tt_rt_g.driver;
    if ((st = drv->iface.read(drv->ctx, src->buffer, offset, dst, nbytes)) != TT_OK) return st;
    atomic_fetch_add_explicit(&tt_rt_g.bytes_to_host, (int64_t)nbytes, memory_order_relaxed);
    return TT_OK;
}

tt_status tt_rt_write(tt_rt_storage *dst, size_t offset, const void *src, size_t nbytes) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if ((st = check_range(dst, offset, nbytes, "write to device")) != TT_OK) return st;
    if (!nbytes) return TT_OK;
    if (!src) return tt_error(TT_STATUS_INVALID_ARGUMENT, "write to device: source is NULL");
    /* a window that holds the storage reads or writes it before this write */
    if (atomic_load_explicit(&dst->wslot, memory_order_relaxed) >= 0 &&
        (st = tt_rt_window_cut(dst->device, TT_RT_CUT_HOST_WRITE)) != TT_OK)
        return st;
    if ((st = tt_rt_storage_materialize(dst)) != TT_OK) return st;
    atomic_fetch_add_explicit(&tt_rt_g.bytes_to_device, (int64_t)nbytes, memory_order_relaxed);
    if (tt_rt_mode_now() == TT_EAGER_DEBUG) {
        tt_rt_stream_wait_idle(&tt_rt_g.streams[dst->device]); /* after queued work, as a DEBUG launch */
        tt_driver *drv = tt_rt_g.driver;
        int64_t t0 = tt_rt_activity_on() ? tt_rt_activity_clock_ns() : 0;
        st = drv->iface.write(drv->ctx, dst->buffer, offset, src, nbytes);
        if (t0) tt_rt_activity_note("write to device", dst->device, TT_RT_ACTIVITY_COPY, t0);
        return st;
    }
    /* STRICT: the caller may reuse its bytes at once, so the item carries a private copy (in the slot when
     * small: scalars and small tensors need no heap). */
    tt_rt_stream *s = &tt_rt_g.streams[dst->device];
    uint64_t ticket;
    tt_rt_work *w = NULL;
    if ((st = tt_rt_stream_reserve(s, &w, &ticket)) != TT_OK) return prefixed(st, "write to device");
    w->entry = NULL;
    w->heap = nbytes > sizeof w->inline_.bytes ? malloc(nbytes) : NULL;
    if (nbytes > sizeof w->inline_.bytes && !w->heap) {
        w->kind = TT_RT_WORK_NOP;
        w->n_storages = 0;
        tt_rt_stream_publish(s, w, ticket, 0);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "write to device: out of host memory to stage %zu bytes", nbytes);
    }
    void *data = w->heap ? w->heap : (void *)w->inline_.bytes;
    memcpy(data, src, nbytes);
    w->kind = TT_RT_WORK_WRITE;
    w->device = dst->device;
    w->storages = w->inline_storages;
    tt_rt_storage_retain(dst);
    w->storages[0] = dst;
    w->n_storages = 1;
    w->op_name = "write to device";
    w->offset = offset;
    w->nbytes = nbytes;
    w->data = data;
    tt_rt_stream_publish(s, w, ticket, (int64_t)(nbytes / 4)); /* a rough copy rate: 4 bytes per ns */
    return TT_OK;
}

/* Synchronous: waits for both devices' queues (taking their errors), then copies. Simple and correct; a queued
 * copy can come later if profiles ask for it. */
tt_status tt_rt_copy(tt_rt_storage *dst, size_t dst_offset, tt_rt_storage *src, size_t src_offset, size_t nbytes) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if ((st = check_range(dst, dst_offset, nbytes, "device copy (destination)")) != TT_OK) return st;
    if ((st = check_range(src, src_offset, nbytes, "device copy (source)")) != TT_OK) return st;
    atomic_fetch_add_explicit(&tt_rt_g.syncs, 1, memory_order_relaxed);
    if ((tt_rt_window_busy(src->device) && (st = tt_rt_window_cut(src->device, TT_RT_CUT_COPY)) != TT_OK) ||
        (tt_rt_window_busy(dst->device) && (st = tt_rt_window_cut(dst->device, TT_RT_CUT_COPY)) != TT_OK))
        return st;
    if ((st = tt_rt_storage_materialize(src)) != TT_OK || (st = tt_rt_storage_materialize(dst)) != TT_OK) return st;
    st = sync_devices(src->device);
    if (dst->device != src->device) {
        char msg[TT_RT_MSG_SIZE];
        if (st != TT_OK) snprintf(msg, sizeof msg, "%s", tt_last_error());
        tt_status st2 = sync_devices(dst->device);
        if (st != TT_OK) return tt_error(st, "%s", msg);
        st = st2;
    }
    if (st != TT_OK) return st;
    if (!nbytes) return TT_OK;
    tt_driver *drv = tt_rt_g.driver;
    return drv->iface.copy(drv->ctx, dst->buffer, dst_offset, src->buffer, src_offset, nbytes);
}

tt_status tt_rt_copy_rows_now(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                              size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows) {
    tt_driver *drv = tt_rt_g.driver;
    tt_status st = TT_OK;
    for (size_t r = 0; r < rows && st == TT_OK; r++)
        st = drv->iface.copy(drv->ctx, dst->buffer, dst_offset + r * dst_stride, src->buffer,
                             src_offset + r * src_stride, row_bytes);
    return st;
}

/* The last byte row `rows - 1` touches lies inside the storage (no overflow on the way). */
static tt_status check_rows(const tt_rt_storage *s, size_t offset, size_t stride, size_t row_bytes, size_t rows,
                            const char *what) {
    if (rows == 0 || row_bytes == 0) return check_range(s, offset, 0, what);
    if (stride && rows - 1 > (SIZE_MAX - offset) / stride)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: %zu rows of stride %zu overflow", what, rows, stride);
    return check_range(s, offset + (rows - 1) * stride, row_bytes, what);
}

tt_status tt_rt_copy_rows(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                          size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if ((st = check_rows(dst, dst_offset, dst_stride, row_bytes, rows, "copy rows (destination)")) != TT_OK ||
        (st = check_rows(src, src_offset, src_stride, row_bytes, rows, "copy rows (source)")) != TT_OK)
        return st;
    if (dst->device != src->device)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "copy rows: tpu:%d -> tpu:%d (one device only)", src->device,
                        dst->device);
    int device = dst->device;
    if ((atomic_load_explicit(&src->wslot, memory_order_relaxed) >= 0 ||
         atomic_load_explicit(&dst->wslot, memory_order_relaxed) >= 0) &&
        (st = tt_rt_window_cut(device, TT_RT_CUT_COPY)) != TT_OK)
        return st;
    if ((st = tt_rt_storage_materialize(src)) != TT_OK || (st = tt_rt_storage_materialize(dst)) != TT_OK) return st;
    return tt_rt_copy_rows_enqueue(dst, dst_offset, dst_stride, src, src_offset, src_stride, row_bytes, rows);
}

tt_status tt_rt_copy_rows_enqueue(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                                  size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows) {
    tt_status st = TT_OK;
    int device = dst->device;
    if (rows == 0 || row_bytes == 0) return TT_OK;
    tt_rt_stream *s = &tt_rt_g.streams[device];
    if (tt_rt_mode_now() == TT_EAGER_DEBUG) {
        tt_rt_stream_wait_idle(s);
        if ((st = queued_failure(s, "copy rows")) != TT_OK) return st;
        return tt_rt_copy_rows_now(dst, dst_offset, dst_stride, src, src_offset, src_stride, row_bytes, rows);
    }
    uint64_t ticket;
    tt_rt_work *w = NULL;
    if ((st = tt_rt_stream_reserve(s, &w, &ticket)) != TT_OK) return prefixed(st, "copy rows");
    w->entry = NULL;
    w->heap = NULL;
    w->kind = TT_RT_WORK_COPY_ROWS;
    w->device = device;
    w->storages = w->inline_storages;
    tt_rt_storage_retain(src);
    tt_rt_storage_retain(dst);
    w->storages[0] = src;
    w->storages[1] = dst;
    w->n_storages = 2;
    w->op_name = "copy rows";
    w->offset = dst_offset;
    w->dst_stride = dst_stride;
    w->src_offset = src_offset;
    w->src_stride = src_stride;
    w->nbytes = row_bytes;
    w->rows = rows;
    tt_rt_stream_publish(s, w, ticket, (int64_t)(rows * row_bytes / 4));
    return TT_OK;
}
