/* conv.c — lowerings of convolutions and pooling: convolution (1d/2d/3d, transposed, grouped),
 * convolution_backward, _convolution, max_pool2d_with_indices (+backward), avg_pool2d (+backward),
 * _adaptive_avg_pool2d (+backward).
 *
 * Everything is expressed with the IR's CONVOLUTION (PyTorch layouts N,C,spatial / O,I,spatial):
 *   - transposed conv = conv with lhs_dilation = stride over a spatially flipped kernel whose in/out channels are
 *     swapped per group;
 *   - grad_input of a conv = the transposed conv of grad_output; grad_input of a transposed conv = a conv;
 *   - grad_weight = a conv of the input (batch and feature dims swapped) with grad_output as the kernel,
 *     window strides = dilation, rhs_dilation = stride, batch_group_count = groups.
 * Results that come out longer than PyTorch's (input sizes not exactly covered by the stride) are sliced;
 * negative paddings are avoided the same way (pad 0, then slice), so drivers only see pads >= 0.
 * bf16/f16 convolve with f32 results and are rounded once at the end; f64 and integers are always exact. */
#include "tt_lower.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CV_MAXS 3 /* spatial dims handled (conv1d/2d/3d) */

/* ---- helpers ---- */

static tt_precision cv_precision(tt_lower_ctx *ctx, tt_dtype dt) {
    return (dt == TT_F32 || dt == TT_BF16 || dt == TT_F16) ? ctx->precision : TT_PRECISION_FP32;
}

static void cv_dims(tt_ir_dims *d, int32_t n, const int64_t *v) {
    d->n = n;
    for (int32_t i = 0; i < n; i++) d->v[i] = v[i];
}

/* "[1, 2, 3]" into buf. */
static const char *cv_list_str(char *buf, size_t cap, int32_t n, const int64_t *v) {
    size_t k = (size_t)snprintf(buf, cap, "[");
    for (int32_t i = 0; i < n && k < cap; i++) k += (size_t)snprintf(buf + k, cap - k, i ? ", %lld" : "%lld", (long long)v[i]);
    if (k < cap) snprintf(buf + k, cap - k, "]");
    return buf;
}

/* An int-list argument expanded to S values (a single value repeats), PyTorch's expand_param_if_needed. */
static tt_status cv_expand(tt_lower_ctx *ctx, const tt_arg *a, int32_t S, const char *name, int64_t dflt,
                           int64_t *out) {
    if (a->kind == TT_ARG_NONE || (a->kind == TT_ARG_INTS && a->n == 0)) {
        for (int32_t i = 0; i < S; i++) out[i] = dflt;
        return TT_OK;
    }
    if (a->kind == TT_ARG_INT) {
        for (int32_t i = 0; i < S; i++) out[i] = a->i;
        return TT_OK;
    }
    if (a->kind != TT_ARG_INTS) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%s: expected a list of ints", name);
    if (a->n == 1) {
        for (int32_t i = 0; i < S; i++) out[i] = a->ints[0];
        return TT_OK;
    }
    if (a->n != S) {
        char buf[128];
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "expected %s to be a single integer value or a list of %d values to match the "
                                  "convolution dimensions, but got %s=%s",
                                  name, (int)S, name, cv_list_str(buf, sizeof buf, a->n, a->ints));
    }
    for (int32_t i = 0; i < S; i++) out[i] = a->ints[i];
    return TT_OK;
}

/* Slice spatial dims (2..) of x to [start[s], start[s] + len[s]); returns x when nothing changes. */
static tt_ir_value cv_slice_spatial(tt_lower_ctx *ctx, tt_ir_value x, const int64_t *start, const int64_t *len) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    int64_t st[TT_MAX_RANK], lim[TT_MAX_RANK];
    bool same = true;
    for (int32_t d = 0; d < t->rank; d++) {
        st[d] = 0;
        lim[d] = t->dims[d];
        if (d >= 2) {
            st[d] = start[d - 2];
            lim[d] = start[d - 2] + len[d - 2];
            if (st[d] != 0 || lim[d] != t->dims[d]) same = false;
        }
    }
    return same ? x : tt_ir_slice(ctx->b, x, st, lim, NULL);
}

/* Swaps dims 0 and 1. */
static tt_ir_value cv_swap01(tt_lower_ctx *ctx, tt_ir_value x) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    int64_t perm[TT_MAX_RANK];
    for (int32_t d = 0; d < t->rank; d++) perm[d] = d;
    perm[0] = 1;
    perm[1] = 0;
    return tt_ir_transpose(ctx->b, x, perm);
}

typedef struct cv_params {
    int32_t S;
    int64_t stride[CV_MAXS], pad[CV_MAXS], dil[CV_MAXS], opad[CV_MAXS];
    bool transposed;
    int64_t groups;
} cv_params;

/* One CONVOLUTION node with symmetric-or-not non-negative pads, result in the accumulation dtype. */
static tt_ir_value cv_conv(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value k, int32_t S, const int64_t *strides,
                           const int64_t *lo, const int64_t *hi, const int64_t *lhs_dil, const int64_t *rhs_dil,
                           int64_t fgc, int64_t bgc) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    cv_dims(&a.conv.strides, S, strides);
    cv_dims(&a.conv.pad_low, S, lo);
    cv_dims(&a.conv.pad_high, S, hi);
    cv_dims(&a.conv.lhs_dilation, S, lhs_dil);
    cv_dims(&a.conv.rhs_dilation, S, rhs_dil);
    a.conv.feature_group_count = fgc;
    a.conv.batch_group_count = bgc;
    a.conv.precision = cv_precision(ctx, t->dtype);
    return tt_ir_convolution(ctx->b, x, k, &a, tt_lower_opmath(t->dtype));
}

/* Regular convolution x [N,C,S..] * w [O,C/g,K..] -> [N,O,S'..] (accumulation dtype). */
static tt_ir_value cv_forward(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value w, const cv_params *p) {
    int64_t ones[CV_MAXS] = {1, 1, 1};
    return cv_conv(ctx, x, w, p->S, p->stride, p->pad, p->pad, ones, p->dil, p->groups, 1);
}

/* Transposed convolution x [N,Cin,S..] with w [Cin,O/g,K..] -> [N,O,out..] where out_s = (in-1)*stride - 2*pad +
 * dil*(k-1) + opad + 1 (opad as given; callers check it). */
static tt_ir_value cv_transposed(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value w, const cv_params *p) {
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}}), *tw = tt_lower_type_into(ctx, w, (tt_ir_type[1]){{0}});
    if (!tx || !tw) return TT_IR_NONE;
    int32_t S = p->S;
    int64_t g = p->groups, cin = tw->dims[0], og = tw->dims[1];
    /* w [Cin, O/g, K] -> [g, Cin/g, O/g, K] -> [g, O/g, Cin/g, K] -> [O, Cin/g, K], then flip K. */
    int64_t d5[TT_MAX_RANK], perm[TT_MAX_RANK], d3[TT_MAX_RANK], rev[CV_MAXS];
    d5[0] = g;
    d5[1] = cin / g;
    d5[2] = og;
    for (int32_t s = 0; s < S; s++) d5[3 + s] = tw->dims[2 + s];
    for (int32_t d = 0; d < S + 3; d++) perm[d] = d;
    perm[1] = 2;
    perm[2] = 1;
    d3[0] = g * og;
    d3[1] = cin / g;
    for (int32_t s = 0; s < S; s++) {
        d3[2 + s] = tw->dims[2 + s];
        rev[s] = 2 + s;
    }
    tt_ir_value k = w;
    if (g > 1) {
        k = tt_ir_reshape(ctx->b, k, S + 3, d5);
        k = tt_ir_transpose(ctx->b, k, perm);
        k = tt_ir_reshape(ctx->b, k, S + 2, d3);
    } else {
        k = cv_swap01(ctx, k);
    }
    k = tt_ir_reverse(ctx->b, k, S, rev);
    int64_t lo[CV_MAXS], hi[CV_MAXS], start[CV_MAXS], len[CV_MAXS], ones[CV_MAXS] = {1, 1, 1};
    for (int32_t s = 0; s < S; s++) {
        int64_t span = p->dil[s] * (tw->dims[2 + s] - 1);
        int64_t l = span - p->pad[s], h = span - p->pad[s] + p->opad[s];
        len[s] = (tx->dims[2 + s] - 1) * p->stride[s] - 2 * p->pad[s] + span + p->opad[s] + 1;
        start[s] = l < 0 ? -l : 0;
        lo[s] = l < 0 ? 0 : l;
        hi[s] = h < 0 ? 0 : h;
    }
    tt_ir_value y = cv_conv(ctx, x, k, S, ones, lo, hi, p->stride, p->dil, g, 1);
    return cv_slice_spatial(ctx, y, start, len);
}

#define CV_POINTWISE_GW_BYTES ((int64_t)64 << 20) /* bound on the per-image partial products [N, O, C] */

/* A pointwise weight gradient (1x1 kernel, stride 1, no padding, one group) as a dot: gw[o, c] = sum over n and
 * space of go[n, o, s] x[n, c, s], batched over n (both operands read as they lie: the convolution form swaps
 * N and C of both, two full copies of the activations) and then summed over n. TT_IR_NONE when it does not
 * apply. */
static tt_ir_value cv_grad_weight_pointwise(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value go, const cv_params *p,
                                            const int64_t *ksize) {
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}}), *tg = tt_lower_type_into(ctx, go, (tt_ir_type[1]){{0}});
    if (!tx || !tg || p->groups != 1) return TT_IR_NONE;
    for (int32_t s = 0; s < p->S; s++)
        if (ksize[s] != 1 || p->stride[s] != 1 || p->pad[s] != 0 || tx->dims[2 + s] != tg->dims[2 + s])
            return TT_IR_NONE;
    int64_t n = tx->dims[0], c = tx->dims[1], o = tg->dims[1];
    if (n * o * c > CV_POINTWISE_GW_BYTES / 4) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_batch.n = a.dot.rhs_batch.n = 1; /* dim 0 (n) of both */
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = p->S;
    for (int32_t s = 0; s < p->S; s++) a.dot.lhs_contract.v[s] = a.dot.rhs_contract.v[s] = 2 + s;
    a.dot.precision = cv_precision(ctx, tx->dtype);
    tt_ir_value per_image = tt_ir_dot_general(ctx->b, go, x, &a, tt_lower_opmath(tx->dtype)); /* [N, O, C] */
    int64_t d0 = 0, shape[TT_MAX_RANK] = {o, c};
    for (int32_t s = 0; s < p->S; s++) shape[2 + s] = 1;
    return tt_ir_reshape(ctx->b, tt_ir_reduce(ctx->b, TT_REDUCE_ADD, per_image, 1, &d0), p->S + 2, shape);
}

/* grad_weight of a regular convolution: x [N,C,S..], go [N,O,So..] -> [O,C/g,K..] (accumulation dtype). */
static tt_ir_value cv_grad_weight(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value go, const cv_params *p,
                                  const int64_t *ksize) {
    tt_ir_value pw = cv_grad_weight_pointwise(ctx, x, go, p, ksize);
    if (pw != TT_IR_NONE) return pw;
    int64_t ones[CV_MAXS] = {1, 1, 1}, zeros[CV_MAXS] = {0, 0, 0};
    tt_ir_value lhs = cv_swap01(ctx, x);  /* [C, N, S] */
    tt_ir_value rhs = cv_swap01(ctx, go); /* [O, N, So] */
    /* the pads stay as the forward's; extra trailing results (uncovered input) are sliced off */
    tt_ir_value r = cv_conv(ctx, lhs, rhs, p->S, p->dil, p->pad, p->pad, ones, p->stride, 1, p->groups);
    r = cv_slice_spatial(ctx, r, zeros, ksize); /* [C/g, O, K] */
    return cv_swap01(ctx, r);
}

static const char *cv_pt_name(tt_dtype dt) {
    static const char *names[TT_DTYPE_COUNT] = {"Float", "BFloat16", "Half", "Double", "Long",
                                                "Int",   "Short",    "Char", "Byte",   "Bool"};
    return (unsigned)dt < TT_DTYPE_COUNT ? names[dt] : "?";
}

/* Reads convolution's stride..groups arguments (args[0] = stride) for S spatial dims and runs PyTorch's checks
 * against input [N,C,S..] and weight. */
static tt_status cv_parse(tt_lower_ctx *ctx, const tt_ir_type *tx, const tt_ir_type *tw, const tt_arg *args,
                          cv_params *p) {
    memset(p, 0, sizeof *p);
    if (tw->rank < 3)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "weight should have at least three dimensions");
    if (tw->rank - 2 > CV_MAXS) return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "convolution: too many spatial dims");
    int32_t S = tw->rank - 2;
    p->S = S;
    if (tx->rank != tw->rank) {
        char buf[128];
        int64_t dims[TT_MAX_RANK];
        memcpy(dims, tx->dims, sizeof(int64_t) * (size_t)tx->rank);
        char wb[128];
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Expected %d-dimensional input for %d-dimensional weight %s, but got "
                                  "%d-dimensional input of size %s instead",
                                  (int)tw->rank, (int)tw->rank, cv_list_str(wb, sizeof wb, tw->rank, tw->dims),
                                  (int)tx->rank, cv_list_str(buf, sizeof buf, tx->rank, dims));
    }
    tt_status st;
    if ((st = cv_expand(ctx, &args[0], S, "stride", 1, p->stride))) return st;
    if ((st = cv_expand(ctx, &args[1], S, "padding", 0, p->pad))) return st;
    if ((st = cv_expand(ctx, &args[2], S, "dilation", 1, p->dil))) return st;
    p->transposed = args[3].kind == TT_ARG_BOOL && args[3].b;
    if ((st = cv_expand(ctx, &args[4], S, "output_padding", 0, p->opad))) return st;
    p->groups = args[5].i;
    if (p->groups <= 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "non-positive groups is not supported");
    for (int32_t s = 0; s < S; s++) {
        if (p->stride[s] <= 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "non-positive stride is not supported");
        if (p->pad[s] < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "negative padding is not supported");
        if (p->dil[s] <= 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "dilation should be greater than zero");
        if (p->opad[s] < 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "negative output_padding is not supported");
        if (p->transposed && p->opad[s] >= p->stride[s] && p->opad[s] >= p->dil[s])
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "output padding must be smaller than either stride or dilation, but got "
                                      "output_padding=%lld stride=%lld dilation=%lld",
                                      (long long)p->opad[s], (long long)p->stride[s], (long long)p->dil[s]);
    }
    char wb[128], ib[128];
    if (tw->dims[0] % p->groups && !p->transposed)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Given groups=%lld, expected weight to be divisible by %lld at dimension 0, but got "
                                  "weight of shape %s instead",
                                  (long long)p->groups, (long long)p->groups, cv_list_str(wb, sizeof wb, tw->rank, tw->dims));
    if (!p->transposed && tx->dims[1] != tw->dims[1] * p->groups)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Given groups=%lld, weight of size %s, expected input%s to have %lld channels, but "
                                  "got %lld channels instead",
                                  (long long)p->groups, cv_list_str(wb, sizeof wb, tw->rank, tw->dims),
                                  cv_list_str(ib, sizeof ib, tx->rank, tx->dims),
                                  (long long)(tw->dims[1] * p->groups), (long long)tx->dims[1]);
    if (p->transposed && (tx->dims[1] != tw->dims[0] || tw->dims[0] % p->groups))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Given transposed=1, weight of size %s, expected input%s to have %lld channels, "
                                  "but got %lld channels instead",
                                  cv_list_str(wb, sizeof wb, tw->rank, tw->dims),
                                  cv_list_str(ib, sizeof ib, tx->rank, tx->dims), (long long)tw->dims[0],
                                  (long long)tx->dims[1]);
    for (int32_t s = 0; s < S; s++) {
        int64_t k = tw->dims[2 + s], in = tx->dims[2 + s];
        if (!p->transposed) {
            int64_t padded = in + 2 * p->pad[s], kd = p->dil[s] * (k - 1) + 1;
            if (padded < kd)
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                          "Calculated padded input size per channel: %lld (dim %d). Kernel size: %lld. "
                                          "Kernel size can't be greater than actual input size",
                                          (long long)padded, (int)s, (long long)kd);
        } else {
            int64_t out = (in - 1) * p->stride[s] - 2 * p->pad[s] + p->dil[s] * (k - 1) + p->opad[s] + 1;
            if (out <= 0 || k == 0 || in == 0)
                return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                          "Given input size per channel: %lld (dim %d). Calculated output size per "
                                          "channel: %lld. Output size is too small",
                                          (long long)in, (int)s, (long long)out);
        }
    }
    if (tx->dtype != tw->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "expected scalar type %s but found %s",
                                  cv_pt_name(tx->dtype), cv_pt_name(tw->dtype));
    if (tx->dtype == TT_BOOL) return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "convolution of bool tensors");
    return TT_OK;
}

/* ---- convolution ---- */

static tt_status tt_lower_convolution(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nouts;
    if (nargs < 9) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "convolution: expected 9 arguments");
    tt_ir_value x = args[0].value, w = args[1].value;
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}}), *tw = tt_lower_type_into(ctx, w, (tt_ir_type[1]){{0}});
    if (!tx || !tw) return tt_ir_builder_status(ctx->b);
    cv_params p;
    if (cv_parse(ctx, tx, tw, &args[3], &p) != TT_OK) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = tx->dtype;
    tt_ir_value y = p.transposed ? cv_transposed(ctx, x, w, &p) : cv_forward(ctx, x, w, &p);
    const tt_ir_type *ty = tt_lower_type_into(ctx, y, (tt_ir_type[1]){{0}});
    if (!ty) return tt_ir_builder_status(ctx->b);
    if (args[2].kind == TT_ARG_TENSOR && args[2].value != TT_IR_NONE) {
        const tt_ir_type *tb = tt_lower_type_into(ctx, args[2].value, (tt_ir_type[1]){{0}});
        if (!tb) return tt_ir_builder_status(ctx->b);
        if (tb->rank != 1 || tb->dims[0] != ty->dims[1]) {
            char wb[128], bb[128];
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Given weight of size %s, expected bias to be 1-dimensional with %lld elements, "
                                      "but got bias of size %s instead",
                                      cv_list_str(wb, sizeof wb, tw->rank, tw->dims), (long long)ty->dims[1],
                                      cv_list_str(bb, sizeof bb, tb->rank, tb->dims));
        }
        /* PyTorch rounds the bias to the input dtype first, then adds in the accumulation dtype */
        tt_ir_value bias = tt_ir_convert(ctx->b, tt_ir_convert(ctx->b, args[2].value, dt), ty->dtype);
        int64_t d1 = 1;
        bias = tt_ir_broadcast_in_dim(ctx->b, bias, ty->rank, ty->dims, &d1);
        y = tt_ir_binary(ctx->b, TT_OP_ADD, y, bias);
    }
    outs[0] = tt_ir_convert(ctx->b, y, dt);
    return tt_ir_builder_status(ctx->b);
}

/* _convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, benchmark,
 * deterministic, cudnn_enabled, allow_tf32): the same op with backend hints we ignore. */
static tt_status tt_lower_convolution_internal(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                               tt_ir_value *outs, int32_t nouts) {
    return tt_lower_convolution(ctx, args, nargs < 9 ? nargs : 9, outs, nouts);
}

/* convolution_backward(grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed,
 * output_padding, groups, output_mask) -> (grad_input, grad_weight, grad_bias). Outputs not asked for in
 * output_mask stay TT_IR_NONE (undefined tensors, as on CPU) and are not computed. */
static tt_status tt_lower_convolution_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                               tt_ir_value *outs, int32_t nouts) {
    if (nargs < 11 || nouts < 3)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "convolution_backward: bad arity");
    tt_ir_value go = args[0].value, x = args[1].value, w = args[2].value;
    const tt_ir_type *tg = tt_lower_type_into(ctx, go, (tt_ir_type[1]){{0}}), *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}}), *tw = tt_lower_type_into(ctx, w, (tt_ir_type[1]){{0}});
    if (!tg || !tx || !tw) return tt_ir_builder_status(ctx->b);
    cv_params p;
    if (cv_parse(ctx, tx, tw, &args[4], &p) != TT_OK) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = tx->dtype;
    if (tg->dtype != dt)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "expected scalar type %s but found %s",
                                  cv_pt_name(dt), cv_pt_name(tg->dtype));
    bool mask[3];
    for (int32_t i = 0; i < 3; i++) mask[i] = tt_lower_output_wanted(&args[10], i);
    int32_t S = p.S;
    int64_t zeros[CV_MAXS] = {0, 0, 0}, xs[CV_MAXS], ks[CV_MAXS];
    for (int32_t s = 0; s < S; s++) {
        xs[s] = tx->dims[2 + s];
        ks[s] = tw->dims[2 + s];
    }
    /* grad_input */
    if (mask[0]) {
        tt_ir_value gi;
        if (!p.transposed) {
            cv_params q = p;
            for (int32_t s = 0; s < S; s++) /* output_padding that restores the input size */
                q.opad[s] = xs[s] - ((tg->dims[2 + s] - 1) * p.stride[s] - 2 * p.pad[s] + p.dil[s] * (ks[s] - 1) + 1);
            gi = cv_transposed(ctx, go, w, &q);
        } else {
            gi = cv_slice_spatial(ctx, cv_forward(ctx, go, w, &p), zeros, xs);
        }
        outs[0] = tt_ir_convert(ctx->b, gi, dt);
    }
    /* grad_weight */
    if (mask[1]) {
        tt_ir_value gw = p.transposed ? cv_grad_weight(ctx, go, x, &p, ks) : cv_grad_weight(ctx, x, go, &p, ks);
        outs[1] = tt_ir_convert(ctx->b, gw, dt);
    }
    /* grad_bias: sum of grad_output over every dim but the channel */
    if (mask[2]) {
        int64_t rd[TT_MAX_RANK];
        int32_t nr = 0;
        for (int32_t d = 0; d < tg->rank; d++)
            if (d != 1) rd[nr++] = d;
        tt_ir_value s = tt_ir_reduce(ctx->b, TT_REDUCE_ADD, tt_ir_convert(ctx->b, go, tt_lower_opmath(dt)), nr, rd);
        outs[2] = tt_ir_convert(ctx->b, s, dt);
    }
    return tt_ir_builder_status(ctx->b);
}

/* convolution_backward_overrideable(grad_output, input, weight, stride, padding, dilation, transposed,
 * output_padding, groups, output_mask): the hook PyTorch calls for custom backends; no bias_sizes argument. */
static tt_status tt_lower_convolution_backward_overrideable(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                            tt_ir_value *outs, int32_t nouts) {
    if (nargs < 10) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "convolution_backward: bad arity");
    tt_arg full[11];
    memcpy(full, args, 3 * sizeof(tt_arg));
    memset(&full[3], 0, sizeof(tt_arg));
    full[3].kind = TT_ARG_NONE;
    full[3].value = TT_IR_NONE;
    memcpy(&full[4], &args[3], 7 * sizeof(tt_arg));
    return tt_lower_convolution_backward(ctx, full, 11, outs, nouts);
}

/* ---- pooling (2-d; input [N,C,H,W] or [C,H,W]) ---- */

typedef struct pl_params {
    int64_t k[2], s[2], p[2], d[2], out[2], in[2];
    bool ceil;
} pl_params;

/* A 1-or-2 int list into v[2]; an empty list takes dflt (a pair). */
static bool pl_pair(const tt_arg *a, int64_t *v, const int64_t *dflt) {
    if (a->kind == TT_ARG_INT) {
        v[0] = v[1] = a->i;
        return true;
    }
    if (a->kind == TT_ARG_NONE || (a->kind == TT_ARG_INTS && a->n == 0)) {
        if (!dflt) return false;
        v[0] = dflt[0];
        v[1] = dflt[1];
        return true;
    }
    if (a->kind != TT_ARG_INTS || a->n > 2) return false;
    v[0] = a->ints[0];
    v[1] = a->ints[a->n - 1];
    return true;
}

/* PyTorch's pooling_output_shape. */
static int64_t pl_out_size(int64_t in, int64_t k, int64_t pad, int64_t s, int64_t d, bool ceil) {
    int64_t num = in + 2 * pad - d * (k - 1) - 1 + (ceil ? s - 1 : 0);
    int64_t q = num >= 0 ? num / s : -((-num + s - 1) / s); /* floor division */
    int64_t out = q + 1;
    if (ceil && (out - 1) * s >= in + pad) out--;
    return out;
}

/* Parses kernel/stride/padding[/dilation]/ceil_mode (args in that order; dil NULL for avg pools) and checks them
 * against x's shape as PyTorch's pool2d_shape_check does. */
static tt_status pl_parse(tt_lower_ctx *ctx, const tt_ir_type *tx, const char *op, const tt_arg *k, const tt_arg *s,
                          const tt_arg *p, const tt_arg *dil, const tt_arg *ceil, pl_params *q) {
    memset(q, 0, sizeof *q);
    if (tx->rank != 3 && tx->rank != 4)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "non-empty 3D or 4D (batch mode) tensor expected for input");
    static const int64_t zero[2] = {0, 0}, one[2] = {1, 1};
    if (!pl_pair(k, q->k, NULL))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "%s: kernel_size must either be a single int, or a tuple of two ints", op);
    if (!pl_pair(s, q->s, q->k))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "%s: stride must either be omitted, a single int, or a tuple of two ints", op);
    if (!pl_pair(p, q->p, zero))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "%s: padding must either be a single int, or a tuple of two ints", op);
    q->d[0] = q->d[1] = 1; /* avg pools have no dilation */
    if (dil && !pl_pair(dil, q->d, one))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "%s: dilation must be either a single int, or a tuple of two ints", op);
    q->ceil = ceil->kind == TT_ARG_BOOL && ceil->b;
    for (int i = 0; i < 2; i++) /* CPU's pooling_output_shape checks this first, H then W */
        if (q->p[i] < 0)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "pad must be non-negative, but got pad: %lld",
                                      (long long)q->p[i]);
    for (int i = 0; i < 2; i++) {
        if (q->k[i] <= 0)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "kernel size should be greater than zero, but got kH: %lld kW: %lld",
                                      (long long)q->k[0], (long long)q->k[1]);
        if (q->s[i] <= 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "stride should not be zero");
        if (q->d[i] <= 0)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "dilation should be greater than zero, but got dilationH: %lld dilationW: %lld",
                                      (long long)q->d[0], (long long)q->d[1]);
        if (q->p[i] < 0 || q->p[i] > ((q->k[i] - 1) * q->d[i] + 1) / 2)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "pad should be at most half of effective kernel size, but got pad=%lld, "
                                      "kernel_size=%lld and dilation=%lld",
                                      (long long)q->p[i], (long long)q->k[i], (long long)q->d[i]);
        q->in[i] = tx->dims[tx->rank - 2 + i];
        q->out[i] = pl_out_size(q->in[i], q->k[i], q->p[i], q->s[i], q->d[i], q->ceil);
    }
    const int64_t *dm = tx->dims; /* only the batch dim of a 4-D input may be 0 */
    if (dm[tx->rank - 3] == 0 || dm[tx->rank - 2] == 0 || dm[tx->rank - 1] == 0 || (tx->rank == 3 && dm[0] == 0)) {
        char shape[128];
        int n = snprintf(shape, sizeof shape, "[");
        for (int32_t i = 0; i < tx->rank && n < (int)sizeof shape; i++)
            n += snprintf(shape + n, sizeof shape - (size_t)n, "%s%lld", i ? ", " : "", (long long)dm[i]);
        if (n < (int)sizeof shape) snprintf(shape + n, sizeof shape - (size_t)n, "]");
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
                                  "but got:%s", shape);
    }
    int64_t c = tx->dims[tx->rank - 3];
    if (q->out[0] < 1 || q->out[1] < 1)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Given input size: (%lldx%lldx%lld). Calculated output size: (%lldx%lldx%lld). "
                                  "Output size is too small",
                                  (long long)c, (long long)q->in[0], (long long)q->in[1], (long long)c,
                                  (long long)q->out[0], (long long)q->out[1]);
    if (tt_numel(tx->rank, tx->dims) == 0 && (c == 0 || q->in[0] == 0 || q->in[1] == 0))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "non-empty 3D or 4D (batch mode) tensor expected for input");
    return TT_OK;
}

/* Trailing pads that make every window of the output fit (never negative: extra rows are sliced off). */
static int64_t pl_pad_high(const pl_params *q, int i) {
    int64_t need = (q->out[i] - 1) * q->s[i] + q->d[i] * (q->k[i] - 1) + 1 - q->in[i] - q->p[i];
    return need > 0 ? need : 0;
}

/* x's last two dims sliced to [h0, h0 + nh) x [w0, w0 + nw); x itself when that is everything. */
static tt_ir_value pl_slice_hw(tt_lower_ctx *ctx, tt_ir_value x, int64_t h0, int64_t nh, int64_t w0, int64_t nw) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    int32_t r = t->rank;
    if (h0 == 0 && w0 == 0 && t->dims[r - 2] == nh && t->dims[r - 1] == nw) return x;
    int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) lim[d] = t->dims[d];
    st[r - 2] = h0;
    lim[r - 2] = h0 + nh;
    st[r - 1] = w0;
    lim[r - 1] = w0 + nw;
    return tt_ir_slice(ctx->b, x, st, lim, NULL);
}

/* An i64 iota over the pooled output's trailing [OH, OW] dims, broadcast to shape (rank r). */
static tt_ir_value pl_iota(tt_lower_ctx *ctx, int32_t r, const int64_t *shape, int which) {
    return tt_ir_iota(ctx->b, TT_I64, r, shape, r - 2 + which);
}

/* max_pool2d_with_indices(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)
 * -> (values, indices into each H*W plane). Windows are gathered as KH*KW strided slices of the padded input,
 * stacked on a new last dim, and reduced with max / argmax (first maximum wins, as in PyTorch's loop). */
static tt_status tt_lower_max_pool2d_with_indices(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                  tt_ir_value *outs, int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x = args[0].value;
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!tx) return tt_ir_builder_status(ctx->b);
    pl_params q;
    if (pl_parse(ctx, tx, "max_pool2d", &args[1], &args[2], &args[3], &args[4], &args[5], &q)) return tt_ir_builder_status(ctx->b);
    if (tx->dtype == TT_BOOL) return TT_STATUS_UNSUPPORTED;
    int32_t r = tx->rank;
    if (q.k[0] * q.k[1] > 1024) return TT_STATUS_UNSUPPORTED; /* the stacked windows would be too large */
    /* pad with the lowest value so padding never wins */
    double lowest = tt_dtype_is_float(tx->dtype) ? -INFINITY : (tt_dtype_is_signed(tx->dtype) ? -9223372036854775807.0 - 1.0 : 0.0);
    if (tx->dtype == TT_I32) lowest = -2147483648.0;
    if (tx->dtype == TT_I16) lowest = -32768.0;
    if (tx->dtype == TT_I8) lowest = -128.0;
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    for (int i = 0; i < 2; i++) {
        lo[r - 2 + i] = q.p[i];
        hi[r - 2 + i] = pl_pad_high(&q, i);
    }
    tt_ir_value xp = tt_ir_pad(ctx->b, x, tt_lower_const(ctx, tx->dtype, lowest), lo, hi, NULL);
    int64_t K = q.k[0] * q.k[1];
    tt_ir_value *wins = malloc(sizeof(tt_ir_value) * (size_t)K);
    if (!wins) return tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "max_pool2d: out of memory");
    int64_t oshape[TT_MAX_RANK], wshape[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) oshape[d] = wshape[d] = tx->dims[d];
    oshape[r - 2] = wshape[r - 2] = q.out[0];
    oshape[r - 1] = wshape[r - 1] = q.out[1];
    wshape[r] = 1;
    for (int64_t kh = 0; kh < q.k[0]; kh++)
        for (int64_t kw = 0; kw < q.k[1]; kw++) {
            int64_t st[TT_MAX_RANK] = {0}, lim[TT_MAX_RANK], str[TT_MAX_RANK];
            for (int32_t d = 0; d < r; d++) {
                lim[d] = tx->dims[d];
                str[d] = 1;
            }
            int64_t off[2] = {kh * q.d[0], kw * q.d[1]};
            for (int i = 0; i < 2; i++) {
                st[r - 2 + i] = off[i];
                lim[r - 2 + i] = off[i] + (q.out[i] - 1) * q.s[i] + 1;
                str[r - 2 + i] = q.s[i];
            }
            tt_ir_value w = tt_ir_slice(ctx->b, xp, st, lim, str);
            wins[kh * q.k[1] + kw] = tt_ir_reshape(ctx->b, w, r + 1, wshape);
        }
    tt_ir_value stack = K == 1 ? wins[0] : tt_ir_concatenate(ctx->b, (int32_t)K, wins, r);
    free(wins);
    int64_t last = r;
    tt_ir_value vals = tt_ir_reduce(ctx->b, TT_REDUCE_MAX, stack, 1, &last);
    tt_ir_value kk = tt_ir_arg_reduce(ctx->b, stack, r, false);
    /* flat index: (oh*s - p + kh*d) * W + (ow*s - p + kw*d), kh = kk / KW, kw = kk % KW */
#define PL_C(v) tt_lower_full(ctx, TT_I64, r, oshape, (double)(v))
#define PL_B(o_, x_, y_) tt_ir_binary(ctx->b, (o_), (x_), (y_))
    tt_ir_value oh = pl_iota(ctx, r, oshape, 0), ow = pl_iota(ctx, r, oshape, 1);
    tt_ir_value kh = PL_B(TT_OP_DIVIDE, kk, PL_C(q.k[1]));
    tt_ir_value kw = PL_B(TT_OP_SUBTRACT, kk, PL_B(TT_OP_MULTIPLY, kh, PL_C(q.k[1])));
    tt_ir_value ih = PL_B(TT_OP_ADD, PL_B(TT_OP_MULTIPLY, oh, PL_C(q.s[0])), PL_B(TT_OP_MULTIPLY, kh, PL_C(q.d[0])));
    tt_ir_value iw = PL_B(TT_OP_ADD, PL_B(TT_OP_MULTIPLY, ow, PL_C(q.s[1])), PL_B(TT_OP_MULTIPLY, kw, PL_C(q.d[1])));
    ih = PL_B(TT_OP_SUBTRACT, ih, PL_C(q.p[0]));
    iw = PL_B(TT_OP_SUBTRACT, iw, PL_C(q.p[1]));
    /* A window whose valid part is all -inf (or lowest) may pick a padded slot: use its first valid slot then,
     * as PyTorch does: start + ceil((p - start) / d) * d, clamped at the window start. */
    tt_ir_value valid = PL_B(TT_OP_AND, PL_B(TT_OP_AND, tt_ir_compare(ctx->b, TT_CMP_GE, ih, PL_C(0)),
                                             tt_ir_compare(ctx->b, TT_CMP_LT, ih, PL_C(q.in[0]))),
                             PL_B(TT_OP_AND, tt_ir_compare(ctx->b, TT_CMP_GE, iw, PL_C(0)),
                                  tt_ir_compare(ctx->b, TT_CMP_LT, iw, PL_C(q.in[1]))));
    tt_ir_value first[2];
    tt_ir_value o2[2] = {oh, ow};
    for (int i = 0; i < 2; i++) {
        tt_ir_value start = PL_B(TT_OP_SUBTRACT, PL_B(TT_OP_MULTIPLY, o2[i], PL_C(q.s[i])), PL_C(q.p[i]));
        tt_ir_value need = PL_B(TT_OP_MAXIMUM, PL_B(TT_OP_SUBTRACT, PL_C(0), start), PL_C(0));
        tt_ir_value steps = PL_B(TT_OP_DIVIDE, PL_B(TT_OP_ADD, need, PL_C(q.d[i] - 1)), PL_C(q.d[i]));
        first[i] = PL_B(TT_OP_ADD, start, PL_B(TT_OP_MULTIPLY, steps, PL_C(q.d[i])));
    }
    tt_ir_value idx = PL_B(TT_OP_ADD, PL_B(TT_OP_MULTIPLY, ih, PL_C(q.in[1])), iw);
    tt_ir_value idx0 = PL_B(TT_OP_ADD, PL_B(TT_OP_MULTIPLY, first[0], PL_C(q.in[1])), first[1]);
    outs[0] = vals;
    outs[1] = tt_ir_select(ctx->b, valid, idx, idx0);
    return tt_ir_builder_status(ctx->b);
#undef PL_C
#undef PL_B
}

/* max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices):
 * grad_output scattered (added) into each plane at its argmax. */
static tt_status tt_lower_max_pool2d_with_indices_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                           tt_ir_value *outs, int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value go = args[0].value, idx = args[7].value;
    const tt_ir_type *tg = tt_lower_type_into(ctx, go, (tt_ir_type[1]){{0}}), *tx = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}}),
                     *ti = tt_lower_type_into(ctx, idx, (tt_ir_type[1]){{0}});
    if (!tg || !tx || !ti) return tt_ir_builder_status(ctx->b);
    if (tx->rank != 3 && tx->rank != 4)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "non-empty 3D or 4D (batch mode) tensor expected for input");
    if (tg->rank != tx->rank || ti->rank != tx->rank || !tt_dtype_is_int(ti->dtype) || !tt_dtype_is_float(tg->dtype))
        return TT_STATUS_UNSUPPORTED;
    int32_t r = tx->rank;
    int64_t plane = tx->dims[r - 2] * tx->dims[r - 1], P = 1, M = tg->dims[r - 2] * tg->dims[r - 1];
    for (int32_t d = 0; d < r - 2; d++) {
        if (tg->dims[d] != tx->dims[d]) return TT_STATUS_UNSUPPORTED;
        P *= tx->dims[d];
    }
    for (int32_t d = 0; d < r; d++)
        if (ti->dims[d] != tg->dims[d]) return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(tg->dtype);
    int64_t pm[2] = {P, M}, flat = P * M, total = P * plane, col[2] = {P * M, 1};
    /* global index = row * plane + index within the plane */
    tt_ir_value gi = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, idx, TT_I64), 2, pm);
    tt_ir_value row = tt_ir_iota(ctx->b, TT_I64, 2, pm, 0);
    gi = tt_ir_binary(ctx->b, TT_OP_ADD, gi,
                      tt_ir_binary(ctx->b, TT_OP_MULTIPLY, row, tt_lower_full(ctx, TT_I64, 2, pm, (double)plane)));
    gi = tt_ir_reshape(ctx->b, gi, 2, col);
    tt_ir_value upd = tt_ir_reshape(ctx->b, tt_ir_convert(ctx->b, go, acc), 1, &flat);
    tt_ir_attrs a = tt_lower_scatter_elements_attrs(1, TT_REDUCE_ADD, false);
    tt_ir_value z = tt_lower_full(ctx, acc, 1, &total, 0.0);
    tt_ir_value g = tt_ir_scatter(ctx->b, z, gi, upd, &a);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_reshape(ctx->b, g, r, tx->dims), tx->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* The avg_pool2d divisor per output position [OH, OW] as a constant in dtype acc (depends only on shapes). */
static tt_ir_value pl_avg_divisor(tt_lower_ctx *ctx, const pl_params *q, bool count_include_pad, const tt_arg *over,
                                  tt_dtype acc, int32_t r, const int64_t *oshape) {
    int64_t n = q->out[0] * q->out[1];
    if (over->kind == TT_ARG_INT) return tt_lower_full(ctx, acc, r, oshape, (double)over->i);
    double *dv = malloc(sizeof(double) * (size_t)(n ? n : 1));
    float *fv = malloc(sizeof(float) * (size_t)(n ? n : 1));
    if (!dv || !fv) {
        free(dv);
        free(fv);
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "avg_pool2d: out of memory");
        return TT_IR_NONE;
    }
    for (int64_t oh = 0; oh < q->out[0]; oh++)
        for (int64_t ow = 0; ow < q->out[1]; ow++) {
            int64_t hs = oh * q->s[0] - q->p[0], ws = ow * q->s[1] - q->p[1];
            int64_t he = hs + q->k[0] < q->in[0] + q->p[0] ? hs + q->k[0] : q->in[0] + q->p[0];
            int64_t we = ws + q->k[1] < q->in[1] + q->p[1] ? ws + q->k[1] : q->in[1] + q->p[1];
            int64_t pool = (he - hs) * (we - ws);
            hs = hs < 0 ? 0 : hs;
            ws = ws < 0 ? 0 : ws;
            he = he > q->in[0] ? q->in[0] : he;
            we = we > q->in[1] ? q->in[1] : we;
            int64_t div = count_include_pad ? pool : (he - hs) * (we - ws);
            if (div <= 0) div = 1; /* empty window: the sum is 0 anyway */
            dv[oh * q->out[1] + ow] = (double)div;
            fv[oh * q->out[1] + ow] = (float)div;
        }
    int64_t d2[2] = {q->out[0], q->out[1]};
    tt_ir_value c = acc == TT_F64 ? tt_ir_constant(ctx->b, TT_F64, 2, d2, dv) : tt_ir_constant(ctx->b, TT_F32, 2, d2, fv);
    free(dv);
    free(fv);
    int64_t map[2] = {r - 2, r - 1};
    return tt_ir_broadcast_in_dim(ctx->b, c, r, oshape, map);
}

/* avg_pool2d(self, kernel_size, stride=[], padding=0, ceil_mode=False, count_include_pad=True,
 * divisor_override=None): a windowed sum (reduce_window) over zero padding, divided by PyTorch's divisor. */
static tt_status tt_lower_avg_pool2d(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x = args[0].value;
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!tx) return tt_ir_builder_status(ctx->b);
    pl_params q;
    if (pl_parse(ctx, tx, "avg_pool2d", &args[1], &args[2], &args[3], NULL, &args[4], &q)) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(tx->dtype)) return TT_STATUS_UNSUPPORTED; /* integer division semantics: CPU */
    if (args[6].kind == TT_ARG_INT && args[6].i == 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "divisor must be not zero");
    bool cip = !(args[5].kind == TT_ARG_BOOL && !args[5].b);
    int32_t r = tx->rank;
    tt_dtype acc = tt_lower_opmath(tx->dtype);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_window.kind = TT_REDUCE_ADD;
    int64_t oshape[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) {
        a.reduce_window.window.v[d] = a.reduce_window.strides.v[d] = a.reduce_window.window_dilation.v[d] = 1;
        oshape[d] = tx->dims[d];
    }
    a.reduce_window.window.n = a.reduce_window.strides.n = a.reduce_window.window_dilation.n = r;
    a.reduce_window.pad_low.n = a.reduce_window.pad_high.n = r;
    for (int i = 0; i < 2; i++) {
        a.reduce_window.window.v[r - 2 + i] = q.k[i];
        a.reduce_window.strides.v[r - 2 + i] = q.s[i];
        a.reduce_window.pad_low.v[r - 2 + i] = q.p[i];
        a.reduce_window.pad_high.v[r - 2 + i] = pl_pad_high(&q, i);
        oshape[r - 2 + i] = q.out[i];
    }
    tt_ir_value sum = tt_ir_reduce_window(ctx->b, tt_ir_convert(ctx->b, x, acc), &a);
    sum = pl_slice_hw(ctx, sum, 0, q.out[0], 0, q.out[1]);
    tt_ir_value div = pl_avg_divisor(ctx, &q, cip, &args[6], acc, r, oshape);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_binary(ctx->b, TT_OP_DIVIDE, sum, div), tx->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
 * divisor_override): each input position gathers grad/divisor from every window that covers it. The divided
 * grad is spread onto the stride grid (interior padding), padded by k-1, and summed over k-wide windows. */
static tt_status tt_lower_avg_pool2d_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                              int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value go = args[0].value;
    const tt_ir_type *tx = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}}), *tg = tt_lower_type_into(ctx, go, (tt_ir_type[1]){{0}});
    if (!tx || !tg) return tt_ir_builder_status(ctx->b);
    pl_params q;
    if (pl_parse(ctx, tx, "avg_pool2d", &args[2], &args[3], &args[4], NULL, &args[5], &q)) return tt_ir_builder_status(ctx->b);
    if (!tt_dtype_is_float(tx->dtype) || tg->rank != tx->rank) return TT_STATUS_UNSUPPORTED;
    int32_t r = tx->rank;
    if (tg->dims[r - 2] != q.out[0] || tg->dims[r - 1] != q.out[1])
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "avg_pool2d_backward: grad_output has the wrong shape");
    bool cip = !(args[6].kind == TT_ARG_BOOL && !args[6].b);
    tt_dtype acc = tt_lower_opmath(tx->dtype);
    tt_ir_value div = pl_avg_divisor(ctx, &q, cip, &args[7], acc, r, tg->dims);
    tt_ir_value g = tt_ir_binary(ctx->b, TT_OP_DIVIDE, tt_ir_convert(ctx->b, go, acc), div);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0}, in[TT_MAX_RANK] = {0};
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_window.kind = TT_REDUCE_ADD;
    a.reduce_window.window.n = a.reduce_window.strides.n = a.reduce_window.window_dilation.n = r;
    a.reduce_window.pad_low.n = a.reduce_window.pad_high.n = r;
    for (int32_t d = 0; d < r; d++) a.reduce_window.window.v[d] = a.reduce_window.strides.v[d] = a.reduce_window.window_dilation.v[d] = 1;
    for (int i = 0; i < 2; i++) {
        int32_t d = r - 2 + i;
        lo[d] = q.k[i] - 1;
        in[d] = q.s[i] - 1;
        int64_t need = q.p[i] + q.in[i] - (q.out[i] - 1) * q.s[i] - 1;
        hi[d] = need > 0 ? need : 0;
        a.reduce_window.window.v[d] = q.k[i];
    }
    tt_ir_value gp = tt_ir_pad(ctx->b, g, tt_lower_const(ctx, acc, 0.0), lo, hi, in);
    tt_ir_value s = tt_ir_reduce_window(ctx->b, gp, &a);
    s = pl_slice_hw(ctx, s, q.p[0], q.in[0], q.p[1], q.in[1]);
    outs[0] = tt_ir_convert(ctx->b, s, tx->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- adaptive average pooling: window o of n over a size-L dim is [floor(o*L/n), ceil((o+1)*L/n)) ---- */

/* The 0/1 window-membership matrix [n, L] as a constant in dtype acc; counts[o] receives each window's size. */
static tt_ir_value pl_adaptive_mask(tt_lower_ctx *ctx, int64_t n, int64_t L, tt_dtype acc, int64_t *counts) {
    int64_t cnt = n * L;
    size_t es = tt_dtype_size(acc);
    unsigned char *buf = calloc((size_t)(cnt ? cnt : 1), es);
    if (!buf) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "adaptive_avg_pool2d: out of memory");
        return TT_IR_NONE;
    }
    for (int64_t o = 0; o < n; o++) {
        int64_t s = (o * L) / n, e = ((o + 1) * L + n - 1) / n;
        counts[o] = e - s;
        for (int64_t l = s; l < e; l++) {
            if (acc == TT_F64) ((double *)(void *)buf)[o * L + l] = 1.0;
            else ((float *)(void *)buf)[o * L + l] = 1.0f;
        }
    }
    int64_t dims[2] = {n, L};
    tt_ir_value m = tt_ir_constant(ctx->b, acc, 2, dims, buf);
    free(buf);
    return m;
}

/* x [..., A, B] contracted on its dim cdim (r-2 or r-1) with mask [n, L]; the new dim replaces cdim in place. */
static tt_ir_value pl_contract(tt_lower_ctx *ctx, tt_ir_value x, int32_t r, int32_t cdim, tt_ir_value mask) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = cdim;
    a.dot.rhs_contract.v[0] = 1;
    a.dot.precision = TT_PRECISION_FP32; /* 0/1 weights: exact sums, whatever the user precision */
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    tt_ir_value y = tt_ir_dot_general(ctx->b, x, mask, &a, t->dtype); /* [..., other, n] */
    if (cdim == r - 1) return y;
    int64_t perm[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) perm[d] = d;
    perm[r - 2] = r - 1;
    perm[r - 1] = r - 2;
    return tt_ir_transpose(ctx->b, y, perm);
}

/* The [OH, OW] window sizes broadcast to shape. */
static tt_ir_value pl_adaptive_counts(tt_lower_ctx *ctx, const int64_t *ch, const int64_t *cw, int64_t oh, int64_t ow,
                                      tt_dtype acc, int32_t r, const int64_t *shape) {
    int64_t n = oh * ow > 0 ? oh * ow : 1;
    double *dv = malloc(sizeof(double) * (size_t)n);
    float *fv = malloc(sizeof(float) * (size_t)n);
    tt_ir_value c = TT_IR_NONE;
    if (dv && fv) {
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                dv[i * ow + j] = (double)(ch[i] * cw[j]);
                fv[i * ow + j] = (float)(ch[i] * cw[j]);
            }
        int64_t d2[2] = {oh, ow}, map[2] = {r - 2, r - 1};
        c = acc == TT_F64 ? tt_ir_constant(ctx->b, TT_F64, 2, d2, dv) : tt_ir_constant(ctx->b, TT_F32, 2, d2, fv);
        c = tt_ir_broadcast_in_dim(ctx->b, c, r, shape, map);
    } else {
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "adaptive_avg_pool2d: out of memory");
    }
    free(dv);
    free(fv);
    return c;
}

#define PL_MAX_ADAPT 4096

/* _adaptive_avg_pool2d(self, output_size) */
static tt_status tt_lower_adaptive_avg_pool2d(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                              int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value x = args[0].value;
    const tt_ir_type *tx = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!tx) return tt_ir_builder_status(ctx->b);
    if (tx->rank != 3 && tx->rank != 4)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got %d-D", (int)tx->rank);
    int64_t os[2];
    if (!pl_pair(&args[1], os, NULL) || os[0] < 0 || os[1] < 0)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "adaptive_avg_pool2d: output_size must be 2");
    if (!tt_dtype_is_float(tx->dtype)) return TT_STATUS_UNSUPPORTED;
    int32_t r = tx->rank;
    int64_t H = tx->dims[r - 2], W = tx->dims[r - 1];
    if (H == 0 || W == 0 || os[0] > PL_MAX_ADAPT || os[1] > PL_MAX_ADAPT || H > PL_MAX_ADAPT || W > PL_MAX_ADAPT)
        return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(tx->dtype);
    int64_t ch[PL_MAX_ADAPT], cw[PL_MAX_ADAPT];
    tt_ir_value mh = pl_adaptive_mask(ctx, os[0], H, acc, ch), mw = pl_adaptive_mask(ctx, os[1], W, acc, cw);
    tt_ir_value y = pl_contract(ctx, tt_ir_convert(ctx->b, x, acc), r, r - 1, mw); /* [..., H, OW] */
    y = pl_contract(ctx, y, r, r - 2, mh);                                           /* [..., OH, OW] */
    int64_t oshape[TT_MAX_RANK];
    for (int32_t d = 0; d < r; d++) oshape[d] = tx->dims[d];
    oshape[r - 2] = os[0];
    oshape[r - 1] = os[1];
    tt_ir_value cnt = pl_adaptive_counts(ctx, ch, cw, os[0], os[1], acc, r, oshape);
    outs[0] = tt_ir_convert(ctx->b, tt_ir_binary(ctx->b, TT_OP_DIVIDE, y, cnt), tx->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* _adaptive_avg_pool2d_backward(grad_output, self) */
static tt_status tt_lower_adaptive_avg_pool2d_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                                       tt_ir_value *outs, int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value go = args[0].value;
    const tt_ir_type *tg = tt_lower_type_into(ctx, go, (tt_ir_type[1]){{0}}), *tx = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}});
    if (!tg || !tx) return tt_ir_builder_status(ctx->b);
    if ((tx->rank != 3 && tx->rank != 4) || tg->rank != tx->rank || !tt_dtype_is_float(tg->dtype))
        return TT_STATUS_UNSUPPORTED;
    int32_t r = tx->rank;
    int64_t H = tx->dims[r - 2], W = tx->dims[r - 1], OH = tg->dims[r - 2], OW = tg->dims[r - 1];
    if (H == 0 || W == 0 || OH > PL_MAX_ADAPT || OW > PL_MAX_ADAPT || H > PL_MAX_ADAPT || W > PL_MAX_ADAPT)
        return TT_STATUS_UNSUPPORTED;
    tt_dtype acc = tt_lower_opmath(tg->dtype);
    int64_t ch[PL_MAX_ADAPT], cw[PL_MAX_ADAPT];
    tt_ir_value mh = pl_adaptive_mask(ctx, OH, H, acc, ch), mw = pl_adaptive_mask(ctx, OW, W, acc, cw);
    tt_ir_value cnt = pl_adaptive_counts(ctx, ch, cw, OH, OW, acc, r, tg->dims);
    tt_ir_value g = tt_ir_binary(ctx->b, TT_OP_DIVIDE, tt_ir_convert(ctx->b, go, acc), cnt);
    /* transposed masks [L, n] spread each window's share back over its inputs */
    int64_t p01[2] = {1, 0};
    g = pl_contract(ctx, g, r, r - 1, tt_ir_transpose(ctx->b, mw, p01)); /* [..., OH, W] */
    g = pl_contract(ctx, g, r, r - 2, tt_ir_transpose(ctx->b, mh, p01)); /* [..., H, W] */
    outs[0] = tt_ir_convert(ctx->b, g, tx->dtype);
    return tt_ir_builder_status(ctx->b);
}

const tt_lower_entry tt_lower_table_conv[] = {
    {"aten::convolution", tt_lower_convolution},
    {"aten::_convolution", tt_lower_convolution_internal},
    {"aten::convolution_backward", tt_lower_convolution_backward},
    {"aten::convolution_overrideable", tt_lower_convolution},
    {"aten::convolution_backward_overrideable", tt_lower_convolution_backward_overrideable},
    {"aten::max_pool2d_with_indices", tt_lower_max_pool2d_with_indices},
    {"aten::max_pool2d_with_indices_backward", tt_lower_max_pool2d_with_indices_backward},
    {"aten::avg_pool2d", tt_lower_avg_pool2d},
    {"aten::avg_pool2d_backward", tt_lower_avg_pool2d_backward},
    {"aten::_adaptive_avg_pool2d", tt_lower_adaptive_avg_pool2d},
    {"aten::_adaptive_avg_pool2d_backward", tt_lower_adaptive_avg_pool2d_backward},
    {NULL, NULL},
};
