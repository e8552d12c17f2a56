/* host_conv_direct.c — the host convolution's direct kernels, for shapes the im2col GEMMs (host_conv.c) serve
 * badly. All are f32 at DEFAULT (operands rounded to bf16, exact products, f32 sums) or exact f32, in the node's
 * StableHLO semantics (host_conv.c's header).
 *
 *   depthwise          one input channel per group, 2 spatial dims: a GEMM per image and channel would have one
 *                      row; the stencil runs output row by output row, vectorized along the row.
 *   depthwise_grad     batch groups with one output per group (a depthwise conv's weight gradient: "images" are
 *                      the forward's channels, the contraction runs over the forward's batch and space): every
 *                      output is a dot product of a kernel plane with a shifted input window, row by row. im2col
 *                      would copy the input 9 times (58 MB for 8 x 64 x 56 x 56) to feed 1-row GEMMs.
 *   transposed         lhs dilation (a strided conv's input gradient, conv_transpose): im2col over the dilated
 *                      input multiplies mostly zeros (3 of 4 at stride 2). col2im instead: per kernel position
 *                      k, P_k = W_k . x (one batched GEMM over k with the node's precision), then each P_k is
 *                      added into the output at the positions k sends x's positions to. Same products, each
 *                      output summed over k in order.
 */
#include "host_conv_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; the stencils' rows want the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

TT_HOST_VEC_CLONES static void round_bf16_into(const float *restrict src, float *restrict dst, int64_t n) {
    for (int64_t i = 0; i < n; i++) dst[i] = tt_host_bf16_round(src[i]);
}

typedef struct stencil_job {
    const conv_geom *g;
    const conv_attrs *a;
    const float *x, *w;
    float *out;
    bool round;          /* DEFAULT: each plane's operands are rounded to bf16 into a task's scratch first (in
                          * cache, where whole rounded copies of x and w cost a pass over memory each) */
    _Atomic bool failed; /* a task could not allocate its scratch */
} stencil_job;

/* The plane operands a task reads: x's nx floats at xp and w's nw at wp, or, rounding, their bf16 values in buf
 * (nx + nw floats). */
static void plane_operands(const stencil_job *j, float *buf, const float **xp, int64_t nx, const float **wp, int64_t nw) {
    if (!j->round) return;
    round_bf16_into(*xp, buf, nx);
    round_bf16_into(*wp, buf + nx, nw);
    *xp = buf;
    *wp = buf + nx;
}

/* A task's scratch for plane_operands (NULL when not rounding; on failure the job is marked and NULL returned). */
static float *plane_scratch(stencil_job *j, int64_t n, bool *ok) {
    *ok = true;
    if (!j->round) return NULL;
    float *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
    if (!b) {
        j->failed = true;
        *ok = false;
    }
    return b;
}

/* ---- depthwise ---------------------------------------------------------------------------------------- */

/* One output row: orow[x] += wv * xrow[x * s + off] for x in [lo, hi). */
TT_HOST_VEC_CLONES static void dw_row(float *restrict orow, const float *restrict xrow, float wv, int64_t s, int64_t off,
                                      int64_t lo, int64_t hi) {
    if (s == 1)
        for (int64_t x = lo; x < hi; x++) orow[x] += wv * xrow[x + off];
    else
        for (int64_t x = lo; x < hi; x++) orow[x] += wv * xrow[x * s + off];
}

static void dw_planes(void *user, int64_t p0, int64_t p1) {
    stencil_job *j = user;
    const conv_geom *g = j->g;
    bool ok;
    float *buf = plane_scratch(j, g->SI + g->KS, &ok);
    if (!ok) return;
    int64_t X0 = g->X[0], X1 = g->X[1], Y0 = g->Y[0], Y1 = g->Y[1], K0 = g->Kd[0], K1 = g->Kd[1];
    int64_t s0 = j->a->strides.v[0], s1 = j->a->strides.v[1], d0 = j->a->rhs_dilation.v[0], d1 = j->a->rhs_dilation.v[1];
    int64_t q0 = j->a->pad_low.v[0], q1 = j->a->pad_low.v[1];
    for (int64_t pl = p0; pl < p1; pl++) { /* plane = (image, output channel) */
        int64_t n = pl / g->O, o = pl % g->O, ch = o / g->Og;
        const float *xp = j->x + (n * g->C + ch) * g->SI, *wp = j->w + o * g->KS;
        plane_operands(j, buf, &xp, g->SI, &wp, g->KS);
        float *op = j->out + pl * g->SO;
        for (int64_t y = 0; y < Y0; y++) {
            float *orow = op + y * Y1;
            for (int64_t x = 0; x < Y1; x++) orow[x] = 0.0f;
            for (int64_t ky = 0; ky < K0; ky++) {
                int64_t iy = y * s0 + ky * d0 - q0;
                if (iy < 0 || iy >= X0) continue;
                const float *xrow = xp + iy * X1;
                for (int64_t kx = 0; kx < K1; kx++) {
                    int64_t off = kx * d1 - q1, lo, hi; /* ix = x * s1 + off */
                    conv_run_range(off, s1, X1, Y1, &lo, &hi);
                    dw_row(orow, xrow, wp[ky * K1 + kx], s1, off, lo, hi);
                }
            }
        }
    }
    free(buf);
}

/* ---- depthwise weight gradient -------------------------------------------------------------------------- */

/* lane[t] += w[k] * x[at + k * st] over k in [lo, hi), k = lo + t (mod 16); a last partial group of 16 goes to
 * the first lanes (at may be negative: an index is only formed inside the range). */
TT_HOST_VEC_CLONES static void dot_run(float *restrict lane, const float *restrict w, const float *restrict x,
                                       int64_t at, int64_t st, int64_t lo, int64_t hi) {
    int64_t k = lo;
    if (st == 1)
        for (; k + 16 <= hi; k += 16)
            for (int t = 0; t < 16; t++) lane[t] += w[k + t] * x[at + k + t];
    else
        for (; k + 16 <= hi; k += 16)
            for (int t = 0; t < 16; t++) lane[t] += w[k + t] * x[at + (k + t) * st];
    for (int t = 0; k < hi; k++, t++) lane[t] += w[k] * x[at + k * st];
}

/* out[n][o][y] = sum over i, k of W[o][i][k] * X[o * Nout + n][i][y * stride + k * rhs_dilation - pad_low]. */
static void dwg_planes(void *user, int64_t p0, int64_t p1) {
    stencil_job *j = user;
    const conv_geom *g = j->g;
    bool ok;
    float *buf = plane_scratch(j, g->I * (g->SI + g->KS), &ok);
    if (!ok) return;
    int64_t X0 = g->X[0], X1 = g->X[1], Y0 = g->Y[0], Y1 = g->Y[1], K0 = g->Kd[0], K1 = g->Kd[1];
    int64_t s0 = j->a->strides.v[0], s1 = j->a->strides.v[1], d0 = j->a->rhs_dilation.v[0], d1 = j->a->rhs_dilation.v[1];
    int64_t q0 = j->a->pad_low.v[0], q1 = j->a->pad_low.v[1];
    for (int64_t pl = p0; pl < p1; pl++) { /* plane = (output image, output channel = group) */
        int64_t n = pl / g->O, o = pl % g->O;
        const float *xb = j->x + (o * g->Nout + n) * g->C * g->SI, *wb = j->w + o * g->I * g->KS;
        plane_operands(j, buf, &xb, g->I * g->SI, &wb, g->I * g->KS);
        /* Up to 16 outputs at a time, each with 16 partial sums: a kernel row is read once for all of them
         * (from L1) rather than once per output (a plane's operands, 200 KB for 8 x 56 x 56, came from L2 9
         * times: that bandwidth bound the loop). */
        for (int64_t yb = 0; yb < Y0 * Y1; yb += 16) {
            int ny = Y0 * Y1 - yb < 16 ? (int)(Y0 * Y1 - yb) : 16;
            float lane[16][16];
            int64_t off[16], lo[16], hi[16];
            memset(lane, 0, sizeof lane);
            for (int t = 0; t < ny; t++) { /* ix = k1 * d1 + off */
                off[t] = ((yb + t) % Y1) * s1 - q1;
                conv_run_range(off[t], d1, X1, K1, &lo[t], &hi[t]);
            }
            for (int64_t i = 0; i < g->I; i++)
                for (int64_t k0 = 0; k0 < K0; k0++) {
                    const float *wrow = wb + (i * K0 + k0) * K1;
                    for (int t = 0; t < ny; t++) {
                        int64_t iy = ((yb + t) / Y1) * s0 + k0 * d0 - q0;
                        if (iy < 0 || iy >= X0) continue;
                        dot_run(lane[t], wrow, xb + i * g->SI + iy * X1, off[t], d1, lo[t], hi[t]);
                    }
                }
            for (int t = 0; t < ny; t++) {
                float acc = 0.0f;
                for (int u = 0; u < 16; u++) acc += lane[t][u];
                j->out[pl * g->SO + yb + t] = acc;
            }
        }
    }
    free(buf);
}

/* A stencil kernel over (image, output channel) planes, on operands rounded to bf16 at DEFAULT. */
static tt_status run_stencil(const tt_ir_node *node, const conv_geom *g, const float *x, const float *w, float *out,
                             tt_host_range_fn planes) {
    stencil_job j = {.g = g, .a = &node->attrs.conv, .x = x, .w = w, .out = out,
                     .round = node->attrs.conv.precision == TT_PRECISION_DEFAULT};
    int64_t plane_work = g->SO * g->KS * g->I;
    tt_host_parallel_for(g->Nout * g->O, 1 + 65536 / (plane_work > 0 ? plane_work : 1), planes, &j);
    if (j.failed) return tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory rounding operands to bf16");
    return TT_OK;
}

/* ---- transposed (col2im) -------------------------------------------------------------------------------- */

typedef struct col2im_job {
    const conv_geom *g;
    const conv_attrs *a;
    const float *P;  /* [G][KS][Og][SI]: P for one image */
    float *out;      /* that image's [O][SO] */
} col2im_job;

/* out[o] = sum over k of P_k[o] placed at y_s = i_s * lhs_dilation_s + pad_low_s - k_s * rhs_dilation_s. */
static void col2im_planes(void *user, int64_t o0, int64_t o1) {
    const col2im_job *j = user;
    const conv_geom *g = j->g;
    int S = g->S;
    int64_t Xl = g->X[S - 1], Yl = g->Y[S - 1], outer = g->SI / Xl;
    int64_t ldl = j->a->lhs_dilation.v[S - 1];
    for (int64_t o = o0; o < o1; o++) {
        float *plane = j->out + o * g->SO;
        memset(plane, 0, (size_t)g->SO * sizeof *plane);
        int64_t grp = o / g->Og, ol = o % g->Og;
        for (int64_t k = 0; k < g->KS; k++) {
            const float *src = j->P + ((grp * g->KS + k) * g->Og + ol) * g->SI;
            int64_t kk[TT_MAX_RANK] = {0};
            conv_unravel(S, g->Kd, k, kk);
            /* last dim: y = i * ldl + base, i in [lo, hi) */
            int64_t base = j->a->pad_low.v[S - 1] - kk[S - 1] * j->a->rhs_dilation.v[S - 1], lo, hi;
            conv_run_range(base, ldl, Yl, Xl, &lo, &hi);
            int64_t ii[TT_MAX_RANK] = {0};
            for (int64_t q = 0; q < outer; q++) { /* outer input positions by odometer */
                int64_t yoff = 0;
                bool ok = true;
                for (int s = 0; s < S - 1; s++) {
                    int64_t ys = ii[s] * j->a->lhs_dilation.v[s] + j->a->pad_low.v[s] - kk[s] * j->a->rhs_dilation.v[s];
                    if (ys < 0 || ys >= g->Y[s]) ok = false;
                    yoff = yoff * g->Y[s] + ys;
                }
                if (ok) { /* base may be negative: indices are formed inside [lo, hi) only */
                    int64_t at = yoff * Yl + base;
                    const float *srow = src + q * Xl;
                    for (int64_t i = lo; i < hi; i++) plane[at + i * ldl] += srow[i];
                }
                for (int s = S - 2; s >= 0; s--) {
                    if (++ii[s] < g->X[s]) break;
                    ii[s] = 0;
                }
            }
        }
    }
}

#define COL2IM_MAX_BYTES ((int64_t)256 << 20) /* P per image; larger ones keep im2col's bounded scratch */

static tt_status run_col2im(const tt_ir_node *node, const conv_geom *g, const float *x, const float *w, float *out) {
    int64_t per_img = g->G * g->KS * g->Og * g->SI;
    if (g->SI == 0) { /* an empty input: only zeros reach the output */
        memset(out, 0, (size_t)(g->N * g->O * g->SO) * sizeof *out);
        return TT_OK;
    }
    float *P = malloc((size_t)(per_img > 0 ? per_img : 1) * sizeof *P);
    if (!P) return tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: cannot allocate %lld bytes for col2im",
                            (long long)per_img * 4);
    tt_status st = TT_OK;
    for (int64_t n = 0; n < g->N && st == TT_OK; n++) {
        /* P[grp][k] = W[grp][:, :, k] . x[n][grp]: A_k[o][c] = W[(grp * Og + o) * I + c][k] */
        for (int64_t grp = 0; grp < g->G && st == TT_OK; grp++)
            st = tt_host_gemm_f32(g->KS, g->Og, g->SI, g->I, w + grp * g->Og * g->I * g->KS, 1, g->I * g->KS, g->KS,
                                  x + (n * g->C + grp * g->I) * g->SI, 0, g->SI, 1, P + grp * g->KS * g->Og * g->SI,
                                  g->Og * g->SI, g->SI, node->attrs.conv.precision);
        if (st != TT_OK) break;
        col2im_job j = {g, &node->attrs.conv, P, out + n * g->O * g->SO};
        tt_host_parallel_for(g->O, 1 + 65536 / (g->KS * g->SI > 0 ? g->KS * g->SI : 1), col2im_planes, &j);
    }
    free(P);
    return st;
}

/* ---- dispatch ------------------------------------------------------------------------------------------- */

static bool f32_bf16_or_exact(const tt_ir_node *node, tt_dtype cd) {
    tt_precision pr = node->attrs.conv.precision;
    return cd == TT_F32 && (pr == TT_PRECISION_DEFAULT || pr == TT_PRECISION_FP32);
}

static bool no_lhs_dilation(const tt_ir_node *node, const conv_geom *g) {
    for (int s = 0; s < g->S; s++)
        if (node->attrs.conv.lhs_dilation.v[s] != 1) return false;
    return true;
}

bool tt_host_conv_direct(const tt_ir_node *node, const conv_geom *g, tt_dtype cd, const void *x, const void *w,
                         void *out, tt_status *st) {
    if (f32_bf16_or_exact(node, cd) && g->S == 2 && no_lhs_dilation(node, g)) {
        if (!g->batch_groups && g->I == 1 && g->G == g->C && g->G > 1) {
            *st = run_stencil(node, g, x, w, out, dw_planes);
            return true;
        }
        if (g->batch_groups && g->Og == 1) {
            *st = run_stencil(node, g, x, w, out, dwg_planes);
            return true;
        }
    }
    if (cd == TT_F32 && !g->batch_groups && !no_lhs_dilation(node, g)) {
        for (int s = 0; s < g->S; s++)
            if (node->attrs.conv.strides.v[s] != 1) return false;
        if (g->KS * g->O * g->SI * 4 > COL2IM_MAX_BYTES) return false;
        *st = run_col2im(node, g, x, w, out);
        return true;
    }
    return false;
}
