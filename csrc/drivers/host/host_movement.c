/* host_movement.c — shape and data movement ops as strided copies: broadcast_in_dim, reshape, transpose, slice,
 * dynamic_slice, dynamic_update_slice, concatenate, pad (negative low/high crop, interior), reverse. */
#include "host_internal.h"

#include <string.h>

/* A start index operand (any integer dtype, 0-d), clamped to [0, hi]. */
static int64_t start_index(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, int i, int64_t hi) {
    int64_t v;
    tt_host_load_i64(tt_host_in_type(p, n, i)->dtype, tt_host_in(p, n, vals, i), 1, &v);
    if (v < 0) v = 0;
    if (v > hi) v = hi;
    return v;
}

static tt_status pad_op(const tt_ir_program *p, const tt_ir_node *n, void *const *vals) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0), *ot = &p->types[n->outputs[0]];
    size_t es = tt_dtype_size(ot->dtype);
    char *out = vals[n->outputs[0]];
    tt_host_fill(es, out, tt_host_numel(ot), tt_host_in(p, n, vals, 1));
    int64_t xs[TT_MAX_RANK], os[TT_MAX_RANK], dims[TT_MAX_RANK], dstr[TT_MAX_RANK], sstr[TT_MAX_RANK];
    tt_host_contiguous_strides(xt->rank, xt->dims, xs);
    tt_host_contiguous_strides(ot->rank, ot->dims, os);
    int64_t doff = 0, soff = 0;
    for (int32_t d = 0; d < xt->rank; d++) {
        int64_t lo = n->attrs.pad.low.v[d], step = n->attrs.pad.interior.v[d] + 1;
        if (step < 1) return tt_error(TT_STATUS_INVALID_ARGUMENT, "host pad: negative interior padding");
        /* Input index i lands at lo + i*step; keep the i that land inside the result. */
        int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
        int64_t room = ot->dims[d] - 1 - lo;
        int64_t last = room < 0 ? -1 : room / step;
        if (last > xt->dims[d] - 1) last = xt->dims[d] - 1;
        if (last < first) return TT_OK; /* everything cropped: all padding */
        dims[d] = last - first + 1;
        doff += (lo + first * step) * os[d];
        dstr[d] = step * os[d];
        soff += first * xs[d];
        sstr[d] = xs[d];
    }
    tt_host_strided_copy(es, xt->rank, dims, out, doff, dstr, tt_host_in(p, n, vals, 0), soff, sstr);
    return TT_OK;
}

tt_status tt_host_movement(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const tt_ir_type *xt = tt_host_in_type(p, n, 0), *ot = &p->types[n->outputs[0]];
    size_t es = tt_dtype_size(ot->dtype);
    const void *x = tt_host_in(p, n, vals, 0);
    void *out = vals[n->outputs[0]];
    int64_t xs[TT_MAX_RANK], os[TT_MAX_RANK], sstr[TT_MAX_RANK];
    tt_host_contiguous_strides(xt->rank, xt->dims, xs);
    tt_host_contiguous_strides(ot->rank, ot->dims, os);
    int64_t soff = 0;
    switch (n->op) {
    case TT_OP_RESHAPE:
        memcpy(out, x, (size_t)tt_host_numel(ot) * es);
        return TT_OK;
    case TT_OP_BROADCAST_IN_DIM:
        for (int32_t d = 0; d < ot->rank; d++) sstr[d] = 0;
        for (int32_t i = 0; i < xt->rank; i++) {
            int64_t d = n->attrs.broadcast.dims.v[i];
            if (d < 0 || d >= ot->rank) return tt_error(TT_STATUS_INTERNAL, "host broadcast: bad dims");
            sstr[d] = xt->dims[i] == 1 ? 0 : xs[i];
        }
        break;
    case TT_OP_TRANSPOSE:
        for (int32_t d = 0; d < ot->rank; d++) sstr[d] = xs[n->attrs.transpose.perm.v[d]];
        break;
    case TT_OP_SLICE:
        for (int32_t d = 0; d < ot->rank; d++) {
            int64_t step = n->attrs.slice.stride.v[d] ? n->attrs.slice.stride.v[d] : 1;
            soff += n->attrs.slice.start.v[d] * xs[d];
            sstr[d] = step * xs[d];
        }
        break;
    case TT_OP_DYNAMIC_SLICE:
        for (int32_t d = 0; d < ot->rank; d++) {
            soff += start_index(p, n, vals, 1 + d, xt->dims[d] - ot->dims[d]) * xs[d];
            sstr[d] = xs[d];
        }
        break;
    case TT_OP_REVERSE:
        for (int32_t d = 0; d < ot->rank; d++) sstr[d] = xs[d];
        for (int64_t i = 0; i < n->attrs.reverse.dims.n; i++) {
            int64_t d = n->attrs.reverse.dims.v[i];
            soff += (xt->dims[d] - 1) * xs[d];
            sstr[d] = -xs[d];
        }
        break;
    case TT_OP_DYNAMIC_UPDATE_SLICE: {
        const tt_ir_type *ut = tt_host_in_type(p, n, 1);
        int64_t us[TT_MAX_RANK], doff = 0;
        memcpy(out, x, (size_t)tt_host_numel(ot) * es);
        tt_host_contiguous_strides(ut->rank, ut->dims, us);
        for (int32_t d = 0; d < ot->rank; d++) doff += start_index(p, n, vals, 2 + d, ot->dims[d] - ut->dims[d]) * os[d];
        tt_host_strided_copy(es, ut->rank, ut->dims, out, doff, os, tt_host_in(p, n, vals, 1), 0, us);
        return TT_OK;
    }
    case TT_OP_CONCATENATE: {
        int64_t dim = n->attrs.concatenate.dim, at = 0;
        for (int32_t k = 0; k < n->n_inputs; k++) {
            const tt_ir_type *t = tt_host_in_type(p, n, k);
            int64_t ts[TT_MAX_RANK];
            tt_host_contiguous_strides(t->rank, t->dims, ts);
            tt_host_strided_copy(es, t->rank, t->dims, out, at * os[dim], os, tt_host_in(p, n, vals, k), 0, ts);
            at += t->dims[dim];
        }
        return TT_OK;
    }
    case TT_OP_PAD:
        return pad_op(p, n, vals);
    default:
        return tt_error(TT_STATUS_INTERNAL, "host movement: unexpected op %s", tt_ir_op_name(n->op));
    }
    tt_host_strided_copy(es, ot->rank, ot->dims, out, 0, os, x, soff, sstr);
    return TT_OK;
}
