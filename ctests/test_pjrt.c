/* test_pjrt.c — the PJRT driver against a real plugin (TORCHTPU_PJRT_PLUGIN; `make ctest` points it at the
 * installed xla-cpu-pjrt): loading, buffers over immutable device values, compile and execute, results that
 * replace their buffers' values, scalars, bytes reinterpreted, serialization, errors instead of aborts. Every
 * program also runs on the host driver and the two must agree. Skips (passes, saying so) without
 * TORCHTPU_PJRT_PLUGIN. */
#include "tt_driver.h"
#include "tt_ir.h"
#include "tt_test.h"
#include "tt_test_kernels.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tt_driver *P;

static tt_buffer *put(tt_driver *d, const void *data, size_t n) {
    tt_buffer *b = NULL;
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 0, n, &b));
    if (b && data) TT_CHECK_OK(d->iface.write(d->ctx, b, 0, data, n));
    return b;
}

static tt_ir_program *finish(tt_ir_builder *b) {
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

/* Runs exe (compiled from p) on d with args (whole buffers or scalars) into results; the execution's status. */
static tt_status run_exe(tt_driver *d, tt_ir_program *p, tt_executable *exe, tt_exec_arg *args, tt_buffer **results) {
    tt_exec_arg res[4];
    memset(res, 0, sizeof res);
    for (int32_t i = 0; i < p->n_outputs; i++) {
        res[i].buffer = results[i];
        const tt_ir_type *t = &p->types[p->outputs[i]];
        int64_t s = 1;
        for (int32_t k = t->rank - 1; k >= 0; k--) res[i].strides[k] = s, s *= t->dims[k];
    }
    for (int32_t i = 0; i < p->n_params; i++) {
        const tt_ir_type *t = &p->types[p->params[i]];
        int64_t s = 1;
        for (int32_t k = t->rank - 1; k >= 0; k--) args[i].strides[k] = s, s *= t->dims[k];
    }
    return d->iface.execute(d->ctx, 0, exe, args, p->n_params, res, p->n_outputs);
}

/* Compiles p on d and runs it (run_exe). */
static tt_status exec(tt_driver *d, tt_ir_program *p, tt_exec_arg *args, tt_buffer **results) {
    tt_executable *exe = NULL;
    tt_status st = d->iface.compile(d->ctx, p, &exe);
    if (st != TT_OK) return st;
    st = run_exe(d, p, exe, args, results);
    d->iface.executable_free(d->ctx, exe);
    return st;
}

static void a_plugin_loads_and_names_itself(void) {
    TT_CHECK(!strcmp(P->iface.name, "pjrt"));
    TT_CHECK(P->iface.device_count(P->ctx) == 1);
    TT_CHECK(tt_pjrt_platform(P) && !strcmp(tt_pjrt_platform(P), "cpu"));
    TT_CHECK(strstr(P->iface.identity(P->ctx), "xla_cpu_pjrt.so cpu") != NULL);
    TT_CHECK(P->iface.capabilities(P->ctx) == 0); /* whole dense buffers: every view an IR op */
    TT_CHECK(tt_pjrt_platform(NULL) == NULL);
    TT_CHECK(P->iface.max_executables(P->ctx) >= 64); /* the compile cache stays within the JIT's mappings */
}

static void a_missing_or_wrong_plugin_is_an_error_with_a_message(void) {
    tt_driver *d = NULL;
    TT_CHECK(tt_pjrt_driver_create("/nonexistent/plugin.so", 1, 0, &d) == TT_STATUS_INVALID_ARGUMENT && !d);
    TT_CHECK(strstr(tt_last_error(), "/nonexistent/plugin.so") != NULL);
    TT_CHECK(tt_pjrt_driver_create(NULL, 1, 0, &d) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "TORCHTPU_PJRT_PLUGIN") != NULL);
    TT_CHECK(tt_pjrt_driver_create("libc.so.6", 1, 0, &d) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "GetPjrtApi") != NULL);
}

static void bytes_survive_partial_writes_reads_and_copies(void) {
    uint8_t src[64], dst[64];
    for (int i = 0; i < 64; i++) src[i] = (uint8_t)(i * 3);
    tt_buffer *a = put(P, NULL, 64), *b = put(P, NULL, 64);
    TT_CHECK_OK(P->iface.read(P->ctx, a, 0, dst, 64)); /* never written: zeros */
    TT_CHECK(dst[0] == 0 && dst[63] == 0);
    TT_CHECK_OK(P->iface.write(P->ctx, a, 0, src, 64));
    TT_CHECK_OK(P->iface.write(P->ctx, a, 8, src, 4)); /* partial: the rest kept */
    TT_CHECK_OK(P->iface.copy(P->ctx, b, 0, a, 4, 60));
    TT_CHECK_OK(P->iface.copy(P->ctx, a, 0, a, 1, 8)); /* overlapping, within one buffer */
    TT_CHECK_OK(P->iface.read(P->ctx, b, 0, dst, 60));
    TT_CHECK(dst[0] == src[4] && dst[4] == src[0] && dst[8] == src[12] && dst[59] == src[63]);
    TT_CHECK_OK(P->iface.read(P->ctx, a, 0, dst, 16));
    TT_CHECK(dst[0] == src[1] && dst[7] == src[0] && dst[8] == src[0] && dst[12] == src[12]);
    TT_CHECK(P->iface.read(P->ctx, a, 60, dst, 8) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(P->iface.write(P->ctx, a, 65, src, 0) == TT_STATUS_INVALID_ARGUMENT);
    P->iface.buffer_free(P->ctx, a);
    P->iface.buffer_free(P->ctx, b);
    P->iface.buffer_free(P->ctx, NULL);
}

static void memory_is_counted_and_limited(void) {
    tt_driver *d = NULL;
    TT_CHECK_OK(tt_pjrt_driver_create(getenv("TORCHTPU_PJRT_PLUGIN"), 1, 1000, &d));
    if (!d) return;
    tt_buffer *a = NULL, *b = NULL;
    TT_CHECK_OK(d->iface.buffer_alloc(d->ctx, 0, 600, &a));
    TT_CHECK(d->iface.buffer_alloc(d->ctx, 0, 600, &b) == TT_STATUS_OUT_OF_MEMORY && !b);
    TT_CHECK(d->iface.buffer_alloc(d->ctx, 1, 8, &b) == TT_STATUS_INVALID_ARGUMENT);
    tt_driver_memory_stats ms;
    TT_CHECK_OK(d->iface.memory_stats(d->ctx, 0, &ms));
    TT_CHECK(ms.bytes_in_use == 600 && ms.bytes_limit == 1000);
    d->iface.buffer_free(d->ctx, a);
    TT_CHECK_OK(d->iface.memory_stats(d->ctx, 0, &ms));
    TT_CHECK(ms.bytes_in_use == 0);
    tt_driver_destroy(d);
}

/* y = (x * s + 1) @ w, sum over rows as a second result: a dot, a scalar parameter, a broadcast, a reduce. */
static tt_ir_program *affine_program(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, (const int64_t[]){2, 3});
    tt_ir_value w = tt_ir_param(b, TT_F32, 2, (const int64_t[]){3, 2});
    tt_ir_value s = tt_ir_scalar_param(b, TT_F32);
    tt_ir_value sx = tt_ir_binary(b, TT_OP_MULTIPLY, x, tt_ir_broadcast_in_dim(b, s, 2, (const int64_t[]){2, 3}, NULL));
    tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1.0), 2, (const int64_t[]){2, 3}, NULL);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = 1;
    a.dot.precision = TT_PRECISION_FP32;
    tt_ir_value y = tt_ir_dot_general(b, tt_ir_binary(b, TT_OP_ADD, sx, one), w, &a, TT_F32);
    tt_ir_builder_add_output(b, y);
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, y, 1, (const int64_t[]){0}));
    return finish(b);
}

static void programs_run_as_on_the_host_driver(void) {
    tt_driver *h = tt_host_driver_create(1, 0);
    tt_ir_program *p = affine_program();
    const float x[6] = {1, 2, 3, -4, 5, 0.5f}, w[6] = {1, -1, 2, 0.25f, -3, 4};
    float got[2][6];
    tt_driver *ds[2] = {P, h};
    for (int k = 0; k < 2; k++) {
        tt_driver *d = ds[k];
        tt_exec_arg args[3];
        memset(args, 0, sizeof args);
        args[0].buffer = put(d, x, sizeof x);
        args[1].buffer = put(d, w, sizeof w);
        args[2].f = 0.5;
        tt_buffer *out[2] = {put(d, NULL, 16), put(d, NULL, 8)};
        TT_CHECK_OK(exec(d, p, args, out));
        TT_CHECK_OK(d->iface.read(d->ctx, out[0], 0, got[k], 16));
        TT_CHECK_OK(d->iface.read(d->ctx, out[1], 0, got[k] + 4, 8));
        for (int i = 0; i < 2; i++) d->iface.buffer_free(d->ctx, args[i].buffer);
        for (int i = 0; i < 2; i++) d->iface.buffer_free(d->ctx, out[i]);
    }
    /* row 0: (1.5, 2, 2.5) . w = 1.5 + 4 - 7.5, -1.5 + 0.5 + 10 */
    TT_CHECK_NEAR(got[0][0], -2.0, 1e-6);
    TT_CHECK_NEAR(got[0][1], 9.0, 1e-6);
    for (int i = 0; i < 6; i++) TT_CHECK_NEAR(got[0][i], got[1][i], 1e-5);
    tt_ir_program_destroy(p);
    tt_driver_destroy(h);
}

/* x += 1 with the result written into x's own buffer (x donated), twice: the device value is replaced each time,
 * and a host read in between sees it. */
static void a_result_replaces_the_value_of_the_buffer_it_aliases(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_I32, 1, (const int64_t[]){4});
    tt_ir_value one = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_I32, 1), 1, (const int64_t[]){4}, NULL);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, one));
    tt_ir_program *p = finish(b);
    const int32_t v[4] = {1, 2, 3, 40};
    tt_buffer *buf = put(P, v, sizeof v);
    int32_t got[4];
    for (int round = 1; round <= 2; round++) {
        tt_exec_arg args[1];
        memset(args, 0, sizeof args);
        args[0].buffer = buf;
        TT_CHECK_OK(exec(P, p, args, &buf));
        TT_CHECK_OK(P->iface.read(P->ctx, buf, 0, got, sizeof got));
        TT_CHECK(got[0] == 1 + round && got[3] == 40 + round);
    }
    /* the same buffer as two arguments and the result (x = x + x): read twice, so not donated */
    tt_ir_builder *b2 = tt_ir_builder_create();
    tt_ir_value u = tt_ir_param(b2, TT_I32, 1, (const int64_t[]){4}), w = tt_ir_param(b2, TT_I32, 1, (const int64_t[]){4});
    tt_ir_builder_add_output(b2, tt_ir_binary(b2, TT_OP_ADD, u, w));
    tt_ir_program *twice = finish(b2);
    tt_exec_arg args2[2];
    memset(args2, 0, sizeof args2);
    args2[0].buffer = args2[1].buffer = buf;
    TT_CHECK_OK(exec(P, twice, args2, &buf));
    TT_CHECK_OK(P->iface.read(P->ctx, buf, 0, got, sizeof got));
    TT_CHECK(got[0] == 6 && got[3] == 84);
    tt_ir_program_destroy(twice);
    /* a partial host write after a run keeps the device result's other bytes */
    const int32_t nine = 9;
    TT_CHECK_OK(P->iface.write(P->ctx, buf, 4, &nine, 4));
    TT_CHECK_OK(P->iface.read(P->ctx, buf, 0, got, sizeof got));
    TT_CHECK(got[0] == 6 && got[1] == 9 && got[2] == 10);
    P->iface.buffer_free(P->ctx, buf);
    tt_ir_program_destroy(p);
}

/* The same bytes read as another type by the next program (a dtype view of a storage): uploaded again. */
static void a_value_read_as_another_type_keeps_its_bytes(void) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, (const int64_t[]){2});
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, x));
    tt_ir_program *dbl = finish(b);
    b = tt_ir_builder_create();
    tt_ir_value u = tt_ir_param(b, TT_I32, 1, (const int64_t[]){2});
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_AND, u, u));
    tt_ir_program *ident = finish(b);
    const float v[2] = {1.5f, -2};
    tt_buffer *buf = put(P, v, sizeof v), *out = put(P, NULL, 8);
    tt_exec_arg args[1];
    memset(args, 0, sizeof args);
    args[0].buffer = buf;
    TT_CHECK_OK(exec(P, dbl, args, &buf)); /* device value f32[2] = {3, -4} */
    TT_CHECK_OK(exec(P, ident, args, &out)); /* read as i32[2] */
    int32_t got[2];
    TT_CHECK_OK(P->iface.read(P->ctx, out, 0, got, sizeof got));
    float f[2];
    memcpy(f, got, sizeof f);
    TT_CHECK(f[0] == 3.0f && f[1] == -4.0f);
    P->iface.buffer_free(P->ctx, buf);
    P->iface.buffer_free(P->ctx, out);
    tt_ir_program_destroy(dbl);
    tt_ir_program_destroy(ident);
}

static void executables_serialize_and_load_again(void) {
    tt_ir_program *p = affine_program();
    tt_executable *exe = NULL, *back = NULL;
    TT_CHECK_OK(P->iface.compile(P->ctx, p, &exe));
    void *bytes = NULL;
    size_t n = 0;
    if (exe) TT_CHECK_OK(P->iface.executable_serialize(P->ctx, exe, &bytes, &n));
    TT_CHECK(n > 0);
    if (bytes) TT_CHECK_OK(P->iface.executable_deserialize(P->ctx, p, bytes, n, &back));
    TT_CHECK(back != NULL);
    uint8_t junk[16] = {1, 2, 3};
    tt_executable *bad = NULL;
    TT_CHECK(P->iface.executable_deserialize(P->ctx, p, junk, sizeof junk, &bad) != TT_OK && !bad);
    free(bytes);
    P->iface.executable_free(P->ctx, exe);
    P->iface.executable_free(P->ctx, back);
    P->iface.executable_free(P->ctx, NULL);
    tt_ir_program_destroy(p);
}

/* y = x @ w (64 x 96 x 48) at precision prec on driver d. */
static void matmul_at(tt_driver *d, tt_precision prec, const float *x, const float *w, float *y) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value xv = tt_ir_param(b, TT_F32, 2, (const int64_t[]){64, 96});
    tt_ir_value wv = tt_ir_param(b, TT_F32, 2, (const int64_t[]){96, 48});
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = 1;
    a.dot.precision = prec;
    tt_ir_builder_add_output(b, tt_ir_dot_general(b, xv, wv, &a, TT_F32));
    tt_ir_program *p = finish(b);
    tt_exec_arg args[2];
    memset(args, 0, sizeof args);
    args[0].buffer = put(d, x, 64 * 96 * 4);
    args[1].buffer = put(d, w, 96 * 48 * 4);
    tt_buffer *out = put(d, NULL, 64 * 48 * 4);
    TT_CHECK_OK(exec(d, p, args, &out));
    TT_CHECK_OK(d->iface.read(d->ctx, out, 0, y, 64 * 48 * 4));
    d->iface.buffer_free(d->ctx, args[0].buffer);
    d->iface.buffer_free(d->ctx, args[1].buffer);
    d->iface.buffer_free(d->ctx, out);
    tt_ir_program_destroy(p);
}

/* The CPU plugin would multiply f32 exactly at every precision; the driver writes TPU precision out as bf16
 * passes (tt_ir_expand_precision), so each mode's error against a double reference is the host driver's:
 * DEFAULT ~2^-8 relative, HIGH ~2^-16, HIGHEST and FP32 ~2^-23. */
static void matmul_precision_is_tpu_precision(void) {
    static float x[64 * 96], w[96 * 48], y[64 * 48], yh[64 * 48];
    uint32_t seed = 12345;
    for (int i = 0; i < 64 * 96; i++) x[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    for (int i = 0; i < 96 * 48; i++) w[i] = (float)((seed = seed * 1664525u + 1013904223u) >> 8) / 16777216.0f - 0.5f;
    static double ref[64 * 48];
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 48; j++) {
            double acc = 0;
            for (int k = 0; k < 96; k++) acc += (double)x[i * 96 + k] * w[k * 48 + j];
            ref[i * 48 + j] = acc;
        }
    tt_driver *h = tt_host_driver_create(1, 0);
    const tt_precision modes[4] = {TT_PRECISION_DEFAULT, TT_PRECISION_HIGH, TT_PRECISION_HIGHEST, TT_PRECISION_FP32};
    const double lo[4] = {1e-4, 1e-8, 0, 0}, hi[4] = {2e-2, 2e-5, 1e-6, 1e-6}; /* max error bounds, |y| ~ 3 */
    for (int m = 0; m < 4; m++) {
        matmul_at(P, modes[m], x, w, y);
        matmul_at(h, modes[m], x, w, yh);
        double err = 0, diff = 0;
        for (int i = 0; i < 64 * 48; i++) {
            double e = y[i] - ref[i], dh = (double)y[i] - yh[i];
            if (fabs(e) > err) err = fabs(e);
            if (fabs(dh) > diff) diff = fabs(dh);
        }
        if (!(err >= lo[m] && err <= hi[m]) || diff > 1e-5)
            fprintf(stderr, "  mode %d: max error %.3g (bounds %.1g..%.1g), vs host %.3g\n", m, err, lo[m], hi[m], diff);
        TT_CHECK(err >= lo[m] && err <= hi[m]);
        TT_CHECK(diff <= 1e-5); /* the same arithmetic up to summation order */
    }
    tt_driver_destroy(h);
}

/* A C kernel runs inside the XLA program through the plugin's FFI (the host driver calls it directly): the same
 * result on both, a failing kernel's message as the execution's error, an unregistered one refused at compile. */
static void a_c_kernel_runs_inside_the_compiled_program(void) {
    register_test_kernels();
    TT_CHECK(P->iface.supports_op(P->ctx, TT_OP_CUSTOM_CALL, TT_F32));
    tt_driver *h = tt_host_driver_create(1, 0);
    tt_ir_program *p = axpy_program("test.axpy_rows");
    for (int d = 0; d < 2; d++) {
        tt_driver *drv = d ? h : P;
        tt_buffer *x = put(drv, axpy_x, sizeof axpy_x), *w = put(drv, axpy_w, sizeof axpy_w), *y = put(drv, NULL, 24);
        tt_exec_arg args[2] = {{.buffer = x}, {.buffer = w}};
        float o[6] = {0};
        TT_CHECK_OK(exec(drv, p, args, &y));
        TT_CHECK_OK(drv->iface.read(drv->ctx, y, 0, o, sizeof o));
        expect_axpy_program(o);
        if (drv == P) { /* as the persistent cache holds it: serialized, loaded again, run */
            tt_executable *exe = NULL, *back = NULL;
            void *bytes = NULL;
            size_t nb = 0;
            memset(o, 0, sizeof o);
            TT_CHECK_OK(P->iface.compile(P->ctx, p, &exe));
            if (exe) TT_CHECK_OK(P->iface.executable_serialize(P->ctx, exe, &bytes, &nb));
            if (bytes) TT_CHECK_OK(P->iface.executable_deserialize(P->ctx, p, bytes, nb, &back));
            if (back) TT_CHECK_OK(run_exe(P, p, back, args, &y));
            TT_CHECK_OK(P->iface.read(P->ctx, y, 0, o, sizeof o));
            expect_axpy_program(o);
            free(bytes);
            P->iface.executable_free(P->ctx, exe);
            P->iface.executable_free(P->ctx, back);
        }
        for (tt_buffer **b = (tt_buffer *[]){x, w, y, NULL}; *b; b++) drv->iface.buffer_free(drv->ctx, *b);
    }
    tt_ir_program_destroy(p);
    tt_driver_destroy(h);

    p = axpy_program("test.fail");
    tt_buffer *x = put(P, axpy_x, sizeof axpy_x), *w = put(P, axpy_w, sizeof axpy_w), *y = put(P, NULL, 24);
    tt_exec_arg args[2] = {{.buffer = x}, {.buffer = w}};
    TT_CHECK(exec(P, p, args, &y) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "kernel test.fail: told to fail (42)") != NULL);
    tt_ir_program_destroy(p);
    p = axpy_program("test.no_such_kernel");
    TT_CHECK(exec(P, p, args, &y) == TT_STATUS_UNSUPPORTED);
    TT_CHECK(strstr(tt_last_error(), "custom_call test.no_such_kernel: no kernel of that name is registered"));
    tt_ir_program_destroy(p);
    for (tt_buffer **b = (tt_buffer *[]){x, w, y, NULL}; *b; b++) P->iface.buffer_free(P->ctx, *b);
}

int main(void) {
    const char *plugin = getenv("TORCHTPU_PJRT_PLUGIN");
    if (!plugin) {
        printf("SKIP test_pjrt: TORCHTPU_PJRT_PLUGIN is not set\n");
        return 0;
    }
    tt_status st = tt_pjrt_driver_create(plugin, 1, 0, &P);
    if (st != TT_OK) { /* `make ctest` installed the plugin and built against its header: this is a failure */
        printf("FAIL the PJRT driver starts: %s: %s\n", tt_status_name(st), tt_last_error());
        return 1;
    }
    static const tt_test_case cases[] = {
        {"a plugin loads and names itself", a_plugin_loads_and_names_itself},
        {"a missing or wrong plugin is an error with a message", a_missing_or_wrong_plugin_is_an_error_with_a_message},
        {"bytes survive partial writes, reads and copies", bytes_survive_partial_writes_reads_and_copies},
        {"memory is counted and limited", memory_is_counted_and_limited},
        {"programs run as on the host driver", programs_run_as_on_the_host_driver},
        {"a result replaces the value of the buffer it aliases", a_result_replaces_the_value_of_the_buffer_it_aliases},
        {"a value read as another type keeps its bytes", a_value_read_as_another_type_keeps_its_bytes},
        {"executables serialize and load again", executables_serialize_and_load_again},
        {"a C kernel runs inside the compiled program", a_c_kernel_runs_inside_the_compiled_program},
        {"matmul precision is TPU precision", matmul_precision_is_tpu_precision},
        {NULL, NULL}};
    int rc = tt_test_run(cases);
    tt_driver_destroy(P);
    return rc;
}
