/* program.c — op metadata tables, freezing a builder into an immutable program (dead-code elimination, dense
 * renumbering, one allocation), the structural hash, equality and reference counting. */
#include "builder_internal.h"

#include <stdlib.h>
#include <string.h>

static const char *const tt_ir_names[] = {
#define TT_IR_NAME(name, hlo, n) #name,
    TT_IR_OPS(TT_IR_NAME)
#undef TT_IR_NAME
};
static const char *const tt_ir_hlo_names[] = {
#define TT_IR_HLO(name, hlo, n) hlo,
    TT_IR_OPS(TT_IR_HLO)
#undef TT_IR_HLO
};
static const signed char tt_ir_arities[] = {
#define TT_IR_ARITY(name, hlo, n) n,
    TT_IR_OPS(TT_IR_ARITY)
#undef TT_IR_ARITY
};
_Static_assert(sizeof tt_ir_names / sizeof tt_ir_names[0] == TT_OP_COUNT, "op name table out of sync");
_Static_assert(sizeof tt_ir_arities == TT_OP_COUNT, "op arity table out of sync");

const char *tt_ir_op_name(tt_ir_op op) { return (unsigned)op < TT_OP_COUNT ? tt_ir_names[op] : "?"; }
const char *tt_ir_op_hlo_name(tt_ir_op op) { return (unsigned)op < TT_OP_COUNT ? tt_ir_hlo_names[op] : "?"; }
int tt_ir_op_arity(tt_ir_op op) { return (unsigned)op < TT_OP_COUNT ? tt_ir_arities[op] : -1; }

/* ---- hashing: word-at-a-time multiply/rotate mixing, good enough for a cache key checked by equality ---- */

static inline uint64_t mix(uint64_t h, uint64_t w) {
    h ^= w * 0x9E3779B97F4A7C15ull;
    h = (h << 27) | (h >> 37);
    return h * 0xC2B2AE3D27D4EB4Full + 0x165667B19E3779F9ull;
}

/* Four independent lanes over 32-byte blocks, so the multiply chains overlap (attrs make nodes ~400 bytes). */
static uint64_t hash_bytes(uint64_t h, const void *data, size_t n) {
    const unsigned char *p = data;
    uint64_t l0 = mix(h, n), l1 = l0 ^ 0x9E3779B97F4A7C15ull, l2 = l0 ^ 0xBF58476D1CE4E5B9ull,
             l3 = l0 ^ 0x94D049BB133111EBull;
    for (; n >= 32; n -= 32, p += 32) {
        uint64_t w[4];
        memcpy(w, p, 32);
        l0 = mix(l0, w[0]);
        l1 = mix(l1, w[1]);
        l2 = mix(l2, w[2]);
        l3 = mix(l3, w[3]);
    }
    h = mix(mix(mix(mix(h, l0), l1), l2), l3);
    for (; n >= 8; n -= 8, p += 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = mix(h, w);
    }
    if (n) {
        uint64_t w = 0;
        memcpy(&w, p, n);
        h = mix(h, w);
    }
    return h;
}

static uint64_t program_hash(const tt_ir_program *p) {
    uint64_t h = 0x243F6A8885A308D3ull;
    /* node bytes include op, operand offsets, result ids, attrs (zero-filled, so bytes are canonical) */
    h = hash_bytes(h, p->nodes, (size_t)p->n_nodes * sizeof *p->nodes);
    h = hash_bytes(h, p->types, (size_t)p->n_values * sizeof *p->types);
    h = hash_bytes(h, p->operands, (size_t)p->n_operands * sizeof *p->operands);
    h = hash_bytes(h, p->params, (size_t)p->n_params * sizeof *p->params);
    h = hash_bytes(h, p->outputs, (size_t)p->n_outputs * sizeof *p->outputs);
    h = hash_bytes(h, p->constants, (size_t)p->constants_size);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    return h;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

tt_status tt_ir_builder_finish(tt_ir_builder *b, tt_ir_program **out) {
    if (!out) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_ir_builder_finish: out is NULL");
    *out = NULL;
    if (!b) return tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_ir_builder_finish: builder is NULL");
    if (b->status != TT_OK) return tt_ir_builder_status(b);

    /* scratch: live flag per node, then new id per value */
    int64_t need = (int64_t)b->n_nodes + b->n_values;
    if (!tt_ir_grow((void **)&b->scratch, &b->cap_scratch, need, sizeof(int32_t)))
        return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "tt_ir_builder_finish: out of memory");
    int32_t *live = b->scratch, *remap = b->scratch + b->n_nodes;
    memset(live, 0, (size_t)b->n_nodes * sizeof *live);
    for (int32_t i = 0; i < b->n_outputs; i++) live[b->value_node[b->outputs[i]]] = 1;

    /* nodes are in creation order, which is topological: one backward sweep marks everything reachable */
    int32_t n_nodes = 0, n_values = 0, n_operands = 0;
    size_t const_bytes = 0;
    for (int32_t i = b->n_nodes - 1; i >= 0; i--) {
        const tt_ir_node *nd = &b->nodes[i];
        if (nd->op == TT_OP_PARAMETER || nd->op == TT_OP_SCALAR_PARAMETER) live[i] = 1; /* params always kept */
        if (!live[i]) continue;
        const tt_ir_value *ins = b->operands + nd->inputs_offset;
        for (int32_t k = 0; k < nd->n_inputs; k++) live[b->value_node[ins[k]]] = 1;
        n_nodes++;
        n_values += nd->n_outputs;
        n_operands += nd->n_inputs;
        if (nd->op == TT_OP_CONSTANT) const_bytes = align8(const_bytes) + (size_t)nd->attrs.constant.size;
    }
    const_bytes = align8(const_bytes);

    /* one allocation for the program and all its arrays */
    size_t off_nodes = align8(sizeof(tt_ir_program));
    size_t off_types = off_nodes + align8((size_t)n_nodes * sizeof(tt_ir_node));
    size_t off_vnode = off_types + align8((size_t)n_values * sizeof(tt_ir_type));
    size_t off_opnds = off_vnode + align8((size_t)n_values * sizeof(int32_t));
    size_t off_params = off_opnds + align8((size_t)n_operands * sizeof(tt_ir_value));
    size_t off_outs = off_params + align8((size_t)b->n_params * sizeof(tt_ir_value));
    size_t off_consts = off_outs + align8((size_t)b->n_outputs * sizeof(tt_ir_value));
    size_t off_origin = off_consts + const_bytes;
    size_t total = off_origin + align8((size_t)n_nodes * sizeof(int32_t));
    unsigned char *mem = calloc(1, total);
    if (!mem) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "tt_ir_builder_finish: out of memory");
    tt_ir_program *p = (tt_ir_program *)mem;
    p->nodes = (tt_ir_node *)(mem + off_nodes);
    p->types = (tt_ir_type *)(mem + off_types);
    p->value_node = (int32_t *)(mem + off_vnode);
    p->operands = (tt_ir_value *)(mem + off_opnds);
    p->params = (tt_ir_value *)(mem + off_params);
    p->outputs = (tt_ir_value *)(mem + off_outs);
    p->constants = const_bytes ? mem + off_consts : NULL;
    p->node_origin = (int32_t *)(mem + off_origin);

    /* copy live nodes forward, renumbering values densely and repacking operands and constants */
    int32_t nn = 0, nv = 0, no = 0;
    int64_t nc = 0;
    for (int32_t i = 0; i < b->n_nodes; i++) {
        if (!live[i]) continue;
        const tt_ir_node *src = &b->nodes[i];
        tt_ir_node *dst = &p->nodes[nn];
        memcpy(dst, src, sizeof *dst);
        p->node_origin[nn] = b->origin[i];
        const tt_ir_value *ins = b->operands + src->inputs_offset;
        dst->inputs_offset = no;
        for (int32_t k = 0; k < src->n_inputs; k++) p->operands[no++] = remap[ins[k]];
        for (int32_t k = 0; k < src->n_outputs; k++) {
            tt_ir_value v = src->outputs[k];
            remap[v] = nv;
            dst->outputs[k] = nv;
            p->types[nv] = b->types[v];
            p->value_node[nv] = nn;
            nv++;
        }
        if (src->op == TT_OP_CONSTANT) {
            nc = (nc + 7) & ~(int64_t)7;
            if (src->attrs.constant.size)
                memcpy(p->constants + nc, b->constants + src->attrs.constant.offset, (size_t)src->attrs.constant.size);
            dst->attrs.constant.offset = nc;
            nc += src->attrs.constant.size;
        }
        nn++;
    }
    p->n_nodes = nn;
    p->n_values = nv;
    p->n_operands = no;
    p->n_params = b->n_params;
    for (int32_t i = 0; i < b->n_params; i++) p->params[i] = remap[b->params[i]];
    p->n_outputs = b->n_outputs;
    for (int32_t i = 0; i < b->n_outputs; i++) p->outputs[i] = remap[b->outputs[i]];
    p->constants_size = (int64_t)const_bytes;
    p->hash = program_hash(p);
    p->refcount = 1;
    *out = p;
    return TT_OK;
}

void tt_ir_program_retain(tt_ir_program *p) {
    if (p) __atomic_fetch_add(&p->refcount, 1, __ATOMIC_RELAXED);
}

void tt_ir_program_destroy(tt_ir_program *p) {
    if (p && __atomic_sub_fetch(&p->refcount, 1, __ATOMIC_ACQ_REL) == 0) free(p); /* arrays share the block */
}

bool tt_ir_program_equal(const tt_ir_program *a, const tt_ir_program *b) {
    if (a == b) return true;
    if (!a || !b) return false;
    if (a->hash != b->hash || a->n_nodes != b->n_nodes || a->n_values != b->n_values ||
        a->n_operands != b->n_operands || a->n_params != b->n_params || a->n_outputs != b->n_outputs ||
        a->constants_size != b->constants_size)
        return false;
    return memcmp(a->nodes, b->nodes, (size_t)a->n_nodes * sizeof *a->nodes) == 0 &&
           memcmp(a->types, b->types, (size_t)a->n_values * sizeof *a->types) == 0 &&
           memcmp(a->operands, b->operands, (size_t)a->n_operands * sizeof *a->operands) == 0 &&
           memcmp(a->params, b->params, (size_t)a->n_params * sizeof *a->params) == 0 &&
           memcmp(a->outputs, b->outputs, (size_t)a->n_outputs * sizeof *a->outputs) == 0 &&
           (a->constants_size == 0 || memcmp(a->constants, b->constants, (size_t)a->constants_size) == 0);
}

const char *tt_ir_program_difference(const tt_ir_program *a, const tt_ir_program *b) {
    if (tt_ir_program_equal(a, b)) return "same program";
    if (a->n_nodes != b->n_nodes || a->n_values != b->n_values || a->n_operands != b->n_operands ||
        a->n_params != b->n_params || a->n_outputs != b->n_outputs ||
        memcmp(a->operands, b->operands, (size_t)a->n_operands * sizeof *a->operands) != 0 ||
        memcmp(a->outputs, b->outputs, (size_t)a->n_outputs * sizeof *a->outputs) != 0)
        return "new structure";
    for (int32_t k = 0; k < a->n_nodes; k++)
        if (a->nodes[k].op != b->nodes[k].op || a->nodes[k].n_inputs != b->nodes[k].n_inputs) return "new structure";
    for (int32_t v = 0; v < a->n_values; v++)
        if (a->types[v].dtype != b->types[v].dtype) return "new dtype";
    for (int32_t v = 0; v < a->n_values; v++)
        if (a->types[v].rank != b->types[v].rank ||
            memcmp(a->types[v].dims, b->types[v].dims, sizeof(int64_t) * (size_t)a->types[v].rank) != 0)
            return "new shapes";
    for (int32_t k = 0; k < a->n_nodes; k++) {
        const tt_ir_node *x = &a->nodes[k], *y = &b->nodes[k];
        if ((x->op == TT_OP_DOT_GENERAL && x->attrs.dot.precision != y->attrs.dot.precision) ||
            (x->op == TT_OP_CONVOLUTION && x->attrs.conv.precision != y->attrs.conv.precision))
            return "new precision";
    }
    if (a->constants_size != b->constants_size ||
        (a->constants_size && memcmp(a->constants, b->constants, (size_t)a->constants_size) != 0))
        return "new constants";
    return "new attributes";
}
