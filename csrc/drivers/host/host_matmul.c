/* host_matmul.c — dot_general for the host driver, with TPU precision semantics.
 *
 * Operands are canonicalised to [batch, M, K] and [batch, K, N] (read in place when the layout already allows
 * it, else gathered into contiguous compute-type buffers), multiplied by a blocked GEMM (host_matmul_gemm.c),
 * and the f32 / f64 / i64 accumulators are converted to the node's result dtype.
 *
 * Compute classes: f32, bf16, f16 operands -> f32 GEMM with precision (bf16 passes); f64 -> double GEMM;
 * integers and bool -> wrapping 64-bit integer GEMM.
 */
#include "host_kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* ---- element conversion ------------------------------------------------------------------------------ */

/* Compute dtype for an operand dtype: f32 for 32-bit-or-narrower floats, f64, else i64. */
int tt_host_compute_dtype(tt_dtype dt) {
    if (dt == TT_F64) return TT_F64;
    if (tt_dtype_is_float(dt)) return TT_F32;
    return TT_I64;
}

static double ld_f64(tt_dtype dt, const void *s, int64_t i) {
    switch (dt) {
    case TT_F32: return ((const float *)s)[i];
    case TT_BF16: return tt_bf16_to_f32(((const uint16_t *)s)[i]);
    case TT_F16: return tt_f16_to_f32(((const uint16_t *)s)[i]);
    case TT_F64: return ((const double *)s)[i];
    case TT_I64: return (double)((const int64_t *)s)[i];
    case TT_I32: return ((const int32_t *)s)[i];
    case TT_I16: return ((const int16_t *)s)[i];
    case TT_I8: return ((const int8_t *)s)[i];
    case TT_U8: return ((const uint8_t *)s)[i];
    case TT_BOOL: return ((const uint8_t *)s)[i] != 0;
    default: return 0;
    }
}

static int64_t ld_i64(tt_dtype dt, const void *s, int64_t i) {
    switch (dt) {
    case TT_I64: return ((const int64_t *)s)[i];
    case TT_I32: return ((const int32_t *)s)[i];
    case TT_I16: return ((const int16_t *)s)[i];
    case TT_I8: return ((const int8_t *)s)[i];
    case TT_U8: return ((const uint8_t *)s)[i];
    case TT_BOOL: return ((const uint8_t *)s)[i] != 0;
    default: {
        double v = ld_f64(dt, s, i); /* float -> int truncates; out of range saturates (no UB) */
        if (isnan(v)) return 0;
        if (v >= 9223372036854775807.0) return INT64_MAX;
        if (v <= -9223372036854775808.0) return INT64_MIN;
        return (int64_t)v;
    }
    }
}

/* Loads n elements src[off + i*stride] of dtype dt into dst as `to` (TT_F32, TT_F64 or TT_I64). */
void tt_host_load_row(tt_dtype dt, const void *src, int64_t off, int64_t stride, int64_t n, tt_dtype to,
                      void *dst) {
    if (to == TT_F32) {
        float *d = dst;
        if (dt == TT_F32) {
            const float *s = (const float *)src + off;
            if (stride == 1) memcpy(d, s, (size_t)n * sizeof *d);
            else for (int64_t i = 0; i < n; i++) d[i] = s[i * stride];
        } else if (dt == TT_BF16) {
            const uint16_t *s = (const uint16_t *)src + off;
            for (int64_t i = 0; i < n; i++) d[i] = tt_bf16_to_f32(s[i * stride]);
        } else {
            for (int64_t i = 0; i < n; i++) d[i] = (float)ld_f64(dt, src, off + i * stride);
        }
    } else if (to == TT_F64) {
        double *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = ld_f64(dt, src, off + i * stride);
    } else {
        int64_t *d = dst;
        for (int64_t i = 0; i < n; i++) d[i] = ld_i64(dt, src, off + i * stride);
    }
}

static int64_t f64_to_i64_sat(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

static void st_i64(tt_dtype dt, void *d, int64_t i, int64_t v) {
    uint64_t u = (uint64_t)v; /* narrowing wraps (two's complement), like StableHLO convert */
    switch (dt) {
    case TT_I64: ((int64_t *)d)[i] = v; break;
    case TT_I32: ((int32_t *)d)[i] = (int32_t)(uint32_t)u; break;
    case TT_I16: ((int16_t *)d)[i] = (int16_t)(uint16_t)u; break;
    case TT_I8: ((int8_t *)d)[i] = (int8_t)(uint8_t)u; break;
    case TT_U8: ((uint8_t *)d)[i] = (uint8_t)u; break;
    case TT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    case TT_F32: ((float *)d)[i] = (float)v; break;
    case TT_BF16: ((uint16_t *)d)[i] = tt_f32_to_bf16((float)v); break;
    case TT_F16: ((uint16_t *)d)[i] = tt_f32_to_f16((float)v); break;
    case TT_F64: ((double *)d)[i] = (double)v; break;
    default: break;
    }
}

static void st_f32(tt_dtype dt, void *d, int64_t i, float v) {
    switch (dt) {
    case TT_F32: ((float *)d)[i] = v; break;
    case TT_BF16: ((uint16_t *)d)[i] = tt_f32_to_bf16(v); break;
    case TT_F16: ((uint16_t *)d)[i] = tt_f32_to_f16(v); break;
    case TT_F64: ((double *)d)[i] = v; break;
    case TT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    default: st_i64(dt, d, i, f64_to_i64_sat(v)); break;
    }
}

static void st_f64(tt_dtype dt, void *d, int64_t i, double v) {
    switch (dt) {
    case TT_F64: ((double *)d)[i] = v; break;
    case TT_F32: case TT_BF16: case TT_F16: st_f32(dt, d, i, (float)v); break;
    case TT_BOOL: ((uint8_t *)d)[i] = v != 0; break;
    default: st_i64(dt, d, i, f64_to_i64_sat(v)); break;
    }
}

/* Stores n compute values (from = TT_F32, TT_F64 or TT_I64) into dst[off..off+n) of dtype dt. */
void tt_host_store_row(tt_dtype from, const void *src, int64_t n, tt_dtype dt, void *dst, int64_t off) {
    if (from == TT_F32) {
        const float *s = src;
        if (dt == TT_F32) memcpy((float *)dst + off, s, (size_t)n * sizeof *s);
        else for (int64_t i = 0; i < n; i++) st_f32(dt, dst, off + i, s[i]);
    } else if (from == TT_F64) {
        const double *s = src;
        for (int64_t i = 0; i < n; i++) st_f64(dt, dst, off + i, s[i]);
    } else {
        const int64_t *s = src;
        for (int64_t i = 0; i < n; i++) st_i64(dt, dst, off + i, s[i]);
    }
}

/* ---- dot_general ------------------------------------------------------------------------------------- */

typedef struct dot_side {
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
    int perm[TT_MAX_RANK]; /* canonical order: batch dims, then the two other groups */
} dot_side;

/* Gathers a tensor of dtype dt, permuted by perm, into a contiguous buffer of compute dtype cd. */
static tt_status gather_permuted(tt_dtype dt, const void *src, const dot_side *s, tt_dtype cd, void **out) {
    int64_t n = tt_numel(s->rank, s->dims);
    size_t esz = tt_dtype_size(cd);
    void *dst = malloc(n > 0 ? (size_t)n * esz : 1);
    if (!dst) return tt_error(TT_STATUS_OUT_OF_MEMORY, "dot_general: cannot allocate %lld elements", (long long)n);
    *out = dst;
    if (n == 0) return TT_OK;
    int64_t strides[TT_MAX_RANK], pd[TT_MAX_RANK], ps[TT_MAX_RANK], idx[TT_MAX_RANK] = {0};
    int64_t st = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        strides[i] = st;
        st *= s->dims[i];
    }
    int r = s->rank;
    for (int i = 0; i < r; i++) {
        pd[i] = s->dims[s->perm[i]];
        ps[i] = strides[s->perm[i]];
    }
    if (r == 0) {
        tt_host_load_row(dt, src, 0, 1, 1, cd, dst);
        return TT_OK;
    }
    int64_t inner = pd[r - 1], rows = n / inner;
    for (int64_t row = 0; row < rows; row++) {
        int64_t off = 0;
        for (int i = 0; i < r - 1; i++) off += idx[i] * ps[i];
        tt_host_load_row(dt, src, off, ps[r - 1], inner, cd, (char *)dst + (size_t)(row * inner) * esz);
        for (int i = r - 2; i >= 0; i--) {
            if (++idx[i] < pd[i]) break;
            idx[i] = 0;
        }
    }
    return TT_OK;
}

static bool dims_valid(const tt_ir_dims *d, int32_t rank, bool *used) {
    if (d->n < 0 || d->n > rank) return false;
    for (int64_t i = 0; i < d->n; i++) {
        if (d->v[i] < 0 || d->v[i] >= rank || used[d->v[i]]) return false;
        used[d->v[i]] = true;
    }
    return true;
}

/* perm = g0 ++ g1 ++ g2. */
static void side_perm(dot_side *s, const tt_ir_dims *g0, const tt_ir_dims *g1, const tt_ir_dims *g2) {
    int k = 0;
    for (int64_t i = 0; i < g0->n; i++) s->perm[k++] = (int)g0->v[i];
    for (int64_t i = 0; i < g1->n; i++) s->perm[k++] = (int)g1->v[i];
    for (int64_t i = 0; i < g2->n; i++) s->perm[k++] = (int)g2->v[i];
}

/* True when the groups g0 ++ g1 ++ g2 list the dims 0..rank-1 in memory order (a flat reinterpretation). */
static bool in_memory_order(const tt_ir_dims *g0, const tt_ir_dims *g1, const tt_ir_dims *g2) {
    int64_t e = 0;
    const tt_ir_dims *g[3] = {g0, g1, g2};
    for (int j = 0; j < 3; j++)
        for (int64_t i = 0; i < g[j]->n; i++)
            if (g[j]->v[i] != e++) return false;
    return true;
}

tt_status tt_host_dot_general(const tt_ir_program *p, const tt_ir_node *node, const void *lhs, const void *rhs,
                              void *out) {
    if (!p || !node || node->n_inputs != 2 || node->n_outputs < 1)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: malformed node");
    return tt_host_dot(&p->types[p->operands[node->inputs_offset]], &p->types[p->operands[node->inputs_offset + 1]],
                       &p->types[node->outputs[0]], &node->attrs, lhs, rhs, out);
}

bool tt_host_dot_unpermute(const tt_ir_type *t, const int8_t *perm, tt_ir_dims *batch, tt_ir_dims *contract,
                           tt_ir_type *base) {
    int32_t r = t->rank;
    int8_t inv[TT_MAX_RANK];
    bool used[TT_MAX_RANK] = {false};
    if (batch->n < 0 || contract->n < 0 || batch->n + contract->n > r) return false;
    for (int32_t k = 0; k < r; k++) inv[perm[k]] = (int8_t)k;
    for (int64_t i = 0; i < batch->n; i++) {
        if (batch->v[i] < 0 || batch->v[i] >= r) return false;
        used[batch->v[i]] = true;
    }
    for (int64_t i = 0; i < contract->n; i++) {
        if (contract->v[i] < 0 || contract->v[i] >= r) return false;
        used[contract->v[i]] = true;
    }
    int last = -1;
    for (int32_t d = 0; d < r; d++) { /* the free dims give the result's layout: they must keep their order */
        if (used[d]) continue;
        if (inv[d] <= last) return false;
        last = inv[d];
    }
    *base = *t;
    for (int32_t k = 0; k < r; k++) base->dims[k] = t->dims[perm[k]];
    for (int64_t i = 0; i < batch->n; i++) batch->v[i] = inv[batch->v[i]];
    for (int64_t i = 0; i < contract->n; i++) contract->v[i] = inv[contract->v[i]];
    return true;
}

tt_status tt_host_dot(const tt_ir_type *lt, const tt_ir_type *rt, const tt_ir_type *ot, const tt_ir_attrs *attrs,
                      const void *lhs, const void *rhs, void *out) {
    const tt_ir_dims *lb = &attrs->dot.lhs_batch, *lc = &attrs->dot.lhs_contract;
    const tt_ir_dims *rb = &attrs->dot.rhs_batch, *rc = &attrs->dot.rhs_contract;
    tt_precision prec = attrs->dot.precision;

    bool lused[TT_MAX_RANK] = {false}, rused[TT_MAX_RANK] = {false};
    if (lt->rank > TT_MAX_RANK || rt->rank > TT_MAX_RANK || !dims_valid(lb, lt->rank, lused) ||
        !dims_valid(lc, lt->rank, lused) || !dims_valid(rb, rt->rank, rused) || !dims_valid(rc, rt->rank, rused) ||
        lb->n != rb->n || lc->n != rc->n)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: invalid dimension numbers");
    int64_t B = 1, K = 1, M = 1, N = 1;
    for (int64_t i = 0; i < lb->n; i++) {
        if (lt->dims[lb->v[i]] != rt->dims[rb->v[i]])
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: batch dimension sizes differ");
        B *= lt->dims[lb->v[i]];
    }
    for (int64_t i = 0; i < lc->n; i++) {
        if (lt->dims[lc->v[i]] != rt->dims[rc->v[i]])
            return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: contracting dimension sizes differ");
        K *= lt->dims[lc->v[i]];
    }
    /* Result: batch dims, lhs free dims, rhs free dims. */
    int64_t ores[TT_MAX_RANK];
    int orank = 0;
    bool ok = true;
    for (int64_t i = 0; i < lb->n; i++) ores[orank++] = lt->dims[lb->v[i]];
    for (int i = 0; i < lt->rank; i++)
        if (!lused[i]) {
            if (orank >= TT_MAX_RANK) ok = false;
            else ores[orank++] = lt->dims[i];
            M *= lt->dims[i];
        }
    for (int i = 0; i < rt->rank; i++)
        if (!rused[i]) {
            if (orank >= TT_MAX_RANK) ok = false;
            else ores[orank++] = rt->dims[i];
            N *= rt->dims[i];
        }
    if (!ok || orank != ot->rank) return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: result rank mismatch");
    for (int i = 0; i < orank; i++)
        if (ores[i] != ot->dims[i]) return tt_error(TT_STATUS_INVALID_ARGUMENT, "dot_general: result shape mismatch");
    if ((unsigned)lt->dtype >= TT_DTYPE_COUNT || (unsigned)rt->dtype >= TT_DTYPE_COUNT ||
        (unsigned)ot->dtype >= TT_DTYPE_COUNT)
        return tt_error(TT_STATUS_TYPE, "dot_general: bad dtype");
    int64_t total = B * M * N;
    if (total == 0) return TT_OK;

    dot_side ls = {.rank = lt->rank}, rs = {.rank = rt->rank};
    memcpy(ls.dims, lt->dims, sizeof ls.dims);
    memcpy(rs.dims, rt->dims, sizeof rs.dims);
    tt_ir_dims lf = {0}, rf = {0}; /* free dims, in order */
    for (int i = 0; i < lt->rank; i++)
        if (!lused[i]) lf.v[lf.n++] = i;
    for (int i = 0; i < rt->rank; i++)
        if (!rused[i]) rf.v[rf.n++] = i;
    side_perm(&ls, lb, &lf, lc); /* [B, M, K] */
    side_perm(&rs, rb, rc, &rf); /* [B, K, N] */

    tt_dtype cd = (tt_dtype)tt_host_compute_dtype(lt->dtype);
    if ((tt_dtype)tt_host_compute_dtype(rt->dtype) != cd)
        return tt_error(TT_STATUS_TYPE, "dot_general: operand dtypes %s and %s do not mix", tt_dtype_name(lt->dtype),
                        tt_dtype_name(rt->dtype));
    void *abuf = NULL, *bbuf = NULL, *cbuf = NULL;
    tt_status st = TT_OK;
    size_t csz = tt_dtype_size(cd);

    if (cd == TT_F32) {
        const float *A, *Bm;
        int64_t a_rs, a_cs, b_rs, b_cs;
        if (lt->dtype == TT_F32 && in_memory_order(lb, &lf, lc)) {
            A = lhs, a_rs = K, a_cs = 1;
        } else if (lt->dtype == TT_F32 && in_memory_order(lb, lc, &lf)) {
            A = lhs, a_rs = 1, a_cs = M; /* stored [B, K, M]: read transposed in place */
        } else {
            st = gather_permuted(lt->dtype, lhs, &ls, TT_F32, &abuf);
            if (st != TT_OK) goto done;
            A = abuf, a_rs = K, a_cs = 1;
        }
        if (rt->dtype == TT_F32 && in_memory_order(rb, rc, &rf)) {
            Bm = rhs, b_rs = N, b_cs = 1;
        } else if (rt->dtype == TT_F32 && in_memory_order(rb, &rf, rc)) {
            Bm = rhs, b_rs = 1, b_cs = K; /* stored [B, N, K] (x @ W^T): read in place */
        } else {
            st = gather_permuted(rt->dtype, rhs, &rs, TT_F32, &bbuf);
            if (st != TT_OK) goto done;
            Bm = bbuf, b_rs = N, b_cs = 1;
        }
        float *C = out;
        if (ot->dtype != TT_F32) {
            cbuf = malloc((size_t)total * sizeof(float));
            if (!cbuf) {
                st = tt_error(TT_STATUS_OUT_OF_MEMORY, "dot_general: out of memory");
                goto done;
            }
            C = cbuf;
        }
        st = tt_host_gemm_f32(B, M, N, K, A, M * K, a_rs, a_cs, Bm, K * N, b_rs, b_cs, C, M * N, N, prec);
        if (st == TT_OK && cbuf) tt_host_store_row(TT_F32, cbuf, total, ot->dtype, out, 0);
    } else {
        st = gather_permuted(lt->dtype, lhs, &ls, cd, &abuf);
        if (st == TT_OK) st = gather_permuted(rt->dtype, rhs, &rs, cd, &bbuf);
        if (st != TT_OK) goto done;
        void *C = out;
        if (ot->dtype != cd) {
            cbuf = malloc((size_t)total * csz);
            if (!cbuf) {
                st = tt_error(TT_STATUS_OUT_OF_MEMORY, "dot_general: out of memory");
                goto done;
            }
            C = cbuf;
        }
        if (cd == TT_F64) st = tt_host_gemm_f64(B, M, N, K, abuf, M * K, bbuf, K * N, C, M * N, N);
        else st = tt_host_gemm_i64(B, M, N, K, abuf, M * K, bbuf, K * N, C, M * N, N);
        if (st == TT_OK && cbuf) tt_host_store_row(cd, cbuf, total, ot->dtype, out, 0);
    }
done:
    free(abuf);
    free(bbuf);
    free(cbuf);
    return st;
}
