/* host_exec_internal.h — the host executable, shared by compile (host_compile.c) and execute (host_exec.c). */
#ifndef TT_HOST_EXEC_INTERNAL_H
#define TT_HOST_EXEC_INTERNAL_H

#include "host_internal.h"

#include <pthread.h>
#include <stdatomic.h>

#define NO_SLOT (-1)
#define MAX_ARENAS 8
#define KEEP_ARENA_BYTES ((size_t)32 << 20) /* extra arenas above this are allocated per execution */

struct tt_executable {
    tt_ir_program *p;
    int64_t *slot;        /* per value: arena offset, or NO_SLOT */
    int64_t *scratch;     /* per node: arena offset of its scratch, or NO_SLOT */
    const void **fixed;   /* per value: pointer fixed at compile time (aligned constants), else NULL */
    bool *dot_only;       /* per value: read only by dot_general nodes (a transposed argument is read in place) */
    size_t arena_bytes;   /* slots, after the per-value pointer table */
    size_t table_bytes;   /* per-value pointer table at the arena's start */
    tt_host_fusion *fusion; /* fused elementwise groups (a node's scratch slot is its group's at exec node) */
    int32_t n_arenas;
    pthread_mutex_t locks[MAX_ARENAS]; /* locks[k] guards arenas[k] */
    void *arenas[MAX_ARENAS];
    bool shallow;         /* p is a chunk copy (host_rows.c): free its types and itself, not its nodes */
    tt_host_rows *rows;   /* row-chunked plan, or NULL */
    /* Bytes of kept arenas, this executable's and its row chunks' (what the runtime counts as its scratch). A
     * chunk adds to its owner's count: the owner's plan made it, and frees it before itself. */
    _Atomic size_t held_bytes;
    struct tt_executable *owner;
};

static inline size_t round64(size_t n) { return (n + 63) / 64 * 64; }

static inline size_t value_bytes(const tt_ir_program *p, tt_ir_value v) {
    const tt_ir_type *t = &p->types[v];
    return (size_t)tt_host_numel(t) * tt_dtype_size(t->dtype);
}

#endif
