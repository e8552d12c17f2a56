/* random.c — lowerings of random ops: uniform, normal (functional, Tensor_float, float_Tensor, Tensor_Tensor,
 * float_float), bernoulli (Tensor, p, .Tensor), random (from, to, full range), exponential, geometric,
 * log_normal, cauchy, rand, randn, randint.
 *
 * Every op draws from RNG_UNIFORM, seeded by tt_lower_rng (which reserves numel counters per draw on the
 * device's generator), so the same seed gives the same numbers and the numbers never repeat across calls.
 * Distribution parameters (mean, std, p, from, to ...) are runtime scalar parameters, never constants. Results
 * need not equal PyTorch CPU's values (different generator), only their distribution, dtype and shape.
 * 16-bit floats are drawn and transformed in f32 and rounded once; f64 draws use 53-bit uniforms. */
#include "tt_lower.h"

#include <math.h>
#include <string.h>

/* ---- helpers ---- */

/* The dtype random numbers are computed in for a result of dtype dt. */
static tt_dtype rn_work(tt_dtype dt) { return dt == TT_F64 ? TT_F64 : TT_F32; }

/* Uniform [0, 1) of the given shape in dtype wd (f32 or f64), freshly reserved. */
static tt_ir_value rn_uniform(tt_lower_ctx *ctx, tt_dtype wd, int32_t rank, const int64_t *dims) {
    tt_ir_value seed, offset;
    int64_t n = tt_numel(rank, dims);
    tt_lower_rng(ctx, (uint64_t)(n > 0 ? n : 0), &seed, &offset);
    return tt_ir_rng_uniform(ctx->b, wd, rank, dims, seed, offset);
}

/* A FLOAT/INT/SCALAR argument as a runtime scalar parameter broadcast to the shape. */
static tt_ir_value rn_param(tt_lower_ctx *ctx, const tt_arg *a, tt_dtype wd, int32_t rank, const int64_t *dims) {
    tt_ir_value v = tt_lower_arg(ctx, a, wd);
    return tt_lower_to(ctx, v, wd, rank, dims);
}

static tt_ir_value rn_full(tt_lower_ctx *ctx, tt_dtype wd, const tt_ir_type *t, double v) {
    return tt_lower_full(ctx, wd, t->rank, t->dims, v);
}

#define RN_MUL(x, y) tt_ir_binary(ctx->b, TT_OP_MULTIPLY, (x), (y))
#define RN_ADD(x, y) tt_ir_binary(ctx->b, TT_OP_ADD, (x), (y))
#define RN_SUB(x, y) tt_ir_binary(ctx->b, TT_OP_SUBTRACT, (x), (y))

/* Standard normal numbers (Box-Muller over two independent uniform draws) in dtype wd. */
static tt_ir_value rn_standard_normal(tt_lower_ctx *ctx, tt_dtype wd, int32_t rank, const int64_t *dims) {
    tt_ir_type t;
    memset(&t, 0, sizeof t);
    t.dtype = wd;
    t.rank = rank;
    for (int32_t i = 0; i < rank; i++) t.dims[i] = dims[i];
    /* one reservation of 2n counters: the second draw starts n further on */
    tt_ir_value seed, offset;
    int64_t n = tt_numel(rank, dims);
    tt_lower_rng(ctx, 2 * (uint64_t)n, &seed, &offset);
    tt_ir_value off2 = tt_ir_binary(ctx->b, TT_OP_ADD, offset, tt_lower_const(ctx, TT_I64, (double)n));
    tt_ir_value u1 = tt_ir_rng_uniform(ctx->b, wd, rank, dims, seed, offset);
    tt_ir_value u2 = tt_ir_rng_uniform(ctx->b, wd, rank, dims, seed, off2);
    /* 1 - u1 lies in (0, 1], so the log is finite */
    tt_ir_value r = tt_ir_unary(ctx->b, TT_OP_LOG, RN_SUB(rn_full(ctx, wd, &t, 1.0), u1));
    r = tt_ir_unary(ctx->b, TT_OP_SQRT, RN_MUL(r, rn_full(ctx, wd, &t, -2.0)));
    tt_ir_value th = RN_MUL(u2, rn_full(ctx, wd, &t, 6.283185307179586476925));
    return RN_MUL(r, tt_ir_unary(ctx->b, TT_OP_COS, th));
}

static tt_status rn_need_float(tt_lower_ctx *ctx, tt_dtype dt) {
    (void)ctx;
    return tt_dtype_is_float(dt) ? TT_OK : TT_STATUS_UNSUPPORTED; /* the CPU raises PyTorch's own error */
}

/* ---- uniform / normal / exponential & co: functional forms of the in-place samplers (self gives the shape) ---- */

/* uniform(self, from=0, to=1, *, generator) */
static tt_status tt_lower_uniform(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (rn_need_float(ctx, t->dtype)) return TT_STATUS_UNSUPPORTED;
    double from = tt_lower_arg_double(&args[1]), to = tt_lower_arg_double(&args[2]);
    if (from > to)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "uniform_ expects to return a [from, to) range, but found from=%g > to=%g", from, to);
    tt_dtype wd = rn_work(t->dtype);
    tt_ir_value u = rn_uniform(ctx, wd, t->rank, t->dims);
    tt_ir_value lo = rn_param(ctx, &args[1], wd, t->rank, t->dims), hi = rn_param(ctx, &args[2], wd, t->rank, t->dims);
    outs[0] = tt_ir_convert(ctx->b, RN_ADD(lo, RN_MUL(u, RN_SUB(hi, lo))), t->dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status rn_check_std(tt_lower_ctx *ctx, double std) {
    if (!(std >= 0.0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "normal expects std >= 0.0, but found std %g", std);
    return TT_OK;
}

/* normal.functional(self, mean=0, std=1, *, generator) */
static tt_status tt_lower_normal_functional(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (rn_need_float(ctx, t->dtype)) return TT_STATUS_UNSUPPORTED;
    if (rn_check_std(ctx, tt_lower_arg_double(&args[2]))) return tt_ir_builder_status(ctx->b);
    tt_dtype wd = rn_work(t->dtype);
    tt_ir_value z = rn_standard_normal(ctx, wd, t->rank, t->dims);
    tt_ir_value m = rn_param(ctx, &args[1], wd, t->rank, t->dims), s = rn_param(ctx, &args[2], wd, t->rank, t->dims);
    outs[0] = tt_ir_convert(ctx->b, RN_ADD(m, RN_MUL(z, s)), t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* normal with tensor mean and/or std: the result has their broadcast shape and promoted float dtype. */
static tt_status rn_normal_tensors(tt_lower_ctx *ctx, const tt_arg *mean, const tt_arg *std, tt_ir_value *outs) {
    const tt_ir_type *tm = mean->kind == TT_ARG_TENSOR ? tt_lower_type_into(ctx, mean->value, (tt_ir_type[1]){{0}}) : NULL;
    const tt_ir_type *ts = std->kind == TT_ARG_TENSOR ? tt_lower_type_into(ctx, std->value, (tt_ir_type[1]){{0}}) : NULL;
    if (!tm && !ts) return tt_ir_builder_status(ctx->b);
    tt_dtype dt;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    if (tm && ts) {
        if (tm->dtype != ts->dtype && !(tt_dtype_is_float(tm->dtype) && tt_dtype_is_float(ts->dtype)))
            return TT_STATUS_UNSUPPORTED;
        tt_status st = tt_lower_broadcast_shapes(tm->rank, tm->dims, ts->rank, ts->dims, &rank, dims);
        if (st != TT_OK) return tt_ir_builder_fail(ctx->b, st, "%s", tt_last_error());
        dt = tm->dtype == ts->dtype ? tm->dtype : (tm->dtype == TT_F64 || ts->dtype == TT_F64 ? TT_F64 : TT_F32);
    } else {
        const tt_ir_type *t = tm ? tm : ts;
        dt = t->dtype;
        rank = t->rank;
        memcpy(dims, t->dims, sizeof(int64_t) * (size_t)rank);
        const tt_arg *f = tm ? std : mean;
        if (!tm && rn_check_std(ctx, 0.0)) return tt_ir_builder_status(ctx->b);
        if (tm && rn_check_std(ctx, tt_lower_arg_double(f))) return tt_ir_builder_status(ctx->b);
    }
    if (!tt_dtype_is_float(dt)) return TT_STATUS_UNSUPPORTED;
    tt_dtype wd = rn_work(dt);
    tt_ir_value z = rn_standard_normal(ctx, wd, rank, dims);
    tt_ir_value m = tm ? tt_lower_to(ctx, mean->value, wd, rank, dims) : rn_param(ctx, mean, wd, rank, dims);
    tt_ir_value s = ts ? tt_lower_to(ctx, std->value, wd, rank, dims) : rn_param(ctx, std, wd, rank, dims);
    outs[0] = tt_ir_convert(ctx->b, RN_ADD(m, RN_MUL(z, s)), dt);
    return tt_ir_builder_status(ctx->b);
}

/* normal.Tensor_float(mean, std=1), normal.float_Tensor(mean, std), normal.Tensor_Tensor(mean, std) */
static tt_status tt_lower_normal_tensors(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs; (void)nouts;
    return rn_normal_tensors(ctx, &args[0], &args[1], outs);
}

/* The dtype of a creation op's optional dtype argument (default dflt). A `ScalarType?` may arrive as
 * TT_ARG_DTYPE or, since TorchScript types it as int, as TT_ARG_INT holding c10::ScalarType's value; dtypes we do
 * not have (complex...) give TT_DTYPE_COUNT, which callers treat as unsupported. */
static tt_dtype rn_dtype_arg(const tt_arg *a, tt_dtype dflt) {
    if (a->kind == TT_ARG_DTYPE) return a->dtype;
    if (a->kind != TT_ARG_INT) return dflt;
    switch (a->i) { /* c10::ScalarType numbering */
    case 0: return TT_U8;
    case 1: return TT_I8;
    case 2: return TT_I16;
    case 3: return TT_I32;
    case 4: return TT_I64;
    case 5: return TT_F16;
    case 6: return TT_F32;
    case 7: return TT_F64;
    case 11: return TT_BOOL;
    case 15: return TT_BF16;
    default: return TT_DTYPE_COUNT;
    }
}

/* normal.float_float(mean, std, size, *, generator, dtype, layout, device, pin_memory) */
static tt_status tt_lower_normal_float_float(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                             int32_t nouts) {
    (void)nouts;
    if (args[2].kind != TT_ARG_INTS || args[2].n > TT_MAX_RANK) return TT_STATUS_UNSUPPORTED;
    tt_dtype dt = nargs > 4 ? rn_dtype_arg(&args[4], tt_lower_default_float(ctx)) : tt_lower_default_float(ctx);
    if (!tt_dtype_is_float(dt)) return TT_STATUS_UNSUPPORTED;
    if (rn_check_std(ctx, tt_lower_arg_double(&args[1]))) return tt_ir_builder_status(ctx->b);
    tt_dtype wd = rn_work(dt);
    int32_t rank = args[2].n;
    const int64_t *dims = args[2].ints;
    tt_ir_value z = rn_standard_normal(ctx, wd, rank, dims);
    tt_ir_value m = rn_param(ctx, &args[0], wd, rank, dims), s = rn_param(ctx, &args[1], wd, rank, dims);
    outs[0] = tt_ir_convert(ctx->b, RN_ADD(m, RN_MUL(z, s)), dt);
    return tt_ir_builder_status(ctx->b);
}

/* log_normal(self, mean=1, std=2): exp of a normal. */
static tt_status tt_lower_log_normal(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (rn_need_float(ctx, t->dtype)) return TT_STATUS_UNSUPPORTED;
    double std = tt_lower_arg_double(&args[2]);
    if (!(std > 0.0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "log_normal_ expects std > 0.0, but found std=%g", std);
    tt_dtype wd = rn_work(t->dtype);
    tt_ir_value z = rn_standard_normal(ctx, wd, t->rank, t->dims);
    tt_ir_value m = rn_param(ctx, &args[1], wd, t->rank, t->dims), s = rn_param(ctx, &args[2], wd, t->rank, t->dims);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_unary(ctx->b, TT_OP_EXP, RN_ADD(m, RN_MUL(z, s))), t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* exponential(self, lambd=1): -log(1 - u) / lambd. */
static tt_status tt_lower_exponential(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t->dtype))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Exponential distribution is a continuous probability distribution. dtype must be a "
                                  "floating point but you specified %s", tt_dtype_name(t->dtype));
    double l = tt_lower_arg_double(&args[1]);
    if (!(l > 0.0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "exponential_ expects lambda > 0.0, but found lambda=%g", l);
    tt_dtype wd = rn_work(t->dtype);
    tt_ir_value u = rn_uniform(ctx, wd, t->rank, t->dims);
    tt_ir_value e = tt_ir_unary(ctx->b, TT_OP_LOG1P, tt_ir_unary(ctx->b, TT_OP_NEGATE, u)); /* log(1-u) <= 0 */
    tt_ir_value lam = rn_param(ctx, &args[1], wd, t->rank, t->dims);
    e = tt_ir_binary(ctx->b, TT_OP_DIVIDE, tt_ir_unary(ctx->b, TT_OP_NEGATE, e), lam);
    outs[0] = tt_ir_convert(ctx->b, e, t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* geometric(self, p): ceil(log(1 - u) / log(1 - p)), the number of trials up to the first success (>= 1). */
static tt_status tt_lower_geometric(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (t->dtype == TT_BOOL) return TT_STATUS_UNSUPPORTED;
    double p = tt_lower_arg_double(&args[1]);
    if (!(p > 0.0 && p < 1.0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "geometric_ expects p to be in (0, 1), but got p=%g", p);
    tt_dtype wd = TT_F64; /* the log ratio needs the precision for small p */
    tt_ir_value u = rn_uniform(ctx, wd, t->rank, t->dims);
    tt_ir_value num = tt_ir_unary(ctx->b, TT_OP_LOG1P, tt_ir_unary(ctx->b, TT_OP_NEGATE, u));
    tt_ir_value pp = rn_param(ctx, &args[1], wd, t->rank, t->dims);
    tt_ir_value den = tt_ir_unary(ctx->b, TT_OP_LOG1P, tt_ir_unary(ctx->b, TT_OP_NEGATE, pp));
    tt_ir_value k = tt_ir_unary(ctx->b, TT_OP_CEIL, tt_ir_binary(ctx->b, TT_OP_DIVIDE, num, den));
    k = tt_ir_binary(ctx->b, TT_OP_MAXIMUM, k, rn_full(ctx, wd, t, 1.0)); /* u == 0 gives 0: still one trial */
    outs[0] = tt_ir_convert(ctx->b, k, t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* cauchy(self, median=0, sigma=1): median + sigma * tan(pi * (u - 1/2)). */
static tt_status tt_lower_cauchy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (rn_need_float(ctx, t->dtype)) return TT_STATUS_UNSUPPORTED;
    tt_dtype wd = rn_work(t->dtype);
    tt_ir_value u = rn_uniform(ctx, wd, t->rank, t->dims);
    tt_ir_value a = RN_MUL(RN_SUB(u, rn_full(ctx, wd, t, 0.5)), rn_full(ctx, wd, t, 3.14159265358979323846));
    tt_ir_value m = rn_param(ctx, &args[1], wd, t->rank, t->dims), s = rn_param(ctx, &args[2], wd, t->rank, t->dims);
    outs[0] = tt_ir_convert(ctx->b, RN_ADD(m, RN_MUL(s, tt_ir_unary(ctx->b, TT_OP_TAN, a))), t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- bernoulli ---- */

/* (u < p) in dtype dt; p already in wd and of the result's shape. */
static tt_ir_value rn_bernoulli(tt_lower_ctx *ctx, tt_ir_value p, const tt_ir_type *t, tt_dtype wd) {
    tt_ir_value u = rn_uniform(ctx, wd, t->rank, t->dims);
    return tt_ir_convert(ctx->b, tt_ir_compare(ctx->b, TT_CMP_LT, u, p), t->dtype);
}

/* bernoulli.p(self, p=0.5, *, generator) */
static tt_status tt_lower_bernoulli_p(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    double p = tt_lower_arg_double(&args[1]);
    if (!(p >= 0.0 && p <= 1.0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "bernoulli_ expects p to be in [0, 1], but got p=%g", p);
    tt_dtype wd = t->dtype == TT_F64 ? TT_F64 : TT_F32;
    outs[0] = rn_bernoulli(ctx, rn_param(ctx, &args[1], wd, t->rank, t->dims), t, wd);
    return tt_ir_builder_status(ctx->b);
}

/* bernoulli(self, *, generator): self holds the probabilities (float). */
static tt_status tt_lower_bernoulli(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t->dtype)) return TT_STATUS_UNSUPPORTED;
    tt_dtype wd = rn_work(t->dtype);
    outs[0] = rn_bernoulli(ctx, tt_ir_convert(ctx->b, args[0].value, wd), t, wd);
    return tt_ir_builder_status(ctx->b);
}

/* bernoulli.Tensor(self, p, *, generator): shape and dtype of self, probabilities p broadcast to it. */
static tt_status tt_lower_bernoulli_tensor(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                           int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}}), *tp = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}});
    if (!t || !tp) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(tp->dtype)) return TT_STATUS_UNSUPPORTED;
    tt_dtype wd = tp->dtype == TT_F64 ? TT_F64 : TT_F32;
    outs[0] = rn_bernoulli(ctx, tt_lower_to(ctx, args[1].value, wd, t->rank, t->dims), t, wd);
    return tt_ir_builder_status(ctx->b);
}

/* ---- random: integers uniform in [from, to) ---- */

/* Largest integer the dtype's random_() may produce: 2^digits for floats, the max for integers. */
static double rn_dtype_top(tt_dtype dt) {
    switch (dt) {
    case TT_F32: return 16777216.0;
    case TT_F64: return 9007199254740992.0;
    case TT_BF16: return 256.0;
    case TT_F16: return 2048.0;
    case TT_I64: return 9223372036854775807.0;
    case TT_I32: return 2147483647.0;
    case TT_I16: return 32767.0;
    case TT_I8: return 127.0;
    case TT_U8: return 255.0;
    case TT_BOOL: return 1.0;
    default: return 0.0;
    }
}

/* from + floor(u * (to - from)) with a 53-bit uniform, clamped below to (guards rounding at the top). from and
 * the range travel as scalar parameters. */
static tt_ir_value rn_int_range(tt_lower_ctx *ctx, const tt_ir_type *t, double from, double range) {
    /* the largest offset: range - 1, or the largest double below range where range - 1 is not representable */
    double kmax = range - 1.0 < range ? range - 1.0 : nextafter(range, 0.0);
    tt_ir_value u = rn_uniform(ctx, TT_F64, t->rank, t->dims);
    tt_ir_value f = tt_lower_to(ctx, tt_lower_scalar_param(ctx, TT_F64, 0, from), TT_F64, t->rank, t->dims);
    tt_ir_value r = tt_lower_to(ctx, tt_lower_scalar_param(ctx, TT_F64, 0, range), TT_F64, t->rank, t->dims);
    tt_ir_value km = tt_lower_to(ctx, tt_lower_scalar_param(ctx, TT_F64, 0, kmax), TT_F64, t->rank, t->dims);
    tt_ir_value k = tt_ir_unary(ctx->b, TT_OP_FLOOR, RN_MUL(u, r));
    k = tt_ir_binary(ctx->b, TT_OP_MINIMUM, k, km);
    return tt_ir_convert(ctx->b, RN_ADD(f, k), t->dtype);
}

static tt_status rn_random(tt_lower_ctx *ctx, tt_ir_value self, double from, double to, bool have_to,
                           tt_ir_value *outs) {
    const tt_ir_type *t = tt_lower_type_into(ctx, self, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    double top = rn_dtype_top(t->dtype);
    double to_excl = have_to ? to : top + 1.0;
    if (have_to && !(from < to))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "random_ expects 'from' to be less than 'to', but got from=%.17g >= to=%.17g", from, to);
    if (tt_dtype_is_int(t->dtype) || t->dtype == TT_BOOL) {
        double lo = t->dtype == TT_BOOL ? 0.0 : (tt_dtype_is_signed(t->dtype) ? -top - 1.0 : 0.0);
        if (from < lo || from > top)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "from is out of bounds for %s",
                                      tt_dtype_name(t->dtype));
        if (have_to && (to - 1 < lo || to - 1 > top))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "to - 1 is out of bounds for %s",
                                      tt_dtype_name(t->dtype));
    }
    outs[0] = rn_int_range(ctx, t, from, to_excl - from);
    return tt_ir_builder_status(ctx->b);
}

/* random.from(self, from, to=None) */
static tt_status tt_lower_random_from(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    bool have_to = args[2].kind != TT_ARG_NONE;
    return rn_random(ctx, args[0].value, (double)args[1].i, have_to ? (double)args[2].i : 0.0, have_to, outs);
}

/* random.to(self, to) */
static tt_status tt_lower_random_to(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs; (void)nouts;
    return rn_random(ctx, args[0].value, 0.0, (double)args[1].i, true, outs);
}

/* random(self): [0, top] for the dtype. */
static tt_status tt_lower_random(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs; (void)nouts;
    return rn_random(ctx, args[0].value, 0.0, 0.0, false, outs);
}

/* ---- creation: rand, randn, randint (size lists, optional dtype) ---- */

/* rand(size, *, dtype, layout, device, pin_memory) and rand.generator(size, *, generator, dtype, ...) */
static tt_status rn_rand_like(tt_lower_ctx *ctx, const tt_arg *size, const tt_arg *dtype, bool normal,
                              tt_ir_value *outs) {
    if (size->kind != TT_ARG_INTS || size->n > TT_MAX_RANK) return TT_STATUS_UNSUPPORTED;
    tt_dtype dt = rn_dtype_arg(dtype, tt_lower_default_float(ctx));
    if (!tt_dtype_is_float(dt)) return TT_STATUS_UNSUPPORTED;
    tt_dtype wd = rn_work(dt);
    tt_ir_value v = normal ? rn_standard_normal(ctx, wd, size->n, size->ints) : rn_uniform(ctx, wd, size->n, size->ints);
    outs[0] = tt_ir_convert(ctx->b, v, dt);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_rand(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts) {
    (void)nouts;
    return rn_rand_like(ctx, &args[0], nargs > 1 ? &args[1] : &args[0], false, outs);
}
static tt_status tt_lower_rand_gen(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    return rn_rand_like(ctx, &args[0], nargs > 2 ? &args[2] : &args[0], false, outs);
}
static tt_status tt_lower_randn(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts) {
    (void)nouts;
    return rn_rand_like(ctx, &args[0], nargs > 1 ? &args[1] : &args[0], true, outs);
}
static tt_status tt_lower_randn_gen(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    return rn_rand_like(ctx, &args[0], nargs > 2 ? &args[2] : &args[0], true, outs);
}

/* randint(low, high, size, *, dtype=long, ...): low may be absent (0). */
static tt_status rn_randint(tt_lower_ctx *ctx, int64_t low, int64_t high, const tt_arg *size, const tt_arg *dtype,
                            tt_ir_value *outs) {
    if (size->kind != TT_ARG_INTS || size->n > TT_MAX_RANK) return TT_STATUS_UNSUPPORTED;
    tt_dtype dt = rn_dtype_arg(dtype, TT_I64);
    if (dt == TT_DTYPE_COUNT) return TT_STATUS_UNSUPPORTED;
    if (!(low < high))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "random_ expects 'from' to be less than 'to', but got from=%lld >= to=%lld",
                                  (long long)low, (long long)high);
    tt_ir_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dt;
    t.rank = size->n;
    for (int32_t i = 0; i < size->n; i++) t.dims[i] = size->ints[i];
    outs[0] = rn_int_range(ctx, &t, (double)low, (double)high - (double)low);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_randint(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randint(ctx, 0, args[0].i, &args[1], nargs > 2 ? &args[2] : &none, outs);
}
static tt_status tt_lower_randint_gen(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randint(ctx, 0, args[0].i, &args[1], nargs > 3 ? &args[3] : &none, outs);
}
static tt_status tt_lower_randint_low(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randint(ctx, args[0].i, args[1].i, &args[2], nargs > 3 ? &args[3] : &none, outs);
}
static tt_status tt_lower_randint_low_gen(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                          int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randint(ctx, args[0].i, args[1].i, &args[2], nargs > 4 ? &args[4] : &none, outs);
}

/* randperm(n, *, dtype=long, ...): the order that sorts n random 53-bit keys (ties are vanishingly rare and
 * resolved by position, so the result is always a permutation). */
static tt_status rn_randperm(tt_lower_ctx *ctx, int64_t n, const tt_arg *dtype, tt_ir_value *outs) {
    if (n < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "n must be non-negative, got %lld", (long long)n);
    tt_dtype dt = rn_dtype_arg(dtype, TT_I64);
    if (dt == TT_DTYPE_COUNT || dt == TT_BOOL || (dt != TT_I64 && (double)n > rn_dtype_top(dt) + 1.0)) return TT_STATUS_UNSUPPORTED;
    tt_ir_value keys = rn_uniform(ctx, TT_F64, 1, &n);
    tt_ir_value ops[2] = {keys, tt_ir_iota(ctx->b, TT_I64, 1, &n, 0)}, res[2] = {TT_IR_NONE, TT_IR_NONE};
    tt_ir_sort(ctx->b, 2, ops, 0, false, true, res);
    outs[0] = tt_ir_convert(ctx->b, res[1], dt);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_randperm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randperm(ctx, args[0].i, nargs > 1 ? &args[1] : &none, outs);
}
static tt_status tt_lower_randperm_gen(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    static const tt_arg none = {TT_ARG_NONE, TT_IR_NONE, false, TT_F32, 0, 0.0, false, 0, NULL, NULL, NULL};
    return rn_randperm(ctx, args[0].i, nargs > 2 ? &args[2] : &none, outs);
}

const tt_lower_entry tt_lower_table_random[] = {
    {"aten::randperm", tt_lower_randperm},
    {"aten::randperm.generator", tt_lower_randperm_gen},
    {"aten::uniform", tt_lower_uniform},
    {"aten::normal_functional", tt_lower_normal_functional},
    {"aten::normal.Tensor_float", tt_lower_normal_tensors},
    {"aten::normal.float_Tensor", tt_lower_normal_tensors},
    {"aten::normal.Tensor_Tensor", tt_lower_normal_tensors},
    {"aten::normal.float_float", tt_lower_normal_float_float},
    {"aten::log_normal", tt_lower_log_normal},
    {"aten::exponential", tt_lower_exponential},
    {"aten::geometric", tt_lower_geometric},
    {"aten::cauchy", tt_lower_cauchy},
    {"aten::bernoulli", tt_lower_bernoulli},
    {"aten::bernoulli.p", tt_lower_bernoulli_p},
    {"aten::bernoulli.Tensor", tt_lower_bernoulli_tensor},
    {"aten::random.from", tt_lower_random_from},
    {"aten::random.to", tt_lower_random_to},
    {"aten::random", tt_lower_random},
    {"aten::rand", tt_lower_rand},
    {"aten::rand.generator", tt_lower_rand_gen},
    {"aten::randn", tt_lower_randn},
    {"aten::randn.generator", tt_lower_randn_gen},
    {"aten::randint", tt_lower_randint},
    {"aten::randint.generator", tt_lower_randint_gen},
    {"aten::randint.low", tt_lower_randint_low},
    {"aten::randint.low_generator", tt_lower_randint_low_gen},
    {NULL, NULL},
};
