/* resample.c — lowerings that move data by index tables fixed at lowering time: upsample_nearest{1,2,3}d,
 * _upsample_nearest_exact{1,2,3}d, upsample_linear1d, upsample_bilinear2d, upsample_trilinear3d (all + backward),
 * reflection_pad{1,2,3}d and replication_pad{1,2,3}d (+ backward).
 *
 * Every one of them is separable: along each spatial dim, output position o reads input positions idx0[o] (and
 * idx1[o] with weights l0[o], l1[o] for linear modes). Those tables depend only on sizes, scales and
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

static tt_ir_type rs_type(tt_lower_ctx *ctx, tt_ir_value v) {
    tt_ir_type t;
    memset(&t, 0, sizeof t);
    const tt_ir_type *p = v == TT_IR_NONE ? NULL : tt_lower_type(ctx, v);
    if (p) t = *p;
    return t;
}

static tt_status rs_unsupported(tt_lower_ctx *ctx, const char *what) {
    return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "%s: unsupported arguments on tpu", what);
}

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
    tt_ir_type t = rs_type(ctx, x);
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
    tt_ir_type t = rs_type(ctx, g);
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
    tt_ir_type t = rs_type(ctx, like);
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

typedef struct rs_table {
    int64_t n;        /* output size along the dim */
    int64_t in;       /* input size along the dim */
    int64_t *i0, *i1; /* owned */
    double *l0, *l1;  /* owned; NULL for nearest/pad */
} rs_table;

static void rs_table_free(rs_table *tb) {
    free(tb->i0);
    free(tb->i1);
    free(tb->l0);
    free(tb->l1);
    memset(tb, 0, sizeof *tb);
}

static bool rs_table_alloc(tt_lower_ctx *ctx, rs_table *tb, int64_t n, int64_t in, bool linear) {
    memset(tb, 0, sizeof *tb);
    tb->n = n;
    tb->in = in;
    size_t k = (size_t)(n > 0 ? n : 1);
    tb->i0 = malloc(sizeof(int64_t) * k);
    if (linear) {
        tb->i1 = malloc(sizeof(int64_t) * k);
        tb->l0 = malloc(sizeof(double) * k);
        tb->l1 = malloc(sizeof(double) * k);
    }
    if (!tb->i0 || (linear && (!tb->i1 || !tb->l0 || !tb->l1))) {
        rs_table_free(tb);
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
        return false;
    }
    return true;
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
    if (!rs_table_alloc(ctx, tb, out, in, false)) return false;
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
        tb->i0[o] = i < in - 1 ? i : in - 1;
    }
    return true;
}

/* Linear interpolation indices and weights; opmath f32 (f64 for f64 inputs) like the CPU kernel. */
static bool rs_linear_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t out, bool align, bool has,
                            double scale, bool dbl) {
    if (!rs_table_alloc(ctx, tb, out, in, true)) return false;
    for (int64_t o = 0; o < out; o++) {
        if (out == in) {
            tb->i0[o] = tb->i1[o] = o;
            tb->l0[o] = 1.0;
            tb->l1[o] = 0.0;
            continue;
        }
        int64_t i0;
        double lam1;
        if (dbl) {
            double s = align ? (out > 1 ? (double)(in - 1) / (double)(out - 1) : 0.0) : rs_scale_d(has, scale, in, out);
            double src = align ? s * (double)o : s * ((double)o + 0.5) - 0.5;
            if (!align && src < 0.0) src = 0.0;
            i0 = (int64_t)floor(src);
            if (i0 > in - 1) i0 = in - 1;
            double l = src - (double)i0;
            lam1 = l < 0.0 ? 0.0 : (l > 1.0 ? 1.0 : l);
            tb->l0[o] = 1.0 - lam1;
        } else {
            float s = align ? (out > 1 ? (float)(in - 1) / (float)(out - 1) : 0.0f) : rs_scale_f(has, scale, in, out);
            float src = align ? s * (float)o : s * ((float)o + 0.5f) - 0.5f;
            if (!align && src < 0.0f) src = 0.0f;
            i0 = (int64_t)floorf(src);
            if (i0 > in - 1) i0 = in - 1;
            float l = src - (float)i0;
            float lf = l < 0.0f ? 0.0f : (l > 1.0f ? 1.0f : l);
            lam1 = lf;
            tb->l0[o] = (double)(1.0f - lf);
        }
        tb->i0[o] = i0;
        tb->i1[o] = i0 + (i0 < in - 1 ? 1 : 0);
        tb->l1[o] = lam1;
    }
    return true;
}

/* Pad tables: output o reads input i = o - lo, reflected or clamped into [0, in). */
static bool rs_pad_table(tt_lower_ctx *ctx, rs_table *tb, int64_t in, int64_t lo, int64_t hi, bool reflect) {
    int64_t out = in + lo + hi;
    if (!rs_table_alloc(ctx, tb, out, in, false)) return false;
    for (int64_t o = 0; o < out; o++) {
        int64_t i = o - lo;
        if (reflect) {
            if (i < 0) i = -i;
            if (i >= in) i = 2 * (in - 1) - i;
        } else {
            if (i < 0) i = 0;
            if (i >= in) i = in - 1;
        }
        tb->i0[o] = i;
    }
    return true;
}

/* Applies one dim's table forward (gather, weighted for linear modes) in compute dtype cdt. */
static tt_ir_value rs_apply(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, const rs_table *tb, tt_dtype cdt) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value a = rs_take(ctx, x, dim, tb->n, tb->i0);
    if (!tb->l0) return a;
    tt_ir_value c = rs_take(ctx, x, dim, tb->n, tb->i1);
    tt_ir_value w0 = rs_weights(ctx, a, dim, cdt, tb->n, tb->l0);
    tt_ir_value w1 = rs_weights(ctx, a, dim, cdt, tb->n, tb->l1);
    return tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, a, w0), tt_ir_binary(b, TT_OP_MULTIPLY, c, w1));
}

/* The adjoint of rs_apply. */
static tt_ir_value rs_apply_bwd(tt_lower_ctx *ctx, tt_ir_value g, int64_t dim, const rs_table *tb, tt_dtype cdt) {
    tt_ir_builder *b = ctx->b;
    if (!tb->l0) return rs_put_add(ctx, g, dim, tb->in, tb->i0);
    tt_ir_value w0 = rs_weights(ctx, g, dim, cdt, tb->n, tb->l0);
    tt_ir_value w1 = rs_weights(ctx, g, dim, cdt, tb->n, tb->l1);
    tt_ir_value a = rs_put_add(ctx, tt_ir_binary(b, TT_OP_MULTIPLY, g, w0), dim, tb->in, tb->i0);
    tt_ir_value c = rs_put_add(ctx, tt_ir_binary(b, TT_OP_MULTIPLY, g, w1), dim, tb->in, tb->i1);
    return tt_ir_binary(b, TT_OP_ADD, a, c);
}

/* ---- upsample ---- */

typedef enum rs_mode { RS_NEAREST, RS_NEAREST_EXACT, RS_LINEAR } rs_mode;

/* Resamples the last S dims of x (rank S + 2) to out[0..S); scales[s] valid when has[s]. Innermost dim first
 * (PyTorch's evaluation order). bwd: x is grad_output, in gives the input's spatial sizes. */
static tt_status rs_upsample(tt_lower_ctx *ctx, tt_ir_value x, int32_t S, const int64_t *in, const int64_t *out,
                             const bool *has, const double *scales, rs_mode mode, bool align, bool bwd,
                             tt_ir_value *res) {
    tt_ir_type t = rs_type(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (t.rank != S + 2) return rs_unsupported(ctx, "upsample rank");
    bool isf = tt_dtype_is_float(t.dtype);
    if (mode == RS_LINEAR || bwd) {
        if (!isf) return rs_unsupported(ctx, "upsample dtype");
    } else if (t.dtype == TT_BOOL) {
        return rs_unsupported(ctx, "upsample dtype");
    }
    for (int32_t s = 0; s < S; s++) {
        if (in[s] <= 0 || out[s] <= 0) return rs_unsupported(ctx, "upsample empty");
        if (t.dims[2 + s] != (bwd ? out[s] : in[s])) return rs_unsupported(ctx, "upsample sizes");
    }
    if (t.dims[0] == 0 || t.dims[1] == 0) return rs_unsupported(ctx, "upsample empty");
    tt_dtype cdt = isf ? tt_lower_opmath(t.dtype) : t.dtype;
    tt_ir_value v = tt_ir_convert(ctx->b, x, cdt);
    for (int32_t s = S - 1; s >= 0; s--) {
        rs_table tb;
        bool ok = mode == RS_LINEAR
                      ? rs_linear_table(ctx, &tb, in[s], out[s], align, has[s], scales[s], cdt == TT_F64)
                      : rs_nearest_table(ctx, &tb, in[s], out[s], has[s], scales[s], mode == RS_NEAREST_EXACT);
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
    if (args[1].kind != TT_ARG_INTS || args[1].n != S) return rs_unsupported(ctx, "upsample output_size");
    tt_ir_type t = rs_type(ctx, args[0].value);
    if (t.rank != S + 2) return rs_unsupported(ctx, "upsample rank");
    bool align = false;
    int32_t first = 2;
    if (mode == RS_LINEAR) {
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
        return rs_unsupported(ctx, "upsample_backward sizes");
    tt_ir_type t = rs_type(ctx, args[0].value);
    if (t.rank != S + 2 || t.dims[0] != args[2].ints[0] || t.dims[1] != args[2].ints[1])
        return rs_unsupported(ctx, "upsample_backward sizes");
    bool align = false;
    int32_t first = 3;
    if (mode == RS_LINEAR) {
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

/* ---- reflection / replication padding ---- */

/* Pads the last S dims of x by padding = [lo_last, hi_last, lo_prev, hi_prev, ...] (PyTorch order). bwd: x is
 * grad_output and self gives the input shape. */
static tt_status rs_pad(tt_lower_ctx *ctx, const tt_arg *args, int32_t S, bool reflect, bool bwd,
                        tt_ir_value *outs) {
    const char *name = reflect ? "reflection_pad" : "replication_pad";
    int32_t pi = bwd ? 2 : 1;
    tt_ir_value x = args[0].value;
    tt_ir_type self = rs_type(ctx, bwd ? args[1].value : x);
    tt_ir_type xt = rs_type(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (args[pi].kind != TT_ARG_INTS || args[pi].n != 2 * S) return rs_unsupported(ctx, name);
    if (self.rank != S + 1 && self.rank != S + 2) return rs_unsupported(ctx, name);
    if (xt.rank != self.rank) return rs_unsupported(ctx, name);
    if (bwd ? !tt_dtype_is_float(xt.dtype) : xt.dtype == TT_BOOL) return rs_unsupported(ctx, name);
    int32_t r = self.rank;
    for (int32_t d = 0; d < r - S; d++)
        if (self.dims[d] == 0 || xt.dims[d] != self.dims[d]) return rs_unsupported(ctx, name);
    int64_t lo[RS_MAXS], hi[RS_MAXS];
    for (int32_t s = 0; s < S; s++) {
        int32_t d = r - S + s;             /* tensor dim */
        int32_t k = 2 * (S - 1 - s);        /* its pair in padding: last dim first */
        lo[s] = args[pi].ints[k];
        hi[s] = args[pi].ints[k + 1];
        int64_t in = self.dims[d];
        if (in <= 0) return rs_unsupported(ctx, name);
        if (reflect && (lo[s] >= in || hi[s] >= in))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Argument #4: Padding size should be less than the corresponding input "
                                      "dimension, but got: padding (%lld, %lld) at dimension %d of input %d",
                                      (long long)lo[s], (long long)hi[s], (int)d, (int)r);
        if (in + lo[s] + hi[s] <= 0 || lo[s] < -in || hi[s] < -in) return rs_unsupported(ctx, name);
        if (bwd && xt.dims[d] != in + lo[s] + hi[s]) return rs_unsupported(ctx, name);
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
    {"aten::upsample_nearest1d_backward", tt_lower_upsample_nearest1d_backward},
    {"aten::upsample_nearest2d_backward", tt_lower_upsample_nearest2d_backward},
    {"aten::upsample_nearest3d_backward", tt_lower_upsample_nearest3d_backward},
    {"aten::_upsample_nearest_exact1d_backward", tt_lower_upsample_nearest_exact1d_backward},
    {"aten::_upsample_nearest_exact2d_backward", tt_lower_upsample_nearest_exact2d_backward},
    {"aten::_upsample_nearest_exact3d_backward", tt_lower_upsample_nearest_exact3d_backward},
    {"aten::upsample_linear1d_backward", tt_lower_upsample_linear1d_backward},
    {"aten::upsample_bilinear2d_backward", tt_lower_upsample_bilinear2d_backward},
    {"aten::upsample_trilinear3d_backward", tt_lower_upsample_trilinear3d_backward},
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
    {NULL, NULL},
};
