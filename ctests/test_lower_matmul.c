/* test_lower_matmul.c — the matmul, conv/pool, sort and random lowerings built into programs and run on the host
 * driver, compared with hand-computed numbers and naive C reference loops. */
#include "tt_lower_run.h"

#include <stdlib.h>

/* ---- harness: tt_lower_run.h's raw form, with f32 inputs and fp32 matmul precision ---- */

static void h_begin(r_raw *r) {
    r_raw_begin(r);
    r->ctx.precision = TT_PRECISION_FP32;
}

static bool h_shape_is(const tt_ir_type *t, int32_t rank, const int64_t *dims) {
    if (t->rank != rank) return false;
    for (int32_t i = 0; i < rank; i++)
        if (t->dims[i] != dims[i]) return false;
    return true;
}

/* Deterministic pseudo-random floats in [-1, 1). */
static void h_fill(float *x, int64_t n, uint32_t seed) {
    uint32_t s = seed * 2654435761u + 1;
    for (int64_t i = 0; i < n; i++) {
        s = s * 1664525u + 1013904223u;
        x[i] = (float)((double)(s >> 8) / (double)(1u << 24) * 2.0 - 1.0);
    }
}

static double h_max_err(const double *got, const double *want, int64_t n) {
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(got[i] - want[i]);
        if (!(e <= m)) m = e; /* NaN makes it NaN */
    }
    return m;
}

/* ---- matmul ---- */

static void test_mm_matches_hand_computed(void) {
    r_raw r;
    h_begin(&r);
    float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
    int64_t da[2] = {2, 3}, db[2] = {3, 2};
    tt_arg args[2] = {r_raw_tensor(&r, TT_F32, 2, da, a), r_raw_tensor(&r, TT_F32, 2, db, b)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::mm", args, 2, 1));
    int64_t want_dims[2] = {2, 2};
    TT_CHECK(h_shape_is(&r.out_type[0], 2, want_dims));
    if (r.out[0]) {
        TT_CHECK_NEAR(r.out[0][0], 58, 1e-5);
        TT_CHECK_NEAR(r.out[0][1], 64, 1e-5);
        TT_CHECK_NEAR(r.out[0][2], 139, 1e-5);
        TT_CHECK_NEAR(r.out[0][3], 154, 1e-5);
    }
    r_raw_end(&r);
}

static void test_mm_with_mismatched_shapes_is_a_pytorch_error(void) {
    r_raw r;
    h_begin(&r);
    float a[6] = {0}, b[20] = {0};
    int64_t da[2] = {2, 3}, db[2] = {4, 5};
    tt_arg args[2] = {r_raw_tensor(&r, TT_F32, 2, da, a), r_raw_tensor(&r, TT_F32, 2, db, b)};
    tt_status st = r_raw_exec(&r, "aten::mm", args, 2, 1);
    TT_CHECK(st == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "mat1 and mat2 shapes cannot be multiplied (2x3 and 4x5)") != NULL);
    r_raw_end(&r);
}

static void test_addmm_scales_and_broadcasts_the_bias(void) {
    r_raw r;
    h_begin(&r);
    float bias[2] = {1, -1}, a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
    int64_t dbias = 2, da[2] = {2, 3}, db[2] = {3, 2};
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 1, &dbias, bias), r_raw_tensor(&r, TT_F32, 2, da, a), r_raw_tensor(&r, TT_F32, 2, db, b), r_scalar_f(0.5),
                      r_scalar_f(2.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::addmm", args, 5, 1));
    if (r.out[0]) {
        TT_CHECK_NEAR(r.out[0][0], 0.5 + 116, 1e-4);
        TT_CHECK_NEAR(r.out[0][1], -0.5 + 128, 1e-4);
        TT_CHECK_NEAR(r.out[0][3], -0.5 + 308, 1e-4);
    }
    r_raw_end(&r);
}

static void test_addmm_with_beta_zero_ignores_nan_in_self(void) {
    r_raw r;
    h_begin(&r);
    float bias[1] = {NAN}, a[2] = {1, 2}, b[2] = {3, 4};
    int64_t d1 = 1, da[2] = {1, 2}, db[2] = {2, 1};
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 1, &d1, bias), r_raw_tensor(&r, TT_F32, 2, da, a), r_raw_tensor(&r, TT_F32, 2, db, b), r_scalar_f(0.0),
                      r_scalar_f(1.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::addmm", args, 5, 1));
    if (r.out[0]) TT_CHECK_NEAR(r.out[0][0], 11, 1e-5);
    r_raw_end(&r);
}

static void test_bmm_and_baddbmm_match_loops(void) {
    enum { B = 3, N = 4, K = 5, M = 2 };
    float a[B * N * K], b[B * K * M], c[N * M];
    h_fill(a, B * N * K, 1);
    h_fill(b, B * K * M, 2);
    h_fill(c, N * M, 3);
    double want[B * N * M], want2[B * N * M];
    for (int i = 0; i < B; i++)
        for (int n = 0; n < N; n++)
            for (int m = 0; m < M; m++) {
                double s = 0;
                for (int k = 0; k < K; k++) s += (double)a[(i * N + n) * K + k] * b[(i * K + k) * M + m];
                want[(i * N + n) * M + m] = s;
                want2[(i * N + n) * M + m] = 2.0 * c[n * M + m] + 3.0 * s;
            }
    int64_t da[3] = {B, N, K}, db[3] = {B, K, M}, dc[2] = {N, M};
    r_raw r;
    h_begin(&r);
    tt_arg args[2] = {r_raw_tensor(&r, TT_F32, 3, da, a), r_raw_tensor(&r, TT_F32, 3, db, b)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::bmm", args, 2, 1));
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], want, B * N * M) < 1e-5);
    r_raw_end(&r);
    h_begin(&r);
    tt_arg args2[5] = {r_raw_tensor(&r, TT_F32, 2, dc, c), r_raw_tensor(&r, TT_F32, 3, da, a), r_raw_tensor(&r, TT_F32, 3, db, b), r_scalar_f(2.0),
                       r_scalar_f(3.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::baddbmm", args2, 5, 1));
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], want2, B * N * M) < 1e-5);
    r_raw_end(&r);
}

static void test_addbmm_sums_over_the_batch(void) {
    enum { B = 3, N = 2, K = 4, M = 3 };
    float a[B * N * K], b[B * K * M], c[N * M];
    h_fill(a, B * N * K, 4);
    h_fill(b, B * K * M, 5);
    h_fill(c, N * M, 6);
    double want[N * M];
    for (int n = 0; n < N; n++)
        for (int m = 0; m < M; m++) {
            double s = 0;
            for (int i = 0; i < B; i++)
                for (int k = 0; k < K; k++) s += (double)a[(i * N + n) * K + k] * b[(i * K + k) * M + m];
            want[n * M + m] = c[n * M + m] + s;
        }
    int64_t da[3] = {B, N, K}, db[3] = {B, K, M}, dc[2] = {N, M};
    r_raw r;
    h_begin(&r);
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 2, dc, c), r_raw_tensor(&r, TT_F32, 3, da, a), r_raw_tensor(&r, TT_F32, 3, db, b), r_scalar_f(1.0),
                      r_scalar_f(1.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::addbmm", args, 5, 1));
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], want, N * M) < 1e-5);
    r_raw_end(&r);
}

static void test_mv_dot_and_addr(void) {
    float m[6] = {1, 2, 3, 4, 5, 6}, v[3] = {1, 0, -1}, u[2] = {2, 3}, c[6] = {1, 1, 1, 1, 1, 1};
    int64_t dm[2] = {2, 3}, dv = 3, du = 2;
    r_raw r;
    h_begin(&r);
    tt_arg a1[2] = {r_raw_tensor(&r, TT_F32, 2, dm, m), r_raw_tensor(&r, TT_F32, 1, &dv, v)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::mv", a1, 2, 1));
    if (r.out[0]) {
        TT_CHECK_NEAR(r.out[0][0], -2, 1e-6);
        TT_CHECK_NEAR(r.out[0][1], -2, 1e-6);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg a2[2] = {r_raw_tensor(&r, TT_F32, 1, &dv, m), r_raw_tensor(&r, TT_F32, 1, &dv, m + 3)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::dot", a2, 2, 1));
    if (r.out[0]) TT_CHECK_NEAR(r.out[0][0], 32, 1e-6);
    TT_CHECK(r.out_type[0].rank == 0);
    r_raw_end(&r);
    h_begin(&r);
    tt_arg a3[5] = {r_raw_tensor(&r, TT_F32, 2, dm, c), r_raw_tensor(&r, TT_F32, 1, &du, u), r_raw_tensor(&r, TT_F32, 1, &dv, v), r_scalar_f(1.0),
                    r_scalar_f(2.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::addr", a3, 5, 1));
    if (r.out[0]) {
        TT_CHECK_NEAR(r.out[0][0], 5, 1e-6);
        TT_CHECK_NEAR(r.out[0][2], -3, 1e-6);
        TT_CHECK_NEAR(r.out[0][5], -5, 1e-6);
    }
    r_raw_end(&r);
}

/* ---- convolution: naive reference loops for 2-d conv, its input and weight gradients ---- */

typedef struct ref_conv {
    int N, C, H, W, O, KH, KW, sh, sw, ph, pw, dh, dw, g, OH, OW;
} ref_conv;

static void ref_conv_init(ref_conv *c) {
    c->OH = (c->H + 2 * c->ph - c->dh * (c->KH - 1) - 1) / c->sh + 1;
    c->OW = (c->W + 2 * c->pw - c->dw * (c->KW - 1) - 1) / c->sw + 1;
}

/* Calls visit(x index, w index, y index) for every product term of the forward conv. */
#define REF_CONV_LOOP(c, BODY)                                                                                  \
    for (int n = 0; n < (c)->N; n++)                                                                            \
        for (int o = 0; o < (c)->O; o++) {                                                                      \
            int cg = (c)->C / (c)->g, og = (c)->O / (c)->g, grp = o / og;                                       \
            for (int oh = 0; oh < (c)->OH; oh++)                                                                \
                for (int ow = 0; ow < (c)->OW; ow++)                                                            \
                    for (int ci = 0; ci < cg; ci++)                                                             \
                        for (int kh = 0; kh < (c)->KH; kh++)                                                    \
                            for (int kw = 0; kw < (c)->KW; kw++) {                                              \
                                int ih = oh * (c)->sh - (c)->ph + kh * (c)->dh;                                 \
                                int iw = ow * (c)->sw - (c)->pw + kw * (c)->dw;                                 \
                                if (ih < 0 || ih >= (c)->H || iw < 0 || iw >= (c)->W) continue;                 \
                                int xi = ((n * (c)->C + grp * cg + ci) * (c)->H + ih) * (c)->W + iw;            \
                                int wi = ((o * cg + ci) * (c)->KH + kh) * (c)->KW + kw;                         \
                                int yi = ((n * (c)->O + o) * (c)->OH + oh) * (c)->OW + ow;                      \
                                BODY;                                                                           \
                            }                                                                                   \
        }

static void conv_case(ref_conv c) {
    ref_conv_init(&c);
    int nx = c.N * c.C * c.H * c.W, nw = c.O * (c.C / c.g) * c.KH * c.KW, ny = c.N * c.O * c.OH * c.OW;
    float *x = malloc(sizeof(float) * (size_t)nx), *w = malloc(sizeof(float) * (size_t)nw),
          *gy = malloc(sizeof(float) * (size_t)ny), bias[16];
    double *y = calloc((size_t)ny, sizeof(double)), *gx = calloc((size_t)nx, sizeof(double)),
           *gw = calloc((size_t)nw, sizeof(double)), gb[16] = {0};
    if (!x || !w || !gy || !y || !gx || !gw) {
        TT_CHECK(!"out of memory");
        goto out;
    }
    h_fill(x, nx, 11);
    h_fill(w, nw, 12);
    h_fill(gy, ny, 13);
    h_fill(bias, c.O, 14);
    REF_CONV_LOOP(&c, {
        y[yi] += (double)x[xi] * w[wi];
        gx[xi] += (double)gy[yi] * w[wi];
        gw[wi] += (double)gy[yi] * x[xi];
    });
    for (int i = 0; i < ny; i++) {
        int o = (i / (c.OH * c.OW)) % c.O;
        y[i] += bias[o];
        gb[o] += gy[i];
    }
    int64_t dx[4] = {c.N, c.C, c.H, c.W}, dw[4] = {c.O, c.C / c.g, c.KH, c.KW}, dy[4] = {c.N, c.O, c.OH, c.OW};
    int64_t db = c.O, stride[2] = {c.sh, c.sw}, pad[2] = {c.ph, c.pw}, dil[2] = {c.dh, c.dw}, opad[2] = {0, 0};
    /* forward */
    r_raw r;
    h_begin(&r);
    tt_arg fa[9] = {r_raw_tensor(&r, TT_F32, 4, dx, x), r_raw_tensor(&r, TT_F32, 4, dw, w), r_raw_tensor(&r, TT_F32, 1, &db, bias), r_ints(2, stride),
                    r_ints(2, pad), r_ints(2, dil), r_bool(false), r_ints(2, opad), r_int(c.g)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::convolution", fa, 9, 1));
    TT_CHECK(h_shape_is(&r.out_type[0], 4, dy));
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], y, ny) < 1e-4);
    r_raw_end(&r);
    /* backward */
    h_begin(&r);
    int64_t mask[3] = {1, 1, 1};
    tt_arg bm;
    memset(&bm, 0, sizeof bm);
    bm.kind = TT_ARG_BOOLS;
    bm.n = 3;
    bm.ints = mask;
    tt_arg ba[11] = {r_raw_tensor(&r, TT_F32, 4, dy, gy), r_raw_tensor(&r, TT_F32, 4, dx, x), r_raw_tensor(&r, TT_F32, 4, dw, w), r_ints(1, &db),
                     r_ints(2, stride), r_ints(2, pad), r_ints(2, dil), r_bool(false), r_ints(2, opad), r_int(c.g), bm};
    TT_CHECK_OK(r_raw_exec(&r, "aten::convolution_backward", ba, 11, 3));
    TT_CHECK(h_shape_is(&r.out_type[0], 4, dx));
    TT_CHECK(h_shape_is(&r.out_type[1], 4, dw));
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], gx, nx) < 1e-4);
    if (r.out[1]) TT_CHECK(h_max_err(r.out[1], gw, nw) < 1e-4);
    if (r.out[2]) TT_CHECK(h_max_err(r.out[2], gb, c.O) < 1e-4);
    r_raw_end(&r);
    /* the transposed conv of gy with w is exactly grad_input (with the output_padding that restores H, W) */
    h_begin(&r);
    int64_t op2[2] = {c.H - ((c.OH - 1) * c.sh - 2 * c.ph + c.dh * (c.KH - 1) + 1),
                      c.W - ((c.OW - 1) * c.sw - 2 * c.pw + c.dw * (c.KW - 1) + 1)};
    if (op2[0] < c.sh && op2[1] < c.sw) {
        tt_arg ta[9] = {r_raw_tensor(&r, TT_F32, 4, dy, gy), r_raw_tensor(&r, TT_F32, 4, dw, w), r_none(), r_ints(2, stride),
                        r_ints(2, pad), r_ints(2, dil), r_bool(true), r_ints(2, op2), r_int(c.g)};
        TT_CHECK_OK(r_raw_exec(&r, "aten::convolution", ta, 9, 1));
        TT_CHECK(h_shape_is(&r.out_type[0], 4, dx));
        if (r.out[0]) TT_CHECK(h_max_err(r.out[0], gx, nx) < 1e-4);
    }
    r_raw_end(&r);
    /* transposed backward: grad wrt its input is the forward conv of (its grad_output = x) ... check shapes and
     * grad_weight against the regular conv's grad_weight with roles swapped */
    h_begin(&r);
    if (op2[0] < c.sh && op2[1] < c.sw) {
        tt_arg tb[11] = {r_raw_tensor(&r, TT_F32, 4, dx, x), r_raw_tensor(&r, TT_F32, 4, dy, gy), r_raw_tensor(&r, TT_F32, 4, dw, w), r_none(),
                         r_ints(2, stride), r_ints(2, pad), r_ints(2, dil), r_bool(true), r_ints(2, op2), r_int(c.g),
                         bm};
        TT_CHECK_OK(r_raw_exec(&r, "aten::convolution_backward", tb, 11, 3));
        TT_CHECK(h_shape_is(&r.out_type[0], 4, dy));
        TT_CHECK(h_shape_is(&r.out_type[1], 4, dw));
        /* d/dgy <x, convT(gy, w)> = conv(x, w) without bias; d/dw = gw of the regular conv */
        double *y0 = malloc(sizeof(double) * (size_t)ny);
        if (y0) {
            for (int i = 0; i < ny; i++) y0[i] = y[i] - bias[(i / (c.OH * c.OW)) % c.O];
            if (r.out[0]) TT_CHECK(h_max_err(r.out[0], y0, ny) < 1e-4);
            free(y0);
        }
        if (r.out[1]) TT_CHECK(h_max_err(r.out[1], gw, nw) < 1e-4);
    }
    r_raw_end(&r);
out:
    free(x);
    free(w);
    free(gy);
    free(y);
    free(gx);
    free(gw);
}

static void test_conv2d_forward_and_backward_match_loops(void) {
    conv_case((ref_conv){.N = 2, .C = 3, .H = 6, .W = 5, .O = 4, .KH = 3, .KW = 2, .sh = 1, .sw = 1, .ph = 1,
                         .pw = 0, .dh = 1, .dw = 1, .g = 1});
}

static void test_strided_dilated_grouped_conv2d_matches_loops(void) {
    conv_case((ref_conv){.N = 2, .C = 4, .H = 9, .W = 8, .O = 6, .KH = 3, .KW = 3, .sh = 2, .sw = 3, .ph = 1,
                         .pw = 2, .dh = 2, .dw = 1, .g = 2});
    conv_case((ref_conv){.N = 1, .C = 3, .H = 7, .W = 7, .O = 3, .KH = 2, .KW = 3, .sh = 3, .sw = 2, .ph = 0,
                         .pw = 1, .dh = 1, .dw = 2, .g = 3});
}

static void test_conv_with_wrong_channels_is_a_pytorch_error(void) {
    float x[1 * 3 * 5 * 5] = {0}, w[2 * 4 * 3 * 3] = {0};
    int64_t dx[4] = {1, 3, 5, 5}, dw[4] = {2, 4, 3, 3}, one = 1, zero = 0;
    r_raw r;
    h_begin(&r);
    tt_arg fa[9] = {r_raw_tensor(&r, TT_F32, 4, dx, x), r_raw_tensor(&r, TT_F32, 4, dw, w), r_none(), r_ints(1, &one), r_ints(1, &zero),
                    r_ints(1, &one), r_bool(false), r_ints(1, &zero), r_int(1)};
    TT_CHECK(r_raw_exec(&r, "aten::convolution", fa, 9, 1) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "to have 4 channels, but got 3 channels instead") != NULL);
    r_raw_end(&r);
}


/* ---- sort ---- */

static void test_sort_and_topk_and_kthvalue(void) {
    float x[8] = {3, 1, NAN, 2, 5, 5, -1, 0};
    int64_t dx[2] = {2, 4};
    r_raw r;
    h_begin(&r);
    tt_arg a[3] = {r_raw_tensor(&r, TT_F32, 2, dx, x), r_int(-1), r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::sort", a, 3, 2));
    if (r.out[0] && r.out[1]) {
        TT_CHECK(r.out[0][0] == 1 && r.out[0][1] == 2 && r.out[0][2] == 3 && isnan(r.out[0][3]));
        TT_CHECK(r.out[1][0] == 1 && r.out[1][1] == 3 && r.out[1][2] == 0 && r.out[1][3] == 2);
        TT_CHECK(r.out[0][4] == -1 && r.out[1][4] == 2 && r.out[1][6] == 0 && r.out[1][7] == 1);
        TT_CHECK(r.out_type[1].dtype == TT_I64);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg b[5] = {r_raw_tensor(&r, TT_F32, 2, dx, x), r_int(2), r_int(1), r_bool(true), r_bool(true)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::topk", b, 5, 2));
    int64_t want[2] = {2, 2};
    TT_CHECK(h_shape_is(&r.out_type[0], 2, want));
    if (r.out[0] && r.out[1]) {
        TT_CHECK(isnan(r.out[0][0]) && r.out[1][0] == 2 && r.out[0][1] == 3 && r.out[1][1] == 0);
        TT_CHECK(r.out[0][2] == 5 && r.out[1][2] == 0 && r.out[0][3] == 5 && r.out[1][3] == 1);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg c[4] = {r_raw_tensor(&r, TT_F32, 2, dx, x), r_int(2), r_int(-1), r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::kthvalue", c, 4, 2));
    TT_CHECK(r.out_type[0].rank == 1 && r.out_type[0].dims[0] == 2);
    if (r.out[0] && r.out[1]) TT_CHECK(r.out[0][0] == 2 && r.out[1][0] == 3 && r.out[0][1] == 0 && r.out[1][1] == 3);
    r_raw_end(&r);
    h_begin(&r);
    tt_arg d[5] = {r_raw_tensor(&r, TT_F32, 2, dx, x), r_int(5), r_int(1), r_bool(true), r_bool(true)};
    TT_CHECK(r_raw_exec(&r, "aten::topk", d, 5, 2) == TT_STATUS_INVALID_ARGUMENT);
    r_raw_end(&r);
}

/* ---- random ---- */

static void rn_moments(const double *v, int64_t n, double *mean, double *sd) {
    double s = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) s += v[i];
    *mean = s / (double)n;
    for (int64_t i = 0; i < n; i++) s2 += (v[i] - *mean) * (v[i] - *mean);
    *sd = sqrt(s2 / (double)n);
}

static void test_random_ops_have_the_right_distribution(void) {
    enum { N = 20000 };
    static float z[N];
    int64_t dn = N;
    double m, sd;
    r_raw r;
    h_begin(&r);
    tt_arg u[3] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_float(-2.0), r_float(4.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::uniform", u, 3, 1));
    if (r.out[0]) {
        rn_moments(r.out[0], N, &m, &sd);
        TT_CHECK_NEAR(m, 1.0, 0.05);
        TT_CHECK_NEAR(sd, 6.0 / sqrt(12.0), 0.05);
        double lo = 1e9, hi = -1e9;
        for (int i = 0; i < N; i++) {
            lo = fmin(lo, r.out[0][i]);
            hi = fmax(hi, r.out[0][i]);
        }
        TT_CHECK(lo >= -2.0 && hi < 4.0);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg nrm[3] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_float(3.0), r_float(2.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::normal_functional", nrm, 3, 1));
    if (r.out[0]) {
        rn_moments(r.out[0], N, &m, &sd);
        TT_CHECK_NEAR(m, 3.0, 0.05);
        TT_CHECK_NEAR(sd, 2.0, 0.05);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg be[2] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_float(0.3)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::bernoulli.p", be, 2, 1));
    if (r.out[0]) {
        rn_moments(r.out[0], N, &m, &sd);
        TT_CHECK_NEAR(m, 0.3, 0.02);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg ex[2] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_float(2.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::exponential", ex, 2, 1));
    if (r.out[0]) {
        rn_moments(r.out[0], N, &m, &sd);
        TT_CHECK_NEAR(m, 0.5, 0.02);
    }
    r_raw_end(&r);
    h_begin(&r);
    tt_arg ri[3] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_int(-3), r_int(3)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::random.from", ri, 3, 1));
    if (r.out[0]) {
        int counts[6] = {0};
        bool in_range = true;
        for (int i = 0; i < N; i++) {
            double v = r.out[0][i];
            if (v < -3 || v > 2 || v != floor(v)) in_range = false;
            else counts[(int)v + 3]++;
        }
        TT_CHECK(in_range);
        for (int k = 0; k < 6; k++) TT_CHECK(abs(counts[k] - N / 6) < N / 40);
    }
    r_raw_end(&r);
}

static void test_random_with_the_same_seed_repeats(void) {
    enum { N = 64 };
    float z[N] = {0};
    int64_t dn = N;
    double first[N];
    for (int rep = 0; rep < 2; rep++) {
        r_raw r;
        h_begin(&r);
        tt_arg a[3] = {r_raw_tensor(&r, TT_F32, 1, &dn, z), r_float(0.0), r_float(1.0)};
        TT_CHECK_OK(r_raw_exec(&r, "aten::normal_functional", a, 3, 1));
        if (r.out[0]) {
            if (rep == 0) memcpy(first, r.out[0], sizeof first);
            else TT_CHECK(memcmp(first, r.out[0], sizeof first) == 0);
        }
        r_raw_end(&r);
    }
}


/* ---- pooling ---- */

static void test_max_pool2d_values_indices_and_backward(void) {
    /* one 4x4 plane, 2x2 windows, stride 2, padding 1: windows clipped at the borders */
    float x[16] = {1, 9, 2, 3, 4, 5, 6, 7, 8, 0, 11, 10, 12, 13, 15, 14};
    int64_t dx[4] = {1, 1, 4, 4}, k[2] = {2, 2}, st[2] = {2, 2}, pad[2] = {1, 1}, dil[2] = {1, 1};
    r_raw r;
    h_begin(&r);
    tt_arg a[6] = {r_raw_tensor(&r, TT_F32, 4, dx, x), r_ints(2, k), r_ints(2, st), r_ints(2, pad), r_ints(2, dil), r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::max_pool2d_with_indices", a, 6, 2));
    int64_t dy[4] = {1, 1, 3, 3};
    TT_CHECK(h_shape_is(&r.out_type[0], 4, dy) && r.out_type[1].dtype == TT_I64);
    double wv[9] = {1, 9, 3, 8, 11, 10, 12, 15, 14}, wi[9] = {0, 1, 3, 8, 10, 11, 12, 14, 15};
    if (r.out[0] && r.out[1]) {
        TT_CHECK(h_max_err(r.out[0], wv, 9) == 0);
        TT_CHECK(h_max_err(r.out[1], wi, 9) == 0);
    }
    r_raw_end(&r);
    /* backward: indices 1 and 1 twice accumulate */
    float go[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    h_begin(&r);
    tt_arg g0 = r_raw_tensor(&r, TT_F32, 4, dy, go), x0 = r_raw_tensor(&r, TT_F32, 4, dx, x);
    /* the indices come from the forward lowered into the same program */
    tt_lower_fn fwd = tt_lower_find("aten::max_pool2d_with_indices");
    tt_ir_value fo[2];
    tt_arg fa[6] = {x0, r_ints(2, k), r_ints(2, st), r_ints(2, pad), r_ints(2, dil), r_bool(false)};
    TT_CHECK(fwd && fwd(&r.ctx, fa, 6, fo, 2) == TT_OK);
    tt_arg ia;
    memset(&ia, 0, sizeof ia);
    ia.kind = TT_ARG_TENSOR;
    ia.value = fo[1];
    tt_arg b[8] = {g0, x0, r_ints(2, k), r_ints(2, st), r_ints(2, pad), r_ints(2, dil), r_bool(false), ia};
    TT_CHECK_OK(r_raw_exec(&r, "aten::max_pool2d_with_indices_backward", b, 8, 1));
    double wg[16] = {1, 2, 0, 3, 0, 0, 0, 0, 4, 0, 5, 6, 7, 0, 8, 9};
    if (r.out[0]) TT_CHECK(h_max_err(r.out[0], wg, 16) == 0);
    r_raw_end(&r);
}

static void test_avg_pool2d_divisors_and_backward(void) {
    float x[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
    int64_t dx[3] = {1, 3, 3}, k[2] = {2, 2}, st[2] = {2, 2}, pad[2] = {1, 1};
    for (int cip = 0; cip < 2; cip++) {
        r_raw r;
        h_begin(&r);
        tt_arg a[7] = {r_raw_tensor(&r, TT_F32, 3, dx, x), r_ints(2, k), r_ints(2, st), r_ints(2, pad), r_bool(false), r_bool(cip),
                       r_none()};
        TT_CHECK_OK(r_raw_exec(&r, "aten::avg_pool2d", a, 7, 1));
        int64_t dy[3] = {1, 2, 2};
        TT_CHECK(h_shape_is(&r.out_type[0], 3, dy));
        /* windows: {1}, {2,3}, {4,7}, {5,6,8,9} */
        double w0[4] = {1, 2.5, 5.5, 7}, w1[4] = {0.25, 1.25, 2.75, 7};
        if (r.out[0]) TT_CHECK(h_max_err(r.out[0], cip ? w1 : w0, 4) < 1e-6);
        r_raw_end(&r);
        float go[4] = {4, 8, 12, 16};
        h_begin(&r);
        int64_t dy3[3] = {1, 2, 2};
        tt_arg b[8] = {r_raw_tensor(&r, TT_F32, 3, dy3, go), r_raw_tensor(&r, TT_F32, 3, dx, x), r_ints(2, k), r_ints(2, st), r_ints(2, pad),
                       r_bool(false), r_bool(cip), r_none()};
        TT_CHECK_OK(r_raw_exec(&r, "aten::avg_pool2d_backward", b, 8, 1));
        double g0[9] = {4, 4, 4, 6, 4, 4, 6, 4, 4}, g1[9] = {1, 2, 2, 3, 4, 4, 3, 4, 4};
        if (r.out[0]) TT_CHECK(h_max_err(r.out[0], cip ? g1 : g0, 9) < 1e-6);
        r_raw_end(&r);
    }
}

/* @MORE_TESTS@ */

static const tt_test_case cases[] = {
    {"mm matches hand-computed numbers", test_mm_matches_hand_computed},
    {"mm with mismatched shapes is a PyTorch-style error", test_mm_with_mismatched_shapes_is_a_pytorch_error},
    {"addmm scales and broadcasts the bias", test_addmm_scales_and_broadcasts_the_bias},
    {"addmm with beta 0 ignores NaN in self", test_addmm_with_beta_zero_ignores_nan_in_self},
    {"bmm and baddbmm match loops", test_bmm_and_baddbmm_match_loops},
    {"addbmm sums over the batch", test_addbmm_sums_over_the_batch},
    {"mv, dot and addr match hand-computed numbers", test_mv_dot_and_addr},
    {"conv2d forward and backward match loops", test_conv2d_forward_and_backward_match_loops},
    {"strided, dilated, grouped conv2d matches loops", test_strided_dilated_grouped_conv2d_matches_loops},
    {"conv with wrong channels is a PyTorch-style error", test_conv_with_wrong_channels_is_a_pytorch_error},
    {"sort, topk and kthvalue order NaN last and return i64 indices", test_sort_and_topk_and_kthvalue},
    {"random ops have the right distribution", test_random_ops_have_the_right_distribution},
    {"random with the same seed repeats", test_random_with_the_same_seed_repeats},
    {"max_pool2d values, indices and backward", test_max_pool2d_values_indices_and_backward},
    {"avg_pool2d divisors and backward", test_avg_pool2d_divisors_and_backward},
    /* @MORE_CASES@ */
    {NULL, NULL},
};

int main(void) {
    return tt_test_run(cases);
}
