/* reduce.c — lowerings of the reduce op family: sum, mean, amax/amin, max/min, argmax/argmin, var/std, prod,
 * any/all, cumsum/cumprod, logsumexp, linalg_vector_norm, nansum, count_nonzero, aminmax.
 *
 * PyTorch CPU rules followed here: integer and bool sums/products return i64 unless dtype= is given; bf16/f16
 * accumulate in f32 and round once at the end ("opmath"); an input is first converted to dtype= when given;
 * reductions with no identity (amax, max, argmax, aminmax, inf norms) fail on an empty reduced dimension with
 * PyTorch's message; keepdim is a reshape of the reduced result. */
#include "tt_lower.h"

#include <math.h>
#include <string.h>

/* ---- helpers (file-local) ---- */

/* PyTorch's ScalarType name of a dtype, for error messages that quote PyTorch's. */
static const char *rd_pt_name(tt_dtype dt) {
    static const char *names[TT_DTYPE_COUNT] = {"Float", "BFloat16", "Half", "Double", "Long",
                                                "Int",   "Short",    "Char", "Byte",   "Bool"};
    return (unsigned)dt < TT_DTYPE_COUNT ? names[dt] : "?";
}

/* A set of reduced dims, sorted, with a per-dim mask. */
typedef struct rd_dims {
    int32_t n;
    int64_t d[TT_MAX_RANK];
    bool mask[TT_MAX_RANK];
    int64_t count; /* number of elements reduced into each result element */
} rd_dims;

/* Parses a dim argument (NONE, INT or INTS) for an input of type t. A missing dim reduces every dim; an empty list
 * does too when empty_all (most ops), or nothing otherwise (any.dims). Duplicates are PyTorch's error. */
static tt_status rd_parse(tt_lower_ctx *ctx, const tt_arg *a, const tt_ir_type *t, bool empty_all, rd_dims *rd) {
    memset(rd, 0, sizeof *rd);
    bool all = false;
    int32_t n = 0;
    int64_t raw[TT_MAX_RANK > 1 ? TT_MAX_RANK * 2 : 2];
    if (!a || a->kind == TT_ARG_NONE) {
        all = true;
    } else if (a->kind == TT_ARG_INT) {
        raw[n++] = a->i;
    } else if (a->kind == TT_ARG_INTS) {
        if (a->n == 0) {
            all = empty_all;
        } else {
            if (a->n > (int32_t)(sizeof raw / sizeof raw[0]))
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "too many reduction dims");
            for (int32_t i = 0; i < a->n; i++) raw[n++] = a->ints[i];
        }
    } else {
        return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "reduce: unexpected dim argument");
    }
    if (all) {
        for (int32_t i = 0; i < t->rank; i++) rd->mask[i] = true;
    } else {
        for (int32_t i = 0; i < n; i++) {
            int64_t d = tt_lower_wrap_dim(ctx, raw[i], t->rank);
            if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
            if (t->rank == 0) {
                /* A 0-d tensor has one "dim" (0 or -1) that reduces nothing; listing it twice is an error. */
                if (n > 1)
                    return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                              "dim 0 appears multiple times in the list of dims");
                continue;
            }
            if (rd->mask[d])
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                          "dim %lld appears multiple times in the list of dims", (long long)d);
            rd->mask[d] = true;
        }
    }
    rd->count = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        if (rd->mask[i]) {
            rd->d[rd->n++] = i;
            rd->count *= t->dims[i];
        }
    }
    return TT_OK;
}

/* The first reduced dim of size 0, or -1. */
static int64_t rd_empty_dim(const tt_ir_type *t, const rd_dims *rd) {
    for (int32_t i = 0; i < rd->n; i++)
        if (t->dims[rd->d[i]] == 0) return rd->d[i];
    return -1;
}

static tt_ir_value rd_reduce(tt_lower_ctx *ctx, tt_ir_reduce_kind kind, tt_ir_value x, const rd_dims *rd) {
    if (rd->n == 0) return x;
    return tt_ir_reduce(ctx->b, kind, x, rd->n, rd->d);
}

/* r (the reduced value of an input of type t) reshaped to keep the reduced dims as 1 when keepdim. */
static tt_ir_value rd_keep(tt_lower_ctx *ctx, tt_ir_value r, const tt_ir_type *t, const rd_dims *rd, bool keepdim) {
    if (!keepdim || rd->n == 0) return r;
    int64_t dims[TT_MAX_RANK];
    for (int32_t i = 0; i < t->rank; i++) dims[i] = rd->mask[i] ? 1 : t->dims[i];
    return tt_ir_reshape(ctx->b, r, t->rank, dims);
}

/* r (reduced, without kept dims) broadcast back to the input shape t. */
static tt_ir_value rd_back(tt_lower_ctx *ctx, tt_ir_value r, const tt_ir_type *t, const rd_dims *rd) {
    if (rd->n == 0) return r;
    int64_t map[TT_MAX_RANK];
    int32_t k = 0;
    for (int32_t i = 0; i < t->rank; i++)
        if (!rd->mask[i]) map[k++] = i;
    return tt_ir_broadcast_in_dim(ctx->b, r, t->rank, t->dims, map);
}

/* A scalar constant broadcast to the shape of x (same dtype as x unless dt given). */
static tt_ir_value rd_full_like(tt_lower_ctx *ctx, tt_ir_value x, tt_dtype dt, double v) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    return tt_lower_full(ctx, dt, t.rank, t.dims, v);
}

static tt_ir_value rd_isnan(tt_lower_ctx *ctx, tt_ir_value x) { return tt_ir_compare(ctx->b, TT_CMP_NE, x, x); }

static tt_ir_value rd_nonzero(tt_lower_ctx *ctx, tt_ir_value x) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (t.dtype == TT_BOOL) return x;
    return tt_ir_compare(ctx->b, TT_CMP_NE, x, tt_lower_full(ctx, t.dtype, t.rank, t.dims, 0.0));
}

static bool rd_bool_arg(const tt_arg *a) { return a && a->kind == TT_ARG_BOOL && a->b; }
static bool rd_has_dtype(const tt_arg *a) { return a && a->kind == TT_ARG_DTYPE; }

/* Sum/prod output dtype: dtype= if given, i64 for integers and bool, else the input's. */
static tt_dtype rd_sum_dtype(tt_dtype in, const tt_arg *dt) {
    if (rd_has_dtype(dt)) return dt->dtype;
    return (tt_dtype_is_int(in) || in == TT_BOOL) ? TT_I64 : in;
}

/* ---- sum / prod / nansum ---- */

static tt_status rd_sum_like(tt_lower_ctx *ctx, tt_ir_reduce_kind kind, tt_ir_value x, const tt_arg *dimarg,
                             bool keepdim, const tt_arg *dtarg, bool nan_to_zero, tt_ir_value *out) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, dimarg, &t, true, &rd);
    if (st != TT_OK) return st;
    tt_dtype odt = rd_sum_dtype(t.dtype, dtarg);
    tt_ir_value v = tt_ir_convert(ctx->b, x, odt);
    if (nan_to_zero && tt_dtype_is_float(odt))
        v = tt_ir_select(ctx->b, rd_isnan(ctx, v), rd_full_like(ctx, v, odt, 0.0), v);
    v = tt_ir_convert(ctx->b, v, tt_lower_opmath(odt));
    v = tt_ir_convert(ctx->b, rd_reduce(ctx, kind, v, &rd), odt);
    *out = rd_keep(ctx, v, &t, &rd, keepdim);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_sum(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nouts;
    return rd_sum_like(ctx, TT_REDUCE_ADD, args[0].value, NULL, false, nargs > 1 ? &args[1] : NULL, false, outs);
}

static tt_status tt_lower_sum_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    return rd_sum_like(ctx, TT_REDUCE_ADD, args[0].value, &args[1], rd_bool_arg(&args[2]),
                       nargs > 3 ? &args[3] : NULL, false, outs);
}

static tt_status tt_lower_nansum(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nouts;
    return rd_sum_like(ctx, TT_REDUCE_ADD, args[0].value, &args[1], rd_bool_arg(&args[2]),
                       nargs > 3 ? &args[3] : NULL, true, outs);
}

static tt_status tt_lower_prod(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    return rd_sum_like(ctx, TT_REDUCE_MUL, args[0].value, NULL, false, nargs > 1 ? &args[1] : NULL, false, outs);
}

static tt_status tt_lower_prod_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    return rd_sum_like(ctx, TT_REDUCE_MUL, args[0].value, &args[1], rd_bool_arg(&args[2]),
                       nargs > 3 ? &args[3] : NULL, false, outs);
}

/* ---- mean ---- */

static tt_status rd_mean(tt_lower_ctx *ctx, tt_ir_value x, const tt_arg *dimarg, bool keepdim, const tt_arg *dtarg,
                         tt_ir_value *out) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    tt_dtype odt = rd_has_dtype(dtarg) ? dtarg->dtype : t.dtype;
    if (!tt_dtype_is_float(odt))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "mean(): could not infer output dtype. Input dtype must be either a floating point "
                                  "or complex dtype. Got: %s",
                                  rd_pt_name(odt));
    rd_dims rd;
    tt_status st = rd_parse(ctx, dimarg, &t, true, &rd);
    if (st != TT_OK) return st;
    tt_dtype acc = tt_lower_opmath(odt);
    tt_ir_value v = tt_ir_convert(ctx->b, tt_ir_convert(ctx->b, x, odt), acc);
    v = rd_reduce(ctx, TT_REDUCE_ADD, v, &rd);
    v = tt_lower_binary_like(ctx, TT_OP_DIVIDE, v, tt_lower_const(ctx, acc, (double)rd.count));
    *out = rd_keep(ctx, tt_ir_convert(ctx->b, v, odt), &t, &rd, keepdim);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_mean(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    return rd_mean(ctx, args[0].value, NULL, false, nargs > 1 ? &args[1] : NULL, outs);
}

static tt_status tt_lower_mean_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    return rd_mean(ctx, args[0].value, &args[1], rd_bool_arg(&args[2]), nargs > 3 ? &args[3] : NULL, outs);
}

/* ---- amax / amin / max / min / aminmax ---- */

/* Max or min over rd of x; bool uses or/and so drivers need no bool max. */
static tt_ir_value rd_maxmin(tt_lower_ctx *ctx, tt_ir_value x, const rd_dims *rd, bool is_min) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    tt_ir_reduce_kind k;
    if (t.dtype == TT_BOOL) k = is_min ? TT_REDUCE_AND : TT_REDUCE_OR;
    else k = is_min ? TT_REDUCE_MIN : TT_REDUCE_MAX;
    return rd_reduce(ctx, k, x, rd);
}

/* PyTorch's errors for reductions without identity over empty dims. */
static tt_status rd_check_nonempty(tt_lower_ctx *ctx, const char *name, const tt_ir_type *t, const rd_dims *rd,
                                   bool dim_given) {
    if (!dim_given && tt_numel(t->rank, t->dims) == 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "%s(): Expected reduction dim to be specified for input.numel() == 0. Specify the "
                                  "reduction dim with the 'dim' argument.",
                                  name);
    int64_t e = rd_empty_dim(t, rd);
    if (e >= 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX, "%s(): Expected reduction dim %lld to have non-zero size.",
                                  name, (long long)e);
    return TT_OK;
}

static bool rd_dim_given(const tt_arg *a) {
    return a && (a->kind == TT_ARG_INT || (a->kind == TT_ARG_INTS && a->n > 0));
}

static tt_status rd_amaxmin(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_min) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    st = rd_check_nonempty(ctx, is_min ? "amin" : "amax", &t, &rd, rd_dim_given(&args[1]));
    if (st != TT_OK) return st;
    outs[0] = rd_keep(ctx, rd_maxmin(ctx, x, &rd, is_min), &t, &rd, rd_bool_arg(&args[2]));
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_amax(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_amaxmin(ctx, args, outs, false);
}

static tt_status tt_lower_amin(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_amaxmin(ctx, args, outs, true);
}

static tt_status rd_full_maxmin(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_min) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, NULL, &t, true, &rd);
    if (st != TT_OK) return st;
    st = rd_check_nonempty(ctx, is_min ? "min" : "max", &t, &rd, false);
    if (st != TT_OK) return st;
    outs[0] = rd_maxmin(ctx, x, &rd, is_min);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_max(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_full_maxmin(ctx, args, outs, false);
}

static tt_status tt_lower_min(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_full_maxmin(ctx, args, outs, true);
}

/* Index of the first max/min along dim d of x (i64, d removed). bool compares as 0/1. */
static tt_ir_value rd_argreduce(tt_lower_ctx *ctx, tt_ir_value x, int64_t d, bool is_min) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (t.dtype == TT_BOOL) x = tt_ir_convert(ctx->b, x, TT_I32);
    return tt_ir_arg_reduce(ctx->b, x, d, is_min);
}

static tt_status rd_maxmin_dim(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, int32_t nouts, bool is_min) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    st = rd_check_nonempty(ctx, is_min ? "min" : "max", &t, &rd, true);
    if (st != TT_OK) return st;
    bool keepdim = rd_bool_arg(&args[2]);
    outs[0] = rd_keep(ctx, rd_maxmin(ctx, x, &rd, is_min), &t, &rd, keepdim);
    if (nouts > 1) {
        tt_ir_value idx = rd.n == 0 ? tt_lower_const(ctx, TT_I64, 0.0) : rd_argreduce(ctx, x, rd.d[0], is_min);
        outs[1] = rd_keep(ctx, idx, &t, &rd, keepdim);
    }
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_max_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs;
    return rd_maxmin_dim(ctx, args, outs, nouts, false);
}

static tt_status tt_lower_min_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs;
    return rd_maxmin_dim(ctx, args, outs, nouts, true);
}

static tt_status rd_argmaxmin(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_min) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    const char *name = is_min ? "argmin" : "argmax";
    if (t.dtype == TT_BOOL) /* CPU refuses bool */
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%s(): does not support bool input", name);
    bool keepdim = rd_bool_arg(&args[2]);
    if (args[1].kind == TT_ARG_NONE) {
        /* Flattened: the index into the row-major flattening; keepdim gives all-ones dims. */
        int64_t n = tt_numel(t.rank, t.dims);
        if (n == 0)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX,
                                      "%s(): Expected reduction dim to be specified for input.numel() == 0.", name);
        tt_ir_value idx = rd_argreduce(ctx, tt_ir_reshape(ctx->b, x, 1, &n), 0, is_min);
        if (keepdim && t.rank > 0) {
            int64_t ones[TT_MAX_RANK];
            for (int32_t i = 0; i < t.rank; i++) ones[i] = 1;
            idx = tt_ir_reshape(ctx->b, idx, t.rank, ones);
        }
        outs[0] = idx;
        return tt_ir_builder_status(ctx->b);
    }
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    st = rd_check_nonempty(ctx, name, &t, &rd, true);
    if (st != TT_OK) return st;
    tt_ir_value idx = rd.n == 0 ? tt_lower_const(ctx, TT_I64, 0.0) : rd_argreduce(ctx, x, rd.d[0], is_min);
    outs[0] = rd_keep(ctx, idx, &t, &rd, keepdim);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_argmax(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_argmaxmin(ctx, args, outs, false);
}

static tt_status tt_lower_argmin(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_argmaxmin(ctx, args, outs, true);
}

/* aminmax(self, *, dim=None, keepdim=False) -> (min, max) */
static tt_status tt_lower_aminmax(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (nouts < 2) return tt_ir_builder_fail(ctx->b, TT_STATUS_INTERNAL, "aminmax: expected two results");
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    bool keepdim = rd_bool_arg(&args[2]);
    bool all = args[1].kind == TT_ARG_NONE;
    if (all && tt_numel(t.rank, t.dims) == 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "aminmax(): cannot compute aminmax over an empty dimension as the operation has no "
                                  "identity.");
    int64_t e = rd_empty_dim(&t, &rd);
    if (e >= 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX, "aminmax: Expected reduction dim %lld to have non-zero size.",
                                  (long long)e);
    for (int k = 0; k < 2; k++) {
        tt_ir_value r = rd_maxmin(ctx, x, &rd, k == 0);
        if (keepdim && all) {
            int64_t ones[TT_MAX_RANK];
            for (int32_t i = 0; i < t.rank; i++) ones[i] = 1;
            r = tt_ir_reshape(ctx->b, r, t.rank, ones);
        } else {
            r = rd_keep(ctx, r, &t, &rd, keepdim);
        }
        outs[k] = r;
    }
    return tt_ir_builder_status(ctx->b);
}

/* ---- var / std ---- */

/* var/std over dimarg with a correction (Scalar or None = 1). Results: outs[0] = var or std, outs[1] = mean. */
static tt_status rd_var(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, int32_t nouts, bool is_std,
                        bool with_mean) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "std and var only support floating point and complex dtypes");
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    double correction = args[2].kind == TT_ARG_NONE ? 1.0 : tt_lower_arg_double(&args[2]);
    bool keepdim = rd_bool_arg(&args[3]);
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value mean = tt_lower_binary_like(ctx, TT_OP_DIVIDE, rd_reduce(ctx, TT_REDUCE_ADD, xa, &rd),
                                   tt_lower_const(ctx, acc, (double)rd.count));
    tt_ir_value d = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, rd_back(ctx, mean, &t, &rd));
    tt_ir_value ss = rd_reduce(ctx, TT_REDUCE_ADD, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, d, d), &rd);
    /* The divisor depends on the user's correction: a runtime scalar, not a constant. */
    double div = (double)rd.count - correction;
    if (div < 0) div = 0;
    tt_ir_value v = tt_lower_binary_like(ctx, TT_OP_DIVIDE, ss, tt_lower_scalar_param(ctx, acc, 0, div));
    if (is_std) v = tt_ir_unary(ctx->b, TT_OP_SQRT, v);
    outs[0] = rd_keep(ctx, tt_ir_convert(ctx->b, v, t.dtype), &t, &rd, keepdim);
    if (with_mean && nouts > 1) outs[1] = rd_keep(ctx, tt_ir_convert(ctx->b, mean, t.dtype), &t, &rd, keepdim);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_var(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs;
    return rd_var(ctx, args, outs, nouts, false, false);
}

static tt_status tt_lower_std(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs;
    return rd_var(ctx, args, outs, nouts, true, false);
}

static tt_status tt_lower_var_mean(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nargs;
    return rd_var(ctx, args, outs, nouts, false, true);
}

static tt_status tt_lower_std_mean(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nargs;
    return rd_var(ctx, args, outs, nouts, true, true);
}

/* ---- any / all / count_nonzero ---- */

static tt_status rd_anyall(tt_lower_ctx *ctx, tt_ir_value x, const tt_arg *dimarg, bool keepdim, bool is_all,
                           tt_ir_value *out) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, dimarg, &t, false, &rd);
    if (st != TT_OK) return st;
    tt_ir_value v = rd_reduce(ctx, is_all ? TT_REDUCE_AND : TT_REDUCE_OR, rd_nonzero(ctx, x), &rd);
    if (t.dtype == TT_U8) v = tt_ir_convert(ctx->b, v, TT_U8); /* PyTorch keeps uint8 for any/all */
    *out = rd_keep(ctx, v, &t, &rd, keepdim);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_any(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_anyall(ctx, args[0].value, NULL, false, false, outs);
}

static tt_status tt_lower_any_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_anyall(ctx, args[0].value, &args[1], rd_bool_arg(&args[2]), false, outs);
}

static tt_status tt_lower_all(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_anyall(ctx, args[0].value, NULL, false, true, outs);
}

static tt_status tt_lower_all_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    return rd_anyall(ctx, args[0].value, &args[1], rd_bool_arg(&args[2]), true, outs);
}

/* count_nonzero(self, int? dim) and count_nonzero.dim_IntList(self, int[] dim) -> i64 */
static tt_status tt_lower_count_nonzero(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    rd_dims rd;
    tt_status st = rd_parse(ctx, nargs > 1 ? &args[1] : NULL, &t, true, &rd);
    if (st != TT_OK) return st;
    tt_ir_value nz = tt_ir_convert(ctx->b, rd_nonzero(ctx, x), TT_I64);
    outs[0] = rd_reduce(ctx, TT_REDUCE_ADD, nz, &rd);
    return tt_ir_builder_status(ctx->b);
}

/* ---- cumsum / cumprod ---- */

static tt_status rd_cumulative(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               tt_ir_reduce_kind kind) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int64_t d = tt_lower_wrap_dim(ctx, args[1].i, t.rank);
    tt_dtype odt = rd_sum_dtype(t.dtype, nargs > 2 ? &args[2] : NULL);
    tt_ir_value v = tt_ir_convert(ctx->b, tt_ir_convert(ctx->b, x, odt), tt_lower_opmath(odt));
    if (t.rank > 0) v = tt_ir_cumulative(ctx->b, kind, v, d, false);
    outs[0] = tt_ir_convert(ctx->b, v, odt);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_cumsum(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nouts;
    return rd_cumulative(ctx, args, nargs, outs, TT_REDUCE_ADD);
}

static tt_status tt_lower_cumprod(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    return rd_cumulative(ctx, args, nargs, outs, TT_REDUCE_MUL);
}

/* ---- logsumexp ---- */

/* logsumexp(self, int[1] dim, bool keepdim): max-shifted, integers promote to f32. */
static tt_status tt_lower_logsumexp(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (args[1].kind == TT_ARG_INTS && args[1].n == 0) return TT_STATUS_UNSUPPORTED; /* PyTorch's odd corner */
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[1], &t, true, &rd);
    if (st != TT_OK) return st;
    tt_dtype odt = tt_dtype_is_float(t.dtype) ? t.dtype : tt_lower_default_float(ctx);
    tt_dtype acc = tt_lower_opmath(odt);
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value m = rd_reduce(ctx, TT_REDUCE_MAX, xa, &rd);
    /* An infinite max would give inf - inf; shift by 0 there (NaN maxes give NaN either way). */
    tt_ir_value fin = tt_ir_unary(ctx->b, TT_OP_IS_FINITE, m);
    m = tt_ir_select(ctx->b, fin, m, rd_full_like(ctx, m, acc, 0.0));
    tt_ir_value e = tt_ir_unary(ctx->b, TT_OP_EXP, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, rd_back(ctx, m, &t, &rd)));
    tt_ir_value r = tt_ir_binary(ctx->b, TT_OP_ADD, tt_ir_unary(ctx->b, TT_OP_LOG, rd_reduce(ctx, TT_REDUCE_ADD, e, &rd)),
                                 m);
    outs[0] = rd_keep(ctx, tt_ir_convert(ctx->b, r, odt), &t, &rd, rd_bool_arg(&args[2]));
    return tt_ir_builder_status(ctx->b);
}

/* ---- linalg_vector_norm ---- */

/* linalg_vector_norm(self, Scalar ord=2, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) */
static tt_status tt_lower_linalg_vector_norm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                             int32_t nouts) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "linalg.vector_norm: Expected a floating point or complex tensor as input. Got %s",
                                  tt_dtype_name(t.dtype));
    tt_dtype odt = t.dtype;
    if (nargs > 4 && rd_has_dtype(&args[4])) {
        odt = args[4].dtype;
        /* Narrowing dtypes are PyTorch errors; let PyTorch produce them. */
        if (!tt_dtype_is_float(odt) || tt_dtype_size(odt) < tt_dtype_size(t.dtype) ||
            (odt != t.dtype && tt_dtype_size(odt) == tt_dtype_size(t.dtype)))
            return TT_STATUS_UNSUPPORTED;
    }
    double ord = tt_lower_arg_double(&args[1]);
    rd_dims rd;
    tt_status st = rd_parse(ctx, &args[2], &t, true, &rd);
    if (st != TT_OK) return st;
    if (isinf(ord)) {
        const char *which = ord > 0 ? "inf" : "-inf";
        if (args[2].kind == TT_ARG_NONE || (args[2].kind == TT_ARG_INTS && args[2].n == 0)) {
            if (tt_numel(t.rank, t.dims) == 0)
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                          "linalg.vector_norm cannot compute the %s norm on an empty tensor because "
                                          "the operation does not have an identity",
                                          which);
        } else {
            int64_t e = rd_empty_dim(&t, &rd);
            if (e >= 0)
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                          "linalg.vector_norm cannot compute the %s norm on the dimension %lld"
                                          "because this dimension is empty and the operation does not have an "
                                          "identity",
                                          which, (long long)e);
        }
    }
    tt_dtype acc = tt_lower_opmath(odt);
    tt_ir_value a = tt_ir_unary(ctx->b, TT_OP_ABS, tt_ir_convert(ctx->b, tt_ir_convert(ctx->b, x, odt), acc));
    tt_ir_value r;
    if (ord == 2.0) {
        r = tt_ir_unary(ctx->b, TT_OP_SQRT, rd_reduce(ctx, TT_REDUCE_ADD, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, a, a), &rd));
    } else if (ord == 1.0) {
        r = rd_reduce(ctx, TT_REDUCE_ADD, a, &rd);
    } else if (isinf(ord)) {
        r = rd_reduce(ctx, ord > 0 ? TT_REDUCE_MAX : TT_REDUCE_MIN, a, &rd);
    } else if (ord == 0.0) {
        r = rd_reduce(ctx, TT_REDUCE_ADD, tt_ir_convert(ctx->b, rd_nonzero(ctx, a), acc), &rd);
    } else if (isnan(ord)) {
        return TT_STATUS_UNSUPPORTED;
    } else {
        /* General p: the exponent is the user's value, so it travels as scalar parameters. */
        tt_ir_value p = tt_lower_scalar_param(ctx, acc, 0, ord);
        tt_ir_value ip = tt_lower_scalar_param(ctx, acc, 0, 1.0 / ord);
        r = rd_reduce(ctx, TT_REDUCE_ADD, tt_lower_binary_like(ctx, TT_OP_POWER, a, p), &rd);
        r = tt_lower_binary_like(ctx, TT_OP_POWER, r, ip);
    }
    outs[0] = rd_keep(ctx, tt_ir_convert(ctx->b, r, odt), &t, &rd, rd_bool_arg(&args[3]));
    return tt_ir_builder_status(ctx->b);
}

const tt_lower_entry tt_lower_table_reduce[] = {
    {"aten::sum", tt_lower_sum},
    {"aten::sum.dim_IntList", tt_lower_sum_dim},
    {"aten::nansum", tt_lower_nansum},
    {"aten::prod", tt_lower_prod},
    {"aten::prod.dim_int", tt_lower_prod_dim},
    {"aten::mean", tt_lower_mean},
    {"aten::mean.dim", tt_lower_mean_dim},
    {"aten::amax", tt_lower_amax},
    {"aten::amin", tt_lower_amin},
    {"aten::max", tt_lower_max},
    {"aten::min", tt_lower_min},
    {"aten::max.dim", tt_lower_max_dim},
    {"aten::min.dim", tt_lower_min_dim},
    {"aten::argmax", tt_lower_argmax},
    {"aten::argmin", tt_lower_argmin},
    {"aten::aminmax", tt_lower_aminmax},
    {"aten::var.correction", tt_lower_var},
    {"aten::std.correction", tt_lower_std},
    {"aten::var_mean.correction", tt_lower_var_mean},
    {"aten::std_mean.correction", tt_lower_std_mean},
    {"aten::any", tt_lower_any},
    {"aten::any.dim", tt_lower_any_dim},
    {"aten::any.dims", tt_lower_any_dim},
    {"aten::all", tt_lower_all},
    {"aten::all.dim", tt_lower_all_dim},
    {"aten::all.dims", tt_lower_all_dim},
    {"aten::count_nonzero", tt_lower_count_nonzero},
    {"aten::count_nonzero.dim_IntList", tt_lower_count_nonzero},
    {"aten::cumsum", tt_lower_cumsum},
    {"aten::cumprod", tt_lower_cumprod},
    {"aten::logsumexp", tt_lower_logsumexp},
    {"aten::linalg_vector_norm", tt_lower_linalg_vector_norm},
    {NULL, NULL},
};
