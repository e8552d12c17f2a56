/* inline.c — tt_ir_builder_inline: replay a finished program into another builder through the public builder
 * functions, so every node is re-checked exactly as if it had been built there. */
#include <stdlib.h>
#include <string.h>

#include "ir_internal.h"

tt_ir_value tt_ir_inline_node(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_node *n, const tt_ir_value *in,
                              const tt_ir_value *param_values, tt_ir_value *second) {
    const tt_ir_type *t = &p->types[n->outputs[0]];
    const tt_ir_attrs *a = &n->attrs;
    if (n->op >= TT_OP_ABS && n->op <= TT_OP_NOT) return tt_ir_unary(b, n->op, in[0]);
    if (n->op >= TT_OP_ADD && n->op <= TT_OP_NEXTAFTER) return tt_ir_binary(b, n->op, in[0], in[1]);
    switch (n->op) {
    case TT_OP_PARAMETER:
    case TT_OP_SCALAR_PARAMETER: return param_values[a->parameter.index];
    case TT_OP_CONSTANT: return tt_ir_constant(b, t->dtype, t->rank, t->dims, p->constants + a->constant.offset);
    case TT_OP_IOTA: return tt_ir_iota(b, t->dtype, t->rank, t->dims, a->iota.dim);
    case TT_OP_RNG_UNIFORM: return tt_ir_rng_uniform(b, t->dtype, t->rank, t->dims, in[0], in[1]);
    case TT_OP_COMPARE: return tt_ir_compare(b, a->compare.dir, in[0], in[1]);
    case TT_OP_SELECT: return tt_ir_select(b, in[0], in[1], in[2]);
    case TT_OP_CLAMP: return tt_ir_clamp(b, in[0], in[1], in[2]);
    case TT_OP_CONVERT: return tt_ir_convert(b, in[0], t->dtype);
    case TT_OP_BROADCAST_IN_DIM: return tt_ir_broadcast_in_dim(b, in[0], t->rank, t->dims, a->broadcast.dims.v);
    case TT_OP_RESHAPE: return tt_ir_reshape(b, in[0], t->rank, t->dims);
    case TT_OP_TRANSPOSE: return tt_ir_transpose(b, in[0], a->transpose.perm.v);
    case TT_OP_SLICE: return tt_ir_slice(b, in[0], a->slice.start.v, a->slice.limit.v, a->slice.stride.v);
    case TT_OP_DYNAMIC_SLICE: return tt_ir_dynamic_slice(b, in[0], in + 1, a->dynamic_slice.sizes.v);
    case TT_OP_DYNAMIC_UPDATE_SLICE: return tt_ir_dynamic_update_slice(b, in[0], in[1], in + 2);
    case TT_OP_CONCATENATE: return tt_ir_concatenate(b, n->n_inputs, in, a->concatenate.dim);
    case TT_OP_PAD: return tt_ir_pad(b, in[0], in[1], a->pad.low.v, a->pad.high.v, a->pad.interior.v);
    case TT_OP_REVERSE: return tt_ir_reverse(b, in[0], (int32_t)a->reverse.dims.n, a->reverse.dims.v);
    case TT_OP_GATHER: return tt_ir_gather(b, in[0], in[1], a);
    case TT_OP_SCATTER: return tt_ir_scatter(b, in[0], in[1], in[2], a);
    case TT_OP_REDUCE: return tt_ir_reduce(b, a->reduce.kind, in[0], (int32_t)a->reduce.dims.n, a->reduce.dims.v);
    case TT_OP_ARG_REDUCE: return tt_ir_arg_reduce(b, in[0], a->arg_reduce.dim, a->arg_reduce.is_min);
    case TT_OP_CUMULATIVE: return tt_ir_cumulative(b, a->cumulative.kind, in[0], a->cumulative.dim, a->cumulative.reverse);
    case TT_OP_REDUCE_WINDOW: return tt_ir_reduce_window(b, in[0], a);
    case TT_OP_DOT_GENERAL: return tt_ir_dot_general(b, in[0], in[1], a, t->dtype);
    case TT_OP_CONVOLUTION: return tt_ir_convolution(b, in[0], in[1], a, t->dtype);
    case TT_OP_SORT: {
        tt_ir_value outs[2] = {TT_IR_NONE, TT_IR_NONE};
        tt_ir_value v = tt_ir_sort(b, n->n_inputs, in, a->sort.dim, a->sort.descending, a->sort.stable, outs);
        *second = outs[1];
        return v;
    }
    case TT_OP_CUSTOM_CALL: return tt_ir_custom_call(b, a->custom_call.target, n->n_inputs, in, t);
    default: break;
    }
    tt_ir_builder_fail(b, TT_STATUS_INTERNAL, "inline: unknown op %d", (int)n->op);
    return TT_IR_NONE;
}

tt_status tt_ir_builder_inline(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_value *param_values,
                               tt_ir_value *out_values) {
    return tt_ir_inline_rewrite(b, p, param_values, out_values, NULL, NULL);
}

tt_status tt_ir_inline_rewrite(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_value *param_values,
                               tt_ir_value *out_values, tt_ir_rewrite_fn rewrite, void *user) {
    tt_ir_value stack_map[256];
    tt_ir_value *map = stack_map;
    if (p->n_values > 256) {
        map = malloc(sizeof(tt_ir_value) * (size_t)p->n_values);
        if (!map) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "inline: out of memory");
    }
    for (int32_t i = 0; i < p->n_values; i++) map[i] = TT_IR_NONE;
    tt_ir_value in[64];
    for (int32_t k = 0; k < p->n_nodes; k++) {
        const tt_ir_node *n = &p->nodes[k];
        if (n->n_inputs > 64) {
            tt_ir_builder_fail(b, TT_STATUS_UNSUPPORTED, "inline: node with %d inputs", (int)n->n_inputs);
            break;
        }
        for (int32_t j = 0; j < n->n_inputs; j++) in[j] = map[p->operands[n->inputs_offset + j]];
        tt_ir_value second = TT_IR_NONE;
        tt_ir_value v = rewrite && n->n_outputs == 1 ? rewrite(b, p, n, in, user) : TT_IR_NONE;
        map[n->outputs[0]] = v != TT_IR_NONE ? v : tt_ir_inline_node(b, p, n, in, param_values, &second);
        if (n->n_outputs > 1) map[n->outputs[1]] = second;
    }
    for (int32_t i = 0; i < p->n_outputs; i++) out_values[i] = map[p->outputs[i]];
    if (map != stack_map) free(map);
    return tt_ir_builder_status(b);
}

tt_status tt_ir_rewrite_begin(const tt_ir_program *p, tt_ir_rewrite_fn rewrite, void *user, tt_ir_builder **out) {
    tt_ir_builder *b = *out = tt_ir_builder_create();
    tt_ir_value *vals = malloc(sizeof *vals * (size_t)(p->n_params + p->n_outputs + 1));
    if (!b || !vals) {
        free(vals);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "rewrite: out of memory");
    }
    tt_ir_value *outs = vals + p->n_params;
    for (int32_t i = 0; i < p->n_params; i++) { /* created in index order: the same parameter indices */
        const tt_ir_type *t = &p->types[p->params[i]];
        vals[i] = p->nodes[p->value_node[p->params[i]]].op == TT_OP_SCALAR_PARAMETER
                      ? tt_ir_scalar_param(b, t->dtype)
                      : tt_ir_param(b, t->dtype, t->rank, t->dims);
    }
    tt_status st = tt_ir_inline_rewrite(b, p, vals, outs, rewrite, user);
    for (int32_t i = 0; st == TT_OK && i < p->n_outputs; i++) tt_ir_builder_add_output(b, outs[i]);
    free(vals);
    return st;
}
