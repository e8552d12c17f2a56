/* test_host.c — the host driver: buffers and memory limits, the interpreter's views and aliasing, and every IR
 * op it implements on small inputs against hand-computed values. */
#include "tt_driver.h"
#include "tt_ir.h"
#include "tt_test.h"

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#include "tt_host_run.h"
#include "tt_test_kernels.h"
/* y = op(x) (or op(x, x2)) for f32[n], checked against expect. */
static void check_f32(tt_ir_op op, int n, const float *x, const float *x2, const float *expect, float tol) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t d = n;
    tt_ir_value a = tt_ir_param(b, TT_F32, 1, &d);
    tt_ir_value y = x2 ? tt_ir_binary(b, op, a, tt_ir_param(b, TT_F32, 1, &d)) : tt_ir_unary(b, op, a);
    tt_ir_builder_add_output(b, y);
    float out[16];
    TT_CHECK_OK(run(b, (const void *[]){x, x2}, (void *[]){out}));
    for (int i = 0; i < n; i++) {
        if (!same_f(out[i], expect[i], tol)) {
            fprintf(stderr, "  %s[%d]: got %.9g want %.9g\n", tt_ir_op_name(op), i, out[i], expect[i]);
            TT_CHECK(0);
        }
    }
}

/* ---------------------------------------------------------------------------------------------------------- */

static void test_buffers_round_trip_and_count_bytes_per_device(void) {
    tt_driver *d = tt_host_driver_create(2, 0);
    TT_CHECK(d && d->iface.device_count(d->ctx) == 2);
    TT_CHECK(strcmp(d->iface.name, "host") == 0);
    tt_buffer *a = NULL, *z = NULL, *c = NULL;
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 1, 100, &a));
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 1, 0, &z));
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 0, 100, &c));
    TT_CHECK(d->iface.buffer_address(d->ctx, z) != NULL);
    TT_CHECK(((uintptr_t)d->iface.buffer_address(d->ctx, a) & 63) == 0);
    tt_driver_memory_stats ms;
    TT_CHECK_OK(d->iface.memory_stats(d->ctx, 1, &ms));
    TT_CHECK(ms.bytes_in_use == 100 && ms.bytes_limit == 0);
    char src[100], dst[100];
    for (int i = 0; i < 100; i++) src[i] = (char)i;
    TT_CHECK_OK(d->iface.write(d->ctx, a, 0, src, 100));
    TT_CHECK_OK(d->iface.copy(d->ctx, c, 0, a, 10, 90));
    TT_CHECK_OK(d->iface.read(d->ctx, c, 0, dst, 90));
    TT_CHECK(memcmp(dst, src + 10, 90) == 0);
    TT_CHECK(d->iface.read(d->ctx, c, 50, dst, 60) == TT_STATUS_INVALID_ARGUMENT);
    tt_buffer *bad = NULL;
    TT_CHECK(d->iface.buffer_alloc(d->ctx, 2, 8, &bad) == TT_STATUS_INVALID_ARGUMENT && !bad);
    d->iface.buffer_free(d->ctx, a);
    d->iface.buffer_free(d->ctx, z);
    d->iface.buffer_free(d->ctx, c);
    d->iface.buffer_free(d->ctx, NULL);
    TT_CHECK_OK(d->iface.memory_stats(d->ctx, 1, &ms));
    TT_CHECK(ms.bytes_in_use == 0);
    tt_driver_destroy(d);
    tt_driver_destroy(NULL);
}

static void test_allocation_over_the_limit_is_out_of_memory_with_a_useful_message(void) {
    tt_driver *d = tt_host_driver_create(1, 1000);
    tt_buffer *a = NULL, *b = NULL;
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 0, 600, &a));
    TT_CHECK(d->iface.buffer_alloc(d->ctx, 0, 500, &b) == TT_STATUS_OUT_OF_MEMORY && !b);
    TT_CHECK(strcmp(tt_last_error(),
                    "tpu:0 out of memory: tried to allocate 500 bytes; 600 bytes in use, limit 1000 bytes") == 0);
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 0, 400, &b));
    d->iface.buffer_free(d->ctx, a);
    d->iface.buffer_free(d->ctx, b);
    tt_driver_destroy(d);
}

static void test_adding_two_small_tensors_is_correct_and_fast(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(4)), y = tt_ir_param(b, TT_F32, 1, DIMS(4));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, y));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    tt_exec_arg args[2], res[1];
    memset(args, 0, sizeof args);
    memset(res, 0, sizeof res);
    args[0].buffer = upload(F32S(1, 2, 3, 4), 16);
    args[1].buffer = upload(F32S(10, 20, 30, 40), 16);
    res[0].buffer = upload(NULL, 16);
    args[0].strides[0] = args[1].strides[0] = res[0].strides[0] = 1;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int reps = 2000;
    for (int i = 0; i < reps; i++) TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, args, 2, res, 1));
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double us = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) / reps / 1e3;
    printf("  add f32[4]: %.2f us per execute (sanitized build)\n", us);
    TT_CHECK(us < 50.0); /* the release build is far below 5 us; ASan/UBSan slow this one */
    float out[4];
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, res[0].buffer, 0, out, 16));
    TT_CHECK(out[0] == 11 && out[1] == 22 && out[2] == 33 && out[3] == 44);
    for (int i = 0; i < 2; i++) drv()->iface.buffer_free(drv()->ctx, args[i].buffer);
    drv()->iface.buffer_free(drv()->ctx, res[0].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}

static void test_float_unary_ops_match_libm_and_pytorch_conventions(void) {
    float nan = NAN, inf = INFINITY;
    check_f32(TT_OP_ABS, 3, F32S(-1.5f, 0, 2), NULL, F32S(1.5f, 0, 2), 0);
    check_f32(TT_OP_NEGATE, 2, F32S(-1.5f, 2), NULL, F32S(1.5f, -2), 0);
    check_f32(TT_OP_SIGN, 4, F32S(-3, 0, 5, nan), NULL, F32S(-1, 0, 1, nan), 0);
    check_f32(TT_OP_FLOOR, 2, F32S(-1.5f, 1.5f), NULL, F32S(-2, 1), 0);
    check_f32(TT_OP_CEIL, 2, F32S(-1.5f, 1.5f), NULL, F32S(-1, 2), 0);
    check_f32(TT_OP_ROUND_EVEN, 4, F32S(2.5f, 3.5f, -2.5f, 0.4f), NULL, F32S(2, 4, -2, 0), 0);
    check_f32(TT_OP_EXP, 2, F32S(0, 1), NULL, F32S(1, 2.7182817f), 1e-6f);
    check_f32(TT_OP_EXPM1, 1, F32S(1e-7f), NULL, F32S(1e-7f), 1e-6f);
    check_f32(TT_OP_LOG, 3, F32S(1, 0, -1), NULL, F32S(0, -inf, nan), 1e-6f);
    check_f32(TT_OP_LOG1P, 1, F32S(1e-7f), NULL, F32S(1e-7f), 1e-6f);
    check_f32(TT_OP_SQRT, 2, F32S(4, 2), NULL, F32S(2, 1.4142135f), 1e-6f);
    check_f32(TT_OP_RSQRT, 1, F32S(4), NULL, F32S(0.5f), 1e-6f);
    check_f32(TT_OP_CBRT, 2, F32S(27, -8), NULL, F32S(3, -2), 1e-6f);
    check_f32(TT_OP_SIN, 1, F32S(1), NULL, F32S(0.84147098f), 1e-6f);
    check_f32(TT_OP_COS, 1, F32S(1), NULL, F32S(0.54030231f), 1e-6f);
    check_f32(TT_OP_TAN, 1, F32S(1), NULL, F32S(1.5574077f), 1e-6f);
    check_f32(TT_OP_TANH, 1, F32S(1), NULL, F32S(0.76159416f), 1e-6f);
    check_f32(TT_OP_ASIN, 1, F32S(1), NULL, F32S(1.5707964f), 1e-6f);
    check_f32(TT_OP_ACOS, 1, F32S(0), NULL, F32S(1.5707964f), 1e-6f);
    check_f32(TT_OP_ATAN, 1, F32S(1), NULL, F32S(0.78539819f), 1e-6f);
    check_f32(TT_OP_SINH, 1, F32S(1), NULL, F32S(1.1752012f), 1e-6f);
    check_f32(TT_OP_COSH, 1, F32S(1), NULL, F32S(1.5430806f), 1e-6f);
    check_f32(TT_OP_ASINH, 1, F32S(1), NULL, F32S(0.88137359f), 1e-6f);
    check_f32(TT_OP_ACOSH, 1, F32S(2), NULL, F32S(1.3169579f), 1e-6f);
    check_f32(TT_OP_ATANH, 1, F32S(0.5f), NULL, F32S(0.54930615f), 1e-6f);
    check_f32(TT_OP_LOGISTIC, 3, F32S(0, -200, 200), NULL, F32S(0.5f, 0, 1), 1e-6f);
    check_f32(TT_OP_ERF, 1, F32S(0.5f), NULL, F32S(0.52049988f), 1e-6f);
    check_f32(TT_OP_ERFC, 1, F32S(0.5f), NULL, F32S(0.47950012f), 1e-6f);
    check_f32(TT_OP_ERF_INV, 6, F32S(0.5f, -0.9f, 1, -1, 2, 0), NULL, F32S(0.47693628f, -1.1630871f, inf, -inf, nan, 0),
              1e-6f);
    check_f32(TT_OP_LGAMMA, 4, F32S(0.5f, 0, -1, 3), NULL, F32S(0.57236494f, inf, inf, 0.69314718f), 1e-6f);
    check_f32(TT_OP_DIGAMMA, 7, F32S(1, 0, -0.0f, -1, -2.5f, 1e-30f, 10), NULL,
              F32S(-0.57721566f, -inf, inf, nan, 1.1031566f, -1e30f, 2.2517526f), 1e-5f);
}

static void test_float_binary_ops_and_nan_propagation(void) {
    float nan = NAN;
    check_f32(TT_OP_SUBTRACT, 2, F32S(1, 2), F32S(3, 5), F32S(-2, -3), 0);
    check_f32(TT_OP_MULTIPLY, 2, F32S(1.5f, 2), F32S(3, 5), F32S(4.5f, 10), 0);
    check_f32(TT_OP_DIVIDE, 2, F32S(1, -1), F32S(4, 0), F32S(0.25f, -INFINITY), 0);
    check_f32(TT_OP_REMAINDER, 2, F32S(-7, 7), F32S(3, -3), F32S(-1, 1), 0);
    check_f32(TT_OP_POWER, 2, F32S(2, 9), F32S(10, 0.5f), F32S(1024, 3), 1e-6f);
    check_f32(TT_OP_MAXIMUM, 3, F32S(1, nan, 3), F32S(2, 1, nan), F32S(2, nan, nan), 0);
    check_f32(TT_OP_MINIMUM, 3, F32S(1, nan, 3), F32S(2, 1, nan), F32S(1, nan, nan), 0);
    check_f32(TT_OP_ATAN2, 1, F32S(1), F32S(-1), F32S(2.3561945f), 1e-6f);
    check_f32(TT_OP_NEXTAFTER, 1, F32S(1), F32S(2), F32S(1.00000012f), 0);
}

static void test_bf16_and_f16_round_after_every_op(void) {
    /* bf16: 1 + 2^-8 is a tie and rounds to even (1.0); 1 + 3*2^-8 rounds up to 1 + 2^-6... */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_BF16, 1, DIMS(2)), y = tt_ir_param(b, TT_BF16, 1, DIMS(2));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, y));
    uint16_t xs[2] = {tt_f32_to_bf16(1.0f), tt_f32_to_bf16(1.0f)};
    uint16_t ys[2] = {tt_f32_to_bf16(0x1p-8f), tt_f32_to_bf16(0x1.8p-7f)};
    uint16_t out[2];
    TT_CHECK_OK(run(b, (const void *[]){xs, ys}, (void *[]){out}));
    TT_CHECK(tt_bf16_to_f32(out[0]) == 1.0f);
    TT_CHECK(tt_bf16_to_f32(out[1]) == 1.015625f);
    /* f16: exp(1) = 2.71828 -> nearest f16 2.71875 */
    b = tt_ir_builder_create();
    x = tt_ir_param(b, TT_F16, 1, DIMS(1));
    tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_EXP, x));
    uint16_t one = tt_f32_to_f16(1.0f), e;
    TT_CHECK_OK(run(b, (const void *[]){&one}, (void *[]){&e}));
    TT_CHECK(tt_f16_to_f32(e) == 2.71875f);
}

/* z = op(x, y) on dtype dt with int64 inputs/outputs converted around it. */
static void check_int(tt_dtype dt, tt_ir_op op, int n, const int64_t *x, const int64_t *y, const int64_t *expect) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t d = n;
    tt_ir_value a = tt_ir_param(b, dt, 1, &d);
    tt_ir_value r = y ? tt_ir_binary(b, op, a, tt_ir_param(b, dt, 1, &d)) : tt_ir_unary(b, op, a);
    tt_ir_builder_add_output(b, tt_ir_convert(b, r, TT_I64));
    /* Inputs pass through converts from i64 so the test data stays int64. */
    (void)0;
    unsigned char xb[128], yb[128];
    size_t es = tt_dtype_size(dt);
    for (int i = 0; i < n; i++) {
        uint64_t vx = (uint64_t)x[i], vy = y ? (uint64_t)y[i] : 0;
        memcpy(xb + (size_t)i * es, &vx, es); /* little-endian truncation = wrap */
        memcpy(yb + (size_t)i * es, &vy, es);
    }
    int64_t out[16];
    TT_CHECK_OK(run(b, (const void *[]){xb, yb}, (void *[]){out}));
    for (int i = 0; i < n; i++) {
        if (out[i] != expect[i]) {
            fprintf(stderr, "  %s %s[%d]: got %lld want %lld\n", tt_dtype_name(dt), tt_ir_op_name(op), i,
                    (long long)out[i], (long long)expect[i]);
            TT_CHECK(0);
        }
    }
}
#define I64S(...) ((const int64_t[]){__VA_ARGS__})

static void test_integer_ops_wrap_and_define_division_by_zero(void) {
    check_int(TT_I8, TT_OP_ADD, 2, I64S(127, -128), I64S(1, -1), I64S(-128, 127));
    check_int(TT_I32, TT_OP_MULTIPLY, 1, I64S(65536), I64S(65536), I64S(0));
    check_int(TT_I64, TT_OP_ADD, 1, I64S(INT64_MAX), I64S(1), I64S(INT64_MIN));
    check_int(TT_I32, TT_OP_DIVIDE, 4, I64S(7, -7, 5, INT32_MIN), I64S(2, 2, 0, -1), I64S(3, -3, -1, INT32_MIN));
    check_int(TT_I64, TT_OP_DIVIDE, 1, I64S(INT64_MIN), I64S(-1), I64S(INT64_MIN));
    check_int(TT_U8, TT_OP_DIVIDE, 1, I64S(5), I64S(0), I64S(255));
    check_int(TT_I32, TT_OP_REMAINDER, 4, I64S(-7, 7, 5, INT32_MIN), I64S(3, -3, 0, -1), I64S(-1, 1, 5, 0));
    check_int(TT_I64, TT_OP_REMAINDER, 1, I64S(INT64_MIN), I64S(-1), I64S(0));
    check_int(TT_I32, TT_OP_POWER, 5, I64S(3, 2, 1, -1, 2), I64S(4, 31, -3, -3, -1), I64S(81, INT32_MIN, 1, -1, 0));
    check_int(TT_I32, TT_OP_SHIFT_LEFT, 3, I64S(1, 1, 1), I64S(3, 31, 32), I64S(8, INT32_MIN, 0));
    check_int(TT_I32, TT_OP_SHIFT_RIGHT_LOGICAL, 2, I64S(-1, -1), I64S(28, 32), I64S(15, 0));
    check_int(TT_I32, TT_OP_SHIFT_RIGHT_ARITHMETIC, 3, I64S(-16, -16, 16), I64S(2, 40, 40), I64S(-4, -1, 0));
    check_int(TT_I8, TT_OP_NEGATE, 1, I64S(-128), NULL, I64S(-128));
    check_int(TT_I16, TT_OP_ABS, 2, I64S(-5, INT16_MIN), NULL, I64S(5, INT16_MIN));
    check_int(TT_I32, TT_OP_SIGN, 3, I64S(-5, 0, 9), NULL, I64S(-1, 0, 1));
    check_int(TT_U8, TT_OP_NOT, 1, I64S(0x0f), NULL, I64S(0xf0));
    check_int(TT_I32, TT_OP_AND, 1, I64S(12), I64S(10), I64S(8));
    check_int(TT_I32, TT_OP_OR, 1, I64S(12), I64S(10), I64S(14));
    check_int(TT_I32, TT_OP_XOR, 1, I64S(12), I64S(10), I64S(6));
    check_int(TT_I32, TT_OP_MAXIMUM, 1, I64S(-3), I64S(2), I64S(2));
    check_int(TT_U8, TT_OP_MINIMUM, 1, I64S(200), I64S(3), I64S(3));
    check_int(TT_U8, TT_OP_SUBTRACT, 1, I64S(0), I64S(1), I64S(255));
    /* bool: add = or, mul = and, not = logical not */
    check_int(TT_BOOL, TT_OP_ADD, 2, I64S(1, 0), I64S(1, 0), I64S(1, 0));
    check_int(TT_BOOL, TT_OP_MULTIPLY, 2, I64S(1, 1), I64S(0, 1), I64S(0, 1));
    check_int(TT_BOOL, TT_OP_NOT, 2, I64S(1, 0), NULL, I64S(0, 1));
}

static void test_compare_select_clamp_and_is_finite(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(4)), y = tt_ir_param(b, TT_F32, 1, DIMS(4));
    tt_ir_value lt = tt_ir_compare(b, TT_CMP_LT, x, y);
    tt_ir_builder_add_output(b, lt);
    tt_ir_builder_add_output(b, tt_ir_compare(b, TT_CMP_NE, x, y));
    tt_ir_builder_add_output(b, tt_ir_select(b, lt, x, y));
    tt_ir_builder_add_output(b, tt_ir_clamp(b, y, x, tt_ir_binary(b, TT_OP_ADD, y, y)));
    tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_IS_FINITE, x));
    uint8_t o_lt[4], o_ne[4], o_fin[4];
    float o_sel[4], o_cl[4];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, NAN, 5, INFINITY), F32S(2, 1, 3, 1)},
                    (void *[]){o_lt, o_ne, o_sel, o_cl, o_fin}));
    TT_CHECK(o_lt[0] == 1 && o_lt[1] == 0 && o_lt[2] == 0 && o_lt[3] == 0);
    TT_CHECK(o_ne[0] == 1 && o_ne[1] == 1 && o_ne[2] == 1);
    TT_CHECK(o_sel[0] == 1 && o_sel[1] == 1 && o_sel[2] == 3);
    TT_CHECK(o_cl[0] == 2 && isnan(o_cl[1]) && o_cl[2] == 5 && o_cl[3] == 2);
    TT_CHECK(o_fin[0] == 1 && o_fin[1] == 0 && o_fin[2] == 1 && o_fin[3] == 0);
}

static void test_convert_truncates_saturates_and_maps_bools(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(6));
    tt_ir_builder_add_output(b, tt_ir_convert(b, x, TT_I32));
    tt_ir_builder_add_output(b, tt_ir_convert(b, x, TT_U8));
    tt_ir_builder_add_output(b, tt_ir_convert(b, x, TT_BOOL));
    tt_ir_builder_add_output(b, tt_ir_convert(b, tt_ir_convert(b, x, TT_BOOL), TT_F32));
    tt_ir_builder_add_output(b, tt_ir_convert(b, x, TT_BF16));
    int32_t oi[6];
    uint8_t ou[6], ob[6];
    float of[6];
    uint16_t obf[6];
    TT_CHECK_OK(run(b, (const void *[]){F32S(-2.7f, 2.7f, NAN, 300, -1, 0)}, (void *[]){oi, ou, ob, of, obf}));
    TT_CHECK(oi[0] == -2 && oi[1] == 2 && oi[2] == 0 && oi[3] == 300 && oi[4] == -1);
    TT_CHECK(ou[3] == 44 && ou[4] == 255 && ou[2] == 0);
    TT_CHECK(ob[0] == 1 && ob[2] == 1 && ob[5] == 0);
    TT_CHECK(of[0] == 1 && of[5] == 0);
    TT_CHECK(tt_bf16_to_f32(obf[3]) == 300.0f && tt_bf16_to_f32(obf[1]) == 2.703125f);
}

static void test_strided_parameter_and_aliasing_strided_result_views(void) {
    /* x: 2x3 view of a transposed 3x2 buffer; y contiguous. out = x + y written, transposed, back into x's
     * buffer: the result aliases the argument. */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 3)), y = tt_ir_param(b, TT_F32, 2, DIMS(2, 3));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, y));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    /* buffer holds [pad, x^T (3x2)]: x[i][j] = buf[1 + j*2 + i] */
    float xb[7] = {-1, 1, 4, 2, 5, 3, 6};
    tt_exec_arg args[2], res[1];
    memset(args, 0, sizeof args);
    memset(res, 0, sizeof res);
    args[0].buffer = upload(xb, sizeof xb);
    args[0].offset = 1;
    args[0].strides[0] = 1;
    args[0].strides[1] = 2;
    args[1].buffer = upload(F32S(10, 20, 30, 40, 50, 60), 24);
    args[1].strides[0] = 3;
    args[1].strides[1] = 1;
    res[0] = args[0];
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, args, 2, res, 1));
    float got[7];
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, args[0].buffer, 0, got, sizeof got));
    /* x = [[1,2,3],[4,5,6]]; out = [[11,22,33],[44,55,66]] stored transposed after the pad. */
    const float want[7] = {-1, 11, 44, 22, 55, 33, 66};
    TT_CHECK(memcmp(got, want, sizeof want) == 0);
    /* A view reaching past the buffer is rejected before anything runs. */
    args[0].offset = 3;
    TT_CHECK(drv()->iface.execute(drv()->ctx, 0, exe, args, 2, res, 1) == TT_STATUS_INVALID_ARGUMENT);
    drv()->iface.buffer_free(drv()->ctx, args[0].buffer);
    drv()->iface.buffer_free(drv()->ctx, args[1].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}

static void test_outputs_that_are_parameters_survive_swapped_aliasing_results(void) {
    /* (a, b) -> (b, a), results written into a's and b's own buffers. */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_I32, 1, DIMS(2)), y = tt_ir_param(b, TT_I32, 1, DIMS(2));
    tt_ir_builder_add_output(b, y);
    tt_ir_builder_add_output(b, x);
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    tt_exec_arg args[2];
    memset(args, 0, sizeof args);
    args[0].buffer = upload((const int32_t[]){1, 2}, 8);
    args[1].buffer = upload((const int32_t[]){3, 4}, 8);
    args[0].strides[0] = args[1].strides[0] = 1;
    tt_exec_arg res[2] = {args[0], args[1]};
    TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, exe, args, 2, res, 2));
    int32_t a[2], c[2];
    drv()->iface.read(drv()->ctx, args[0].buffer, 0, a, 8);
    drv()->iface.read(drv()->ctx, args[1].buffer, 0, c, 8);
    TT_CHECK(a[0] == 3 && a[1] == 4 && c[0] == 1 && c[1] == 2);
    drv()->iface.buffer_free(drv()->ctx, args[0].buffer);
    drv()->iface.buffer_free(drv()->ctx, args[1].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}

static void test_scalar_parameters_constants_and_iota(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(3));
    tt_ir_value s = tt_ir_scalar_param(b, TT_F32);
    tt_ir_value c = tt_ir_constant(b, TT_F32, 1, DIMS(3), F32S(100, 200, 300));
    tt_ir_value sb = tt_ir_broadcast_in_dim(b, s, 1, DIMS(3), NULL);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, x, sb), c));
    tt_ir_builder_add_output(b, tt_ir_iota(b, TT_I32, 2, DIMS(2, 3), 1));
    tt_ir_builder_add_output(b, tt_ir_iota(b, TT_F32, 2, DIMS(2, 3), 0));
    double sv = 2.5;
    float o[3], fi[6];
    int32_t ii[6];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3), &sv}, (void *[]){o, ii, fi}));
    TT_CHECK(o[0] == 102.5f && o[1] == 205 && o[2] == 307.5f);
    TT_CHECK(ii[0] == 0 && ii[2] == 2 && ii[3] == 0 && ii[5] == 2);
    TT_CHECK(fi[0] == 0 && fi[2] == 0 && fi[3] == 1 && fi[5] == 1);
}

static void test_movement_ops(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 3)); /* [[1,2,3],[4,5,6]] */
    tt_ir_value v = tt_ir_param(b, TT_F32, 1, DIMS(3));
    tt_ir_builder_add_output(b, tt_ir_broadcast_in_dim(b, v, 2, DIMS(2, 3), DIMS(1)));
    tt_ir_builder_add_output(b, tt_ir_transpose(b, x, DIMS(1, 0)));
    tt_ir_builder_add_output(b, tt_ir_slice(b, x, DIMS(0, 0), DIMS(2, 3), DIMS(1, 2)));
    tt_ir_builder_add_output(b, tt_ir_reverse(b, x, 1, DIMS(1)));
    tt_ir_value xs[2] = {x, x};
    tt_ir_builder_add_output(b, tt_ir_concatenate(b, 2, xs, 1));
    tt_ir_builder_add_output(b, tt_ir_reshape(b, x, 1, DIMS(6)));
    float bc[6], tr[6], sl[4], rv[6], cc[12], rs[6];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4, 5, 6), F32S(7, 8, 9)}, (void *[]){bc, tr, sl, rv, cc, rs}));
    TT_CHECK(memcmp(bc, F32S(7, 8, 9, 7, 8, 9), 24) == 0);
    TT_CHECK(memcmp(tr, F32S(1, 4, 2, 5, 3, 6), 24) == 0);
    TT_CHECK(memcmp(sl, F32S(1, 3, 4, 6), 16) == 0);
    TT_CHECK(memcmp(rv, F32S(3, 2, 1, 6, 5, 4), 24) == 0);
    TT_CHECK(memcmp(cc, F32S(1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6), 48) == 0);
    TT_CHECK(memcmp(rs, F32S(1, 2, 3, 4, 5, 6), 24) == 0);
}

static void test_pad_with_negative_and_interior_padding(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(4)); /* 1 2 3 4 */
    tt_ir_value z = tt_ir_constant_scalar(b, TT_F32, 0);
    /* interior 1: 1 0 2 0 3 0 4; low -2 crops "1 0"; high 1 appends one 0 -> 2 0 3 0 4 0 */
    tt_ir_builder_add_output(b, tt_ir_pad(b, x, z, DIMS(-2), DIMS(1), DIMS(1)));
    tt_ir_builder_add_output(b, tt_ir_pad(b, x, z, DIMS(1), DIMS(-3), NULL)); /* 0 1 */
    float o1[6], o2[2];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4)}, (void *[]){o1, o2}));
    TT_CHECK(memcmp(o1, F32S(2, 0, 3, 0, 4, 0), 24) == 0);
    TT_CHECK(o2[0] == 0 && o2[1] == 1);
}

static void test_dynamic_slice_and_update_clamp_their_starts(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(5));
    tt_ir_value u = tt_ir_param(b, TT_F32, 1, DIMS(2));
    tt_ir_value st = tt_ir_scalar_param(b, TT_I64);
    tt_ir_builder_add_output(b, tt_ir_dynamic_slice(b, x, &st, DIMS(3)));
    tt_ir_builder_add_output(b, tt_ir_dynamic_update_slice(b, x, u, &st));
    double start = 4; /* clamped to 2 and 3 */
    float ds[3], dus[5];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4, 5), F32S(8, 9), &start}, (void *[]){ds, dus}));
    TT_CHECK(memcmp(ds, F32S(3, 4, 5), 12) == 0);
    TT_CHECK(memcmp(dus, F32S(1, 2, 3, 8, 9), 20) == 0);
}

static void test_gather_rows_with_clamped_indices(void) {
    /* embedding: operand 3x2, indices [2, 0, 7] -> rows 2, 0, and 2 (7 clamped) */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(3, 2));
    tt_ir_value idx = tt_ir_param(b, TT_I64, 1, DIMS(3));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.offset_dims.n = 1;
    a.gather.offset_dims.v[0] = 1;
    a.gather.collapsed_slice_dims.n = 1;
    a.gather.collapsed_slice_dims.v[0] = 0;
    a.gather.start_index_map.n = 1;
    a.gather.start_index_map.v[0] = 0;
    a.gather.slice_sizes.n = 2;
    a.gather.slice_sizes.v[0] = 1;
    a.gather.slice_sizes.v[1] = 2;
    a.gather.index_vector_dim = 1;
    tt_ir_builder_add_output(b, tt_ir_gather(b, x, idx, &a));
    float o[6];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4, 5, 6), I64S(2, 0, 7)}, (void *[]){o}));
    TT_CHECK(memcmp(o, F32S(5, 6, 1, 2, 5, 6), 24) == 0);
}

static void test_scatter_add_skips_out_of_bounds_windows(void) {
    /* operand 4x2 zeros; rows [1, 5, 1] += updates 3x2; index 5 is skipped; row 1 gets two adds */
    for (int kind = TT_REDUCE_NONE; kind <= TT_REDUCE_ADD; kind++) {
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(4, 2));
        tt_ir_value idx = tt_ir_param(b, TT_I32, 2, DIMS(3, 1));
        tt_ir_value upd = tt_ir_param(b, TT_F32, 2, DIMS(3, 2));
        tt_ir_attrs a;
        memset(&a, 0, sizeof a);
        a.scatter.update_window_dims.n = 1;
        a.scatter.update_window_dims.v[0] = 1;
        a.scatter.inserted_window_dims.n = 1;
        a.scatter.inserted_window_dims.v[0] = 0;
        a.scatter.scatter_dims_to_operand_dims.n = 1;
        a.scatter.scatter_dims_to_operand_dims.v[0] = 0;
        a.scatter.index_vector_dim = 1;
        a.scatter.kind = (tt_ir_reduce_kind)kind;
        tt_ir_builder_add_output(b, tt_ir_scatter(b, x, idx, upd, &a));
        float o[8];
        TT_CHECK_OK(run(b, (const void *[]){F32S(1, 1, 1, 1, 1, 1, 1, 1), (const int32_t[]){1, 5, 1}, F32S(1, 2, 3, 4, 5, 6)},
                        (void *[]){o}));
        if (kind == TT_REDUCE_ADD) TT_CHECK(memcmp(o, F32S(1, 1, 7, 9, 1, 1, 1, 1), 32) == 0);
        else TT_CHECK(o[0] == 1 && (o[2] == 5 || o[2] == 1) && o[4] == 1 && o[6] == 1);
    }
}

static void test_reductions_over_any_dims_with_nan_and_large_sums(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 3));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, x, 1, DIMS(0)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MAX, x, 1, DIMS(1)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MUL, x, 2, DIMS(0, 1)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MIN, x, 1, DIMS(1)));
    float s0[3], mx[2], pr, mn[2];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4, NAN, 6)}, (void *[]){s0, mx, &pr, mn}));
    TT_CHECK(s0[0] == 5 && isnan(s0[1]) && s0[2] == 9);
    TT_CHECK(mx[0] == 3 && isnan(mx[1]) && mn[0] == 1 && isnan(mn[1]));
    TT_CHECK(isnan(pr));
    /* Large f32 sum stays accurate (pairwise): 1M values of 0.1 sum to 100000 within 1e-5 relative. */
    enum { N = 1 << 20 };
    float *big = malloc(N * sizeof *big);
    if (!big) return;
    for (int i = 0; i < N; i++) big[i] = 0.1f;
    b = tt_ir_builder_create();
    x = tt_ir_param(b, TT_F32, 1, DIMS(N));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, x, 1, DIMS(0)));
    float s;
    TT_CHECK_OK(run(b, (const void *[]){big}, (void *[]){&s}));
    double want = (double)N * 0.1f;
    TT_CHECK(fabs(s - want) <= 1e-5 * want);
    free(big);
    /* bool and int reductions */
    b = tt_ir_builder_create();
    x = tt_ir_param(b, TT_BOOL, 1, DIMS(3));
    tt_ir_value xi = tt_ir_param(b, TT_I32, 1, DIMS(3));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_OR, x, 1, DIMS(0)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_AND, x, 1, DIMS(0)));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, xi, 1, DIMS(0)));
    uint8_t any, all;
    int32_t si;
    TT_CHECK_OK(run(b, (const void *[]){(const uint8_t[]){0, 1, 0}, (const int32_t[]){INT32_MAX, 1, 5}},
                    (void *[]){&any, &all, &si}));
    TT_CHECK(any == 1 && all == 0 && si == INT32_MIN + 5);
}

/* f32 sums over leading or middle dims (the column path) give the bits of the same data transposed and reduced
 * over its last dim (the row path): sizes around the 16 lanes, the 512-element block and its halving, column
 * tiles of 256, an outer kept dim; -0 sums to +0 in both. */
static void test_column_sums_equal_row_sums_bit_for_bit(void) {
    static const int64_t cases[][3] = {{1, 5, 3}, {1, 16, 300}, {2, 37, 17}, {1, 512, 64}, {3, 513, 5},
                                       {1, 1500, 257}, {1, 4, 3}};
    uint64_t st = 12345;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int64_t A = cases[c][0], R = cases[c][1], K = cases[c][2];
        float *x = malloc((size_t)(A * R * K) * sizeof *x), *xt = malloc((size_t)(A * R * K) * sizeof *xt);
        float *o1 = malloc((size_t)(A * K) * sizeof *o1), *o2 = malloc((size_t)(A * K) * sizeof *o2);
        if (!x || !xt || !o1 || !o2) return;
        for (int64_t i = 0; i < A * R * K; i++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            x[i] = (float)((int64_t)(st >> 40) - (1 << 23)) * 1e-3f;
            if (c == 6) x[i] = -0.0f;
        }
        for (int64_t a = 0; a < A; a++)
            for (int64_t r = 0; r < R; r++)
                for (int64_t k = 0; k < K; k++) xt[(a * K + k) * R + r] = x[(a * R + r) * K + k];
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value v = tt_ir_param(b, TT_F32, 3, DIMS(A, R, K));
        tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, DIMS(1)));
        TT_CHECK_OK(run(b, (const void *[]){x}, (void *[]){o1}));
        b = tt_ir_builder_create();
        v = tt_ir_param(b, TT_F32, 3, DIMS(A, K, R));
        tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, DIMS(2)));
        TT_CHECK_OK(run(b, (const void *[]){xt}, (void *[]){o2}));
        TT_CHECK(memcmp(o1, o2, (size_t)(A * K) * sizeof *o1) == 0);
        free(x);
        free(xt);
        free(o1);
        free(o2);
    }
    /* an empty reduced dim between kept ones: zeros */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value v = tt_ir_param(b, TT_F32, 3, DIMS(2, 0, 3));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, v, 1, DIMS(1)));
    float z[6] = {1, 1, 1, 1, 1, 1}, dummy = 0;
    TT_CHECK_OK(run(b, (const void *[]){&dummy}, (void *[]){z}));
    for (int i = 0; i < 6; i++) TT_CHECK(z[i] == 0.0f);
}

static void test_arg_reduce_takes_the_first_extreme_and_nan_wins(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 4));
    tt_ir_builder_add_output(b, tt_ir_arg_reduce(b, x, 1, false));
    tt_ir_builder_add_output(b, tt_ir_arg_reduce(b, x, 1, true));
    tt_ir_builder_add_output(b, tt_ir_arg_reduce(b, x, 0, false));
    int64_t amax[2], amin[2], a0[4];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 5, 5, 0, 2, NAN, 9, NAN)}, (void *[]){amax, amin, a0}));
    TT_CHECK(amax[0] == 1 && amax[1] == 1);
    TT_CHECK(amin[0] == 3 && amin[1] == 1);
    TT_CHECK(a0[0] == 1 && a0[1] == 1 && a0[2] == 1 && a0[3] == 1);
}

static void test_cumulative_sum_and_reverse_product(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 3));
    tt_ir_value xi = tt_ir_param(b, TT_I32, 1, DIMS(4));
    tt_ir_builder_add_output(b, tt_ir_cumulative(b, TT_REDUCE_ADD, x, 1, false));
    tt_ir_builder_add_output(b, tt_ir_cumulative(b, TT_REDUCE_MUL, x, 0, true));
    tt_ir_builder_add_output(b, tt_ir_cumulative(b, TT_REDUCE_MAX, xi, 0, false));
    float cs[6], cp[6];
    int32_t cm[4];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4, 5, 6), (const int32_t[]){1, 3, 2, 5}}, (void *[]){cs, cp, cm}));
    TT_CHECK(memcmp(cs, F32S(1, 3, 6, 4, 9, 15), 24) == 0);
    TT_CHECK(memcmp(cp, F32S(4, 10, 18, 4, 5, 6), 24) == 0);
    TT_CHECK(cm[0] == 1 && cm[1] == 3 && cm[2] == 3 && cm[3] == 5);
}

static void test_sort_puts_nan_last_ascending_first_descending_and_carries_a_second_operand(void) {
    for (int desc = 0; desc < 2; desc++) {
        tt_ir_builder *b = tt_ir_builder_create();
        tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(5));
        tt_ir_value ids[2] = {x, tt_ir_iota(b, TT_I64, 1, DIMS(5), 0)}, outs[2];
        tt_ir_sort(b, 2, ids, 0, desc, true, outs);
        tt_ir_builder_add_output(b, outs[0]);
        tt_ir_builder_add_output(b, outs[1]);
        float v[5];
        int64_t ix[5];
        TT_CHECK_OK(run(b, (const void *[]){F32S(3, NAN, 1, 3, 2)}, (void *[]){v, ix}));
        if (!desc) {
            TT_CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3 && v[3] == 3 && isnan(v[4]));
            TT_CHECK(ix[0] == 2 && ix[1] == 4 && ix[2] == 0 && ix[3] == 3 && ix[4] == 1);
        } else {
            TT_CHECK(isnan(v[0]) && v[1] == 3 && v[2] == 3 && v[3] == 2 && v[4] == 1);
            TT_CHECK(ix[0] == 1 && ix[1] == 0 && ix[2] == 3 && ix[3] == 4 && ix[4] == 2);
        }
    }
    /* integer sort along dim 0 of a 3x2 */
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_I32, 2, DIMS(3, 2)), out;
    tt_ir_sort(b, 1, &x, 0, false, true, &out);
    tt_ir_builder_add_output(b, out);
    int32_t o[6];
    TT_CHECK_OK(run(b, (const void *[]){(const int32_t[]){5, -1, 2, 7, -3, 0}}, (void *[]){o}));
    TT_CHECK(o[0] == -3 && o[1] == -1 && o[2] == 2 && o[3] == 0 && o[4] == 5 && o[5] == 7);
}

static void test_rng_uniform_is_deterministic_in_range_and_matches_the_shared_hash(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value seed = tt_ir_scalar_param(b, TT_I64), off = tt_ir_scalar_param(b, TT_I64);
    tt_ir_builder_add_output(b, tt_ir_rng_uniform(b, TT_F32, 1, DIMS(1000), seed, off));
    tt_ir_builder_add_output(b, tt_ir_rng_uniform(b, TT_F64, 1, DIMS(3), seed, off));
    double sd = 42, of = 7;
    static float r[1000];
    double r64[3];
    TT_CHECK_OK(run(b, (const void *[]){&sd, &of}, (void *[]){r, r64}));
    double mean = 0;
    for (int i = 0; i < 1000; i++) {
        TT_CHECK(r[i] >= 0 && r[i] < 1);
        mean += r[i] / 1000;
    }
    TT_CHECK(mean > 0.45 && mean < 0.55);
    TT_CHECK(r[3] == (float)(tt_ir_rng_bits(42, 10) >> 40) * 0x1p-24f);
    TT_CHECK(r64[1] == (double)(tt_ir_rng_bits(42, 8) >> 11) * 0x1p-53);
}

static void test_dot_general_runs_through_the_matmul_kernel(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, DIMS(2, 2)), y = tt_ir_param(b, TT_F32, 2, DIMS(2, 2));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = 1;
    a.dot.rhs_contract.n = 1;
    a.dot.rhs_contract.v[0] = 0;
    a.dot.precision = TT_PRECISION_FP32;
    tt_ir_builder_add_output(b, tt_ir_dot_general(b, x, y, &a, TT_F32));
    float o[4];
    TT_CHECK_OK(run(b, (const void *[]){F32S(1, 2, 3, 4), F32S(5, 6, 7, 8)}, (void *[]){o}));
    TT_CHECK(o[0] == 19 && o[1] == 22 && o[2] == 43 && o[3] == 50);
}

static void test_a_registered_c_kernel_runs_between_the_programs_other_nodes(void) {
    register_test_kernels();
    tt_ir_program *p = axpy_program("test.axpy_rows");
    tt_buffer *x = upload(axpy_x, sizeof axpy_x), *w = upload(axpy_w, sizeof axpy_w), *y = upload(NULL, 24);
    tt_exec_arg args[2] = {{.buffer = x}, {.buffer = w}}, res[1] = {{.buffer = y}};
    for (int i = 0; i < 2; i++) contiguous(&p->types[p->params[i]], &args[i]);
    contiguous(&p->types[p->outputs[0]], &res[0]);
    tt_executable *e = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &e));
    float o[6] = {0};
    if (e) TT_CHECK_OK(drv()->iface.execute(drv()->ctx, 0, e, args, 2, res, 1));
    TT_CHECK_OK(drv()->iface.read(drv()->ctx, y, 0, o, sizeof o));
    expect_axpy_program(o);
    drv()->iface.executable_free(drv()->ctx, e);
    tt_ir_program_destroy(p);
    /* a kernel's error is the execution's, with its message */
    p = axpy_program("test.fail");
    e = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &e));
    if (e) TT_CHECK(drv()->iface.execute(drv()->ctx, 0, e, args, 2, res, 1) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "kernel test.fail: told to fail (42)") != NULL);
    drv()->iface.executable_free(drv()->ctx, e);
    tt_ir_program_destroy(p);
    /* an unregistered one is refused at compile, named */
    p = axpy_program("test.no_such_kernel");
    e = NULL;
    TT_CHECK(drv()->iface.compile(drv()->ctx, p, &e) == TT_STATUS_UNSUPPORTED && !e);
    TT_CHECK(strstr(tt_last_error(), "custom_call test.no_such_kernel: no kernel of that name is registered"));
    tt_ir_program_destroy(p);
    for (tt_buffer **b = (tt_buffer *[]){x, w, y, NULL}; *b; b++) drv()->iface.buffer_free(drv()->ctx, *b);
}

static void test_kernel_names_are_checked_and_a_name_keeps_its_function(void) {
    TT_CHECK(tt_kernel_register("bad name", test_kernel_fail, NULL) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_kernel_register("", test_kernel_fail, NULL) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_kernel_register(NULL, test_kernel_fail, NULL) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK_OK(tt_kernel_register("test.twice", test_kernel_fail, NULL));
    TT_CHECK_OK(tt_kernel_register("test.twice", test_kernel_fail, NULL)); /* the same: a no-op */
    TT_CHECK(tt_kernel_register("test.twice", test_kernel_axpy_rows, NULL) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_kernel_call("test.twice", 10, NULL, 0, NULL, 0) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(!strcmp(tt_last_error(), "kernel test.twice: told to fail (42)"));
    TT_CHECK(tt_kernel_call("test.twic", 9, NULL, 0, NULL, 0) == TT_STATUS_UNSUPPORTED);
    TT_CHECK(tt_kernel_call("test.twicex", 11, NULL, 0, NULL, 0) == TT_STATUS_UNSUPPORTED);
}

static void test_large_inputs_take_the_parallel_and_transposing_paths(void) {
    enum { R = 300, C = 200, N = 100000 };
    float *x = malloc(R * C * sizeof *x);
    uint16_t *h = malloc(N * sizeof *h), *ho = malloc(N * sizeof *ho);
    float *col = malloc(C * sizeof *col), one[4];
    if (!x || !h || !ho || !col) goto out;
    for (int i = 0; i < R * C; i++) x[i] = (float)(i % 7) - 3.0f + 0.25f * (float)(i % 3);
    for (int i = 0; i < N; i++) h[i] = tt_f32_to_bf16((float)(i % 100));
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value xv = tt_ir_param(b, TT_F32, 2, DIMS(R, C));
    tt_ir_value hv = tt_ir_param(b, TT_BF16, 1, DIMS(N));
    tt_ir_value sv = tt_ir_param(b, TT_F32, 2, DIMS(1, 4));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, xv, 1, DIMS(0)));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, hv, hv));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, sv, 1, DIMS(0)));
    TT_CHECK_OK(run(b, (const void *[]){x, h, F32S(1, 2, 3, 4)}, (void *[]){col, ho, one}));
    for (int c = 0; c < C; c++) {
        double want = 0;
        for (int r = 0; r < R; r++) want += x[r * C + c];
        TT_CHECK_NEAR(col[c], want, 1e-3);
    }
    for (int i = 0; i < N; i += 997) TT_CHECK(tt_bf16_to_f32(ho[i]) == 2.0f * (float)(i % 100));
    TT_CHECK(one[0] == 1 && one[3] == 4);
out:
    free(x);
    free(h);
    free(ho);
    free(col);
}

static void test_f64_ops_compute_in_double(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F64, 1, DIMS(2));
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, tt_ir_unary(b, TT_OP_EXP, x), x));
    tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_ERF_INV, x));
    double o[2], e[2];
    TT_CHECK_OK(run(b, (const void *[]){(const double[]){1e-10, 0.5}}, (void *[]){o, e}));
    TT_CHECK(o[0] == exp(1e-10) + 1e-10);
    TT_CHECK(fabs(e[1] - 0.4769362762044699) < 1e-15);
    TT_CHECK(fabs(erf(e[0]) - 1e-10) < 1e-24);
}

typedef struct conc_job {
    tt_executable *exe;
    float base;
    int bad;
} conc_job;

static void *conc_worker(void *user) {
    conc_job *j = user;
    float in[64], out[64];
    for (int i = 0; i < 64; i++) in[i] = j->base + (float)i;
    tt_exec_arg a[1], r[1];
    memset(a, 0, sizeof a);
    memset(r, 0, sizeof r);
    if (drv()->iface.buffer_alloc(drv()->ctx, 0, sizeof in, &a[0].buffer) != TT_OK ||
        drv()->iface.buffer_alloc(drv()->ctx, 0, sizeof out, &r[0].buffer) != TT_OK) {
        j->bad = 1;
        return NULL;
    }
    drv()->iface.write(drv()->ctx, a[0].buffer, 0, in, sizeof in);
    a[0].strides[0] = r[0].strides[0] = 1;
    for (int rep = 0; rep < 200; rep++) {
        if (drv()->iface.execute(drv()->ctx, 0, j->exe, a, 1, r, 1) != TT_OK) j->bad = 1;
        drv()->iface.read(drv()->ctx, r[0].buffer, 0, out, sizeof out);
        for (int i = 0; i < 64; i++)
            if (out[i] != 2 * in[i] + 1) j->bad = 1;
    }
    drv()->iface.buffer_free(drv()->ctx, a[0].buffer);
    drv()->iface.buffer_free(drv()->ctx, r[0].buffer);
    return NULL;
}

static void test_one_executable_runs_concurrently_from_several_threads(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, DIMS(64));
    tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1), 1, DIMS(64), NULL);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, tt_ir_binary(b, TT_OP_ADD, x, x), one));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    tt_executable *exe = NULL;
    TT_CHECK_OK(drv()->iface.compile(drv()->ctx, p, &exe));
    conc_job jobs[4];
    pthread_t th[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (conc_job){exe, (float)(t * 1000), 0};
        pthread_create(&th[t], NULL, conc_worker, &jobs[t]);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(th[t], NULL);
        TT_CHECK(!jobs[t].bad);
    }
    drv()->iface.executable_free(drv()->ctx, exe);
    tt_ir_program_destroy(p);
}



int main(void) {
    static const tt_test_case cases[] = {
        {"buffers round trip and count bytes per device", test_buffers_round_trip_and_count_bytes_per_device},
        {"allocation over the limit is out of memory with a useful message",
         test_allocation_over_the_limit_is_out_of_memory_with_a_useful_message},
        {"adding two small tensors is correct and fast", test_adding_two_small_tensors_is_correct_and_fast},
        {"float unary ops match libm and pytorch conventions", test_float_unary_ops_match_libm_and_pytorch_conventions},
        {"float binary ops and nan propagation", test_float_binary_ops_and_nan_propagation},
        {"bf16 and f16 round after every op", test_bf16_and_f16_round_after_every_op},
        {"integer ops wrap and define division by zero", test_integer_ops_wrap_and_define_division_by_zero},
        {"compare select clamp and is_finite", test_compare_select_clamp_and_is_finite},
        {"convert truncates saturates and maps bools", test_convert_truncates_saturates_and_maps_bools},
        {"strided parameter and aliasing strided result views", test_strided_parameter_and_aliasing_strided_result_views},
        {"outputs that are parameters survive swapped aliasing results",
         test_outputs_that_are_parameters_survive_swapped_aliasing_results},
        {"scalar parameters constants and iota", test_scalar_parameters_constants_and_iota},
        {"column sums equal row sums bit for bit", test_column_sums_equal_row_sums_bit_for_bit},
        {"movement ops", test_movement_ops},
        {"pad with negative and interior padding", test_pad_with_negative_and_interior_padding},
        {"dynamic slice and update clamp their starts", test_dynamic_slice_and_update_clamp_their_starts},
        {"gather rows with clamped indices", test_gather_rows_with_clamped_indices},
        {"scatter add skips out of bounds windows", test_scatter_add_skips_out_of_bounds_windows},
        {"reductions over any dims with nan and large sums", test_reductions_over_any_dims_with_nan_and_large_sums},
        {"arg reduce takes the first extreme and nan wins", test_arg_reduce_takes_the_first_extreme_and_nan_wins},
        {"cumulative sum and reverse product", test_cumulative_sum_and_reverse_product},
        {"sort puts nan last ascending, first descending, and carries a second operand",
         test_sort_puts_nan_last_ascending_first_descending_and_carries_a_second_operand},
        {"rng uniform is deterministic, in range, and matches the shared hash",
         test_rng_uniform_is_deterministic_in_range_and_matches_the_shared_hash},
        {"dot general runs through the matmul kernel", test_dot_general_runs_through_the_matmul_kernel},
        {"a registered C kernel runs between the program's other nodes", test_a_registered_c_kernel_runs_between_the_programs_other_nodes},
        {"kernel names are checked and a name keeps its function", test_kernel_names_are_checked_and_a_name_keeps_its_function},
        {"large inputs take the parallel and transposing paths", test_large_inputs_take_the_parallel_and_transposing_paths},
        {"f64 ops compute in double", test_f64_ops_compute_in_double},
        {"one executable runs concurrently from several threads",
         test_one_executable_runs_concurrently_from_several_threads},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
