/* runtime.c — start-up from the environment, shutdown, the eager-mode switch and process-wide metrics.
 *
 * Start-up is guarded by a mutex plus an atomic "ready" flag rather than pthread_once, so that a failed start
 * (a bad environment variable) can be retried after fixing it, and tests can shut down and start again. */
#include "rt_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

tt_rt_state tt_rt_g;

static pthread_mutex_t tt_rt_init_mu = PTHREAD_MUTEX_INITIALIZER;

/* A whole-string unsigned decimal integer; false on garbage, a sign, or overflow. */
static bool parse_u64(const char *s, unsigned long long *out) {
    if (!s || !*s || *s < '0' || *s > '9') return false;
    errno = 0;
    char *end = NULL;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || !end || *end) return false;
    *out = v;
    return true;
}

static const char *env_nonempty(const char *name) {
    const char *v = getenv(name);
    return (v && *v) ? v : NULL;
}

static bool env_is_one(const char *name) {
    const char *v = env_nonempty(name);
    return v && !strcmp(v, "1");
}

/* The start-up mode from the environment; the precedence is documented in tt_runtime.h. */
static tt_status read_mode(tt_rt_eager_mode *mode) {
    *mode = TT_EAGER_FUSED;
    const char *m = env_nonempty("TORCHTPU_EAGER_MODE");
    int named = -1;
    for (int i = 0; m && i < TT_EAGER_MODE_COUNT; i++)
        if (!strcmp(m, tt_rt_eager_mode_name((tt_rt_eager_mode)i))) named = i;
    if (m && named < 0)
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "TORCHTPU_EAGER_MODE='%s' is not a mode (expected 'debug', 'strict' or 'fused')", m);
    /* Google TorchTPU's variables first, then ours. */
    const char *defer = env_nonempty("TORCH_TPU_DEFER_AND_FUSE");
    if (env_is_one("TORCH_TPU_LAUNCH_BLOCKING") || env_is_one("TPU_LAUNCH_BLOCKING")) *mode = TT_EAGER_DEBUG;
    else if (defer && !strcmp(defer, "1")) *mode = TT_EAGER_FUSED;
    else if (named >= 0) *mode = (tt_rt_eager_mode)named;
    else if (defer && !strcmp(defer, "0")) *mode = TT_EAGER_STRICT; /* Google's switch, turned off explicitly */
    /* TORCH_TPU_ENABLE_DEBUG_CHECKS needs nothing: index and bounds checks always run. */
    return TT_OK;
}

/* TORCHTPU_MEMORY_CACHE_BYTES: the most bytes a device's allocator cache holds (0 = no caching). */
static tt_status read_cache_max(void) {
    unsigned long long v = 1ull << 30;
    const char *s = env_nonempty("TORCHTPU_MEMORY_CACHE_BYTES");
    if (s && (!parse_u64(s, &v) || v > SIZE_MAX))
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "TORCHTPU_MEMORY_CACHE_BYTES='%s' must be a number of bytes per device (0 = no caching)", s);
    tt_rt_g.cache_max = (size_t)v;
    return TT_OK;
}

/* TORCHTPU_FUSION_MAX_OPS (ops after which the next call starts a new window) and TORCHTPU_LOG (comma-separated
 * topics: "fusion" prints every cut, "compile" the cuts that end compiled graphs). */
static tt_status read_fusion_config(void) {
    /* 64: big enough to fuse an op's neighbourhood, small enough that the device runs a window while the host
     * records the next (a MiniLM forward in one window serializes them: measured 20% slower) */
    unsigned long long v = 64;
    const char *s = env_nonempty("TORCHTPU_FUSION_MAX_OPS");
    if (s && (!parse_u64(s, &v) || v < 1 || v > (1u << 24)))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "TORCHTPU_FUSION_MAX_OPS='%s' must be a number of ops (>= 1)", s);
    tt_rt_g.window_max_ops = (int32_t)v;
    const char *log = env_nonempty("TORCHTPU_LOG");
    tt_rt_g.log_fusion = log && strstr(log, "fusion") != NULL;
    tt_rt_g.log_compile = log && strstr(log, "compile") != NULL;
    const char *lines = env_nonempty("TORCHTPU_OP_LINES");
    tt_rt_g.op_lines = !lines || strcmp(lines, "0") != 0;
    return TT_OK;
}

/* Counters, streams and state for a driver that is already in tt_rt_g.driver. Caller holds tt_rt_init_mu. */
static tt_status start_locked(tt_rt_eager_mode mode) {
    tt_rt_state *g = &tt_rt_g;
    int n = g->driver->iface.device_count ? g->driver->iface.device_count(g->driver->ctx) : 0;
    if (n < 1 || n > TT_RT_MAX_DEVICES) {
        tt_driver_destroy(g->driver);
        g->driver = NULL;
        return tt_error(TT_STATUS_INTERNAL, "driver reports %d devices (supported: 1..%d)", n, TT_RT_MAX_DEVICES);
    }
    g->n_devices = n;
    for (int d = 0; d < n; d++) {
        tt_status st = tt_rt_stream_init(&g->streams[d], d);
        if (st != TT_OK) {
            for (int e = 0; e < d; e++) tt_rt_stream_fini(&g->streams[e]);
            tt_driver_destroy(g->driver);
            g->driver = NULL;
            g->n_devices = 0;
            return st;
        }
    }
    tt_status mst = tt_rt_memory_init(n);
    for (int d = 0; mst == TT_OK && d < n; d++) {
        if ((mst = tt_rt_window_init(&g->windows[d])) != TT_OK)
            for (int e = 0; e < d; e++) tt_rt_window_fini(&g->windows[e]);
    }
    if (mst != TT_OK) tt_rt_memory_fini();
    if (mst != TT_OK) {
        for (int e = 0; e < n; e++) tt_rt_stream_fini(&g->streams[e]);
        tt_driver_destroy(g->driver);
        g->driver = NULL;
        g->n_devices = 0;
        return mst;
    }
    const tt_driver_i *di = &g->driver->iface;
    g->driver_strided = TT_RT_HAS_MEMBER(di, capabilities) &&
                        (di->capabilities(g->driver->ctx) & TT_DRIVER_CAP_STRIDED_VIEWS);
    if (TT_RT_HAS_MEMBER(di, max_executables)) tt_rt_cache_limit(di->max_executables(g->driver->ctx));
    atomic_store(&g->mode, (int)mode);
    tt_rt_rng_reset();
    tt_rt_metrics_reset();
    atomic_store_explicit(&g->ready, true, memory_order_release);
    return TT_OK;
}

tt_status tt_rt_init(void) {
    if (atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) return TT_OK;
    pthread_mutex_lock(&tt_rt_init_mu);
    tt_status st = TT_OK;
    if (atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) goto out;

    unsigned long long n_devices = 1, limit = 0;
    const char *v = env_nonempty("TORCHTPU_HOST_DEVICES");
    if (v && (!parse_u64(v, &n_devices) || n_devices < 1 || n_devices > TT_RT_MAX_DEVICES)) {
        st = tt_error(TT_STATUS_INVALID_ARGUMENT, "TORCHTPU_HOST_DEVICES='%s' must be an integer in 1..%d", v,
                      TT_RT_MAX_DEVICES);
        goto out;
    }
    v = env_nonempty("TORCHTPU_HOST_MEMORY_LIMIT");
    if (v && (!parse_u64(v, &limit) || limit > SIZE_MAX)) {
        st = tt_error(TT_STATUS_INVALID_ARGUMENT,
                      "TORCHTPU_HOST_MEMORY_LIMIT='%s' must be a number of bytes per device (0 = unlimited)", v);
        goto out;
    }
    tt_rt_eager_mode mode;
    if ((st = read_mode(&mode)) != TT_OK) goto out;
    if ((st = read_cache_max()) != TT_OK) goto out;
    if ((st = read_fusion_config()) != TT_OK) goto out;
    if ((st = tt_rt_cache_configure()) != TT_OK) goto out;
    /* TORCHTPU_DRIVER: host (the default) or pjrt (the plugin TORCHTPU_PJRT_PLUGIN names; the Python package sets
     * the installed CPU plugin's path when it is unset). */
    v = env_nonempty("TORCHTPU_DRIVER");
    if (v && strcmp(v, "host") != 0 && strcmp(v, "pjrt") != 0) {
        st = tt_error(TT_STATUS_INVALID_ARGUMENT, "TORCHTPU_DRIVER='%s' is not a driver (available: 'host', 'pjrt')", v);
        goto out;
    }
    if (v && !strcmp(v, "pjrt")) {
        if ((st = tt_pjrt_driver_create(env_nonempty("TORCHTPU_PJRT_PLUGIN"), (int)n_devices, (size_t)limit,
                                        &tt_rt_g.driver)) != TT_OK)
            goto out;
    } else if (!(tt_rt_g.driver = tt_host_driver_create((int)n_devices, (size_t)limit))) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "could not create the host driver (%llu devices)", n_devices);
        goto out;
    }
    tt_rt_g.memory_limit = (size_t)limit;
    st = start_locked(mode);
out:
    pthread_mutex_unlock(&tt_rt_init_mu);
    return st;
}

tt_status tt_rt_init_with_driver(tt_driver *driver) {
    if (!driver) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_init_with_driver: driver is NULL");
    pthread_mutex_lock(&tt_rt_init_mu);
    tt_status st;
    tt_rt_eager_mode mode;
    if (atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) {
        tt_driver_destroy(driver);
        st = tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_rt_init_with_driver: the runtime is already running");
    } else if ((st = read_mode(&mode)) != TT_OK || (st = read_cache_max()) != TT_OK ||
               (st = tt_rt_cache_configure()) != TT_OK) {
        tt_driver_destroy(driver);
    } else {
        tt_rt_g.driver = driver;
        tt_rt_g.memory_limit = 0;
        st = start_locked(mode);
    }
    pthread_mutex_unlock(&tt_rt_init_mu);
    return st;
}

void tt_rt_shutdown(void) {
    pthread_mutex_lock(&tt_rt_init_mu);
    tt_rt_state *g = &tt_rt_g;
    if (atomic_load_explicit(&g->ready, memory_order_acquire)) {
        /* Windows are cut (their work queued), then workers drain their queues before exiting, so queued
         * storages are released before the driver goes. */
        (void)tt_rt_window_cut(-1, TT_RT_CUT_FLUSH);
        for (int d = 0; d < g->n_devices; d++) tt_rt_window_fini(&g->windows[d]);
        tt_rt_wtrace_clear(); /* traces assume this driver's view of storages */
        for (int d = 0; d < g->n_devices; d++) tt_rt_stream_fini(&g->streams[d]);
        tt_rt_cache_fini();
        atomic_store_explicit(&g->ready, false, memory_order_release);
        atomic_fetch_add(&g->generation, 1);
        tt_rt_memory_fini(); /* cached buffers go back to the driver before it goes */
        tt_driver_destroy(g->driver);
        g->driver = NULL;
        g->n_devices = 0;
    }
    pthread_mutex_unlock(&tt_rt_init_mu);
}

int tt_rt_device_count(void) { return tt_rt_ensure() == TT_OK ? tt_rt_g.n_devices : 0; }

const char *tt_rt_driver_name(void) {
    if (tt_rt_ensure() != TT_OK || !tt_rt_g.driver) return "";
    return tt_rt_g.driver->iface.name ? tt_rt_g.driver->iface.name : "";
}

const char *tt_rt_driver_identity(void) {
    if (tt_rt_ensure() != TT_OK || !tt_rt_g.driver) return "";
    const tt_driver_i *di = &tt_rt_g.driver->iface;
    const char *id = TT_RT_HAS_MEMBER(di, identity) ? di->identity(tt_rt_g.driver->ctx) : NULL;
    return id ? id : tt_rt_driver_name();
}

/* ---- eager mode ---- */

const char *tt_rt_eager_mode_name(tt_rt_eager_mode mode) {
    switch (mode) {
    case TT_EAGER_DEBUG: return "debug";
    case TT_EAGER_STRICT: return "strict";
    case TT_EAGER_FUSED: return "fused";
    default: return "?";
    }
}

_Thread_local int tt_rt_thread_mode = TT_EAGER_PROCESS;

static tt_status check_mode(int mode) {
    if (mode != TT_EAGER_DEBUG && mode != TT_EAGER_STRICT && mode != TT_EAGER_FUSED)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "eager mode %d does not exist", mode);
    return TT_OK;
}

tt_rt_eager_mode tt_rt_get_eager_mode(void) {
    if (tt_rt_ensure() != TT_OK) return TT_EAGER_STRICT;
    return (tt_rt_eager_mode)tt_rt_mode_now();
}

tt_rt_eager_mode tt_rt_get_process_eager_mode(void) {
    if (tt_rt_ensure() != TT_OK) return TT_EAGER_STRICT;
    return (tt_rt_eager_mode)atomic_load_explicit(&tt_rt_g.mode, memory_order_relaxed);
}

int tt_rt_get_thread_eager_mode(void) { return tt_rt_thread_mode; }

/* Drains every stream before switching: not needed for ordering (a DEBUG launch waits for its device's queue
 * itself) but it keeps the documented promise that a switch leaves no work in flight. Errors of queued launches
 * are not taken here: they stay recorded and the next sync point reports them. */
tt_status tt_rt_set_eager_mode(tt_rt_eager_mode mode) {
    tt_status st = tt_rt_ensure();
    if (st != TT_OK) return st;
    if ((st = check_mode((int)mode)) != TT_OK) return st;
    st = tt_rt_window_cut(-1, TT_RT_CUT_OTHER_MODE);
    for (int d = 0; d < tt_rt_g.n_devices; d++) tt_rt_stream_wait_idle(&tt_rt_g.streams[d]);
    if (st != TT_OK) return st;
    atomic_store(&tt_rt_g.mode, (int)mode);
    return TT_OK;
}

tt_status tt_rt_set_thread_eager_mode(int mode) {
    if (mode != TT_EAGER_PROCESS) {
        tt_status st = check_mode(mode);
        if (st != TT_OK) return st;
    }
    /* this thread's deferred ops run before its ops in the new mode (another thread's window is cut by the
     * first launch that is not deferred) */
    tt_status st = TT_OK;
    int next = mode != TT_EAGER_PROCESS ? mode : atomic_load_explicit(&tt_rt_g.mode, memory_order_relaxed);
    if (next != TT_EAGER_FUSED && tt_rt_mode_now() == TT_EAGER_FUSED && atomic_load(&tt_rt_g.ready))
        st = tt_rt_window_cut(-1, TT_RT_CUT_OTHER_MODE);
    tt_rt_thread_mode = mode;
    return st;
}

/* ---- metrics ---- */

void tt_rt_metrics_get(tt_rt_metrics *out) {
    if (!out) return;
    tt_rt_state *g = &tt_rt_g;
    memset(out, 0, sizeof *out);
    for (int m = 0; m < TT_EAGER_MODE_COUNT; m++) out->ops[m] = atomic_load(&g->ops[m]);
    out->compiles = atomic_load(&g->compiles);
    out->cache_hits = atomic_load(&g->cache_hits);
    out->bytes_to_device = atomic_load(&g->bytes_to_device);
    out->bytes_to_host = atomic_load(&g->bytes_to_host);
    out->syncs = atomic_load(&g->syncs);
    out->compile_seconds = (double)atomic_load(&g->compile_ns) * 1e-9;
    for (int r = 0; r < TT_RT_CUT_COUNT; r++) out->cuts[r] = atomic_load(&g->cuts[r]);
    out->windows = atomic_load(&g->windows_run);
    out->window_ops = atomic_load(&g->windows_ops);
    out->pending_dropped = atomic_load(&g->pending_dropped);
    out->window_replays = atomic_load(&g->window_replays);
    out->window_traces = tt_rt_wtrace_count();
    out->bucket_windows = atomic_load(&g->bucket_windows);
    out->bucket_refused = atomic_load(&g->bucket_refused);
    size_t peak = 0;
    for (int d = 0; d < g->n_devices; d++) {
        size_t p = atomic_load(&g->mem[d].peak);
        if (p > peak) peak = p;
    }
    out->peak_bytes = (int64_t)peak;
}

/* Zeroes the counters; peaks restart from the bytes allocated now. */
void tt_rt_metrics_reset(void) {
    tt_rt_state *g = &tt_rt_g;
    for (int m = 0; m < TT_EAGER_MODE_COUNT; m++) atomic_store(&g->ops[m], 0);
    atomic_store(&g->compiles, 0);
    atomic_store(&g->cache_hits, 0);
    atomic_store(&g->bytes_to_device, 0);
    atomic_store(&g->bytes_to_host, 0);
    atomic_store(&g->syncs, 0);
    atomic_store(&g->compile_ns, 0);
    for (int r = 0; r < TT_RT_CUT_COUNT; r++) atomic_store(&g->cuts[r], 0);
    atomic_store(&g->windows_run, 0);
    atomic_store(&g->windows_ops, 0);
    atomic_store(&g->pending_dropped, 0);
    atomic_store(&g->window_replays, 0);
    atomic_store(&g->bucket_windows, 0);
    atomic_store(&g->bucket_refused, 0);
    for (int d = 0; d < g->n_devices; d++) tt_rt_memory_reset_peak(d);
}
