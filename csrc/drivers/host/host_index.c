/* host_index.c — gather and scatter with StableHLO semantics (no batching dims).
 *
 * gather: for each batch position (the result dims not in offset_dims, matching the index dims other than
 * index_vector_dim), read the start vector, clamp each start into [0, operand_dim - slice_size], and copy one
 * slice (a strided block copy). scatter: for each update position, skip the whole window if any of it falls
 * outside the operand, else combine the window element by element (replace/add/mul/max/min).
 */
#include "host_internal.h"

#include <string.h>

static bool in_list(const tt_ir_dims *l, int64_t v) {
    for (int64_t i = 0; i < l->n; i++)
        if (l->v[i] == v) return true;
    return false;
}

/* Position of the index vector for batch multi-index bidx (over the index dims other than ivd), component k. */
static int64_t index_value(const tt_ir_type *it, const void *indices, int64_t ivd, const int64_t *bidx, int64_t k) {
    int64_t is[TT_MAX_RANK], off = 0;
    tt_host_contiguous_strides(it->rank, it->dims, is);
    int32_t j = 0;
    for (int32_t d = 0; d < it->rank; d++) {
        if (d == ivd) off += k * is[d];
        else off += bidx[j++] * is[d];
    }
    int64_t v;
    tt_host_load_i64(it->dtype, (const char *)indices + off * (int64_t)tt_dtype_size(it->dtype), 1, &v);
    return v;
}

static bool next_index(int64_t *idx, const int64_t *dims, int32_t n) {
    for (int32_t k = n - 1; k >= 0; k--) {
        if (++idx[k] < dims[k]) return true;
        idx[k] = 0;
    }
    return false;
}

tt_status tt_host_gather(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const tt_ir_type *opt = tt_host_in_type(p, n, 0), *it = tt_host_in_type(p, n, 1), *ot = &p->types[n->outputs[0]];
    const char *operand = tt_host_in(p, n, vals, 0);
    const void *indices = tt_host_in(p, n, vals, 1);
    char *out = vals[n->outputs[0]];
    size_t es = tt_dtype_size(ot->dtype);
    const __typeof__(n->attrs.gather) *g = &n->attrs.gather;
    int64_t ops[TT_MAX_RANK], os[TT_MAX_RANK];
    tt_host_contiguous_strides(opt->rank, opt->dims, ops);
    tt_host_contiguous_strides(ot->rank, ot->dims, os);
    if (tt_host_numel(ot) == 0) return TT_OK;

    /* Batch dims of the result and the slice (offset) dims with their operand strides. */
    int64_t bdims[TT_MAX_RANK], bstr[TT_MAX_RANK], sdims[TT_MAX_RANK], sdst[TT_MAX_RANK], ssrc[TT_MAX_RANK];
    int32_t nb = 0, ns = 0;
    for (int32_t d = 0; d < ot->rank; d++) {
        if (in_list(&g->offset_dims, d)) continue;
        bdims[nb] = ot->dims[d];
        bstr[nb++] = os[d];
    }
    int32_t od = 0;
    for (int32_t d = 0; d < opt->rank; d++) {
        if (in_list(&g->collapsed_slice_dims, d)) continue;
        if (od >= g->offset_dims.n) return tt_error(TT_STATUS_INTERNAL, "host gather: offset_dims too short");
        sdims[ns] = g->slice_sizes.v[d];
        sdst[ns] = os[g->offset_dims.v[od++]];
        ssrc[ns++] = ops[d];
    }
    int64_t ivd = g->index_vector_dim;
    int64_t nvec = ivd < it->rank ? it->dims[ivd] : 1;
    int64_t bidx[TT_MAX_RANK] = {0};
    do {
        int64_t soff = 0, doff = 0;
        for (int32_t k = 0; k < nb; k++) doff += bidx[k] * bstr[k];
        for (int64_t k = 0; k < nvec && k < g->start_index_map.n; k++) {
            int64_t d = g->start_index_map.v[k];
            int64_t v = index_value(it, indices, ivd, bidx, k);
            int64_t hi = opt->dims[d] - g->slice_sizes.v[d];
            if (g->check_bounds && (v < 0 || v > hi)) return tt_ir_bounds_status(g->bounds_error, v, d, opt->dims[d]);
            if (v > hi) v = hi;
            if (v < 0) v = 0;
            soff += v * ops[d];
        }
        tt_host_strided_copy(es, ns, sdims, out, doff, sdst, operand, soff, ssrc);
    } while (next_index(bidx, bdims, nb));
    return TT_OK;
}

/* dst = combine(dst, src) for one element. */
static void combine(tt_dtype dt, tt_ir_reduce_kind kind, char *dst, const char *src) {
    size_t es = tt_dtype_size(dt);
    if (kind == TT_REDUCE_NONE) {
        memcpy(dst, src, es);
        return;
    }
    if (tt_dtype_is_float(dt)) {
        double a, b;
        tt_host_load_f64(dt, dst, 1, &a);
        tt_host_load_f64(dt, src, 1, &b);
        switch (kind) {
        case TT_REDUCE_ADD: a = a + b; break;
        case TT_REDUCE_MUL: a = a * b; break;
        case TT_REDUCE_MAX: a = (a != a || b != b) ? a + b : a > b ? a : b; break;
        case TT_REDUCE_MIN: a = (a != a || b != b) ? a + b : a < b ? a : b; break;
        default: break;
        }
        tt_host_store_f64(dt, &a, 1, dst);
        return;
    }
    int64_t a, b;
    tt_host_load_i64(dt, dst, 1, &a);
    tt_host_load_i64(dt, src, 1, &b);
    bool is_bool = dt == TT_BOOL;
    switch (kind) {
    case TT_REDUCE_ADD: a = is_bool ? (a | b) : (int64_t)((uint64_t)a + (uint64_t)b); break;
    case TT_REDUCE_MUL: a = is_bool ? (a & b) : (int64_t)((uint64_t)a * (uint64_t)b); break;
    case TT_REDUCE_MAX: a = a > b ? a : b; break;
    case TT_REDUCE_MIN: a = a < b ? a : b; break;
    case TT_REDUCE_AND: a = a & b; break;
    case TT_REDUCE_OR: a = a | b; break;
    default: break;
    }
    tt_host_store_i64(dt, &a, 1, dst);
}

/* combine over a run of n elements (strides in elements); f32 add / replace over contiguous runs (an embedding
 * gradient's rows) as vector loops, the same values as element by element. */
static void combine_run(tt_dtype dt, tt_ir_reduce_kind kind, char *dst, const char *src, int64_t n, int64_t dstr,
                        int64_t sstr) {
    if (dt == TT_F32 && dstr == 1 && sstr == 1 && (kind == TT_REDUCE_ADD || kind == TT_REDUCE_NONE)) {
        float *d = (float *)(void *)dst;
        const float *x = (const float *)(const void *)src;
        if (kind == TT_REDUCE_NONE) memcpy(d, x, (size_t)n * sizeof *d);
        else
            for (int64_t i = 0; i < n; i++) d[i] += x[i];
        return;
    }
    size_t es = tt_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) combine(dt, kind, dst + i * dstr * (int64_t)es, src + i * sstr * (int64_t)es);
}

tt_status tt_host_scatter(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const tt_ir_type *opt = tt_host_in_type(p, n, 0), *it = tt_host_in_type(p, n, 1), *ut = tt_host_in_type(p, n, 2);
    const void *indices = tt_host_in(p, n, vals, 1);
    const char *upd = tt_host_in(p, n, vals, 2);
    char *out = vals[n->outputs[0]];
    tt_dtype dt = opt->dtype;
    size_t es = tt_dtype_size(dt);
    const __typeof__(n->attrs.scatter) *s = &n->attrs.scatter;
    memcpy(out, tt_host_in(p, n, vals, 0), (size_t)tt_host_numel(opt) * es);
    if (tt_host_numel(ut) == 0) return TT_OK;
    int64_t ops[TT_MAX_RANK], us[TT_MAX_RANK];
    tt_host_contiguous_strides(opt->rank, opt->dims, ops);
    tt_host_contiguous_strides(ut->rank, ut->dims, us);

    /* Update scatter dims (iterated per window) and window dims (mapped to operand dims). */
    int64_t sdims[TT_MAX_RANK], sstr[TT_MAX_RANK], wdims[TT_MAX_RANK], wsrc[TT_MAX_RANK], wdst[TT_MAX_RANK];
    int64_t wsize[TT_MAX_RANK];
    int32_t nsd = 0, nw = 0;
    for (int32_t d = 0; d < ut->rank; d++) {
        if (in_list(&s->update_window_dims, d)) continue;
        sdims[nsd] = ut->dims[d];
        sstr[nsd++] = us[d];
    }
    int32_t wd = 0;
    for (int32_t d = 0; d < opt->rank; d++) {
        if (in_list(&s->inserted_window_dims, d)) {
            wsize[d] = 1;
            continue;
        }
        if (wd >= s->update_window_dims.n) return tt_error(TT_STATUS_INTERNAL, "host scatter: window dims too short");
        int64_t ud = s->update_window_dims.v[wd++];
        wsize[d] = ut->dims[ud];
        wdims[nw] = ut->dims[ud];
        wsrc[nw] = us[ud];
        wdst[nw++] = ops[d];
    }
    int64_t ivd = s->index_vector_dim;
    int64_t nvec = ivd < it->rank ? it->dims[ivd] : 1;
    int64_t sidx[TT_MAX_RANK] = {0};
    do {
        int64_t start[TT_MAX_RANK] = {0};
        for (int64_t k = 0; k < nvec && k < s->scatter_dims_to_operand_dims.n; k++)
            start[s->scatter_dims_to_operand_dims.v[k]] = index_value(it, indices, ivd, sidx, k);
        bool inside = true;
        int64_t doff = 0, soff = 0;
        for (int32_t d = 0; d < opt->rank; d++) {
            if (start[d] < 0 || start[d] > opt->dims[d] - wsize[d]) {
                if (s->check_bounds) return tt_ir_bounds_status(s->bounds_error, start[d], d, opt->dims[d]);
                inside = false;
            }
            doff += start[d] * ops[d];
        }
        if (!inside) continue;
        for (int32_t k = 0; k < nsd; k++) soff += sidx[k] * sstr[k];
        /* the window's last dim as runs, the others element by element */
        int32_t nouter = nw > 0 ? nw - 1 : 0;
        int64_t run = nw > 0 ? wdims[nw - 1] : 1, rdst = nw > 0 ? wdst[nw - 1] : 1, rsrc = nw > 0 ? wsrc[nw - 1] : 1;
        int64_t widx[TT_MAX_RANK] = {0};
        do {
            int64_t d2 = doff, s2 = soff;
            for (int32_t k = 0; k < nouter; k++) {
                d2 += widx[k] * wdst[k];
                s2 += widx[k] * wsrc[k];
            }
            combine_run(dt, s->kind, out + d2 * (int64_t)es, upd + s2 * (int64_t)es, run, rdst, rsrc);
        } while (next_index(widx, wdims, nouter));
    } while (next_index(sidx, sdims, nsd));
    return TT_OK;
}
