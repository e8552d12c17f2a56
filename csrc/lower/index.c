/* index.c — lowerings of the indexing family: gather / scatter (dim-wise), advanced indexing (index.Tensor,
 * index_put), index_select / index_add / index_copy / index_fill, masked_fill, embedding and its backward,
 * take, slice_scatter / select_scatter / diagonal_scatter.
 *
 * Everything is built from two IR shapes of StableHLO gather/scatter:
 *   - "point" gather/scatter: one full coordinate vector per element (torch.gather / scatter family);
 *   - "advanced" gather/scatter: m index tensors broadcast together select along m dims, the other dims are
 *     kept whole as slice windows (index.Tensor, index_put, index_select, embedding, index_add, take).
 *
 * Out-of-range indices: PyTorch raises IndexError, but a lowering never sees index values. On tpu a gather
 * clamps an out-of-range index into range and a scatter drops an out-of-range update (XLA semantics).
 * Negative indices wrap where PyTorch wraps them (index, index_put, index_fill, take, select_scatter).
 */
#include "tt_lower.h"

#include <string.h>

/* ---- small helpers ---- */

static bool is_index_dtype(tt_dtype dt) { return dt == TT_I64 || dt == TT_I32; }

/* idx (int) as i64 with negative entries wrapped by size (PyTorch's Python-style indexing). */
static tt_ir_value wrap_index(tt_lower_ctx *ctx, tt_ir_value idx, int64_t size) {
    tt_ir_builder *b = ctx->b;
    idx = tt_ir_convert(b, idx, TT_I64);
    tt_ir_type t = tt_lower_type_copy(ctx, idx);
    tt_ir_value zero = tt_lower_full(ctx, TT_I64, t.rank, t.dims, 0.0);
    tt_ir_value sz = tt_lower_full(ctx, TT_I64, t.rank, t.dims, (double)size);
    tt_ir_value neg = tt_ir_compare(b, TT_CMP_LT, idx, zero);
    return tt_ir_select(b, neg, tt_ir_binary(b, TT_OP_ADD, idx, sz), idx);
}

static void dims_iota(tt_ir_dims *d, int64_t n) {
    d->n = n;
    for (int64_t i = 0; i < n; i++) d->v[i] = i;
}

/* Coordinates for a point gather/scatter along dim: for each position p of idx (i64, shape S, rank r) the
 * vector (p_0, .., idx[p], .., p_{r-1}), as i64[*S, r]. */
static tt_ir_value point_coords(tt_lower_ctx *ctx, tt_ir_value idx, int32_t r, const int64_t *S, int64_t dim) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value parts[TT_MAX_RANK];
    int64_t s1[TT_MAX_RANK + 1];
    memcpy(s1, S, sizeof(int64_t) * (size_t)r);
    s1[r] = 1;
    for (int32_t d = 0; d < r; d++) {
        tt_ir_value v = d == dim ? idx : tt_ir_iota(b, TT_I64, r, S, d);
        parts[d] = tt_ir_reshape(b, v, r + 1, s1);
    }
    return tt_ir_concatenate(b, r, parts, r);
}

static tt_ir_value point_gather(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value coords, int32_t r) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    dims_iota(&a.gather.collapsed_slice_dims, r);
    dims_iota(&a.gather.start_index_map, r);
    a.gather.slice_sizes.n = r;
    for (int32_t i = 0; i < r; i++) a.gather.slice_sizes.v[i] = 1;
    a.gather.index_vector_dim = r;
    a.gather.check_bounds = true;
    a.gather.bounds_error = TT_IR_BOUNDS_RUNTIME; /* torch.gather raises RuntimeError */
    return tt_ir_gather(ctx->b, x, coords, &a);
}

static tt_ir_value point_scatter(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value coords, tt_ir_value upd, int32_t r,
                                 tt_ir_reduce_kind kind) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    dims_iota(&a.scatter.inserted_window_dims, r);
    dims_iota(&a.scatter.scatter_dims_to_operand_dims, r);
    a.scatter.index_vector_dim = r;
    a.scatter.kind = kind;
    a.scatter.check_bounds = true;
    a.scatter.bounds_error = TT_IR_BOUNDS_RUNTIME; /* torch.scatter* raise RuntimeError */
    return tt_ir_scatter(ctx->b, x, coords, upd, &a);
}

/* Advanced indexing of x (rank r) by m index tensors idx[k] (i64, already wrapped and broadcast to shape B of
 * rank rb) along the sorted dims P[k]. The result keeps the other dims whole: B goes where the indexed dims were
 * when P is contiguous and front is false, else first (numpy/PyTorch rule). Fills the attrs shared by the gather
 * and the scatter form and returns the stacked indices (i64[*B, m]); out_shape gets the gather result shape. */
typedef struct adv_plan {
    int32_t r, m, rb, out_rank;
    int64_t P[TT_MAX_RANK];
    int64_t out_dims[TT_MAX_RANK];
    tt_ir_dims offset_dims;
    int64_t slice_sizes[TT_MAX_RANK];
    tt_ir_value indices;
} adv_plan;

static bool adv_prepare(tt_lower_ctx *ctx, adv_plan *pl, const tt_ir_type *xt, int32_t m, const int64_t *P,
                        const tt_ir_value *idx, int32_t rb, const int64_t *B, bool front) {
    tt_ir_builder *b = ctx->b;
    memset(pl, 0, sizeof *pl);
    int32_t r = xt->rank;
    if (m < 1 || rb + 1 > TT_MAX_RANK || rb + (r - m) > TT_MAX_RANK) {
        tt_lower_unsupported(ctx, "advanced indexing rank");
        return false;
    }
    pl->r = r;
    pl->m = m;
    pl->rb = rb;
    memcpy(pl->P, P, sizeof(int64_t) * (size_t)m);
    bool is_adv[TT_MAX_RANK] = {false};
    for (int32_t k = 0; k < m; k++) is_adv[P[k]] = true;
    bool contiguous = !front;
    for (int32_t k = 1; k < m; k++)
        if (P[k] != P[k - 1] + 1) contiguous = false;
    int32_t o = 0;
    pl->offset_dims.n = 0;
    if (contiguous) {
        for (int32_t d = 0; d < P[0]; d++) {
            pl->offset_dims.v[pl->offset_dims.n++] = o;
            pl->out_dims[o++] = xt->dims[d];
        }
        for (int32_t j = 0; j < rb; j++) pl->out_dims[o++] = B[j];
        for (int32_t d = (int32_t)P[0]; d < r; d++) {
            if (is_adv[d]) continue;
            pl->offset_dims.v[pl->offset_dims.n++] = o;
            pl->out_dims[o++] = xt->dims[d];
        }
    } else {
        for (int32_t j = 0; j < rb; j++) pl->out_dims[o++] = B[j];
        for (int32_t d = 0; d < r; d++) {
            if (is_adv[d]) continue;
            pl->offset_dims.v[pl->offset_dims.n++] = o;
            pl->out_dims[o++] = xt->dims[d];
        }
    }
    pl->out_rank = o;
    for (int32_t d = 0; d < r; d++) pl->slice_sizes[d] = is_adv[d] ? 1 : xt->dims[d];
    int64_t s1[TT_MAX_RANK + 1];
    memcpy(s1, B, sizeof(int64_t) * (size_t)rb);
    s1[rb] = 1;
    tt_ir_value parts[TT_MAX_RANK];
    for (int32_t k = 0; k < m; k++) parts[k] = tt_ir_reshape(b, idx[k], rb + 1, s1);
    pl->indices = m == 1 ? parts[0] : tt_ir_concatenate(b, m, parts, rb);
    return true;
}

/* Whether an indexed dim of the operand is empty (every index out of range: nothing to read or write). */
static bool adv_operand_empty(tt_lower_ctx *ctx, const adv_plan *pl, tt_ir_value x) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    for (int32_t k = 0; k < pl->m; k++)
        if (t.dims[pl->P[k]] == 0) return true;
    return false;
}

static tt_ir_value adv_gather(tt_lower_ctx *ctx, const adv_plan *pl, tt_ir_value x) {
    if (adv_operand_empty(ctx, pl, x))
        return tt_lower_full(ctx, tt_lower_type_copy(ctx, x).dtype, pl->out_rank, pl->out_dims, 0.0);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.offset_dims = pl->offset_dims;
    a.gather.collapsed_slice_dims.n = pl->m;
    a.gather.start_index_map.n = pl->m;
    for (int32_t k = 0; k < pl->m; k++) {
        a.gather.collapsed_slice_dims.v[k] = pl->P[k];
        a.gather.start_index_map.v[k] = pl->P[k];
    }
    a.gather.slice_sizes.n = pl->r;
    memcpy(a.gather.slice_sizes.v, pl->slice_sizes, sizeof(int64_t) * (size_t)pl->r);
    a.gather.index_vector_dim = pl->rb;
    a.gather.check_bounds = true;
    return tt_ir_gather(ctx->b, x, pl->indices, &a);
}

/* upd must have the gather result's shape (pl->out_dims) and x's dtype. */
static tt_ir_value adv_scatter(tt_lower_ctx *ctx, const adv_plan *pl, tt_ir_value x, tt_ir_value upd,
                               tt_ir_reduce_kind kind) {
    if (adv_operand_empty(ctx, pl, x)) return x;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.scatter.update_window_dims = pl->offset_dims;
    a.scatter.inserted_window_dims.n = pl->m;
    a.scatter.scatter_dims_to_operand_dims.n = pl->m;
    for (int32_t k = 0; k < pl->m; k++) {
        a.scatter.inserted_window_dims.v[k] = pl->P[k];
        a.scatter.scatter_dims_to_operand_dims.v[k] = pl->P[k];
    }
    a.scatter.index_vector_dim = pl->rb;
    a.scatter.kind = kind;
    a.scatter.check_bounds = true;
    return tt_ir_scatter(ctx->b, x, pl->indices, upd, &a);
}

/* One index tensor (0-d or 1-d, int) along dim as a plan with B = [K]. wrap: wrap negative indices. */
static bool along_dim_plan(tt_lower_ctx *ctx, adv_plan *pl, const tt_ir_type *xt, int64_t dim, tt_ir_value index,
                           bool wrap) {
    tt_ir_type it = tt_lower_type_copy(ctx, index);
    if (it.rank > 1 || !is_index_dtype(it.dtype)) {
        tt_lower_unsupported(ctx, "index along dim");
        return false;
    }
    int64_t K = tt_numel(it.rank, it.dims);
    tt_ir_value idx = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, index, TT_I64), 1, &K);
    if (wrap) idx = wrap_index(ctx, idx, xt->dims[dim]);
    return adv_prepare(ctx, pl, xt, 1, &dim, &idx, 1, &K, false);
}

/* Smallest (want_max false) or largest value of dt as a 0-d constant: identity of max / min. */
static tt_ir_value limit_const(tt_lower_ctx *ctx, tt_dtype dt, bool want_max) {
    union {
        int64_t i64;
        int32_t i32;
        int16_t i16;
        int8_t i8;
        uint8_t u8;
    } u;
    switch (dt) {
    case TT_I64: u.i64 = want_max ? INT64_MAX : INT64_MIN; break;
    case TT_I32: u.i32 = want_max ? INT32_MAX : INT32_MIN; break;
    case TT_I16: u.i16 = want_max ? INT16_MAX : INT16_MIN; break;
    case TT_I8: u.i8 = want_max ? INT8_MAX : INT8_MIN; break;
    case TT_U8: u.u8 = want_max ? UINT8_MAX : 0; break;
    case TT_BOOL: return tt_lower_const(ctx, dt, want_max ? 1.0 : 0.0);
    default: return tt_lower_const(ctx, dt, want_max ? 1.0 / 0.0 : -1.0 / 0.0);
    }
    return tt_ir_constant(ctx->b, dt, 0, NULL, &u);
}

static tt_ir_value bcast(tt_lower_ctx *ctx, tt_ir_value v, const tt_ir_type *t) {
    return tt_lower_to(ctx, v, t->dtype, t->rank, t->dims);
}

/* Integer floor division by a positive divisor (PyTorch's rounding_mode="floor" for scatter mean). */
static tt_ir_value floor_div_pos(tt_lower_ctx *ctx, tt_ir_value a, tt_ir_value d) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, a);
    tt_ir_value q = tt_ir_binary(b, TT_OP_DIVIDE, a, d);
    tt_ir_value rem = tt_ir_binary(b, TT_OP_SUBTRACT, a, tt_ir_binary(b, TT_OP_MULTIPLY, q, d));
    tt_ir_value zero = tt_lower_full(ctx, t.dtype, t.rank, t.dims, 0.0);
    tt_ir_value one = tt_lower_full(ctx, t.dtype, t.rank, t.dims, 1.0);
    tt_ir_value neg = tt_ir_compare(b, TT_CMP_LT, rem, zero);
    return tt_ir_select(b, neg, tt_ir_binary(b, TT_OP_SUBTRACT, q, one), q);
}

/* ---- gather / scatter (dim-wise, torch.gather semantics) ---- */

/* Shared checks for gather/scatter: self and index of equal rank, i64 index. Reshapes 0-d to [1]. */
typedef struct dimwise {
    tt_ir_type xt, it;
    int64_t dim;
    bool scalar; /* self was 0-d: result reshaped back */
    bool empty;  /* no element is gathered / scattered: gather gives zeros, scatter gives self */
    tt_ir_value x, idx, coords;
} dimwise;

static bool dimwise_prepare(tt_lower_ctx *ctx, dimwise *w, tt_ir_value self, int64_t dim, tt_ir_value index) {
    memset(w, 0, sizeof *w);
    w->xt = tt_lower_type_copy(ctx, self);
    w->it = tt_lower_type_copy(ctx, index);
    w->x = self;
    w->idx = index;
    if (tt_numel(w->it.rank, w->it.dims) == 0 && (tt_dtype_is_int(w->it.dtype) || w->it.dtype == TT_BOOL)) {
        w->empty = true; /* PyTorch accepts any empty integer index, whatever its rank */
        return true;
    }
    if (!is_index_dtype(w->it.dtype) || (w->it.rank != w->xt.rank && !(w->xt.rank <= 1 && w->it.rank <= 1)) ||
        w->xt.rank + 1 > TT_MAX_RANK) {
        tt_lower_unsupported(ctx, "gather/scatter");
        return false;
    }
    w->dim = tt_lower_wrap_dim(ctx, dim, w->xt.rank);
    w->idx = tt_ir_convert(ctx->b, index, TT_I64);
    if (w->xt.rank == 0 || w->it.rank == 0) { /* treat 0-d as [1] (PyTorch does the same) */
        int64_t one = 1;
        w->scalar = w->xt.rank == 0;
        if (w->xt.rank == 0) w->x = tt_ir_reshape(ctx->b, self, 1, &one);
        if (w->it.rank == 0) w->idx = tt_ir_reshape(ctx->b, w->idx, 1, &one);
        w->xt = tt_lower_type_copy(ctx, w->x);
        w->it = tt_lower_type_copy(ctx, w->idx);
        w->dim = 0;
    }
    for (int32_t d = 0; d < w->xt.rank; d++)
        if (d != w->dim && w->it.dims[d] > w->xt.dims[d]) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "Size does not match at dimension %d expected index [%lld] to be smaller than self "
                               "[%lld] apart from dimension %lld",
                               d, (long long)w->it.dims[d], (long long)w->xt.dims[d], (long long)w->dim);
            return false;
        }
    if (w->xt.dims[w->dim] == 0) { /* every index is out of range: nothing to read or write */
        w->empty = true;
        return true;
    }
    w->coords = point_coords(ctx, w->idx, w->it.rank, w->it.dims, w->dim);
    return true;
}

static tt_ir_value dimwise_finish(tt_lower_ctx *ctx, const dimwise *w, tt_ir_value out) {
    return w->scalar ? tt_ir_reshape(ctx->b, out, 0, NULL) : out;
}

static tt_status tt_lower_gather(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs;
    (void)nouts;
    dimwise w;
    if (!dimwise_prepare(ctx, &w, args[0].value, args[1].i, args[2].value)) return tt_ir_builder_status(ctx->b);
    /* the result has the index's shape (a 0-d self with a 1-element index too) */
    tt_ir_type it0 = tt_lower_type_copy(ctx, args[2].value);
    if (w.empty) {
        outs[0] = tt_lower_full(ctx, w.xt.dtype, it0.rank, it0.dims, 0.0);
        return tt_ir_builder_status(ctx->b);
    }
    tt_ir_value g = point_gather(ctx, w.x, w.coords, w.it.rank);
    outs[0] = tt_ir_reshape(ctx->b, g, it0.rank, it0.dims);
    return tt_ir_builder_status(ctx->b);
}

/* src (tensor, sliced to the index shape) or a scalar value broadcast to it, in self's dtype. */
static tt_ir_value scatter_updates(tt_lower_ctx *ctx, const dimwise *w, const tt_arg *src) {
    if (src->kind == TT_ARG_TENSOR && !src->wrapped_number) {
        tt_ir_type st = tt_lower_type_copy(ctx, src->value);
        if (st.dtype != w->xt.dtype) {
            tt_lower_unsupported(ctx, "scatter with src of another dtype");
            return TT_IR_NONE;
        }
        tt_ir_value s = src->value;
        if (st.rank == 0) {
            int64_t one = 1;
            s = tt_ir_reshape(ctx->b, s, 1, &one);
            st = tt_lower_type_copy(ctx, s);
        }
        if (st.rank != w->it.rank) {
            tt_lower_unsupported(ctx, "scatter src rank");
            return TT_IR_NONE;
        }
        bool same = true;
        int64_t start[TT_MAX_RANK] = {0};
        for (int32_t d = 0; d < st.rank; d++) {
            if (st.dims[d] < w->it.dims[d]) {
                tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                   "Expected index to be smaller than src apart from dimension %lld",
                                   (long long)w->dim);
                return TT_IR_NONE;
            }
            if (st.dims[d] != w->it.dims[d]) same = false;
        }
        return same ? s : tt_ir_slice(ctx->b, s, start, w->it.dims, NULL);
    }
    tt_ir_value v = tt_lower_arg(ctx, src, w->xt.dtype);
    return tt_lower_to(ctx, v, w->xt.dtype, w->it.rank, w->it.dims);
}

static bool reduce_kind_of(const char *s, tt_ir_reduce_kind *kind, bool *mean) {
    *mean = false;
    if (!s) return false;
    if (!strcmp(s, "add") || !strcmp(s, "sum")) *kind = TT_REDUCE_ADD;
    else if (!strcmp(s, "multiply") || !strcmp(s, "prod")) *kind = TT_REDUCE_MUL;
    else if (!strcmp(s, "amax")) *kind = TT_REDUCE_MAX;
    else if (!strcmp(s, "amin")) *kind = TT_REDUCE_MIN;
    else if (!strcmp(s, "mean")) {
        *kind = TT_REDUCE_ADD;
        *mean = true;
    } else
        return false;
    return true;
}

/* scatter.src / scatter.value (kind NONE), scatter.reduce / value_reduce (add, multiply), scatter_add. */
static tt_status scatter_common(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_reduce_kind kind, tt_ir_value *outs) {
    dimwise w;
    if (!dimwise_prepare(ctx, &w, args[0].value, args[1].i, args[2].value)) return tt_ir_builder_status(ctx->b);
    if (w.empty) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(ctx->b);
    }
    tt_ir_value upd = scatter_updates(ctx, &w, &args[3]);
    tt_ir_value s = point_scatter(ctx, w.x, w.coords, upd, w.it.rank, kind);
    outs[0] = dimwise_finish(ctx, &w, s);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_scatter(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    tt_ir_reduce_kind kind = TT_REDUCE_NONE;
    if (nargs >= 5 && args[4].kind == TT_ARG_STRING) {
        bool mean;
        if (!reduce_kind_of(args[4].s, &kind, &mean) || mean || (kind != TT_REDUCE_ADD && kind != TT_REDUCE_MUL))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "reduce argument must be either add or multiply.");
    }
    return scatter_common(ctx, args, kind, outs);
}

static tt_status tt_lower_scatter_add(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    (void)nouts;
    return scatter_common(ctx, args, TT_REDUCE_ADD, outs);
}

/* scatter_reduce.two(self, dim, index, src, reduce, include_self) */
static tt_status tt_lower_scatter_reduce(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_reduce_kind kind;
    bool mean;
    if (!reduce_kind_of(args[4].s, &kind, &mean) || !strcmp(args[4].s, "add") || !strcmp(args[4].s, "multiply"))
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "reduce argument must be either sum, prod, mean, amax or amin, got %s",
                                  args[4].s ? args[4].s : "?");
    bool include_self = args[5].kind == TT_ARG_BOOL ? args[5].b : true;
    if (mean && tt_lower_type_copy(ctx, args[0].value).dtype == TT_BOOL) return tt_lower_unsupported(ctx, "scatter_reduce mean on bool");
    dimwise w;
    if (tt_lower_type_copy(ctx, args[0].value).dtype == TT_BOOL && kind != TT_REDUCE_ADD && kind != TT_REDUCE_MUL)
        return tt_lower_unsupported(ctx, "scatter_reduce on bool");
    if (!dimwise_prepare(ctx, &w, args[0].value, args[1].i, args[2].value)) return tt_ir_builder_status(b);
    if (w.empty) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    tt_ir_value upd = scatter_updates(ctx, &w, &args[3]);
    tt_ir_value base = w.x;
    if (!include_self) {
        /* positions that receive an update start from the reduction's identity instead of self */
        tt_ir_value hit = point_scatter(ctx, tt_lower_full(ctx, TT_BOOL, w.xt.rank, w.xt.dims, 0.0), w.coords,
                                        tt_lower_full(ctx, TT_BOOL, w.it.rank, w.it.dims, 1.0), w.it.rank,
                                        TT_REDUCE_NONE);
        tt_ir_value ident;
        if (kind == TT_REDUCE_ADD) ident = tt_lower_const(ctx, w.xt.dtype, 0.0);
        else if (kind == TT_REDUCE_MUL) ident = tt_lower_const(ctx, w.xt.dtype, 1.0);
        else ident = limit_const(ctx, w.xt.dtype, kind == TT_REDUCE_MIN);
        base = tt_ir_select(b, hit, bcast(ctx, ident, &w.xt), w.x);
    }
    tt_ir_value res = point_scatter(ctx, base, w.coords, upd, w.it.rank, kind);
    if (mean) {
        tt_ir_value cnt0 = tt_lower_full(ctx, w.xt.dtype, w.xt.rank, w.xt.dims, include_self ? 1.0 : 0.0);
        tt_ir_value cnt = point_scatter(ctx, cnt0, w.coords, tt_lower_full(ctx, w.xt.dtype, w.it.rank, w.it.dims, 1.0),
                                        w.it.rank, TT_REDUCE_ADD);
        cnt = tt_ir_binary(b, TT_OP_MAXIMUM, cnt, tt_lower_full(ctx, w.xt.dtype, w.xt.rank, w.xt.dims, 1.0));
        res = tt_dtype_is_float(w.xt.dtype) ? tt_ir_binary(b, TT_OP_DIVIDE, res, cnt) : floor_div_pos(ctx, res, cnt);
    }
    outs[0] = dimwise_finish(ctx, &w, res);
    return tt_ir_builder_status(b);
}

/* ---- advanced indexing ---- */

/* Collects the index list of index.Tensor / index_put: integer tensors broadcast together, wrapped, as i64.
 * Returns false (builder failed: UNSUPPORTED for bool/u8 masks) or true with m == 0 when every entry is None. */
static bool collect_indices(tt_lower_ctx *ctx, const tt_ir_type *xt, const tt_arg *list, int32_t *m, int64_t *P,
                            tt_ir_value *idx, int32_t *rb, int64_t *B) {
    *m = 0;
    *rb = 0;
    int32_t n = list->kind == TT_ARG_TENSORS ? list->n : 0;
    if (list->kind != TT_ARG_TENSORS || n > xt->rank) {
        tt_lower_unsupported(ctx, "index: too many indices");
        return false;
    }
    for (int32_t k = 0; k < n; k++) {
        tt_ir_value v = list->values[k];
        if (v == TT_IR_NONE) continue;
        tt_ir_type t = tt_lower_type_copy(ctx, v);
        if (!is_index_dtype(t.dtype)) { /* bool/u8 masks have a data-dependent shape: the shim handles them */
            tt_lower_unsupported(ctx, "index with a mask or a non-integer index");
            return false;
        }
        if (tt_lower_broadcast_shapes(*rb, B, t.rank, t.dims, rb, B) != TT_OK) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "shape mismatch: indexing tensors could not be broadcast together");
            return false;
        }
        P[*m] = k;
        idx[*m] = v;
        (*m)++;
    }
    for (int32_t k = 0; k < *m; k++)
        idx[k] = tt_lower_to(ctx, wrap_index(ctx, idx[k], xt->dims[P[k]]), TT_I64, *rb, B);
    return true;
}

/* index.Tensor(self, indices) */
static tt_status tt_lower_index(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    int32_t m, rb;
    int64_t P[TT_MAX_RANK], B[TT_MAX_RANK];
    tt_ir_value idx[TT_MAX_RANK];
    if (!collect_indices(ctx, &xt, &args[1], &m, P, idx, &rb, B)) return tt_ir_builder_status(ctx->b);
    if (m == 0) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(ctx->b);
    }
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &xt, m, P, idx, rb, B, false)) return tt_ir_builder_status(ctx->b);
    outs[0] = adv_gather(ctx, &pl, args[0].value);
    return tt_ir_builder_status(ctx->b);
}

/* index_put with one bool mask covering the leading dims of self: a select, no data-dependent shape. */
static tt_status index_put_mask(tt_lower_ctx *ctx, const tt_ir_type *xt, tt_ir_value self, tt_ir_value mask,
                                tt_ir_value values, bool accumulate, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type mt = tt_lower_type_copy(ctx, mask), vt = tt_lower_type_copy(ctx, values);
    int32_t mr = mt.rank, tr = xt->rank - mt.rank;
    for (int32_t d = 0; d < mr; d++)
        if (mt.dims[d] != xt->dims[d]) return tt_lower_unsupported(ctx, "index_put with a mask");
    /* values must broadcast to the trailing (unmasked) dims; a values tensor with one row per true is data-dependent */
    int32_t br;
    int64_t bd[TT_MAX_RANK];
    if (vt.rank > tr || tt_lower_broadcast_shapes(vt.rank, vt.dims, tr, xt->dims + mr, &br, bd) != TT_OK ||
        memcmp(bd, xt->dims + mr, sizeof(int64_t) * (size_t)tr) != 0)
        return tt_lower_unsupported(ctx, "index_put with a mask");
    tt_ir_value v = tt_lower_to(ctx, values, xt->dtype, tr, xt->dims + mr);
    int64_t map[TT_MAX_RANK];
    for (int32_t i = 0; i < tr; i++) map[i] = mr + i;
    v = tt_ir_broadcast_in_dim(b, v, xt->rank, xt->dims, map);
    for (int32_t i = 0; i < mr; i++) map[i] = i;
    tt_ir_value mk = tt_ir_broadcast_in_dim(b, mask, xt->rank, xt->dims, map);
    if (accumulate) v = tt_ir_binary(b, TT_OP_ADD, self, v);
    outs[0] = tt_ir_select(b, mk, v, self);
    return tt_ir_builder_status(b);
}

/* index_put(self, indices, values, accumulate) (also _index_put_impl, whose extra unsafe flag is ignored) */
static tt_status tt_lower_index_put(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    tt_ir_value values = args[2].value;
    tt_ir_type vt = tt_lower_type_copy(ctx, values);
    bool accumulate = nargs > 3 && args[3].kind == TT_ARG_BOOL && args[3].b;
    if (vt.dtype != xt.dtype) return tt_lower_unsupported(ctx, "index_put with values of another dtype");
    const tt_arg *list = &args[1];
    if (list->kind == TT_ARG_TENSORS && list->n >= 1 && list->values[0] != TT_IR_NONE) {
        tt_dtype d0 = tt_lower_type_copy(ctx, list->values[0]).dtype;
        if (d0 == TT_BOOL || d0 == TT_U8) {
            if (list->n != 1 || d0 != TT_BOOL) return tt_lower_unsupported(ctx, "index_put with a mask");
            return index_put_mask(ctx, &xt, args[0].value, list->values[0], values, accumulate, outs);
        }
    }
    int32_t m, rb;
    int64_t P[TT_MAX_RANK], B[TT_MAX_RANK];
    tt_ir_value idx[TT_MAX_RANK];
    if (!collect_indices(ctx, &xt, list, &m, P, idx, &rb, B)) return tt_ir_builder_status(b);
    if (m == 0) { /* self[...] = values */
        tt_ir_value v = bcast(ctx, values, &xt);
        outs[0] = accumulate ? tt_ir_binary(b, TT_OP_ADD, args[0].value, v) : v;
        return tt_ir_builder_status(b);
    }
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &xt, m, P, idx, rb, B, false)) return tt_ir_builder_status(b);
    tt_ir_value upd = tt_lower_to(ctx, values, xt.dtype, pl.out_rank, pl.out_dims);
    outs[0] = adv_scatter(ctx, &pl, args[0].value, upd, accumulate ? TT_REDUCE_ADD : TT_REDUCE_NONE);
    return tt_ir_builder_status(b);
}

/* ---- index_select / index_add / index_copy / index_fill / index_reduce / take / put / embedding ---- */

/* PyTorch treats a 0-d self as [1] in the index_* ops; the result is 0-d again. */
static tt_ir_value as_1d(tt_lower_ctx *ctx, tt_ir_value v) {
    if (tt_lower_type_copy(ctx, v).rank != 0) return v;
    int64_t one = 1;
    return tt_ir_reshape(ctx->b, v, 1, &one);
}

static tt_ir_value back_to_0d(tt_lower_ctx *ctx, tt_ir_value orig, tt_ir_value v) {
    return tt_lower_type_copy(ctx, orig).rank == 0 ? tt_ir_reshape(ctx->b, v, 0, NULL) : v;
}

static tt_status tt_lower_index_select(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_value x = as_1d(ctx, args[0].value);
    tt_ir_type xt = tt_lower_type_copy(ctx, x);
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    adv_plan pl;
    if (!along_dim_plan(ctx, &pl, &xt, dim, args[2].value, false)) return tt_ir_builder_status(ctx->b);
    outs[0] = back_to_0d(ctx, args[0].value, adv_gather(ctx, &pl, x));
    return tt_ir_builder_status(ctx->b);
}

/* index_add(self, dim, index, source, alpha) and index_copy(self, dim, index, source). */
static tt_status index_update(tt_lower_ctx *ctx, const tt_arg *args, const tt_arg *alpha, tt_ir_reduce_kind kind,
                              tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value x = as_1d(ctx, args[0].value);
    tt_ir_type xt = tt_lower_type_copy(ctx, x), st = tt_lower_type_copy(ctx, args[3].value);
    if (st.dtype != xt.dtype) return tt_lower_unsupported(ctx, "index_add/index_copy with source of another dtype");
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    adv_plan pl;
    if (!along_dim_plan(ctx, &pl, &xt, dim, args[2].value, false)) return tt_ir_builder_status(b);
    if (tt_numel(st.rank, st.dims) != tt_numel(pl.out_rank, pl.out_dims))
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "index_add/index_copy: source has the wrong shape");
    tt_ir_value src = tt_ir_reshape(b, args[3].value, pl.out_rank, pl.out_dims);
    if (alpha && alpha->kind != TT_ARG_NONE)
        src = tt_ir_binary(b, TT_OP_MULTIPLY, src,
                           tt_lower_to(ctx, tt_lower_arg(ctx, alpha, xt.dtype), xt.dtype, pl.out_rank, pl.out_dims));
    outs[0] = back_to_0d(ctx, args[0].value, adv_scatter(ctx, &pl, x, src, kind));
    return tt_ir_builder_status(b);
}

/* index_reduce(self, dim, index, source, reduce, include_self): prod / mean / amax / amin of source rows into
 * self's rows; include_self false starts the hit rows from the reduction's identity. */
static tt_status tt_lower_index_reduce(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_reduce_kind kind;
    bool mean;
    const char *red = args[4].kind == TT_ARG_STRING ? args[4].s : NULL;
    if (!reduce_kind_of(red, &kind, &mean) || !strcmp(red, "add") || !strcmp(red, "multiply") || !strcmp(red, "sum"))
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "index_reduce(): Expected reduce to be one of prod, mean, amax or amin, got %s.",
                                  red ? red : "?");
    bool include_self = args[5].kind == TT_ARG_BOOL ? args[5].b : true;
    tt_ir_value x = as_1d(ctx, args[0].value);
    tt_ir_type xt = tt_lower_type_copy(ctx, x), st = tt_lower_type_copy(ctx, args[3].value);
    if (st.dtype != xt.dtype || xt.dtype == TT_BOOL) return tt_lower_unsupported(ctx, "index_reduce arguments");
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    adv_plan pl;
    if (!along_dim_plan(ctx, &pl, &xt, dim, args[2].value, false)) return tt_ir_builder_status(b);
    if (tt_numel(st.rank, st.dims) != tt_numel(pl.out_rank, pl.out_dims))
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "index_reduce: source has the wrong shape");
    tt_ir_value src = tt_ir_reshape(b, args[3].value, pl.out_rank, pl.out_dims);
    tt_ir_value base = x;
    if (!include_self) {
        tt_ir_value hit = adv_scatter(ctx, &pl, tt_lower_full(ctx, TT_BOOL, xt.rank, xt.dims, 0.0),
                                      tt_lower_full(ctx, TT_BOOL, pl.out_rank, pl.out_dims, 1.0), TT_REDUCE_NONE);
        tt_ir_value ident;
        if (kind == TT_REDUCE_ADD) ident = tt_lower_const(ctx, xt.dtype, 0.0);
        else if (kind == TT_REDUCE_MUL) ident = tt_lower_const(ctx, xt.dtype, 1.0);
        else ident = limit_const(ctx, xt.dtype, kind == TT_REDUCE_MIN);
        base = tt_ir_select(b, hit, bcast(ctx, ident, &xt), x);
    }
    tt_ir_value res = adv_scatter(ctx, &pl, base, src, kind);
    if (mean) {
        tt_ir_value cnt0 = tt_lower_full(ctx, xt.dtype, xt.rank, xt.dims, include_self ? 1.0 : 0.0);
        tt_ir_value cnt = adv_scatter(ctx, &pl, cnt0, tt_lower_full(ctx, xt.dtype, pl.out_rank, pl.out_dims, 1.0),
                                      TT_REDUCE_ADD);
        cnt = tt_ir_binary(b, TT_OP_MAXIMUM, cnt, tt_lower_full(ctx, xt.dtype, xt.rank, xt.dims, 1.0));
        res = tt_dtype_is_float(xt.dtype) ? tt_ir_binary(b, TT_OP_DIVIDE, res, cnt) : floor_div_pos(ctx, res, cnt);
    }
    outs[0] = back_to_0d(ctx, args[0].value, res);
    return tt_ir_builder_status(b);
}

/* put(self, index, source, accumulate): self flattened, negative indices wrap. */
static tt_status tt_lower_put(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value), st = tt_lower_type_copy(ctx, args[2].value);
    bool accumulate = args[3].kind == TT_ARG_BOOL && args[3].b;
    if (it.dtype != TT_I64 || st.dtype != xt.dtype) return tt_lower_unsupported(ctx, "put arguments");
    int64_t k = tt_numel(it.rank, it.dims), n = tt_numel(xt.rank, xt.dims);
    if (tt_numel(st.rank, st.dims) != k)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "put_(): Expected source and index to have the same "
                                  "number of elements, but got source.numel() = %lld, index.numel() = %lld",
                                  (long long)tt_numel(st.rank, st.dims), (long long)k);
    if (k == 0 || n == 0) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    tt_ir_value flat = tt_ir_reshape(b, args[0].value, 1, &n);
    tt_ir_type ft = tt_lower_type_copy(ctx, flat);
    tt_ir_value idx = wrap_index(ctx, tt_ir_reshape(b, args[1].value, 1, &k), n);
    int64_t p0 = 0;
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &ft, 1, &p0, &idx, 1, &k, false)) return tt_ir_builder_status(b);
    tt_ir_value src = tt_ir_reshape(b, args[2].value, 1, &k);
    tt_ir_value out = adv_scatter(ctx, &pl, flat, src, accumulate ? TT_REDUCE_ADD : TT_REDUCE_NONE);
    outs[0] = tt_ir_reshape(b, out, xt.rank, xt.dims);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_index_add(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    return index_update(ctx, args, nargs > 4 ? &args[4] : NULL, TT_REDUCE_ADD, outs);
}

static tt_status tt_lower_index_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    return index_update(ctx, args, NULL, TT_REDUCE_NONE, outs);
}

/* index_fill(self, dim, index, value): a bool hit-mask along dim, then a select. */
static tt_status tt_lower_index_fill(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_value x = as_1d(ctx, args[0].value);
    tt_ir_type xt = tt_lower_type_copy(ctx, x);
    tt_ir_type it = tt_lower_type_copy(ctx, args[2].value);
    if (it.dtype != TT_I64 || it.rank > 1) return tt_lower_unsupported(ctx, "index_fill arguments");
    if (args[3].kind == TT_ARG_TENSOR && !args[3].wrapped_number && tt_lower_type_copy(ctx, args[3].value).rank != 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "index_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                                  "dimension(s).",
                                  tt_lower_type_copy(ctx, args[3].value).rank);
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    int64_t n = xt.dims[dim];
    tt_ir_type ht = {.dtype = TT_BOOL, .rank = 1, .dims = {n}};
    adv_plan pl;
    if (!along_dim_plan(ctx, &pl, &ht, 0, args[2].value, true)) return tt_ir_builder_status(b);
    tt_ir_value hit = adv_scatter(ctx, &pl, tt_lower_full(ctx, TT_BOOL, 1, &n, 0.0),
                                  tt_lower_full(ctx, TT_BOOL, pl.out_rank, pl.out_dims, 1.0), TT_REDUCE_NONE);
    hit = tt_ir_broadcast_in_dim(b, hit, xt.rank, xt.dims, &dim);
    tt_ir_value v = bcast(ctx, tt_lower_arg(ctx, &args[3], xt.dtype), &xt);
    outs[0] = back_to_0d(ctx, args[0].value, tt_ir_select(b, hit, v, x));
    return tt_ir_builder_status(b);
}

/* take(self, index): self flattened, negative indices wrap; result has the index's shape. */
static tt_status tt_lower_take(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value);
    if (it.dtype != TT_I64) return tt_lower_unsupported(ctx, "take with a non-i64 index");
    int64_t n = tt_numel(xt.rank, xt.dims);
    tt_ir_value flat = tt_ir_reshape(ctx->b, args[0].value, 1, &n);
    tt_ir_type ft = tt_lower_type_copy(ctx, flat);
    tt_ir_value idx = wrap_index(ctx, args[1].value, n);
    int64_t p0 = 0;
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &ft, 1, &p0, &idx, it.rank, it.dims, false)) return tt_ir_builder_status(ctx->b);
    outs[0] = adv_gather(ctx, &pl, flat);
    return tt_ir_builder_status(ctx->b);
}

/* embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse): rows of weight; padding_idx only matters
 * for the backward. */
static tt_status tt_lower_embedding(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type wt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value);
    if (wt.rank != 2 || !is_index_dtype(it.dtype)) return tt_lower_unsupported(ctx, "embedding arguments");
    tt_ir_value idx = tt_ir_convert(ctx->b, args[1].value, TT_I64);
    int64_t p0 = 0;
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &wt, 1, &p0, &idx, it.rank, it.dims, false)) return tt_ir_builder_status(ctx->b);
    outs[0] = adv_gather(ctx, &pl, args[0].value);
    return tt_ir_builder_status(ctx->b);
}

/* embedding_dense_backward(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq): scatter-add of
 * grad rows into a zero [num_weights, D] (in f32 for half types), padding_idx rows left zero. */
static tt_status tt_lower_embedding_dense_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                   tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type gt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[1].value);
    int64_t nw = args[2].i, pad = args[3].i;
    bool scale = args[4].kind == TT_ARG_BOOL && args[4].b;
    if (!is_index_dtype(it.dtype) || !tt_dtype_is_float(gt.dtype) || gt.rank != it.rank + 1 || nw < 0)
        return tt_lower_unsupported(ctx, "embedding_dense_backward arguments");
    for (int32_t d = 0; d < it.rank; d++)
        if (gt.dims[d] != it.dims[d]) return tt_lower_unsupported(ctx, "embedding_dense_backward shapes");
    int64_t D = gt.dims[it.rank];
    tt_dtype acc = gt.dtype == TT_F64 ? TT_F64 : TT_F32;
    tt_ir_value g = tt_ir_convert(b, args[0].value, acc);
    tt_ir_value idx = tt_ir_convert(b, args[1].value, TT_I64);
    int64_t lead[TT_MAX_RANK]; /* indices' dims are grad's leading dims */
    for (int32_t d = 0; d < it.rank; d++) lead[d] = d;
    if (pad >= 0) {
        tt_ir_value keep = tt_ir_compare(b, TT_CMP_NE, idx, tt_lower_full(ctx, TT_I64, it.rank, it.dims, (double)pad));
        keep = tt_ir_broadcast_in_dim(b, keep, gt.rank, gt.dims, lead);
        g = tt_ir_select(b, keep, g, tt_lower_full(ctx, acc, gt.rank, gt.dims, 0.0));
    }
    int64_t p0 = 0;
    int64_t wdims[2] = {nw, D};
    tt_ir_type wt = {.dtype = acc, .rank = 2, .dims = {nw, D}};
    adv_plan pl;
    if (!adv_prepare(ctx, &pl, &wt, 1, &p0, &idx, it.rank, it.dims, false)) return tt_ir_builder_status(b);
    if (scale) {
        /* each row's gradient divided by how often its index occurs */
        tt_ir_type ct = {.dtype = acc, .rank = 1, .dims = {nw}};
        adv_plan pc;
        if (!adv_prepare(ctx, &pc, &ct, 1, &p0, &idx, it.rank, it.dims, false)) return tt_ir_builder_status(b);
        tt_ir_value cnt = adv_scatter(ctx, &pc, tt_lower_full(ctx, acc, 1, &nw, 0.0),
                                      tt_lower_full(ctx, acc, it.rank, it.dims, 1.0), TT_REDUCE_ADD);
        tt_ir_value per = adv_gather(ctx, &pc, cnt);
        per = tt_ir_broadcast_in_dim(b, per, gt.rank, gt.dims, lead);
        g = tt_ir_binary(b, TT_OP_DIVIDE, g, per);
    }
    tt_ir_value out = adv_scatter(ctx, &pl, tt_lower_full(ctx, acc, 2, wdims, 0.0), g, TT_REDUCE_ADD);
    outs[0] = tt_ir_convert(b, out, gt.dtype);
    return tt_ir_builder_status(b);
}

/* ---- masked_fill ---- */

static tt_status tt_lower_masked_fill(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), mt = tt_lower_type_copy(ctx, args[1].value);
    if (mt.dtype != TT_BOOL) return tt_lower_unsupported(ctx, "masked_fill with a non-bool mask");
    if (args[2].kind == TT_ARG_TENSOR && !args[2].wrapped_number && tt_lower_type_copy(ctx, args[2].value).rank != 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with %d "
                                  "dimension(s).",
                                  tt_lower_type_copy(ctx, args[2].value).rank);
    tt_ir_type ot = {.dtype = xt.dtype};
    tt_status st = tt_lower_broadcast_shapes(xt.rank, xt.dims, mt.rank, mt.dims, &ot.rank, ot.dims);
    if (st != TT_OK) return tt_ir_builder_fail(b, st, "%s", tt_last_error());
    tt_ir_value x = bcast(ctx, args[0].value, &ot);
    tt_ir_value mk = tt_lower_to(ctx, args[1].value, TT_BOOL, ot.rank, ot.dims);
    tt_ir_value v = bcast(ctx, tt_lower_arg(ctx, &args[2], xt.dtype), &ot);
    outs[0] = tt_ir_select(b, mk, v, x);
    return tt_ir_builder_status(b);
}

/* ---- slice_scatter / select_scatter / diagonal_scatter ---- */

/* self with src written at start, start+step, ... along dim (len positions): src is padded into place (interior
 * padding for the step) and selected by an equally padded mask. */
static tt_ir_value strided_embed(tt_lower_ctx *ctx, const tt_ir_type *xt, tt_ir_value self, tt_ir_value src,
                                 int64_t dim, int64_t start, int64_t len, int64_t step) {
    tt_ir_builder *b = ctx->b;
    if (len == 0) return self;
    int64_t n = xt->dims[dim];
    int64_t high = n - (start + (len - 1) * step + 1);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0}, in[TT_MAX_RANK] = {0};
    lo[dim] = start;
    hi[dim] = high;
    in[dim] = step - 1;
    tt_ir_value srcp = tt_ir_pad(b, src, tt_lower_const(ctx, xt->dtype, 0.0), lo, hi, in);
    tt_ir_value mk = tt_ir_pad(b, tt_lower_full(ctx, TT_BOOL, 1, &len, 1.0), tt_lower_const(ctx, TT_BOOL, 0.0),
                               &lo[dim], &hi[dim], &in[dim]);
    mk = tt_ir_broadcast_in_dim(b, mk, xt->rank, xt->dims, &dim);
    return tt_ir_select(b, mk, srcp, self);
}

static tt_status tt_lower_slice_scatter(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), st = tt_lower_type_copy(ctx, args[1].value);
    if (xt.rank == 0) return tt_lower_unsupported(ctx, "slice_scatter on a 0-d tensor");
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, xt.rank);
    int64_t n = xt.dims[dim];
    int64_t start = args[3].kind == TT_ARG_INT ? args[3].i : 0;
    int64_t end = args[4].kind == TT_ARG_INT ? args[4].i : n;
    int64_t step = args[5].kind == TT_ARG_INT ? args[5].i : 1;
    if (step <= 0) return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "slice step must be positive");
    if (start < 0) start += n;
    if (end < 0) end += n;
    start = start < 0 ? 0 : start > n ? n : start;
    end = end < start ? start : end > n ? n : end;
    int64_t len = (end - start + step - 1) / step;
    tt_ir_type want = xt;
    want.dims[dim] = len;
    if (st.rank != want.rank || memcmp(st.dims, want.dims, sizeof(int64_t) * (size_t)st.rank) != 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "slice_scatter: expected src to have a size equal to the slice of self");
    tt_ir_value src = tt_ir_convert(b, args[1].value, xt.dtype);
    outs[0] = strided_embed(ctx, &xt, args[0].value, src, dim, start, len, step);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_select_scatter(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), st = tt_lower_type_copy(ctx, args[1].value);
    if (xt.rank == 0) return tt_lower_unsupported(ctx, "select_scatter on a 0-d tensor");
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, xt.rank);
    int64_t n = xt.dims[dim], index = args[3].i;
    if (index < -n || index >= n)
        return tt_ir_builder_fail(b, TT_STATUS_INDEX, "select(): index %lld out of range for tensor of size %lld at "
                                  "dimension %lld", (long long)index, (long long)n, (long long)dim);
    if (index < 0) index += n;
    tt_ir_type want = xt;
    want.dims[dim] = 1;
    if (tt_numel(st.rank, st.dims) != tt_numel(want.rank, want.dims) || st.rank != xt.rank - 1)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "select_scatter: expected src to have a size equal to the slice of self");
    tt_ir_value src = tt_ir_reshape(b, tt_ir_convert(b, args[1].value, xt.dtype), want.rank, want.dims);
    outs[0] = strided_embed(ctx, &xt, args[0].value, src, dim, index, 1, 1);
    return tt_ir_builder_status(b);
}

/* diagonal_scatter(self, src, offset, dim1, dim2): src ([others..., L]) spread along the diagonal by padding its
 * last dim to the row (or column) length and broadcasting it across the other of the two dims. */
static tt_status tt_lower_diagonal_scatter(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                           int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value), st = tt_lower_type_copy(ctx, args[1].value);
    if (xt.rank < 2) return tt_lower_unsupported(ctx, "diagonal_scatter rank");
    int64_t off = args[2].i;
    int64_t d1 = tt_lower_wrap_dim(ctx, args[3].i, xt.rank), d2 = tt_lower_wrap_dim(ctx, args[4].i, xt.rank);
    if (d1 == d2) return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "diagonal dimensions cannot be identical");
    int64_t n1 = xt.dims[d1], n2 = xt.dims[d2];
    int64_t L = off >= 0 ? (n2 - off < n1 ? n2 - off : n1) : (n1 + off < n2 ? n1 + off : n2);
    if (L < 0) L = 0;
    /* expected src shape: the other dims in order, then L */
    int64_t map[TT_MAX_RANK];
    int32_t o = 0;
    tt_ir_type want = {.dtype = xt.dtype, .rank = xt.rank - 1};
    for (int32_t d = 0; d < xt.rank; d++)
        if (d != d1 && d != d2) {
            map[o] = d;
            want.dims[o++] = xt.dims[d];
        }
    want.dims[o] = L;
    if (st.rank != want.rank || memcmp(st.dims, want.dims, sizeof(int64_t) * (size_t)st.rank) != 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "diagonal_scatter: expected src to have a size equal to the diagonal of self");
    /* diagonal element k sits at (row k, col k+off) for off >= 0, else (row k-off, col k): index k runs along
     * d1 (off >= 0) or d2 (off < 0); pad the last dim so that position along that dim equals k. */
    int64_t along = off >= 0 ? d1 : d2, full = off >= 0 ? n1 : n2;
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    hi[o] = full - L;
    tt_ir_value src = tt_ir_convert(b, args[1].value, xt.dtype);
    src = tt_ir_pad(b, src, tt_lower_const(ctx, xt.dtype, 0.0), lo, hi, NULL);
    map[o] = along;
    src = tt_ir_broadcast_in_dim(b, src, xt.rank, xt.dims, map);
    /* mask: col - row == off over (d1, d2) */
    tt_ir_value rows = tt_ir_iota(b, TT_I64, xt.rank, xt.dims, d1);
    tt_ir_value cols = tt_ir_iota(b, TT_I64, xt.rank, xt.dims, d2);
    tt_ir_value diff = tt_ir_binary(b, TT_OP_SUBTRACT, cols, rows);
    tt_ir_value mk = tt_ir_compare(b, TT_CMP_EQ, diff, tt_lower_full(ctx, TT_I64, xt.rank, xt.dims, (double)off));
    outs[0] = tt_ir_select(b, mk, src, args[0].value);
    return tt_ir_builder_status(b);
}

const tt_lower_entry tt_lower_table_index[] = {
    {"aten::gather", tt_lower_gather},
    {"aten::scatter.src", tt_lower_scatter},
    {"aten::scatter.value", tt_lower_scatter},
    {"aten::scatter.reduce", tt_lower_scatter},
    {"aten::scatter.value_reduce", tt_lower_scatter},
    {"aten::scatter_add", tt_lower_scatter_add},
    {"aten::scatter_reduce.two", tt_lower_scatter_reduce},
    {"aten::index.Tensor", tt_lower_index},
    {"aten::index.Tensor_hacked_twin", tt_lower_index},
    {"aten::index_put", tt_lower_index_put},
    {"aten::index_put.hacked_twin", tt_lower_index_put},
    {"aten::_index_put_impl", tt_lower_index_put},
    {"aten::index_select", tt_lower_index_select},
    {"aten::index_add", tt_lower_index_add},
    {"aten::index_copy", tt_lower_index_copy},
    {"aten::index_fill.int_Scalar", tt_lower_index_fill},
    {"aten::index_fill.int_Tensor", tt_lower_index_fill},
    {"aten::index_reduce", tt_lower_index_reduce},
    {"aten::take", tt_lower_take},
    {"aten::put", tt_lower_put},
    {"aten::embedding", tt_lower_embedding},
    {"aten::embedding_dense_backward", tt_lower_embedding_dense_backward},
    {"aten::masked_fill.Scalar", tt_lower_masked_fill},
    {"aten::masked_fill.Tensor", tt_lower_masked_fill},
    {"aten::slice_scatter", tt_lower_slice_scatter},
    {"aten::select_scatter", tt_lower_select_scatter},
    {"aten::diagonal_scatter", tt_lower_diagonal_scatter},
    {NULL, NULL},
};
