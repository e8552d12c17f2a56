/* shape.c — lowerings that move data into a new shape: clone / _to_copy, cat / stack, constant_pad_nd, flip,
 * roll, repeat, repeat_interleave (int), tril / triu, diag_embed, and the *_copy forms of view ops (which,
 * unlike the views themselves, produce fresh tensors).
 *
 * Int arguments here (dims, sizes, pads, shifts, diagonal offsets) decide shapes or positions, so they are
 * structural and baked into the program; only pad's fill value travels as a scalar parameter.
 */
#include "tt_lower.h"

#include <stdlib.h>
#include <string.h>

/* ---- small helpers ---- */

static tt_ir_value zeros_like_type(tt_lower_ctx *ctx, const tt_ir_type *t) {
    return tt_lower_full(ctx, t->dtype, t->rank, t->dims, 0.0);
}

/* x[start:end:step] along dim (start/end already clamped), the other dims whole. */
static tt_ir_value slice_dim(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, int64_t start, int64_t end,
                             int64_t step) {
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK], st[TT_MAX_RANK];
    for (int32_t d = 0; d < t.rank; d++) {
        hi[d] = t.dims[d];
        st[d] = 1;
    }
    lo[dim] = start;
    hi[dim] = end;
    st[dim] = step;
    return tt_ir_slice(ctx->b, x, lo, hi, st);
}

/* PyTorch's slice bounds: None -> whole, negatives wrap, then clamped; end never before start. */
static void slice_bounds(const tt_arg *s, const tt_arg *e, int64_t n, int64_t *start, int64_t *end) {
    int64_t a = s->kind == TT_ARG_INT ? s->i : 0;
    int64_t z = e->kind == TT_ARG_INT ? e->i : n;
    if (a < 0) a += n;
    if (z < 0) z += n;
    a = a < 0 ? 0 : a > n ? n : a;
    z = z < a ? a : z > n ? n : z;
    *start = a;
    *end = z;
}

/* ---- copies and conversions ---- */

static tt_status tt_lower_clone(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs;
    (void)nouts;
    outs[0] = args[0].value; /* an output naming a parameter is copied into a fresh buffer */
    return tt_ir_builder_status(ctx->b);
}

/* _to_copy(self, dtype, layout, device, pin_memory, non_blocking, memory_format) */
static tt_status tt_lower_to_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nouts;
    tt_ir_value x = args[0].value;
    if (nargs > 1 && args[1].kind == TT_ARG_DTYPE) x = tt_ir_convert(ctx->b, x, args[1].dtype);
    outs[0] = x;
    return tt_ir_builder_status(ctx->b);
}

/* ---- cat / stack ---- */

/* PyTorch's result dtype over a tensor list. */
static tt_dtype list_dtype(tt_lower_ctx *ctx, const tt_arg *list) {
    tt_arg *tmp = calloc((size_t)list->n, sizeof *tmp);
    if (!tmp) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "cat: out of host memory");
        return TT_F32;
    }
    for (int32_t i = 0; i < list->n; i++) {
        tt_ir_type t = tt_lower_type_copy(ctx, list->values[i]);
        tmp[i].kind = TT_ARG_TENSOR;
        tmp[i].value = list->values[i];
        tmp[i].dtype = t.dtype;
        tmp[i].n = t.rank;
    }
    tt_dtype dt = tt_lower_result_type_ctx(ctx, tmp, list->n, NULL);
    free(tmp);
    return dt;
}

/* Concatenates list (already in shape: same rank, equal dims except dim) converted to dt; skips empty slabs. */
static tt_ir_value concat_list(tt_lower_ctx *ctx, int32_t n, const tt_ir_value *vs, tt_dtype dt, int64_t dim) {
    tt_ir_value *parts = malloc(sizeof(tt_ir_value) * (size_t)(n > 0 ? n : 1));
    if (!parts) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_OUT_OF_MEMORY, "cat: out of host memory");
        return TT_IR_NONE;
    }
    int32_t k = 0;
    tt_ir_value first = TT_IR_NONE;
    for (int32_t i = 0; i < n; i++) {
        tt_ir_value v = tt_ir_convert(ctx->b, vs[i], dt);
        if (first == TT_IR_NONE) first = v;
        if (tt_lower_type_copy(ctx, v).dims[dim] != 0) parts[k++] = v;
    }
    tt_ir_value out = k == 0 ? first : k == 1 ? parts[0] : tt_ir_concatenate(ctx->b, k, parts, dim);
    free(parts);
    return out;
}

static tt_status tt_lower_cat(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const tt_arg *list = &args[0];
    if (list->kind != TT_ARG_TENSORS || list->n == 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "torch.cat(): expected a non-empty list of Tensors");
    tt_dtype dt = list_dtype(ctx, list);
    tt_ir_value *keep = malloc(sizeof(tt_ir_value) * (size_t)list->n);
    if (!keep) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "cat: out of host memory");
    int32_t k = 0, ref = -1;
    tt_ir_type rt;
    memset(&rt, 0, sizeof rt);
    int64_t dim = nargs > 1 ? args[1].i : 0;
    for (int32_t i = 0; i < list->n; i++) {
        tt_ir_type t = tt_lower_type_copy(ctx, list->values[i]);
        if (t.rank == 1 && t.dims[0] == 0) continue; /* legacy empty tensors are skipped */
        if (t.rank == 0) {
            free(keep);
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                      "zero-dimensional tensor (at position %d) cannot be concatenated", i);
        }
        if (ref < 0) {
            ref = i;
            rt = t;
            dim = tt_lower_wrap_dim(ctx, dim, rt.rank);
        } else {
            bool ok = t.rank == rt.rank;
            for (int32_t d = 0; ok && d < t.rank; d++) {
                if (d == dim || t.dims[d] == rt.dims[d]) continue;
                free(keep);
                return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                          "Sizes of tensors must match except in dimension %lld. Expected size %lld "
                                          "but got size %lld for tensor number %d in the list.",
                                          (long long)dim, (long long)rt.dims[d], (long long)t.dims[d], i);
            }
            if (!ok) {
                free(keep);
                return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                          "Tensors must have same number of dimensions: got %d and %d", rt.rank,
                                          t.rank);
            }
        }
        keep[k++] = list->values[i];
    }
    if (k == 0) {
        int64_t z = 0;
        outs[0] = tt_lower_full(ctx, dt, 1, &z, 0.0);
    } else {
        outs[0] = concat_list(ctx, k, keep, dt, dim);
    }
    free(keep);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_stack(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    const tt_arg *list = &args[0];
    if (list->kind != TT_ARG_TENSORS || list->n == 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "stack expects a non-empty TensorList");
    tt_ir_type t0 = tt_lower_type_copy(ctx, list->values[0]);
    if (t0.rank + 1 > TT_MAX_RANK) return tt_lower_unsupported(ctx, "stack rank");
    int64_t dim = tt_lower_wrap_dim(ctx, nargs > 1 ? args[1].i : 0, t0.rank + 1);
    tt_dtype dt = list_dtype(ctx, list);
    int64_t ud[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d <= t0.rank; d++) ud[d] = d == dim ? 1 : t0.dims[o++];
    tt_ir_value *vs = malloc(sizeof(tt_ir_value) * (size_t)list->n);
    if (!vs) return tt_ir_builder_fail(b, TT_STATUS_OUT_OF_MEMORY, "stack: out of host memory");
    for (int32_t i = 0; i < list->n; i++) {
        tt_ir_type t = tt_lower_type_copy(ctx, list->values[i]);
        if (t.rank != t0.rank || memcmp(t.dims, t0.dims, sizeof(int64_t) * (size_t)t.rank) != 0) {
            free(vs);
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                      "stack expects each tensor to be equal size, but got a different shape at entry "
                                      "%d",
                                      i);
        }
        vs[i] = tt_ir_reshape(b, list->values[i], t0.rank + 1, ud);
    }
    tt_ir_value out = concat_list(ctx, list->n, vs, dt, dim);
    free(vs);
    /* every part empty along dim (it is 1 there) cannot happen; a zero-size part elsewhere keeps the shape */
    int64_t od[TT_MAX_RANK];
    memcpy(od, ud, sizeof od);
    od[dim] = list->n;
    outs[0] = tt_ir_reshape(b, out, t0.rank + 1, od);
    return tt_ir_builder_status(b);
}

/* ---- padding, flips, rolls, repeats ---- */

/* constant_pad_nd(self, pad, value): pad pairs (low, high) from the last dim backwards; negatives crop. */
static tt_status tt_lower_constant_pad_nd(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                          int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    const tt_arg *pad = &args[1];
    if (pad->n % 2 != 0)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "Length of pad must be even but instead it equals %d",
                                  pad->n);
    if (pad->n / 2 > xt.rank)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                  "Length of pad should be no more than twice the number of dimensions of the input. "
                                  "Pad length is %d while the input has %d dimensions.",
                                  pad->n, xt.rank);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    for (int32_t k = 0; k < pad->n / 2; k++) {
        int32_t d = xt.rank - 1 - k;
        lo[d] = pad->ints[2 * k];
        hi[d] = pad->ints[2 * k + 1];
        int64_t nd = xt.dims[d] + lo[d] + hi[d];
        if (nd < 0)
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT,
                                      "The input size %lld, plus negative padding %lld and %lld resulted in a negative "
                                      "output size, which is invalid. Check dimension %d of your input.",
                                      (long long)xt.dims[d], (long long)lo[d], (long long)hi[d], d);
    }
    tt_ir_value v = nargs > 2 && args[2].kind != TT_ARG_NONE ? tt_lower_arg(ctx, &args[2], xt.dtype)
                                                             : tt_lower_const(ctx, xt.dtype, 0.0);
    outs[0] = tt_ir_pad(b, args[0].value, v, lo, hi, NULL);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_flip(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    int64_t dims[TT_MAX_RANK];
    bool seen[TT_MAX_RANK] = {false};
    int32_t n = 0;
    for (int32_t i = 0; i < args[1].n; i++) {
        int64_t d = tt_lower_wrap_dim(ctx, args[1].ints[i], xt.rank);
        if (xt.rank == 0) continue;
        if (seen[d])
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "dim %lld appears multiple times in the list "
                                      "of dims", (long long)d);
        seen[d] = true;
        dims[n++] = d;
    }
    outs[0] = n == 0 ? args[0].value : tt_ir_reverse(ctx->b, args[0].value, n, dims);
    return tt_ir_builder_status(ctx->b);
}

static tt_ir_value roll_dim(tt_lower_ctx *ctx, tt_ir_value x, int64_t dim, int64_t shift) {
    int64_t n = tt_lower_type_copy(ctx, x).dims[dim];
    if (n == 0) return x;
    int64_t s = ((shift % n) + n) % n;
    if (s == 0) return x;
    tt_ir_value parts[2] = {slice_dim(ctx, x, dim, n - s, n, 1), slice_dim(ctx, x, dim, 0, n - s, 1)};
    return tt_ir_concatenate(ctx->b, 2, parts, dim);
}

/* roll(self, shifts, dims): with no dims the tensor is rolled flattened. */
static tt_status tt_lower_roll(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    const tt_arg *shifts = &args[1];
    int32_t nd = nargs > 2 && args[2].kind == TT_ARG_INTS ? args[2].n : 0;
    tt_ir_value x = args[0].value;
    if (nd == 0) {
        if (shifts->n != 1)
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "shifts and dimensions must align. shifts: %d, "
                                      "dims: 0", shifts->n);
        int64_t n = tt_numel(xt.rank, xt.dims);
        x = roll_dim(ctx, tt_ir_reshape(b, x, 1, &n), 0, shifts->ints[0]);
        outs[0] = tt_ir_reshape(b, x, xt.rank, xt.dims);
        return tt_ir_builder_status(b);
    }
    if (shifts->n != nd)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "shifts and dimensions must align. shifts: %d, dims:%d",
                                  shifts->n, nd);
    for (int32_t i = 0; i < nd; i++) {
        int64_t d = tt_lower_wrap_dim(ctx, args[2].ints[i], xt.rank);
        if (xt.rank == 0) continue;
        x = roll_dim(ctx, x, d, shifts->ints[i]);
    }
    outs[0] = x;
    return tt_ir_builder_status(b);
}

/* x with dim d repeated r times as whole blocks (block = false: [a,b] -> [a,b,a,b]) or element by element
 * (block = true: [a,a,b,b]): broadcast through one extra dim, then merge it. */
static tt_ir_value repeat_dim(tt_lower_ctx *ctx, tt_ir_value x, int64_t d, int64_t r, bool interleave) {
    tt_ir_builder *b = ctx->b;
    tt_ir_type t = tt_lower_type_copy(ctx, x);
    if (r == 1) return x;
    if (t.rank + 1 > TT_MAX_RANK) {
        tt_lower_unsupported(ctx, "repeat rank");
        return TT_IR_NONE;
    }
    int64_t bd[TT_MAX_RANK], map[TT_MAX_RANK];
    int64_t ins = interleave ? d + 1 : d; /* position of the new repeat dim */
    for (int32_t i = 0, o = 0; i <= t.rank; i++) {
        if (i == ins) {
            bd[i] = r;
            continue;
        }
        map[o] = i;
        bd[i] = t.dims[o++];
    }
    tt_ir_value e = tt_ir_broadcast_in_dim(b, x, t.rank + 1, bd, map);
    t.dims[d] *= r;
    return tt_ir_reshape(b, e, t.rank, t.dims);
}

static tt_status tt_lower_repeat(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    const tt_arg *rep = &args[1];
    if (rep->n < xt.rank)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "Number of dimensions of repeat dims can not be "
                                  "smaller than number of dimensions of tensor");
    if (rep->n > TT_MAX_RANK) return tt_lower_unsupported(ctx, "repeat rank");
    for (int32_t i = 0; i < rep->n; i++)
        if (rep->ints[i] < 0)
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "Trying to create tensor with negative dimension "
                                      "%lld", (long long)rep->ints[i]);
    int64_t pd[TT_MAX_RANK];
    int32_t lead = rep->n - xt.rank;
    for (int32_t i = 0; i < rep->n; i++) pd[i] = i < lead ? 1 : xt.dims[i - lead];
    tt_ir_value x = tt_ir_reshape(b, args[0].value, rep->n, pd);
    for (int32_t i = 0; i < rep->n; i++) x = repeat_dim(ctx, x, i, rep->ints[i], false);
    outs[0] = x;
    return tt_ir_builder_status(b);
}

/* repeat_interleave.self_int(self, repeats, dim, output_size) */
static tt_status tt_lower_repeat_interleave(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                            int32_t nouts) {
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    int64_t r = args[1].i;
    if (r < 0) return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "repeats can not be negative");
    tt_ir_value x = args[0].value;
    int64_t dim;
    if (nargs < 3 || args[2].kind != TT_ARG_INT) {
        int64_t n = tt_numel(xt.rank, xt.dims);
        x = tt_ir_reshape(b, x, 1, &n);
        dim = 0;
    } else {
        if (xt.rank == 0) {
            int64_t one = 1;
            x = tt_ir_reshape(b, x, 1, &one);
        }
        dim = tt_lower_wrap_dim(ctx, args[2].i, xt.rank);
    }
    outs[0] = r == 1 ? tt_ir_convert(b, x, xt.dtype) : repeat_dim(ctx, x, dim, r, true);
    return tt_ir_builder_status(b);
}

/* ---- triangles and diagonals ---- */

/* col - row compared with k over the last two dims (rows = dim r-2), broadcast to t's shape. */
static tt_ir_value tri_mask(tt_lower_ctx *ctx, const tt_ir_type *t, int64_t r0, int64_t r1, int64_t k,
                            tt_ir_cmp dir) {
    tt_ir_builder *b = ctx->b;
    tt_ir_value rows = tt_ir_iota(b, TT_I64, t->rank, t->dims, r0);
    tt_ir_value cols = tt_ir_iota(b, TT_I64, t->rank, t->dims, r1);
    tt_ir_value diff = tt_ir_binary(b, TT_OP_SUBTRACT, cols, rows);
    return tt_ir_compare(b, dir, diff, tt_lower_full(ctx, TT_I64, t->rank, t->dims, (double)k));
}

static tt_status tri_common(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs, bool lower) {
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank < 2)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%s: input tensor must have at least 2 "
                                  "dimensions", lower ? "tril" : "triu");
    int64_t k = nargs > 1 && args[1].kind == TT_ARG_INT ? args[1].i : 0;
    tt_ir_value mk = tri_mask(ctx, &xt, xt.rank - 2, xt.rank - 1, k, lower ? TT_CMP_LE : TT_CMP_GE);
    outs[0] = tt_ir_select(ctx->b, mk, args[0].value, zeros_like_type(ctx, &xt));
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_tril(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    return tri_common(ctx, args, nargs, outs, true);
}

static tt_status tt_lower_triu(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nouts;
    return tri_common(ctx, args, nargs, outs, false);
}

/* diag_embed(self, offset, dim1, dim2): the last dim of self (length L) becomes the offset diagonal of a new
 * n x n plane (n = L + |offset|) at dims (dim1, dim2): self padded to n along its last dim is broadcast across
 * the plane (the value at row k for offset >= 0, at column k below) and masked to the diagonal. */
static tt_status tt_lower_diag_embed(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank < 1 || xt.rank + 1 > TT_MAX_RANK) return tt_lower_unsupported(ctx, "diag_embed rank");
    int64_t off = args[1].i;
    int32_t orank = xt.rank + 1;
    int64_t d1 = tt_lower_wrap_dim(ctx, args[2].i, orank), d2 = tt_lower_wrap_dim(ctx, args[3].i, orank);
    if (d1 == d2)
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "diagonal dimensions cannot be identical %lld, %lld",
                                  (long long)args[2].i, (long long)args[3].i);
    int64_t L = xt.dims[xt.rank - 1];
    int64_t n = L + (off < 0 ? -off : off);
    tt_ir_type ot = {.dtype = xt.dtype, .rank = orank};
    int64_t map[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d < orank; d++) {
        if (d == d1 || d == d2) {
            ot.dims[d] = n;
            continue;
        }
        map[o] = d;
        ot.dims[d] = xt.dims[o++];
    }
    map[xt.rank - 1] = off >= 0 ? d1 : d2;
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK] = {0};
    hi[xt.rank - 1] = n - L;
    tt_ir_value p = tt_ir_pad(b, args[0].value, tt_lower_const(ctx, xt.dtype, 0.0), lo, hi, NULL);
    p = tt_ir_broadcast_in_dim(b, p, orank, ot.dims, map);
    tt_ir_value mk = tri_mask(ctx, &ot, d1, d2, off, TT_CMP_EQ);
    outs[0] = tt_ir_select(b, mk, p, zeros_like_type(ctx, &ot));
    return tt_ir_builder_status(b);
}

/* ---- *_copy forms of views ---- */

/* view_copy(self, size): reshape, one -1 inferred. (_unsafe_view is not lowered: it aliases its input, and
 * its composite kernel already makes a metadata-only view.) */
static tt_status tt_lower_view_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                    int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_builder *b = ctx->b;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (args[1].kind == TT_ARG_DTYPE) { /* view_copy.dtype: a bitcast; only the identity is supported */
        if (args[1].dtype != xt.dtype) return tt_lower_unsupported(ctx, "view_copy.dtype");
        outs[0] = args[0].value;
        return tt_ir_builder_status(b);
    }
    const tt_arg *sz = &args[1];
    if (sz->n > TT_MAX_RANK) return tt_lower_unsupported(ctx, "view rank");
    int64_t dims[TT_MAX_RANK], known = 1, numel = tt_numel(xt.rank, xt.dims);
    int32_t infer = -1;
    for (int32_t i = 0; i < sz->n; i++) {
        dims[i] = sz->ints[i];
        if (dims[i] == -1 && infer < 0) infer = i;
        else if (dims[i] < 0)
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "invalid shape dimension %lld",
                                      (long long)dims[i]);
        else known *= dims[i];
    }
    if (infer >= 0) {
        if (known == 0 || numel % known != 0)
            return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "shape is invalid for input of size %lld",
                                      (long long)numel);
        dims[infer] = numel / known;
    } else if (known != numel) {
        return tt_ir_builder_fail(b, TT_STATUS_INVALID_ARGUMENT, "shape is invalid for input of size %lld",
                                  (long long)numel);
    }
    outs[0] = tt_ir_reshape(b, args[0].value, sz->n, dims);
    return tt_ir_builder_status(b);
}

static tt_status tt_lower_expand_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    const tt_arg *sz = &args[1];
    if (sz->n < xt.rank || sz->n > TT_MAX_RANK) return tt_lower_unsupported(ctx, "expand rank");
    int64_t dims[TT_MAX_RANK];
    int32_t lead = sz->n - xt.rank;
    for (int32_t i = 0; i < sz->n; i++) {
        dims[i] = sz->ints[i];
        if (dims[i] == -1 && i >= lead) dims[i] = xt.dims[i - lead];
        if (dims[i] < 0 || (i >= lead && xt.dims[i - lead] != 1 && xt.dims[i - lead] != dims[i]))
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "The expanded size of the tensor (%lld) must match the existing size at "
                                      "non-singleton dimension %d",
                                      (long long)sz->ints[i], i);
    }
    outs[0] = tt_lower_to(ctx, args[0].value, xt.dtype, sz->n, dims);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_permute_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (args[1].n != xt.rank)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "permute(): number of dims don't match");
    int64_t perm[TT_MAX_RANK];
    bool seen[TT_MAX_RANK] = {false};
    for (int32_t i = 0; i < xt.rank; i++) {
        perm[i] = tt_lower_wrap_dim(ctx, args[1].ints[i], xt.rank);
        if (seen[perm[i]])
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "permute(): duplicate dims are not allowed.");
        seen[perm[i]] = true;
    }
    outs[0] = xt.rank == 0 ? args[0].value : tt_ir_transpose(ctx->b, args[0].value, perm);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_transpose_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    int64_t a = tt_lower_wrap_dim(ctx, args[1].i, xt.rank), c = tt_lower_wrap_dim(ctx, args[2].i, xt.rank);
    if (xt.rank == 0 || a == c) {
        outs[0] = args[0].value;
        return tt_ir_builder_status(ctx->b);
    }
    int64_t perm[TT_MAX_RANK];
    for (int32_t i = 0; i < xt.rank; i++) perm[i] = i;
    perm[a] = c;
    perm[c] = a;
    outs[0] = tt_ir_transpose(ctx->b, args[0].value, perm);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_alias_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    outs[0] = args[0].value;
    return tt_ir_builder_status(ctx->b);
}

/* squeeze_copy / .dim / .dims: size-1 dims removed (all of them, or those named). */
static tt_status tt_lower_squeeze_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                       int32_t nouts) {
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    bool named[TT_MAX_RANK] = {false};
    bool all = nargs < 2;
    if (!all && args[1].kind == TT_ARG_INT) {
        int64_t d = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
        if (xt.rank > 0) named[d] = true;
    } else if (!all) {
        for (int32_t i = 0; i < args[1].n; i++) {
            int64_t d = tt_lower_wrap_dim(ctx, args[1].ints[i], xt.rank);
            if (xt.rank > 0) named[d] = true;
        }
    }
    int64_t dims[TT_MAX_RANK];
    int32_t r = 0;
    for (int32_t d = 0; d < xt.rank; d++)
        if (!(xt.dims[d] == 1 && (all || named[d]))) dims[r++] = xt.dims[d];
    outs[0] = tt_ir_reshape(ctx->b, args[0].value, r, dims);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_unsqueeze_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                         int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank + 1 > TT_MAX_RANK) return tt_lower_unsupported(ctx, "unsqueeze rank");
    int64_t d = tt_lower_wrap_dim(ctx, args[1].i, xt.rank + 1);
    int64_t dims[TT_MAX_RANK];
    for (int32_t i = 0, o = 0; i <= xt.rank; i++) dims[i] = i == d ? 1 : xt.dims[o++];
    outs[0] = tt_ir_reshape(ctx->b, args[0].value, xt.rank + 1, dims);
    return tt_ir_builder_status(ctx->b);
}

/* slice_copy.Tensor(self, dim, start, end, step) */
static tt_status tt_lower_slice_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                     int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank == 0) return tt_lower_unsupported(ctx, "slice of a 0-d tensor");
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    int64_t step = args[4].kind == TT_ARG_INT ? args[4].i : 1;
    if (step <= 0) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "slice step must be positive");
    int64_t start, end;
    slice_bounds(&args[2], &args[3], xt.dims[dim], &start, &end);
    outs[0] = slice_dim(ctx, args[0].value, dim, start, end, step);
    return tt_ir_builder_status(ctx->b);
}

/* select_copy.int(self, dim, index) */
static tt_status tt_lower_select_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank == 0) return tt_lower_unsupported(ctx, "select of a 0-d tensor");
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    int64_t n = xt.dims[dim], i = args[2].i;
    if (i < -n || i >= n)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX, "select(): index %lld out of range for tensor of size "
                                  "%lld at dimension %lld", (long long)i, (long long)n, (long long)dim);
    if (i < 0) i += n;
    tt_ir_value s = slice_dim(ctx, args[0].value, dim, i, i + 1, 1);
    int64_t dims[TT_MAX_RANK];
    for (int32_t d = 0, o = 0; d < xt.rank; d++)
        if (d != dim) dims[o++] = xt.dims[d];
    outs[0] = tt_ir_reshape(ctx->b, s, xt.rank - 1, dims);
    return tt_ir_builder_status(ctx->b);
}

/* narrow_copy(self, dim, start, length) */
static tt_status tt_lower_narrow_copy(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                      int32_t nouts) {
    (void)nargs;
    (void)nouts;
    tt_ir_type xt = tt_lower_type_copy(ctx, args[0].value);
    if (xt.rank == 0) return tt_lower_unsupported(ctx, "narrow of a 0-d tensor");
    int64_t dim = tt_lower_wrap_dim(ctx, args[1].i, xt.rank);
    int64_t n = xt.dims[dim], start = args[2].i, len = args[3].i;
    if (start < 0) start += n;
    if (start < 0 || len < 0 || start > n - len)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INDEX, "start (%lld) + length (%lld) exceeds dimension size "
                                  "(%lld).", (long long)args[2].i, (long long)len, (long long)n);
    outs[0] = slice_dim(ctx, args[0].value, dim, start, start + len, 1);
    return tt_ir_builder_status(ctx->b);
}

const tt_lower_entry tt_lower_table_shape[] = {
    {"aten::clone", tt_lower_clone},
    {"aten::_to_copy", tt_lower_to_copy},
    {"aten::cat", tt_lower_cat},
    {"aten::stack", tt_lower_stack},
    {"aten::constant_pad_nd", tt_lower_constant_pad_nd},
    {"aten::flip", tt_lower_flip},
    {"aten::roll", tt_lower_roll},
    {"aten::repeat", tt_lower_repeat},
    {"aten::repeat_interleave.self_int", tt_lower_repeat_interleave},
    {"aten::tril", tt_lower_tril},
    {"aten::triu", tt_lower_triu},
    {"aten::diag_embed", tt_lower_diag_embed},
    {"aten::view_copy", tt_lower_view_copy},
    {"aten::view_copy.dtype", tt_lower_view_copy},
    {"aten::expand_copy", tt_lower_expand_copy},
    {"aten::permute_copy", tt_lower_permute_copy},
    {"aten::transpose_copy.int", tt_lower_transpose_copy},
    {"aten::alias_copy", tt_lower_alias_copy},
    {"aten::squeeze_copy", tt_lower_squeeze_copy},
    {"aten::squeeze_copy.dim", tt_lower_squeeze_copy},
    {"aten::squeeze_copy.dims", tt_lower_squeeze_copy},
    {"aten::unsqueeze_copy", tt_lower_unsqueeze_copy},
    {"aten::slice_copy.Tensor", tt_lower_slice_copy},
    {"aten::select_copy.int", tt_lower_select_copy},
    {"aten::narrow_copy", tt_lower_narrow_copy},
    {NULL, NULL},
};
