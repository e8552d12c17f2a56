/* test_host_fuse.c — the host driver's fast paths: fused elementwise groups, row-blocked execution, results
 * written in place, lane reductions and the vectorized exp / tanh / erf. Each is checked bit for bit against
 * the plain interpreter (TORCHTPU_HOST_FUSE=0 TORCHTPU_HOST_ROWS=0) or against correctly rounded references. */
#include "tt_driver.h"
#include "tt_ir.h"
#include "tt_test.h"
#include "../csrc/drivers/host/host_internal.h" /* the planners, to check what they group */

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#include "tt_host_run.h"
/* ---- fused elementwise groups: every result equals the unfused interpreter's, bit for bit ---- */

/* Builds a program with build(b), runs it with fusion and row blocks on, and with both off (TORCHTPU_HOST_FUSE,
 * TORCHTPU_HOST_ROWS: the plain interpreter), on inputs in[], compares all outputs bytewise. n_out <= 8 outputs of at most 1 MB each. */
typedef void (*build_fn)(tt_ir_builder *b);
static void check_fused_equals_unfused(build_fn build, const void *const *in, int n_out) {
    void *outs[2][8] = {{0}};
    size_t bytes[8] = {0};
    for (int pass = 0; pass < 2; pass++) {
        setenv("TORCHTPU_HOST_FUSE", pass ? "0" : "1", 1);
        setenv("TORCHTPU_HOST_ROWS", pass ? "0" : "1", 1);
        tt_ir_builder *b = tt_ir_builder_create();
        build(b);
        /* Zeroed room for any output here (the unused tail compares equal). */
        for (int o = 0; o < n_out; o++) {
            outs[pass][o] = calloc(1, 1u << 20);
            bytes[o] = 1u << 20;
        }
        TT_CHECK_OK(run(b, in, outs[pass]));
    }
    unsetenv("TORCHTPU_HOST_FUSE");
    unsetenv("TORCHTPU_HOST_ROWS");
    for (int o = 0; o < n_out; o++) {
        TT_CHECK(outs[0][o] && outs[1][o] && memcmp(outs[0][o], outs[1][o], bytes[o]) == 0);
        free(outs[0][o]);
        free(outs[1][o]);
    }
}

enum { FR = 96, FC = 1000 }; /* 96000 elements: several parts and a partial last tile */
static float *fx, *fw;
static uint16_t *fh;
static uint8_t *fm;

static tt_ir_value kf(tt_ir_builder *b, tt_ir_value like, double v) {
    const tt_ir_type *t = tt_ir_type_of(b, like);
    return tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, t->dtype, v), t->rank, t->dims, NULL);
}

static void build_gelu(tt_ir_builder *b) {
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(FR, FC));
    tt_ir_value e = tt_ir_unary(b, TT_OP_ERF, tt_ir_binary(b, TT_OP_MULTIPLY, x, kf(b, x, 0.7071067811865476)));
    tt_ir_value r = tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_binary(b, TT_OP_MULTIPLY, x, kf(b, x, 0.5)),
                                 tt_ir_binary(b, TT_OP_ADD, kf(b, x, 1.0), e));
    tt_ir_value t = tt_ir_unary(b, TT_OP_TANH, r);
    tt_ir_builder_add_output(b, r);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, t, e)); /* e is used twice, also outside a chain */
}

/* layer_norm: reduce, broadcast back (row), weight broadcast (column), rsqrt; intermediates also outputs. */
static void build_layer_norm(tt_ir_builder *b) {
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(FR, FC));
    tt_ir_value w = tt_ir_param(b, TT_F32, 1, DIMS(FC));
    tt_ir_value mean = tt_ir_binary(b, TT_OP_DIVIDE, tt_ir_reduce(b, TT_REDUCE_ADD, x, 1, DIMS(1)),
                                    tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, FC), 1, DIMS(FR), NULL));
    tt_ir_value xc = tt_ir_binary(b, TT_OP_SUBTRACT, x, tt_ir_broadcast_in_dim(b, mean, 2, DIMS(FR, FC), DIMS(0)));
    tt_ir_value var = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, xc, xc), 1, DIMS(1));
    tt_ir_value rs = tt_ir_unary(b, TT_OP_RSQRT, tt_ir_binary(b, TT_OP_ADD, var, kf(b, var, 1e-5)));
    tt_ir_value y = tt_ir_binary(b, TT_OP_MULTIPLY, xc, tt_ir_broadcast_in_dim(b, rs, 2, DIMS(FR, FC), DIMS(0)));
    y = tt_ir_binary(b, TT_OP_MULTIPLY, y, tt_ir_broadcast_in_dim(b, w, 2, DIMS(FR, FC), DIMS(1)));
    tt_ir_builder_add_output(b, y);
    tt_ir_builder_add_output(b, rs);
}

/* bf16 in, f32 math, bf16 ops that round per op, f16 and int8 results, a transposing broadcast, a reshape. */
static void build_mixed(tt_ir_builder *b) {
    tt_ir_value h = tt_ir_param(b, TT_BF16, 2, DIMS(FR, FC));
    tt_ir_value w = tt_ir_param(b, TT_F32, 2, DIMS(FC, FR));
    tt_ir_value hf = tt_ir_convert(b, h, TT_F32);
    tt_ir_value wt = tt_ir_broadcast_in_dim(b, w, 2, DIMS(FR, FC), DIMS(1, 0)); /* a transpose */
    tt_ir_value s = tt_ir_binary(b, TT_OP_ADD, hf, wt);
    tt_ir_value sb = tt_ir_convert(b, s, TT_BF16);
    tt_ir_value p2 = tt_ir_binary(b, TT_OP_MULTIPLY, sb, sb); /* rounds to bf16 */
    tt_ir_value q = tt_ir_unary(b, TT_OP_EXP, tt_ir_binary(b, TT_OP_DIVIDE, p2, kf(b, p2, 7.0)));
    tt_ir_value r = tt_ir_reshape(b, q, 2, DIMS(FC, FR));
    tt_ir_value f16 = tt_ir_convert(b, r, TT_F16);
    tt_ir_value i8 = tt_ir_convert(b, tt_ir_binary(b, TT_OP_MULTIPLY, s, kf(b, s, 3.0)), TT_I8);
    tt_ir_value i8s = tt_ir_binary(b, TT_OP_ADD, i8, i8); /* wraps */
    tt_ir_builder_add_output(b, f16);
    tt_ir_builder_add_output(b, i8s);
    tt_ir_builder_add_output(b, tt_ir_convert(b, i8s, TT_F32));
}

/* where(mask[FR,1] broadcast, x, -1e4), compare, clamp, a scalar parameter, a splat predicate. */
static void build_select(tt_ir_builder *b) {
    tt_ir_value m = tt_ir_param(b, TT_BOOL, 2, DIMS(FR, 1));
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(FR, FC));
    tt_ir_value sc = tt_ir_scalar_param(b, TT_F32);
    tt_ir_value mb = tt_ir_broadcast_in_dim(b, tt_ir_reshape(b, m, 1, DIMS(FR)), 2, DIMS(FR, FC), DIMS(0));
    tt_ir_value y = tt_ir_select(b, mb, x, kf(b, x, -1e4));
    tt_ir_value gt = tt_ir_compare(b, TT_CMP_GT, y, tt_ir_broadcast_in_dim(b, sc, 2, DIMS(FR, FC), NULL));
    tt_ir_value c = tt_ir_clamp(b, kf(b, x, -0.5), y, kf(b, x, 0.5));
    tt_ir_value z = tt_ir_select(b, gt, c, tt_ir_unary(b, TT_OP_NEGATE, y));
    tt_ir_value ps = tt_ir_compare(b, TT_CMP_LT, sc, tt_ir_constant_scalar(b, TT_F32, 0.0));
    tt_ir_value w = tt_ir_select(b, tt_ir_broadcast_in_dim(b, ps, 2, DIMS(FR, FC), NULL), z, y);
    tt_ir_value anyv = tt_ir_binary(b, TT_OP_AND, gt, tt_ir_unary(b, TT_OP_NOT, mb));
    tt_ir_builder_add_output(b, w);
    tt_ir_builder_add_output(b, anyv);
    tt_ir_builder_add_output(b, tt_ir_convert(b, anyv, TT_I32));
}

/* softmax over the last of four dims: row blocks over three leading dims (a sub-box [1, 2, 40] here). */
static void build_softmax4(tt_ir_builder *b) {
    const int64_t *d = DIMS(4, 6, 40, 100);
    tt_ir_value x = tt_ir_param(b, TT_F32, 4, d);
    tt_ir_value m = tt_ir_reduce(b, TT_REDUCE_MAX, x, 1, DIMS(3));
    tt_ir_value e = tt_ir_unary(b, TT_OP_EXP, tt_ir_binary(b, TT_OP_SUBTRACT, x, tt_ir_broadcast_in_dim(b, m, 4, d, DIMS(0, 1, 2))));
    tt_ir_value s = tt_ir_reduce(b, TT_REDUCE_ADD, e, 1, DIMS(3));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_DIVIDE, e, tt_ir_broadcast_in_dim(b, s, 4, d, DIMS(0, 1, 2))));
    tt_ir_builder_add_output(b, s);
}

/* Updates of three tensors (of three sizes) issued op by op over all of them, as a foreach optimizer step does,
 * with a reduction reading chain 0 between its steps (that chain's group must close before it). */
enum { FE = 32000 };
static void build_foreach(tt_ir_builder *b) {
    tt_ir_value pv[3], gv[3], t[3];
    for (int i = 0; i < 3; i++) pv[i] = tt_ir_param(b, TT_F32, 1, DIMS(FE >> i));
    for (int i = 0; i < 3; i++) gv[i] = tt_ir_param(b, TT_F32, 1, DIMS(FE >> i));
    for (int i = 0; i < 3; i++) t[i] = tt_ir_binary(b, TT_OP_MULTIPLY, pv[i], kf(b, pv[i], 0.9));
    for (int i = 0; i < 3; i++) t[i] = tt_ir_binary(b, TT_OP_ADD, t[i], gv[i]);
    tt_ir_value r = tt_ir_reduce(b, TT_REDUCE_ADD, t[0], 1, DIMS(0));
    for (int i = 0; i < 3; i++) t[i] = tt_ir_binary(b, TT_OP_MULTIPLY, t[i], tt_ir_unary(b, TT_OP_TANH, t[i]));
    for (int i = 0; i < 3; i++) tt_ir_builder_add_output(b, t[i]);
    tt_ir_builder_add_output(b, r);
}

/* Row groups: short rows (many per tile: a broadcast back over rows written in place of its operand must not
 * overwrite rows not yet spread), a reduction of a parameter (it opens the group), min and product, row-level
 * results (a splat among them), bf16 and f64 rows, a sum over the leading dim (not a row reduction), rows too long for a tile. */
enum { RR = 300, RC = 7, RL = 9000 };
static void build_rows_mixed(tt_ir_builder *b) {
    tt_ir_value x = tt_ir_param(b, TT_F32, 3, DIMS(3, RR / 3, RC));
    tt_ir_value h = tt_ir_param(b, TT_BF16, 2, DIMS(RR, RC));
    tt_ir_value d = tt_ir_param(b, TT_F64, 2, DIMS(RR / 2, 2 * RC));
    tt_ir_value l = tt_ir_param(b, TT_F32, 2, DIMS(2, RL));
    tt_ir_value mn = tt_ir_reduce(b, TT_REDUCE_MIN, x, 1, DIMS(2));
    tt_ir_value sh = tt_ir_binary(b, TT_OP_SUBTRACT, x, tt_ir_broadcast_in_dim(b, mn, 3, DIMS(3, RR / 3, RC), DIMS(0, 1)));
    tt_ir_value pr = tt_ir_reduce(b, TT_REDUCE_MUL, tt_ir_binary(b, TT_OP_ADD, sh, kf(b, sh, 0.75)), 1, DIMS(2));
    tt_ir_value pk = tt_ir_reshape(b, pr, 3, DIMS(3, RR / 3, 1)); /* kept dim of size 1, broadcast back */
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_DIVIDE, sh, tt_ir_broadcast_in_dim(b, pk, 3, DIMS(3, RR / 3, RC), DIMS(0, 1, 2))));
    tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_LOG, pr));
    tt_ir_value hs = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, h, h), 1, DIMS(1)); /* rounds to bf16 */
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_MULTIPLY, h, tt_ir_broadcast_in_dim(b, hs, 2, DIMS(RR, RC), DIMS(0))));
    tt_ir_value two = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_BF16, 2.0), 1, DIMS(RR), NULL);
    tt_ir_builder_add_output(b, two); /* a row-level splat: stored one value per row */
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, hs, two));
    tt_ir_value dm = tt_ir_reduce(b, TT_REDUCE_MAX, d, 1, DIMS(1));
    tt_ir_value de = tt_ir_unary(b, TT_OP_EXP, tt_ir_binary(b, TT_OP_SUBTRACT, d, tt_ir_broadcast_in_dim(b, dm, 2, DIMS(RR / 2, 2 * RC), DIMS(0))));
    tt_ir_value col = tt_ir_reduce(b, TT_REDUCE_ADD, de, 1, DIMS(0));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_DIVIDE, de, tt_ir_broadcast_in_dim(b, col, 2, DIMS(RR / 2, 2 * RC), DIMS(1))));
    tt_ir_value ls = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_unary(b, TT_OP_EXP, l), 1, DIMS(1));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_MULTIPLY, l, tt_ir_broadcast_in_dim(b, ls, 2, DIMS(2, RL), DIMS(0))));
}

static void test_fused_elementwise_groups_equal_the_unfused_interpreter_bit_for_bit(void) {
    fx = malloc(FR * FC * sizeof *fx);
    fw = malloc(FR * FC * sizeof *fw);
    fh = malloc(FR * FC * sizeof *fh);
    fm = malloc(FR);
    if (!fx || !fw || !fh || !fm) goto out;
    for (int i = 0; i < FR * FC; i++) {
        fx[i] = (float)((i * 7919) % 2001 - 1000) / 250.0f;
        fw[i] = (float)((i * 1049) % 997) / 500.0f - 1.0f;
        fh[i] = tt_f32_to_bf16(fx[i] * 3.0f);
    }
    for (int i = 0; i < FR; i++) fm[i] = (uint8_t)(i % 3 != 0);
    check_fused_equals_unfused(build_gelu, (const void *[]){fx}, 2);
    check_fused_equals_unfused(build_layer_norm, (const void *[]){fx, fw}, 2);
    check_fused_equals_unfused(build_mixed, (const void *[]){fh, fw}, 3);
    double s = 0.25, neg = -1.0;
    check_fused_equals_unfused(build_select, (const void *[]){fm, fx, &s}, 3);
    check_fused_equals_unfused(build_select, (const void *[]){fm, fx, &neg}, 3);
    check_fused_equals_unfused(build_softmax4, (const void *[]){fx}, 2);
    check_fused_equals_unfused(build_foreach, (const void *[]){fx, fx + FE, fx + 2 * FE, fw, fw + FE, fw + 2 * FE}, 4);
    double *fd = malloc(RR * RC * sizeof *fd);
    if (fd) {
        for (int i = 0; i < RR * RC; i++) fd[i] = (double)fw[i] * 3.0 + 1e-9 * i;
        check_fused_equals_unfused(build_rows_mixed, (const void *[]){fx, fh, fd, fw}, 8);
    }
    free(fd);
out:
    free(fx);
    free(fw);
    free(fh);
    free(fm);
}

/* Last-dim max / min / sum over rows long enough for the lane kernels (with tails): all-negative rows, NaN in
 * the lanes and in the tail, -inf. */
static void test_row_reductions_over_the_last_dim_take_the_lane_kernels(void) {
    enum { R = 4, C = 133 };
    float x[R * C], mx[R], mn[R], sm[R];
    for (int i = 0; i < R * C; i++) x[i] = -1.0f - (float)((i * 37) % 101) * 0.5f;
    x[1 * C + 20] = NAN;     /* in the lanes */
    x[2 * C + C - 2] = NAN;  /* in the tail */
    x[3 * C + 5] = -INFINITY;
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value xv = tt_ir_param(b, TT_F32, 2, DIMS(R, C));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MAX, xv, 1, DIMS(1)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MIN, xv, 1, DIMS(1)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, xv, 1, DIMS(1)));
    TT_CHECK_OK(run(b, (const void *[]){x}, (void *[]){mx, mn, sm}));
    for (int r = 0; r < R; r++) {
        double wmax = -INFINITY, wmin = INFINITY, wsum = 0;
        bool nan = false;
        for (int c = 0; c < C; c++) {
            float v = x[r * C + c];
            nan |= v != v;
            if (v > wmax) wmax = v;
            if (v < wmin) wmin = v;
            wsum += v;
        }
        if (nan) {
            TT_CHECK(isnan(mx[r]) && isnan(mn[r]) && isnan(sm[r]));
        } else {
            TT_CHECK(mx[r] == (float)wmax && mn[r] == (float)wmin);
            if (isinf(wsum)) TT_CHECK(sm[r] == (float)wsum);
            else TT_CHECK_NEAR(sm[r], wsum, 1e-5 * fabs(wsum));
        }
    }
}

/* Results written in place of the arena (fresh contiguous buffers) next to ones that must be copied: a value
 * output twice, and a result in the argument's own buffer (an in-place update read by a later node). */
static void test_results_are_written_directly_unless_they_alias(void) {
    enum { N = 50000 };
    float *x = malloc(N * sizeof *x), *r0 = malloc(N * sizeof *r0), *r1 = malloc(N * sizeof *r1);
    float *r2 = malloc(N * sizeof *r2), *xr = malloc(N * sizeof *xr);
    if (!x || !r0 || !r1 || !r2 || !xr) goto out;
    for (int i = 0; i < N; i++) x[i] = (float)(i % 1000) * 0.5f;
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value xv = tt_ir_param(b, TT_F32, 1, DIMS(N));
    tt_ir_value y = tt_ir_binary(b, TT_OP_ADD, xv, kf(b, xv, 1.0));
    tt_ir_value z = tt_ir_unary(b, TT_OP_NEGATE, tt_ir_reduce(b, TT_REDUCE_ADD, xv, 1, DIMS(0))); /* reads x late */
    tt_ir_value w = tt_ir_binary(b, TT_OP_MULTIPLY, y, y);
    tt_ir_builder_add_output(b, w); /* direct */
    tt_ir_builder_add_output(b, y); /* into x's buffer: copied after everything ran */
    tt_ir_builder_add_output(b, y); /* again, a fresh buffer */
    tt_ir_builder_add_output(b, z);
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    if (p) TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    if (!exe) goto done;
    tt_exec_arg a[1], res[4];
    memset(a, 0, sizeof a);
    memset(res, 0, sizeof res);
    a[0].buffer = upload(x, N * sizeof(float));
    a[0].strides[0] = 1;
    res[0].buffer = upload(NULL, N * sizeof(float));
    res[1].buffer = a[0].buffer;
    res[2].buffer = upload(NULL, N * sizeof(float));
    res[3].buffer = upload(NULL, sizeof(float));
    for (int i = 0; i < 4; i++) res[i].strides[0] = 1;
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, a, 1, res, 4));
    float zs = 0;
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[0].buffer, 0, r0, N * sizeof(float)));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, a[0].buffer, 0, xr, N * sizeof(float)));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[2].buffer, 0, r2, N * sizeof(float)));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[3].buffer, 0, &zs, sizeof(float)));
    double sum = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float yy = x[i] + 1.0f;
        sum += x[i];
        bad += r0[i] != yy * yy || xr[i] != yy || r2[i] != yy;
    }
    TT_CHECK(bad == 0);
    TT_CHECK_NEAR(zs, -sum, 1e-5 * sum);
    drv()->iface.buffer_free(drv()->ctx, a[0].buffer);
    drv()->iface.buffer_free(drv()->ctx, res[0].buffer);
    drv()->iface.buffer_free(drv()->ctx, res[2].buffer);
    drv()->iface.buffer_free(drv()->ctx, res[3].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
done:
    tt_ir_program_destroy(p);
out:
    free(x);
    free(r0);
    free(r1);
    free(r2);
    free(xr);
}

/* An optimizer-like window: parameters updated in place (p, m) beside a scalar's own math, a parameter read again
 * after its update (x: must keep its memory) and a plain node updating its operand (h). The planner's answers are
 * checked, then the results against a C reference with results sharing their arguments' buffers. */
static void build_update(tt_ir_builder *b) {
    enum { N = 50000 };
    tt_ir_value p = tt_ir_param(b, TT_F32, 1, DIMS(N)), g = tt_ir_param(b, TT_F32, 1, DIMS(N));
    tt_ir_value m = tt_ir_param(b, TT_F32, 1, DIMS(N)), x = tt_ir_param(b, TT_F32, 1, DIMS(N));
    tt_ir_value lr = tt_ir_scalar_param(b, TT_F32);
    tt_ir_value m2 = tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, m, kf(b, m, 0.75)),
                                  tt_ir_binary(b, TT_OP_MULTIPLY, g, kf(b, g, 0.25)));
    tt_ir_value lr2 = tt_ir_binary(b, TT_OP_MULTIPLY, lr, tt_ir_constant_scalar(b, TT_F32, 2.0)); /* beside */
    tt_ir_value step = tt_ir_binary(b, TT_OP_MULTIPLY, m2, tt_ir_broadcast_in_dim(b, lr2, 1, DIMS(N), NULL));
    tt_ir_value p2 = tt_ir_binary(b, TT_OP_SUBTRACT, p, step);
    tt_ir_value x2 = tt_ir_binary(b, TT_OP_MULTIPLY, x, p2);      /* x's update ... */
    tt_ir_value x3 = tt_ir_binary(b, TT_OP_ADD, x, kf(b, x, 1.0)); /* ... and a later read of the old x */
    tt_ir_builder_add_output(b, p2);
    tt_ir_builder_add_output(b, m2);
    tt_ir_builder_add_output(b, x2);
    tt_ir_builder_add_output(b, x3);
}

static void test_an_update_writes_its_parameters_in_place_only_when_nothing_reads_them_later(void) {
    enum { N = 50000 };
    tt_ir_builder *b = tt_ir_builder_create();
    build_update(b);
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    if (!p) return;
    tt_host_fusion *f = NULL;
    TT_CHECK_OK(tt_host_fuse_plan(p, &f));
    TT_CHECK(tt_host_fuse_n_groups(f) == 1); /* the scalar's multiply runs alone beside the group */
    tt_ir_value P = p->params[0], M = p->params[2], X = p->params[3];
    TT_CHECK(tt_host_fuse_may_overwrite(f, p, p->outputs[0], P));
    TT_CHECK(tt_host_fuse_may_overwrite(f, p, p->outputs[1], M));
    TT_CHECK(!tt_host_fuse_may_overwrite(f, p, p->outputs[2], X)); /* x is read after x2 is written */
    TT_CHECK(tt_host_fuse_may_overwrite(f, p, p->outputs[0], M));  /* m is read before p2 is written */
    TT_CHECK(!tt_host_fuse_may_overwrite(f, p, p->outputs[1], X)); /* nor x by m2 */
    tt_host_fuse_free(f);
    /* A plain node (a group of one is dissolved) may overwrite its operand; a node reading it twice too. */
    b = tt_ir_builder_create();
    tt_ir_value h = tt_ir_param(b, TT_F32, 1, DIMS(N));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_MULTIPLY, h, h));
    tt_ir_program *q = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &q));
    tt_ir_builder_destroy(b);
    if (q) {
        TT_CHECK_OK(tt_host_fuse_plan(q, &f));
        TT_CHECK(tt_host_fuse_n_groups(f) == 0 && tt_host_fuse_may_overwrite(f, q, q->outputs[0], q->params[0]));
        tt_host_fuse_free(f);
        tt_ir_program_destroy(q);
    }

    float *in[4], *got[4];
    for (int k = 0; k < 4; k++) {
        in[k] = malloc(N * sizeof(float));
        got[k] = malloc(N * sizeof(float));
    }
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    if (!exe || !in[0] || !in[1] || !in[2] || !in[3] || !got[0] || !got[1] || !got[2] || !got[3]) goto out;
    for (int i = 0; i < N; i++) {
        in[0][i] = (float)(i % 97) * 0.125f;
        in[1][i] = (float)(i % 13) - 6.0f;
        in[2][i] = (float)(i % 7) * 0.5f;
        in[3][i] = (float)(i % 5) + 1.0f;
    }
    tt_exec_arg a[5], res[4];
    memset(a, 0, sizeof a);
    memset(res, 0, sizeof res);
    for (int k = 0; k < 4; k++) {
        a[k].buffer = upload(in[k], N * sizeof(float));
        a[k].strides[0] = 1;
    }
    a[4].f = 0.5; /* lr */
    res[0] = a[0]; /* p2 into p, m2 into m, x2 into x (declined: copied after), x3 fresh */
    res[1] = a[2];
    res[2] = a[3];
    res[3].buffer = upload(NULL, N * sizeof(float));
    res[3].strides[0] = 1;
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, a, 5, res, 4));
    for (int k = 0; k < 4; k++)
        TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[k].buffer, 0, got[k], N * sizeof(float)));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float m2 = in[2][i] * 0.75f + in[1][i] * 0.25f, p2 = in[0][i] - m2 * 1.0f;
        bad += got[0][i] != p2 || got[1][i] != m2 || got[2][i] != in[3][i] * p2 || got[3][i] != in[3][i] + 1.0f;
    }
    TT_CHECK(bad == 0);
    for (int k = 0; k < 4; k++) drv()->iface.buffer_free(drv()->ctx, a[k].buffer);
    drv()->iface.buffer_free(drv()->ctx, res[3].buffer);
out:
    if (exe) drv()->iface.executable_free(drv()->ctx, exe);
    for (int k = 0; k < 4; k++) {
        free(in[k]);
        free(got[k]);
    }
    tt_ir_program_destroy(p);
}

/* A plain reshape shares its operand's memory: the operand stays alive as long as the reshape is read, even when
 * values made in between would like its place in the arena. */
static void test_a_reshape_shares_its_operands_memory_while_it_is_read(void) {
    enum { R = 32, C = 128 };
    float *x = malloc(R * C * sizeof *x), *got = malloc(R * C * sizeof *got);
    if (!x || !got) goto out;
    for (int i = 0; i < R * C; i++) x[i] = (float)(i % 29) * 0.25f - 3.0f;
    for (int pass = 0; pass < 2; pass++) { /* the interpreter alone (every reshape plain), then fused */
        setenv("TORCHTPU_HOST_FUSE", pass ? "1" : "0", 1);
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value xv = tt_ir_param(b, TT_F32, 2, DIMS(R, C));
        tt_ir_value y = tt_ir_unary(b, TT_OP_NEGATE, xv);
        tt_ir_value r = tt_ir_reshape(b, tt_ir_reshape(b, y, 1, DIMS(R * C)), 2, DIMS(C, R)); /* a chain */
        /* values made and dropped while r waits: sums over rows, broadcast back */
        tt_ir_value s1 = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, xv, xv), 1, DIMS(1));
        tt_ir_value t = tt_ir_binary(b, TT_OP_ADD, tt_ir_transpose(b, xv, DIMS(1, 0)),
                                     tt_ir_broadcast_in_dim(b, s1, 2, DIMS(C, R), DIMS(1)));
        tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, r, t));
        float *outs[1] = {got};
        const void *in[1] = {x};
        TT_CHECK_OK(run(b, in, (void *const *)outs));
        int bad = 0;
        for (int i = 0; i < C; i++)
            for (int j = 0; j < R; j++) {
                float sum = 0;
                for (int k = 0; k < C; k++) sum += x[j * C + k] * x[j * C + k];
                float want = -x[i * R + j] + (x[j * C + i] + sum);
                bad += fabsf(got[i * R + j] - want) > 1e-3f * (fabsf(want) + 1.0f);
            }
        TT_CHECK(bad == 0);
    }
    unsetenv("TORCHTPU_HOST_FUSE");
out:
    free(x);
    free(got);
}

/* The fusion plan of the program build makes (the program in *p; both NULL after a failed check). */
static tt_host_fusion *plan_of(build_fn build, tt_ir_program **p) {
    tt_ir_builder *b = tt_ir_builder_create();
    build(b);
    TT_CHECK_OK(tt_ir_builder_finish(b, p));
    tt_ir_builder_destroy(b);
    tt_host_fusion *f = NULL;
    if (*p) TT_CHECK_OK(tt_host_fuse_plan(*p, &f));
    return f;
}

/* A group's value and its reshape both read outside the group (an activation and the [B*T, C] view a matmul
 * reads): stored once, the reshape sharing the memory, which lives until the reshape's last reader even when the
 * value's own readers are done long before (values made in between would like its place). */
static bool alias_as_output; /* the value is a program output too */
static tt_ir_value alias_reshape;
static void build_alias(tt_ir_builder *b) {
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(FR, FC)), w = tt_ir_param(b, TT_F32, 2, DIMS(FR, 4));
    tt_ir_value y = tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_unary(b, TT_OP_NEGATE, x), kf(b, x, 2.0));
    alias_reshape = tt_ir_reshape(b, y, 2, DIMS(FC, FR));
    tt_ir_value u = tt_ir_transpose(b, y, DIMS(1, 0)); /* y's last reader outside the group */
    tt_ir_value v = tt_ir_unary(b, TT_OP_EXP, tt_ir_binary(b, TT_OP_ADD, u, kf(b, u, 1.0)));
    /* made while r waits, in the arena (a program output would be written straight to its result) */
    tt_ir_value t = tt_ir_transpose(b, tt_ir_unary(b, TT_OP_TANH, tt_ir_binary(b, TT_OP_MULTIPLY, v, v)), DIMS(1, 0));
    tt_ir_attrs a = dot_attrs(1, 0, TT_PRECISION_FP32);
    tt_ir_builder_add_output(b, t);
    tt_ir_builder_add_output(b, tt_ir_dot_general(b, alias_reshape, w, &a, TT_F32));
    if (alias_as_output) tt_ir_builder_add_output(b, y);
}

static void test_a_groups_value_and_its_reshape_are_stored_once(void) {
    float *x = malloc(FR * FC * sizeof *x), *w = malloc(FR * 4 * sizeof *w);
    if (!x || !w) goto out;
    for (int i = 0; i < FR * FC; i++) x[i] = (float)(i % 37) * 0.03f - 0.5f;
    for (int i = 0; i < FR * 4; i++) w[i] = (float)(i % 5) * 0.25f - 0.5f;
    const void *in[2] = {x, w};
    for (int as_output = 0; as_output < 2; as_output++) {
        alias_as_output = as_output;
        check_fused_equals_unfused(build_alias, in, 2 + as_output);
        tt_ir_program *p = NULL;
        tt_host_fusion *f = plan_of(build_alias, &p);
        if (f) TT_CHECK(tt_host_fuse_alias(f, alias_reshape) >= 0); /* no memory of its own */
        tt_host_fuse_free(f);
        tt_ir_program_destroy(p);
    }
out:
    free(x);
    free(w);
}

/* A row-blocked program (layer_norm shape) updating its input in place: each block reads its rows before it
 * writes them, so the result equals the plain interpreter's. */
static void test_row_blocks_update_an_input_in_place_like_the_whole_program(void) {
    enum { N = FR * FC };
    float *x = malloc(N * sizeof *x), *w = malloc(FC * sizeof *w), *want = malloc(N * sizeof *want);
    float *got = malloc(N * sizeof *got), *rs = malloc(FR * sizeof *rs);
    if (!x || !w || !want || !got || !rs) goto out;
    for (int i = 0; i < N; i++) x[i] = (float)((i * 7919) % 2001 - 1000) / 250.0f;
    for (int i = 0; i < FC; i++) w[i] = (float)(i % 17) / 8.0f;
    for (int pass = 0; pass < 2; pass++) {
        setenv("TORCHTPU_HOST_ROWS", pass ? "0" : "1", 1);
        tt_ir_builder *b = tt_ir_builder_create();
        build_layer_norm(b);
        tt_ir_program *p = NULL;
        TT_CHECK_OK(tt_ir_builder_finish(b, &p));
        tt_ir_builder_destroy(b);
        tt_executable *exe = NULL;
        if (p) TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
        if (exe) {
            tt_exec_arg a[2], res[2];
            memset(a, 0, sizeof a);
            memset(res, 0, sizeof res);
            a[0].buffer = upload(x, N * sizeof(float));
            a[0].strides[0] = FC;
            a[0].strides[1] = 1;
            a[1].buffer = upload(w, FC * sizeof(float));
            a[1].strides[0] = 1;
            res[0] = a[0]; /* y overwrites x */
            res[1].buffer = upload(NULL, FR * sizeof(float));
            res[1].strides[0] = 1;
            TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, a, 2, res, 2));
            TT_CHECK_OK(drv()->iface.read(drv()->ctx, a[0].buffer, 0, pass ? want : got, N * sizeof(float)));
            drv()->iface.buffer_free(drv()->ctx, a[0].buffer);
            drv()->iface.buffer_free(drv()->ctx, a[1].buffer);
            drv()->iface.buffer_free(drv()->ctx, res[1].buffer);
            drv()->iface.executable_free(drv()->ctx, exe);
        }
        tt_ir_program_destroy(p);
    }
    unsetenv("TORCHTPU_HOST_ROWS");
    TT_CHECK(memcmp(got, want, N * sizeof(float)) == 0);
out:
    free(x);
    free(w);
    free(want);
    free(got);
    free(rs);
}

/* Counts the planner's groups and the values it keeps in tiles. */
static void plan_counts(build_fn build, int32_t *groups, int32_t *internal) {
    tt_ir_program *p = NULL;
    tt_host_fusion *f = plan_of(build, &p);
    *groups = *internal = -1;
    if (f) {
        *groups = tt_host_fuse_n_groups(f);
        *internal = 0;
        for (tt_ir_value v = 0; v < p->n_values; v++) *internal += tt_host_fuse_internal(f, v);
    }
    tt_host_fuse_free(f);
    tt_ir_program_destroy(p);
}

static void test_the_planners_fuse_whole_chains_and_find_row_blocks(void) {
    int32_t g, in;
    plan_counts(build_gelu, &g, &in);
    TT_CHECK(g == 1 && in >= 8); /* one group; only the two outputs leave it */
    plan_counts(build_layer_norm, &g, &in);
    /* one group: the sums over rows, the row-level math between them, the broadcasts back over the rows */
    TT_CHECK(g == 1 && in >= 8);
    plan_counts(build_softmax4, &g, &in);
    TT_CHECK(g == 1);
    plan_counts(build_rows_mixed, &g, &in);
    TT_CHECK(g >= 2); /* the column sum and the over-long rows are not row reductions of one group */
    /* interleaved chains: one group each; chain 0's closed by the reduction, its last step a group of two */
    plan_counts(build_foreach, &g, &in);
    TT_CHECK(g == 4);
    setenv("TORCHTPU_HOST_FUSE", "0", 1);
    plan_counts(build_gelu, &g, &in);
    unsetenv("TORCHTPU_HOST_FUSE");
    TT_CHECK(g == 0 && in == 0);
    /* Row blocks: layer_norm and the select program keep their rows; the transposing broadcast does not. */
    build_fn fns[4] = {build_layer_norm, build_select, build_softmax4, build_mixed};
    for (int i = 0; i < 4; i++) {
        tt_ir_builder *b = tt_ir_builder_create();
        fns[i](b);
        tt_ir_program *p = NULL;
        TT_CHECK_OK(tt_ir_builder_finish(b, &p));
        tt_ir_builder_destroy(b);
        tt_executable *exe = NULL;
        if (p) TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
        int64_t blocks = tt_host_executable_row_blocks(exe);
        TT_CHECK(i < 3 ? blocks > 1 : blocks == 0);
        drv()->iface.executable_free(drv()->ctx, exe);
        tt_ir_program_destroy(p);
    }
}

/* Distance in f32 steps between a and b (ordered bit patterns; +0 and -0 are one step apart). */
static int64_t ulp_distance(float a, float b) {
    int32_t ia, ib;
    memcpy(&ia, &a, 4);
    memcpy(&ib, &b, 4);
    int64_t oa = ia < 0 ? (int64_t)INT32_MIN - ia : ia, ob = ib < 0 ? (int64_t)INT32_MIN - ib : ib;
    return oa > ob ? oa - ob : ob - oa;
}

/* The vectorized f32 exp / tanh / erf against double-precision libm rounded to f32: within 1 / 2 / 2 ulp on a sweep
 * of f32 bit patterns and on dense sweeps of their branch points, special values exact, in place as out of place. */
static void test_vector_exp_tanh_and_erf_are_within_their_ulp_bounds(void) {
    enum { N = 400000 };
    float *x = malloc(N * sizeof *x), *e = malloc(N * sizeof *e), *t = malloc(N * sizeof *t);
    float *r = malloc(N * sizeof *r);
    if (!x || !e || !t || !r) goto out;
    for (int sweep = 0; sweep < 3; sweep++) {
        for (uint32_t i = 0; i < N; i++) {
            uint32_t bits = (uint32_t)((uint64_t)i * 2654435761u * 7u);
            if (sweep == 0) memcpy(&x[i], &bits, 4);
            if (sweep == 1) x[i] = ((float)i - N / 2) * (24.0f / N);   /* [-12, 12]: every branch of all three */
            if (sweep == 2) x[i] = -110.0f + (float)i * (210.0f / N); /* exp's whole range, overflow, subnormals */
        }
        if (sweep == 0) {
            const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 88.72f, 88.73f, -87.3f, -103.9f, -104.0f,
                                1e-30f, -1e-8f, 9.0f, 0.625f, -1.0f, 3.92f, 1e-45f};
            memcpy(x, sp, sizeof sp);
        }
        tt_host_vexp_f32(x, e, N);
        tt_host_vtanh_f32(x, t, N);
        tt_host_verf_f32(x, r, N);
        int64_t worst[3] = {0, 0, 0};
        int bad = 0;
        for (int i = 0; i < N && bad < 5; i++) {
            float want[3] = {(float)exp((double)x[i]), (float)tanh((double)x[i]), (float)erf((double)x[i])};
            float got[3] = {e[i], t[i], r[i]};
            static const int64_t bound[3] = {1, 2, 2};
            for (int f = 0; f < 3; f++) {
                int64_t d = isnan(want[f]) ? (isnan(got[f]) ? 0 : INT64_MAX) : ulp_distance(want[f], got[f]);
                if (d > worst[f]) worst[f] = d;
                if (d > bound[f] && bad++ < 5)
                    fprintf(stderr, "  %s(%a) = %a want %a\n", f == 0 ? "exp" : f == 1 ? "tanh" : "erf", x[i], got[f],
                            want[f]);
            }
        }
        TT_CHECK(bad == 0);
        fprintf(stderr, "     sweep %d: worst ulp exp %lld tanh %lld erf %lld\n", sweep, (long long)worst[0],
                (long long)worst[1], (long long)worst[2]);
    }
    /* special values exactly */
    const float sp[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f};
    const float we[] = {NAN, INFINITY, 0.0f, 1.0f, 1.0f}, wt[] = {NAN, 1.0f, -1.0f, 0.0f, -0.0f};
    tt_host_vexp_f32(sp, e, 5);
    tt_host_vtanh_f32(sp, t, 5);
    tt_host_verf_f32(sp, r, 5);
    TT_CHECK(isnan(e[0]) && isnan(t[0]) && isnan(r[0]));
    for (int i = 1; i < 5; i++)
        TT_CHECK(memcmp(&e[i], &we[i], 4) == 0 && memcmp(&t[i], &wt[i], 4) == 0 && memcmp(&r[i], &wt[i], 4) == 0);
    /* in place gives the same bits */
    for (int i = 0; i < N; i++) x[i] = ((float)i - N / 2) * (24.0f / N);
    tt_host_verf_f32(x, r, N);
    tt_host_verf_f32(x, x, N);
    TT_CHECK(memcmp(x, r, N * sizeof *x) == 0);
out:
    free(r);
    free(x);
    free(e);
    free(t);
}

/* A fused gelu against libm, so the fused path is also checked against an independent reference. */
static void test_fused_gelu_matches_the_formula(void) {
    enum { N = FR * FC };
    fx = malloc(N * sizeof *fx);
    float *r = malloc(N * sizeof *r), *t = malloc(N * sizeof *t);
    if (!fx || !r || !t) goto out;
    for (int i = 0; i < N; i++) fx[i] = (float)((i * 7919) % 2001 - 1000) / 250.0f;
    tt_ir_builder *b = tt_ir_builder_create();
    build_gelu(b);
    TT_CHECK_OK(run(b, (const void *[]){fx}, (void *[]){r, t}));
    for (int i = 0; i < N; i++) {
        float x = fx[i], e = erff(x * 0.70710678f), want = (x * 0.5f) * (1.0f + e);
        if (!same_f(r[i], want, 1e-6f)) {
            fprintf(stderr, "  gelu[%d] x=%g: got %.9g want %.9g\n", i, x, r[i], want);
            TT_CHECK(0);
            break;
        }
    }
out:
    free(fx);
    free(r);
    free(t);
}

/* ---- IR peepholes the window relies on, and matmuls reading transposed arguments in place ---- */

static int32_t count_ops(const tt_ir_program *p, tt_ir_op op, int32_t rank) {
    int32_t n = 0;
    for (int32_t k = 0; k < p->n_nodes; k++)
        if (p->nodes[k].op == op && p->types[p->nodes[k].outputs[0]].rank == rank) n++;
    return n;
}

static void test_splat_arithmetic_runs_once_and_a_dot_reads_through_a_transpose(void) {
    /* y = x * (1 - s) with s a scalar: the subtract is computed on the scalar and broadcast */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 3)), s = tt_ir_scalar_param(b, TT_F32);
    tt_ir_value t = tt_ir_binary(b, TT_OP_SUBTRACT, kf(b, x, 1.0), tt_ir_broadcast_in_dim(b, s, 2, DIMS(2, 3), NULL));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_MULTIPLY, x, t));
    /* z = w^T-as-rhs: x [2,3] . transpose(w [4,3]) contracting 3 */
    tt_ir_value w = tt_ir_param(b, TT_F32, 2, DIMS(4, 3));
    tt_ir_attrs a = dot_attrs(1, 0, TT_PRECISION_FP32);
    tt_ir_builder_add_output(b, tt_ir_dot_general(b, x, tt_ir_transpose(b, w, DIMS(1, 0)), &a, TT_F32));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    if (!p) return;
    TT_CHECK(count_ops(p, TT_OP_SUBTRACT, 0) == 1 && count_ops(p, TT_OP_SUBTRACT, 2) == 0);
    TT_CHECK(count_ops(p, TT_OP_TRANSPOSE, 2) == 0); /* the dot contracts w's dim 1 itself */
    const float X[6] = {1, 2, 3, 4, 5, 6}, W[12] = {1, 0, 2, -1, 3, 1, 0.5f, 2, -2, 4, 1, 0};
    double sv = 0.25;
    float y[6], z[8];
    /* run with w given as a transposed view of a [3, 4] buffer: read in place (no gather) */
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    float Wt[12];
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 3; j++) Wt[j * 4 + i] = W[i * 3 + j];
    tt_exec_arg args[3], res[2];
    memset(args, 0, sizeof args);
    memset(res, 0, sizeof res);
    for (int32_t i = 0; i < p->n_params; i++) {
        tt_ir_value v = p->params[i];
        if (p->nodes[p->value_node[v]].op == TT_OP_SCALAR_PARAMETER) {
            args[i].f = sv;
        } else if (p->types[v].dims[0] == 4) { /* w: [4, 3] with strides (1, 4) */
            args[i].buffer = upload(Wt, sizeof Wt);
            args[i].strides[0] = 1;
            args[i].strides[1] = 4;
        } else {
            args[i].buffer = upload(X, sizeof X);
            contiguous(&p->types[v], &args[i]);
        }
    }
    for (int32_t o = 0; o < 2; o++) {
        res[o].buffer = upload(NULL, type_bytes(&p->types[p->outputs[o]]));
        contiguous(&p->types[p->outputs[o]], &res[o]);
    }
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, args, p->n_params, res, 2));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[0].buffer, 0, y, sizeof y));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[1].buffer, 0, z, sizeof z));
    for (int i = 0; i < 6; i++) TT_CHECK(y[i] == X[i] * (1.0f - 0.25f));
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 4; j++) {
            float want = 0;
            for (int k = 0; k < 3; k++) want += X[i * 3 + k] * W[j * 3 + k];
            TT_CHECK(z[i * 4 + j] == want);
        }
    for (int i = 0; i < 3; i++) drv()->iface.buffer_free(drv()->ctx, args[i].buffer);
    for (int o = 0; o < 2; o++) drv()->iface.buffer_free(drv()->ctx, res[o].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}

int main(void) {
    static const tt_test_case cases[] = {
        {"fused elementwise groups equal the unfused interpreter bit for bit",
         test_fused_elementwise_groups_equal_the_unfused_interpreter_bit_for_bit},
        {"fused gelu matches the formula", test_fused_gelu_matches_the_formula},
        {"vector exp, tanh and erf are within their ulp bounds",
         test_vector_exp_tanh_and_erf_are_within_their_ulp_bounds},
        {"results are written directly unless they alias", test_results_are_written_directly_unless_they_alias},
        {"a group's value and its reshape are stored once", test_a_groups_value_and_its_reshape_are_stored_once},
        {"row blocks update an input in place like the whole program",
         test_row_blocks_update_an_input_in_place_like_the_whole_program},
        {"an update writes its parameters in place only when nothing reads them later",
         test_an_update_writes_its_parameters_in_place_only_when_nothing_reads_them_later},
        {"a reshape shares its operand's memory while it is read",
         test_a_reshape_shares_its_operands_memory_while_it_is_read},
        {"row reductions over the last dim take the lane kernels",
         test_row_reductions_over_the_last_dim_take_the_lane_kernels},
        {"the planners fuse whole chains and find row blocks", test_the_planners_fuse_whole_chains_and_find_row_blocks},
        {"splat arithmetic runs once and a dot reads through a transpose",
         test_splat_arithmetic_runs_once_and_a_dot_reads_through_a_transpose},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
