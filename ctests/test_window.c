/* test_window.c — the fused mode's windows (csrc/runtime/window.c) on the real host driver: pending storages,
 * views of them as IR ops, cuts and their reasons, threads, a driver without in-place views, errors at the cut.
 * Every case starts and shuts down its own runtime. */
#include "tt_runtime.h"
#include "tt_test.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static void start(tt_rt_eager_mode mode) {
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK_OK(tt_rt_set_eager_mode(mode));
    tt_rt_metrics_reset();
}

/* y = x <op> z for f32 tensors of dims (rank 2). */
static tt_ir_program *binary_program(tt_ir_op op, int64_t r, int64_t c) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t d[2] = {r, c};
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, d), z = tt_ir_param(b, TT_F32, 2, d);
    tt_ir_builder_add_output(b, tt_ir_binary(b, op, x, z));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static tt_rt_tensor view2(tt_rt_storage *s, int64_t off, int64_t r, int64_t c, int64_t sr, int64_t sc) {
    tt_rt_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = s;
    t.offset = off;
    t.dtype = TT_F32;
    t.rank = 2;
    t.dims[0] = r;
    t.dims[1] = c;
    t.strides[0] = sr;
    t.strides[1] = sc;
    return t;
}

static tt_rt_tensor dense2(tt_rt_storage *s, int64_t r, int64_t c) { return view2(s, 0, r, c, c, 1); }

static tt_status run2(tt_ir_program *p, tt_rt_tensor a, tt_rt_tensor b, tt_rt_tensor out, const char *op) {
    tt_rt_arg args[2] = {{.kind = TT_RT_ARG_TENSOR, .tensor = a}, {.kind = TT_RT_ARG_TENSOR, .tensor = b}};
    return tt_rt_launch(0, p, args, 2, &out, 1, op);
}

static tt_rt_storage *uploaded(const float *v, int64_t n) {
    tt_rt_storage *s = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, (size_t)n * 4, &s));
    if (s) TT_CHECK_OK(tt_rt_write(s, 0, v, (size_t)n * 4));
    return s;
}

static tt_rt_storage *pending(int64_t n) {
    tt_rt_storage *s = NULL;
    TT_CHECK_OK(tt_rt_storage_create_pending(0, (size_t)n * 4, &s));
    return s;
}

static void read_back(tt_rt_storage *s, float *out, int64_t n) { TT_CHECK_OK(tt_rt_read(s, 0, out, (size_t)n * 4)); }

static const float X6[6] = {1, 2, 3, 4, 5, 6}, Y6[6] = {10, 20, 30, 40, 50, 60};

static void a_chain_runs_as_one_program_and_its_dead_intermediates_get_no_memory(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3), *mul = binary_program(TT_OP_MULTIPLY, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6), *y = uploaded(Y6, 6);
    tt_rt_storage *a = pending(6), *b = pending(6), *c = pending(6);
    tt_rt_memory_stats m0;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &m0));
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(y, 2, 3), dense2(a, 2, 3), "a = x + y"));
    TT_CHECK_OK(run2(mul, dense2(a, 2, 3), dense2(x, 2, 3), dense2(b, 2, 3), "b = a * x"));
    TT_CHECK_OK(run2(add, dense2(b, 2, 3), dense2(a, 2, 3), dense2(c, 2, 3), "c = b + a"));
    tt_rt_storage_release(a); /* the user dropped them: only the window holds them */
    tt_rt_storage_release(b);
    float got[6];
    read_back(c, got, 6);
    for (int i = 0; i < 6; i++) TT_CHECK(got[i] == (X6[i] + Y6[i]) * X6[i] + (X6[i] + Y6[i]));
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.windows == 1 && mt.window_ops == 3 && mt.cuts[TT_RT_CUT_READ] == 1);
    TT_CHECK(mt.pending_dropped == 2);
    TT_CHECK(mt.ops[TT_EAGER_FUSED] == 3);
    tt_rt_memory_stats m1;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &m1));
    TT_CHECK(m1.allocated - m0.allocated == 24); /* c only */
    TT_CHECK(m1.peak_allocated - m0.allocated == 24);
    tt_rt_storage_release(c);
    tt_rt_storage_release(x);
    tt_rt_storage_release(y);
    tt_ir_program_destroy(add);
    tt_ir_program_destroy(mul);
    tt_rt_shutdown();
}

static void views_of_pending_storages_and_partial_writes_stay_in_the_window(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add32 = binary_program(TT_OP_ADD, 3, 2), *add22 = binary_program(TT_OP_ADD, 2, 2);
    tt_rt_storage *x = uploaded(X6, 6), *y = uploaded(Y6, 6);
    tt_rt_storage *a = pending(6), *t = pending(6);
    /* a (2x3) = x + y, then t (3x2) = a^T + x^T, both transposes read as views */
    tt_ir_program *add23 = binary_program(TT_OP_ADD, 2, 3);
    TT_CHECK_OK(run2(add23, dense2(x, 2, 3), dense2(y, 2, 3), dense2(a, 2, 3), "a = x + y"));
    TT_CHECK_OK(run2(add32, view2(a, 0, 3, 2, 1, 3), view2(x, 0, 3, 2, 1, 3), dense2(t, 3, 2), "t = a.T + x.T"));
    /* y[:, 1:] (2x2, a real storage) += a[:, :2]: a partial write into y */
    TT_CHECK_OK(run2(add22, view2(y, 1, 2, 2, 3, 1), view2(a, 0, 2, 2, 3, 1), view2(y, 1, 2, 2, 3, 1), "y[:, 1:] += a"));
    float gt[6], gy[6];
    read_back(t, gt, 6);
    read_back(y, gy, 6);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) TT_CHECK(gt[i * 2 + j] == 2 * X6[j * 3 + i] + Y6[j * 3 + i]);
    const float want_y[6] = {10, 20 + 11, 30 + 22, 40, 50 + 44, 60 + 55};
    TT_CHECK(memcmp(gy, want_y, sizeof gy) == 0);
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.windows == 1 && mt.cuts[TT_RT_CUT_VIEW] == 0);
    tt_rt_storage_release(a);
    tt_rt_storage_release(t);
    tt_rt_storage_release(x);
    tt_rt_storage_release(y);
    tt_ir_program_destroy(add22);
    tt_ir_program_destroy(add23);
    tt_ir_program_destroy(add32);
    tt_rt_shutdown();
}

static void a_view_that_is_not_a_box_is_a_gather_in_the_window(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 2);
    tt_rt_storage *x = uploaded(X6, 6), *a = pending(4), *o = pending(4);
    TT_CHECK_OK(run2(add, view2(x, 0, 2, 2, 3, 1), view2(x, 0, 2, 2, 3, 1), dense2(a, 2, 2), "a = x[:, :2] * 2"));
    /* overlapping windows of a pending a: [a0 a1; a1 a2] */
    TT_CHECK_OK(run2(add, view2(a, 0, 2, 2, 1, 1), view2(a, 0, 2, 2, 1, 1), dense2(o, 2, 2), "o = unfold(a)"));
    float g[4];
    read_back(o, g, 4);
    const float want[4] = {4, 8, 8, 16};
    TT_CHECK(memcmp(g, want, sizeof g) == 0);
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_VIEW] == 0 && mt.windows == 1);
    tt_rt_storage_release(a);
    tt_rt_storage_release(o);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
}

/* The bytes of a pending f32 storage read as i32 (a bit view): not expressible in the window, which is cut; the
 * op runs alone, after it. */
static void a_storage_seen_as_another_dtype_cuts_and_runs_alone(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_ir_builder *bb = tt_ir_builder_create();
    int64_t d[2] = {2, 3};
    tt_ir_value u = tt_ir_param(bb, TT_I32, 2, d);
    tt_ir_builder_add_output(bb, tt_ir_binary(bb, TT_OP_ADD, u, u));
    tt_ir_program *iadd = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(bb, &iadd));
    tt_ir_builder_destroy(bb);
    const float ones[6] = {1, 1, 1, 1, 1, 1};
    tt_rt_storage *x = uploaded(ones, 6), *a = pending(6), *o = pending(6);
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a = x + x"));
    tt_rt_tensor ai = dense2(a, 2, 3), oi = dense2(o, 2, 3);
    ai.dtype = oi.dtype = TT_I32;
    tt_rt_arg arg = {.kind = TT_RT_ARG_TENSOR, .tensor = ai};
    TT_CHECK_OK(tt_rt_launch(0, iadd, &arg, 1, &oi, 1, "o = a.view(int32) * 2"));
    int32_t g[6];
    TT_CHECK_OK(tt_rt_read(o, 0, g, sizeof g));
    TT_CHECK((uint32_t)g[0] == 0x80000000u); /* 2.0f is 0x40000000; doubled, it wraps */
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_VIEW] == 1);
    tt_rt_storage_release(a);
    tt_rt_storage_release(o);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_ir_program_destroy(iadd);
    tt_rt_shutdown();
}

static void host_writes_flushes_syncs_and_mode_switches_cut_with_their_reason(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6), *a = pending(6);
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a = x + x"));
    TT_CHECK_OK(tt_rt_write(x, 0, Y6, 24)); /* x is in the window: it reads the old x first */
    float g[6];
    read_back(a, g, 6);
    for (int i = 0; i < 6; i++) TT_CHECK(g[i] == 2 * X6[i]);
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a = x + x"));
    TT_CHECK_OK(tt_rt_flush(0, TT_RT_CUT_FLUSH));
    TT_CHECK_OK(tt_rt_flush(0, TT_RT_CUT_FLUSH)); /* empty: not a cut */
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(a, 2, 3), dense2(a, 2, 3), "a += x"));
    TT_CHECK_OK(tt_rt_synchronize(0));
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(a, 2, 3), dense2(a, 2, 3), "a += x"));
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_STRICT));
    read_back(a, g, 6);
    for (int i = 0; i < 6; i++) TT_CHECK(g[i] == 4 * Y6[i]);
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_HOST_WRITE] == 1 && mt.cuts[TT_RT_CUT_READ] == 0);
    TT_CHECK(mt.cuts[TT_RT_CUT_FLUSH] == 1 && mt.cuts[TT_RT_CUT_SYNC] == 1 && mt.cuts[TT_RT_CUT_OTHER_MODE] == 1);
    tt_rt_storage_release(a);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
}

/* The user's line the where hook reports: a new line per op, or one line for many (a loop on one line, a foreach
 * call); none (the hook says nothing) is how autograd's engine thread looks. */
static int user_line;
static const char *where_line(char *buf, size_t size) {
    if (user_line < 0) return NULL;
    snprintf(buf, size, "user.py:%d", user_line);
    return buf;
}

static void the_size_cap_cuts_between_calls(void) {
    setenv("TORCHTPU_FUSION_MAX_OPS", "4", 1);
    start(TT_EAGER_FUSED);
    tt_rt_set_where_hook(where_line);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6), *a = uploaded(X6, 6);
    tt_rt_metrics mt;
    float g[6];
    /* ten ops on ten lines: cut before the 5th and the 9th */
    for (int i = 0; i < 10; i++) {
        user_line = i;
        TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x"));
    }
    read_back(a, g, 6);
    for (int i = 0; i < 6; i++) TT_CHECK(g[i] == 11 * X6[i]);
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_SIZE] == 2 && mt.cuts[TT_RT_CUT_READ] == 1 && mt.windows == 3);
    TT_CHECK(mt.compiles == 2); /* two windows of 4 ops share one program */
    /* one line, 70 ops (then none, 70 more): one call each, cut at 16 x the cap and when the next call starts */
    for (int pass = 0; pass < 2; pass++) {
        tt_rt_metrics_reset();
        user_line = pass ? -1 : 100;
        for (int i = 0; i < 70; i++)
            TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x"));
        user_line = 101;
        TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x"));
        read_back(a, g, 6);
        for (int i = 0; i < 6; i++) TT_CHECK(g[i] == (float)(11 + 71 * (pass + 1)) * X6[i]);
        tt_rt_metrics_get(&mt);
        TT_CHECK(mt.cuts[TT_RT_CUT_SIZE] == 2 && mt.cuts[TT_RT_CUT_READ] == 1 && mt.windows == 3);
    }
    /* One line, 70 ops over 14 tensors: 5 chained ops per tensor (cut where each chain starts), or one op per
     * tensor in turn (a foreach step: whole up to 16 x the cap). Then an op on the next line. */
    tt_rt_storage *t[14];
    for (int i = 0; i < 14; i++) t[i] = uploaded(X6, 6);
    for (int op_major = 0; op_major < 2; op_major++) {
        tt_rt_metrics_reset();
        user_line = 200;
        for (int i = 0; i < 70; i++) {
            tt_rt_storage *s = t[op_major ? i % 14 : i / 5];
            TT_CHECK_OK(run2(add, dense2(s, 2, 3), dense2(x, 2, 3), dense2(s, 2, 3), "t += x"));
        }
        user_line = 201;
        TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x"));
        read_back(t[13], g, 6);
        for (int i = 0; i < 6; i++) TT_CHECK(g[i] == (float)(1 + 5 * (op_major + 1)) * X6[i]);
        tt_rt_metrics_get(&mt);
        TT_CHECK(mt.cuts[TT_RT_CUT_SIZE] == (op_major ? 2 : 14) && mt.cuts[TT_RT_CUT_READ] == 1);
    }
    for (int i = 0; i < 14; i++) tt_rt_storage_release(t[i]);
    tt_rt_set_where_hook(NULL);
    tt_rt_storage_release(a);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_FUSION_MAX_OPS");
}

typedef struct thread_job {
    tt_ir_program *add;
    tt_rt_storage *x, *acc;
} thread_job;

static void *accumulate(void *arg) {
    thread_job *j = arg;
    for (int i = 0; i < 200; i++)
        if (run2(j->add, dense2(j->acc, 2, 3), dense2(j->x, 2, 3), dense2(j->acc, 2, 3), "acc += x") != TT_OK)
            return (void *)1;
    return NULL;
}

static void threads_record_into_one_window_in_arrival_order(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6);
    thread_job jobs[3];
    pthread_t th[3];
    for (int k = 0; k < 3; k++) {
        jobs[k] = (thread_job){add, x, uploaded(Y6, 6)};
        TT_CHECK(pthread_create(&th[k], NULL, accumulate, &jobs[k]) == 0);
    }
    for (int k = 0; k < 3; k++) {
        void *rc = NULL;
        pthread_join(th[k], &rc);
        TT_CHECK(rc == NULL);
    }
    for (int k = 0; k < 3; k++) {
        float g[6];
        read_back(jobs[k].acc, g, 6);
        for (int i = 0; i < 6; i++) TT_CHECK(g[i] == Y6[i] + 200 * X6[i]);
        tt_rt_storage_release(jobs[k].acc);
    }
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
}

/* TORCHTPU_HOST_OPAQUE=1: the host driver claims no in-place views; strict launches of strided views run as
 * one-op windows whose views are IR ops, with the same results. */
static void a_driver_without_in_place_views_gets_whole_buffers(void) {
    setenv("TORCHTPU_HOST_OPAQUE", "1", 1);
    start(TT_EAGER_STRICT);
    tt_ir_program *add = binary_program(TT_OP_ADD, 3, 2);
    tt_rt_storage *x = uploaded(X6, 6), *y = uploaded(Y6, 6), *o = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 24, &o));
    TT_CHECK_OK(run2(add, view2(x, 0, 3, 2, 1, 3), view2(y, 0, 3, 2, 1, 3), dense2(o, 3, 2), "o = x.T + y.T"));
    float g[6];
    read_back(o, g, 6);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 2; j++) TT_CHECK(g[i * 2 + j] == X6[j * 3 + i] + Y6[j * 3 + i]);
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_DEBUG));
    TT_CHECK_OK(run2(add, dense2(o, 3, 2), dense2(o, 3, 2), dense2(o, 3, 2), "o += o"));
    read_back(o, g, 6);
    TT_CHECK(g[1] == 2 * (X6[3] + Y6[3]));
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_EAGER] == 2);
    tt_rt_storage_release(o);
    tt_rt_storage_release(x);
    tt_rt_storage_release(y);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_HOST_OPAQUE");
}

/* A cut whose result cannot get memory fails at the sync point that cut it, naming the window; the runtime
 * stays usable. */
static void out_of_memory_at_a_cut_is_an_error_at_the_sync_and_the_device_recovers(void) {
    setenv("TORCHTPU_HOST_MEMORY_LIMIT", "200", 1);
    setenv("TORCHTPU_MEMORY_CACHE_BYTES", "0", 1);
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6);
    tt_rt_storage *p[8];
    for (int k = 0; k < 8; k++) {
        p[k] = pending(6);
        TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(x, 2, 3), dense2(p[k], 2, 3), "p = x + x"));
    }
    tt_status st = tt_rt_synchronize(0); /* 8 x 24 bytes + x's 24: over 200 */
    TT_CHECK(st == TT_STATUS_OUT_OF_MEMORY);
    TT_CHECK(strstr(tt_last_error(), "fused window of 8 ops") != NULL);
    float g0[6];
    TT_CHECK(tt_rt_read(p[0], 0, g0, sizeof g0) == TT_STATUS_OUT_OF_MEMORY); /* its producer failed: raised again */
    TT_CHECK(strstr(tt_last_error(), "fused window of 8 ops") != NULL);
    for (int k = 0; k < 8; k++) tt_rt_storage_release(p[k]);
    tt_rt_storage *q = pending(6);
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(x, 2, 3), dense2(q, 2, 3), "q = x + x"));
    float g[6];
    read_back(q, g, 6);
    TT_CHECK(g[5] == 12);
    tt_rt_storage_release(q);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_HOST_MEMORY_LIMIT");
    unsetenv("TORCHTPU_MEMORY_CACHE_BYTES");
}

/* The window's program fails in one node at run time (a bounds-checked gather meets index 5 of 2 rows): the
 * error, raised at the read, names the op that recorded that node, not just the window. */
static void an_error_in_a_window_names_the_op_that_recorded_the_failing_node(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3), *mul = binary_program(TT_OP_MULTIPLY, 2, 3);
    tt_ir_builder *bld = tt_ir_builder_create();
    int64_t d[2] = {2, 3}, n_idx = 2;
    tt_ir_value xv = tt_ir_param(bld, TT_F32, 2, d), iv = tt_ir_param(bld, TT_I64, 1, &n_idx);
    tt_ir_attrs ga;
    memset(&ga, 0, sizeof ga);
    ga.gather.offset_dims.n = 1;
    ga.gather.offset_dims.v[0] = 1;
    ga.gather.collapsed_slice_dims.n = 1;
    ga.gather.start_index_map.n = 1;
    ga.gather.slice_sizes.n = 2;
    ga.gather.slice_sizes.v[0] = 1;
    ga.gather.slice_sizes.v[1] = 3;
    ga.gather.index_vector_dim = 1;
    ga.gather.check_bounds = true;
    tt_ir_builder_add_output(bld, tt_ir_gather(bld, xv, iv, &ga));
    tt_ir_program *rows = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(bld, &rows));
    tt_ir_builder_destroy(bld);
    const int64_t idx[2] = {0, 5};
    tt_rt_storage *x = uploaded(X6, 6), *y = uploaded(Y6, 6), *is = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, sizeof idx, &is));
    if (is) TT_CHECK_OK(tt_rt_write(is, 0, idx, sizeof idx));
    tt_rt_storage *a = pending(6), *b = pending(6), *c = pending(6);
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(y, 2, 3), dense2(a, 2, 3), "a = x + y"));
    tt_rt_tensor it;
    memset(&it, 0, sizeof it);
    it.storage = is;
    it.dtype = TT_I64;
    it.rank = 1;
    it.dims[0] = 2;
    it.strides[0] = 1;
    tt_rt_arg args[2] = {{.kind = TT_RT_ARG_TENSOR, .tensor = dense2(a, 2, 3)}, {.kind = TT_RT_ARG_TENSOR, .tensor = it}};
    tt_rt_tensor out = dense2(b, 2, 3);
    TT_CHECK_OK(tt_rt_launch(0, rows, args, 2, &out, 1, "b = a[idx]"));
    TT_CHECK_OK(run2(mul, dense2(b, 2, 3), dense2(x, 2, 3), dense2(c, 2, 3), "c = b * x"));
    float got[6];
    TT_CHECK(tt_rt_read(c, 0, got, sizeof got) == TT_STATUS_INDEX);
    TT_CHECK(strstr(tt_last_error(), "b = a[idx], in fused window of 3 ops (from a = x + y): ") != NULL);
    TT_CHECK(strstr(tt_last_error(), "index 5 is out of bounds") != NULL);
    tt_rt_storage_release(a);
    tt_rt_storage_release(b);
    tt_rt_storage_release(c);
    tt_rt_storage_release(is);
    tt_rt_storage_release(x);
    tt_rt_storage_release(y);
    tt_ir_program_destroy(add);
    tt_ir_program_destroy(mul);
    tt_ir_program_destroy(rows);
    tt_rt_shutdown();
}

/* One step: a = x + y; b = a * x (b kept, a dropped unless keep_a); read b. */
static void replay_step(tt_ir_program *add, tt_ir_program *mul, tt_rt_storage *x, tt_rt_storage *y, bool keep_a,
                        int64_t r, int64_t c, float *got) {
    tt_rt_storage *a = pending(r * c), *b = pending(r * c);
    TT_CHECK_OK(run2(add, dense2(x, r, c), dense2(y, r, c), dense2(a, r, c), "a = x + y"));
    TT_CHECK_OK(run2(mul, dense2(a, r, c), dense2(x, r, c), dense2(b, r, c), "b = a * x"));
    if (!keep_a) tt_rt_storage_release(a);
    read_back(b, got, r * c);
    if (keep_a) tt_rt_storage_release(a);
    tt_rt_storage_release(b);
}

static void a_repeated_window_replays_its_program_and_a_changed_one_does_not(void) {
    start(TT_EAGER_FUSED);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3), *mul = binary_program(TT_OP_MULTIPLY, 2, 3);
    tt_ir_program *add_again = binary_program(TT_OP_ADD, 2, 3); /* equal to add, another pointer (interned) */
    tt_ir_program *add61 = binary_program(TT_OP_ADD, 6, 1), *mul61 = binary_program(TT_OP_MULTIPLY, 6, 1);
    tt_rt_storage *x = uploaded(X6, 6), *y = uploaded(Y6, 6);
    float got[6];
    tt_rt_metrics mt;
    replay_step(add, mul, x, y, false, 2, 3, got); /* built */
    replay_step(add, mul, x, y, false, 2, 3, got); /* replayed */
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.windows == 2 && mt.window_replays == 1);
    for (int i = 0; i < 6; i++) TT_CHECK(got[i] == (X6[i] + Y6[i]) * X6[i]);
    replay_step(add_again, mul, x, y, false, 2, 3, got); /* an equal program: still the same trace */
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.window_replays == 2);
    replay_step(add, mul, x, y, true, 2, 3, got); /* a is kept too: other results, a new trace */
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.window_replays == 2);
    replay_step(add61, mul61, x, y, false, 6, 1, got); /* other shapes: new */
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.window_replays == 2 && mt.windows == 5);
    for (int i = 0; i < 6; i++) TT_CHECK(got[i] == (X6[i] + Y6[i]) * X6[i]);
    /* new inputs through a replayed program: the values are parameters, not part of the trace */
    float x2[6] = {-1, 0.5f, 2, 8, -3, 7};
    TT_CHECK_OK(tt_rt_write(x, 0, x2, sizeof x2));
    replay_step(add, mul, x, y, false, 2, 3, got);
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.window_replays == 3);
    for (int i = 0; i < 6; i++) TT_CHECK(got[i] == (x2[i] + Y6[i]) * x2[i]);
    tt_rt_storage_release(x);
    tt_rt_storage_release(y);
    tt_ir_program *ps[] = {add, mul, add_again, add61, mul61};
    for (int i = 0; i < 5; i++) tt_ir_program_destroy(ps[i]);
    tt_rt_shutdown();
}

/* A compiled graph (graph.c) in STRICT mode: its ops are deferred into one window whatever the size cap, cut
 * where it begins and ends; the thread gets its mode back; graphs nest; what a graph launched is launched again on
 * other storages without recording or compiling; an end without a begin is an error. */
static void a_graph_records_into_one_window_in_any_mode(void) {
    setenv("TORCHTPU_FUSION_MAX_OPS", "2", 1);
    start(TT_EAGER_STRICT);
    tt_ir_program *add = binary_program(TT_OP_ADD, 2, 3);
    tt_rt_storage *x = uploaded(X6, 6), *a = uploaded(X6, 6);
    TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x")); /* strict: runs now */
    int prev = -7, inner = -7;
    TT_CHECK_OK(tt_rt_graph_begin(0, "g", &prev));
    TT_CHECK(prev == TT_EAGER_PROCESS && tt_rt_get_eager_mode() == TT_EAGER_FUSED);
    for (int i = 0; i < 10; i++) {
        if (i == 5) TT_CHECK_OK(tt_rt_graph_begin(0, "inner", &inner));
        TT_CHECK_OK(run2(add, dense2(a, 2, 3), dense2(x, 2, 3), dense2(a, 2, 3), "a += x"));
    }
    TT_CHECK(inner == TT_EAGER_FUSED);
    TT_CHECK_OK(tt_rt_graph_end(0, inner)); /* the inner end cuts nothing */
    tt_rt_metrics mt;
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_GRAPH] == 0 && mt.cuts[TT_RT_CUT_SIZE] == 0 && mt.windows == 0);
    TT_CHECK_OK(tt_rt_graph_end(0, prev));
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_STRICT);
    tt_rt_metrics_get(&mt);
    TT_CHECK(mt.cuts[TT_RT_CUT_GRAPH] == 1 && mt.windows == 1 && mt.window_ops == 10);
    float g[6];
    read_back(a, g, 6);
    for (int i = 0; i < 6; i++) TT_CHECK(g[i] == 12 * X6[i]);
    /* captured: c = (x + y) * x launched again on other storages, without recording */
    tt_ir_program *mul = binary_program(TT_OP_MULTIPLY, 2, 3);
    tt_rt_storage *y = uploaded(Y6, 6), *t = pending(6), *c = pending(6);
    tt_rt_graph_run *run = NULL;
    TT_CHECK_OK(tt_rt_graph_begin(0, "g2", &prev));
    TT_CHECK_OK(run2(add, dense2(x, 2, 3), dense2(y, 2, 3), dense2(t, 2, 3), "t = x + y"));
    TT_CHECK_OK(run2(mul, dense2(t, 2, 3), dense2(x, 2, 3), dense2(c, 2, 3), "c = t * x"));
    tt_rt_storage_release(t); /* an intermediate: not a result */
    TT_CHECK_OK(tt_rt_graph_end_capture(0, prev, &run));
    TT_CHECK(run != NULL);
    const tt_rt_arg *cargs = NULL;
    const tt_rt_tensor *cres = NULL;
    int32_t na = run ? tt_rt_graph_run_args(run, &cargs) : 0, nr = run ? tt_rt_graph_run_results(run, &cres) : 0;
    TT_CHECK(na == 2 && nr == 1 && cres[0].storage == c);
    if (na == 2 && nr == 1) {
        tt_rt_storage *x2 = uploaded(Y6, 6), *y2 = uploaded(X6, 6), *c2 = pending(6);
        tt_rt_arg args2[2] = {cargs[0], cargs[1]};
        for (int i = 0; i < 2; i++) args2[i].tensor.storage = cargs[i].tensor.storage == x ? x2 : y2;
        tt_rt_tensor res2 = cres[0];
        res2.storage = c2;
        tt_rt_metrics_reset();
        TT_CHECK_OK(tt_rt_graph_replay(0, run, "g2", args2, &res2));
        read_back(c2, g, 6);
        for (int i = 0; i < 6; i++) TT_CHECK(g[i] == (Y6[i] + X6[i]) * Y6[i]);
        tt_rt_metrics_get(&mt);
        TT_CHECK(mt.compiles == 0 && mt.cuts[TT_RT_CUT_GRAPH] == 1);
        bool keep[2] = {false, false}; /* no constants: every storage comes with the call */
        tt_rt_graph_run_drop_storages(run, keep);
        TT_CHECK_OK(tt_rt_graph_replay(0, run, "g2", args2, &res2));
        read_back(c2, g, 6);
        for (int i = 0; i < 6; i++) TT_CHECK(g[i] == (Y6[i] + X6[i]) * Y6[i]);
        tt_rt_storage_release(x2);
        tt_rt_storage_release(y2);
        tt_rt_storage_release(c2);
    }
    tt_rt_graph_run_free(run);
    tt_rt_storage_release(y);
    tt_rt_storage_release(c);
    tt_ir_program_destroy(mul);
    TT_CHECK(tt_rt_graph_end(0, prev) == TT_STATUS_INVALID_ARGUMENT); /* no graph is open */
    TT_CHECK(tt_rt_graph_begin(3, "g", &prev) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_graph_begin(0, "g", NULL) == TT_STATUS_INVALID_ARGUMENT);
    tt_rt_storage_release(a);
    tt_rt_storage_release(x);
    tt_ir_program_destroy(add);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_FUSION_MAX_OPS");
}

/* (x + 1).sum(1) of a f32 [r, c] tensor: [r] (the + 1 makes zero padding count if it were not masked). */
static tt_ir_program *row_sum_program(int64_t r, int64_t c) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t d[2] = {r, c}, one = 1;
    tt_ir_value x = tt_ir_param(b, TT_F32, 2, d);
    x = tt_ir_binary(b, TT_OP_ADD, x, tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, 1.0), 2, d, NULL));
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_ADD, x, 1, &one));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static void a_marked_size_runs_its_windows_as_the_buckets_program(void) {
    start(TT_EAGER_FUSED);
    int64_t compiles_first = 0;
    for (int64_t s = 5; s <= 7; s += 2) { /* both in the bucket of 8 */
        tt_ir_program *add = binary_program(TT_OP_ADD, 2, s), *mul = binary_program(TT_OP_MULTIPLY, 2, s);
        tt_ir_program *sum = row_sum_program(2, s);
        float xv[14];
        for (int i = 0; i < 2 * s; i++) xv[i] = (float)(i + 1);
        tt_rt_storage *x = uploaded(xv, 2 * s), *y = pending(2 * s), *z = pending(2);
        int64_t dims[2] = {2, s};
        TT_CHECK_OK(tt_rt_mark_dynamic(x, 2, dims, 1, 8));
        TT_CHECK(tt_rt_mark_dynamic(x, 2, dims, 1, 4) == TT_STATUS_INVALID_ARGUMENT); /* the bucket must hold s */
        TT_CHECK_OK(run2(add, dense2(x, 2, s), dense2(x, 2, s), dense2(y, 2, s), "y = x + x"));
        TT_CHECK_OK(run2(mul, dense2(y, 2, s), dense2(x, 2, s), dense2(y, 2, s), "y *= x"));
        tt_rt_tensor zt = {.storage = z, .dtype = TT_F32, .rank = 1, .dims = {2}, .strides = {1}};
        tt_rt_arg ya = {.kind = TT_RT_ARG_TENSOR, .tensor = dense2(y, 2, s)};
        TT_CHECK_OK(tt_rt_launch(0, sum, &ya, 1, &zt, 1, "z = (y + 1).sum(1)"));
        float got[2], yg[14];
        read_back(z, got, 2);
        read_back(y, yg, 2 * s);
        for (int r = 0; r < 2; r++) {
            float want = 0;
            for (int j = 0; j < s; j++) want += 2 * xv[r * s + j] * xv[r * s + j] + 1;
            TT_CHECK(got[r] == want);
        }
        for (int i = 0; i < 2 * s; i++) TT_CHECK(yg[i] == 2 * xv[i] * xv[i]);
        int64_t size = 0;
        TT_CHECK(tt_rt_storage_bucket(y, &size) == 8 && size == s); /* a result that carries the size is marked */
        tt_rt_metrics m;
        tt_rt_metrics_get(&m);
        TT_CHECK(m.bucket_windows == (s == 5 ? 1 : 2) && m.bucket_refused == 0);
        if (s == 5) compiles_first = m.compiles;
        else TT_CHECK(m.compiles == compiles_first); /* the second size found the bucket's program */
        tt_rt_storage_release(x);
        tt_rt_storage_release(y);
        tt_rt_storage_release(z);
        tt_ir_program_destroy(add);
        tt_ir_program_destroy(mul);
        tt_ir_program_destroy(sum);
    }
    tt_rt_shutdown();
}

static const tt_test_case cases[] = {
    {"a chain runs as one program and its dead intermediates get no memory",
     a_chain_runs_as_one_program_and_its_dead_intermediates_get_no_memory},
    {"views of pending storages and partial writes stay in the window",
     views_of_pending_storages_and_partial_writes_stay_in_the_window},
    {"a view that is not a box is a gather in the window", a_view_that_is_not_a_box_is_a_gather_in_the_window},
    {"a storage seen as another dtype cuts and runs alone", a_storage_seen_as_another_dtype_cuts_and_runs_alone},
    {"host writes, flushes, syncs and mode switches cut with their reason",
     host_writes_flushes_syncs_and_mode_switches_cut_with_their_reason},
    {"the size cap cuts between calls", the_size_cap_cuts_between_calls},
    {"threads record into one window in arrival order", threads_record_into_one_window_in_arrival_order},
    {"a driver without in-place views gets whole buffers", a_driver_without_in_place_views_gets_whole_buffers},
    {"out of memory at a cut is an error at the sync and the device recovers",
     out_of_memory_at_a_cut_is_an_error_at_the_sync_and_the_device_recovers},
    {"an error in a window names the op that recorded the failing node",
     an_error_in_a_window_names_the_op_that_recorded_the_failing_node},
    {"a repeated window replays its program and a changed one does not",
     a_repeated_window_replays_its_program_and_a_changed_one_does_not},
    {"a graph records into one window in any mode", a_graph_records_into_one_window_in_any_mode},
    {"a marked size runs its windows as the bucket's program", a_marked_size_runs_its_windows_as_the_buckets_program},
    {NULL, NULL},
};

int main(void) { return tt_test_run(cases); }
