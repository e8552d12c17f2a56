/* test_host_packcache.c — the host driver keeps a weight's packed GEMM form across executions
 * (csrc/drivers/host/host_packcache.c) only while the weight is unchanged: from its second use, hit on the third,
 * and a write, a copy or an execution that writes the buffer (in place) makes the next GEMM pack again. Every
 * result is compared with the first, uncached run (the same bits) and with a double-precision reference. */
#include "../csrc/drivers/host/host_internal.h"
#include "tt_host_run.h"

#include <stdlib.h>
#include <string.h>

enum { M = 32, K = 520, N = 270 }; /* three row panels (the last partial), two k slices, an edge column panel */

static tt_exec_arg view(tt_buffer *b, int rank, const int64_t *dims) {
    tt_exec_arg a;
    memset(&a, 0, sizeof a);
    a.buffer = b;
    int64_t s = 1;
    for (int i = rank - 1; i >= 0; i--) a.strides[i] = s, s *= dims[i];
    return a;
}

/* The builder's program, compiled by the host driver (the builder is destroyed). */
static tt_executable *compiled(tt_ir_builder *b) {
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *e = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &e));
    tt_ir_program_destroy(p);
    return e;
}

/* y[M, N] = x[M, K] . w[N, K]^T at precision prec (w read in place, transposed) */
static tt_executable *dot_exe(tt_precision prec) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t xd[2] = {M, K}, wd[2] = {N, K};
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, xd), w = tt_ir_param(b, TT_F32, 2, wd);
    tt_ir_attrs a = dot_attrs(1, 1, prec);
    tt_ir_builder_add_output(b, tt_ir_dot_general(b, x, w, &a, TT_F32));
    return compiled(b);
}

/* w = w * 2, written in place */
static tt_executable *double_exe(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t wd[2] = {N, K};
    tt_ir_value w = tt_ir_param(b, TT_F32, 2, wd);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, w, w));
    return compiled(b);
}

static void run_dot(tt_executable *e, tt_buffer *x, tt_buffer *w, tt_buffer *y, float *out) {
    int64_t xd[2] = {M, K}, wd[2] = {N, K}, yd[2] = {M, N};
    static float poison[M * N]; /* no element of y may survive from an earlier run */
    memset(poison, 0xff, sizeof poison);
    TT_CHECK_OK(drv()->iface.write(drv()->ctx, y, 0, poison, sizeof poison));
    tt_exec_arg args[2] = {view(x, 2, xd), view(w, 2, wd)}, res = view(y, 2, yd);
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, e, args, 2, &res, 1));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, y, 0, out, (size_t)M * N * 4));
}

static double max_err(const float *got, const float *xv, const float *wv, double scale) {
    double worst = 0;
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double acc = 0;
            for (int k = 0; k < K; k++) acc += (double)xv[i * K + k] * scale * (double)wv[j * K + k];
            double e = fabs(acc - got[i * N + j]);
            if (e > worst) worst = e;
        }
    return worst;
}

static void stats(int64_t *hits, int64_t *fills) {
    size_t bytes;
    tt_host_pack_stats(hits, fills, &bytes);
}

static void a_weight_stays_packed_until_it_is_written(void) {
    float *xv = malloc(M * K * 4), *wv = malloc(N * K * 4), *w2 = malloc(N * K * 4);
    float *first = malloc(M * N * 4), *o = malloc(M * N * 4);
    srand(7);
    for (int i = 0; i < M * K; i++) xv[i] = (float)rand() / RAND_MAX - 0.5f;
    for (int i = 0; i < N * K; i++) wv[i] = (float)rand() / RAND_MAX - 0.5f, w2[i] = wv[i] * 0.5f;
    const tt_precision precs[2] = {TT_PRECISION_FP32, TT_PRECISION_DEFAULT};
    const double tol[2] = {1e-4, 0.05}; /* DEFAULT multiplies bf16-rounded values */
    for (int pi = 0; pi < 2; pi++) {
        tt_buffer *x = upload(xv, (size_t)(M * K) * 4), *w = upload(wv, (size_t)(N * K) * 4);
        tt_buffer *y = upload(NULL, (size_t)(M * N) * 4);
        tt_executable *e = dot_exe(precs[pi]), *dbl = double_exe();
        int64_t h0, f0, h, f;
        stats(&h0, &f0);
        run_dot(e, x, w, y, first); /* seen */
        TT_CHECK(max_err(first, xv, wv, 1) < tol[pi]);
        run_dot(e, x, w, y, o); /* kept */
        TT_CHECK(!memcmp(o, first, M * N * 4));
        run_dot(e, x, w, y, o); /* read from the cache */
        stats(&h, &f);
        TT_CHECK(!memcmp(o, first, M * N * 4) && f - f0 == 1 && h - h0 == 1);
        /* a host write: packed again from the new bytes (twice before it is kept again) */
        TT_CHECK_OK(drv()->iface.write(drv()->ctx, w, 0, w2, N * K * 4));
        run_dot(e, x, w, y, o);
        TT_CHECK(max_err(o, xv, w2, 1) < tol[pi]);
        stats(&h, &f);
        TT_CHECK(f - f0 == 1 && h - h0 == 1);
        run_dot(e, x, w, y, o);
        run_dot(e, x, w, y, o);
        stats(&h, &f);
        TT_CHECK(f - f0 == 2 && h - h0 == 2 && max_err(o, xv, w2, 1) < tol[pi]);
        /* an execution writing w in place (w = w + w) */
        int64_t wd[2] = {N, K};
        tt_exec_arg wa = view(w, 2, wd);
        TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, dbl, &wa, 1, &wa, 1));
        run_dot(e, x, w, y, o);
        TT_CHECK(max_err(o, xv, w2, 2) < 2 * tol[pi]);
        /* a copy into w */
        TT_CHECK_OK(drv()->iface.copy(drv()->ctx, w, 0, w, 4, 4));
        float *w3 = malloc(N * K * 4);
        for (int i = 0; i < N * K; i++) w3[i] = 2 * w2[i];
        w3[0] = w3[1];
        run_dot(e, x, w, y, o);
        TT_CHECK(max_err(o, xv, w3, 1) < 2 * tol[pi]);
        free(w3);
        drv()->iface.executable_free(drv()->ctx, e);
        drv()->iface.executable_free(drv()->ctx, dbl);
        drv()->iface.buffer_free(drv()->ctx, x), drv()->iface.buffer_free(drv()->ctx, w), drv()->iface.buffer_free(drv()->ctx, y);
    }
    free(xv), free(wv), free(w2), free(first), free(o);
}

/* A buffer that the execution also writes is not read-only for it: nothing of it is kept. */
static void an_operand_the_execution_writes_is_never_kept(void) {
    float *xv = calloc(M * K, 4), *wv = calloc(N * K, 4), *o = malloc(M * N * 4);
    for (int i = 0; i < M * K; i++) xv[i] = 1.0f;
    for (int i = 0; i < N * K; i++) wv[i] = 1.0f;
    tt_buffer *x = upload(xv, (size_t)(M * K) * 4), *w = upload(wv, (size_t)(N * K) * 4);
    tt_executable *e = dot_exe(TT_PRECISION_FP32);
    int64_t h0, f0, h, f;
    stats(&h0, &f0);
    int64_t xd[2] = {M, K}, wd[2] = {N, K}, yd[2] = {M, N};
    /* y is written into w's buffer (as big as needed: N*K >= M*N) */
    for (int r = 0; r < 3; r++) {
        TT_CHECK_OK(drv()->iface.write(drv()->ctx, w, 0, wv, N * K * 4));
        tt_exec_arg args[2] = {view(x, 2, xd), view(w, 2, wd)}, res = view(w, 2, yd);
        TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, e, args, 2, &res, 1));
        TT_CHECK_OK(drv()->iface.read(drv()->ctx, w, 0, o, M * N * 4));
        TT_CHECK(o[0] == (float)K && o[M * N - 1] == (float)K);
    }
    stats(&h, &f);
    TT_CHECK(h == h0 && f == f0);
    drv()->iface.executable_free(drv()->ctx, e);
    drv()->iface.buffer_free(drv()->ctx, x), drv()->iface.buffer_free(drv()->ctx, w);
    free(xv), free(wv), free(o);
}

int main(void) {
    if (!drv()) return 1;
    static const tt_test_case cases[] = {
        {"a weight stays packed until it is written", a_weight_stays_packed_until_it_is_written},
        {"an operand the execution writes is never kept", an_operand_the_execution_writes_is_never_kept},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
