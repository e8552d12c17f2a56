/* host_matmul_gemm.c — the host driver's GEMMs: f32 with TPU precision (bf16 passes), f64, wrapping i64.
 *
 * f32 path (C[b] = A[b] x B[b], A read as A[m*a_rs + k*a_cs], B as B[k*b_rs + n*b_cs]):
 *   precision is applied while packing. Each operand element x is split into bf16 parts hi = bf16(x),
 *   mid = bf16(x - hi), lo = bf16(x - hi - mid); a precision is a list of T terms (part of A, part of B) and the
 *   packed K axis is expanded T-fold (k' = k*T + t), so HIGH and HIGHEST are simply 3x and 6x longer runs of
 *   the DEFAULT kernel, all accumulated in f32:
 *     DEFAULT  (hi,hi)                                           T = 1
 *     HIGH     (hi,hi) (hi,mid) (mid,hi)                          T = 3   (mid is "lo" of the 2-way split)
 *     HIGHEST  (hi,hi) (hi,mid) (mid,hi) (hi,lo) (lo,hi) (mid,mid) T = 6
 *     FP32     exact f32 values, f32 FMA                          T = 1
 *   Kernels (host_matmul_kern.c): AVX512-BF16 vdpbf16ps on pairs over k' (bf16 terms), else AVX-512F / AVX2+FMA /
 *   portable C f32 FMA on the same bf16-exact values (products of bf16 values are exact in f32, so results agree up to
 *   accumulation order; vdpbf16ps also flushes denormals).
 *   Blocking: A is packed once, whole, into MR-row micro-panels; exact f32 reads A in place instead (the copy cost
 *   as much as the multiply when N is small) and packs only a partial last panel. Then, when C's column blocks
 *   (about NC wide, as many as a multiple of the thread count) give every thread work, each task takes one column
 *   block, packs its B columns into NR-column panels one KC slice of k' at a time (transposing 16 x 16 tiles in
 *   registers when B is a weight stored [N, K]) and runs all of A against the slice while it is in L2; otherwise
 *   B is packed whole and the tasks are MC x NC tiles. An MR x NR register tile kernel walks the panels. Small problems skip packing:
 *   one-pass ones up to SMALL_WORK per batch entry (host_matmul_small.c, register tiles over B in place), the
 *   multi-term ones up to 16384; batch entries spread over the pool.
 */
#include "host_kernels.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec);
tt_status tt_host_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K, const double *A, int64_t a_bs,
                           const double *B, int64_t b_bs, double *C, int64_t c_bs, int64_t ldc);
tt_status tt_host_gemm_i64(int64_t batch, int64_t M, int64_t N, int64_t K, const int64_t *A, int64_t a_bs,
                           const int64_t *B, int64_t b_bs, int64_t *C, int64_t c_bs, int64_t ldc);

#define MR TT_GEMM_MR
#define NR TT_GEMM_NR
#define MC 128
#define NC 256
#define KC 256 /* along the expanded k' axis; even, so bf16 pairs never straddle slices */
#define SMALL_WORK 262144 /* multiply-adds per batch entry below which one-pass GEMMs skip packing */

enum { PART_HI, PART_MID, PART_LO, PART_EXACT };
enum { KERN_PORTABLE = TT_GEMM_KERN_PORTABLE, KERN_AVX2 = TT_GEMM_KERN_AVX2, KERN_AVX512 = TT_GEMM_KERN_AVX512,
       KERN_BF16 = TT_GEMM_KERN_BF16 };

static const uint8_t terms_a[4][6] = {{PART_HI}, {PART_HI, PART_HI, PART_MID},
                                      {PART_HI, PART_HI, PART_MID, PART_HI, PART_LO, PART_MID}, {PART_EXACT}};
static const uint8_t terms_b[4][6] = {{PART_HI}, {PART_HI, PART_MID, PART_HI},
                                      {PART_HI, PART_MID, PART_HI, PART_LO, PART_HI, PART_MID}, {PART_EXACT}};
static const int n_terms[4] = {1, 3, 6, 1};

static inline uint32_t f2u(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static inline float u2f(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static inline float split_part(float x, int part) {
    if (part == PART_EXACT) return x;
    float hi = tt_host_bf16_round(x);
    if (part == PART_HI) return hi;
    if (!isfinite(hi)) return 0.0f; /* inf/NaN live entirely in hi; x - hi would make a NaN */
    float r = x - hi; /* exact */
    float mid = tt_host_bf16_round(r);
    if (part == PART_MID) return mid;
    return tt_host_bf16_round(r - mid);
}

typedef struct gemm_f32_job {
    int64_t M, N, K, Kx, T;
    const float *A, *B;
    int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs;
    float *C;
    int64_t c_bs, ldc;
    const uint8_t *ta, *tb;
    int kern;
    bool vec_split; /* AVX-512F available: bf16 splits, transposed packs, the small kernels */
    bool a_direct;  /* exact f32 with A's rows or columns contiguous: the kernels read A in place; only a partial
                     * last panel (the kernel would read rows beyond M) is packed, at pa + batch * MR * kw */
    int64_t m_tiles, n_tiles, m_panels, n_panels;
    int64_t col_blocks, col_panels; /* gemm_f32_cols: column blocks per batch entry, B panels per block */
    int64_t kw;    /* 32-bit words per packed panel row: Kx (f32) or ceil(Kx / 2) (bf16 pairs) */
    float *pa, *pb; /* packed operands (bf16 pairs are stored in the same words) */
} gemm_f32_job;

/* ---- packing ----------------------------------------------------------------------------------------- */

#if defined(__x86_64__)
/* tt_host_bf16_round on 16 lanes, bit-identical to the scalar version. */
__attribute__((target("avx512f"))) static inline __m512 bf16_round16(__m512 x) {
    __m512i u = _mm512_castps_si512(x), hi_mask = _mm512_set1_epi32((int)0xffff0000u);
    __m512i odd = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(u, _mm512_add_epi32(odd, _mm512_set1_epi32(0x7fff)));
    __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)),
                                            _mm512_set1_epi32(0x7f800000));
    r = _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(u, _mm512_set1_epi32(0x00400000)));
    return _mm512_castsi512_ps(_mm512_and_si512(r, hi_mask));
}

/* Contiguous split: returns how many leading elements it handled (a multiple of 16). */
__attribute__((target("avx512f"))) static int64_t split_row_avx512(const float *src, int64_t n, bool hi_only,
                                                                   float *hi, float *mid, float *lo) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m512 x = _mm512_loadu_ps(src + i), h = bf16_round16(x);
        _mm512_storeu_ps(hi + i, h);
        if (hi_only) continue;
        /* x - hi, with inf/NaN (all in hi) contributing 0: mask lanes where hi is not finite. */
        __m512i hu = _mm512_castps_si512(h);
        __mmask16 fin = _mm512_cmplt_epu32_mask(_mm512_and_si512(hu, _mm512_set1_epi32(0x7fffffff)),
                                                _mm512_set1_epi32(0x7f800000));
        __m512 r = _mm512_maskz_sub_ps(fin, x, h);
        __m512 m = bf16_round16(r);
        _mm512_storeu_ps(mid + i, m);
        _mm512_storeu_ps(lo + i, bf16_round16(_mm512_sub_ps(r, m)));
    }
    return i;
}
#endif

/* The three bf16 parts of n values src[i*stride]; exact f32 copies when exact is set. */
static void split_row(const float *src, int64_t stride, int64_t n, bool exact, bool hi_only, bool vec, float *hi,
                      float *mid, float *lo) {
    if (exact) {
        if (stride == 1) memcpy(hi, src, (size_t)n * sizeof *hi);
        else for (int64_t i = 0; i < n; i++) hi[i] = src[i * stride];
        return;
    }
    int64_t i0 = 0;
#if defined(__x86_64__)
    if (stride == 1 && vec) i0 = split_row_avx512(src, n, hi_only, hi, mid, lo);
#else
    (void)vec;
#endif
    for (int64_t i = i0; i < n; i++) hi[i] = tt_host_bf16_round(src[i * stride]);
    if (hi_only) return;
    for (int64_t i = i0; i < n; i++) {
        float x = src[i * stride], h = hi[i];
        float r = isfinite(h) ? x - h : 0.0f; /* inf/NaN live entirely in hi */
        float m = tt_host_bf16_round(r);
        mid[i] = m;
        lo[i] = tt_host_bf16_round(r - m);
    }
}

#define SPLIT_CHUNK 128 /* original k per packing step (even: bf16 pairs never straddle steps) */

/* A panel: rows m0..m0+MR (zero beyond M) over all k'. f32: dst[k'*MR + i]; bf16: word dst[(k'/2)*MR + i], the
 * even k' in the low half (vdpbf16ps pair order), k' beyond Kx zero. Rows are split chunk by chunk into an
 * expanded [MR][chunk * T] scratch, then interleaved with contiguous writes. */
static void pack_a(const gemm_f32_job *g, const float *A, int64_t m0, void *dst) {
    bool bf = g->kern == KERN_BF16, exact = g->ta[0] == PART_EXACT, hi_only = g->T == 1;
    float part[3][SPLIT_CHUNK];
    uint32_t ex[MR][SPLIT_CHUNK * 6 + 2];
    float *df = dst;
    uint32_t *dw = dst;
    for (int64_t k0 = 0; k0 < g->K; k0 += SPLIT_CHUNK) {
        int64_t n = g->K - k0 < SPLIT_CHUNK ? g->K - k0 : SPLIT_CHUNK, nx = n * g->T;
        for (int64_t i = 0; i < MR; i++) {
            if (m0 + i >= g->M) {
                memset(ex[i], 0, (size_t)(nx + 1) * sizeof ex[i][0]);
                continue;
            }
            split_row(A + (m0 + i) * g->a_rs + k0 * g->a_cs, g->a_cs, n, exact, hi_only, g->vec_split, part[0], part[1], part[2]);
            if (g->T == 1) memcpy(ex[i], part[0], (size_t)n * sizeof(float));
            else
                for (int64_t k = 0; k < n; k++)
                    for (int64_t t = 0; t < g->T; t++) ex[i][k * g->T + t] = f2u(part[g->ta[t]][k]);
            ex[i][nx] = 0; /* the odd tail's partner */
        }
        int64_t kx0 = k0 * g->T;
        if (bf) {
            uint32_t *d = dw + (kx0 / 2) * MR;
            for (int64_t q = 0; q < (nx + 1) / 2; q++)
                for (int64_t i = 0; i < MR; i++)
                    d[q * MR + i] = (ex[i][2 * q] >> 16) | (ex[i][2 * q + 1] & 0xffff0000u);
        } else {
            float *d = df + kx0 * MR;
            for (int64_t k = 0; k < nx; k++)
                for (int64_t i = 0; i < MR; i++) d[k * MR + i] = u2f(ex[i][k]);
        }
    }
}

/* Writes expanded row k' = kx (values for panel columns, NR each, zero-padded) into every B panel of batch bi
 * starting at panel jp0. f32: panel[k'*NR + j]; bf16: word panel[(k'/2)*NR + j], the even k' in the low half. The
 * even k' of a pair is always written first, so it assigns and the odd one ORs (no pre-zeroing). */
static void put_b_row(const gemm_f32_job *g, int64_t bi, int64_t jp0, int64_t np, int64_t kx, const float *v) {
    for (int64_t jp = 0; jp < np; jp++) {
        float *panel = g->pb + ((bi * g->n_panels) + jp0 + jp) * NR * g->kw;
        const float *src = v + jp * NR;
        if (g->kern != KERN_BF16) {
            memcpy(panel + kx * NR, src, NR * sizeof *src);
        } else if ((kx & 1) == 0) {
            uint32_t *d = (uint32_t *)panel + (kx >> 1) * NR;
            for (int j = 0; j < NR; j++) d[j] = f2u(src[j]) >> 16;
        } else {
            uint32_t *d = (uint32_t *)panel + (kx >> 1) * NR;
            for (int j = 0; j < NR; j++) d[j] |= f2u(src[j]) & 0xffff0000u;
        }
    }
}

#define B_COLS 512 /* columns split per step (a multiple of NR) */

/* B rows k in [k0, k1), columns [c_lo, c_hi) (c_lo a multiple of NR), of batch bi, for B stored with contiguous
 * rows (b_cs == 1): each row is read contiguously and scattered over the panels. k0 is even, so bf16 pairs stay
 * inside one call. */
static void pack_b_rows(const gemm_f32_job *g, int64_t bi, int64_t k0, int64_t k1, int64_t c_lo, int64_t c_hi) {
    bool exact = g->tb[0] == PART_EXACT, hi_only = g->T == 1;
    float part[3][B_COLS];
    const float *B = g->B + bi * g->b_bs;
    if (exact && g->kern != KERN_BF16) { /* plain copies, straight into the panels */
        for (int64_t k = k0; k < k1; k++)
            for (int64_t c0 = c_lo; c0 < c_hi; c0 += NR) {
                float *dst = g->pb + (bi * g->n_panels + c0 / NR) * NR * g->kw + k * NR;
                int64_t nc = c_hi - c0 < NR ? c_hi - c0 : NR;
                if (nc == NR) { /* a constant size: inlined vector moves, not a libc call per 128 bytes */
                    memcpy(dst, B + k * g->b_rs + c0, NR * sizeof *dst);
                    continue;
                }
                memcpy(dst, B + k * g->b_rs + c0, (size_t)nc * sizeof *dst);
                for (int64_t j = nc; j < NR; j++) dst[j] = 0.0f;
            }
        return;
    }
    for (int64_t k = k0; k < k1; k++)
        for (int64_t c0 = c_lo; c0 < c_hi; c0 += B_COLS) {
            int64_t nc = c_hi - c0 < B_COLS ? c_hi - c0 : B_COLS, np = (nc + NR - 1) / NR;
            split_row(B + k * g->b_rs + c0, 1, nc, exact, hi_only, g->vec_split, part[0], part[1], part[2]);
            for (int p = 0; p < 3; p++)
                for (int64_t j = nc; j < np * NR; j++) part[p][j] = 0.0f;
            for (int64_t t = 0; t < g->T; t++)
                put_b_row(g, bi, c0 / NR, np, k * g->T + t, part[exact ? 0 : g->tb[t]]);
        }
    /* Odd Kx: the last pair's missing half is already zero (the even half assigned the whole word). */
}

#if defined(__x86_64__)
/* dst[k * ldd + j] = src[j * lds + k] for j, k < 16: a 16 x 16 transpose in registers (pairs of rows interleaved,
 * then quads, then 128-bit lanes). */
__attribute__((target("avx512f"))) static void transpose16(const float *src, int64_t lds, float *dst, int64_t ldd) {
    __m512 r[16], t[16];
    for (int j = 0; j < 16; j++) r[j] = _mm512_loadu_ps(src + j * lds);
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    /* r[4G + c], 128-bit lane L: column 4L + c of rows 4G .. 4G+3 */
    for (int G = 0; G < 4; G++) {
        const __m512 *q = t + 4 * G;
        r[4 * G] = _mm512_shuffle_ps(q[0], q[2], 0x44);
        r[4 * G + 1] = _mm512_shuffle_ps(q[0], q[2], 0xEE);
        r[4 * G + 2] = _mm512_shuffle_ps(q[1], q[3], 0x44);
        r[4 * G + 3] = _mm512_shuffle_ps(q[1], q[3], 0xEE);
    }
    for (int c = 0; c < 4; c++) {
        __m512 v0 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44), v1 = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
        __m512 v2 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
        __m512 v3 = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
        _mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(v0, v2, 0x88));
        _mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(v0, v2, 0xDD));
        _mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(v1, v3, 0x88));
        _mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(v1, v3, 0xDD));
    }
}
#endif

#define B_TILE_K 16 /* k rows per transposed tile */

/* B panel (batch bi, panel jp), rows k in [k0, k1), for any strides (a weight stored [N, K] has b_rs == 1): tiles of
 * B_TILE_K x NR values are transposed into row order (16 x 16 register transposes when the k run is contiguous),
 * then packed like contiguous rows. Exact f32 transposes straight into the panel. k0 is even (bf16 pairs). */
static void pack_b_cols(const gemm_f32_job *g, int64_t bi, int64_t jp, int64_t k0, int64_t k1) {
    bool exact = g->tb[0] == PART_EXACT, direct = exact && g->kern != KERN_BF16, hi_only = g->T == 1;
    int64_t n0 = jp * NR, nr = g->N - n0 < NR ? g->N - n0 : NR;
    const float *B = g->B + bi * g->b_bs + n0 * g->b_cs;
    float *panel = g->pb + (bi * g->n_panels + jp) * NR * g->kw;
    float tile[B_TILE_K][NR], part[3][NR];
    for (int64_t kt = k0; kt < k1; kt += B_TILE_K) {
        int64_t kn = k1 - kt < B_TILE_K ? k1 - kt : B_TILE_K;
        float *dst = direct ? panel + kt * NR : &tile[0][0];
        int64_t j = 0;
#if defined(__x86_64__)
        if (g->vec_split && g->b_rs == 1 && kn == B_TILE_K)
            for (; j + 16 <= nr; j += 16) transpose16(B + j * g->b_cs + kt, g->b_cs, dst + j, NR);
#endif
        for (; j < nr; j++)
            for (int64_t k = 0; k < kn; k++) dst[k * NR + j] = B[j * g->b_cs + (kt + k) * g->b_rs];
        for (int64_t k = 0; k < kn; k++)
            for (int64_t jj = nr; jj < NR; jj++) dst[k * NR + jj] = 0.0f;
        if (direct) continue;
        for (int64_t k = 0; k < kn; k++) {
            split_row(tile[k], 1, NR, exact, hi_only, g->vec_split, part[0], part[1], part[2]);
            for (int64_t t = 0; t < g->T; t++)
                put_b_row(g, bi, jp, 1, (kt + k) * g->T + t, exact ? tile[k] : part[g->tb[t]]);
        }
    }
}

/* Packs B rows k in [k0, k1) of batch bi for panels [jp0, jp1). */
static void pack_b_range(const gemm_f32_job *g, int64_t bi, int64_t jp0, int64_t jp1, int64_t k0, int64_t k1) {
    if (g->b_cs == 1) {
        int64_t c_hi = jp1 * NR < g->N ? jp1 * NR : g->N;
        pack_b_rows(g, bi, k0, k1, jp0 * NR, c_hi);
    } else {
        for (int64_t jp = jp0; jp < jp1; jp++) pack_b_cols(g, bi, jp, k0, k1);
    }
}

/* ---- the blocked driver ------------------------------------------------------------------------------ */

/* Operands are packed once, whole, before the tile loop: panel (b, p) of A holds MR rows over all of k'
 * (kw words per row: k' for f32, k' pairs for bf16), panel (b, q) of B holds NR columns. Packing once matters:
 * the bf16 splits cost more than a copy, and every tile would otherwise repeat them. */
static void gemm_pack_a(void *user, int64_t p0, int64_t p1) {
    gemm_f32_job *g = user;
    if (g->a_direct) { /* p indexes batch entries: only the partial last panel */
        for (int64_t bi = p0; bi < p1; bi++)
            pack_a(g, g->A + bi * g->a_bs, (g->m_panels - 1) * MR, g->pa + bi * MR * g->kw);
        return;
    }
    for (int64_t p = p0; p < p1; p++) {
        int64_t bi = p / g->m_panels, m0 = (p % g->m_panels) * MR;
        const float *A = g->A + bi * g->a_bs;
        pack_a(g, A, m0, g->pa + p * MR * g->kw);
    }
}

#define B_ROWS 16 /* rows per pack_b_rows task (even) */

static void gemm_pack_b(void *user, int64_t p0, int64_t p1) {
    gemm_f32_job *g = user;
    if (g->b_cs == 1) { /* p indexes (batch, block of B_ROWS rows) */
        int64_t blocks = (g->K + B_ROWS - 1) / B_ROWS;
        for (int64_t p = p0; p < p1; p++) {
            int64_t bi = p / blocks, k0 = (p % blocks) * B_ROWS;
            pack_b_rows(g, bi, k0, g->K - k0 < B_ROWS ? g->K : k0 + B_ROWS, 0, g->N);
        }
    } else { /* p indexes (batch, panel) */
        for (int64_t p = p0; p < p1; p++) pack_b_cols(g, p / g->n_panels, p % g->n_panels, 0, g->K);
    }
}

/* C[bi][m0 .. m0+mc, n0 .. n0+nc] (+)= one k' slice [kx0, kx0 + kc) of the packed panels. */
static void gemm_block(const gemm_f32_job *g, int64_t bi, int64_t m0, int64_t mc, int64_t n0, int64_t nc,
                       int64_t kx0, int64_t kc) {
    int64_t w0 = g->kern == KERN_BF16 ? kx0 / 2 : kx0; /* word offset of this k' slice inside a panel row */
    int accum = kx0 > 0;
    float *C = g->C + bi * g->c_bs;
    const float *pb = g->pb + (bi * g->n_panels + n0 / NR) * NR * g->kw;
    for (int64_t jr = 0; jr < nc; jr += NR) {
        const float *bp = pb + (jr / NR) * NR * g->kw + w0 * NR;
        int64_t nr = nc - jr < NR ? nc - jr : NR;
        for (int64_t ir = 0; ir < mc; ir += MR) {
            int64_t mr = mc - ir < MR ? mc - ir : MR, rs = 1, cs = MR; /* a packed panel's strides */
            const float *ap;
            if (g->a_direct && mr == MR) {
                ap = g->A + bi * g->a_bs + (m0 + ir) * g->a_rs + kx0 * g->a_cs;
                rs = g->a_rs;
                cs = g->a_cs;
            } else {
                int64_t panel = g->a_direct ? bi : bi * g->m_panels + (m0 + ir) / MR;
                ap = g->pa + panel * MR * g->kw + w0 * MR;
            }
            float *cp = C + (m0 + ir) * g->ldc + n0 + jr;
            if (mr == MR && nr == NR) {
                tt_host_gemm_micro(g->kern, kc, ap, rs, cs, bp, cp, g->ldc, accum);
            } else { /* edge tile through a scratch tile */
                float tmp[MR * NR];
                tt_host_gemm_micro(g->kern, kc, ap, rs, cs, bp, tmp, NR, 0);
                for (int64_t i = 0; i < mr; i++)
                    for (int64_t j = 0; j < nr; j++)
                        cp[i * g->ldc + j] = (accum ? cp[i * g->ldc + j] : 0.0f) + tmp[i * NR + j];
            }
        }
    }
}

/* B packed beforehand: tasks are MC x NC tiles of C (with the batch). */
static void gemm_f32_tiles(void *user, int64_t t0, int64_t t1) {
    gemm_f32_job *g = user;
    int64_t per_batch = g->m_tiles * g->n_tiles;
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / per_batch, r = t % per_batch;
        int64_t m0 = (r / g->n_tiles) * MC, n0 = (r % g->n_tiles) * NC;
        int64_t mc = g->M - m0 < MC ? g->M - m0 : MC, nc = g->N - n0 < NC ? g->N - n0 : NC;
        for (int64_t kx0 = 0; kx0 < g->Kx; kx0 += KC)
            gemm_block(g, bi, m0, mc, n0, nc, kx0, g->Kx - kx0 < KC ? g->Kx - kx0 : KC);
    }
}

/* Tasks are column blocks of C (with the batch): a task packs its own B panels, one k' slice at a time, right
 * before the kernels read them (so they are read from L2, not memory), and runs every row of A against them. Each
 * B element is packed once, by the one task that uses it. Multi-term precisions pack all of k at once (a slice
 * of k' is not a whole number of k rows). */
static void gemm_f32_cols(void *user, int64_t t0, int64_t t1) {
    gemm_f32_job *g = user;
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / g->col_blocks, jp0 = (t % g->col_blocks) * g->col_panels;
        int64_t jp1 = jp0 + g->col_panels < g->n_panels ? jp0 + g->col_panels : g->n_panels;
        if (jp0 >= jp1) continue;
        int64_t n0 = jp0 * NR, nc = (jp1 * NR < g->N ? jp1 * NR : g->N) - n0;
        if (g->T > 1) pack_b_range(g, bi, jp0, jp1, 0, g->K);
        for (int64_t kx0 = 0; kx0 < g->Kx; kx0 += KC) {
            int64_t kc = g->Kx - kx0 < KC ? g->Kx - kx0 : KC;
            if (g->T == 1) pack_b_range(g, bi, jp0, jp1, kx0, kx0 + kc);
            for (int64_t m0 = 0; m0 < g->M; m0 += MC)
                gemm_block(g, bi, m0, g->M - m0 < MC ? g->M - m0 : MC, n0, nc, kx0, kc);
        }
    }
}

/* Small problems, any number of terms: no packing. Same terms, so the same numerics up to accumulation order. */
static void gemm_f32_small(const gemm_f32_job *g, int64_t b0, int64_t b1) {
    for (int64_t bi = b0; bi < b1; bi++) {
        const float *A = g->A + bi * g->a_bs, *B = g->B + bi * g->b_bs;
        float *C = g->C + bi * g->c_bs;
        for (int64_t i = 0; i < g->M; i++)
            for (int64_t j = 0; j < g->N; j++) {
                float acc = 0.0f;
                for (int64_t k = 0; k < g->K; k++) {
                    float x = A[i * g->a_rs + k * g->a_cs], y = B[k * g->b_rs + j * g->b_cs];
                    for (int64_t t = 0; t < g->T; t++)
                        acc = fmaf(split_part(x, g->ta[t]), split_part(y, g->tb[t]), acc);
                }
                C[i * g->ldc + j] = acc;
            }
    }
}

static void gemm_f32_small_range(void *user, int64_t b0, int64_t b1) {
    const gemm_f32_job *g = user;
    if (g->T > 1) {
        gemm_f32_small(g, b0, b1);
        return;
    }
    for (int64_t bi = b0; bi < b1; bi++) {
        tt_host_small_gemm s = {.M = g->M, .N = g->N, .K = g->K, .A = g->A + bi * g->a_bs, .a_rs = g->a_rs,
                                .a_cs = g->a_cs, .B = g->B + bi * g->b_bs, .b_rs = g->b_rs, .b_cs = g->b_cs,
                                .C = g->C + bi * g->c_bs, .ldc = g->ldc, .round_a = g->ta[0] == PART_HI,
                                .round_b = g->tb[0] == PART_HI, .avx512 = g->vec_split};
        (void)tt_host_gemm_f32_small(&s); /* cannot fail: tt_host_gemm_f32 checked B's size */
    }
}

/* One cached packing buffer, so back-to-back GEMMs do not pay for fresh pages (mmap + zeroing) every call.
 * A concurrent caller that finds it taken allocates its own. Buffers above SCRATCH_KEEP are not kept. */
#define SCRATCH_KEEP ((size_t)64 << 20)
static pthread_mutex_t scratch_lock = PTHREAD_MUTEX_INITIALIZER;
static void *scratch_ptr;
static size_t scratch_size;
static bool scratch_busy;

static void *scratch_get(size_t bytes, bool *cached) {
    *cached = false;
    /* trylock: a busy (or, after fork, orphaned) lock just means a private buffer */
    if (pthread_mutex_trylock(&scratch_lock) != 0) return aligned_alloc(64, bytes);
    if (!scratch_busy) {
        if (scratch_size < bytes) {
            free(scratch_ptr);
            scratch_size = 0;
            scratch_ptr = aligned_alloc(64, bytes);
            if (scratch_ptr) scratch_size = bytes;
        }
        if (scratch_ptr) {
            scratch_busy = true;
            *cached = true;
            pthread_mutex_unlock(&scratch_lock);
            return scratch_ptr;
        }
    }
    pthread_mutex_unlock(&scratch_lock);
    return aligned_alloc(64, bytes);
}

static void scratch_put(void *p, bool cached) {
    if (!cached) {
        free(p);
        return;
    }
    pthread_mutex_lock(&scratch_lock);
    scratch_busy = false;
    if (scratch_size > SCRATCH_KEEP) {
        free(scratch_ptr);
        scratch_ptr = NULL;
        scratch_size = 0;
    }
    pthread_mutex_unlock(&scratch_lock);
}

static bool all_finite(int64_t batch, int64_t R, int64_t Cn, const float *X, int64_t bs, int64_t rs, int64_t cs) {
    float acc = 0.0f; /* x * 0 is NaN exactly when x is inf or NaN */
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < R; i++) {
            const float *row = X + b * bs + i * rs;
            for (int64_t j = 0; j < Cn; j++) acc += row[j * cs] * 0.0f;
        }
    return acc == 0.0f;
}

tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec) {
    if ((unsigned)prec > TT_PRECISION_FP32) return tt_error(TT_STATUS_INVALID_ARGUMENT, "gemm: bad precision %d", prec);
    if (batch <= 0 || M <= 0 || N <= 0) return TT_OK;
    if (K <= 0) {
        for (int64_t bi = 0; bi < batch; bi++)
            for (int64_t i = 0; i < M; i++) memset(C + bi * c_bs + i * ldc, 0, (size_t)N * sizeof *C);
        return TT_OK;
    }
    /* Split passes turn inf into NaN (inf * 0 in a cross term), so inputs with inf/NaN use exact f32 instead. */
    if (prec == TT_PRECISION_HIGH || prec == TT_PRECISION_HIGHEST) {
        if (!all_finite(batch, M, K, A, a_bs, a_rs, a_cs) || !all_finite(batch, K, N, B, b_bs, b_rs, b_cs))
            prec = TT_PRECISION_FP32;
    }
    gemm_f32_job g = {.M = M, .N = N, .K = K, .T = n_terms[prec], .A = A, .B = B, .a_bs = a_bs, .a_rs = a_rs,
                      .a_cs = a_cs, .b_bs = b_bs, .b_rs = b_rs, .b_cs = b_cs, .C = C, .c_bs = c_bs, .ldc = ldc,
                      .ta = terms_a[prec], .tb = terms_b[prec]};
    g.Kx = K * g.T;
    int64_t work = M * N * g.Kx; /* multiply-adds per batch entry */
    g.vec_split = tt_host_cpu_has("avx512f"); /* the splits' and the small kernels' vector level */
    /* One pass over K <= KC: the small kernel's sums are the blocked f32 kernels' (a single k slice), so which
     * path runs never changes the bits there; measured faster up to about 64 x 64 x 64 per entry (attention). */
    bool one_pass_small = g.T == 1 && K <= KC && work <= SMALL_WORK &&
                          (K * N <= TT_HOST_SMALL_GEMM_B || (b_cs == 1 && prec == TT_PRECISION_FP32));
    if (one_pass_small || work <= 16384) {
        int64_t grain = work > 0 ? (1 << 18) / work + 1 : batch;
        tt_host_parallel_for(batch, grain, gemm_f32_small_range, &g);
        return TT_OK;
    }
    g.kern = KERN_PORTABLE;
    if (prec != TT_PRECISION_FP32 && tt_host_cpu_has("avx512bf16")) g.kern = KERN_BF16;
    else if (tt_host_cpu_has("avx512f")) g.kern = KERN_AVX512;
    else if (tt_host_cpu_has("avx2") && tt_host_cpu_has("fma")) g.kern = KERN_AVX2;
    g.m_tiles = (M + MC - 1) / MC;
    g.n_tiles = (N + NC - 1) / NC;
    g.m_panels = (M + MR - 1) / MR;
    g.n_panels = (N + NR - 1) / NR;
    g.kw = g.kern == KERN_BF16 ? (g.Kx + 1) / 2 : g.Kx;
    g.a_direct = prec == TT_PRECISION_FP32 && g.kern != KERN_BF16 && (a_cs == 1 || a_rs == 1);
    double bytes_a = (double)batch * (double)(g.a_direct ? 1 : g.m_panels) * MR * (double)g.kw * 4.0;
    double bytes_b = (double)batch * (double)g.n_panels * NR * (double)g.kw * 4.0;
    if (bytes_a + bytes_b > 1e15) return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: problem too large");
    size_t sa = ((size_t)bytes_a + 63) / 64 * 64, sb = ((size_t)bytes_b + 63) / 64 * 64;
    bool cached = false;
    void *scratch = scratch_get(sa + sb, &cached);
    if (!scratch)
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: cannot allocate %.0f bytes of packed operands",
                        bytes_a + bytes_b);
    g.pa = scratch;
    g.pb = (float *)((char *)scratch + sa);
    int64_t pgrain_a = 65536 / (MR * g.Kx) + 1, pgrain_b = 65536 / (NR * g.Kx) + 1;
    if (!g.a_direct) tt_host_parallel_for(batch * g.m_panels, pgrain_a, gemm_pack_a, &g);
    else if (M % MR) tt_host_parallel_for(batch, pgrain_a, gemm_pack_a, &g);
    /* Column blocks when they give every thread work: about NC wide, a multiple of the thread count. */
    int64_t nt = tt_host_num_threads();
    g.col_blocks = (g.n_tiles + nt - 1) / nt * nt;
    g.col_panels = (g.n_panels + g.col_blocks - 1) / g.col_blocks;
    g.col_blocks = (g.n_panels + g.col_panels - 1) / g.col_panels;
    if (batch * g.col_blocks >= nt) {
        int64_t block_work = M * g.col_panels * NR * g.Kx;
        tt_host_parallel_for(batch * g.col_blocks, (1 << 21) / block_work + 1, gemm_f32_cols, &g);
        scratch_put(scratch, cached);
        return TT_OK;
    }
    if (b_cs == 1) tt_host_parallel_for(batch * ((K + B_ROWS - 1) / B_ROWS), 65536 / (B_ROWS * N * g.T) + 1,
                                        gemm_pack_b, &g);
    else tt_host_parallel_for(batch * g.n_panels, pgrain_b, gemm_pack_b, &g);
    int64_t tiles = batch * g.m_tiles * g.n_tiles;
    int64_t tile_work = (M < MC ? M : MC) * (N < NC ? N : NC) * g.Kx;
    int64_t grain = (1 << 21) / tile_work + 1; /* keep each chunk worth waking a thread for */
    tt_host_parallel_for(tiles, grain, gemm_f32_tiles, &g);
    scratch_put(scratch, cached);
    return TT_OK;
}

/* ---- f64 and wrapping i64: contiguous A [M, K], B [K, N]; rows spread over the pool ------------------- */

typedef struct gemm_x64_job {
    int64_t M, N, K;
    const void *A, *B;
    int64_t a_bs, b_bs, c_bs, ldc;
    void *C;
} gemm_x64_job;

static void gemm_f64_rows(void *user, int64_t r0, int64_t r1) {
    const gemm_x64_job *g = user;
    for (int64_t r = r0; r < r1; r++) {
        int64_t bi = r / g->M, i = r % g->M;
        const double *a = (const double *)g->A + bi * g->a_bs + i * g->K, *B = (const double *)g->B + bi * g->b_bs;
        double *c = (double *)g->C + bi * g->c_bs + i * g->ldc;
        for (int64_t j = 0; j < g->N; j++) c[j] = 0.0;
        for (int64_t k = 0; k < g->K; k++) {
            double x = a[k];
            const double *b = B + k * g->N;
            for (int64_t j = 0; j < g->N; j++) c[j] += x * b[j];
        }
    }
}

static void gemm_i64_rows(void *user, int64_t r0, int64_t r1) {
    const gemm_x64_job *g = user;
    for (int64_t r = r0; r < r1; r++) {
        int64_t bi = r / g->M, i = r % g->M;
        const int64_t *a = (const int64_t *)g->A + bi * g->a_bs + i * g->K;
        const int64_t *B = (const int64_t *)g->B + bi * g->b_bs;
        int64_t *c = (int64_t *)g->C + bi * g->c_bs + i * g->ldc;
        /* Unsigned arithmetic: wraps like the hardware, no signed-overflow UB. */
        for (int64_t j = 0; j < g->N; j++) c[j] = 0;
        for (int64_t k = 0; k < g->K; k++) {
            uint64_t x = (uint64_t)a[k];
            const int64_t *b = B + k * g->N;
            for (int64_t j = 0; j < g->N; j++) c[j] = (int64_t)((uint64_t)c[j] + x * (uint64_t)b[j]);
        }
    }
}

static tt_status gemm_x64(int64_t batch, int64_t M, int64_t N, int64_t K, const void *A, int64_t a_bs, const void *B,
                          int64_t b_bs, void *C, int64_t c_bs, int64_t ldc, tt_host_range_fn fn) {
    if (batch <= 0 || M <= 0 || N <= 0) return TT_OK;
    gemm_x64_job g = {M, N, K, A, B, a_bs, b_bs, c_bs, ldc, C};
    int64_t row_work = N * (K > 0 ? K : 1);
    tt_host_parallel_for(batch * M, (1 << 18) / row_work + 1, fn, &g);
    return TT_OK;
}

tt_status tt_host_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K, const double *A, int64_t a_bs,
                           const double *B, int64_t b_bs, double *C, int64_t c_bs, int64_t ldc) {
    return gemm_x64(batch, M, N, K, A, a_bs, B, b_bs, C, c_bs, ldc, gemm_f64_rows);
}

tt_status tt_host_gemm_i64(int64_t batch, int64_t M, int64_t N, int64_t K, const int64_t *A, int64_t a_bs,
                           const int64_t *B, int64_t b_bs, int64_t *C, int64_t c_bs, int64_t ldc) {
    return gemm_x64(batch, M, N, K, A, a_bs, B, b_bs, C, c_bs, ldc, gemm_i64_rows);
}
