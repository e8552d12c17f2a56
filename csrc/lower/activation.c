/* activation.c — lowerings of activation functions and the backward ops autograd calls for them (second file
 * of the elementwise family). Float inputs only (PyTorch has no integer kernels for these, except relu,
 * hardtanh and threshold); bf16/f16 compute in f32 and convert back, as PyTorch CPU does. */
#include <float.h>
#include "tt_lower.h"

#include <math.h>
#include <string.h>

#define LOWER_ARGS tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts
#define UNUSED_ARGS \
    (void)nargs;    \
    (void)nouts

static tt_ir_value un(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x) { return tt_ir_unary(ctx->b, op, x); }
static tt_ir_value bin(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x, tt_ir_value y) {
    return tt_ir_binary(ctx->b, op, x, y);
}
static tt_ir_value add(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value y) { return bin(ctx, TT_OP_ADD, x, y); }
static tt_ir_value sub(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value y) { return bin(ctx, TT_OP_SUBTRACT, x, y); }
static tt_ir_value mul(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value y) { return bin(ctx, TT_OP_MULTIPLY, x, y); }
static tt_ir_value dvd(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value y) { return bin(ctx, TT_OP_DIVIDE, x, y); }
static tt_ir_value cmp(tt_lower_ctx *ctx, tt_ir_cmp dir, tt_ir_value x, tt_ir_value y) {
    return tt_ir_compare(ctx->b, dir, x, y);
}
static tt_ir_value sel(tt_lower_ctx *ctx, tt_ir_value p, tt_ir_value a, tt_ir_value b) {
    return tt_ir_select(ctx->b, p, a, b);
}
static tt_ir_value kl(tt_lower_ctx *ctx, tt_ir_value x, double v) { return tt_lower_like(ctx, x, v); }

/* Input x (args[ix]) as the opmath type; *dt its dtype. False when not a float tensor (unsupported). */
static bool float_in(tt_lower_ctx *ctx, const tt_arg *args, int32_t ix, tt_dtype *dt, tt_ir_value *x,
                     const char *name) {
    *dt = tt_lower_dtype_of(ctx, args[ix].value);
    if (!tt_dtype_is_float(*dt)) {
        tt_lower_unsupported_dtype(ctx, name, *dt);
        return false;
    }
    *x = tt_ir_convert(ctx->b, args[ix].value, tt_lower_opmath(*dt));
    return true;
}

/* Backward inputs: grad (args[ig]) and x (args[ix]) broadcast together in the opmath type of their promoted
 * dtype *dt. */
static bool float_in2(tt_lower_ctx *ctx, const tt_arg *args, int32_t ig, int32_t ix, tt_dtype *dt, tt_ir_value *g,
                      tt_ir_value *x, const char *name) {
    int32_t idx[2] = {ig, ix};
    *dt = tt_lower_result_type_ctx(ctx, args, 2, idx);
    if (!tt_dtype_is_float(*dt)) {
        tt_lower_unsupported_dtype(ctx, name, *dt);
        return false;
    }
    tt_dtype ct = tt_lower_opmath(*dt);
    tt_ir_value v[2] = {tt_lower_arg(ctx, &args[ig], ct), tt_lower_arg(ctx, &args[ix], ct)};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return false;
    *g = v[0];
    *x = v[1];
    return true;
}

static tt_ir_value sigmoid_v(tt_lower_ctx *ctx, tt_ir_value x) { return un(ctx, TT_OP_LOGISTIC, x); }

/* ---- forward ---- */

static tt_status tt_lower_relu(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (dt == TT_BOOL)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "Boolean inputs not supported for relu");
    if (dt == TT_U8) return tt_lower_done(ctx, outs, x, dt);
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_MAXIMUM, x, kl(ctx, x, 0.0)), dt); /* relu(NaN) = NaN */
}

static tt_status tt_lower_leaky_relu(LOWER_ARGS) {
    (void)nouts;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "leaky_relu")) return tt_ir_builder_status(ctx->b);
    tt_ir_value slope = nargs > 1 && args[1].kind != TT_ARG_NONE ? tt_lower_arg_like(ctx, &args[1], x) : kl(ctx, x, 0.01);
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, 0.0)), x, mul(ctx, x, slope));
    return tt_lower_done(ctx, outs, r, dt);
}

/* elu(x; alpha, scale, input_scale) = x > 0 ? scale * x : alpha * scale * expm1(x * input_scale). */
static tt_status tt_lower_elu(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "elu")) return tt_ir_builder_status(ctx->b);
    tt_ir_value alpha = tt_lower_arg_like(ctx, &args[1], x), scale = tt_lower_arg_like(ctx, &args[2], x),
                iscale = tt_lower_arg_like(ctx, &args[3], x);
    tt_ir_value neg = mul(ctx, mul(ctx, alpha, scale), un(ctx, TT_OP_EXPM1, mul(ctx, x, iscale)));
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, 0.0)), mul(ctx, x, scale), neg);
    return tt_lower_done(ctx, outs, r, dt);
}

/* celu(x, alpha) = elu(x, alpha, 1, 1 / alpha). */
static tt_status tt_lower_celu(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "celu")) return tt_ir_builder_status(ctx->b);
    tt_ir_value alpha = tt_lower_arg_like(ctx, &args[1], x);
    tt_ir_value neg = mul(ctx, alpha, un(ctx, TT_OP_EXPM1, dvd(ctx, x, alpha)));
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, 0.0)), x, neg);
    return tt_lower_done(ctx, outs, r, dt);
}

static bool gelu_tanh_mode(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, int32_t i, bool *ok) {
    *ok = true;
    if (i >= nargs || args[i].kind != TT_ARG_STRING || !args[i].s) return false;
    if (strcmp(args[i].s, "tanh") == 0) return true;
    if (strcmp(args[i].s, "none") == 0) return false;
    *ok = false;
    tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "approximate argument must be either none or tanh.");
    return false;
}

#define GELU_KALPHA 0.70710678118654752440 /* 1/sqrt(2) */
#define GELU_KBETA 0.79788456080286535588  /* sqrt(2/pi) */
#define GELU_KKAPPA 0.044715

static tt_status tt_lower_gelu(LOWER_ARGS) {
    (void)nouts;
    bool ok;
    bool tanh_mode = gelu_tanh_mode(ctx, args, nargs, 1, &ok);
    if (!ok) return tt_ir_builder_status(ctx->b);
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "gelu")) return tt_ir_builder_status(ctx->b);
    tt_ir_value half = kl(ctx, x, 0.5), one = kl(ctx, x, 1.0), r;
    if (tanh_mode) {
        tt_ir_value cube = mul(ctx, mul(ctx, x, x), x);
        tt_ir_value inner = mul(ctx, kl(ctx, x, GELU_KBETA), add(ctx, x, mul(ctx, kl(ctx, x, GELU_KKAPPA), cube)));
        r = mul(ctx, mul(ctx, half, x), add(ctx, one, un(ctx, TT_OP_TANH, inner)));
    } else {
        r = mul(ctx, mul(ctx, x, half), add(ctx, one, un(ctx, TT_OP_ERF, mul(ctx, x, kl(ctx, x, GELU_KALPHA)))));
    }
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_silu(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "silu")) return tt_ir_builder_status(ctx->b);
    tt_ir_value r = dvd(ctx, x, add(ctx, kl(ctx, x, 1.0), un(ctx, TT_OP_EXP, un(ctx, TT_OP_NEGATE, x))));
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_ir_value softplus1(tt_lower_ctx *ctx, tt_ir_value x) { return un(ctx, TT_OP_LOG1P, un(ctx, TT_OP_EXP, x)); }

static tt_status tt_lower_mish(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "mish")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, mul(ctx, x, un(ctx, TT_OP_TANH, softplus1(ctx, x))), dt);
}

static tt_status tt_lower_hardtanh(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "hardtanh", dt);
    tt_ir_value lo = tt_lower_arg_like(ctx, &args[1], x), hi = tt_lower_arg_like(ctx, &args[2], x);
    tt_ir_value r = bin(ctx, TT_OP_MINIMUM, bin(ctx, TT_OP_MAXIMUM, x, lo), hi);
    return tt_lower_done(ctx, outs, r, dt);
}

/* relu6(x) clamp to [0, 6] as a float computation: min(max(x + 3, 0), 6) / 6 for hardsigmoid. */
static tt_ir_value relu6_shift(tt_lower_ctx *ctx, tt_ir_value x) {
    tt_ir_value t = bin(ctx, TT_OP_MAXIMUM, add(ctx, x, kl(ctx, x, 3.0)), kl(ctx, x, 0.0));
    return bin(ctx, TT_OP_MINIMUM, t, kl(ctx, x, 6.0));
}

static tt_status tt_lower_hardsigmoid(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "hardsigmoid")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, dvd(ctx, relu6_shift(ctx, x), kl(ctx, x, 6.0)), dt);
}

static tt_status tt_lower_hardswish(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "hardswish")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, dvd(ctx, mul(ctx, x, relu6_shift(ctx, x)), kl(ctx, x, 6.0)), dt);
}

/* softplus(x; beta, threshold) = x * beta > threshold ? x : log1p(exp(x * beta)) / beta. */
static tt_status tt_lower_softplus(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "softplus")) return tt_ir_builder_status(ctx->b);
    tt_ir_value beta = tt_lower_arg_like(ctx, &args[1], x), th = tt_lower_arg_like(ctx, &args[2], x);
    tt_ir_value xb = mul(ctx, x, beta);
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_GT, xb, th), x, dvd(ctx, softplus1(ctx, xb), beta));
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_threshold(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "threshold", dt);
    tt_ir_value th = tt_lower_arg_like(ctx, &args[1], x), val = tt_lower_arg_like(ctx, &args[2], x);
    return tt_lower_done(ctx, outs, sel(ctx, cmp(ctx, TT_CMP_LE, x, th), val, x), dt);
}

static tt_status shrink(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool soft) {
    tt_dtype dt;
    tt_ir_value x;
    if (!float_in(ctx, args, 0, &dt, &x, "shrink")) return tt_ir_builder_status(ctx->b);
    tt_ir_value l = tt_lower_arg_like(ctx, &args[1], x), zero = kl(ctx, x, 0.0);
    tt_ir_value r;
    if (soft) { /* x > l ? x - l : x < -l ? x + l : x * 0 (CPU's: NaN stays NaN, -0.5 gives -0) */
        r = sel(ctx, cmp(ctx, TT_CMP_GT, x, l), sub(ctx, x, l),
                sel(ctx, cmp(ctx, TT_CMP_LT, x, un(ctx, TT_OP_NEGATE, l)), add(ctx, x, l), mul(ctx, x, zero)));
    } else { /* -l <= x <= l ? 0 : x */
        tt_ir_value in = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_GE, x, un(ctx, TT_OP_NEGATE, l)), cmp(ctx, TT_CMP_LE, x, l));
        r = sel(ctx, in, zero, x);
    }
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_softshrink(LOWER_ARGS) {
    UNUSED_ARGS;
    const tt_arg *a = &args[1];
    double l = a->kind == TT_ARG_SCALAR && a->dtype == TT_I64 ? (double)a->i : a->f;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    double hi = dt == TT_F16 ? 65504.0 : dt == TT_BF16 ? 3.38953139e38 : dt == TT_F64 ? DBL_MAX : FLT_MAX;
    if (a->kind == TT_ARG_SCALAR && a->dtype != TT_BOOL && !(l >= 0 && l <= hi)) /* CPU's check and message */
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "lambda must be in range [0, %g] for input dtype %s, but found %g", hi,
                                  dt == TT_F16 ? "Half" : dt == TT_BF16 ? "BFloat16" : dt == TT_F64 ? "Double" : "Float",
                                  l);
    return shrink(ctx, args, outs, true);
}
static tt_status tt_lower_hardshrink(LOWER_ARGS) {
    UNUSED_ARGS;
    return shrink(ctx, args, outs, false);
}

static tt_status tt_lower_prelu_kernel(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x, w;
    if (!float_in2(ctx, args, 0, 1, &dt, &x, &w, "_prelu_kernel")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, sel(ctx, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, 0.0)), x, mul(ctx, w, x)), dt);
}

/* ---- backward ---- */

static tt_status tt_lower_threshold_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    int32_t idx[2] = {0, 1};
    tt_dtype dt = tt_lower_result_type_ctx(ctx, args, 2, idx);
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "threshold_backward", dt);
    tt_ir_value v[2] = {tt_ir_convert(ctx->b, args[0].value, dt), tt_ir_convert(ctx->b, args[1].value, dt)};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value th = tt_lower_arg_like(ctx, &args[2], v[1]);
    return tt_lower_done(ctx, outs, sel(ctx, cmp(ctx, TT_CMP_LE, v[1], th), kl(ctx, v[0], 0.0), v[0]), dt);
}

static tt_status tt_lower_gelu_backward(LOWER_ARGS) {
    (void)nouts;
    bool ok;
    bool tanh_mode = gelu_tanh_mode(ctx, args, nargs, 2, &ok);
    if (!ok) return tt_ir_builder_status(ctx->b);
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "gelu_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value half = kl(ctx, x, 0.5), one = kl(ctx, x, 1.0), d;
    if (tanh_mode) {
        tt_ir_value x2 = mul(ctx, x, x), x3 = mul(ctx, x2, x);
        tt_ir_value inner = mul(ctx, kl(ctx, x, GELU_KBETA), add(ctx, x, mul(ctx, kl(ctx, x, GELU_KKAPPA), x3)));
        tt_ir_value t = un(ctx, TT_OP_TANH, inner);
        tt_ir_value left = mul(ctx, half, x), right = add(ctx, one, t);
        tt_ir_value left_d = mul(ctx, half, right);
        tt_ir_value tanh_d = sub(ctx, one, mul(ctx, t, t));
        tt_ir_value inner_d =
            mul(ctx, kl(ctx, x, GELU_KBETA), add(ctx, one, mul(ctx, kl(ctx, x, 3.0 * GELU_KKAPPA), x2)));
        tt_ir_value right_d = mul(ctx, mul(ctx, left, tanh_d), inner_d);
        d = add(ctx, left_d, right_d);
    } else {
        tt_ir_value cdf = mul(ctx, half, add(ctx, one, un(ctx, TT_OP_ERF, mul(ctx, x, kl(ctx, x, GELU_KALPHA)))));
        tt_ir_value pdf = mul(ctx, un(ctx, TT_OP_EXP, mul(ctx, kl(ctx, x, -0.5), mul(ctx, x, x))),
                              kl(ctx, x, 0.39894228040143267794 /* 1/sqrt(2pi) */));
        d = add(ctx, cdf, mul(ctx, x, pdf));
    }
    return tt_lower_done(ctx, outs, mul(ctx, g, d), dt);
}

static tt_status tt_lower_silu_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "silu_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value one = kl(ctx, x, 1.0);
    tt_ir_value s = dvd(ctx, one, add(ctx, one, un(ctx, TT_OP_EXP, un(ctx, TT_OP_NEGATE, x))));
    tt_ir_value d = mul(ctx, s, add(ctx, one, mul(ctx, x, sub(ctx, one, s))));
    return tt_lower_done(ctx, outs, mul(ctx, g, d), dt);
}

static tt_status tt_lower_sigmoid_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, y;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &y, "sigmoid_backward")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, mul(ctx, mul(ctx, g, sub(ctx, kl(ctx, y, 1.0), y)), y), dt);
}

static tt_status tt_lower_tanh_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, y;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &y, "tanh_backward")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, mul(ctx, g, sub(ctx, kl(ctx, y, 1.0), mul(ctx, y, y))), dt);
}

static tt_status tt_lower_leaky_relu_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "leaky_relu_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value slope = tt_lower_arg_like(ctx, &args[2], x);
    return tt_lower_done(ctx, outs, sel(ctx, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, 0.0)), g, mul(ctx, g, slope)), dt);
}

/* elu_backward(grad, alpha, scale, input_scale, is_result, self_or_result). */
static tt_status tt_lower_elu_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 5, &dt, &g, &x, "elu_backward")) return tt_ir_builder_status(ctx->b);
    bool is_result = args[4].kind == TT_ARG_BOOL && args[4].b;
    tt_ir_value alpha = tt_lower_arg_like(ctx, &args[1], x), scale = tt_lower_arg_like(ctx, &args[2], x),
                iscale = tt_lower_arg_like(ctx, &args[3], x);
    tt_ir_value negcoef = mul(ctx, alpha, scale);
    tt_ir_value neg = is_result ? mul(ctx, mul(ctx, g, iscale), add(ctx, x, negcoef))
                                : mul(ctx, mul(ctx, mul(ctx, g, iscale), negcoef),
                                      un(ctx, TT_OP_EXP, mul(ctx, x, iscale)));
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_LE, x, kl(ctx, x, 0.0)), neg, mul(ctx, g, scale));
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_hardtanh_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "hardtanh_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value lo = tt_lower_arg_like(ctx, &args[2], x), hi = tt_lower_arg_like(ctx, &args[3], x);
    tt_ir_value out = bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_LE, x, lo), cmp(ctx, TT_CMP_GE, x, hi));
    return tt_lower_done(ctx, outs, sel(ctx, out, kl(ctx, g, 0.0), g), dt);
}

static tt_status tt_lower_softplus_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "softplus_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value beta = tt_lower_arg_like(ctx, &args[2], x), th = tt_lower_arg_like(ctx, &args[3], x);
    tt_ir_value xb = mul(ctx, x, beta);
    tt_ir_value z = un(ctx, TT_OP_EXP, xb);
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_GT, xb, th), g, dvd(ctx, mul(ctx, g, z), add(ctx, z, kl(ctx, z, 1.0))));
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_hardsigmoid_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "hardsigmoid_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value in = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_GT, x, kl(ctx, x, -3.0)), cmp(ctx, TT_CMP_LT, x, kl(ctx, x, 3.0)));
    return tt_lower_done(ctx, outs, sel(ctx, in, dvd(ctx, g, kl(ctx, g, 6.0)), kl(ctx, g, 0.0)), dt);
}

static tt_status tt_lower_hardswish_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "hardswish_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value mid = mul(ctx, g, add(ctx, dvd(ctx, x, kl(ctx, x, 3.0)), kl(ctx, x, 0.5)));
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_LT, x, kl(ctx, x, -3.0)), kl(ctx, g, 0.0),
                        sel(ctx, cmp(ctx, TT_CMP_LE, x, kl(ctx, x, 3.0)), mid, g));
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_mish_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "mish_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value one = kl(ctx, x, 1.0);
    tt_ir_value s = sigmoid_v(ctx, x);
    tt_ir_value t = un(ctx, TT_OP_TANH, softplus1(ctx, x));
    tt_ir_value d = add(ctx, t, mul(ctx, mul(ctx, x, s), sub(ctx, one, mul(ctx, t, t))));
    return tt_lower_done(ctx, outs, mul(ctx, g, d), dt);
}

/* logit_backward(grad, x, eps?): grad / (x (1 - x)) inside the valid range; NaN (no eps) or 0 (eps) outside. */
static tt_status tt_lower_logit_backward(LOWER_ARGS) {
    (void)nouts;
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "logit_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value one = kl(ctx, x, 1.0);
    tt_ir_value d = dvd(ctx, g, mul(ctx, x, sub(ctx, one, x)));
    tt_ir_value r;
    if (nargs > 2 && args[2].kind != TT_ARG_NONE) {
        tt_ir_value lo = tt_lower_arg_like(ctx, &args[2], x), hi = sub(ctx, one, lo);
        tt_ir_value out = bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_LT, x, lo), cmp(ctx, TT_CMP_GT, x, hi));
        r = sel(ctx, out, kl(ctx, x, 0.0), d);
    } else {
        tt_ir_value out = bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_LT, x, kl(ctx, x, 0.0)), cmp(ctx, TT_CMP_GT, x, one));
        r = sel(ctx, out, kl(ctx, x, NAN), d);
    }
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status shrink_backward(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs) {
    tt_dtype dt;
    tt_ir_value g, x;
    if (!float_in2(ctx, args, 0, 1, &dt, &g, &x, "shrink_backward")) return tt_ir_builder_status(ctx->b);
    tt_ir_value l = tt_lower_arg_like(ctx, &args[2], x);
    tt_ir_value in = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_GE, x, un(ctx, TT_OP_NEGATE, l)), cmp(ctx, TT_CMP_LE, x, l));
    return tt_lower_done(ctx, outs, sel(ctx, in, kl(ctx, g, 0.0), g), dt);
}
static tt_status tt_lower_shrink_backward(LOWER_ARGS) {
    UNUSED_ARGS;
    return shrink_backward(ctx, args, outs);
}

const tt_lower_entry tt_lower_table_activation[] = {
    {"aten::relu", tt_lower_relu},
    {"aten::leaky_relu", tt_lower_leaky_relu},
    {"aten::elu", tt_lower_elu},
    {"aten::celu", tt_lower_celu},
    {"aten::gelu", tt_lower_gelu},
    {"aten::silu", tt_lower_silu},
    {"aten::mish", tt_lower_mish},
    {"aten::hardtanh", tt_lower_hardtanh},
    {"aten::hardsigmoid", tt_lower_hardsigmoid},
    {"aten::hardswish", tt_lower_hardswish},
    {"aten::softplus", tt_lower_softplus},
    {"aten::threshold", tt_lower_threshold},
    {"aten::softshrink", tt_lower_softshrink},
    {"aten::hardshrink", tt_lower_hardshrink},
    {"aten::_prelu_kernel", tt_lower_prelu_kernel},
    {"aten::threshold_backward", tt_lower_threshold_backward},
    {"aten::gelu_backward", tt_lower_gelu_backward},
    {"aten::silu_backward", tt_lower_silu_backward},
    {"aten::sigmoid_backward", tt_lower_sigmoid_backward},
    {"aten::tanh_backward", tt_lower_tanh_backward},
    {"aten::leaky_relu_backward", tt_lower_leaky_relu_backward},
    {"aten::elu_backward", tt_lower_elu_backward},
    {"aten::hardtanh_backward", tt_lower_hardtanh_backward},
    {"aten::softplus_backward", tt_lower_softplus_backward},
    {"aten::hardsigmoid_backward", tt_lower_hardsigmoid_backward},
    {"aten::hardswish_backward", tt_lower_hardswish_backward},
    {"aten::mish_backward", tt_lower_mish_backward},
    {"aten::logit_backward", tt_lower_logit_backward},
    {"aten::softshrink_backward", tt_lower_shrink_backward},
    {"aten::hardshrink_backward", tt_lower_shrink_backward},
    {NULL, NULL},
};
