/* wslots.c — a fused window's recorded ops through its slots: what recording notes of each op (the trace that
 * decides the program, the parameters in order), and, at a trace miss, the same walk building the program.
 *
 * Each storage the window touches has a slot; its contents are read in place through parameter views (a driver
 * that reads strided views) until the window writes the storage or needs it whole, then held as one flat [n]
 * value, read and written through IR view ops (csrc/ir/view.c). Both walks (ir false: record, ir true: build) do
 * the same bookkeeping, so the parameters the program takes are the ones recording added, in the same order. */
#include "rt_internal.h"

#include <stdlib.h>
#include <string.h>

bool tt_rt_grow(void **p, int32_t *cap, int32_t need, size_t size) {
    if (need <= *cap) return true;
    int32_t n = *cap ? *cap * 2 : 16;
    while (n < need) n *= 2;
    void *q = realloc(*p, (size_t)n * size);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

tt_status tt_rt_oom(const char *what) { return tt_error(TT_STATUS_OUT_OF_MEMORY, "out of host memory for %s", what); }

/* ---- the trace: everything that decides the window's program and its parameters, op by op ---- */
static tt_status trace_push(tt_rt_window *w, int32_t n, const uint64_t *v) {
    if (!tt_rt_grow((void **)&w->trace, &w->cap_trace, w->n_trace + n, sizeof *w->trace))
        return tt_rt_oom("a window trace");
    memcpy(w->trace + w->n_trace, v, (size_t)n * sizeof *v);
    w->n_trace += n;
    return TT_OK;
}

/* A tensor the op reads or writes: its slot (by first use, so equal traces number slots alike), the slot's size
 * and state when new, the view. */
static tt_status trace_tensor(tt_rt_window *w, int32_t slot, bool new_slot, const tt_rt_tensor *t) {
    const tt_rt_wslot *sl = &w->slots[slot];
    uint64_t v[5 + 2 * TT_MAX_RANK];
    int32_t n = 0;
    v[n++] = (uint64_t)(uint32_t)slot | (uint64_t)t->dtype << 32 | (uint64_t)t->rank << 40 |
             (uint64_t)new_slot << 48 | (uint64_t)sl->had_buffer << 49;
    if (new_slot) {
        v[n++] = (uint64_t)sl->n;
        v[n++] = tt_rt_mark_word(sl->s); /* a marked storage makes a bucketed program */
    }
    v[n++] = (uint64_t)t->offset;
    for (int32_t d = 0; d < t->rank; d++) {
        v[n++] = (uint64_t)t->dims[d];
        v[n++] = (uint64_t)t->strides[d];
    }
    return trace_push(w, n, v);
}

/* ---- slots, parameters and views: the same bookkeeping when recording (ir false: nothing built) and when the
 * program is built at a trace miss (ir true), so both give the same parameters in the same order ---- */
static tt_status add_arg(tt_rt_window *w, const tt_rt_arg *a) {
    if (!tt_rt_grow((void **)&w->args, &w->cap_args, w->n_args + 1, sizeof *w->args))
        return tt_rt_oom("a window parameter");
    w->args[w->n_args++] = *a;
    return TT_OK;
}

static tt_rt_wslot *slot_find(tt_rt_window *w, tt_rt_storage *s) {
    int32_t i = atomic_load_explicit(&s->wslot, memory_order_relaxed);
    return i >= 0 && i < w->n_slots && w->slots[i].s == s ? &w->slots[i] : NULL;
}

/* The storage's slot (created on first use: *is_new). */
static tt_rt_wslot *slot_get(tt_rt_window *w, tt_rt_storage *s, tt_dtype dt, bool *is_new) {
    tt_rt_wslot *sl = slot_find(w, s);
    *is_new = !sl;
    if (sl) return sl;
    if (!tt_rt_grow((void **)&w->slots, &w->cap_slots, w->n_slots + 1, sizeof *w->slots)) return NULL;
    sl = &w->slots[w->n_slots];
    tt_rt_storage_retain(s);
    *sl = (tt_rt_wslot){.s = s, .dtype = dt, .n = (int64_t)(s->nbytes / tt_dtype_size(dt)),
                        .had_buffer = tt_rt_storage_has_buffer(s), .flat = TT_IR_NONE, .views = -1};
    atomic_store(&s->wslot, w->n_slots++);
    return sl;
}

/* The slot's whole contents as [n]: a parameter reading the storage whole, or zeros for a pending storage never
 * written (its bytes are undefined, like torch.empty's). */
static tt_status slot_flat(tt_rt_window *w, tt_rt_wslot *sl, bool ir) {
    if (sl->has_flat) return TT_OK;
    sl->has_flat = true;
    int64_t n = sl->n;
    if (!sl->had_buffer) {
        if (ir) sl->flat = tt_ir_broadcast_in_dim(w->b, tt_ir_constant_scalar(w->b, sl->dtype, 0), 1, &n, NULL);
        return TT_OK;
    }
    tt_rt_arg a = {.kind = TT_RT_ARG_TENSOR};
    a.tensor.storage = sl->s;
    a.tensor.dtype = sl->dtype;
    a.tensor.rank = 1;
    a.tensor.dims[0] = n;
    a.tensor.strides[0] = 1;
    if (ir) sl->flat = tt_ir_param(w->b, sl->dtype, 1, &n);
    return add_arg(w, &a);
}

static bool same_view(const tt_rt_tensor *a, const tt_rt_tensor *b) {
    if (a->storage != b->storage || a->offset != b->offset || a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t d = 0; d < a->rank; d++)
        if (a->dims[d] != b->dims[d] || a->strides[d] != b->strides[d]) return false;
    return true;
}

/* A tensor argument of a recorded op: its slot, and (ir) its value in the window's program. */
static tt_status arg_value(tt_rt_window *w, const tt_rt_tensor *t, bool ir, int32_t *slot, bool *is_new,
                           tt_ir_value *v) {
    *v = TT_IR_NONE;
    tt_rt_wslot *sl = slot_get(w, t->storage, t->dtype, is_new);
    if (!sl) return tt_rt_oom("a window slot");
    *slot = (int32_t)(sl - w->slots);
    if (!sl->has_flat && tt_rt_g.driver_strided && sl->had_buffer) {
        /* only this storage's views: a window reads many storages in place (an optimizer step) */
        for (int32_t i = sl->views; i >= 0; i = w->views[i].next)
            if (same_view(&w->views[i].view, t)) {
                *v = w->views[i].value;
                return TT_OK;
            }
        if (!tt_rt_grow((void **)&w->views, &w->cap_views, w->n_views + 1, sizeof *w->views))
            return tt_rt_oom("a window view");
        tt_rt_arg a = {.kind = TT_RT_ARG_TENSOR, .tensor = *t};
        if (ir) *v = tt_ir_param(w->b, t->dtype, t->rank, t->dims);
        w->views[w->n_views] = (tt_rt_wview){*t, *v, sl->views};
        sl->views = w->n_views++;
        return add_arg(w, &a);
    }
    tt_status st = slot_flat(w, sl, ir);
    if (st != TT_OK || !ir || (st = tt_ir_builder_status(w->b)) != TT_OK) return st;
    st = tt_ir_view_read(w->b, sl->flat, t->offset, t->rank, t->dims, t->strides, v);
    return st == TT_OK ? TT_OK : tt_error(st, "window: %s", tt_last_error());
}

/* One recorded op through the slots: its arguments' values, its results written into their slots. ir: also
 * builds its nodes into the window's builder; else appends what decides them to the trace. */
tt_status tt_rt_window_pass_op(tt_rt_window *w, const tt_rt_wop *op, bool ir) {
    const tt_rt_arg *args = w->op_args + op->first_arg;
    const tt_rt_tensor *results = w->op_res + op->first_res;
    int32_t n_args = op->n_args, n_results = op->n_res;
    tt_ir_value stack_vals[16], *vals = stack_vals, stack_outs[8], *outs = stack_outs;
    tt_status st = TT_OK;
    if (ir && ((n_args > 16 && !(vals = malloc(sizeof *vals * (size_t)n_args))) ||
               (n_results > 8 && !(outs = malloc(sizeof *outs * (size_t)n_results)))))
        st = tt_rt_oom("an op in a window");
    if (!ir) {
        uint64_t head[2] = {(uint64_t)(uintptr_t)op->p, (uint64_t)(uint32_t)n_args << 32 | (uint32_t)n_results};
        st = trace_push(w, 2, head);
    }
    for (int32_t i = 0; st == TT_OK && i < n_args; i++) {
        if (args[i].kind == TT_RT_ARG_TENSOR) {
            int32_t slot = 0;
            bool is_new = false;
            tt_ir_value v = TT_IR_NONE;
            st = arg_value(w, &args[i].tensor, ir, &slot, &is_new, &v);
            if (st == TT_OK && ir) vals[i] = v;
            if (st == TT_OK && !ir) st = trace_tensor(w, slot, is_new, &args[i].tensor);
        } else {
            if (ir) vals[i] = tt_ir_scalar_param(w->b, op->p->types[op->p->params[i]].dtype);
            st = add_arg(w, &args[i]);
            uint64_t kind = (uint64_t)1 << 60 | (uint64_t)args[i].kind;
            if (st == TT_OK && !ir) st = trace_push(w, 1, &kind);
        }
    }
    if (st == TT_OK && ir && (st = tt_ir_builder_status(w->b)) == TT_OK)
        st = tt_ir_builder_inline(w->b, op->p, vals, outs);
    for (int32_t j = 0; st == TT_OK && j < n_results; j++) {
        const tt_rt_tensor *t = &results[j];
        bool is_new;
        tt_rt_wslot *sl = slot_get(w, t->storage, t->dtype, &is_new);
        if (!sl) {
            st = tt_rt_oom("a window slot");
            break;
        }
        if (!ir) st = trace_tensor(w, (int32_t)(sl - w->slots), is_new, t);
        if (tt_ir_view_is_whole(sl->n, t->offset, t->rank, t->dims, t->strides)) {
            sl->has_flat = true;
            if (ir) sl->flat = tt_ir_reshape(w->b, outs[j], 1, &sl->n);
        } else {
            if (st == TT_OK) st = slot_flat(w, sl, ir);
            if (st == TT_OK && ir && (st = tt_ir_builder_status(w->b)) == TT_OK) {
                tt_ir_value nv = TT_IR_NONE;
                st = tt_ir_view_write(w->b, sl->flat, t->offset, t->rank, t->dims, t->strides, outs[j], &nv);
                sl->flat = nv;
            }
        }
        sl->written = true;
        if (st == TT_OK && ir) st = tt_ir_builder_status(w->b);
    }
    if (vals != stack_vals) free(vals);
    if (outs != stack_outs) free(outs);
    return st;
}

/* Builds the window's program from its recorded ops (a trace miss): slots start over, parameters are added again
 * in the order recording added them. */
tt_status tt_rt_window_build(tt_rt_window *w) {
    int32_t n_args = w->n_args, n_ops = atomic_load(&w->n_ops);
    w->n_args = w->n_views = 0;
    for (int32_t i = 0; i < w->n_slots; i++) {
        tt_rt_wslot *sl = &w->slots[i];
        sl->has_flat = sl->written = false;
        sl->flat = TT_IR_NONE;
        sl->views = -1;
    }
    tt_ir_builder_reset(w->b);
    tt_status st = TT_OK;
    for (int32_t k = 0; st == TT_OK && k < n_ops; k++) {
        tt_ir_builder_set_origin(w->b, k); /* an error in these nodes names this op */
        st = tt_rt_window_pass_op(w, &w->ops[k], true);
    }
    tt_ir_builder_set_origin(w->b, -1); /* views and results written at the cut belong to no op */
    if (st == TT_OK && w->n_args != n_args)
        st = tt_error(TT_STATUS_INTERNAL, "window: %d parameters built, %d recorded", (int)w->n_args, (int)n_args);
    return st;
}

/* Can the window take this view of its storage (as an argument, or written as a result)? */
bool tt_rt_window_view_fits(tt_rt_window *w, const tt_rt_tensor *t, bool write) {
    tt_rt_wslot *sl = slot_find(w, t->storage);
    if (sl && sl->dtype != t->dtype) return false; /* the same bytes as two dtypes: not expressible yet */
    int64_t n = (int64_t)(t->storage->nbytes / tt_dtype_size(t->dtype));
    bool has_buffer = sl ? sl->had_buffer : tt_rt_storage_has_buffer(t->storage);
    /* boxes become view ops, other views gathers / scatters: rank 8 leaves no room for their index dim */
    return t->rank < TT_MAX_RANK || tt_ir_view_expressible(n, t->offset, t->rank, t->dims, t->strides, write) ||
           (!write && (!sl || !sl->has_flat) && tt_rt_g.driver_strided && has_buffer);
}
