/* precision.c — tt_ir_expand_precision: TPU matmul precision written out as explicit bf16 passes, for a backend
 * that would otherwise multiply f32 exactly (XLA's CPU plugin ignores precision_config).
 *
 * An f32 operand x splits into bf16 terms: hi = bf16(x), mid = bf16(x - hi), lo = bf16(x - hi - mid). Each
 * pass is a dot_general (or convolution) of two bf16 terms accumulated in f32, exact products as on the MXU:
 *   DEFAULT  hi.hi
 *   HIGH     hi.hi + hi.mid + mid.hi                                   (3 passes, ~16 bits)
 *   HIGHEST  hi.hi + hi.mid + mid.hi + hi.lo + mid.mid + lo.hi         (6 passes, ~f32)
 * Small terms are added first. FP32 (our exact mode) and non-f32 operands stay as they are. */
#include "ir_internal.h"

#include <string.h>

typedef struct split {
    tt_ir_value t[3]; /* hi, mid, lo as bf16 */
} split;

static split split_bf16(tt_ir_builder *b, tt_ir_value x, int terms) {
    split s = {{TT_IR_NONE, TT_IR_NONE, TT_IR_NONE}};
    tt_ir_value rest = x;
    for (int k = 0; k < terms; k++) {
        s.t[k] = tt_ir_convert(b, rest, TT_BF16);
        if (k + 1 < terms) rest = tt_ir_binary(b, TT_OP_SUBTRACT, rest, tt_ir_convert(b, s.t[k], TT_F32));
    }
    return s;
}

/* How many bf16 passes node n becomes (0: it stays as it is). */
static int passes_needed(const tt_ir_program *p, const tt_ir_node *n) {
    if (n->op != TT_OP_DOT_GENERAL && n->op != TT_OP_CONVOLUTION) return 0;
    const tt_ir_value *in = p->operands + n->inputs_offset;
    if (p->types[in[0]].dtype != TT_F32 || p->types[in[1]].dtype != TT_F32 || p->types[n->outputs[0]].dtype != TT_F32)
        return 0;
    tt_precision prec = n->op == TT_OP_DOT_GENERAL ? n->attrs.dot.precision : n->attrs.conv.precision;
    return prec == TT_PRECISION_DEFAULT ? 1 : prec == TT_PRECISION_HIGH ? 3 : prec == TT_PRECISION_HIGHEST ? 6 : 0;
}

/* The (lhs term, rhs term) of each pass, smallest contributions first. */
static const int pass_terms[6][2] = {{2, 0}, {1, 1}, {0, 2}, {1, 0}, {0, 1}, {0, 0}};

static tt_ir_value expand(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_node *n, const tt_ir_value *in,
                          void *user) {
    (void)user;
    bool dot = n->op == TT_OP_DOT_GENERAL;
    if (!dot && n->op != TT_OP_CONVOLUTION) return TT_IR_NONE;
    int passes = passes_needed(p, n);
    if (!passes) return TT_IR_NONE;
    int terms = passes == 1 ? 1 : passes == 3 ? 2 : 3;
    split sl = split_bf16(b, in[0], terms), sr = split_bf16(b, in[1], terms);
    tt_ir_attrs a = n->attrs;
    if (dot) a.dot.precision = TT_PRECISION_FP32;
    else a.conv.precision = TT_PRECISION_FP32;
    tt_ir_value sum = TT_IR_NONE;
    for (int k = 6 - passes; k < 6; k++) {
        tt_ir_value x = sl.t[pass_terms[k][0]], y = sr.t[pass_terms[k][1]];
        tt_ir_value term = dot ? tt_ir_dot_general(b, x, y, &a, TT_F32) : tt_ir_convolution(b, x, y, &a, TT_F32);
        sum = sum == TT_IR_NONE ? term : tt_ir_binary(b, TT_OP_ADD, sum, term);
    }
    return sum;
}

static bool needs_expansion(const tt_ir_program *p) {
    for (int32_t i = 0; i < p->n_nodes; i++)
        if (passes_needed(p, &p->nodes[i])) return true;
    return false;
}

tt_status tt_ir_expand_precision(tt_ir_program *p, tt_ir_program **out) {
    *out = NULL;
    if (!needs_expansion(p)) {
        tt_ir_program_retain(p);
        *out = p;
        return TT_OK;
    }
    tt_ir_builder *b = NULL;
    tt_status st = tt_ir_rewrite_begin(p, expand, NULL, &b);
    if (st == TT_OK) st = tt_ir_builder_finish(b, out);
    tt_ir_builder_destroy(b);
    return st;
}
