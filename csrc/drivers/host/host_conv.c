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
 */
#include "host_kernels.h"

#include <stdlib.h>
#include <string.h>


#define COL_BUDGET_BYTES ((int64_t)8 << 20) /* im2col scratch per batched GEMM call: stays cache-warm */

typedef struct conv_geom {
    int S;                                  /* spatial rank */
    int64_t N, C, O, I, G, Nout, Og;        /* G = number of groups (feature or batch), Og = O / G */
    bool batch_groups;                      /* G counts batch groups (else feature groups) */
    int64_t X[TT_MAX_RANK], Kd[TT_MAX_RANK], Y[TT_MAX_RANK];
    int64_t SI, KS, SO;                     /* products of X, Kd, Y */
    int64_t *tab[TT_MAX_RANK];              /* per spatial dim: input index for (kernel pos, output pos), or -1 */
} conv_geom;

typedef struct col_job {
    const conv_geom *g;
    const void *x; /* compute-typed input [N, C, SI] */
    void *col;     /* [n_img][G][I*KS][SO] */
    int64_t img0;  /* first output image of this call */
    size_t esz;
} col_job;

/* Rows of col: r = ((img * G + grp) * I + c) * KS + kpos. */
static void col_rows(void *user, int64_t r0, int64_t r1) {
    const col_job *j = user;
    const conv_geom *g = j->g;
    int S = g->S;
    for (int64_t r = r0; r < r1; r++) {
        int64_t kpos = r % g->KS, t = r / g->KS;
        int64_t c = t % g->I;
        t /= g->I;
        int64_t grp = t % g->G, img = t / g->G + j->img0;
        int64_t nb = g->batch_groups ? grp * g->Nout + img : img;
        int64_t ch = g->batch_groups ? c : grp * g->I + c;
        int64_t base = (nb * g->C + ch) * g->SI;
        int64_t kk[TT_MAX_RANK], rem = kpos;
        for (int s = S - 1; s >= 0; s--) {
            kk[s] = rem % g->Kd[s];
            rem /= g->Kd[s];
        }
        /* Outer output positions by odometer; the last dim as a straight loop through its table row. */
        int64_t Ylast = g->Y[S - 1], outer = g->SO / (Ylast ? Ylast : 1);
        const int64_t *last = g->tab[S - 1] + kk[S - 1] * Ylast;
        int64_t oi[TT_MAX_RANK] = {0};
        char *dst = (char *)j->col + (size_t)(r * g->SO) * j->esz;
        for (int64_t q = 0; q < outer; q++) {
            int64_t off = 0;
            bool ok = true;
            for (int s = 0; s < S - 1; s++) {
                int64_t ip = g->tab[s][kk[s] * g->Y[s] + oi[s]];
                if (ip < 0) ok = false;
                off = off * g->X[s] + (ip < 0 ? 0 : ip);
            }
            off = base + off * g->X[S - 1];
            if (j->esz == 4) {
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
    void *xo = NULL, *wo = NULL, *co = NULL, *col = NULL;
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
        /* Images per call: all groups of one image, or (single group) as many images as the budget allows. */
        int64_t per_img = g.G * K * g.SO * (int64_t)esz;
        int64_t imgs = g.G == 1 ? COL_BUDGET_BYTES / (per_img > 0 ? per_img : 1) : 1;
        if (imgs < 1) imgs = 1;
        if (imgs > g.Nout) imgs = g.Nout;
        col = malloc((size_t)(imgs * per_img > 0 ? imgs * per_img : 1));
        if (!col) {
            st = tt_error(TT_STATUS_OUT_OF_MEMORY, "convolution: cannot allocate %lld bytes of im2col scratch",
                          (long long)(imgs * per_img));
            goto done;
        }
        for (int64_t n0 = 0; n0 < g.Nout && st == TT_OK; n0 += imgs) {
            int64_t ni = g.Nout - n0 < imgs ? g.Nout - n0 : imgs;
            col_job cj = {&g, xv, col, n0, esz};
            tt_host_parallel_for(ni * g.G * K, 1 + 65536 / (g.SO > 0 ? g.SO : 1), col_rows, &cj);
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
    if (st == TT_OK && co) tt_host_store_row(cd, co, total, ot->dtype, out, 0);
done:
    for (int s = 0; s < g.S; s++) free(g.tab[s]);
    free(xo);
    free(wo);
    free(co);
    free(col);
    return st;
}
