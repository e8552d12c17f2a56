/* bucket_values.c — the bucket pass's values (tt_ir_bucket, bucket.c): masks over the padding, values of the real
 * size made inside a program rebuilt at the padded size, and the ranges that prove indices stay below the size. */
#include <string.h>

#include "bucket_internal.h"

/* ---- masks: where the real part is ---- */

/* bool, true on the real part along the given padded dims of a value of padded dims pdims. */
static tt_ir_value bk_real_mask(bk *k, int32_t rank, const int64_t *pdims, const tt_ir_bucket_pad *q,
                             const bool *which) {
    tt_ir_value m = TT_IR_NONE;
    tt_ir_value nb = tt_ir_broadcast_in_dim(k->b, k->n, rank, pdims, NULL);
    for (int32_t d = 0; d < rank; d++) {
        if (!q->inner[d] || (which && !which[d])) continue;
        tt_ir_value i = tt_ir_iota(k->b, TT_I64, rank, pdims, d);
        if (q->inner[d] > 1)
            i = tt_ir_binary(k->b, TT_OP_DIVIDE, i,
                             tt_ir_broadcast_in_dim(k->b, tt_ir_constant_scalar(k->b, TT_I64, (double)q->inner[d]), rank, pdims, NULL));
        if (pdims[d] > k->S * q->inner[d])
            i = tt_ir_binary(k->b, TT_OP_REMAINDER, i,
                             tt_ir_broadcast_in_dim(k->b, tt_ir_constant_scalar(k->b, TT_I64, (double)k->S), rank, pdims, NULL));
        tt_ir_value c = tt_ir_compare(k->b, TT_CMP_LT, i, nb);
        m = m == TT_IR_NONE ? c : tt_ir_binary(k->b, TT_OP_AND, m, c);
    }
    return m;
}

/* v (a value of b with p-value pv's padding) with its padding along `which` dims (NULL: all) replaced by the
 * identity of kind. */
tt_ir_value tt_ir_bk_masked(bk *k, tt_ir_value v, const tt_ir_bucket_pad *q, const bool *which,
                            tt_ir_reduce_kind kind) {
    const tt_ir_type *t = tt_ir_type_of(k->b, v);
    if (!t) return TT_IR_NONE;
    tt_ir_type tt = *t;
    tt_ir_value m = bk_real_mask(k, tt.rank, tt.dims, q, which);
    if (m == TT_IR_NONE) return v;
    uint8_t id[8];
    tt_ir_identity_bytes(kind, tt.dtype, id);
    tt_ir_value c = tt_ir_broadcast_in_dim(k->b, tt_ir_constant(k->b, tt.dtype, 0, NULL, id), tt.rank, tt.dims, NULL);
    return tt_ir_select(k->b, m, v, c);
}

/* ---- values of the real size made inside the program, rebuilt at the padded size ---- */
tt_ir_value tt_ir_bk_regen(bk *k, tt_ir_value v, const tt_ir_bucket_pad *want, int depth) {
    const tt_ir_program *p = k->p;
    const tt_ir_type *t = &p->types[v];
    if (pad_eq(&k->pad[v], want, t->rank)) return k->map[v];
    const tt_ir_node *n = &p->nodes[p->value_node[v]];
    int64_t dims[TT_MAX_RANK];
    bool extends = true; /* rebuilt values keep the padding they have */
    for (int32_t d = 0; d < t->rank; d++) extends &= !k->pad[v].inner[d] || k->pad[v].inner[d] == want->inner[d];
    if (depth > 64 || !extends || !tt_ir_bk_padded_dims(k, t, want, dims))
        return tt_ir_bk_fail(k, n, "a value of the padded size is not derived from a marked tensor");
    const tt_ir_value *ins = p->operands + n->inputs_offset;
    tt_ir_value in[3] = {TT_IR_NONE, TT_IR_NONE, TT_IR_NONE};
    const tt_ir_attrs *a = &n->attrs;
    bool elementwise = (n->op >= TT_OP_ABS && n->op <= TT_OP_CONVERT);
    if (elementwise) {
        for (int32_t j = 0; j < n->n_inputs; j++)
            if ((in[j] = tt_ir_bk_regen(k, ins[j], want, depth + 1)) == TT_IR_NONE) return TT_IR_NONE;
    }
    if (n->op >= TT_OP_ABS && n->op <= TT_OP_NOT) return tt_ir_unary(k->b, n->op, in[0]);
    if (n->op >= TT_OP_ADD && n->op <= TT_OP_NEXTAFTER) return tt_ir_binary(k->b, n->op, in[0], in[1]);
    switch (n->op) {
    case TT_OP_COMPARE: return tt_ir_compare(k->b, a->compare.dir, in[0], in[1]);
    case TT_OP_SELECT: return tt_ir_select(k->b, in[0], in[1], in[2]);
    case TT_OP_CLAMP: return tt_ir_clamp(k->b, in[0], in[1], in[2]);
    case TT_OP_CONVERT: return tt_ir_convert(k->b, in[0], t->dtype);
    case TT_OP_IOTA: /* values count along the dim: only a dim that is s itself keeps them */
        if (want->inner[a->iota.dim] && (want->inner[a->iota.dim] != 1 || t->dims[a->iota.dim] != k->s))
            return tt_ir_bk_fail(k, n, "an iota along a merged padded dim");
        return tt_ir_iota(k->b, t->dtype, t->rank, dims, a->iota.dim);
    case TT_OP_BROADCAST_IN_DIM: {
        const tt_ir_type *x = &p->types[ins[0]];
        tt_ir_bucket_pad xw = no_pad;
        for (int32_t i = 0; i < x->rank; i++) {
            int64_t r = a->broadcast.dims.v[i];
            if (x->dims[i] == t->dims[r]) xw.inner[i] = want->inner[r];
        }
        tt_ir_value x2 = tt_ir_bk_regen(k, ins[0], &xw, depth + 1);
        return x2 == TT_IR_NONE ? TT_IR_NONE : tt_ir_broadcast_in_dim(k->b, x2, t->rank, dims, a->broadcast.dims.v);
    }
    case TT_OP_TRANSPOSE: {
        tt_ir_bucket_pad xw = no_pad;
        for (int32_t i = 0; i < t->rank; i++) xw.inner[a->transpose.perm.v[i]] = want->inner[i];
        tt_ir_value x2 = tt_ir_bk_regen(k, ins[0], &xw, depth + 1);
        return x2 == TT_IR_NONE ? TT_IR_NONE : tt_ir_transpose(k->b, x2, a->transpose.perm.v);
    }
    case TT_OP_RESHAPE: { /* where the size sits in the operand: the reshape read backwards */
        const tt_ir_type *x = &p->types[ins[0]];
        tt_ir_bucket_pad xw;
        if (!tt_ir_bucket_reshape(k->s, t->rank, t->dims, want, x->rank, x->dims, &xw))
            return tt_ir_bk_fail(k, n, "a reshape that splits the padded size");
        tt_ir_value x2 = tt_ir_bk_regen(k, ins[0], &xw, depth + 1);
        return x2 == TT_IR_NONE ? TT_IR_NONE : tt_ir_reshape(k->b, x2, t->rank, dims);
    }
    case TT_OP_SLICE: { /* a prefix of s of a longer buffer (a causal mask's rows): a prefix of S, zeros past it */
        const tt_ir_type *x = &p->types[ins[0]];
        if (is_padded(&k->pad[ins[0]], x->rank)) return tt_ir_bk_fail(k, n, "a slice of a padded value");
        int64_t limit[TT_MAX_RANK], high[TT_MAX_RANK], lo[TT_MAX_RANK] = {0};
        bool grow = false;
        for (int32_t d = 0; d < t->rank; d++) {
            limit[d] = a->slice.limit.v[d];
            high[d] = 0;
            if (!want->inner[d]) continue;
            if (want->inner[d] != 1 || t->dims[d] != k->s || a->slice.start.v[d] != 0 || a->slice.stride.v[d] != 1)
                return tt_ir_bk_fail(k, n, "a slice to the padded size that is not a prefix");
            limit[d] = x->dims[d] < k->S ? x->dims[d] : k->S;
            high[d] = k->S - limit[d];
            grow |= high[d] > 0;
        }
        tt_ir_value r = tt_ir_slice(k->b, k->map[ins[0]], a->slice.start.v, limit, a->slice.stride.v);
        if (!grow) return r;
        return tt_ir_pad(k->b, r, tt_ir_constant_scalar(k->b, t->dtype, 0), lo, high, NULL);
    }
    case TT_OP_CONCATENATE: {
        if (want->inner[a->concatenate.dim]) return tt_ir_bk_fail(k, n, "a concatenation along the padded size");
        tt_ir_value parts[64];
        if (n->n_inputs > 64) return tt_ir_bk_fail(k, n, "too many operands");
        for (int32_t j = 0; j < n->n_inputs; j++)
            if ((parts[j] = tt_ir_bk_regen(k, ins[j], want, depth + 1)) == TT_IR_NONE) return TT_IR_NONE;
        return tt_ir_concatenate(k->b, n->n_inputs, parts, a->concatenate.dim);
    }
    case TT_OP_GATHER: { /* positions gathered from a table: the indices rebuilt, the table as it is */
        const tt_ir_type *it = &p->types[ins[1]];
        bool offset[TT_MAX_RANK] = {false};
        for (int64_t i = 0; i < a->gather.offset_dims.n; i++) offset[a->gather.offset_dims.v[i]] = true;
        tt_ir_bucket_pad iw = no_pad, q;
        for (int32_t r = 0, bi = 0; r < t->rank; r++) {
            if (offset[r]) {
                if (want->inner[r]) return tt_ir_bk_fail(k, n, "a gathered slice of the padded size");
                continue;
            }
            if (bi == a->gather.index_vector_dim) bi++;
            if (bi < it->rank) iw.inner[bi] = want->inner[r];
            bi++;
        }
        tt_ir_value gin[2] = {k->map[ins[0]], tt_ir_bk_regen(k, ins[1], &iw, depth + 1)};
        if (gin[1] == TT_IR_NONE) return TT_IR_NONE;
        return tt_ir_bk_emit_gather(k, n, ins, gin, &k->pad[ins[0]], &iw, &q);
    }
    case TT_OP_PARAMETER:
        if (!k->failed && !k->probing && k->want.param < 0) {
            k->want.param = (int32_t)a->parameter.index;
            k->want.pad = *want;
        }
        return tt_ir_bk_fail(k, n, "an input of the padded size is not marked");
    default: return tt_ir_bk_fail(k, n, "a value of the padded size is not derived from a marked tensor");
    }
}

/* Bounds [*lo, *hi] of every element of integer value v, if they follow from the program: iotas, integer constants,
 * scalar arguments whose values the caller gave (each one used is noted: the result holds only for that value),
 * moved, converted, added, multiplied, selected. */
static bool bk_range_of(bk *k, tt_ir_value v, int64_t *lo, int64_t *hi, int depth) {
    const tt_ir_program *p = k->p;
    const tt_ir_node *n = &p->nodes[p->value_node[v]];
    const tt_ir_type *t = &p->types[v];
    if (depth > 24 || (!tt_dtype_is_int(t->dtype) && t->dtype != TT_BOOL)) return false;
    const tt_ir_value *ins = p->operands + n->inputs_offset;
    int64_t a0, a1, b0, b1;
    switch (n->op) {
    case TT_OP_IOTA:
        *lo = 0;
        *hi = t->dims[n->attrs.iota.dim] - 1;
        return true;
    case TT_OP_CONSTANT:
        if (t->rank != 0 || t->dtype != TT_I64) return false;
        memcpy(lo, p->constants + n->attrs.constant.offset, 8);
        *hi = *lo;
        return true;
    case TT_OP_SCALAR_PARAMETER: {
        int64_t i = n->attrs.parameter.index;
        if (!k->scalars || !k->scalars[i].known) return false;
        k->scalars[i].used = true;
        *lo = *hi = k->scalars[i].value;
        return true;
    }
    case TT_OP_BROADCAST_IN_DIM:
    case TT_OP_RESHAPE:
    case TT_OP_TRANSPOSE:
    case TT_OP_SLICE:
    case TT_OP_REVERSE:
    case TT_OP_CONVERT: return bk_range_of(k, ins[0], lo, hi, depth + 1);
    case TT_OP_ADD:
    case TT_OP_SUBTRACT:
    case TT_OP_MULTIPLY:
    case TT_OP_MAXIMUM:
    case TT_OP_MINIMUM: {
        if (!bk_range_of(k, ins[0], &a0, &a1, depth + 1) || !bk_range_of(k, ins[1], &b0, &b1, depth + 1)) return false;
        int64_t c[4];
        bool o = false;
        if (n->op == TT_OP_ADD) o = __builtin_add_overflow(a0, b0, lo) || __builtin_add_overflow(a1, b1, hi);
        else if (n->op == TT_OP_SUBTRACT) o = __builtin_sub_overflow(a0, b1, lo) || __builtin_sub_overflow(a1, b0, hi);
        else if (n->op == TT_OP_MAXIMUM) *lo = a0 > b0 ? a0 : b0, *hi = a1 > b1 ? a1 : b1;
        else if (n->op == TT_OP_MINIMUM) *lo = a0 < b0 ? a0 : b0, *hi = a1 < b1 ? a1 : b1;
        else {
            o = __builtin_mul_overflow(a0, b0, &c[0]) || __builtin_mul_overflow(a0, b1, &c[1]) ||
                __builtin_mul_overflow(a1, b0, &c[2]) || __builtin_mul_overflow(a1, b1, &c[3]);
            *lo = *hi = c[0];
            for (int i = 1; i < 4 && !o; i++) *lo = c[i] < *lo ? c[i] : *lo, *hi = c[i] > *hi ? c[i] : *hi;
        }
        return !o;
    }
    case TT_OP_SELECT: { /* a predicate the ranges decide picks one side (a negative index's wrap-around) */
        const tt_ir_node *c = &p->nodes[p->value_node[ins[0]]];
        if (c->op == TT_OP_COMPARE) {
            const tt_ir_value *ci = p->operands + c->inputs_offset;
            if (bk_range_of(k, ci[0], &a0, &a1, depth + 1) && bk_range_of(k, ci[1], &b0, &b1, depth + 1)) {
                int verdict = -1; /* 1 always true, 0 always false */
                switch (c->attrs.compare.dir) {
                case TT_CMP_LT: verdict = a1 < b0 ? 1 : a0 >= b1 ? 0 : -1; break;
                case TT_CMP_LE: verdict = a1 <= b0 ? 1 : a0 > b1 ? 0 : -1; break;
                case TT_CMP_GT: verdict = a0 > b1 ? 1 : a1 <= b0 ? 0 : -1; break;
                case TT_CMP_GE: verdict = a0 >= b1 ? 1 : a1 < b0 ? 0 : -1; break;
                default: break;
                }
                if (verdict >= 0) return bk_range_of(k, ins[verdict ? 1 : 2], lo, hi, depth + 1);
            }
        }
        if (!bk_range_of(k, ins[1], &a0, &a1, depth + 1) || !bk_range_of(k, ins[2], &b0, &b1, depth + 1)) return false;
        *lo = a0 < b0 ? a0 : b0;
        *hi = a1 > b1 ? a1 : b1;
        return true;
    }
    default: return false;
    }
}

static bool bk_below_size(bk *k, tt_ir_value v) {
    int64_t lo, hi;
    return bk_range_of(k, v, &lo, &hi, 0) && lo >= 0 && hi < k->s;
}

/* Whether component c of a gather's indices (along index_vector_dim ivd) lies in [0, s). */
bool tt_ir_bk_component_below_size(bk *k, tt_ir_value idx, int64_t ivd, int64_t c) {
    const tt_ir_program *p = k->p;
    const tt_ir_type *t = &p->types[idx];
    if (ivd >= t->rank) return c == 0 && bk_below_size(k, idx);
    const tt_ir_node *n = &p->nodes[p->value_node[idx]];
    if (t->dims[ivd] == 1) return c == 0 && bk_below_size(k, idx);
    if (n->op != TT_OP_CONCATENATE || n->attrs.concatenate.dim != ivd) return false;
    for (int32_t j = 0, at = 0; j < n->n_inputs; j++) {
        tt_ir_value part = p->operands[n->inputs_offset + j];
        int64_t w = p->types[part].dims[ivd];
        if (c < at + w) return w == 1 && bk_below_size(k, part);
        at += (int32_t)w;
    }
    return false;
}
