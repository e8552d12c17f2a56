/* tt_runtime.h — storages, devices and their streams, the eager modes, the compile cache, RNG state, metrics.
 *
 * The runtime sits between the shim and a driver. It owns:
 *   - storages: reference-counted device buffers (the shim's DataPtr context is a tt_rt_storage *);
 *   - one stream per device: in DEBUG mode a launch runs at once on the calling thread and returns its error;
 *     in STRICT mode it is queued for the device's worker thread and the caller returns at once; an error in a
 *     queued launch is kept and returned (naming the op) by the next sync on that device;
 *   - the compile cache: program structure -> executable, shared by every mode and front door;
 *   - per-device RNG state (seed, offset) for counter-based random ops;
 *   - metrics.
 *
 *   tt_rt_init();                                          // idempotent; reads TORCHTPU_* environment vars
 *   tt_rt_storage *s = NULL;
 *   tt_rt_storage_create(0, 16, &s);                       // 4 floats on tpu:0
 *   tt_rt_write(s, 0, host, 16);                           // queued in strict mode (host data copied)
 *   tt_rt_arg in = {.kind = TT_RT_ARG_TENSOR, .tensor = {s, 0, ...}};
 *   tt_rt_launch(0, program, &in, 1, &out_view, 1, "aten::neg");
 *   tt_rt_read(s, 0, host, 16);                            // a sync point: waits, reports queued errors
 *   tt_rt_storage_release(s);
 */
#ifndef TT_RUNTIME_H
#define TT_RUNTIME_H

#include "tt_core.h"
#include "tt_driver.h"
#include "tt_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tt_rt_eager_mode { TT_EAGER_DEBUG = 0, TT_EAGER_STRICT = 1, TT_EAGER_FUSED = 2, TT_EAGER_MODE_COUNT } tt_rt_eager_mode;

/* Starts the runtime once per process (later calls return TT_OK). Reads:
 *   TORCHTPU_HOST_DEVICES (default 1), TORCHTPU_HOST_MEMORY_LIMIT (bytes per device, default unlimited),
 *   and the eager-mode variables (see "eager mode" below). */
tt_status tt_rt_init(void);
/* Starts the runtime on a driver made by the caller (ownership passes to the runtime, also on failure) instead
 * of the one TORCHTPU_DRIVER names: for tests (fake drivers) and drivers created outside the core. The device
 * count is the driver's; the eager-mode variables still apply. TT_STATUS_INVALID_ARGUMENT if
 * the runtime is already running. */
tt_status tt_rt_init_with_driver(tt_driver *driver);
int tt_rt_device_count(void);
const char *tt_rt_driver_name(void);     /* "host", "pjrt" */
const char *tt_rt_driver_identity(void); /* the driver's identity ("pjrt xla_cpu_pjrt.so cpu ..."), else its name */

/* ---- storages ---- */
typedef struct tt_rt_storage tt_rt_storage;
/* Allocates nbytes on device (refcount 1). Over the memory limit: TT_STATUS_OUT_OF_MEMORY with the figures. */
tt_status tt_rt_storage_create(int device, size_t nbytes, tt_rt_storage **out);
/* A storage for an op's result: in FUSED mode (of the calling thread) it is pending, with no memory until
 * something needs its bytes (a read, a host write, a launch that runs now, a cut that finds it still referenced);
 * memory statistics count it from then. In the other modes the same as tt_rt_storage_create. */
tt_status tt_rt_storage_create_pending(int device, size_t nbytes, tt_rt_storage **out);
void tt_rt_storage_retain(tt_rt_storage *s);
void tt_rt_storage_release(tt_rt_storage *s); /* frees at zero (after queued work that uses it); accepts NULL */
void *tt_rt_storage_address(const tt_rt_storage *s); /* the driver's buffer address (for DataPtr); never dereference */
/* The live storage whose tt_rt_storage_address is address (until its last reference goes), or NULL. No reference
 * is taken: the caller holds one some other way (a DataPtr). */
tt_rt_storage *tt_rt_storage_find(const void *address);
size_t tt_rt_storage_nbytes(const tt_rt_storage *s);
int tt_rt_storage_device(const tt_rt_storage *s);

/* A strided view of a storage (offset and strides in elements). */
typedef struct tt_rt_tensor {
    tt_rt_storage *storage; /* borrowed */
    int64_t offset;
    tt_dtype dtype;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    int64_t strides[TT_MAX_RANK];
} tt_rt_tensor;

typedef enum tt_rt_arg_kind { TT_RT_ARG_TENSOR = 0, TT_RT_ARG_SCALAR } tt_rt_arg_kind;
/* A SCALAR drawn from a random generator (tt_lower_rng): a replayed graph (tt_rt_graph_replay) draws it anew. */
typedef enum tt_rt_rng_role { TT_RT_RNG_NONE = 0, TT_RT_RNG_SEED, TT_RT_RNG_OFFSET } tt_rt_rng_role;
typedef struct tt_rt_arg {
    tt_rt_arg_kind kind;
    tt_rt_tensor tensor; /* TENSOR */
    int64_t i;           /* SCALAR of an integer or bool dtype */
    double f;            /* SCALAR of a float dtype */
    tt_rt_rng_role rng;  /* SCALAR: NONE, or the seed / first counter of a draw of rng_count counters */
    uint64_t rng_count;
} tt_rt_arg;

/* ---- execution ---- */
/* Runs program on device: args[i] feeds parameter i; results[j] receives output j (strided views; they may alias
 * args). Takes the executable from the cache or compiles it. DEBUG: runs now, returns its status. STRICT:
 * retains the storages (the cache entry keeps the program's structure), queues, returns TT_OK; a failure is
 * reported at the next sync naming op_name. program and op_name are borrowed for the call only. */
tt_status tt_rt_launch(int device, tt_ir_program *program, const tt_rt_arg *args, int32_t n_args,
                       const tt_rt_tensor *results, int32_t n_results, const char *op_name);
/* Waits for everything queued on device (-1: all devices). Returns the first error of a queued launch since the
 * last sync (and clears it); the message names the op. */
tt_status tt_rt_synchronize(int device);
/* Host <-> device bytes. read is a sync point. write queues behind earlier work (host data is copied first). */
tt_status tt_rt_read(tt_rt_storage *src, size_t offset, void *dst, size_t nbytes);
tt_status tt_rt_write(tt_rt_storage *dst, size_t offset, const void *src, size_t nbytes);
/* Device -> device bytes (any two devices); ordered after queued work on both. */
tt_status tt_rt_copy(tt_rt_storage *dst, size_t dst_offset, tt_rt_storage *src, size_t src_offset, size_t nbytes);
/* Rows of bytes within one device: row r (r < rows) of row_bytes from src_offset + r * src_stride to dst_offset +
 * r * dst_stride. Queued behind earlier work like a launch (no program: the same call for any sizes, so padding a
 * tensor to a bucket compiles nothing); DEBUG runs it now. Windows holding either storage are cut first. */
tt_status tt_rt_copy_rows(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                          size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows);

/* ---- bounded dynamic sizes in fused eager mode (bucket_launch.c) ----
 * Dim `dim` of the contiguous tensor of dims `dims` that fills storage s is a size that varies, padded to bucket
 * (>= the size, which must be >= 2): a fused window that reads s whole runs as its bucket's program (one compile
 * for every size of the bucket) with the real size a runtime argument, and results that carry the size are marked
 * the same way. bucket 0 removes the mark. */
tt_status tt_rt_mark_dynamic(tt_rt_storage *s, int32_t rank, const int64_t *dims, int32_t dim, int64_t bucket);
/* s's bucket (0: not marked); *size (may be NULL) its real size. */
int64_t tt_rt_storage_bucket(const tt_rt_storage *s, int64_t *size);

/* ---- events and stream positions ----
 * Each device has one in-order stream. Its position is a sequence number: the items (launches, writes, event
 * markers) enqueued on the device so far; an item is complete once the stream's completed count passes it.
 * An event records a position: record enqueues a marker behind everything queued on the device so far, and the
 * event is complete once the stream has run past it. A timing event also holds the time the worker reached its
 * marker (all earlier work done): elapsed times are device-side completion times. In DEBUG mode work has
 * already run when record is called, so a record completes at once.
 *
 *   tt_rt_event *a, *b;  tt_rt_event_create(true, &a);  tt_rt_event_create(true, &b);
 *   tt_rt_event_record(a, 0);  ...launches...  tt_rt_event_record(b, 0);
 *   tt_rt_event_synchronize(b);                 // waits for b's position; returns a queued error like a sync
 *   double ms;  tt_rt_event_elapsed_ms(a, b, &ms);
 *   tt_rt_event_destroy(a);  tt_rt_event_destroy(b);   // a marker still queued keeps its own reference */
typedef struct tt_rt_event tt_rt_event;
tt_status tt_rt_event_create(bool timing, tt_rt_event **out);
void tt_rt_event_destroy(tt_rt_event *e); /* accepts NULL */
/* Records the position of device's stream (re-recording moves the event, possibly to another device). */
tt_status tt_rt_event_record(tt_rt_event *e, int device);
/* True if never recorded or complete. Never blocks; wakes the device's worker if it sleeps on queued work. */
bool tt_rt_event_query(tt_rt_event *e);
/* Waits until the event is complete (no-op if never recorded), then takes and returns the device's queued
 * error, as a sync does. */
tt_status tt_rt_event_synchronize(tt_rt_event *e);
/* Makes work later enqueued on device run after e: a no-op on e's own device (the stream is in order); for
 * another device the calling thread waits for e (errors stay queued for the next sync). */
tt_status tt_rt_event_block(tt_rt_event *e, int device);
/* Milliseconds from start to end. Both must be timing events, recorded and complete (else INVALID_ARGUMENT). */
tt_status tt_rt_event_elapsed_ms(tt_rt_event *start, tt_rt_event *end, double *ms);
int tt_rt_event_device(const tt_rt_event *e); /* -1 until recorded */
bool tt_rt_event_timing(const tt_rt_event *e);
/* Items enqueued on / completed by device's stream so far (0 for a bad device). */
uint64_t tt_rt_stream_enqueued(int device);
uint64_t tt_rt_stream_completed(int device);
/* True if everything enqueued on device is done; wakes a sleeping worker otherwise. Never blocks. */
bool tt_rt_stream_query(int device);
/* The queries as CUDA's: *done as above, and once done the device's queued error (if any) is taken and returned,
 * as a sync returns it, so polling code sees a failure instead of spinning or dropping it. */
tt_status tt_rt_event_poll(tt_rt_event *e, bool *done);
tt_status tt_rt_stream_poll(int device, bool *done);


/* ---- eager mode ----
 * A process-wide mode, and an optional override per thread. A launch (and a host write) runs in its thread's
 * override if it has one, else in the process mode. Ordering holds across modes: a DEBUG launch or write first
 * waits for everything already queued on its device (by any thread), then runs on the calling thread. If a
 * queued launch failed (and no sync has taken its error yet), the DEBUG launch does not run (its inputs may be
 * outputs of skipped work) and returns that error, "<op>: not run, because an earlier queued op ... failed: ...";
 * the error stays recorded for the device's next sync point (read, synchronize, copy), which raises it naming the
 * failed op, whatever mode or thread syncs.
 *
 * Start-up mode, from the environment (first match wins):
 *   TORCH_TPU_LAUNCH_BLOCKING=1 or TPU_LAUNCH_BLOCKING=1     -> DEBUG (overrides every other choice)
 *   TORCH_TPU_DEFER_AND_FUSE=1                               -> FUSED
 *   TORCHTPU_EAGER_MODE=debug | strict | fused               -> that mode
 *   TORCH_TPU_DEFER_AND_FUSE=0                               -> STRICT (Google's default mode)
 *   otherwise                                                -> FUSED (the suites pass in all three modes; fused
 *                                                               keeps no memory for intermediates and is no slower
 *                                                               than strict; Google defaults to strict)
 * TORCH_TPU_ENABLE_DEBUG_CHECKS is accepted and changes nothing: index and bounds checks are always on. */
#define TT_EAGER_PROCESS (-1) /* tt_rt_set_thread_eager_mode: no override, follow the process mode */
/* The process mode. Cuts every window and waits for every device's queue first (queued errors stay for the next
 * sync). */
tt_status tt_rt_set_eager_mode(tt_rt_eager_mode mode);
/* The calling thread's override (a tt_rt_eager_mode, or TT_EAGER_PROCESS to drop it). Needs no sync: the
 * ordering rule above holds per launch. Same errors as tt_rt_set_eager_mode. */
tt_status tt_rt_set_thread_eager_mode(int mode);
int tt_rt_get_thread_eager_mode(void);               /* the override, or TT_EAGER_PROCESS */
tt_rt_eager_mode tt_rt_get_eager_mode(void);         /* the mode the calling thread's launches run in */
tt_rt_eager_mode tt_rt_get_process_eager_mode(void); /* the process mode */
const char *tt_rt_eager_mode_name(tt_rt_eager_mode mode); /* "debug", "strict", "fused" */

/* ---- the fused mode's windows ----
 * In FUSED mode a launch is recorded into its device's window instead of running: its program is appended to the
 * window's program, its results become pending storages (no memory until something needs their bytes), and views
 * of storages the window holds become IR view ops. A cut turns the window into one program: its results are the
 * storages it wrote that something still references (a tensor, a queued op); the others are never allocated. The
 * program is compiled once per structure (the compile cache) and queued like a STRICT launch. Cuts are
 * deterministic: the reasons below, never timing. TORCHTPU_FUSION_MAX_OPS (default 64) caps a window's ops at the
 * next call boundary (a call: consecutive ops from one line of user code, or with none, as a backward's; a call
 * is itself cut at 16 times the cap); TORCHTPU_LOG=fusion prints every cut (reason, ops, where) and whether its
 * program was compiled. */
typedef enum tt_rt_cut_reason {
    TT_RT_CUT_READ = 0,     /* bytes read to the host (.cpu(), .item(), printing) */
    TT_RT_CUT_SYNC,         /* torch.tpu.synchronize(), an event, a stream query */
    TT_RT_CUT_HOST_WRITE,   /* a host write into a storage the window holds */
    TT_RT_CUT_COPY,         /* a device-to-device copy */
    TT_RT_CUT_OTHER_MODE,   /* a launch in another mode (another thread's override, a mode switch) */
    TT_RT_CUT_VIEW,         /* an op the window cannot express (a view that is not a box of its storage) */
    TT_RT_CUT_SIZE,         /* TORCHTPU_FUSION_MAX_OPS */
    TT_RT_CUT_FLUSH,        /* torchtpu.flush() */
    TT_RT_CUT_FALLBACK,     /* a CPU fallback or an op whose result size depends on data (named by the shim) */
    TT_RT_CUT_EAGER,        /* one STRICT or DEBUG op over a driver without in-place views (a window per op) */
    TT_RT_CUT_GRAPH,        /* a compiled graph starts or ends (tt_rt_graph_begin / tt_rt_graph_end) */
    TT_RT_CUT_COUNT
} tt_rt_cut_reason;
const char *tt_rt_cut_reason_name(tt_rt_cut_reason r); /* "read", "synchronize", ... */
/* Cuts device's window (-1: every device): its work is queued; no wait. */
tt_status tt_rt_flush(int device, tt_rt_cut_reason reason);
/* ---- compiled graphs (torch.compile) ----
 * A graph runs as one window, whatever the eager mode: tt_rt_graph_begin cuts what device's window holds (reason
 * "graph"), names the window after the graph, lifts its size cap and makes the calling thread record in FUSED
 * mode; tt_rt_graph_end cuts the graph's ops as one program (reason "graph": intermediates nobody references are
 * never allocated) and gives the thread back *prev_mode, the mode begin found. In DEBUG mode end then waits for
 * the program and raises its error, as a debug op does. Graphs nest (a graph's ops calling another's); the
 * outermost names the window. */
tt_status tt_rt_graph_begin(int device, const char *name, int *prev_mode);
tt_status tt_rt_graph_end(int device, int prev_mode);
/* What a graph launched, kept to launch again without recording its ops (torch.compile's repeated calls). */
typedef struct tt_rt_graph_run tt_rt_graph_run;
/* tt_rt_graph_end that also hands back *run: the graph's program, its args (tensor views of the storages it read,
 * for the caller to map to its inputs; scalars) and its results (dense views of the storages it wrote). NULL when
 * the graph did not run as one program recorded by its own thread, or launched nothing. */
tt_status tt_rt_graph_end_capture(int device, int prev_mode, tt_rt_graph_run **run);
int32_t tt_rt_graph_run_args(const tt_rt_graph_run *r, const tt_rt_arg **args);
int32_t tt_rt_graph_run_results(const tt_rt_graph_run *r, const tt_rt_tensor **results);
/* Launches r's program again, as graph `name`, with args and results laid out as r's on other storages (the caller
 * checked its inputs' layouts against the capture's). As a graph: one window, whatever the eager mode. */
tt_status tt_rt_graph_replay(int device, const tt_rt_graph_run *r, const char *name, const tt_rt_arg *args,
                             const tt_rt_tensor *results);
/* Drops r's references to the storages it captured, but for the args with keep[i] set (constants the graph reads:
 * a replay passes its own storages for the rest; keep NULL: drop all). Until then r keeps the capturing call's
 * tensors alive. */
void tt_rt_graph_run_drop_storages(tt_rt_graph_run *r, const bool *keep);
void tt_rt_graph_run_free(tt_rt_graph_run *r); /* accepts NULL */
/* Where the user's code is: the shim installs a function that names the Python file:line running now (each op
 * notes it for its deferred errors; TORCHTPU_LOG=fusion prints it with cuts). Never called with a runtime lock
 * held. NULL: unknown. */
void tt_rt_set_where_hook(const char *(*where)(char *buf, size_t size));
/* Whether each STRICT / FUSED op notes the user's line (through the hook) so that an error found when it runs
 * names it. On unless TORCHTPU_OP_LINES=0. */
void tt_rt_set_op_lines(bool on);
bool tt_rt_get_op_lines(void);

/* ---- RNG (counter-based: element k of a draw uses (seed, offset + k)) ---- */
void tt_rt_manual_seed(int device, uint64_t seed);  /* resets the offset */
uint64_t tt_rt_initial_seed(int device);
/* Reserves count numbers: *seed and *offset are what the random op should use. */
void tt_rt_rng_reserve(int device, uint64_t count, uint64_t *seed, uint64_t *offset);
void tt_rt_rng_get_state(int device, uint64_t *seed, uint64_t *offset);
void tt_rt_rng_set_state(int device, uint64_t seed, uint64_t offset);

/* ---- memory ---- */
/* Storages come from a caching allocator: a released storage's buffer is kept for reuse by a later storage of
 * a fitting size (its old bytes stay: like torch.empty). TORCHTPU_MEMORY_CACHE_BYTES caps the bytes a device's
 * cache holds (default 1 GiB; 0 turns caching off). The driver's limit counts reserved bytes; an allocation over
 * it empties the device's cache and tries once more before failing. */
typedef struct tt_rt_memory_stats {
    size_t allocated;      /* bytes of the buffers of live storages (a reused buffer may exceed the request) */
    size_t peak_allocated; /* since start or reset_peak */
    size_t reserved;       /* bytes held from the driver: allocated + cached */
    size_t limit;          /* 0 = none */
    int64_t n_allocs;      /* storages created (cache hits included) */
    size_t peak_reserved;  /* since start or reset_peak */
} tt_rt_memory_stats;
tt_status tt_rt_memory_stats_get(int device, tt_rt_memory_stats *out);
void tt_rt_memory_reset_peak(int device);  /* both peaks restart from the current values */
void tt_rt_empty_cache(int device);        /* -1: every device. Waits for queued work, then frees cached buffers */

/* ---- compile cache ----
 * Bounded, least recently used first out: TORCHTPU_CACHE_ENTRIES (default 4096; 0 = no caching) entries. An
 * evicted executable is freed once no queued launch holds it, with its scratch. */
void tt_rt_cache_clear(void);
int64_t tt_rt_cache_size(void);
/* Cache telemetry (Google TorchTPU's torch.tpu._get_cache_stats). Times are seconds. */
typedef struct tt_rt_cache_stats {
    int64_t requests;      /* lookups: one per launch */
    int64_t hits;
    int64_t compilations;
    int64_t evictions;
    int64_t entries;       /* now */
    int64_t capacity;
    size_t scratch_bytes;  /* host scratch held by the cached executables now (0 if the driver cannot tell) */
} tt_rt_cache_stats;
typedef struct tt_rt_cache_entry_stats {
    uint64_t key;                /* the program's structural hash mixed with the driver's name */
    double compilation_duration; /* seconds the driver took to compile it */
    double last_read;            /* CLOCK_REALTIME seconds of the last lookup that returned it (its insert) */
    int64_t read_count;          /* hits */
    size_t scratch_bytes;
    const char *first_op;        /* op that compiled it (borrowed until the entry goes; "" if unknown) */
} tt_rt_cache_entry_stats;
void tt_rt_cache_stats_get(tt_rt_cache_stats *out);
/* Calls fn for every cached entry, most recently used first, under the cache lock (fn must not use the cache). */
void tt_rt_cache_foreach(void (*fn)(void *user, const tt_rt_cache_entry_stats *e), void *user);
void tt_rt_cache_reset_stats(void); /* zeroes requests, hits, compilations, evictions */
/* Evicts down to n entries; later inserts keep at most n (0: nothing is cached). Negative: INVALID_ARGUMENT. */
tt_status tt_rt_cache_set_capacity(int64_t n);
/* Cache-only: a miss fails (INVALID_ARGUMENT naming the program) instead of compiling. */
void tt_rt_cache_set_only(bool on);
bool tt_rt_cache_get_only(void);
/* allow = false: every launch compiles a fresh executable, used once and never cached. */
void tt_rt_cache_set_allow(bool allow);
bool tt_rt_cache_get_allow(void);
/* On a miss, print the program as StableHLO to stderr before compiling. */
void tt_rt_cache_set_dump_on_miss(bool on);
/* The persistent cache (diskcache.c): executables of drivers that serialize them, kept on disk across processes
 * under TORCHTPU_CACHE_DIR (alias TORCH_TPU_TIER3_COMPILATION_CACHE_ROOT; "off" turns it off), bounded by
 * TORCHTPU_CACHE_DISK_BYTES. An in-memory miss looks there before compiling, and a compile writes there. */
typedef struct tt_rt_disk_stats {
    int64_t hits, misses, writes;
    int64_t corrupt;   /* entries found truncated or damaged: removed and rebuilt */
    int64_t evictions; /* entries removed to stay under the bound */
    int64_t errors;    /* disk trouble (unwritable directory, ...): counted, the program compiled as usual */
    unsigned long long max_bytes;
    const char *dir;   /* "" when off */
    bool active;       /* on, and the driver serializes executables (the host driver does not: its compile is a
                        * plan of well under a millisecond, nothing worth reading back from disk) */
} tt_rt_disk_stats;
void tt_rt_disk_stats_get(tt_rt_disk_stats *out);
void tt_rt_disk_reset_stats(void);
/* For the runtime's start-up: reads TORCHTPU_CACHE_ENTRIES. */
tt_status tt_rt_cache_configure(void);

/* ---- metrics (process-wide counters) ---- */
typedef struct tt_rt_metrics {
    int64_t ops[TT_EAGER_MODE_COUNT]; /* launches by eager mode */
    int64_t compiles;
    int64_t cache_hits;
    int64_t bytes_to_device;
    int64_t bytes_to_host;
    int64_t peak_bytes;               /* max over devices of peak_allocated */
    int64_t syncs;
    double compile_seconds;
    int64_t cuts[TT_RT_CUT_COUNT];    /* fused windows cut, by reason (an empty window is not cut) */
    int64_t windows;                  /* fused windows run */
    int64_t window_ops;               /* ops they held */
    int64_t pending_dropped;          /* pending storages no one referenced at their cut: never allocated */
    int64_t window_replays;           /* windows whose trace was cached: their program replayed, not built */
    int64_t window_traces;            /* traces cached now */
    int64_t bucket_windows;           /* windows run as their bucket's program (tt_rt_mark_dynamic) */
    int64_t bucket_refused;           /* windows with a marked input the rewrite refused: run per size */
} tt_rt_metrics;
void tt_rt_metrics_get(tt_rt_metrics *out);
void tt_rt_metrics_reset(void);

/* ---- device activity (for profilers) ----
 * While recording, every program and host-to-device write that runs on a device leaves a record when it ends: what
 * ran, where, and when (CLOCK_REALTIME ns, the clock Kineto's traces use). In STRICT mode that is the device's own
 * timeline (the worker), not the time the op was queued. Off by default: then it costs one atomic load per item.
 *
 *   tt_rt_activity_start();
 *   ... launches ...
 *   tt_rt_synchronize(-1); tt_rt_activity_stop();
 *   int64_t n = tt_rt_activity_take(NULL, 0);      // how many
 *   tt_rt_activity_take(buf, n);                  // moves them out (oldest first) */
enum { TT_RT_ACTIVITY_KERNEL = 0, TT_RT_ACTIVITY_COPY = 1 };
typedef struct tt_rt_activity {
    char name[64];    /* the op as launched ("aten::mm"), truncated; "write to device" for copies */
    int32_t device;
    int32_t kind;     /* TT_RT_ACTIVITY_KERNEL / TT_RT_ACTIVITY_COPY */
    int64_t start_ns; /* CLOCK_REALTIME */
    int64_t end_ns;
} tt_rt_activity;
void tt_rt_activity_start(void); /* drops old records and starts recording */
void tt_rt_activity_stop(void);
/* out == NULL: the number of records held. Otherwise moves up to cap of them (oldest first) into out and returns
 * how many; records beyond cap stay. */
int64_t tt_rt_activity_take(tt_rt_activity *out, int64_t cap);
/* Records lost because host memory ran out while recording (since the last start). */
int64_t tt_rt_activity_dropped(void);
int64_t tt_rt_activity_clock_ns(void); /* the records' clock, now: CLOCK_REALTIME ns */

/* Shuts down worker threads and frees the driver (tests; the extension never calls it). */
void tt_rt_shutdown(void);

/* ---- capture (torchtpu.aot_compile) ----
 * The programs the device executes between start and stop (every mode and torch.compile graphs alike), each once
 * by structure, in first-run order. stop returns them (a malloc'd array of retained programs; the caller
 * destroys each and frees the array). */
tt_status tt_rt_capture_start(void);
int32_t tt_rt_capture_stop(tt_ir_program ***programs);

#ifdef __cplusplus
}
#endif
#endif /* TT_RUNTIME_H */
