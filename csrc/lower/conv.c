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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CV_MAXS 3 /* spatial dims handled (conv1d/2d/3d) */

/* ---- helpers ---- */

/* A copy of v's type in store (NULL if v has none). Types are copied because the builder's storage moves as
 * values are added; store is a block-scoped compound literal at the call sites. */
static const tt_ir_type *cv_type(tt_lower_ctx *ctx, tt_ir_value v, tt_ir_type *store) {
    const tt_ir_type *t = tt_lower_type(ctx, v);
    if (!t) return NULL;
    *store = *t;
    return store;
}

static tt_dtype cv_acc(tt_dtype dt) { return (dt == TT_BF16 || dt == TT_F16) ? TT_F32 : dt; }

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
    const tt_ir_type *t = cv_type(ctx, x, (tt_ir_type[1]){{0}});
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
    const tt_ir_type *t = cv_type(ctx, x, (tt_ir_type[1]){{0}});
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
    const tt_ir_type *t = cv_type(ctx, x, (tt_ir_type[1]){{0}});
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
    return tt_ir_convolution(ctx->b, x, k, &a, cv_acc(t->dtype));
}

/* Regular convolution x [N,C,S..] * w [O,C/g,K..] -> [N,O,S'..] (accumulation dtype). */
static tt_ir_value cv_forward(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value w, const cv_params *p) {
    int64_t ones[CV_MAXS] = {1, 1, 1};
    return cv_conv(ctx, x, w, p->S, p->stride, p->pad, p->pad, ones, p->dil, p->groups, 1);
}

/* Transposed convolution x [N,Cin,S..] with w [Cin,O/g,K..] -> [N,O,out..] where out_s = (in-1)*stride - 2*pad +
 * dil*(k-1) + opad + 1 (opad as given; callers check it). */
static tt_ir_value cv_transposed(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value w, const cv_params *p) {
    const tt_ir_type *tx = cv_type(ctx, x, (tt_ir_type[1]){{0}}), *tw = cv_type(ctx, w, (tt_ir_type[1]){{0}});
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

/* grad_weight of a regular convolution: x [N,C,S..], go [N,O,So..] -> [O,C/g,K..] (accumulation dtype). */
static tt_ir_value cv_grad_weight(tt_lower_ctx *ctx, tt_ir_value x, tt_ir_value go, const cv_params *p,
                                  const int64_t *ksize) {
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
    const tt_ir_type *tx = cv_type(ctx, x, (tt_ir_type[1]){{0}}), *tw = cv_type(ctx, w, (tt_ir_type[1]){{0}});
    if (!tx || !tw) return tt_ir_builder_status(ctx->b);
    cv_params p;
    if (cv_parse(ctx, tx, tw, &args[3], &p) != TT_OK) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = tx->dtype;
    tt_ir_value y = p.transposed ? cv_transposed(ctx, x, w, &p) : cv_forward(ctx, x, w, &p);
    const tt_ir_type *ty = cv_type(ctx, y, (tt_ir_type[1]){{0}});
    if (!ty) return tt_ir_builder_status(ctx->b);
    if (args[2].kind == TT_ARG_TENSOR && args[2].value != TT_IR_NONE) {
        const tt_ir_type *tb = cv_type(ctx, args[2].value, (tt_ir_type[1]){{0}});
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
 * output_mask come back as zeros of the right shape (cheap; PyTorch would return undefined tensors). */
static tt_status tt_lower_convolution_backward(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                               tt_ir_value *outs, int32_t nouts) {
    if (nargs < 11 || nouts < 3)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "convolution_backward: bad arity");
    tt_ir_value go = args[0].value, x = args[1].value, w = args[2].value;
    const tt_ir_type *tg = cv_type(ctx, go, (tt_ir_type[1]){{0}}), *tx = cv_type(ctx, x, (tt_ir_type[1]){{0}}), *tw = cv_type(ctx, w, (tt_ir_type[1]){{0}});
    if (!tg || !tx || !tw) return tt_ir_builder_status(ctx->b);
    cv_params p;
    if (cv_parse(ctx, tx, tw, &args[4], &p) != TT_OK) return tt_ir_builder_status(ctx->b);
    tt_dtype dt = tx->dtype;
    if (tg->dtype != dt)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "expected scalar type %s but found %s",
                                  cv_pt_name(dt), cv_pt_name(tg->dtype));
    bool mask[3] = {true, true, true};
    if (args[10].kind == TT_ARG_BOOLS)
        for (int32_t i = 0; i < 3 && i < args[10].n; i++) mask[i] = args[10].ints[i] != 0;
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
    } else {
        outs[0] = tt_lower_full(ctx, dt, tx->rank, tx->dims, 0.0);
    }
    /* grad_weight */
    if (mask[1]) {
        tt_ir_value gw = p.transposed ? cv_grad_weight(ctx, go, x, &p, ks) : cv_grad_weight(ctx, x, go, &p, ks);
        outs[1] = tt_ir_convert(ctx->b, gw, dt);
    } else {
        outs[1] = tt_lower_full(ctx, dt, tw->rank, tw->dims, 0.0);
    }
    /* grad_bias: sum of grad_output over every dim but the channel */
    int64_t nb = tg->dims[1];
    if (mask[2]) {
        int64_t rd[TT_MAX_RANK];
        int32_t nr = 0;
        for (int32_t d = 0; d < tg->rank; d++)
            if (d != 1) rd[nr++] = d;
        tt_ir_value s = tt_ir_reduce(ctx->b, TT_REDUCE_ADD, tt_ir_convert(ctx->b, go, cv_acc(dt)), nr, rd);
        outs[2] = tt_ir_convert(ctx->b, s, dt);
    } else {
        outs[2] = tt_lower_full(ctx, dt, 1, &nb, 0.0);
    }
    return tt_ir_builder_status(ctx->b);
}

/* @POOL@ */

const tt_lower_entry tt_lower_table_conv[] = {
    {"aten::convolution", tt_lower_convolution},
    {"aten::_convolution", tt_lower_convolution_internal},
    {"aten::convolution_backward", tt_lower_convolution_backward},
    {NULL, NULL},
};
