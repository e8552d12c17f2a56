/* host_exec.c — execute: an interpreter over a compiled program's nodes (host_compile.c made its memory plan).
 *
 * An execution takes one of the executable's arenas (or allocates its own). Contiguous tensor parameters are read
 * in place, and so are transposed ones that only matmuls read (in their own dim order); other strided ones are
 * gathered into a malloc'd temporary. Outputs are written straight into their result buffers where they can be.
 */
#include "host_exec_internal.h"
#include "tt_kernel.h"
#include "../buffer_uses.h"

#include <stdlib.h>
#include <string.h>


/* Whether a view is the row-major layout of its shape (size-1 dims' strides do not matter). */
static bool view_contiguous(const tt_ir_type *t, const int64_t *strides) {
    int64_t s = 1;
    for (int32_t i = t->rank - 1; i >= 0; i--) {
        if (t->dims[i] != 1 && strides[i] != s) return false;
        s *= t->dims[i];
    }
    return true;
}

static tt_status check_view(const tt_ir_type *t, const tt_exec_arg *a, const char *what, int32_t i) {
    if (!a->buffer) return tt_error(TT_STATUS_INVALID_ARGUMENT, "host execute: %s %d has no buffer", what, (int)i);
    int64_t n = tt_host_numel(t);
    if (n == 0) return TT_OK;
    int64_t lo = a->offset, hi = a->offset;
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t span = (t->dims[d] - 1) * a->strides[d];
        if (span < 0) lo += span;
        else hi += span;
    }
    int64_t cap = (int64_t)(tt_host_buffer_size(a->buffer) / tt_dtype_size(t->dtype));
    if (lo < 0 || hi >= cap)
        return tt_error(TT_STATUS_INVALID_ARGUMENT,
                        "host execute: %s %d view [%lld, %lld] outside its buffer of %lld elements", what, (int)i,
                        (long long)lo, (long long)hi, (long long)cap);
    return TT_OK;
}

/* A strided view that is a dense block with its dims in another order (a transposed weight, a permuted head
 * view): perm[k] is the k-th slowest dim in memory. */
static bool permuted_dense(const tt_ir_type *t, const int64_t *strides, int8_t *perm) {
    int32_t r = t->rank;
    for (int32_t k = 0; k < r; k++) perm[k] = (int8_t)k;
    for (int32_t k = 1; k < r; k++) /* by stride, largest first (insertion sort: rank <= 8) */
        for (int32_t j = k; j > 0 && strides[perm[j]] > strides[perm[j - 1]]; j--) {
            int8_t x = perm[j];
            perm[j] = perm[j - 1];
            perm[j - 1] = x;
        }
    int64_t want = 1;
    for (int32_t k = r - 1; k >= 0; k--) {
        int32_t d = perm[k];
        if (t->dims[d] != 1 && strides[d] != want) return false;
        want *= t->dims[d];
    }
    return true;
}

/* Operands of dot nodes read in place in another dim order, for one execution. */
typedef struct dot_views {
    int32_t n;                   /* at most one per argument */
    tt_ir_value *value;
    int8_t (*perm)[TT_MAX_RANK];
} dot_views;

static const int8_t *dot_view_perm(const dot_views *dv, tt_ir_value v) {
    for (int32_t i = 0; i < dv->n; i++)
        if (dv->value[i] == v) return dv->perm[i];
    return NULL;
}

/* The dot node as it reads its permuted operands (false: one of them cannot be read so). */
static bool dot_unpermuted(const tt_ir_program *p, const tt_ir_node *n, const dot_views *dv, tt_ir_type *lt,
                           tt_ir_type *rt, tt_ir_attrs *a) {
    tt_ir_value l = p->operands[n->inputs_offset], r = p->operands[n->inputs_offset + 1];
    const int8_t *lp = dot_view_perm(dv, l), *rp = dot_view_perm(dv, r);
    *a = n->attrs;
    *lt = p->types[l];
    *rt = p->types[r];
    return (!lp || tt_host_dot_unpermute(&p->types[l], lp, &a->dot.lhs_batch, &a->dot.lhs_contract, lt)) &&
           (!rp || tt_host_dot_unpermute(&p->types[r], rp, &a->dot.rhs_batch, &a->dot.rhs_contract, rt));
}

/* Can every dot reading v read it in place in the order perm? */
static bool dots_take(const tt_ir_program *p, tt_ir_value v, const int8_t *perm) {
    int8_t one_perm[1][TT_MAX_RANK];
    memcpy(one_perm[0], perm, TT_MAX_RANK);
    dot_views one = {.n = 1, .value = &v, .perm = one_perm};
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (n->op != TT_OP_DOT_GENERAL) continue;
        if (p->operands[n->inputs_offset] != v && p->operands[n->inputs_offset + 1] != v) continue;
        tt_ir_type lt, rt;
        tt_ir_attrs a;
        if (p->operands[n->inputs_offset] == p->operands[n->inputs_offset + 1] || !dot_unpermuted(p, n, &one, &lt, &rt, &a))
            return false;
    }
    return true;
}

static void scalar_to_dtype(tt_dtype dt, const tt_exec_arg *a, void *dst) {
    if (tt_dtype_is_float(dt)) tt_host_store_f64(dt, &a->f, 1, dst);
    else tt_host_store_i64(dt, &a->i, 1, dst);
}

static tt_status run_heavy(const tt_ir_program *p, const tt_ir_node *n, void *const *vals) {
    void *out = vals[n->outputs[0]];
    switch (n->op) {
    case TT_OP_DOT_GENERAL:
        return tt_host_dot_general(p, n, tt_host_in(p, n, vals, 0), tt_host_in(p, n, vals, 1), out);
    case TT_OP_CONVOLUTION:
        return tt_host_convolution(p, n, tt_host_in(p, n, vals, 0), tt_host_in(p, n, vals, 1), out);
    default:
        return tt_host_reduce_window(p, n, tt_host_in(p, n, vals, 0), out);
    }
}

/* A custom kernel (tt_kernel.h), called on the node's dense values. */
static tt_status run_kernel(const tt_ir_program *p, const tt_ir_node *n, void *const *vals) {
    tt_kernel_tensor few[8], *in = few, out;
    if (n->n_inputs > 8 && !(in = malloc((size_t)n->n_inputs * sizeof *in)))
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "custom_call: out of host memory");
    for (int32_t i = 0; i < n->n_inputs; i++) {
        tt_ir_value v = p->operands[n->inputs_offset + i];
        in[i] = (tt_kernel_tensor){p->types[v].dtype, p->types[v].rank, p->types[v].dims, vals[v]};
    }
    tt_ir_value o = n->outputs[0];
    out = (tt_kernel_tensor){p->types[o].dtype, p->types[o].rank, p->types[o].dims, vals[o]};
    const char *target = n->attrs.custom_call.target;
    tt_status st = tt_kernel_call(target, strlen(target), in, n->n_inputs, &out, 1);
    if (in != few) free(in);
    return st;
}

static tt_status run_node(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    switch (n->op) {
    case TT_OP_PARAMETER:
    case TT_OP_SCALAR_PARAMETER:
    case TT_OP_CONSTANT:
        return TT_OK; /* set up before the loop */
    case TT_OP_IOTA: return tt_host_iota(p, n, vals, scratch);
    case TT_OP_RNG_UNIFORM: return tt_host_rng_uniform(p, n, vals, scratch);
    case TT_OP_SELECT: return tt_host_select(p, n, vals, scratch);
    case TT_OP_CONVERT: return tt_host_convert(p, n, vals, scratch);
    case TT_OP_BROADCAST_IN_DIM:
    case TT_OP_RESHAPE:
    case TT_OP_TRANSPOSE:
    case TT_OP_SLICE:
    case TT_OP_DYNAMIC_SLICE:
    case TT_OP_DYNAMIC_UPDATE_SLICE:
    case TT_OP_CONCATENATE:
    case TT_OP_PAD:
    case TT_OP_REVERSE: return tt_host_movement(p, n, vals, scratch);
    case TT_OP_GATHER: return tt_host_gather(p, n, vals, scratch);
    case TT_OP_SCATTER: return tt_host_scatter(p, n, vals, scratch);
    case TT_OP_REDUCE: return tt_host_reduce(p, n, vals, scratch);
    case TT_OP_ARG_REDUCE: return tt_host_arg_reduce(p, n, vals, scratch);
    case TT_OP_CUMULATIVE: return tt_host_cumulative(p, n, vals, scratch);
    case TT_OP_SORT: return tt_host_sort(p, n, vals, scratch);
    case TT_OP_DOT_GENERAL:
    case TT_OP_CONVOLUTION:
    case TT_OP_REDUCE_WINDOW: return run_heavy(p, n, vals);
    case TT_OP_CUSTOM_CALL: return run_kernel(p, n, vals);
    default: return tt_host_elementwise(p, n, vals, scratch);
    }
}

tt_status tt_host_execute(tt_executable *e, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                          int32_t n_results) {
    if (!e) return tt_error(TT_STATUS_INVALID_ARGUMENT, "host execute: NULL executable");
    const tt_ir_program *p = e->p;
    if (n_args != p->n_params || n_results != p->n_outputs)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "host execute: got %d arguments and %d results, program has %d and %d",
                        (int)n_args, (int)n_results, (int)p->n_params, (int)p->n_outputs);
    /* Validate every view before touching memory. */
    for (int32_t i = 0; i < n_args; i++) {
        tt_ir_value v = p->params[i];
        if (p->nodes[p->value_node[v]].op != TT_OP_PARAMETER) continue;
        tt_status st = check_view(&p->types[v], &args[i], "argument", i);
        if (st != TT_OK) return st;
    }
    for (int32_t i = 0; i < n_results; i++) {
        tt_status st = check_view(&p->types[p->outputs[i]], &results[i], "result", i);
        if (st != TT_OK) return st;
    }

    if (e->rows) {
        bool declined;
        tt_status rst = tt_host_rows_execute(e->rows, args, n_args, results, n_results, &declined);
        if (!declined) return rst;
    }
    int32_t held = -1;
    for (int32_t k = 0; k < e->n_arenas && held < 0; k++)
        if (pthread_mutex_trylock(&e->locks[k]) == 0) held = k;
    if (held >= 0 && !e->arenas[held] && (held == 0 || e->table_bytes + e->arena_bytes <= KEEP_ARENA_BYTES) &&
        (e->arenas[held] = aligned_alloc(64, e->table_bytes + e->arena_bytes)) != NULL)
        atomic_fetch_add(&(e->owner ? e->owner : e)->held_bytes, e->table_bytes + e->arena_bytes);
    bool owned = held < 0 || !e->arenas[held];
    char *arena = owned ? aligned_alloc(64, e->table_bytes + e->arena_bytes) : e->arenas[held];
    if (!arena) {
        if (held >= 0) pthread_mutex_unlock(&e->locks[held]);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "host execute: out of host memory for temporaries");
    }
    void **vals = (void **)(void *)arena;
    char *slots = arena + e->table_bytes;
    void *gathered[16];
    void **gath = gathered;
    int32_t n_gath = 0;
    /* transposed operands read in place: one per argument at most (a model's windows hold dozens of weights) */
    tt_ir_value dv_value_few[16];
    int8_t dv_perm_few[16][TT_MAX_RANK];
    dot_views dv = {.n = 0, .value = dv_value_few, .perm = dv_perm_few};
    tt_status st = TT_OK;
    bool direct_few[64];
    bool *direct = direct_few; /* per result: computed in place */
    tt_buffer_uses uses;
    uses.table = NULL;
    if (n_args > 16) {
        gath = malloc((size_t)n_args * sizeof *gath);
        dv.value = malloc((size_t)n_args * sizeof *dv.value);
        dv.perm = malloc((size_t)n_args * sizeof *dv.perm);
        if (!gath || !dv.value || !dv.perm) {
            st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host execute: out of host memory");
            goto done;
        }
    }
    for (int32_t v = 0; v < p->n_values; v++)
        vals[v] = e->fixed[v] ? (void *)(uintptr_t)e->fixed[v] : e->slot[v] != NO_SLOT ? slots + e->slot[v] : NULL;
    /* Outputs computed straight into their result buffers (saves a full copy and keeps the arena small in cache):
     * a node's value, once, into a contiguous view of a buffer that no other result uses and no argument either,
     * except the one argument it updates in place (the same view) when the plan allows (an optimizer's
     * param.mul_(...)): the parameter is then read in place too. */
    if (n_results > 64) direct = calloc((size_t)n_results, sizeof *direct);
    if (!direct) {
        st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host execute: out of host memory");
        goto done;
    }
    if ((st = tt_buffer_uses_build(&uses, args, n_args, results, n_results)) != TT_OK) goto done;
    for (int32_t o = 0; o < n_results; o++) {
        direct[o] = false;
        tt_ir_value v = p->outputs[o];
        tt_ir_op op = p->nodes[p->value_node[v]].op;
        if (op == TT_OP_PARAMETER || op == TT_OP_SCALAR_PARAMETER || op == TT_OP_CONSTANT) continue;
        if (tt_host_numel(&p->types[v]) == 0 || !view_contiguous(&p->types[v], results[o].strides)) continue;
        if (vals[v] != (e->slot[v] != NO_SLOT ? slots + e->slot[v] : NULL)) continue; /* an earlier result has it */
        const tt_buffer_use *u = tt_buffer_uses_of(&uses, results[o].buffer);
        bool ok = u->n_results == 1 && u->n_args <= 1;
        if (ok && u->n_args == 1) {
            int32_t i = u->arg;
            ok = args[i].offset == results[o].offset && p->nodes[p->value_node[p->params[i]]].op == TT_OP_PARAMETER &&
                 view_contiguous(&p->types[p->params[i]], args[i].strides) &&
                 tt_host_fuse_may_overwrite(e->fusion, p, v, p->params[i]);
        }
        if (!ok) continue;
        direct[o] = true;
        vals[v] = (char *)tt_host_buffer_data(results[o].buffer) +
                  results[o].offset * (int64_t)tt_dtype_size(p->types[v].dtype);
    }

    for (int32_t i = 0; i < n_args; i++) {
        tt_ir_value v = p->params[i];
        const tt_ir_type *t = &p->types[v];
        size_t es = tt_dtype_size(t->dtype);
        if (p->nodes[p->value_node[v]].op == TT_OP_SCALAR_PARAMETER) {
            scalar_to_dtype(t->dtype, &args[i], vals[v]);
            continue;
        }
        char *base = tt_host_buffer_data(args[i].buffer);
        if (view_contiguous(t, args[i].strides)) {
            void *src = base + args[i].offset * (int64_t)es;
            /* An output parameter gets a private copy so result writes cannot clobber it. */
            if (vals[v]) memcpy(vals[v], src, value_bytes(p, v));
            else vals[v] = src;
            continue;
        }
        /* A transposed operand of matmuls only (x @ W.t()): they read it in place, in its own dim order. */
        if (e->dot_only[v] && permuted_dense(t, args[i].strides, dv.perm[dv.n]) &&
            dots_take(p, v, dv.perm[dv.n])) {
            dv.value[dv.n++] = v;
            vals[v] = base + args[i].offset * (int64_t)es;
            continue;
        }
        void *tmp = vals[v];
        if (!tmp) {
            tmp = malloc(value_bytes(p, v) + 1);
            if (!tmp) {
                st = tt_error(TT_STATUS_OUT_OF_MEMORY, "host execute: out of host memory gathering argument %d", (int)i);
                goto done;
            }
            gath[n_gath++] = tmp;
        }
        int64_t cs[TT_MAX_RANK];
        tt_host_contiguous_strides(t->rank, t->dims, cs);
        tt_host_strided_copy(es, t->rank, t->dims, tmp, 0, cs, base, args[i].offset, args[i].strides);
        vals[v] = tmp;
    }
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (n->op == TT_OP_CONSTANT && !e->fixed[n->outputs[0]])
            memcpy(vals[n->outputs[0]], p->constants + n->attrs.constant.offset, value_bytes(p, n->outputs[0]));
    }
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        void *scratch = e->scratch[k] != NO_SLOT ? slots + e->scratch[k] : NULL;
        int32_t g = tt_host_fuse_group_of(e->fusion, k);
        if (g >= 0) {
            if (tt_host_fuse_exec_node(e->fusion, g) == k) {
                st = tt_host_fuse_run(e->fusion, g, p, vals, scratch);
                tt_host_fuse_bind_aliases(e->fusion, g, vals);
            }
        } else if (n->op == TT_OP_RESHAPE && !vals[n->outputs[0]]) {
            vals[n->outputs[0]] = vals[p->operands[n->inputs_offset]]; /* the same bytes (reshape_aliases) */
        } else if (dv.n && n->op == TT_OP_DOT_GENERAL &&
                   (dot_view_perm(&dv, p->operands[n->inputs_offset]) ||
                    dot_view_perm(&dv, p->operands[n->inputs_offset + 1]))) {
            tt_ir_type lt, rt;
            tt_ir_attrs a;
            (void)dot_unpermuted(p, n, &dv, &lt, &rt, &a); /* checked by dots_take */
            st = tt_host_dot(&lt, &rt, &p->types[n->outputs[0]], &a, tt_host_in(p, n, vals, 0), tt_host_in(p, n, vals, 1),
                             vals[n->outputs[0]]);
        } else {
            st = run_node(p, n, vals, scratch);
        }
        if (st != TT_OK) {
            tt_error_set_node(k); /* the runtime names the op that recorded node k */
            goto done;
        }
    }
    /* Every output is final in a temporary (or a private copy); now write the results. */
    for (int32_t o = 0; o < n_results; o++) {
        if (direct[o]) continue;
        tt_ir_value v = p->outputs[o];
        const tt_ir_type *t = &p->types[v];
        int64_t cs[TT_MAX_RANK];
        tt_host_contiguous_strides(t->rank, t->dims, cs);
        tt_host_strided_copy(tt_dtype_size(t->dtype), t->rank, t->dims, tt_host_buffer_data(results[o].buffer),
                             results[o].offset, results[o].strides, vals[v], 0, cs);
    }
done:
    if (direct != direct_few) free(direct); /* accepts NULL */
    tt_buffer_uses_free(&uses);
    for (int32_t i = 0; i < n_gath; i++) free(gath[i]);
    if (gath != gathered) free(gath);
    if (dv.value != dv_value_few) free(dv.value);
    if (dv.perm != dv_perm_few) free(dv.perm);
    if (owned) free(arena);
    if (held >= 0) pthread_mutex_unlock(&e->locks[held]);
    return st;
}
