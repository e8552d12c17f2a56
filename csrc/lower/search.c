/* search.c — lowerings that compare every element with a list: searchsorted, bucketize, isin, and masked_scatter
 * (whose "n-th true element takes source[n]" is a cumulative sum and a gather).
 *
 * searchsorted / bucketize count the boundaries on the "before" side of each value instead of a binary search:
 * for a sorted sequence the predicate is monotone, so the count is the binary search's answer (PyTorch's
 * predicates are used as is, so NaN values land where PyTorch puts them). The [values x boundaries] comparison
 * is materialised, so very large products fall back. */
#include "tt_lower.h"

#include <string.h>

#define SR_MAX_PAIRS ((int64_t)1 << 26) /* values x boundaries compared at once */

static tt_ir_type sr_type(tt_lower_ctx *ctx, tt_ir_value v) {
    tt_ir_type t;
    memset(&t, 0, sizeof t);
    const tt_ir_type *p = v == TT_IR_NONE ? NULL : tt_lower_type(ctx, v);
    if (p) t = *p;
    return t;
}

static tt_status sr_unsupported(tt_lower_ctx *ctx, const char *what) {
    return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "%s: unsupported arguments on tpu", what);
}

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
    tt_ir_type st = sr_type(ctx, seq);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    tt_arg seq_arg;
    memset(&seq_arg, 0, sizeof seq_arg);
    seq_arg.kind = TT_ARG_TENSOR;
    seq_arg.value = seq;
    tt_dtype dt = sr_common(ctx, &seq_arg, val_arg);
    if (st.dtype == TT_BOOL || dt == TT_BOOL || st.rank < 1) return sr_unsupported(ctx, "searchsorted");
    tt_ir_value v = tt_lower_arg(ctx, val_arg, dt);
    tt_ir_type vt = sr_type(ctx, v);
    int64_t S = st.dims[st.rank - 1];
    if (st.rank > 1) {
        if (vt.rank != st.rank) return sr_unsupported(ctx, "searchsorted shapes");
        for (int32_t d = 0; d < st.rank - 1; d++)
            if (vt.dims[d] != st.dims[d]) return sr_unsupported(ctx, "searchsorted shapes");
    }
    if (vt.rank + 1 > TT_MAX_RANK || tt_numel(vt.rank, vt.dims) * (S > 0 ? S : 1) > SR_MAX_PAIRS)
        return sr_unsupported(ctx, "searchsorted size");
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
    tt_ir_type t = sr_type(ctx, x);
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
        tt_ir_type st = sr_type(ctx, seq), ot = sr_type(ctx, args[5].value);
        if (ot.rank != st.rank || memcmp(ot.dims, st.dims, sizeof(int64_t) * (size_t)st.rank) != 0 ||
            (ot.dtype != TT_I64 && ot.dtype != TT_I32))
            return sr_unsupported(ctx, "searchsorted sorter");
        seq = sr_take_along_last(ctx, seq, args[5].value);
    }
    return sr_search(ctx, seq, &args[1], right, args[2].kind == TT_ARG_BOOL && args[2].b, outs);
}

/* bucketize.Tensor / .Scalar(self, boundaries, *, out_int32, right): boundaries must be 1-d. */
static tt_status tt_lower_bucketize(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    (void)nouts;
    if (sr_type(ctx, args[1].value).rank != 1) return sr_unsupported(ctx, "bucketize");
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
    if (dt == TT_BOOL) return sr_unsupported(ctx, "isin"); /* PyTorch has no bool kernel either */
    tt_ir_value e = tt_lower_arg(ctx, &args[0], dt);
    tt_ir_value t = tt_lower_arg(ctx, &args[1], dt);
    tt_ir_type et = sr_type(ctx, e), tt = sr_type(ctx, t);
    int64_t m = tt_numel(tt.rank, tt.dims);
    if (et.rank + 1 > TT_MAX_RANK || tt_numel(et.rank, et.dims) * (m > 0 ? m : 1) > SR_MAX_PAIRS)
        return sr_unsupported(ctx, "isin size");
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
    tt_ir_type xt = sr_type(ctx, args[0].value), mt = sr_type(ctx, args[1].value), st = sr_type(ctx, args[2].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (mt.dtype != TT_BOOL || st.dtype != xt.dtype) return sr_unsupported(ctx, "masked_scatter");
    tt_ir_value v[2] = {args[0].value, args[1].value};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(b);
    tt_ir_type t = sr_type(ctx, v[0]);
    int64_t n = tt_numel(t.rank, t.dims), ns = tt_numel(st.rank, st.dims);
    if (n == 0 || ns == 0) { /* nothing to place (a true mask with an empty source: PyTorch's error) */
        if (ns == 0 && n > 0) return sr_unsupported(ctx, "masked_scatter with an empty source");
        outs[0] = v[0];
        return tt_ir_builder_status(b);
    }
    tt_ir_value mflat = tt_ir_reshape(b, v[1], 1, &n);
    tt_ir_value pos = tt_ir_cumulative(b, TT_REDUCE_ADD, tt_ir_convert(b, mflat, TT_I64), 0, false);
    pos = tt_ir_binary(b, TT_OP_SUBTRACT, pos, tt_lower_full(ctx, TT_I64, 1, &n, 1.0));
    pos = tt_ir_select(b, mflat, pos, tt_lower_full(ctx, TT_I64, 1, &n, 0.0)); /* unused lanes read element 0 */
    int64_t id[2] = {n, 1};
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.collapsed_slice_dims.n = 1;
    a.gather.start_index_map.n = 1;
    a.gather.slice_sizes.n = 1;
    a.gather.slice_sizes.v[0] = 1;
    a.gather.index_vector_dim = 1;
    a.gather.check_bounds = true;
    tt_ir_value src = tt_ir_gather(b, tt_ir_reshape(b, args[2].value, 1, &ns), tt_ir_reshape(b, pos, 2, id), &a);
    outs[0] = tt_ir_select(b, v[1], tt_ir_reshape(b, src, t.rank, t.dims), v[0]);
    return tt_ir_builder_status(b);
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
    {NULL, NULL},
};
