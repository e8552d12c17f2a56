/* host_compile.c — compile: a static memory plan for an IR program on the host driver.
 *
 * compile assigns every temporary value and every node's scratch a 64-byte aligned offset in one arena, by
 * first-fit over value lifetimes, so values dead after a node give their memory to later nodes; a plain reshape
 * shares its operand's memory. The executable keeps a few arenas, each taken with a try-lock by execute
 * (host_exec.c; made on first use, the extra ones for concurrent executions kept only while small). A
 * row-separable program (host_rows.c) also gets chunk executables and runs row block by row block.
 */
#include "host_exec_internal.h"
#include "tt_kernel.h"

#include <stdlib.h>
#include <string.h>

/* The executable whose row plan is being made on this thread: its chunks count their arenas there. */
static _Thread_local tt_executable *planning_owner;

size_t tt_host_executable_scratch_bytes(const tt_executable *e) { return e ? atomic_load(&e->held_bytes) : 0; }

size_t tt_host_scratch_bytes(const tt_ir_program *p, const tt_ir_node *n) {
    const tt_ir_type *x = n->n_inputs > 0 ? tt_host_in_type(p, n, 0) : NULL;
    switch (n->op) {
    case TT_OP_REDUCE: {
        /* Room to move the reduced dims last, unless they already are (ignoring size-1 dims). */
        int32_t seen_kept_after_reduced = 0, in_reduced = 0;
        for (int32_t d = 0; d < x->rank; d++) {
            bool red = false;
            for (int64_t i = 0; i < n->attrs.reduce.dims.n; i++) red |= n->attrs.reduce.dims.v[i] == d;
            if (x->dims[d] == 1) continue;
            if (red) in_reduced = 1;
            else if (in_reduced) seen_kept_after_reduced = 1;
        }
        return seen_kept_after_reduced ? (size_t)tt_host_numel(x) * tt_dtype_size(x->dtype) : 0;
    }
    case TT_OP_CUMULATIVE:
    case TT_OP_ARG_REDUCE: {
        int64_t dim = n->op == TT_OP_CUMULATIVE ? n->attrs.cumulative.dim : n->attrs.arg_reduce.dim;
        int64_t inner = 1;
        for (int32_t i = (int32_t)dim + 1; i < x->rank; i++) inner *= x->dims[i];
        return (size_t)inner * 16;
    }
    case TT_OP_SORT: {
        int64_t d = x->rank ? x->dims[n->attrs.sort.dim] : 1;
        return (size_t)d * 24;
    }
    default:
        return 0;
    }
}

/* ---- the memory plan: first-fit over live intervals ---- */
typedef struct live_block {
    int64_t off, size, end; /* end: last node index that uses it */
} live_block;

typedef struct planner {
    live_block *blocks;
    int32_t n, cap;
    int64_t top;
} planner;

static void planner_expire(planner *pl, int64_t now) {
    int32_t k = 0;
    for (int32_t i = 0; i < pl->n; i++)
        if (pl->blocks[i].end >= now) pl->blocks[k++] = pl->blocks[i];
    pl->n = k;
}

/* Blocks are kept sorted by offset; returns the offset or -1 on out of memory. */
static int64_t planner_alloc(planner *pl, int64_t size, int64_t end) {
    if (size == 0) size = 64;
    int64_t pos = 0;
    int32_t at = pl->n;
    for (int32_t i = 0; i < pl->n; i++) {
        if (pl->blocks[i].off - pos >= size) {
            at = i;
            break;
        }
        int64_t e = pl->blocks[i].off + pl->blocks[i].size;
        if (e > pos) pos = e;
    }
    if (pl->n == pl->cap) {
        int32_t cap = pl->cap ? pl->cap * 2 : 64;
        live_block *nb = realloc(pl->blocks, (size_t)cap * sizeof *nb);
        if (!nb) return -1;
        pl->blocks = nb;
        pl->cap = cap;
    }
    memmove(&pl->blocks[at + 1], &pl->blocks[at], (size_t)(pl->n - at) * sizeof *pl->blocks);
    pl->blocks[at] = (live_block){pos, size, end};
    pl->n++;
    if (pos + size > pl->top) pl->top = pos + size;
    return pos;
}

static tt_status check_supported(const tt_ir_program *p) {
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if ((unsigned)n->op >= TT_OP_COUNT) return tt_error(TT_STATUS_INTERNAL, "host: bad op %d", (int)n->op);
        for (int32_t o = 0; o < n->n_outputs; o++)
            if (p->types[n->outputs[o]].rank > TT_MAX_RANK || (unsigned)p->types[n->outputs[o]].dtype >= TT_DTYPE_COUNT)
                return tt_error(TT_STATUS_INTERNAL, "host: bad result type at node %d", (int)k);
    }
    return tt_kernel_check_program(p);
}

/* A reshape run by the interpreter (not in a fused group) whose result is not a program output (last use nn). */
static bool reshape_aliases(const tt_ir_program *p, const tt_host_fusion *f, const int64_t *last, int32_t k) {
    return p->nodes[k].op == TT_OP_RESHAPE && tt_host_fuse_group_of(f, k) < 0 && last[p->nodes[k].outputs[0]] < p->n_nodes;
}

/* The plan's tables and the record (accepts NULL). */
static void plan_free(tt_executable *e) {
    if (!e) return;
    tt_host_fuse_free(e->fusion);
    free(e->slot);
    free(e->scratch);
    free(e->fixed);
    free(e->dot_only);
    free(e);
}

static tt_status compile_impl(tt_ir_program *p, bool chunk, tt_executable **out) {
    *out = NULL;
    if (!p) return tt_error(TT_STATUS_INVALID_ARGUMENT, "host compile: NULL program");
    tt_status st = check_supported(p);
    if (st != TT_OK) return st;
    tt_executable *e = calloc(1, sizeof *e);
    int32_t nv = p->n_values, nn = p->n_nodes;
    int64_t *last = malloc(((size_t)nv + 1) * sizeof *last);
    planner pl = {0};
    if (!e) goto oom;
    e->slot = malloc(((size_t)nv + 1) * sizeof *e->slot);
    e->scratch = malloc(((size_t)nn + 1) * sizeof *e->scratch);
    e->fixed = calloc((size_t)nv + 1, sizeof *e->fixed);
    e->dot_only = calloc((size_t)nv + 1, sizeof *e->dot_only);
    if (!last || !e->slot || !e->scratch || !e->fixed || !e->dot_only) goto oom;
    st = tt_host_fuse_plan(p, &e->fusion);
    if (st != TT_OK) goto fail;

    /* Last use of every value: when the last node reading it runs (a fused member runs with its group, at the
     * group's exec node); program outputs live to the end (index nn). */
    for (int32_t v = 0; v < nv; v++) {
        last[v] = p->value_node[v];
        e->slot[v] = NO_SLOT;
    }
    for (int32_t k = 0; k < nn; k++) {
        const tt_ir_node *n = &p->nodes[k];
        int32_t g = tt_host_fuse_group_of(e->fusion, k);
        int64_t at = g >= 0 ? tt_host_fuse_exec_node(e->fusion, g) : k;
        for (int32_t i = 0; i < n->n_inputs; i++) {
            tt_ir_value v = p->operands[n->inputs_offset + i];
            if (at > last[v]) last[v] = at;
        }
    }
    for (int32_t o = 0; o < p->n_outputs; o++) last[p->outputs[o]] = nn;
    /* A plain reshape that is not an output takes its operand's memory (values are never written after they are
     * made): no slot, and the operand lives as long as the reshape does (backwards, so chains pass it on). */
    for (int32_t k = nn - 1; k >= 0; k--)
        if (reshape_aliases(p, e->fusion, last, k)) {
            tt_ir_value x = p->operands[p->nodes[k].inputs_offset], r = p->nodes[k].outputs[0];
            if (last[r] > last[x]) last[x] = last[r];
        }
    /* So does a group output another output of its group stores (tt_host_fuse_alias): then its root lives on. */
    for (int32_t v = 0; v < nv; v++) {
        tt_ir_value root = tt_host_fuse_alias(e->fusion, v);
        if (root >= 0 && last[v] > last[root]) last[root] = last[v];
    }
    for (int32_t k = 0; k < nn; k++) /* dot_only: set by a dot's use, cleared by any other (outputs included) */
        for (int32_t i = 0; i < p->nodes[k].n_inputs; i++) e->dot_only[p->operands[p->nodes[k].inputs_offset + i]] = true;
    for (int32_t k = 0; k < nn; k++)
        for (int32_t i = 0; p->nodes[k].op != TT_OP_DOT_GENERAL && i < p->nodes[k].n_inputs; i++)
            e->dot_only[p->operands[p->nodes[k].inputs_offset + i]] = false;
    for (int32_t o = 0; o < p->n_outputs; o++) e->dot_only[p->outputs[o]] = false;

    /* Leaves are written before the first node runs, so they are placed first (live from the start). Then
     * the other nodes in order: their results and scratch. */
    for (int pass = 0; pass < 2; pass++)
    for (int32_t k = 0; k < nn; k++) {
        const tt_ir_node *n = &p->nodes[k];
        bool leaf = n->op == TT_OP_PARAMETER || n->op == TT_OP_SCALAR_PARAMETER || n->op == TT_OP_CONSTANT;
        if (leaf != (pass == 0)) continue;
        if (pass == 1) planner_expire(&pl, k);
        for (int32_t o = 0; o < n->n_outputs; o++) {
            tt_ir_value v = n->outputs[o];
            if (tt_host_fuse_internal(e->fusion, v)) continue; /* lives only in tiles */
            if (reshape_aliases(p, e->fusion, last, k) || tt_host_fuse_alias(e->fusion, v) >= 0) continue;
            int64_t size = (int64_t)round64(value_bytes(p, v));
            if (n->op == TT_OP_PARAMETER) {
                /* Read in place; a slot only when it is a program output (copied before results are written,
                 * since results may alias the parameter's buffer). */
                if (last[v] != nn) continue;
            } else if (n->op == TT_OP_CONSTANT) {
                const uint8_t *src = p->constants + n->attrs.constant.offset;
                if (((uintptr_t)src & 15) == 0) {
                    e->fixed[v] = src;
                    continue;
                }
            }
            int64_t off = planner_alloc(&pl, size, last[v]);
            if (off < 0) goto oom;
            e->slot[v] = off;
        }
        int32_t g = tt_host_fuse_group_of(e->fusion, k);
        size_t sb = leaf ? 0 : g < 0 ? tt_host_scratch_bytes(p, n)
                  : tt_host_fuse_exec_node(e->fusion, g) == k ? tt_host_fuse_scratch_bytes(e->fusion, g) : 0;
        e->scratch[k] = NO_SLOT;
        if (sb) {
            int64_t off = planner_alloc(&pl, (int64_t)round64(sb), k);
            if (off < 0) goto oom;
            e->scratch[k] = off;
        }
    }
    e->table_bytes = round64((size_t)nv * sizeof(void *) + 1);
    e->arena_bytes = (size_t)pl.top;
    /* Arenas are allocated on first use: a row-blocked program may never run whole. */
    int nt = tt_host_num_threads();
    e->n_arenas = nt + 1 < MAX_ARENAS ? nt + 1 : MAX_ARENAS;
    for (int32_t k = 0; k < e->n_arenas; k++) {
        if (pthread_mutex_init(&e->locks[k], NULL) != 0) {
            for (int32_t j = 0; j < k; j++) pthread_mutex_destroy(&e->locks[j]);
            goto oom;
        }
    }
    free(pl.blocks);
    free(last);
    if (chunk) e->shallow = true;
    else tt_ir_program_retain(p);
    e->p = p;
    e->owner = chunk ? planning_owner : NULL;
    if (!chunk) {
        planning_owner = e;
        st = tt_host_rows_plan(p, &e->rows);
        planning_owner = NULL;
        if (st != TT_OK) {
            tt_host_executable_free(e);
            return st;
        }
    }
    *out = e;
    return TT_OK;
oom:
    st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
fail:
    free(pl.blocks);
    free(last);
    plan_free(e);
    return st;
}

tt_status tt_host_compile(tt_ir_program *p, tt_executable **out) { return compile_impl(p, false, out); }
int64_t tt_host_executable_row_blocks(const tt_executable *e) { return e ? tt_host_rows_blocks(e->rows) : 0; }
void tt_host_executable_fail_row_block(tt_executable *e, int64_t block) {
    if (e) tt_host_rows_fail_block(e->rows, block);
}
tt_status tt_host_compile_chunk(tt_ir_program *p, tt_executable **out) { return compile_impl(p, true, out); }

void tt_host_executable_free(tt_executable *e) {
    if (!e) return;
    tt_host_rows_free(e->rows);
    if (e->shallow) {
        free(e->p->types);
        free(e->p);
    } else {
        tt_ir_program_destroy(e->p);
    }
    for (int32_t k = 0; k < e->n_arenas; k++) {
        pthread_mutex_destroy(&e->locks[k]);
        if (e->arenas[k] && e->owner) atomic_fetch_sub(&e->owner->held_bytes, e->table_bytes + e->arena_bytes);
        free(e->arenas[k]);
    }
    plan_free(e);
}
