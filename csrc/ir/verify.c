/* verify.c — tt_ir_verify: re-checks a frozen program (SSA order, ids, parameter table, constant pool, and every
 * node's result types against the same inference the builder uses). Run at every stage boundary. */
#include "ir_internal.h"

#include <stdio.h>
#include <string.h>

static bool type_equal(const tt_ir_type *a, const tt_ir_type *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

/* Wraps the current error message (or msg) with the node's index and op. */
static tt_status node_error(int32_t i, const tt_ir_node *n, tt_status st, const char *msg) {
    char buf[900];
    snprintf(buf, sizeof buf, "%s", msg ? msg : tt_last_error());
    return tt_error(st, "verify: node %d (%s): %s", (int)i, tt_ir_op_name(n->op), buf);
}

static tt_status verify_node(const tt_ir_program *p, int32_t i) {
    const tt_ir_node *n = &p->nodes[i];
    if ((unsigned)n->op >= TT_OP_COUNT)
        return tt_error(TT_STATUS_INTERNAL, "verify: node %d has unknown op %d", (int)i, (int)n->op);
    if (n->n_inputs < 0 || n->inputs_offset < 0 || (int64_t)n->inputs_offset + n->n_inputs > p->n_operands)
        return node_error(i, n, TT_STATUS_INTERNAL, "operand range outside the operand pool");
    const tt_ir_value *ins = p->operands + n->inputs_offset;
    for (int32_t k = 0; k < n->n_inputs; k++) {
        if (ins[k] < 0 || ins[k] >= p->n_values)
            return node_error(i, n, TT_STATUS_INTERNAL, "operand id out of range");
        if (p->value_node[ins[k]] >= i) return node_error(i, n, TT_STATUS_INTERNAL, "operand used before its definition");
    }
    if (n->n_outputs < 1 || n->n_outputs > 2) return node_error(i, n, TT_STATUS_INTERNAL, "invalid result count");
    for (int32_t k = 0; k < n->n_outputs; k++) {
        tt_ir_value v = n->outputs[k];
        if (v < 0 || v >= p->n_values || p->value_node[v] != i)
            return node_error(i, n, TT_STATUS_INTERNAL, "result id does not map back to this node");
    }
    if (n->op == TT_OP_CONSTANT &&
        (n->attrs.constant.offset < 0 || n->attrs.constant.size < 0 ||
         n->attrs.constant.offset > p->constants_size - n->attrs.constant.size))
        return node_error(i, n, TT_STATUS_INTERNAL, "literal outside the constant pool");
    tt_ir_type res[2];
    int32_t n_out = 0;
    tt_status st = tt_ir_infer(n->op, &n->attrs, p->types, n->n_inputs, ins, &p->types[n->outputs[0]], res, &n_out);
    if (st != TT_OK) return node_error(i, n, st, NULL);
    if (n_out != n->n_outputs) return node_error(i, n, TT_STATUS_INTERNAL, "wrong number of results");
    for (int32_t k = 0; k < n_out; k++) {
        if (!type_equal(&res[k], &p->types[n->outputs[k]])) {
            char want[TT_IR_TYPE_STR_MAX], got[TT_IR_TYPE_STR_MAX];
            return tt_error(TT_STATUS_INTERNAL, "verify: node %d (%s): result %d has type %s, inferred %s", (int)i,
                            tt_ir_op_name(n->op), (int)k, tt_ir_type_str(&p->types[n->outputs[k]], got),
                            tt_ir_type_str(&res[k], want));
        }
    }
    return TT_OK;
}

tt_status tt_ir_verify(const tt_ir_program *p) {
    if (!p) return tt_error(TT_STATUS_INVALID_ARGUMENT, "verify: program is NULL");
    if (p->n_nodes < 0 || p->n_values < 0 || p->n_operands < 0 || p->n_params < 0 || p->n_outputs < 0 ||
        p->constants_size < 0 || (p->constants_size > 0 && !p->constants))
        return tt_error(TT_STATUS_INTERNAL, "verify: negative counts or missing arrays");
    for (int32_t v = 0; v < p->n_values; v++) {
        int32_t ni = p->value_node[v];
        if (ni < 0 || ni >= p->n_nodes) return tt_error(TT_STATUS_INTERNAL, "verify: value %d has no defining node", (int)v);
        const tt_ir_node *n = &p->nodes[ni];
        if (n->n_outputs < 1 || n->n_outputs > 2 || (n->outputs[0] != v && (n->n_outputs < 2 || n->outputs[1] != v)))
            return tt_error(TT_STATUS_INTERNAL, "verify: value %d is not a result of node %d", (int)v, (int)ni);
        tt_status st = tt_ir_check_type("verify", &p->types[v]);
        if (st != TT_OK) return st;
    }
    int32_t n_param_nodes = 0;
    for (int32_t i = 0; i < p->n_nodes; i++) {
        tt_status st = verify_node(p, i);
        if (st != TT_OK) return st;
        if (p->nodes[i].op == TT_OP_PARAMETER || p->nodes[i].op == TT_OP_SCALAR_PARAMETER) n_param_nodes++;
    }
    if (n_param_nodes != p->n_params)
        return tt_error(TT_STATUS_INTERNAL, "verify: %d parameter nodes but %d parameters", (int)n_param_nodes,
                        (int)p->n_params);
    for (int32_t k = 0; k < p->n_params; k++) {
        tt_ir_value v = p->params[k];
        if (v < 0 || v >= p->n_values) return tt_error(TT_STATUS_INTERNAL, "verify: parameter %d id out of range", (int)k);
        const tt_ir_node *n = &p->nodes[p->value_node[v]];
        if ((n->op != TT_OP_PARAMETER && n->op != TT_OP_SCALAR_PARAMETER) || n->attrs.parameter.index != k)
            return tt_error(TT_STATUS_INTERNAL, "verify: parameter %d does not name a parameter node with index %d",
                            (int)k, (int)k);
    }
    for (int32_t k = 0; k < p->n_outputs; k++)
        if (p->outputs[k] < 0 || p->outputs[k] >= p->n_values)
            return tt_error(TT_STATUS_INTERNAL, "verify: output %d id out of range", (int)k);
    return TT_OK;
}
