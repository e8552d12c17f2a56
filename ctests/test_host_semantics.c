/* test_host_semantics.c — host-driver semantics the PyTorch suite found wrong: reductions at every blocking and
 * threading threshold (TT_HOST_BLOCK, TT_HOST_GRAIN, the one-long-row split at 4 * TT_HOST_GRAIN into CHUNKS
 * partials), bool bytes other than 0 and 1 read as true by every kernel, and a failed row block that must not be
 * re-run over the in-place input it already wrote. Every check asserts. */
#include "tt_driver.h"
#include "tt_ir.h"
#include "tt_test.h"
#include "../csrc/drivers/host/host_internal.h" /* thresholds, and the row-block failure hook */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#include "tt_host_run.h"

/* Sizes just below, at and above each threshold of host_reduce.c. */
static const int64_t SIZES[] = {1, 511, 512, 513, 32767, 32768, 32769, 65536, 131071, 131072, 131073,
                                262144 + 7, 1 << 20, (1 << 20) + 4097};
#define N_SIZES ((int)(sizeof SIZES / sizeof SIZES[0]))

/* Reduces a 1-d input of n elements of dtype dt (bytes in data) with kind into a 0-d result of odt. */
static tt_status reduce_all(tt_dtype dt, tt_ir_reduce_kind kind, tt_dtype odt, int64_t n, const void *data, void *out) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, dt, 1, DIMS(n));
    tt_ir_builder_add_output(b, tt_ir_convert(b, tt_ir_reduce(b, kind, x, 1, DIMS(0)), odt));
    return run(b, (const void *[]){data}, (void *[]){out});
}

/* all / any over bool (add and mul of bools are or / and) at each size: true only when every / some byte is set. */
static void test_bool_and_or_reductions_are_right_at_every_threshold(void) {
    for (int s = 0; s < N_SIZES; s++) {
        int64_t n = SIZES[s];
        uint8_t *x = malloc((size_t)n);
        if (!x) return;
        for (int pattern = 0; pattern < 4; pattern++) {
            /* 0: all ones; 1: all ones but the last; 2: all zeros; 3: all zeros but the last */
            memset(x, pattern < 2 ? 1 : 0, (size_t)n);
            if (pattern == 1) x[n - 1] = 0;
            if (pattern == 3) x[n - 1] = 1;
            bool want_all = pattern == 0 || (pattern == 3 && n == 1), want_any = pattern != 2 && !(pattern == 1 && n == 1);
            tt_ir_reduce_kind kinds[4] = {TT_REDUCE_AND, TT_REDUCE_MUL, TT_REDUCE_OR, TT_REDUCE_ADD};
            for (int k = 0; k < 4; k++) {
                uint8_t got = 7;
                TT_CHECK_OK(reduce_all(TT_BOOL, kinds[k], TT_BOOL, n, x, &got));
                bool want = k < 2 ? want_all : want_any;
                if (got != (uint8_t)want) {
                    fprintf(stderr, "  n=%lld pattern=%d kind=%d: got %d want %d\n", (long long)n, pattern, k, got, want);
                    TT_CHECK(0);
                }
            }
        }
        free(x);
    }
}

/* Sums of integers are exact (count of ones, i64 sums), max/min find the one extreme element at the very end. */
static void test_integer_sum_max_min_are_exact_at_every_threshold(void) {
    for (int s = 0; s < N_SIZES; s++) {
        int64_t n = SIZES[s];
        int64_t *x = malloc((size_t)n * sizeof *x);
        uint8_t *bx = malloc((size_t)n);
        if (!x || !bx) {
            free(x);
            free(bx);
            return;
        }
        int64_t want = 0;
        for (int64_t i = 0; i < n; i++) {
            x[i] = (i * 2654435761LL) % 1000 - 500;
            want += x[i];
            bx[i] = (uint8_t)(i % 3 == 0);
        }
        int64_t got = 0;
        TT_CHECK_OK(reduce_all(TT_I64, TT_REDUCE_ADD, TT_I64, n, x, &got));
        TT_CHECK(got == want);
        x[n - 1] = 100000;
        TT_CHECK_OK(reduce_all(TT_I64, TT_REDUCE_MAX, TT_I64, n, x, &got));
        TT_CHECK(got == 100000);
        x[n - 1] = -100000;
        TT_CHECK_OK(reduce_all(TT_I64, TT_REDUCE_MIN, TT_I64, n, x, &got));
        TT_CHECK(got == -100000);
        /* count_nonzero: bools converted to i64, summed */
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value v = tt_ir_convert(b, tt_ir_param(b, TT_BOOL, 1, DIMS(n)), TT_I64);
        tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, DIMS(0)));
        TT_CHECK_OK(run(b, (const void *[]){bx}, (void *[]){&got}));
        TT_CHECK(got == (n + 2) / 3);
        free(x);
        free(bx);
    }
}

/* Float sums of ones are exact at any of these sizes (all partial sums are small integers); max finds the last. */
static void test_float_sum_and_max_are_right_at_every_threshold(void) {
    for (int s = 0; s < N_SIZES; s++) {
        int64_t n = SIZES[s];
        float *x = malloc((size_t)n * sizeof *x);
        if (!x) return;
        for (int64_t i = 0; i < n; i++) x[i] = 1.0f;
        float got = 0;
        TT_CHECK_OK(reduce_all(TT_F32, TT_REDUCE_ADD, TT_F32, n, x, &got));
        TT_CHECK(got == (float)n);
        x[n - 1] = 3.0f;
        TT_CHECK_OK(reduce_all(TT_F32, TT_REDUCE_MAX, TT_F32, n, x, &got));
        TT_CHECK(got == 3.0f);
        free(x);
    }
}

/* Bytes 2, 7 and 255 viewed as bool are true for every kernel that reads bools: and/or/xor/not, compare, select's
 * predicate, convert, the all/any reductions (short rows and the chunked long row), fused and unfused. */
static void test_non_standard_bool_bytes_read_as_true(void) {
    enum { N = 8 };
    const uint8_t a[N] = {2, 0, 255, 7, 1, 0, 128, 3};
    const uint8_t c[N] = {1, 1, 0, 7, 2, 0, 1, 255};
    for (int fuse = 0; fuse < 2; fuse++) {
        setenv("TORCHTPU_HOST_FUSE", fuse ? "1" : "0", 1);
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value x = tt_ir_param(b, TT_BOOL, 1, DIMS(N)), y = tt_ir_param(b, TT_BOOL, 1, DIMS(N));
        tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_AND, x, y));
        tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_XOR, x, y));
        tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_NOT, x));
        tt_ir_builder_add_output(b, tt_ir_compare(b, TT_CMP_EQ, x, y));
        tt_ir_builder_add_output(b, tt_ir_convert(b, x, TT_I32));
        tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1.0), 1, DIMS(N), NULL);
        tt_ir_value zero = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 0.0), 1, DIMS(N), NULL);
        tt_ir_builder_add_output(b, tt_ir_select(b, x, one, zero));
        uint8_t o_and[N], o_xor[N], o_not[N], o_eq[N];
        int32_t o_i[N];
        float o_sel[N];
        TT_CHECK_OK(run(b, (const void *[]){a, c}, (void *[]){o_and, o_xor, o_not, o_eq, o_i, o_sel}));
        for (int i = 0; i < N; i++) {
            bool ta = a[i] != 0, tc = c[i] != 0;
            TT_CHECK(o_and[i] == (ta && tc));
            TT_CHECK(o_xor[i] == (ta != tc));
            TT_CHECK(o_not[i] == !ta);
            TT_CHECK(o_eq[i] == (ta == tc));
            TT_CHECK(o_i[i] == (int32_t)ta);
            TT_CHECK(o_sel[i] == (ta ? 1.0f : 0.0f));
        }
    }
    unsetenv("TORCHTPU_HOST_FUSE");
    /* all() of every byte set to 2, 7 or 255, short and long */
    const int64_t ns[3] = {5, 1000, 4 * TT_HOST_GRAIN + 3};
    for (int k = 0; k < 3; k++) {
        uint8_t *x = malloc((size_t)ns[k]);
        if (!x) return;
        for (int64_t i = 0; i < ns[k]; i++) x[i] = (uint8_t)(i % 3 == 0 ? 2 : i % 3 == 1 ? 7 : 255);
        uint8_t all = 9, any = 9;
        int64_t sum = -1;
        TT_CHECK_OK(reduce_all(TT_BOOL, TT_REDUCE_AND, TT_BOOL, ns[k], x, &all));
        TT_CHECK_OK(reduce_all(TT_BOOL, TT_REDUCE_OR, TT_BOOL, ns[k], x, &any));
        TT_CHECK(all == 1 && any == 1);
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value v = tt_ir_convert(b, tt_ir_param(b, TT_BOOL, 1, DIMS(ns[k])), TT_I64);
        tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, DIMS(0)));
        TT_CHECK_OK(run(b, (const void *[]){x}, (void *[]){&sum}));
        TT_CHECK(sum == ns[k]);
        free(x);
    }
}

/* A row-blocked program x <- 2x + 1 (in place) whose middle block fails: the error comes back and the program is
 * not re-run, so every element is either untouched (x) or written once (2x + 1), never twice (4x + 3). */
enum { RR = 512, RC = 1024 };
static void test_a_failed_row_block_is_not_rerun_over_its_in_place_input(void) {
    enum { N = RR * RC };
    float *x = malloc(N * sizeof *x), *got = malloc(N * sizeof *got);
    if (!x || !got) goto out;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 1000);
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value p = tt_ir_param(b, TT_F32, 2, DIMS(RR, RC));
    tt_ir_value two = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 2.0), 2, DIMS(RR, RC), NULL);
    tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1.0), 2, DIMS(RR, RC), NULL);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, p, two), one));
    tt_ir_program *prog = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &prog));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    if (prog) TT_CHECK_OK(drv()->iface.compile(drv()->ctx, prog, &exe));
    int64_t blocks = tt_host_executable_row_blocks(exe);
    TT_CHECK(blocks > 2); /* the test is about row blocks: the program must be planned as such */
    if (exe && blocks > 2) {
        tt_host_executable_fail_row_block(exe, blocks / 2);
        tt_exec_arg a[1], res[1];
        memset(a, 0, sizeof a);
        a[0].buffer = upload(x, N * sizeof(float));
        a[0].strides[0] = RC;
        a[0].strides[1] = 1;
        res[0] = a[0]; /* the result overwrites x */
        tt_status st = drv()->iface.execute(drv()->ctx, 0, exe, a, 1, res, 1);
        TT_CHECK(st == TT_STATUS_INTERNAL);
        TT_CHECK(strstr(tt_last_error(), "block") != NULL);
        TT_CHECK_OK(drv()->iface.read(drv()->ctx, a[0].buffer, 0, got, N * sizeof(float)));
        int64_t once = 0, twice = 0, other = 0;
        for (int i = 0; i < N; i++) {
            if (got[i] == x[i] * 2 + 1) once++;
            else if (got[i] == (x[i] * 2 + 1) * 2 + 1) twice++;
            else if (got[i] != x[i]) other++;
        }
        TT_CHECK(twice == 0 && other == 0);
        /* the failing block's rows were never written */
        int64_t r0 = blocks / 2 * (RR / blocks);
        TT_CHECK(got[r0 * RC] == x[r0 * RC]);
        drv()->iface.buffer_free(drv()->ctx, a[0].buffer);
        /* the hook off again: the same executable runs every block */
        tt_host_executable_fail_row_block(exe, -1);
        a[0].buffer = upload(x, N * sizeof(float));
        res[0] = a[0];
        TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, a, 1, res, 1));
        TT_CHECK_OK(drv()->iface.read(drv()->ctx, a[0].buffer, 0, got, N * sizeof(float)));
        for (int i = 0; i < N; i += 997) TT_CHECK(got[i] == x[i] * 2 + 1);
        drv()->iface.buffer_free(drv()->ctx, a[0].buffer);
        (void)once;
    }
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(prog);
out:
    free(x);
    free(got);
}

/* out_k = x @ W_k.t() for 20 weights W_k stored [4][3] and passed as their transposed [3][4] views: more
 * transposed matmul operands than the executor's inline table holds (a model's window has dozens), all read in
 * place, each product right. */
static void test_many_transposed_matmul_operands_are_read_in_place(void) {
    enum { NW = 20, M = 2, K = 3, N = 4 };
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(M, K));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = 1;
    a.dot.precision = TT_PRECISION_FP32;
    for (int k = 0; k < NW; k++)
        tt_ir_builder_add_output(b, tt_ir_dot_general(b, x, tt_ir_param(b, TT_F32, 2, DIMS(K, N)), &a, TT_F32));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    static const float xv[M * K] = {1, 2, 3, -1, 0.5f, 2};
    float w[NW][N * K];
    tt_exec_arg args[1 + NW], res[NW];
    memset(args, 0, sizeof args);
    memset(res, 0, sizeof res);
    args[0].buffer = upload(xv, sizeof xv);
    args[0].strides[0] = K;
    args[0].strides[1] = 1;
    for (int k = 0; k < NW; k++) {
        for (int i = 0; i < N * K; i++) w[k][i] = (float)((i * 7 + k * 3) % 11) - 5.0f;
        args[1 + k].buffer = upload(w[k], sizeof w[k]);
        args[1 + k].strides[0] = 1; /* W_k.t()[kk][n] = W_k[n][kk] */
        args[1 + k].strides[1] = K;
        res[k].buffer = upload(NULL, M * N * sizeof(float));
        res[k].strides[0] = N;
        res[k].strides[1] = 1;
    }
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, args, 1 + NW, res, NW));
    for (int k = 0; k < NW; k++) {
        float got[M * N];
        TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[k].buffer, 0, got, sizeof got));
        for (int i = 0; i < M; i++)
            for (int n = 0; n < N; n++) {
                float want = 0;
                for (int kk = 0; kk < K; kk++) want += xv[i * K + kk] * w[k][n * K + kk];
                TT_CHECK(got[i * N + n] == want);
            }
        drv()->iface.buffer_free(drv()->ctx, args[1 + k].buffer);
        drv()->iface.buffer_free(drv()->ctx, res[k].buffer);
    }
    drv()->iface.buffer_free(drv()->ctx, args[0].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}

int main(void) {
    static const tt_test_case cases[] = {
        {"many transposed matmul operands are read in place", test_many_transposed_matmul_operands_are_read_in_place},
        {"bool and/or reductions are right at every threshold", test_bool_and_or_reductions_are_right_at_every_threshold},
        {"integer sum max min are exact at every threshold", test_integer_sum_max_min_are_exact_at_every_threshold},
        {"float sum and max are right at every threshold", test_float_sum_and_max_are_right_at_every_threshold},
        {"non-standard bool bytes read as true", test_non_standard_bool_bytes_read_as_true},
        {"a failed row block is not rerun over its in-place input", test_a_failed_row_block_is_not_rerun_over_its_in_place_input},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
