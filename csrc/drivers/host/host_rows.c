/* host_rows.c — row-chunked execution: run a whole program one block of leading rows at a time.
 *
 * softmax, layer_norm, gelu and most elementwise programs keep their K leading dims ("rows", e.g. batch, head,
 * query for softmax) through every node: elementwise ops, broadcasts that map them to themselves (or broadcast
 * small leaves read whole, e.g. a weight), reshapes that keep them, reductions over the other dims. Such a program
 * computed on a box of rows only reads that box of its row-split inputs, so it can run block by block: each
 * block's temporaries (the max, the exp, the sums...) stay in cache instead of streaming every intermediate
 * through memory, and blocks run in parallel on the pool. A block is a sub-box [1.., b_j, L_j+1.., L_K-1] of the
 * leading shape L (b_j divides L_j), run by a chunk executable: the same nodes with the leading dims of row-split
 * values set to the block's (host_compile.c compiles it), on views offset to the block. Values and their rounding
 * are exactly those of the whole-program run; reductions see the same rows, so results are identical.
 * TORCHTPU_HOST_ROWS=0 disables it.
 */
#include "host_internal.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TARGET_BLOCK_BYTES ((int64_t)256 << 10) /* all of a block's values, about L2-sized */
#define MIN_PROGRAM_BYTES ((int64_t)1 << 20)    /* smaller programs run whole */
#define MAX_INVARIANT_NUMEL 65536               /* computed leaves that every block recomputes */

struct tt_host_rows {
    const tt_ir_program *p;     /* borrowed from the executable that owns this plan */
    int32_t j;                  /* the block spans b_j of leading dim j and all leading dims after it */
    int64_t bj, n_blocks;
    int64_t grid[TT_MAX_RANK];  /* blocks along leading dims 0..j */
    tt_executable *full;        /* runs one block */
    bool *split_param;          /* per parameter index */
    int64_t fail_block;         /* testing: this block fails (-1: none) */
};

void tt_host_rows_free(tt_host_rows *r) {
    if (!r) return;
    tt_host_executable_free(r->full);
    free(r->split_param);
    free(r);
}

static bool is_leaf(tt_ir_op op) { return op == TT_OP_PARAMETER || op == TT_OP_SCALAR_PARAMETER || op == TT_OP_CONSTANT; }
static bool is_elementwise(tt_ir_op op) { return op >= TT_OP_ABS && op <= TT_OP_CONVERT; }

/* Whether t starts with the leading shape L[0..K-1]. */
static bool has_rows(const tt_ir_type *t, int32_t K, const int64_t *L) {
    if (t->rank < K) return false;
    for (int32_t d = 0; d < K; d++)
        if (t->dims[d] != L[d]) return false;
    return true;
}

/* Marks split[v] for every value; false when some node does not keep the K leading dims L. */
static bool classify(const tt_ir_program *p, int32_t K, const int64_t *L, bool *split) {
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (n->n_outputs != 1) return false;
        tt_ir_value v = n->outputs[0];
        const tt_ir_type *t = &p->types[v];
        if (is_leaf(n->op)) {
            split[v] = n->op == TT_OP_PARAMETER && has_rows(t, K, L);
            continue;
        }
        bool any = false;
        for (int32_t i = 0; i < n->n_inputs; i++) any |= split[p->operands[n->inputs_offset + i]];
        /* A broadcast of a leaf-only value to the rows is row-split too (each block broadcasts to its rows). */
        if (n->op == TT_OP_BROADCAST_IN_DIM && has_rows(t, K, L)) any = true;
        split[v] = any;
        if (!any) {
            /* Computed from leaves alone: every block recomputes it, so only small elementwise-like work. */
            if (!(is_elementwise(n->op) || n->op == TT_OP_BROADCAST_IN_DIM || n->op == TT_OP_RESHAPE)) return false;
            if (tt_host_numel(t) > MAX_INVARIANT_NUMEL) return false;
            continue;
        }
        if (!has_rows(t, K, L)) return false;
        if (is_elementwise(n->op)) {
            for (int32_t i = 0; i < n->n_inputs; i++)
                if (!split[p->operands[n->inputs_offset + i]]) return false;
        } else if (n->op == TT_OP_BROADCAST_IN_DIM) {
            const tt_ir_type *xt = tt_host_in_type(p, n, 0);
            bool xs = split[p->operands[n->inputs_offset]];
            for (int32_t i = 0; i < xt->rank; i++) {
                int64_t d = n->attrs.broadcast.dims.v[i];
                /* A split operand's rows become the result's rows; anything else must not vary along them. */
                if (xs && i < K && d != i) return false;
                if (!xs && d < K && xt->dims[i] != 1) return false;
            }
        } else if (n->op == TT_OP_RESHAPE) {
            /* Keeping the leading dims keeps each row's elements together (row-major). */
        } else if (n->op == TT_OP_REDUCE) {
            for (int64_t i = 0; i < n->attrs.reduce.dims.n; i++)
                if (n->attrs.reduce.dims.v[i] < K) return false;
        } else {
            return false;
        }
    }
    for (int32_t o = 0; o < p->n_outputs; o++)
        if (!split[p->outputs[o]]) return false;
    return true;
}

/* A copy of p whose row-split values have the block's leading dims: 1 before j, bj at j (owned by the chunk
 * executable). */
static tt_status chunk_exe(const tt_ir_program *p, const bool *split, int32_t j, int64_t bj, tt_executable **out) {
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
    for (int32_t v = 0; v < p->n_values; v++) {
        if (!split[v]) continue;
        for (int32_t d = 0; d < j; d++) types[v].dims[d] = 1;
        types[v].dims[j] = bj;
    }
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
    if (p->n_outputs < 1) return TT_OK;
    const tt_ir_type *ot = &p->types[p->outputs[0]];
    bool *split = calloc((size_t)p->n_values + 1, sizeof *split);
    if (!split) return tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
    tt_status st = TT_OK;
    /* The most leading dims that work (all but the output's last, first: rows of a softmax or a norm). */
    int32_t K = ot->rank > 1 ? ot->rank - 1 : ot->rank;
    for (; K >= 1; K--) {
        memset(split, 0, ((size_t)p->n_values + 1) * sizeof *split);
        if (classify(p, K, ot->dims, split)) break;
    }
    if (K < 1) goto out;
    int64_t R = 1, total = 0;
    for (int32_t d = 0; d < K; d++) R *= ot->dims[d];
    for (int32_t v = 0; v < p->n_values; v++)
        if (split[v]) total += tt_host_numel(&p->types[v]) * (int64_t)tt_dtype_size(p->types[v].dtype);
    if (R < 2 || total < MIN_PROGRAM_BYTES) goto out;
    /* Rows per block: about TARGET_BLOCK_BYTES of values, and at least two blocks per thread. */
    int64_t per_row = total / R > 0 ? total / R : 1;
    int64_t want = TARGET_BLOCK_BYTES / per_row, nt = tt_host_num_threads();
    int64_t par = R / (2 * nt);
    if (want > par) want = par;
    if (want < 1) want = 1;
    /* The block: whole inner leading dims while they fit, then the largest divisor of the next one. */
    int32_t j = K - 1;
    int64_t inner = 1;
    while (j > 0 && inner * ot->dims[j] <= want) inner *= ot->dims[j--];
    int64_t bj = 1;
    for (int64_t c = 1; c <= ot->dims[j]; c++)
        if (ot->dims[j] % c == 0 && c * inner <= want) bj = c;
    tt_host_rows *r = calloc(1, sizeof *r);
    if (!r) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
        goto out;
    }
    r->p = p;
    r->fail_block = -1;
    r->j = j;
    r->bj = bj;
    r->n_blocks = 1;
    for (int32_t d = 0; d <= j; d++) {
        r->grid[d] = d < j ? ot->dims[d] : ot->dims[d] / bj;
        r->n_blocks *= r->grid[d];
    }
    r->split_param = calloc((size_t)p->n_params + 1, sizeof *r->split_param);
    if (!r->split_param) st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host compile: out of host memory");
    for (int32_t i = 0; st == TT_OK && i < p->n_params; i++) r->split_param[i] = split[p->params[i]];
    if (st == TT_OK && r->n_blocks < 2) {
        tt_host_rows_free(r); /* one block: nothing to gain */
        goto out;
    }
    if (st == TT_OK) st = chunk_exe(p, split, j, bj, &r->full);
    if (st != TT_OK) tt_host_rows_free(r);
    else *out = r;
out:
    free(split);
    return st;
}

int64_t tt_host_rows_blocks(const tt_host_rows *r) { return r ? r->n_blocks : 0; }

void tt_host_rows_fail_block(tt_host_rows *r, int64_t block) {
    if (r) r->fail_block = block;
}

typedef struct rows_job {
    const tt_host_rows *r;
    const tt_exec_arg *args, *results;
    int32_t n_args, n_results;
    atomic_int failed;         /* set by the first failing block, which alone writes status and msg */
    tt_status status;
    char msg[512];
    int32_t node;              /* the failing node (tt_error_node) */
} rows_job;

/* Element offset of block b in a view with these strides. */
static int64_t block_offset(const tt_host_rows *r, int64_t b, const int64_t *strides) {
    int64_t off = 0;
    for (int32_t d = r->j; d >= 0; d--) {
        int64_t i = b % r->grid[d];
        b /= r->grid[d];
        off += (d == r->j ? i * r->bj : i) * strides[d];
    }
    return off;
}

static void run_blocks(void *user, int64_t begin, int64_t end) {
    rows_job *j = user;
    const tt_host_rows *r = j->r;
    tt_exec_arg a[32], res[16];
    for (int64_t b = begin; b < end; b++) {
        if (atomic_load(&j->failed)) return;
        memcpy(a, j->args, (size_t)j->n_args * sizeof *a);
        memcpy(res, j->results, (size_t)j->n_results * sizeof *res);
        for (int32_t i = 0; i < j->n_args; i++)
            if (r->split_param[i]) a[i].offset += block_offset(r, b, a[i].strides);
        for (int32_t o = 0; o < j->n_results; o++) res[o].offset += block_offset(r, b, res[o].strides);
        tt_status st = b == r->fail_block ? tt_error(TT_STATUS_INTERNAL, "host rows: block %lld failed (test)", (long long)b)
                                          : tt_host_execute(r->full, a, j->n_args, res, j->n_results);
        if (st != TT_OK && atomic_exchange(&j->failed, 1) == 0) {
            j->status = st;
            j->node = tt_error_node();
            snprintf(j->msg, sizeof j->msg, "%s", tt_last_error());
        }
    }
}

static bool same_view(const tt_exec_arg *a, const tt_exec_arg *b, int32_t rank) {
    if (a->offset != b->offset) return false;
    for (int32_t d = 0; d < rank; d++)
        if (a->strides[d] != b->strides[d]) return false;
    return true;
}

tt_status tt_host_rows_execute(tt_host_rows *r, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                               int32_t n_results, bool *declined) {
    *declined = true;
    if (n_args > 32 || n_results > 16) return TT_OK;
    /* Blocks write their rows as they go: a result may share a buffer only with a row-split argument read
     * through the very same view (an in-place update), never with another result. */
    for (int32_t o = 0; o < n_results; o++) {
        for (int32_t o2 = 0; o2 < o; o2++)
            if (results[o2].buffer == results[o].buffer) return TT_OK;
        for (int32_t i = 0; i < n_args; i++) {
            if (!args[i].buffer || args[i].buffer != results[o].buffer) continue;
            int32_t rank = r->p->types[r->p->params[i]].rank;
            if (!r->split_param[i] || !same_view(&args[i], &results[o], rank)) return TT_OK;
        }
    }
    /* From here on blocks write results (possibly over their own in-place inputs): a failure is reported as it is,
     * never answered by re-running the program over a half-written input. */
    *declined = false;
    rows_job j = {r, args, results, n_args, n_results, 0, TT_OK, {0}, -1};
    tt_host_parallel_for(r->n_blocks, 1, run_blocks, &j);
    if (!atomic_load(&j.failed)) return TT_OK;
    /* the failing block ran on a pool thread: carry its message (and node: chunks keep the node order) over */
    tt_status st = tt_error(j.status, "%s", j.msg);
    tt_error_set_node(j.node);
    return st;
}
