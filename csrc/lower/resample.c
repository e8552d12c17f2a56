/* resample.c — lowerings that move data by index tables fixed at lowering time: upsample_nearest{1,2,3}d,
 * _upsample_nearest_exact{1,2,3}d, upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d, upsample_bicubic2d,
 * _upsample_{bilinear,bicubic}2d_aa (all + backward),
 * reflection_pad{1,2,3}d and replication_pad{1,2,3}d (+ backward), _adaptive_avg_pool3d and adaptive_max_pool{2,3}d
 * (+ backward; adaptive windows are tables too).
 *
 * Every one of them is separable: along each spatial dim, output position o reads input positions idx_j[o] for
 * k taps j (1 for nearest and padding; 2 weighted for linear, 4 for cubic). Those tables depend only on sizes, scales and
 * align_corners (structural), so they are computed here on the host with PyTorch's own float formulas and baked
 * in as constants; a GATHER along the dim applies them and a SCATTER-add along the dim is the backward.
 * Linear modes go innermost dim first, which reproduces PyTorch CPU's evaluation order exactly for f32; bf16/f16
 * are computed in f32 and rounded once. */
#include "tt_lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RS_MAXS 3 /* spatial dims: 1d, 2d, 3d */

/* ---- helpers ---- */

/* Gather/scatter attrs selecting whole slices of x along dim by a [n, 1] index table. */
static void rs_dims_except(tt_ir_dims *d, int32_t r, int64_t dim) {
    d->n = 0;
    for (int32_t i = 0; i < r; i++)
        if (i != dim) d->v[d->n++] = i;
}

/* i64[n, 1] constant from idx. */
static tt_ir_value rs_index_const(tt_lower_ctx *ctx, int64_t n, const int64_t *idx) {
    int64_t d[2] = {n, 1};
    return tt_ir_constant(ctx->b, TT_I64, 2, d, idx);
}

/* x with dim replaced by x[idx[o]] for o < n. */
static tt_ir_value rs_take(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, int64_t n, const int64_t *idx) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    int64_t od[TT_MAX_RANK];
    memcpy(od, t.dims, sizeof od);
    od[dim] = n;
    if (tt_numel(t.rank, od) == 0 || t.dims[dim] == 0) return tt_lower_full(ctx, t.dtype, t.rank, od, 0.0);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    rs_dims_except(&a.gather.offset_dims, t.rank, dim);
    a.gather.collapsed_slice_dims.n = 1;
    a.gather.collapsed_slice_dims.v[0] = dim;
    a.gather.start_index_map.n = 1;
    a.gather.start_index_map.v[0] = dim;
    a.gather.slice_sizes.n = t.rank;
    for (int32_t i = 0; i < t.rank; i++) a.gather.slice_sizes.v[i] = i == dim ? 1 : t.dims[i];
    a.gather.index_vector_dim = 1;
    return tt_ir_gather(ctx->b, x, rs_index_const(ctx, n, idx), &a);
}

/* The adjoint of rs_take: a tensor like g but with dim of size in_size, where position i sums g[o] over the o
 * with idx[o] == i. */
static tt_ir_value rs_put_add(tt_lower_ctx *ctx, tt_ir_value g, int64_t dim, int64_t in_size, const int64_t *idx) {
    tt_ir_type t = tt_lower_type_copy(ctx, g);
    int64_t od[TT_MAX_RANK];
    memcpy(od, t.dims, sizeof od);
    od[dim] = in_size;
    tt_ir_value zero = tt_lower_full(ctx, t.dtype, t.rank, od, 0.0);
    if (tt_numel(t.rank, t.dims) == 0 || in_size == 0) return zero;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    rs_dims_except(&a.scatter.update_window_dims, t.rank, dim);
    a.scatter.inserted_window_dims.n = 1;
    a.scatter.inserted_window_dims.v[0] = dim;
    a.scatter.scatter_dims_to_operand_dims.n = 1;
    a.scatter.scatter_dims_to_operand_dims.v[0] = dim;
    a.scatter.index_vector_dim = 1;
    a.scatter.kind = TT_REDUCE_ADD;
    return tt_ir_scatter(ctx->b, zero, rs_index_const(ctx, t.dims[dim], idx), g, &a);
}

/* w (dtype dt, [n]) broadcast along dim of a value shaped like x. */
static tt_ir_value rs_weights(tt_lower_ctx *ctx, tt_ir_value like, int64_t dim, tt_dtype dt, int64_t n,
                              const double *w) {
    tt_ir_type t = tt_lower_type_copy(ctx, like);
    tt_ir_value c = TT_IR_NONE;
    if (dt == TT_F64) {
        c = tt_ir_constant(ctx->b, TT_F64, 1, &n, w);
    } else {
        float *f = malloc(sizeof(float) * (size_t)(n ? n : 1));
        if (!f) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
            return TT_IR_NONE;
        }
        for (int64_t i = 0; i < n; i++) f[i] = (float)w[i];
        c = tt_ir_constant(ctx->b, TT_F32, 1, &n, f);
        free(f);
    }
    return tt_ir_broadcast_in_dim(ctx->b, c, t.rank, t.dims, &dim);
}

/* ---- index tables (PyTorch's UpSample.h formulas, in float like the CPU kernels for f32/bf16/f16) ---- */

#define RS_TAPS 64 /* bicubic reads 4 inputs per output; antialiased downscaling up to 2 * ceil(support) + 1 */

typedef struct rs_table {
    int64_t n;              /* output size along the dim */
    int64_t in;             /* input size along the dim */
    int32_t k;              /* taps: 1 (nearest, pad: unweighted), 2 (linear), 4 (cubic) */
    int64_t *idx[RS_TAPS];  /* owned */
    double *w[RS_TAPS];     /* owned; NULL when k == 1 */
    double *valid[RS_TAPS]; /* owned; NULL, or 1/0 per output when some outputs use fewer taps (antialias) */
} rs_table;

static void rs_table_free(rs_table *tb) {
    for (int32_t j = 0; j < RS_TAPS; j++) {
        free(tb->idx[j]);
        free(tb->w[j]);
        free(tb->valid[j]);
    }
    memset(tb, 0, sizeof *tb);
}

static bool rs_table_alloc(tt_lower_ctx *ctx, rs_table *tb, int64_t n, int64_t in, int32_t k) {
    memset(tb, 0, sizeof *tb);
    tb->n = n;
    tb->in = in;
    tb->k = k;
    size_t m = (size_t)(n > 0 ? n : 1);
    bool ok = k >= 1 && k <= RS_TAPS;
    for (int32_t j = 0; j < k && ok; j++) {
        tb->idx[j] = malloc(sizeof(int64_t) * m);
        if (k > 1) tb->w[j] = malloc(sizeof(double) * m);
        if (!tb->idx[j] || (k > 1 && !tb->w[j])) ok = false;
    }
    if (!ok) {
        rs_table_free(tb);
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
    }
    return ok;
}

/* compute_scales_value: 1/scale when a positive scale was given, else in/out. */
static float rs_scale_f(bool has, double scale, int64_t in, int64_t out) {
    return (has && scale > 0.0) ? (float)(1.0 / scale) : (float)in / (float)out;
}
static double rs_scale_d(bool has, double scale, int64_t in, int64_t out) {
    return (has && scale > 0.0) ? 1.0 / scale : (double)in / (double)out;
}

static bool rs_nearest_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t out, bool has, double scale,
                             bool exact) {
    if (!rs_table_alloc(ctx, tb, out, in, 1)) return false;
    float s = rs_scale_f(has, scale, in, out);
    for (int64_t o = 0; o < out; o++) {
        int64_t i;
        if (exact) {
            i = (int64_t)floorf(((float)o + 0.5f) * s);
        } else if (out == in) {
            i = o;
        } else if (out == 2 * in) {
            i = o >> 1;
        } else {
            i = (int64_t)floorf((float)o * s);
        }
        tb->idx[0][o] = i < in - 1 ? i : in - 1;
    }
    return true;
}

/* Source coordinate of output o split into a base index and the fraction t in [0, 1] (guard_index_and_lambda),
 * in f32 (f64 when dbl) like the CPU kernels' opmath. */
static void rs_source(int64_t in, int64_t out, int64_t o, bool align, bool has, double scale, bool cubic, bool dbl,
                      int64_t *base, double *t) {
    if (dbl) {
        double s = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0) : rs_scale_d(has, scale, in, out);
        double src = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
        if (!align && !cubic && src < 0.0) src = 0.0;
        int64_t i = (int64_t)floor(src);
        if (i > in - 1) i = in - 1;
        double l = src - (double)i;
        *base = i;
        *t = l < 0.0 ? 0.0 : (l > 1.0 ? 1.0 : l);
    } else {
        float s = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : rs_scale_f(has, scale, in, out);
        float src = align ? s * (float)o : s * ((float)o + 0.5f) - 0.5f;
        if (!align && !cubic && src < 0.0f) src = 0.0f;
        int64_t i = (int64_t)floorf(src);
        if (i > in - 1) i = in - 1;
        float l = src - (float)i;
        *base = i;
        *t = l < 0.0f ? 0.0f : (l > 1.0f ? 1.0f : l);
    }
}

/* Linear interpolation: two taps; same sizes read the input straight through (weights 1, 0). */
static bool rs_linear_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t out, bool align, bool has,
                            double scale, bool dbl) {
    if (!rs_table_alloc(ctx, tb, out, in, 2)) return false;
    for (int64_t o = 0; o < out; o++) {
        if (out == in) {
            tb->idx[0][o] = tb->idx[1][o] = o;
            tb->w[0][o] = 1.0;
            tb->w[1][o] = 0.0;
            continue;
        }
        int64_t i0;
        double t;
        rs_source(in, out, o, align, has, scale, false, dbl, &i0, &t);
        tb->idx[0][o] = i0;
        tb->idx[1][o] = i0 + (i0 < in - 1 ? 1 : 0);
        tb->w[0][o] = dbl ? 1.0 - t : (double)(1.0f - (float)t);
        tb->w[1][o] = t;
    }
    return true;
}

/* Keys' cubic convolution weights with A = -0.75 (PyTorch's), evaluated in f32 unless dbl. */
static double rs_cc1(double x, double A, bool dbl) {
    if (dbl) return ((A + 2) * x - (A + 3)) * x * x + 1;
    float xf = (float)x, Af = (float)A;
    return ((Af + 2.0f) * xf - (Af + 3.0f)) * xf * xf + 1.0f;
}
static double rs_cc2(double x, double A, bool dbl) {
    if (dbl) return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
    float xf = (float)x, Af = (float)A;
    return ((Af * xf - 5.0f * Af) * xf + 8.0f * Af) * xf - 4.0f * Af;
}

static bool rs_cubic_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t out, bool align, bool has,
                           double scale, bool dbl) {
    if (!rs_table_alloc(ctx, tb, out, in, 4)) return false;
    const double A = -0.75;
    for (int64_t o = 0; o < out; o++) {
        int64_t i0;
        double t;
        rs_source(in, out, o, align, has, scale, true, dbl, &i0, &t);
        double t1 = dbl ? 1.0 - t : (double)(1.0f - (float)t);
        double tp = dbl ? t + 1.0 : (double)((float)t + 1.0f), t1p = dbl ? t1 + 1.0 : (double)((float)t1 + 1.0f);
        tb->w[0][o] = rs_cc2(tp, A, dbl);
        tb->w[1][o] = rs_cc1(t, A, dbl);
        tb->w[2][o] = rs_cc1(t1, A, dbl);
        tb->w[3][o] = rs_cc2(t1p, A, dbl);
        for (int32_t j = 0; j < 4; j++) {
            int64_t i = i0 - 1 + j;
            tb->idx[j][o] = i < 0 ? 0 : (i > in - 1 ? in - 1 : i);
        }
    }
    return true;
}

/* Antialiased tables (PyTorch's separable AA kernels, f32 arithmetic with its float/double promotions): output o
 * averages inputs [xmin, xmin + xsize) with the filter (triangle for bilinear, Keys a = -0.5 for bicubic) stretched
 * by the downscale factor and normalised to sum 1. align_corners only changes the scale. */
static float rs_aa_filter(float x, bool cubic) {
    if (x < 0) x = -x;
    if (!cubic) return x < 1.0f ? 1.0f - x : 0.0f;
    const float a = -0.5f;
    if (x < 1.0f) return ((a + 2.0f) * x - (a + 3.0f)) * x * x + 1.0f;
    if (x < 2.0f) return (((x - 5.0f) * x + 8.0f) * x - 4.0f) * a;
    return 0.0f;
}

static bool rs_aa_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t out, bool align, bool has, double scale_arg,
                        bool cubic) {
    float scale = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : rs_scale_f(has, scale_arg, in, out);
    float half = cubic ? 2.0f : 1.0f; /* interp_size * 0.5 */
    float support = scale >= 1.0f ? half * scale : half;
    int64_t maxk = (int64_t)ceilf(support) * 2 + 1;
    if (maxk > RS_TAPS) {
        tt_lower_unsupported(ctx, "antialiased upsample: downscale factor too large");
        return false;
    }
    if (!rs_table_alloc(ctx, tb, out, in, (int32_t)maxk)) return false;
    for (int32_t j = 0; j < tb->k; j++) {
        tb->valid[j] = malloc(sizeof(double) * (size_t)(out > 0 ? out : 1));
        if (!tb->valid[j]) {
            rs_table_free(tb);
            tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
            return false;
        }
    }
    float invscale = scale >= 1.0f ? (float)(1.0 / (double)scale) : 1.0f;
    for (int64_t o = 0; o < out; o++) {
        float center = (float)((double)scale * ((double)o + 0.5));
        int64_t xmin = (int64_t)((double)(center - support) + 0.5);
        if (xmin < 0) xmin = 0;
        int64_t xmax = (int64_t)((double)(center + support) + 0.5);
        if (xmax > in) xmax = in;
        int64_t xsize = xmax - xmin;
        if (xsize < 0) xsize = 0;
        if (xsize > maxk) xsize = maxk;
        float w[RS_TAPS], total = 0.0f;
        for (int64_t j = 0; j < xsize; j++) {
            w[j] = rs_aa_filter((float)(((double)((float)(j + xmin) - center) + 0.5) * (double)invscale), cubic);
            total += w[j];
        }
        for (int64_t j = 0; j < maxk; j++) {
            bool used = j < xsize;
            tb->idx[j][o] = used ? xmin + j : (xsize > 0 ? xmin : 0);
            tb->w[j][o] = used ? (total != 0.0f ? (double)(w[j] / total) : (double)w[j]) : 0.0;
            tb->valid[j][o] = used ? 1.0 : 0.0;
        }
    }
    return true;
}

/* Pad tables: output o reads input i = o - lo, reflected or clamped into [0, in). */
static bool rs_pad_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t lo, int64_t hi, bool reflect) {
    int64_t out = in + lo + hi;
    if (!rs_table_alloc(ctx, tb, out, in, 1)) return false;
    for (int64_t o = 0; o < out; o++) {
        int64_t i = o - lo;
        if (reflect) {
            if (i < 0) i = -i;
            if (i >= in) i = 2 * (in - 1) - i;
        } else {
            if (i < 0) i = 0;
            if (i >= in) i = in - 1;
        }
        tb->idx[0][o] = i;
    }
    return true;
}

/* v where tap j is used, 0 elsewhere (unused taps must not turn an inf into nan through a zero weight). */
static tt_ir_value rs_mask_tap(tt_lower_ctx *ctx, tt_ir_value v, int64_t dim, const rs_table *tb, int32_t j,
                               tt_dtype cdt) {
    if (!tb->valid[j]) return v;
    tt_ir_value z = tt_lower_like(ctx, v, 0.0);
    tt_ir_value m = tt_ir_compare(ctx->b, TT_CMP_NE, rs_weights(ctx, v, dim, cdt, tb->n, tb->valid[j]), z);
    return tt_ir_select(ctx->b, m, v, z);
}

/* Applies one dim's table forward (gather, then the weighted sum tap by tap in PyTorch's order) in dtype cdt. */
static tt_ir_value rs_apply(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, const rs_table *tb, tt_dtype cdt) {
    tt_ir_builder *b = ctx->b;
    if (tb->k == 1) return rs_take(ctx, x, dim, tb->n, tb->idx[0]);
    tt_ir_value acc = TT_IR_NONE;
    for (int32_t j = 0; j < tb->k; j++) {
        tt_ir_value a = rs_mask_tap(ctx, rs_take(ctx, x, dim, tb->n, tb->idx[j]), dim, tb, j, cdt);
        tt_ir_value p = tt_ir_binary(b, TT_OP_MULTIPLY, a, rs_weights(ctx, a, dim, cdt, tb->n, tb->w[j]));
        acc = j == 0 ? p : tt_ir_binary(b, TT_OP_ADD, acc, p);
    }
    return acc;
}

/* The adjoint of rs_apply. */
static tt_ir_value rs_apply_bwd(tt_lower_ctx *ctx, tt_ir_value g, int64_t dim, const rs_table *tb, tt_dtype cdt) {
    tt_ir_builder *b = ctx->b;
    if (tb->k == 1) return rs_put_add(ctx, g, dim, tb->in, tb->idx[0]);
    tt_ir_value acc = TT_IR_NONE;
    for (int32_t j = 0; j < tb->k; j++) {
        tt_ir_value p = tt_ir_binary(b, TT_OP_MULTIPLY, g, rs_weights(ctx, g, dim, cdt, tb->n, tb->w[j]));
        tt_ir_value a = rs_put_add(ctx, rs_mask_tap(ctx, p, dim, tb, j, cdt), dim, tb->in, tb->idx[j]);
        acc = j == 0 ? a : tt_ir_binary(b, TT_OP_ADD, acc, a);
    }
    return acc;
}

/* ---- upsample ---- */

typedef enum rs_mode { RS_NEAREST, RS_NEAREST_EXACT, RS_LINEAR, RS_CUBIC, RS_AA_LINEAR, RS_AA_CUBIC } rs_mode;

/* Resamples the last S dims of x (rank S + 2) to out[0..S); scales[s] valid when has[s]. Innermost dim first
 * (PyTorch's evaluation order). bwd: x is grad_output, in gives the input's spatial sizes. */
static tt_status rs_upsample(tt_lower_ctx *ctx, tt_ir_value x, int32_t S, const int64_t *in, const int64_t *out,
                             const bool *has, const double *scales, rs_mode mode, bool align, bool bwd,
                             tt_ir_value *res) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (t.rank != S + 2) return tt_lower_unsupported(ctx, "upsample rank");
    bool isf = tt_dtype_is_float(t.dtype);
    if (mode >= RS_LINEAR || bwd) {
        if (!isf) return tt_lower_unsupported(ctx, "upsample dtype");
    } else if (t.dtype == TT_BOOL) {
        return tt_lower_unsupported(ctx, "upsample dtype");
    }
    for (int32_t s = 0; s < S; s++) {
        if (in[s] <= 0 || out[s] <= 0) return tt_lower_unsupported(ctx, "upsample empty");
        if (t.dims[2 + s] != (bwd ? out[s] : in[s])) return tt_lower_unsupported(ctx, "upsample sizes");
    }
    tt_dtype cdt = isf ? tt_lower_opmath(t.dtype) : t.dtype;
    tt_ir_value v = tt_ir_convert(ctx->b, x, cdt);
    for (int32_t s = S - 1; s >= 0; s--) {
        rs_table tb;
        bool dbl = cdt == TT_F64;
        bool ok = mode == RS_LINEAR  ? rs_linear_table(ctx, &tb, in[s], out[s], align, has[s], scales[s], dbl)
                  : mode == RS_CUBIC ? rs_cubic_table(ctx, &tb, in[s], out[s], align, has[s], scales[s], dbl)
                  : mode >= RS_AA_LINEAR
                      ? rs_aa_table(ctx, &tb, in[s], out[s], align, has[s], scales[s], mode == RS_AA_CUBIC)
                                     : rs_nearest_table(ctx, &tb, in[s], out[s], has[s], scales[s],
                                                        mode == RS_NEAREST_EXACT);
        if (!ok) return tt_ir_builder_status(ctx->b);
        v = bwd ? rs_apply_bwd(ctx, v, 2 + s, &tb, cdt) : rs_apply(ctx, v, 2 + s, &tb, cdt);
        rs_table_free(&tb);
    }
    *res = tt_ir_convert(ctx->b, v, t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* Optional float scales at args[first..first+S). */
static void rs_scales(const tt_arg *args, int32_t nargs, int32_t first, int32_t S, bool *has, double *sc) {
    for (int32_t s = 0; s < S; s++) {
        int32_t k = first + s;
        has[s] = k < nargs && args[k].kind == TT_ARG_FLOAT;
        sc[s] = has[s] ? args[k].f : 0.0;
    }
}

/* upsample_<mode>(self, output_size, [align_corners,] scales...). */
static tt_status rs_upsample_fwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, int32_t S, rs_mode mode,
                                 tt_ir_value *outs) {
    if (args[1].kind != TT_ARG_INTS || args[1].n != S) return tt_lower_unsupported(ctx, "upsample output_size");
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (t.rank != S + 2) return tt_lower_unsupported(ctx, "upsample rank");
    bool align = false;
    int32_t first = 2;
    if (mode >= RS_LINEAR) {
        align = args[2].kind == TT_ARG_BOOL && args[2].b;
        first = 3;
    }
    bool has[RS_MAXS];
    double sc[RS_MAXS];
    rs_scales(args, nargs, first, S, has, sc);
    return rs_upsample(ctx, args[0].value, S, t.dims + 2, args[1].ints, has, sc, mode, align, false, outs);
}

/* upsample_<mode>_backward(grad_output, output_size, input_size, [align_corners,] scales...). */
static tt_status rs_upsample_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, int32_t S, rs_mode mode,
                                 tt_ir_value *outs) {
    if (args[1].kind != TT_ARG_INTS || args[1].n != S || args[2].kind != TT_ARG_INTS || args[2].n != S + 2)
        return tt_lower_unsupported(ctx, "upsample_backward sizes");
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (t.rank != S + 2 || t.dims[0] != args[2].ints[0] || t.dims[1] != args[2].ints[1])
        return tt_lower_unsupported(ctx, "upsample_backward sizes");
    bool align = false;
    int32_t first = 3;
    if (mode >= RS_LINEAR) {
        align = args[3].kind == TT_ARG_BOOL && args[3].b;
        first = 4;
    }
    bool has[RS_MAXS];
    double sc[RS_MAXS];
    rs_scales(args, nargs, first, S, has, sc);
    return rs_upsample(ctx, args[0].value, S, args[2].ints + 2, args[1].ints, has, sc, mode, align, true, outs);
}

#define RS_UPSAMPLE(name, S, mode)                                                                                \
    static tt_status tt_lower_##name(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,    \
                                     int32_t nouts) {                                                            \
        (void)nouts;                                                                                             \
        return rs_upsample_fwd(ctx, args, nargs, S, mode, outs);                                                 \
    }                                                                                                            \
    static tt_status tt_lower_##name##_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,            \
                                                tt_ir_value *outs, int32_t nouts) {                              \
        (void)nouts;                                                                                             \
        return rs_upsample_bwd(ctx, args, nargs, S, mode, outs);                                                 \
    }

RS_UPSAMPLE(upsample_nearest1d, 1, RS_NEAREST)
RS_UPSAMPLE(upsample_nearest2d, 2, RS_NEAREST)
RS_UPSAMPLE(upsample_nearest3d, 3, RS_NEAREST)
RS_UPSAMPLE(upsample_nearest_exact1d, 1, RS_NEAREST_EXACT)
RS_UPSAMPLE(upsample_nearest_exact2d, 2, RS_NEAREST_EXACT)
RS_UPSAMPLE(upsample_nearest_exact3d, 3, RS_NEAREST_EXACT)
RS_UPSAMPLE(upsample_linear1d, 1, RS_LINEAR)
RS_UPSAMPLE(upsample_bilinear2d, 2, RS_LINEAR)
RS_UPSAMPLE(upsample_trilinear3d, 3, RS_LINEAR)
RS_UPSAMPLE(upsample_bicubic2d, 2, RS_CUBIC)
RS_UPSAMPLE(upsample_bilinear2d_aa, 2, RS_AA_LINEAR)
RS_UPSAMPLE(upsample_bicubic2d_aa, 2, RS_AA_CUBIC)

/* ---- reflection / replication padding ---- */

/* Pads the last S dims of x by padding = [lo_last, hi_last, lo_prev, hi_prev, ...] (PyTorch order). bwd: x is
 * grad_output and self gives the input shape. */
static tt_status rs_pad(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, bool reflect, bool bwd,
                        tt_ir_value *outs) {
    const char *name = reflect ? "reflection_pad" : "replication_pad";
    int32_t pi = bwd ? 2 : 1;
    tt_ir_value x = args[0].value;
    tt_ir_type self = tt_lower_type_copy(ctx, bwd ? args[1].value : x);
    tt_ir_type xt = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (args[pi].kind != TT_ARG_INTS || args[pi].n != 2 * S) return tt_lower_unsupported(ctx, name);
    if (self.rank != S + 1 && self.rank != S + 2) return tt_lower_unsupported(ctx, name);
    if (xt.rank != self.rank) return tt_lower_unsupported(ctx, name);
    if (bwd ? !tt_dtype_is_float(xt.dtype) : xt.dtype == TT_BOOL) return tt_lower_unsupported(ctx, name);
    int32_t r = self.rank;
    for (int32_t d = 0; d < r - S; d++)
        if (xt.dims[d] != self.dims[d]) return tt_lower_unsupported(ctx, name);
    int64_t lo[RS_MAXS], hi[RS_MAXS];
    for (int32_t s = 0; s < S; s++) {
        int32_t d = r - S + s;             /* tensor dim */
        int32_t k = 2 * (S - 1 - s);        /* its pair in padding: last dim first */
        lo[s] = args[pi].ints[k];
        hi[s] = args[pi].ints[k + 1];
        int64_t in = self.dims[d];
        if (in <= 0) return tt_lower_unsupported(ctx, name);
        if (reflect && (lo[s] >= in || hi[s] >= in))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Argument #4: Padding size should be less than the corresponding input "
                                      "dimension, but got: padding (%lld, %lld) at dimension %d of input %d",
                                      (long long)lo[s], (long long)hi[s], (int)d, (int)r);
        if (in + lo[s] + hi[s] <= 0 || lo[s] < -in || hi[s] < -in) return tt_lower_unsupported(ctx, name);
        if (bwd && xt.dims[d] != in + lo[s] + hi[s]) return tt_lower_unsupported(ctx, name);
    }
    tt_dtype cdt = bwd ? tt_lower_opmath(xt.dtype) : xt.dtype;
    tt_ir_value v = tt_ir_convert(ctx->b, x, cdt);
    for (int32_t s = S - 1; s >= 0; s--) {
        int32_t d = r - S + s;
        rs_table tb;
        if (!rs_pad_table(ctx, &tb, self.dims[d], lo[s], hi[s], reflect)) return tt_ir_builder_status(ctx->b);
        v = bwd ? rs_apply_bwd(ctx, v, d, &tb, cdt) : rs_apply(ctx, v, d, &tb, cdt);
        rs_table_free(&tb);
    }
    outs[0] = tt_ir_convert(ctx->b, v, xt.dtype);
    return tt_ir_builder_status(ctx->b);
}

#define RS_PAD(name, S, reflect)                                                                                  \
    static tt_status tt_lower_##name(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,    \
                                     int32_t nouts) {                                                            \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        return rs_pad(ctx, args, S, reflect, false, outs);                                                       \
    }                                                                                                            \
    static tt_status tt_lower_##name##_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,            \
                                                tt_ir_value *outs, int32_t nouts) {                              \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        return rs_pad(ctx, args, S, reflect, true, outs);                                                        \
    }

RS_PAD(reflection_pad1d, 1, true)
RS_PAD(reflection_pad2d, 2, true)
RS_PAD(reflection_pad3d, 3, true)
RS_PAD(replication_pad1d, 1, false)
RS_PAD(replication_pad2d, 2, false)
RS_PAD(replication_pad3d, 3, false)

/* ---- adaptive pooling: window o of n over a size-L dim is [floor(o*L/n), ceil((o+1)*L/n)) ---- */

#define RS_POOL_MAX_TAPS 64 /* longest window handled per dim (else the op falls back) */

/* One dim's windows as K taps: idx[j*n + o] = min(start_o + j, end_o - 1) (a repeat of the last element past the
 * window's end), valid[j*n + o] = start_o + j < end_o, cnt[o] = end_o - start_o. Arrays owned by the caller. */
typedef struct rs_win {
    int64_t n, in, k;
    int64_t *idx;
    double *valid, *cnt;
} rs_win;

static void rs_win_free(rs_win *w) {
    free(w->idx);
    free(w->valid);
    free(w->cnt);
    memset(w, 0, sizeof *w);
}

static bool rs_win_make(tt_lower_ctx *ctx, rs_win *w, int64_t in, int64_t n) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->in = in;
    int64_t k = 1;
    for (int64_t o = 0; o < n; o++) {
        int64_t st = (o * in) / n, en = ((o + 1) * in + n - 1) / n;
        if (en - st > k) k = en - st;
    }
    if (k > RS_POOL_MAX_TAPS) {
        tt_lower_unsupported(ctx, "adaptive pooling window");
        return false;
    }
    w->k = k;
    w->idx = malloc(sizeof(int64_t) * (size_t)(n * k));
    w->valid = malloc(sizeof(double) * (size_t)(n * k));
    w->cnt = malloc(sizeof(double) * (size_t)n);
    if (!w->idx || !w->valid || !w->cnt) {
        rs_win_free(w);
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
        return false;
    }
    for (int64_t o = 0; o < n; o++) {
        int64_t st = (o * in) / n, en = ((o + 1) * in + n - 1) / n;
        w->cnt[o] = (double)(en - st);
        for (int64_t j = 0; j < k; j++) {
            w->idx[j * n + o] = st + j < en ? st + j : en - 1;
            w->valid[j * n + o] = st + j < en ? 1.0 : 0.0;
        }
    }
    return true;
}

/* An empty batch (leading dims) with a valid spatial shape: zero-filled results shaped [lead, output_size]. */
static bool rs_pool_empty(tt_lower_ctx *ctx, const tt_ir_type *t, int32_t S, const tt_arg *osz, int32_t nouts,
                          tt_ir_value *outs) {
    if (tt_numel(t->rank, t->dims) != 0 || (t->rank != S + 1 && t->rank != S + 2) || !tt_dtype_is_float(t->dtype) ||
        osz->kind != TT_ARG_INTS || osz->n != S)
        return false;
    int32_t lead = t->rank - S;
    int64_t od[TT_MAX_RANK];
    for (int32_t d = 0; d < lead; d++) od[d] = t->dims[d];
    for (int32_t s = 0; s < S; s++) {
        if (t->dims[lead + s] <= 0 || osz->ints[s] <= 0) return false;
        od[lead + s] = osz->ints[s];
    }
    outs[0] = tt_lower_full(ctx, t->dtype, t->rank, od, 0.0);
    if (nouts > 1) outs[1] = tt_lower_full(ctx, TT_I64, t->rank, od, 0.0);
    return true;
}

/* Checks shared by the adaptive pools: rank S+1 or S+2, float, non-empty, output sizes >= 1. */
static bool rs_pool_check(tt_lower_ctx *ctx, const tt_ir_type *t, int32_t S, const tt_arg *osz, const char *name) {
    if (tt_ir_builder_status(ctx->b) != TT_OK) return false;
    if ((t->rank != S + 1 && t->rank != S + 2) || !tt_dtype_is_float(t->dtype) || tt_numel(t->rank, t->dims) == 0) {
        tt_lower_unsupported(ctx, name);
        return false;
    }
    if (osz) {
        if (osz->kind != TT_ARG_INTS || osz->n != S) {
            tt_lower_unsupported(ctx, name);
            return false;
        }
        for (int32_t s = 0; s < S; s++)
            if (osz->ints[s] <= 0) {
                tt_lower_unsupported(ctx, name);
                return false;
            }
    }
    return true;
}

/* Product of the per-dim window sizes, shaped like v (spatial dims at lead..). */
static tt_ir_value rs_pool_counts(tt_lower_ctx *ctx, tt_ir_value like, int32_t lead, int32_t S, rs_win *w,
                                  tt_dtype cdt) {
    tt_ir_value c = TT_IR_NONE;
    for (int32_t s = 0; s < S; s++) {
        tt_ir_value cs = rs_weights(ctx, like, lead + s, cdt, w[s].n, w[s].cnt);
        c = s == 0 ? cs : tt_ir_binary(ctx->b, TT_OP_MULTIPLY, c, cs);
    }
    return c;
}

/* _adaptive_avg_pool{2,3}d(self, output_size): window sums dim by dim (masked taps), then / window size. */
static tt_status rs_adaptive_avg(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (rs_pool_empty(ctx, &t, S, &args[1], 1, outs)) return tt_ir_builder_status(b);
    if (!rs_pool_check(ctx, &t, S, &args[1], "adaptive_avg_pool")) return tt_ir_builder_status(b);
    int32_t lead = t.rank - S;
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    tt_ir_value v = tt_ir_convert(b, args[0].value, cdt);
    rs_win w[RS_MAXS];
    memset(w, 0, sizeof w);
    for (int32_t s = S - 1; s >= 0 && tt_ir_builder_status(b) == TT_OK; s--) {
        if (!rs_win_make(ctx, &w[s], t.dims[lead + s], args[1].ints[s])) break;
        tt_ir_value acc = TT_IR_NONE;
        for (int64_t j = 0; j < w[s].k; j++) {
            tt_ir_value a = rs_take(ctx, v, lead + s, w[s].n, w[s].idx + j * w[s].n);
            if (j > 0) {
                tt_ir_value m = tt_ir_compare(b, TT_CMP_NE, rs_weights(ctx, a, lead + s, cdt, w[s].n, w[s].valid + j * w[s].n),
                                              tt_lower_like(ctx, a, 0.0));
                a = tt_ir_select(b, m, a, tt_lower_like(ctx, a, 0.0));
            }
            acc = j == 0 ? a : tt_ir_binary(b, TT_OP_ADD, acc, a);
        }
        v = acc;
    }
    if (tt_ir_builder_status(b) == TT_OK)
        outs[0] = tt_ir_convert(b, tt_ir_binary(b, TT_OP_DIVIDE, v, rs_pool_counts(ctx, v, lead, S, w, cdt)), t.dtype);
    for (int32_t s = 0; s < S; s++) rs_win_free(&w[s]);
    return tt_ir_builder_status(b);
}

/* _adaptive_avg_pool{2,3}d_backward(grad_output, self): each input gets grad / window size of every window
 * holding it. */
static tt_status rs_adaptive_avg_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value), gt = tt_lower_type_copy(ctx, args[0].value);
    if (tt_numel(t.rank, t.dims) == 0 && tt_dtype_is_float(t.dtype) && (t.rank == S + 1 || t.rank == S + 2)) {
        outs[0] = tt_lower_full(ctx, t.dtype, t.rank, t.dims, 0.0); /* empty batch */
        return tt_ir_builder_status(b);
    }
    if (!rs_pool_check(ctx, &t, S, NULL, "adaptive_avg_pool_backward")) return tt_ir_builder_status(b);
    if (gt.rank != t.rank || gt.dtype != t.dtype) return tt_lower_unsupported(ctx, "adaptive_avg_pool_backward");
    int32_t lead = t.rank - S;
    for (int32_t d = 0; d < lead; d++)
        if (gt.dims[d] != t.dims[d]) return tt_lower_unsupported(ctx, "adaptive_avg_pool_backward");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    tt_ir_value g = tt_ir_convert(b, args[0].value, cdt);
    rs_win w[RS_MAXS];
    memset(w, 0, sizeof w);
    bool ok = true;
    for (int32_t s = 0; s < S && ok; s++) ok = rs_win_make(ctx, &w[s], t.dims[lead + s], gt.dims[lead + s]);
    if (ok) {
        g = tt_ir_binary(b, TT_OP_DIVIDE, g, rs_pool_counts(ctx, g, lead, S, w, cdt));
        for (int32_t s = S - 1; s >= 0; s--) {
            tt_ir_value acc = TT_IR_NONE;
            for (int64_t j = 0; j < w[s].k; j++) {
                tt_ir_value gj = g;
                if (j > 0) {
                    tt_ir_value m = tt_ir_compare(b, TT_CMP_NE,
                                                  rs_weights(ctx, g, lead + s, cdt, w[s].n, w[s].valid + j * w[s].n),
                                                  tt_lower_like(ctx, g, 0.0));
                    gj = tt_ir_select(b, m, g, tt_lower_like(ctx, g, 0.0));
                }
                tt_ir_value a = rs_put_add(ctx, gj, lead + s, w[s].in, w[s].idx + j * w[s].n);
                acc = j == 0 ? a : tt_ir_binary(b, TT_OP_ADD, acc, a);
            }
            g = acc;
        }
        outs[0] = tt_ir_convert(b, g, t.dtype);
    }
    for (int32_t s = 0; s < S; s++) rs_win_free(&w[s]);
    return tt_ir_builder_status(b);
}

/* adaptive max pooling when every input size is a multiple of its output size (global pooling included): the
 * windows tile the input, so a reshape exposes them ([lead, O0, k0, O1, k1, ..] moved to [lead, O.., k..]) and
 * no window table or gather is needed, whatever the window size. */
static tt_status rs_adaptive_max_tiled(tt_lower_ctx *ctx, tt_ir_value x, const tt_ir_type *t, int32_t S,
                                       const int64_t *osz, tt_ir_value *outs, int32_t nouts) {
    tt_ir_builder *b = ctx->b;
    int32_t lead = t->rank - S, r = lead + 2 * S;
    int64_t k[RS_MAXS], split[TT_MAX_RANK], perm[TT_MAX_RANK], od[TT_MAX_RANK], K = 1;
    for (int32_t d = 0; d < lead; d++) {
        split[d] = od[d] = t->dims[d];
        perm[d] = d;
    }
    for (int32_t s = 0; s < S; s++) {
        k[s] = t->dims[lead + s] / osz[s];
        K *= k[s];
        split[lead + 2 * s] = osz[s];
        split[lead + 2 * s + 1] = k[s];
        perm[lead + s] = lead + 2 * s;
        perm[lead + S + s] = lead + 2 * s + 1;
        od[lead + s] = osz[s];
    }
    od[lead + S] = K;
    int32_t rr = lead + S + 1;
    tt_ir_value v = tt_ir_reshape(b, tt_ir_transpose(b, tt_ir_reshape(b, x, r, split), perm), rr, od);
    int64_t kd = lead + S;
    outs[0] = tt_ir_reduce(b, TT_REDUCE_MAX, v, 1, &kd);
    if (nouts > 1) {
        /* flat index: sum over dims of (o_s * k_s + j_s) * stride_s, j from the window position q (row-major) */
        tt_ir_value q = tt_ir_arg_reduce(b, v, kd, false);
        tt_ir_value idx = tt_lower_full(ctx, TT_I64, rr - 1, od, 0.0), rem = q;
        int64_t stride = 1;
        for (int32_t s = S - 1; s >= 0; s--) {
            tt_ir_value ks = tt_lower_full(ctx, TT_I64, rr - 1, od, (double)k[s]);
            tt_ir_value j = tt_ir_binary(b, TT_OP_REMAINDER, rem, ks);
            rem = tt_ir_binary(b, TT_OP_DIVIDE, rem, ks);
            tt_ir_value pos = tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, rr - 1, od, lead + s), ks), j);
            idx = tt_ir_binary(b, TT_OP_ADD, idx, tt_ir_binary(b, TT_OP_MULTIPLY, pos, tt_lower_full(ctx, TT_I64, rr - 1, od, (double)stride)));
            stride *= t->dims[lead + s];
        }
        outs[1] = idx;
    }
    return tt_ir_builder_status(b);
}

/* adaptive_max_pool{2,3}d(self, output_size) -> (values, indices into the flattened spatial input). Windows are
 * gathered with a taps axis per dim, moved last and flattened; the value is their max, the index the first
 * maximum's (row-major window order, as PyTorch scans it). */
static tt_status rs_adaptive_max(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, tt_ir_value *outs,
                                 int32_t nouts) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (rs_pool_empty(ctx, &t, S, &args[1], nouts, outs)) return tt_ir_builder_status(b);
    if (!rs_pool_check(ctx, &t, S, &args[1], "adaptive_max_pool")) return tt_ir_builder_status(b);
    int32_t lead = t.rank - S;
    if (lead + 2 * S > TT_MAX_RANK) return tt_lower_unsupported(ctx, "adaptive_max_pool rank");
    bool tiled = true;
    for (int32_t s = 0; s < S; s++) tiled = tiled && t.dims[lead + s] % args[1].ints[s] == 0;
    if (tiled) return rs_adaptive_max_tiled(ctx, args[0].value, &t, S, args[1].ints, outs, nouts);
    rs_win w[RS_MAXS];
    memset(w, 0, sizeof w);
    int64_t K = 1, P = 1;
    bool ok = true;
    for (int32_t s = 0; s < S && ok; s++) {
        ok = rs_win_make(ctx, &w[s], t.dims[lead + s], args[1].ints[s]);
        if (ok) {
            K *= w[s].k;
            P *= w[s].n;
        }
    }
    int64_t *flat = NULL;
    if (ok && K > RS_POOL_MAX_TAPS * 4) ok = tt_lower_unsupported(ctx, "adaptive_max_pool window") == TT_OK;
    if (ok && !(flat = malloc(sizeof(int64_t) * (size_t)(P * K)))) {
        tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
        ok = false;
    }
    if (ok) {
        tt_ir_value v = args[0].value;
        int64_t cur[TT_MAX_RANK];
        int32_t r = t.rank;
        memcpy(cur, t.dims, sizeof cur);
        for (int32_t s = 0; s < S; s++) {
            int32_t d = lead + 2 * s; /* earlier spatial dims each gained a taps axis */
            int64_t n = w[s].n, k = w[s].k;
            int64_t *ix = malloc(sizeof(int64_t) * (size_t)(n * k));
            if (!ix) {
                tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
                break;
            }
            for (int64_t o = 0; o < n; o++)
                for (int64_t j = 0; j < k; j++) ix[o * k + j] = w[s].idx[j * n + o];
            v = rs_take(ctx, v, d, n * k, ix);
            free(ix);
            for (int32_t e = r; e > d + 1; e--) cur[e] = cur[e - 1];
            cur[d] = n;
            cur[d + 1] = k;
            r++;
            v = tt_ir_reshape(b, v, r, cur);
        }
        /* [lead, O0, K0, O1, K1, ..] -> [lead, O0, O1, .., K0, K1, ..] -> [lead, O.., K] */
        int64_t perm[TT_MAX_RANK], od[TT_MAX_RANK];
        for (int32_t d = 0; d < lead; d++) {
            perm[d] = d;
            od[d] = t.dims[d];
        }
        for (int32_t s = 0; s < S; s++) {
            perm[lead + s] = lead + 2 * s;
            perm[lead + S + s] = lead + 2 * s + 1;
            od[lead + s] = w[s].n;
        }
        v = tt_ir_transpose(b, v, perm);
        od[lead + S] = K;
        int32_t rr = lead + S + 1;
        v = tt_ir_reshape(b, v, rr, od);
        int64_t kd = lead + S;
        tt_ir_value vals = tt_ir_reduce(b, TT_REDUCE_MAX, v, 1, &kd);
        tt_ir_value am = tt_ir_arg_reduce(b, v, kd, false);
        /* flat input index of every (output, tap), row-major over outputs then taps */
        int64_t istride[RS_MAXS];
        for (int32_t s = S - 1; s >= 0; s--) istride[s] = s == S - 1 ? 1 : istride[s + 1] * w[s + 1].in;
        for (int64_t p = 0; p < P; p++) {
            int64_t oo[RS_MAXS], rem = p;
            for (int32_t s = S - 1; s >= 0; s--) {
                oo[s] = rem % w[s].n;
                rem /= w[s].n;
            }
            for (int64_t q = 0; q < K; q++) {
                int64_t jj = q, f = 0;
                for (int32_t s = S - 1; s >= 0; s--) {
                    int64_t j = jj % w[s].k;
                    jj /= w[s].k;
                    f += w[s].idx[j * w[s].n + oo[s]] * istride[s];
                }
                flat[p * K + q] = f;
            }
        }
        tt_ir_value tab = tt_ir_constant(b, TT_I64, S + 1, od + lead, flat);
        int64_t bmap[RS_MAXS + 1];
        for (int32_t s = 0; s <= S; s++) bmap[s] = lead + s;
        tab = tt_ir_broadcast_in_dim(b, tab, rr, od, bmap);
        int64_t amap[TT_MAX_RANK];
        for (int32_t d = 0; d < rr - 1; d++) amap[d] = d;
        tt_ir_value hit = tt_ir_compare(b, TT_CMP_EQ, tt_ir_iota(b, TT_I64, rr, od, kd),
                                        tt_ir_broadcast_in_dim(b, am, rr, od, amap));
        tt_ir_value idx = tt_ir_reduce(b, TT_REDUCE_MAX, tt_ir_select(b, hit, tab, tt_lower_like(ctx, tab, -1.0)), 1, &kd);
        outs[0] = vals;
        if (nouts > 1) outs[1] = idx;
    }
    free(flat);
    for (int32_t s = 0; s < S; s++) rs_win_free(&w[s]);
    return tt_ir_builder_status(b);
}

/* adaptive_max_pool{2,3}d_backward(grad_output, self, indices): scatter-add of grad at the saved indices. */
static tt_status rs_adaptive_max_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value), gt = tt_lower_type_copy(ctx, args[0].value), it = tt_lower_type_copy(ctx, args[2].value);
    if (tt_numel(t.rank, t.dims) == 0 && tt_dtype_is_float(t.dtype) && (t.rank == S + 1 || t.rank == S + 2)) {
        outs[0] = tt_lower_full(ctx, t.dtype, t.rank, t.dims, 0.0); /* empty batch */
        return tt_ir_builder_status(b);
    }
    if (!rs_pool_check(ctx, &t, S, NULL, "adaptive_max_pool_backward")) return tt_ir_builder_status(b);
    if (gt.rank != t.rank || gt.dtype != t.dtype || it.rank != gt.rank || it.dtype != TT_I64 ||
        memcmp(it.dims, gt.dims, sizeof(int64_t) * (size_t)gt.rank) != 0)
        return tt_lower_unsupported(ctx, "adaptive_max_pool_backward");
    int32_t lead = t.rank - S;
    int64_t B = 1, P = 1, Q = 1;
    for (int32_t d = 0; d < lead; d++) {
        if (gt.dims[d] != t.dims[d]) return tt_lower_unsupported(ctx, "adaptive_max_pool_backward");
        B *= t.dims[d];
    }
    for (int32_t s = 0; s < S; s++) {
        P *= gt.dims[lead + s];
        Q *= t.dims[lead + s];
    }
    if (P == 0) return tt_lower_unsupported(ctx, "adaptive_max_pool_backward");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    int64_t gd[2] = {B, P}, cd3[3] = {B, P, 1}, od[2] = {B, Q};
    tt_ir_value g = tt_ir_reshape(b, tt_ir_convert(b, args[0].value, cdt), 2, gd);
    tt_ir_value parts[2] = {tt_ir_iota(b, TT_I64, 3, cd3, 0), tt_ir_reshape(b, args[2].value, 3, cd3)};
    tt_ir_value coords = tt_ir_concatenate(b, 2, parts, 2);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.scatter.inserted_window_dims.n = 2;
    a.scatter.inserted_window_dims.v[0] = 0;
    a.scatter.inserted_window_dims.v[1] = 1;
    a.scatter.scatter_dims_to_operand_dims = a.scatter.inserted_window_dims;
    a.scatter.index_vector_dim = 2;
    a.scatter.kind = TT_REDUCE_ADD;
    a.scatter.check_bounds = true;
    tt_ir_value r = tt_ir_scatter(b, tt_lower_full(ctx, cdt, 2, od, 0.0), coords, g, &a);
    outs[0] = tt_ir_convert(b, tt_ir_reshape(b, r, t.rank, t.dims), t.dtype);
    return tt_ir_builder_status(b);
}

#define RS_ADAPTIVE_AVG(S)                                                                                        \
    static tt_status tt_lower_adaptive_avg_pool##S##d(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,       \
                                                      tt_ir_value *outs, int32_t nouts) {                         \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        return rs_adaptive_avg(ctx, args, S, outs);                                                              \
    }                                                                                                            \
    static tt_status tt_lower_adaptive_avg_pool##S##d_backward(tt_lower_ctx *ctx, const tt_arg *args,            \
                                                               int32_t nargs, tt_ir_value *outs, int32_t nouts) { \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        return rs_adaptive_avg_bwd(ctx, args, S, outs);                                                          \
    }
#define RS_ADAPTIVE_MAX(S)                                                                                        \
    static tt_status tt_lower_adaptive_max_pool##S##d(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,       \
                                                      tt_ir_value *outs, int32_t nouts) {                         \
        (void)nargs;                                                                                             \
        return rs_adaptive_max(ctx, args, S, outs, nouts);                                                       \
    }                                                                                                            \
    static tt_status tt_lower_adaptive_max_pool##S##d_backward(tt_lower_ctx *ctx, const tt_arg *args,            \
                                                               int32_t nargs, tt_ir_value *outs, int32_t nouts) { \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        return rs_adaptive_max_bwd(ctx, args, S, outs);                                                          \
    }

/* (_adaptive_avg_pool2d lives in conv.c) */
RS_ADAPTIVE_AVG(3)
RS_ADAPTIVE_MAX(2)
RS_ADAPTIVE_MAX(3)

const tt_lower_entry tt_lower_table_resample[] = {
    {"aten::upsample_nearest1d", tt_lower_upsample_nearest1d},
    {"aten::upsample_nearest2d", tt_lower_upsample_nearest2d},
    {"aten::upsample_nearest3d", tt_lower_upsample_nearest3d},
    {"aten::_upsample_nearest_exact1d", tt_lower_upsample_nearest_exact1d},
    {"aten::_upsample_nearest_exact2d", tt_lower_upsample_nearest_exact2d},
    {"aten::_upsample_nearest_exact3d", tt_lower_upsample_nearest_exact3d},
    {"aten::upsample_linear1d", tt_lower_upsample_linear1d},
    {"aten::upsample_bilinear2d", tt_lower_upsample_bilinear2d},
    {"aten::upsample_trilinear3d", tt_lower_upsample_trilinear3d},
    {"aten::upsample_bicubic2d", tt_lower_upsample_bicubic2d},
    {"aten::upsample_nearest1d_backward", tt_lower_upsample_nearest1d_backward},
    {"aten::upsample_nearest2d_backward", tt_lower_upsample_nearest2d_backward},
    {"aten::upsample_nearest3d_backward", tt_lower_upsample_nearest3d_backward},
    {"aten::_upsample_nearest_exact1d_backward", tt_lower_upsample_nearest_exact1d_backward},
    {"aten::_upsample_nearest_exact2d_backward", tt_lower_upsample_nearest_exact2d_backward},
    {"aten::_upsample_nearest_exact3d_backward", tt_lower_upsample_nearest_exact3d_backward},
    {"aten::upsample_linear1d_backward", tt_lower_upsample_linear1d_backward},
    {"aten::upsample_bilinear2d_backward", tt_lower_upsample_bilinear2d_backward},
    {"aten::upsample_trilinear3d_backward", tt_lower_upsample_trilinear3d_backward},
    {"aten::upsample_bicubic2d_backward", tt_lower_upsample_bicubic2d_backward},
    {"aten::_upsample_bilinear2d_aa", tt_lower_upsample_bilinear2d_aa},
    {"aten::_upsample_bicubic2d_aa", tt_lower_upsample_bicubic2d_aa},
    {"aten::_upsample_bilinear2d_aa_backward", tt_lower_upsample_bilinear2d_aa_backward},
    {"aten::_upsample_bicubic2d_aa_backward", tt_lower_upsample_bicubic2d_aa_backward},
    {"aten::reflection_pad1d", tt_lower_reflection_pad1d},
    {"aten::reflection_pad2d", tt_lower_reflection_pad2d},
    {"aten::reflection_pad3d", tt_lower_reflection_pad3d},
    {"aten::replication_pad1d", tt_lower_replication_pad1d},
    {"aten::replication_pad2d", tt_lower_replication_pad2d},
    {"aten::replication_pad3d", tt_lower_replication_pad3d},
    {"aten::reflection_pad1d_backward", tt_lower_reflection_pad1d_backward},
    {"aten::reflection_pad2d_backward", tt_lower_reflection_pad2d_backward},
    {"aten::reflection_pad3d_backward", tt_lower_reflection_pad3d_backward},
    {"aten::replication_pad1d_backward", tt_lower_replication_pad1d_backward},
    {"aten::replication_pad2d_backward", tt_lower_replication_pad2d_backward},
    {"aten::replication_pad3d_backward", tt_lower_replication_pad3d_backward},
    {"aten::_adaptive_avg_pool3d", tt_lower_adaptive_avg_pool3d},
    {"aten::_adaptive_avg_pool3d_backward", tt_lower_adaptive_avg_pool3d_backward},
    {"aten::adaptive_max_pool2d", tt_lower_adaptive_max_pool2d},
    {"aten::adaptive_max_pool2d_backward", tt_lower_adaptive_max_pool2d_backward},
    {"aten::adaptive_max_pool3d", tt_lower_adaptive_max_pool3d},
    {"aten::adaptive_max_pool3d_backward", tt_lower_adaptive_max_pool3d_backward},
    {NULL, NULL},
};
