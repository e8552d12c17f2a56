/* window.c — the fused eager mode: ops recorded into one window per device, cut into one program.
 *
 * Recording appends an op's program to the window's builder (tt_ir_builder_inline). Each storage the window
 * touches has a slot (retained): its contents as a flat [n] value once the window has written it or needed it
 * whole, else read in place through parameter views (when the driver can). Reading a view of a slot's value and
 * writing a view into it are IR view ops (csrc/ir/view.c), so `x[:, 1:].t() + 1` on a pending x stays in the
 * window. At a cut, every written slot whose storage something else still references (a tensor, a queued op)
 * becomes a result of the program, written whole into its buffer (given one now if pending); the rest are
 * dropped and DCE removes the work only they needed. The program goes through the compile cache and is queued on
 * the device's stream like a STRICT launch, so the caller never waits for it.
 *
 * One mutex per window: ops from Python threads and autograd's worker thread append to the same window in the
 * order they arrive. A cut holds the lock while it queues (queueing never waits on the window). */
#include "rt_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *(*where_hook)(char *buf, size_t size);
void tt_rt_set_where_hook(const char *(*where)(char *buf, size_t size)) { where_hook = where; }

static const char *const cut_names[TT_RT_CUT_COUNT] = {
    [TT_RT_CUT_READ] = "read",           [TT_RT_CUT_SYNC] = "synchronize",  [TT_RT_CUT_HOST_WRITE] = "host write",
    [TT_RT_CUT_COPY] = "device copy",    [TT_RT_CUT_OTHER_MODE] = "other mode", [TT_RT_CUT_VIEW] = "view",
    [TT_RT_CUT_SIZE] = "size cap",       [TT_RT_CUT_FLUSH] = "flush",       [TT_RT_CUT_FALLBACK] = "fallback",
    [TT_RT_CUT_EAGER] = "eager op",
};

const char *tt_rt_cut_reason_name(tt_rt_cut_reason r) {
    return (unsigned)r < TT_RT_CUT_COUNT ? cut_names[r] : "?";
}

tt_status tt_rt_window_init(tt_rt_window *w) {
    memset(w, 0, sizeof *w);
    if (pthread_mutex_init(&w->mu, NULL)) return tt_error(TT_STATUS_INTERNAL, "could not create a window lock");
    if (!(w->b = tt_ir_builder_create())) {
        pthread_mutex_destroy(&w->mu);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for a fusion window");
    }
    atomic_init(&w->n_ops, 0);
    w->ready = true;
    return TT_OK;
}

/* Empties the window (lock held): slots released, builder reset. */
static void window_clear(tt_rt_window *w) {
    for (int32_t i = 0; i < w->n_slots; i++) {
        atomic_store(&w->slots[i].s->wslot, -1);
        tt_rt_storage_release(w->slots[i].s);
    }
    w->n_slots = w->n_args = w->n_views = 0;
    atomic_store_explicit(&w->n_ops, 0, memory_order_release);
    w->first_op[0] = 0;
    w->origins_len = 0;
    tt_ir_builder_reset(w->b);
}

void tt_rt_window_fini(tt_rt_window *w) {
    if (!w->ready) return;
    window_clear(w);
    tt_ir_builder_destroy(w->b);
    free(w->args);
    free(w->slots);
    free(w->views);
    free(w->origins);
    pthread_mutex_destroy(&w->mu);
    memset(w, 0, sizeof *w);
}

static bool grow(void **p, int32_t *cap, int32_t need, size_t size) {
    if (need <= *cap) return true;
    int32_t n = *cap ? *cap * 2 : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, (size_t)n * size);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

static tt_ir_value add_arg(tt_rt_window *w, const tt_rt_arg *a, tt_ir_value v) {
    if (v == TT_IR_NONE) return v;
    if (!grow((void **)&w->args, &w->cap_args, w->n_args + 1, sizeof *w->args)) {
        tt_ir_builder_fail(w->b, TT_STATUS_OUT_OF_MEMORY, "out of host memory for a window parameter");
        return TT_IR_NONE;
    }
    w->args[w->n_args++] = *a;
    return v;
}

static tt_rt_wslot *slot_find(tt_rt_window *w, tt_rt_storage *s) {
    int32_t i = atomic_load_explicit(&s->wslot, memory_order_relaxed);
    return i >= 0 && i < w->n_slots && w->slots[i].s == s ? &w->slots[i] : NULL;
}

static tt_rt_wslot *slot_get(tt_rt_window *w, tt_rt_storage *s, tt_dtype dt) {
    tt_rt_wslot *sl = slot_find(w, s);
    if (sl) return sl;
    if (!grow((void **)&w->slots, &w->cap_slots, w->n_slots + 1, sizeof *w->slots)) {
        tt_ir_builder_fail(w->b, TT_STATUS_OUT_OF_MEMORY, "out of host memory for a window slot");
        return NULL;
    }
    sl = &w->slots[w->n_slots];
    tt_rt_storage_retain(s);
    sl->s = s;
    sl->dtype = dt;
    sl->n = (int64_t)(s->nbytes / tt_dtype_size(dt));
    sl->flat = TT_IR_NONE;
    sl->written = false;
    sl->views = -1;
    atomic_store(&s->wslot, w->n_slots++);
    return sl;
}

/* The slot's whole contents as [n]: a parameter reading the storage whole, or zeros for a pending storage never
 * written (its bytes are undefined, like torch.empty's). */
static tt_ir_value slot_flat(tt_rt_window *w, tt_rt_wslot *sl) {
    if (sl->flat != TT_IR_NONE) return sl->flat;
    int64_t n = sl->n;
    if (!tt_rt_storage_has_buffer(sl->s)) {
        sl->flat = tt_ir_broadcast_in_dim(w->b, tt_ir_constant_scalar(w->b, sl->dtype, 0), 1, &n, NULL);
        return sl->flat;
    }
    tt_rt_arg a = {.kind = TT_RT_ARG_TENSOR};
    a.tensor.storage = sl->s;
    a.tensor.dtype = sl->dtype;
    a.tensor.rank = 1;
    a.tensor.dims[0] = n;
    a.tensor.strides[0] = 1;
    sl->flat = add_arg(w, &a, tt_ir_param(w->b, sl->dtype, 1, &n));
    return sl->flat;
}

static bool same_view(const tt_rt_tensor *a, const tt_rt_tensor *b) {
    if (a->storage != b->storage || a->offset != b->offset || a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d] || a->strides[d] != b->strides[d]) return false;
    return true;
}

/* A tensor argument of a recorded op as a value of the window. */
static tt_ir_value arg_value(tt_rt_window *w, const tt_rt_tensor *t) {
    tt_rt_wslot *sl = slot_get(w, t->storage, t->dtype);
    if (!sl) return TT_IR_NONE;
    if (sl->flat == TT_IR_NONE && tt_rt_g.driver_strided && tt_rt_storage_has_buffer(t->storage)) {
        /* only this storage's views: a window reads many storages in place (an optimizer step) */
        for (int32_t i = sl->views; i >= 0; i = w->views[i].next)
            if (same_view(&w->views[i].view, t)) return w->views[i].value;
        if (!grow((void **)&w->views, &w->cap_views, w->n_views + 1, sizeof *w->views)) {
            tt_ir_builder_fail(w->b, TT_STATUS_OUT_OF_MEMORY, "out of host memory for a window view");
            return TT_IR_NONE;
        }
        tt_rt_arg a = {.kind = TT_RT_ARG_TENSOR, .tensor = *t};
        tt_ir_value v = add_arg(w, &a, tt_ir_param(w->b, t->dtype, t->rank, t->dims));
        w->views[w->n_views] = (tt_rt_wview){*t, v, sl->views};
        sl->views = w->n_views++;
        return v;
    }
    tt_ir_value flat = slot_flat(w, sl), v = TT_IR_NONE;
    if (flat == TT_IR_NONE) return TT_IR_NONE;
    tt_status st = tt_ir_view_read(w->b, flat, t->offset, t->rank, t->dims, t->strides, &v);
    if (st != TT_OK) tt_ir_builder_fail(w->b, st, "window: %s", tt_last_error());
    return v;
}

/* Can the window take this view of its storage (as an argument, or written as a result)? */
static bool view_fits(tt_rt_window *w, const tt_rt_tensor *t, bool write) {
    tt_rt_wslot *sl = slot_find(w, t->storage);
    if (sl && sl->dtype != t->dtype) return false; /* the same bytes as two dtypes: not expressible yet */
    int64_t n = (int64_t)(t->storage->nbytes / tt_dtype_size(t->dtype));
    /* boxes become view ops, other views gathers / scatters: rank 8 leaves no room for their index dim */
    return t->rank < TT_MAX_RANK || tt_ir_view_expressible(n, t->offset, t->rank, t->dims, t->strides, write) ||
           (!write && (!sl || sl->flat == TT_IR_NONE) && tt_rt_g.driver_strided && tt_rt_storage_has_buffer(t->storage));
}

void tt_rt_set_op_lines(bool on) { tt_rt_g.op_lines = on; }
bool tt_rt_get_op_lines(void) { return tt_rt_g.op_lines; }

void tt_rt_where(char *buf, size_t size) {
    buf[0] = 0;
    const char *at = where_hook ? where_hook(buf, size) : NULL;
    if (!at) buf[0] = 0;
}

/* Where the user's code is now, for the log (called without the window's lock: the hook may take the GIL). */
static void where_now(char *buf, size_t size) {
    tt_rt_where(buf, size);
    if (!buf[0]) snprintf(buf, size, "?");
}

/* Appends the op and its line to the window's origins (lock held). */
static bool add_origin(tt_rt_window *w, const char *op, const char *where) {
    size_t lo = strlen(op) + 1, lw = strlen(where) + 1, need = lo + lw;
    if (w->origins_len + need > w->cap_origins) {
        size_t cap = w->cap_origins ? w->cap_origins * 2 : 4096;
        while (cap < w->origins_len + need) cap *= 2;
        char *q = realloc(w->origins, cap);
        if (!q) return false;
        w->origins = q;
        w->cap_origins = cap;
    }
    memcpy(w->origins + w->origins_len, op, lo);
    memcpy(w->origins + w->origins_len + lo, where, lw);
    w->origins_len += need;
    return true;
}

static void log_cut(int device, tt_rt_window *w, tt_rt_cut_reason reason, int32_t n_out, int32_t dropped,
                    const char *outcome, const char *at) {
    fprintf(stderr, "torchtpu fusion: tpu:%d cut (%s) at %s: %d ops from %s, %d results, %d dropped; %s\n", device,
            tt_rt_cut_reason_name(reason), at && at[0] ? at : "?", (int)atomic_load(&w->n_ops), w->first_op,
            (int)n_out, (int)dropped, outcome);
}

/* Cuts the window (lock held). Whatever happens, the window is empty afterwards. */
static tt_status cut_locked(int device, tt_rt_window *w, tt_rt_cut_reason reason, const char *where) {
    int32_t n_ops = atomic_load(&w->n_ops);
    if (n_ops == 0) {
        window_clear(w);
        return TT_OK;
    }
    (void)where;
    tt_status st = tt_ir_builder_status(w->b);
    int32_t n_out = 0, dropped = 0;
    tt_rt_tensor stack_res[8];
    tt_rt_tensor *res = stack_res;
    if (st == TT_OK && w->n_slots > 8 && !(res = malloc(sizeof *res * (size_t)w->n_slots)))
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory to cut a window");
    for (int32_t i = 0; st == TT_OK && i < w->n_slots; i++) {
        tt_rt_wslot *sl = &w->slots[i];
        if (!sl->written) continue;
        /* the window's own reference aside, is anyone still holding it? */
        if (atomic_load_explicit(&sl->s->refcount, memory_order_acquire) <= 1) {
            dropped++;
            continue;
        }
        if ((st = tt_rt_storage_materialize(sl->s)) != TT_OK) break;
        /* written whole in the value's own shape (not as [n]): keeps the program's rows for the host row plan */
        tt_ir_value v = tt_ir_reshape_source(w->b, sl->flat);
        const tt_ir_type *vt = tt_ir_type_of(w->b, v);
        tt_rt_tensor *r = &res[n_out++];
        memset(r, 0, sizeof *r);
        r->storage = sl->s;
        r->dtype = sl->dtype;
        r->rank = vt->rank;
        int64_t stride = 1;
        for (int32_t d = vt->rank - 1; d >= 0; d--) {
            r->dims[d] = vt->dims[d];
            r->strides[d] = stride;
            stride *= vt->dims[d];
        }
        tt_ir_builder_add_output(w->b, v);
    }
    tt_ir_program *p = NULL;
    if (st == TT_OK) st = tt_ir_builder_finish(w->b, &p);
    char name[96];
    if (n_ops == 1) snprintf(name, sizeof name, "%s", w->first_op); /* a window of one op is that op */
    else snprintf(name, sizeof name, "fused window of %d ops (from %s)", (int)n_ops, w->first_op);
    int64_t compiles = atomic_load(&tt_rt_g.compiles);
    tt_rt_origins origins = {w->origins, w->origins_len, n_ops};
    if (st == TT_OK && n_out > 0) st = tt_rt_launch_queued(device, p, w->args, w->n_args, res, n_out, name, &origins);
    atomic_fetch_add(&tt_rt_g.cuts[reason], 1);
    atomic_fetch_add(&tt_rt_g.windows_run, 1);
    atomic_fetch_add(&tt_rt_g.windows_ops, n_ops);
    atomic_fetch_add(&tt_rt_g.pending_dropped, dropped);
    if (tt_rt_g.log_fusion)
        log_cut(device, w, reason, n_out, dropped,
                st != TT_OK ? "failed" : n_out == 0 ? "nothing to run"
                : atomic_load(&tt_rt_g.compiles) > compiles ? "compiled (new program)" : "cached program", where);
    if (res != stack_res) free(res);
    tt_ir_program_destroy(p);
    char msg[TT_RT_MSG_SIZE];
    if (st != TT_OK) {
        snprintf(msg, sizeof msg, "%s: %s", name, tt_last_error());
        /* what the window should have written raises this error when read, instead of giving undefined bytes */
        tt_rt_poison *poison = tt_rt_poison_new(st, msg);
        for (int32_t i = 0; i < w->n_slots; i++)
            if (w->slots[i].written) tt_rt_storage_poison(w->slots[i].s, poison);
        tt_rt_poison_release(poison);
    }
    window_clear(w);
    return st == TT_OK ? TT_OK : tt_error(st, "%s", msg);
}

tt_status tt_rt_window_cut(int device, tt_rt_cut_reason reason) {
    tt_status first = TT_OK;
    char where[256] = "";
    for (int d = 0; d < tt_rt_g.n_devices; d++) {
        if ((device >= 0 && d != device) || !tt_rt_window_busy(d)) continue;
        if (tt_rt_g.log_fusion && !where[0]) where_now(where, sizeof where);
        tt_rt_window *w = &tt_rt_g.windows[d];
        pthread_mutex_lock(&w->mu);
        tt_status st = cut_locked(d, w, reason, where);
        pthread_mutex_unlock(&w->mu);
        if (st != TT_OK && first == TT_OK) first = st;
    }
    return first;
}

tt_status tt_rt_flush(int device, tt_rt_cut_reason reason) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if (device < -1 || device >= tt_rt_g.n_devices)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "flush: tpu:%d does not exist (%d devices)", device,
                        tt_rt_g.n_devices);
    return tt_rt_window_cut(device, (unsigned)reason < TT_RT_CUT_COUNT ? reason : TT_RT_CUT_FLUSH);
}

tt_status tt_rt_window_record(int device, tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op, const char *where) {
    tt_rt_window *w = &tt_rt_g.windows[device];
    if (!where) where = "";
    pthread_mutex_lock(&w->mu);
    bool fits = true;
    for (int32_t i = 0; fits && i < n_args; i++)
        if (args[i].kind == TT_RT_ARG_TENSOR) fits = view_fits(w, &args[i].tensor, false);
    for (int32_t j = 0; fits && j < n_results; j++) fits = view_fits(w, &results[j], true);
    /* one storage seen as two dtypes within the op (a slot keeps one) */
    for (int32_t i = 0; fits && i < n_args + n_results; i++) {
        const tt_rt_tensor *a = i < n_args ? &args[i].tensor : &results[i - n_args];
        if (i < n_args && args[i].kind != TT_RT_ARG_TENSOR) continue;
        for (int32_t j = i + 1; fits && j < n_args + n_results; j++) {
            const tt_rt_tensor *c = j < n_args ? &args[j].tensor : &results[j - n_args];
            if (j < n_args && args[j].kind != TT_RT_ARG_TENSOR) continue;
            fits = a->storage != c->storage || a->dtype == c->dtype;
        }
    }
    if (!fits) {
        tt_status st = cut_locked(device, w, TT_RT_CUT_VIEW, where);
        pthread_mutex_unlock(&w->mu);
        return st == TT_OK ? tt_error(TT_STATUS_UNSUPPORTED, "%s: not expressible in a window", op) : st;
    }
    tt_ir_value stack_vals[16], *vals = stack_vals, stack_outs[8], *outs = stack_outs;
    tt_status st = TT_OK;
    if ((n_args > 16 && !(vals = malloc(sizeof *vals * (size_t)n_args))) ||
        (n_results > 8 && !(outs = malloc(sizeof *outs * (size_t)n_results))))
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "%s: out of host memory to record the op", op);
    for (int32_t i = 0; st == TT_OK && i < n_args; i++) {
        if (args[i].kind == TT_RT_ARG_TENSOR) {
            vals[i] = arg_value(w, &args[i].tensor);
        } else {
            tt_ir_value pv = p->params[i];
            vals[i] = add_arg(w, &args[i], tt_ir_scalar_param(w->b, p->types[pv].dtype));
        }
    }
    if (st == TT_OK) st = tt_ir_builder_status(w->b);
    tt_ir_builder_set_origin(w->b, atomic_load(&w->n_ops)); /* an error in these nodes names this op */
    if (st == TT_OK) st = tt_ir_builder_inline(w->b, p, vals, outs);
    for (int32_t j = 0; st == TT_OK && j < n_results; j++) {
        const tt_rt_tensor *t = &results[j];
        tt_rt_wslot *sl = slot_get(w, t->storage, t->dtype);
        if (!sl) break;
        tt_ir_value nv = TT_IR_NONE;
        if (tt_ir_view_is_whole(sl->n, t->offset, t->rank, t->dims, t->strides))
            nv = tt_ir_reshape(w->b, outs[j], 1, &sl->n);
        else {
            tt_ir_value old = slot_flat(w, sl);
            if (old != TT_IR_NONE) st = tt_ir_view_write(w->b, old, t->offset, t->rank, t->dims, t->strides, outs[j], &nv);
        }
        sl->flat = nv;
        sl->written = true;
        if (st == TT_OK) st = tt_ir_builder_status(w->b);
    }
    if (vals != stack_vals) free(vals);
    if (outs != stack_outs) free(outs);
    if (st != TT_OK) {
        /* The window's program is broken from here on: what was recorded before this op is lost too. Drop it all
         * and say so (the caller raises at this op). */
        char msg[TT_RT_MSG_SIZE];
        snprintf(msg, sizeof msg, "%s", tt_last_error());
        int32_t lost = atomic_load(&w->n_ops);
        window_clear(w);
        pthread_mutex_unlock(&w->mu);
        return tt_error(st, "%s: recording into the fusion window failed (%d earlier ops dropped): %s", op, (int)lost,
                        msg);
    }
    tt_ir_builder_set_origin(w->b, -1); /* views and results written at the cut belong to no op */
    if (!add_origin(w, op, where)) {
        int32_t lost = atomic_load(&w->n_ops);
        window_clear(w);
        pthread_mutex_unlock(&w->mu);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "%s: out of host memory to record the op (%d earlier ops dropped)",
                        op, (int)lost);
    }
    if (atomic_load(&w->n_ops) == 0) snprintf(w->first_op, sizeof w->first_op, "%s", op);
    int32_t n = atomic_fetch_add_explicit(&w->n_ops, 1, memory_order_release) + 1;
    if (n >= tt_rt_g.window_max_ops) st = cut_locked(device, w, TT_RT_CUT_SIZE, where);
    pthread_mutex_unlock(&w->mu);
    return st;
}
