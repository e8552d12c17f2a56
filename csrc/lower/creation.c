/* creation.c — lowerings that make tensors from nothing but scalars and sizes: fill / zero, full and friends
 * (zeros, ones, *_like, new_*), arange, linspace, logspace, scalar_tensor, eye.
 *
 * Fill values, starts, ends and steps travel as scalar parameters, so one program serves every value; sizes
 * (and arange's length, which follows from its values) are structural.
 */
#include "tt_lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

/* The dtype argument, or dflt when it is None. */
static tt_dtype dtype_arg(const tt_arg *a, tt_dtype dflt) { return a && a->kind == TT_ARG_DTYPE ? a->dtype : dflt; }

/* PyTorch's default dtype for a fill value: bool, i64 for integers, the default float dtype otherwise. */
static tt_dtype scalar_default_dtype(const tt_lower_ctx *ctx, const tt_arg *a) {
    tt_dtype dflt = tt_lower_default_float(ctx);
    if (a->kind == TT_ARG_SCALAR) return a->dtype == TT_BOOL ? TT_BOOL : a->dtype == TT_I64 ? TT_I64 : dflt;
    if (a->kind == TT_ARG_BOOL) return TT_BOOL;
    if (a->kind == TT_ARG_INT) return TT_I64;
    return dflt;
}

static bool is_int_scalar(const tt_arg *a) {
    return (a->kind == TT_ARG_SCALAR && a->dtype != TT_F64) || a->kind == TT_ARG_INT || a->kind == TT_ARG_BOOL;
}

static int64_t arg_int(const tt_arg *a) {
    if (a->kind == TT_ARG_SCALAR && a->dtype == TT_BOOL) return a->b ? 1 : 0;
    if (a->kind == TT_ARG_BOOL) return a->b ? 1 : 0;
    return a->i;
}

/* A sizes argument checked for negatives (PyTorch's message). */
static bool size_arg(tt_lower_ctx *ctx, const tt_arg *a, int32_t *rank, int64_t *dims) {
    if (a->kind != TT_ARG_INTS || a->n > TT_MAX_RANK) {
        tt_lower_unsupported(ctx, "size argument");
        return false;
    }
    for (int32_t i = 0; i < a->n; i++) {
        if (a->ints[i] < 0) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "Trying to create tensor with negative dimension %lld", (long long)a->ints[i]);
            return false;
        }
        dims[i] = a->ints[i];
    }
    *rank = a->n;
    return true;
}

/* A runtime value broadcast to a shape (value as a scalar parameter, or a 0-d tensor converted). */
static tt_ir_value fill_value(tt_lower_ctx *ctx, const tt_arg *v, tt_dtype dt, int32_t rank, const int64_t *dims) {
    return tt_lower_to(ctx, tt_lower_arg(ctx, v, dt), dt, rank, dims);
}

/* ---- fill / zero / full family ---- */

/* fill.Scalar(self, value) and fill.Tensor(self, value) */
static tt_status tt_lower_fill(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (args[1].kind == TT_ARG_TENSOR && !args[1].wrapped_number && tt_lower_type_copy(ctx, args[1].value).rank != 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "fill_ only supports 0-dimension value tensor but got tensor with %d dimensions.",
                                  tt_lower_type_copy(ctx, args[1].value).rank);
    outs[0] = fill_value(ctx, &args[1], xt.dtype, xt.rank, xt.dims);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_zero(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    outs[0] = tt_lower_full(ctx, xt.dtype, xt.rank, xt.dims, 0.0);
    return tt_ir_builder_status(ctx->b);
}

/* zeros_like / ones_like(self, dtype, ...) */
static tt_status like_const(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, double v) {
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    tt_dtype dt = dtype_arg(nargs > 1 ? &args[1] : NULL, xt.dtype);
    outs[0] = tt_lower_full(ctx, dt, xt.rank, xt.dims, v);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_zeros_like(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nouts;
    return like_const(ctx, args, nargs, outs, 0.0);
}

static tt_status tt_lower_ones_like(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    return like_const(ctx, args, nargs, outs, 1.0);
}

/* full_like(self, fill_value, dtype, ...) */
static tt_status tt_lower_full_like(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    tt_dtype dt = dtype_arg(nargs > 2 ? &args[2] : NULL, xt.dtype);
    outs[0] = fill_value(ctx, &args[1], dt, xt.rank, xt.dims);
    return tt_ir_builder_status(ctx->b);
}

/* full(size, fill_value, dtype, ...) */
static tt_status tt_lower_full_op(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    if (!size_arg(ctx, &args[0], &rank, dims)) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = dtype_arg(nargs > 2 ? &args[2] : NULL, scalar_default_dtype(ctx, &args[1]));
    outs[0] = fill_value(ctx, &args[1], dt, rank, dims);
    return tt_ir_builder_status(ctx->b);
}

/* zeros / ones(size, dtype, ...) */
static tt_status sized_const(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, double v) {
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    if (!size_arg(ctx, &args[0], &rank, dims)) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = dtype_arg(nargs > 1 ? &args[1] : NULL, tt_lower_default_float(ctx));
    outs[0] = tt_lower_full(ctx, dt, rank, dims, v);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_zeros(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nouts;
    return sized_const(ctx, args, nargs, outs, 0.0);
}

static tt_status tt_lower_ones(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    return sized_const(ctx, args, nargs, outs, 1.0);
}

/* new_zeros / new_ones(self, size, dtype, ...): self's dtype by default. */
static tt_status new_const(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, double v) {
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    if (!size_arg(ctx, &args[1], &rank, dims)) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = dtype_arg(nargs > 2 ? &args[2] : NULL, tt_lower_type_copy(ctx, args[0].value).dtype);
    outs[0] = tt_lower_full(ctx, dt, rank, dims, v);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_new_zeros(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nouts;
    return new_const(ctx, args, nargs, outs, 0.0);
}

static tt_status tt_lower_new_ones(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    return new_const(ctx, args, nargs, outs, 1.0);
}

/* new_full(self, size, fill_value, dtype, ...) */
static tt_status tt_lower_new_full(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    if (!size_arg(ctx, &args[1], &rank, dims)) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = dtype_arg(nargs > 3 ? &args[3] : NULL, tt_lower_type_copy(ctx, args[0].value).dtype);
    outs[0] = fill_value(ctx, &args[2], dt, rank, dims);
    return tt_ir_builder_status(ctx->b);
}

/* scalar_tensor(s, dtype, ...): default dtype is the default float dtype whatever s is. */
static tt_status tt_lower_scalar_tensor(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nouts;
    tt_dtype dt = dtype_arg(nargs > 1 ? &args[1] : NULL, tt_lower_default_float(ctx));
    outs[0] = tt_lower_arg(ctx, &args[0], dt);
    return tt_ir_builder_status(ctx->b);
}

/* ---- ranges ---- */

/* start + step * iota over n elements, computed in acc (f64 for f32/f64 and ints, f32 for half types, i64 for
 * integer ranges from integer arguments), converted to dt. */
static tt_ir_value affine_range(tt_lower_ctx *ctx, tt_dtype dt, tt_dtype acc, int64_t n, const tt_arg *start,
                                const tt_arg *step) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value s0 = start ? tt_lower_arg(ctx, start, acc) : tt_lower_const(ctx, acc, 0.0);
    tt_ir_value st = step ? tt_lower_arg(ctx, step, acc) : tt_lower_const(ctx, acc, 1.0);
    tt_ir_value i = tt_ir_iota(b, acc, 1, &n, 0);
    tt_ir_value v = tt_ir_binary(b, TT_OP_ADD, tt_lower_to(ctx, s0, acc, 1, &n),
                                 tt_ir_binary(b, TT_OP_MULTIPLY, tt_lower_to(ctx, st, acc, 1, &n), i));
    return tt_ir_convert(b, v, dt);
}

/* arange(end) / arange.start(start, end) / arange.start_step(start, end, step); dtype follows the arguments. */
static tt_status arange_common(tt_lower_ctx *ctx, const tt_arg *start, const tt_arg *end, const tt_arg *step,
                               const tt_arg *dtype, tt_ir_value *outs) {
    bool all_int = (!start || is_int_scalar(start)) && is_int_scalar(end) && (!step || is_int_scalar(step));
    tt_dtype dt = dtype_arg(dtype, all_int ? TT_I64 : tt_lower_default_float(ctx));
    if (dt == TT_BOOL) return tt_lower_unsupported(ctx, "arange as bool");
    if (tt_dtype_is_int(dt) && !all_int) return tt_lower_unsupported(ctx, "integer arange with float bounds");
    int64_t n;
    if (all_int) {
        int64_t a = start ? arg_int(start) : 0, z = arg_int(end), s = step ? arg_int(step) : 1;
        if (s == 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "step must be nonzero");
        if (!((s > 0 && z >= a) || (s < 0 && z <= a)))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "upper bound and lower bound inconsistent with step sign");
        n = (int64_t)ceil((double)(z - a) / (double)s);
    } else {
        double a = start ? tt_lower_arg_double(start) : 0.0, z = tt_lower_arg_double(end);
        double s = step ? tt_lower_arg_double(step) : 1.0;
        if (!isfinite(a) || !isfinite(z))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "unsupported range: %g -> %g", a, z);
        if (s == 0.0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "step must be nonzero");
        if (!((s > 0 && z >= a) || (s < 0 && z <= a)))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "upper bound and lower bound inconsistent with step sign");
        double nd = ceil((z - a) / s);
        if (!(nd >= 0 && nd < 9.0e15))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "invalid size, possible overflow?");
        n = (int64_t)nd;
    }
    tt_dtype acc = tt_dtype_is_int(dt) ? TT_I64 : (dt == TT_BF16 || dt == TT_F16) ? TT_F32 : TT_F64;
    outs[0] = affine_range(ctx, dt, acc, n, start, step);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_arange(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nouts;
    return arange_common(ctx, NULL, &args[0], NULL, nargs > 1 ? &args[1] : NULL, outs);
}

static tt_status tt_lower_arange_start(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    return arange_common(ctx, &args[0], &args[1], NULL, nargs > 2 ? &args[2] : NULL, outs);
}

static tt_status tt_lower_arange_start_step(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nouts;
    return arange_common(ctx, &args[0], &args[1], &args[2], nargs > 3 ? &args[3] : NULL, outs);
}

/* PyTorch's linspace: step = (end - start) / (steps - 1); the first half counts up from start, the second half
 * down from end (so both ends are exact). In acc, as a [steps] vector. */
static tt_ir_value linspace_values(tt_lower_ctx *ctx, tt_dtype acc, const tt_arg *start, const tt_arg *end,
                                   int64_t steps) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value a = tt_lower_to(ctx, tt_lower_arg(ctx, start, acc), acc, 1, &steps);
    tt_ir_value z = tt_lower_to(ctx, tt_lower_arg(ctx, end, acc), acc, 1, &steps);
    if (steps == 1) return a;
    tt_ir_value step = tt_ir_binary(b, TT_OP_DIVIDE, tt_ir_binary(b, TT_OP_SUBTRACT, z, a),
                                    tt_lower_full(ctx, acc, 1, &steps, (double)(steps - 1)));
    tt_ir_value i = tt_ir_iota(b, acc, 1, &steps, 0);
    tt_ir_value up = tt_ir_binary(b, TT_OP_ADD, a, tt_ir_binary(b, TT_OP_MULTIPLY, step, i));
    tt_ir_value back = tt_ir_binary(b, TT_OP_SUBTRACT, tt_lower_full(ctx, acc, 1, &steps, (double)(steps - 1)), i);
    tt_ir_value down = tt_ir_binary(b, TT_OP_SUBTRACT, z, tt_ir_binary(b, TT_OP_MULTIPLY, step, back));
    tt_ir_value ii = tt_ir_iota(b, TT_I64, 1, &steps, 0);
    tt_ir_value first = tt_ir_compare(b, TT_CMP_LT, ii, tt_lower_full(ctx, TT_I64, 1, &steps, (double)(steps / 2)));
    return tt_ir_select(b, first, up, down);
}

/* linspace(start, end, steps, dtype, ...) with scalar bounds; float dtypes only (integer linspace rounds in a
 * way we do not mirror yet). */
static tt_status tt_lower_linspace(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    int64_t steps = args[2].i;
    if (steps < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "number of steps must be non-negative");
    tt_dtype dt = dtype_arg(nargs > 3 ? &args[3] : NULL, tt_lower_default_float(ctx));
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported(ctx, "integer linspace");
    if (steps == 0) {
        outs[0] = tt_lower_full(ctx, dt, 1, &steps, 0.0);
        return tt_ir_builder_status(ctx->b);
    }
    tt_dtype acc = dt == TT_F64 ? TT_F64 : TT_F32;
    outs[0] = tt_ir_convert(ctx->b, linspace_values(ctx, acc, &args[0], &args[1], steps), dt);
    return tt_ir_builder_status(ctx->b);
}

/* logspace(start, end, steps, base, dtype, ...): base ** linspace(start, end, steps); float dtypes only. */
static tt_status tt_lower_logspace(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    int64_t steps = args[2].i;
    if (steps < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "number of steps must be non-negative");
    tt_dtype dt = dtype_arg(nargs > 4 ? &args[4] : NULL, tt_lower_default_float(ctx));
    if (!tt_dtype_is_float(dt)) return tt_lower_unsupported(ctx, "integer logspace");
    if (steps == 0) {
        outs[0] = tt_lower_full(ctx, dt, 1, &steps, 0.0);
        return tt_ir_builder_status(ctx->b);
    }
    tt_dtype acc = dt == TT_F64 ? TT_F64 : TT_F32;
    tt_ir_value e = linspace_values(ctx, acc, &args[0], &args[1], steps);
    double base = args[3].kind == TT_ARG_FLOAT ? args[3].f : 10.0;
    tt_ir_value bv = tt_lower_to(ctx, tt_lower_scalar_param(ctx, acc, 0, base), acc, 1, &steps);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_binary(ctx->b, TT_OP_POWER, bv, e), dt);
    return tt_ir_builder_status(ctx->b);
}

/* eye(n, dtype) / eye.m(n, m, dtype) */
static tt_status eye_common(tt_lower_ctx *ctx, int64_t n, int64_t m, const tt_arg *dtype, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    if (n < 0 || m < 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "%s must be greater or equal to 0, got %lld",
                                  n < 0 ? "n" : "m", (long long)(n < 0 ? n : m));
    tt_dtype dt = dtype_arg(dtype, tt_lower_default_float(ctx));
    int64_t dims[2] = {n, m};
    tt_ir_value eq = tt_ir_compare(b, TT_CMP_EQ, tt_ir_iota(b, TT_I64, 2, dims, 0), tt_ir_iota(b, TT_I64, 2, dims, 1));
    outs[0] = tt_ir_convert(b, eq, dt);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_eye(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nouts;
    return eye_common(ctx, args[0].i, args[0].i, nargs > 1 ? &args[1] : NULL, outs);
}

static tt_status tt_lower_eye_m(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nouts;
    return eye_common(ctx, args[0].i, args[1].i, nargs > 2 ? &args[2] : NULL, outs);
}

/* tril_indices / triu_indices(row, col, offset, dtype, ...): the coordinates of the lower (upper) triangle in
 * row-major order as [2, N]. They depend only on the structural ints, so they are computed here as a constant. */
static tt_status tri_indices(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, bool lower) {
    tt_ir_builder *b = ctx->b;
    int64_t row = args[0].i, col = args[1].i, off = args[2].i;
    if (row < 0 || col < 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "row must be non-negative, got%lld",
                                  (long long)(row < 0 ? row : col));
    tt_dtype dt = dtype_arg(nargs > 3 ? &args[3] : NULL, TT_I64);
    if (dt != TT_I64 && dt != TT_I32) return tt_lower_unsupported(ctx, "tril_indices dtype");
    if (row > 0 && col > (int64_t)(((size_t)1 << 26) / (size_t)row)) return tt_lower_unsupported(ctx, "tril_indices size");
    int64_t n = 0;
    for (int64_t i = 0; i < row; i++)
        for (int64_t j = 0; j < col; j++)
            if (lower ? j - i <= off : j - i >= off) n++;
    int64_t *data = malloc(sizeof(int64_t) * (size_t)(2 * n + 1));
    if (!data) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "tril_indices: out of host memory");
    int64_t k = 0;
    for (int64_t i = 0; i < row; i++)
        for (int64_t j = 0; j < col; j++)
            if (lower ? j - i <= off : j - i >= off) {
                data[k] = i;
                data[n + k] = j;
                k++;
            }
    int64_t dims[2] = {2, n};
    tt_ir_value c = tt_ir_constant(b, TT_I64, 2, dims, data);
    free(data);
    outs[0] = tt_ir_convert(b, c, dt);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_tril_indices(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    return tri_indices(ctx, args, nargs, outs, true);
}

static tt_status tt_lower_triu_indices(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    return tri_indices(ctx, args, nargs, outs, false);
}

const tt_lower_entry tt_lower_table_creation[] = {
    {"aten::fill.Scalar", tt_lower_fill},
    {"aten::fill.Tensor", tt_lower_fill},
    {"aten::zero", tt_lower_zero},
    {"aten::zeros_like", tt_lower_zeros_like},
    {"aten::ones_like", tt_lower_ones_like},
    {"aten::full_like", tt_lower_full_like},
    {"aten::full", tt_lower_full_op},
    {"aten::zeros", tt_lower_zeros},
    {"aten::ones", tt_lower_ones},
    {"aten::new_zeros", tt_lower_new_zeros},
    {"aten::new_ones", tt_lower_new_ones},
    {"aten::new_full", tt_lower_new_full},
    {"aten::scalar_tensor", tt_lower_scalar_tensor},
    {"aten::arange", tt_lower_arange},
    {"aten::arange.start", tt_lower_arange_start},
    {"aten::arange.start_step", tt_lower_arange_start_step},
    {"aten::linspace", tt_lower_linspace},
    {"aten::logspace", tt_lower_logspace},
    {"aten::eye", tt_lower_eye},
    {"aten::eye.m", tt_lower_eye_m},
    {"aten::tril_indices", tt_lower_tril_indices},
    {"aten::triu_indices", tt_lower_triu_indices},
    {NULL, NULL},
};
