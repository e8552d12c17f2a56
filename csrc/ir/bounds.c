/* bounds.c — tt_ir_expand_bounds_checks: a bounds-checked gather or scatter (an index PyTorch must reject) as
 * extra program outputs, for a backend that cannot raise from inside a program (XLA clamps or drops instead).
 *
 * Each checked node gets one i64[2] output: the position of its first out-of-range index component (in the
 * order the host driver checks them: index vectors row-major, then components in the order tested) or INT64_MAX
 * when there is none, and that component's value. The driver reads it after the run and raises PyTorch's error
 * (tt_ir_bounds_status) for the node, as the host driver does while running. */
#include "ir_internal.h"

#include <stdlib.h>
#include <string.h>

tt_status tt_ir_bounds_status(tt_ir_bounds_error kind, int64_t v, int64_t d, int64_t n) {
    if (kind == TT_IR_BOUNDS_TARGET) return tt_error(TT_STATUS_INDEX, "Target %lld is out of bounds.", (long long)v);
    return tt_error(kind == TT_IR_BOUNDS_RUNTIME ? TT_STATUS_INVALID_ARGUMENT : TT_STATUS_INDEX,
                    "index %lld is out of bounds for dimension %lld with size %lld", (long long)v, (long long)d,
                    (long long)n);
}

typedef struct checks {
    tt_ir_bounds_check *list;
    tt_ir_value *flags; /* per check: its i64[2] in the new program */
    int32_t n, cap;
} checks;

/* The check of node n: per index component k, the highest valid start (hi[k]) and its rank in the order the host
 * tests components (order[k]); the check lists operand dim and size by that rank. */
static void describe(const tt_ir_program *p, const tt_ir_node *n, tt_ir_bounds_check *c, int64_t *hi, int64_t *order) {
    const tt_ir_value *ins = p->operands + n->inputs_offset;
    const tt_ir_type *opt = &p->types[ins[0]];
    memset(c, 0, sizeof *c);
    c->node = (int32_t)(n - p->nodes);
    if (n->op == TT_OP_GATHER) {
        const __typeof__(n->attrs.gather) *g = &n->attrs.gather;
        c->kind = g->bounds_error;
        c->n_components = (int32_t)g->start_index_map.n;
        for (int32_t k = 0; k < c->n_components; k++) { /* tested in index-vector order */
            int64_t d = g->start_index_map.v[k];
            c->dim[k] = d;
            c->size[k] = opt->dims[d];
            hi[k] = opt->dims[d] - g->slice_sizes.v[d];
            order[k] = k;
        }
        return;
    }
    const __typeof__(n->attrs.scatter) *s = &n->attrs.scatter;
    const tt_ir_type *ut = &p->types[ins[2]];
    int64_t wsize[TT_MAX_RANK];
    int32_t wd = 0;
    for (int32_t d = 0; d < opt->rank; d++) {
        bool inserted = false;
        for (int64_t i = 0; i < s->inserted_window_dims.n; i++) inserted |= s->inserted_window_dims.v[i] == d;
        wsize[d] = inserted || wd >= s->update_window_dims.n ? 1 : ut->dims[s->update_window_dims.v[wd++]];
    }
    c->kind = s->bounds_error;
    c->n_components = (int32_t)s->scatter_dims_to_operand_dims.n;
    for (int32_t k = 0; k < c->n_components; k++) { /* tested in operand-dim order */
        int64_t d = s->scatter_dims_to_operand_dims.v[k];
        order[k] = 0;
        for (int32_t j = 0; j < c->n_components; j++) order[k] += s->scatter_dims_to_operand_dims.v[j] < d;
        c->dim[order[k]] = d;
        c->size[order[k]] = opt->dims[d];
        hi[k] = opt->dims[d] - wsize[d];
    }
}

static tt_ir_value splat_i64(tt_ir_builder *b, int64_t v, int32_t rank, const int64_t *dims) {
    return tt_ir_broadcast_in_dim(b, tt_ir_constant(b, TT_I64, 0, NULL, &v), rank, dims, NULL);
}

/* The i64[2] (first bad position or INT64_MAX, its value) of indices idx for check c. */
static tt_ir_value flag_of(tt_ir_builder *b, const tt_ir_type *it, int64_t ivd, tt_ir_value idx, int32_t nvec,
                           const int64_t *hi, const int64_t *order) {
    /* index vectors as rows: [B, nvec] */
    int64_t numel = tt_numel(it->rank, it->dims), rows = nvec ? numel / nvec : 0;
    if (ivd < it->rank) {
        int64_t perm[TT_MAX_RANK];
        int32_t k = 0;
        for (int32_t d = 0; d < it->rank; d++)
            if (d != ivd) perm[k++] = d;
        perm[k] = ivd;
        idx = tt_ir_transpose(b, idx, perm);
    }
    const int64_t shape[2] = {rows, nvec};
    tt_ir_value v = tt_ir_convert(b, tt_ir_reshape(b, idx, 2, shape), TT_I64);
    tt_ir_value his = tt_ir_broadcast_in_dim(b, tt_ir_constant(b, TT_I64, 1, (const int64_t[]){nvec}, hi), 2, shape,
                                             (const int64_t[]){1});
    tt_ir_value bad = tt_ir_binary(b, TT_OP_OR, tt_ir_compare(b, TT_CMP_LT, v, splat_i64(b, 0, 2, shape)),
                                   tt_ir_compare(b, TT_CMP_GT, v, his));
    /* position = row * nvec + order[component] */
    tt_ir_value pos = tt_ir_binary(
        b, TT_OP_ADD, tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, 2, shape, 0), splat_i64(b, nvec, 2, shape)),
        tt_ir_broadcast_in_dim(b, tt_ir_constant(b, TT_I64, 1, (const int64_t[]){nvec}, order), 2, shape,
                               (const int64_t[]){1}));
    const int64_t both[2] = {0, 1};
    tt_ir_value first =
        tt_ir_reduce(b, TT_REDUCE_MIN, tt_ir_select(b, bad, pos, splat_i64(b, INT64_MAX, 2, shape)), 2, both);
    tt_ir_value hit = tt_ir_compare(b, TT_CMP_EQ, pos, tt_ir_broadcast_in_dim(b, first, 2, shape, NULL));
    tt_ir_value value = tt_ir_reduce(b, TT_REDUCE_ADD, tt_ir_select(b, hit, v, splat_i64(b, 0, 2, shape)), 2, both);
    const int64_t one = 1;
    tt_ir_value parts[2] = {tt_ir_reshape(b, first, 1, &one), tt_ir_reshape(b, value, 1, &one)};
    return tt_ir_concatenate(b, 2, parts, 0);
}

static bool checked(const tt_ir_node *n) {
    return (n->op == TT_OP_GATHER && n->attrs.gather.check_bounds) ||
           (n->op == TT_OP_SCATTER && n->attrs.scatter.check_bounds);
}

static tt_ir_value add_check(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_node *n, const tt_ir_value *in,
                             void *user) {
    if (!checked(n)) return TT_IR_NONE;
    checks *cs = user;
    tt_ir_value r = n->op == TT_OP_GATHER ? tt_ir_gather(b, in[0], in[1], &n->attrs)
                                           : tt_ir_scatter(b, in[0], in[1], in[2], &n->attrs);
    const tt_ir_type *it = &p->types[p->operands[n->inputs_offset + 1]];
    int64_t ivd = n->op == TT_OP_GATHER ? n->attrs.gather.index_vector_dim : n->attrs.scatter.index_vector_dim;
    if (tt_numel(it->rank, it->dims) == 0) return r; /* no index, nothing to check */
    if (cs->n == cs->cap) {
        int32_t cap = cs->cap ? cs->cap * 2 : 4;
        tt_ir_bounds_check *l = realloc(cs->list, sizeof *l * (size_t)cap);
        if (l) cs->list = l;
        tt_ir_value *f = l ? realloc(cs->flags, sizeof *f * (size_t)cap) : NULL;
        if (f) cs->flags = f;
        if (!l || !f) {
            tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "bounds checks: out of memory");
            return r;
        }
        cs->cap = cap;
    }
    tt_ir_bounds_check *c = &cs->list[cs->n];
    int64_t hi[TT_MAX_RANK], order[TT_MAX_RANK];
    describe(p, n, c, hi, order);
    int32_t nvec = ivd < it->rank ? (int32_t)it->dims[ivd] : 1;
    if (nvec != c->n_components || nvec < 1) {
        tt_ir_builder_fail(b, TT_STATUS_UNSUPPORTED, "bounds checks: %d index components for %d mapped dims",
                           (int)nvec, (int)c->n_components);
        return r;
    }
    cs->flags[cs->n++] = flag_of(b, it, ivd, in[1], nvec, hi, order);
    return r;
}

tt_status tt_ir_expand_bounds_checks(tt_ir_program *p, tt_ir_program **out, tt_ir_bounds_check **list,
                                     int32_t *n_checks) {
    *out = NULL;
    *list = NULL;
    *n_checks = 0;
    bool any = false;
    for (int32_t i = 0; i < p->n_nodes && !any; i++) any = checked(&p->nodes[i]);
    if (!any) {
        tt_ir_program_retain(p);
        *out = p;
        return TT_OK;
    }
    checks cs = {NULL, NULL, 0, 0};
    tt_ir_builder *b = NULL;
    tt_status st = tt_ir_rewrite_begin(p, add_check, &cs, &b);
    for (int32_t i = 0; st == TT_OK && i < cs.n; i++) tt_ir_builder_add_output(b, cs.flags[i]);
    if (st == TT_OK) st = tt_ir_builder_finish(b, out);
    tt_ir_builder_destroy(b);
    free(cs.flags);
    if (st != TT_OK) {
        free(cs.list);
        return st;
    }
    *list = cs.list;
    *n_checks = cs.n;
    return TT_OK;
}
