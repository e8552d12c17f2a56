/* ir_internal.h — shared between the IR module's files (builder, program, verify, printer). Not public. */
#ifndef TT_IR_INTERNAL_H
#define TT_IR_INTERNAL_H

#include "tt_ir.h"

/* Longest text tt_ir_type_str writes, NUL included ("bf16[" + 8 x 20 digits + commas + "]"). */
#define TT_IR_TYPE_STR_MAX 200

/* "f32[4,3]" into buf (TT_IR_TYPE_STR_MAX bytes); returns buf. */
char *tt_ir_type_str(const tt_ir_type *t, char *buf);

/* Checks a standalone type: dtype known, rank <= TT_MAX_RANK (else UNSUPPORTED), dims >= 0, numel fits.
 * what names the op in the message. */
tt_status tt_ir_check_type(const char *what, const tt_ir_type *t);

/* Infers the result types of one node from its operand types and attrs, validating everything.
 * types: the type table indexed by value id; ins: n_in operand ids (valid indices, checked by the caller).
 * hint: the requested result type for ops whose result is not implied by operands and attrs (leaves, reshape,
 * broadcast_in_dim, convert, dot_general/convolution dtype, custom_call); may be NULL for the others.
 * Writes 1 or 2 types to out and their count to *n_out. On error sets tt_error with a message naming the op. */
tt_status tt_ir_infer(tt_ir_op op, const tt_ir_attrs *a, const tt_ir_type *types, int32_t n_in,
                      const tt_ir_value *ins, const tt_ir_type *hint, tt_ir_type *out, int32_t *n_out);

/* tt_ir_builder_inline with a hook: rewrite(b, p, node, its mapped inputs, user) may emit a replacement for a
 * one-result node and return its value, or return TT_IR_NONE to replay the node as it is. */
typedef tt_ir_value (*tt_ir_rewrite_fn)(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_node *n,
                                        const tt_ir_value *in, void *user);
tt_status tt_ir_inline_rewrite(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_value *param_values,
                               tt_ir_value *out_values, tt_ir_rewrite_fn rewrite, void *user);
/* A new builder (*out, the caller destroys it, also on failure) holding p's parameters (same indices), p's nodes
 * through rewrite, and p's outputs; the caller may add outputs, then finishes it. */
tt_status tt_ir_rewrite_begin(const tt_ir_program *p, tt_ir_rewrite_fn rewrite, void *user, tt_ir_builder **out);

/* The identity of a reduction kind (TT_REDUCE_NONE: zero) as dt's raw bytes (little endian, like the host). */
void tt_ir_identity_bytes(tt_ir_reduce_kind kind, tt_dtype dt, uint8_t out[8]);
/* One node of p emitted into b through the builder functions (inline.c); a SORT's second result in *second. */
tt_ir_value tt_ir_inline_node(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_node *n, const tt_ir_value *in,
                              const tt_ir_value *param_values, tt_ir_value *second);

#endif
