/* host_conv_internal.h — the host convolution's shared geometry (host_conv.c: checks, im2col + GEMMs;
 * host_conv_direct.c: the direct kernels for shapes a GEMM serves badly). Not a public header. */
#ifndef TT_HOST_CONV_INTERNAL_H
#define TT_HOST_CONV_INTERNAL_H

#include "host_kernels.h"

typedef __typeof__(((tt_ir_node *)0)->attrs.conv) conv_attrs;

typedef struct conv_geom {
    int S;                                  /* spatial rank */
    int64_t N, C, O, I, G, Nout, Og;        /* G = number of groups (feature or batch), Og = O / G */
    bool batch_groups;                      /* G counts batch groups (else feature groups) */
    int64_t X[TT_MAX_RANK], Kd[TT_MAX_RANK], Y[TT_MAX_RANK];
    int64_t SI, KS, SO;                     /* products of X, Kd, Y */
    int64_t *tab[TT_MAX_RANK];              /* per spatial dim: input index for (kernel pos, output pos), or -1 */
    int64_t st_last, rd_last, pl_last;      /* the last spatial dim's stride, kernel dilation and low padding */
    bool dense_last;                        /* the last spatial dim has no lhs dilation: its reads are a strided run */
} conv_geom;

/* idx[0..n) = the row-major coordinates of flat index i over dims[0..n) (kernel or output positions). */
static inline void conv_unravel(int n, const int64_t *dims, int64_t i, int64_t *idx) {
    for (int s = n - 1; s >= 0; s--) {
        idx[s] = i % dims[s];
        i /= dims[s];
    }
}

/* The input offset (in units of the last dim's rows) that kernel position kk reads at output position yy over the
 * spatial dims before the last, through g->tab; false when it falls in padding or a hole (off is then partial). */
static inline bool conv_outer_offset(const conv_geom *g, const int64_t *kk, const int64_t *yy, int64_t *off) {
    bool ok = true;
    *off = 0;
    for (int s = 0; s < g->S - 1; s++) {
        int64_t ip = g->tab[s][kk[s] * g->Y[s] + yy[s]];
        if (ip < 0) ok = false;
        *off = *off * g->X[s] + (ip < 0 ? 0 : ip);
    }
    return ok;
}

/* [lo, hi): the k with 0 <= k * st + off < n and k < cap (the valid part of a strided run over a row of n; empty
 * when there is none). */
static inline void conv_run_range(int64_t off, int64_t st, int64_t n, int64_t cap, int64_t *lo, int64_t *hi) {
    *lo = off >= 0 ? 0 : (-off + st - 1) / st;
    *hi = n - 1 - off < 0 ? 0 : (n - 1 - off) / st + 1;
    if (*hi > cap) *hi = cap;
    if (*lo > *hi) *lo = *hi;
}

/* The direct kernels (host_conv_direct.c) for shapes the im2col GEMMs serve badly: depthwise convolutions and
 * their weight gradients (stencils), and transposed convolutions (lhs dilation: a strided conv's input gradient,
 * by col2im). True when one of them took the node; then *st is its status and out holds the result in compute
 * dtype cd (x and w are compute-typed). */
bool tt_host_conv_direct(const tt_ir_node *node, const conv_geom *g, tt_dtype cd, const void *x, const void *w,
                         void *out, tt_status *st);

#endif
