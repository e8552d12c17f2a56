/* tt_test_kernels.h — custom kernels (tt_kernel.h) the driver tests register and call from programs. */
#ifndef TT_TEST_KERNELS_H
#define TT_TEST_KERNELS_H
#include "tt_ir.h"
#include "tt_kernel.h"

/* out[i, :] = 3 * a[i, :] + rowsum(b)[i] for f32 a[m, n], b[m, k]: reads both inputs row-major and its output's
 * shape is its own, so a layout mix-up or a swapped operand shows. */
static tt_status test_kernel_axpy_rows(void *user, const tt_kernel_tensor *in, int32_t n_in, tt_kernel_tensor *out,
                                       int32_t n_out) {
    (void)user;
    if (n_in != 2 || n_out != 1 || in[0].rank != 2 || in[1].rank != 2 || in[0].dtype != TT_F32 ||
        in[1].dtype != TT_F32 || out[0].dtype != TT_F32 || in[1].dims[0] != in[0].dims[0] ||
        out[0].rank != 2 || out[0].dims[0] != in[0].dims[0] || out[0].dims[1] != in[0].dims[1])
        return tt_error(TT_STATUS_TYPE, "axpy_rows: wants f32 a[m, n], b[m, k] -> f32[m, n]");
    const float *a = in[0].data, *b = in[1].data;
    float *o = out[0].data;
    int64_t m = in[0].dims[0], n = in[0].dims[1], k = in[1].dims[1];
    for (int64_t i = 0; i < m; i++) {
        float s = 0;
        for (int64_t j = 0; j < k; j++) s += b[i * k + j];
        for (int64_t j = 0; j < n; j++) o[i * n + j] = 3 * a[i * n + j] + s;
    }
    return TT_OK;
}

static tt_status test_kernel_fail(void *user, const tt_kernel_tensor *in, int32_t n_in, tt_kernel_tensor *out,
                                  int32_t n_out) {
    (void)user, (void)in, (void)n_in, (void)out, (void)n_out;
    return tt_error(TT_STATUS_INVALID_ARGUMENT, "told to fail (%d)", 42);
}

static inline void register_test_kernels(void) {
    TT_CHECK_OK(tt_kernel_register("test.axpy_rows", test_kernel_axpy_rows, NULL));
    TT_CHECK_OK(tt_kernel_register("test.fail", test_kernel_fail, NULL));
}

/* y = axpy_rows(x * 2, transpose(w)) + 1 for x: f32[2, 3], w: f32[4, 2]: the kernel between fusible elementwise ops
 * and reading a transposed value. Expected values from expect_axpy_program. */
static inline tt_ir_program *axpy_program(const char *kernel) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t xd[2] = {2, 3}, wd[2] = {4, 2};
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, xd), w = tt_ir_param(b, TT_F32, 2, wd);
    tt_ir_value two = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 2.0), 2, xd, NULL);
    tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1.0), 2, xd, NULL);
    tt_ir_value ins[2] = {tt_ir_binary(b, TT_OP_MULTIPLY, x, two), tt_ir_transpose(b, w, (const int64_t[]){1, 0})};
    tt_ir_type t = {TT_F32, 2, {2, 3}};
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, tt_ir_custom_call(b, kernel, 2, ins, &t), one));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static const float axpy_x[6] = {1, 2, 3, 4, 5, 6}, axpy_w[8] = {1, 10, 2, 20, 3, 30, 4, 40};

static inline void expect_axpy_program(const float *y) {
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            float s = 0;
            for (int k = 0; k < 4; k++) s += axpy_w[k * 2 + i];
            TT_CHECK(y[i * 3 + j] == 3 * (2 * axpy_x[i * 3 + j]) + s + 1);
        }
}
#endif /* TT_TEST_KERNELS_H */
