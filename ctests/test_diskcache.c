/* test_diskcache.c — the persistent compile cache (csrc/runtime/diskcache.c) through the runtime, on a fake driver
 * that serializes its executables: entries written by one run are read by the next instead of compiled; a
 * damaged or truncated entry is counted, removed and rebuilt; the directory stays under its bound; processes
 * writing at once leave whole entries; disk trouble is counted, never fatal; the environment chooses the place.
 * Every case starts and shuts down its own runtime over a fresh directory. */
#include "tt_runtime.h"
#include "tt_test.h"

#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

struct tt_buffer {
    size_t n;
    unsigned char *bytes;
};
struct tt_executable {
    tt_ir_program *p;
    int64_t n; /* elements the add covers: what the "compiled code" holds, and what serialize writes */
};

static int fk_compiled, fk_loaded, fk_version = 1;

static int fk_device_count(void *ctx) { return (void)ctx, 1; }
static tt_status fk_alloc(void *ctx, int device, size_t nbytes, tt_buffer **out) {
    (void)ctx, (void)device;
    tt_buffer *b = calloc(1, sizeof *b);
    b->n = nbytes;
    b->bytes = calloc(1, nbytes ? nbytes : 1);
    *out = b;
    return TT_OK;
}
static void fk_free(void *ctx, tt_buffer *b) {
    (void)ctx;
    if (b) free(b->bytes), free(b);
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
static tt_executable *fk_new(tt_ir_program *p, int64_t n) {
    tt_executable *e = calloc(1, sizeof *e);
    tt_ir_program_retain(p);
    e->p = p;
    e->n = n;
    return e;
}
static tt_status fk_compile(void *ctx, tt_ir_program *p, tt_executable **out) {
    (void)ctx;
    fk_compiled++;
    *out = fk_new(p, p->types[p->outputs[0]].dims[0]);
    return TT_OK;
}
static void fk_exe_free(void *ctx, tt_executable *e) {
    (void)ctx;
    if (e) tt_ir_program_destroy(e->p), free(e);
}
static tt_status fk_execute(void *ctx, int device, tt_executable *e, const tt_exec_arg *args, int32_t n_args,
                            const tt_exec_arg *res, int32_t n_res) {
    (void)ctx, (void)device, (void)n_args, (void)n_res;
    const float *a = (const float *)(void *)args[0].buffer->bytes, *b = (const float *)(void *)args[1].buffer->bytes;
    float *o = (float *)(void *)res[0].buffer->bytes;
    for (int64_t i = 0; i < e->n; i++) o[i] = a[i] + b[i];
    return TT_OK;
}
static tt_status fk_serialize(void *ctx, const tt_executable *e, void **bytes, size_t *n) {
    (void)ctx;
    char *b = malloc(32);
    *n = (size_t)snprintf(b, 32, "fake add %lld", (long long)e->n);
    *bytes = b;
    return TT_OK;
}
static tt_status fk_deserialize(void *ctx, tt_ir_program *p, const void *bytes, size_t n, tt_executable **out) {
    (void)ctx;
    char buf[32] = {0};
    long long k = -1;
    if (n >= sizeof buf) return tt_error(TT_STATUS_INVALID_ARGUMENT, "fake: not an executable");
    memcpy(buf, bytes, n);
    if (sscanf(buf, "fake add %lld", &k) != 1 || k != p->types[p->outputs[0]].dims[0])
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "fake: not this program's executable");
    fk_loaded++;
    *out = fk_new(p, k);
    return TT_OK;
}
static void fk_destroy(void *ctx) { (void)ctx; }
static uint64_t fk_caps(void *ctx) { return (void)ctx, TT_DRIVER_CAP_STRIDED_VIEWS; }

static char dir[64];

static void clear_dir(void) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char path[384];
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
}
/* The entries (*.ttc) in dir: how many, their total bytes, and the path of one. */
static int entries(size_t *bytes, char *one, size_t one_size) {
    DIR *d = opendir(dir);
    int n = 0;
    if (bytes) *bytes = 0;
    if (!d) return 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 4 || strcmp(e->d_name + len - 4, ".ttc")) continue;
        char path[384];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && bytes) *bytes += (size_t)st.st_size;
        if (one) snprintf(one, one_size, "%s", path);
        n++;
    }
    closedir(d);
    return n;
}

static void start(void) {
    tt_driver *d = calloc(1, sizeof *d);
    d->iface = (tt_driver_i){.struct_size = sizeof(tt_driver_i), .name = "fake", .version = fk_version,
                             .device_count = fk_device_count, .buffer_alloc = fk_alloc, .buffer_free = fk_free,
                             .buffer_address = fk_address, .write = fk_write, .read = fk_read, .copy = fk_copy,
                             .compile = fk_compile, .executable_free = fk_exe_free, .execute = fk_execute,
                             .destroy = fk_destroy, .capabilities = fk_caps, .executable_serialize = fk_serialize,
                             .executable_deserialize = fk_deserialize};
    fk_compiled = fk_loaded = 0;
    TT_CHECK_OK(tt_rt_init_with_driver(d));
    TT_CHECK_OK(tt_rt_set_eager_mode(TT_EAGER_DEBUG));
    tt_rt_disk_reset_stats();
}

/* Runs out = x + y over n floats; returns out[n - 1] (2 * (n - 1)). */
static float run_add(int64_t n) {
    tt_ir_builder *b = tt_ir_builder_create();
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n), y = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_builder_add_output(b, tt_ir_binary(b, TT_OP_ADD, x, y));
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    float *v = calloc((size_t)n, sizeof *v), out = -1;
    for (int64_t i = 0; i < n; i++) v[i] = (float)i;
    tt_rt_storage *s = NULL, *o = NULL;
    TT_CHECK_OK(tt_rt_storage_create(0, (size_t)n * 4, &s));
    TT_CHECK_OK(tt_rt_storage_create(0, (size_t)n * 4, &o));
    TT_CHECK_OK(tt_rt_write(s, 0, v, (size_t)n * 4));
    tt_rt_arg args[2];
    memset(args, 0, sizeof args);
    tt_rt_tensor res;
    memset(&res, 0, sizeof res);
    res.storage = o, res.dtype = TT_F32, res.rank = 1, res.dims[0] = n, res.strides[0] = 1;
    for (int i = 0; i < 2; i++) args[i].kind = TT_RT_ARG_TENSOR, args[i].tensor = res, args[i].tensor.storage = s;
    TT_CHECK_OK(tt_rt_launch(0, p, args, 2, &res, 1, "aten::add.Tensor"));
    TT_CHECK_OK(tt_rt_read(o, (size_t)(n - 1) * 4, &out, 4));
    tt_rt_storage_release(s), tt_rt_storage_release(o);
    tt_ir_program_destroy(p);
    free(v);
    return out;
}

static tt_rt_disk_stats disk(void) {
    tt_rt_disk_stats s;
    tt_rt_disk_stats_get(&s);
    return s;
}

static void use_dir(void) {
    clear_dir();
    setenv("TORCHTPU_CACHE_DIR", dir, 1);
    unsetenv("TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT");
    unsetenv("TORCHTPU_CACHE_DISK_BYTES");
    fk_version = 1;
}

static void a_program_compiled_in_one_run_is_read_from_disk_in_the_next(void) {
    use_dir();
    start();
    TT_CHECK(run_add(16) == 30.0f);
    TT_CHECK(fk_compiled == 1 && disk().misses == 1 && disk().writes == 1 && entries(NULL, NULL, 0) == 1);
    TT_CHECK(!strcmp(disk().dir, dir));
    tt_rt_shutdown();
    start();
    TT_CHECK(run_add(16) == 30.0f);
    TT_CHECK(fk_compiled == 0 && fk_loaded == 1 && disk().hits == 1 && disk().writes == 0);
    TT_CHECK(run_add(16) == 30.0f); /* in memory now: the disk is not asked again */
    TT_CHECK(fk_loaded == 1 && disk().hits == 1);
    TT_CHECK(run_add(8) == 14.0f); /* another program: another entry */
    TT_CHECK(fk_compiled == 1 && entries(NULL, NULL, 0) == 2);
    tt_rt_shutdown();
    fk_version = 2; /* a new driver version does not read the old entries */
    start();
    TT_CHECK(run_add(16) == 30.0f);
    TT_CHECK(fk_compiled == 1 && fk_loaded == 0 && disk().hits == 0 && entries(NULL, NULL, 0) == 3);
    tt_rt_shutdown();
}

/* Damages the one entry: flips a payload byte (keep = true) or cuts the file short. */
static void damage(bool truncate_it) {
    char path[256] = "";
    TT_CHECK(entries(NULL, path, sizeof path) == 1);
    FILE *f = fopen(path, "r+b");
    TT_CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (truncate_it) {
        TT_CHECK(ftruncate(fileno(f), size - 3) == 0);
    } else {
        fseek(f, size - 1, SEEK_SET);
        int c = fgetc(f);
        fseek(f, size - 1, SEEK_SET);
        fputc(c ^ 0x40, f);
    }
    fclose(f);
}

static void a_damaged_or_truncated_entry_is_counted_removed_and_rebuilt(void) {
    for (int trunc = 0; trunc < 2; trunc++) {
        use_dir();
        start();
        run_add(16);
        tt_rt_shutdown();
        damage(trunc);
        start();
        TT_CHECK(run_add(16) == 30.0f);
        TT_CHECK(fk_compiled == 1 && fk_loaded == 0 && disk().corrupt == 1 && disk().writes == 1);
        tt_rt_shutdown();
        start(); /* the rebuilt entry is whole */
        TT_CHECK(run_add(16) == 30.0f && fk_loaded == 1 && disk().corrupt == 0);
        tt_rt_shutdown();
    }
}

static void the_directory_stays_under_its_bound_least_recently_read_out_first(void) {
    use_dir();
    start();
    run_add(4);
    size_t one = 0;
    entries(&one, NULL, 0);
    tt_rt_shutdown();
    char bound[32];
    snprintf(bound, sizeof bound, "%zu", 3 * one + one / 2); /* room for three entries */
    setenv("TORCHTPU_CACHE_DISK_BYTES", bound, 1);
    start();
    for (int64_t n = 5; n <= 10; n++) run_add(n); /* same size class: n < 10 keeps the StableHLO lengths close */
    size_t total = 0;
    int kept = entries(&total, NULL, 0);
    TT_CHECK(total <= (size_t)atoll(bound) && kept >= 1 && kept <= 3 && disk().evictions >= 3);
    tt_rt_shutdown();
    start(); /* the newest survived */
    TT_CHECK(run_add(10) == 18.0f && fk_loaded == 1);
    tt_rt_shutdown();
    unsetenv("TORCHTPU_CACHE_DISK_BYTES");
}

static void processes_writing_at_once_leave_whole_entries(void) {
    use_dir();
    enum { KIDS = 4, PROGRAMS = 8 };
    pid_t kids[KIDS];
    for (int k = 0; k < KIDS; k++) {
        kids[k] = fork();
        if (kids[k] == 0) {
            start();
            bool ok = true;
            for (int64_t n = 1; n <= PROGRAMS; n++) ok = ok && run_add(n) == 2.0f * (float)(n - 1);
            tt_rt_shutdown();
            _exit(ok && !tt_test_case_failed ? 0 : 1);
        }
    }
    for (int k = 0; k < KIDS; k++) {
        int status = 0;
        TT_CHECK(waitpid(kids[k], &status, 0) == kids[k] && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    TT_CHECK(entries(NULL, NULL, 0) == PROGRAMS);
    start();
    for (int64_t n = 1; n <= PROGRAMS; n++) run_add(n);
    TT_CHECK(fk_compiled == 0 && fk_loaded == PROGRAMS && disk().corrupt == 0);
    tt_rt_shutdown();
}

static void disk_trouble_is_counted_and_the_program_still_runs(void) {
    use_dir();
    setenv("TORCHTPU_CACHE_DIR", "/proc/torchtpu-cannot-be-here", 1);
    start();
    TT_CHECK(run_add(16) == 30.0f);
    TT_CHECK(fk_compiled == 1 && disk().errors >= 1 && disk().writes == 0);
    tt_rt_shutdown();
}

static void the_environment_chooses_the_directory_or_turns_it_off(void) {
    use_dir();
    unsetenv("TORCHTPU_CACHE_DIR");
    setenv("TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT", dir, 1); /* Google's name */
    start();
    TT_CHECK(!strcmp(disk().dir, dir));
    tt_rt_shutdown();
    setenv("TORCHTPU_CACHE_DIR", "off", 1);
    start();
    TT_CHECK(run_add(16) == 30.0f);
    TT_CHECK(disk().dir[0] == 0 && disk().misses == 0 && entries(NULL, NULL, 0) == 0);
    tt_rt_shutdown();
    use_dir();
    setenv("TORCHTPU_CACHE_DISK_BYTES", "lots", 1);
    TT_CHECK(tt_rt_init_with_driver(tt_host_driver_create(1, 0)) == TT_STATUS_INVALID_ARGUMENT); /* takes the driver */
    TT_CHECK(strstr(tt_last_error(), "TORCHTPU_CACHE_DISK_BYTES") != NULL);
    unsetenv("TORCHTPU_CACHE_DISK_BYTES");
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/torchtpu-diskcache-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    static const tt_test_case cases[] = {
        {"a program compiled in one run is read from disk in the next",
         a_program_compiled_in_one_run_is_read_from_disk_in_the_next},
        {"a damaged or truncated entry is counted, removed and rebuilt",
         a_damaged_or_truncated_entry_is_counted_removed_and_rebuilt},
        {"the directory stays under its bound, least recently read out first",
         the_directory_stays_under_its_bound_least_recently_read_out_first},
        {"processes writing at once leave whole entries", processes_writing_at_once_leave_whole_entries},
        {"disk trouble is counted and the program still runs", disk_trouble_is_counted_and_the_program_still_runs},
        {"the environment chooses the directory or turns it off",
         the_environment_chooses_the_directory_or_turns_it_off},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    clear_dir();
    rmdir(dir);
    return rc;
}
