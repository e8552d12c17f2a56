/* rt_internal.h — state shared by the runtime's files (runtime.c, storage.c, stream.c, launch.c, cache.c, rng.c).
 * Not a public header. */
#ifndef TT_RT_INTERNAL_H
#define TT_RT_INTERNAL_H

#include "tt_runtime.h"

#include <pthread.h>
#include <stdatomic.h>

#define TT_RT_MAX_DEVICES 64
/* One call (consecutive ops from one line of user code) may fill a window up to this many times the size cap. */
#define TT_RT_CALL_OPS_MAX 16
#define TT_RT_QUEUE_CAP 256 /* work slots per stream (a power of two; 256 slots stay in L2); producers wait when all are taken */
#define TT_RT_MSG_SIZE 1024  /* same as the thread-local error buffer */

/* The error of a failed queued op, kept by the storages it (or work skipped after it) should have written: a read
 * of one raises it again instead of returning bytes nobody wrote. Shared, reference-counted. */
typedef struct tt_rt_poison {
    _Atomic int32_t refs;
    tt_status status;
    char msg[TT_RT_MSG_SIZE];
} tt_rt_poison;

struct tt_rt_storage {
    _Atomic int64_t refcount;
    int device;
    size_t nbytes;       /* what the caller asked for (views are checked against it) */
    size_t capacity;     /* the buffer's size: >= nbytes when a cached buffer of the same size class was reused */
    tt_buffer *buffer;   /* owned; at refcount zero it goes back to the device's cache (or to the driver). NULL while
                          * the storage is pending (made in fused mode, no bytes needed yet): read it only after
                          * tt_rt_storage_materialize, or once has_buffer is seen set */
    _Atomic bool has_buffer;
    void *address;       /* identity for the shim (DataPtr): the buffer's address, or the record's own while pending */
    _Atomic int32_t wslot; /* its slot in its device's window, -1 when no window holds it (under the window lock) */
    _Atomic(tt_rt_poison *) poison; /* one reference, or NULL; cleared by the next successful write */
    uint32_t generation; /* tt_rt_g.generation at creation */
    struct tt_rt_storage *next_free; /* link in a cache free list (refcount 0) */
    _Atomic(struct tt_rt_mark *) mark; /* owned, or NULL: a dim of it is a size padded to a bucket (bucket_launch.c) */
};

/* Gives a pending storage its buffer (no-op once it has one). OUT_OF_MEMORY as tt_rt_storage_create. */
tt_status tt_rt_storage_materialize(tt_rt_storage *s);
tt_rt_poison *tt_rt_poison_new(tt_status st, const char *msg); /* NULL on out of memory (then nothing is kept) */
void tt_rt_poison_release(tt_rt_poison *p);                      /* accepts NULL */
void tt_rt_storage_poison(tt_rt_storage *s, tt_rt_poison *p);     /* s keeps its own reference (p may be NULL) */
static inline void tt_rt_storage_unpoison(tt_rt_storage *s) {
    if (atomic_load_explicit(&s->poison, memory_order_relaxed)) tt_rt_poison_release(atomic_exchange(&s->poison, NULL));
}
static inline bool tt_rt_storage_has_buffer(const tt_rt_storage *s) {
    return atomic_load_explicit(&s->has_buffer, memory_order_acquire);
}

/* ---- compile cache (cache.c) ---- */
typedef struct tt_rt_cache_entry tt_rt_cache_entry;
/* The cached executable of program (compiled on a miss); *out is a new reference, dropped with
 * tt_rt_cache_entry_release (from any thread). Errors carry the driver's message. op_name (may be NULL) is kept
 * for telemetry as the entry's first op. */
tt_status tt_rt_cache_acquire(tt_ir_program *program, const char *op_name, tt_rt_cache_entry **out);
tt_executable *tt_rt_cache_entry_exe(const tt_rt_cache_entry *e);
const tt_ir_program *tt_rt_cache_entry_program(const tt_rt_cache_entry *e);
void tt_rt_cache_entry_release(tt_rt_cache_entry *e);
/* Measured run time of the executable (a moving average, nanoseconds); -1 until it has run in a stream. */
int64_t tt_rt_cache_entry_cost(const tt_rt_cache_entry *e);
void tt_rt_cache_entry_note_cost(tt_rt_cache_entry *e, int64_t ns);
void tt_rt_cache_fini(void); /* drops every entry and the table (shutdown) */
void tt_rt_cache_limit(int64_t max); /* lowers the capacity to max (> 0) if it is above: the driver's bound */

/* Whether a driver implements an optional iface member (a driver built against an older tt_driver_i has a shorter
 * struct). */
#define TT_RT_HAS_MEMBER(i, m) ((i)->struct_size >= offsetof(tt_driver_i, m) + sizeof((i)->m) && (i)->m)

/* ---- the persistent cache (diskcache.c) ---- */
tt_status tt_rt_disk_configure(void); /* from the environment, at init */
bool tt_rt_disk_on(void);
/* A hit: *payload (malloc'd, the caller frees) and *n; a miss: *payload NULL. Never fails the caller. */
void tt_rt_disk_get(const char *key, size_t klen, void **payload, size_t *n);
void tt_rt_disk_put(const char *key, size_t klen, const void *payload, size_t n);

/* ---- streams (stream.c) ---- */
typedef enum tt_rt_work_kind {
    TT_RT_WORK_NOP = 0, TT_RT_WORK_LAUNCH, TT_RT_WORK_WRITE, TT_RT_WORK_EVENT, TT_RT_WORK_COPY_ROWS
} tt_rt_work_kind;

#define TT_RT_WORK_INLINE 4   /* args + results a slot holds without a heap block (most ops have 2 or 3) */
#define TT_RT_WORK_ORIGINS 256 /* origins bytes a slot holds without a heap block (one op and its line) */
#define TT_RT_WORK_NAME 64    /* op-name bytes (with the NUL) a slot holds without a heap block */

/* One slot of a stream's ring, filled in place by the producer and run in place by the worker, so a launch
 * allocates nothing unless it has more than TT_RT_WORK_INLINE tensors, a long name, or is a large write (then
 * one heap block, `heap`). Every storage it names is retained until the item is done. */
typedef struct tt_rt_work {
    _Atomic uint64_t seq; /* ring protocol: == ticket when free for that ticket, ticket + 1 once published */
    tt_rt_work_kind kind;
    int device;
    int32_t n_args, n_results, n_storages;
    tt_rt_cache_entry *entry;  /* LAUNCH: one reference */
    tt_exec_arg *args;         /* LAUNCH: into inline.exec or heap */
    tt_exec_arg *results;      /* LAUNCH: args + n_args */
    tt_rt_storage **storages;  /* retained; into inline_storages or heap */
    const char *op_name;       /* into inline_name or heap */
    const char *origins;       /* LAUNCH: what recorded the program (tt_rt_origins text, in heap), or NULL */
    int32_t n_origins;
    size_t offset, nbytes;     /* WRITE: into storages[0]; COPY_ROWS: into storages[1], bytes per row */
    size_t src_offset, src_stride, dst_stride, rows; /* COPY_ROWS: from storages[0] */
    const void *data;          /* WRITE: into inline.bytes or heap */
    tt_rt_event *event;        /* EVENT: one reference; the worker marks it reached (even after a failure) */
    void *heap;                /* owned, may be NULL */
    union {
        tt_exec_arg exec[TT_RT_WORK_INLINE];
        unsigned char bytes[TT_RT_WORK_INLINE * sizeof(tt_exec_arg)];
    } inline_;
    tt_rt_storage *inline_storages[TT_RT_WORK_INLINE];
    char inline_name[TT_RT_WORK_NAME];
    char inline_origins[TT_RT_WORK_ORIGINS];
} tt_rt_work;

/* A multi-producer single-consumer ring: producers claim tickets with a compare-and-swap on enq, fill the slot,
 * publish it by its seq; the worker runs tickets in order. The mutex and condition variables are only for
 * sleeping (an idle worker, a producer facing a full ring, a sync waiting for the worker). */
typedef struct tt_rt_stream {
    /* Three cache lines so that the producers' and the worker's per-item writes never share one. */
    /* read on every item, written rarely: */
    _Alignas(64) _Atomic(tt_rt_work *) ring; /* TT_RT_QUEUE_CAP slots, made (and the worker started) on first use */
    _Atomic int sleeping;       /* the worker waits on cv_work: a producer must signal */
    _Atomic int space_waiters;  /* producers waiting on cv_space */
    _Atomic int idle_waiters;   /* syncs waiting on cv_idle */
    _Atomic int error;          /* tt_status of the first failure since the last sync; later items are skipped */
    _Atomic uint64_t wake_at;   /* the lowest deq a sync waits for (UINT64_MAX: none) */
    /* written by producers: */
    _Alignas(64) _Atomic uint64_t enq; /* next ticket to claim */
    _Atomic int64_t deferred_ns; /* estimated work published while the worker sleeps and nobody woke it */
    /* written by the worker: */
    _Alignas(64) _Atomic uint64_t deq; /* tickets below it are done (run, references released) */
    _Atomic int running;        /* someone (the worker or a waiting thread) runs the item at deq: the one consumer */
    tt_rt_poison *failure;      /* the error items are skipped for (under the running role) */
    _Alignas(64) pthread_mutex_t mu;
    pthread_cond_t cv_work, cv_space, cv_idle;
    bool stop;
    bool started;
    pthread_t thread;
    int device;
    char error_msg[TT_RT_MSG_SIZE]; /* under mu */
} tt_rt_stream;

tt_status tt_rt_stream_init(tt_rt_stream *s, int device);
void tt_rt_stream_fini(tt_rt_stream *s); /* drains, joins the worker, frees the ring, destroys the primitives */
/* Claims the next slot (waits while the ring is full; starts the worker on first use) into *w and *ticket. The
 * caller fills it (all fields but seq; kind NOP if it gives up) and must then publish it, even on failure: the
 * worker runs slots in ticket order. Fails only when the ring or the worker cannot be created. */
tt_status tt_rt_stream_reserve(tt_rt_stream *s, tt_rt_work **w, uint64_t *ticket);
/* cost_ns: the item's estimated run time (-1: unknown). A sleeping worker is woken only once the work waiting
 * for it is worth a wake-up (see stream.c); a sync waiting on another thread's role always wakes it. */
void tt_rt_stream_publish(tt_rt_stream *s, tt_rt_work *w, uint64_t ticket, int64_t cost_ns);
/* The calling thread is about to wait for what it publishes (a fused window cut by a read or a sync): while
 * held, its publishes wake no sleeping worker; the wait runs them on this thread (see stream.c). */
void tt_rt_stream_hold_wakes(bool hold);
/* Waits until every item claimed before the call is done. */
void tt_rt_stream_wait_idle(tt_rt_stream *s);
/* The rows of tt_rt_copy_rows, now (both buffers exist, earlier work on them done). */
tt_status tt_rt_copy_rows_now(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                              size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows);
/* Waits until the items below ticket target are done (deq >= target). */
void tt_rt_stream_wait_until(tt_rt_stream *s, uint64_t target);
/* Takes the recorded error (status + message) and clears it; TT_OK when none. */
tt_status tt_rt_stream_take_error(tt_rt_stream *s, char *msg, size_t msg_size);
/* Runs one item (on whichever thread); on failure the message is "<op>: <driver message>" in msg. */
tt_status tt_rt_work_run(const tt_rt_work *w, char *msg, size_t msg_size);
/* activity.c: is a profiler recording; one record for an item that ran (started at start_ns). */
bool tt_rt_activity_on(void);
void tt_rt_activity_note(const char *name, int device, int kind, int64_t start_ns);
void tt_rt_work_clear(tt_rt_work *w); /* releases everything the item holds and frees its heap block */

/* ---- the fused mode's windows (window.c) ----
 * One window per device: the ops recorded since its last cut, as one IR program under construction. */
typedef struct tt_rt_wslot {
    tt_rt_storage *s;  /* retained while in the window */
    tt_dtype dtype;    /* the dtype the window sees it as (its first use) */
    int64_t n;         /* elements of that dtype */
    bool had_buffer;   /* it had a buffer when the window first touched it (a window never gives one until its cut) */
    bool has_flat;     /* the window holds its contents as a [n] value (else: read in place / not read yet) */
    tt_ir_value flat;  /* that value while the program is built (TT_IR_NONE while only recording) */
    bool written;      /* recorded ops wrote it: a result of the window's program, if still referenced */
    int32_t views;     /* its first in-place view in the window's views (chained by tt_rt_wview.next), or -1 */
} tt_rt_wslot;

/* One recorded op, kept until the cut: its program is built into the window's only when the window's trace is not
 * in the trace cache (wtrace.c). */
typedef struct tt_rt_wop {
    tt_ir_program *p;          /* retained */
    int32_t first_arg, n_args; /* its args in tt_rt_window.op_args */
    int32_t first_res, n_res;  /* its results in tt_rt_window.op_res */
} tt_rt_wop;

typedef struct tt_rt_wview {   /* a view a driver reads in place, a parameter of the window's program */
    tt_rt_tensor view;
    tt_ir_value value;
    int32_t next;              /* the next view of the same storage, or -1 */
} tt_rt_wview;

/* What recorded a launch, for errors found when it runs: per op two NUL-terminated strings, its name and the
 * user's file:line ("" if unknown), packed; an op's index is the IR origin of the nodes it built
 * (tt_ir_builder_set_origin). A strict launch has one op; a fused window one per op recorded. */
typedef struct tt_rt_origins {
    const char *text;
    size_t len; /* bytes, NULs included */
    int32_t n;
} tt_rt_origins;

typedef struct tt_rt_window {
    pthread_mutex_t mu;
    bool ready;
    tt_ir_builder *b;
    tt_rt_arg *args;            /* the values of the program's parameters, in order */
    int32_t n_args, cap_args;
    tt_rt_wslot *slots;
    int32_t n_slots, cap_slots;
    tt_rt_wview *views;
    int32_t n_views, cap_views;
    tt_rt_wop *ops;             /* the ops recorded since the last cut */
    int32_t cap_ops;
    tt_rt_arg *op_args;         /* their args and results, copied (the slots retain the storages) */
    int32_t n_op_args, cap_op_args;
    tt_rt_tensor *op_res;
    int32_t n_op_res, cap_op_res;
    uint64_t *trace;            /* what determines the window's program, op by op (wtrace.c) */
    int32_t n_trace, cap_trace;
    int32_t *out_slots;         /* a program being built: the slots it writes as outputs, in order */
    int32_t cap_out_slots;
    _Atomic int32_t n_ops;      /* ops recorded since the last cut (read without the lock: is there work?) */
    char last_where[256];       /* the user's line of the last op ("" when unknown: every op starts a call) */
    int32_t call_ops, call_chained; /* ops of the current call, and how many read what the op before wrote */
    char first_op[64];
    int32_t graph_depth;        /* compiled graphs running into the window (no size cap while > 0) */
    char graph[64];             /* the outermost one's name */
    int32_t graph_cuts;         /* cuts since it began (0 at its end: it ran as one program) */
    pthread_t graph_thread;     /* the thread running it */
    bool graph_foreign;         /* another thread recorded into the window meanwhile */
    tt_rt_graph_run **capture;  /* set by its end: where the cut leaves what it launched (graph.c) */
    char *origins;              /* tt_rt_origins text of the ops recorded */
    size_t origins_len, cap_origins;
} tt_rt_window;

tt_status tt_rt_window_init(tt_rt_window *w);
void tt_rt_window_fini(tt_rt_window *w); /* drops what it holds (shutdown; no cut) */
/* wslots.c (lock held): one recorded op through the window's slots (ir false: appended to the trace and the
 * parameters; ir true: built into the window's builder); the window's program built from all of them (a trace
 * miss); whether the window can take this view of its storage (read, or written when write). */
tt_status tt_rt_window_pass_op(tt_rt_window *w, const tt_rt_wop *op, bool ir);
tt_status tt_rt_window_build(tt_rt_window *w);
bool tt_rt_window_view_fits(tt_rt_window *w, const tt_rt_tensor *t, bool write);
/* *p grown (doubling, from 16) to hold need elements of size bytes; false when out of memory (*p unchanged). */
bool tt_rt_grow(void **p, int32_t *cap, int32_t need, size_t size);
tt_status tt_rt_oom(const char *what); /* TT_STATUS_OUT_OF_MEMORY: "out of host memory for <what>" */
/* Records one launch into device's window (FUSED mode). TT_STATUS_UNSUPPORTED without recording anything: the
 * op cannot be expressed in the window (a view that is not a box, a storage seen as two dtypes); the window is
 * cut then and the caller runs the op on its own. */
tt_status tt_rt_window_record(int device, tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op, const char *where);
/* Cuts device's window (-1: every device) if it holds ops: its program is compiled (or found) and queued. */
tt_status tt_rt_window_cut(int device, tt_rt_cut_reason reason);
/* A compiled graph enters (name) or leaves (NULL) device's window: the outermost cuts it (graph.c). Leaving with
 * capture non-NULL: *capture gets what the cut launched if the graph ran as one program recorded by its own thread
 * (else NULL). */
tt_status tt_rt_window_graph(int device, const char *name, tt_rt_graph_run **capture);
/* A launched program kept for tt_rt_graph_replay (graph.c): copies args, results and the ops' origins (a replay's
 * error names the op and line that recorded the failing node), retains the program and the storages; NULL when
 * out of memory. */
tt_rt_graph_run *tt_rt_graph_run_new(tt_ir_program *p, const tt_rt_arg *args, int32_t n_args,
                                     const tt_rt_tensor *results, int32_t n_results, const tt_rt_origins *origins);
static inline bool tt_rt_window_busy(int device);
/* Queues a launch on the device's stream (the STRICT path; used by the window's cut). */
tt_status tt_rt_launch_queued(int device, tt_ir_program *program, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *op,
                              const tt_rt_origins *origins);
/* ---- bounded dynamic sizes (bucket_launch.c) ---- */
typedef struct tt_rt_mark tt_rt_mark;
typedef struct tt_rt_bucket_plan tt_rt_bucket_plan;
void tt_rt_mark_free(tt_rt_storage *s);
/* What a storage's mark contributes to a window's trace (0: none). */
uint64_t tt_rt_mark_word(const tt_rt_storage *s);
/* The window program p for its arguments' marks (their size and bucket), or NULL: no marked argument, or the
 * rewrite refused (the reason in why, counted). */
tt_rt_bucket_plan *tt_rt_bucket_plan_new(tt_ir_program *p, const tt_rt_arg *args, int32_t n_args, char *why,
                                         size_t why_size);
void tt_rt_bucket_plan_free(tt_rt_bucket_plan *plan); /* accepts NULL */
tt_ir_program *tt_rt_bucket_plan_program(const tt_rt_bucket_plan *plan);
/* Whether the plan holds for these arguments (the scalar values its rewrite relied on are the same). */
bool tt_rt_bucket_plan_holds(const tt_rt_bucket_plan *plan, const tt_rt_arg *args, int32_t n_args);
/* Queues the bucket's program for the window's arguments and results (as tt_rt_launch_queued would p): padded
 * copies in, the real size as an extra argument, padded results cut back and marked. */
tt_status tt_rt_bucket_launch(int device, const tt_rt_bucket_plan *plan, const tt_rt_arg *args, int32_t n_args,
                              const tt_rt_tensor *results, int32_t n_results, const char *name,
                              const tt_rt_origins *origins);
/* tt_rt_copy_rows after its checks, window cut and materialisation (both buffers exist): queued, or now in DEBUG. */
tt_status tt_rt_copy_rows_enqueue(tt_rt_storage *dst, size_t dst_offset, size_t dst_stride, tt_rt_storage *src,
                                  size_t src_offset, size_t src_stride, size_t row_bytes, size_t rows);

/* ---- the trace cache (wtrace.c): a window whose trace (its ops' programs, the slots and views they touch, the
 * results kept) was seen before replays that window's finished program without building it again ---- */
typedef struct tt_rt_wtrace tt_rt_wtrace;
/* The cached trace equal to w's (with outputs mask), retained, or NULL; *hash: the trace's, for an insert. */
tt_rt_wtrace *tt_rt_wtrace_find(const tt_rt_window *w, const uint64_t *mask, int32_t n_mask, uint64_t *hash);
/* Caches w's trace with its finished program and the slots written as its outputs, in order; returns a reference
 * (NULL when out of memory: the window still runs). */
/* plan (may be NULL) becomes the entry's when the insert succeeds (else it stays the caller's). */
tt_rt_wtrace *tt_rt_wtrace_insert(const tt_rt_window *w, const uint64_t *mask, int32_t n_mask, uint64_t hash,
                                  tt_ir_program *program, const int32_t *out_slots, int32_t n_out,
                                  tt_rt_bucket_plan *plan);
const tt_rt_bucket_plan *tt_rt_wtrace_plan(const tt_rt_wtrace *t); /* the window's bucket plan, or NULL */
void tt_rt_wtrace_release(tt_rt_wtrace *t);
/* The first live program equal to p (p itself if none), retained: what a window records for an op. */
tt_ir_program *tt_rt_wtrace_intern(tt_ir_program *p);
tt_ir_program *tt_rt_wtrace_program(const tt_rt_wtrace *t);
int32_t tt_rt_wtrace_outputs(const tt_rt_wtrace *t, const int32_t **slots);
/* Why a window's new program was compiled: "new structure", "new shapes", "new dtype", "new precision", "new
 * constants", compared with the last program compiled for the same sequence of ops (ops: the origins text). */
const char *tt_rt_wtrace_miss_reason(const tt_rt_origins *ops, tt_ir_program *program);
void tt_rt_wtrace_clear(void); /* drops every cached trace (shutdown, tests) */
int64_t tt_rt_wtrace_count(void);

/* The user's file:line now, into buf ("" when unknown; the hook skips threads not holding Python's GIL). */
void tt_rt_where(char *buf, size_t size);

/* ---- global state (runtime.c) ---- */
/* Size classes of the caching allocator: 4 per power of two (so a reused buffer wastes under half of the
 * request), sizes below 16 bytes in 4-byte steps. 4 + 60 * 4 classes cover every size_t. */
#define TT_RT_N_CLASSES 244

typedef struct tt_rt_device_mem {
    _Atomic size_t allocated; /* capacity of live storages */
    _Atomic size_t peak;
    _Atomic size_t reserved;  /* held from the driver: allocated + cached */
    _Atomic size_t peak_reserved;
    _Atomic int64_t n_allocs;
    /* The cache: storage records (refcount 0) that still own their buffer, by size class of capacity. */
    pthread_mutex_t mu;
    bool mu_ready;
    tt_rt_storage *free_lists[TT_RT_N_CLASSES];
    /* Live storages by address, for tt_rt_storage_find (the shim meets bare DataPtr addresses): open addressing
     * with linear probing, under mu, kept in the critical sections the cache already has. */
    struct tt_rt_live_slot *live;
    size_t live_cap, live_n;
} tt_rt_device_mem;

typedef struct tt_rt_state {
    _Atomic bool ready;
    tt_driver *driver; /* owned */
    int n_devices;
    size_t memory_limit;
    size_t cache_max; /* bytes a device's cache may hold (TORCHTPU_MEMORY_CACHE_BYTES); 0 = no caching */
    _Atomic int mode;
    _Atomic uint32_t generation; /* bumped by each shutdown */
    tt_rt_stream streams[TT_RT_MAX_DEVICES];
    tt_rt_device_mem mem[TT_RT_MAX_DEVICES];
    tt_rt_window windows[TT_RT_MAX_DEVICES];
    int32_t window_max_ops;     /* TORCHTPU_FUSION_MAX_OPS: the next call after this many ops starts a window */
    bool log_fusion;            /* TORCHTPU_LOG=fusion */
    bool log_compile;           /* TORCHTPU_LOG=compile: the cuts that end compiled graphs (graph.c) */
    bool op_lines;              /* each op notes the user's file:line for deferred errors (TORCHTPU_OP_LINES=0: off) */
    bool driver_strided;        /* the driver reads strided views in place (TT_DRIVER_CAP_STRIDED_VIEWS) */
    _Atomic bool capturing;     /* tt_rt_capture_start: executed programs are noted (tt_rt_capture_note) */
    /* metrics */
    _Atomic int64_t cuts[TT_RT_CUT_COUNT];
    _Atomic int64_t windows_run, windows_ops, pending_dropped, window_replays;
    _Atomic int64_t bucket_windows, bucket_refused; /* windows run as their bucket's program; rewrites refused */
    _Atomic int64_t ops[TT_EAGER_MODE_COUNT];
    _Atomic int64_t compiles, cache_hits, bytes_to_device, bytes_to_host, syncs;
    _Atomic int64_t compile_ns;
} tt_rt_state;

extern tt_rt_state tt_rt_g;

/* While capturing, notes the program of entry (once per structure); cache.c. Call sites check tt_rt_g.capturing. */
void tt_rt_capture_note(const tt_rt_cache_entry *entry);
static inline void tt_rt_capture_maybe(const tt_rt_cache_entry *entry) {
    if (atomic_load_explicit(&tt_rt_g.capturing, memory_order_relaxed)) tt_rt_capture_note(entry);
}

/* Starts the runtime if needed: the cheap check every entry point makes. */
static inline tt_status tt_rt_ensure(void) {
    if (atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) return TT_OK;
    return tt_rt_init();
}
static inline bool tt_rt_device_valid(int device) { return device >= 0 && device < tt_rt_g.n_devices; }

/* ---- eager mode of the calling thread (runtime.c) ---- */
extern _Thread_local int tt_rt_thread_mode; /* TT_EAGER_PROCESS or the calling thread's override */
/* The mode this thread's launches and writes run in. */
static inline int tt_rt_mode_now(void) {
    int m = tt_rt_thread_mode;
    return m >= 0 ? m : atomic_load_explicit(&tt_rt_g.mode, memory_order_relaxed);
}

static inline bool tt_rt_window_busy(int device) {
    return atomic_load_explicit(&tt_rt_g.windows[device].n_ops, memory_order_acquire) > 0;
}

void tt_rt_rng_reset(void); /* rng.c: default seed, offset 0, every device */
tt_status tt_rt_memory_init(int n_devices); /* storage.c: zero every counter, create the cache locks (start) */
void tt_rt_memory_fini(void);               /* storage.c: free every cached buffer, drop the locks (shutdown) */

#endif /* TT_RT_INTERNAL_H */
