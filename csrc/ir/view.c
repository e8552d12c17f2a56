/* view.c — strided views of a flat value as IR view ops: how a program reads or writes a view of a storage that
 * it holds as one dense value (a pending storage in a window, or any buffer of a driver that cannot read strided
 * views in place).
 *
 * A view (offset, dims, strides in elements) of a flat value is a strided box of a reshape of the flat range when
 * its strides nest: drop dims of size 1 and of stride 0 (broadcasts), sort the rest by stride, largest first
 * (s0 > s1 > ... > s{k-1}). Give dim i the period P{i} = s{i} (the innermost: 1), so that each stride but the
 * innermost divides the one before it, and each period exceeds the span of the dims inside it (no overlap). The
 * flat range [offset, offset + L * P0) reshaped to [L, P0/P1, ..., P{k-2}/P{k-1}] then holds the view as the strided
 * slice 0:len{i}*k{i}:k{i} of each dim, with steps k{i} = s{i} / P{i} (1, but for the innermost dim and L): a slice,
 * a reshape, a transpose back to the view's dim order and a broadcast for stride-0 dims. Contiguous views, slices
 * with steps (also across a transpose: x.t()[1:4:2]), select, diagonal and expand all nest; overlapping windows
 * (unfold) and strides that do not divide do not (UNSUPPORTED). A read whose box fits the whole value reshaped
 * ([n / P0, P0/P1, ...], the view starting at some index of it) is that reshape and one slice, with no copy of the
 * range (k of a fused qkv: its box overhangs the end by the offset). A write runs the same path backwards: the update
 * padded (with interior padding for steps) into the box, a mask likewise, selected over the old value; a view of
 * every element once (a permuted whole) needs no mask. */
#include <string.h>

#include "tt_ir.h"

typedef struct view_plan {
    int32_t k;                   /* kept dims: size > 1 and stride > 0 */
    int32_t order[TT_MAX_RANK];  /* kept dim i (stride order) is view dim order[i] */
    int64_t len[TT_MAX_RANK];
    int64_t stride[TT_MAX_RANK];
    int64_t factor[TT_MAX_RANK]; /* the reshaped range's dims: [L, P0/P1, ..., P{k-2}/P{k-1}] */
    int64_t step[TT_MAX_RANK];   /* the slice step of each */
    int64_t period[TT_MAX_RANK]; /* P{i}: the stride, the innermost 1 */
    int64_t span;                /* L * P0 (1 when k == 0) */
    bool broadcast;              /* some dim of size > 1 has stride 0 */
    bool empty;                  /* some dim is 0 */
} view_plan;

static bool plan_view(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides,
                      view_plan *p) {
    memset(p, 0, sizeof *p);
    if (rank < 0 || rank > TT_MAX_RANK || offset < 0) return false;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || strides[d] < 0) return false;
        if (dims[d] == 0) p->empty = true;
        if (dims[d] <= 1) continue;
        if (strides[d] == 0) {
            p->broadcast = true;
            continue;
        }
        /* insertion by stride, largest first */
        int32_t i = p->k++;
        while (i > 0 && p->stride[i - 1] < strides[d]) {
            p->order[i] = p->order[i - 1];
            p->len[i] = p->len[i - 1];
            p->stride[i] = p->stride[i - 1];
            i--;
        }
        p->order[i] = d;
        p->len[i] = dims[d];
        p->stride[i] = strides[d];
    }
    if (p->empty) return true;
    if (p->k == 0) {
        p->span = 1;
        return offset < n;
    }
    /* periods: innermost 1, the others their stride; each a multiple of the next, beyond the span inside it */
    int64_t *period = p->period, inner = 0; /* inner: the span of the dims inside dim i */
    for (int32_t i = p->k - 1; i >= 0; i--) {
        period[i] = i == p->k - 1 ? 1 : p->stride[i];
        if (i < p->k - 1 && (period[i] % period[i + 1] || period[i] <= inner)) return false;
        p->step[i] = p->stride[i] / period[i];
        int64_t ext;
        if (__builtin_mul_overflow(p->len[i] - 1, p->stride[i], &ext) || __builtin_add_overflow(inner, ext, &inner))
            return false;
    }
    for (int32_t i = 1; i < p->k; i++) p->factor[i] = period[i - 1] / period[i];
    p->factor[0] = (p->len[0] - 1) * p->step[0] + 1;
    if (__builtin_mul_overflow(p->factor[0], period[0], &p->span)) return false;
    /* the last element the view reads (offset + inner) must lie inside the flat value */
    return inner < n && offset < n - inner;
}

bool tt_ir_view_expressible(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides,
                            bool for_write) {
    view_plan p;
    if (!plan_view(n, offset, rank, dims, strides, &p)) return false;
    return !(for_write && p.broadcast && !p.empty);
}

bool tt_ir_view_is_whole(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides) {
    if (offset != 0) return false;
    int64_t expect = 1;
    for (int32_t d = rank - 1; d >= 0; d--) {
        if (dims[d] != 1 && strides[d] != expect) return false;
        expect *= dims[d];
    }
    return expect == n;
}

/* The flat range [offset, offset + span) of x (n elements), padded with zeros past n where the box's last row
 * runs beyond the value (a view ending before its last factor does). */
static tt_ir_value flat_range(tt_ir_builder *b, tt_ir_value x, int64_t n, int64_t offset, int64_t span) {
    if (offset == 0 && span == n) return x;
    const tt_ir_type *t = tt_ir_type_of(b, x);
    if (!t) return TT_IR_NONE;
    int64_t end = offset + span;
    if (end > n) {
        int64_t lo = 0, hi = end - n;
        x = tt_ir_pad(b, x, tt_ir_constant_scalar(b, t->dtype, 0), &lo, &hi, NULL);
    }
    int64_t start = offset, limit = end;
    return tt_ir_slice(b, x, &start, &limit, NULL);
}

/* The whole flat value as a box of the plan's periods, [n / P0, P0/P1, ...], and the view's start in it, when n
 * divides and the view lies inside the box from there: then a read is a reshape and one slice (a view that starts
 * mid-row, like k of a fused qkv, needs no padded copy of the range). */
static bool whole_box(int64_t n, int64_t offset, const view_plan *p, int64_t *box, int64_t *start) {
    if (n % p->period[0]) return false;
    int64_t rem = offset;
    for (int32_t i = 0; i < p->k; i++) {
        box[i] = i == 0 ? n / p->period[0] : p->factor[i];
        start[i] = rem / p->period[i];
        rem %= p->period[i];
        if (start[i] + (p->len[i] - 1) * p->step[i] >= box[i]) return false;
    }
    return true;
}

tt_ir_attrs tt_ir_gather_elements_attrs(int32_t index_vector_dim) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.gather.collapsed_slice_dims.n = 1;
    a.gather.start_index_map.n = 1;
    a.gather.slice_sizes.n = 1;
    a.gather.slice_sizes.v[0] = 1;
    a.gather.index_vector_dim = index_vector_dim;
    return a;
}

bool tt_ir_view_in_bounds(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides) {
    if (rank < 0 || rank > TT_MAX_RANK || offset < 0) return false;
    int64_t last = offset;
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] < 0 || strides[d] < 0) return false;
        if (dims[d] == 0) return true;
        int64_t ext;
        if (__builtin_mul_overflow(dims[d] - 1, strides[d], &ext) || __builtin_add_overflow(last, ext, &last))
            return false;
    }
    return last < n;
}

/* Views that are not boxes (overlapping windows, strides that do not nest, written broadcasts): the flat index of
 * every element, offset + sum(iota_d * stride_d), as i64 [dims..., 1] for a gather or a scatter of single
 * elements. Rank 8 views have no room for the index dim (UNSUPPORTED). */
static tt_ir_value element_indices(tt_ir_builder *b, int64_t offset, int32_t rank, const int64_t *dims,
                                   const int64_t *strides) {
    if (rank >= TT_MAX_RANK) {
        tt_ir_builder_fail(b, TT_STATUS_UNSUPPORTED, "a rank-%d view that is not a box of its storage", (int)rank);
        return TT_IR_NONE;
    }
    tt_ir_value idx = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_I64, (double)offset), rank, dims, NULL);
    for (int32_t d = 0; d < rank; d++) {
        if (dims[d] <= 1 || strides[d] == 0) continue;
        tt_ir_value st = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_I64, (double)strides[d]), rank, dims, NULL);
        idx = tt_ir_binary(b, TT_OP_ADD, idx, tt_ir_binary(b, TT_OP_MULTIPLY, tt_ir_iota(b, TT_I64, rank, dims, d), st));
    }
    int64_t shape[TT_MAX_RANK + 1];
    memcpy(shape, dims, sizeof(int64_t) * (size_t)rank);
    shape[rank] = 1;
    return tt_ir_reshape(b, idx, rank + 1, shape);
}

static tt_ir_value gather_view(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                               const int64_t *strides) {
    tt_ir_attrs a = tt_ir_gather_elements_attrs(rank);
    return tt_ir_gather(b, flat, element_indices(b, offset, rank, dims, strides), &a);
}

/* In row-major order of the view, the last write to an element wins (a CPU kernel's loop order). */
static tt_ir_value scatter_view(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                                const int64_t *strides, tt_ir_value update) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.scatter.inserted_window_dims.n = 1;
    a.scatter.scatter_dims_to_operand_dims.n = 1;
    a.scatter.index_vector_dim = rank;
    a.scatter.kind = TT_REDUCE_NONE;
    return tt_ir_scatter(b, flat, element_indices(b, offset, rank, dims, strides), update, &a);
}

/* The flat value's length and dtype, after checking it is 1-d and the view lies inside it. */
static tt_status check_flat(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                            const int64_t *strides, const char *what, int64_t *n, tt_dtype *dt) {
    const tt_ir_type *t = tt_ir_type_of(b, flat);
    if (!t || t->rank != 1) return tt_ir_builder_fail(b, TT_STATUS_INTERNAL, "%s: the flat value is not 1-d", what);
    *n = t->dims[0];
    *dt = t->dtype;
    if (!tt_ir_view_in_bounds(*n, offset, rank, dims, strides))
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: a view outside its storage of %lld elements", what,
                        (long long)*n);
    return TT_OK;
}

tt_status tt_ir_view_read(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                          const int64_t *strides, tt_ir_value *out) {
    int64_t n;
    tt_dtype dt;
    tt_status st = check_flat(b, flat, offset, rank, dims, strides, "view_read", &n, &dt);
    if (st != TT_OK) return st;
    view_plan p;
    if (!plan_view(n, offset, rank, dims, strides, &p)) {
        *out = gather_view(b, flat, offset, rank, dims, strides);
        return tt_ir_builder_status(b);
    }
    if (p.empty) {
        *out = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, dt, 0), rank, dims, NULL);
        return tt_ir_builder_status(b);
    }
    if (tt_ir_view_is_whole(n, offset, rank, dims, strides)) {
        *out = tt_ir_reshape(b, flat, rank, dims);
        return tt_ir_builder_status(b);
    }
    tt_ir_value x = flat;
    if (p.k > 0) {
        int64_t start[TT_MAX_RANK] = {0}, limit[TT_MAX_RANK], box[TT_MAX_RANK];
        if (!whole_box(n, offset, &p, box, start)) {
            x = flat_range(b, flat, n, offset, p.span);
            memcpy(box, p.factor, sizeof box);
            memset(start, 0, sizeof start);
        }
        x = tt_ir_reshape(b, x, p.k, box);
        bool whole = true;
        for (int32_t i = 0; i < p.k; i++) {
            limit[i] = start[i] + (p.len[i] - 1) * p.step[i] + 1;
            whole = whole && start[i] == 0 && limit[i] == box[i] && p.step[i] == 1;
        }
        if (!whole) x = tt_ir_slice(b, x, start, limit, p.step);
        /* back to the view's dim order: output dim j is the kept dim with the j-th smallest view index */
        int64_t perm[TT_MAX_RANK];
        bool identity = true;
        for (int32_t j = 0, m = 0; j < rank; j++)
            for (int32_t i = 0; i < p.k; i++)
                if (p.order[i] == j) {
                    perm[m] = i;
                    identity = identity && perm[m] == m;
                    m++;
                }
        if (!identity) x = tt_ir_transpose(b, x, perm);
    } else {
        x = tt_ir_reshape(b, flat_range(b, flat, n, offset, p.span), 0, NULL);
    }
    /* size-1 and broadcast dims back in */
    int64_t shape[TT_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) shape[d] = dims[d] > 1 && strides[d] == 0 ? 1 : dims[d];
    x = tt_ir_reshape(b, x, rank, shape);
    if (p.broadcast) {
        int64_t ident[TT_MAX_RANK];
        for (int32_t d = 0; d < rank; d++) ident[d] = d;
        x = tt_ir_broadcast_in_dim(b, x, rank, dims, ident);
    }
    *out = x;
    return tt_ir_builder_status(b);
}

/* update (the view's dims, flat's dtype) laid out as the flat range of the plan: in stride order, padded into
 * the factored box (interior padding for steps), flattened to span elements. */
static tt_ir_value box_to_range(tt_ir_builder *b, tt_ir_value u, const view_plan *p, int32_t rank, tt_dtype dt) {
    if (p->k == 0) {
        int64_t one = 1;
        return tt_ir_reshape(b, u, 1, &one);
    }
    int64_t by_view[TT_MAX_RANK], perm[TT_MAX_RANK], view_order_dims[TT_MAX_RANK];
    /* the kept dims in view order, then permuted to stride order */
    int32_t m = 0;
    for (int32_t j = 0; j < rank; j++)
        for (int32_t i = 0; i < p->k; i++)
            if (p->order[i] == j) by_view[m++] = i;
    for (int32_t j = 0; j < p->k; j++) view_order_dims[j] = p->len[by_view[j]];
    u = tt_ir_reshape(b, u, p->k, view_order_dims);
    bool identity = true;
    for (int32_t i = 0; i < p->k; i++) /* stride-order dim i is view-order dim j where by_view[j] == i */
        for (int32_t j = 0; j < p->k; j++)
            if (by_view[j] == i) {
                perm[i] = j;
                identity = identity && j == i;
            }
    if (!identity) u = tt_ir_transpose(b, u, perm);
    int64_t lo[TT_MAX_RANK] = {0}, hi[TT_MAX_RANK], interior[TT_MAX_RANK];
    bool whole = true;
    for (int32_t i = 0; i < p->k; i++) {
        interior[i] = p->step[i] - 1;
        hi[i] = p->factor[i] - ((p->len[i] - 1) * p->step[i] + 1);
        whole = whole && hi[i] == 0 && interior[i] == 0;
    }
    if (!whole) u = tt_ir_pad(b, u, tt_ir_constant_scalar(b, dt, 0), lo, hi, interior);
    int64_t span = p->span;
    return tt_ir_reshape(b, u, 1, &span);
}

/* A range value of span elements placed at offset in n elements (zeros around; cut at n). */
static tt_ir_value place_range(tt_ir_builder *b, tt_ir_value r, int64_t n, int64_t offset, int64_t span, tt_dtype dt) {
    if (offset == 0 && span == n) return r;
    int64_t lo = offset, hi = n - offset - span; /* negative high padding cuts the overhang */
    return tt_ir_pad(b, r, tt_ir_constant_scalar(b, dt, 0), &lo, &hi, NULL);
}

tt_status tt_ir_view_write(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                           const int64_t *strides, tt_ir_value update, tt_ir_value *out) {
    int64_t n;
    tt_dtype dt;
    tt_status st = check_flat(b, flat, offset, rank, dims, strides, "view_write", &n, &dt);
    if (st != TT_OK) return st;
    view_plan p;
    bool box = plan_view(n, offset, rank, dims, strides, &p);
    if (box && p.empty) {
        *out = flat;
        return tt_ir_builder_status(b);
    }
    if (!box || p.broadcast) {
        *out = scatter_view(b, flat, offset, rank, dims, strides, update);
        return tt_ir_builder_status(b);
    }
    if (tt_ir_view_is_whole(n, offset, rank, dims, strides)) {
        *out = tt_ir_reshape(b, update, 1, &n);
        return tt_ir_builder_status(b);
    }
    tt_ir_value r = place_range(b, box_to_range(b, update, &p, rank, dt), n, offset, p.span, dt);
    if (offset == 0 && p.span == n && tt_numel(rank, dims) == n) { /* every element once (a permuted whole) */
        *out = r;
        return tt_ir_builder_status(b);
    }
    tt_ir_value ones = tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_BOOL, 1), rank, dims, NULL);
    tt_ir_value mask = place_range(b, box_to_range(b, ones, &p, rank, TT_BOOL), n, offset, p.span, TT_BOOL);
    *out = tt_ir_select(b, mask, r, flat);
    return tt_ir_builder_status(b);
}
