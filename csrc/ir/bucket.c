/* bucket.c — tt_ir_bucket: one size of a program padded to a bucket, the size itself a runtime parameter.
 *
 * Eager bounded dynamism: a fused window recorded for a sequence of length s becomes a program for the bucket S
 * >= s. Every dim that carries s (a dim of its own, or a merged dim such as [B*s*C]: "outer x s x inner") carries S
 * instead, s arrives as the last parameter (i64[]), and an op that combines values across a padded dim first
 * replaces the padding by its identity (reductions, contractions, scans, arg-reductions), so the real part of every
 * value is exactly the original's, whatever the padding holds. Tensors of the real size built inside the program
 * (iota, splats, a slice of a longer buffer: positions, causal masks) are rebuilt at the padded size when they meet
 * a padded value; the divisor of a mean over a padded dim is computed from s.
 *
 * Each rewrite holds for the program it is given. Two rewritten programs that are equal (structurally, constants
 * included) therefore compute both originals: one compiled program serves the bucket, and no rewrite has to know
 * which dims "are" the dynamic one. An op without a rule for its padded dims makes the pass fail with the reason;
 * the caller then runs the original program. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bucket_internal.h"

tt_ir_value tt_ir_bk_fail(bk *k, const tt_ir_node *n, const char *why) {
    char ty[TT_IR_TYPE_STR_MAX];
    if (k->probing) return TT_IR_NONE;
    if (!k->failed)
        tt_error(TT_STATUS_UNSUPPORTED, "bucket: %s -> %s (size %lld): %s", tt_ir_op_name(n->op),
                 tt_ir_type_str(&k->p->types[n->outputs[0]], ty), (long long)k->s, why);
    k->failed = true;
    return TT_IR_NONE;
}

/* tt_ir_bk_fail for the rules that answer whether they applied. */
static bool refuse(bk *k, const tt_ir_node *n, const char *why) {
    tt_ir_bk_fail(k, n, why);
    return false;
}

/* The dims of t with its padded dims at the bucket's size; false if a padded dim does not hold s x inner. */
bool tt_ir_bk_padded_dims(const bk *k, const tt_ir_type *t, const tt_ir_bucket_pad *q, int64_t *dims) {
    for (int32_t d = 0; d < t->rank; d++) {
        int64_t in = q->inner[d], D = t->dims[d];
        if (in < 0 || (in > 0 && D % (k->s * in) != 0)) return false;
        dims[d] = in ? D / k->s * k->S : D;
    }
    return true;
}

/* Where the size sits after a reshape of src to dst (row-major order): each padded factor must fall inside one dst
 * dim, and no dst dim may hold two. */
bool tt_ir_bucket_reshape(int64_t s, int32_t src_rank, const int64_t *src, const tt_ir_bucket_pad *sp,
                          int32_t dst_rank, const int64_t *dst, tt_ir_bucket_pad *dp) {
    memset(dp, 0, sizeof *dp);
    for (int32_t d = 0; d < src_rank; d++) {
        if (!sp->inner[d]) continue;
        int64_t after = sp->inner[d]; /* elements after the size's factor, in the whole tensor */
        for (int32_t e = d + 1; e < src_rank; e++) after *= src[e];
        int64_t a = 1; /* elements after dst dim j */
        bool placed = false;
        for (int32_t j = dst_rank - 1; j >= 0 && !placed; j--) {
            if (a <= after && after % a == 0 && (a * dst[j]) % (after * s) == 0) {
                if (dp->inner[j]) return false;
                dp->inner[j] = after / a;
                placed = true;
            }
            a *= dst[j];
        }
        if (!placed) return false;
    }
    return true;
}

/* Elementwise operands: the padding they all carry (equal where two carry it); each operand without it is
 * rebuilt with it. */
static bool unify(bk *k, const tt_ir_node *n, int32_t rank, tt_ir_value *in, tt_ir_bucket_pad *out) {
    const tt_ir_value *ins = k->p->operands + n->inputs_offset;
    *out = no_pad;
    for (int32_t j = 0; j < n->n_inputs; j++)
        for (int32_t d = 0; d < rank && k->p->types[ins[j]].rank == rank; d++) {
            int64_t q = k->pad[ins[j]].inner[d];
            if (q && out->inner[d] && q != out->inner[d]) return refuse(k, n, "operands padded differently");
            if (q) out->inner[d] = q;
        }
    for (int32_t j = 0; j < n->n_inputs; j++) {
        if (k->p->types[ins[j]].rank != rank) continue; /* 0-d operands of variadic ops */
        if (!pad_eq(&k->pad[ins[j]], out, rank) && (in[j] = tt_ir_bk_regen(k, ins[j], out, 0)) == TT_IR_NONE)
            return false;
    }
    return true;
}

/* A mean's divisor: constant c = the element count of a sum over padded dims, as s * (c / s) computed at run time
 * (an i64 product: exact, so the division is the original's bit for bit). */
static tt_ir_value mean_divisor(bk *k, const tt_ir_node *n, const tt_ir_value *ins, const tt_ir_type *t) {
    const tt_ir_program *p = k->p;
    const tt_ir_node *c = &p->nodes[p->value_node[ins[1]]];
    if (c->op == TT_OP_BROADCAST_IN_DIM) c = &p->nodes[p->value_node[p->operands[c->inputs_offset]]];
    const tt_ir_node *r = &p->nodes[p->value_node[ins[0]]];
    if (r->op == TT_OP_CONVERT) r = &p->nodes[p->value_node[p->operands[r->inputs_offset]]];
    if (c->op != TT_OP_CONSTANT || r->op != TT_OP_REDUCE || r->attrs.reduce.kind != TT_REDUCE_ADD) return TT_IR_NONE;
    const tt_ir_type *ct = &p->types[c->outputs[0]];
    tt_ir_value x = p->operands[r->inputs_offset];
    const tt_ir_type *xt = &p->types[x];
    if (ct->rank != 0 || !tt_dtype_is_float(ct->dtype)) return TT_IR_NONE;
    int64_t count = 1, rest = 1;
    int32_t m = 0;
    for (int64_t i = 0; i < r->attrs.reduce.dims.n; i++) {
        int64_t d = r->attrs.reduce.dims.v[i], D = xt->dims[d];
        count *= D;
        if (k->pad[x].inner[d]) m++, rest *= D / k->s;
        else rest *= D;
    }
    if (m == 0) return TT_IR_NONE;
    double cv = 0;
    const uint8_t *raw = p->constants + c->attrs.constant.offset;
    if (ct->dtype == TT_F32) {
        float f;
        memcpy(&f, raw, 4);
        cv = f;
    } else if (ct->dtype == TT_F64) {
        memcpy(&cv, raw, 8);
    } else {
        return TT_IR_NONE;
    }
    if (cv != (double)count) return TT_IR_NONE;
    tt_ir_value v = tt_ir_constant_scalar(k->b, TT_I64, (double)rest);
    for (int32_t i = 0; i < m; i++) v = tt_ir_binary(k->b, TT_OP_MULTIPLY, v, k->n);
    v = tt_ir_convert(k->b, v, ct->dtype);
    int64_t dims[TT_MAX_RANK];
    if (!tt_ir_bk_padded_dims(k, t, &k->pad[n->outputs[0]], dims)) return TT_IR_NONE;
    return tt_ir_broadcast_in_dim(k->b, v, t->rank, dims, NULL);
}

/* A gather of in[0] (padding op) at indices in[1] (padding ip); *q: the result's. */
tt_ir_value tt_ir_bk_emit_gather(bk *k, const tt_ir_node *n, const tt_ir_value *ins, const tt_ir_value *in,
                               const tt_ir_bucket_pad *op, const tt_ir_bucket_pad *ip, tt_ir_bucket_pad *q) {
    const tt_ir_program *p = k->p;
    const tt_ir_attrs *a = &n->attrs;
    const tt_ir_type *ot = &p->types[ins[0]], *it = &p->types[ins[1]], *t = &p->types[n->outputs[0]];
    /* the operand: padded only in dims the gather takes whole (offset dims, not indexed) */
    int64_t off = 0; /* operand dims that are offset dims, in order */
    bool result_dim_is_offset[TT_MAX_RANK] = {false};
    for (int64_t i = 0; i < a->gather.offset_dims.n; i++) result_dim_is_offset[a->gather.offset_dims.v[i]] = true;
    int64_t offset_operand_dim[TT_MAX_RANK];
    for (int32_t d = 0; d < ot->rank; d++) {
        bool collapsed = false, indexed = false;
        for (int64_t i = 0; i < a->gather.collapsed_slice_dims.n; i++)
            collapsed |= a->gather.collapsed_slice_dims.v[i] == d;
        for (int64_t i = 0; i < a->gather.start_index_map.n; i++) indexed |= a->gather.start_index_map.v[i] == d;
        if (!collapsed) offset_operand_dim[off++] = d;
        if (!op->inner[d]) continue;
        if (!indexed && a->gather.slice_sizes.v[d] == ot->dims[d]) continue; /* taken whole */
        /* indexed element by element: real indices read the same elements padded, if they are all below the size
         * (beyond it the original clamps or raises at s, the padded program would not) */
        int64_t c = 0;
        while (c < a->gather.start_index_map.n && a->gather.start_index_map.v[c] != d) c++;
        if (!indexed || a->gather.slice_sizes.v[d] != 1 || op->inner[d] != 1 || ot->dims[d] != k->s ||
            !tt_ir_bk_component_below_size(k, ins[1], a->gather.index_vector_dim, c))
            return tt_ir_bk_fail(k, n, "gathers along a padded dim");
    }
    if (a->gather.index_vector_dim < it->rank && ip->inner[a->gather.index_vector_dim])
        return tt_ir_bk_fail(k, n, "padded index vectors");
    *q = no_pad;
    int32_t bi = 0, oi = 0;
    for (int32_t r = 0; r < t->rank; r++) {
        if (result_dim_is_offset[r]) {
            q->inner[r] = op->inner[offset_operand_dim[oi++]];
        } else {
            if (bi == a->gather.index_vector_dim) bi++;
            q->inner[r] = ip->inner[bi++];
        }
    }
    tt_ir_value idx = in[1];
    if (is_padded(ip, it->rank)) idx = tt_ir_bk_masked(k, idx, ip, NULL, TT_REDUCE_NONE); /* padding reads row 0 */
    tt_ir_attrs g = *a;
    for (int32_t d = 0; d < ot->rank; d++)
        if (op->inner[d] && g.gather.slice_sizes.v[d] == ot->dims[d])
            g.gather.slice_sizes.v[d] = ot->dims[d] / k->s * k->S;
    return tt_ir_gather(k->b, in[0], idx, &g);
}

static tt_ir_value emit_dot(bk *k, const tt_ir_node *n, const tt_ir_value *ins, tt_ir_value *in, tt_ir_bucket_pad *q) {
    const tt_ir_program *p = k->p;
    const tt_ir_attrs *a = &n->attrs;
    const tt_ir_type *lt = &p->types[ins[0]], *rt = &p->types[ins[1]];
    tt_ir_bucket_pad lp = k->pad[ins[0]], rp = k->pad[ins[1]];
    bool lmask[TT_MAX_RANK] = {false}, rmask[TT_MAX_RANK] = {false}, lfree[TT_MAX_RANK], rfree[TT_MAX_RANK];
    for (int32_t d = 0; d < TT_MAX_RANK; d++) lfree[d] = rfree[d] = true;
    bool any = false;
    for (int32_t pass = 0; pass < 2; pass++) {
        const tt_ir_dims *ld = pass ? &a->dot.lhs_contract : &a->dot.lhs_batch;
        const tt_ir_dims *rd = pass ? &a->dot.rhs_contract : &a->dot.rhs_batch;
        for (int64_t i = 0; i < ld->n; i++) {
            int64_t l = ld->v[i], r = rd->v[i];
            lfree[l] = rfree[r] = false;
            if (lp.inner[l] == rp.inner[r]) {
                if (pass && lp.inner[l]) lmask[l] = rmask[r] = any = true;
                continue;
            }
            /* one side carries the size, the other is rebuilt to carry it too */
            int64_t want = lp.inner[l] ? lp.inner[l] : rp.inner[r];
            if (lp.inner[l] && rp.inner[r]) return tt_ir_bk_fail(k, n, "operands padded differently");
            if (!lp.inner[l]) lp.inner[l] = want;
            else rp.inner[r] = want;
            if (pass) lmask[l] = rmask[r] = any = true;
        }
    }
    if (!pad_eq(&lp, &k->pad[ins[0]], lt->rank) && (in[0] = tt_ir_bk_regen(k, ins[0], &lp, 0)) == TT_IR_NONE)
        return TT_IR_NONE;
    if (!pad_eq(&rp, &k->pad[ins[1]], rt->rank) && (in[1] = tt_ir_bk_regen(k, ins[1], &rp, 0)) == TT_IR_NONE)
        return TT_IR_NONE;
    tt_ir_value l = in[0], r = in[1];
    if (any) { /* both sides: 0 x garbage could be NaN */
        l = tt_ir_bk_masked(k, l, &lp, lmask, TT_REDUCE_ADD);
        r = tt_ir_bk_masked(k, r, &rp, rmask, TT_REDUCE_ADD);
    }
    *q = no_pad;
    int32_t o = 0;
    for (int64_t i = 0; i < a->dot.lhs_batch.n; i++) q->inner[o++] = lp.inner[a->dot.lhs_batch.v[i]];
    for (int32_t d = 0; d < lt->rank; d++)
        if (lfree[d]) q->inner[o++] = lp.inner[d];
    for (int32_t d = 0; d < rt->rank; d++)
        if (rfree[d]) q->inner[o++] = rp.inner[d];
    return tt_ir_dot_general(k->b, l, r, a, p->types[n->outputs[0]].dtype);
}

/* One node of p into b; false when it has no rule for its padding. */
static bool emit(bk *k, const tt_ir_node *n) {
    const tt_ir_program *p = k->p;
    const tt_ir_value *ins = p->operands + n->inputs_offset;
    const tt_ir_attrs *a = &n->attrs;
    tt_ir_value out = n->outputs[0];
    const tt_ir_type *t = &p->types[out];
    tt_ir_value in[64];
    if (n->n_inputs > 64) return refuse(k, n, "too many operands");
    bool any_in = false;
    for (int32_t j = 0; j < n->n_inputs; j++) {
        in[j] = k->map[ins[j]];
        any_in |= is_padded(&k->pad[ins[j]], p->types[ins[j]].rank);
    }
    tt_ir_bucket_pad *q = &k->pad[out];
    *q = no_pad;
    int64_t dims[TT_MAX_RANK];
    tt_ir_value v = TT_IR_NONE;
    bool elementwise = n->op >= TT_OP_ABS && n->op <= TT_OP_CONVERT;
    if (elementwise && any_in && !unify(k, n, t->rank, in, q)) return false;
    if (n->op == TT_OP_DIVIDE) { /* its operands may be unpadded: the sum reduced every padded dim */
        tt_ir_value c = mean_divisor(k, n, ins, t);
        if (c != TT_IR_NONE) in[1] = c;
    }
    if (n->op == TT_OP_CONSTANT && t->rank == 0 && tt_dtype_is_int(t->dtype)) {
        /* An integer equal to the size (a negative index's wrap-around, a length) becomes the size: true for this
         * program, and a program of another size shares the result only if its constant there was its size too */
        uint64_t c = 0;
        size_t es = tt_dtype_size(t->dtype);
        memcpy(&c, p->constants + a->constant.offset, es); /* little endian; sizes are positive */
        if (c == (uint64_t)k->s) {
            k->map[out] = tt_ir_convert(k->b, k->n, t->dtype);
            return true;
        }
    }
    if (!any_in && !elementwise) {
        tt_ir_value second = TT_IR_NONE;
        v = tt_ir_inline_node(k->b, p, n, in, NULL, &second);
        if (n->n_outputs > 1) k->map[n->outputs[1]] = second;
        k->map[out] = v;
        return v != TT_IR_NONE || tt_ir_builder_status(k->b) != TT_OK;
    }
    if (n->op >= TT_OP_ABS && n->op <= TT_OP_NEXTAFTER) {
        v = tt_ir_inline_node(k->b, p, n, in, NULL, NULL);
        k->map[out] = v;
        return true;
    }
    switch (n->op) {
    case TT_OP_COMPARE:
    case TT_OP_SELECT:
    case TT_OP_CLAMP:
    case TT_OP_CONVERT: v = tt_ir_inline_node(k->b, p, n, in, NULL, NULL); break;
    case TT_OP_BROADCAST_IN_DIM: {
        const tt_ir_type *x = &p->types[ins[0]];
        for (int32_t i = 0; i < x->rank; i++)
            if (x->dims[i] == t->dims[a->broadcast.dims.v[i]])
                q->inner[a->broadcast.dims.v[i]] = k->pad[ins[0]].inner[i];
        if (!tt_ir_bk_padded_dims(k, t, q, dims)) return refuse(k, n, "a broadcast of a padded dim");
        v = tt_ir_broadcast_in_dim(k->b, in[0], t->rank, dims, a->broadcast.dims.v);
        break;
    }
    case TT_OP_RESHAPE: {
        const tt_ir_type *x = &p->types[ins[0]];
        if (!tt_ir_bucket_reshape(k->s, x->rank, x->dims, &k->pad[ins[0]], t->rank, t->dims, q) ||
            !tt_ir_bk_padded_dims(k, t, q, dims))
            return refuse(k, n, "a reshape that splits the padded size");
        v = tt_ir_reshape(k->b, in[0], t->rank, dims);
        break;
    }
    case TT_OP_TRANSPOSE:
        for (int32_t i = 0; i < t->rank; i++) q->inner[i] = k->pad[ins[0]].inner[a->transpose.perm.v[i]];
        v = tt_ir_transpose(k->b, in[0], a->transpose.perm.v);
        break;
    case TT_OP_SLICE: {
        const tt_ir_type *x = &p->types[ins[0]];
        int64_t limit[TT_MAX_RANK];
        for (int32_t d = 0; d < t->rank; d++) {
            limit[d] = a->slice.limit.v[d];
            int64_t qi = k->pad[ins[0]].inner[d];
            if (!qi) continue;
            if (a->slice.start.v[d] != 0 || limit[d] != x->dims[d] || a->slice.stride.v[d] != 1)
                return refuse(k, n, "a slice along a padded dim");
            q->inner[d] = qi;
            limit[d] = x->dims[d] / k->s * k->S;
        }
        v = tt_ir_slice(k->b, in[0], a->slice.start.v, limit, a->slice.stride.v);
        break;
    }
    case TT_OP_PAD: {
        const tt_ir_bucket_pad *xp = &k->pad[ins[0]];
        for (int32_t d = 0; d < t->rank; d++) {
            if (xp->inner[d] && (a->pad.low.v[d] || a->pad.high.v[d] || a->pad.interior.v[d]))
                return refuse(k, n, "a pad along a padded dim");
            q->inner[d] = xp->inner[d];
        }
        v = tt_ir_pad(k->b, in[0], in[1], a->pad.low.v, a->pad.high.v, a->pad.interior.v);
        break;
    }
    case TT_OP_CONCATENATE: {
        if (!unify(k, n, t->rank, in, q)) return false;
        if (q->inner[a->concatenate.dim]) return refuse(k, n, "a concatenation along a padded dim");
        v = tt_ir_concatenate(k->b, n->n_inputs, in, a->concatenate.dim);
        break;
    }
    case TT_OP_REDUCE: {
        const tt_ir_bucket_pad *xp = &k->pad[ins[0]];
        const tt_ir_type *x = &p->types[ins[0]];
        bool red[TT_MAX_RANK] = {false}, mask = false;
        for (int64_t i = 0; i < a->reduce.dims.n; i++) {
            red[a->reduce.dims.v[i]] = true;
            mask |= xp->inner[a->reduce.dims.v[i]] != 0;
        }
        for (int32_t d = 0, o = 0; d < x->rank; d++)
            if (!red[d]) q->inner[o++] = xp->inner[d];
        tt_ir_value x2 = mask ? tt_ir_bk_masked(k, in[0], xp, red, a->reduce.kind) : in[0];
        v = tt_ir_reduce(k->b, a->reduce.kind, x2, (int32_t)a->reduce.dims.n, a->reduce.dims.v);
        break;
    }
    case TT_OP_ARG_REDUCE: {
        const tt_ir_bucket_pad *xp = &k->pad[ins[0]];
        const tt_ir_type *x = &p->types[ins[0]];
        int64_t d0 = a->arg_reduce.dim;
        bool red[TT_MAX_RANK] = {false};
        red[d0] = true;
        /* an index along the dim counts padding before it unless the size is the dim's outermost factor */
        if (xp->inner[d0] && x->dims[d0] != k->s * xp->inner[d0])
            return refuse(k, n, "an arg-reduction over a merged padded dim");
        for (int32_t d = 0, o = 0; d < x->rank; d++)
            if (d != d0) q->inner[o++] = xp->inner[d];
        tt_ir_reduce_kind id = a->arg_reduce.is_min ? TT_REDUCE_MIN : TT_REDUCE_MAX;
        tt_ir_value x2 = xp->inner[d0] ? tt_ir_bk_masked(k, in[0], xp, red, id) : in[0];
        v = tt_ir_arg_reduce(k->b, x2, d0, a->arg_reduce.is_min);
        break;
    }
    case TT_OP_CUMULATIVE: {
        const tt_ir_bucket_pad *xp = &k->pad[ins[0]];
        bool red[TT_MAX_RANK] = {false};
        red[a->cumulative.dim] = true;
        *q = *xp;
        tt_ir_value x2 = xp->inner[a->cumulative.dim] ? tt_ir_bk_masked(k, in[0], xp, red, a->cumulative.kind) : in[0];
        v = tt_ir_cumulative(k->b, a->cumulative.kind, x2, a->cumulative.dim, a->cumulative.reverse);
        break;
    }
    case TT_OP_REDUCE_WINDOW: {
        const tt_ir_bucket_pad *xp = &k->pad[ins[0]];
        for (int32_t d = 0; d < t->rank; d++) {
            if (xp->inner[d] && (a->reduce_window.window.v[d] != 1 || a->reduce_window.strides.v[d] != 1 ||
                                 a->reduce_window.pad_low.v[d] || a->reduce_window.pad_high.v[d] ||
                                 a->reduce_window.window_dilation.v[d] != 1))
                return refuse(k, n, "a window along a padded dim");
            q->inner[d] = xp->inner[d];
        }
        v = tt_ir_reduce_window(k->b, in[0], a);
        break;
    }
    case TT_OP_GATHER: v = tt_ir_bk_emit_gather(k, n, ins, in, &k->pad[ins[0]], &k->pad[ins[1]], q); break;
    case TT_OP_DOT_GENERAL: v = emit_dot(k, n, ins, in, q); break;
    case TT_OP_SORT: {
        int64_t d0 = a->sort.dim;
        if (!unify(k, n, t->rank, in, q)) return false;
        if (q->inner[d0]) return refuse(k, n, "a sort along a padded dim");
        tt_ir_value outs[2] = {TT_IR_NONE, TT_IR_NONE};
        v = tt_ir_sort(k->b, n->n_inputs, in, d0, a->sort.descending, a->sort.stable, outs);
        if (n->n_outputs > 1) k->map[n->outputs[1]] = outs[1], k->pad[n->outputs[1]] = *q;
        break;
    }
    default: return refuse(k, n, "no rule for a padded operand");
    }
    if (k->failed) return false;
    k->map[out] = v;
    return true;
}

tt_status tt_ir_bucket(const tt_ir_program *p, int64_t size, int64_t bucket, const tt_ir_bucket_pad *param_pads,
                       tt_ir_program **out, tt_ir_bucket_pad *out_pads) {
    return tt_ir_bucket_ex(p, size, bucket, param_pads, out, out_pads, NULL, NULL);
}

tt_status tt_ir_bucket_ex(const tt_ir_program *p, int64_t size, int64_t bucket, const tt_ir_bucket_pad *param_pads,
                          tt_ir_program **out, tt_ir_bucket_pad *out_pads, tt_ir_bucket_want *want,
                          tt_ir_bucket_scalar *scalars) {
    *out = NULL;
    if (want) want->param = -1;
    if (size < 2 || bucket < size)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "bucket: size %lld in a bucket of %lld", (long long)size,
                        (long long)bucket);
    bk k = {.p = p, .s = size, .S = bucket, .want = {.param = -1}, .scalars = scalars};
    k.map = malloc(sizeof *k.map * (size_t)p->n_values);
    k.pad = calloc((size_t)p->n_values, sizeof *k.pad);
    k.b = tt_ir_builder_create();
    tt_status st = TT_OK;
    if (!k.map || !k.pad || !k.b) st = tt_error(TT_STATUS_OUT_OF_MEMORY, "bucket: out of memory");
    bool seeded = false;
    for (int32_t i = 0; st == TT_OK && i < p->n_params; i++) { /* in index order: the same parameter indices */
        tt_ir_value v = p->params[i];
        const tt_ir_type *t = &p->types[v];
        if (p->nodes[p->value_node[v]].op == TT_OP_SCALAR_PARAMETER) {
            k.map[v] = tt_ir_scalar_param(k.b, t->dtype);
            continue;
        }
        int64_t dims[TT_MAX_RANK];
        k.pad[v] = param_pads ? param_pads[i] : no_pad;
        for (int32_t d = t->rank; d < TT_MAX_RANK; d++) k.pad[v].inner[d] = 0;
        if (!tt_ir_bk_padded_dims(&k, t, &k.pad[v], dims))
            st = tt_error(TT_STATUS_INVALID_ARGUMENT, "bucket: parameter %d has no factor %lld where it is padded",
                          (int)i, (long long)size);
        seeded |= is_padded(&k.pad[v], t->rank);
        k.map[v] = tt_ir_param(k.b, t->dtype, t->rank, dims);
    }
    if (st == TT_OK && !seeded) st = tt_error(TT_STATUS_UNSUPPORTED, "bucket: no parameter is padded");
    if (st == TT_OK) k.n = tt_ir_scalar_param(k.b, TT_I64);
    for (int32_t j = 0; st == TT_OK && j < p->n_nodes; j++) {
        const tt_ir_node *n = &p->nodes[j];
        if (n->op == TT_OP_PARAMETER || n->op == TT_OP_SCALAR_PARAMETER) continue;
        if (!emit(&k, n)) st = k.failed ? TT_STATUS_UNSUPPORTED : tt_ir_builder_status(k.b);
        else if ((st = tt_ir_builder_status(k.b)) != TT_OK) st = tt_error(st, "bucket: %s", tt_last_error());
    }
    for (int32_t i = 0; st == TT_OK && i < p->n_outputs; i++) {
        tt_ir_value v = p->outputs[i], r = k.map[v];
        out_pads[i] = k.pad[v];
        /* a result of the real size built inside (a mask from iotas) is built padded too: else its shape would
         * differ per size, and the program with it */
        const tt_ir_type *t = &p->types[v];
        tt_ir_bucket_pad all = no_pad;
        bool any = false;
        for (int32_t d = 0; d < t->rank; d++)
            if (t->dims[d] == size && !k.pad[v].inner[d]) all.inner[d] = 1, any = true;
        if (any && !is_padded(&k.pad[v], t->rank)) {
            k.probing = true;
            tt_ir_value g = tt_ir_bk_regen(&k, v, &all, 0);
            k.probing = false;
            if (g != TT_IR_NONE && tt_ir_builder_status(k.b) == TT_OK) r = g, out_pads[i] = all;
        }
        tt_ir_builder_add_output(k.b, r);
    }
    if (st == TT_OK) st = tt_ir_builder_finish(k.b, out);
    if (st == TT_STATUS_UNSUPPORTED && want) *want = k.want;
    tt_ir_builder_destroy(k.b);
    free(k.map);
    free(k.pad);
    return st;
}
