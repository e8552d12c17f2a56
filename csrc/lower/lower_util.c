/* lower_util.c — helpers every lowering uses: PyTorch type promotion, broadcasting, constants, scalar
 * parameters, dim wrapping and RNG seeds. */
#include "tt_lower.h"

#include <math.h>
#include <string.h>

/* "No dtype yet" marker used while folding promotion over arguments. */
#define TT_LOWER_UNDEF TT_DTYPE_COUNT

/* ---- type promotion (mirrors c10::promoteTypes for our ten dtypes) ---- */

/* Floating rank: f16 and bf16 are incomparable (they meet at f32). */
static int float_rank(tt_dtype dt) {
    switch (dt) {
    case TT_F16:
    case TT_BF16: return 1;
    case TT_F32: return 2;
    case TT_F64: return 3;
    default: return 0;
    }
}

static tt_dtype promote2(tt_dtype a, tt_dtype b) {
    if (a == TT_LOWER_UNDEF) return b;
    if (b == TT_LOWER_UNDEF) return a;
    if (a == b) return a;
    if (a == TT_BOOL) return b;
    if (b == TT_BOOL) return a;
    bool fa = tt_dtype_is_float(a), fb = tt_dtype_is_float(b);
    if (fa && fb) {
        int ra = float_rank(a), rb = float_rank(b);
        if (ra == rb) return TT_F32; /* f16 with bf16 */
        return ra > rb ? a : b;
    }
    if (fa) return a;
    if (fb) return b;
    /* both integers */
    if (a == TT_U8 || b == TT_U8) {
        tt_dtype other = a == TT_U8 ? b : a;
        return other == TT_I8 ? TT_I16 : other; /* u8 with a wider signed type gives that type */
    }
    return tt_dtype_size(a) >= tt_dtype_size(b) ? a : b;
}

/* c10's combine_categories: a lower-priority category only matters when its kind is higher. */
static tt_dtype combine_categories(tt_dtype higher, tt_dtype lower) {
    if (higher == TT_LOWER_UNDEF) return lower;
    if (lower == TT_LOWER_UNDEF) return higher;
    if (tt_dtype_is_float(higher)) return higher;
    if (higher == TT_BOOL || tt_dtype_is_float(lower)) return promote2(higher, lower);
    return higher;
}

/* The builder whose values tt_lower_result_type inspects (it has no ctx parameter). */
static _Thread_local const tt_ir_builder *tt_lower_bound;
static _Thread_local tt_dtype tt_lower_bound_float = TT_F32;

void tt_lower_bind(const tt_lower_ctx *ctx) {
    tt_lower_bound = ctx ? ctx->b : NULL;
    tt_lower_bound_float = tt_lower_default_float(ctx);
}

tt_dtype tt_lower_default_float(const tt_lower_ctx *ctx) {
    return ctx && tt_dtype_is_float(ctx->default_float) ? ctx->default_float : TT_F32;
}

tt_ir_attrs tt_lower_gather_elements_attrs(int32_t index_vector_dim, bool check_bounds) {
    tt_ir_attrs a = tt_ir_gather_elements_attrs(index_vector_dim);
    a.gather.check_bounds = check_bounds;
    return a;
}

tt_ir_attrs tt_lower_scatter_elements_attrs(int32_t index_vector_dim, tt_ir_reduce_kind kind, bool check_bounds) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.scatter.inserted_window_dims.n = 1;          /* {0} */
    a.scatter.scatter_dims_to_operand_dims.n = 1;  /* {0} */
    a.scatter.index_vector_dim = index_vector_dim;
    a.scatter.kind = kind;
    a.scatter.check_bounds = check_bounds;
    return a;
}

bool tt_lower_output_wanted(const tt_arg *mask, int32_t k) {
    if (!mask || mask->kind != TT_ARG_BOOLS || k < 0 || k >= mask->n) return true;
    return mask->ints[k] != 0;
}

typedef struct promo_state {
    tt_dtype dim_result, zero_result, wrapped_result;
    tt_dtype default_float; /* what float scalars and wrapped numbers count as */
} promo_state;

static void promo_add(const tt_ir_builder *b, promo_state *st, const tt_arg *a) {
    if (a->kind == TT_ARG_TENSOR) {
        if (a->value == TT_IR_NONE) return;
        tt_dtype cur;
        int32_t rank;
        const tt_ir_type *t = b ? tt_ir_type_of(b, a->value) : NULL;
        if (t) {
            cur = t->dtype;
            rank = t->rank;
        } else { /* no bound builder: the shim's copy of the tensor's dtype and rank */
            cur = a->dtype;
            rank = a->n;
        }
        if ((unsigned)cur >= TT_DTYPE_COUNT) return;
        if (a->wrapped_number) {
            if (tt_dtype_is_float(cur)) cur = st->default_float;
            st->wrapped_result = promote2(st->wrapped_result, cur);
        } else if (rank == 0) {
            st->zero_result = promote2(st->zero_result, cur);
        } else {
            st->dim_result = promote2(st->dim_result, cur);
        }
    } else if (a->kind == TT_ARG_SCALAR) {
        tt_dtype cur = a->dtype;
        if (tt_dtype_is_float(cur)) cur = st->default_float;
        else if (cur != TT_BOOL) cur = TT_I64;
        st->wrapped_result = promote2(st->wrapped_result, cur);
    }
}

static tt_dtype promo_result(const promo_state *st) {
    tt_dtype r = combine_categories(st->dim_result, combine_categories(st->zero_result, st->wrapped_result));
    return r == TT_LOWER_UNDEF ? st->default_float : r;
}

tt_dtype tt_lower_result_type(const tt_arg *args, int32_t n) {
    promo_state st = {TT_LOWER_UNDEF, TT_LOWER_UNDEF, TT_LOWER_UNDEF, tt_lower_bound_float};
    for (int32_t i = 0; i < n; i++) promo_add(tt_lower_bound, &st, &args[i]);
    return promo_result(&st);
}

tt_dtype tt_lower_result_type_of(const tt_arg *args, int32_t n_idx, const int32_t *idx) {
    promo_state st = {TT_LOWER_UNDEF, TT_LOWER_UNDEF, TT_LOWER_UNDEF, tt_lower_bound_float};
    for (int32_t i = 0; i < n_idx; i++) promo_add(tt_lower_bound, &st, &args[idx[i]]);
    return promo_result(&st);
}

tt_dtype tt_lower_result_type_ctx(tt_lower_ctx *ctx, const tt_arg *args, int32_t n, const int32_t *idx) {
    promo_state st = {TT_LOWER_UNDEF, TT_LOWER_UNDEF, TT_LOWER_UNDEF, tt_lower_default_float(ctx)};
    for (int32_t i = 0; i < n; i++) promo_add(ctx->b, &st, &args[idx ? idx[i] : i]);
    return promo_result(&st);
}

tt_dtype tt_lower_promote_types(tt_dtype a, tt_dtype b) { return promote2(a, b); }

/* ---- shapes ---- */

tt_status tt_lower_broadcast_shapes(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db, int32_t *rank,
                                    int64_t *dims) {
    int32_t r = ra > rb ? ra : rb;
    if (r > TT_MAX_RANK) return tt_error(TT_STATUS_UNSUPPORTED, "broadcast: rank %d exceeds %d", r, TT_MAX_RANK);
    int64_t out[TT_MAX_RANK];
    for (int32_t i = r - 1; i >= 0; i--) {
        int32_t off = r - 1 - i;
        int32_t ia = ra - 1 - off, ib = rb - 1 - off;
        int64_t sa = ia >= 0 ? da[ia] : 1, sb = ib >= 0 ? db[ib] : 1;
        if (sa == sb || sa == 1) out[i] = sb;
        else if (sb == 1) out[i] = sa;
        else
            return tt_error(TT_STATUS_INVALID_ARGUMENT,
                            "The size of tensor a (%lld) must match the size of tensor b (%lld) at non-singleton "
                            "dimension %d",
                            (long long)sa, (long long)sb, i);
    }
    *rank = r;
    memcpy(dims, out, sizeof(int64_t) * (size_t)r);
    return TT_OK;
}

tt_ir_value tt_lower_to(tt_lower_ctx *ctx, tt_ir_value x, tt_dtype dt, int32_t rank, const int64_t *dims_in) {
    tt_ir_builder *b = ctx->b;
    if (rank < 0 || rank > TT_MAX_RANK) {
        tt_ir_builder_fail(b, TT_STATUS_UNSUPPORTED, "rank %d exceeds %d", rank, TT_MAX_RANK);
        return TT_IR_NONE;
    }
    /* copy: callers may pass a builder type's dims, which move when the builder grows */
    int64_t dims[TT_MAX_RANK];
    if (rank) memcpy(dims, dims_in, sizeof(int64_t) * (size_t)rank);
    const tt_ir_type *t = tt_ir_type_of(b, x);
    if (!t) return TT_IR_NONE;
    /* convert first: it runs on the smaller (pre-broadcast) tensor */
    x = tt_ir_convert(b, x, dt);
    t = tt_ir_type_of(b, x);
    if (!t) return TT_IR_NONE;
    if (t->rank > rank) {
        tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "cannot broadcast a rank %d tensor to rank %d", t->rank,
                           rank);
        return TT_IR_NONE;
    }
    bool same = t->rank == rank;
    for (int32_t i = 0; same && i < rank; i++) same = t->dims[i] == dims[i];
    if (same) return x;
    /* keep operand dims that match; drop size-1 dims that expand (broadcast_in_dim never expands a dim) */
    int64_t kept[TT_MAX_RANK], map[TT_MAX_RANK];
    int32_t nk = 0, off = rank - t->rank;
    bool dropped = false;
    for (int32_t i = 0; i < t->rank; i++) {
        int64_t want = dims[off + i];
        if (t->dims[i] == want) {
            kept[nk] = want;
            map[nk++] = off + i;
        } else if (t->dims[i] == 1) {
            dropped = true;
        } else {
            tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                               "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                               "non-singleton dimension %d",
                               (long long)want, (long long)t->dims[i], off + i);
            return TT_IR_NONE;
        }
    }
    if (dropped) x = tt_ir_reshape(b, x, nk, kept);
    return tt_ir_broadcast_in_dim(b, x, rank, dims, map);
}

tt_ir_value tt_lower_const(tt_lower_ctx *ctx, tt_dtype dt, double v) { return tt_ir_constant_scalar(ctx->b, dt, v); }

tt_ir_value tt_lower_full(tt_lower_ctx *ctx, tt_dtype dt, int32_t rank, const int64_t *dims_in, double v) {
    if (rank < 0 || rank > TT_MAX_RANK) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "rank %d exceeds %d", rank, TT_MAX_RANK);
        return TT_IR_NONE;
    }
    int64_t dims[TT_MAX_RANK]; /* copy: see tt_lower_to */
    if (rank) memcpy(dims, dims_in, sizeof(int64_t) * (size_t)rank);
    tt_ir_value c = tt_ir_constant_scalar(ctx->b, dt, v);
    if (rank == 0) return c;
    return tt_ir_broadcast_in_dim(ctx->b, c, rank, dims, NULL);
}

/* ---- scalar parameters ---- */

/* Wraps an integer to dt's width (two's complement), as a C cast to the narrow type would. */
static int64_t wrap_int(int64_t v, tt_dtype dt) {
    switch (dt) {
    case TT_I32: return (int32_t)(uint32_t)(uint64_t)v;
    case TT_I16: return (int16_t)(uint16_t)(uint64_t)v;
    case TT_I8: return (int8_t)(uint8_t)(uint64_t)v;
    case TT_U8: return (uint8_t)(uint64_t)v;
    case TT_BOOL: return v != 0;
    default: return v;
    }
}

/* double -> int64 truncating toward zero without undefined behaviour for NaN / out-of-range values. */
static int64_t double_to_i64(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

tt_ir_value tt_lower_scalar_param(tt_lower_ctx *ctx, tt_dtype dt, int64_t i, double f) {
    if (ctx->n_scalars >= TT_LOWER_MAX_SCALARS) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "more than %d scalar parameters in one program",
                           TT_LOWER_MAX_SCALARS);
        return TT_IR_NONE;
    }
    int32_t index = tt_ir_builder_num_params(ctx->b);
    tt_ir_value v = tt_ir_scalar_param(ctx->b, dt);
    if (v == TT_IR_NONE) return TT_IR_NONE;
    tt_lower_scalar *s = &ctx->scalars[ctx->n_scalars++];
    s->param_index = index;
    s->dtype = dt;
    s->i = i;
    s->f = f;
    s->rng = 0;
    s->rng_count = 0;
    return v;
}

double tt_lower_arg_double(const tt_arg *a) {
    switch (a->kind) {
    case TT_ARG_SCALAR:
        if (a->dtype == TT_BOOL) return a->b ? 1.0 : 0.0;
        if (tt_dtype_is_float(a->dtype)) return a->f;
        return (double)a->i;
    case TT_ARG_INT: return (double)a->i;
    case TT_ARG_FLOAT: return a->f;
    case TT_ARG_BOOL: return a->b ? 1.0 : 0.0;
    default: return 0.0;
    }
}

tt_ir_value tt_lower_arg(tt_lower_ctx *ctx, const tt_arg *a, tt_dtype dt) {
    bool is_float_val;
    int64_t iv = 0;
    double fv = 0.0;
    switch (a->kind) {
    case TT_ARG_TENSOR:
        if (a->value == TT_IR_NONE) break;
        return tt_ir_convert(ctx->b, a->value, dt);
    case TT_ARG_SCALAR:
        is_float_val = tt_dtype_is_float(a->dtype);
        if (a->dtype == TT_BOOL) iv = a->b;
        else if (is_float_val) fv = a->f;
        else iv = a->i;
        goto scalar;
    case TT_ARG_INT:
        is_float_val = false;
        iv = a->i;
        goto scalar;
    case TT_ARG_BOOL:
        is_float_val = false;
        iv = a->b;
        goto scalar;
    case TT_ARG_FLOAT:
        is_float_val = true;
        fv = a->f;
        goto scalar;
    default: break;
    }
    tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "expected a tensor or a number argument");
    return TT_IR_NONE;
scalar:
    /* The value is converted to dt on the host, as PyTorch converts the scalar to the op's dtype. */
    if (tt_dtype_is_float(dt)) {
        double f = is_float_val ? fv : (double)iv;
        return tt_lower_scalar_param(ctx, dt, double_to_i64(f), f);
    }
    if (dt == TT_BOOL) {
        int64_t bv = is_float_val ? (fv != 0.0) : (iv != 0);
        return tt_lower_scalar_param(ctx, dt, bv, (double)bv);
    }
    int64_t v = wrap_int(is_float_val ? double_to_i64(fv) : iv, dt);
    return tt_lower_scalar_param(ctx, dt, v, (double)v);
}

int64_t tt_lower_wrap_dim(tt_lower_ctx *ctx, int64_t dim, int32_t rank) {
    int64_t r = rank > 0 ? rank : 1;
    if (dim < -r || dim >= r) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX,
                           "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                           (long long)-r, (long long)(r - 1), (long long)dim);
        return 0;
    }
    return dim < 0 ? dim + r : dim;
}

void tt_lower_rng(tt_lower_ctx *ctx, uint64_t count, tt_ir_value *seed, tt_ir_value *offset) {
    uint64_t s = 0, o = 0;
    if (ctx->rng_reserve) ctx->rng_reserve(ctx->rng_user, ctx->device, count, &s, &o);
    int32_t k = ctx->n_scalars;
    *seed = tt_lower_scalar_param(ctx, TT_I64, (int64_t)s, 0.0);
    *offset = tt_lower_scalar_param(ctx, TT_I64, (int64_t)o, 0.0);
    if (ctx->n_scalars == k + 2) { /* tagged for a replay to draw anew */
        ctx->scalars[k].rng = TT_LOWER_RNG_SEED;
        ctx->scalars[k + 1].rng = TT_LOWER_RNG_OFFSET;
        ctx->scalars[k + 1].rng_count = count;
    }
}

const tt_ir_type *tt_lower_type(tt_lower_ctx *ctx, tt_ir_value v) { return tt_ir_type_of(ctx->b, v); }

/* ---- elementwise helpers ---- */

tt_dtype tt_lower_opmath(tt_dtype dt) { return dt == TT_BF16 || dt == TT_F16 ? TT_F32 : dt; }

bool tt_lower_broadcast_values(tt_lower_ctx *ctx, int32_t n, tt_ir_value *vals) {
    int32_t rank = 0;
    int64_t dims[TT_MAX_RANK];
    for (int32_t i = 0; i < n; i++) {
        const tt_ir_type *t = tt_ir_type_of(ctx->b, vals[i]);
        if (!t) {
            if (tt_ir_builder_status(ctx->b) == TT_OK)
                tt_ir_builder_fail(ctx->b, TT_STATUS_INTERNAL, "broadcast of a missing value");
            return false;
        }
        tt_status st = tt_lower_broadcast_shapes(rank, dims, t->rank, t->dims, &rank, dims);
        if (st != TT_OK) {
            tt_ir_builder_fail(ctx->b, st, "%s", tt_last_error());
            return false;
        }
    }
    for (int32_t i = 0; i < n; i++) {
        tt_dtype dt = tt_ir_type_of(ctx->b, vals[i])->dtype;
        vals[i] = tt_lower_to(ctx, vals[i], dt, rank, dims);
        if (vals[i] == TT_IR_NONE) return false;
    }
    return true;
}

bool tt_lower_broadcast_args(tt_lower_ctx *ctx, int32_t n, const tt_arg *const *args, tt_dtype dt,
                             tt_ir_value *out) {
    for (int32_t i = 0; i < n; i++) {
        out[i] = tt_lower_arg(ctx, args[i], dt);
        if (out[i] == TT_IR_NONE) return false;
    }
    return tt_lower_broadcast_values(ctx, n, out);
}

tt_ir_value tt_lower_like(tt_lower_ctx *ctx, tt_ir_value x, double v) {
    const tt_ir_type *tp = tt_ir_type_of(ctx->b, x);
    if (!tp) return TT_IR_NONE;
    tt_ir_type t = *tp; /* copy: the builder's type array moves when it grows */
    return tt_lower_full(ctx, t.dtype, t.rank, t.dims, v);
}

/* ---- small helpers shared by the family files (folded from per-file copies) ---- */

/* Copy by value: the builder's type array moves as values are added; all zero when v has no type. */
tt_ir_type tt_lower_type_copy(tt_lower_ctx *ctx, tt_ir_value v) {
    tt_ir_type t;
    memset(&t, 0, sizeof t);
    const tt_ir_type *p = v == TT_IR_NONE ? NULL : tt_lower_type(ctx, v);
    if (p) t = *p;
    return t;
}

/* Copy into caller storage so callers can keep a pointer that NULL-signals a missing type. */
const tt_ir_type *tt_lower_type_into(tt_lower_ctx *ctx, tt_ir_value v, tt_ir_type *store) {
    const tt_ir_type *t = tt_lower_type(ctx, v);
    if (!t) return NULL;
    *store = *t;
    return store;
}

/* UNSUPPORTED makes the shim fall back (decomposition or CPU) rather than raise. */
tt_status tt_lower_unsupported(tt_lower_ctx *ctx, const char *what) {
    return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "%s: unsupported arguments on tpu", what);
}

/* Same fallback for a dtype a lowering does not handle. */
tt_status tt_lower_unsupported_dtype(tt_lower_ctx *ctx, const char *op, tt_dtype dt) {
    return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "%s: dtype %s not lowered", op, tt_dtype_name(dt));
}

/* f32 when v has no type, so a failed builder still yields a usable dtype (the error is already recorded). */
tt_dtype tt_lower_dtype_of(tt_lower_ctx *ctx, tt_ir_value v) {
    const tt_ir_type *t = tt_lower_type(ctx, v);
    return t ? t->dtype : TT_F32;
}

/* Scalars become runtime scalar parameters, so the program does not depend on their value. */
tt_ir_value tt_lower_arg_like(tt_lower_ctx *ctx, const tt_arg *a, tt_ir_value like) {
    const tt_ir_type *tp = tt_lower_type(ctx, like);
    if (!tp) return TT_IR_NONE;
    tt_ir_type t = *tp; /* copy: the builder's type array moves when it grows */
    return tt_lower_to(ctx, tt_lower_arg(ctx, a, t.dtype), t.dtype, t.rank, t.dims);
}

/* Composites are computed in opmath; the single result is rounded back to dt here. */
tt_status tt_lower_done(tt_lower_ctx *ctx, tt_ir_value *outs, tt_ir_value v, tt_dtype dt) {
    outs[0] = tt_ir_convert(ctx->b, v, dt);
    return tt_ir_builder_status(ctx->b);
}

/* y is typically a 0-d or lower-rank operand; converting it to x's type keeps x's dtype for the result. */
tt_ir_value tt_lower_binary_like(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x, tt_ir_value y) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    return tt_ir_binary(ctx->b, op, x, tt_lower_to(ctx, y, t.dtype, t.rank, t.dims));
}
