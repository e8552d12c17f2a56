/* nn.c — lowerings of the nn op family: softmax / log_softmax (+ backward), layer / group / batch norm
 * (+ backward), nll_loss (1d/2d, + backward), mse / smooth_l1 / huber / binary cross entropy losses (+ backward),
 * dropout.
 *
 * Numerics follow PyTorch CPU: bf16/f16 inputs are computed in f32 ("opmath") and rounded once; user floats (eps,
 * momentum, beta, delta, dropout p) travel as scalar parameters so one program serves every value. Backward ops
 * honour output_mask: a masked-off gradient is left TT_IR_NONE (an undefined tensor, as on CPU), so the nodes only
 * it needs are dropped from the program and never run. */
#include "tt_lower.h"

#include <string.h>

/* ---- helpers (file-local) ---- */

static bool nn_present(const tt_arg *a) { return a->kind == TT_ARG_TENSOR && a->value != TT_IR_NONE; }

static tt_ir_value nn_const_like(tt_lower_ctx *ctx, tt_ir_value x, double v) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    return tt_lower_full(ctx, t.dtype, t.rank, t.dims, v);
}

/* Reduce over the dims set in mask (rank of t). */
static tt_ir_value nn_reduce(tt_lower_ctx *ctx, tt_ir_reduce_kind k, tt_ir_value x, int32_t rank, const bool *mask) {
    int64_t d[TT_MAX_RANK];
    int32_t n = 0;
    for (int32_t i = 0; i < rank; i++)
        if (mask[i]) d[n++] = i;
    if (n == 0) return x;
    return tt_ir_reduce(ctx->b, k, x, n, d);
}

/* r (reduced over mask) broadcast back to t's shape. */
static tt_ir_value nn_back(tt_lower_ctx *ctx, tt_ir_value r, const tt_ir_type *t, const bool *mask) {
    int64_t map[TT_MAX_RANK];
    int32_t k = 0;
    for (int32_t i = 0; i < t->rank; i++)
        if (!mask[i]) map[k++] = i;
    if (k == t->rank) return r;
    return tt_ir_broadcast_in_dim(ctx->b, r, t->rank, t->dims, map);
}

/* Count of elements reduced by mask. */
static int64_t nn_count(const tt_ir_type *t, const bool *mask) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++)
        if (mask[i]) n *= t->dims[i];
    return n;
}

/* mean over mask of x (acc dtype), reduced shape. */
static tt_ir_value nn_mean(tt_lower_ctx *ctx, tt_ir_value x, const tt_ir_type *t, const bool *mask) {
    tt_ir_value s = nn_reduce(ctx, TT_REDUCE_ADD, x, t->rank, mask);
    return tt_lower_binary_like(ctx, TT_OP_DIVIDE, s, tt_lower_const(ctx, t->dtype, (double)nn_count(t, mask)));
}

/* A per-channel vector v (length t->dims[dim]) broadcast along dim of t, converted to dt. */
static tt_ir_value nn_chan(tt_lower_ctx *ctx, tt_ir_value v, const tt_ir_type *t, int64_t dim, tt_dtype dt) {
    int64_t map[1] = {dim};
    return tt_ir_broadcast_in_dim(ctx->b, tt_ir_convert(ctx->b, v, dt), t->rank, t->dims, map);
}

static tt_ir_value nn_scalar(tt_lower_ctx *ctx, tt_dtype dt, double v) { return tt_lower_scalar_param(ctx, dt, 0, v); }

/* ---- softmax ---- */

static tt_status nn_softmax(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_log) {
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype)) return TT_STATUS_UNSUPPORTED;
    if (args[2].b) return TT_STATUS_UNSUPPORTED; /* half_to_float: CPU rejects it; let PyTorch say so */
    int64_t d = tt_lower_wrap_dim(ctx, args[1].i, t.rank);
    bool mask[TT_MAX_RANK] = {false};
    if (t.rank > 0) mask[d] = true;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value m = nn_reduce(ctx, TT_REDUCE_MAX, xa, t.rank, mask);
    tt_ir_value sh = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, m, &ta, mask));
    tt_ir_value e = tt_ir_unary(ctx->b, TT_OP_EXP, sh);
    tt_ir_value s = nn_reduce(ctx, TT_REDUCE_ADD, e, t.rank, mask);
    /* log_softmax: the log of each row's sum, then broadcast (one log per row, not per element; same values) */
    tt_ir_value r = is_log ? tt_ir_binary(ctx->b, TT_OP_SUBTRACT, sh, nn_back(ctx, tt_ir_unary(ctx->b, TT_OP_LOG, s), &ta, mask))
                           : tt_ir_binary(ctx->b, TT_OP_DIVIDE, e, nn_back(ctx, s, &ta, mask));
    outs[0] = tt_ir_convert(ctx->b, r, t.dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_softmax(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    return nn_softmax(ctx, args, outs, false);
}

static tt_status tt_lower_log_softmax(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    return nn_softmax(ctx, args, outs, true);
}

/* (grad_output, output, dim, input_dtype): softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
 * The result has grad_output's dtype, as on CPU. */
static tt_status nn_softmax_bwd(tt_lower_ctx *ctx, const tt_arg *args, tt_ir_value *outs, bool is_log) {
    tt_ir_value g = args[0].value, y = args[1].value;
    tt_ir_type t = tt_lower_type_copy(ctx, g);
    tt_ir_type ty = tt_lower_type_copy(ctx, y);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || ty.rank != t.rank) return TT_STATUS_UNSUPPORTED;
    int64_t d = tt_lower_wrap_dim(ctx, args[2].i, t.rank);
    bool mask[TT_MAX_RANK] = {false};
    if (t.rank > 0) mask[d] = true;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value ga = tt_ir_convert(ctx->b, g, acc), ya = tt_ir_convert(ctx->b, y, acc);
    tt_ir_value r;
    if (is_log) {
        tt_ir_value s = nn_back(ctx, nn_reduce(ctx, TT_REDUCE_ADD, ga, t.rank, mask), &ta, mask);
        r = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, ga,
                         tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_unary(ctx->b, TT_OP_EXP, ya), s));
    } else {
        tt_ir_value gy = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ga, ya);
        tt_ir_value s = nn_back(ctx, nn_reduce(ctx, TT_REDUCE_ADD, gy, t.rank, mask), &ta, mask);
        r = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ya, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, ga, s));
    }
    outs[0] = tt_ir_convert(ctx->b, r, t.dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_softmax_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs; (void)nouts;
    return nn_softmax_bwd(ctx, args, outs, false);
}

static tt_status tt_lower_log_softmax_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                          int32_t nouts) {
    (void)nargs; (void)nouts;
    return nn_softmax_bwd(ctx, args, outs, true);
}

/* ---- layer norm ---- */

/* Checks normalized_shape against x's trailing dims; returns the first normalized axis or -1 (error recorded). */
static int32_t nn_ln_axis(tt_lower_ctx *ctx, const tt_ir_type *t, const tt_arg *ns) {
    if (ns->kind != TT_ARG_INTS || ns->n < 1 || ns->n > t->rank) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "Expected normalized_shape to be at least 1-dimensional and to match the trailing dims of "
                           "the input");
        return -1;
    }
    int32_t axis = t->rank - ns->n;
    for (int32_t i = 0; i < ns->n; i++) {
        if (t->dims[axis + i] != ns->ints[i]) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "Given normalized_shape does not match the trailing dims of the input");
            return -1;
        }
    }
    return axis;
}

/* native_layer_norm(input, normalized_shape, weight?, bias?, eps) -> (out, mean, rstd) */
static tt_status tt_lower_native_layer_norm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nargs;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || nouts < 3) return TT_STATUS_UNSUPPORTED;
    int32_t axis = nn_ln_axis(ctx, &t, &args[1]);
    if (axis < 0) return tt_ir_builder_status(ctx->b);
    bool has_w = nn_present(&args[2]), has_b = nn_present(&args[3]);
    /* Mixed precision (bf16 input, f32 params): the statistics take the parameters' dtype. */
    tt_dtype sdt = t.dtype;
    if (has_w) sdt = tt_lower_type_copy(ctx, args[2].value).dtype;
    else if (has_b) sdt = tt_lower_type_copy(ctx, args[3].value).dtype;
    if (!tt_dtype_is_float(sdt)) return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    if (tt_lower_opmath(sdt) != acc) return TT_STATUS_UNSUPPORTED;
    bool mask[TT_MAX_RANK] = {false};
    for (int32_t i = axis; i < t.rank; i++) mask[i] = true;
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value mean = nn_mean(ctx, xa, &ta, mask);
    tt_ir_value xc = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, mean, &ta, mask));
    tt_ir_value var = nn_mean(ctx, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xc, xc), &ta, mask);
    tt_ir_value rstd =
        tt_ir_unary(ctx->b, TT_OP_RSQRT, tt_lower_binary_like(ctx, TT_OP_ADD, var, nn_scalar(ctx, acc, args[4].f)));
    tt_ir_value y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xc, nn_back(ctx, rstd, &ta, mask));
    if (has_w) y = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, y, args[2].value);
    if (has_b) y = tt_lower_binary_like(ctx, TT_OP_ADD, y, args[3].value);
    outs[0] = tt_ir_convert(ctx->b, y, t.dtype);
    int64_t sdims[TT_MAX_RANK];
    for (int32_t i = 0; i < t.rank; i++) sdims[i] = i < axis ? t.dims[i] : 1;
    /* mean and rstd in the accumulation dtype (float32 for bf16/f16 input), as CUDA returns them (PyTorch's
     * reference implementation expects that of every device but the CPU) */
    outs[1] = tt_ir_reshape(ctx->b, mean, t.rank, sdims);
    outs[2] = tt_ir_reshape(ctx->b, rstd, t.rank, sdims);
    return tt_ir_builder_status(ctx->b);
}

/* native_layer_norm_backward(grad_out, input, normalized_shape, mean, rstd, weight?, bias?, output_mask) */
static tt_status tt_lower_native_layer_norm_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    tt_ir_value g = args[0].value, x = args[1].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || nouts < 3) return TT_STATUS_UNSUPPORTED;
    int32_t axis = nn_ln_axis(ctx, &t, &args[2]);
    if (axis < 0) return tt_ir_builder_status(ctx->b);
    bool has_w = nn_present(&args[5]), has_b = nn_present(&args[6]);
    tt_dtype acc = tt_lower_opmath(t.dtype);
    bool mask[TT_MAX_RANK] = {false}, omask[TT_MAX_RANK] = {false};
    for (int32_t i = 0; i < t.rank; i++) {
        mask[i] = i >= axis;
        omask[i] = i < axis;
    }
    tt_ir_type ta = t;
    ta.dtype = acc;
    int64_t n_outer = 1;
    for (int32_t i = 0; i < axis; i++) n_outer *= t.dims[i];
    int64_t rdims[TT_MAX_RANK];
    for (int32_t i = 0; i < axis; i++) rdims[i] = t.dims[i];
    /* mean/rstd have shape [outer..., 1...]: drop the ones, then broadcast back. */
    tt_ir_value mean = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, args[3].value, acc), axis, rdims);
    tt_ir_value rstd = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, args[4].value, acc), axis, rdims);
    tt_ir_value rstd_b = nn_back(ctx, rstd, &ta, mask);
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc), ga = tt_ir_convert(ctx->b, g, acc);
    tt_ir_value xhat = tt_ir_binary(ctx->b, TT_OP_MULTIPLY,
                                    tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, mean, &ta, mask)), rstd_b);
    tt_ir_value gw = has_w ? tt_lower_binary_like(ctx, TT_OP_MULTIPLY, ga, tt_ir_convert(ctx->b, args[5].value, acc)) : ga;
    tt_ir_value m1 = nn_back(ctx, nn_mean(ctx, gw, &ta, mask), &ta, mask);
    tt_ir_value m2 = nn_back(ctx, nn_mean(ctx, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, gw, xhat), &ta, mask), &ta, mask);
    tt_ir_value gi = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, gw, m1),
                                  tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xhat, m2));
    const tt_arg *om = nargs > 7 ? &args[7] : NULL;
    if (tt_lower_output_wanted(om, 0)) outs[0] = tt_ir_convert(ctx->b, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, gi, rstd_b), t.dtype);
    tt_dtype wdt = has_w ? tt_lower_type_copy(ctx, args[5].value).dtype : (has_b ? tt_lower_type_copy(ctx, args[6].value).dtype : t.dtype);
    (void)n_outer;
    if (tt_lower_output_wanted(om, 1))
        outs[1] = tt_ir_convert(ctx->b, nn_reduce(ctx, TT_REDUCE_ADD, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ga, xhat),
                                                  t.rank, omask), wdt);
    if (tt_lower_output_wanted(om, 2))
        outs[2] = tt_ir_convert(ctx->b, nn_reduce(ctx, TT_REDUCE_ADD, ga, t.rank, omask), wdt);
    return tt_ir_builder_status(ctx->b);
}

/* ---- nll_loss (1d and 2d) ---- */

/* Shared by nll_loss_forward/backward and the 2d variants. The class dim is 1 (0 for a 1-d input); the target has
 * the input's shape without it. The target first goes through a bounds-checked gather from iota(C) (ignored targets
 * replaced by 0), which returns it unchanged, so an out-of-range target raises PyTorch's IndexError "Target t is out
 * of bounds." at the op (debug) or the next sync (strict) instead of contributing 0. The forward then gathers the
 * picked values and the backward scatters into zeros at the same positions (the target's size of work, not the
 * input's, besides the zeros). */
typedef struct nn_nll {
    tt_ir_type t;      /* input type */
    tt_ir_type tt;     /* target type */
    tt_dtype acc;
    int64_t cd;        /* class dim */
    bool cmask[TT_MAX_RANK]; /* only the class dim */
    tt_ir_value pick;  /* i64, target shape: the checked target, 0 where ignored */
    tt_ir_value keep;  /* bool, target shape: target != ignore_index */
    tt_ir_value w;      /* acc, target shape: weight[target] * (target != ignore_index) */
} nn_nll;

/* The position of x[.., pick, ..] in x flattened, at every target position, as i64[N, D, 1] for x of shape
 * [N, C, D...] ([C]: pick itself): (n C + pick) D + d. */
static tt_ir_value nn_nll_flat(tt_lower_ctx *ctx, const nn_nll *s, int64_t *nd) {
    tt_ir_builder *b = ctx->b;
    int64_t C = s->t.dims[s->cd], D = 1;
    for (int32_t i = (int32_t)s->cd + 1; i < s->t.rank; i++) D *= s->t.dims[i];
    nd[0] = s->cd == 1 ? s->t.dims[0] : 1, nd[1] = D, nd[2] = 1;
    tt_ir_value at = tt_ir_reshape(b, s->pick, 2, nd);
    at = tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, 2, nd, 0),
                                                 tt_lower_full(ctx, TT_I64, 2, nd, (double)C)), at);
    at = tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, at, tt_lower_full(ctx, TT_I64, 2, nd, (double)D)),
                      tt_ir_iota(b, TT_I64, 2, nd, 1));
    return tt_ir_reshape(b, at, 3, nd);
}

/* x[.., pick, ..] along the class dim at every target position (pick in range): one element each gathered from x
 * flattened, so the forward costs the target's size, not the input's. */
static tt_ir_value nn_nll_gather(tt_lower_ctx *ctx, const nn_nll *s, tt_ir_value x) {
    int64_t nd[3], total = tt_numel(s->t.rank, s->t.dims);
    tt_ir_value at = nn_nll_flat(ctx, s, nd);
    tt_ir_attrs a = tt_lower_gather_elements_attrs(2, false);
    tt_ir_value g = tt_ir_gather(ctx->b, tt_ir_reshape(ctx->b, x, 1, &total), at, &a);
    return tt_ir_reshape(ctx->b, g, s->tt.rank, s->tt.dims);
}

static tt_status nn_nll_setup(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value target, const tt_arg *weight,
                              const tt_arg *ignore, nn_nll *s) {
    memset(s, 0, sizeof *s);
    s->t = tt_lower_type_copy(ctx, x);
    tt_ir_type tt = tt_lower_type_copy(ctx, target);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(s->t.dtype) || !tt_dtype_is_int(tt.dtype) || s->t.rank < 1) return TT_STATUS_UNSUPPORTED;
    s->cd = s->t.rank == 1 ? 0 : 1;
    if (tt.rank != s->t.rank - 1) return TT_STATUS_UNSUPPORTED; /* PyTorch's own shape errors */
    for (int32_t i = 0, k = 0; i < s->t.rank; i++) {
        if (i == s->cd) continue;
        if (tt.dims[k++] != s->t.dims[i]) return TT_STATUS_UNSUPPORTED;
    }
    s->tt = tt;
    s->cmask[s->cd] = true;
    s->acc = tt_lower_opmath(s->t.dtype);
    int64_t C = s->t.dims[s->cd];
    if (C == 0) return TT_STATUS_UNSUPPORTED; /* no class to pick: PyTorch's own checks */
    tt_ir_value tgt = tt_ir_convert(ctx->b, target, TT_I64);
    tt_ir_value keep = tt_ir_compare(ctx->b, TT_CMP_NE, tgt,
                                     tt_lower_to(ctx, tt_lower_scalar_param(ctx, TT_I64, ignore->i, 0.0), TT_I64,
                                                 tt.rank, tt.dims));
    int64_t idims[TT_MAX_RANK + 1];
    memcpy(idims, tt.dims, sizeof(int64_t) * (size_t)tt.rank);
    idims[tt.rank] = 1;
    {
        tt_ir_value safe = tt_ir_select(ctx->b, keep, tgt, tt_lower_full(ctx, TT_I64, tt.rank, tt.dims, 0.0));
        tt_ir_attrs a = tt_lower_gather_elements_attrs(tt.rank, true);
        a.gather.bounds_error = TT_IR_BOUNDS_TARGET;
        /* ignored entries read as class 0 here; keep (below) zeroes their weight */
        s->pick = tt_ir_gather(ctx->b, tt_ir_iota(ctx->b, TT_I64, 1, &C, 0),
                               tt_ir_reshape(ctx->b, safe, tt.rank + 1, idims), &a);
    }
    tt_ir_value w;
    if (nn_present(weight)) {
        tt_ir_attrs a = tt_lower_gather_elements_attrs(tt.rank, false);
        w = tt_ir_gather(ctx->b, tt_ir_convert(ctx->b, weight->value, s->acc),
                         tt_ir_reshape(ctx->b, s->pick, tt.rank + 1, idims), &a);
    } else {
        w = tt_lower_full(ctx, s->acc, tt.rank, tt.dims, 1.0);
    }
    s->w = tt_ir_select(ctx->b, keep, w, tt_lower_full(ctx, s->acc, tt.rank, tt.dims, 0.0));
    s->keep = keep;
    return tt_ir_builder_status(ctx->b);
}

/* nll_loss_forward(self, target, weight?, reduction, ignore_index) -> (output, total_weight) */
static tt_status tt_lower_nll_loss_forward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                           int32_t nouts) {
    (void)nargs;
    nn_nll s;
    tt_status st = nn_nll_setup(ctx, args[0].value, args[1].value, &args[2], &args[4], &s);
    if (st != TT_OK) return st;
    if (nouts < 2) return TT_STATUS_UNSUPPORTED;
    int64_t red = args[3].i;
    tt_ir_value picked = tt_ir_convert(ctx->b, nn_nll_gather(ctx, &s, args[0].value), s.acc);
    /* an ignored position picked class 0, which may be inf: it is zeroed, not multiplied by its zero weight */
    tt_ir_value wp = tt_ir_select(ctx->b, s.keep, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, picked, s.w),
                                  nn_const_like(ctx, s.w, 0.0));
    tt_ir_value loss = tt_ir_unary(ctx->b, TT_OP_NEGATE, wp);
    tt_ir_type tl = tt_lower_type_copy(ctx, loss);
    bool all[TT_MAX_RANK];
    for (int32_t i = 0; i < TT_MAX_RANK; i++) all[i] = true;
    tt_ir_value tw = nn_reduce(ctx, TT_REDUCE_ADD, s.w, tl.rank, all);
    tt_ir_value out;
    if (red == 0) {
        out = loss;
        tw = tt_lower_const(ctx, s.acc, 0.0);
    } else if (red == 1 || red == 2) {
        out = nn_reduce(ctx, TT_REDUCE_ADD, loss, tl.rank, all);
        if (red == 1) out = tt_ir_binary(ctx->b, TT_OP_DIVIDE, out, tw);
    } else {
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%lld is not a valid value for reduction",
                                  (long long)red);
    }
    outs[0] = tt_ir_convert(ctx->b, out, s.t.dtype);
    outs[1] = tt_ir_convert(ctx->b, tw, s.t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* nll_loss_backward(grad_output, self, target, weight?, reduction, ignore_index, total_weight) -> grad_input */
static tt_status tt_lower_nll_loss_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nargs; (void)nouts;
    nn_nll s;
    tt_status st = nn_nll_setup(ctx, args[1].value, args[2].value, &args[3], &args[5], &s);
    if (st != TT_OK) return st;
    int64_t red = args[4].i;
    tt_ir_type ta = s.t;
    ta.dtype = s.acc;
    tt_ir_value g = tt_ir_convert(ctx->b, args[0].value, s.acc);
    tt_ir_value coef; /* per target element, acc */
    tt_ir_type tw = tt_lower_type_copy(ctx, s.w);
    if (red == 0) {
        coef = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, s.w, tt_lower_to(ctx, g, s.acc, tw.rank, tw.dims));
    } else {
        if (red == 1) g = tt_ir_binary(ctx->b, TT_OP_DIVIDE, g, tt_ir_convert(ctx->b, args[6].value, s.acc));
        coef = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, s.w, g);
    }
    coef = tt_ir_unary(ctx->b, TT_OP_NEGATE, coef);
    /* zeros with -w g scattered at the picked positions; ignored positions aim past the end (skipped), so they
     * stay +0 as on the CPU */
    int64_t nd[3], total = tt_numel(s.t.rank, s.t.dims);
    tt_ir_value at = nn_nll_flat(ctx, &s, nd);
    tt_ir_value keep3 = tt_ir_reshape(ctx->b, s.keep, 3, nd);
    at = tt_ir_select(ctx->b, keep3, at, tt_lower_full(ctx, TT_I64, 3, nd, (double)total));
    tt_ir_attrs a = tt_lower_scatter_elements_attrs(2, TT_REDUCE_NONE, false);
    tt_ir_value upd = tt_ir_reshape(ctx->b, coef, 2, nd);
    tt_ir_value grad = tt_ir_scatter(ctx->b, tt_lower_full(ctx, s.acc, 1, &total, 0.0), at, upd, &a);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_reshape(ctx->b, grad, ta.rank, ta.dims), s.t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- pointwise losses ---- */

/* Promoted, broadcast (self, target) in the acc dtype; *odt receives the result dtype. */
static tt_status nn_pair(tt_lower_ctx *ctx, const tt_arg *args, int32_t i0, tt_ir_value *a, tt_ir_value *b,
                         tt_dtype *odt) {
    int32_t idx[2] = {i0, i0 + 1};
    tt_dtype dt = tt_lower_result_type_of(args, 2, idx);
    if (!tt_dtype_is_float(dt)) return TT_STATUS_UNSUPPORTED;
    tt_ir_type ta = tt_lower_type_copy(ctx, args[i0].value), tb = tt_lower_type_copy(ctx, args[i0 + 1].value);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    tt_status st = tt_lower_broadcast_shapes(ta.rank, ta.dims, tb.rank, tb.dims, &rank, dims);
    if (st != TT_OK) return tt_ir_builder_fail(ctx->b, st, "%s", tt_last_error());
    tt_dtype acc = tt_lower_opmath(dt);
    *a = tt_lower_to(ctx, tt_ir_convert(ctx->b, args[i0].value, dt), acc, rank, dims);
    *b = tt_lower_to(ctx, tt_ir_convert(ctx->b, args[i0 + 1].value, dt), acc, rank, dims);
    *odt = dt;
    return tt_ir_builder_status(ctx->b);
}

/* Applies reduction (0 none, 1 mean, 2 sum) to an elementwise loss l (acc) and converts to odt. */
static tt_status nn_reduction(tt_lower_ctx *ctx, tt_ir_value l, int64_t red, tt_dtype odt, tt_ir_value *out) {
    tt_ir_type t = tt_lower_type_copy(ctx, l);
    bool all[TT_MAX_RANK];
    for (int32_t i = 0; i < TT_MAX_RANK; i++) all[i] = true;
    if (red == 1) l = nn_mean(ctx, l, &t, all);
    else if (red == 2) l = nn_reduce(ctx, TT_REDUCE_ADD, l, t.rank, all);
    else if (red != 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%lld is not a valid value for reduction",
                                  (long long)red);
    *out = tt_ir_convert(ctx->b, l, odt);
    return tt_ir_builder_status(ctx->b);
}

/* Backward helper: grad (0-d for mean/sum, elementwise for none) broadcast to d's shape; mean divides by numel. */
static tt_ir_value nn_grad_scale(tt_lower_ctx *ctx, tt_ir_value grad, tt_ir_value d, int64_t red) {
    tt_ir_type t = tt_lower_type_copy(ctx, d);
    tt_ir_value g = tt_lower_to(ctx, grad, t.dtype, t.rank, t.dims);
    if (red == 1)
        g = tt_lower_binary_like(ctx, TT_OP_DIVIDE, g, tt_lower_const(ctx, t.dtype, (double)tt_numel(t.rank, t.dims)));
    return g;
}

enum { NN_MSE, NN_SMOOTH_L1, NN_HUBER };

/* Elementwise loss of d = self - target. */
static tt_ir_value nn_pointwise_loss(tt_lower_ctx *ctx, int kind, tt_ir_value d, tt_ir_value p) {
    if (kind == NN_MSE) return tt_ir_binary(ctx->b, TT_OP_MULTIPLY, d, d);
    tt_ir_value z = tt_ir_unary(ctx->b, TT_OP_ABS, d);
    tt_ir_type t = tt_lower_type_copy(ctx, z);
    tt_ir_value pb = tt_lower_to(ctx, p, t.dtype, t.rank, t.dims);
    tt_ir_value half = nn_const_like(ctx, z, 0.5);
    tt_ir_value lt = tt_ir_compare(ctx->b, TT_CMP_LT, z, pb);
    tt_ir_value sq = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, half, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, z, z));
    tt_ir_value lin = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, z, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, half, pb));
    if (kind == NN_SMOOTH_L1) sq = tt_ir_binary(ctx->b, TT_OP_DIVIDE, sq, pb);
    else lin = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, pb, lin);
    return tt_ir_select(ctx->b, lt, sq, lin);
}

/* d(loss)/d(self) elementwise. */
static tt_ir_value nn_pointwise_grad(tt_lower_ctx *ctx, int kind, tt_ir_value d, tt_ir_value p) {
    if (kind == NN_MSE) return tt_ir_binary(ctx->b, TT_OP_MULTIPLY, nn_const_like(ctx, d, 2.0), d);
    tt_ir_type t = tt_lower_type_copy(ctx, d);
    tt_ir_value pb = tt_lower_to(ctx, p, t.dtype, t.rank, t.dims);
    tt_ir_value lt = tt_ir_compare(ctx->b, TT_CMP_LT, tt_ir_unary(ctx->b, TT_OP_ABS, d), pb);
    tt_ir_value sg = tt_ir_unary(ctx->b, TT_OP_SIGN, d);
    if (kind == NN_SMOOTH_L1) return tt_ir_select(ctx->b, lt, tt_ir_binary(ctx->b, TT_OP_DIVIDE, d, pb), sg);
    return tt_ir_select(ctx->b, lt, d, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, pb, sg));
}

/* (self, target, reduction[, beta/delta]) */
static tt_status nn_loss_fwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int kind) {
    tt_ir_value a, b;
    tt_dtype odt;
    tt_status st = nn_pair(ctx, args, 0, &a, &b, &odt);
    if (st != TT_OK) return st;
    tt_dtype acc = tt_lower_opmath(odt);
    tt_ir_value p = kind == NN_MSE ? TT_IR_NONE : nn_scalar(ctx, acc, nargs > 3 ? tt_lower_arg_double(&args[3]) : 1.0);
    tt_ir_value l = nn_pointwise_loss(ctx, kind, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, a, b), p);
    return nn_reduction(ctx, l, args[2].i, odt, outs);
}

/* (grad_output, self, target, reduction[, beta/delta]) */
static tt_status nn_loss_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int kind) {
    tt_ir_value a, b;
    tt_dtype odt;
    tt_status st = nn_pair(ctx, args, 1, &a, &b, &odt);
    if (st != TT_OK) return st;
    tt_dtype acc = tt_lower_opmath(odt);
    tt_ir_value p = kind == NN_MSE ? TT_IR_NONE : nn_scalar(ctx, acc, nargs > 4 ? tt_lower_arg_double(&args[4]) : 1.0);
    tt_ir_value d = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, a, b);
    tt_ir_value g = nn_grad_scale(ctx, tt_ir_convert(ctx->b, args[0].value, acc), d, args[3].i);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, nn_pointwise_grad(ctx, kind, d, p), g), odt);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_mse_loss(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                   int32_t nouts) {
    (void)nouts;
    return nn_loss_fwd(ctx, args, nargs, outs, NN_MSE);
}
static tt_status tt_lower_mse_loss_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    return nn_loss_bwd(ctx, args, nargs, outs, NN_MSE);
}
static tt_status tt_lower_smooth_l1_loss(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nouts;
    if (nargs > 3 && tt_lower_arg_double(&args[3]) < 0) return TT_STATUS_UNSUPPORTED; /* PyTorch's error */
    return nn_loss_fwd(ctx, args, nargs, outs, NN_SMOOTH_L1);
}
static tt_status tt_lower_smooth_l1_loss_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                             int32_t nouts) {
    (void)nouts;
    return nn_loss_bwd(ctx, args, nargs, outs, NN_SMOOTH_L1);
}
static tt_status tt_lower_huber_loss(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nouts;
    if (nargs > 3 && tt_lower_arg_double(&args[3]) <= 0) return TT_STATUS_UNSUPPORTED; /* PyTorch's error */
    return nn_loss_fwd(ctx, args, nargs, outs, NN_HUBER);
}
static tt_status tt_lower_huber_loss_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nouts;
    return nn_loss_bwd(ctx, args, nargs, outs, NN_HUBER);
}

/* ---- binary cross entropy ---- */

/* binary_cross_entropy(self, target, weight?, reduction): -w (t log x + (1-t) log(1-x)), logs clamped at -100. */
static tt_status tt_lower_bce(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x, t;
    tt_dtype odt;
    tt_status st = nn_pair(ctx, args, 0, &x, &t, &odt);
    if (st != TT_OK) return st;
    tt_ir_value m100 = nn_const_like(ctx, x, -100.0), one = nn_const_like(ctx, x, 1.0);
    tt_ir_value lx = tt_ir_binary(ctx->b, TT_OP_MAXIMUM, tt_ir_unary(ctx->b, TT_OP_LOG, x), m100);
    tt_ir_value l1x = tt_ir_binary(ctx->b, TT_OP_MAXIMUM,
                                   tt_ir_unary(ctx->b, TT_OP_LOG1P, tt_ir_unary(ctx->b, TT_OP_NEGATE, x)), m100);
    tt_ir_value l = tt_ir_binary(ctx->b, TT_OP_SUBTRACT,
                                 tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, t, one), l1x),
                                 tt_ir_binary(ctx->b, TT_OP_MULTIPLY, t, lx));
    if (nn_present(&args[2])) l = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, l, args[2].value);
    return nn_reduction(ctx, l, args[3].i, odt, outs);
}

/* binary_cross_entropy_backward(grad_output, self, target, weight?, reduction): g w (x - t) / max(x (1-x), 1e-12) */
static tt_status tt_lower_bce_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x, t;
    tt_dtype odt;
    tt_status st = nn_pair(ctx, args, 1, &x, &t, &odt);
    if (st != TT_OK) return st;
    tt_ir_value one = nn_const_like(ctx, x, 1.0);
    tt_ir_value den = tt_ir_binary(ctx->b, TT_OP_MAXIMUM,
                                   tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, one, x), x),
                                   nn_const_like(ctx, x, 1e-12));
    tt_ir_value r = tt_ir_binary(ctx->b, TT_OP_DIVIDE, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, x, t), den);
    tt_dtype acc = tt_lower_opmath(odt);
    r = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, r, nn_grad_scale(ctx, tt_ir_convert(ctx->b, args[0].value, acc), x, args[4].i));
    if (nn_present(&args[3])) r = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, r, args[3].value);
    outs[0] = tt_ir_convert(ctx->b, r, odt);
    return tt_ir_builder_status(ctx->b);
}

/* binary_cross_entropy_with_logits(self, target, weight?, pos_weight?, reduction):
 * (1 - t) x - lw * log_sigmoid(x), lw = 1 + (pos_weight - 1) t; log_sigmoid(x) = min(x, 0) - log1p(exp(-|x|)). */
static tt_status tt_lower_bce_logits(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x, t;
    tt_dtype odt;
    tt_status st = nn_pair(ctx, args, 0, &x, &t, &odt);
    if (st != TT_OK) return st;
    tt_ir_value one = nn_const_like(ctx, x, 1.0), zero = nn_const_like(ctx, x, 0.0);
    tt_ir_value ls = tt_ir_binary(
        ctx->b, TT_OP_SUBTRACT, tt_ir_binary(ctx->b, TT_OP_MINIMUM, x, zero),
        tt_ir_unary(ctx->b, TT_OP_LOG1P,
                    tt_ir_unary(ctx->b, TT_OP_EXP, tt_ir_unary(ctx->b, TT_OP_NEGATE, tt_ir_unary(ctx->b, TT_OP_ABS, x)))));
    tt_ir_value lw = one;
    if (nn_present(&args[3])) {
        tt_ir_type tx = tt_lower_type_copy(ctx, x);
        tt_ir_value pw = tt_lower_to(ctx, args[3].value, tx.dtype, tx.rank, tx.dims);
        lw = tt_ir_binary(ctx->b, TT_OP_ADD, one,
                          tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, pw, one), t));
    }
    tt_ir_value l = tt_ir_binary(ctx->b, TT_OP_SUBTRACT,
                                 tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, one, t), x),
                                 tt_ir_binary(ctx->b, TT_OP_MULTIPLY, lw, ls));
    if (nn_present(&args[2])) l = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, l, args[2].value);
    return nn_reduction(ctx, l, args[4].i, odt, outs);
}

/* ---- dropout ---- */

/* native_dropout(input, p, train?) -> (output, mask): keep where uniform < 1 - p, scale kept values by 1/(1-p). */
static tt_status tt_lower_native_dropout(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || nouts < 2) return TT_STATUS_UNSUPPORTED;
    bool train = args[2].kind != TT_ARG_BOOL || args[2].b; /* None means train */
    int64_t n = tt_numel(t.rank, t.dims);
    if (!train || n == 0) {
        outs[0] = x;
        outs[1] = tt_lower_full(ctx, TT_BOOL, t.rank, t.dims, 1.0);
        return tt_ir_builder_status(ctx->b);
    }
    double p1m = 1.0 - args[1].f;
    double scale = p1m == 0.0 ? 0.0 : 1.0 / p1m;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_value seed, offset;
    tt_lower_rng(ctx, (uint64_t)n, &seed, &offset);
    tt_ir_value u = tt_ir_rng_uniform(ctx->b, TT_F32, t.rank, t.dims, seed, offset);
    tt_ir_value keep = tt_ir_compare(ctx->b, TT_CMP_LT, u, tt_lower_to(ctx, nn_scalar(ctx, TT_F32, p1m), TT_F32,
                                                                         t.rank, t.dims));
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value y = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, xa, nn_scalar(ctx, acc, scale));
    outs[0] = tt_ir_convert(ctx->b, tt_ir_select(ctx->b, keep, y, nn_const_like(ctx, xa, 0.0)), t.dtype);
    outs[1] = keep;
    return tt_ir_builder_status(ctx->b);
}

/* native_dropout_backward(grad_output, mask, scale) = grad * mask * scale */
static tt_status tt_lower_native_dropout_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                             int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value g = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, g);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype)) return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    tt_ir_value m = tt_lower_to(ctx, tt_ir_convert(ctx->b, args[1].value, acc), acc, t.rank, t.dims);
    tt_ir_value y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_convert(ctx->b, g, acc), m);
    y = tt_lower_binary_like(ctx, TT_OP_MULTIPLY, y, nn_scalar(ctx, acc, tt_lower_arg_double(&args[2])));
    outs[0] = tt_ir_convert(ctx->b, y, t.dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- batch norm ---- */

/* Dtype of the statistics: the parameters' when given (mixed bf16 input / f32 params), else the input's. */
static tt_dtype nn_param_dtype(tt_lower_ctx *ctx, tt_dtype in, const tt_arg *const *cands, int n) {
    for (int i = 0; i < n; i++)
        if (nn_present(cands[i])) return tt_lower_type_copy(ctx, cands[i]->value).dtype;
    return in;
}

/* y, save_mean, save_invstd and (when new_stats) updated running stats. args: input, weight?, bias?, running_mean?,
 * running_var?; training; momentum; eps. outs receives 3 or 5 values. */
static tt_status nn_batch_norm(tt_lower_ctx *ctx, const tt_arg *x_a, const tt_arg *w_a, const tt_arg *b_a,
                               const tt_arg *rm_a, const tt_arg *rv_a, bool training, double momentum, double eps,
                               tt_ir_value *outs, bool new_stats) {
    tt_ir_value x = x_a->value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || t.rank < 2) return TT_STATUS_UNSUPPORTED;
    bool has_stats = nn_present(rm_a) && nn_present(rv_a);
    if (!training && !has_stats) return TT_STATUS_UNSUPPORTED;
    const tt_arg *cands[4] = {w_a, b_a, rm_a, rv_a};
    tt_dtype pdt = nn_param_dtype(ctx, t.dtype, cands, 4);
    tt_dtype acc = tt_lower_opmath(t.dtype);
    if (!tt_dtype_is_float(pdt) || tt_lower_opmath(pdt) != acc) return TT_STATUS_UNSUPPORTED;
    bool mask[TT_MAX_RANK] = {false};
    for (int32_t i = 0; i < t.rank; i++) mask[i] = i != 1;
    int64_t n = nn_count(&t, mask);
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc);
    tt_ir_value mean, invstd, var = TT_IR_NONE;
    tt_ir_value epsv = nn_scalar(ctx, acc, eps);
    if (training) {
        mean = nn_mean(ctx, xa, &ta, mask);
        tt_ir_value xc = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, mean, &ta, mask));
        var = nn_mean(ctx, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xc, xc), &ta, mask);
    } else {
        mean = tt_ir_convert(ctx->b, rm_a->value, acc);
        var = tt_ir_convert(ctx->b, rv_a->value, acc);
    }
    invstd = tt_ir_unary(ctx->b, TT_OP_RSQRT, tt_lower_binary_like(ctx, TT_OP_ADD, var, epsv));
    tt_ir_value y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY,
                                 tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_chan(ctx, mean, &ta, 1, acc)),
                                 nn_chan(ctx, invstd, &ta, 1, acc));
    if (nn_present(w_a)) y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, y, nn_chan(ctx, w_a->value, &ta, 1, acc));
    if (nn_present(b_a)) y = tt_ir_binary(ctx->b, TT_OP_ADD, y, nn_chan(ctx, b_a->value, &ta, 1, acc));
    outs[0] = tt_ir_convert(ctx->b, y, t.dtype);
    if (training) {
        outs[1] = tt_ir_convert(ctx->b, mean, pdt);
        outs[2] = tt_ir_convert(ctx->b, invstd, pdt);
    } else {
        int64_t zero = 0;
        outs[1] = tt_lower_full(ctx, pdt, 1, &zero, 0.0);
        outs[2] = tt_lower_full(ctx, pdt, 1, &zero, 0.0);
    }
    if (new_stats) {
        if (training && has_stats) {
            tt_ir_value m = nn_scalar(ctx, acc, momentum), m1 = nn_scalar(ctx, acc, 1.0 - momentum);
            tt_ir_value uvar = tt_lower_binary_like(ctx, TT_OP_DIVIDE, tt_lower_binary_like(ctx, TT_OP_MULTIPLY, var, tt_lower_const(ctx, acc, (double)n)),
                                      tt_lower_const(ctx, acc, (double)(n - 1)));
            tt_ir_value rm = tt_ir_convert(ctx->b, rm_a->value, acc), rv = tt_ir_convert(ctx->b, rv_a->value, acc);
            tt_ir_value nrm = tt_ir_binary(ctx->b, TT_OP_ADD, tt_lower_binary_like(ctx, TT_OP_MULTIPLY, rm, m1),
                                           tt_lower_binary_like(ctx, TT_OP_MULTIPLY, mean, m));
            tt_ir_value nrv = tt_ir_binary(ctx->b, TT_OP_ADD, tt_lower_binary_like(ctx, TT_OP_MULTIPLY, rv, m1),
                                           tt_lower_binary_like(ctx, TT_OP_MULTIPLY, uvar, m));
            outs[3] = tt_ir_convert(ctx->b, nrm, tt_lower_type_copy(ctx, rm_a->value).dtype);
            outs[4] = tt_ir_convert(ctx->b, nrv, tt_lower_type_copy(ctx, rv_a->value).dtype);
        } else if (has_stats) {
            outs[3] = rm_a->value;
            outs[4] = rv_a->value;
        } else {
            return TT_STATUS_UNSUPPORTED;
        }
    }
    return tt_ir_builder_status(ctx->b);
}

/* _native_batch_norm_legit_no_training(input, weight?, bias?, running_mean, running_var, momentum, eps) */
static tt_status tt_lower_bn_no_training(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    if (nouts < 3) return TT_STATUS_UNSUPPORTED;
    return nn_batch_norm(ctx, &args[0], &args[1], &args[2], &args[3], &args[4], false, args[5].f, args[6].f, outs,
                         false);
}

/* _native_batch_norm_legit_functional(input, w?, b?, running_mean, running_var, training, momentum, eps) -> 5 */
static tt_status tt_lower_bn_functional(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                        int32_t nouts) {
    (void)nargs;
    if (nouts < 5) return TT_STATUS_UNSUPPORTED;
    return nn_batch_norm(ctx, &args[0], &args[1], &args[2], &args[3], &args[4], args[5].b, args[6].f, args[7].f, outs,
                         true);
}

/* _native_batch_norm_legit.no_stats(input, w?, b?, training, momentum, eps) */
static tt_status tt_lower_bn_no_stats(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    tt_arg none;
    memset(&none, 0, sizeof none);
    none.kind = TT_ARG_NONE;
    if (nouts < 3 || !args[3].b) return TT_STATUS_UNSUPPORTED;
    return nn_batch_norm(ctx, &args[0], &args[1], &args[2], &none, &none, true, args[4].f, args[5].f, outs, false);
}

/* native_batch_norm(input, w?, b?, running_mean?, running_var?, training, momentum, eps). Training with running
 * stats updates them in place, which a functional lowering cannot do: left to PyTorch. */
static tt_status tt_lower_native_batch_norm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nargs;
    if (nouts < 3) return TT_STATUS_UNSUPPORTED;
    if (args[5].b && (nn_present(&args[3]) || nn_present(&args[4]))) return TT_STATUS_UNSUPPORTED;
    return nn_batch_norm(ctx, &args[0], &args[1], &args[2], &args[3], &args[4], args[5].b, args[6].f, args[7].f, outs,
                         false);
}

/* native_batch_norm_backward(grad_out, input, w?, running_mean?, running_var?, save_mean?, save_invstd?, train, eps,
 * output_mask) -> (grad_input, grad_weight, grad_bias) */
static tt_status tt_lower_native_batch_norm_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    tt_ir_value g = args[0].value, x = args[1].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(t.dtype) || t.rank < 2 || nouts < 3) return TT_STATUS_UNSUPPORTED;
    bool train = args[7].b;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    const tt_arg *cands[3] = {&args[2], &args[3], &args[5]};
    tt_dtype pdt = nn_param_dtype(ctx, t.dtype, cands, 3);
    tt_ir_value mean, invstd;
    if (train) {
        if (!nn_present(&args[5]) || !nn_present(&args[6])) return TT_STATUS_UNSUPPORTED;
        mean = tt_ir_convert(ctx->b, args[5].value, acc);
        invstd = tt_ir_convert(ctx->b, args[6].value, acc);
    } else {
        if (!nn_present(&args[3]) || !nn_present(&args[4])) return TT_STATUS_UNSUPPORTED;
        mean = tt_ir_convert(ctx->b, args[3].value, acc);
        invstd = tt_ir_unary(ctx->b, TT_OP_RSQRT, tt_lower_binary_like(ctx, TT_OP_ADD, tt_ir_convert(ctx->b, args[4].value, acc),
                                                         nn_scalar(ctx, acc, args[8].f)));
    }
    bool mask[TT_MAX_RANK] = {false};
    for (int32_t i = 0; i < t.rank; i++) mask[i] = i != 1;
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value xa = tt_ir_convert(ctx->b, x, acc), ga = tt_ir_convert(ctx->b, g, acc);
    tt_ir_value invb = nn_chan(ctx, invstd, &ta, 1, acc);
    tt_ir_value xhat = tt_ir_binary(ctx->b, TT_OP_MULTIPLY,
                                    tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_chan(ctx, mean, &ta, 1, acc)), invb);
    tt_ir_value sum_g = nn_reduce(ctx, TT_REDUCE_ADD, ga, t.rank, mask);
    tt_ir_value sum_gx = nn_reduce(ctx, TT_REDUCE_ADD, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ga, xhat), t.rank, mask);
    tt_ir_value scale = invb;
    if (nn_present(&args[2])) scale = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, scale, nn_chan(ctx, args[2].value, &ta, 1, acc));
    tt_ir_value gi;
    if (train) {
        tt_ir_value nn = tt_lower_const(ctx, acc, (double)nn_count(&t, mask));
        tt_ir_value mg = nn_chan(ctx, tt_lower_binary_like(ctx, TT_OP_DIVIDE, sum_g, nn), &ta, 1, acc);
        tt_ir_value mgx = nn_chan(ctx, tt_lower_binary_like(ctx, TT_OP_DIVIDE, sum_gx, nn), &ta, 1, acc);
        gi = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, ga, mg),
                          tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xhat, mgx));
        gi = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, gi, scale);
    } else {
        gi = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ga, scale);
    }
    const tt_arg *om = nargs > 9 ? &args[9] : NULL;
    if (tt_lower_output_wanted(om, 0)) outs[0] = tt_ir_convert(ctx->b, gi, t.dtype);
    if (tt_lower_output_wanted(om, 1)) outs[1] = tt_ir_convert(ctx->b, sum_gx, pdt);
    if (tt_lower_output_wanted(om, 2)) outs[2] = tt_ir_convert(ctx->b, sum_g, pdt);
    return tt_ir_builder_status(ctx->b);
}

/* ---- group norm ---- */

/* Input (N, C, *) viewed as (N, G, C/G * HxW); checks the sizes against the tensor. */
static bool nn_gn_view(const tt_ir_type *t, int64_t N, int64_t C, int64_t HxW, int64_t G, int64_t v[3]) {
    if (t->rank < 2 || G <= 0 || C % G != 0 || t->dims[0] != N || t->dims[1] != C) return false;
    if (tt_numel(t->rank, t->dims) != N * C * HxW) return false;
    v[0] = N;
    v[1] = G;
    v[2] = C / G * HxW;
    return true;
}

/* native_group_norm(input, w?, b?, N, C, HxW, group, eps) -> (out, mean (N, G), rstd (N, G)) */
static tt_status tt_lower_native_group_norm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nargs;
    tt_ir_value x = args[0].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int64_t v[3];
    if (!tt_dtype_is_float(t.dtype) || nouts < 3 || !nn_gn_view(&t, args[3].i, args[4].i, args[5].i, args[6].i, v))
        return TT_STATUS_UNSUPPORTED;
    const tt_arg *cands[2] = {&args[1], &args[2]};
    tt_dtype pdt = nn_param_dtype(ctx, t.dtype, cands, 2);
    tt_dtype acc = tt_lower_opmath(t.dtype);
    if (!tt_dtype_is_float(pdt) || tt_lower_opmath(pdt) != acc) return TT_STATUS_UNSUPPORTED;
    tt_ir_value xa = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, x, acc), 3, v);
    tt_ir_type tv = {.dtype = acc, .rank = 3, .dims = {v[0], v[1], v[2]}};
    bool mask[TT_MAX_RANK] = {false, false, true};
    tt_ir_value mean = nn_mean(ctx, xa, &tv, mask);
    tt_ir_value xc = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, mean, &tv, mask));
    tt_ir_value var = nn_mean(ctx, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xc, xc), &tv, mask);
    tt_ir_value rstd = tt_ir_unary(ctx->b, TT_OP_RSQRT, tt_lower_binary_like(ctx, TT_OP_ADD, var, nn_scalar(ctx, acc, args[7].f)));
    tt_ir_value y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xc, nn_back(ctx, rstd, &tv, mask));
    tt_ir_type ta = t;
    ta.dtype = acc;
    y = tt_ir_reshape(ctx->b, y, t.rank, t.dims);
    if (nn_present(&args[1])) y = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, y, nn_chan(ctx, args[1].value, &ta, 1, acc));
    if (nn_present(&args[2])) y = tt_ir_binary(ctx->b, TT_OP_ADD, y, nn_chan(ctx, args[2].value, &ta, 1, acc));
    outs[0] = tt_ir_convert(ctx->b, y, t.dtype);
    outs[1] = tt_ir_convert(ctx->b, mean, pdt);
    outs[2] = tt_ir_convert(ctx->b, rstd, pdt);
    return tt_ir_builder_status(ctx->b);
}

/* native_group_norm_backward(grad_out, input, mean, rstd, w?, N, C, HxW, group, output_mask) */
static tt_status tt_lower_native_group_norm_bwd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                tt_ir_value *outs, int32_t nouts) {
    (void)nargs;
    tt_ir_value g = args[0].value, x = args[1].value;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    int64_t v[3];
    int64_t N = args[5].i, C = args[6].i, HxW = args[7].i;
    if (!tt_dtype_is_float(t.dtype) || nouts < 3 || !nn_gn_view(&t, N, C, HxW, args[8].i, v))
        return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(t.dtype);
    const tt_arg *cands[2] = {&args[4], &args[2]};
    tt_dtype pdt = nn_param_dtype(ctx, t.dtype, cands, 2);
    tt_ir_type tv = {.dtype = acc, .rank = 3, .dims = {v[0], v[1], v[2]}};
    bool mask[TT_MAX_RANK] = {false, false, true};
    tt_ir_value mean = tt_ir_convert(ctx->b, args[2].value, acc), rstd = tt_ir_convert(ctx->b, args[3].value, acc);
    tt_ir_value xa = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, x, acc), 3, v);
    tt_ir_value rstd_b = nn_back(ctx, rstd, &tv, mask);
    tt_ir_value xhat = tt_ir_binary(ctx->b, TT_OP_MULTIPLY,
                                    tt_ir_binary(ctx->b, TT_OP_SUBTRACT, xa, nn_back(ctx, mean, &tv, mask)), rstd_b);
    tt_ir_value ga = tt_ir_convert(ctx->b, g, acc);
    tt_ir_type ta = t;
    ta.dtype = acc;
    tt_ir_value gw = nn_present(&args[4])
                         ? tt_ir_binary(ctx->b, TT_OP_MULTIPLY, ga, nn_chan(ctx, args[4].value, &ta, 1, acc))
                         : ga;
    gw = tt_ir_reshape(ctx->b, gw, 3, v);
    tt_ir_value m1 = nn_back(ctx, nn_mean(ctx, gw, &tv, mask), &tv, mask);
    tt_ir_value m2 = nn_back(ctx, nn_mean(ctx, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, gw, xhat), &tv, mask), &tv, mask);
    tt_ir_value gi = tt_ir_binary(ctx->b, TT_OP_SUBTRACT, tt_ir_binary(ctx->b, TT_OP_SUBTRACT, gw, m1),
                                  tt_ir_binary(ctx->b, TT_OP_MULTIPLY, xhat, m2));
    gi = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, gi, rstd_b);
    const tt_arg *om = nargs > 9 ? &args[9] : NULL;
    if (tt_lower_output_wanted(om, 0)) outs[0] = tt_ir_convert(ctx->b, tt_ir_reshape(ctx->b, gi, t.rank, t.dims), t.dtype);
    /* per-channel sums over N and HxW, in the (N, C, HxW) view */
    int64_t cv[3] = {N, C, HxW};
    tt_ir_value g3 = tt_ir_reshape(ctx->b, ga, 3, cv);
    tt_ir_value xh3 = tt_ir_reshape(ctx->b, tt_ir_reshape(ctx->b, xhat, t.rank, t.dims), 3, cv);
    int64_t rd[2] = {0, 2};
    if (tt_lower_output_wanted(om, 1))
        outs[1] = tt_ir_convert(ctx->b,
                                tt_ir_reduce(ctx->b, TT_REDUCE_ADD, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, g3, xh3), 2, rd),
                                pdt);
    if (tt_lower_output_wanted(om, 2)) outs[2] = tt_ir_convert(ctx->b, tt_ir_reduce(ctx->b, TT_REDUCE_ADD, g3, 2, rd), pdt);
    return tt_ir_builder_status(ctx->b);
}

const tt_lower_entry tt_lower_table_nn[] = {
    {"aten::_softmax", tt_lower_softmax},
    {"aten::_log_softmax", tt_lower_log_softmax},
    {"aten::_softmax_backward_data", tt_lower_softmax_bwd},
    {"aten::_log_softmax_backward_data", tt_lower_log_softmax_bwd},
    {"aten::native_layer_norm", tt_lower_native_layer_norm},
    {"aten::native_layer_norm_backward", tt_lower_native_layer_norm_bwd},
    {"aten::_native_batch_norm_legit_no_training", tt_lower_bn_no_training},
    {"aten::_native_batch_norm_legit_functional", tt_lower_bn_functional},
    {"aten::_native_batch_norm_legit.no_stats", tt_lower_bn_no_stats},
    {"aten::native_batch_norm", tt_lower_native_batch_norm},
    {"aten::native_batch_norm_backward", tt_lower_native_batch_norm_bwd},
    {"aten::native_group_norm", tt_lower_native_group_norm},
    {"aten::native_group_norm_backward", tt_lower_native_group_norm_bwd},
    {"aten::nll_loss_forward", tt_lower_nll_loss_forward},
    {"aten::nll_loss_backward", tt_lower_nll_loss_backward},
    {"aten::nll_loss2d_forward", tt_lower_nll_loss_forward},
    {"aten::nll_loss2d_backward", tt_lower_nll_loss_backward},
    {"aten::mse_loss", tt_lower_mse_loss},
    {"aten::mse_loss_backward", tt_lower_mse_loss_bwd},
    {"aten::smooth_l1_loss", tt_lower_smooth_l1_loss},
    {"aten::smooth_l1_loss_backward", tt_lower_smooth_l1_loss_bwd},
    {"aten::huber_loss", tt_lower_huber_loss},
    {"aten::huber_loss_backward", tt_lower_huber_loss_bwd},
    {"aten::binary_cross_entropy", tt_lower_bce},
    {"aten::binary_cross_entropy_backward", tt_lower_bce_bwd},
    {"aten::binary_cross_entropy_with_logits", tt_lower_bce_logits},
    {"aten::native_dropout", tt_lower_native_dropout},
    {"aten::native_dropout_backward", tt_lower_native_dropout_bwd},
    {NULL, NULL},
};
