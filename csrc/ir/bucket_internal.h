/* bucket_internal.h — shared by the bucket pass's files (bucket.c: the pass and its op rules; bucket_values.c: masks,
 * values rebuilt at the padded size, index ranges). Not public. */
#ifndef TT_IR_BUCKET_INTERNAL_H
#define TT_IR_BUCKET_INTERNAL_H

#include "ir_internal.h"

typedef struct bk {
    const tt_ir_program *p;
    tt_ir_builder *b;
    int64_t s, S;
    tt_ir_value n;          /* the real size, i64[] */
    tt_ir_value *map;       /* per value of p: its value in b */
    tt_ir_bucket_pad *pad;  /* per value of p: where it carries the size */
    bool failed;
    tt_ir_bucket_want want;     /* a parameter that would need padding */
    tt_ir_bucket_scalar *scalars; /* per parameter: a scalar argument's value, if known (and whether it was used) */
    bool probing;                 /* trying a rebuild that may fail quietly */
} bk;

static const tt_ir_bucket_pad no_pad;

static inline bool is_padded(const tt_ir_bucket_pad *q, int32_t rank) {
    for (int32_t d = 0; d < rank; d++)
        if (q->inner[d]) return true;
    return false;
}

static inline bool pad_eq(const tt_ir_bucket_pad *a, const tt_ir_bucket_pad *b, int32_t rank) {
    for (int32_t d = 0; d < rank; d++)
        if (a->inner[d] != b->inner[d]) return false;
    return true;
}

/* Records why the pass refuses (the first reason; quiet while probing) and returns TT_IR_NONE. */
tt_ir_value tt_ir_bk_fail(bk *k, const tt_ir_node *n, const char *why);
/* The dims of t with its padded dims at the bucket's size; false if a padded dim does not hold s x inner. */
bool tt_ir_bk_padded_dims(const bk *k, const tt_ir_type *t, const tt_ir_bucket_pad *q, int64_t *dims);
/* v (a value of the new program, padding q) with its padding along `which` dims (NULL: all) made the identity of
 * kind (NONE: zero). */
tt_ir_value tt_ir_bk_masked(bk *k, tt_ir_value v, const tt_ir_bucket_pad *q, const bool *which, tt_ir_reduce_kind kind);
/* Value v of p (made inside the program at the real size: iotas, splats, a buffer's prefix) rebuilt with padding
 * `want`; TT_IR_NONE (and a reason) if it cannot be. */
tt_ir_value tt_ir_bk_regen(bk *k, tt_ir_value v, const tt_ir_bucket_pad *want, int depth);
/* Whether component c of a gather's indices idx (index vector dim ivd) is in [0, s) wherever it is real. */
bool tt_ir_bk_component_below_size(bk *k, tt_ir_value idx, int64_t ivd, int64_t c);
/* A gather of in[0] (padding op) at indices in[1] (padding ip); *q receives the result's. */
tt_ir_value tt_ir_bk_emit_gather(bk *k, const tt_ir_node *n, const tt_ir_value *ins, const tt_ir_value *in,
                                 const tt_ir_bucket_pad *op, const tt_ir_bucket_pad *ip, tt_ir_bucket_pad *q);

#endif
