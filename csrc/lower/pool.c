/* pool.c — 3-d pooling: max_pool3d_with_indices (+backward), avg_pool3d (+backward). (The 2-d pools live in
 * conv.c; this file is written for any number of spatial dims S and registers S = 3.)
 *
 * max: the input padded with the dtype's lowest value, one strided slice per kernel offset stacked on a new last
 * dim, reduced with max / argmax (first maximum wins, as in PyTorch's loop); the flat index follows from the
 * offset. avg: a windowed sum (reduce_window) over zero padding divided by PyTorch's per-window divisor; its
 * backward spreads grad / divisor back with one interior-padded PAD per kernel offset. */
#include "tt_lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PO_MAXS 3
#define PO_MAX_K 512 /* kernel offsets stacked at once; bigger kernels fall back */

typedef struct po_params {
    int32_t S;
    int64_t k[PO_MAXS], s[PO_MAXS], p[PO_MAXS], d[PO_MAXS], in[PO_MAXS], out[PO_MAXS];
    bool ceil;
} po_params;

/* An int list of 1 or S values into v; empty / None takes dflt (NULL: invalid). */
static bool po_list(const tt_arg *a, int32_t S, int64_t *v, const int64_t *dflt) {
    if (a->kind == TT_ARG_INT) {
        for (int32_t i = 0; i < S; i++) v[i] = a->i;
        return true;
    }
    if (a->kind == TT_ARG_NONE || (a->kind == TT_ARG_INTS && a->n == 0)) {
        if (!dflt) return false;
        memcpy(v, dflt, sizeof(int64_t) * (size_t)S);
        return true;
    }
    if (a->kind != TT_ARG_INTS || (a->n != 1 && a->n != S)) return false;
    for (int32_t i = 0; i < S; i++) v[i] = a->ints[a->n == 1 ? 0 : i];
    return true;
}

/* PyTorch's pooling_output_shape. */
static int64_t po_out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil) {
    int64_t num = in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t q = num >= 0 ? num / s : -((-num + s - 1) / s);
    int64_t out = q + 1;
    if (ceil && (out - 1) * s >= in + pad) out--;
    return out;
}

/* Parses the pooling arguments (dil NULL for avg pools) for x of rank S+1 or S+2. Anything PyTorch rejects, or
 * empty inputs, fall back so its own message is raised. */
static bool po_parse(tt_lower_ctx *ctx, const tt_ir_type *t, int32_t S, const tt_arg *k, const tt_arg *s,
                     const tt_arg *p, const tt_arg *dil, const tt_arg *ceil, bool is_max, po_params *q) {
    memset(q, 0, sizeof *q);
    q->S = S;
    static const int64_t zero[PO_MAXS] = {0, 0, 0}, one[PO_MAXS] = {1, 1, 1};
    /* empty only through the batch dim of a batched input (PyTorch's own rule) */
    bool nonempty = true;
    for (int32_t d = t->rank == S + 2 ? 1 : 0; d < t->rank; d++) nonempty = nonempty && t->dims[d] > 0;
    bool ok = (t->rank == S + 1 || t->rank == S + 2) && nonempty && po_list(k, S, q->k, NULL) &&
              po_list(s, S, q->s, q->k) && po_list(p, S, q->p, zero) && (!dil || po_list(dil, S, q->d, one));
    if (!dil) memcpy(q->d, one, sizeof one);
    q->ceil = ceil->kind == TT_ARG_BOOL && ceil->b;
    for (int32_t i = 0; ok && i < S; i++) {
        int64_t eff = is_max ? ((q->k[i] - 1) * q->d[i] + 1) / 2 : q->k[i] / 2;
        ok = q->k[i] > 0 && q->s[i] > 0 && q->d[i] > 0 && q->p[i] >= 0 && q->p[i] <= eff;
        if (!ok) break;
        q->in[i] = t->dims[t->rank - S + i];
        q->out[i] = po_out_size(q->in[i], q->k[i], q->p[i], q->s[i], q->d[i], q->ceil);
        ok = q->out[i] >= 1 && (is_max || q->in[i] >= q->k[i]); /* avg_pool3d: "input image smaller than kernel" */
    }
    if (!ok) tt_lower_unsupported(ctx, "pool3d arguments");
    return ok;
}

/* Trailing pad that makes every window fit (never negative). */
static int64_t po_pad_high(const po_params *q, int i) {
    int64_t need = (q->out[i] - 1) * q->s[i] + q->d[i] * (q->k[i] - 1) + 1 - q->in[i] - q->p[i];
    return need > 0 ? need : 0;
}

static double po_lowest(tt_dtype dt) {
    switch (dt) {
    case TT_I64: return -9223372036854775807.0 - 1.0;
    case TT_I32: return -2147483648.0;
    case TT_I16: return -32768.0;
    case TT_I8: return -128.0;
    case TT_U8: return 0.0;
    default: return -INFINITY;
    }
}

/* max_pool3d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode) -> (values, flat indices) */
static tt_status tt_lower_max_pool3d_with_indices(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                  tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    tt_ir_builder *b = ctx->b;
    const int32_t S = 3;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (t.dtype == TT_BOOL) return tt_lower_unsupported(ctx, "max_pool3d");
    po_params q;
    if (!po_parse(ctx, &t, S, &args[1], &args[2], &args[3], &args[4], &args[5], true, &q)) return tt_ir_builder_status(b);
    int64_t K = 1;
    for (int32_t i = 0; i < S; i++) K *= q.k[i];
    int32_t r = t.rank, lead = r - S;
    if (K > PO_MAX_K || r + 1 > TT_MAX_RANK) return tt_lower_unsupported(ctx, "max_pool3d kernel");
    if (tt_numel(r, t.dims) == 0) { /* empty batch */
        int64_t od[TT_MAX_RANK];
        memcpy(od, t.dims, sizeof od);
        for (int32_t i = 0; i < S; i++) od[lead + i] = q.out[i];
        outs[0] = tt_lower_full(ctx, t.dtype, r, od, 0.0);
        if (nouts > 1) outs[1] = tt_lower_full(ctx, TT_I64, r, od, 0.0);
        return tt_ir_builder_status(b);
    }
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    for (int32_t i = 0; i < S; i++) {
        lo[lead + i] = q.p[i];
        hi[lead + i] = po_pad_high(&q, i);
    }
    tt_ir_value xp = tt_ir_pad(b, args[0].value, tt_lower_const(ctx, t.dtype, po_lowest(t.dtype)), lo, hi, NULL);
    tt_ir_value *wins = malloc(sizeof(tt_ir_value) * (size_t)K);
    if (!wins) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "max_pool3d: out of memory");
    int64_t oshape[TT_MAX_RANK], wshape[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) oshape[d] = wshape[d] = t.dims[d];
    for (int32_t i = 0; i < S; i++) oshape[lead + i] = wshape[lead + i] = q.out[i];
    wshape[r] = 1;
    for (int64_t kk = 0; kk < K; kk++) {
        int64_t off[PO_MAXS], rem = kk;
        for (int32_t i = S - 1; i >= 0; i--) {
            off[i] = (rem % q.k[i]) * q.d[i];
            rem /= q.k[i];
        }
        int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK], str[TT_MAX_RANK];
        for (int32_t d = 0; d < r; d++) {
            lim[d] = t.dims[d];
            str[d] = 1;
        }
        for (int32_t i = 0; i < S; i++) {
            st[lead + i] = off[i];
            lim[lead + i] = off[i] + (q.out[i] - 1) * q.s[i] + 1;
            str[lead + i] = q.s[i];
        }
        wins[kk] = tt_ir_reshape(b, tt_ir_slice(b, xp, st, lim, str), r + 1, wshape);
    }
    tt_ir_value stack = K == 1 ? wins[0] : tt_ir_concatenate(b, (int32_t)K, wins, r);
    free(wins);
    int64_t last = r;
    tt_ir_value vals = tt_ir_reduce(b, TT_REDUCE_MAX, stack, 1, &last);
    tt_ir_value kk = tt_ir_arg_reduce(b, stack, r, false);
#define PO_C(v) tt_lower_full(ctx, TT_I64, r, oshape, (double)(v))
#define PO_B(o_, x_, y_) tt_ir_binary(b, (o_), (x_), (y_))
    /* per dim: input coordinate of the chosen offset, and the window's first in-range slot (used when a window
     * holds only padding-level values and argmax picked padding, as PyTorch keeps its first valid index) */
    tt_ir_value idx = PO_C(0), idx0 = PO_C(0), valid = TT_IR_NONE, rem = kk;
    tt_ir_value coord[PO_MAXS];
    for (int32_t i = S - 1; i >= 0; i--) {
        tt_ir_value ki = PO_B(TT_OP_REMAINDER, rem, PO_C(q.k[i]));
        rem = PO_B(TT_OP_DIVIDE, rem, PO_C(q.k[i]));
        tt_ir_value o = tt_ir_iota(b, TT_I64, r, oshape, lead + i);
        tt_ir_value start = PO_B(TT_OP_SUBTRACT, PO_B(TT_OP_MULTIPLY, o, PO_C(q.s[i])), PO_C(q.p[i]));
        coord[i] = PO_B(TT_OP_ADD, start, PO_B(TT_OP_MULTIPLY, ki, PO_C(q.d[i])));
        tt_ir_value in_range = PO_B(TT_OP_AND, tt_ir_compare(b, TT_CMP_GE, coord[i], PO_C(0)),
                                    tt_ir_compare(b, TT_CMP_LT, coord[i], PO_C(q.in[i])));
        valid = valid == TT_IR_NONE ? in_range : PO_B(TT_OP_AND, valid, in_range);
        tt_ir_value need = PO_B(TT_OP_MAXIMUM, PO_B(TT_OP_SUBTRACT, PO_C(0), start), PO_C(0));
        tt_ir_value steps = PO_B(TT_OP_DIVIDE, PO_B(TT_OP_ADD, need, PO_C(q.d[i] - 1)), PO_C(q.d[i]));
        tt_ir_value first = PO_B(TT_OP_ADD, start, PO_B(TT_OP_MULTIPLY, steps, PO_C(q.d[i])));
        int64_t stride = 1;
        for (int32_t j = i + 1; j < S; j++) stride *= q.in[j];
        idx = PO_B(TT_OP_ADD, idx, PO_B(TT_OP_MULTIPLY, coord[i], PO_C(stride)));
        idx0 = PO_B(TT_OP_ADD, idx0, PO_B(TT_OP_MULTIPLY, first, PO_C(stride)));
    }
#undef PO_C
#undef PO_B
    outs[0] = vals;
    if (nouts > 1) outs[1] = tt_ir_select(b, valid, idx, idx0);
    return tt_ir_builder_status(b);
}

/* max_pool3d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
 * grad_output added into each spatial volume at its saved index. */
static tt_status tt_lower_max_pool3d_with_indices_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                           tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const int32_t S = 3;
    tt_ir_type tg = tt_lower_type_copy(ctx, args[0].value), tx = tt_lower_type_copy(ctx, args[1].value), ti = tt_lower_type_copy(ctx, args[7].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if ((tx.rank != S + 1 && tx.rank != S + 2) || tg.rank != tx.rank || ti.rank != tx.rank || !tt_dtype_is_float(tg.dtype) ||
        tg.dtype != tx.dtype || !tt_dtype_is_int(ti.dtype) || memcmp(ti.dims, tg.dims, sizeof(int64_t) * (size_t)tg.rank) != 0)
        return tt_lower_unsupported(ctx, "max_pool3d_backward");
    int32_t r = tx.rank, lead = r - S;
    int64_t P = 1, M = 1, V = 1;
    for (int32_t d = 0; d < lead; d++) {
        if (tg.dims[d] != tx.dims[d]) return tt_lower_unsupported(ctx, "max_pool3d_backward");
        P *= tx.dims[d];
    }
    for (int32_t i = 0; i < S; i++) {
        M *= tg.dims[lead + i];
        V *= tx.dims[lead + i];
    }
    tt_dtype acc = tt_lower_opmath(tg.dtype);
    if (P * M == 0 || P * V == 0) {
        outs[0] = tt_lower_full(ctx, tx.dtype, r, tx.dims, 0.0);
        return tt_ir_builder_status(b);
    }
    int64_t pm[2] = {P, M}, flat = P * M, total = P * V, col[2] = {P * M, 1};
    tt_ir_value gi = tt_ir_reshape(b, tt_ir_convert(b, args[7].value, TT_I64), 2, pm);
    gi = tt_ir_binary(b, TT_OP_ADD, gi,
                      tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, 2, pm, 0), tt_lower_full(ctx, TT_I64, 2, pm, (double)V)));
    gi = tt_ir_reshape(b, gi, 2, col);
    tt_ir_attrs a = tt_lower_scatter_elements_attrs(1, TT_REDUCE_ADD, true);
    tt_ir_value g = tt_ir_scatter(b, tt_lower_full(ctx, acc, 1, &total, 0.0), gi,
                                  tt_ir_reshape(b, tt_ir_convert(b, args[0].value, acc), 1, &flat), &a);
    outs[0] = tt_ir_convert(b, tt_ir_reshape(b, g, r, tx.dims), tx.dtype);
    return tt_ir_builder_status(b);
}

/* The avg_pool divisor of every output position, as a constant [out...] in dtype acc broadcast to oshape. */
static tt_ir_value po_divisor(tt_lower_ctx *ctx, const po_params *q, bool cip, const tt_arg *over, tt_dtype acc,
                              int32_t r, const int64_t *oshape) {
    int32_t S = q->S;
    if (over->kind == TT_ARG_INT) return tt_lower_full(ctx, acc, r, oshape, (double)over->i);
    int64_t n = 1;
    for (int32_t i = 0; i < S; i++) n *= q->out[i];
    double *dv = malloc(sizeof(double) * (size_t)n);
    float *fv = malloc(sizeof(float) * (size_t)n);
    if (!dv || !fv) {
        free(dv);
        free(fv);
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "avg_pool3d: out of memory");
        return TT_IR_NONE;
    }
    for (int64_t o = 0; o < n; o++) {
        int64_t rem = o, pool = 1, inside = 1;
        for (int32_t i = S - 1; i >= 0; i--) {
            int64_t oi = rem % q->out[i];
            rem /= q->out[i];
            int64_t st = oi * q->s[i] - q->p[i];
            int64_t en = st + q->k[i] < q->in[i] + q->p[i] ? st + q->k[i] : q->in[i] + q->p[i];
            pool *= en - st;
            st = st < 0 ? 0 : st;
            en = en > q->in[i] ? q->in[i] : en;
            inside *= en > st ? en - st : 0;
        }
        int64_t div = cip ? pool : inside;
        if (div <= 0) div = 1; /* an empty window sums to 0 anyway */
        dv[o] = (double)div;
        fv[o] = (float)div;
    }
    int64_t cd[PO_MAXS], map[PO_MAXS];
    for (int32_t i = 0; i < S; i++) {
        cd[i] = q->out[i];
        map[i] = r - S + i;
    }
    tt_ir_value c = acc == TT_F64 ? tt_ir_constant(ctx->b, TT_F64, S, cd, dv) : tt_ir_constant(ctx->b, TT_F32, S, cd, fv);
    if (acc == TT_I64) c = tt_ir_convert(ctx->b, c, TT_I64); /* small integers: exact in f32 */
    free(dv);
    free(fv);
    return tt_ir_broadcast_in_dim(ctx->b, c, r, oshape, map);
}

/* avg_pool3d(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override) */
static tt_status tt_lower_avg_pool3d(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const int32_t S = 3;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (!tt_dtype_is_float(t.dtype) && t.dtype != TT_I64) return tt_lower_unsupported(ctx, "avg_pool3d");
    if (args[6].kind == TT_ARG_INT && args[6].i == 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "divisor must be not zero");
    po_params q;
    if (!po_parse(ctx, &t, S, &args[1], &args[2], &args[3], NULL, &args[4], false, &q)) return tt_ir_builder_status(b);
    bool cip = !(args[5].kind == TT_ARG_BOOL && !args[5].b);
    int32_t r = t.rank, lead = r - S;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    if (tt_numel(r, t.dims) == 0) { /* empty batch */
        int64_t od[TT_MAX_RANK];
        memcpy(od, t.dims, sizeof od);
        for (int32_t i = 0; i < S; i++) od[lead + i] = q.out[i];
        outs[0] = tt_lower_full(ctx, t.dtype, r, od, 0.0);
        return tt_ir_builder_status(b);
    }
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_window.kind = TT_REDUCE_ADD;
    a.reduce_window.window.n = a.reduce_window.strides.n = a.reduce_window.pad_low.n = a.reduce_window.pad_high.n =
        a.reduce_window.window_dilation.n = r;
    int64_t oshape[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
        a.reduce_window.window.v[d] = a.reduce_window.strides.v[d] = a.reduce_window.window_dilation.v[d] = 1;
        oshape[d] = t.dims[d];
    }
    for (int32_t i = 0; i < S; i++) {
        a.reduce_window.window.v[lead + i] = q.k[i];
        a.reduce_window.strides.v[lead + i] = q.s[i];
        a.reduce_window.pad_low.v[lead + i] = q.p[i];
        a.reduce_window.pad_high.v[lead + i] = po_pad_high(&q, i);
        oshape[lead + i] = q.out[i];
    }
    tt_ir_value sum = tt_ir_reduce_window(b, tt_ir_convert(b, args[0].value, acc), &a);
    /* windows past the input (ceil_mode) can make the result longer: keep the first out[i] */
    tt_ir_type st = tt_lower_type_copy(ctx, sum);
    int64_t s0[TT_MAX_RANK] = {0};
    bool cut = false;
    for (int32_t d = 0; d < r; d++)
        if (st.dims[d] != oshape[d]) cut = true;
    if (cut) sum = tt_ir_slice(b, sum, s0, oshape, NULL);
    tt_ir_value div = po_divisor(ctx, &q, cip, &args[6], acc, r, oshape);
    /* int64 (PyTorch's one integer avg pool): an int64 sum divided with truncation, as its kernel does */
    outs[0] = tt_ir_convert(b, tt_ir_binary(b, TT_OP_DIVIDE, sum, div), t.dtype);
    return tt_ir_builder_status(b);
}

/* avg_pool3d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override): g / divisor placed at every kernel offset (stride-dilated PAD), summed, padding cut off. */
static tt_status tt_lower_avg_pool3d_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                              int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const int32_t S = 3;
    tt_ir_type tg = tt_lower_type_copy(ctx, args[0].value), t = tt_lower_type_copy(ctx, args[1].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (!tt_dtype_is_float(t.dtype) || tg.dtype != t.dtype || tg.rank != t.rank) return tt_lower_unsupported(ctx, "avg_pool3d_backward");
    if (args[7].kind == TT_ARG_INT && args[7].i == 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "divisor must be not zero");
    po_params q;
    if (!po_parse(ctx, &t, S, &args[2], &args[3], &args[4], NULL, &args[5], false, &q)) return tt_ir_builder_status(b);
    int32_t r = t.rank, lead = r - S;
    for (int32_t i = 0; i < S; i++)
        if (tg.dims[lead + i] != q.out[i]) return tt_lower_unsupported(ctx, "avg_pool3d_backward");
    int64_t K = 1;
    for (int32_t i = 0; i < S; i++) K *= q.k[i];
    if (K > PO_MAX_K) return tt_lower_unsupported(ctx, "avg_pool3d_backward kernel");
    bool cip = !(args[6].kind == TT_ARG_BOOL && !args[6].b);
    tt_dtype acc = tt_lower_opmath(t.dtype);
    if (tt_numel(r, t.dims) == 0) { /* empty batch */
        outs[0] = tt_lower_full(ctx, t.dtype, r, t.dims, 0.0);
        return tt_ir_builder_status(b);
    }
    tt_ir_value g = tt_ir_binary(b, TT_OP_DIVIDE, tt_ir_convert(b, args[0].value, acc),
                                 po_divisor(ctx, &q, cip, &args[7], acc, r, tg.dims));
    /* padded input extent: the full span the windows touch */
    int64_t span[PO_MAXS];
    for (int32_t i = 0; i < S; i++) {
        int64_t need = (q.out[i] - 1) * q.s[i] + q.k[i];
        span[i] = need > q.in[i] + 2 * q.p[i] ? need : q.in[i] + 2 * q.p[i];
    }
    tt_ir_value zero = tt_lower_const(ctx, acc, 0.0);
    tt_ir_value sum = TT_IR_NONE;
    for (int64_t kk = 0; kk < K; kk++) {
        int64_t off[PO_MAXS], rem = kk;
        for (int32_t i = S - 1; i >= 0; i--) {
            off[i] = rem % q.k[i];
            rem /= q.k[i];
        }
        int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0}, in[TT_MAX_RANK] = {0};
        for (int32_t i = 0; i < S; i++) {
            lo[lead + i] = off[i];
            in[lead + i] = q.s[i] - 1;
            hi[lead + i] = span[i] - off[i] - ((q.out[i] - 1) * q.s[i] + 1);
        }
        tt_ir_value pv = tt_ir_pad(b, g, zero, lo, hi, in);
        sum = kk == 0 ? pv : tt_ir_binary(b, TT_OP_ADD, sum, pv);
    }
    int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) lim[d] = t.dims[d];
    for (int32_t i = 0; i < S; i++) {
        st[lead + i] = q.p[i];
        lim[lead + i] = q.p[i] + q.in[i];
    }
    outs[0] = tt_ir_convert(b, tt_ir_slice(b, sum, st, lim, NULL), t.dtype);
    return tt_ir_builder_status(b);
}

const tt_lower_entry tt_lower_table_pool[] = {
    {"aten::max_pool3d_with_indices", tt_lower_max_pool3d_with_indices},
    {"aten::max_pool3d_with_indices_backward", tt_lower_max_pool3d_with_indices_backward},
    {"aten::avg_pool3d", tt_lower_avg_pool3d},
    {"aten::avg_pool3d_backward", tt_lower_avg_pool3d_backward},
    {NULL, NULL},
};
