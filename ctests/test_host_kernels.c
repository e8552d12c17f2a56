/* test_host_kernels.c — the host driver's heavy kernels (dot_general, convolution, reduce_window) and thread pool,
 * called directly on nodes built with the IR builder, against naive double-precision reference loops. */
#include "../csrc/drivers/host/host_kernels.h"
#include "tt_test.h"

#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>


/* ---- helpers ---------------------------------------------------------------------------------------- */

static uint64_t rng_state = 88172645463325252ull;
static double rnd(void) { /* uniform in [-1, 1) */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) / (double)(1ull << 52) - 1.0;
}

static void *alloc_fill(tt_dtype dt, int64_t n, double scale) {
    void *p = calloc((size_t)(n > 0 ? n : 1), tt_dtype_size(dt));
    for (int64_t i = 0; i < n; i++) {
        double v = rnd() * scale;
        switch (dt) {
        case TT_F32: ((float *)p)[i] = (float)v; break;
        case TT_BF16: ((uint16_t *)p)[i] = tt_f32_to_bf16((float)v); break;
        case TT_F16: ((uint16_t *)p)[i] = tt_f32_to_f16((float)v); break;
        case TT_F64: ((double *)p)[i] = v; break;
        case TT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
        case TT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
        case TT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
        case TT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
        case TT_U8: ((uint8_t *)p)[i] = (uint8_t)(v < 0 ? -v : v); break;
        case TT_BOOL: ((uint8_t *)p)[i] = v > 0; break;
        default: break;
        }
    }
    return p;
}

static double get(tt_dtype dt, const void *p, int64_t i) {
    switch (dt) {
    case TT_F32: return ((const float *)p)[i];
    case TT_BF16: return tt_bf16_to_f32(((const uint16_t *)p)[i]);
    case TT_F16: return tt_f16_to_f32(((const uint16_t *)p)[i]);
    case TT_F64: return ((const double *)p)[i];
    case TT_I64: return (double)((const int64_t *)p)[i];
    case TT_I32: return ((const int32_t *)p)[i];
    case TT_I16: return ((const int16_t *)p)[i];
    case TT_I8: return ((const int8_t *)p)[i];
    case TT_U8: case TT_BOOL: return ((const uint8_t *)p)[i];
    default: return 0;
    }
}

static double bf16r(double x) { return tt_bf16_to_f32(tt_f32_to_bf16((float)x)); }

/* The program's single node of kind op (finish may add nothing else but parameters). */
static const tt_ir_node *find_node(const tt_ir_program *p, tt_ir_op op) {
    for (int32_t i = 0; i < p->n_nodes; i++)
        if (p->nodes[i].op == op) return &p->nodes[i];
    return NULL;
}

static tt_ir_program *finish(tt_ir_builder *b, tt_ir_value v) {
    tt_ir_program *p = NULL;
    if (v == TT_IR_NONE) fprintf(stderr, "  builder: %s\n", tt_last_error());
    tt_ir_builder_add_output(b, v);
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static void set_dims(tt_ir_dims *d, int n, const int64_t *v) {
    d->n = n;
    for (int i = 0; i < n; i++) d->v[i] = v[i];
}

/* ---- dot_general ------------------------------------------------------------------------------------- */

typedef struct dot_case {
    int lr, rr;
    int64_t ld[TT_MAX_RANK], rd[TT_MAX_RANK];
    int nb, nc;
    int64_t lb[4], lc[4], rb[4], rc[4];
} dot_case;

/* Reference: ref[o] = sum over contraction of f(a) * f(b) in double, where f is identity or a bf16 split part
 * combination given by mode (0 exact, 1 DEFAULT, 2 HIGH, 3 HIGHEST); scale[o] = sum |a||b|. */
static void split3(double x, double *hi, double *mid, double *lo) {
    *hi = bf16r(x);
    double r = (double)((float)x - (float)*hi);
    *mid = bf16r(r);
    *lo = bf16r(r - *mid);
}
static double prod_mode(double a, double b, int mode) {
    if (mode == 0) return a * b;
    double ah, am, al, bh, bm, bl;
    split3(a, &ah, &am, &al);
    split3(b, &bh, &bm, &bl);
    if (mode == 1) return ah * bh;
    if (mode == 2) return ah * bh + ah * bm + am * bh;
    return ah * bh + ah * bm + am * bh + ah * bl + al * bh + am * bm;
}

static void dot_reference(const dot_case *c, tt_dtype dt, const void *L, const void *R, int mode, double *ref,
                          double *scale, int64_t *n_out) {
    bool lu[TT_MAX_RANK] = {0}, ru[TT_MAX_RANK] = {0};
    for (int i = 0; i < c->nb; i++) lu[c->lb[i]] = ru[c->rb[i]] = true;
    for (int i = 0; i < c->nc; i++) lu[c->lc[i]] = ru[c->rc[i]] = true;
    int lf[TT_MAX_RANK], rf[TT_MAX_RANK], nlf = 0, nrf = 0;
    for (int i = 0; i < c->lr; i++)
        if (!lu[i]) lf[nlf++] = i;
    for (int i = 0; i < c->rr; i++)
        if (!ru[i]) rf[nrf++] = i;
    int64_t ls[TT_MAX_RANK], rs[TT_MAX_RANK];
    ls[c->lr - 1] = rs[c->rr - 1] = 1;
    for (int i = c->lr - 2; i >= 0; i--) ls[i] = ls[i + 1] * c->ld[i + 1];
    for (int i = c->rr - 2; i >= 0; i--) rs[i] = rs[i + 1] * c->rd[i + 1];
    /* Output index space: batch, lhs free, rhs free. */
    int on = c->nb + nlf + nrf;
    int64_t od[TT_MAX_RANK], cd[4];
    for (int i = 0; i < c->nb; i++) od[i] = c->ld[c->lb[i]];
    for (int i = 0; i < nlf; i++) od[c->nb + i] = c->ld[lf[i]];
    for (int i = 0; i < nrf; i++) od[c->nb + nlf + i] = c->rd[rf[i]];
    int64_t no = 1, ncon = 1;
    for (int i = 0; i < on; i++) no *= od[i];
    for (int i = 0; i < c->nc; i++) ncon *= (cd[i] = c->ld[c->lc[i]]);
    *n_out = no;
    for (int64_t o = 0; o < no; o++) {
        int64_t oi[TT_MAX_RANK], rem = o;
        for (int i = on - 1; i >= 0; i--) oi[i] = rem % od[i], rem /= od[i];
        int64_t lo = 0, ro = 0;
        for (int i = 0; i < c->nb; i++) lo += oi[i] * ls[c->lb[i]], ro += oi[i] * rs[c->rb[i]];
        for (int i = 0; i < nlf; i++) lo += oi[c->nb + i] * ls[lf[i]];
        for (int i = 0; i < nrf; i++) ro += oi[c->nb + nlf + i] * rs[rf[i]];
        double s = 0, sc = 0;
        for (int64_t k = 0; k < ncon; k++) {
            int64_t ki = k, lk = 0, rk = 0;
            for (int i = c->nc - 1; i >= 0; i--) {
                int64_t v = ki % cd[i];
                ki /= cd[i];
                lk += v * ls[c->lc[i]];
                rk += v * rs[c->rc[i]];
            }
            double a = get(dt, L, lo + lk), b = get(dt, R, ro + rk);
            s += prod_mode(a, b, mode);
            sc += fabs(a * b);
        }
        ref[o] = s;
        scale[o] = sc;
    }
}

static tt_ir_program *build_dot(const dot_case *c, tt_dtype dt, tt_dtype out_dt, tt_precision prec) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value l = tt_ir_param(b, dt, c->lr, c->ld), r = tt_ir_param(b, dt, c->rr, c->rd);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.dot.lhs_batch, c->nb, c->lb);
    set_dims(&a.dot.rhs_batch, c->nb, c->rb);
    set_dims(&a.dot.lhs_contract, c->nc, c->lc);
    set_dims(&a.dot.rhs_contract, c->nc, c->rc);
    a.dot.precision = prec;
    return finish(b, tt_ir_dot_general(b, l, r, &a, out_dt));
}

/* Runs c at every precision; checks error against the exact reference (tolerance tol_exact[prec] relative to
 * sum |a||b|) and against the bf16-split reference of that precision (tight: only accumulation order differs). */
static void check_dot_float(const dot_case *c, tt_dtype dt, tt_dtype out_dt) {
    static const double tol_exact[4] = {1.6e-2, 2e-4, 2e-6, 2e-6};
    static const int mode[4] = {1, 2, 3, 0};
    void *L = alloc_fill(dt, tt_numel(c->lr, c->ld), 1.0), *R = alloc_fill(dt, tt_numel(c->rr, c->rd), 1.0);
    for (int prec = 0; prec < 4; prec++) {
        tt_ir_program *p = build_dot(c, dt, out_dt, (tt_precision)prec);
        if (!p) continue;
        const tt_ir_node *node = find_node(p, TT_OP_DOT_GENERAL);
        TT_CHECK(node != NULL);
        int64_t no = tt_numel(p->types[node->outputs[0]].rank, p->types[node->outputs[0]].dims);
        void *out = calloc((size_t)no, tt_dtype_size(out_dt));
        double *ref = malloc((size_t)no * sizeof *ref), *refm = malloc((size_t)no * sizeof *ref);
        double *sc = malloc((size_t)no * sizeof *sc);
        int64_t n2;
        dot_reference(c, dt, L, R, 0, ref, sc, &n2);
        dot_reference(c, dt, L, R, mode[prec], refm, sc, &n2);
        TT_CHECK(n2 == no);
        TT_CHECK_OK(tt_host_dot_general(p, node, L, R, out));
        double worst = 0, worst_m = 0;
        double out_ulp = out_dt == TT_BF16 ? 8e-3 : out_dt == TT_F16 ? 1e-3 : 0; /* result rounding */
        for (int64_t i = 0; i < no; i++) {
            double v = get(out_dt, out, i), s = sc[i] + 1e-30;
            double e = fabs(v - ref[i]) / s, em = fabs(v - refm[i]) / s;
            if (fabs(v - ref[i]) > out_ulp * fabs(ref[i]) + tol_exact[prec] * s) worst = e > worst ? e : worst;
            if (fabs(v - refm[i]) > out_ulp * fabs(refm[i]) + 2e-6 * s) worst_m = em > worst_m ? em : worst_m;
        }
        if (worst > 0 || worst_m > 0)
            fprintf(stderr, "  prec %d: rel err vs exact %.3g, vs split reference %.3g\n", prec, worst, worst_m);
        TT_CHECK(worst == 0);
        TT_CHECK(worst_m == 0);
        free(out), free(ref), free(refm), free(sc);
        tt_ir_program_destroy(p);
    }
    free(L), free(R);
}

static void test_dot_batch_dims_and_transposed_contraction_at_every_precision(void) {
    /* lhs [3, 17, 2, 13]: batch dim 2, contract dims (3, 0); rhs [13, 2, 19, 3]: batch 1, contract (0, 3). */
    dot_case c = {4, 4, {3, 17, 2, 13}, {13, 2, 19, 3}, 1, 2, {2}, {3, 0}, {1}, {0, 3}};
    check_dot_float(&c, TT_F32, TT_F32);
}

static void test_dot_blocked_path_with_ragged_edges(void) {
    dot_case c = {3, 3, {2, 150, 300}, {2, 300, 290}, 1, 1, {0}, {2}, {0}, {1}};
    check_dot_float(&c, TT_F32, TT_F32);
}

static void test_dot_reads_transposed_layouts_in_place(void) {
    /* lhs stored [K, M], rhs stored [N, K] (x @ W^T): both read with strides. */
    dot_case c = {2, 2, {270, 70}, {90, 270}, 0, 1, {0}, {0}, {0}, {1}};
    check_dot_float(&c, TT_F32, TT_F32);
}

static void test_dot_column_blocks_with_transposed_weights_and_ragged_edges(void) {
    /* x @ W^T with W stored [N, K]: K not a multiple of the 16-row transpose tile nor of the k' slice, N ending in a
     * partial panel, and a batched dense B; both through the column-block path, at every ISA. */
    static const char *isas[] = {"portable", "avx2", "avx512f", ""};
    dot_case t = {2, 2, {37, 300}, {200, 300}, 0, 1, {0}, {1}, {0}, {1}};
    dot_case d = {3, 3, {3, 20, 70}, {3, 70, 150}, 1, 1, {0}, {2}, {0}, {1}};
    for (int i = 0; i < 4; i++) {
        if (*isas[i]) setenv("TORCHTPU_HOST_ISA", isas[i], 1);
        else unsetenv("TORCHTPU_HOST_ISA");
        check_dot_float(&t, TT_F32, TT_F32);
        check_dot_float(&d, TT_F32, TT_F32);
    }
}

/* The small one-pass GEMM against the definition: each C element the in-order fma chain over k of the (rounded)
 * operands, bit for bit, for ragged widths (every tile shape and mask), row tails, transposed and strided operands,
 * DEFAULT's bf16 rounding, at every ISA; and through tt_host_gemm_f32 equal to the packed blocked path's bits when
 * K fits one k slice (exact f32: one problem batched small vs the same problem alone and large enough to block). */
tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec);

tt_status tt_host_gemm_f32_acc(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                               int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                               float *C, int64_t c_bs, int64_t ldc, tt_precision prec);

/* tt_host_gemm_f32_acc sums into C on every path (small, blocked, AMX or bf16 kernels; ragged edges, a row stride
 * past N, batches): C0 + A . B against double sums of the same operands, each within f32 rounding of the terms. */
static void test_accumulating_gemm_adds_to_c_on_every_path(void) {
    static const int64_t shapes[][3] = {{5, 7, 9}, {70, 300, 90}, {33, 1000, 17}};
    static const tt_precision precs[] = {TT_PRECISION_FP32, TT_PRECISION_DEFAULT, TT_PRECISION_HIGH};
    for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
        for (size_t p = 0; p < sizeof precs / sizeof precs[0]; p++) {
            int64_t M = shapes[c][0], K = shapes[c][1], N = shapes[c][2], ldc = N + 3, batch = 2;
            float *A = alloc_fill(TT_F32, batch * M * K, 1.0), *B = alloc_fill(TT_F32, batch * K * N, 1.0);
            float *C = alloc_fill(TT_F32, batch * M * ldc, 4.0), *C0 = malloc((size_t)(batch * M * ldc) * sizeof *C0);
            memcpy(C0, C, (size_t)(batch * M * ldc) * sizeof *C);
            TT_CHECK_OK(tt_host_gemm_f32_acc(batch, M, N, K, A, M * K, K, 1, B, K * N, N, 1, C, M * ldc, ldc, precs[p]));
            int bad = 0;
            for (int64_t b = 0; b < batch; b++)
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        double ref = C0[(b * M + i) * ldc + j], scale = fabs(ref);
                        for (int64_t k = 0; k < K; k++) {
                            double a = A[(b * M + i) * K + k], bb = B[(b * K + k) * N + j];
                            ref += a * bb;
                            scale += fabs(a * bb);
                        }
                        double tol = (precs[p] == TT_PRECISION_DEFAULT ? 1e-2 : 1e-5) * scale;
                        if (fabs(C[(b * M + i) * ldc + j] - ref) > tol && bad++ < 3)
                            fprintf(stderr, "  %lldx%lldx%lld prec %d C[%lld,%lld,%lld] = %g want %g\n", (long long)M,
                                    (long long)K, (long long)N, (int)precs[p], (long long)b, (long long)i,
                                    (long long)j, C[(b * M + i) * ldc + j], ref);
                    }
            for (int64_t b = 0; b < batch; b++) /* the padding past N is untouched */
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = N; j < ldc; j++)
                        if (C[(b * M + i) * ldc + j] != C0[(b * M + i) * ldc + j]) bad++;
            TT_CHECK(bad == 0);
            free(A), free(B), free(C), free(C0);
        }
}

static void test_small_gemm_is_the_fma_chain_at_every_isa(void) {
    static const char *isas[] = {"portable", "avx2", "avx512f", ""};
    static const int64_t shapes[][3] = {{1, 1, 1}, {14, 32, 14}, {14, 14, 32}, {9, 7, 17}, {8, 20, 33},
                                        {5, 3, 64}, {13, 40, 70}, {64, 64, 32}, {3, 256, 63},
                                        {80, 256, 5}}; /* A too big to round once: rounded in the tiles */
    for (int is = 0; is < 4; is++) {
        if (*isas[is]) setenv("TORCHTPU_HOST_ISA", isas[is], 1);
        else unsetenv("TORCHTPU_HOST_ISA");
        for (size_t c = 0; c < sizeof shapes / sizeof shapes[0]; c++)
            for (int variant = 0; variant < 8; variant++) {
                int64_t M = shapes[c][0], K = shapes[c][1], N = shapes[c][2];
                bool bt = variant & 1, rounded = variant & 2; /* B stored [N, K]; DEFAULT's bf16 operands */
                int64_t as = variant & 4 ? 1 : 2;             /* A's rows contiguous, or every other element */
                float *A = alloc_fill(TT_F32, M * K * 2, 2.0), *B = alloc_fill(TT_F32, K * N, 2.0);
                float *C = calloc((size_t)(M * (N + 3)), sizeof *C);
                /* A read with a column stride of as, C with a row stride of N + 3 */
                tt_host_small_gemm g = {.M = M, .N = N, .K = K, .A = A, .a_rs = as * K, .a_cs = as, .B = B,
                                        .b_rs = bt ? 1 : N, .b_cs = bt ? K : 1, .C = C, .ldc = N + 3,
                                        .round_a = rounded, .round_b = rounded,
                                        .avx512 = tt_host_cpu_has("avx512f")};
                TT_CHECK_OK(tt_host_gemm_f32_small(&g));
                int bad = 0;
                for (int64_t i = 0; i < M; i++)
                    for (int64_t j = 0; j < N; j++) {
                        float acc = 0.0f;
                        for (int64_t k = 0; k < K; k++) {
                            float a = A[i * as * K + as * k], b = B[bt ? j * K + k : k * N + j];
                            if (rounded) a = tt_host_bf16_round(a), b = tt_host_bf16_round(b);
                            acc = fmaf(a, b, acc);
                        }
                        if (memcmp(&acc, &C[i * (N + 3) + j], 4) != 0 && bad++ < 3)
                            fprintf(stderr, "  isa %s %lldx%lldx%lld v%d C[%lld,%lld] = %a want %a\n", isas[is],
                                    (long long)M, (long long)K, (long long)N, variant, (long long)i, (long long)j,
                                    C[i * (N + 3) + j], acc);
                    }
                TT_CHECK(bad == 0);
                free(A);
                free(B);
                free(C);
            }
    }
    unsetenv("TORCHTPU_HOST_ISA");
    tt_host_small_gemm too_big = {.M = 1, .N = 200, .K = 100, .b_cs = 100, .b_rs = 1};
    TT_CHECK(tt_host_gemm_f32_small(&too_big) != TT_OK);
    tt_clear_error();
    /* small path (batched 8 x 100 x 40: at most SMALL_WORK_F32 per entry) vs blocked path (the same rows stacked:
     * 64 x 100 x 40) */
    float *A = alloc_fill(TT_F32, 64 * 100, 1.0), *B = alloc_fill(TT_F32, 100 * 40, 1.0);
    float *Cs = calloc(64 * 40, sizeof *Cs), *Cb = calloc(64 * 40, sizeof *Cb);
    TT_CHECK_OK(tt_host_gemm_f32(8, 8, 40, 100, A, 8 * 100, 100, 1, B, 0, 40, 1, Cs, 8 * 40, 40, TT_PRECISION_FP32));
    TT_CHECK_OK(tt_host_gemm_f32(1, 64, 40, 100, A, 0, 100, 1, B, 0, 40, 1, Cb, 0, 40, TT_PRECISION_FP32));
    TT_CHECK(memcmp(Cs, Cb, 64 * 40 * sizeof *Cs) == 0);
    free(A);
    free(B);
    free(Cs);
    free(Cb);
}

/* A thin exact product with a long K (a depthwise conv's weight gradient) runs as one fma chain per element over
 * B in place, at every ISA: bit for bit the in-order chain. */
static void test_thin_gemm_with_a_long_k_is_the_fma_chain(void) {
    static const char *isas[] = {"portable", "avx2", "avx512f", ""};
    enum { BATCH = 2, M = 3, N = 9, K = 5000 };
    float *A = alloc_fill(TT_F32, BATCH * M * K, 1.0), *B = alloc_fill(TT_F32, BATCH * K * N, 1.0);
    float *C = calloc(BATCH * M * N, sizeof *C);
    for (int is = 0; is < 4 && A && B && C; is++) {
        if (*isas[is]) setenv("TORCHTPU_HOST_ISA", isas[is], 1);
        else unsetenv("TORCHTPU_HOST_ISA");
        TT_CHECK_OK(tt_host_gemm_f32(BATCH, M, N, K, A, M * K, K, 1, B, K * N, N, 1, C, M * N, N, TT_PRECISION_FP32));
        int bad = 0;
        for (int b = 0; b < BATCH; b++)
            for (int i = 0; i < M; i++)
                for (int j = 0; j < N; j++) {
                    float acc = 0.0f;
                    for (int k = 0; k < K; k++) acc = fmaf(A[(b * M + i) * K + k], B[(b * K + k) * N + j], acc);
                    bad += memcmp(&acc, &C[(b * M + i) * N + j], sizeof acc) != 0;
                }
        TT_CHECK(bad == 0);
    }
    unsetenv("TORCHTPU_HOST_ISA");
    free(A);
    free(B);
    free(C);
}

/* The blocked GEMM runs a partial panel of rows through a kernel for exactly those rows: every row count 1..MR
 * (and beyond: M up to 2 MR + 1) gives each row the bits it gets in a problem with more rows, at every ISA, for
 * A read in place (exact f32) and packed (DEFAULT's bf16 terms: the vdpbf16ps kernel under avx512bf16). */
static void test_blocked_gemm_rows_of_a_partial_panel_equal_those_of_a_full_one(void) {
    static const char *isas[] = {"portable", "avx2", "avx512f", "avx512bf16"};
    enum { K = 100, N = 2710, MMAX = 2 * TT_GEMM_MR + 1 }; /* N: > SMALL_WORK even for one row, a ragged panel */
    float *A = alloc_fill(TT_F32, MMAX * K, 1.0), *B = alloc_fill(TT_F32, K * N, 1.0);
    float *full = calloc((size_t)MMAX * N, sizeof *full), *part = calloc((size_t)MMAX * N, sizeof *part);
    for (int is = 0; is < 4 && A && B && full && part; is++) {
        setenv("TORCHTPU_HOST_ISA", isas[is], 1);
        for (int pi = 0; pi < 2; pi++) {
            tt_precision prec = pi ? TT_PRECISION_DEFAULT : TT_PRECISION_FP32;
            TT_CHECK_OK(tt_host_gemm_f32(1, MMAX, N, K, A, 0, K, 1, B, 0, N, 1, full, 0, N, prec));
            int bad = 0;
            for (int64_t m = 1; m < MMAX; m++) {
                memset(part, 0xff, (size_t)MMAX * N * sizeof *part); /* NaNs: a row left unwritten shows */
                TT_CHECK_OK(tt_host_gemm_f32(1, m, N, K, A, 0, K, 1, B, 0, N, 1, part, 0, N, prec));
                if (memcmp(part, full, (size_t)(m * N) * sizeof *part) != 0 && bad++ < 3)
                    fprintf(stderr, "  isa %s prec %d: M = %lld differs\n", isas[is], (int)prec, (long long)m);
            }
            TT_CHECK(bad == 0);
        }
    }
    unsetenv("TORCHTPU_HOST_ISA");
    free(A);
    free(B);
    free(full);
    free(part);
}

static void test_dot_every_isa_gives_the_same_numerics(void) {
    static const char *isas[] = {"portable", "avx2", "avx512f"};
    dot_case c = {2, 2, {40, 300}, {300, 70}, 0, 1, {0}, {1}, {0}, {0}};
    for (int i = 0; i < 3; i++) {
        setenv("TORCHTPU_HOST_ISA", isas[i], 1);
        check_dot_float(&c, TT_F32, TT_F32);
    }
    unsetenv("TORCHTPU_HOST_ISA");
}

static void test_dot_bf16_and_f16_operands_with_wider_and_narrow_results(void) {
    dot_case c = {2, 2, {33, 80}, {80, 41}, 0, 1, {0}, {1}, {0}, {0}};
    check_dot_float(&c, TT_BF16, TT_F32);
    check_dot_float(&c, TT_BF16, TT_BF16);
    check_dot_float(&c, TT_F16, TT_F32);
    dot_case big = {2, 2, {64, 200}, {200, 96}, 0, 1, {0}, {1}, {0}, {0}};
    check_dot_float(&big, TT_BF16, TT_F32);
}

static void test_dot_small_matrices_and_vectors(void) {
    dot_case c4 = {2, 2, {4, 4}, {4, 4}, 0, 1, {0}, {1}, {0}, {0}};
    check_dot_float(&c4, TT_F32, TT_F32);
    dot_case vv = {1, 1, {7}, {7}, 0, 1, {0}, {0}, {0}, {0}}; /* inner product: rank-0 result */
    check_dot_float(&vv, TT_F32, TT_F32);
    dot_case outer = {1, 1, {5}, {6}, 0, 0, {0}, {0}, {0}, {0}}; /* no contraction */
    check_dot_float(&outer, TT_F32, TT_F32);
}

static void test_dot_f64_is_plain_double(void) {
    dot_case c = {3, 3, {2, 9, 31}, {2, 31, 5}, 1, 1, {0}, {2}, {0}, {1}};
    void *L = alloc_fill(TT_F64, 2 * 9 * 31, 1.0), *R = alloc_fill(TT_F64, 2 * 31 * 5, 1.0);
    tt_ir_program *p = build_dot(&c, TT_F64, TT_F64, TT_PRECISION_DEFAULT);
    const tt_ir_node *node = p ? find_node(p, TT_OP_DOT_GENERAL) : NULL;
    TT_CHECK(node != NULL);
    if (node) {
        double out[90], ref[90], sc[90];
        int64_t n;
        dot_reference(&c, TT_F64, L, R, 0, ref, sc, &n);
        TT_CHECK_OK(tt_host_dot_general(p, node, L, R, out));
        for (int64_t i = 0; i < n; i++) TT_CHECK_NEAR(out[i], ref[i], 1e-12 * sc[i]);
    }
    tt_ir_program_destroy(p);
    free(L), free(R);
}

static void test_dot_integers_accumulate_in_64_bits_and_wrap(void) {
    static const tt_dtype dts[] = {TT_I64, TT_I32, TT_I16, TT_I8, TT_U8}; /* the IR rejects bool operands */
    dot_case c = {3, 3, {2, 5, 11}, {2, 11, 3}, 1, 1, {0}, {2}, {0}, {1}};
    for (int d = 0; d < 5; d++) {
        void *L = alloc_fill(dts[d], 110, 100.0), *R = alloc_fill(dts[d], 66, 100.0);
        tt_dtype odt = dts[d] == TT_BOOL ? TT_I64 : dts[d];
        tt_ir_program *p = build_dot(&c, dts[d], odt, TT_PRECISION_DEFAULT);
        const tt_ir_node *node = p ? find_node(p, TT_OP_DOT_GENERAL) : NULL;
        TT_CHECK(node != NULL);
        if (node) {
            int64_t out[30];
            double ref[30], sc[30];
            int64_t n;
            dot_reference(&c, dts[d], L, R, 0, ref, sc, &n);
            memset(out, 0, sizeof out);
            TT_CHECK_OK(tt_host_dot_general(p, node, L, R, out));
            for (int64_t i = 0; i < n; i++) {
                /* Reference sums are exact in double here; the result wraps to the result dtype. */
                int64_t want = (int64_t)ref[i], got = (int64_t)get(odt, out, i);
                uint64_t mask = tt_dtype_size(odt) == 8 ? ~0ull : (1ull << (8 * tt_dtype_size(odt))) - 1;
                TT_CHECK((((uint64_t)want ^ (uint64_t)got) & mask) == 0);
            }
        }
        tt_ir_program_destroy(p);
        free(L), free(R);
    }
    /* i64 overflow wraps instead of trapping: (2^62) * 4 + 1 * 1 = 1 (mod 2^64). */
    dot_case v = {1, 1, {2}, {2}, 0, 1, {0}, {0}, {0}, {0}};
    int64_t a[2] = {INT64_C(1) << 62, 1}, b[2] = {4, 1}, out = 0;
    tt_ir_program *p = build_dot(&v, TT_I64, TT_I64, TT_PRECISION_DEFAULT);
    if (p) {
        TT_CHECK_OK(tt_host_dot_general(p, find_node(p, TT_OP_DOT_GENERAL), a, b, &out));
        TT_CHECK(out == 1);
    }
    tt_ir_program_destroy(p);
}

static void test_dot_default_really_rounds_operands_to_bf16(void) {
    /* 1 + 2^-10 is not a bf16: DEFAULT sees 1.0, FP32 and HIGH see the exact value. */
    dot_case v = {1, 1, {1}, {1}, 0, 1, {0}, {0}, {0}, {0}};
    float a = 1.0f + 1.0f / 1024, b = 1.0f;
    float got[4];
    for (int prec = 0; prec < 4; prec++) {
        tt_ir_program *p = build_dot(&v, TT_F32, TT_F32, (tt_precision)prec);
        got[prec] = -1;
        if (p) TT_CHECK_OK(tt_host_dot_general(p, find_node(p, TT_OP_DOT_GENERAL), &a, &b, &got[prec]));
        tt_ir_program_destroy(p);
    }
    TT_CHECK(got[TT_PRECISION_DEFAULT] == 1.0f);
    TT_CHECK(got[TT_PRECISION_HIGH] == a);
    TT_CHECK(got[TT_PRECISION_HIGHEST] == a);
    TT_CHECK(got[TT_PRECISION_FP32] == a);
}

static void test_dot_infinities_do_not_turn_into_nan_when_split(void) {
    dot_case v = {1, 1, {2}, {2}, 0, 1, {0}, {0}, {0}, {0}};
    float a[2] = {INFINITY, 1.0f}, b[2] = {1.0f, 2.0f};
    for (int prec = 0; prec < 4; prec++) {
        tt_ir_program *p = build_dot(&v, TT_F32, TT_F32, (tt_precision)prec);
        float out = 0;
        if (p) TT_CHECK_OK(tt_host_dot_general(p, find_node(p, TT_OP_DOT_GENERAL), a, b, &out));
        TT_CHECK(isinf(out) && out > 0);
        tt_ir_program_destroy(p);
    }
    /* a long row: the inf inside the 16-lane body of the finiteness check, then in its tail */
    dot_case lv = {1, 1, {100}, {100}, 0, 1, {0}, {0}, {0}, {0}};
    float la[100], lb[100];
    for (int pos = 37; pos < 100; pos += 62) {
        for (int i = 0; i < 100; i++) la[i] = 1.0f, lb[i] = 1.0f;
        la[pos] = INFINITY;
        for (int prec = 1; prec < 3; prec++) { /* HIGH, HIGHEST: the split passes' cross terms */
            tt_ir_program *p = build_dot(&lv, TT_F32, TT_F32, (tt_precision)prec);
            float out = 0;
            if (p) TT_CHECK_OK(tt_host_dot_general(p, find_node(p, TT_OP_DOT_GENERAL), la, lb, &out));
            TT_CHECK(isinf(out) && out > 0);
            tt_ir_program_destroy(p);
        }
    }
}

/* The same through the blocked paths (AMX where the CPU has it): B a weight stored [N, K] holding one inf, A
 * holding one NaN: at every precision only row 5 is NaN, column 7 elsewhere +inf, the rest finite. */
static void test_blocked_gemm_keeps_infinities_and_nans_where_they_are(void) {
    enum { M = 64, K = 300, N = 70 };
    float *A = alloc_fill(TT_F32, M * K, 0.5), *W = alloc_fill(TT_F32, N * K, 0.5), *C = calloc(M * N, sizeof *C);
    if (!A || !W || !C) goto out;
    for (int i = 0; i < M * K; i++) A[i] = fabsf(A[i]) + 0.25f;
    for (int i = 0; i < N * K; i++) W[i] = fabsf(W[i]) + 0.25f;
    W[7 * K + 11] = INFINITY;
    for (int i = 0; i < M; i++) A[i * K + 11] = 1.0f; /* bf16-exact: a split would multiply inf by its zero parts */
    A[5 * K + 3] = NAN;
    for (int prec = 0; prec < 4; prec++) {
        TT_CHECK_OK(tt_host_gemm_f32(1, M, N, K, A, 0, K, 1, W, 0, 1, K, C, 0, N, (tt_precision)prec));
        int bad = 0;
        for (int i = 0; i < M; i++)
            for (int j = 0; j < N; j++) {
                float v = C[i * N + j];
                bad += i == 5 ? !isnan(v) : j == 7 ? !(isinf(v) && v > 0) : !isfinite(v);
            }
        if (bad) fprintf(stderr, "  prec %d: %d wrong\n", prec, bad);
        TT_CHECK(bad == 0);
    }
out:
    free(A);
    free(W);
    free(C);
}

/* ---- convolution ------------------------------------------------------------------------------------- */

typedef struct conv_case {
    int S;
    int64_t N, C, O, X[3], K[3];
    int64_t stride[3], pl[3], ph[3], ld[3], rd[3];
    int64_t fg, bg;
} conv_case;

static int64_t conv_out_dim(const conv_case *c, int s) {
    int64_t xd = (c->X[s] - 1) * c->ld[s] + 1, kd = (c->K[s] - 1) * c->rd[s] + 1;
    return (xd + c->pl[s] + c->ph[s] - kd) / c->stride[s] + 1;
}

/* Naive StableHLO convolution straight from the definition. */
static void conv_reference(const conv_case *c, tt_dtype dt, const void *in, const void *w, int mode, double *ref,
                           double *scale) {
    int64_t Y[3] = {1, 1, 1}, X[3] = {1, 1, 1}, K[3] = {1, 1, 1};
    for (int s = 0; s < c->S; s++) Y[s] = conv_out_dim(c, s), X[s] = c->X[s], K[s] = c->K[s];
    int64_t I = c->C / c->fg, Nout = c->N / c->bg, SO = Y[0] * Y[1] * Y[2], SI = X[0] * X[1] * X[2];
    int64_t KS = K[0] * K[1] * K[2];
    for (int64_t n = 0; n < Nout; n++)
        for (int64_t o = 0; o < c->O; o++)
            for (int64_t y = 0; y < SO; y++) {
                int64_t yi[3] = {y / (Y[1] * Y[2]), (y / Y[2]) % Y[1], y % Y[2]};
                int64_t g = o / (c->O / c->fg), bgi = o / (c->O / c->bg);
                int64_t nb = bgi * Nout + n;
                double s = 0, sc = 0;
                for (int64_t ci = 0; ci < I; ci++)
                    for (int64_t k = 0; k < KS; k++) {
                        int64_t ki[3] = {k / (K[1] * K[2]), (k / K[2]) % K[1], k % K[2]}, xi[3] = {0, 0, 0};
                        bool inside = true;
                        for (int sd = 0; sd < c->S; sd++) {
                            int64_t pos = yi[sd] * c->stride[sd] + ki[sd] * c->rd[sd] - c->pl[sd];
                            if (pos < 0 || pos % c->ld[sd] || pos / c->ld[sd] >= c->X[sd]) inside = false;
                            else xi[sd] = pos / c->ld[sd];
                        }
                        if (!inside) continue;
                        int64_t xoff = ((nb * c->C + g * I + ci) * SI) + (xi[0] * X[1] + xi[1]) * X[2] + xi[2];
                        double a = get(dt, in, xoff), b = get(dt, w, (o * I + ci) * KS + k);
                        s += prod_mode(b, a, mode);
                        sc += fabs(a * b);
                    }
                ref[(n * c->O + o) * SO + y] = s;
                scale[(n * c->O + o) * SO + y] = sc;
            }
}

static void check_conv(const conv_case *c, tt_dtype dt, tt_dtype out_dt, tt_precision prec) {
    int64_t in_dims[5] = {c->N, c->C}, k_dims[5] = {c->O, c->C / c->fg};
    for (int s = 0; s < c->S; s++) in_dims[2 + s] = c->X[s], k_dims[2 + s] = c->K[s];
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, dt, c->S + 2, in_dims), w = tt_ir_param(b, dt, c->S + 2, k_dims);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.conv.strides, c->S, c->stride);
    set_dims(&a.conv.pad_low, c->S, c->pl);
    set_dims(&a.conv.pad_high, c->S, c->ph);
    set_dims(&a.conv.lhs_dilation, c->S, c->ld);
    set_dims(&a.conv.rhs_dilation, c->S, c->rd);
    a.conv.feature_group_count = c->fg;
    a.conv.batch_group_count = c->bg;
    a.conv.precision = prec;
    tt_ir_program *p = finish(b, tt_ir_convolution(b, x, w, &a, out_dt));
    const tt_ir_node *node = p ? find_node(p, TT_OP_CONVOLUTION) : NULL;
    TT_CHECK(node != NULL);
    if (!node) {
        tt_ir_program_destroy(p);
        return;
    }
    const tt_ir_type *ot = &p->types[node->outputs[0]];
    int64_t no = tt_numel(ot->rank, ot->dims), ni = tt_numel(c->S + 2, in_dims), nk = tt_numel(c->S + 2, k_dims);
    double scale = tt_dtype_is_float(dt) ? 1.0 : 50.0;
    void *in = alloc_fill(dt, ni, scale), *w2 = alloc_fill(dt, nk, scale);
    void *out = calloc((size_t)no, tt_dtype_size(out_dt));
    double *ref = malloc((size_t)no * sizeof *ref), *sc = malloc((size_t)no * sizeof *sc);
    int mode = tt_dtype_is_float(dt) && dt != TT_F64 ? (prec == TT_PRECISION_FP32 ? 0 : (int)prec + 1) : 0;
    conv_reference(c, dt, in, w2, mode, ref, sc);
    TT_CHECK_OK(tt_host_convolution(p, node, in, w2, out));
    int bad = 0;
    double tol = tt_dtype_is_float(dt) ? 2e-6 : 0;
    double out_ulp = out_dt == TT_BF16 ? 8e-3 : 0;
    for (int64_t i = 0; i < no; i++) {
        double v = get(out_dt, out, i);
        if (fabs(v - ref[i]) > tol * sc[i] + out_ulp * fabs(ref[i]) + (tol > 0 ? 1e-30 : 0)) {
            if (bad++ < 3) fprintf(stderr, "  conv out[%lld] = %.9g, want %.9g\n", (long long)i, v, ref[i]);
        }
    }
    TT_CHECK(bad == 0);
    free(in), free(w2), free(out), free(ref), free(sc);
    tt_ir_program_destroy(p);
}

static void test_conv2d_stride_padding_dilation_and_groups(void) {
    conv_case c = {2, 2, 4, 6, {9, 11}, {3, 2}, {2, 1}, {1, 2}, {2, 0}, {1, 1}, {2, 3}, 2, 1};
    for (int prec = 0; prec < 4; prec++) check_conv(&c, TT_F32, TT_F32, (tt_precision)prec);
    conv_case depthwise = {2, 1, 6, 6, {7, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 6, 1};
    check_conv(&depthwise, TT_F32, TT_F32, TT_PRECISION_FP32);
}

static void test_conv1d_and_3d(void) {
    conv_case c1 = {1, 3, 5, 4, {20}, {5}, {3}, {2}, {1}, {1}, {1}, 1, 1};
    check_conv(&c1, TT_F32, TT_F32, TT_PRECISION_HIGHEST);
    conv_case c3 = {3, 2, 3, 4, {5, 6, 4}, {2, 3, 2}, {1, 2, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}, {2, 1, 1}, 1, 1};
    check_conv(&c3, TT_F32, TT_F32, TT_PRECISION_DEFAULT);
    check_conv(&c3, TT_F32, TT_F32, TT_PRECISION_FP32);
}

static void test_conv_lhs_dilation_is_a_transposed_conv(void) {
    /* conv_transpose2d(stride 2, padding 1, k 3) as StableHLO: lhs_dilation 2, padding k-1-p = 1 each side. */
    conv_case c = {2, 2, 3, 5, {6, 5}, {3, 3}, {1, 1}, {1, 1}, {2, 1}, {2, 2}, {1, 1}, 1, 1};
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_FP32);
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_HIGH);
    conv_case neg = {1, 1, 2, 3, {10}, {3}, {1}, {-2}, {-1}, {3}, {1}, 1, 1}; /* negative padding crops */
    check_conv(&neg, TT_F32, TT_F32, TT_PRECISION_FP32);
}

static void test_conv_batch_group_count_as_in_grouped_weight_gradients(void) {
    conv_case c = {2, 4, 3, 6, {6, 5}, {3, 2}, {1, 1}, {1, 0}, {1, 0}, {1, 1}, {1, 2}, 1, 2};
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_FP32);
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_DEFAULT);
}

/* Shapes the direct kernels take (host_conv_direct.c): batch groups with one output per group (a depthwise
 * conv's weight gradient, long rows for the 16-lane dot products, strided and dilated), and lhs dilation with
 * feature groups and unit window strides (col2im), in 2 and 3 spatial dims. */
static void test_conv_direct_kernels_match_the_definition(void) {
    conv_case wgrad = {2, 6, 2, 3, {9, 40}, {4, 37}, {1, 1}, {1, 0}, {1, 3}, {1, 1}, {2, 1}, 1, 3};
    conv_case wgrad_strided = {2, 3, 4, 3, {11, 45}, {5, 20}, {2, 1}, {0, 2}, {1, 2}, {1, 1}, {1, 2}, 1, 3};
    conv_case transposed = {2, 2, 4, 6, {5, 4}, {3, 2}, {1, 1}, {2, 1}, {2, 0}, {2, 3}, {1, 2}, 2, 1};
    conv_case transposed3d = {3, 1, 2, 3, {3, 4, 2}, {2, 3, 2}, {1, 1, 1}, {1, 2, 0}, {0, 1, 1}, {2, 2, 3},
                              {1, 1, 1}, 1, 1};
    for (int prec = 0; prec < 4; prec += 3) { /* DEFAULT and exact */
        check_conv(&wgrad, TT_F32, TT_F32, (tt_precision)prec);
        check_conv(&wgrad_strided, TT_F32, TT_F32, (tt_precision)prec);
        check_conv(&transposed, TT_F32, TT_F32, (tt_precision)prec);
        check_conv(&transposed3d, TT_F32, TT_F32, (tt_precision)prec);
    }
    check_conv(&transposed, TT_F32, TT_F32, TT_PRECISION_HIGHEST);
    check_conv(&transposed, TT_BF16, TT_F32, TT_PRECISION_DEFAULT);
}

/* A weight gradient's shape (few output positions, many images, one group) large enough that host_conv.c's
 * contraction-chunked GEMMs take it in 40 chunks of 256 rows, summed into one result: exact and DEFAULT. */
static void test_conv_weight_gradient_in_chunks(void) {
    conv_case c = {2, 16, 4, 3, {46, 70}, {40, 64}, {1, 1}, {0, 1}, {0, 1}, {1, 1}, {1, 1}, 1, 1};
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_FP32);
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_DEFAULT);
}

static void test_conv_other_dtypes(void) {
    conv_case c = {2, 2, 4, 4, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 2, 1};
    check_conv(&c, TT_F64, TT_F64, TT_PRECISION_DEFAULT);
    check_conv(&c, TT_I32, TT_I32, TT_PRECISION_DEFAULT);
    check_conv(&c, TT_BF16, TT_BF16, TT_PRECISION_DEFAULT);
    check_conv(&c, TT_BF16, TT_F32, TT_PRECISION_DEFAULT);
}

static void test_conv_large_enough_for_the_blocked_gemm(void) {
    conv_case c = {2, 2, 16, 40, {20, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, 1, 1};
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_DEFAULT);
    check_conv(&c, TT_F32, TT_F32, TT_PRECISION_FP32);
}

/* ---- reduce_window ----------------------------------------------------------------------------------- */

static tt_ir_program *build_window(tt_dtype dt, int rank, const int64_t *dims, tt_ir_reduce_kind kind,
                                   const int64_t *win, const int64_t *str, const int64_t *pl, const int64_t *ph,
                                   const int64_t *dil) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, dt, rank, dims);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_window.kind = kind;
    set_dims(&a.reduce_window.window, rank, win);
    set_dims(&a.reduce_window.strides, rank, str);
    set_dims(&a.reduce_window.pad_low, rank, pl);
    set_dims(&a.reduce_window.pad_high, rank, ph);
    set_dims(&a.reduce_window.window_dilation, rank, dil);
    return finish(b, tt_ir_reduce_window(b, x, &a));
}

static void test_reduce_window_max_pool_with_padding_and_dilation(void) {
    int64_t dims[4] = {2, 3, 7, 8}, win[4] = {1, 1, 3, 2}, str[4] = {1, 1, 2, 2}, pl[4] = {0, 0, 1, 1},
            ph[4] = {0, 0, 1, 0}, dil[4] = {1, 1, 1, 2};
    static const tt_ir_reduce_kind kinds[4] = {TT_REDUCE_MAX, TT_REDUCE_MIN, TT_REDUCE_ADD, TT_REDUCE_MUL};
    static const tt_dtype dts[3] = {TT_F32, TT_BF16, TT_I32};
    for (int d = 0; d < 3; d++)
        for (int ki = 0; ki < 4; ki++) {
            tt_ir_program *p = build_window(dts[d], 4, dims, kinds[ki], win, str, pl, ph, dil);
            const tt_ir_node *node = p ? find_node(p, TT_OP_REDUCE_WINDOW) : NULL;
            TT_CHECK(node != NULL);
            if (!node) {
                tt_ir_program_destroy(p);
                continue;
            }
            const tt_ir_type *ot = &p->types[node->outputs[0]];
            void *x = alloc_fill(dts[d], 2 * 3 * 7 * 8, dts[d] == TT_I32 ? 10.0 : 2.0);
            int64_t no = tt_numel(4, ot->dims);
            void *out = calloc((size_t)no, 8);
            TT_CHECK_OK(tt_host_reduce_window(p, node, x, out));
            int bad = 0;
            for (int64_t o = 0; o < no; o++) {
                int64_t oi[4], rem = o;
                for (int i = 3; i >= 0; i--) oi[i] = rem % ot->dims[i], rem /= ot->dims[i];
                double acc = kinds[ki] == TT_REDUCE_MAX ? -INFINITY : kinds[ki] == TT_REDUCE_MIN ? INFINITY
                                                                    : kinds[ki] == TT_REDUCE_MUL ? 1 : 0;
                if (dts[d] == TT_I32 && kinds[ki] == TT_REDUCE_MAX) acc = INT32_MIN;
                if (dts[d] == TT_I32 && kinds[ki] == TT_REDUCE_MIN) acc = INT32_MAX;
                double mag = 0; /* a sum's error scales with its terms, not with what is left after they cancel */
                for (int64_t w0 = 0; w0 < win[2]; w0++)
                    for (int64_t w1 = 0; w1 < win[3]; w1++) {
                        int64_t h = oi[2] * str[2] + w0 * dil[2] - pl[2], v = oi[3] * str[3] + w1 * dil[3] - pl[3];
                        if (h < 0 || h >= dims[2] || v < 0 || v >= dims[3]) continue;
                        double e = get(dts[d], x, ((oi[0] * 3 + oi[1]) * 7 + h) * 8 + v);
                        switch (kinds[ki]) {
                        case TT_REDUCE_MAX: acc = e > acc ? e : acc; break;
                        case TT_REDUCE_MIN: acc = e < acc ? e : acc; break;
                        case TT_REDUCE_ADD: acc += e, mag += fabs(e); break;
                        default: acc *= e; break;
                        }
                    }
                double got = get(dts[d], out, o);
                double scale = kinds[ki] == TT_REDUCE_ADD ? mag : fabs(acc);
                double tol = dts[d] == TT_BF16 ? 8e-3 * scale : 1e-5 * scale;
                if (!(fabs(got - acc) <= tol) && !(isinf(acc) && got == acc)) bad++;
            }
            if (bad) fprintf(stderr, "  dtype %s kind %d: %d wrong\n", tt_dtype_name(dts[d]), (int)kinds[ki], bad);
            TT_CHECK(bad == 0);
            free(x), free(out);
            tt_ir_program_destroy(p);
        }
}

static void test_reduce_window_identities_nan_and_bool(void) {
    /* A window entirely in padding yields the identity; NaN propagates through max. */
    int64_t dims[1] = {3}, win[1] = {2}, str[1] = {1}, pl[1] = {2}, ph[1] = {0}, dil[1] = {1};
    tt_ir_program *p = build_window(TT_F32, 1, dims, TT_REDUCE_MAX, win, str, pl, ph, dil);
    if (p) {
        float x[3] = {1.0f, NAN, 3.0f}, out[4] = {0};
        TT_CHECK_OK(tt_host_reduce_window(p, find_node(p, TT_OP_REDUCE_WINDOW), x, out));
        TT_CHECK(isinf(out[0]) && out[0] < 0);
        TT_CHECK(out[1] == 1.0f);
        TT_CHECK(isnan(out[2]) && isnan(out[3]));
    }
    tt_ir_program_destroy(p);
    int64_t bd[1] = {4}, bw[1] = {2}, bs[1] = {2}, z[1] = {0}, one[1] = {1};
    p = build_window(TT_BOOL, 1, bd, TT_REDUCE_OR, bw, bs, z, z, one);
    if (p) {
        uint8_t x[4] = {0, 0, 0, 1}, out[2] = {9, 9};
        TT_CHECK_OK(tt_host_reduce_window(p, find_node(p, TT_OP_REDUCE_WINDOW), x, out));
        TT_CHECK(out[0] == 0 && out[1] == 1);
    }
    tt_ir_program_destroy(p);
    p = build_window(TT_I64, 1, bd, TT_REDUCE_ADD, bw, bs, z, z, one);
    if (p) { /* wraps without UB */
        int64_t x[4] = {INT64_MAX, 1, 5, 6}, out[2] = {0};
        TT_CHECK_OK(tt_host_reduce_window(p, find_node(p, TT_OP_REDUCE_WINDOW), x, out));
        TT_CHECK(out[0] == INT64_MIN && out[1] == 11);
    }
    tt_ir_program_destroy(p);
}

/* ---- thread pool ------------------------------------------------------------------------------------- */

typedef struct cover {
    atomic_int *hits;
    atomic_int calls;
    int nested_ok;
} cover;

static void cover_fn(void *user, int64_t b, int64_t e) {
    cover *c = user;
    atomic_fetch_add(&c->calls, 1);
    for (int64_t i = b; i < e; i++) atomic_fetch_add(&c->hits[i], 1);
}

static void nested_inner(void *user, int64_t b, int64_t e) {
    (void)b, (void)e;
    atomic_fetch_add((atomic_int *)user, 1);
}
static void nested_fn(void *user, int64_t b, int64_t e) {
    cover *c = user;
    for (int64_t i = b; i < e; i++) {
        atomic_int n;
        atomic_init(&n, 0);
        tt_host_parallel_for(1000, 1, nested_inner, &n); /* must run inline: exactly one call */
        if (atomic_load(&n) != 1) c->nested_ok = 0;
        atomic_fetch_add(&c->hits[i], 1);
    }
}

static void test_parallel_for_covers_every_index_exactly_once(void) {
    TT_CHECK(tt_host_num_threads() >= 1);
    int64_t sizes[] = {0, 1, 7, 100, 10007};
    int64_t grains[] = {1, 3, 64, 100000};
    for (int s = 0; s < 5; s++)
        for (int g = 0; g < 4; g++) {
            cover c;
            c.hits = calloc((size_t)(sizes[s] + 1), sizeof *c.hits);
            atomic_init(&c.calls, 0);
            tt_host_parallel_for(sizes[s], grains[g], cover_fn, &c);
            int bad = 0;
            for (int64_t i = 0; i < sizes[s]; i++) bad += atomic_load(&c.hits[i]) != 1;
            TT_CHECK(bad == 0);
            if (sizes[s] <= grains[g]) TT_CHECK(atomic_load(&c.calls) == (sizes[s] ? 1 : 0));
            free(c.hits);
        }
}

static void test_parallel_for_nested_calls_run_inline(void) {
    cover c;
    c.hits = calloc(64, sizeof *c.hits);
    c.nested_ok = 1;
    tt_host_parallel_for(64, 1, nested_fn, &c);
    TT_CHECK(c.nested_ok);
    for (int i = 0; i < 64; i++) TT_CHECK(atomic_load(&c.hits[i]) == 1);
    free(c.hits);
}

static void *concurrent_caller(void *arg) {
    cover *c = arg;
    for (int r = 0; r < 50; r++) tt_host_parallel_for(1000, 1, cover_fn, c);
    return NULL;
}

/* Jobs after naps (the workers asleep: a late one finds the job closed and must not touch it) and back to back
 * (a worker may join the next one): every index once per job, nothing after a job returned (its state is freed). */
static void test_parallel_for_with_sleeping_and_late_workers(void) {
    for (int r = 0; r < 300; r++) {
        if (r % 3 == 0) nanosleep(&(struct timespec){0, 200 * 1000}, NULL);
        cover *c = calloc(1, sizeof *c);
        c->hits = calloc(64, sizeof *c->hits);
        atomic_init(&c->calls, 0);
        tt_host_parallel_for(64, 1, cover_fn, c);
        int bad = 0;
        for (int j = 0; j < 64; j++) bad += atomic_load(&c->hits[j]) != 1;
        TT_CHECK(bad == 0);
        free(c->hits);
        free(c);
    }
}

static void test_parallel_for_from_two_threads_at_once(void) {
    cover c[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        c[i].hits = calloc(1000, sizeof *c[i].hits);
        atomic_init(&c[i].calls, 0);
        TT_CHECK(pthread_create(&t[i], NULL, concurrent_caller, &c[i]) == 0);
    }
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    for (int i = 0; i < 2; i++) {
        int bad = 0;
        for (int j = 0; j < 1000; j++) bad += atomic_load(&c[i].hits[j]) != 50;
        TT_CHECK(bad == 0);
        free(c[i].hits);
    }
}

static void test_parallel_for_in_a_forked_child_does_not_hang(void) {
    cover c;
    c.hits = calloc(1000, sizeof *c.hits);
    tt_host_parallel_for(1000, 1, cover_fn, &c); /* the parent's pool exists now */
    pid_t pid = fork();
    if (pid == 0) {
        tt_host_parallel_for(1000, 1, cover_fn, &c);
        int ok = 1;
        for (int i = 0; i < 1000; i++) ok &= atomic_load(&c.hits[i]) == 2;
        _exit(ok ? 0 : 1);
    }
    TT_CHECK(pid > 0);
    int status = -1;
    if (pid > 0) waitpid(pid, &status, 0);
    TT_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    free(c.hits);
}

static void test_cpu_features_string_is_well_formed(void) {
    const char *f = tt_host_cpu_features();
    TT_CHECK(f != NULL);
    if (!f) return;
    printf("  cpu features: \"%s\", threads: %d\n", f, tt_host_num_threads());
    if (strstr(f, "avx512bf16")) TT_CHECK(strstr(f, "avx512f") != NULL);
}

static void test_kernels_reject_malformed_nodes(void) {
    dot_case c = {2, 2, {3, 4}, {4, 5}, 0, 1, {0}, {1}, {0}, {0}};
    tt_ir_program *p = build_dot(&c, TT_F32, TT_F32, TT_PRECISION_DEFAULT);
    if (p) {
        tt_ir_node bad = *find_node(p, TT_OP_DOT_GENERAL);
        bad.attrs.dot.lhs_contract.v[0] = 7; /* out of range */
        float l[12] = {0}, r[20] = {0}, o[15];
        TT_CHECK(tt_host_dot_general(p, &bad, l, r, o) == TT_STATUS_INVALID_ARGUMENT);
        bad.attrs.dot.lhs_contract.v[0] = 1;
        bad.attrs.dot.precision = (tt_precision)9;
        TT_CHECK(tt_host_dot_general(p, &bad, l, r, o) != TT_OK);
    }
    tt_ir_program_destroy(p);
}

int main(void) {
    static const tt_test_case cases[] = {
        {"dot_general with batch dims and transposed contraction, at every precision",
         test_dot_batch_dims_and_transposed_contraction_at_every_precision},
        {"dot_general blocked path with ragged edges", test_dot_blocked_path_with_ragged_edges},
        {"dot_general reads transposed layouts in place", test_dot_reads_transposed_layouts_in_place},
        {"dot: column blocks, transposed weights, ragged edges", test_dot_column_blocks_with_transposed_weights_and_ragged_edges},
        {"the accumulating GEMM adds to C on every path", test_accumulating_gemm_adds_to_c_on_every_path},
        {"small gemm: the fma chain at every isa, the blocked path's bits", test_small_gemm_is_the_fma_chain_at_every_isa},
        {"dot_general: every ISA gives the same numerics", test_dot_every_isa_gives_the_same_numerics},
        {"a thin gemm with a long k is the fma chain", test_thin_gemm_with_a_long_k_is_the_fma_chain},
        {"blocked gemm: the rows of a partial panel equal those of a full one",
         test_blocked_gemm_rows_of_a_partial_panel_equal_those_of_a_full_one},
        {"blocked gemm keeps infinities and NaNs where they are", test_blocked_gemm_keeps_infinities_and_nans_where_they_are},
        {"dot_general bf16 and f16 operands with wider and narrow results",
         test_dot_bf16_and_f16_operands_with_wider_and_narrow_results},
        {"dot_general small matrices, inner and outer products", test_dot_small_matrices_and_vectors},
        {"dot_general f64 is plain double", test_dot_f64_is_plain_double},
        {"dot_general integers accumulate in 64 bits and wrap", test_dot_integers_accumulate_in_64_bits_and_wrap},
        {"dot_general DEFAULT really rounds operands to bf16", test_dot_default_really_rounds_operands_to_bf16},
        {"dot_general infinities do not turn into NaN when split",
         test_dot_infinities_do_not_turn_into_nan_when_split},
        {"kernels reject malformed nodes", test_kernels_reject_malformed_nodes},
        {"conv2d with stride, padding, dilation and groups", test_conv2d_stride_padding_dilation_and_groups},
        {"conv1d and conv3d", test_conv1d_and_3d},
        {"conv lhs_dilation is a transposed conv; negative padding crops",
         test_conv_lhs_dilation_is_a_transposed_conv},
        {"conv batch_group_count as in grouped weight gradients",
         test_conv_batch_group_count_as_in_grouped_weight_gradients},
        {"conv direct kernels (depthwise weight gradients, col2im) match the definition",
         test_conv_direct_kernels_match_the_definition},
        {"conv f64, i32 and bf16", test_conv_other_dtypes},
        {"conv weight gradients in contraction chunks match the definition", test_conv_weight_gradient_in_chunks},
        {"conv large enough for the blocked GEMM", test_conv_large_enough_for_the_blocked_gemm},
        {"reduce_window max/min/add/mul pools with padding and dilation",
         test_reduce_window_max_pool_with_padding_and_dilation},
        {"reduce_window identities, NaN and bool", test_reduce_window_identities_nan_and_bool},
        {"parallel_for covers every index exactly once", test_parallel_for_covers_every_index_exactly_once},
        {"parallel_for nested calls run inline", test_parallel_for_nested_calls_run_inline},
        {"parallel_for with sleeping and late workers", test_parallel_for_with_sleeping_and_late_workers},
        {"parallel_for from two threads at once", test_parallel_for_from_two_threads_at_once},
        {"parallel_for in a forked child does not hang", test_parallel_for_in_a_forked_child_does_not_hang},
        {"cpu features string is well formed", test_cpu_features_string_is_well_formed},
        {NULL, NULL},
    };
    return tt_test_run(cases);
}
