/* host_conv.c — StableHLO convolution in PyTorch layouts for the host driver: im2col + the GEMMs.
 *
 * Layouts: input [N, C, X...], kernel [O, C / feature_groups, K...], output [N / batch_groups, O, Y...], with
 * 1 to TT_MAX_RANK - 2 spatial dims. Semantics per spatial dim: the input is dilated by lhs_dilation (zeros
 * between elements: transposed convolution), padded by pad_low / pad_high (may be negative), and the kernel,
 * dilated by rhs_dilation, slides with the stride. Groups: with feature_group_count G, output channels
 * [g*O/G, (g+1)*O/G) see input channels [g*C/G, (g+1)*C/G); with batch_group_count G (weight gradients of
 * grouped convs), output channels [g*O/G, ...) see input batch entries [g*N/G, (g+1)*N/G).
 *
 * Per image, the group's input window is unfolded into col [I*KS, Y] (I = kernel input channels, KS = kernel
 * positions, Y = output positions), and out[o, y] = W[o, :] . col[:, y] is one GEMM per group (batched), with
 * the node's precision on the f32 path. With a single group several images share one batched GEMM call.
 * With few output positions per image (a weight gradient: Y = the kernel's positions, the "images" are input
 * channels and the contraction runs over batch x space), per-image GEMMs would be matrix-vector products that
 * stream W once per image: there the images sit side by side as columns, col [G][I*KS][images*Y], one GEMM per
 * group covers them all, and its [O][images*Y] result is scattered to [images][O][Y].
 * Two variants keep col in cache (f32, one group): with few output positions and a unit kernel dilation (weight
 * gradients) col is made a chunk of contraction rows at a time and the GEMMs sum the chunks into the result; with
 * an image's col above a few MB (exact f32) it is made a band of output rows at a time. Depthwise convolutions,
 * their weight gradients and lhs-dilated (transposed) convolutions take direct kernels (host_conv_direct.c).
 */
#include "host_conv_internal.h"

#include <stdlib.h>
#include <string.h>

#define COL_BUDGET_BYTES ((int64_t)8 << 20) /* im2col scratch per batched GEMM call: stays cache-warm */
#define WIDE_SO 64 /* output positions per image below which images become GEMM columns */

typedef struct col_job {
    const conv_geom *g;
    const void *x; /* compute-typed input [N, C, SI] */
    void *col;     /* [n_img][G][I*KS][SO] */
    int64_t img0;  /* first output image of this call */
    int64_t n_img; /* images in this call */
    bool wide;     /* col [G][I*KS][n_img*SO] (images side by side), else [n_img][G][I*KS][SO] */
    int64_t q0, q1; /* not wide: the outer output rows (all dims but the last) this call fills, of each image */
    size_t esz;
} col_job;

/* d[y] = x[at + y * st] for y in [lo, hi), zero elsewhere in [0, n); esz 4 or 8. at may be negative (padding):
 * an index is only formed inside [lo, hi). */
TT_HOST_VEC_CLONES static void run_copy(char *restrict d, const void *restrict x, size_t esz, int64_t at, int64_t st,
                                        int64_t lo, int64_t hi, int64_t n) {
    memset(d, 0, (size_t)lo * esz);
    if (esz == 4) {
        uint32_t *o = (uint32_t *)(void *)d;
        const uint32_t *xs = x;
        if (st == 1 && hi > lo) memcpy(o + lo, xs + (at + lo), (size_t)(hi - lo) * esz);
        else for (int64_t y = lo; y < hi; y++) o[y] = xs[at + y * st];
    } else {
        uint64_t *o = (uint64_t *)(void *)d;
        const uint64_t *xs = x;
        if (st == 1 && hi > lo) memcpy(o + lo, xs + (at + lo), (size_t)(hi - lo) * esz);
        else for (int64_t y = lo; y < hi; y++) o[y] = xs[at + y * st];
    }
    memset(d + (size_t)hi * esz, 0, (size_t)(n - hi) * esz);
}

/* One row of col: the values kernel position kpos of input channel c (of group grp) sees in image img at the
 * output positions of outer rows [q0, q1) (all of them: SO values). */
static void col_fill(const col_job *j, int64_t grp, int64_t c, int64_t kpos, int64_t img, char *dst) {
    const conv_geom *g = j->g;
    int S = g->S;
    int64_t nb = g->batch_groups ? grp * g->Nout + img : img;
    int64_t ch = g->batch_groups ? c : grp * g->I + c;
    int64_t base = (nb * g->C + ch) * g->SI;
    int64_t kk[TT_MAX_RANK] = {0}, oi[TT_MAX_RANK] = {0};
    conv_unravel(S, g->Kd, kpos, kk);
    /* Outer output positions by odometer from row q0; the last dim as a run (or through its table row). */
    int64_t Ylast = g->Y[S - 1];
    const int64_t *last = g->tab[S - 1] + kk[S - 1] * Ylast;
    conv_unravel(S - 1, g->Y, j->q0, oi);
    for (int64_t q = 0; q < j->q1 - j->q0; q++) {
        int64_t off;
        bool ok = conv_outer_offset(g, kk, oi, &off);
        off = base + off * g->X[S - 1];
        if (g->dense_last) { /* a strided run of the input row between zeros: no per-element table */
            int64_t kof = kk[S - 1] * g->rd_last - g->pl_last, lo, hi;
            conv_run_range(kof, g->st_last, g->X[S - 1], Ylast, &lo, &hi);
            if (!ok) lo = hi = 0;
            run_copy(dst + (size_t)(q * Ylast) * j->esz, j->x, j->esz, off + kof, g->st_last, lo, hi, Ylast);
        } else if (j->esz == 4) {
            uint32_t *d = (uint32_t *)dst + q * Ylast;
            const uint32_t *src = (const uint32_t *)j->x + off;
            for (int64_t y = 0; y < Ylast; y++) d[y] = ok && last[y] >= 0 ? src[last[y]] : 0;
        } else {
            uint64_t *d = (uint64_t *)dst + q * Ylast;
            const uint64_t *src = (const uint64_t *)j->x + off;
            for (int64_t y = 0; y < Ylast; y++) d[y] = ok && last[y] >= 0 ? src[last[y]] : 0;
        }
        for (int s = S - 2; s >= 0; s--) {
            if (++oi[s] < g->Y[s]) break;
            oi[s] = 0;
        }
    }
}

/* Where kernel position kpos reads in a channel's plane for each of the SO output positions (-1: a zero). */
static void col_offsets(const conv_geom *g, int64_t kpos, int64_t *offs) {
    int64_t kk[TT_MAX_RANK] = {0}, oi[TT_MAX_RANK] = {0};
    conv_unravel(g->S, g->Kd, kpos, kk);
    for (int64_t q = 0; q < g->SO; q++) {
        int64_t off = 0;
        for (int s = 0; s < g->S && off >= 0; s++) {
            int64_t ip = g->tab[s][kk[s] * g->Y[s] + oi[s]];
            off = ip < 0 ? -1 : off * g->X[s] + ip;
        }
        offs[q] = off;
        for (int s = g->S - 1; s >= 0; s--) {
            if (++oi[s] < g->Y[s]) break;
            oi[s] = 0;
        }
    }
}

/* Rows of col: r = ((img * G + grp) * I + c) * KS + kpos, or with images as columns r = (grp * I + c) * KS + kpos,
 * each row holding every image of the call side by side. */
static void col_rows(void *user, int64_t r0, int64_t r1) {
    const col_job *j = user;
    const conv_geom *g = j->g;
    for (int64_t r = r0; r < r1; r++) {
        int64_t kpos = r % g->KS, t = r / g->KS;
        int64_t c = t % g->I;
        t /= g->I;
        if (j->wide) { /* where kpos reads in a channel's plane, once; then that gather from every image */
            int64_t offs[WIDE_SO];
            col_offsets(g, kpos, offs);
            int64_t ch = g->batch_groups ? c : t * g->I + c;
            for (int64_t local = 0; local < j->n_img; local++) {
                int64_t img = j->img0 + local, nb = g->batch_groups ? t * g->Nout + img : img;
                size_t plane = (size_t)((nb * g->C + ch) * g->SI), at = (size_t)((r * j->n_img + local) * g->SO);
                if (j->esz == 4) {
                    const uint32_t *src = (const uint32_t *)j->x + plane;
                    uint32_t *d = (uint32_t *)j->col + at;
                    for (int64_t y = 0; y < g->SO; y++) d[y] = offs[y] >= 0 ? src[offs[y]] : 0;
                } else {
                    const uint64_t *src = (const uint64_t *)j->x + plane;
                    uint64_t *d = (uint64_t *)j->col + at;
                    for (int64_t y = 0; y < g->SO; y++) d[y] = offs[y] >= 0 ? src[offs[y]] : 0;
                }
            }
        } else {
            int64_t row_len = (j->q1 - j->q0) * g->Y[g->S - 1];
            col_fill(j, t % g->G, c, kpos, t / g->G + j->img0, (char *)j->col + (size_t)(r * row_len) * j->esz);
        }
    }
}

static tt_status conv_check(const tt_ir_node *node, const tt_ir_type *it, const tt_ir_type *kt, const tt_ir_type *ot,
                            conv_geom *g) {
    const __typeof__(node->attrs.conv) *a = &node->attrs.conv;
    if (it->rank < 3 || it->rank > TT_MAX_RANK || kt->rank != it->rank || ot->rank != it->rank)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: operands need equal rank >= 3");
    int S = it->rank - 2;
    const tt_ir_dims *lists[5] = {&a->strides, &a->pad_low, &a->pad_high, &a->lhs_dilation, &a->rhs_dilation};
    for (int i = 0; i < 5; i++) {
        if (lists[i]->n != S)
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: attribute lists need one entry per spatial dim");
        if (i == 0 || i >= 3)
            for (int s = 0; s < S; s++)
                if (lists[i]->v[s] < 1)
                    return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: strides and dilations must be >= 1");
    }
    int64_t fg = a->feature_group_count, bg = a->batch_group_count;
    g->S = S;
    g->N = it->dims[0], g->C = it->dims[1], g->O = kt->dims[0], g->I = kt->dims[1];
    if (fg < 1 || bg < 1 || (fg > 1 && bg > 1) || g->C % fg || g->O % fg || g->C / fg != g->I || g->N % bg ||
        g->O % bg)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: shapes do not match the group counts");
    g->G = fg > 1 ? fg : bg;
    g->batch_groups = bg > 1;
    g->Nout = g->N / bg;
    g->Og = g->O / g->G;
    if (ot->dims[0] != g->Nout || ot->dims[1] != g->O)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: result batch/feature dims do not match");
    g->SI = g->KS = g->SO = 1;
    for (int s = 0; s < S; s++) {
        int64_t x = it->dims[2 + s], k = kt->dims[2 + s];
        int64_t xd = x > 0 ? (x - 1) * a->lhs_dilation.v[s] + 1 : 0;
        int64_t kd = k > 0 ? (k - 1) * a->rhs_dilation.v[s] + 1 : 0;
        int64_t span = xd + a->pad_low.v[s] + a->pad_high.v[s] - kd;
        int64_t y = span < 0 || k == 0 ? -1 : span / a->strides.v[s] + 1;
        if (y != ot->dims[2 + s])
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: spatial dim %d of the result is %lld, expected %lld",
                            s, (long long)ot->dims[2 + s], (long long)y);
        g->X[s] = x, g->Kd[s] = k, g->Y[s] = y;
        g->SI *= x, g->KS *= k, g->SO *= y;
    }
    return TT_OK;
}

/* Per spatial dim: the input index seen by kernel position k at output position y, or -1 (padding or a hole
 * made by lhs dilation). */
static tt_status conv_tables(const tt_ir_node *node, conv_geom *g) {
    const __typeof__(node->attrs.conv) *a = &node->attrs.conv;
    for (int s = 0; s < g->S; s++) {
        int64_t n = g->Kd[s] * g->Y[s];
        g->tab[s] = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
        if (!g->tab[s]) return tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory");
        int64_t ld = a->lhs_dilation.v[s], xd = g->X[s] > 0 ? (g->X[s] - 1) * ld + 1 : 0;
        for (int64_t k = 0; k < g->Kd[s]; k++)
            for (int64_t y = 0; y < g->Y[s]; y++) {
                int64_t pos = y * a->strides.v[s] + k * a->rhs_dilation.v[s] - a->pad_low.v[s];
                g->tab[s][k * g->Y[s] + y] = pos < 0 || pos >= xd || pos % ld ? -1 : pos / ld;
            }
    }
    int L = g->S - 1;
    g->st_last = a->strides.v[L], g->rd_last = a->rhs_dilation.v[L], g->pl_last = a->pad_low.v[L];
    g->dense_last = a->lhs_dilation.v[L] == 1;
    return TT_OK;
}

/* Converts n elements of dtype dt to compute dtype cd, or borrows src when it already is cd. */
static tt_status to_compute(tt_dtype dt, const void *src, int64_t n, tt_dtype cd, const void **view, void **owned) {
    *owned = NULL;
    if (dt == cd) {
        *view = src;
        return TT_OK;
    }
    *owned = malloc((size_t)(n > 0 ? n : 1) * tt_dtype_size(cd));
    if (!*owned) return tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory");
    tt_host_load_row(dt, src, 0, 1, n, cd, *owned);
    *view = *owned;
    return TT_OK;
}

/* Whether a 1x1 kernel reads every input position once, in order (stride 1, no padding or dilation): then an
 * image's col is its input planes as they lie. */
static bool pointwise(const tt_ir_node *node, const conv_geom *g) {
    const __typeof__(node->attrs.conv) *a = &node->attrs.conv;
    if (g->KS != 1 || g->SO != g->SI || g->batch_groups) return false;
    for (int s = 0; s < g->S; s++)
        if (a->strides.v[s] != 1 || a->pad_low.v[s] != 0 || a->pad_high.v[s] != 0 || a->lhs_dilation.v[s] != 1)
            return false;
    return true;
}

/* Whether the kernel covers the input exactly (one output position, no padding, dilation or holes): then image
 * img's window is its whole channel planes, and the convolution is the GEMM out[img, o] = x[img, :] . W[o, :]
 * (a 1x1 convolution's weight gradient). */
static bool covers_input(const tt_ir_node *node, const conv_geom *g) {
    const __typeof__(node->attrs.conv) *a = &node->attrs.conv;
    if (g->SO != 1 || g->KS != g->SI) return false;
    for (int s = 0; s < g->S; s++)
        if (g->Kd[s] != g->X[s] || a->pad_low.v[s] != 0 || a->lhs_dilation.v[s] != 1 || a->rhs_dilation.v[s] != 1)
            return false;
    return true;
}

/* The images-as-columns GEMMs (see the header): res[grp][o][img*SO + y] = W_grp[o, :] . col[grp][:, img*SO + y],
 * then out[img][grp*Og + o][y] = res[grp][o][img*SO + y] for the ni images of this call. */
static tt_status wide_gemms(const conv_geom *g, const tt_ir_node *node, tt_dtype cd, const void *wv, const void *col,
                            int64_t ni, void *res, char *out, size_t esz) {
    int64_t K = g->I * g->KS, W = ni * g->SO;
    tt_status st;
    if (cd == TT_F32)
        st = tt_host_gemm_f32(g->G, g->Og, W, K, wv, g->Og * K, K, 1, col, K * W, W, 1, res, g->Og * W, W,
                              node->attrs.conv.precision);
    else if (cd == TT_F64)
        st = tt_host_gemm_f64(g->G, g->Og, W, K, wv, g->Og * K, col, K * W, res, g->Og * W, W);
    else
        st = tt_host_gemm_i64(g->G, g->Og, W, K, wv, g->Og * K, col, K * W, res, g->Og * W, W);
    if (st != TT_OK) return st;
    for (int64_t o = 0; o < g->O; o++) /* o = grp * Og + o in group: res rows are in that order */
        for (int64_t img = 0; img < ni; img++)
            memcpy(out + (size_t)((img * g->O + o) * g->SO) * esz, (const char *)res + (size_t)(o * W + img * g->SO) * esz,
                   (size_t)g->SO * esz);
    return TT_OK;
}

/* ---- images as columns, the contraction in chunks (f32, one group, no lhs dilation: weight gradients) ----
 * The wide GEMM's B is col [I*KS][Nout*SO]: tens of MB when KS is a whole feature map (8 x 56 x 56 rows of 576
 * columns for a 3x3, 64-channel weight gradient), so filling it whole and then packing it runs from memory twice.
 * Here B is made a chunk of contraction rows at a time, transposed (bt [Nout*SO][kc], kc whole kernel rows, about
 * KCHUNK_BYTES: it stays in L2 for the GEMM's packing), and the GEMMs sum the chunks' products into acc
 * [O][Nout*SO] in f32. */
#define KCHUNK_BYTES ((int64_t)1 << 20)

typedef struct kchunk_job {
    const conv_geom *g;
    const float *x;
    float *bt;     /* [Nout*SO][kc] */
    int64_t kr0;   /* first kernel row ((channel, outer kernel position) pair) of the chunk */
    int64_t nkr;   /* kernel rows in the chunk */
} kchunk_job;

/* bt rows r = img * SO + y: X[img][c][pos(y, kpos)] for the chunk's contraction positions (c, kpos). */
static void kchunk_rows(void *user, int64_t r0, int64_t r1) {
    const kchunk_job *j = user;
    const conv_geom *g = j->g;
    int S = g->S;
    int64_t Kl = g->Kd[S - 1], Xl = g->X[S - 1], kouter = g->KS / Kl, kc = j->nkr * Kl;
    for (int64_t r = r0; r < r1; r++) {
        int64_t img = r / g->SO, yy[TT_MAX_RANK] = {0};
        conv_unravel(S, g->Y, r % g->SO, yy);
        int64_t at_last = yy[S - 1] * g->st_last - g->pl_last, lo, hi; /* input index = kl * rd_last + at_last */
        conv_run_range(at_last, g->rd_last, Xl, Kl, &lo, &hi);
        float *dst = j->bt + r * kc;
        for (int64_t t = 0; t < j->nkr; t++, dst += Kl) {
            int64_t kr = j->kr0 + t, c = kr / kouter, kk[TT_MAX_RANK] = {0}, off;
            conv_unravel(S - 1, g->Kd, kr % kouter, kk);
            bool ok = conv_outer_offset(g, kk, yy, &off);
            int64_t base = ((img * g->C + c) * g->SI) + off * Xl;
            run_copy((char *)dst, j->x, 4, base + at_last, g->rd_last, ok ? lo : 0, ok ? hi : 0, Kl);
        }
    }
}

/* Kernel rows per chunk: as many as fit KCHUNK_BYTES, at least one. */
static int64_t kchunk_rows_per_chunk(const conv_geom *g) {
    int64_t Ncol = g->Nout * g->SO, Kl = g->Kd[g->S - 1], krows = g->I * (g->KS / Kl);
    int64_t per_row = Ncol * Kl * 4, nkr = KCHUNK_BYTES / (per_row > 0 ? per_row : 1);
    if (nkr < 1) nkr = 1;
    return nkr > krows ? krows : nkr;
}

/* Whether the chunks win over whole-K images-as-columns GEMMs: the chunk's GEMM sums KCHUNK_MIN_K or more
 * contraction rows (fewer, and reloading C between chunks costs about as much as the products: 112 rows for
 * a 14 x 14, 256-channel weight gradient measured 10% slower) and its rows are copies (a unit kernel dilation,
 * i.e. a forward stride of 1; strided gathers of 28 made a stride-2 weight gradient 20% slower). */
#define KCHUNK_MIN_K 256
static bool kchunk_usable(const tt_ir_node *node, const conv_geom *g, tt_dtype cd) {
    if (cd != TT_F32 || g->G != 1 || g->batch_groups || g->SO >= WIDE_SO || g->Nout < 2) return false;
    for (int s = 0; s < g->S; s++)
        if (node->attrs.conv.lhs_dilation.v[s] != 1) return false;
    if (g->Kd[g->S - 1] <= 0 || g->rd_last != 1) return false;
    int64_t kc = kchunk_rows_per_chunk(g) * g->Kd[g->S - 1];
    return kc >= KCHUNK_MIN_K || kc == g->I * g->KS;
}

static tt_status kchunk_gemms(const tt_ir_node *node, const conv_geom *g, const float *x, const float *w, float *out) {
    int64_t Ncol = g->Nout * g->SO, Kl = g->Kd[g->S - 1], krows = g->I * (g->KS / Kl), nkr = kchunk_rows_per_chunk(g);
    float *bt = malloc((size_t)(Ncol * nkr * Kl) * sizeof *bt);
    float *acc = malloc((size_t)(g->O * Ncol) * sizeof *acc);
    tt_status st = TT_OK;
    if (!bt || !acc) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory for the weight-gradient chunks");
        goto done;
    }
    for (int64_t kr0 = 0; kr0 < krows && st == TT_OK; kr0 += nkr) {
        int64_t n = krows - kr0 < nkr ? krows - kr0 : nkr, kc = n * Kl;
        kchunk_job j = {g, x, bt, kr0, n};
        tt_host_parallel_for(Ncol, 1 + 65536 / (kc > 0 ? kc : 1), kchunk_rows, &j);
        st = (kr0 == 0 ? tt_host_gemm_f32 : tt_host_gemm_f32_acc)(1, g->O, Ncol, kc, w + kr0 * Kl, 0, g->I * g->KS, 1,
                                                                 bt, 0, 1, kc, acc, 0, Ncol, node->attrs.conv.precision);
    }
    if (st == TT_OK) /* acc [O][img * SO + y] -> out [img][O][y] */
        for (int64_t o = 0; o < g->O; o++)
            for (int64_t img = 0; img < g->Nout; img++)
                memcpy(out + (img * g->O + o) * g->SO, acc + o * Ncol + img * g->SO, (size_t)g->SO * sizeof *out);
done:
    free(bt);
    free(acc);
    return st;
}

/* ---- one group, large images: im2col a band of output rows at a time ---------------------------------
 * An image's col [I*KS][SO] is MBs (576 x 3136 floats for a 3x3, 64-channel conv at 56 x 56): written to memory,
 * then read back by the GEMM's packing. A band of output rows whose col fits TILE_BYTES is filled and multiplied
 * while it is in L2; the GEMM writes the band's columns of the image's result in place (ldc = SO). */
#define TILE_BYTES ((int64_t)1 << 20)
#define TILE_ABOVE ((int64_t)4 << 20) /* an image's col above which bands pay (3.6 MB ones measured no faster) */

/* Exact f32 only: the GEMM reads W in place there; the bf16 passes repack it per call, which made DEFAULT's bands
 * slower than whole images. */
static bool tiles_usable(const tt_ir_node *node, const conv_geom *g, tt_dtype cd) {
    int64_t Yl = g->Y[g->S - 1];
    return cd == TT_F32 && node->attrs.conv.precision == TT_PRECISION_FP32 && g->G == 1 && !g->batch_groups &&
           Yl > 0 && g->SO / Yl > 1 && g->I * g->KS * g->SO * 4 > TILE_ABOVE;
}

static tt_status tiled_gemms(const tt_ir_node *node, const conv_geom *g, const float *x, const float *w, float *out) {
    int64_t K = g->I * g->KS, Yl = g->Y[g->S - 1], rows = g->SO / Yl;
    int64_t band = TILE_BYTES / (K * Yl * 4);
    if (band < 1) band = 1;
    if (band > rows) band = rows;
    float *col = malloc((size_t)(K * band * Yl) * sizeof *col);
    if (!col) return tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory for an im2col band");
    tt_status st = TT_OK;
    for (int64_t img = 0; img < g->Nout && st == TT_OK; img++)
        for (int64_t q0 = 0; q0 < rows && st == TT_OK; q0 += band) {
            int64_t q1 = q0 + band < rows ? q0 + band : rows, n = (q1 - q0) * Yl;
            col_job cj = {.g = g, .x = x, .col = col, .img0 = img, .n_img = 1, .esz = 4, .q0 = q0, .q1 = q1};
            tt_host_parallel_for(K, 1 + 65536 / n, col_rows, &cj);
            st = tt_host_gemm_f32(1, g->O, n, K, w, 0, K, 1, col, 0, n, 1, out + img * g->O * g->SO + q0 * Yl, 0, g->SO,
                                  node->attrs.conv.precision);
        }
    free(col);
    return st;
}

tt_status tt_host_convolution(const tt_ir_program *p, const tt_ir_node *node, const void *input, const void *kernel,
                              void *out) {
    if (!p || !node || node->n_inputs != 2 || node->n_outputs < 1)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "convolution: malformed node");
    const tt_ir_type *it = &p->types[p->operands[node->inputs_offset]];
    const tt_ir_type *kt = &p->types[p->operands[node->inputs_offset + 1]];
    const tt_ir_type *ot = &p->types[node->outputs[0]];
    if ((unsigned)it->dtype >= TT_DTYPE_COUNT || (unsigned)ot->dtype >= TT_DTYPE_COUNT)
        return tt_error(TT_STATUS_TYPE, "convolution: bad dtype");
    tt_dtype cd = (tt_dtype)tt_host_compute_dtype(it->dtype);
    if (kt->dtype != it->dtype)
        return tt_error(TT_STATUS_TYPE, "convolution: input %s and kernel %s dtypes differ", tt_dtype_name(it->dtype),
                        tt_dtype_name(kt->dtype));
    conv_geom g;
    memset(&g, 0, sizeof g);
    tt_status st = conv_check(node, it, kt, ot, &g);
    if (st != TT_OK) return st;
    int64_t total = tt_numel(ot->rank, ot->dims);
    if (total == 0) return TT_OK;
    size_t esz = tt_dtype_size(cd);
    int64_t K = g.I * g.KS;
    const void *xv = NULL, *wv = NULL;
    void *xo = NULL, *wo = NULL, *co = NULL, *col = NULL, *wres = NULL;
    void *C = out;
    if ((st = conv_tables(node, &g)) != TT_OK) goto done;
    if ((st = to_compute(it->dtype, input, tt_numel(it->rank, it->dims), cd, &xv, &xo)) != TT_OK) goto done;
    if ((st = to_compute(kt->dtype, kernel, tt_numel(kt->rank, kt->dims), cd, &wv, &wo)) != TT_OK) goto done;
    if (ot->dtype != cd) {
        co = malloc((size_t)total * esz);
        if (!co) {
            st = tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: out of memory");
            goto done;
        }
        C = co;
    }
    if (K == 0) {
        memset(C, 0, (size_t)total * esz); /* empty contraction (I == 0) */
    } else {
        if (tt_host_conv_direct(node, &g, cd, xv, wv, C, &st)) goto stored;
        if (kchunk_usable(node, &g, cd)) {
            st = kchunk_gemms(node, &g, xv, wv, C);
            goto stored;
        }
        if (pointwise(node, &g)) { /* col would be the input itself: the GEMMs read it in place */
            for (int64_t img = 0; img < g.Nout && st == TT_OK; img += g.G == 1 ? g.Nout : 1) {
                int64_t batch = g.G == 1 ? g.Nout : g.G, b_bs = g.G == 1 ? g.C * g.SI : g.I * g.SI;
                int64_t a_bs = g.G == 1 ? 0 : g.Og * K, c_bs = g.G == 1 ? g.O * g.SO : g.Og * g.SO;
                size_t xoff = (size_t)(img * g.C * g.SI) * esz, coff = (size_t)(img * g.O * g.SO) * esz;
                const void *b = (const char *)xv + xoff;
                void *c = (char *)C + coff;
                if (cd == TT_F32)
                    st = tt_host_gemm_f32(batch, g.Og, g.SO, K, wv, a_bs, K, 1, b, b_bs, g.SO, 1, c, c_bs, g.SO,
                                          node->attrs.conv.precision);
                else if (cd == TT_F64)
                    st = tt_host_gemm_f64(batch, g.Og, g.SO, K, wv, a_bs, b, b_bs, c, c_bs, g.SO);
                else
                    st = tt_host_gemm_i64(batch, g.Og, g.SO, K, wv, a_bs, b, b_bs, c, c_bs, g.SO);
            }
            goto stored;
        }
        if (tiles_usable(node, &g, cd)) {
            st = tiled_gemms(node, &g, xv, wv, C);
            goto stored;
        }
        if (cd == TT_F32 && covers_input(node, &g)) { /* out[img, o] = x[img, :] . W[o, :], read in place */
            st = tt_host_gemm_f32(g.G, g.Nout, g.Og, K, xv, g.batch_groups ? g.Nout * g.C * g.SI : g.I * g.SI,
                                  g.C * g.SI, 1, wv, g.Og * K, 1, K, C, g.Og, g.O, node->attrs.conv.precision);
            goto stored;
        }
        /* Images per call: all groups of one image, or (single group, or images as columns) as many images as the
         * budget allows. */
        bool wide = g.SO < WIDE_SO && g.Nout > 1;
        int64_t per_img = g.G * K * g.SO * (int64_t)esz;
        int64_t imgs = g.G == 1 || wide ? COL_BUDGET_BYTES / (per_img > 0 ? per_img : 1) : 1;
        if (imgs < 1) imgs = 1;
        if (imgs > g.Nout) imgs = g.Nout;
        col = malloc((size_t)(imgs * per_img > 0 ? imgs * per_img : 1));
        if (wide) wres = malloc((size_t)(g.O * imgs * g.SO > 0 ? g.O * imgs * g.SO : 1) * esz); /* [G][Og][imgs*SO] */
        if (!col || (wide && !wres)) {
            st = tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: cannot allocate %lld bytes of im2col scratch",
                          (long long)(imgs * per_img));
            goto done;
        }
        for (int64_t n0 = 0; n0 < g.Nout && st == TT_OK; n0 += imgs) {
            int64_t ni = g.Nout - n0 < imgs ? g.Nout - n0 : imgs;
            col_job cj = {.g = &g, .x = xv, .col = col, .img0 = n0, .n_img = ni, .wide = wide, .esz = esz, .q0 = 0,
                          .q1 = g.SO / g.Y[g.S - 1]};
            int64_t rows = wide ? g.G * K : ni * g.G * K, row_len = wide ? ni * g.SO : g.SO;
            tt_host_parallel_for(rows, 1 + 65536 / (row_len > 0 ? row_len : 1), col_rows, &cj);
            if (wide) {
                st = wide_gemms(&g, node, cd, wv, col, ni, wres, (char *)C + (size_t)(n0 * g.O * g.SO) * esz, esz);
                continue;
            }
            /* Batch over groups (A and C step by one group) or, for one group, over images (A shared). */
            int64_t batch = g.G == 1 ? ni : g.G;
            int64_t a_bs = g.G == 1 ? 0 : g.Og * K, b_bs = K * g.SO, c_bs = g.G == 1 ? g.O * g.SO : g.Og * g.SO;
            size_t coff = (size_t)(n0 * g.O * g.SO) * esz;
            if (cd == TT_F32)
                st = tt_host_gemm_f32(batch, g.Og, g.SO, K, wv, a_bs, K, 1, col, b_bs, g.SO, 1,
                                      (float *)((char *)C + coff), c_bs, g.SO, node->attrs.conv.precision);
            else if (cd == TT_F64)
                st = tt_host_gemm_f64(batch, g.Og, g.SO, K, wv, a_bs, col, b_bs, (double *)((char *)C + coff), c_bs,
                                      g.SO);
            else
                st = tt_host_gemm_i64(batch, g.Og, g.SO, K, wv, a_bs, col, b_bs, (int64_t *)((char *)C + coff),
                                      c_bs, g.SO);
        }
    }
stored:
    if (st == TT_OK && co) tt_host_store_row(cd, co, total, ot->dtype, out, 0);
done:
    for (int s = 0; s < g.S; s++) free(g.tab[s]);
    free(xo);
    free(wo);
    free(co);
    free(col);
    free(wres);
    return st;
}
