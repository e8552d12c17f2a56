/* host_matmul_kern.c — the f32 GEMM's register-tile micro-kernels (host_matmul_gemm.c packs and blocks for them).
 *
 * Each computes c[MR x NR] (row stride ldc) = (or, with accum, +=) the sum over k of a[i][k] times packed panel
 * b [k][NR], accumulating over k in the same order, so every ISA gives the same numerics up to the bf16 kernel's
 * pairwise products (vdpbf16ps, which also flushes denormals). The f32 kernels read a[i][k] at a[i*ars + k*acs]:
 * a packed panel (ars = 1, acs = MR) or exact f32 operands where they lie (rows or columns of A contiguous), which
 * saves packing A — a copy as costly as the multiply itself when N is small. Measured: the strides cost nothing.
 */
#include "host_kernels.h"

#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define MR TT_GEMM_MR
#define NR TT_GEMM_NR

#define PORTABLE_KERNEL_BODY                                                      \
    float acc[MR][NR];                                                            \
    memset(acc, 0, sizeof acc);                                                   \
    for (int64_t k = 0; k < kc; k++) {                                            \
        const float *ak = a + k * acs, *bk = b + k * NR;                          \
        for (int i = 0; i < MR; i++)                                              \
            for (int j = 0; j < NR; j++) acc[i][j] += ak[i * ars] * bk[j];        \
    }                                                                             \
    for (int i = 0; i < MR; i++)                                                  \
        for (int j = 0; j < NR; j++) c[i * ldc + j] = (accum ? c[i * ldc + j] : 0.0f) + acc[i][j];

static void kern_f32_portable(int64_t kc, const float *a, int64_t ars, int64_t acs, const float *b, float *c,
                              int64_t ldc, int accum) {
    PORTABLE_KERNEL_BODY
}

#if defined(__x86_64__)
/* AVX2 has 16 ymm registers, too few for an 8 x 32 tile (32 accumulators): the tile is walked as three register
 * blocks, rows 0-5 x columns 0-15, rows 0-5 x columns 16-31 (12 accumulators, 2 B loads and 6 broadcasts per k),
 * and rows 6-7 x columns 0-31 (8 accumulators). Each accumulates over k in the same order as the other kernels. */
#define AVX2_STORE(acc, dst)                                                       \
    _mm256_storeu_ps((dst), accum ? _mm256_add_ps((acc), _mm256_loadu_ps(dst)) : (acc))

__attribute__((target("avx2,fma"))) static inline void avx2_6x16(int64_t kc, const float *a, int64_t ars,
                                                                 int64_t acs, const float *b, float *c,
                                                                 int64_t ldc, int accum) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
    __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
    for (int64_t k = 0; k < kc; k++, a += acs, b += NR) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), ai;
#define STEP6(i)                                   \
    ai = _mm256_broadcast_ss(a + i * ars);         \
    c##i##0 = _mm256_fmadd_ps(ai, b0, c##i##0);    \
    c##i##1 = _mm256_fmadd_ps(ai, b1, c##i##1);
        STEP6(0) STEP6(1) STEP6(2) STEP6(3) STEP6(4) STEP6(5)
#undef STEP6
    }
#define OUT6(i)                               \
    AVX2_STORE(c##i##0, c + i * ldc);         \
    AVX2_STORE(c##i##1, c + i * ldc + 8);
    OUT6(0) OUT6(1) OUT6(2) OUT6(3) OUT6(4) OUT6(5)
#undef OUT6
}

__attribute__((target("avx2,fma"))) static inline void avx2_2x32(int64_t kc, const float *a, int64_t ars,
                                                                 int64_t acs, const float *b, float *c,
                                                                 int64_t ldc, int accum) {
    __m256 c00 = _mm256_setzero_ps(), c01 = c00, c02 = c00, c03 = c00, c10 = c00, c11 = c00, c12 = c00, c13 = c00;
    for (int64_t k = 0; k < kc; k++, a += acs, b += NR) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8), b2 = _mm256_loadu_ps(b + 16),
               b3 = _mm256_loadu_ps(b + 24);
        __m256 a0 = _mm256_broadcast_ss(a), a1 = _mm256_broadcast_ss(a + ars);
        c00 = _mm256_fmadd_ps(a0, b0, c00), c01 = _mm256_fmadd_ps(a0, b1, c01);
        c02 = _mm256_fmadd_ps(a0, b2, c02), c03 = _mm256_fmadd_ps(a0, b3, c03);
        c10 = _mm256_fmadd_ps(a1, b0, c10), c11 = _mm256_fmadd_ps(a1, b1, c11);
        c12 = _mm256_fmadd_ps(a1, b2, c12), c13 = _mm256_fmadd_ps(a1, b3, c13);
    }
    AVX2_STORE(c00, c), AVX2_STORE(c01, c + 8), AVX2_STORE(c02, c + 16), AVX2_STORE(c03, c + 24);
    AVX2_STORE(c10, c + ldc), AVX2_STORE(c11, c + ldc + 8), AVX2_STORE(c12, c + ldc + 16);
    AVX2_STORE(c13, c + ldc + 24);
}
#undef AVX2_STORE

__attribute__((target("avx2,fma"))) static void kern_f32_avx2(int64_t kc, const float *a, int64_t ars, int64_t acs,
                                                              const float *b, float *c, int64_t ldc, int accum) {
    avx2_6x16(kc, a, ars, acs, b, c, ldc, accum);
    avx2_6x16(kc, a, ars, acs, b + 16, c + 16, ldc, accum);
    avx2_2x32(kc, a + 6 * ars, ars, acs, b, c + 6 * ldc, ldc, accum);
}

#define ROW8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)

__attribute__((target("avx512f"))) static void kern_f32_avx512(int64_t kc, const float *a, int64_t ars, int64_t acs,
                                                               const float *b, float *c, int64_t ldc, int accum) {
#define DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
    ROW8(DECL)
#undef DECL
    for (int64_t k = 0; k < kc; k++) {
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#define STEP(i)                                       \
    {                                                 \
        __m512 ai = _mm512_set1_ps(a[i * ars]);       \
        c##i##0 = _mm512_fmadd_ps(ai, b0, c##i##0);   \
        c##i##1 = _mm512_fmadd_ps(ai, b1, c##i##1);   \
    }
        ROW8(STEP)
#undef STEP
        a += acs;
        b += NR;
    }
#define STORE(i)                                                                                        \
    if (accum) {                                                                                        \
        c##i##0 = _mm512_add_ps(c##i##0, _mm512_loadu_ps(c + i * ldc));                                 \
        c##i##1 = _mm512_add_ps(c##i##1, _mm512_loadu_ps(c + i * ldc + 16));                            \
    }                                                                                                   \
    _mm512_storeu_ps(c + i * ldc, c##i##0);                                                             \
    _mm512_storeu_ps(c + i * ldc + 16, c##i##1);
    ROW8(STORE)
}

/* kp = number of k' pairs; a: uint32 pairs [kp][MR], b: uint32 pairs [kp][NR]. */
__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl"))) static void
kern_bf16_avx512(int64_t kp, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int accum) {
#define DECL(i) __m512 c##i##0 = _mm512_setzero_ps(), c##i##1 = _mm512_setzero_ps();
    ROW8(DECL)
#undef DECL
    for (int64_t q = 0; q < kp; q++) {
        __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)b);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(b + 16));
#define STEP(i)                                                       \
    {                                                                 \
        __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[i]);         \
        c##i##0 = _mm512_dpbf16_ps(c##i##0, ai, b0);                  \
        c##i##1 = _mm512_dpbf16_ps(c##i##1, ai, b1);                  \
    }
        ROW8(STEP)
#undef STEP
        a += MR;
        b += NR;
    }
    ROW8(STORE)
}
#undef STORE
#endif

void tt_host_gemm_micro(int kern, int64_t kc, const void *a, int64_t a_rs, int64_t a_cs, const void *b, float *c,
                        int64_t ldc, int accum) {
    switch (kern) {
#if defined(__x86_64__)
    case TT_GEMM_KERN_BF16: kern_bf16_avx512((kc + 1) / 2, a, b, c, ldc, accum); return;
    case TT_GEMM_KERN_AVX512: kern_f32_avx512(kc, a, a_rs, a_cs, b, c, ldc, accum); return;
    case TT_GEMM_KERN_AVX2: kern_f32_avx2(kc, a, a_rs, a_cs, b, c, ldc, accum); return;
#endif
    default: kern_f32_portable(kc, a, a_rs, a_cs, b, c, ldc, accum); return;
    }
}
