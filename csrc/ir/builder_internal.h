/* builder_internal.h — the builder's layout, shared by builder.c and program.c (finish). Not public. */
#ifndef TT_IR_BUILDER_INTERNAL_H
#define TT_IR_BUILDER_INTERNAL_H

#include "ir_internal.h"

/* Growable arrays; every array keeps its memory across tt_ir_builder_reset so eager ops do not malloc. */
struct tt_ir_builder {
    tt_ir_node *nodes;
    int32_t n_nodes;
    int64_t cap_nodes;
    tt_ir_type *types; /* per value */
    int64_t cap_types;
    int32_t *value_node; /* per value: defining node */
    int64_t cap_value_node;
    int32_t n_values;
    tt_ir_value *operands;
    int32_t n_operands;
    int64_t cap_operands;
    tt_ir_value *params;
    int32_t n_params;
    int64_t cap_params;
    tt_ir_value *outputs;
    int32_t n_outputs;
    int64_t cap_outputs;
    uint8_t *constants;
    int64_t constants_size, cap_constants;
    int32_t *origin;  /* per node: the origin current when it was emitted (tt_ir_builder_set_origin) */
    int64_t cap_origin;
    int32_t cur_origin;
    int32_t *scratch; /* finish: per node live flag, then per value new id */
    int64_t cap_scratch;
    tt_status status; /* first error (sticky) */
    char message[1024];
};

bool tt_ir_grow(void **p, int64_t *cap, int64_t need, size_t elem);

#endif
