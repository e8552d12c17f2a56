/* host_matmul_pack.c — packing the f32 GEMM's operands into the register-tile kernels' panels, splitting them
 * into bf16 parts on the way (host_matmul_gemm.c describes the layouts and the precisions). */
#include "host_matmul_internal.h"

#include <math.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

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
void tt_host_gemm_split_row(const float *src, int64_t stride, int64_t n, bool exact, bool hi_only, bool vec, float *hi,
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
void tt_host_gemm_pack_a(const gemm_f32_job *g, const float *A, int64_t m0, void *dst) {
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
            tt_host_gemm_split_row(A + (m0 + i) * g->a_rs + k0 * g->a_cs, g->a_cs, n, exact, hi_only, g->vec_split,
                                   part[0], part[1], part[2]);
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
void tt_host_gemm_pack_b_rows(const gemm_f32_job *g, int64_t bi, int64_t k0, int64_t k1, int64_t c_lo, int64_t c_hi) {
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
            tt_host_gemm_split_row(B + k * g->b_rs + c0, 1, nc, exact, hi_only, g->vec_split, part[0], part[1],
                                   part[2]);
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
__attribute__((target("avx512f"))) void tt_host_transpose16(const float *src, int64_t lds, float *dst, int64_t ldd) {
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
void tt_host_gemm_pack_b_cols(const gemm_f32_job *g, int64_t bi, int64_t jp, int64_t k0, int64_t k1) {
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
            for (; j + 16 <= nr; j += 16) tt_host_transpose16(B + j * g->b_cs + kt, g->b_cs, dst + j, NR);
#endif
        for (; j < nr; j++)
            for (int64_t k = 0; k < kn; k++) dst[k * NR + j] = B[j * g->b_cs + (kt + k) * g->b_rs];
        for (int64_t k = 0; k < kn; k++)
            for (int64_t jj = nr; jj < NR; jj++) dst[k * NR + jj] = 0.0f;
        if (direct) continue;
        for (int64_t k = 0; k < kn; k++) {
            tt_host_gemm_split_row(tile[k], 1, NR, exact, hi_only, g->vec_split, part[0], part[1], part[2]);
            for (int64_t t = 0; t < g->T; t++)
                put_b_row(g, bi, jp, 1, (kt + k) * g->T + t, exact ? tile[k] : part[g->tb[t]]);
        }
    }
}

/* Packs B rows k in [k0, k1) of batch bi for panels [jp0, jp1). */
void tt_host_gemm_pack_b_range(const gemm_f32_job *g, int64_t bi, int64_t jp0, int64_t jp1, int64_t k0, int64_t k1) {
    if (g->b_cs == 1) {
        int64_t c_hi = jp1 * NR < g->N ? jp1 * NR : g->N;
        tt_host_gemm_pack_b_rows(g, bi, k0, k1, jp0 * NR, c_hi);
    } else {
        for (int64_t jp = jp0; jp < jp1; jp++) tt_host_gemm_pack_b_cols(g, bi, jp, k0, k1);
    }
}
