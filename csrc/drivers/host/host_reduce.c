/* host_reduce.c — reduce (add/mul/max/min/and/or over any dims), arg_reduce (first index of max/min, NaN
 * counts as the extreme), cumulative (inclusive scan along one dim, optionally reversed).
 *
 * reduce moves the reduced dims last (a strided copy into scratch unless they already are), then reduces each
 * contiguous row. Float sums are pairwise over blocks of TT_HOST_BLOCK so large sums stay accurate (inside a
 * block, 16 interleaved partial sums combined pairwise); f32, bf16 and f16 accumulate in float, f64 in double,
 * integers in wrapping i64.
 */
#include "host_internal.h"

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; the lane loops here want the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <string.h>

#define BLK TT_HOST_BLOCK

static bool in_dims(const tt_ir_dims *l, int64_t v) {
    for (int64_t i = 0; i < l->n; i++)
        if (l->v[i] == v) return true;
    return false;
}

#define FMAX(a, v) (((a) != (a) || (v) != (v)) ? (a) + (v) : (v) > (a) ? (v) : (a))
#define FMIN(a, v) (((a) != (a) || (v) != (v)) ? (a) + (v) : (v) < (a) ? (v) : (a))

/* Block kernels with LANES independent partial results, so the loops vectorize and do not wait on one
 * accumulator: sum (lanes combined pairwise, then the tail) and max/min (lanes combined pairwise too; NaN anywhere
 * gives NaN; among equal values, e.g. -0 and +0, the lane order decides which one is kept). */
#define LANES 16
/* The partial sums are four 16-byte GCC vectors (lanes 0-3, 4-7, 8-11, 12-15), so they live in registers on any
 * x86-64: as a plain array (or one 64-byte vector) GCC kept them in memory and every step waited on a
 * store-to-load round trip. Same lanes, same order, same results. */
#define Q(T) (16 / (int)sizeof(T)) /* lanes per 16-byte vector */
typedef float quad_f32 __attribute__((vector_size(16)));
typedef double quad_f64 __attribute__((vector_size(16)));
#define RED_BLOCK(NAME, T, VT)                                                                            \
    static T sum_##NAME(const T *v, int64_t m) {                                                          \
        VT acc[LANES / Q(T)] = {{0}};                                                                     \
        T l[LANES], tail = 0;                                                                             \
        int64_t i = 0;                                                                                    \
        for (; i + LANES <= m; i += LANES) {                                                              \
            _Pragma("GCC unroll 8") for (int q = 0; q < LANES / Q(T); q++) {                              \
                VT x;                                                                                     \
                memcpy(&x, v + i + q * Q(T), sizeof x);                                                   \
                acc[q] += x;                                                                              \
            }                                                                                             \
        }                                                                                                 \
        memcpy(l, acc, sizeof l);                                                                        \
        for (; i < m; i++) tail += v[i];                                                                  \
        for (int w = LANES / 2; w > 0; w /= 2)                                                            \
            for (int k = 0; k < w; k++) l[k] += l[k + w];                                                 \
        return l[0] + tail;                                                                               \
    }                                                                                                     \
    static T ext_##NAME(const T *v, int64_t m, bool is_min) {                                             \
        T l[LANES], r = is_min ? (T)INFINITY : (T)-INFINITY;                                              \
        int32_t nan[LANES]; /* a NaN seen in this lane */                                                 \
        for (int k = 0; k < LANES; k++) {                                                                 \
            l[k] = r;                                                                                     \
            nan[k] = 0;                                                                                   \
        }                                                                                                 \
        int64_t i = 0;                                                                                    \
        if (is_min) {                                                                                     \
            for (; i + LANES <= m; i += LANES)                                                            \
                for (int k = 0; k < LANES; k++) {                                                         \
                    T x = v[i + k];                                                                       \
                    l[k] = x < l[k] ? x : l[k];                                                           \
                    nan[k] |= x != x;                                                                     \
                }                                                                                         \
        } else {                                                                                          \
            for (; i + LANES <= m; i += LANES)                                                            \
                for (int k = 0; k < LANES; k++) {                                                         \
                    T x = v[i + k];                                                                       \
                    l[k] = x > l[k] ? x : l[k];                                                           \
                    nan[k] |= x != x;                                                                     \
                }                                                                                         \
        }                                                                                                 \
        /* lanes combined as a tree of vector steps: short rows (softmax over 64) are mostly this */      \
        _Pragma("GCC unroll 4") for (int w = LANES / 2; w > 0; w /= 2)                                    \
            for (int k = 0; k < w; k++) {                                                                 \
                T a = l[k], b = l[k + w];                                                                 \
                l[k] = is_min ? (b < a ? b : a) : (b > a ? b : a);                                        \
                nan[k] |= nan[k + w];                                                                     \
            }                                                                                             \
        r = l[0];                                                                                         \
        if (nan[0]) r = (T)NAN;                                                                           \
        for (; i < m; i++) r = is_min ? FMIN(r, v[i]) : FMAX(r, v[i]);                                    \
        return r;                                                                                         \
    }

RED_BLOCK(red_f32, float, quad_f32)
RED_BLOCK(red_f64, double, quad_f64)

/* Reduction of one contiguous row of n elements of dtype dt, in compute type T. */
#define RED_FLOAT(NAME, T, NATIVE, LOAD)                                                                  \
    TT_HOST_VEC_CLONES static T NAME(tt_dtype dt, tt_ir_reduce_kind kind, const char *x, int64_t n) {    \
        size_t es = tt_dtype_size(dt);                                                                    \
        if (kind == TT_REDUCE_ADD && n > BLK) {                                                           \
            int64_t h = (n / 2 + BLK - 1) / BLK * BLK;                                                    \
            return NAME(dt, kind, x, h) + NAME(dt, kind, x + h * (int64_t)es, n - h);                     \
        }                                                                                                 \
        T acc = kind == TT_REDUCE_ADD ? (T)0 : kind == TT_REDUCE_MUL ? (T)1                               \
              : kind == TT_REDUCE_MAX ? (T)-INFINITY : (T)INFINITY;                                       \
        T buf[BLK];                                                                                       \
        for (int64_t off = 0; off < n; off += BLK) {                                                      \
            int64_t m = n - off < BLK ? n - off : BLK;                                                    \
            const T *v = buf;                                                                             \
            if (dt == NATIVE) v = (const T *)(const void *)(x + off * (int64_t)es);                       \
            else LOAD(dt, x + off * (int64_t)es, m, buf);                                                 \
            switch (kind) {                                                                               \
            case TT_REDUCE_ADD: acc += sum_##NAME(v, m); break;                                           \
            case TT_REDUCE_MUL: for (int64_t i = 0; i < m; i++) acc *= v[i]; break;                       \
            case TT_REDUCE_MAX: acc = FMAX(acc, ext_##NAME(v, m, false)); break;                          \
            case TT_REDUCE_MIN: acc = FMIN(acc, ext_##NAME(v, m, true)); break;                           \
            default: break;                                                                               \
            }                                                                                             \
        }                                                                                                 \
        return acc;                                                                                       \
    }

RED_FLOAT(red_f32, float, TT_F32, tt_host_load_f32)
RED_FLOAT(red_f64, double, TT_F64, tt_host_load_f64)

float tt_host_reduce_row_f32(tt_ir_reduce_kind kind, const float *x, int64_t n) {
    return red_f32(TT_F32, kind, (const char *)x, n);
}
double tt_host_reduce_row_f64(tt_ir_reduce_kind kind, const double *x, int64_t n) {
    return red_f64(TT_F64, kind, (const char *)x, n);
}

static int64_t red_i64(tt_dtype dt, tt_ir_reduce_kind kind, const char *x, int64_t n) {
    size_t es = tt_dtype_size(dt);
    bool is_bool = dt == TT_BOOL;
    if (is_bool && kind == TT_REDUCE_ADD) kind = TT_REDUCE_OR;
    if (is_bool && kind == TT_REDUCE_MUL) kind = TT_REDUCE_AND;
    uint64_t acc = kind == TT_REDUCE_MUL ? 1 : kind == TT_REDUCE_AND ? ~(uint64_t)0
                 : kind == TT_REDUCE_MAX ? (uint64_t)INT64_MIN : kind == TT_REDUCE_MIN ? (uint64_t)INT64_MAX : 0;
    int64_t buf[BLK];
    for (int64_t off = 0; off < n; off += BLK) {
        int64_t m = n - off < BLK ? n - off : BLK;
        tt_host_load_i64(dt, x + off * (int64_t)es, m, buf);
        switch (kind) {
        case TT_REDUCE_ADD: for (int64_t i = 0; i < m; i++) acc += (uint64_t)buf[i]; break;
        case TT_REDUCE_MUL: for (int64_t i = 0; i < m; i++) acc *= (uint64_t)buf[i]; break;
        case TT_REDUCE_MAX: for (int64_t i = 0; i < m; i++) if (buf[i] > (int64_t)acc) acc = (uint64_t)buf[i]; break;
        case TT_REDUCE_MIN: for (int64_t i = 0; i < m; i++) if (buf[i] < (int64_t)acc) acc = (uint64_t)buf[i]; break;
        case TT_REDUCE_AND: for (int64_t i = 0; i < m; i++) acc &= (uint64_t)buf[i]; break;
        case TT_REDUCE_OR: for (int64_t i = 0; i < m; i++) acc |= (uint64_t)buf[i]; break;
        default: break;
        }
    }
    return (int64_t)acc;
}

typedef struct red_job {
    tt_dtype dt, odt;
    tt_ir_reduce_kind kind;
    const char *x;
    int64_t r; /* row length */
    char *out;
} red_job;

static void red_rows(void *user, int64_t begin, int64_t end) {
    const red_job *j = user;
    size_t es = tt_dtype_size(j->dt), oes = tt_dtype_size(j->odt);
    tt_host_class cls = tt_host_class_of(j->dt);
    for (int64_t row = begin; row < end; row++) {
        const char *x = j->x + row * j->r * (int64_t)es;
        char *o = j->out + row * (int64_t)oes;
        if (cls == TT_HOST_CF32) {
            float v = red_f32(j->dt, j->kind, x, j->r);
            tt_host_store_f32(j->odt, &v, 1, o);
        } else if (cls == TT_HOST_CF64) {
            double v = red_f64(j->dt, j->kind, x, j->r);
            tt_host_store_f64(j->odt, &v, 1, o);
        } else {
            int64_t v = red_i64(j->dt, j->kind, x, j->r);
            tt_host_store_i64(j->odt, &v, 1, o);
        }
    }
}

/* One long row split into chunks reduced in parallel, then combined (pairwise by construction of the chunks). */
#define CHUNKS 64
typedef struct chunk_job {
    const red_job *j;
    int64_t csize;
    double part[CHUNKS];
    int64_t ipart[CHUNKS];
} chunk_job;

static void red_chunks(void *user, int64_t begin, int64_t end) {
    chunk_job *c = user;
    const red_job *j = c->j;
    size_t es = tt_dtype_size(j->dt);
    tt_host_class cls = tt_host_class_of(j->dt);
    for (int64_t k = begin; k < end; k++) {
        int64_t a = k * c->csize, n = j->r - a < c->csize ? j->r - a : c->csize;
        const char *x = j->x + a * (int64_t)es;
        if (n <= 0) continue;
        if (cls == TT_HOST_CF32) c->part[k] = red_f32(j->dt, j->kind, x, n);
        else if (cls == TT_HOST_CF64) c->part[k] = red_f64(j->dt, j->kind, x, n);
        else c->ipart[k] = red_i64(j->dt, j->kind, x, n);
    }
}

static void reduce_long_row(const red_job *j) {
    chunk_job c;
    memset(&c, 0, sizeof c);
    c.j = j;
    c.csize = ((j->r + CHUNKS - 1) / CHUNKS + BLK - 1) / BLK * BLK;
    int64_t nch = (j->r + c.csize - 1) / c.csize;
    tt_host_parallel_for(nch, 1, red_chunks, &c);
    tt_host_class cls = tt_host_class_of(j->dt);
    /* Combine the partials as a row of their own (they are in f64 / i64 already). */
    if (cls == TT_HOST_CI64) {
        /* The partials are i64 whatever the input dtype; bool's add / mul are or / and (as red_i64 maps them). */
        tt_ir_reduce_kind kind = j->kind;
        if (j->dt == TT_BOOL && kind == TT_REDUCE_ADD) kind = TT_REDUCE_OR;
        if (j->dt == TT_BOOL && kind == TT_REDUCE_MUL) kind = TT_REDUCE_AND;
        int64_t v = red_i64(TT_I64, kind, (const char *)c.ipart, nch);
        tt_host_store_i64(j->odt, &v, 1, j->out);
    } else if (cls == TT_HOST_CF32) {
        float pf[CHUNKS];
        for (int64_t k = 0; k < nch; k++) pf[k] = (float)c.part[k];
        float v = red_f32(TT_F32, j->kind, (const char *)pf, nch);
        tt_host_store_f32(j->odt, &v, 1, j->out);
    } else {
        double v = red_f64(TT_F64, j->kind, (const char *)c.part, nch);
        tt_host_store_f64(j->odt, &v, 1, j->out);
    }
}

/* f32 sums over middle dims: x as [A][R][K] (K contiguous, kept; R reduced), every column summed exactly as red_f32
 * sums a contiguous row of R (the same 16 lanes, sequential tail, pairwise lane tree, halving above a block), so
 * the bits are those of transposing first and reducing rows; but vectorized across columns and without the
 * transposed copy (bias gradients, layer_norm's weight gradients, means over a batch). */
#define COL_TILE 256
TT_HOST_VEC_CLONES static void col_sum_block(const float *x, int64_t m, int64_t K, int64_t nk, float *res) {
    float lane[LANES][COL_TILE], tail[COL_TILE];
    for (int l = 0; l < LANES; l++)
        for (int64_t k = 0; k < nk; k++) lane[l][k] = 0.0f;
    for (int64_t k = 0; k < nk; k++) tail[k] = 0.0f;
    int64_t i = 0;
    for (; i + LANES <= m; i += LANES)
        for (int l = 0; l < LANES; l++) {
            const float *row = x + (i + l) * K;
            for (int64_t k = 0; k < nk; k++) lane[l][k] += row[k];
        }
    for (; i < m; i++)
        for (int64_t k = 0; k < nk; k++) tail[k] += x[i * K + k];
    for (int w = LANES / 2; w > 0; w /= 2)
        for (int l = 0; l < w; l++)
            for (int64_t k = 0; k < nk; k++) lane[l][k] += lane[l + w][k];
    for (int64_t k = 0; k < nk; k++) res[k] = 0.0f + (lane[0][k] + tail[k]); /* red_f32's acc = 0; acc += s */
}

static void col_sum(const float *x, int64_t n, int64_t K, int64_t nk, float *res) {
    if (n > BLK) {
        int64_t h = (n / 2 + BLK - 1) / BLK * BLK;
        float b[COL_TILE];
        col_sum(x, h, K, nk, res);
        col_sum(x + h * K, n - h, K, nk, b);
        for (int64_t k = 0; k < nk; k++) res[k] += b[k];
        return;
    }
    col_sum_block(x, n, K, nk, res);
}

typedef struct col_job {
    const float *x;
    int64_t R, K, tiles; /* column tiles per outer index */
    tt_dtype odt;
    char *out;
} col_job;

static void col_tiles(void *user, int64_t t0, int64_t t1) {
    const col_job *j = user;
    size_t oes = tt_dtype_size(j->odt);
    for (int64_t t = t0; t < t1; t++) {
        int64_t a = t / j->tiles, k0 = (t % j->tiles) * COL_TILE, nk = j->K - k0 < COL_TILE ? j->K - k0 : COL_TILE;
        float res[COL_TILE];
        col_sum(j->x + a * j->R * j->K + k0, j->R, j->K, nk, res);
        tt_host_store_f32(j->odt, res, nk, j->out + (a * j->K + k0) * (int64_t)oes);
    }
}

/* Whether the reduced dims form one block followed by kept dims (size-1 dims do not count): [A][R][K] with K > 1. */
static bool middle_block(const tt_ir_type *t, const tt_ir_dims *red, int64_t *A, int64_t *R, int64_t *K) {
    int state = 0; /* 0: outer kept, 1: reduced, 2: inner kept */
    *A = *R = *K = 1;
    for (int32_t d = 0; d < t->rank; d++) {
        bool r = in_dims(red, d);
        if (t->dims[d] == 1) continue;
        if (r && state == 2) return false;
        if (r) state = 1;
        else if (state == 1) state = 2;
        int64_t *f = r ? R : state == 2 ? K : A;
        *f *= t->dims[d];
    }
    return state == 2;
}

tt_status tt_host_reduce(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0), *ot = &p->types[n->outputs[0]];
    tt_ir_reduce_kind kind = n->attrs.reduce.kind;
    if (tt_dtype_is_float(xt->dtype) && (kind == TT_REDUCE_AND || kind == TT_REDUCE_OR || kind == TT_REDUCE_NONE))
        return tt_error(TT_STATUS_TYPE, "host reduce: kind %d is not defined for %s", (int)kind, tt_dtype_name(xt->dtype));
    size_t es = tt_dtype_size(xt->dtype);
    red_job j = {xt->dtype, ot->dtype, kind, tt_host_in(p, n, vals, 0), 1, vals[n->outputs[0]]};
    /* Permutation: kept dims, then reduced dims. */
    int32_t perm[TT_MAX_RANK], np = 0;
    for (int32_t d = 0; d < xt->rank; d++)
        if (!in_dims(&n->attrs.reduce.dims, d)) perm[np++] = d;
    for (int32_t d = 0; d < xt->rank; d++)
        if (in_dims(&n->attrs.reduce.dims, d)) {
            perm[np++] = d;
            j.r *= xt->dims[d];
        }
    /* Rows are already contiguous unless a kept dim follows a reduced one (size-1 dims do not count); the same
     * test sizes the scratch in tt_host_scratch_bytes. */
    bool trailing = true, in_reduced = false;
    for (int32_t d = 0; d < xt->rank; d++) {
        if (xt->dims[d] == 1) continue;
        if (in_dims(&n->attrs.reduce.dims, d)) in_reduced = true;
        else if (in_reduced) trailing = false;
    }
    int64_t ca, cr, ck;
    if (!trailing && kind == TT_REDUCE_ADD && xt->dtype == TT_F32 && middle_block(xt, &n->attrs.reduce.dims, &ca, &cr, &ck)) {
        col_job cj = {(const float *)(const void *)j.x, cr, ck, (ck + COL_TILE - 1) / COL_TILE, ot->dtype, j.out};
        int64_t tile_work = cr * (ck < COL_TILE ? ck : COL_TILE); /* 0 when a reduced dim is empty: sums of 0 */
        tt_host_parallel_for(ca * cj.tiles, tile_work > 0 ? TT_HOST_GRAIN / tile_work + 1 : ca * cj.tiles, col_tiles, &cj);
        return TT_OK;
    }
    if (!trailing && tt_host_numel(xt) > 0) {
        int64_t xs[TT_MAX_RANK], pd[TT_MAX_RANK], ps[TT_MAX_RANK], cs[TT_MAX_RANK];
        tt_host_contiguous_strides(xt->rank, xt->dims, xs);
        for (int32_t k = 0; k < np; k++) {
            pd[k] = xt->dims[perm[k]];
            ps[k] = xs[perm[k]];
        }
        tt_host_contiguous_strides(np, pd, cs);
        tt_host_strided_copy(es, np, pd, scratch, 0, cs, j.x, 0, ps);
        j.x = scratch;
    }
    int64_t rows = tt_host_numel(ot);
    if (rows == 1 && j.r >= 4 * TT_HOST_GRAIN) {
        reduce_long_row(&j);
        return TT_OK;
    }
    if (rows > 1 && rows * j.r >= TT_HOST_GRAIN) {
        int64_t grain = j.r >= TT_HOST_GRAIN ? 1 : TT_HOST_GRAIN / (j.r ? j.r : 1);
        tt_host_parallel_for(rows, grain, red_rows, &j);
    } else {
        red_rows(&j, 0, rows);
    }
    return TT_OK;
}

/* ---- arg_reduce ---- */
static void outer_inner(const tt_ir_type *t, int64_t dim, int64_t *outer, int64_t *size, int64_t *inner) {
    *outer = 1;
    *inner = 1;
    for (int32_t i = 0; i < (int32_t)dim; i++) *outer *= t->dims[i];
    for (int32_t i = (int32_t)dim + 1; i < t->rank; i++) *inner *= t->dims[i];
    *size = t->rank ? t->dims[dim] : 1;
}

tt_status tt_host_arg_reduce(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0);
    const char *x = tt_host_in(p, n, vals, 0);
    int64_t *out = vals[n->outputs[0]];
    int64_t outer, size, inner;
    outer_inner(xt, n->attrs.arg_reduce.dim, &outer, &size, &inner);
    bool is_min = n->attrs.arg_reduce.is_min, is_float = tt_dtype_is_float(xt->dtype);
    size_t es = tt_dtype_size(xt->dtype);
    double *bestf = scratch;
    int64_t *besti = scratch;
    for (int64_t o = 0; o < outer; o++) {
        int64_t *idx = out + o * inner;
        for (int64_t j = 0; j < size; j++) {
            const char *row = x + ((o * size + j) * inner) * (int64_t)es;
            for (int64_t off = 0; off < inner; off += BLK) {
                int64_t m = inner - off < BLK ? inner - off : BLK;
                if (is_float) {
                    double v[BLK], *b = bestf + off;
                    tt_host_load_f64(xt->dtype, row + off * (int64_t)es, m, v);
                    for (int64_t i = 0; i < m; i++) {
                        bool take = j == 0 || (b[i] == b[i] && (v[i] != v[i] || (is_min ? v[i] < b[i] : v[i] > b[i])));
                        if (take) {
                            b[i] = v[i];
                            idx[off + i] = j;
                        }
                    }
                } else {
                    int64_t v[BLK], *b = besti + off;
                    tt_host_load_i64(xt->dtype, row + off * (int64_t)es, m, v);
                    for (int64_t i = 0; i < m; i++) {
                        if (j == 0 || (is_min ? v[i] < b[i] : v[i] > b[i])) {
                            b[i] = v[i];
                            idx[off + i] = j;
                        }
                    }
                }
            }
        }
    }
    if (size == 0)
        for (int64_t i = 0; i < outer * inner; i++) out[i] = 0;
    return TT_OK;
}

/* ---- cumulative ---- */
#define CUM(T, NATIVE_LOAD, STORE, IS_INT)                                                                     \
    for (int64_t o = 0; o < outer; o++) {                                                                      \
        for (int64_t s = 0; s < size; s++) {                                                                   \
            int64_t j = rev ? size - 1 - s : s;                                                                \
            int64_t base = (o * size + j) * inner;                                                             \
            for (int64_t off = 0; off < inner; off += BLK) {                                                   \
                int64_t m = inner - off < BLK ? inner - off : BLK;                                             \
                T v[BLK], *acc = (T *)scratch + off;                                                           \
                NATIVE_LOAD(dt, x + (base + off) * (int64_t)es, m, v);                                         \
                if (s == 0) {                                                                                  \
                    memcpy(acc, v, (size_t)m * sizeof(T));                                                     \
                } else {                                                                                       \
                    switch (kind) {                                                                            \
                    case TT_REDUCE_ADD:                                                                        \
                        for (int64_t i = 0; i < m; i++)                                                        \
                            acc[i] = IS_INT ? (T)((uint64_t)acc[i] + (uint64_t)v[i]) : acc[i] + v[i];          \
                        break;                                                                                 \
                    case TT_REDUCE_MUL:                                                                        \
                        for (int64_t i = 0; i < m; i++)                                                        \
                            acc[i] = IS_INT ? (T)((uint64_t)acc[i] * (uint64_t)v[i]) : acc[i] * v[i];          \
                        break;                                                                                 \
                    case TT_REDUCE_MAX: for (int64_t i = 0; i < m; i++) acc[i] = FMAX(acc[i], v[i]); break;   \
                    case TT_REDUCE_MIN: for (int64_t i = 0; i < m; i++) acc[i] = FMIN(acc[i], v[i]); break;   \
                    default: break;                                                                            \
                    }                                                                                          \
                }                                                                                              \
                STORE(odt, acc, m, out + (base + off) * (int64_t)oes);                                         \
            }                                                                                                  \
        }                                                                                                      \
    }

tt_status tt_host_cumulative(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    const tt_ir_type *xt = tt_host_in_type(p, n, 0), *ot = &p->types[n->outputs[0]];
    const char *x = tt_host_in(p, n, vals, 0);
    char *out = vals[n->outputs[0]];
    tt_dtype dt = xt->dtype, odt = ot->dtype;
    size_t es = tt_dtype_size(dt), oes = tt_dtype_size(odt);
    int64_t outer, size, inner;
    outer_inner(xt, n->attrs.cumulative.dim, &outer, &size, &inner);
    bool rev = n->attrs.cumulative.reverse;
    tt_ir_reduce_kind kind = n->attrs.cumulative.kind;
    if (dt == TT_BOOL) {
        /* or / and over 0/1 are max / min. */
        if (kind == TT_REDUCE_ADD || kind == TT_REDUCE_OR) kind = TT_REDUCE_MAX;
        if (kind == TT_REDUCE_MUL || kind == TT_REDUCE_AND) kind = TT_REDUCE_MIN;
    }
    if (kind != TT_REDUCE_ADD && kind != TT_REDUCE_MUL && kind != TT_REDUCE_MAX && kind != TT_REDUCE_MIN)
        return tt_error(TT_STATUS_UNSUPPORTED, "host cumulative: kind %d is not supported", (int)kind);
    switch (tt_host_class_of(dt)) {
    case TT_HOST_CF32: CUM(float, tt_host_load_f32, tt_host_store_f32, 0) break;
    case TT_HOST_CF64: CUM(double, tt_host_load_f64, tt_host_store_f64, 0) break;
    default: CUM(int64_t, tt_host_load_i64, tt_host_store_i64, 1) break;
    }
    return TT_OK;
}
