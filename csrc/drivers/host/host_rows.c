/* host_rows.c — row-chunked execution: run a whole program one block of leading rows at a time.
 *
 * softmax, layer_norm, gelu and most elementwise programs keep the leading dim through every node: elementwise
 * ops, broadcasts that map it to itself (or broadcast small leaves read whole, e.g. a weight), reshapes that keep
 * it, reductions over the other dims. Such a program computed on rows [r0, r1) only reads rows [r0, r1) of its
 * row-split inputs, so it can run block by block: each block's temporaries (the max, the exp, the sums...) stay
 * in cache instead of streaming every intermediate through memory, and blocks run in parallel on the pool. A
 * block runs a chunk executable: the same nodes with the leading dim of row-split values set to the block's rows
 * (host_exec.c compiles it), on views offset to the block. Values and their rounding are exactly those of the
 * whole-program run; reductions see the same rows, so results are identical.
 */
#include "host_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_BLOCK_BYTES ((int64_t)256 << 10) /* all of a block's values, about L2-sized */
#define MIN_PROGRAM_BYTES ((int64_t)1 << 20)    /* smaller programs run whole */
#define MAX_INVARIANT_NUMEL 65536               /* computed leaves that every block recomputes */

struct tt_host_rows {
    const tt_ir_program *p;     /* borrowed from the executable that owns this plan */
    int64_t rows, block, n_blocks;
    tt_executable *full, *tail; /* block rows, and the last block's when it is shorter (else NULL) */
    bool *split_param;          /* per parameter index */
};

void tt_host_rows_free(tt_host_rows *r) {
    if (!r) return;
    tt_host_executable_free(r->full);
    tt_host_executable_free(r->tail);
    free(r->split_param);
    free(r);
}

static bool is_leaf(tt_ir_op op) { return op == TT_OP_PARAMETER || op == TT_OP_SCALAR_PARAMETER || op == TT_OP_CONSTANT; }
static bool is_elementwise(tt_ir_op op) { return op >= TT_OP_ABS && op <= TT_OP_CONVERT; }

/* Marks split[v] for every value; false when some node does not keep the leading dim. */
static bool classify(const tt_ir_program *p, int64_t R, bool *split) {
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (n->n_outputs != 1) return false;
        tt_ir_value v = n->outputs[0];
        const tt_ir_type *t = &p->types[v];
        if (is_leaf(n->op)) {
            split[v] = n->op == TT_OP_PARAMETER && t->rank >= 1 && t->dims[0] == R;
            continue;
        }
        bool any = false;
        for (int32_t i = 0; i < n->n_inputs; i++) any |= split[p->operands[n->inputs_offset + i]];
        split[v] = any;
        if (!any) {
            /* Computed from leaves alone: every block recomputes it, so only small elementwise-like work. */
            if (!(is_elementwise(n->op) || n->op == TT_OP_BROADCAST_IN_DIM || n->op == TT_OP_RESHAPE)) return false;
            if (tt_host_numel(t) > MAX_INVARIANT_NUMEL) return false;
            continue;
        }
        if (t->rank < 1 || t->dims[0] != R) return false;
        if (is_elementwise(n->op)) {
            for (int32_t i = 0; i < n->n_inputs; i++)
                if (!split[p->operands[n->inputs_offset + i]]) return false;
        } else if (n->op == TT_OP_BROADCAST_IN_DIM) {
            const tt_ir_type *xt = tt_host_in_type(p, n, 0);
            if (split[p->operands[n->inputs_offset]]) {
                if (n->attrs.broadcast.dims.v[0] != 0) return false; /* its rows become the result's rows */
            } else {
                /* Read whole by every block: it must not vary along the result's rows. */
                for (int32_t i = 0; i < xt->rank; i++)
                    if (n->attrs.broadcast.dims.v[i] == 0 && xt->dims[i] != 1) return false;
            }
        } else if (n->op == TT_OP_RESHAPE) {
            /* Keeping dim 0 keeps each row's elements together (row-major). */
        } else if (n->op == TT_OP_REDUCE) {
            for (int64_t i = 0; i < n->attrs.reduce.dims.n; i++)
                if (n->attrs.reduce.dims.v[i] == 0) return false;
        } else {
            return false;
        }
    }
    for (int32_t o = 0; o < p->n_outputs; o++)
        if (!split[p->outputs[o]]) return false;
    return true;
}

/* A copy of p with the leading dim of row-split values set to rows (owned by the chunk executable). */
static tt_status chunk_exe(const tt_ir_program *p, const bool *split, int64_t rows, tt_executable **out) {
    *out = NULL;
    tt_ir_program *cp = malloc(sizeof *cp);
    tt_ir_type *types = malloc(((size_t)p->n_values + 1) * sizeof *types);
    if (!cp || !types) {
        free(cp);
        free(types);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
    }
    *cp = *p;
    memcpy(types, p->types, (size_t)p->n_values * sizeof *types);
    for (int32_t v = 0; v < p->n_values; v++)
        if (split[v]) types[v].dims[0] = rows;
    cp->types = types;
    cp->refcount = 1;
    tt_status st = tt_host_compile_chunk(cp, out);
    if (st != TT_OK) {
        free(types);
        free(cp);
    }
    return st;
}

tt_status tt_host_rows_plan(const tt_ir_program *p, tt_host_rows **out) {
    *out = NULL;
    const char *env = getenv("TORCHTPU_HOST_ROWS");
    if (env && env[0] == '0' && env[1] == 0) return TT_OK;
    if (p->n_outputs < 1 || p->types[p->outputs[0]].rank < 1) return TT_OK;
    int64_t R = p->types[p->outputs[0]].dims[0];
    if (R < 2) return TT_OK;
    bool *split = calloc((size_t)p->n_values + 1, sizeof *split);
    if (!split) return tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
    tt_status st = TT_OK;
    if (!classify(p, R, split)) goto out;
    int64_t total = 0;
    for (int32_t v = 0; v < p->n_values; v++)
        if (split[v]) total += tt_host_numel(&p->types[v]) * (int64_t)tt_dtype_size(p->types[v].dtype);
    if (total < MIN_PROGRAM_BYTES) goto out;
    int64_t per_row = total / R > 0 ? total / R : 1;
    int64_t block = TARGET_BLOCK_BYTES / per_row;
    int64_t nt = tt_host_num_threads();
    int64_t par = (R + 2 * nt - 1) / (2 * nt); /* at least two blocks per thread */
    if (block > par) block = par;
    if (block < 1) block = 1;
    tt_host_rows *r = calloc(1, sizeof *r);
    if (!r) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
        goto out;
    }
    r->p = p;
    r->rows = R;
    r->block = block;
    r->n_blocks = (R + block - 1) / block;
    r->split_param = calloc((size_t)p->n_params + 1, sizeof *r->split_param);
    if (!r->split_param) st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
    for (int32_t i = 0; st == TT_OK && i < p->n_params; i++) r->split_param[i] = split[p->params[i]];
    if (st == TT_OK) st = chunk_exe(p, split, block, &r->full);
    if (st == TT_OK && R % block) st = chunk_exe(p, split, R % block, &r->tail);
    if (st != TT_OK) tt_host_rows_free(r);
    else *out = r;
out:
    free(split);
    return st;
}

typedef struct rows_job {
    const tt_host_rows *r;
    const tt_exec_arg *args, *results;
    int32_t n_args, n_results;
    atomic_int failed;
} rows_job;

static void run_blocks(void *user, int64_t begin, int64_t end) {
    rows_job *j = user;
    const tt_host_rows *r = j->r;
    tt_exec_arg a[32], res[16];
    for (int64_t b = begin; b < end; b++) {
        if (atomic_load(&j->failed)) return;
        int64_t r0 = b * r->block;
        bool last = b == r->n_blocks - 1 && r->tail;
        memcpy(a, j->args, (size_t)j->n_args * sizeof *a);
        memcpy(res, j->results, (size_t)j->n_results * sizeof *res);
        for (int32_t i = 0; i < j->n_args; i++)
            if (r->split_param[i]) a[i].offset += r0 * a[i].strides[0];
        for (int32_t o = 0; o < j->n_results; o++) res[o].offset += r0 * res[o].strides[0];
        if (tt_host_execute(last ? r->tail : r->full, a, j->n_args, res, j->n_results) != TT_OK)
            atomic_store(&j->failed, 1);
    }
}

static bool same_view(const tt_exec_arg *a, const tt_exec_arg *b, int32_t rank) {
    if (a->offset != b->offset) return false;
    for (int32_t d = 0; d < rank; d++)
        if (a->strides[d] != b->strides[d]) return false;
    return true;
}

tt_status tt_host_rows_execute(tt_host_rows *r, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                               int32_t n_results) {
    if (n_args > 32 || n_results > 16) return TT_STATUS_UNSUPPORTED;
    /* Blocks write their rows as they go: a result may share a buffer only with a row-split argument read
     * through the very same view (an in-place update), never with another result. */
    for (int32_t o = 0; o < n_results; o++) {
        for (int32_t o2 = 0; o2 < o; o2++)
            if (results[o2].buffer == results[o].buffer) return TT_STATUS_UNSUPPORTED;
        for (int32_t i = 0; i < n_args; i++) {
            if (!args[i].buffer || args[i].buffer != results[o].buffer) continue;
            int32_t rank = r->p->types[r->p->params[i]].rank;
            if (!r->split_param[i] || !same_view(&args[i], &results[o], rank)) return TT_STATUS_UNSUPPORTED;
        }
    }
    rows_job j = {r, args, results, n_args, n_results, 0};
    tt_host_parallel_for(r->n_blocks, 1, run_blocks, &j);
    /* A failed block: the caller reruns the whole program on its own thread, which reports the error there. */
    return atomic_load(&j.failed) ? TT_STATUS_UNSUPPORTED : TT_OK;
}
