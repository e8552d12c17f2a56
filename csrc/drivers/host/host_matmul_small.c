/* host_matmul_small.c — one-pass f32 GEMMs too small to pack: attention's per-head products, decode shapes.
 *
 * One pass = DEFAULT (operands rounded to bf16) or FP32 (exact). Every C element is the chain c = fma(a_ik, b_kj, c)
 * over k = 0, 1, ... from c = 0: bit for bit the scalar definition, and the same sums as the blocked f32 kernels'
 * whenever K fits their k slice. With AVX-512F a tile of up to 4 rows x 64 columns of C lives in 16 registers
 * while k runs (narrower tiles of more rows for N <= 48; masked loads and stores at the ragged right edge, so any
 * N works without padding); B is read in place when its rows are contiguous and need no rounding, else copied
 * (rounded) into a [K][N] scratch first.
 * Elsewhere the rows are computed i, k, j with the j loop vectorized by the compiler.
 */
#include "host_kernels.h"

#include <math.h>
#include <string.h>

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; B's rounding copy wants the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#if defined(__x86_64__)
#include <immintrin.h>
#endif

static inline float round_bf16(float x, bool on) { return on ? tt_host_bf16_round(x) : x; }

/* dst[j] = src[j] rounded to bf16, a vector at a time (scalar, it cost as much as a 64^3 DEFAULT product). */
TT_HOST_VEC_CLONES static void round_row(const float *restrict src, float *restrict dst, int64_t n) {
    for (int64_t j = 0; j < n; j++) dst[j] = tt_host_bf16_round(src[j]);
}

/* A rows x cols matrix read at src[i*rs + j*cs] as a dense [rows][cols] copy in dst, rounded to bf16 when round:
 * contiguous rows a vector at a time (back-to-back rows as one row: attention's are 14 long, the vector loop's
 * scalar tail), a transposed matrix (rs == 1) column by column in chunks, anything else element by element. */
static void dense_copy(const float *src, int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool round, float *dst) {
    if (cs == 1 && rs == cols) cols *= rows, rows = 1;
    if (cs == 1) {
        for (int64_t i = 0; i < rows; i++) {
            if (round) round_row(src + i * rs, dst + i * cols, cols);
            else memcpy(dst + i * cols, src + i * rs, (size_t)cols * sizeof *dst);
        }
        return;
    }
    if (rs == 1 && round) {
        float chunk[256];
        for (int64_t j = 0; j < cols; j++)
            for (int64_t i0 = 0; i0 < rows; i0 += 256) {
                int64_t n = rows - i0 < 256 ? rows - i0 : 256;
                round_row(src + j * cs + i0, chunk, n);
                for (int64_t i = 0; i < n; i++) dst[(i0 + i) * cols + j] = chunk[i];
            }
        return;
    }
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++) dst[i * cols + j] = round_bf16(src[i * rs + j * cs], round);
}

/* B as rows of N contiguous values: in place, or copied (and rounded) into bt; returns the row stride. */
static const float *b_rows(const tt_host_small_gemm *s, float *bt, int64_t *ldb) {
    if (s->b_cs == 1 && !s->round_b) {
        *ldb = s->b_rs;
        return s->B;
    }
    *ldb = s->N;
    dense_copy(s->B, s->K, s->N, s->b_rs, s->b_cs, s->round_b, bt);
    return bt;
}

#if defined(__x86_64__)
/* C rows [i0, i0 + ROWS) x columns [j0, j0 + 16 COLS) (masked to N): ROWS x COLS accumulators (at most 16) stay in
 * registers while k runs. */
#define SMALL_TILE(ROWS, COLS)                                                                                   \
    __attribute__((target("avx512f"))) static void tile_##ROWS##x##COLS(const tt_host_small_gemm *s,           \
                                                                        const float *b, int64_t ldb, int64_t i0, \
                                                                        int64_t j0) {                            \
        __mmask16 m[COLS];                                                                                       \
        _Pragma("GCC unroll 4") for (int q = 0; q < COLS; q++) {                                                 \
            int64_t left = s->N - j0 - 16 * q;                                                                   \
            m[q] = left >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << left) - 1u); /* left > 0 */        \
        }                                                                                                        \
        __m512 acc[ROWS][COLS];                                                                                  \
        _Pragma("GCC unroll 8") for (int r = 0; r < ROWS; r++)                                                   \
            _Pragma("GCC unroll 4") for (int q = 0; q < COLS; q++) acc[r][q] = _mm512_setzero_ps();              \
        const float *a = s->A + i0 * s->a_rs;                                                                    \
        for (int64_t k = 0; k < s->K; k++) {                                                                     \
            const float *bk = b + k * ldb + j0;                                                                  \
            __m512 bv[COLS];                                                                                     \
            _Pragma("GCC unroll 4") for (int q = 0; q < COLS; q++) bv[q] = _mm512_maskz_loadu_ps(m[q], bk + 16 * q); \
            _Pragma("GCC unroll 8") for (int r = 0; r < ROWS; r++) {                                             \
                __m512 av = _mm512_set1_ps(round_bf16(a[r * s->a_rs + k * s->a_cs], s->round_a));                \
                _Pragma("GCC unroll 4") for (int q = 0; q < COLS; q++) acc[r][q] = _mm512_fmadd_ps(av, bv[q], acc[r][q]); \
            }                                                                                                    \
        }                                                                                                        \
        _Pragma("GCC unroll 8") for (int r = 0; r < ROWS; r++)                                                   \
            _Pragma("GCC unroll 4") for (int q = 0; q < COLS; q++)                                               \
                _mm512_mask_storeu_ps(s->C + (i0 + r) * s->ldc + j0 + 16 * q, m[q], acc[r][q]);                  \
    }
SMALL_TILE(4, 4)
SMALL_TILE(1, 4)
SMALL_TILE(8, 2)
SMALL_TILE(1, 2)
SMALL_TILE(8, 1)
SMALL_TILE(1, 1)
#undef SMALL_TILE

typedef void (*small_tile_fn)(const tt_host_small_gemm *, const float *, int64_t, int64_t, int64_t);

/* Column blocks of 64, 32 or 16, each down the rows in tiles; a block is only as wide as what is left needs, so every
 * 16-column vector of a tile starts inside the row (only the last one is masked; no pointer past B). */
__attribute__((target("avx512f"))) static void small_avx512(const tt_host_small_gemm *s, const float *b, int64_t ldb) {
    static const struct { int rows, cols; small_tile_fn many, one; } tiles[3] = {
        {4, 4, tile_4x4, tile_1x4}, {8, 2, tile_8x2, tile_1x2}, {8, 1, tile_8x1, tile_1x1}};
    for (int64_t j0 = 0; j0 < s->N;) {
        int64_t left = s->N - j0;
        int t = left > 48 ? 0 : left > 16 ? 1 : 2;
        int64_t i0 = 0;
        for (; i0 + tiles[t].rows <= s->M; i0 += tiles[t].rows) tiles[t].many(s, b, ldb, i0, j0);
        for (; i0 < s->M; i0++) tiles[t].one(s, b, ldb, i0, j0);
        j0 += 16 * tiles[t].cols;
    }
}
#endif

/* Rows i, k, j: the j loop vectorizes (AVX2 and portable builds). */
TT_HOST_VEC_CLONES static void rows_ikj(const tt_host_small_gemm *s, const float *b, int64_t ldb) {
    for (int64_t i = 0; i < s->M; i++) {
        float *c = s->C + i * s->ldc;
        for (int64_t j = 0; j < s->N; j++) c[j] = 0.0f;
        for (int64_t k = 0; k < s->K; k++) {
            float a = round_bf16(s->A[i * s->a_rs + k * s->a_cs], s->round_a);
            const float *bk = b + k * ldb;
            for (int64_t j = 0; j < s->N; j++) c[j] = fmaf(a, bk[j], c[j]);
        }
    }
}

/* A rounded to bf16 once into at ([M][K]) when it fits: the tiles would round each value once per column block,
 * scalar code beside every row's fma (attention's 14 x 32 per-head products ran at half speed at DEFAULT). */
static void a_rounded(tt_host_small_gemm *s, float *at) {
    if (!s->round_a || s->M * s->K > TT_HOST_SMALL_GEMM_B) return;
    dense_copy(s->A, s->M, s->K, s->a_rs, s->a_cs, true, at);
    s->A = at;
    s->a_rs = s->K;
    s->a_cs = 1;
    s->round_a = false;
}

tt_status tt_host_gemm_f32_small(const tt_host_small_gemm *given) {
    tt_host_small_gemm sm = *given, *s = &sm;
    if ((s->b_cs != 1 || s->round_b) && s->K * s->N > TT_HOST_SMALL_GEMM_B)
        return tt_error(TT_STATUS_INTERNAL, "small gemm: B of %lld x %lld does not fit the copy", (long long)s->K,
                        (long long)s->N);
    float bt[TT_HOST_SMALL_GEMM_B], at[TT_HOST_SMALL_GEMM_B];
    a_rounded(s, at);
    int64_t ldb = 0;
    const float *b = b_rows(s, bt, &ldb);
#if defined(__x86_64__)
    if (s->avx512) {
        small_avx512(s, b, ldb);
        return TT_OK;
    }
#endif
    rows_ikj(s, b, ldb);
    return TT_OK;
}
