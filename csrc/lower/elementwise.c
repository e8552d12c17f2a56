/* elementwise.c — lowerings of elementwise arithmetic, comparison, logical, bitwise, selection and unary math.
 *
 * Conventions: the result dtype follows PyTorch's promotion (tt_lower_result_type_ctx); float-only ops give f32
 * for integer/bool inputs; arithmetic runs in the "opmath" type (f32 for bf16/f16, as PyTorch CPU does, so a
 * Python scalar keeps its f32 value) and the result is converted back. Integer division, remainder and
 * floor division return TT_STATUS_UNSUPPORTED: PyTorch raises ZeroDivisionError on a zero divisor, which a
 * program cannot do, so those run on the CPU. Activations live in activation.c. */
#include "tt_lower.h"

#include <float.h>
#include <math.h>
#include <string.h>

#define LOWER_ARGS tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts
#define UNUSED_ARGS \
    (void)nargs;    \
    (void)nouts

/* ---- small helpers (file-local) ---- */

static tt_ir_value un(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x) { return tt_ir_unary(ctx->b, op, x); }
static tt_ir_value bin(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x, tt_ir_value y) {
    return tt_ir_binary(ctx->b, op, x, y);
}
static tt_ir_value cmp(tt_lower_ctx *ctx, tt_ir_cmp dir, tt_ir_value x, tt_ir_value y) {
    return tt_ir_compare(ctx->b, dir, x, y);
}
static tt_ir_value sel(tt_lower_ctx *ctx, tt_ir_value p, tt_ir_value a, tt_ir_value b) {
    return tt_ir_select(ctx->b, p, a, b);
}
/* A constant shaped and typed like x. */
static tt_ir_value kl(tt_lower_ctx *ctx, tt_ir_value x, double v) { return tt_lower_like(ctx, x, v); }

static tt_dtype rtype2(tt_lower_ctx *ctx, const tt_arg *args, int32_t i, int32_t j) {
    int32_t idx[2] = {i, j};
    return tt_lower_result_type_ctx(ctx, args, 2, idx);
}

/* a and b converted to dt and broadcast together. */
static bool prep2(tt_lower_ctx *ctx, const tt_arg *a, const tt_arg *b, tt_dtype dt, tt_ir_value *x,
                  tt_ir_value *y) {
    const tt_arg *as[2] = {a, b};
    tt_ir_value v[2];
    if (!tt_lower_broadcast_args(ctx, 2, as, dt, v)) return false;
    *x = v[0];
    *y = v[1];
    return true;
}

static bool arg_is_none(const tt_arg *args, int32_t nargs, int32_t i) {
    return i >= nargs || args[i].kind == TT_ARG_NONE;
}
static bool arg_is_float_scalar(const tt_arg *a) {
    return (a->kind == TT_ARG_SCALAR && tt_dtype_is_float(a->dtype)) || a->kind == TT_ARG_FLOAT;
}
/* alpha/value arguments equal to 1 (or absent) skip their multiply: a structural choice with two variants. */
static bool arg_is_one(const tt_arg *args, int32_t nargs, int32_t i) {
    if (arg_is_none(args, nargs, i)) return true;
    const tt_arg *a = &args[i];
    if (a->kind == TT_ARG_TENSOR) return false;
    return tt_lower_arg_double(a) == 1.0;
}

/* x != x: NaN test (false for integers by construction). */
static tt_ir_value isnan_v(tt_lower_ctx *ctx, tt_ir_value x) { return cmp(ctx, TT_CMP_NE, x, x); }

/* trunc toward zero for floats. */
static tt_ir_value trunc_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return sel(ctx, cmp(ctx, TT_CMP_LT, x, kl(ctx, x, 0.0)), un(ctx, TT_OP_CEIL, x), un(ctx, TT_OP_FLOOR, x));
}

/* Sign bit of a float (x < 0, or x == -0.0); NaN's sign is not visible without a bitcast. */
static tt_ir_value signbit_v(tt_lower_ctx *ctx, tt_ir_value x) {
    tt_ir_value zero = kl(ctx, x, 0.0);
    tt_ir_value negzero = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_EQ, x, zero),
                              cmp(ctx, TT_CMP_LT, bin(ctx, TT_OP_DIVIDE, kl(ctx, x, 1.0), x), zero));
    return bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_LT, x, zero), negzero);
}

/* Python-style remainder for floats: fmod, then shifted by the divisor when the signs differ. */
static tt_ir_value py_mod(tt_lower_ctx *ctx, tt_ir_value a, tt_ir_value b) {
    tt_ir_value mod = bin(ctx, TT_OP_REMAINDER, a, b);
    tt_ir_value zero = kl(ctx, a, 0.0);
    tt_ir_value adj = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_NE, mod, zero),
                          bin(ctx, TT_OP_XOR, cmp(ctx, TT_CMP_LT, b, zero), cmp(ctx, TT_CMP_LT, mod, zero)));
    return sel(ctx, adj, bin(ctx, TT_OP_ADD, mod, b), mod);
}

/* PyTorch's div_floor for floats (exact where floor(a / b) would round wrongly). */
static tt_ir_value floor_div(tt_lower_ctx *ctx, tt_ir_value a, tt_ir_value b) {
    tt_ir_value zero = kl(ctx, a, 0.0), one = kl(ctx, a, 1.0);
    tt_ir_value q = bin(ctx, TT_OP_DIVIDE, a, b);
    tt_ir_value mod = bin(ctx, TT_OP_REMAINDER, a, b);
    tt_ir_value div = bin(ctx, TT_OP_DIVIDE, bin(ctx, TT_OP_SUBTRACT, a, mod), b);
    tt_ir_value adj = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_NE, mod, zero),
                          bin(ctx, TT_OP_XOR, cmp(ctx, TT_CMP_LT, b, zero), cmp(ctx, TT_CMP_LT, mod, zero)));
    div = sel(ctx, adj, bin(ctx, TT_OP_SUBTRACT, div, one), div);
    tt_ir_value fl = un(ctx, TT_OP_FLOOR, div);
    fl = sel(ctx, cmp(ctx, TT_CMP_GT, bin(ctx, TT_OP_SUBTRACT, div, fl), kl(ctx, a, 0.5)),
             bin(ctx, TT_OP_ADD, fl, one), fl);
    tt_ir_value signed_zero = sel(ctx, signbit_v(ctx, q), kl(ctx, a, -0.0), zero);
    fl = sel(ctx, cmp(ctx, TT_CMP_EQ, div, zero), signed_zero, fl);
    return sel(ctx, cmp(ctx, TT_CMP_EQ, b, zero), q, fl);
}

/* ---- add / sub / rsub / mul / div ---- */

/* a + alpha * b (sign -1: a - alpha * b); reverse swaps the roles of self and other (rsub). */
static tt_status add_like(LOWER_ARGS, bool sub, bool reverse) {
    (void)nouts;
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (sub) {
        bool b0 = args[0].kind == TT_ARG_TENSOR ? tt_lower_dtype_of(ctx, args[0].value) == TT_BOOL
                                                : args[0].kind == TT_ARG_SCALAR && args[0].dtype == TT_BOOL;
        bool b1 = args[1].kind == TT_ARG_TENSOR ? tt_lower_dtype_of(ctx, args[1].value) == TT_BOOL
                                                : args[1].kind == TT_ARG_SCALAR && args[1].dtype == TT_BOOL;
        if (b0 && b1)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Subtraction, the `-` operator, with two bool tensors is not supported. "
                                      "Use the `^` or `logical_xor()` operator instead.");
        if (b0 || b1)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Subtraction, the `-` operator, with a bool tensor is not supported. If "
                                      "you are trying to invert a mask, use the `~` or `logical_not()` operator "
                                      "instead.");
    }
    bool one = arg_is_one(args, nargs, 2);
    if (!one) {
        const tt_arg *al = &args[2];
        bool al_bool = (al->kind == TT_ARG_SCALAR && al->dtype == TT_BOOL) || al->kind == TT_ARG_BOOL;
        if (al_bool && dt != TT_BOOL)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Boolean alpha only supported for Boolean results.");
        if (!tt_dtype_is_float(dt) && arg_is_float_scalar(al))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "For integral input tensors, argument alpha must not be a floating point "
                                      "number.");
    }
    /* PyTorch CPU casts both operands and alpha to dt (bf16/f16 too: unlike mul/div, the scalar and alpha are
     * rounded to dt) and computes a + alpha * b in the opmath type. */
    tt_dtype ct = tt_lower_opmath(dt);
    tt_ir_value v[2] = {tt_lower_arg(ctx, &args[reverse ? 1 : 0], dt), tt_lower_arg(ctx, &args[reverse ? 0 : 1], dt)};
    v[0] = tt_ir_convert(ctx->b, v[0], ct);
    v[1] = tt_ir_convert(ctx->b, v[1], ct);
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value x = v[0], y = v[1];
    if (!one) { /* bool: and */
        const tt_ir_type *yt = tt_lower_type(ctx, y);
        tt_ir_type t = *yt;
        tt_ir_value al = tt_ir_convert(ctx->b, tt_lower_arg(ctx, &args[2], dt), ct);
        y = bin(ctx, TT_OP_MULTIPLY, y, tt_lower_to(ctx, al, ct, t.rank, t.dims));
    }
    return tt_lower_done(ctx, outs, bin(ctx, sub ? TT_OP_SUBTRACT : TT_OP_ADD, x, y), dt);
}

static tt_status tt_lower_add(LOWER_ARGS) { return add_like(ctx, args, nargs, outs, nouts, false, false); }
static tt_status tt_lower_sub(LOWER_ARGS) { return add_like(ctx, args, nargs, outs, nouts, true, false); }
static tt_status tt_lower_rsub(LOWER_ARGS) { return add_like(ctx, args, nargs, outs, nouts, true, true); }

static tt_status tt_lower_mul(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = rtype2(ctx, args, 0, 1), ct = tt_lower_opmath(dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], ct, &x, &y)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_MULTIPLY, x, y), dt); /* bool multiply is and */
}

/* Division with an optional rounding mode (NULL = true division). */
static tt_status div_mode(tt_lower_ctx *ctx, const tt_arg *a, const tt_arg *b, const char *mode, tt_dtype dt,
                          tt_ir_value *outs) {
    if (!mode) {
        if (!tt_dtype_is_float(dt)) dt = tt_lower_default_float(ctx); /* int true division gives the default float */
        tt_dtype ct = tt_lower_opmath(dt);
        tt_ir_value x, y;
        if (!prep2(ctx, a, b, ct, &x, &y)) return tt_ir_builder_status(ctx->b);
        return tt_lower_done(ctx, outs, bin(ctx, TT_OP_DIVIDE, x, y), dt);
    }
    bool trunc = strcmp(mode, "trunc") == 0, floor = strcmp(mode, "floor") == 0;
    if (!trunc && !floor)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found "
                                  "'%s'",
                                  mode);
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "div with rounding_mode", dt); /* x // 0 raises */
    tt_dtype ct = tt_lower_opmath(dt);
    tt_ir_value x, y;
    if (!prep2(ctx, a, b, ct, &x, &y)) return tt_ir_builder_status(ctx->b);
    /* trunc: PyTorch rounds the quotient to dt before truncating (17.95 in bf16 is 18) */
    tt_ir_value r = trunc ? trunc_v(ctx, tt_ir_convert(ctx->b, bin(ctx, TT_OP_DIVIDE, x, y), dt))
                          : floor_div(ctx, x, y);
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_div(LOWER_ARGS) {
    UNUSED_ARGS;
    return div_mode(ctx, &args[0], &args[1], NULL, rtype2(ctx, args, 0, 1), outs);
}

static tt_status tt_lower_div_mode(LOWER_ARGS) {
    (void)nouts;
    const char *mode = (nargs > 2 && args[2].kind == TT_ARG_STRING) ? args[2].s : NULL;
    return div_mode(ctx, &args[0], &args[1], mode, rtype2(ctx, args, 0, 1), outs);
}

/* Integer floor division / Python remainder by a Scalar known here to be neither 0 (PyTorch raises
 * ZeroDivisionError: left to the CPU) nor -1 (INT_MIN / -1 overflows): truncating divide and C remainder, moved
 * one step down when the remainder's sign differs from the divisor's. The divisor stays a runtime scalar. */
static bool int_scalar_divisor(tt_lower_ctx *ctx, const tt_arg *args, tt_dtype dt) {
    if (tt_dtype_is_float(dt) || dt == TT_BOOL || args[0].kind != TT_ARG_TENSOR || args[1].kind != TT_ARG_SCALAR ||
        args[1].dtype != TT_I64)
        return false;
    (void)ctx;
    /* the divisor as dt holds it (a Scalar is cast: 2**40 in int32 is 0, PyTorch's ZeroDivisionError) */
    int64_t v = args[1].i;
    switch (dt) {
    case TT_I32: v = (int32_t)(uint32_t)(uint64_t)v; break;
    case TT_I16: v = (int16_t)(uint16_t)(uint64_t)v; break;
    case TT_I8: v = (int8_t)(uint8_t)(uint64_t)v; break;
    case TT_U8: v = (uint8_t)(uint64_t)v; break;
    default: break;
    }
    return v != 0 && v != -1 && v == args[1].i;
}

static tt_status int_floor_div_mod(tt_lower_ctx *ctx, const tt_arg *args, tt_dtype dt, bool want_mod,
                                   tt_ir_value *outs) {
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b);
    tt_ir_value zero = kl(ctx, x, 0.0);
    tt_ir_value q = bin(ctx, TT_OP_DIVIDE, x, y), r = bin(ctx, TT_OP_REMAINDER, x, y);
    tt_ir_value adj = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_NE, r, zero),
                          bin(ctx, TT_OP_XOR, cmp(ctx, TT_CMP_LT, r, zero), cmp(ctx, TT_CMP_LT, y, zero)));
    tt_ir_value v = want_mod ? sel(ctx, adj, bin(ctx, TT_OP_ADD, r, y), r)
                             : sel(ctx, adj, bin(ctx, TT_OP_SUBTRACT, q, kl(ctx, x, 1.0)), q);
    return tt_lower_done(ctx, outs, v, dt);
}

static tt_status tt_lower_floor_divide(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (int_scalar_divisor(ctx, args, dt)) return int_floor_div_mod(ctx, args, dt, false, outs);
    return div_mode(ctx, &args[0], &args[1], "floor", dt, outs);
}

static tt_status tt_lower_remainder(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (int_scalar_divisor(ctx, args, dt)) return int_floor_div_mod(ctx, args, dt, true, outs);
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "remainder", dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], tt_lower_opmath(dt), &x, &y)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, py_mod(ctx, x, y), dt);
}

static tt_status tt_lower_fmod(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "fmod", dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], tt_lower_opmath(dt), &x, &y)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_REMAINDER, x, y), dt);
}

/* ---- pow ---- */

/* Integer power with PyTorch's rule for negative exponents: 1 and -1 keep their powers, others give 0. */
static tt_ir_value int_pow(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value y) {
    tt_ir_value p = bin(ctx, TT_OP_POWER, x, y);
    tt_ir_value one = kl(ctx, x, 1.0), zero = kl(ctx, x, 0.0), mone = kl(ctx, x, -1.0);
    tt_ir_value odd = cmp(ctx, TT_CMP_NE, bin(ctx, TT_OP_AND, y, one), zero);
    tt_ir_value neg = sel(ctx, cmp(ctx, TT_CMP_EQ, x, one), one,
                          sel(ctx, cmp(ctx, TT_CMP_EQ, x, mone), sel(ctx, odd, mone, one), zero));
    return sel(ctx, cmp(ctx, TT_CMP_LT, y, zero), neg, p);
}

static tt_status pow_common(tt_lower_ctx *ctx, const tt_arg *a, const tt_arg *b, tt_dtype dt, tt_ir_value *outs) {
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "pow", dt);
    /* Structural fast paths on the exponent's value, as PyTorch's own kernel takes them. */
    if (b->kind == TT_ARG_SCALAR && a->kind == TT_ARG_TENSOR) {
        double e = tt_lower_arg_double(b);
        if (!tt_dtype_is_float(dt) && !arg_is_float_scalar(b) && e < 0)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Integers to negative integer powers are not allowed.");
        if (e == 2.0 || e == 0.5 || e == 1.0) {
            tt_ir_value x = tt_ir_convert(ctx->b, a->value, tt_lower_opmath(dt));
            tt_ir_value r = e == 2.0 ? bin(ctx, TT_OP_MULTIPLY, x, x) : e == 0.5 ? un(ctx, TT_OP_SQRT, x) : x;
            return tt_lower_done(ctx, outs, r, dt);
        }
    }
    tt_dtype ct = tt_lower_opmath(dt);
    tt_ir_value x, y;
    if (!prep2(ctx, a, b, ct, &x, &y)) return tt_ir_builder_status(ctx->b);
    tt_ir_value r = tt_dtype_is_float(ct) ? bin(ctx, TT_OP_POWER, x, y) : int_pow(ctx, x, y);
    return tt_lower_done(ctx, outs, r, dt);
}

static tt_status tt_lower_pow(LOWER_ARGS) {
    UNUSED_ARGS;
    return pow_common(ctx, &args[0], &args[1], rtype2(ctx, args, 0, 1), outs);
}

/* ---- unary ---- */

static tt_status tt_lower_neg(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    if (dt == TT_BOOL)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Negation, the `-` operator, on a bool tensor is not supported. If you are trying "
                                  "to invert a mask, use the `~` or `logical_not()` operator instead.");
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_NEGATE, args[0].value), dt);
}

static tt_status tt_lower_abs(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "abs", dt);
    if (dt == TT_U8) return tt_lower_done(ctx, outs, args[0].value, dt);
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_ABS, args[0].value), dt);
}

static tt_status tt_lower_sign(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (dt == TT_BOOL) return tt_lower_done(ctx, outs, x, dt);
    if (dt == TT_U8) return tt_lower_done(ctx, outs, cmp(ctx, TT_CMP_NE, x, kl(ctx, x, 0.0)), dt);
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_SIGN, x), dt);
}

/* Rounding ops: identity on integers, unsupported on bool (PyTorch has no kernel). */
static tt_status rounding(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, int kind) {
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (dt == TT_BOOL) return tt_lower_unsupported_dtype(ctx, "rounding", dt);
    if (!tt_dtype_is_float(dt)) return tt_lower_done(ctx, outs, x, dt);
    tt_ir_value r = kind == 0 ? un(ctx, TT_OP_FLOOR, x)
                    : kind == 1 ? un(ctx, TT_OP_CEIL, x)
                    : kind == 2 ? un(ctx, TT_OP_ROUND_EVEN, x)
                                : trunc_v(ctx, x);
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_floor(LOWER_ARGS) {
    UNUSED_ARGS;
    return rounding(ctx, args, outs, 0);
}
static tt_status tt_lower_ceil(LOWER_ARGS) {
    UNUSED_ARGS;
    return rounding(ctx, args, outs, 1);
}
static tt_status tt_lower_round(LOWER_ARGS) {
    UNUSED_ARGS;
    return rounding(ctx, args, outs, 2);
}
static tt_status tt_lower_trunc(LOWER_ARGS) {
    UNUSED_ARGS;
    return rounding(ctx, args, outs, 3);
}

static tt_status tt_lower_round_decimals(LOWER_ARGS) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    int64_t d = nargs > 1 && args[1].kind == TT_ARG_INT ? args[1].i : 0;
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "round.decimals", dt);
    if (d == 0) return rounding(ctx, args, outs, 2);
    if (d > 300 || d < -300) return tt_lower_unsupported_dtype(ctx, "round.decimals (huge decimals)", dt);
    x = tt_ir_convert(ctx->b, x, tt_lower_opmath(dt));
    tt_ir_value p = kl(ctx, x, pow(10.0, (double)(d < 0 ? -d : d)));
    tt_ir_value r = d < 0 ? bin(ctx, TT_OP_MULTIPLY, un(ctx, TT_OP_ROUND_EVEN, bin(ctx, TT_OP_DIVIDE, x, p)), p)
                          : bin(ctx, TT_OP_DIVIDE, un(ctx, TT_OP_ROUND_EVEN, bin(ctx, TT_OP_MULTIPLY, x, p)), p);
    return tt_lower_done(ctx, outs, r, dt);
}

/* Float-only unary ops: integer/bool inputs give f32; bf16/f16 compute in f32. */
typedef tt_ir_value (*unary_fn)(tt_lower_ctx *ctx, tt_ir_value x);

static tt_status unary_float(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, tt_ir_op op, unary_fn fn,
                             bool int_ok) {
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (!tt_dtype_is_float(dt)) {
        if (!int_ok) return tt_lower_unsupported_dtype(ctx, "float op", dt);
        dt = tt_lower_default_float(ctx);
    }
    x = tt_ir_convert(ctx->b, x, tt_lower_opmath(dt));
    return tt_lower_done(ctx, outs, fn ? fn(ctx, x) : un(ctx, op, x), dt);
}

#define UNARY_OP(name, OP)                                            \
    static tt_status tt_lower_##name(LOWER_ARGS) {                   \
        UNUSED_ARGS;                                                  \
        return unary_float(ctx, args, outs, TT_OP_##OP, NULL, true); \
    }
#define UNARY_FN(name, fn, int_ok)                                  \
    static tt_status tt_lower_##name(LOWER_ARGS) {                 \
        UNUSED_ARGS;                                                \
        return unary_float(ctx, args, outs, TT_OP_ABS, fn, int_ok); \
    }

UNARY_OP(exp, EXP)
UNARY_OP(expm1, EXPM1)
UNARY_OP(log, LOG)
UNARY_OP(log1p, LOG1P)
UNARY_OP(sqrt, SQRT)
UNARY_OP(rsqrt, RSQRT)
UNARY_OP(sin, SIN)
UNARY_OP(cos, COS)
UNARY_OP(tan, TAN)
UNARY_OP(tanh, TANH)
UNARY_OP(asin, ASIN)
UNARY_OP(acos, ACOS)
UNARY_OP(atan, ATAN)
UNARY_OP(sinh, SINH)
UNARY_OP(cosh, COSH)
UNARY_OP(asinh, ASINH)
UNARY_OP(acosh, ACOSH)
UNARY_OP(atanh, ATANH)
UNARY_OP(sigmoid, LOGISTIC)
UNARY_OP(erf, ERF)
UNARY_OP(erfc, ERFC)
UNARY_OP(erfinv, ERF_INV)
UNARY_OP(lgamma, LGAMMA)
UNARY_OP(digamma, DIGAMMA)

static tt_ir_value exp2_v(tt_lower_ctx *ctx, tt_ir_value x) { return bin(ctx, TT_OP_POWER, kl(ctx, x, 2.0), x); }
static tt_ir_value log2_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return bin(ctx, TT_OP_MULTIPLY, un(ctx, TT_OP_LOG, x), kl(ctx, x, 1.0 / M_LN2));
}
static tt_ir_value log10_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return bin(ctx, TT_OP_MULTIPLY, un(ctx, TT_OP_LOG, x), kl(ctx, x, 1.0 / M_LN10));
}
static tt_ir_value reciprocal_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return bin(ctx, TT_OP_DIVIDE, kl(ctx, x, 1.0), x);
}
static tt_ir_value sinc_v(tt_lower_ctx *ctx, tt_ir_value x) {
    tt_ir_value px = bin(ctx, TT_OP_MULTIPLY, x, kl(ctx, x, M_PI));
    tt_ir_value r = bin(ctx, TT_OP_DIVIDE, un(ctx, TT_OP_SIN, px), px);
    return sel(ctx, cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, 0.0)), kl(ctx, x, 1.0), r);
}
static tt_ir_value deg2rad_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return bin(ctx, TT_OP_MULTIPLY, x, kl(ctx, x, M_PI / 180.0));
}
static tt_ir_value rad2deg_v(tt_lower_ctx *ctx, tt_ir_value x) {
    return bin(ctx, TT_OP_MULTIPLY, x, kl(ctx, x, 180.0 / M_PI));
}
static tt_ir_value frac_v(tt_lower_ctx *ctx, tt_ir_value x) { return bin(ctx, TT_OP_SUBTRACT, x, trunc_v(ctx, x)); }

UNARY_FN(exp2, exp2_v, true)
UNARY_FN(log2, log2_v, true)
UNARY_FN(log10, log10_v, true)
UNARY_FN(reciprocal, reciprocal_v, true)
UNARY_FN(sinc, sinc_v, true)
UNARY_FN(deg2rad, deg2rad_v, true)
UNARY_FN(rad2deg, rad2deg_v, true)
UNARY_FN(frac, frac_v, false)

/* logit(x, eps) = log(x / (1 - x)), x clamped to [eps, 1 - eps] when eps is given. */
static tt_status tt_lower_logit(LOWER_ARGS) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (!tt_dtype_is_float(dt)) dt = tt_lower_default_float(ctx);
    /* computed in dt itself: PyTorch rounds each step of bf16/f16 logit, and tests compare to that */
    x = tt_ir_convert(ctx->b, x, dt);
    if (!arg_is_none(args, nargs, 1)) {
        tt_ir_value lo = tt_lower_arg_like(ctx, &args[1], x);
        tt_ir_value hi = bin(ctx, TT_OP_SUBTRACT, kl(ctx, x, 1.0), lo);
        x = tt_ir_clamp(ctx->b, lo, x, hi);
    }
    tt_ir_value r = un(ctx, TT_OP_LOG, bin(ctx, TT_OP_DIVIDE, x, bin(ctx, TT_OP_SUBTRACT, kl(ctx, x, 1.0), x)));
    return tt_lower_done(ctx, outs, r, dt);
}

/* ---- comparisons, logical, bitwise ---- */

static tt_status compare_op(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, tt_ir_cmp dir) {
    tt_dtype dt = rtype2(ctx, args, 0, 1); /* compared in the common dtype, scalar rounded to it (as PyTorch) */
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, cmp(ctx, dir, x, y), TT_BOOL);
}
#define COMPARE_OP(name, DIR)                              \
    static tt_status tt_lower_##name(LOWER_ARGS) {         \
        UNUSED_ARGS;                                       \
        return compare_op(ctx, args, outs, TT_CMP_##DIR); \
    }
COMPARE_OP(eq, EQ)
COMPARE_OP(ne, NE)
COMPARE_OP(lt, LT)
COMPARE_OP(le, LE)
COMPARE_OP(gt, GT)
COMPARE_OP(ge, GE)

static tt_status logical_op(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, tt_ir_op op) {
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], TT_BOOL, &x, &y)) return tt_ir_builder_status(ctx->b); /* != 0 */
    return tt_lower_done(ctx, outs, bin(ctx, op, x, y), TT_BOOL);
}
static tt_status tt_lower_logical_and(LOWER_ARGS) {
    UNUSED_ARGS;
    return logical_op(ctx, args, outs, TT_OP_AND);
}
static tt_status tt_lower_logical_or(LOWER_ARGS) {
    UNUSED_ARGS;
    return logical_op(ctx, args, outs, TT_OP_OR);
}
static tt_status tt_lower_logical_xor(LOWER_ARGS) {
    UNUSED_ARGS;
    return logical_op(ctx, args, outs, TT_OP_XOR);
}
static tt_status tt_lower_logical_not(LOWER_ARGS) {
    UNUSED_ARGS;
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_NOT, tt_ir_convert(ctx->b, args[0].value, TT_BOOL)), TT_BOOL);
}

static tt_status bitwise_op(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, tt_ir_op op) {
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "bitwise op", dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, bin(ctx, op, x, y), dt);
}
static tt_status tt_lower_bitwise_and(LOWER_ARGS) {
    UNUSED_ARGS;
    return bitwise_op(ctx, args, outs, TT_OP_AND);
}
static tt_status tt_lower_bitwise_or(LOWER_ARGS) {
    UNUSED_ARGS;
    return bitwise_op(ctx, args, outs, TT_OP_OR);
}
static tt_status tt_lower_bitwise_xor(LOWER_ARGS) {
    UNUSED_ARGS;
    return bitwise_op(ctx, args, outs, TT_OP_XOR);
}
static tt_status tt_lower_bitwise_not(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    if (tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "bitwise_not", dt);
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_NOT, args[0].value), dt);
}

/* Shifts with PyTorch's out-of-range rule: shifting by < 0 or >= the width gives 0 (left, unsigned right) or
 * the sign fill (signed right). The shift amount is made safe before the op so no driver sees it. */
static tt_status shift_op(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool left) {
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (!tt_dtype_is_int(dt)) return tt_lower_unsupported_dtype(ctx, "shift", dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b);
    double bits = 8.0 * (double)tt_dtype_size(dt);
    tt_ir_value zero = kl(ctx, y, 0.0);
    tt_ir_value bad = bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_LT, y, zero), cmp(ctx, TT_CMP_GE, y, kl(ctx, y, bits)));
    tt_ir_value r;
    if (left || dt == TT_U8) {
        tt_ir_value s = bin(ctx, left ? TT_OP_SHIFT_LEFT : TT_OP_SHIFT_RIGHT_LOGICAL, x, sel(ctx, bad, zero, y));
        r = sel(ctx, bad, kl(ctx, x, 0.0), s);
    } else {
        r = bin(ctx, TT_OP_SHIFT_RIGHT_ARITHMETIC, x, sel(ctx, bad, kl(ctx, y, bits - 1), y));
    }
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_lshift(LOWER_ARGS) {
    UNUSED_ARGS;
    return shift_op(ctx, args, outs, true);
}
static tt_status tt_lower_rshift(LOWER_ARGS) {
    UNUSED_ARGS;
    return shift_op(ctx, args, outs, false);
}

/* ---- min / max / clamp / where ---- */

static tt_status minmax(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_max, bool ignore_nan) {
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b);
    if (dt == TT_BOOL) return tt_lower_done(ctx, outs, bin(ctx, is_max ? TT_OP_OR : TT_OP_AND, x, y), dt);
    tt_ir_value r = bin(ctx, is_max ? TT_OP_MAXIMUM : TT_OP_MINIMUM, x, y); /* NaN propagates */
    if (ignore_nan && tt_dtype_is_float(dt)) r = sel(ctx, isnan_v(ctx, x), y, sel(ctx, isnan_v(ctx, y), x, r));
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_maximum(LOWER_ARGS) {
    UNUSED_ARGS;
    return minmax(ctx, args, outs, true, false);
}
static tt_status tt_lower_minimum(LOWER_ARGS) {
    UNUSED_ARGS;
    return minmax(ctx, args, outs, false, false);
}
static tt_status tt_lower_fmax(LOWER_ARGS) {
    UNUSED_ARGS;
    return minmax(ctx, args, outs, true, true);
}
static tt_status tt_lower_fmin(LOWER_ARGS) {
    UNUSED_ARGS;
    return minmax(ctx, args, outs, false, true);
}

/* clamp(self, min, max) with either bound optional: max(x, min) then min(.., max), NaN propagating. */
static tt_status clamp_common(tt_lower_ctx *ctx, const tt_arg *self, const tt_arg *lo, const tt_arg *hi,
                              tt_ir_value *outs) {
    bool has_lo = lo && lo->kind != TT_ARG_NONE, has_hi = hi && hi->kind != TT_ARG_NONE;
    if (!has_lo && !has_hi)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "torch.clamp: At least one of 'min' or 'max' must not be None");
    tt_arg sub[3];
    const tt_arg *as[3];
    int32_t n = 0;
    sub[n] = *self;
    as[n] = self;
    n++;
    if (has_lo) {
        sub[n] = *lo;
        as[n] = lo;
        n++;
    }
    if (has_hi) {
        sub[n] = *hi;
        as[n] = hi;
        n++;
    }
    tt_dtype dt = tt_lower_result_type_ctx(ctx, sub, n, NULL);
    tt_ir_value v[3];
    if (!tt_lower_broadcast_args(ctx, n, as, dt, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value r = v[0];
    int32_t k = 1;
    bool is_bool = dt == TT_BOOL; /* bool max/min are or/and */
    if (has_lo) r = bin(ctx, is_bool ? TT_OP_OR : TT_OP_MAXIMUM, r, v[k++]);
    if (has_hi) r = bin(ctx, is_bool ? TT_OP_AND : TT_OP_MINIMUM, r, v[k++]);
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_clamp(LOWER_ARGS) {
    (void)nouts;
    return clamp_common(ctx, &args[0], nargs > 1 ? &args[1] : NULL, nargs > 2 ? &args[2] : NULL, outs);
}
static tt_status tt_lower_clamp_min(LOWER_ARGS) {
    UNUSED_ARGS;
    return clamp_common(ctx, &args[0], &args[1], NULL, outs);
}
static tt_status tt_lower_clamp_max(LOWER_ARGS) {
    UNUSED_ARGS;
    return clamp_common(ctx, &args[0], NULL, &args[1], outs);
}

static tt_status tt_lower_where(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value c = args[0].value;
    tt_dtype cdt = tt_lower_dtype_of(ctx, c);
    if (cdt != TT_BOOL && cdt != TT_U8)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "where expected condition to be a boolean tensor, but got a tensor with dtype %s",
                                  tt_dtype_name(cdt));
    tt_dtype dt = rtype2(ctx, args, 1, 2);
    tt_ir_value v[3] = {tt_ir_convert(ctx->b, c, TT_BOOL), tt_lower_arg(ctx, &args[1], dt),
                        tt_lower_arg(ctx, &args[2], dt)};
    if (!tt_lower_broadcast_values(ctx, 3, v)) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, sel(ctx, v[0], v[1], v[2]), dt);
}

/* ---- float classification ---- */

static tt_status classify(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, int kind) {
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (!tt_dtype_is_float(dt)) {
        bool v = false;
        if (kind == 4 && tt_dtype_is_signed(dt)) /* signbit of a signed integer */
            return tt_lower_done(ctx, outs, cmp(ctx, TT_CMP_LT, x, kl(ctx, x, 0.0)), TT_BOOL);
        return tt_lower_done(ctx, outs, tt_ir_convert(ctx->b, kl(ctx, x, v ? 1.0 : 0.0), TT_BOOL), TT_BOOL);
    }
    tt_ir_value r;
    switch (kind) {
    case 0: r = isnan_v(ctx, x); break;
    case 1: r = cmp(ctx, TT_CMP_EQ, un(ctx, TT_OP_ABS, x), kl(ctx, x, INFINITY)); break;
    case 2: r = cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, INFINITY)); break;
    case 3: r = cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, -INFINITY)); break;
    default: r = signbit_v(ctx, x); break;
    }
    return tt_lower_done(ctx, outs, r, TT_BOOL);
}
static tt_status tt_lower_isnan(LOWER_ARGS) {
    UNUSED_ARGS;
    return classify(ctx, args, outs, 0);
}
static tt_status tt_lower_isinf(LOWER_ARGS) {
    UNUSED_ARGS;
    return classify(ctx, args, outs, 1);
}
static tt_status tt_lower_isposinf(LOWER_ARGS) {
    UNUSED_ARGS;
    return classify(ctx, args, outs, 2);
}
static tt_status tt_lower_isneginf(LOWER_ARGS) {
    UNUSED_ARGS;
    return classify(ctx, args, outs, 3);
}
static tt_status tt_lower_signbit(LOWER_ARGS) {
    UNUSED_ARGS;
    return classify(ctx, args, outs, 4);
}
static tt_status tt_lower_isfinite(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_ir_value x = args[0].value;
    if (!tt_dtype_is_float(tt_lower_dtype_of(ctx, x)))
        return tt_lower_done(ctx, outs, tt_ir_convert(ctx->b, kl(ctx, x, 1.0), TT_BOOL), TT_BOOL);
    return tt_lower_done(ctx, outs, un(ctx, TT_OP_IS_FINITE, x), TT_BOOL);
}

static double max_finite(tt_dtype dt) {
    switch (dt) {
    case TT_BF16: return 3.3895313892515355e38;
    case TT_F16: return 65504.0;
    case TT_F32: return FLT_MAX;
    default: return DBL_MAX;
    }
}

static tt_status tt_lower_nan_to_num(LOWER_ARGS) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    tt_dtype dt = tt_lower_dtype_of(ctx, x);
    if (!tt_dtype_is_float(dt)) return tt_lower_done(ctx, outs, x, dt);
    double m = max_finite(dt);
    tt_ir_value nanv = arg_is_none(args, nargs, 1) ? kl(ctx, x, 0.0) : tt_lower_arg_like(ctx, &args[1], x);
    tt_ir_value posv = arg_is_none(args, nargs, 2) ? kl(ctx, x, m) : tt_lower_arg_like(ctx, &args[2], x);
    tt_ir_value negv = arg_is_none(args, nargs, 3) ? kl(ctx, x, -m) : tt_lower_arg_like(ctx, &args[3], x);
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, -INFINITY)), negv, x);
    r = sel(ctx, cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, INFINITY)), posv, r);
    r = sel(ctx, isnan_v(ctx, x), nanv, r);
    return tt_lower_done(ctx, outs, r, dt);
}

/* ---- composite binary / ternary ---- */

static tt_status tt_lower_lerp(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    if (tt_lower_dtype_of(ctx, args[1].value) != dt ||
        (args[2].kind == TT_ARG_TENSOR && tt_lower_dtype_of(ctx, args[2].value) != dt))
        return tt_lower_unsupported_dtype(ctx, "lerp with mixed dtypes", dt); /* PyTorch raises; let it */
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "lerp", dt);
    tt_dtype ct = tt_lower_opmath(dt);
    const tt_arg *as[3] = {&args[0], &args[1], &args[2]};
    tt_ir_value v[3];
    if (!tt_lower_broadcast_args(ctx, 3, as, ct, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value s = v[0], e = v[1], w = v[2];
    tt_ir_value diff = bin(ctx, TT_OP_SUBTRACT, e, s);
    tt_ir_value lo = bin(ctx, TT_OP_ADD, s, bin(ctx, TT_OP_MULTIPLY, w, diff));
    tt_ir_value hi = bin(ctx, TT_OP_SUBTRACT, e, bin(ctx, TT_OP_MULTIPLY, diff, bin(ctx, TT_OP_SUBTRACT, kl(ctx, w, 1.0), w)));
    tt_ir_value r = sel(ctx, cmp(ctx, TT_CMP_LT, un(ctx, TT_OP_ABS, w), kl(ctx, w, 0.5)), lo, hi);
    return tt_lower_done(ctx, outs, r, dt);
}

/* self + value * t1 * t2 (mul) or self + value * t1 / t2 (div), left to right as PyTorch CPU computes it. */
static tt_status addc(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, bool div) {
    tt_dtype dt = tt_lower_result_type_ctx(ctx, args, 3, NULL);
    if (dt == TT_BOOL || (!tt_dtype_is_float(dt) && (div || (nargs > 3 && arg_is_float_scalar(&args[3])))))
        return tt_lower_unsupported_dtype(ctx, div ? "addcdiv" : "addcmul", dt);
    tt_dtype ct = tt_lower_opmath(dt);
    const tt_arg *as[3] = {&args[0], &args[1], &args[2]};
    tt_ir_value v[3];
    if (!tt_lower_broadcast_args(ctx, 3, as, ct, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value t = v[1];
    if (!arg_is_one(args, nargs, 3)) t = bin(ctx, TT_OP_MULTIPLY, tt_lower_arg_like(ctx, &args[3], t), t);
    t = bin(ctx, div ? TT_OP_DIVIDE : TT_OP_MULTIPLY, t, v[2]);
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_ADD, v[0], t), dt);
}
static tt_status tt_lower_addcmul(LOWER_ARGS) {
    (void)nouts;
    return addc(ctx, args, nargs, outs, false);
}
static tt_status tt_lower_addcdiv(LOWER_ARGS) {
    (void)nouts;
    return addc(ctx, args, nargs, outs, true);
}

/* Binary float ops: the promoted dtype, integers/bool -> f32 (or unsupported), computed in opmath. */
static bool float_binary(tt_lower_ctx *ctx, const tt_arg *args, bool int_ok, tt_dtype *dt, tt_ir_value *x,
                         tt_ir_value *y, const char *name) {
    *dt = rtype2(ctx, args, 0, 1);
    if (!tt_dtype_is_float(*dt)) {
        if (!int_ok) {
            tt_lower_unsupported_dtype(ctx, name, *dt);
            return false;
        }
        *dt = tt_lower_default_float(ctx);
    }
    return prep2(ctx, &args[0], &args[1], tt_lower_opmath(*dt), x, y);
}

static tt_status xlogy_common(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool log1p) {
    tt_dtype dt;
    tt_ir_value x, y;
    if (!float_binary(ctx, args, true, &dt, &x, &y, "xlogy")) return tt_ir_builder_status(ctx->b);
    tt_ir_value r = bin(ctx, TT_OP_MULTIPLY, x, un(ctx, log1p ? TT_OP_LOG1P : TT_OP_LOG, y));
    r = sel(ctx, cmp(ctx, TT_CMP_EQ, x, kl(ctx, x, 0.0)), kl(ctx, x, 0.0), r);
    r = sel(ctx, isnan_v(ctx, y), kl(ctx, y, NAN), r);
    return tt_lower_done(ctx, outs, r, dt);
}
static tt_status tt_lower_xlogy(LOWER_ARGS) {
    UNUSED_ARGS;
    return xlogy_common(ctx, args, outs, false);
}
static tt_status tt_lower_xlog1py(LOWER_ARGS) {
    UNUSED_ARGS;
    return xlogy_common(ctx, args, outs, true);
}

static tt_status logaddexp_common(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool base2) {
    tt_dtype dt;
    tt_ir_value a, b;
    if (!float_binary(ctx, args, false, &dt, &a, &b, "logaddexp")) return tt_ir_builder_status(ctx->b);
    tt_ir_value m = bin(ctx, TT_OP_MAXIMUM, a, b);
    tt_ir_value nd = un(ctx, TT_OP_NEGATE, un(ctx, TT_OP_ABS, bin(ctx, TT_OP_SUBTRACT, a, b)));
    tt_ir_value t = base2 ? bin(ctx, TT_OP_MULTIPLY, un(ctx, TT_OP_LOG1P, bin(ctx, TT_OP_POWER, kl(ctx, a, 2.0), nd)),
                                kl(ctx, a, 1.0 / M_LN2))
                          : un(ctx, TT_OP_LOG1P, un(ctx, TT_OP_EXP, nd));
    tt_ir_value r = bin(ctx, TT_OP_ADD, m, t);
    tt_ir_value same_inf = bin(ctx, TT_OP_AND, cmp(ctx, TT_CMP_EQ, un(ctx, TT_OP_ABS, a), kl(ctx, a, INFINITY)),
                               cmp(ctx, TT_CMP_EQ, a, b));
    return tt_lower_done(ctx, outs, sel(ctx, same_inf, a, r), dt);
}
static tt_status tt_lower_logaddexp(LOWER_ARGS) {
    UNUSED_ARGS;
    return logaddexp_common(ctx, args, outs, false);
}
static tt_status tt_lower_logaddexp2(LOWER_ARGS) {
    UNUSED_ARGS;
    return logaddexp_common(ctx, args, outs, true);
}

static tt_status tt_lower_atan2(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x, y;
    if (!float_binary(ctx, args, true, &dt, &x, &y, "atan2")) return tt_ir_builder_status(ctx->b);
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_ATAN2, x, y), dt);
}

static tt_status tt_lower_hypot(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x, y;
    if (!float_binary(ctx, args, false, &dt, &x, &y, "hypot")) return tt_ir_builder_status(ctx->b);
    /* f32 and narrower: the sum of squares in f64 neither overflows nor loses accuracy */
    if (dt != TT_F64) {
        x = tt_ir_convert(ctx->b, x, TT_F64);
        y = tt_ir_convert(ctx->b, y, TT_F64);
    }
    tt_ir_value r = un(ctx, TT_OP_SQRT, bin(ctx, TT_OP_ADD, bin(ctx, TT_OP_MULTIPLY, x, x), bin(ctx, TT_OP_MULTIPLY, y, y)));
    tt_ir_value inf = kl(ctx, x, INFINITY);
    tt_ir_value any_inf = bin(ctx, TT_OP_OR, cmp(ctx, TT_CMP_EQ, un(ctx, TT_OP_ABS, x), inf),
                              cmp(ctx, TT_CMP_EQ, un(ctx, TT_OP_ABS, y), inf));
    return tt_lower_done(ctx, outs, sel(ctx, any_inf, inf, r), dt);
}

static tt_status tt_lower_copysign(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt;
    tt_ir_value x, y;
    if (!float_binary(ctx, args, true, &dt, &x, &y, "copysign")) return tt_ir_builder_status(ctx->b);
    tt_ir_value ax = un(ctx, TT_OP_ABS, x);
    return tt_lower_done(ctx, outs, sel(ctx, signbit_v(ctx, y), un(ctx, TT_OP_NEGATE, ax), ax), dt);
}

static tt_status tt_lower_nextafter(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = rtype2(ctx, args, 0, 1);
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported_dtype(ctx, "nextafter", dt);
    tt_ir_value x, y;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &y)) return tt_ir_builder_status(ctx->b); /* steps in dt */
    return tt_lower_done(ctx, outs, bin(ctx, TT_OP_NEXTAFTER, x, y), dt);
}

static tt_status tt_lower_heaviside(LOWER_ARGS) {
    UNUSED_ARGS;
    tt_dtype dt = tt_lower_dtype_of(ctx, args[0].value);
    if (tt_lower_dtype_of(ctx, args[1].value) != dt)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "heaviside is not yet implemented for tensors with different dtypes.");
    tt_ir_value x, v;
    if (!prep2(ctx, &args[0], &args[1], dt, &x, &v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value zero = kl(ctx, x, 0.0);
    tt_ir_value pos = tt_ir_convert(ctx->b, cmp(ctx, TT_CMP_GT, x, zero), dt);
    return tt_lower_done(ctx, outs, sel(ctx, cmp(ctx, TT_CMP_EQ, x, zero), v, pos), dt);
}

/* ---- the table ---- */

const tt_lower_entry tt_lower_table_elementwise[] = {
    {"aten::add.Tensor", tt_lower_add},
    {"aten::add.Scalar", tt_lower_add},
    {"aten::sub.Tensor", tt_lower_sub},
    {"aten::sub.Scalar", tt_lower_sub},
    {"aten::rsub.Tensor", tt_lower_rsub},
    {"aten::rsub.Scalar", tt_lower_rsub},
    {"aten::mul.Tensor", tt_lower_mul},
    {"aten::mul.Scalar", tt_lower_mul},
    {"aten::div.Tensor", tt_lower_div},
    {"aten::div.Scalar", tt_lower_div},
    {"aten::div.Tensor_mode", tt_lower_div_mode},
    {"aten::div.Scalar_mode", tt_lower_div_mode},
    {"aten::floor_divide", tt_lower_floor_divide},
    {"aten::floor_divide.Scalar", tt_lower_floor_divide},
    {"aten::remainder.Tensor", tt_lower_remainder},
    {"aten::remainder.Scalar", tt_lower_remainder},
    {"aten::remainder.Scalar_Tensor", tt_lower_remainder},
    {"aten::fmod.Tensor", tt_lower_fmod},
    {"aten::fmod.Scalar", tt_lower_fmod},
    {"aten::pow.Tensor_Tensor", tt_lower_pow},
    {"aten::pow.Tensor_Scalar", tt_lower_pow},
    {"aten::pow.Scalar", tt_lower_pow},
    {"aten::neg", tt_lower_neg},
    {"aten::abs", tt_lower_abs},
    {"aten::sign", tt_lower_sign},
    {"aten::sgn", tt_lower_sign},
    {"aten::floor", tt_lower_floor},
    {"aten::ceil", tt_lower_ceil},
    {"aten::round", tt_lower_round},
    {"aten::round.decimals", tt_lower_round_decimals},
    {"aten::trunc", tt_lower_trunc},
    {"aten::frac", tt_lower_frac},
    {"aten::exp", tt_lower_exp},
    {"aten::exp2", tt_lower_exp2},
    {"aten::expm1", tt_lower_expm1},
    {"aten::log", tt_lower_log},
    {"aten::log2", tt_lower_log2},
    {"aten::log10", tt_lower_log10},
    {"aten::log1p", tt_lower_log1p},
    {"aten::sqrt", tt_lower_sqrt},
    {"aten::rsqrt", tt_lower_rsqrt},
    {"aten::reciprocal", tt_lower_reciprocal},
    {"aten::sin", tt_lower_sin},
    {"aten::cos", tt_lower_cos},
    {"aten::tan", tt_lower_tan},
    {"aten::tanh", tt_lower_tanh},
    {"aten::asin", tt_lower_asin},
    {"aten::acos", tt_lower_acos},
    {"aten::atan", tt_lower_atan},
    {"aten::sinh", tt_lower_sinh},
    {"aten::cosh", tt_lower_cosh},
    {"aten::asinh", tt_lower_asinh},
    {"aten::acosh", tt_lower_acosh},
    {"aten::atanh", tt_lower_atanh},
    {"aten::sigmoid", tt_lower_sigmoid},
    {"aten::logit", tt_lower_logit},
    {"aten::erf", tt_lower_erf},
    {"aten::erfc", tt_lower_erfc},
    {"aten::erfinv", tt_lower_erfinv},
    {"aten::lgamma", tt_lower_lgamma},
    {"aten::digamma", tt_lower_digamma},
    {"aten::sinc", tt_lower_sinc},
    {"aten::deg2rad", tt_lower_deg2rad},
    {"aten::rad2deg", tt_lower_rad2deg},
    {"aten::eq.Tensor", tt_lower_eq},
    {"aten::eq.Scalar", tt_lower_eq},
    {"aten::ne.Tensor", tt_lower_ne},
    {"aten::ne.Scalar", tt_lower_ne},
    {"aten::lt.Tensor", tt_lower_lt},
    {"aten::lt.Scalar", tt_lower_lt},
    {"aten::le.Tensor", tt_lower_le},
    {"aten::le.Scalar", tt_lower_le},
    {"aten::gt.Tensor", tt_lower_gt},
    {"aten::gt.Scalar", tt_lower_gt},
    {"aten::ge.Tensor", tt_lower_ge},
    {"aten::ge.Scalar", tt_lower_ge},
    {"aten::logical_and", tt_lower_logical_and},
    {"aten::logical_or", tt_lower_logical_or},
    {"aten::logical_xor", tt_lower_logical_xor},
    {"aten::logical_not", tt_lower_logical_not},
    {"aten::bitwise_and.Tensor", tt_lower_bitwise_and},
    {"aten::bitwise_and.Scalar", tt_lower_bitwise_and},
    {"aten::bitwise_and.Scalar_Tensor", tt_lower_bitwise_and},
    {"aten::bitwise_or.Tensor", tt_lower_bitwise_or},
    {"aten::bitwise_or.Scalar", tt_lower_bitwise_or},
    {"aten::bitwise_or.Scalar_Tensor", tt_lower_bitwise_or},
    {"aten::bitwise_xor.Tensor", tt_lower_bitwise_xor},
    {"aten::bitwise_xor.Scalar", tt_lower_bitwise_xor},
    {"aten::bitwise_xor.Scalar_Tensor", tt_lower_bitwise_xor},
    {"aten::bitwise_not", tt_lower_bitwise_not},
    {"aten::bitwise_left_shift.Tensor", tt_lower_lshift},
    {"aten::bitwise_left_shift.Tensor_Scalar", tt_lower_lshift},
    {"aten::bitwise_left_shift.Scalar_Tensor", tt_lower_lshift},
    {"aten::bitwise_right_shift.Tensor", tt_lower_rshift},
    {"aten::bitwise_right_shift.Tensor_Scalar", tt_lower_rshift},
    {"aten::bitwise_right_shift.Scalar_Tensor", tt_lower_rshift},
    {"aten::__lshift__.Tensor", tt_lower_lshift},
    {"aten::__lshift__.Scalar", tt_lower_lshift},
    {"aten::__rshift__.Tensor", tt_lower_rshift},
    {"aten::__rshift__.Scalar", tt_lower_rshift},
    {"aten::maximum", tt_lower_maximum},
    {"aten::minimum", tt_lower_minimum},
    {"aten::fmax", tt_lower_fmax},
    {"aten::fmin", tt_lower_fmin},
    {"aten::clamp", tt_lower_clamp},
    {"aten::clamp.Tensor", tt_lower_clamp},
    {"aten::clamp_min", tt_lower_clamp_min},
    {"aten::clamp_min.Tensor", tt_lower_clamp_min},
    {"aten::clamp_max", tt_lower_clamp_max},
    {"aten::clamp_max.Tensor", tt_lower_clamp_max},
    {"aten::where.self", tt_lower_where},
    {"aten::where.ScalarSelf", tt_lower_where},
    {"aten::where.ScalarOther", tt_lower_where},
    {"aten::where.Scalar", tt_lower_where},
    {"aten::isnan", tt_lower_isnan},
    {"aten::isinf", tt_lower_isinf},
    {"aten::isposinf", tt_lower_isposinf},
    {"aten::isneginf", tt_lower_isneginf},
    {"aten::isfinite", tt_lower_isfinite},
    {"aten::signbit", tt_lower_signbit},
    {"aten::nan_to_num", tt_lower_nan_to_num},
    {"aten::lerp.Scalar", tt_lower_lerp},
    {"aten::lerp.Tensor", tt_lower_lerp},
    {"aten::addcmul", tt_lower_addcmul},
    {"aten::addcdiv", tt_lower_addcdiv},
    {"aten::xlogy.Tensor", tt_lower_xlogy},
    {"aten::xlogy.Scalar_Self", tt_lower_xlogy},
    {"aten::xlogy.Scalar_Other", tt_lower_xlogy},
    {"aten::special_xlog1py", tt_lower_xlog1py},
    {"aten::special_xlog1py.self_scalar", tt_lower_xlog1py},
    {"aten::special_xlog1py.other_scalar", tt_lower_xlog1py},
    {"aten::logaddexp", tt_lower_logaddexp},
    {"aten::logaddexp2", tt_lower_logaddexp2},
    {"aten::atan2", tt_lower_atan2},
    {"aten::hypot", tt_lower_hypot},
    {"aten::copysign.Tensor", tt_lower_copysign},
    {"aten::copysign.Scalar", tt_lower_copysign},
    {"aten::nextafter", tt_lower_nextafter},
    {"aten::heaviside", tt_lower_heaviside},
    {NULL, NULL},
};
