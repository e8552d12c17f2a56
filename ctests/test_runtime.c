/* test_runtime.c — the runtime: storages, debug and strict launches, queued errors, the compile cache, memory
 * statistics, RNG state, start-up from the environment, several devices.
 *
 * Two kinds of case: those on a fake driver defined here (a gate that holds execution back makes "strict returns
 * before the work is done" and "freed only after queued work" deterministic; failures on demand), and those on
 * the real host driver started from environment variables. Every case starts and shuts down its own runtime. */
#include "tt_runtime.h"
#include "tt_test.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------------------------------------------------------
 * A fake driver: buffers are host bytes; an executable adds two f32 rank-1 tensors (any strides).
 * ---------------------------------------------------------------------------------------------------------- */
struct tt_buffer {
    size_t n;
    unsigned char *bytes;
};
struct tt_executable {
    tt_ir_program *p;
};

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool gate_closed;
    int executed, compiled, fail_at, live_buffers, live_exes, entered;
    size_t limit, in_use;
    pthread_t exec_thread; /* the thread that entered the last execution */
} fk = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

static int fk_get(int *field) {
    pthread_mutex_lock(&fk.mu);
    int v = *field;
    pthread_mutex_unlock(&fk.mu);
    return v;
}
static void fk_set(int *field, int v) {
    pthread_mutex_lock(&fk.mu);
    *field = v;
    pthread_mutex_unlock(&fk.mu);
}
static void fk_gate(bool closed) {
    pthread_mutex_lock(&fk.mu);
    fk.gate_closed = closed;
    pthread_cond_broadcast(&fk.cv);
    pthread_mutex_unlock(&fk.mu);
}

static int fk_device_count(void *ctx) { return (int)(intptr_t)ctx; }
static tt_status fk_alloc(void *ctx, int device, size_t nbytes, tt_buffer **out) {
    (void)ctx, (void)device;
    pthread_mutex_lock(&fk.mu);
    bool over = fk.limit && fk.in_use + nbytes > fk.limit;
    if (!over) fk.in_use += nbytes, fk.live_buffers++;
    pthread_mutex_unlock(&fk.mu);
    if (over) return tt_error(TT_STATUS_OUT_OF_MEMORY, "fake: out of memory");
    tt_buffer *b = calloc(1, sizeof *b);
    b->n = nbytes;
    b->bytes = calloc(1, nbytes ? nbytes : 1);
    *out = b;
    return TT_OK;
}
static void fk_free(void *ctx, tt_buffer *b) {
    (void)ctx;
    if (!b) return;
    pthread_mutex_lock(&fk.mu);
    fk.in_use -= b->n;
    fk.live_buffers--;
    pthread_mutex_unlock(&fk.mu);
    free(b->bytes);
    free(b);
}
static void *fk_address(void *ctx, tt_buffer *b) { return (void)ctx, b->bytes; }
static tt_status fk_write(void *ctx, tt_buffer *dst, size_t off, const void *src, size_t n) {
    (void)ctx;
    memcpy(dst->bytes + off, src, n);
    return TT_OK;
}
static tt_status fk_read(void *ctx, tt_buffer *src, size_t off, void *dst, size_t n) {
    (void)ctx;
    memcpy(dst, src->bytes + off, n);
    return TT_OK;
}
static tt_status fk_copy(void *ctx, tt_buffer *dst, size_t doff, tt_buffer *src, size_t soff, size_t n) {
    (void)ctx;
    memmove(dst->bytes + doff, src->bytes + soff, n);
    return TT_OK;
}
static tt_status fk_compile(void *ctx, tt_ir_program *p, tt_executable **out) {
    (void)ctx;
    tt_executable *e = calloc(1, sizeof *e);
    tt_ir_program_retain(p);
    e->p = p;
    pthread_mutex_lock(&fk.mu);
    fk.compiled++;
    fk.live_exes++;
    pthread_mutex_unlock(&fk.mu);
    *out = e;
    return TT_OK;
}
static void fk_exe_free(void *ctx, tt_executable *e) {
    (void)ctx;
    if (!e) return;
    pthread_mutex_lock(&fk.mu);
    fk.live_exes--;
    pthread_mutex_unlock(&fk.mu);
    tt_ir_program_destroy(e->p);
    free(e);
}
static tt_status fk_execute(void *ctx, int device, tt_executable *e, const tt_exec_arg *args, int32_t n_args,
                            const tt_exec_arg *res, int32_t n_res) {
    (void)ctx, (void)device, (void)n_args, (void)n_res;
    pthread_mutex_lock(&fk.mu);
    fk.entered++;
    fk.exec_thread = pthread_self();
    while (fk.gate_closed) pthread_cond_wait(&fk.cv, &fk.mu);
    int k = ++fk.executed;
    bool fail = fk.fail_at == k;
    pthread_mutex_unlock(&fk.mu);
    if (fail) return tt_error(TT_STATUS_INVALID_ARGUMENT, "fake failure number %d", k);
    int64_t n = e->p->types[e->p->outputs[0]].dims[0];
    float *a = (float *)(void *)args[0].buffer->bytes, *b = (float *)(void *)args[1].buffer->bytes;
    float *o = (float *)(void *)res[0].buffer->bytes;
    float tmp[64];
    for (int64_t i = 0; i < n && i < 64; i++)
        tmp[i] = a[args[0].offset + i * args[0].strides[0]] + b[args[1].offset + i * args[1].strides[0]];
    for (int64_t i = 0; i < n && i < 64; i++) o[res[0].offset + i * res[0].strides[0]] = tmp[i];
    return TT_OK;
}
static tt_status fk_memory_stats(void *ctx, int device, tt_driver_memory_stats *out) {
    (void)ctx, (void)device;
    pthread_mutex_lock(&fk.mu);
    out->bytes_in_use = fk.in_use;
    out->bytes_limit = fk.limit;
    pthread_mutex_unlock(&fk.mu);
    return TT_OK;
}
static void fk_destroy(void *ctx) { (void)ctx; }
static uint64_t fk_caps(void *ctx) { return (void)ctx, TT_DRIVER_CAP_STRIDED_VIEWS; } /* it reads any strides */

/* Starts the runtime on a fresh fake driver with n devices, in mode. */
static void fake_start(int n, tt_rt_eager_mode mode) {
    pthread_mutex_lock(&fk.mu);
    fk.gate_closed = false;
    fk.executed = fk.compiled = fk.fail_at = fk.entered = 0;
    fk.limit = 0;
    pthread_mutex_unlock(&fk.mu);
    tt_driver *d = calloc(1, sizeof *d);
    d->iface = (tt_driver_i){.struct_size = sizeof(tt_driver_i), .name = "fake", .version = 1,
                             .device_count = fk_device_count, .buffer_alloc = fk_alloc, .buffer_free = fk_free,
                             .buffer_address = fk_address, .write = fk_write, .read = fk_read, .copy = fk_copy,
                             .compile = fk_compile, .executable_free = fk_exe_free, .execute = fk_execute,
                             .memory_stats = fk_memory_stats, .destroy = fk_destroy, .capabilities = fk_caps};
    d->ctx = (void *)(intptr_t)n;
    TT_CHECK_OK(tt_rt_init_with_driver(d));
    TT_CHECK_OK(tt_rt_set_eager_mode(mode));
}
static void fake_stop(void) {
    tt_rt_shutdown();
    TT_CHECK(fk_get(&fk.live_buffers) == 0);
    TT_CHECK(fk_get(&fk.live_exes) == 0);
}

/* out = x + y for x, y, out: f32[n]. */
static tt_ir_program *add_program(int64_t n) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_value y = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, y));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static tt_rt_tensor vec(tt_rt_storage *s, int64_t n) {
    tt_rt_tensor t;
    memset(&t, 0, sizeof t);
    t.storage = s;
    t.dtype = TT_F32;
    t.rank = 1;
    t.dims[0] = n;
    t.strides[0] = 1;
    return t;
}
static tt_rt_arg targ(tt_rt_storage *s, int64_t n) {
    tt_rt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_RT_ARG_TENSOR;
    a.tensor = vec(s, n);
    return a;
}
static tt_rt_storage *new_vec(int device, const float *v, int64_t n) {
    tt_rt_storage *s = NULL;
    TT_CHECK_OK(tt_rt_storage_create(device, (size_t)n * 4, &s));
    if (s && v) TT_CHECK_OK(tt_rt_write(s, 0, v, (size_t)n * 4));
    return s;
}
/* Launches out = x + y on device. */
static tt_status launch_add(int device, tt_ir_program *p, tt_rt_storage *x, tt_rt_storage *y, tt_rt_storage *out,
                            int64_t n, const char *op) {
    tt_rt_arg args[2] = {targ(x, n), targ(y, n)};
    tt_rt_tensor res = vec(out, n);
    return tt_rt_launch(device, p, args, 2, &res, 1, op);
}

/* ------------------------------------------------------------------------------------------------------------ */

static void strict_launch_returns_before_the_work_is_done(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[4] = {1, 2, 3, 4}, b[4] = {10, 20, 30, 40}, o[4] = {0};
    tt_rt_storage *x = new_vec(0, a, 4), *y = new_vec(0, b, 4), *z = new_vec(0, NULL, 4);
    tt_ir_program *p = add_program(4);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, y, z, 4, "aten::add.Tensor"));
    TT_CHECK(fk_get(&fk.executed) == 0); /* the launch returned while the worker is held at the gate */
    fk_gate(false);
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(fk_get(&fk.executed) == 1);
    TT_CHECK(o[0] == 11 && o[3] == 44);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.ops[TT_EAGER_STRICT] == 1 && m.ops[TT_EAGER_DEBUG] == 0);
    TT_CHECK(m.bytes_to_device == 32 && m.bytes_to_host == 16);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(y), tt_rt_storage_release(z);
    fake_stop();
}

static void debug_launch_runs_at_once_and_returns_its_error_named(void) {
    fake_start(1, TT_EAGER_DEBUG);
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_DEBUG);
    float a[2] = {1, 2}, o[2] = {0};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_gate(false);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK(fk_get(&fk.executed) == 1);
    fk_set(&fk.fail_at, 2);
    tt_status st = launch_add(0, p, x, x, z, 2, "aten::mul.Tensor");
    TT_CHECK(st == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::mul.Tensor: fake failure number 2") != NULL);
    TT_CHECK_OK(tt_rt_synchronize(-1)); /* nothing queued: nothing to report */
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.ops[TT_EAGER_DEBUG] == 2);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void queued_error_is_reported_at_the_next_sync_naming_the_op_then_cleared(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2] = {0};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_set(&fk.fail_at, 1);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::div.Tensor"));      /* fails on the worker */
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));      /* skipped */
    TT_CHECK_OK(tt_rt_write(z, 0, a, sizeof a));                         /* skipped too */
    tt_status st = tt_rt_synchronize(0);
    TT_CHECK(st == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::div.Tensor: fake failure number 1") != NULL);
    TT_CHECK(fk_get(&fk.executed) == 1);
    TT_CHECK_OK(tt_rt_synchronize(0)); /* cleared */
    /* neither the add nor the write ran: z raises the failure again rather than give bytes nobody wrote */
    TT_CHECK(tt_rt_read(z, 0, o, sizeof o) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::div.Tensor: fake failure number 1") != NULL);
    TT_CHECK_OK(tt_rt_read(x, 0, o, sizeof o)); /* x was only read */
    /* the device works again after the error was taken */
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    /* a read is a sync point: it reports the queued error */
    fk_set(&fk.fail_at, 3);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::sub.Tensor"));
    TT_CHECK(tt_rt_read(z, 0, o, sizeof o) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::sub.Tensor") != NULL);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void strict_writes_and_reads_keep_program_order(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[4] = {1, 1, 1, 1}, o[4];
    tt_rt_storage *x = new_vec(0, a, 4), *z = new_vec(0, NULL, 4);
    tt_ir_program *p = add_program(4);
    fk_gate(true);
    for (int k = 0; k < 10; k++) {
        float v[4] = {(float)k, (float)k, (float)k, (float)k};
        TT_CHECK_OK(tt_rt_write(x, 0, v, sizeof v)); /* v is reused at once: the item holds a copy */
        TT_CHECK_OK(launch_add(0, p, x, z, z, 4, "aten::add_.Tensor")); /* z += x */
    }
    fk_gate(false);
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 45 && o[3] == 45);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void storage_is_freed_only_after_queued_work_that_uses_it(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {3, 4};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    tt_ir_program_destroy(p); /* the queued launch holds its own reference to the program too */
    tt_rt_storage_release(x);
    tt_rt_storage_release(z);
    TT_CHECK(fk_get(&fk.live_buffers) == 2);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 16);
    fk_gate(false);
    TT_CHECK_OK(tt_rt_synchronize(0));
    TT_CHECK(fk_get(&fk.live_buffers) == 2); /* released into the allocator's cache, not to the driver */
    tt_rt_empty_cache(0);
    TT_CHECK(fk_get(&fk.live_buffers) == 0);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 0 && ms.peak_allocated == 16);
    fake_stop();
}

static void second_identical_launch_hits_the_cache(void) {
    fake_start(1, TT_EAGER_DEBUG);
    tt_rt_storage *x = new_vec(0, NULL, 8), *z = new_vec(0, NULL, 8);
    tt_ir_program *p1 = add_program(8), *p2 = add_program(8), *p3 = add_program(5);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 8, "aten::add.Tensor"));
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 8, "aten::add.Tensor"));
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 8, "aten::add.Tensor")); /* built again: equal structure */
    TT_CHECK_OK(launch_add(0, p3, x, x, z, 5, "aten::add.Tensor")); /* another shape: a compile */
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.compiles == 2 && m.cache_hits == 2);
    TT_CHECK(fk_get(&fk.compiled) == 2);
    TT_CHECK(tt_rt_cache_size() == 2);
    TT_CHECK(m.compile_seconds >= 0);
    tt_rt_cache_clear();
    TT_CHECK(tt_rt_cache_size() == 0);
    TT_CHECK(fk_get(&fk.live_exes) == 0);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 8, "aten::add.Tensor"));
    TT_CHECK(fk_get(&fk.compiled) == 3);
    tt_rt_metrics_reset();
    tt_rt_metrics_get(&m);
    TT_CHECK(m.compiles == 0 && m.cache_hits == 0 && m.ops[TT_EAGER_DEBUG] == 0);
    tt_ir_program_destroy(p1), tt_ir_program_destroy(p2), tt_ir_program_destroy(p3);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

/* Capture (torchtpu.aot_compile): the programs executed between start and stop, each once by structure, in
 * first-run order, in debug and strict mode alike; nothing is noted outside a capture. */
static void a_capture_notes_each_executed_program_once(void) {
    for (int m = 0; m < 2; m++) {
        fake_start(1, m ? TT_EAGER_STRICT : TT_EAGER_DEBUG);
        tt_rt_storage *x = new_vec(0, NULL, 8), *z = new_vec(0, NULL, 8);
        tt_ir_program *p8 = add_program(8), *again = add_program(8), *p5 = add_program(5), **got = NULL;
        TT_CHECK_OK(launch_add(0, p5, x, x, z, 5, "aten::add.Tensor")); /* before: not noted */
        TT_CHECK_OK(tt_rt_synchronize(0));
        TT_CHECK_OK(tt_rt_capture_start());
        TT_CHECK_OK(launch_add(0, p8, x, x, z, 8, "aten::add.Tensor"));
        TT_CHECK_OK(launch_add(0, again, x, x, z, 8, "aten::add.Tensor")); /* equal structure: once */
        TT_CHECK_OK(launch_add(0, p5, x, x, z, 5, "aten::add.Tensor"));     /* cached before: still noted */
        TT_CHECK_OK(tt_rt_synchronize(0));
        int32_t n = tt_rt_capture_stop(&got);
        TT_CHECK(n == 2 && got && tt_ir_program_equal(got[0], p8) && tt_ir_program_equal(got[1], p5));
        for (int32_t i = 0; i < n; i++) tt_ir_program_destroy(got[i]);
        free(got);
        TT_CHECK_OK(launch_add(0, p8, x, x, z, 8, "aten::add.Tensor")); /* after: not noted */
        TT_CHECK_OK(tt_rt_synchronize(0));
        TT_CHECK(tt_rt_capture_stop(&got) == 0 && !got);
        tt_ir_program_destroy(p8), tt_ir_program_destroy(again), tt_ir_program_destroy(p5);
        tt_rt_storage_release(x), tt_rt_storage_release(z);
        fake_stop();
    }
}

static void cache_clear_keeps_executables_of_queued_launches_alive(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    tt_rt_cache_clear();
    TT_CHECK(tt_rt_cache_size() == 0);
    TT_CHECK(fk_get(&fk.live_exes) == 1);
    fk_gate(false);
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[1] == 4);
    TT_CHECK(fk_get(&fk.live_exes) == 0);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void a_full_queue_makes_the_producer_wait(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 1}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    for (int k = 0; k < 5000; k++) TT_CHECK_OK(launch_add(0, p, x, z, z, 2, "aten::add_.Tensor"));
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 5000 && o[1] == 5000);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void bad_launch_arguments_are_errors_not_crashes(void) {
    fake_start(2, TT_EAGER_STRICT);
    tt_rt_storage *x = new_vec(0, NULL, 4), *z = new_vec(0, NULL, 4), *w = new_vec(1, NULL, 4);
    tt_ir_program *p = add_program(4);
    tt_rt_arg args[2] = {targ(x, 4), targ(x, 4)};
    tt_rt_tensor res = vec(z, 4);
    TT_CHECK(tt_rt_launch(0, p, args, 1, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT); /* arity */
    TT_CHECK(tt_rt_launch(2, p, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT); /* device */
    TT_CHECK(tt_rt_launch(0, NULL, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT);
    args[1].tensor.dtype = TT_F16;
    TT_CHECK(tt_rt_launch(0, p, args, 2, &res, 1, "aten::add.Tensor") == TT_STATUS_TYPE);
    TT_CHECK(strstr(tt_last_error(), "aten::add.Tensor: argument 1") != NULL);
    args[1] = targ(x, 4);
    args[1].tensor.offset = 1; /* elements 1..4 of a 4-element storage */
    TT_CHECK(tt_rt_launch(0, p, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT);
    args[1].tensor.offset = 3;
    args[1].tensor.strides[0] = -1; /* elements 3..0: fine */
    TT_CHECK_OK(tt_rt_launch(0, p, args, 2, &res, 1, "op"));
    args[1].tensor.strides[0] = INT64_MAX;
    TT_CHECK(tt_rt_launch(0, p, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT);
    args[1] = targ(w, 4); /* on tpu:1 */
    TT_CHECK(tt_rt_launch(0, p, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT);
    args[1].kind = TT_RT_ARG_SCALAR;
    TT_CHECK(tt_rt_launch(0, p, args, 2, &res, 1, "op") == TT_STATUS_INVALID_ARGUMENT);
    float buf[8];
    TT_CHECK(tt_rt_write(x, 8, buf, 16) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_read(x, 0, buf, 17) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_copy(x, 0, w, 4, 16) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_synchronize(5) == TT_STATUS_INVALID_ARGUMENT);
    tt_rt_storage *bad = NULL;
    TT_CHECK(tt_rt_storage_create(2, 4, &bad) == TT_STATUS_INVALID_ARGUMENT && bad == NULL);
    TT_CHECK(tt_rt_set_eager_mode((tt_rt_eager_mode)7) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_STRICT); /* a refused switch changes nothing */
    TT_CHECK(!strcmp(tt_rt_eager_mode_name(TT_EAGER_FUSED), "fused"));
    TT_CHECK_OK(tt_rt_synchronize(-1));
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z), tt_rt_storage_release(w);
    fake_stop();
}

static void memory_stats_count_allocations_and_peaks(void) {
    fake_start(2, TT_EAGER_STRICT);
    pthread_mutex_lock(&fk.mu);
    fk.limit = 1000;
    pthread_mutex_unlock(&fk.mu);
    tt_rt_storage *a = NULL, *b = NULL, *c = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 400, &a));
    TT_CHECK_OK(tt_rt_storage_create(0, 500, &b));
    TT_CHECK(tt_rt_storage_nbytes(a) == 400 && tt_rt_storage_device(b) == 0 && tt_rt_storage_address(a) != NULL);
    TT_CHECK(tt_rt_storage_create(0, 200, &c) == TT_STATUS_OUT_OF_MEMORY && c == NULL);
    TT_CHECK(strstr(tt_last_error(), "fake: out of memory") != NULL);
    TT_CHECK(strstr(tt_last_error(), "allocated 900, peak 900") != NULL);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 900 && ms.peak_allocated == 900 && ms.reserved == 900 && ms.n_allocs == 2);
    TT_CHECK(ms.limit == 1000);
    tt_rt_storage_release(b);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 400 && ms.peak_allocated == 900);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.peak_bytes == 900);
    tt_rt_memory_reset_peak(0);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.peak_allocated == 400);
    TT_CHECK_OK(tt_rt_storage_create(1, 10, &c));
    TT_CHECK_OK(tt_rt_memory_stats_get(1, &ms));
    TT_CHECK(ms.allocated == 10 && ms.n_allocs == 1);
    TT_CHECK(tt_rt_memory_stats_get(2, &ms) == TT_STATUS_INVALID_ARGUMENT);
    tt_rt_storage_retain(a);
    tt_rt_storage_release(a);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 400); /* still one reference */
    tt_rt_storage_release(a);
    tt_rt_storage_release(c);
    tt_rt_empty_cache(-1);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 0);
    tt_rt_metrics_reset();
    tt_rt_metrics_get(&m);
    TT_CHECK(m.peak_bytes == 0);
    fake_stop();
}

static void rng_reserves_advance_the_offset_in_fours(void) {
    fake_start(2, TT_EAGER_STRICT);
    uint64_t seed, off;
    TT_CHECK(tt_rt_initial_seed(0) == 67280421310721ull);
    tt_rt_manual_seed(0, 42);
    TT_CHECK(tt_rt_initial_seed(0) == 42);
    TT_CHECK(tt_rt_initial_seed(1) == 67280421310721ull); /* per device */
    tt_rt_rng_reserve(0, 10, &seed, &off);
    TT_CHECK(seed == 42 && off == 0);
    tt_rt_rng_reserve(0, 4, &seed, &off);
    TT_CHECK(off == 12);
    tt_rt_rng_reserve(0, 1, &seed, &off);
    TT_CHECK(off == 16);
    tt_rt_rng_get_state(0, &seed, &off);
    TT_CHECK(seed == 42 && off == 20);
    tt_rt_rng_set_state(0, 7, 100);
    tt_rt_rng_reserve(0, 3, &seed, &off);
    TT_CHECK(seed == 7 && off == 100);
    tt_rt_manual_seed(0, 9);
    tt_rt_rng_get_state(0, &seed, &off);
    TT_CHECK(seed == 9 && off == 0);
    tt_rt_rng_get_state(5, &seed, &off); /* no such device: zeros, no crash */
    TT_CHECK(seed == 0 && off == 0);
    fake_stop();
}

static void switching_modes_drains_the_queue_and_keeps_its_error(void) {
    fake_start(1, TT_EAGER_STRICT);
    tt_rt_storage *x = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_set(&fk.fail_at, 1);
    TT_CHECK_OK(launch_add(0, p, x, x, x, 2, "aten::add_.Tensor"));
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_DEBUG));
    TT_CHECK(fk_get(&fk.executed) == 1);
    TT_CHECK(tt_rt_synchronize(-1) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK_OK(tt_rt_synchronize(-1));
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x);
    fake_stop();
}

/* ---- per-thread eager modes ---- */
static void *read_mode_thread(void *arg) {
    int *out = arg;
    out[0] = (int)tt_rt_get_eager_mode();
    out[1] = tt_rt_get_thread_eager_mode();
    return NULL;
}

static void a_thread_override_applies_to_its_thread_only(void) {
    fake_start(1, TT_EAGER_STRICT);
    TT_CHECK(tt_rt_get_thread_eager_mode() == TT_EAGER_PROCESS);
    TT_CHECK_OK(tt_rt_set_thread_eager_mode(TT_EAGER_DEBUG));
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_DEBUG && tt_rt_get_process_eager_mode() == TT_EAGER_STRICT);
    int seen[2] = {-5, -5};
    pthread_t t;
    TT_CHECK(pthread_create(&t, NULL, read_mode_thread, seen) == 0);
    pthread_join(t, NULL);
    TT_CHECK(seen[0] == TT_EAGER_STRICT && seen[1] == TT_EAGER_PROCESS);
    float a[2] = {1, 2};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK(fk_get(&fk.executed) == 1); /* ran at once, on this thread */
    TT_CHECK(tt_rt_set_thread_eager_mode(7) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_rt_get_thread_eager_mode() == TT_EAGER_DEBUG); /* a refused switch changes nothing */
    TT_CHECK_OK(tt_rt_set_thread_eager_mode(TT_EAGER_PROCESS));
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_STRICT);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.ops[TT_EAGER_DEBUG] == 1 && m.ops[TT_EAGER_STRICT] == 0);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

struct debug_after_queue {
    tt_ir_program *p;
    tt_rt_storage *z, *w;
    tt_status st;
};
static void *debug_launch_thread(void *arg) {
    struct debug_after_queue *a = arg;
    a->st = tt_rt_set_thread_eager_mode(TT_EAGER_DEBUG);
    if (a->st == TT_OK) a->st = launch_add(0, a->p, a->z, a->z, a->w, 2, "aten::mul.Tensor"); /* w = z + z */
    return NULL;
}

/* The strict launch is held at the gate when the other thread's debug launch arrives: the debug launch must run
 * after it (w reads z). When the queued launch fails, the debug launch does not run and reports that failure
 * without taking it: the next sync still raises it. */
static void a_debug_launch_waits_for_work_another_thread_queued(void) {
    for (int fail = 0; fail < 2; fail++) {
        fake_start(1, TT_EAGER_STRICT);
        float one[2] = {1, 1}, o[2] = {-1, -1};
        tt_rt_storage *x = new_vec(0, one, 2), *z = new_vec(0, NULL, 2), *w = new_vec(0, NULL, 2);
        struct debug_after_queue a = {add_program(2), z, w, TT_STATUS_INTERNAL};
        TT_CHECK_OK(tt_rt_synchronize(0));
        fk_set(&fk.fail_at, fail ? 1 : 0);
        fk_gate(true);
        TT_CHECK_OK(launch_add(0, a.p, x, x, z, 2, "aten::add.Tensor")); /* z = 2, queued */
        pthread_t t;
        TT_CHECK(pthread_create(&t, NULL, debug_launch_thread, &a) == 0);
        fk_gate(false);
        pthread_join(t, NULL);
        if (fail) {
            TT_CHECK(a.st == TT_STATUS_INVALID_ARGUMENT);
            TT_CHECK(fk_get(&fk.executed) == 1);
            TT_CHECK(tt_rt_synchronize(0) == TT_STATUS_INVALID_ARGUMENT);
            TT_CHECK(strstr(tt_last_error(), "aten::add.Tensor") && strstr(tt_last_error(), "fake failure number 1"));
        } else {
            TT_CHECK_OK(a.st);
            TT_CHECK(fk_get(&fk.executed) == 2);
            TT_CHECK_OK(tt_rt_read(w, 0, o, sizeof o));
            TT_CHECK(o[0] == 4 && o[1] == 4);
        }
        TT_CHECK_OK(tt_rt_synchronize(0));
        tt_ir_program_destroy(a.p);
        tt_rt_storage_release(x), tt_rt_storage_release(z), tt_rt_storage_release(w);
        fake_stop();
    }
}

static void *hammer(void *arg) {
    tt_ir_program *p = arg;
    float one[2] = {1, 1};
    for (int k = 0; k < 300; k++) {
        tt_rt_storage *x = NULL, *z = NULL;
        if (tt_rt_storage_create(0, 8, &x) != TT_OK || tt_rt_storage_create(0, 8, &z) != TT_OK) return (void *)1;
        tt_rt_write(x, 0, one, 8);
        launch_add(0, p, x, x, z, 2, "aten::add.Tensor");
        tt_rt_storage_release(x); /* the queued launch holds them */
        tt_rt_storage_release(z);
        uint64_t seed, off;
        tt_rt_rng_reserve(0, 1, &seed, &off);
    }
    return NULL;
}

static void many_threads_launch_and_allocate_at_once(void) {
    fake_start(1, TT_EAGER_STRICT);
    tt_ir_program *p = add_program(2);
    pthread_t th[4];
    for (int i = 0; i < 4; i++) TT_CHECK(pthread_create(&th[i], NULL, hammer, p) == 0);
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        TT_CHECK(r == NULL);
    }
    TT_CHECK_OK(tt_rt_synchronize(-1));
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 0 && ms.n_allocs == 2400 && ms.peak_allocated >= 16);
    TT_CHECK(ms.reserved < 2400 * 8); /* the cache reused buffers */
    tt_rt_empty_cache(-1);
    TT_CHECK(fk_get(&fk.executed) == 1200 && fk_get(&fk.live_buffers) == 0);
    uint64_t seed, off;
    tt_rt_rng_get_state(0, &seed, &off);
    TT_CHECK(off == 4800);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.ops[TT_EAGER_STRICT] == 1200 && m.compiles == 1 && m.cache_hits == 1199);
    tt_ir_program_destroy(p);
    fake_stop();
}

/* ---- the caching allocator ---- */

static void released_buffers_are_reused_from_the_cache(void) {
    fake_start(1, TT_EAGER_STRICT);
    tt_rt_storage *a = NULL, *b = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 400, &a));
    void *addr = tt_rt_storage_address(a);
    tt_rt_storage_release(a);
    TT_CHECK(fk_get(&fk.live_buffers) == 1); /* cached, not freed */
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 0 && ms.reserved == 400 && ms.peak_reserved == 400);
    TT_CHECK_OK(tt_rt_storage_create(0, 390, &b)); /* same size class: the cached buffer */
    TT_CHECK(tt_rt_storage_address(b) == addr && tt_rt_storage_nbytes(b) == 390);
    TT_CHECK(fk_get(&fk.live_buffers) == 1);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 400 && ms.reserved == 400 && ms.n_allocs == 2); /* the buffer's bytes count */
    TT_CHECK_OK(tt_rt_storage_create(0, 4000, &a)); /* another class: a new buffer */
    TT_CHECK(fk_get(&fk.live_buffers) == 2);
    tt_rt_storage_release(a);
    tt_rt_storage_release(b);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 0 && ms.reserved == 4400 && ms.peak_reserved == 4400 && ms.peak_allocated == 4400);
    tt_rt_memory_reset_peak(0);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.peak_allocated == 0 && ms.peak_reserved == 4400);
    tt_rt_empty_cache(0);
    TT_CHECK(fk_get(&fk.live_buffers) == 0);
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.reserved == 0 && ms.allocated == 0);
    TT_CHECK_OK(tt_rt_storage_create(0, 0, &a)); /* empty storages take the same path */
    tt_rt_storage_release(a);
    TT_CHECK_OK(tt_rt_storage_create(0, 0, &a));
    tt_rt_storage_release(a);
    fake_stop();
}

static void an_allocation_over_the_limit_empties_the_cache_and_retries(void) {
    fake_start(1, TT_EAGER_STRICT);
    pthread_mutex_lock(&fk.mu);
    fk.limit = 1000;
    pthread_mutex_unlock(&fk.mu);
    tt_rt_storage *a = NULL, *b = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 600, &a));
    tt_rt_storage_release(a); /* 600 cached: reserved 600 of the limit's 1000 */
    TT_CHECK_OK(tt_rt_storage_create(0, 700, &b)); /* no fit; 600 + 700 > 1000; the cache goes, then it fits */
    TT_CHECK(fk_get(&fk.live_buffers) == 1);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.allocated == 700 && ms.reserved == 700);
    TT_CHECK(tt_rt_storage_create(0, 400, &a) == TT_STATUS_OUT_OF_MEMORY && a == NULL); /* nothing to free */
    TT_CHECK(strstr(tt_last_error(), "allocated 700, peak 700, reserved 700") != NULL);
    tt_rt_storage_release(b);
    fake_stop();
}

static void a_reused_buffer_is_only_reused_after_queued_work_that_uses_it(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    void *zaddr = tt_rt_storage_address(z);
    tt_ir_program *p = add_program(2);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    tt_rt_storage_release(z); /* still used by the queued launch: not in the cache yet */
    tt_rt_storage *w = new_vec(0, NULL, 2);
    TT_CHECK(tt_rt_storage_address(w) != zaddr);
    fk_gate(false);
    TT_CHECK_OK(tt_rt_synchronize(0));
    tt_rt_storage *v = new_vec(0, NULL, 2); /* now z's buffer is free to reuse, with z's bytes in it */
    TT_CHECK(tt_rt_storage_address(v) == zaddr);
    TT_CHECK_OK(tt_rt_read(v, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(w), tt_rt_storage_release(v);
    fake_stop();
}

static void memory_cache_bytes_zero_turns_caching_off(void) {
    setenv("TORCHTPU_MEMORY_CACHE_BYTES", "0", 1);
    fake_start(1, TT_EAGER_DEBUG);
    tt_rt_storage *a = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 64, &a));
    tt_rt_storage_release(a);
    TT_CHECK(fk_get(&fk.live_buffers) == 0);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.reserved == 0 && ms.peak_reserved == 64);
    fake_stop();
    setenv("TORCHTPU_MEMORY_CACHE_BYTES", "100", 1); /* a cap: a bigger buffer goes back to the driver */
    fake_start(1, TT_EAGER_DEBUG);
    tt_rt_storage *b = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 64, &a));
    TT_CHECK_OK(tt_rt_storage_create(0, 200, &b));
    tt_rt_storage_release(a);
    tt_rt_storage_release(b);
    TT_CHECK(fk_get(&fk.live_buffers) == 1);
    fake_stop();
    setenv("TORCHTPU_MEMORY_CACHE_BYTES", "lots", 1);
    tt_driver *d = calloc(1, sizeof *d);
    d->iface = (tt_driver_i){.struct_size = sizeof(tt_driver_i), .name = "fake", .device_count = fk_device_count,
                             .destroy = fk_destroy};
    d->ctx = (void *)(intptr_t)1;
    TT_CHECK(tt_rt_init_with_driver(d) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "TORCHTPU_MEMORY_CACHE_BYTES") != NULL);
    unsetenv("TORCHTPU_MEMORY_CACHE_BYTES");
}

/* ---- the work ring ---- */

/* out = x0 + x1 with n_params f32[n] parameters (the rest unused): more tensors than a ring slot holds. */
static tt_ir_program *wide_add_program(int64_t n, int n_params) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value v[16];
    for (int i = 0; i < n_params; i++) v[i] = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, v[0], v[1]));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static void launches_with_many_tensors_and_long_names_queue_and_fail_by_name(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = wide_add_program(2, 12);
    tt_rt_arg args[12];
    for (int i = 0; i < 12; i++) args[i] = targ(x, 2);
    tt_rt_tensor res = vec(z, 2);
    char name[200];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = '\0';
    memcpy(name, "aten::long", 10);
    TT_CHECK_OK(tt_rt_launch(0, p, args, 12, &res, 1, name));
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    fk_set(&fk.fail_at, fk_get(&fk.executed) + 1);
    TT_CHECK_OK(tt_rt_launch(0, p, args, 12, &res, 1, name));
    TT_CHECK(tt_rt_synchronize(0) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), name) != NULL && strstr(tt_last_error(), "fake failure") != NULL);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void the_ring_wraps_many_times_keeping_writes_and_launches_in_order(void) {
    fake_start(1, TT_EAGER_STRICT);
    float one[2] = {1, 1}, o[2];
    static float big[1024];
    tt_rt_storage *x = new_vec(0, one, 2), *z = new_vec(0, NULL, 2), *w = new_vec(0, NULL, 1024);
    tt_ir_program *p = add_program(2);
    for (int k = 0; k < 3000; k++) {
        float v[2] = {(float)k, (float)k};
        TT_CHECK_OK(tt_rt_write(z, 0, v, sizeof v));          /* small: copied into the slot */
        TT_CHECK_OK(launch_add(0, p, x, z, z, 2, "aten::add_.Tensor"));
        if (k % 500 == 0) {
            big[0] = (float)k;
            TT_CHECK_OK(tt_rt_write(w, 0, big, sizeof big)); /* large: a heap copy */
        }
    }
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 3000 && o[1] == 3000);
    TT_CHECK_OK(tt_rt_read(w, 0, o, sizeof o));
    TT_CHECK(o[0] == 2500);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z), tt_rt_storage_release(w);
    fake_stop();
}

static bool ran_here(void) {
    pthread_mutex_lock(&fk.mu);
    bool here = pthread_equal(fk.exec_thread, pthread_self());
    pthread_mutex_unlock(&fk.mu);
    return here;
}

/* Small work queued while the worker sleeps is run by the sync that waits for it, on its own thread (no wake-up
 * there and back); work nobody waits for still runs on the worker, and the worker takes over after a sync. */
static void a_sync_runs_small_queued_work_itself_and_the_worker_the_rest(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 1}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2), *p3 = add_program(3);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor")); /* timed: now known to be cheap */
    TT_CHECK_OK(tt_rt_synchronize(0));
    struct timespec nap = {0, 5 * 1000 * 1000};
    nanosleep(&nap, NULL); /* the worker is asleep now */
    for (int k = 0; k < 3; k++) TT_CHECK_OK(launch_add(0, p, x, z, z, 2, "aten::add_.Tensor"));
    TT_CHECK(fk_get(&fk.executed) == 1); /* cheap: left for the sync */
    TT_CHECK_OK(tt_rt_synchronize(0));
    TT_CHECK(fk_get(&fk.executed) == 4 && ran_here());
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 5 && o[1] == 5);
    /* a program never timed counts as costly: it wakes the worker, which runs it while nobody waits */
    tt_rt_storage *x3 = new_vec(0, NULL, 3), *z3 = new_vec(0, NULL, 3);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p3, x3, x3, z3, 3, "aten::add.Tensor"));
    while (fk_get(&fk.entered) < 5) nanosleep(&(struct timespec){0, 100000}, NULL);
    TT_CHECK(!ran_here());
    fk_gate(false);
    TT_CHECK_OK(tt_rt_synchronize(0));
    TT_CHECK(fk_get(&fk.executed) == 5);
    tt_ir_program_destroy(p), tt_ir_program_destroy(p3);
    tt_rt_storage_release(x), tt_rt_storage_release(z), tt_rt_storage_release(x3), tt_rt_storage_release(z3);
    fake_stop();
}

static void *sync_loop(void *arg) {
    (void)arg;
    for (int k = 0; k < 200; k++)
        if (tt_rt_synchronize(0) != TT_OK) return (void *)1;
    return NULL;
}

static void small_ops_run_by_the_next_sync_and_concurrent_syncs_all_return(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 1}, o[2];
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor")); /* timed: now known to be cheap */
    TT_CHECK_OK(tt_rt_synchronize(0));
    struct timespec nap = {0, 5 * 1000 * 1000};
    nanosleep(&nap, NULL); /* the worker is asleep now */
    TT_CHECK_OK(launch_add(0, p, x, z, z, 2, "aten::add_.Tensor"));
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o)); /* may have waited for the sync to wake the worker */
    TT_CHECK(o[0] == 3 && o[1] == 3);
    pthread_t th[3];
    for (int i = 0; i < 3; i++) TT_CHECK(pthread_create(&th[i], NULL, sync_loop, NULL) == 0);
    for (int k = 0; k < 2000; k++) TT_CHECK_OK(launch_add(0, p, x, z, z, 2, "aten::add_.Tensor"));
    for (int i = 0; i < 3; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        TT_CHECK(r == NULL);
    }
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2003 && o[1] == 2003);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

typedef struct {
    tt_ir_program *p;
    tt_rt_storage *x, *z;
} launch_sync_arg;

static void *launch_and_sync(void *arg) {
    launch_sync_arg *a = arg;
    for (int k = 0; k < 600; k++) {
        if (launch_add(0, a->p, a->x, a->x, a->z, 2, "aten::add.Tensor") != TT_OK) return (void *)1;
        if (k % 7 == 0 && tt_rt_synchronize(0) != TT_OK) return (void *)1;
    }
    return NULL;
}

static void producers_that_sync_while_others_launch_never_hang(void) {
    fake_start(1, TT_EAGER_STRICT);
    launch_sync_arg a = {add_program(2), new_vec(0, NULL, 2), new_vec(0, NULL, 2)};
    TT_CHECK_OK(launch_add(0, a.p, a.x, a.x, a.z, 2, "aten::add.Tensor")); /* timed: cheap from now on */
    TT_CHECK_OK(tt_rt_synchronize(0));
    pthread_t th[4];
    for (int i = 0; i < 4; i++) TT_CHECK(pthread_create(&th[i], NULL, launch_and_sync, &a) == 0);
    for (int i = 0; i < 4; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        TT_CHECK(r == NULL);
    }
    TT_CHECK_OK(tt_rt_synchronize(-1));
    TT_CHECK(fk_get(&fk.executed) == 2401);
    tt_ir_program_destroy(a.p);
    tt_rt_storage_release(a.x), tt_rt_storage_release(a.z);
    fake_stop();
}

static void many_launches_in_both_modes_all_run_once_and_compile_once(void) {
    /* Launch overhead is measured by bench/op_overhead.py (timing is no test); this checks what the loop does. */
    fake_start(1, TT_EAGER_STRICT);
    float one[2] = {1, 1};
    tt_rt_storage *x = new_vec(0, one, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    const int n = 20000;
    for (int mode = 0; mode < 2; mode++) {
        TT_CHECK_OK(tt_rt_set_eager_mode(mode ? TT_EAGER_STRICT : TT_EAGER_DEBUG));
        for (int k = 0; k < n; k++) TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
        TT_CHECK_OK(tt_rt_synchronize(0));
        TT_CHECK(fk_get(&fk.executed) == (mode + 1) * n);
    }
    TT_CHECK(fk_get(&fk.compiled) == 1); /* one program, 40000 launches: the compile cache hits every time */
    float o[2] = {0, 0};
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 2);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

/* ------------------------------------------------------------------------------------------------------------
 * The real host driver, started from the environment.
 * ---------------------------------------------------------------------------------------------------------- */
static void clear_env(void) {
    unsetenv("TORCHTPU_HOST_DEVICES");
    unsetenv("TORCHTPU_HOST_MEMORY_LIMIT");
    unsetenv("TORCHTPU_EAGER_MODE");
    unsetenv("TPU_LAUNCH_BLOCKING");
    unsetenv("TORCH_TPU_LAUNCH_BLOCKING");
    unsetenv("TORCH_TPU_DEFER_AND_FUSE");
    unsetenv("TORCH_TPU_ENABLE_DEBUG_CHECKS");
    unsetenv("TORCHTPU_DRIVER");
}

static void bad_environment_values_are_errors_with_a_message(void) {
    clear_env();
    const char *bad[][2] = {{"TORCHTPU_HOST_DEVICES", "0"},        {"TORCHTPU_HOST_DEVICES", "65"},
                            {"TORCHTPU_HOST_DEVICES", "two"},      {"TORCHTPU_HOST_DEVICES", "-1"},
                            {"TORCHTPU_HOST_MEMORY_LIMIT", "1GB"}, {"TORCHTPU_HOST_MEMORY_LIMIT", "-5"},
                            {"TORCHTPU_EAGER_MODE", "lazy"},       {"TORCHTPU_DRIVER", "cuda"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        TT_CHECK(tt_rt_init() == TT_STATUS_INVALID_ARGUMENT);
        TT_CHECK(strstr(tt_last_error(), bad[i][0]) != NULL);
        TT_CHECK(tt_rt_device_count() == 0);
        unsetenv(bad[i][0]);
    }
    clear_env();
    TT_CHECK_OK(tt_rt_init()); /* a failed start can be retried */
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_FUSED); /* the default */
    TT_CHECK(!strcmp(tt_rt_driver_name(), "host"));
    TT_CHECK(tt_rt_device_count() == 1);
    tt_rt_shutdown();
}

static void googles_mode_variables_choose_the_start_mode(void) {
    clear_env();
    setenv("TORCH_TPU_LAUNCH_BLOCKING", "1", 1);
    setenv("TORCH_TPU_DEFER_AND_FUSE", "1", 1); /* launch blocking overrides fusion */
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_DEBUG);
    tt_rt_shutdown();
    unsetenv("TORCH_TPU_LAUNCH_BLOCKING");
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_FUSED);
    tt_rt_shutdown();
    setenv("TORCHTPU_EAGER_MODE", "fused", 1);
    unsetenv("TORCH_TPU_DEFER_AND_FUSE");
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_FUSED);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_EAGER_MODE");
    setenv("TORCH_TPU_DEFER_AND_FUSE", "0", 1);
    setenv("TORCH_TPU_ENABLE_DEBUG_CHECKS", "1", 1);
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_STRICT);
    tt_rt_shutdown();
    clear_env();
}

static void launch_blocking_selects_debug_over_eager_mode(void) {
    clear_env();
    setenv("TORCHTPU_EAGER_MODE", "strict", 1);
    setenv("TPU_LAUNCH_BLOCKING", "1", 1);
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_DEBUG);
    tt_rt_shutdown();
    setenv("TPU_LAUNCH_BLOCKING", "0", 1);
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_get_eager_mode() == TT_EAGER_STRICT);
    tt_rt_shutdown();
    clear_env();
}

static void host_add_runs_in_debug_and_strict(void) {
    clear_env();
    TT_CHECK_OK(tt_rt_init());
    const int64_t n = 1000;
    float *a = malloc(n * 4), *b = malloc(n * 4), *o = malloc(n * 4);
    for (int64_t i = 0; i < n; i++) a[i] = (float)i, b[i] = 0.5f;
    tt_rt_storage *x = new_vec(0, a, n), *y = new_vec(0, b, n), *z = new_vec(0, NULL, n);
    tt_ir_program *p = add_program(n);
    for (int mode = 0; mode < 2; mode++) {
        TT_CHECK_OK(tt_rt_set_eager_mode(mode ? TT_EAGER_STRICT : TT_EAGER_DEBUG));
        memset(o, 0, n * 4);
        TT_CHECK_OK(launch_add(0, p, x, y, z, n, "aten::add.Tensor"));
        TT_CHECK_OK(launch_add(0, p, z, y, z, n, "aten::add.Tensor")); /* in place: z = z + y */
        TT_CHECK_OK(tt_rt_read(z, 0, o, n * 4));
        TT_CHECK(o[0] == 1.0f && o[999] == 1000.0f);
    }
    /* strict: write -> launch -> read keeps order through the queue */
    for (int64_t i = 0; i < n; i++) a[i] = 2.0f;
    TT_CHECK_OK(tt_rt_write(x, 0, a, n * 4));
    TT_CHECK_OK(launch_add(0, p, x, x, z, n, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_read(z, 0, o, n * 4));
    TT_CHECK(o[0] == 4.0f && o[999] == 4.0f);
    tt_rt_metrics m;
    tt_rt_metrics_get(&m);
    TT_CHECK(m.compiles == 1 && m.cache_hits == 4);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(y), tt_rt_storage_release(z);
    free(a), free(b), free(o);
    tt_rt_shutdown();
}

static void two_host_devices_and_a_copy_between_them(void) {
    clear_env();
    setenv("TORCHTPU_HOST_DEVICES", "2", 1);
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK(tt_rt_device_count() == 2);
    float a[4] = {1, 2, 3, 4}, o[4] = {0};
    tt_rt_storage *x0 = new_vec(0, a, 4), *x1 = new_vec(1, NULL, 4), *z1 = new_vec(1, NULL, 4);
    tt_ir_program *p = add_program(4);
    TT_CHECK_OK(tt_rt_copy(x1, 0, x0, 0, 16));
    TT_CHECK_OK(launch_add(1, p, x1, x1, z1, 4, "aten::add.Tensor"));
    TT_CHECK(launch_add(0, p, x1, x1, z1, 4, "aten::add.Tensor") == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK_OK(tt_rt_copy(x0, 8, z1, 0, 8)); /* ordered after the launch on tpu:1 */
    TT_CHECK_OK(tt_rt_read(x0, 0, o, 16));
    TT_CHECK(o[0] == 1 && o[1] == 2 && o[2] == 2 && o[3] == 4);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(1, &ms));
    TT_CHECK(ms.allocated == 32);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x0), tt_rt_storage_release(x1), tt_rt_storage_release(z1);
    tt_rt_shutdown();
    clear_env();
}

/* Rows copied within a device: queued in order after a launch that writes the source (strict) and run at once
 * (debug), no compile either way; rows that do not fit and two devices are errors. */
static void rows_are_copied_in_order_without_a_program(void) {
    clear_env();
    setenv("TORCHTPU_HOST_DEVICES", "2", 1);
    TT_CHECK_OK(tt_rt_init());
    float a[6] = {1, 2, 3, 4, 5, 6}, o[12] = {0};
    tt_rt_storage *x = new_vec(0, a, 6), *y = new_vec(0, NULL, 6), *z = new_vec(0, NULL, 12), *w = new_vec(1, a, 6);
    tt_ir_program *p = add_program(6);
    for (int mode = 0; mode < 2; mode++) {
        TT_CHECK_OK(tt_rt_set_eager_mode(mode ? TT_EAGER_DEBUG : TT_EAGER_STRICT));
        TT_CHECK_OK(tt_rt_write(z, 0, o, sizeof o));
        TT_CHECK_OK(launch_add(0, p, x, x, y, 6, "aten::add.Tensor")); /* y = 2x, queued in strict mode */
        tt_rt_metrics m0, m1;
        tt_rt_metrics_get(&m0);
        /* y as 2 rows of 3 -> z as 2 rows 6 apart */
        TT_CHECK_OK(tt_rt_copy_rows(z, 4, 24, y, 0, 12, 12, 2));
        tt_rt_metrics_get(&m1);
        TT_CHECK(m1.compiles == m0.compiles);
        float r[12];
        TT_CHECK_OK(tt_rt_read(z, 0, r, sizeof r));
        const float want[12] = {0, 2, 4, 6, 0, 0, 0, 8, 10, 12, 0, 0};
        TT_CHECK(memcmp(r, want, sizeof r) == 0);
    }
    TT_CHECK(tt_rt_copy_rows(z, 0, 24, y, 0, 12, 12, 3) == TT_STATUS_INVALID_ARGUMENT); /* source row 3 */
    TT_CHECK(tt_rt_copy_rows(z, 40, 4, y, 0, 4, 12, 1) == TT_STATUS_INVALID_ARGUMENT);  /* past z's end */
    TT_CHECK(tt_rt_copy_rows(z, 0, SIZE_MAX / 2, y, 0, 4, 4, 3) == TT_STATUS_INVALID_ARGUMENT); /* overflow */
    TT_CHECK(tt_rt_copy_rows(z, 0, 12, w, 0, 12, 12, 1) == TT_STATUS_INVALID_ARGUMENT);  /* two devices */
    TT_CHECK_OK(tt_rt_copy_rows(z, 0, 12, y, 0, 12, 12, 0));                             /* nothing to copy */
    TT_CHECK_OK(tt_rt_synchronize(-1));
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(y), tt_rt_storage_release(z), tt_rt_storage_release(w);
    tt_rt_shutdown();
    clear_env();
}

/* The address table: every live storage is found by its address (enough of them to grow the table, on two
 * devices), a released one is not, a cached buffer taken again is found as its new storage, and a pending
 * storage by its record's address. */
static void storages_are_found_by_address_while_they_live(void) {
    clear_env();
    setenv("TORCHTPU_HOST_DEVICES", "2", 1);
    TT_CHECK_OK(tt_rt_init());
    enum { K = 700 };
    tt_rt_storage **s = calloc(K, sizeof *s);
    if (!s) goto out;
    for (int i = 0; i < K; i++) TT_CHECK_OK(tt_rt_storage_create(i & 1, 64 + (size_t)(i % 5) * 64, &s[i]));
    int lost = 0;
    for (int i = 0; i < K; i++) lost += tt_rt_storage_find(tt_rt_storage_address(s[i])) != s[i];
    TT_CHECK(lost == 0);
    for (int i = 0; i < K; i += 3) { /* every third, in an order that leaves holes all over the table */
        void *a = tt_rt_storage_address(s[i]);
        tt_rt_storage_release(s[i]);
        s[i] = NULL;
        lost += tt_rt_storage_find(a) != NULL;
    }
    for (int i = 0; i < K; i++) lost += s[i] && tt_rt_storage_find(tt_rt_storage_address(s[i])) != s[i];
    TT_CHECK(lost == 0);
    tt_rt_storage *again = NULL, *pending = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 64, &again)); /* from the cache */
    TT_CHECK(again && tt_rt_storage_find(tt_rt_storage_address(again)) == again);
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_FUSED));
    TT_CHECK_OK(tt_rt_storage_create_pending(1, 64, &pending));
    TT_CHECK(pending && tt_rt_storage_find(tt_rt_storage_address(pending)) == pending);
    tt_rt_storage_release(pending);
    tt_rt_storage_release(again);
    TT_CHECK(tt_rt_storage_find(NULL) == NULL);
    for (int i = 0; i < K; i++) tt_rt_storage_release(s[i]);
    free(s);
out:
    tt_rt_shutdown();
    clear_env();
}

static void host_memory_limit_gives_out_of_memory_with_figures(void) {
    clear_env();
    setenv("TORCHTPU_HOST_MEMORY_LIMIT", "4096", 1);
    TT_CHECK_OK(tt_rt_init());
    tt_rt_storage *a = NULL, *b = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, 4000, &a));
    TT_CHECK(tt_rt_storage_create(0, 200, &b) == TT_STATUS_OUT_OF_MEMORY && b == NULL);
    TT_CHECK(strstr(tt_last_error(), "allocated 4000, peak 4000") != NULL);
    tt_rt_memory_stats ms;
    TT_CHECK_OK(tt_rt_memory_stats_get(0, &ms));
    TT_CHECK(ms.limit == 4096 && ms.allocated == 4000);
    tt_rt_storage_release(a);
    TT_CHECK_OK(tt_rt_storage_create(0, 200, &b));
    tt_rt_storage_release(b);
    tt_rt_shutdown();
    clear_env();
}


/* ---- events ---- */

static bool poll_event(tt_rt_event *e, double seconds) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (tt_rt_event_query(e)) return true;
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > seconds) return false;
    }
}

static void an_event_completes_only_once_the_stream_has_run_past_it(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2] = {0};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    tt_rt_event *e0 = NULL, *e1 = NULL;
    TT_CHECK_OK(tt_rt_event_create(false, &e0));
    TT_CHECK_OK(tt_rt_event_create(false, &e1));
    TT_CHECK(tt_rt_event_query(e1) && tt_rt_event_device(e1) == -1); /* never recorded: complete, as on CUDA */
    TT_CHECK_OK(tt_rt_event_synchronize(e1));
    TT_CHECK_OK(tt_rt_event_record(e0, 0));
    TT_CHECK_OK(tt_rt_event_synchronize(e0));
    TT_CHECK(tt_rt_event_query(e0) && tt_rt_event_device(e0) == 0);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_event_record(e1, 0));
    for (int i = 0; i < 100; i++) TT_CHECK(!tt_rt_event_query(e1)); /* the launch is held at the gate */
    TT_CHECK(!tt_rt_stream_query(0));
    TT_CHECK(tt_rt_stream_enqueued(0) > tt_rt_stream_completed(0));
    TT_CHECK(tt_rt_event_query(e0)); /* an earlier position stays complete */
    fk_gate(false);
    TT_CHECK_OK(tt_rt_event_synchronize(e1));
    TT_CHECK(tt_rt_event_query(e1));
    TT_CHECK(tt_rt_stream_query(0) && tt_rt_stream_enqueued(0) == tt_rt_stream_completed(0));
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    tt_rt_event_destroy(e0), tt_rt_event_destroy(e1);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

/* Small ops of a known cost may wait for a wake-up (see stream.c): a query must wake the worker, or a polling
 * loop would spin forever. The bound turns a hang into a failure. */
static void polling_query_alone_completes_small_queued_work(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2}, o[2] = {0};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    for (int i = 0; i < 4; i++) TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor")); /* timed now */
    TT_CHECK_OK(tt_rt_synchronize(0));
    tt_rt_event *e = NULL;
    TT_CHECK_OK(tt_rt_event_create(false, &e));
    for (int round = 0; round < 20; round++) {
        TT_CHECK_OK(launch_add(0, p, z, x, z, 2, "aten::add.Tensor"));
        TT_CHECK_OK(tt_rt_event_record(e, 0));
        TT_CHECK(poll_event(e, 30.0));
    }
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 22 && o[1] == 44);
    tt_rt_event_destroy(e);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void timing_events_measure_when_the_device_finished(void) {
    fake_start(1, TT_EAGER_STRICT);
    float a[2] = {1, 2};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    tt_rt_event *start = NULL, *end = NULL, *plain = NULL;
    TT_CHECK_OK(tt_rt_event_create(true, &start));
    TT_CHECK_OK(tt_rt_event_create(true, &end));
    TT_CHECK_OK(tt_rt_event_create(false, &plain));
    double ms = -1;
    TT_CHECK(tt_rt_event_elapsed_ms(start, end, &ms) == TT_STATUS_INVALID_ARGUMENT); /* not recorded */
    TT_CHECK(strstr(tt_last_error(), "recorded") != NULL);
    TT_CHECK_OK(tt_rt_event_record(start, 0));
    TT_CHECK_OK(tt_rt_event_synchronize(start)); /* stamped before the gate closes */
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_event_record(end, 0));
    TT_CHECK(tt_rt_event_elapsed_ms(start, end, &ms) == TT_STATUS_INVALID_ARGUMENT); /* end not complete */
    TT_CHECK(strstr(tt_last_error(), "not yet complete") != NULL);
    struct timespec hold = {0, 30 * 1000 * 1000};
    nanosleep(&hold, NULL); /* the device is held for 30 ms: end is stamped after that */
    fk_gate(false);
    TT_CHECK_OK(tt_rt_event_synchronize(end));
    TT_CHECK_OK(tt_rt_event_elapsed_ms(start, end, &ms));
    TT_CHECK(ms >= 30.0); /* a lower bound only: a slow machine can only make it larger */
    TT_CHECK_OK(tt_rt_event_record(plain, 0));
    TT_CHECK_OK(tt_rt_event_synchronize(plain));
    TT_CHECK(tt_rt_event_elapsed_ms(start, plain, &ms) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "enable_timing=True") != NULL);
    tt_rt_event_destroy(start), tt_rt_event_destroy(end), tt_rt_event_destroy(plain);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void an_event_sync_reports_a_queued_error_like_a_sync(void) {
    fake_start(1, TT_EAGER_STRICT);
    tt_rt_storage *x = new_vec(0, NULL, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_set(&fk.fail_at, 1);
    tt_rt_event *e = NULL;
    TT_CHECK_OK(tt_rt_event_create(true, &e));
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::mul.Tensor"));
    TT_CHECK_OK(tt_rt_event_record(e, 0));
    TT_CHECK(tt_rt_event_synchronize(e) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::mul.Tensor") && strstr(tt_last_error(), "fake failure number 1"));
    TT_CHECK(tt_rt_event_query(e)); /* the marker is reached even though the op before it failed */
    TT_CHECK_OK(tt_rt_synchronize(0)); /* taken by the event's sync */
    /* Polling: not done -> no error yet; done -> the queued error once, then clean. */
    fk_gate(true);
    fk_set(&fk.fail_at, 2);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::div.Tensor"));
    TT_CHECK_OK(tt_rt_event_record(e, 0));
    bool done = true;
    TT_CHECK_OK(tt_rt_event_poll(e, &done));
    TT_CHECK(!done);
    TT_CHECK_OK(tt_rt_stream_poll(0, &done));
    TT_CHECK(!done);
    fk_gate(false);
    tt_status st = TT_OK;
    for (int i = 0; i < 100000000 && (st = tt_rt_event_poll(e, &done)) == TT_OK && !done; i++) {
    }
    TT_CHECK(st == TT_STATUS_INVALID_ARGUMENT && done && strstr(tt_last_error(), "aten::div.Tensor"));
    TT_CHECK_OK(tt_rt_event_poll(e, &done));
    TT_CHECK_OK(tt_rt_stream_poll(0, &done));
    TT_CHECK(done);
    tt_rt_event_destroy(e);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void events_in_debug_mode_complete_at_once(void) {
    fake_start(1, TT_EAGER_DEBUG);
    tt_rt_storage *x = new_vec(0, NULL, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    tt_rt_event *a = NULL, *b = NULL;
    TT_CHECK_OK(tt_rt_event_create(true, &a));
    TT_CHECK_OK(tt_rt_event_create(true, &b));
    TT_CHECK_OK(tt_rt_event_record(a, 0));
    TT_CHECK(tt_rt_event_query(a));
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_event_record(b, 0));
    TT_CHECK(tt_rt_event_query(b));
    double ms = -1;
    TT_CHECK_OK(tt_rt_event_elapsed_ms(a, b, &ms));
    TT_CHECK(ms >= 0);
    TT_CHECK(tt_rt_event_record(a, 5) == TT_STATUS_INVALID_ARGUMENT); /* no tpu:5 */
    tt_rt_event_destroy(a), tt_rt_event_destroy(b);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void an_event_destroyed_while_its_marker_is_queued_stays_valid(void) {
    fake_start(2, TT_EAGER_STRICT);
    tt_rt_storage *x = new_vec(0, NULL, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p = add_program(2);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p, x, x, z, 2, "aten::add.Tensor"));
    tt_rt_event *e = NULL, *again = NULL;
    TT_CHECK_OK(tt_rt_event_create(true, &e));
    TT_CHECK_OK(tt_rt_event_record(e, 0));
    tt_rt_event_destroy(e); /* the marker holds its own reference (ASan checks the worker's use) */
    TT_CHECK_OK(tt_rt_event_create(false, &again));
    TT_CHECK_OK(tt_rt_event_record(again, 0));
    TT_CHECK_OK(tt_rt_event_record(again, 1)); /* re-recorded on another device: only the new position counts */
    TT_CHECK_OK(tt_rt_event_synchronize(again));
    TT_CHECK(tt_rt_event_query(again) && tt_rt_event_device(again) == 1);
    TT_CHECK(!tt_rt_stream_query(0));
    TT_CHECK_OK(tt_rt_event_block(again, 1)); /* same device: nothing to wait for */
    fk_gate(false);
    TT_CHECK_OK(tt_rt_synchronize(-1));
    tt_rt_event_destroy(again);
    tt_ir_program_destroy(p);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

/* ---- the bounded compile cache and its telemetry ---- */

typedef struct entry_list {
    int n;
    int64_t reads[8];
    char ops[8][64];
    size_t scratch;
} entry_list;
static void collect_entry(void *user, const tt_rt_cache_entry_stats *e) {
    entry_list *l = user;
    if (l->n < 8) {
        l->reads[l->n] = e->read_count;
        snprintf(l->ops[l->n], sizeof l->ops[0], "%s", e->first_op);
        TT_CHECK(e->compilation_duration >= 0 && e->last_read > 1.0e9); /* wall-clock seconds */
    }
    l->scratch += e->scratch_bytes;
    l->n++;
}

static void the_compile_cache_drops_the_least_recently_used_entry(void) {
    fake_start(1, TT_EAGER_DEBUG);
    TT_CHECK_OK(tt_rt_cache_set_capacity(2));
    tt_rt_cache_reset_stats();
    tt_rt_storage *x = new_vec(0, NULL, 8), *z = new_vec(0, NULL, 8);
    tt_ir_program *p1 = add_program(1), *p2 = add_program(2), *p3 = add_program(3);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 1, "op1"));
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 2, "op2"));
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 1, "op1")); /* hit: p1 is now the most recent */
    TT_CHECK_OK(launch_add(0, p3, x, x, z, 3, "op3")); /* evicts p2 */
    TT_CHECK(tt_rt_cache_size() == 2 && fk_get(&fk.live_exes) == 2);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 1, "op1")); /* still cached */
    TT_CHECK(fk_get(&fk.compiled) == 3);
    entry_list l = {0};
    tt_rt_cache_foreach(collect_entry, &l);
    TT_CHECK(l.n == 2 && !strcmp(l.ops[0], "op1") && l.reads[0] == 2 && !strcmp(l.ops[1], "op3") && l.reads[1] == 0);
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 2, "op2")); /* evicted: compiled again, evicting p3 */
    TT_CHECK(fk_get(&fk.compiled) == 4 && tt_rt_cache_size() == 2 && fk_get(&fk.live_exes) == 2);
    tt_rt_cache_stats cs;
    tt_rt_cache_stats_get(&cs);
    TT_CHECK(cs.requests == 6 && cs.hits == 2 && cs.compilations == 4 && cs.evictions == 2 && cs.entries == 2 &&
             cs.capacity == 2);
    TT_CHECK(cs.scratch_bytes == 0); /* the fake driver has no scratch query */
    TT_CHECK_OK(tt_rt_cache_set_capacity(1)); /* shrinking evicts at once */
    TT_CHECK(tt_rt_cache_size() == 1 && fk_get(&fk.live_exes) == 1);
    TT_CHECK(tt_rt_cache_set_capacity(-1) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK_OK(tt_rt_cache_set_capacity(0)); /* nothing cached: every launch compiles, nothing stays */
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 2, "op2"));
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 2, "op2"));
    TT_CHECK(fk_get(&fk.compiled) == 6 && tt_rt_cache_size() == 0 && fk_get(&fk.live_exes) == 0);
    tt_ir_program_destroy(p1), tt_ir_program_destroy(p2), tt_ir_program_destroy(p3);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void an_evicted_executable_lives_until_its_queued_launch_is_done(void) {
    fake_start(1, TT_EAGER_STRICT);
    TT_CHECK_OK(tt_rt_cache_set_capacity(1));
    float a[2] = {1, 2}, o[2] = {0};
    tt_rt_storage *x = new_vec(0, a, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p1 = add_program(2), *p2 = add_program(1);
    fk_gate(true);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(launch_add(0, p2, x, x, z, 1, "aten::add.Tensor")); /* evicts p1 while its launch is queued */
    TT_CHECK(tt_rt_cache_size() == 1 && fk_get(&fk.live_exes) == 2);
    fk_gate(false);
    TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
    TT_CHECK(o[0] == 2 && o[1] == 4);
    TT_CHECK(fk_get(&fk.live_exes) == 1);
    tt_ir_program_destroy(p1), tt_ir_program_destroy(p2);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void cache_only_mode_fails_a_miss_naming_the_op(void) {
    fake_start(1, TT_EAGER_DEBUG);
    tt_rt_storage *x = new_vec(0, NULL, 2), *z = new_vec(0, NULL, 2);
    tt_ir_program *p1 = add_program(2), *p2 = add_program(1);
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 2, "aten::add.Tensor"));
    tt_rt_cache_set_only(true);
    TT_CHECK(tt_rt_cache_get_only());
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 2, "aten::add.Tensor")); /* a hit is fine */
    TT_CHECK(launch_add(0, p2, x, x, z, 1, "aten::sub.Tensor") == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strstr(tt_last_error(), "aten::sub.Tensor") && strstr(tt_last_error(), "cache-only"));
    TT_CHECK(fk_get(&fk.compiled) == 1);
    tt_rt_cache_set_only(false);
    tt_rt_cache_set_allow(false); /* every launch compiles, nothing is cached */
    TT_CHECK(!tt_rt_cache_get_allow());
    int64_t before = tt_rt_cache_size();
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK_OK(launch_add(0, p1, x, x, z, 2, "aten::add.Tensor"));
    TT_CHECK(fk_get(&fk.compiled) == 3 && tt_rt_cache_size() == before);
    tt_rt_cache_set_allow(true);
    tt_ir_program_destroy(p1), tt_ir_program_destroy(p2);
    tt_rt_storage_release(x), tt_rt_storage_release(z);
    fake_stop();
}

static void cache_entries_come_from_the_environment(void) {
    clear_env();
    setenv("TORCHTPU_CACHE_ENTRIES", "3", 1);
    TT_CHECK_OK(tt_rt_init());
    tt_rt_cache_stats cs;
    tt_rt_cache_stats_get(&cs);
    TT_CHECK(cs.capacity == 3);
    tt_rt_shutdown();
    const char *bad[] = {"x", "-1", "3k", "99999999999999999999"};
    for (int i = 0; i < 4; i++) {
        setenv("TORCHTPU_CACHE_ENTRIES", bad[i], 1);
        TT_CHECK(tt_rt_init() == TT_STATUS_INVALID_ARGUMENT);
        TT_CHECK(strstr(tt_last_error(), "TORCHTPU_CACHE_ENTRIES") != NULL);
    }
    unsetenv("TORCHTPU_CACHE_ENTRIES");
    TT_CHECK_OK(tt_rt_init());
    tt_rt_cache_stats_get(&cs);
    TT_CHECK(cs.capacity == 4096);
    tt_rt_shutdown();
}

/* The host driver's executables keep scratch arenas: counted while cached, gone with the entry. A big program
 * runs in row blocks, whose chunk executables count their arenas in the whole program's. */
static void host_executables_scratch_is_counted_and_freed_with_the_entry(void) {
    clear_env();
    TT_CHECK_OK(tt_rt_init());
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_DEBUG));
    tt_rt_cache_clear();
    int64_t sizes[2] = {1000, 1 << 20};
    for (int k = 0; k < 2; k++) {
        int64_t n = sizes[k];
        tt_rt_storage *x = new_vec(0, NULL, n), *z = new_vec(0, NULL, n);
        tt_ir_program *p = add_program(n);
        TT_CHECK_OK(launch_add(0, p, x, x, z, n, "aten::add.Tensor"));
        tt_rt_cache_stats cs;
        tt_rt_cache_stats_get(&cs);
        TT_CHECK(cs.entries == 1 && cs.scratch_bytes > 0);
        entry_list l = {0};
        tt_rt_cache_foreach(collect_entry, &l);
        TT_CHECK(l.n == 1 && l.scratch == cs.scratch_bytes);
        tt_rt_cache_clear();
        tt_rt_cache_stats_get(&cs);
        TT_CHECK(cs.entries == 0 && cs.scratch_bytes == 0);
        tt_ir_program_destroy(p);
        tt_rt_storage_release(x), tt_rt_storage_release(z);
    }
    tt_rt_shutdown();
}

static void device_activity_records_what_ran_in_both_modes(void) {
    for (int m = 0; m < 2; m++) {
        fake_start(1, m == 0 ? TT_EAGER_DEBUG : TT_EAGER_STRICT);
        float a[4] = {1, 2, 3, 4}, o[4] = {0};
        tt_rt_storage *x = new_vec(0, a, 4), *z = new_vec(0, NULL, 4); /* not recording yet: no record */
        tt_ir_program *p = add_program(4);
        TT_CHECK_OK(tt_rt_synchronize(-1));
        tt_rt_activity_start();
        int64_t t0 = tt_rt_activity_clock_ns();
        TT_CHECK_OK(launch_add(0, p, x, x, z, 4, "aten::add.Tensor"));
        TT_CHECK_OK(tt_rt_write(x, 0, a, sizeof a));
        TT_CHECK_OK(launch_add(0, p, x, z, z, 4, "an op whose name is longer than the sixty-three bytes a record keeps"));
        TT_CHECK_OK(tt_rt_synchronize(-1));
        tt_rt_activity_stop();
        TT_CHECK_OK(launch_add(0, p, x, x, z, 4, "after stop")); /* not recorded */
        TT_CHECK_OK(tt_rt_read(z, 0, o, sizeof o));
        TT_CHECK(tt_rt_activity_take(NULL, 0) == 3);
        tt_rt_activity r[4];
        TT_CHECK(tt_rt_activity_take(r, 1) == 1); /* oldest first; the rest stay */
        TT_CHECK(strcmp(r[0].name, "aten::add.Tensor") == 0 && r[0].kind == TT_RT_ACTIVITY_KERNEL);
        TT_CHECK(tt_rt_activity_take(r + 1, 4) == 2);
        TT_CHECK(strcmp(r[1].name, "write to device") == 0 && r[1].kind == TT_RT_ACTIVITY_COPY);
        TT_CHECK(strlen(r[2].name) == sizeof r[2].name - 1 && strncmp(r[2].name, "an op whose", 11) == 0);
        for (int i = 0; i < 3; i++) {
            TT_CHECK(r[i].device == 0 && r[i].start_ns >= t0 && r[i].end_ns >= r[i].start_ns);
            if (i) TT_CHECK(r[i].start_ns >= r[i - 1].end_ns); /* one stream: in order, not overlapping */
        }
        TT_CHECK(tt_rt_activity_take(NULL, 0) == 0 && tt_rt_activity_dropped() == 0);
        TT_CHECK(o[0] == 2 && o[3] == 8);
        tt_ir_program_destroy(p);
        tt_rt_storage_release(x), tt_rt_storage_release(z);
        fake_stop();
    }
}

int main(void) {
    static const tt_test_case cases[] = {
        {"strict launch returns before the work is done", strict_launch_returns_before_the_work_is_done},
        {"debug launch runs at once and returns its error named", debug_launch_runs_at_once_and_returns_its_error_named},
        {"queued error is reported at the next sync naming the op, then cleared",
         queued_error_is_reported_at_the_next_sync_naming_the_op_then_cleared},
        {"strict writes and reads keep program order", strict_writes_and_reads_keep_program_order},
        {"storage is freed only after queued work that uses it", storage_is_freed_only_after_queued_work_that_uses_it},
        {"second identical launch hits the cache", second_identical_launch_hits_the_cache},
        {"a capture notes each executed program once", a_capture_notes_each_executed_program_once},
        {"cache clear keeps executables of queued launches alive", cache_clear_keeps_executables_of_queued_launches_alive},
        {"a full queue makes the producer wait", a_full_queue_makes_the_producer_wait},
        {"bad launch arguments are errors, not crashes", bad_launch_arguments_are_errors_not_crashes},
        {"memory stats count allocations and peaks", memory_stats_count_allocations_and_peaks},
        {"rng reserves advance the offset in fours", rng_reserves_advance_the_offset_in_fours},
        {"switching modes drains the queue and keeps its error", switching_modes_drains_the_queue_and_keeps_its_error},
        {"a thread override applies to its thread only", a_thread_override_applies_to_its_thread_only},
        {"a debug launch waits for work another thread queued", a_debug_launch_waits_for_work_another_thread_queued},
        {"many threads launch and allocate at once", many_threads_launch_and_allocate_at_once},
        {"released buffers are reused from the cache", released_buffers_are_reused_from_the_cache},
        {"an allocation over the limit empties the cache and retries",
         an_allocation_over_the_limit_empties_the_cache_and_retries},
        {"a reused buffer is only reused after queued work that uses it",
         a_reused_buffer_is_only_reused_after_queued_work_that_uses_it},
        {"memory cache bytes zero turns caching off", memory_cache_bytes_zero_turns_caching_off},
        {"launches with many tensors and long names queue and fail by name",
         launches_with_many_tensors_and_long_names_queue_and_fail_by_name},
        {"the ring wraps many times keeping writes and launches in order",
         the_ring_wraps_many_times_keeping_writes_and_launches_in_order},
        {"a sync runs small queued work itself and the worker the rest",
         a_sync_runs_small_queued_work_itself_and_the_worker_the_rest},
        {"small ops run by the next sync and concurrent syncs all return",
         small_ops_run_by_the_next_sync_and_concurrent_syncs_all_return},
        {"producers that sync while others launch never hang", producers_that_sync_while_others_launch_never_hang},
        {"many launches in both modes all run once and compile once",
         many_launches_in_both_modes_all_run_once_and_compile_once},
        {"bad environment values are errors with a message", bad_environment_values_are_errors_with_a_message},
        {"launch blocking selects debug over eager mode", launch_blocking_selects_debug_over_eager_mode},
        {"google's mode variables choose the start mode", googles_mode_variables_choose_the_start_mode},
        {"host add runs in debug and strict", host_add_runs_in_debug_and_strict},
        {"two host devices and a copy between them", two_host_devices_and_a_copy_between_them},
        {"rows are copied in order without a program", rows_are_copied_in_order_without_a_program},
        {"host memory limit gives out of memory with figures", host_memory_limit_gives_out_of_memory_with_figures},
        {"an event completes only once the stream has run past it",
         an_event_completes_only_once_the_stream_has_run_past_it},
        {"polling query alone completes small queued work", polling_query_alone_completes_small_queued_work},
        {"timing events measure when the device finished", timing_events_measure_when_the_device_finished},
        {"an event sync reports a queued error like a sync", an_event_sync_reports_a_queued_error_like_a_sync},
        {"events in debug mode complete at once", events_in_debug_mode_complete_at_once},
        {"an event destroyed while its marker is queued stays valid",
         an_event_destroyed_while_its_marker_is_queued_stays_valid},
        {"the compile cache drops the least recently used entry",
         the_compile_cache_drops_the_least_recently_used_entry},
        {"an evicted executable lives until its queued launch is done",
         an_evicted_executable_lives_until_its_queued_launch_is_done},
        {"cache only mode fails a miss naming the op", cache_only_mode_fails_a_miss_naming_the_op},
        {"cache entries come from the environment", cache_entries_come_from_the_environment},
        {"storages are found by address while they live", storages_are_found_by_address_while_they_live},
        {"host executables' scratch is counted and freed with the entry",
         host_executables_scratch_is_counted_and_freed_with_the_entry},
        {"device activity records what ran in both modes", device_activity_records_what_ran_in_both_modes},
        {NULL, NULL},
    };
    return tt_test_run(cases);
}
