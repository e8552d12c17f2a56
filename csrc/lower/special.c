/* special.c — lowerings of assorted pointwise and small composite ops that had no native form: glu (+backward),
 * log_sigmoid_forward/backward, polygamma, _logcumsumexp, linalg_cross, i0 / special_i0e / i1 / i1e, special_entr,
 * special_modified_bessel_i0/i1, special_spherical_bessel_j0, renorm, angle (real), frexp, _cdist_forward/_cdist_backward, _pdist_forward/_pdist_backward, the norm.* overloads (forwarded to linalg_vector_norm).
 *
 * Float-only ops return TT_STATUS_UNSUPPORTED for other dtypes so PyTorch raises its own error; bf16/f16 are
 * computed in f32 and rounded once (PyTorch CPU's opmath). */
#include "tt_lower.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers ---- */

static tt_ir_value sp_bin(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x, tt_ir_value y) {
    return tt_ir_binary(ctx->b, op, x, y);
}
static tt_ir_value sp_un(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x) { return tt_ir_unary(ctx->b, op, x); }
static tt_ir_value sp_k(tt_lower_ctx *ctx, tt_ir_value like, double v) { return tt_lower_like(ctx, like, v); }

/* Slice [start, start + len) of x along dim. */
static tt_ir_value sp_slice(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, int64_t start, int64_t len) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK];
    memcpy(lim, t.dims, sizeof lim);
    st[dim] = start;
    lim[dim] = start + len;
    return tt_ir_slice(ctx->b, x, st, lim, NULL);
}

/* ---- glu ---- */

/* Splits x along dim into halves (a, b) after the checks PyTorch makes. */
static bool glu_split(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim_arg, int64_t *dim, tt_ir_value *a,
                      tt_ir_value *b) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return false;
    if (t.rank == 0) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "glu does not support scalars because halving size must be even");
        return false;
    }
    *dim = tt_lower_wrap_dim(ctx, dim_arg, t.rank);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return false;
    int64_t n = t.dims[*dim];
    if (n % 2 != 0) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "Halving dimension must be even, but dimension %lld is size %lld", (long long)*dim,
                           (long long)n);
        return false;
    }
    *a = sp_slice(ctx, x, *dim, 0, n / 2);
    *b = sp_slice(ctx, x, *dim, n / 2, n / 2);
    return true;
}

static tt_status tt_lower_glu(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nouts;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (!tt_dtype_is_float(t.dtype)) return tt_lower_unsupported(ctx, "glu");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    int64_t dim;
    tt_ir_value a, b;
    if (!glu_split(ctx, tt_ir_convert(ctx->b, args[0].value, cdt), nargs > 1 ? args[1].i : -1, &dim, &a, &b))
        return tt_ir_builder_status(ctx->b);
    tt_ir_value sig = sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, b, 1.0),
                             sp_bin(ctx, TT_OP_ADD, sp_k(ctx, b, 1.0), sp_un(ctx, TT_OP_EXP, sp_un(ctx, TT_OP_NEGATE, b))));
    outs[0] = tt_ir_convert(ctx->b, sp_bin(ctx, TT_OP_MULTIPLY, a, sig), t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* glu_backward(grad_output, self, dim): d/da = g * s, d/db = g * a * s * (1 - s), s = sigmoid(b). */
static tt_status tt_lower_glu_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value);
    if (!tt_dtype_is_float(t.dtype) || tt_lower_type_copy(ctx, args[0].value).dtype != t.dtype)
        return tt_lower_unsupported(ctx, "glu_backward");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    int64_t dim;
    tt_ir_value a, b;
    if (!glu_split(ctx, tt_ir_convert(ctx->b, args[1].value, cdt), args[2].i, &dim, &a, &b))
        return tt_ir_builder_status(ctx->b);
    tt_ir_value g = tt_ir_convert(ctx->b, args[0].value, cdt);
    tt_ir_type gt = tt_lower_type_copy(ctx, g), at = tt_lower_type_copy(ctx, a);
    if (gt.rank != at.rank || memcmp(gt.dims, at.dims, sizeof(int64_t) * (size_t)at.rank) != 0)
        return tt_lower_unsupported(ctx, "glu_backward shapes");
    tt_ir_value s = sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, b, 1.0),
                           sp_bin(ctx, TT_OP_ADD, sp_k(ctx, b, 1.0), sp_un(ctx, TT_OP_EXP, sp_un(ctx, TT_OP_NEGATE, b))));
    tt_ir_value ga = sp_bin(ctx, TT_OP_MULTIPLY, s, g);
    tt_ir_value gb = sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_SUBTRACT, sp_k(ctx, s, 1.0), s), s),
                            sp_bin(ctx, TT_OP_MULTIPLY, a, g));
    tt_ir_value parts[2] = {ga, gb};
    outs[0] = tt_ir_convert(ctx->b, tt_ir_concatenate(ctx->b, 2, parts, dim), t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- log_sigmoid ---- */

/* (output, buffer): output = min(x, 0) - log1p(exp(-|x|)); the CPU's buffer is an empty tensor. */
static tt_status tt_lower_log_sigmoid_forward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                              tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (!tt_dtype_is_float(t.dtype)) return tt_lower_unsupported(ctx, "log_sigmoid");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    tt_ir_value x = tt_ir_convert(ctx->b, args[0].value, cdt);
    tt_ir_value z = sp_un(ctx, TT_OP_EXP, sp_un(ctx, TT_OP_NEGATE, sp_un(ctx, TT_OP_ABS, x)));
    tt_ir_value mn = sp_bin(ctx, TT_OP_MINIMUM, x, sp_k(ctx, x, 0.0));
    outs[0] = tt_ir_convert(ctx->b, sp_bin(ctx, TT_OP_SUBTRACT, mn, sp_un(ctx, TT_OP_LOG1P, z)), t.dtype);
    if (nouts > 1) {
        int64_t zero = 0;
        outs[1] = tt_lower_full(ctx, t.dtype, 1, &zero, 0.0);
    }
    return tt_ir_builder_status(ctx->b);
}

/* grad * (max_deriv - sign * z / (1 + z)), z = exp(-|x|); max_deriv, sign = (1, 1) for x < 0 else (0, -1). */
static tt_status tt_lower_log_sigmoid_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                               tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value);
    if (!tt_dtype_is_float(t.dtype) || tt_lower_type_copy(ctx, args[0].value).dtype != t.dtype)
        return tt_lower_unsupported(ctx, "log_sigmoid_backward");
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    tt_ir_value v[2] = {tt_ir_convert(ctx->b, args[0].value, cdt), tt_ir_convert(ctx->b, args[1].value, cdt)};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(ctx->b);
    tt_ir_value g = v[0], x = v[1];
    tt_ir_value neg = tt_ir_compare(ctx->b, TT_CMP_LT, x, sp_k(ctx, x, 0.0));
    tt_ir_value z = sp_un(ctx, TT_OP_EXP, sp_un(ctx, TT_OP_NEGATE, sp_un(ctx, TT_OP_ABS, x)));
    tt_ir_value q = sp_bin(ctx, TT_OP_DIVIDE, z, sp_bin(ctx, TT_OP_ADD, sp_k(ctx, z, 1.0), z));
    /* x < 0: 1 - q; else: 0 + q */
    tt_ir_value d = tt_ir_select(ctx->b, neg, sp_bin(ctx, TT_OP_SUBTRACT, sp_k(ctx, q, 1.0), q),
                                 sp_bin(ctx, TT_OP_ADD, sp_k(ctx, q, 0.0), q));
    outs[0] = tt_ir_convert(ctx->b, sp_bin(ctx, TT_OP_MULTIPLY, g, d), t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- polygamma ---- */

/* PyTorch's trigamma (reflection below 1/2, six recurrence steps, then the asymptotic series), in dtype of x. */
static tt_ir_value sp_trigamma(tt_lower_ctx *ctx, tt_ir_value x) {
    tt_ir_builder *b = ctx->b;
    const double pi = 3.14159265358979323846;
    tt_ir_value small = tt_ir_compare(b, TT_CMP_LT, x, sp_k(ctx, x, 0.5));
    tt_ir_value spx = sp_un(ctx, TT_OP_SIN, sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, x, pi), x));
    tt_ir_value refl = sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, x, pi * pi),
                              sp_bin(ctx, TT_OP_MULTIPLY, spx, spx));
    tt_ir_value result = tt_ir_select(b, small, sp_un(ctx, TT_OP_NEGATE, refl), sp_k(ctx, x, 0.0));
    tt_ir_value sign = tt_ir_select(b, small, sp_k(ctx, x, -1.0), sp_k(ctx, x, 1.0));
    x = tt_ir_select(b, small, sp_bin(ctx, TT_OP_SUBTRACT, sp_k(ctx, x, 1.0), x), x);
    for (int i = 0; i < 6; i++) {
        result = sp_bin(ctx, TT_OP_ADD, result, sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, x, 1.0), sp_bin(ctx, TT_OP_MULTIPLY, x, x)));
        x = sp_bin(ctx, TT_OP_ADD, x, sp_k(ctx, x, 1.0));
    }
    tt_ir_value ixx = sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, x, 1.0), sp_bin(ctx, TT_OP_MULTIPLY, x, x));
    /* 1 + 1/(2x) + ixx * (1/6 - ixx * (1/30 - ixx * (1/42))) */
    tt_ir_value in3 = sp_bin(ctx, TT_OP_SUBTRACT, sp_k(ctx, x, 1.0 / 30), sp_bin(ctx, TT_OP_MULTIPLY, ixx, sp_k(ctx, x, 1.0 / 42)));
    tt_ir_value in2 = sp_bin(ctx, TT_OP_SUBTRACT, sp_k(ctx, x, 1.0 / 6), sp_bin(ctx, TT_OP_MULTIPLY, ixx, in3));
    tt_ir_value ser = sp_bin(ctx, TT_OP_ADD,
                             sp_bin(ctx, TT_OP_ADD, sp_k(ctx, x, 1.0),
                                    sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, x, 1.0), sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, x, 2.0), x))),
                             sp_bin(ctx, TT_OP_MULTIPLY, ixx, in2));
    result = sp_bin(ctx, TT_OP_ADD, result, sp_bin(ctx, TT_OP_DIVIDE, ser, x));
    return sp_bin(ctx, TT_OP_MULTIPLY, sign, result);
}

/* Iterations of the direct sum unrolled for the Hurwitz zeta: PyTorch's loop runs while i < 9 or a <= 9, so this
 * covers every q >= -(SP_ZETA_TERMS - 10); lanes further left would need more terms (see sp_zeta). */
#define SP_ZETA_TERMS 48

/* Hurwitz zeta(s, q) for an integer s >= 2 (structural), following the Cephes algorithm PyTorch uses: a direct
 * sum until the terms start at a > 9 (or become negligible), then the Euler-Maclaurin tail with the Bernoulli
 * coefficients. Early exits are kept lane by lane with a "done" mask so every lane sees the same arithmetic as
 * PyTorch's loop. */
static tt_ir_value sp_zeta(tt_lower_ctx *ctx, double s, tt_ir_value q) {
    static const double A[12] = {12.0,
                                 -720.0,
                                 30240.0,
                                 -1209600.0,
                                 47900160.0,
                                 -1.8924375803183791606e9,
                                 7.47242496e10,
                                 -2.950130727918164224e12,
                                 1.1646782814350067249e14,
                                 -4.5979787224074726105e15,
                                 1.8152105401943546773e17,
                                 -7.1661652561756670113e18};
    tt_ir_builder *b = ctx->b;
    tt_dtype dt = tt_lower_type_copy(ctx, q).dtype;
    double machep = dt == TT_F64 ? 1.11022302462515654042e-16 : (double)(float)1.11022302462515654042e-16;
    tt_ir_value negx = sp_k(ctx, q, -s);
    tt_ir_value one = sp_k(ctx, q, 1.0);
    tt_ir_value sum = sp_bin(ctx, TT_OP_POWER, q, negx);
    tt_ir_value a = q, bb = sum;
    tt_ir_value done = tt_lower_like(ctx, tt_ir_compare(b, TT_CMP_NE, q, q), 0.0); /* all false */
    tt_ir_value nine = sp_k(ctx, q, 9.0);
    for (int i = 0; i < SP_ZETA_TERMS; i++) {
        tt_ir_value active = tt_ir_binary(b, TT_OP_AND, sp_un(ctx, TT_OP_NOT, done),
                                          i < 9 ? tt_lower_like(ctx, done, 1.0) : tt_ir_compare(b, TT_CMP_LE, a, nine));
        tt_ir_value a2 = sp_bin(ctx, TT_OP_ADD, a, one);
        tt_ir_value b2 = sp_bin(ctx, TT_OP_POWER, a2, negx);
        tt_ir_value s2 = sp_bin(ctx, TT_OP_ADD, sum, b2);
        a = tt_ir_select(b, active, a2, a);
        bb = tt_ir_select(b, active, b2, bb);
        sum = tt_ir_select(b, active, s2, sum);
        tt_ir_value eps = sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, q, machep), s2);
        tt_ir_value tiny = tt_ir_binary(b, TT_OP_AND, tt_ir_compare(b, TT_CMP_LT, sp_un(ctx, TT_OP_NEGATE, eps), b2),
                                        tt_ir_compare(b, TT_CMP_LT, b2, eps));
        /* a negligible term returns the sum at once (no tail); a lane whose loop condition failed is frozen by
         * the selects above (a > 9 stays true) and goes on to the tail */
        done = tt_ir_binary(b, TT_OP_OR, done, tt_ir_binary(b, TT_OP_AND, active, tiny));
    }
    /* Tail for lanes not done: w = a; s += b*w/(x-1) - b/2; then up to 12 Bernoulli terms. */
    tt_ir_value w = a;
    tt_ir_value t1 = sp_bin(ctx, TT_OP_ADD, sum, sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_MULTIPLY, bb, w), sp_k(ctx, q, s - 1.0)));
    t1 = sp_bin(ctx, TT_OP_SUBTRACT, t1, sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, q, 0.5), bb));
    sum = tt_ir_select(b, done, sum, t1);
    tt_ir_value aa = one, k = sp_k(ctx, q, 0.0);
    for (int i = 0; i < 12; i++) {
        aa = sp_bin(ctx, TT_OP_MULTIPLY, aa, sp_bin(ctx, TT_OP_ADD, sp_k(ctx, q, s), k));
        bb = sp_bin(ctx, TT_OP_DIVIDE, bb, w);
        tt_ir_value t = sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_MULTIPLY, aa, bb), sp_k(ctx, q, A[i]));
        tt_ir_value s2 = sp_bin(ctx, TT_OP_ADD, sum, t);
        sum = tt_ir_select(b, done, sum, s2);
        tt_ir_value rel = sp_un(ctx, TT_OP_ABS, sp_bin(ctx, TT_OP_DIVIDE, t, s2));
        done = tt_ir_binary(b, TT_OP_OR, done, tt_ir_compare(b, TT_CMP_LT, rel, sp_k(ctx, q, machep)));
        k = sp_bin(ctx, TT_OP_ADD, k, one);
        aa = sp_bin(ctx, TT_OP_MULTIPLY, aa, sp_bin(ctx, TT_OP_ADD, sp_k(ctx, q, s), k));
        bb = sp_bin(ctx, TT_OP_DIVIDE, bb, w);
        k = sp_bin(ctx, TT_OP_ADD, k, one);
    }
    /* q <= 0: an integer q is a pole (inf); s is an integer so the non-integer case stays defined. */
    tt_ir_value qint = tt_ir_binary(b, TT_OP_AND, tt_ir_compare(b, TT_CMP_LE, q, sp_k(ctx, q, 0.0)),
                                    tt_ir_compare(b, TT_CMP_EQ, q, sp_un(ctx, TT_OP_FLOOR, q)));
    return tt_ir_select(b, qint, sp_k(ctx, q, INFINITY), sum);
}

static tt_status tt_lower_polygamma(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    (void)nouts;
    int64_t n = args[0].i;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (n < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "polygamma(n, x) does not support negative n.");
    if (n > 60) return tt_lower_unsupported(ctx, "polygamma");
    tt_dtype odt = tt_dtype_is_float(t.dtype) ? t.dtype : tt_lower_default_float(ctx);
    tt_dtype cdt = tt_lower_opmath(odt);
    tt_ir_value x = tt_ir_convert(ctx->b, args[1].value, cdt);
    tt_ir_value r;
    if (n == 0) {
        r = sp_un(ctx, TT_OP_DIGAMMA, x);
    } else if (n == 1) {
        r = sp_trigamma(ctx, x);
    } else {
        /* (-1)^(n+1) * n! * zeta(n + 1, x), with n! = exp(lgamma(n + 1)) as PyTorch computes it */
        double fact = cdt == TT_F64 ? exp(lgamma((double)n + 1.0)) : (double)expf(lgammaf((float)n + 1.0f));
        double sign = (n % 2) ? 1.0 : -1.0;
        r = sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, x, sign * fact), sp_zeta(ctx, (double)n + 1.0, x));
    }
    outs[0] = tt_ir_convert(ctx->b, r, odt);
    return tt_ir_builder_status(ctx->b);
}

/* ---- _logcumsumexp ---- */

/* out[i] = m_i + log(sum_{j <= i} exp(x_j - m_i)), m_i = max_{j <= i} x_j, over an [.., n, n] triangle: exact
 * for any spread of magnitudes (a single global shift would underflow early prefixes). Dims longer than
 * SP_LCSE_MAX fall back. */
#define SP_LCSE_MAX 512

static tt_status tt_lower_logcumsumexp(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (!tt_dtype_is_float(t.dtype)) return tt_lower_unsupported(ctx, "logcumsumexp");
    if (t.rank == 0) {
        (void)tt_lower_wrap_dim(ctx, args[1].i, 0);
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, t.rank);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    int64_t n = t.dims[dim];
    if (n > SP_LCSE_MAX || t.rank + 1 > TT_MAX_RANK) return tt_lower_unsupported(ctx, "logcumsumexp size");
    if (tt_numel(t.rank, t.dims) == 0) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    tt_dtype cdt = tt_lower_opmath(t.dtype);
    tt_ir_value x = tt_ir_convert(b, args[0].value, cdt);
    tt_ir_value m = tt_ir_cumulative(b, TT_REDUCE_MAX, x, dim, false);
    /* triangle shape: x's dims with an extra j axis right after dim (i stays at dim) */
    int32_t r = t.rank;
    int64_t tdims[TT_MAX_RANK], xmap[TT_MAX_RANK], mmap[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d < r; d++) {
        tdims[o] = t.dims[d];
        xmap[d] = o; /* x's dim d; its dim `dim` becomes j (dim + 1) */
        mmap[d] = o;
        o++;
        if (d == dim) {
            tdims[o] = n;
            xmap[d] = o;
            o++;
        }
    }
    tt_ir_value xb = tt_ir_broadcast_in_dim(b, x, r + 1, tdims, xmap);
    tt_ir_value mb = tt_ir_broadcast_in_dim(b, m, r + 1, tdims, mmap);
    tt_ir_value ii = tt_ir_iota(b, TT_I64, r + 1, tdims, dim);
    tt_ir_value jj = tt_ir_iota(b, TT_I64, r + 1, tdims, dim + 1);
    tt_ir_value keep = tt_ir_compare(b, TT_CMP_LE, jj, ii);
    tt_ir_value e = sp_un(ctx, TT_OP_EXP, sp_bin(ctx, TT_OP_SUBTRACT, xb, mb));
    e = tt_ir_select(b, keep, e, sp_k(ctx, e, 0.0));
    int64_t rdim = dim + 1;
    tt_ir_value s = tt_ir_reduce(b, TT_REDUCE_ADD, e, 1, &rdim);
    tt_ir_value out = sp_bin(ctx, TT_OP_ADD, m, sp_un(ctx, TT_OP_LOG, s));
    /* m = +-inf: every x_j - m is nan or -inf; the answer is m itself (-inf prefix, or +inf). */
    tt_ir_value inf = tt_ir_compare(b, TT_CMP_EQ, sp_un(ctx, TT_OP_ABS, m), sp_k(ctx, m, INFINITY));
    out = tt_ir_select(b, inf, m, out);
    outs[0] = tt_ir_convert(b, out, t.dtype);
    return tt_ir_builder_status(b);
}

/* ---- linalg_cross ---- */

static tt_status tt_lower_linalg_cross(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type ta = tt_lower_type_copy(ctx, args[0].value), tb = tt_lower_type_copy(ctx, args[1].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (ta.dtype != tb.dtype || ta.dtype == TT_BOOL || ta.rank != tb.rank) return tt_lower_unsupported(ctx, "linalg_cross");
    int64_t dim = tt_lower_wrap_dim(ctx, nargs > 2 && args[2].kind == TT_ARG_INT ? args[2].i : -1, ta.rank);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (ta.dims[dim] != 3 || tb.dims[dim] != 3)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "linalg.cross: inputs dimension %lld must have length 3. Got %lld and %lld",
                                  (long long)dim, (long long)ta.dims[dim], (long long)tb.dims[dim]);
    tt_ir_value v[2] = {args[0].value, args[1].value};
    if (!tt_lower_broadcast_values(ctx, 2, v)) return tt_ir_builder_status(b);
    tt_ir_value x[3], y[3], z[3];
    for (int i = 0; i < 3; i++) {
        x[i] = sp_slice(ctx, v[0], dim, i, 1);
        y[i] = sp_slice(ctx, v[1], dim, i, 1);
    }
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3, k = (i + 2) % 3;
        z[i] = sp_bin(ctx, TT_OP_SUBTRACT, sp_bin(ctx, TT_OP_MULTIPLY, x[j], y[k]), sp_bin(ctx, TT_OP_MULTIPLY, x[k], y[j]));
    }
    outs[0] = tt_ir_concatenate(b, 3, z, dim);
    return tt_ir_builder_status(b);
}

/* ---- float unary ops: i0, special_i0e/i1/i1e, special_entr, angle, frexp ---- */

/* args[0] as its compute dtype; *odt gets PyTorch's result dtype (ints and bool promote to f32). */
static tt_ir_value sp_float_in(tt_lower_ctx *ctx, const tt_arg *a, tt_dtype *odt) {
    tt_ir_type t = tt_lower_type_copy(ctx, a->value);
    *odt = tt_dtype_is_float(t.dtype) ? t.dtype : tt_lower_default_float(ctx);
    return tt_ir_convert(ctx->b, a->value, tt_lower_opmath(*odt));
}

/* Modified Bessel function I_nu(|x|) (nu = 0 or 1), times exp(-|x|) when scaled: the power series
 * sum (x/2)^(2k+nu) / (k! (k+nu)!) up to |x| = 15 (30 terms: truncation below 1e-12 relative), beyond it the
 * asymptotic expansion e^x / sqrt(2 pi x) * sum (-1)^k c_k / x^k (25 terms: smallest term ~ e^-2x). The overflow
 * point and inf -> nan match PyTorch's exp(x) * series / sqrt(x) form. */
static tt_ir_value sp_bessel_i(tt_lower_ctx *ctx, tt_ir_value x, int nu, bool scaled) {
    tt_ir_builder *b = ctx->b;
    const double pi = 3.14159265358979323846;
    tt_ir_value ax = sp_un(ctx, TT_OP_ABS, x);
    tt_ir_value q = sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_MULTIPLY, ax, ax), sp_k(ctx, ax, 0.25));
    /* Horner from the last term, h = 1 + h q / (k (k + nu)): every partial result stays near the answer. (A
     * running term q^k / (k! (k+nu)!) summed forward lets XLA fold the constant divisors of the chain into one
     * that underflows, while q^k overflows: NaN from x ~ 7.) */
    tt_ir_value sum = sp_k(ctx, ax, 1.0);
    for (int k = 30; k >= 1; k--)
        sum = sp_bin(ctx, TT_OP_ADD, sp_k(ctx, ax, 1.0),
                     sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_MULTIPLY, sum, q), sp_k(ctx, ax, (double)k * (double)(k + nu))));
    if (nu == 1) sum = sp_bin(ctx, TT_OP_MULTIPLY, sum, sp_bin(ctx, TT_OP_MULTIPLY, ax, sp_k(ctx, ax, 0.5)));
    if (scaled) sum = sp_bin(ctx, TT_OP_MULTIPLY, sp_un(ctx, TT_OP_EXP, sp_un(ctx, TT_OP_NEGATE, ax)), sum);
    /* asymptotic: c_0 = 1, c_k = c_{k-1} * (4 nu^2 - (2k-1)^2) / (8k); Horner in y = 1/x from the last term */
    double c[25];
    c[0] = 1.0;
    for (int k = 1; k < 25; k++) c[k] = c[k - 1] * (4.0 * nu * nu - (2.0 * k - 1) * (2.0 * k - 1)) / (8.0 * k);
    tt_ir_value y = sp_bin(ctx, TT_OP_DIVIDE, sp_k(ctx, ax, 1.0), ax);
    tt_ir_value poly = sp_k(ctx, ax, (24 % 2 ? -1.0 : 1.0) * c[24]);
    for (int k = 23; k >= 0; k--)
        poly = sp_bin(ctx, TT_OP_ADD, sp_bin(ctx, TT_OP_MULTIPLY, poly, y), sp_k(ctx, ax, (k % 2 ? -1.0 : 1.0) * c[k]));
    /* sqrt(2 pi) * sqrt(x): 2 pi x would overflow for x near the float max */
    tt_ir_value base = sp_bin(ctx, TT_OP_DIVIDE, poly,
                              sp_bin(ctx, TT_OP_MULTIPLY, sp_k(ctx, ax, sqrt(2.0 * pi)), sp_un(ctx, TT_OP_SQRT, ax)));
    tt_ir_value large = scaled ? base : sp_bin(ctx, TT_OP_MULTIPLY, sp_un(ctx, TT_OP_EXP, ax), base);
    tt_ir_value r = tt_ir_select(b, tt_ir_compare(b, TT_CMP_LE, ax, sp_k(ctx, ax, 15.0)), sum, large);
    if (nu == 1) r = tt_ir_select(b, tt_ir_compare(b, TT_CMP_LT, x, sp_k(ctx, x, 0.0)), sp_un(ctx, TT_OP_NEGATE, r), r);
    return r;
}

#define SP_BESSEL(name, nu, scaled)                                                                               \
    static tt_status tt_lower_##name(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,    \
                                     int32_t nouts) {                                                            \
        (void)nargs;                                                                                             \
        (void)nouts;                                                                                             \
        tt_dtype odt;                                                                                            \
        tt_ir_value x = sp_float_in(ctx, &args[0], &odt);                                                        \
        outs[0] = tt_ir_convert(ctx->b, sp_bessel_i(ctx, x, nu, scaled), odt);                                   \
        return tt_ir_builder_status(ctx->b);                                                                     \
    }
SP_BESSEL(i0, 0, false)
SP_BESSEL(special_i0e, 0, true)
SP_BESSEL(special_i1, 1, false)
SP_BESSEL(special_i1e, 1, true)

/* spherical_bessel_j0(x) = sin(x) / x, with PyTorch's series below |x| = 0.5 and 0 at +-inf. */
static tt_status tt_lower_special_spherical_bessel_j0(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                      tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_dtype odt;
    tt_ir_value x = sp_float_in(ctx, &args[0], &odt);
    static const double c[6] = {-1.0 / 6.0, 1.0 / 120.0, -1.0 / 5040.0, 1.0 / 362880.0, -1.0 / 39916800.0, 1.0 / 6227020800.0};
    tt_ir_value xx = sp_bin(ctx, TT_OP_MULTIPLY, x, x);
    tt_ir_value poly = sp_k(ctx, x, c[5]);
    for (int k = 4; k >= 0; k--) poly = sp_bin(ctx, TT_OP_ADD, sp_k(ctx, x, c[k]), sp_bin(ctx, TT_OP_MULTIPLY, xx, poly));
    tt_ir_value series = sp_bin(ctx, TT_OP_ADD, sp_k(ctx, x, 1.0), sp_bin(ctx, TT_OP_MULTIPLY, xx, poly));
    tt_ir_value direct = sp_bin(ctx, TT_OP_DIVIDE, sp_un(ctx, TT_OP_SIN, x), x);
    tt_ir_value ax = sp_un(ctx, TT_OP_ABS, x);
    tt_ir_value v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_LT, ax, sp_k(ctx, x, 0.5)), series, direct);
    v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_EQ, ax, sp_k(ctx, x, INFINITY)), sp_k(ctx, x, 0.0), v);
    outs[0] = tt_ir_convert(b, v, odt);
    return tt_ir_builder_status(b);
}

/* renorm(self, p, dim, maxnorm): slices along dim whose p-norm exceeds maxnorm are scaled by
 * maxnorm / (norm + 1e-7) (the factor rounded to self's dtype first, as PyTorch computes it). */
static tt_status tt_lower_renorm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    double p = tt_lower_arg_double(&args[1]), maxnorm = tt_lower_arg_double(&args[3]);
    tt_lower_fn norm = tt_lower_find("aten::linalg_vector_norm");
    if (!tt_dtype_is_float(t.dtype) || !norm) return tt_lower_unsupported(ctx, "renorm");
    if (t.rank < 2)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "renorm: input needs at least 2 dimensions, got %d dimensions",
                                  (int)t.rank);
    if (!(p > 0)) return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "renorm: non-positive-norm not supported");
    if (!(maxnorm >= 0))
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "renorm: expected maxnorm to be >= 0 but got %g", maxnorm);
    int64_t dim = tt_lower_wrap_dim(ctx, args[2].i, t.rank);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    int64_t rd[TT_MAX_RANK];
    int32_t nr = 0;
    for (int32_t d = 0; d < t.rank; d++)
        if (d != dim) rd[nr++] = d;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_value nv = TT_IR_NONE;
    {
        tt_arg na[5];
        memset(na, 0, sizeof na);
        na[0] = args[0];
        na[1] = args[1];
        na[2].kind = TT_ARG_INTS;
        na[2].n = nr;
        na[2].ints = rd;
        na[3].kind = TT_ARG_BOOL;
        na[3].b = true;
        na[4].kind = TT_ARG_DTYPE;
        na[4].dtype = acc;
        tt_status st = norm(ctx, na, 5, &nv, 1);
        if (st != TT_OK) return st;
    }
    tt_ir_value mx = tt_ir_broadcast_in_dim(b, tt_lower_scalar_param(ctx, acc, 0, maxnorm), tt_lower_type_copy(ctx, nv).rank,
                                            tt_lower_type_copy(ctx, nv).dims, NULL);
    tt_ir_value f = sp_bin(ctx, TT_OP_DIVIDE, mx, sp_bin(ctx, TT_OP_ADD, nv, sp_k(ctx, nv, 1e-7)));
    f = tt_ir_select(b, tt_ir_compare(b, TT_CMP_GT, nv, mx), f, sp_k(ctx, nv, 1.0));
    f = tt_ir_convert(b, tt_ir_convert(b, f, t.dtype), acc);
    tt_ir_value fb = tt_lower_to(ctx, f, acc, t.rank, t.dims);
    outs[0] = tt_ir_convert(b, sp_bin(ctx, TT_OP_MULTIPLY, tt_ir_convert(b, args[0].value, acc), fb), t.dtype);
    return tt_ir_builder_status(b);
}

/* entr(x) = -x ln x for x > 0, 0 at 0, -inf below 0, nan stays nan. */
static tt_status tt_lower_special_entr(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_dtype odt;
    tt_ir_value x = sp_float_in(ctx, &args[0], &odt);
    tt_ir_value z = sp_k(ctx, x, 0.0);
    tt_ir_value v = sp_un(ctx, TT_OP_NEGATE, sp_bin(ctx, TT_OP_MULTIPLY, x, sp_un(ctx, TT_OP_LOG, x)));
    v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_EQ, x, z), z, v);
    v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_LT, x, z), sp_k(ctx, x, -INFINITY), v);
    outs[0] = tt_ir_convert(b, v, odt);
    return tt_ir_builder_status(b);
}

/* angle of a real number: pi below zero, 0 otherwise, nan stays nan (ints and bool give f32). */
static tt_status tt_lower_angle(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_dtype odt;
    tt_ir_value x = sp_float_in(ctx, &args[0], &odt);
    tt_ir_value v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_LT, x, sp_k(ctx, x, 0.0)), sp_k(ctx, x, 3.14159265358979323846),
                                 sp_k(ctx, x, 0.0));
    v = tt_ir_select(b, tt_ir_compare(b, TT_CMP_NE, x, x), x, v);
    outs[0] = tt_ir_convert(b, v, odt);
    return tt_ir_builder_status(b);
}

/* frexp(x) -> (mantissa in [0.5, 1) with x's sign, int32 exponent): e from log2, then corrected by one step
 * either way (log2 may round across a power of two); 0, inf and nan give (x, 0) like std::frexp. */
static tt_status tt_lower_frexp(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs;
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    if (!tt_dtype_is_float(t.dtype)) return tt_lower_unsupported(ctx, "frexp");
    tt_dtype cdt = t.dtype == TT_F64 ? TT_F64 : TT_F32;
    tt_ir_value x = tt_ir_convert(b, args[0].value, cdt);
    tt_ir_value ax = sp_un(ctx, TT_OP_ABS, x);
    tt_ir_value e = sp_bin(ctx, TT_OP_ADD,
                           sp_un(ctx, TT_OP_FLOOR, sp_bin(ctx, TT_OP_DIVIDE, sp_un(ctx, TT_OP_LOG, ax), sp_k(ctx, ax, log(2.0)))),
                           sp_k(ctx, ax, 1.0));
    tt_ir_value two = sp_k(ctx, ax, 2.0);
    /* scale in two halves so 2^e never overflows or underflows for the extreme exponents */
    tt_ir_value h1 = sp_un(ctx, TT_OP_FLOOR, sp_bin(ctx, TT_OP_MULTIPLY, e, sp_k(ctx, e, 0.5)));
    tt_ir_value h2 = sp_bin(ctx, TT_OP_SUBTRACT, e, h1);
    tt_ir_value m = sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_DIVIDE, x, sp_bin(ctx, TT_OP_POWER, two, h1)),
                           sp_bin(ctx, TT_OP_POWER, two, h2));
    tt_ir_value am = sp_un(ctx, TT_OP_ABS, m);
    tt_ir_value hi = tt_ir_compare(b, TT_CMP_GE, am, sp_k(ctx, am, 1.0));
    m = tt_ir_select(b, hi, sp_bin(ctx, TT_OP_MULTIPLY, m, sp_k(ctx, m, 0.5)), m);
    e = tt_ir_select(b, hi, sp_bin(ctx, TT_OP_ADD, e, sp_k(ctx, e, 1.0)), e);
    tt_ir_value lo = tt_ir_compare(b, TT_CMP_LT, sp_un(ctx, TT_OP_ABS, m), sp_k(ctx, m, 0.5));
    m = tt_ir_select(b, lo, sp_bin(ctx, TT_OP_MULTIPLY, m, two), m);
    e = tt_ir_select(b, lo, sp_bin(ctx, TT_OP_SUBTRACT, e, sp_k(ctx, e, 1.0)), e);
    tt_ir_value special = tt_ir_binary(b, TT_OP_OR, tt_ir_compare(b, TT_CMP_EQ, x, sp_k(ctx, x, 0.0)),
                                       sp_un(ctx, TT_OP_NOT, sp_un(ctx, TT_OP_IS_FINITE, x)));
    m = tt_ir_select(b, special, x, m);
    e = tt_ir_select(b, special, sp_k(ctx, e, 0.0), e);
    outs[0] = tt_ir_convert(b, m, t.dtype);
    if (nouts > 1) outs[1] = tt_ir_convert(b, e, TT_I32);
    return tt_ir_builder_status(b);
}

/* ---- cdist / pdist (direct differences; the p = 2 matmul shortcut PyTorch takes for > 25 rows is less exact) ---- */

/* x1 [B.., P, M] and x2 [B.., R, M] broadcast over their batch dims to diff [B, P, R, M] (B = broadcast batch,
 * rank nb). Returns diff; *rank gets its rank and dims its shape. */
static tt_ir_value cd_diff(tt_lower_ctx *ctx, tt_ir_value x1, tt_ir_value x2, int32_t *rank, int64_t *dims) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t1 = tt_lower_type_copy(ctx, x1), t2 = tt_lower_type_copy(ctx, x2);
    int32_t nb;
    int64_t bd[TT_MAX_RANK];
    if (tt_lower_broadcast_shapes(t1.rank - 2, t1.dims, t2.rank - 2, t2.dims, &nb, bd) != TT_OK) {
        tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "%s", tt_last_error());
        return TT_IR_NONE;
    }
    if (nb + 3 > TT_MAX_RANK) {
        tt_lower_unsupported(ctx, "cdist rank");
        return TT_IR_NONE;
    }
    int64_t P = t1.dims[t1.rank - 2], R = t2.dims[t2.rank - 2], M = t1.dims[t1.rank - 1];
    memcpy(dims, bd, sizeof(int64_t) * (size_t)nb);
    dims[nb] = P;
    dims[nb + 1] = R;
    dims[nb + 2] = M;
    *rank = nb + 3;
    int64_t m1[TT_MAX_RANK], m2[TT_MAX_RANK];
    for (int32_t d = 0; d < t1.rank - 2; d++) m1[d] = nb - (t1.rank - 2) + d;
    m1[t1.rank - 2] = nb;
    m1[t1.rank - 1] = nb + 2;
    for (int32_t d = 0; d < t2.rank - 2; d++) m2[d] = nb - (t2.rank - 2) + d;
    m2[t2.rank - 2] = nb + 1;
    m2[t2.rank - 1] = nb + 2;
    /* size-1 batch dims broadcast through broadcast_in_dim only when sizes match: reshape them away first */
    tt_ir_value a = x1, c = x2;
    for (int k = 0; k < 2; k++) {
        tt_ir_type t = k == 0 ? t1 : t2;
        int64_t *m = k == 0 ? m1 : m2;
        int64_t keep_dims[TT_MAX_RANK], keep_map[TT_MAX_RANK];
        int32_t n = 0;
        for (int32_t d = 0; d < t.rank; d++) {
            if (t.dims[d] == 1 && dims[m[d]] != 1) continue;
            keep_dims[n] = t.dims[d];
            keep_map[n++] = m[d];
        }
        tt_ir_value v = tt_ir_reshape(b, k == 0 ? x1 : x2, n, keep_dims);
        v = tt_ir_broadcast_in_dim(b, v, *rank, dims, keep_map);
        if (k == 0) a = v;
        else c = v;
    }
    return sp_bin(ctx, TT_OP_SUBTRACT, a, c);
}

static tt_status cd_check(tt_lower_ctx *ctx, const tt_ir_type *t1, const tt_ir_type *t2, double p) {
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (t1->dtype != t2->dtype || (t1->dtype != TT_F32 && t1->dtype != TT_F64) || t1->rank < 2 || t2->rank < 2)
        return tt_lower_unsupported(ctx, "cdist");
    if (t1->dims[t1->rank - 1] != t2->dims[t2->rank - 1])
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "X1 and X2 must have the same number of columns. X1: %lld X2: %lld",
                                  (long long)t1->dims[t1->rank - 1], (long long)t2->dims[t2->rank - 1]);
    if (!(p >= 0)) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "cdist only supports non-negative p values");
    return TT_OK;
}

/* The p-norm of diff over its last dim. */
static tt_ir_value cd_norm(tt_lower_ctx *ctx, tt_ir_value diff, int32_t rank, double p) {
    tt_ir_builder *b = ctx->b;
    int64_t last = rank - 1;
    tt_ir_value ad = sp_un(ctx, TT_OP_ABS, diff);
    if (p == 0) {
        tt_ir_value nz = tt_ir_convert(b, tt_ir_compare(b, TT_CMP_NE, diff, sp_k(ctx, diff, 0.0)), tt_lower_type_copy(ctx, diff).dtype);
        return tt_ir_reduce(b, TT_REDUCE_ADD, nz, 1, &last);
    }
    if (p == 1) return tt_ir_reduce(b, TT_REDUCE_ADD, ad, 1, &last);
    if (isinf(p)) return tt_ir_reduce(b, TT_REDUCE_MAX, ad, 1, &last);
    if (p == 2) return sp_un(ctx, TT_OP_SQRT, tt_ir_reduce(b, TT_REDUCE_ADD, sp_bin(ctx, TT_OP_MULTIPLY, diff, diff), 1, &last));
    tt_ir_value s = tt_ir_reduce(b, TT_REDUCE_ADD, sp_bin(ctx, TT_OP_POWER, ad, sp_k(ctx, ad, p)), 1, &last);
    return sp_bin(ctx, TT_OP_POWER, s, sp_k(ctx, s, 1.0 / p));
}

/* _cdist_forward(x1, x2, p, compute_mode) */
static tt_status tt_lower_cdist_forward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type t1 = tt_lower_type_copy(ctx, args[0].value), t2 = tt_lower_type_copy(ctx, args[1].value);
    double p = args[2].f;
    tt_status st = cd_check(ctx, &t1, &t2, p);
    if (st != TT_OK) return st;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    tt_ir_value diff = cd_diff(ctx, args[0].value, args[1].value, &rank, dims);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (tt_numel(rank, dims) == 0) /* no rows, or no columns: distances are all 0 */
        outs[0] = tt_lower_full(ctx, t1.dtype, rank - 1, dims, 0.0);
    else
        outs[0] = cd_norm(ctx, diff, rank, p);
    return tt_ir_builder_status(ctx->b);
}

/* grad of x1 for cdist(x1, x2) given grad_out and the distances (both [B.., P, R]); batch dims broadcast. */
static tt_status cd_backward(tt_lower_ctx *ctx, tt_ir_value grad, tt_ir_value x1, tt_ir_value x2, tt_ir_value dist_in,
                             double p, tt_ir_value *outs) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t1 = tt_lower_type_copy(ctx, x1), t2 = tt_lower_type_copy(ctx, x2);
    tt_status st = cd_check(ctx, &t1, &t2, p);
    if (st != TT_OK) return st;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    tt_ir_value diff = cd_diff(ctx, x1, x2, &rank, dims);
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    tt_ir_type gt = tt_lower_type_copy(ctx, grad), dt = tt_lower_type_copy(ctx, dist_in);
    if (gt.rank != rank - 1 || dt.rank != rank - 1 || gt.dtype != t1.dtype || dt.dtype != t1.dtype ||
        memcmp(gt.dims, dims, sizeof(int64_t) * (size_t)(rank - 1)) != 0 ||
        memcmp(dt.dims, dims, sizeof(int64_t) * (size_t)(rank - 1)) != 0)
        return tt_lower_unsupported(ctx, "cdist_backward shapes");
    if (tt_numel(rank, dims) == 0) {
        dims[rank - 2] = dims[rank - 1];
        outs[0] = tt_lower_full(ctx, t1.dtype, rank - 1, dims, 0.0);
        return tt_ir_builder_status(b);
    }
    int64_t map[TT_MAX_RANK];
    for (int32_t d = 0; d < rank - 1; d++) map[d] = d;
    tt_ir_value g = tt_ir_broadcast_in_dim(b, grad, rank, dims, map);
    tt_ir_value dist = tt_ir_broadcast_in_dim(b, dist_in, rank, dims, map);
    tt_ir_value zero = sp_k(ctx, diff, 0.0);
    tt_ir_value ad = sp_un(ctx, TT_OP_ABS, diff), sg = sp_un(ctx, TT_OP_SIGN, diff);
    tt_ir_value dzero = tt_ir_compare(b, TT_CMP_EQ, dist, zero);
    tt_ir_value v;
    if (p == 0) {
        v = zero;
    } else if (p == 1) {
        v = sp_bin(ctx, TT_OP_MULTIPLY, g, sg);
    } else if (isinf(p)) {
        v = sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_MULTIPLY, g, sg),
                   tt_ir_convert(b, tt_ir_compare(b, TT_CMP_EQ, ad, dist), t1.dtype));
    } else if (p == 2) {
        v = tt_ir_select(b, dzero, zero, sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_MULTIPLY, g, diff), dist));
    } else if (p < 2) {
        tt_ir_value pm1 = sp_k(ctx, diff, p - 1.0);
        v = sp_bin(ctx, TT_OP_DIVIDE, sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_MULTIPLY, sg, sp_bin(ctx, TT_OP_POWER, ad, pm1)), g),
                   sp_bin(ctx, TT_OP_POWER, dist, pm1));
        tt_ir_value z = dzero;
        if (p < 1) z = tt_ir_binary(b, TT_OP_OR, z, tt_ir_compare(b, TT_CMP_EQ, diff, zero));
        v = tt_ir_select(b, z, zero, v);
    } else {
        v = sp_bin(ctx, TT_OP_DIVIDE,
                   sp_bin(ctx, TT_OP_MULTIPLY, sp_bin(ctx, TT_OP_MULTIPLY, diff, sp_bin(ctx, TT_OP_POWER, ad, sp_k(ctx, ad, p - 2.0))), g),
                   sp_bin(ctx, TT_OP_POWER, dist, sp_k(ctx, dist, p - 1.0)));
        v = tt_ir_select(b, dzero, zero, v);
    }
    int64_t rdim = rank - 2; /* sum over x2's rows */
    outs[0] = tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, &rdim);
    return tt_ir_builder_status(b);
}

/* _cdist_backward(grad, x1, x2, p, cdist) -> grad of x1 (batch dims broadcast; autograd reduces them). */
static tt_status tt_lower_cdist_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    return cd_backward(ctx, args[0].value, args[1].value, args[2].value, args[4].value, args[3].f, outs);
}

/* Pair k of pdist as a full symmetric [N, N] matrix read from v [K] (diagonal: 0): index table into [v, 0]. */
static tt_ir_value pd_square(tt_lower_ctx *ctx, tt_ir_value v, int64_t N) {
    tt_ir_builder *b = ctx->b;
    int64_t K = N * (N - 1) / 2, nn = N * N, one = 1;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)nn);
    if (!idx) {
        tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
        return TT_IR_NONE;
    }
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t lo = i < j ? i : j, hi = i < j ? j : i;
            idx[i * N + j] = i == j ? K : lo * N - lo * (lo + 1) / 2 + (hi - lo - 1);
        }
    int64_t id[2] = {nn, 1};
    tt_ir_value ind = tt_ir_constant(b, TT_I64, 2, id, idx);
    free(idx);
    tt_ir_value parts[2] = {v, tt_lower_full(ctx, tt_lower_type_copy(ctx, v).dtype, 1, &one, 0.0)};
    tt_ir_attrs a = tt_lower_gather_elements_attrs(1, false);
    int64_t sq[2] = {N, N};
    return tt_ir_reshape(b, tt_ir_gather(b, tt_ir_concatenate(b, 2, parts, 0), ind, &a), 2, sq);
}

/* _pdist_backward(grad, self, p, pdist): every pair feeds both rows, so it is cdist's backward over the
 * symmetric grad and distance matrices. */
static tt_status tt_lower_pdist_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type t = tt_lower_type_copy(ctx, args[1].value), gt = tt_lower_type_copy(ctx, args[0].value);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (t.rank != 2 || gt.rank != 1 || gt.dims[0] != t.dims[0] * (t.dims[0] - 1) / 2 || !tt_dtype_is_float(t.dtype))
        return tt_lower_unsupported(ctx, "pdist_backward");
    if (t.dims[0] < 2) { /* no pairs */
        outs[0] = tt_lower_full(ctx, t.dtype, 2, t.dims, 0.0);
        return tt_ir_builder_status(ctx->b);
    }
    int64_t N = t.dims[0];
    return cd_backward(ctx, pd_square(ctx, args[0].value, N), args[1].value, args[1].value,
                       pd_square(ctx, args[3].value, N), args[2].f, outs);
}

/* _pdist_forward(self [N, M], p): the upper triangle (i < j, row-major) of cdist(self, self). */
static tt_status tt_lower_pdist_forward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, args[0].value);
    double p = nargs > 1 ? args[1].f : 2.0;
    if (tt_ir_builder_status(b) != TT_OK) return tt_ir_builder_status(b);
    if (t.rank != 2) return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "pdist only supports 2D tensors, got: %dD", (int)t.rank);
    tt_status st = cd_check(ctx, &t, &t, p);
    if (st != TT_OK) return st;
    int64_t N = t.dims[0];
    if (N < 2 || t.dims[1] == 0) { /* no pairs, or all distances 0 */
        int64_t K = N * (N - 1) / 2;
        outs[0] = tt_lower_full(ctx, t.dtype, 1, &K, 0.0);
        return tt_ir_builder_status(b);
    }
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    tt_ir_value full = cd_norm(ctx, cd_diff(ctx, args[0].value, args[0].value, &rank, dims), 3, p);
    int64_t K = N * (N - 1) / 2, nn = N * N;
    int64_t *idx = malloc(sizeof(int64_t) * (size_t)K);
    if (!idx) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "out of memory");
    int64_t k = 0;
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = i + 1; j < N; j++) idx[k++] = i * N + j;
    int64_t id[2] = {K, 1};
    tt_ir_value ind = tt_ir_constant(b, TT_I64, 2, id, idx);
    free(idx);
    tt_ir_attrs a = tt_lower_gather_elements_attrs(1, false);
    outs[0] = tt_ir_gather(b, tt_ir_reshape(b, full, 1, &nn), ind, &a);
    return tt_ir_builder_status(b);
}

/* ---- norm.* -> linalg_vector_norm(self, ord, dim, keepdim, dtype) ---- */

static tt_status sp_norm(tt_lower_ctx *ctx, const tt_arg *self, const tt_arg *p, const tt_arg *dim,
                         const tt_arg *keepdim, const tt_arg *dtype, tt_ir_value *outs, int32_t nouts) {
    tt_lower_fn fn = tt_lower_find("aten::linalg_vector_norm");
    if (!fn) return tt_lower_unsupported(ctx, "norm");
    tt_arg a[5];
    memset(a, 0, sizeof a);
    for (int i = 0; i < 5; i++) a[i].value = TT_IR_NONE;
    a[0] = *self;
    if (p && p->kind != TT_ARG_NONE) {
        a[1] = *p;
    } else {
        a[1].kind = TT_ARG_SCALAR;
        a[1].dtype = TT_I64;
        a[1].i = 2;
        a[1].f = 2.0;
    }
    if (dim) a[2] = *dim;
    else a[2].kind = TT_ARG_NONE;
    a[3].kind = TT_ARG_BOOL;
    a[3].b = keepdim && keepdim->kind == TT_ARG_BOOL && keepdim->b;
    if (dtype) a[4] = *dtype;
    else a[4].kind = TT_ARG_NONE;
    return fn(ctx, a, 5, outs, nouts);
}

/* norm.Scalar(self, p=2) */
static tt_status tt_lower_norm_scalar(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    return sp_norm(ctx, &args[0], nargs > 1 ? &args[1] : NULL, NULL, NULL, NULL, outs, nouts);
}
/* norm.ScalarOpt_dim(self, p?, dim, keepdim) and norm.ScalarOpt_dim_dtype(..., *, dtype) */
static tt_status tt_lower_norm_dim(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    return sp_norm(ctx, &args[0], &args[1], &args[2], nargs > 3 ? &args[3] : NULL, nargs > 4 ? &args[4] : NULL, outs,
                   nouts);
}
/* norm.ScalarOpt_dtype(self, p?, *, dtype) */
static tt_status tt_lower_norm_dtype(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    return sp_norm(ctx, &args[0], &args[1], NULL, NULL, nargs > 2 ? &args[2] : NULL, outs, nouts);
}

const tt_lower_entry tt_lower_table_special[] = {
    {"aten::glu", tt_lower_glu},
    {"aten::glu_backward", tt_lower_glu_backward},
    {"aten::log_sigmoid_forward", tt_lower_log_sigmoid_forward},
    {"aten::log_sigmoid_backward", tt_lower_log_sigmoid_backward},
    {"aten::polygamma", tt_lower_polygamma},
    {"aten::_logcumsumexp", tt_lower_logcumsumexp},
    {"aten::linalg_cross", tt_lower_linalg_cross},
    {"aten::i0", tt_lower_i0},
    {"aten::special_i0e", tt_lower_special_i0e},
    {"aten::special_i1", tt_lower_special_i1},
    {"aten::special_i1e", tt_lower_special_i1e},
    {"aten::special_entr", tt_lower_special_entr},
    {"aten::special_modified_bessel_i0", tt_lower_i0},
    {"aten::special_modified_bessel_i1", tt_lower_special_i1},
    {"aten::special_spherical_bessel_j0", tt_lower_special_spherical_bessel_j0},
    {"aten::renorm", tt_lower_renorm},
    {"aten::angle", tt_lower_angle},
    {"aten::frexp.Tensor", tt_lower_frexp},
    {"aten::_cdist_forward", tt_lower_cdist_forward},
    {"aten::_cdist_backward", tt_lower_cdist_backward},
    {"aten::_pdist_forward", tt_lower_pdist_forward},
    {"aten::_pdist_backward", tt_lower_pdist_backward},
    {"aten::norm.Scalar", tt_lower_norm_scalar},
    {"aten::norm.ScalarOpt_dim", tt_lower_norm_dim},
    {"aten::norm.ScalarOpt_dim_dtype", tt_lower_norm_dim},
    {"aten::norm.ScalarOpt_dtype", tt_lower_norm_dtype},
    {NULL, NULL},
};
