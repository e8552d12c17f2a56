/* rt_internal.h — state shared by the runtime's files (runtime.c, storage.c, stream.c, launch.c, cache.c, rng.c).
 * Not a public header. */
#ifndef TT_RT_INTERNAL_H
#define TT_RT_INTERNAL_H

#include "tt_runtime.h"

#include <pthread.h>
#include <stdatomic.h>

#define TT_RT_MAX_DEVICES 64
#define TT_RT_QUEUE_CAP 4096 /* work items per stream; the producer waits when full, so memory stays bounded */
#define TT_RT_MSG_SIZE 1024  /* same as the thread-local error buffer */

struct tt_rt_storage {
    _Atomic int64_t refcount;
    int device;
    size_t nbytes;
    tt_buffer *buffer; /* owned; freed through the driver at refcount zero */
    void *address;
    uint32_t generation; /* tt_rt_g.generation at creation */
};

/* ---- compile cache (cache.c) ---- */
typedef struct tt_rt_cache_entry tt_rt_cache_entry;
/* The cached executable of program (compiled on a miss); *out is a new reference, dropped with
 * tt_rt_cache_entry_release (from any thread). Errors carry the driver's message. */
tt_status tt_rt_cache_acquire(tt_ir_program *program, tt_rt_cache_entry **out);
tt_executable *tt_rt_cache_entry_exe(const tt_rt_cache_entry *e);
void tt_rt_cache_entry_release(tt_rt_cache_entry *e);
void tt_rt_cache_fini(void); /* drops every entry and the table (shutdown) */

/* ---- streams (stream.c) ---- */
typedef enum tt_rt_work_kind { TT_RT_WORK_LAUNCH = 0, TT_RT_WORK_WRITE } tt_rt_work_kind;

/* One queued item. A single malloc'd block holds the item and its trailing arrays (args, results, storages, the
 * op name, or the bytes of a write). Every storage it names is retained until the item is done. */
typedef struct tt_rt_work {
    struct tt_rt_work *next;
    tt_rt_work_kind kind;
    int device;
    int32_t n_args, n_results, n_storages;
    tt_rt_cache_entry *entry;  /* LAUNCH: one reference */
    tt_ir_program *program;    /* LAUNCH: one reference */
    tt_exec_arg *args;         /* LAUNCH: into the block */
    tt_exec_arg *results;      /* LAUNCH: into the block */
    tt_rt_storage **storages;  /* retained, into the block */
    const char *op_name;       /* into the block */
    size_t offset, nbytes;     /* WRITE: into storages[0] */
    const void *data;          /* WRITE: into the block */
} tt_rt_work;

typedef struct tt_rt_stream {
    pthread_mutex_t mu;
    pthread_cond_t cv_work;  /* worker waits for items */
    pthread_cond_t cv_space; /* producers wait for room */
    pthread_cond_t cv_idle;  /* syncs wait for empty and idle */
    tt_rt_work *head, *tail;
    int32_t count;
    _Atomic int32_t n_queued; /* count, readable without the lock (the worker's spin) */
    bool busy;     /* the worker is running an item it has already popped */
    bool sleeping; /* the worker waits on cv_work: a producer must signal */
    bool stop;
    bool started;
    pthread_t thread;
    int device;
    tt_status error; /* first failure since the last sync; later items are skipped while set */
    char error_msg[TT_RT_MSG_SIZE];
} tt_rt_stream;

tt_status tt_rt_stream_init(tt_rt_stream *s, int device);
void tt_rt_stream_fini(tt_rt_stream *s); /* drains, joins the worker, destroys the primitives */
/* Queues w (takes ownership, also on failure). Starts the worker on first use. */
tt_status tt_rt_stream_enqueue(tt_rt_stream *s, tt_rt_work *w);
void tt_rt_stream_wait_idle(tt_rt_stream *s);
/* Takes the recorded error (status + message) and clears it; TT_OK when none. */
tt_status tt_rt_stream_take_error(tt_rt_stream *s, char *msg, size_t msg_size);
/* Runs one item (on whichever thread); on failure the message is "<op>: <driver message>" in msg. */
tt_status tt_rt_work_run(const tt_rt_work *w, char *msg, size_t msg_size);
void tt_rt_work_free(tt_rt_work *w); /* releases everything it holds, then the block */

/* ---- global state (runtime.c) ---- */
typedef struct tt_rt_device_mem {
    _Atomic size_t allocated;
    _Atomic size_t peak;
    _Atomic int64_t n_allocs;
} tt_rt_device_mem;

typedef struct tt_rt_state {
    _Atomic bool ready;
    tt_driver *driver; /* owned */
    int n_devices;
    size_t memory_limit;
    _Atomic int mode;
    _Atomic uint32_t generation; /* bumped by each shutdown */
    tt_rt_stream streams[TT_RT_MAX_DEVICES];
    tt_rt_device_mem mem[TT_RT_MAX_DEVICES];
    /* metrics */
    _Atomic int64_t ops[TT_EAGER_MODE_COUNT];
    _Atomic int64_t compiles, cache_hits, bytes_to_device, bytes_to_host, syncs;
    _Atomic int64_t compile_ns;
} tt_rt_state;

extern tt_rt_state tt_rt_g;

/* Starts the runtime if needed: the cheap check every entry point makes. */
static inline tt_status tt_rt_ensure(void) {
    if (atomic_load_explicit(&tt_rt_g.ready, memory_order_acquire)) return TT_OK;
    return tt_rt_init();
}
static inline bool tt_rt_device_valid(int device) { return device >= 0 && device < tt_rt_g.n_devices; }

void tt_rt_rng_reset(void); /* rng.c: default seed, offset 0, every device */
void tt_rt_memory_reset_all(void);  /* storage.c: zero every counter (init) */

#endif /* TT_RT_INTERNAL_H */
