/* host_matmul_kern.c — the f32 GEMM's register-tile micro-kernels (host_matmul_gemm.c packs and blocks for them).
 *
 * Each computes c[rows x NR] (rows <= MR, row stride ldc) = (or, with accum, +=) the sum over k of a[i][k] times
 * packed panel b [k][NR], accumulating over k in the same order, so every ISA gives the same numerics up to the bf16 kernel's
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

/* Every kernel is written once for a row count R and specialised by a switch over R = 1..MR (always_inline +
 * constant R: the row loops unroll and the accumulators stay in registers), so a partial panel of rows is run
 * for its own rows: no scratch tile, no arithmetic on padding rows. */
#define ROW_SWITCH(KERN, ...)                                                                                    \
    switch (rows) {                                                                                              \
    case 1: KERN(1, __VA_ARGS__); break;   case 2: KERN(2, __VA_ARGS__); break;                                  \
    case 3: KERN(3, __VA_ARGS__); break;   case 4: KERN(4, __VA_ARGS__); break;                                  \
    case 5: KERN(5, __VA_ARGS__); break;   case 6: KERN(6, __VA_ARGS__); break;                                  \
    case 7: KERN(7, __VA_ARGS__); break;   case 8: KERN(8, __VA_ARGS__); break;                                  \
    case 9: KERN(9, __VA_ARGS__); break;   case 10: KERN(10, __VA_ARGS__); break;                                \
    case 11: KERN(11, __VA_ARGS__); break; case 12: KERN(12, __VA_ARGS__); break;                                \
    case 13: KERN(13, __VA_ARGS__); break; default: KERN(14, __VA_ARGS__); break;                                \
    }
_Static_assert(MR == 14, "ROW_SWITCH lists the row counts 1..MR");

static void kern_f32_portable(int64_t kc, const float *a, int64_t ars, int64_t acs, const float *b, float *c,
                              int64_t ldc, int accum, int rows) {
    float acc[MR][NR];
    memset(acc, 0, sizeof acc);
    for (int64_t k = 0; k < kc; k++) {
        const float *ak = a + k * acs, *bk = b + k * NR;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < NR; j++) acc[i][j] += ak[i * ars] * bk[j];
    }
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < NR; j++) c[i * ldc + j] = (accum ? c[i * ldc + j] : 0.0f) + acc[i][j];
}

#if defined(__x86_64__)
/* AVX2 has 16 ymm registers: the tile is walked in blocks of up to 6 rows x 16 columns (12 accumulators, 2 B
 * loads and a broadcast per row per k), each accumulating over k in the same order as the other kernels. */
__attribute__((target("avx2,fma"), always_inline)) static inline void avx2_rx16(const int R, int64_t kc,
                                                                                const float *a, int64_t ars,
                                                                                int64_t acs, const float *b,
                                                                                float *c, int64_t ldc, int accum) {
    __m256 acc[6][2];
#pragma GCC unroll 6
    for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++, a += acs, b += NR) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < R; i++) {
            __m256 ai = _mm256_broadcast_ss(a + i * ars);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < R; i++)
        for (int h = 0; h < 2; h++) {
            float *d = c + i * ldc + 8 * h;
            _mm256_storeu_ps(d, accum ? _mm256_add_ps(acc[i][h], _mm256_loadu_ps(d)) : acc[i][h]);
        }
}

__attribute__((target("avx2,fma"))) static void kern_f32_avx2(int64_t kc, const float *a, int64_t ars, int64_t acs,
                                                              const float *b, float *c, int64_t ldc, int accum,
                                                              int total_rows) {
    for (int r0 = 0; r0 < total_rows; r0 += 6) {
        int rows = total_rows - r0 < 6 ? total_rows - r0 : 6;
        for (int h = 0; h < 2; h++) { /* columns 0-15, then 16-31 */
            const float *ar = a + r0 * ars;
            float *cr = c + r0 * ldc + 16 * h;
            switch (rows) {
            case 1: avx2_rx16(1, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            case 2: avx2_rx16(2, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            case 3: avx2_rx16(3, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            case 4: avx2_rx16(4, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            case 5: avx2_rx16(5, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            default: avx2_rx16(6, kc, ar, ars, acs, b + 16 * h, cr, ldc, accum); break;
            }
        }
    }
}

/* The zmm kernels' R x 32 accumulators into c (row stride ldc), added to what c holds when accum. */
__attribute__((target("avx512f"), always_inline)) static inline void store_rx32(const int R, __m512 acc[][2], float *c,
                                                                                int64_t ldc, int accum) {
#pragma GCC unroll 14
    for (int i = 0; i < R; i++)
        for (int h = 0; h < 2; h++) {
            float *d = c + i * ldc + 16 * h;
            _mm512_storeu_ps(d, accum ? _mm512_add_ps(acc[i][h], _mm512_loadu_ps(d)) : acc[i][h]);
        }
}

/* AVX-512: R rows x 32 columns in 2R zmm accumulators (28 at R = 14, the two B vectors beside them; each A value
 * is an embedded broadcast operand of its FMA). MR = 14 rather than 8: 14 rows share each pair of B loads, which
 * took the kernel from 86% to 98% of one core's FMA peak on B panels streamed from L2 (measured here). */
__attribute__((target("avx512f"), always_inline)) static inline void avx512_rx32(const int R, int64_t kc,
                                                                                 const float *a, int64_t ars,
                                                                                 int64_t acs, const float *b,
                                                                                 float *c, int64_t ldc, int accum,
                                                                                 const char *pf, int64_t pf_lines) {
    __m512 acc[MR][2];
#pragma GCC unroll 14
    for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++, a += acs, b += NR) {
        if (2 * k < pf_lines) __builtin_prefetch(pf + 2 * k * 64, 0, 2);
        if (2 * k + 1 < pf_lines) __builtin_prefetch(pf + (2 * k + 1) * 64, 0, 2);
        __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
#pragma GCC unroll 14
        for (int i = 0; i < R; i++) {
            __m512 ai = _mm512_set1_ps(a[i * ars]);
            acc[i][0] = _mm512_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm512_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    store_rx32(R, acc, c, ldc, accum);
}

__attribute__((target("avx512f"))) static void kern_f32_avx512(int64_t kc, const float *a, int64_t ars, int64_t acs,
                                                               const float *b, float *c, int64_t ldc, int accum,
                                                               int rows, const char *pf, int64_t pf_lines) {
    ROW_SWITCH(avx512_rx32, kc, a, ars, acs, b, c, ldc, accum, pf, pf_lines)
}

/* kp = number of k' pairs; a: uint32 pairs [kp][MR], b: uint32 pairs [kp][NR]. */
__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl"), always_inline)) static inline void
bf16_rx32(const int R, int64_t kp, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int accum,
          const char *pf, int64_t pf_lines) {
    __m512 acc[MR][2];
#pragma GCC unroll 14
    for (int i = 0; i < R; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < kp; q++, a += MR, b += NR) {
        if (2 * q < pf_lines) __builtin_prefetch(pf + 2 * q * 64, 0, 2);
        if (2 * q + 1 < pf_lines) __builtin_prefetch(pf + (2 * q + 1) * 64, 0, 2);
        __m512bh b0 = (__m512bh)_mm512_loadu_si512((const void *)b);
        __m512bh b1 = (__m512bh)_mm512_loadu_si512((const void *)(b + 16));
#pragma GCC unroll 14
        for (int i = 0; i < R; i++) {
            __m512bh ai = (__m512bh)_mm512_set1_epi32((int)a[i]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
    }
    store_rx32(R, acc, c, ldc, accum);
}

__attribute__((target("avx512bf16,avx512f,avx512bw,avx512vl"))) static void
kern_bf16_avx512(int64_t kp, const uint32_t *a, const uint32_t *b, float *c, int64_t ldc, int accum, int rows,
                 const char *pf, int64_t pf_lines) {
    ROW_SWITCH(bf16_rx32, kp, a, b, c, ldc, accum, pf, pf_lines)
}
#endif

void tt_host_gemm_micro(int kern, int64_t kc, const void *a, int64_t a_rs, int64_t a_cs, const void *b, float *c,
                        int64_t ldc, int accum, int rows, const void *pf, int64_t pf_lines) {
    if (!pf) pf_lines = 0;
    switch (kern) {
#if defined(__x86_64__)
    case TT_GEMM_KERN_BF16: kern_bf16_avx512((kc + 1) / 2, a, b, c, ldc, accum, rows, pf, pf_lines); return;
    case TT_GEMM_KERN_AVX512: kern_f32_avx512(kc, a, a_rs, a_cs, b, c, ldc, accum, rows, pf, pf_lines); return;
    case TT_GEMM_KERN_AVX2: kern_f32_avx2(kc, a, a_rs, a_cs, b, c, ldc, accum, rows); return;
#endif
    default: kern_f32_portable(kc, a, a_rs, a_cs, b, c, ldc, accum, rows); return;
    }
}
