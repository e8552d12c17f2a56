/* search.c — lowerings that compare every element with a list: searchsorted, bucketize, isin, masked_scatter
 * (whose "n-th true element takes source[n]" is a cumulative sum and a gather), and embedding_bag (bags found by
 * comparing positions with offsets, reduced with scatters), segment_reduce (the same way), embedding_renorm,
 * and the embedding_bag backward ops.
 *
 * searchsorted / bucketize count the boundaries on the "before" side of each value instead of a binary search:
 * for a sorted sequence the predicate is monotone, so the count is the binary search's answer (PyTorch's
 * predicates are used as is, so NaN values land where PyTorch puts them). The [values x boundaries] comparison
 * is materialised, so very large products fall back. */
#include "tt_lower.h"

#include <math.h>
#include <string.h>

#define SR_MAX_PAIRS ((int64_t)1 << 26) /* values x boundaries compared at once */

/* PyTorch's result type of two TENSOR-or-SCALAR arguments. */
static tt_dtype sr_common(tt_lower_ctx *ctx, const tt_arg *a, const tt_arg *c) {
    tt_arg two[2] = {*a, *c};
    return tt_lower_result_type_ctx(ctx, two, 2, NULL);
}

/* Counts, for each value, the boundaries b of its row with !(b >= v) (left) or !(b > v) (right).
 * seq: [S] or [B.., S]; vals: any shape (for a 1-d seq) or [B.., V]. Result i64 or i32, vals' shape. */
static tt_status sr_search(tt_lower_ctx *ctx, tt_ir_value seq, const tt_arg *val_arg, bool right, bool out_int32,
                           tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type st = tt_lower_type_copy(ctx, seq);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    tt_arg seq_arg;
    memset(&seq_arg, 0, sizeof seq_arg);
    seq_arg.kind = TT_ARG_TENSOR;
    seq_arg.value = seq;
    tt_dtype dt = sr_common(ctx, &seq_arg, val_arg);
    if (st.dtype == TT_BOOL || dt == TT_BOOL || st.rank < 1) return tt_lower_unsupported(ctx, "searchsorted");
    tt_ir_value v = tt_lower_arg(ctx, val_arg, dt);
    tt_ir_type vt = tt_lower_type_copy(ctx, v);
    int64_t S = st.dims[st.rank - 1];
    if (st.rank > 1) {
        if (vt.rank != st.rank) return tt_lower_unsupported(ctx, "searchsorted shapes");
        for (int32_t d = 0; d < st.rank - 1; d++)
            if (vt.dims[d] != st.dims[d]) return tt_lower_unsupported(ctx, "searchsorted shapes");
    }
    if (vt.rank + 1 > TT_MAX_RANK || tt_numel(vt.rank, vt.dims) * (S > 0 ? S : 1) > SR_MAX_PAIRS)
        return tt_lower_unsupported(ctx, "searchsorted size");
    tt_dtype odt = out_int32 ? TT_I32 : TT_I64;
    if (S == 0 || tt_numel(vt.rank, vt.dims) == 0) {
        outs[0] = tt_lower_full(ctx, odt, vt.rank, vt.dims, 0.0);
        return tt_ir_builder_status(b);
    }
    int32_t r = vt.rank + 1;
    int64_t dims[TT_MAX_RANK], vmap[TT_MAX_RANK], smap[TT_MAX_RANK];
    memcpy(dims, vt.dims, sizeof(int64_t) * (size_t)vt.rank);
    dims[vt.rank] = S;
    for (int32_t d = 0; d < vt.rank; d++) vmap[d] = d;
    if (st.rank == 1) {
        smap[0] = vt.rank;
    } else {
        for (int32_t d = 0; d < st.rank - 1; d++) smap[d] = d;
        smap[st.rank - 1] = vt.rank;
    }
    tt_ir_value sb = tt_ir_broadcast_in_dim(b, tt_ir_convert(b, seq, dt), r, dims, smap);
    tt_ir_value vb = tt_ir_broadcast_in_dim(b, v, r, dims, vmap);
    tt_ir_value before = tt_ir_unary(b, TT_OP_NOT, tt_ir_compare(b, right ? TT_CMP_GT : TT_CMP_GE, sb, vb));
    int64_t last = r - 1;
    tt_ir_value cnt = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_convert(b, before, TT_I64), 1, &last);
    outs[0] = tt_ir_convert(b, cnt, odt);
    return tt_ir_builder_status(b);
}

/* x[..., idx[..., j]] along the last dim (idx: int, x's shape): the sorter of searchsorted. */
static tt_ir_value sr_take_along_last(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value idx) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    int32_t r = t.rank;
    if (tt_numel(r, t.dims) == 0) return x;
    int64_t s1[TT_MAX_RANK + 1];
    memcpy(s1, t.dims, sizeof(int64_t) * (size_t)r);
    s1[r] = 1;
    tt_ir_value parts[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
        tt_ir_value v = d == r - 1 ? tt_ir_convert(b, idx, TT_I64) : tt_ir_iota(b, TT_I64, r, t.dims, d);
        parts[d] = tt_ir_reshape(b, v, r + 1, s1);
    }
    tt_ir_value coords = r == 1 ? parts[0] : tt_ir_concatenate(b, r, parts, r);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.collapsed_slice_dims.n = r;
    a.gather.start_index_map.n = r;
    a.gather.slice_sizes.n = r;
    for (int32_t d = 0; d < r; d++) {
        a.gather.collapsed_slice_dims.v[d] = d;
        a.gather.start_index_map.v[d] = d;
        a.gather.slice_sizes.v[d] = 1;
    }
    a.gather.index_vector_dim = r;
    a.gather.check_bounds = true;
    return tt_ir_gather(b, x, coords, &a);
}

/* right from the `right` flag and the `side` string; PyTorch rejects a contradiction. */
static bool sr_side(tt_lower_ctx *ctx, const tt_arg *right, const tt_arg *side, bool *out) {
    *out = right->kind == TT_ARG_BOOL && right->b;
    if (side && side->kind == TT_ARG_STRING && side->s) {
        bool r = strcmp(side->s, "right") == 0;
        if (!r && strcmp(side->s, "left") != 0) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "torch.searchsorted(): side can only be 'left' or 'right' but got %s", side->s);
            return false;
        }
        if (*out && !r) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "torch.searchsorted(): side and right can't be set to opposites, got side of left "
                               "while right was True");
            return false;
        }
        *out = r;
    }
    return true;
}

/* searchsorted.Tensor / .Scalar(sorted_sequence, self, *, out_int32, right, side, sorter) */
static tt_status tt_lower_searchsorted(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    bool right;
    if (!sr_side(ctx, &args[3], nargs > 4 ? &args[4] : NULL, &right)) return tt_ir_builder_status(ctx->b);
    tt_ir_value seq = args[0].value;
    if (nargs > 5 && args[5].kind == TT_ARG_TENSOR) {
        tt_ir_type st = tt_lower_type_copy(ctx, seq), ot = tt_lower_type_copy(ctx, args[5].value);
        if (ot.rank != st.rank || memcmp(ot.dims, st.dims, sizeof(int64_t) * (size_t)st.rank) != 0 ||
            (ot.dtype != TT_I64 && ot.dtype != TT_I32))
            return tt_lower_unsupported(ctx, "searchsorted sorter");
        seq = sr_take_along_last(ctx, seq, args[5].value);
    }
    return sr_search(ctx, seq, &args[1], right, args[2].kind == TT_ARG_BOOL && args[2].b, outs);
}

/* bucketize.Tensor / .Scalar(self, boundaries, *, out_int32, right): boundaries must be 1-d. */
static tt_status tt_lower_bucketize(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    (void)nouts;
    if (tt_lower_type_copy(ctx, args[1].value).rank != 1) return tt_lower_unsupported(ctx, "bucketize");
    return sr_search(ctx, args[1].value, &args[0], args[3].kind == TT_ARG_BOOL && args[3].b,
                     args[2].kind == TT_ARG_BOOL && args[2].b, outs);
}

/* isin(elements, test_elements, *, assume_unique, invert) for any mix of tensor and scalar: any(e == t). */
static tt_status tt_lower_isin(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    bool invert = nargs > 3 && args[3].kind == TT_ARG_BOOL && args[3].b;
    tt_dtype dt = sr_common(ctx, &args[0], &args[1]);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (dt == TT_BOOL) return tt_lower_unsupported(ctx, "isin"); /* PyTorch has no bool kernel either */
    tt_ir_value e = tt_lower_arg(ctx, &args[0], dt);
    tt_ir_value t = tt_lower_arg(ctx, &args[1], dt);
    tt_ir_type et = tt_lower_type_copy(ctx, e), tt = tt_lower_type_copy(ctx, t);
    int64_t m = tt_numel(tt.rank, tt.dims);
    if (et.rank + 1 > TT_MAX_RANK || tt_numel(et.rank, et.dims) * (m > 0 ? m : 1) > SR_MAX_PAIRS)
        return tt_lower_unsupported(ctx, "isin size");
    tt_ir_value hit;
    if (m == 0 || tt_numel(et.rank, et.dims) == 0) {
        hit = tt_lower_full(ctx, TT_BOOL, et.rank, et.dims, 0.0);
    } else {
        int32_t r = et.rank + 1;
        int64_t dims[TT_MAX_RANK], emap[TT_MAX_RANK], tmap = et.rank;
        memcpy(dims, et.dims, sizeof(int64_t) * (size_t)et.rank);
        dims[et.rank] = m;
        for (int32_t d = 0; d < et.rank; d++) emap[d] = d;
        tt_ir_value tf = tt_ir_broadcast_in_dim(b, tt_ir_reshape(b, t, 1, &m), r, dims, &tmap);
        tt_ir_value eq = tt_ir_compare(b, TT_CMP_EQ, tt_ir_broadcast_in_dim(b, e, r, dims, emap), tf);
        int64_t last = r - 1;
        hit = tt_ir_reduce(b, TT_REDUCE_OR, eq, 1, &last);
    }
    outs[0] = invert ? tt_ir_unary(b, TT_OP_NOT, hit) : hit;
    return tt_ir_builder_status(b);
}

/* masked_scatter(self, mask, source): the k-th true position (row-major over the broadcast shape) takes
 * source.flatten()[k]. Too short a source is an index error at run time (PyTorch: a RuntimeError). */
static tt_status tt_lower_masked_scatter(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), mt = tt_lower_type_copy(ctx, args[1].value), st = tt_lower_type_copy(ctx, args[2].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (mt.dtype != TT_BOOL || st.dtype != xt.dtype) return tt_lower_unsupported(ctx, "masked_scatter");
    tt_ir_value v[2] = {args[0].value, args[1].value};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(b);
    tt_ir_type t = tt_lower_type_copy(ctx, v[0]);
    int64_t n = tt_numel(t.rank, t.dims), ns = tt_numel(st.rank, st.dims);
    if (n == 0 || ns == 0) { /* nothing to place (a true mask with an empty source: PyTorch's error) */
        if (ns == 0 && n > 0) return tt_lower_unsupported(ctx, "masked_scatter with an empty source");
        outs[0] = v[0];
        return tt_ir_builder_status(b);
    }
    tt_ir_value mflat = tt_ir_reshape(b, v[1], 1, &n);
    tt_ir_value pos = tt_ir_cumulative(b, TT_REDUCE_ADD, tt_ir_convert(b, mflat, TT_I64), 0, false);
    pos = tt_ir_binary(b, TT_OP_SUBTRACT, pos, tt_lower_full(ctx, TT_I64, 1, &n, 1.0));
    pos = tt_ir_select(b, mflat, pos, tt_lower_full(ctx, TT_I64, 1, &n, 0.0)); /* unused lanes read element 0 */
    int64_t id[2] = {n, 1};
    tt_ir_attrs a = tt_lower_gather_elements_attrs(1, true);
    tt_ir_value src = tt_ir_gather(b, tt_ir_reshape(b, args[2].value, 1, &ns), tt_ir_reshape(b, pos, 2, id), &a);
    outs[0] = tt_ir_select(b, v[1], tt_ir_reshape(b, src, t.rank, t.dims), v[0]);
    return tt_ir_builder_status(b);
}

/* ---- embedding_bag (sum / mean / max), with the CPU kernel's auxiliary outputs ----
 * The bag of element i is the number of offsets[1..B) <= i (the last bag runs to the end of indices, even with
 * include_last_offset, as on the CPU). Rows equal to padding_idx count for nothing. Auxiliary results as PyTorch
 * CPU returns them (its backward reads them): offset2bag is empty for sum without padding_idx (its fast path),
 * else the bag of every index; bag_size is 0 for sum, else the bag's non-padding count; max_indices is 0 for sum,
 * bag_size for mean, and for max the weight row of the first maximum per feature (0 in empty bags). Under
 * include_last_offset the sum/mean path without padding_idx ends the last bag's values at the last offset (its
 * count still runs to the end); the others run to the end. */

/* A point scatter of upd [N, D] into operand [B, D] at rows bag [N] (i64). */
static tt_ir_value eb_scatter_rows(tt_lower_ctx *ctx, tt_ir_value operand, tt_ir_value bag, tt_ir_value upd,
                                   tt_ir_reduce_kind kind) {
    tt_ir_type ut = tt_lower_type_copy(ctx, upd);
    int64_t id[2] = {ut.dims[0], 1};
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.scatter.update_window_dims.n = ut.rank - 1;
    for (int32_t d = 1; d < ut.rank; d++) a.scatter.update_window_dims.v[d - 1] = d;
    a.scatter.inserted_window_dims.n = 1;
    a.scatter.scatter_dims_to_operand_dims.n = 1;
    a.scatter.index_vector_dim = 1;
    a.scatter.kind = kind;
    return tt_ir_scatter(ctx->b, operand, tt_ir_reshape(ctx->b, bag, 2, id), upd, &a);
}

/* Rows idx [N] (i64) of x [R, D..] (PyTorch: an index error when out of range). */
static tt_ir_value eb_take_rows(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value idx) {
    tt_ir_type xt = tt_lower_type_copy(ctx, x), it = tt_lower_type_copy(ctx, idx);
    int64_t id[2] = {it.dims[0], 1};
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.offset_dims.n = xt.rank - 1;
    for (int32_t d = 1; d < xt.rank; d++) a.gather.offset_dims.v[d - 1] = d;
    a.gather.collapsed_slice_dims.n = 1;
    a.gather.start_index_map.n = 1;
    a.gather.slice_sizes.n = xt.rank;
    a.gather.slice_sizes.v[0] = 1;
    for (int32_t d = 1; d < xt.rank; d++) a.gather.slice_sizes.v[d] = xt.dims[d];
    a.gather.index_vector_dim = 1;
    a.gather.check_bounds = true;
    return tt_ir_gather(ctx->b, x, tt_ir_reshape(ctx->b, idx, 2, id), &a);
}

/* _embedding_bag(_forward_only)(weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights,
 * include_last_offset, padding_idx) -> (output, offset2bag, bag_size, max_indices) */
static tt_status eb_lower(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts,
                          bool forward_only) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type wt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value), ot = tt_lower_type_copy(ctx, args[2].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    int64_t mode = args[4].i;
    bool has_psw = nargs > 6 && args[6].kind == TT_ARG_TENSOR;
    bool incl_last = nargs > 7 && args[7].kind == TT_ARG_BOOL && args[7].b;
    int64_t pad = nargs > 8 && args[8].kind == TT_ARG_INT ? args[8].i : -1;
    if (wt.rank != 2 || it.rank != 1 || ot.rank != 1 || !tt_dtype_is_float(wt.dtype) || it.dtype != ot.dtype ||
        (it.dtype != TT_I64 && it.dtype != TT_I32) || mode < 0 || mode > 2 || (has_psw && mode != 0) || nouts < 1)
        return tt_lower_unsupported(ctx, "embedding_bag");
    int64_t N = it.dims[0], D = wt.dims[1], nb = ot.dims[0] - (incl_last ? 1 : 0);
    if (nb < 1 || N < 1 || D < 1 || wt.dims[0] < 1) return tt_lower_unsupported(ctx, "embedding_bag sizes");
    /* (padding_idx arrives normalised: negative means none) */
    tt_dtype idt = it.dtype, cdt = tt_lower_opmath(wt.dtype);
    tt_ir_value idx = tt_ir_convert(b, args[1].value, TT_I64);
    /* bag of every element: count of offsets[1..nb) <= i */
    tt_ir_value bag;
    if (nb == 1) {
        bag = tt_lower_full(ctx, TT_I64, 1, &N, 0.0);
    } else {
        int64_t st = 1, lim = nb, dims[2] = {N, nb - 1}, m0 = 0, m1 = 1;
        tt_ir_value offs = tt_ir_slice(b, tt_ir_convert(b, args[2].value, TT_I64), &st, &lim, NULL);
        tt_ir_value le = tt_ir_compare(b, TT_CMP_LE, tt_ir_broadcast_in_dim(b, offs, 2, dims, &m1),
                                       tt_ir_iota(b, TT_I64, 2, dims, m0));
        bag = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_convert(b, le, TT_I64), 1, &m1);
    }
    tt_ir_value keep = pad >= 0 ? tt_ir_compare(b, TT_CMP_NE, idx, tt_lower_full(ctx, TT_I64, 1, &N, (double)pad))
                                : tt_lower_full(ctx, TT_BOOL, 1, &N, 1.0);
    bool fast = mode == 0 && pad < 0; /* the CPU's sum fast path (offset2bag left empty) */
    tt_ir_value keepv = keep;         /* elements whose rows enter the values */
    if (mode <= 1 && pad < 0 && incl_last) { /* this path alone ends the last bag's values at the last offset */
        int64_t st = nb, lim = nb + 1;
        tt_ir_value lastoff = tt_ir_reshape(b, tt_ir_slice(b, tt_ir_convert(b, args[2].value, TT_I64), &st, &lim, NULL), 0, NULL);
        tt_ir_value before = tt_ir_compare(b, TT_CMP_LT, tt_ir_iota(b, TT_I64, 1, &N, 0),
                                           tt_ir_broadcast_in_dim(b, lastoff, 1, &N, NULL));
        keepv = tt_ir_binary(b, TT_OP_AND, keep, before);
    }
    int64_t nd[2] = {N, D}, bd[2] = {nb, D}, m0 = 0;
    tt_ir_value keep2 = tt_ir_broadcast_in_dim(b, keepv, 2, nd, &m0);
    tt_ir_value rows = tt_ir_convert(b, eb_take_rows(ctx, args[0].value, idx), cdt);
    tt_ir_value count = eb_scatter_rows(ctx, tt_lower_full(ctx, TT_I64, 1, &nb, 0.0), bag, tt_ir_convert(b, keep, TT_I64),
                                        TT_REDUCE_ADD);
    tt_ir_value out, maxidx = TT_IR_NONE;
    if (mode == 2) {
        tt_ir_value ninf = tt_lower_full(ctx, cdt, 2, nd, -INFINITY);
        tt_ir_value mx = eb_scatter_rows(ctx, tt_lower_full(ctx, cdt, 2, bd, -INFINITY), bag,
                                         tt_ir_select(b, keep2, rows, ninf), TT_REDUCE_MAX);
        /* first element reaching its bag's max, per feature */
        tt_ir_value back = eb_take_rows(ctx, mx, bag);
        tt_ir_value hit = tt_ir_binary(b, TT_OP_AND, keep2, tt_ir_compare(b, TT_CMP_EQ, rows, back));
        tt_ir_value pos = tt_ir_select(b, hit, tt_ir_iota(b, TT_I64, 2, nd, 0), tt_lower_full(ctx, TT_I64, 2, nd, (double)N));
        tt_ir_value first = eb_scatter_rows(ctx, tt_lower_full(ctx, TT_I64, 2, bd, (double)N), bag, pos, TT_REDUCE_MIN);
        tt_ir_value empty = tt_ir_compare(b, TT_CMP_EQ, first, tt_lower_full(ctx, TT_I64, 2, bd, (double)N));
        int64_t one = 1;
        tt_ir_value idx_ext = tt_ir_concatenate(b, 2, (tt_ir_value[2]){idx, tt_lower_full(ctx, TT_I64, 1, &one, 0.0)}, 0);
        int64_t fl = nb * D;
        tt_ir_value mi = eb_take_rows(ctx, idx_ext, tt_ir_reshape(b, first, 1, &fl));
        maxidx = tt_ir_select(b, empty, tt_lower_full(ctx, TT_I64, 2, bd, 0.0), tt_ir_reshape(b, mi, 2, bd));
        out = tt_ir_select(b, empty, tt_lower_full(ctx, cdt, 2, bd, 0.0), mx);
    } else {
        tt_ir_value r = tt_ir_select(b, keep2, rows, tt_lower_full(ctx, cdt, 2, nd, 0.0));
        if (has_psw) {
            tt_ir_type pt = tt_lower_type_copy(ctx, args[6].value);
            if (pt.rank != 1 || pt.dims[0] != N) return tt_lower_unsupported(ctx, "embedding_bag per_sample_weights");
            r = tt_ir_binary(b, TT_OP_MULTIPLY, r,
                             tt_ir_broadcast_in_dim(b, tt_ir_convert(b, args[6].value, cdt), 2, nd, &m0));
        }
        out = eb_scatter_rows(ctx, tt_lower_full(ctx, cdt, 2, bd, 0.0), bag, r, TT_REDUCE_ADD);
        if (mode == 1) {
            tt_ir_value c = tt_ir_broadcast_in_dim(b, tt_ir_convert(b, count, cdt), 2, bd, &m0);
            tt_ir_value z = tt_ir_compare(b, TT_CMP_EQ, c, tt_lower_full(ctx, cdt, 2, bd, 0.0));
            out = tt_ir_select(b, z, tt_lower_full(ctx, cdt, 2, bd, 0.0), tt_ir_binary(b, TT_OP_DIVIDE, out, c));
        }
    }
    outs[0] = tt_ir_convert(b, out, wt.dtype);
    int64_t zero = 0;
    if (nouts > 1) outs[1] = fast ? tt_lower_full(ctx, idt, 1, &zero, 0.0) : tt_ir_convert(b, bag, idt);
    int64_t no = forward_only ? ot.dims[0] : nb; /* sum's unused bag_size: offsets-sized in forward_only */
    tt_ir_value bag_size = mode == 0 ? tt_lower_full(ctx, idt, 1, &no, 0.0) : tt_ir_convert(b, count, idt);
    if (nouts > 2) outs[2] = bag_size;
    if (nouts > 3) outs[3] = mode == 2 ? tt_ir_convert(b, maxidx, idt) : bag_size;
    return tt_ir_builder_status(b);
}

/* embedding_renorm(self [R, D], indices, max_norm, norm_type): rows named by indices whose norm exceeds max_norm
 * are scaled by max_norm / (norm + 1e-7); the others are left alone. */
static tt_status tt_lower_embedding_renorm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                           int32_t nouts) {
    (void)nargs;
    tt_ir_builder *b = ctx->b;
    tt_ir_type wt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    tt_lower_fn norm = tt_lower_find("aten::linalg_vector_norm");
    if (wt.rank != 2 || !tt_dtype_is_float(wt.dtype) || (it.dtype != TT_I64 && it.dtype != TT_I32) || !norm)
        return tt_lower_unsupported(ctx, "embedding_renorm");
    int64_t R = wt.dims[0], D = wt.dims[1], n = tt_numel(it.rank, it.dims);
    if (R == 0 || n == 0) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    tt_arg na[5];
    memset(na, 0, sizeof na);
    int64_t one_dim = 1;
    na[0] = args[0];
    na[1].kind = TT_ARG_SCALAR;
    na[1].dtype = TT_F64;
    na[1].f = args[3].f;
    na[2].kind = TT_ARG_INTS;
    na[2].n = 1;
    na[2].ints = &one_dim;
    na[3].kind = TT_ARG_BOOL;
    na[4].kind = TT_ARG_NONE;
    tt_ir_value nv = TT_IR_NONE;
    tt_status st = norm(ctx, na, 5, &nv, 1);
    if (st != TT_OK) return st;
    tt_dtype cdt = tt_lower_opmath(wt.dtype);
    nv = tt_ir_convert(b, nv, cdt); /* [R] */
    /* rows named by indices: scatter ones (an out-of-range index is PyTorch's error too) */
    tt_ir_value idx = tt_ir_reshape(b, tt_ir_convert(b, args[1].value, TT_I64), 1, &n);
    int64_t id[2] = {n, 1};
    tt_ir_attrs a = tt_lower_scatter_elements_attrs(1, TT_REDUCE_MAX, true);
    tt_ir_value named = tt_ir_scatter(b, tt_lower_full(ctx, TT_I64, 1, &R, 0.0), tt_ir_reshape(b, idx, 2, id),
                                      tt_lower_full(ctx, TT_I64, 1, &n, 1.0), &a);
    tt_ir_value maxn = tt_lower_scalar_param(ctx, cdt, 0, args[2].f);
    tt_ir_value maxb = tt_ir_broadcast_in_dim(b, maxn, 1, &R, NULL);
    tt_ir_value big = tt_ir_binary(b, TT_OP_AND, tt_ir_compare(b, TT_CMP_NE, named, tt_lower_full(ctx, TT_I64, 1, &R, 0.0)),
                                   tt_ir_compare(b, TT_CMP_GT, nv, maxb));
    tt_ir_value scale = tt_ir_binary(b, TT_OP_DIVIDE, maxb, tt_ir_binary(b, TT_OP_ADD, nv, tt_lower_full(ctx, cdt, 1, &R, 1e-7)));
    scale = tt_ir_select(b, big, scale, tt_lower_full(ctx, cdt, 1, &R, 1.0));
    int64_t wd[2] = {R, D}, m0 = 0;
    tt_ir_value w = tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_convert(b, args[0].value, cdt), tt_ir_broadcast_in_dim(b, scale, 2, wd, &m0));
    outs[0] = tt_ir_convert(b, w, wt.dtype);
    (void)nouts;
    return tt_ir_builder_status(b);
}

/* segment_reduce(data, reduce, *, lengths, indices, offsets, axis, unsafe, initial): lengths / offsets of shape
 * [B.., S(+1)] segment data's dim axis = len(B) (data [B.., N, R..]). Everything is flattened to rows
 * [prod(B) * N, prod(R)]; row (b, i) goes to segment b * S + seg(b, i) with a scatter that starts from `initial`
 * (or the reduction's identity). mean divides by the length; an empty segment's mean is `initial` (else NaN). */
static tt_status tt_lower_segment_reduce(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type dt = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    const char *red = args[1].kind == TT_ARG_STRING ? args[1].s : NULL;
    bool has_len = nargs > 2 && args[2].kind == TT_ARG_TENSOR, has_off = nargs > 4 && args[4].kind == TT_ARG_TENSOR;
    bool has_idx = nargs > 3 && args[3].kind == TT_ARG_TENSOR;
    int64_t axis = nargs > 5 && args[5].kind == TT_ARG_INT ? args[5].i : 0;
    bool has_init = nargs > 7 && args[7].kind == TT_ARG_SCALAR;
    if (!red || has_len == has_off || has_idx || dt.rank < 1 || !tt_dtype_is_float(dt.dtype))
        return tt_lower_unsupported(ctx, "segment_reduce");
    tt_ir_reduce_kind kind;
    bool mean = false;
    double ident;
    if (strcmp(red, "sum") == 0) kind = TT_REDUCE_ADD, ident = 0.0;
    else if (strcmp(red, "mean") == 0) kind = TT_REDUCE_ADD, ident = 0.0, mean = true;
    else if (strcmp(red, "prod") == 0) kind = TT_REDUCE_MUL, ident = 1.0;
    else if (strcmp(red, "max") == 0) kind = TT_REDUCE_MAX, ident = -INFINITY;
    else if (strcmp(red, "min") == 0) kind = TT_REDUCE_MIN, ident = INFINITY;
    else return tt_lower_unsupported(ctx, "segment_reduce reduction");
    tt_ir_value seg_arg = has_len ? args[2].value : args[4].value;
    tt_ir_type st = tt_lower_type_copy(ctx, seg_arg);
    if (st.rank < 1 || !tt_dtype_is_int(st.dtype) || axis != st.rank - 1 || axis >= dt.rank)
        return tt_lower_unsupported(ctx, "segment_reduce lengths");
    int64_t Bp = 1, R = 1, N = dt.dims[axis], L = st.dims[axis];
    for (int32_t d = 0; d < axis; d++) {
        if (st.dims[d] != dt.dims[d]) return tt_lower_unsupported(ctx, "segment_reduce lengths");
        Bp *= dt.dims[d];
    }
    for (int32_t d = (int32_t)axis + 1; d < dt.rank; d++) R *= dt.dims[d];
    int64_t S = has_len ? L : L - 1;
    if (S < 1 || N < 1 || Bp < 1 || R < 1) return tt_lower_unsupported(ctx, "segment_reduce sizes");
    tt_dtype cdt = tt_lower_opmath(dt.dtype);
    /* per batch row: segment starts (exclusive cumsum of lengths, or offsets[..S)) and lengths, as [Bp, S] */
    int64_t bl[2] = {Bp, L};
    tt_ir_value sv = tt_ir_reshape(b, tt_ir_convert(b, seg_arg, TT_I64), 2, bl);
    tt_ir_value starts, lens;
    if (has_len) {
        lens = sv;
        starts = tt_ir_binary(b, TT_OP_SUBTRACT, tt_ir_cumulative(b, TT_REDUCE_ADD, sv, 1, false), sv);
    } else {
        int64_t a0[2] = {0, 0}, a1[2] = {Bp, S}, b0[2] = {0, 1}, b1[2] = {Bp, S + 1};
        starts = tt_ir_slice(b, sv, a0, a1, NULL);
        lens = tt_ir_binary(b, TT_OP_SUBTRACT, tt_ir_slice(b, sv, b0, b1, NULL), starts);
    }
    /* flat segment of row (bb, i): bb * S + number of starts[bb, 1..S) <= i */
    int64_t bn[2] = {Bp, N};
    tt_ir_value seg = tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, 2, bn, 0), tt_lower_full(ctx, TT_I64, 2, bn, (double)S));
    if (S > 1) {
        int64_t c0[2] = {0, 1}, c1[2] = {Bp, S}, dims[3] = {Bp, N, S - 1}, map[2] = {0, 2}, two = 2;
        tt_ir_value later = tt_ir_broadcast_in_dim(b, tt_ir_slice(b, starts, c0, c1, NULL), 3, dims, map);
        tt_ir_value le = tt_ir_compare(b, TT_CMP_LE, later, tt_ir_iota(b, TT_I64, 3, dims, 1));
        seg = tt_ir_binary(b, TT_OP_ADD, seg, tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_convert(b, le, TT_I64), 1, &two));
    }
    {
        /* rows outside [starts[0], starts[S-1] + lens[S-1]) belong to no segment: an out-of-range target, which
         * the scatter skips (unsafe calls with short lengths) */
        int64_t f0[2] = {0, 0}, f1[2] = {Bp, 1}, l0[2] = {0, S - 1}, l1[2] = {Bp, S}, m0 = 0;
        tt_ir_value first = tt_ir_reshape(b, tt_ir_slice(b, starts, f0, f1, NULL), 1, &Bp);
        tt_ir_value end = tt_ir_binary(b, TT_OP_ADD, tt_ir_slice(b, starts, l0, l1, NULL), tt_ir_slice(b, lens, l0, l1, NULL));
        end = tt_ir_reshape(b, end, 1, &Bp);
        tt_ir_value pos = tt_ir_iota(b, TT_I64, 2, bn, 1);
        tt_ir_value in = tt_ir_binary(b, TT_OP_AND,
                                      tt_ir_compare(b, TT_CMP_GE, pos, tt_ir_broadcast_in_dim(b, first, 2, bn, &m0)),
                                      tt_ir_compare(b, TT_CMP_LT, pos, tt_ir_broadcast_in_dim(b, end, 2, bn, &m0)));
        seg = tt_ir_select(b, in, seg, tt_lower_full(ctx, TT_I64, 2, bn, (double)(Bp * S)));
    }
    int64_t rows = Bp * N, nd[2] = {rows, R}, sd[2] = {Bp * S, R}, m0 = 0;
    tt_ir_value data = tt_ir_reshape(b, tt_ir_convert(b, args[0].value, cdt), 2, nd);
    tt_ir_value init = has_init ? tt_lower_arg(ctx, &args[7], cdt) : tt_lower_const(ctx, cdt, ident);
    tt_ir_value acc = eb_scatter_rows(ctx, tt_ir_broadcast_in_dim(b, init, 2, sd, NULL), tt_ir_reshape(b, seg, 1, &rows),
                                      data, kind);
    if (mean) {
        int64_t ns = Bp * S;
        tt_ir_value l = tt_ir_broadcast_in_dim(b, tt_ir_convert(b, tt_ir_reshape(b, lens, 1, &ns), cdt), 2, sd, &m0);
        tt_ir_value empty = tt_ir_compare(b, TT_CMP_EQ, l, tt_lower_like(ctx, l, 0.0));
        tt_ir_value fill = has_init ? tt_ir_broadcast_in_dim(b, init, 2, sd, NULL) : tt_lower_like(ctx, l, NAN);
        acc = tt_ir_select(b, empty, fill, tt_ir_binary(b, TT_OP_DIVIDE, acc, l));
    }
    int64_t od[TT_MAX_RANK];
    memcpy(od, dt.dims, sizeof od);
    od[axis] = S;
    outs[0] = tt_ir_convert(b, tt_ir_reshape(b, acc, dt.rank, od), dt.dtype);
    return tt_ir_builder_status(b);
}

/* Bag of every index position from offsets [B] (no include_last_offset): count of offsets[1..B) <= i. */
static tt_ir_value eb_bags(tt_lower_ctx *ctx, tt_ir_value offsets, int64_t N, int64_t nb) {
    tt_ir_builder *b = ctx->b;
    if (nb == 1) return tt_lower_full(ctx, TT_I64, 1, &N, 0.0);
    int64_t st = 1, lim = nb, dims[2] = {N, nb - 1}, m0 = 0, m1 = 1;
    tt_ir_value offs = tt_ir_slice(b, tt_ir_convert(b, offsets, TT_I64), &st, &lim, NULL);
    tt_ir_value le = tt_ir_compare(b, TT_CMP_LE, tt_ir_broadcast_in_dim(b, offs, 2, dims, &m1), tt_ir_iota(b, TT_I64, 2, dims, m0));
    return tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_convert(b, le, TT_I64), 1, &m1);
}

/* _embedding_bag_backward(grad, indices, offsets, offset2bag, bag_size, maximum_indices, num_weights,
 * scale_grad_by_freq, mode, sparse, per_sample_weights, padding_idx) -> dense grad of weight. sum / mean: each
 * non-padding index adds its bag's grad (times its per-sample weight, / bag size for mean); max: each non-empty bag adds grad[b, d] to the row maximum_indices[b, d] picked. */
static tt_status tt_lower_embedding_bag_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                 tt_ir_value *outs, int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type gt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value), ot = tt_lower_type_copy(ctx, args[2].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    int64_t R = args[6].i, mode = args[8].i;
    bool freq = args[7].kind == TT_ARG_BOOL && args[7].b, sparse = args[9].kind == TT_ARG_BOOL && args[9].b;
    bool has_psw = nargs > 10 && args[10].kind == TT_ARG_TENSOR;
    int64_t pad = nargs > 11 && args[11].kind == TT_ARG_INT ? args[11].i : -1;
    /* scale_grad_by_freq: the CPU kernel divides each index by the count of its sorted neighbour (a quirk we leave
     * to the fallback rather than mimic) */
    if (gt.rank != 2 || it.rank != 1 || ot.rank != 1 || !tt_dtype_is_float(gt.dtype) || sparse || mode < 0 || mode > 2 ||
        freq || (has_psw && mode != 0) || R < 1 || !tt_dtype_is_int(it.dtype))
        return tt_lower_unsupported(ctx, "embedding_bag_backward");
    int64_t nb = gt.dims[0], D = gt.dims[1], N = it.dims[0];
    if (ot.dims[0] != nb || nb < 1 || D < 1) return tt_lower_unsupported(ctx, "embedding_bag_backward sizes");
    tt_dtype cdt = tt_lower_opmath(gt.dtype);
    int64_t rd[2] = {R, D}, m0 = 0;
    tt_ir_value zero = tt_lower_full(ctx, cdt, 2, rd, 0.0);
    tt_ir_value g = tt_ir_convert(b, args[0].value, cdt);
    if (N == 0) {
        outs[0] = tt_ir_convert(b, zero, gt.dtype);
        return tt_ir_builder_status(b);
    }
    if (mode == 2) {
        tt_ir_type mt = tt_lower_type_copy(ctx, args[5].value), bt = tt_lower_type_copy(ctx, args[4].value);
        if (mt.rank != 2 || mt.dims[0] != nb || mt.dims[1] != D || bt.rank != 1 || bt.dims[0] != nb)
            return tt_lower_unsupported(ctx, "embedding_bag_backward max");
        int64_t bd[2] = {nb, D}, three[3] = {nb, D, 1};
        tt_ir_value nonempty = tt_ir_compare(b, TT_CMP_GT, tt_ir_convert(b, args[4].value, TT_I64), tt_lower_full(ctx, TT_I64, 1, &nb, 0.0));
        tt_ir_value gm = tt_ir_select(b, tt_ir_broadcast_in_dim(b, nonempty, 2, bd, &m0), g, tt_lower_full(ctx, cdt, 2, bd, 0.0));
        tt_ir_value coords[2] = {tt_ir_reshape(b, tt_ir_convert(b, args[5].value, TT_I64), 3, three),
                                 tt_ir_iota(b, TT_I64, 3, three, 1)};
        tt_ir_attrs a;
        memset(&a, 0, sizeof a);
        a.scatter.inserted_window_dims.n = 2;
        a.scatter.inserted_window_dims.v[1] = 1;
        a.scatter.scatter_dims_to_operand_dims = a.scatter.inserted_window_dims;
        a.scatter.index_vector_dim = 2;
        a.scatter.kind = TT_REDUCE_ADD;
        a.scatter.check_bounds = true;
        tt_ir_value r = tt_ir_scatter(b, zero, tt_ir_concatenate(b, 2, coords, 2), gm, &a);
        outs[0] = tt_ir_convert(b, r, gt.dtype);
        return tt_ir_builder_status(b);
    }
    tt_ir_value idx = tt_ir_convert(b, args[1].value, TT_I64);
    tt_ir_value bag = eb_bags(ctx, args[2].value, N, nb);
    int64_t nd[2] = {N, D};
    tt_ir_value rows = eb_take_rows(ctx, g, bag); /* [N, D] */
    tt_ir_value scale = tt_lower_full(ctx, cdt, 1, &N, 1.0);
    if (mode == 1) {
        tt_ir_value bs = tt_ir_convert(b, args[4].value, cdt);
        tt_ir_value bsn = eb_take_rows(ctx, bs, bag);
        bsn = tt_ir_binary(b, TT_OP_MAXIMUM, bsn, tt_lower_full(ctx, cdt, 1, &N, 1.0));
        scale = tt_ir_binary(b, TT_OP_DIVIDE, scale, bsn);
    }
    if (has_psw) scale = tt_ir_binary(b, TT_OP_MULTIPLY, scale, tt_ir_convert(b, args[10].value, cdt));
    if (pad >= 0) {
        tt_ir_value keep = tt_ir_compare(b, TT_CMP_NE, idx, tt_lower_full(ctx, TT_I64, 1, &N, (double)pad));
        scale = tt_ir_select(b, keep, scale, tt_lower_full(ctx, cdt, 1, &N, 0.0));
    }
    rows = tt_ir_binary(b, TT_OP_MULTIPLY, rows, tt_ir_broadcast_in_dim(b, scale, 2, nd, &m0));
    outs[0] = tt_ir_convert(b, eb_scatter_rows(ctx, zero, idx, rows, TT_REDUCE_ADD), gt.dtype);
    return tt_ir_builder_status(b);
}

/* _embedding_bag_per_sample_weights_backward(grad, weight, indices, offsets, offset2bag, mode, padding_idx):
 * d/d psw[i] = <grad[bag(i)], weight[indices[i]]> (0 at padding_idx); sum mode only, as in PyTorch. */
static tt_status tt_lower_embedding_bag_psw_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                     tt_ir_value *outs, int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type gt = tt_lower_type_copy(ctx, args[0].value), wt = tt_lower_type_copy(ctx, args[1].value), it = tt_lower_type_copy(ctx, args[2].value),
               ot = tt_lower_type_copy(ctx, args[3].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    int64_t pad = nargs > 6 && args[6].kind == TT_ARG_INT ? args[6].i : -1;
    if (args[5].i != 0 || gt.rank != 2 || wt.rank != 2 || it.rank != 1 || ot.rank != 1 || ot.dims[0] != gt.dims[0] ||
        !tt_dtype_is_float(gt.dtype) || gt.dims[1] != wt.dims[1] || gt.dims[0] < 1)
        return tt_lower_unsupported(ctx, "embedding_bag_per_sample_weights_backward");
    int64_t N = it.dims[0], one = 1;
    tt_dtype cdt = tt_lower_opmath(gt.dtype);
    if (N == 0) {
        outs[0] = tt_lower_full(ctx, gt.dtype, 1, &N, 0.0);
        return tt_ir_builder_status(b);
    }
    tt_ir_value idx = tt_ir_convert(b, args[2].value, TT_I64);
    tt_ir_value gr = eb_take_rows(ctx, tt_ir_convert(b, args[0].value, cdt), eb_bags(ctx, args[3].value, N, gt.dims[0]));
    tt_ir_value wr = eb_take_rows(ctx, tt_ir_convert(b, args[1].value, cdt), idx);
    tt_ir_value dot = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, gr, wr), 1, &one);
    if (pad >= 0)
        dot = tt_ir_select(b, tt_ir_compare(b, TT_CMP_NE, idx, tt_lower_full(ctx, TT_I64, 1, &N, (double)pad)), dot,
                           tt_lower_full(ctx, cdt, 1, &N, 0.0));
    outs[0] = tt_ir_convert(b, dot, gt.dtype);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_embedding_bag(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    return eb_lower(ctx, args, nargs, outs, nouts, false);
}
static tt_status tt_lower_embedding_bag_forward_only(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                     tt_ir_value *outs, int32_t nouts) {
    return eb_lower(ctx, args, nargs, outs, nouts, true);
}

const tt_lower_entry tt_lower_table_search[] = {
    {"aten::searchsorted.Tensor", tt_lower_searchsorted},
    {"aten::searchsorted.Scalar", tt_lower_searchsorted},
    {"aten::bucketize.Tensor", tt_lower_bucketize},
    {"aten::bucketize.Scalar", tt_lower_bucketize},
    {"aten::isin.Tensor_Tensor", tt_lower_isin},
    {"aten::isin.Tensor_Scalar", tt_lower_isin},
    {"aten::isin.Scalar_Tensor", tt_lower_isin},
    {"aten::masked_scatter", tt_lower_masked_scatter},
    {"aten::embedding_renorm", tt_lower_embedding_renorm},
    {"aten::segment_reduce", tt_lower_segment_reduce},
    {"aten::_embedding_bag", tt_lower_embedding_bag},
    {"aten::_embedding_bag_backward", tt_lower_embedding_bag_backward},
    {"aten::_embedding_bag_per_sample_weights_backward", tt_lower_embedding_bag_psw_backward},
    {"aten::_embedding_bag_forward_only", tt_lower_embedding_bag_forward_only},
    {NULL, NULL},
};
