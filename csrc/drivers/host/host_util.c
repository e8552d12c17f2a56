/* host_util.c — dtype conversions between storage and compute arrays, strided block copies.
 *
 * A bool byte loads as (byte != 0): tensors viewed as bool from other bytes (PyTorch's non-standard bool values)
 * must read as true wherever any kernel reads them, as on CPU; every kernel that computes on bools loads here. */
#include "host_internal.h"

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; the conversion loops want the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <string.h>

int64_t tt_host_f64_to_i64(double v) {
    /* NaN -> 0 and saturation keep the conversion defined; in-range values truncate toward zero. */
    if (v != v) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

#define LOAD_CASES(T, dst, src, n)                                                   \
    switch (dt) {                                                                    \
    case TT_F32: { const float *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;      \
    case TT_F64: { const double *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;     \
    case TT_BF16: { const uint16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)tt_bf16_to_f32(s[i]); } break; \
    case TT_F16: { const uint16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)tt_f16_to_f32(s[i]); } break;  \
    case TT_I64: { const int64_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;    \
    case TT_I32: { const int32_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;    \
    case TT_I16: { const int16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;    \
    case TT_I8: { const int8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;      \
    case TT_U8: { const uint8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)s[i]; } break;      \
    case TT_BOOL: { const uint8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = (T)(s[i] != 0); } break; \
    default: break;                                                                  \
    }

TT_HOST_VEC_CLONES void tt_host_load_f32(tt_dtype dt, const void *src, int64_t n, float *dst) {
    LOAD_CASES(float, dst, src, n)
}
void tt_host_load_f64(tt_dtype dt, const void *src, int64_t n, double *dst) { LOAD_CASES(double, dst, src, n) }

void tt_host_load_i64(tt_dtype dt, const void *src, int64_t n, int64_t *dst) {
    switch (dt) {
    case TT_F32: { const float *s = src; for (int64_t i = 0; i < n; i++) dst[i] = tt_host_f64_to_i64(s[i]); } break;
    case TT_F64: { const double *s = src; for (int64_t i = 0; i < n; i++) dst[i] = tt_host_f64_to_i64(s[i]); } break;
    case TT_BF16: { const uint16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = tt_host_f64_to_i64(tt_bf16_to_f32(s[i])); } break;
    case TT_F16: { const uint16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = tt_host_f64_to_i64(tt_f16_to_f32(s[i])); } break;
    case TT_I64: memcpy(dst, src, (size_t)n * 8); break;
    case TT_I32: { const int32_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i]; } break;
    case TT_I16: { const int16_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i]; } break;
    case TT_I8: { const int8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i]; } break;
    case TT_U8: { const uint8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i]; } break;
    case TT_BOOL: { const uint8_t *s = src; for (int64_t i = 0; i < n; i++) dst[i] = s[i] != 0; } break;
    default: break;
    }
}

/* Integers wrap (two's complement truncation through unsigned types: no UB). */
#define STORE_INTS(src, n, CONV)                                                                       \
    case TT_I64: { int64_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = CONV(src[i]); } break;   \
    case TT_I32: { int32_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (int32_t)(uint32_t)(uint64_t)CONV(src[i]); } break; \
    case TT_I16: { int16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (int16_t)(uint16_t)(uint64_t)CONV(src[i]); } break; \
    case TT_I8: { int8_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (int8_t)(uint8_t)(uint64_t)CONV(src[i]); } break;     \
    case TT_U8: { uint8_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (uint8_t)(uint64_t)CONV(src[i]); } break;            \
    case TT_BOOL: { uint8_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = src[i] != 0; } break;

#define F2I(x) tt_host_f64_to_i64((double)(x))
#define I2I(x) (x)

TT_HOST_VEC_CLONES void tt_host_store_f32(tt_dtype dt, const float *src, int64_t n, void *dst) {
    switch (dt) {
    case TT_F32: memcpy(dst, src, (size_t)n * 4); break;
    case TT_F64: { double *d = dst; for (int64_t i = 0; i < n; i++) d[i] = src[i]; } break;
    case TT_BF16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_bf16(src[i]); } break;
    case TT_F16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_f16(src[i]); } break;
    STORE_INTS(src, n, F2I)
    default: break;
    }
}

void tt_host_store_f64(tt_dtype dt, const double *src, int64_t n, void *dst) {
    switch (dt) {
    case TT_F32: { float *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (float)src[i]; } break;
    case TT_F64: memcpy(dst, src, (size_t)n * 8); break;
    case TT_BF16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_bf16((float)src[i]); } break;
    case TT_F16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_f16((float)src[i]); } break;
    STORE_INTS(src, n, F2I)
    default: break;
    }
}

void tt_host_store_i64(tt_dtype dt, const int64_t *src, int64_t n, void *dst) {
    switch (dt) {
    case TT_F32: { float *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (float)src[i]; } break;
    case TT_F64: { double *d = dst; for (int64_t i = 0; i < n; i++) d[i] = (double)src[i]; } break;
    case TT_BF16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_bf16((float)src[i]); } break;
    case TT_F16: { uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = tt_f32_to_f16((float)src[i]); } break;
    STORE_INTS(src, n, I2I)
    default: break;
    }
}

void tt_host_contiguous_strides(int32_t rank, const int64_t *dims, int64_t *strides) {
    int64_t s = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[i] = s;
        s *= dims[i];
    }
}

void tt_host_fill(size_t es, void *dst, int64_t n, const void *val) {
    switch (es) {
    case 1: memset(dst, *(const uint8_t *)val, (size_t)n); break;
    case 2: { uint16_t v; memcpy(&v, val, 2); uint16_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; } break;
    case 4: { uint32_t v; memcpy(&v, val, 4); uint32_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; } break;
    case 8: { uint64_t v; memcpy(&v, val, 8); uint64_t *d = dst; for (int64_t i = 0; i < n; i++) d[i] = v; } break;
    default: for (int64_t i = 0; i < n; i++) memcpy((char *)dst + (size_t)i * es, val, es); break;
    }
}

/* n bytes: short runs (a head's 32 floats, a column slice) by constant-size moves, which the compiler inlines; a
 * libc memcpy call per short row cost more than the bytes it moved. */
static inline void copy_bytes(char *d, const char *s, size_t n) {
    if (n > 512) {
        memcpy(d, s, n);
        return;
    }
    size_t i = 0;
    for (; i + 64 <= n; i += 64) memcpy(d + i, s + i, 64);
    for (; i + 8 <= n; i += 8) memcpy(d + i, s + i, 8);
    for (; i < n; i++) d[i] = s[i];
}

/* One innermost run: n elements with strides ds / ss. */
static void copy_run(size_t es, int64_t n, char *d, int64_t ds, const char *s, int64_t ss) {
    if (ds == 1 && ss == 1) {
        copy_bytes(d, s, (size_t)n * es);
        return;
    }
#define RUN(T)                                                                  \
    {                                                                           \
        T *dd = (T *)(void *)d;                                                 \
        const T *sp = (const T *)(const void *)s;                               \
        for (int64_t i = 0; i < n; i++) dd[i * ds] = sp[i * ss];                \
    }                                                                           \
    break;
    switch (es) {
    case 1: RUN(uint8_t)
    case 2: RUN(uint16_t)
    case 4: RUN(uint32_t)
    case 8: RUN(uint64_t)
    default:
        for (int64_t i = 0; i < n; i++) memcpy(d + i * ds * (int64_t)es, s + i * ss * (int64_t)es, es);
        break;
    }
#undef RUN
}

typedef struct copy_job {
    size_t es;
    int32_t rank; /* >= 1, after coalescing */
    int64_t dims[TT_MAX_RANK], dstr[TT_MAX_RANK], sstr[TT_MAX_RANK];
    char *dst;
    const char *src;
} copy_job;

/* Copies outer rows [begin, end) (rows = all dims but the last). */
static void copy_rows(void *user, int64_t begin, int64_t end) {
    const copy_job *j = user;
    int32_t r = j->rank;
    int64_t idx[TT_MAX_RANK] = {0};
    int64_t rem = begin;
    for (int32_t k = r - 2; k >= 0; k--) {
        idx[k] = rem % j->dims[k];
        rem /= j->dims[k];
    }
    int64_t es = (int64_t)j->es;
    for (int64_t row = begin; row < end; row++) {
        int64_t doff = 0, soff = 0;
        for (int32_t k = 0; k < r - 1; k++) {
            doff += idx[k] * j->dstr[k];
            soff += idx[k] * j->sstr[k];
        }
        copy_run(j->es, j->dims[r - 1], j->dst + doff * es, j->dstr[r - 1], j->src + soff * es, j->sstr[r - 1]);
        for (int32_t k = r - 2; k >= 0; k--) {
            if (++idx[k] < j->dims[k]) break;
            idx[k] = 0;
        }
    }
}

void tt_host_strided_copy(size_t es, int32_t rank, const int64_t *dims, void *dst, int64_t doff,
                          const int64_t *dstr, const void *src, int64_t soff, const int64_t *sstr) {
    copy_job j;
    j.es = es;
    j.rank = 0;
    for (int32_t i = 0; i < rank; i++) {
        if (dims[i] == 0) return;
        if (dims[i] == 1) continue; /* size-1 dims do not move */
        /* Merge with the previous dim when both sides are contiguous across it. */
        if (j.rank > 0 && j.dstr[j.rank - 1] == dstr[i] * dims[i] && j.sstr[j.rank - 1] == sstr[i] * dims[i]) {
            j.dims[j.rank - 1] *= dims[i];
            j.dstr[j.rank - 1] = dstr[i];
            j.sstr[j.rank - 1] = sstr[i];
            continue;
        }
        j.dims[j.rank] = dims[i];
        j.dstr[j.rank] = dstr[i];
        j.sstr[j.rank] = sstr[i];
        j.rank++;
    }
    if (j.rank == 0) {
        j.rank = 1;
        j.dims[0] = 1;
        j.dstr[0] = j.sstr[0] = 1;
    }
    j.dst = (char *)dst + doff * (int64_t)es;
    j.src = (const char *)src + soff * (int64_t)es;
    int64_t rows = 1;
    for (int32_t k = 0; k < j.rank - 1; k++) rows *= j.dims[k];
    int64_t inner = j.dims[j.rank - 1];
    int64_t grain = inner >= TT_HOST_GRAIN ? 1 : TT_HOST_GRAIN / inner;
    if (rows > 1 && rows * inner >= TT_HOST_GRAIN) tt_host_parallel_for(rows, grain, copy_rows, &j);
    else copy_rows(&j, 0, rows);
}
