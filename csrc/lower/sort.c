/* sort.c — lowerings of sorting ops: sort, sort.stable, topk, kthvalue, median, nanmedian, mode. (argsort and msort are CompositeImplicit
 * in PyTorch and reach us as sort.)
 *
 * Every op is one two-operand SORT (values, iota indices along dim). The IR sort is always stable and orders NaN
 * above every number, as PyTorch does, so sort is stable whether or not it was asked to be. */
#include "tt_lower.h"

#include <math.h>
#include <string.h>

/* Stable sort of x along dim (already wrapped) into values and i64 indices. Rank 0 is the identity. */
static void so_sort(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, bool descending, tt_ir_value *vals,
                    tt_ir_value *idx) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    *vals = *idx = TT_IR_NONE;
    if (!t) return;
    if (t->rank == 0) {
        *vals = x;
        *idx = tt_lower_const(ctx, TT_I64, 0.0);
        return;
    }
    tt_ir_value io = tt_ir_iota(ctx->b, TT_I64, t->rank, t->dims, dim);
    tt_ir_value ops[2] = {x, io}, res[2] = {TT_IR_NONE, TT_IR_NONE};
    tt_ir_sort(ctx->b, 2, ops, dim, descending, true, res);
    *vals = res[0];
    *idx = res[1];
}

/* The first k entries of x along dim. */
static tt_ir_value so_take(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, int64_t start, int64_t k) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    if (t->rank == 0 || (start == 0 && k == t->dims[dim])) return x;
    int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++) lim[d] = t->dims[d];
    st[dim] = start;
    lim[dim] = start + k;
    return tt_ir_slice(ctx->b, x, st, lim, NULL);
}

/* sort(self, dim=-1, descending=False) */
static tt_status tt_lower_sort(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, t->rank);
    so_sort(ctx, args[0].value, dim, args[2].b, &outs[0], &outs[1]);
    return tt_ir_builder_status(ctx->b);
}

/* sort.stable(self, *, stable, dim=-1, descending=False) */
static tt_status tt_lower_sort_stable(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, t->rank);
    so_sort(ctx, args[0].value, dim, args[3].b, &outs[0], &outs[1]);
    return tt_ir_builder_status(ctx->b);
}

/* topk(self, k, dim=-1, largest=True, sorted=True): a full sort, then the first k (always sorted). */
static tt_status tt_lower_topk(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (t->dtype == TT_BOOL)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "topk does not support bool dtypes on CPU");
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, t->rank);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int64_t k = args[1].i, n = t->rank ? t->dims[dim] : 1;
    if (k < 0 || k > n) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "selected index k out of range");
    tt_ir_value v, i;
    so_sort(ctx, args[0].value, dim, args[3].b, &v, &i);
    outs[0] = so_take(ctx, v, dim, 0, k);
    outs[1] = so_take(ctx, i, dim, 0, k);
    return tt_ir_builder_status(ctx->b);
}

/* kthvalue(self, k, dim=-1, keepdim=False): the k-th smallest (1-based) and its index. */
static tt_status tt_lower_kthvalue(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (t->dtype == TT_BOOL) return TT_STATUS_UNSUPPORTED; /* PyTorch: "kthvalue_cpu" not implemented for 'Bool' */
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, t->rank);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int64_t k = args[1].i, n = t->rank ? t->dims[dim] : 1;
    if (k < 1 || k > n)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "kthvalue(): selected number k out of range for dimension %lld", (long long)dim);
    bool keepdim = args[3].kind == TT_ARG_BOOL && args[3].b;
    tt_ir_value v, i;
    so_sort(ctx, args[0].value, dim, false, &v, &i);
    if (t->rank == 0) {
        outs[0] = v;
        outs[1] = i;
        return tt_ir_builder_status(ctx->b);
    }
    v = so_take(ctx, v, dim, k - 1, 1);
    i = so_take(ctx, i, dim, k - 1, 1);
    if (!keepdim) {
        int64_t dims[TT_MAX_RANK];
        int32_t r = 0;
        for (int32_t d = 0; d < t->rank; d++)
            if (d != dim) dims[r++] = t->dims[d];
        v = tt_ir_reshape(ctx->b, v, r, dims);
        i = tt_ir_reshape(ctx->b, i, r, dims);
    }
    outs[0] = v;
    outs[1] = i;
    return tt_ir_builder_status(ctx->b);
}

/* ---- median / nanmedian: the sorted slice (NaN last) read at a per-slice position ----
 * median: the lower middle, or the first NaN when the slice has one (its value and index, as PyTorch returns);
 * nanmedian: the lower middle of the non-NaN entries (NaN at n/2, as PyTorch reports it, when all are NaN). */
static tt_status so_median(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim_arg, bool all, bool keepdim, bool skip_nan,
                           tt_ir_value *outs, int32_t nouts) {
    tt_ir_builder *b = ctx->b;
    const tt_ir_type *tp = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!tp) return tt_ir_builder_status(b);
    tt_ir_type t = *tp;
    if (t.dtype == TT_BOOL || tt_numel(t.rank, t.dims) == 0) return TT_STATUS_UNSUPPORTED; /* PyTorch's errors */
    int64_t dim = 0;
    if (all) {
        int64_t n = tt_numel(t.rank, t.dims);
        x = tt_ir_reshape(b, x, 1, &n);
        t.rank = 1;
        t.dims[0] = n;
    } else {
        dim = tt_lower_wrap_dim(ctx, dim_arg, t.rank);
        if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
        if (t.rank == 0) {
            outs[0] = x;
            if (nouts > 1) outs[1] = tt_lower_const(ctx, TT_I64, 0.0);
            return tt_ir_builder_status(b);
        }
    }
    int64_t n = t.dims[dim];
    tt_ir_value v, ix;
    so_sort(ctx, x, dim, false, &v, &ix);
    /* per-slice count of NaN (0 for integers) and the position to read */
    tt_ir_value nan = tt_ir_convert(b, tt_ir_compare(b, TT_CMP_NE, x, x), TT_I64);
    tt_ir_value cnt = tt_ir_reduce(b, TT_REDUCE_ADD, nan, 1, &dim);
    const tt_ir_type *ctp = tt_lower_type_into(ctx, cnt, (tt_ir_type[1]){{0}});
    if (!ctp) return tt_ir_builder_status(b);
    tt_ir_type ct = *ctp;
    tt_ir_value nfull = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, (double)n);
    tt_ir_value two = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, 2.0);
    tt_ir_value one = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, 1.0);
    tt_ir_value zero = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, 0.0);
    tt_ir_value pos;
    if (skip_nan) {
        tt_ir_value valid = tt_ir_binary(b, TT_OP_SUBTRACT, nfull, cnt);
        pos = tt_ir_binary(b, TT_OP_DIVIDE, tt_ir_binary(b, TT_OP_SUBTRACT, valid, one), two); /* truncates: -1/2 = 0 */
        tt_ir_value half = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, (double)(n / 2));
        pos = tt_ir_select(b, tt_ir_compare(b, TT_CMP_EQ, valid, zero), half, pos); /* all NaN: PyTorch's n/2 */
    } else {
        tt_ir_value mid = tt_lower_full(ctx, TT_I64, ct.rank, ct.dims, (double)((n - 1) / 2));
        pos = tt_ir_select(b, tt_ir_compare(b, TT_CMP_GT, cnt, zero), tt_ir_binary(b, TT_OP_SUBTRACT, nfull, cnt), mid);
    }
    int64_t map[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d < t.rank; d++)
        if (d != dim) map[o++] = d;
    tt_ir_value hit = tt_ir_compare(b, TT_CMP_EQ, tt_ir_iota(b, TT_I64, t.rank, t.dims, dim),
                                    tt_ir_broadcast_in_dim(b, pos, t.rank, t.dims, map));
    /* exactly one hit per slice: a sum of selects reads it (exact; -0.0 reads as 0.0) */
    tt_ir_value val = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit, v, tt_lower_like(ctx, v, 0.0)), 1, &dim);
    tt_ir_value idx = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit, ix, tt_lower_like(ctx, ix, 0.0)), 1, &dim);
    if (keepdim && !all) {
        int64_t kd[TT_MAX_RANK];
        for (int32_t d = 0; d < t.rank; d++) kd[d] = d == dim ? 1 : t.dims[d];
        val = tt_ir_reshape(b, val, t.rank, kd);
        idx = tt_ir_reshape(b, idx, t.rank, kd);
    }
    outs[0] = val;
    if (nouts > 1 && !all) outs[1] = idx;
    return tt_ir_builder_status(b);
}

/* median(self) / nanmedian(self): over all elements, value only. */
static tt_status tt_lower_median(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs;
    return so_median(ctx, args[0].value, 0, true, false, false, outs, nouts);
}
static tt_status tt_lower_nanmedian(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    return so_median(ctx, args[0].value, 0, true, false, true, outs, nouts);
}
/* median.dim / nanmedian.dim(self, dim, keepdim=False) -> (values, indices) */
static tt_status tt_lower_median_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    return so_median(ctx, args[0].value, args[1].i, false, nargs > 2 && args[2].kind == TT_ARG_BOOL && args[2].b,
                     false, outs, nouts);
}
static tt_status tt_lower_nanmedian_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    return so_median(ctx, args[0].value, args[1].i, false, nargs > 2 && args[2].kind == TT_ARG_BOOL && args[2].b,
                     true, outs, nouts);
}

/* mode(self, dim=-1, keepdim=False) -> (values, indices): the most frequent value, the smallest among equally
 * frequent ones, as PyTorch's sort-and-count kernel finds it. After a stable sort (NaN last, each NaN a run of its
 * own) every position learns its run's first and last position by cumulative max / min; the first run of the
 * largest length gives the value, and the index is the original position of that run's last element (PyTorch
 * returns one occurrence; which one is unspecified). */
static tt_status tt_lower_mode(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    tt_ir_builder *b = ctx->b;
    const tt_ir_type *tp = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!tp) return tt_ir_builder_status(b);
    tt_ir_type t = *tp;
    int64_t dim = tt_lower_wrap_dim(ctx, nargs > 1 && args[1].kind == TT_ARG_INT ? args[1].i : -1, t.rank);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    bool keepdim = nargs > 2 && args[2].kind == TT_ARG_BOOL && args[2].b;
    if (t.rank == 0) {
        outs[0] = args[0].value;
        if (nouts > 1) outs[1] = tt_lower_const(ctx, TT_I64, 0.0);
        return tt_ir_builder_status(b);
    }
    int64_t n = t.dims[dim];
    if (n < 1 || tt_numel(t.rank, t.dims) == 0) return TT_STATUS_UNSUPPORTED;
    tt_ir_value v, ix;
    so_sort(ctx, args[0].value, dim, false, &v, &ix);
    tt_ir_value io = tt_ir_iota(b, TT_I64, t.rank, t.dims, dim);
    tt_ir_value istart, iend;
    if (n == 1) {
        istart = iend = io;
    } else {
        /* neighbours along dim: prev[j] = v[j-1] (v[0] at 0), next[j] = v[j+1] (v[n-1] at the end) */
        tt_ir_value prev_parts[2] = {so_take(ctx, v, dim, 0, 1), so_take(ctx, v, dim, 0, n - 1)};
        tt_ir_value next_parts[2] = {so_take(ctx, v, dim, 1, n - 1), so_take(ctx, v, dim, n - 1, 1)};
        tt_ir_value prev = tt_ir_concatenate(b, 2, prev_parts, dim), next = tt_ir_concatenate(b, 2, next_parts, dim);
        tt_ir_value first = tt_ir_binary(b, TT_OP_OR, tt_ir_compare(b, TT_CMP_EQ, io, tt_lower_like(ctx, io, 0.0)),
                                         tt_ir_compare(b, TT_CMP_NE, v, prev));
        tt_ir_value last = tt_ir_binary(b, TT_OP_OR, tt_ir_compare(b, TT_CMP_EQ, io, tt_lower_like(ctx, io, (double)(n - 1))),
                                        tt_ir_compare(b, TT_CMP_NE, v, next));
        istart = tt_ir_cumulative(b, TT_REDUCE_MAX, tt_ir_select(b, first, io, tt_lower_like(ctx, io, 0.0)), dim, false);
        iend = tt_ir_cumulative(b, TT_REDUCE_MIN, tt_ir_select(b, last, io, tt_lower_like(ctx, io, (double)n)), dim, true);
    }
    tt_ir_value freq = tt_ir_binary(b, TT_OP_SUBTRACT, iend, istart);
    tt_ir_value best = tt_ir_reduce(b, TT_REDUCE_MAX, freq, 1, &dim);
    int64_t rmap[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d < t.rank; d++)
        if (d != dim) rmap[o++] = d;
    tt_ir_value cand = tt_ir_compare(b, TT_CMP_EQ, freq, tt_ir_broadcast_in_dim(b, best, t.rank, t.dims, rmap));
    tt_ir_value p = tt_ir_reduce(b, TT_REDUCE_MIN, tt_ir_select(b, cand, io, tt_lower_like(ctx, io, (double)n)), 1, &dim);
    tt_ir_value hit = tt_ir_compare(b, TT_CMP_EQ, io, tt_ir_broadcast_in_dim(b, p, t.rank, t.dims, rmap));
    /* one hit per slice: sums of selects read it */
    tt_ir_value val = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit, v, tt_lower_like(ctx, v, 0.0)), 1, &dim);
    tt_ir_value endp = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit, iend, tt_lower_like(ctx, iend, 0.0)), 1, &dim);
    tt_ir_value hit2 = tt_ir_compare(b, TT_CMP_EQ, io, tt_ir_broadcast_in_dim(b, endp, t.rank, t.dims, rmap));
    tt_ir_value idx = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit2, ix, tt_lower_like(ctx, ix, 0.0)), 1, &dim);
    if (keepdim) {
        int64_t kd[TT_MAX_RANK];
        for (int32_t d = 0; d < t.rank; d++) kd[d] = d == dim ? 1 : t.dims[d];
        val = tt_ir_reshape(b, val, t.rank, kd);
        idx = tt_ir_reshape(b, idx, t.rank, kd);
    }
    outs[0] = val;
    if (nouts > 1) outs[1] = idx;
    return tt_ir_builder_status(b);
}

const tt_lower_entry tt_lower_table_sort[] = {
    {"aten::sort", tt_lower_sort},
    {"aten::sort.stable", tt_lower_sort_stable},
    {"aten::topk", tt_lower_topk},
    {"aten::kthvalue", tt_lower_kthvalue},
    {"aten::median", tt_lower_median},
    {"aten::median.dim", tt_lower_median_dim},
    {"aten::nanmedian", tt_lower_nanmedian},
    {"aten::nanmedian.dim", tt_lower_nanmedian_dim},
    {"aten::mode", tt_lower_mode},
    {NULL, NULL},
};
