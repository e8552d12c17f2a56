/* infer.c — result types of every IR op, with full argument validation (StableHLO shape rules, no implicit
 * broadcasting or dtype conversion). Shared by the builder (on every op) and the verifier (on every node). */
#include "ir_internal.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

char *tt_ir_type_str(const tt_ir_type *t, char *buf) {
    size_t n = 0, cap = TT_IR_TYPE_STR_MAX;
    n += (size_t)snprintf(buf, cap, "%s[", tt_dtype_name(t->dtype));
    int32_t rank = t->rank < 0 ? 0 : (t->rank > TT_MAX_RANK ? TT_MAX_RANK : t->rank);
    for (int32_t i = 0; i < rank && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, i ? ",%lld" : "%lld", (long long)t->dims[i]);
    if (n < cap) snprintf(buf + n, cap - n, "]");
    return buf;
}

/* Records "<op name in lower case>: <message>" as the thread's error. */
static tt_status fail(tt_ir_op op, tt_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static tt_status fail(tt_ir_op op, tt_status st, const char *fmt, ...) {
    char name[48], msg[900];
    const char *src = tt_ir_op_name(op);
    size_t i = 0;
    for (; src[i] && i + 1 < sizeof name; i++) name[i] = (char)tolower((unsigned char)src[i]);
    name[i] = '\0';
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return tt_error(st, "%s: %s", name, msg);
}

tt_status tt_ir_check_type(const char *what, const tt_ir_type *t) {
    if ((unsigned)t->dtype >= TT_DTYPE_COUNT) return tt_error(TT_STATUS_TYPE, "%s: unknown dtype %d", what, (int)t->dtype);
    if (t->rank < 0) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: negative rank %d", what, (int)t->rank);
    if (t->rank > TT_MAX_RANK)
        return tt_error(TT_STATUS_UNSUPPORTED, "%s: rank %d exceeds the maximum rank %d", what, (int)t->rank,
                        TT_MAX_RANK);
    int64_t numel = 1;
    for (int32_t i = 0; i < t->rank; i++) {
        int64_t d = t->dims[i];
        if (d < 0) return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: negative dimension %lld", what, (long long)d);
        /* keep element and byte counts far from int64 overflow */
        if (d > 0 && numel > ((int64_t)1 << 56) / d)
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: shape has too many elements", what);
        numel *= d;
    }
    return TT_OK;
}

/* Overflow-checked (a - 1) * m + 1 for a > 0 (0 for a == 0) and a + b + c; false on int64 overflow. User
 * attributes can be anything, and signed overflow is undefined behaviour. */
static bool dilate(int64_t a, int64_t m, int64_t *r) {
    if (a <= 0) {
        *r = 0;
        return true;
    }
    return !__builtin_mul_overflow(a - 1, m, r) && !__builtin_add_overflow(*r, 1, r);
}
static bool add3(int64_t a, int64_t b, int64_t c, int64_t *r) {
    return !__builtin_add_overflow(a, b, r) && !__builtin_add_overflow(*r, c, r);
}

static void set_type(tt_ir_type *t, tt_dtype dt, int32_t rank, const int64_t *dims) {
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->rank = rank;
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
}

static bool same_type(const tt_ir_type *a, const tt_ir_type *b) {
    if (a->dtype != b->dtype || a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static bool same_shape(const tt_ir_type *a, const tt_ir_type *b) {
    if (a->rank != b->rank) return false;
    for (int32_t i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return false;
    return true;
}

static bool is_i64_scalar(const tt_ir_type *t) { return t->dtype == TT_I64 && t->rank == 0; }

/* A dims list of n entries each in [0, bound), no repeats (and ascending if sorted). */
static tt_status check_dim_list(tt_ir_op op, const char *what, const tt_ir_dims *d, int64_t bound, bool sorted) {
    if (d->n < 0 || d->n > TT_MAX_RANK)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s has %lld entries", what, (long long)d->n);
    for (int64_t i = 0; i < d->n; i++) {
        if (d->v[i] < 0 || d->v[i] >= bound)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s[%lld] = %lld is out of range [0, %lld)", what,
                        (long long)i, (long long)d->v[i], (long long)bound);
        for (int64_t j = 0; j < i; j++) {
            if (d->v[j] == d->v[i])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s repeats dimension %lld", what, (long long)d->v[i]);
            if (sorted && d->v[j] > d->v[i])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s must be sorted ascending", what);
        }
    }
    return TT_OK;
}

static bool dims_contains(const tt_ir_dims *d, int64_t x) {
    for (int64_t i = 0; i < d->n; i++)
        if (d->v[i] == x) return true;
    return false;
}

static bool kind_ok_for(tt_ir_reduce_kind k, tt_dtype dt, bool allow_none) {
    switch (k) {
    case TT_REDUCE_NONE: return allow_none;
    case TT_REDUCE_ADD:
    case TT_REDUCE_MUL:
    case TT_REDUCE_MAX:
    case TT_REDUCE_MIN: return true;
    case TT_REDUCE_AND:
    case TT_REDUCE_OR: return dt == TT_BOOL || tt_dtype_is_int(dt);
    }
    return false;
}

static tt_status check_kind(tt_ir_op op, tt_ir_reduce_kind k, tt_dtype dt, bool allow_none) {
    if ((unsigned)k > TT_REDUCE_OR || (k == TT_REDUCE_NONE && !allow_none))
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid reduction kind %d", (int)k);
    if (!kind_ok_for(k, dt, allow_none))
        return fail(op, TT_STATUS_TYPE, "reduction kind %d needs a bool or integer operand, got %s", (int)k,
                    tt_dtype_name(dt));
    return TT_OK;
}

static tt_status infer_unary(tt_ir_op op, const tt_ir_type *x, tt_ir_type *out) {
    tt_dtype dt = x->dtype;
    bool ok;
    switch (op) {
    case TT_OP_ABS: ok = tt_dtype_is_signed(dt); break;
    case TT_OP_NEGATE:
    case TT_OP_SIGN: ok = dt != TT_BOOL; break;
    case TT_OP_NOT: ok = dt == TT_BOOL || tt_dtype_is_int(dt); break;
    default: ok = tt_dtype_is_float(dt); break;
    }
    if (!ok) return fail(op, TT_STATUS_TYPE, "unsupported operand dtype %s", tt_dtype_name(dt));
    *out = *x;
    if (op == TT_OP_IS_FINITE) out->dtype = TT_BOOL;
    return TT_OK;
}

static tt_status infer_binary(tt_ir_op op, const tt_ir_type *x, const tt_ir_type *y, tt_ir_type *out) {
    char sa[TT_IR_TYPE_STR_MAX], sb[TT_IR_TYPE_STR_MAX];
    if (x->dtype != y->dtype)
        return fail(op, TT_STATUS_TYPE, "operand dtypes differ: %s and %s (convert first)", tt_ir_type_str(x, sa),
                    tt_ir_type_str(y, sb));
    if (!same_shape(x, y))
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "operand shapes differ: %s and %s (broadcast first)",
                    tt_ir_type_str(x, sa), tt_ir_type_str(y, sb));
    tt_dtype dt = x->dtype;
    bool ok;
    switch (op) {
    case TT_OP_ADD:
    case TT_OP_MULTIPLY:
    case TT_OP_MAXIMUM:
    case TT_OP_MINIMUM:
    case TT_OP_COMPARE: ok = true; break;
    case TT_OP_SUBTRACT:
    case TT_OP_DIVIDE:
    case TT_OP_REMAINDER:
    case TT_OP_POWER: ok = dt != TT_BOOL; break;
    case TT_OP_ATAN2:
    case TT_OP_NEXTAFTER: ok = tt_dtype_is_float(dt); break;
    case TT_OP_AND:
    case TT_OP_OR:
    case TT_OP_XOR: ok = dt == TT_BOOL || tt_dtype_is_int(dt); break;
    case TT_OP_SHIFT_LEFT:
    case TT_OP_SHIFT_RIGHT_ARITHMETIC:
    case TT_OP_SHIFT_RIGHT_LOGICAL: ok = tt_dtype_is_int(dt); break;
    default: ok = false; break;
    }
    if (!ok) return fail(op, TT_STATUS_TYPE, "unsupported operand dtype %s", tt_dtype_name(dt));
    *out = *x;
    if (op == TT_OP_COMPARE) out->dtype = TT_BOOL;
    return TT_OK;
}

static tt_status infer_gather(const tt_ir_attrs *a, const tt_ir_type *opd, const tt_ir_type *idx, tt_ir_type *out) {
    const tt_ir_op op = TT_OP_GATHER;
    tt_status st;
    if (!tt_dtype_is_int(idx->dtype))
        return fail(op, TT_STATUS_TYPE, "start_indices must be integers, got %s", tt_dtype_name(idx->dtype));
    int64_t R = opd->rank, ivd = a->gather.index_vector_dim;
    if (ivd < 0 || ivd > idx->rank)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "index_vector_dim %lld out of range [0, %d]", (long long)ivd,
                    (int)idx->rank);
    int64_t index_len = ivd < idx->rank ? idx->dims[ivd] : 1;
    if ((st = check_dim_list(op, "start_index_map", &a->gather.start_index_map, R, false))) return st;
    if (a->gather.start_index_map.n != index_len)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "start_index_map has %lld entries but the index vector has %lld",
                    (long long)a->gather.start_index_map.n, (long long)index_len);
    if ((st = check_dim_list(op, "collapsed_slice_dims", &a->gather.collapsed_slice_dims, R, true))) return st;
    const tt_ir_dims *ss = &a->gather.slice_sizes;
    if (ss->n != R)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "slice_sizes has %lld entries, operand rank is %lld",
                    (long long)ss->n, (long long)R);
    for (int64_t i = 0; i < R; i++)
        if (ss->v[i] < 0 || ss->v[i] > opd->dims[i])
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "slice_sizes[%lld] = %lld exceeds operand dim %lld",
                        (long long)i, (long long)ss->v[i], (long long)opd->dims[i]);
    for (int64_t i = 0; i < a->gather.collapsed_slice_dims.n; i++)
        if (ss->v[a->gather.collapsed_slice_dims.v[i]] > 1)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "collapsed dimension %lld has slice size %lld (must be <= 1)",
                        (long long)a->gather.collapsed_slice_dims.v[i],
                        (long long)ss->v[a->gather.collapsed_slice_dims.v[i]]);
    int64_t n_offset = R - a->gather.collapsed_slice_dims.n;
    int64_t n_batch = idx->rank - (ivd < idx->rank ? 1 : 0);
    int64_t out_rank = n_batch + n_offset;
    if (out_rank > TT_MAX_RANK)
        return fail(op, TT_STATUS_UNSUPPORTED, "result rank %lld exceeds %d", (long long)out_rank, TT_MAX_RANK);
    if (a->gather.offset_dims.n != n_offset)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "offset_dims has %lld entries, expected %lld",
                    (long long)a->gather.offset_dims.n, (long long)n_offset);
    if ((st = check_dim_list(op, "offset_dims", &a->gather.offset_dims, out_rank, true))) return st;
    memset(out, 0, sizeof *out);
    out->dtype = opd->dtype;
    out->rank = (int32_t)out_rank;
    int64_t bi = 0, oi = 0;
    for (int64_t d = 0; d < out_rank; d++) {
        if (dims_contains(&a->gather.offset_dims, d)) {
            while (dims_contains(&a->gather.collapsed_slice_dims, oi)) oi++;
            out->dims[d] = ss->v[oi++];
        } else {
            if (bi == ivd) bi++;
            out->dims[d] = idx->dims[bi++];
        }
    }
    return TT_OK;
}

static tt_status infer_scatter(const tt_ir_attrs *a, const tt_ir_type *opd, const tt_ir_type *idx,
                               const tt_ir_type *upd, tt_ir_type *out) {
    const tt_ir_op op = TT_OP_SCATTER;
    char sa[TT_IR_TYPE_STR_MAX], sb[TT_IR_TYPE_STR_MAX];
    tt_status st;
    if (!tt_dtype_is_int(idx->dtype))
        return fail(op, TT_STATUS_TYPE, "scatter_indices must be integers, got %s", tt_dtype_name(idx->dtype));
    if (upd->dtype != opd->dtype)
        return fail(op, TT_STATUS_TYPE, "updates %s and operand %s dtypes differ", tt_ir_type_str(upd, sa),
                    tt_ir_type_str(opd, sb));
    if ((st = check_kind(op, a->scatter.kind, opd->dtype, true))) return st;
    int64_t R = opd->rank, ivd = a->scatter.index_vector_dim;
    if (ivd < 0 || ivd > idx->rank)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "index_vector_dim %lld out of range [0, %d]", (long long)ivd,
                    (int)idx->rank);
    int64_t index_len = ivd < idx->rank ? idx->dims[ivd] : 1;
    const tt_ir_dims *uwd = &a->scatter.update_window_dims, *iwd = &a->scatter.inserted_window_dims,
                     *sdod = &a->scatter.scatter_dims_to_operand_dims;
    if ((st = check_dim_list(op, "scatter_dims_to_operand_dims", sdod, R, false))) return st;
    if (sdod->n != index_len)
        return fail(op, TT_STATUS_INVALID_ARGUMENT,
                    "scatter_dims_to_operand_dims has %lld entries but the index vector has %lld", (long long)sdod->n,
                    (long long)index_len);
    if ((st = check_dim_list(op, "inserted_window_dims", iwd, R, true))) return st;
    if ((st = check_dim_list(op, "update_window_dims", uwd, upd->rank, true))) return st;
    if (uwd->n + iwd->n != R)
        return fail(op, TT_STATUS_INVALID_ARGUMENT,
                    "update_window_dims (%lld) + inserted_window_dims (%lld) must equal the operand rank %lld",
                    (long long)uwd->n, (long long)iwd->n, (long long)R);
    int64_t n_scatter = idx->rank - (ivd < idx->rank ? 1 : 0);
    if (upd->rank != n_scatter + uwd->n)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "updates %s should have rank %lld", tt_ir_type_str(upd, sa),
                    (long long)(n_scatter + uwd->n));
    int64_t si = 0, oi = 0;
    for (int64_t d = 0; d < upd->rank; d++) {
        if (dims_contains(uwd, d)) {
            while (dims_contains(iwd, oi)) oi++;
            if (upd->dims[d] > opd->dims[oi])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "update window dim %lld (%lld) exceeds operand dim %lld "
                            "(%lld)", (long long)d, (long long)upd->dims[d], (long long)oi, (long long)opd->dims[oi]);
            oi++;
        } else {
            if (si == ivd) si++;
            if (upd->dims[d] != idx->dims[si])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "updates %s scatter dim %lld does not match indices %s",
                            tt_ir_type_str(upd, sa), (long long)d, tt_ir_type_str(idx, sb));
            si++;
        }
    }
    *out = *opd;
    return TT_OK;
}

static tt_status infer_dot(const tt_ir_attrs *a, const tt_ir_type *l, const tt_ir_type *r, const tt_ir_type *hint,
                           tt_ir_type *out) {
    const tt_ir_op op = TT_OP_DOT_GENERAL;
    char sa[TT_IR_TYPE_STR_MAX], sb[TT_IR_TYPE_STR_MAX];
    tt_status st;
    if (l->dtype != r->dtype)
        return fail(op, TT_STATUS_TYPE, "operand dtypes differ: %s and %s", tt_ir_type_str(l, sa),
                    tt_ir_type_str(r, sb));
    if (l->dtype == TT_BOOL) return fail(op, TT_STATUS_TYPE, "bool operands are not supported");
    if ((unsigned)a->dot.precision > TT_PRECISION_FP32)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid precision %d", (int)a->dot.precision);
    const tt_ir_dims *lb = &a->dot.lhs_batch, *lc = &a->dot.lhs_contract, *rb = &a->dot.rhs_batch,
                     *rc = &a->dot.rhs_contract;
    if ((st = check_dim_list(op, "lhs_batching_dimensions", lb, l->rank, false))) return st;
    if ((st = check_dim_list(op, "lhs_contracting_dimensions", lc, l->rank, false))) return st;
    if ((st = check_dim_list(op, "rhs_batching_dimensions", rb, r->rank, false))) return st;
    if ((st = check_dim_list(op, "rhs_contracting_dimensions", rc, r->rank, false))) return st;
    if (lb->n != rb->n || lc->n != rc->n)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "lhs and rhs have different numbers of batch or contracting dims");
    for (int64_t i = 0; i < lb->n; i++) {
        if (dims_contains(lc, lb->v[i]) || dims_contains(rc, rb->v[i]))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "a dimension is both batch and contracting");
        if (l->dims[lb->v[i]] != r->dims[rb->v[i]])
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "batch dims differ: lhs %s dim %lld vs rhs %s dim %lld",
                        tt_ir_type_str(l, sa), (long long)lb->v[i], tt_ir_type_str(r, sb), (long long)rb->v[i]);
    }
    for (int64_t i = 0; i < lc->n; i++)
        if (l->dims[lc->v[i]] != r->dims[rc->v[i]])
            return fail(op, TT_STATUS_INVALID_ARGUMENT,
                        "contracting dims differ: lhs %s dim %lld vs rhs %s dim %lld", tt_ir_type_str(l, sa),
                        (long long)lc->v[i], tt_ir_type_str(r, sb), (long long)rc->v[i]);
    int64_t rank = l->rank + r->rank - 2 * lc->n - lb->n;
    if (rank > TT_MAX_RANK) return fail(op, TT_STATUS_UNSUPPORTED, "result rank %lld exceeds %d", (long long)rank, TT_MAX_RANK);
    memset(out, 0, sizeof *out);
    out->dtype = hint ? hint->dtype : l->dtype;
    if ((unsigned)out->dtype >= TT_DTYPE_COUNT || out->dtype == TT_BOOL)
        return fail(op, TT_STATUS_TYPE, "invalid result dtype %d", (int)out->dtype);
    int32_t k = 0;
    for (int64_t i = 0; i < lb->n; i++) out->dims[k++] = l->dims[lb->v[i]];
    for (int32_t d = 0; d < l->rank; d++)
        if (!dims_contains(lb, d) && !dims_contains(lc, d)) out->dims[k++] = l->dims[d];
    for (int32_t d = 0; d < r->rank; d++)
        if (!dims_contains(rb, d) && !dims_contains(rc, d)) out->dims[k++] = r->dims[d];
    out->rank = k;
    return TT_OK;
}

static tt_status infer_conv(const tt_ir_attrs *a, const tt_ir_type *in, const tt_ir_type *k, const tt_ir_type *hint,
                            tt_ir_type *out) {
    const tt_ir_op op = TT_OP_CONVOLUTION;
    char sa[TT_IR_TYPE_STR_MAX], sb[TT_IR_TYPE_STR_MAX];
    if (in->dtype != k->dtype)
        return fail(op, TT_STATUS_TYPE, "input %s and kernel %s dtypes differ", tt_ir_type_str(in, sa),
                    tt_ir_type_str(k, sb));
    if (in->dtype == TT_BOOL) return fail(op, TT_STATUS_TYPE, "bool operands are not supported");
    if (in->rank < 3 || in->rank != k->rank)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "input %s and kernel %s must have equal rank >= 3",
                    tt_ir_type_str(in, sa), tt_ir_type_str(k, sb));
    if ((unsigned)a->conv.precision > TT_PRECISION_FP32)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid precision %d", (int)a->conv.precision);
    int64_t S = in->rank - 2;
    const tt_ir_dims *lists[5] = {&a->conv.strides, &a->conv.pad_low, &a->conv.pad_high, &a->conv.lhs_dilation,
                                  &a->conv.rhs_dilation};
    static const char *names[5] = {"window_strides", "pad_low", "pad_high", "lhs_dilation", "rhs_dilation"};
    for (int i = 0; i < 5; i++) {
        if (lists[i]->n != S)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s has %lld entries, expected %lld (spatial rank)", names[i],
                        (long long)lists[i]->n, (long long)S);
        if (i != 1 && i != 2)
            for (int64_t j = 0; j < S; j++)
                if (lists[i]->v[j] < 1)
                    return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s[%lld] = %lld must be >= 1", names[i],
                                (long long)j, (long long)lists[i]->v[j]);
    }
    int64_t fgc = a->conv.feature_group_count, bgc = a->conv.batch_group_count;
    int64_t N = in->dims[0], C = in->dims[1], O = k->dims[0], I = k->dims[1];
    if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1))
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid group counts feature=%lld batch=%lld", (long long)fgc,
                    (long long)bgc);
    if (C % fgc || O % fgc || C / fgc != I)
        return fail(op, TT_STATUS_INVALID_ARGUMENT,
                    "input %s and kernel %s do not match feature_group_count %lld (need C = I * groups, O %% groups = 0)",
                    tt_ir_type_str(in, sa), tt_ir_type_str(k, sb), (long long)fgc);
    if (N % bgc || O % bgc)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "batch_group_count %lld must divide N %lld and O %lld",
                    (long long)bgc, (long long)N, (long long)O);
    memset(out, 0, sizeof *out);
    out->dtype = hint ? hint->dtype : in->dtype;
    if ((unsigned)out->dtype >= TT_DTYPE_COUNT || out->dtype == TT_BOOL)
        return fail(op, TT_STATUS_TYPE, "invalid result dtype %d", (int)out->dtype);
    out->rank = in->rank;
    out->dims[0] = N / bgc;
    out->dims[1] = O;
    for (int64_t s = 0; s < S; s++) {
        int64_t x = in->dims[2 + s], kk = k->dims[2 + s];
        int64_t xd, kd, padded, span;
        if (!dilate(x, a->conv.lhs_dilation.v[s], &xd) || !dilate(kk, a->conv.rhs_dilation.v[s], &kd) ||
            !add3(xd, a->conv.pad_low.v[s], a->conv.pad_high.v[s], &padded) ||
            __builtin_sub_overflow(padded, kd, &span))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "spatial dim %lld: window attributes overflow", (long long)s);
        if (span < 0 || kk == 0)
            return fail(op, TT_STATUS_INVALID_ARGUMENT,
                        "spatial dim %lld: padded input (%lld) is smaller than the dilated kernel (%lld)", (long long)s,
                        (long long)padded, (long long)kd);
        out->dims[2 + s] = span / a->conv.strides.v[s] + 1;
    }
    return TT_OK;
}

static tt_status infer_reduce_window(const tt_ir_attrs *a, const tt_ir_type *x, tt_ir_type *out) {
    const tt_ir_op op = TT_OP_REDUCE_WINDOW;
    tt_status st;
    if ((st = check_kind(op, a->reduce_window.kind, x->dtype, false))) return st;
    const tt_ir_dims *lists[5] = {&a->reduce_window.window, &a->reduce_window.strides, &a->reduce_window.pad_low,
                                  &a->reduce_window.pad_high, &a->reduce_window.window_dilation};
    static const char *names[5] = {"window_dimensions", "window_strides", "pad_low", "pad_high", "window_dilations"};
    for (int i = 0; i < 5; i++) {
        if (lists[i]->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s has %lld entries, operand rank is %d", names[i],
                        (long long)lists[i]->n, (int)x->rank);
        if (i != 2 && i != 3)
            for (int32_t j = 0; j < x->rank; j++)
                if (lists[i]->v[j] < 1)
                    return fail(op, TT_STATUS_INVALID_ARGUMENT, "%s[%d] = %lld must be >= 1", names[i], (int)j,
                                (long long)lists[i]->v[j]);
    }
    *out = *x;
    for (int32_t d = 0; d < x->rank; d++) {
        int64_t padded, w;
        if (!add3(x->dims[d], a->reduce_window.pad_low.v[d], a->reduce_window.pad_high.v[d], &padded) ||
            !dilate(a->reduce_window.window.v[d], a->reduce_window.window_dilation.v[d], &w))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dim %d: window attributes overflow", (int)d);
        if (padded < 0)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dim %d: negative padded size %lld", (int)d, (long long)padded);
        out->dims[d] = padded < w ? 0 : (padded - w) / a->reduce_window.strides.v[d] + 1;
    }
    return TT_OK;
}

static tt_status check_arity(tt_ir_op op, int32_t n_in) {
    int want = tt_ir_op_arity(op);
    if (want >= 0 && n_in != want)
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "expects %d operands, got %d", want, (int)n_in);
    return TT_OK;
}

static tt_status infer_node(tt_ir_op op, const tt_ir_attrs *a, const tt_ir_type *types, int32_t n_in,
                            const tt_ir_value *ins, const tt_ir_type *hint, tt_ir_type *out, int32_t *n_out) {
    char sa[TT_IR_TYPE_STR_MAX], sb[TT_IR_TYPE_STR_MAX];
    tt_status st;
    if ((st = check_arity(op, n_in))) return st;
    if (op != TT_OP_CUSTOM_CALL && tt_ir_op_arity(op) < 0 && n_in < (op == TT_OP_DYNAMIC_UPDATE_SLICE ? 2 : 1))
        return fail(op, TT_STATUS_INVALID_ARGUMENT, "too few operands (%d)", (int)n_in);
    const tt_ir_type *x = n_in > 0 ? &types[ins[0]] : NULL;
    const tt_ir_type *y = n_in > 1 ? &types[ins[1]] : NULL;
    *n_out = 1;
    memset(out, 0, sizeof *out);
    switch (op) {
    case TT_OP_PARAMETER:
    case TT_OP_SCALAR_PARAMETER:
    case TT_OP_CONSTANT:
    case TT_OP_IOTA:
    case TT_OP_RNG_UNIFORM:
    case TT_OP_CUSTOM_CALL: {
        if (!hint) return fail(op, TT_STATUS_INTERNAL, "no result type given");
        if ((st = tt_ir_check_type(tt_ir_op_name(op), hint))) return st;
        set_type(out, hint->dtype, hint->rank, hint->dims);
        if (op == TT_OP_PARAMETER || op == TT_OP_SCALAR_PARAMETER) {
            if (a->parameter.index < 0) return fail(op, TT_STATUS_INVALID_ARGUMENT, "negative parameter index");
            if (op == TT_OP_SCALAR_PARAMETER && out->rank != 0)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "scalar parameter must be 0-d");
        } else if (op == TT_OP_CONSTANT) {
            int64_t bytes = tt_numel(out->rank, out->dims) * (int64_t)tt_dtype_size(out->dtype);
            if (a->constant.size != bytes || a->constant.offset < 0)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "literal has %lld bytes, %s needs %lld",
                            (long long)a->constant.size, tt_ir_type_str(out, sa), (long long)bytes);
        } else if (op == TT_OP_IOTA) {
            if (out->dtype == TT_BOOL) return fail(op, TT_STATUS_TYPE, "bool result is not supported");
            if (a->iota.dim < 0 || a->iota.dim >= out->rank)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "dimension %lld out of range for %s", (long long)a->iota.dim,
                            tt_ir_type_str(out, sa));
        } else if (op == TT_OP_RNG_UNIFORM) {
            if (!tt_dtype_is_float(out->dtype))
                return fail(op, TT_STATUS_TYPE, "result must be a float dtype, got %s", tt_dtype_name(out->dtype));
            if (!is_i64_scalar(x) || !is_i64_scalar(y))
                return fail(op, TT_STATUS_TYPE, "seed %s and offset %s must be i64[]", tt_ir_type_str(x, sa),
                            tt_ir_type_str(y, sb));
        } else {
            if (a->custom_call.target[0] == '\0' ||
                memchr(a->custom_call.target, '\0', sizeof a->custom_call.target) == NULL)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "empty or unterminated call target");
            for (const char *c = a->custom_call.target; *c; c++)
                if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20)
                    return fail(op, TT_STATUS_INVALID_ARGUMENT, "call target has a character not allowed: %s",
                                a->custom_call.target);
        }
        return TT_OK;
    }
    case TT_OP_ABS: case TT_OP_NEGATE: case TT_OP_SIGN: case TT_OP_FLOOR: case TT_OP_CEIL: case TT_OP_ROUND_EVEN:
    case TT_OP_EXP: case TT_OP_EXPM1: case TT_OP_LOG: case TT_OP_LOG1P: case TT_OP_SQRT: case TT_OP_RSQRT:
    case TT_OP_CBRT: case TT_OP_SIN: case TT_OP_COS: case TT_OP_TAN: case TT_OP_TANH: case TT_OP_ASIN:
    case TT_OP_ACOS: case TT_OP_ATAN: case TT_OP_SINH: case TT_OP_COSH: case TT_OP_ASINH: case TT_OP_ACOSH:
    case TT_OP_ATANH: case TT_OP_LOGISTIC: case TT_OP_ERF: case TT_OP_ERFC: case TT_OP_ERF_INV: case TT_OP_LGAMMA:
    case TT_OP_DIGAMMA: case TT_OP_IS_FINITE: case TT_OP_NOT:
        return infer_unary(op, x, out);
    case TT_OP_ADD: case TT_OP_SUBTRACT: case TT_OP_MULTIPLY: case TT_OP_DIVIDE: case TT_OP_REMAINDER:
    case TT_OP_POWER: case TT_OP_MAXIMUM: case TT_OP_MINIMUM: case TT_OP_ATAN2: case TT_OP_AND: case TT_OP_OR:
    case TT_OP_XOR: case TT_OP_SHIFT_LEFT: case TT_OP_SHIFT_RIGHT_ARITHMETIC: case TT_OP_SHIFT_RIGHT_LOGICAL:
    case TT_OP_NEXTAFTER:
        return infer_binary(op, x, y, out);
    case TT_OP_COMPARE:
        if ((unsigned)a->compare.dir > TT_CMP_GE)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid comparison direction %d", (int)a->compare.dir);
        return infer_binary(op, x, y, out);
    case TT_OP_SELECT: {
        const tt_ir_type *z = &types[ins[2]];
        if (x->dtype != TT_BOOL) return fail(op, TT_STATUS_TYPE, "predicate must be bool, got %s", tt_ir_type_str(x, sa));
        if (!same_type(y, z))
            return fail(op, y->dtype != z->dtype ? TT_STATUS_TYPE : TT_STATUS_INVALID_ARGUMENT,
                        "on_true %s and on_false %s differ", tt_ir_type_str(y, sa), tt_ir_type_str(z, sb));
        if (!same_shape(x, y))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "predicate %s and values %s shapes differ",
                        tt_ir_type_str(x, sa), tt_ir_type_str(y, sb));
        *out = *y;
        return TT_OK;
    }
    case TT_OP_CLAMP: {
        const tt_ir_type *z = &types[ins[2]];
        if (!same_type(x, y) || !same_type(y, z))
            return fail(op, (x->dtype != y->dtype || y->dtype != z->dtype) ? TT_STATUS_TYPE : TT_STATUS_INVALID_ARGUMENT,
                        "min %s, operand %s and max must have one type", tt_ir_type_str(x, sa), tt_ir_type_str(y, sb));
        if (y->dtype == TT_BOOL) return fail(op, TT_STATUS_TYPE, "bool operands are not supported");
        *out = *y;
        return TT_OK;
    }
    case TT_OP_CONVERT:
        if (!hint || (unsigned)hint->dtype >= TT_DTYPE_COUNT) return fail(op, TT_STATUS_TYPE, "invalid result dtype");
        *out = *x;
        out->dtype = hint->dtype;
        return TT_OK;
    case TT_OP_BROADCAST_IN_DIM: {
        if (!hint) return fail(op, TT_STATUS_INTERNAL, "no result shape given");
        if ((st = tt_ir_check_type("broadcast_in_dim", hint))) return st;
        const tt_ir_dims *d = &a->broadcast.dims;
        if (d->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "broadcast_dimensions has %lld entries, operand %s",
                        (long long)d->n, tt_ir_type_str(x, sa));
        set_type(out, x->dtype, hint->rank, hint->dims);
        if ((st = check_dim_list(op, "broadcast_dimensions", d, out->rank, false))) return st;
        for (int32_t i = 0; i < x->rank; i++)
            if (x->dims[i] != 1 && x->dims[i] != out->dims[d->v[i]])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "operand %s dim %d cannot broadcast to %s dim %lld",
                            tt_ir_type_str(x, sa), (int)i, tt_ir_type_str(out, sb), (long long)d->v[i]);
        return TT_OK;
    }
    case TT_OP_RESHAPE:
        if (!hint) return fail(op, TT_STATUS_INTERNAL, "no result shape given");
        if ((st = tt_ir_check_type("reshape", hint))) return st;
        set_type(out, x->dtype, hint->rank, hint->dims);
        if (tt_numel(x->rank, x->dims) != tt_numel(out->rank, out->dims))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "cannot reshape %s to %s (element counts differ)",
                        tt_ir_type_str(x, sa), tt_ir_type_str(out, sb));
        return TT_OK;
    case TT_OP_TRANSPOSE: {
        const tt_ir_dims *p = &a->transpose.perm;
        if (p->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "permutation has %lld entries, operand %s", (long long)p->n,
                        tt_ir_type_str(x, sa));
        if ((st = check_dim_list(op, "permutation", p, x->rank, false))) return st;
        *out = *x;
        for (int32_t i = 0; i < x->rank; i++) out->dims[i] = x->dims[p->v[i]];
        return TT_OK;
    }
    case TT_OP_SLICE: {
        const tt_ir_dims *s0 = &a->slice.start, *s1 = &a->slice.limit, *s2 = &a->slice.stride;
        if (s0->n != x->rank || s1->n != x->rank || s2->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "start/limit/stride must have one entry per dim of %s",
                        tt_ir_type_str(x, sa));
        *out = *x;
        for (int32_t i = 0; i < x->rank; i++) {
            if (s0->v[i] < 0 || s0->v[i] > s1->v[i] || s1->v[i] > x->dims[i] || s2->v[i] < 1)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "dim %d: start %lld, limit %lld, stride %lld invalid for %s",
                            (int)i, (long long)s0->v[i], (long long)s1->v[i], (long long)s2->v[i],
                            tt_ir_type_str(x, sa));
            out->dims[i] = s1->v[i] > s0->v[i] ? (s1->v[i] - s0->v[i] - 1) / s2->v[i] + 1 : 0;
        }
        return TT_OK;
    }
    case TT_OP_DYNAMIC_SLICE: {
        if (n_in != 1 + x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "needs %d start indices for %s, got %d", (int)x->rank,
                        tt_ir_type_str(x, sa), (int)(n_in - 1));
        for (int32_t i = 1; i < n_in; i++)
            if (!is_i64_scalar(&types[ins[i]]))
                return fail(op, TT_STATUS_TYPE, "start index %d is %s, must be i64[]", (int)(i - 1),
                            tt_ir_type_str(&types[ins[i]], sa));
        const tt_ir_dims *sz = &a->dynamic_slice.sizes;
        if (sz->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "slice_sizes has %lld entries, operand %s", (long long)sz->n,
                        tt_ir_type_str(x, sa));
        *out = *x;
        for (int32_t i = 0; i < x->rank; i++) {
            if (sz->v[i] < 0 || sz->v[i] > x->dims[i])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "slice size %lld out of range for dim %d of %s",
                            (long long)sz->v[i], (int)i, tt_ir_type_str(x, sa));
            out->dims[i] = sz->v[i];
        }
        return TT_OK;
    }
    case TT_OP_DYNAMIC_UPDATE_SLICE: {
        if (n_in < 2 || n_in != 2 + x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "needs operand, update and %d start indices, got %d operands",
                        (int)x->rank, (int)n_in);
        if (x->dtype != y->dtype || x->rank != y->rank)
            return fail(op, x->dtype != y->dtype ? TT_STATUS_TYPE : TT_STATUS_INVALID_ARGUMENT,
                        "update %s does not match operand %s", tt_ir_type_str(y, sb), tt_ir_type_str(x, sa));
        for (int32_t i = 0; i < x->rank; i++)
            if (y->dims[i] > x->dims[i])
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "update %s is larger than operand %s",
                            tt_ir_type_str(y, sb), tt_ir_type_str(x, sa));
        for (int32_t i = 2; i < n_in; i++)
            if (!is_i64_scalar(&types[ins[i]]))
                return fail(op, TT_STATUS_TYPE, "start index %d is %s, must be i64[]", (int)(i - 2),
                            tt_ir_type_str(&types[ins[i]], sa));
        *out = *x;
        return TT_OK;
    }
    case TT_OP_CONCATENATE: {
        if (n_in < 1) return fail(op, TT_STATUS_INVALID_ARGUMENT, "needs at least one operand");
        int64_t dim = a->concatenate.dim;
        if (dim < 0 || dim >= x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dimension %lld out of range for %s", (long long)dim,
                        tt_ir_type_str(x, sa));
        *out = *x;
        for (int32_t k = 1; k < n_in; k++) {
            const tt_ir_type *t = &types[ins[k]];
            bool ok = t->rank == x->rank;
            for (int32_t i = 0; ok && i < x->rank; i++) ok = i == dim || t->dims[i] == x->dims[i];
            if (t->dtype != x->dtype || !ok)
                return fail(op, t->dtype != x->dtype ? TT_STATUS_TYPE : TT_STATUS_INVALID_ARGUMENT,
                            "operand %d %s does not match operand 0 %s along dims other than %lld", (int)k,
                            tt_ir_type_str(t, sb), tt_ir_type_str(x, sa), (long long)dim);
            if (__builtin_add_overflow(out->dims[dim], t->dims[dim], &out->dims[dim]))
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "result dimension overflows");
        }
        return TT_OK;
    }
    case TT_OP_PAD: {
        if (y->dtype != x->dtype || y->rank != 0)
            return fail(op, y->dtype != x->dtype ? TT_STATUS_TYPE : TT_STATUS_INVALID_ARGUMENT,
                        "padding value %s must be a 0-d %s", tt_ir_type_str(y, sb), tt_dtype_name(x->dtype));
        const tt_ir_dims *lo = &a->pad.low, *hi = &a->pad.high, *in = &a->pad.interior;
        if (lo->n != x->rank || hi->n != x->rank || in->n != x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "low/high/interior must have one entry per dim of %s",
                        tt_ir_type_str(x, sa));
        *out = *x;
        for (int32_t i = 0; i < x->rank; i++) {
            int64_t d = x->dims[i];
            if (in->v[i] < 0 || in->v[i] == INT64_MAX)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "invalid interior padding %lld", (long long)in->v[i]);
            int64_t grown, o;
            if (!dilate(d, in->v[i] + 1, &grown) || !add3(lo->v[i], hi->v[i], grown, &o))
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "dim %d: padding overflows", (int)i);
            if (o < 0)
                return fail(op, TT_STATUS_INVALID_ARGUMENT, "dim %d of %s padded to negative size %lld", (int)i,
                            tt_ir_type_str(x, sa), (long long)o);
            out->dims[i] = o;
        }
        return tt_ir_check_type("pad", out);
    }
    case TT_OP_REVERSE:
        if ((st = check_dim_list(op, "dimensions", &a->reverse.dims, x->rank, false))) return st;
        *out = *x;
        return TT_OK;
    case TT_OP_GATHER: return infer_gather(a, x, y, out);
    case TT_OP_SCATTER: return infer_scatter(a, x, y, &types[ins[2]], out);
    case TT_OP_REDUCE: {
        if ((st = check_kind(op, a->reduce.kind, x->dtype, false))) return st;
        if ((st = check_dim_list(op, "dimensions", &a->reduce.dims, x->rank, false))) return st;
        memset(out, 0, sizeof *out);
        out->dtype = x->dtype;
        for (int32_t i = 0; i < x->rank; i++)
            if (!dims_contains(&a->reduce.dims, i)) out->dims[out->rank++] = x->dims[i];
        return TT_OK;
    }
    case TT_OP_ARG_REDUCE: {
        int64_t dim = a->arg_reduce.dim;
        if (dim < 0 || dim >= x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dimension %lld out of range for %s", (long long)dim,
                        tt_ir_type_str(x, sa));
        if (x->dims[dim] == 0)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "cannot take arg%s over empty dimension %lld of %s",
                        a->arg_reduce.is_min ? "min" : "max", (long long)dim, tt_ir_type_str(x, sa));
        memset(out, 0, sizeof *out);
        out->dtype = TT_I64;
        for (int32_t i = 0; i < x->rank; i++)
            if (i != dim) out->dims[out->rank++] = x->dims[i];
        return TT_OK;
    }
    case TT_OP_CUMULATIVE:
        if ((st = check_kind(op, a->cumulative.kind, x->dtype, false))) return st;
        if (a->cumulative.dim < 0 || a->cumulative.dim >= x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dimension %lld out of range for %s",
                        (long long)a->cumulative.dim, tt_ir_type_str(x, sa));
        *out = *x;
        return TT_OK;
    case TT_OP_REDUCE_WINDOW: return infer_reduce_window(a, x, out);
    case TT_OP_DOT_GENERAL: return infer_dot(a, x, y, hint, out);
    case TT_OP_CONVOLUTION: return infer_conv(a, x, y, hint, out);
    case TT_OP_SORT: {
        if (n_in < 1 || n_in > 2) return fail(op, TT_STATUS_INVALID_ARGUMENT, "takes 1 or 2 operands, got %d", (int)n_in);
        if (y && !same_shape(x, y))
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "operands %s and %s shapes differ", tt_ir_type_str(x, sa),
                        tt_ir_type_str(y, sb));
        if (a->sort.dim < 0 || a->sort.dim >= x->rank)
            return fail(op, TT_STATUS_INVALID_ARGUMENT, "dimension %lld out of range for %s", (long long)a->sort.dim,
                        tt_ir_type_str(x, sa));
        out[0] = *x;
        if (y) out[1] = *y;
        *n_out = n_in;
        return TT_OK;
    }
    case TT_OP_COUNT: break;
    }
    return fail(op, TT_STATUS_INTERNAL, "no type rule");
}

tt_status tt_ir_infer(tt_ir_op op, const tt_ir_attrs *a, const tt_ir_type *types, int32_t n_in,
                      const tt_ir_value *ins, const tt_ir_type *hint, tt_ir_type *out, int32_t *n_out) {
    if ((unsigned)op >= TT_OP_COUNT) return tt_error(TT_STATUS_INVALID_ARGUMENT, "unknown IR op %d", (int)op);
    tt_status st = infer_node(op, a, types, n_in, ins, hint, out, n_out);
    for (int32_t i = 0; st == TT_OK && i < *n_out; i++) st = tt_ir_check_type(tt_ir_op_hlo_name(op), &out[i]);
    return st;
}

/* Identity element of a reduction kind, as raw bytes of dt. */
void tt_ir_identity_bytes(tt_ir_reduce_kind kind, tt_dtype dt, uint8_t out[8]) {
    memset(out, 0, 8);
    if (tt_dtype_is_float(dt)) {
        double v = 0.0;
        if (kind == TT_REDUCE_MUL) v = 1.0;
        else if (kind == TT_REDUCE_MAX) v = -__builtin_inf();
        else if (kind == TT_REDUCE_MIN) v = __builtin_inf();
        if (dt == TT_F64) memcpy(out, &v, 8);
        else if (dt == TT_F32) {
            float f = (float)v;
            memcpy(out, &f, 4);
        } else {
            uint16_t h = dt == TT_BF16 ? tt_f32_to_bf16((float)v) : tt_f32_to_f16((float)v);
            memcpy(out, &h, 2);
        }
        return;
    }
    if (dt == TT_BOOL) {
        out[0] = (kind == TT_REDUCE_MUL || kind == TT_REDUCE_MIN || kind == TT_REDUCE_AND) ? 1 : 0;
        return;
    }
    size_t sz = tt_dtype_size(dt);
    uint64_t u = 0;
    switch (kind) {
    case TT_REDUCE_MUL: u = 1; break;
    case TT_REDUCE_AND: u = ~(uint64_t)0; break;
    case TT_REDUCE_MAX: u = dt == TT_U8 ? 0 : (uint64_t)1 << (sz * 8 - 1); break; /* most negative */
    case TT_REDUCE_MIN: u = dt == TT_U8 ? 0xFF : ((uint64_t)1 << (sz * 8 - 1)) - 1; break;
    default: u = 0; break;
    }
    for (size_t i = 0; i < sz; i++) out[i] = (uint8_t)(u >> (8 * i)); /* little endian, like the host */
}
