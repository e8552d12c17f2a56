/* host_matmul_internal.h — the blocked f32 GEMM's shared parts: blocking sizes, the job, the packers
 * (host_matmul_pack.c) the driver (host_matmul_gemm.c) and the AMX path (host_matmul_amx.c) use. */
#ifndef TT_HOST_MATMUL_INTERNAL_H
#define TT_HOST_MATMUL_INTERNAL_H

#include "host_kernels.h"

#include <string.h>

#define MR TT_GEMM_MR
#define NR TT_GEMM_NR
#define MC (9 * MR) /* a whole number of panels: a tile's rows start on a panel */
#define NC 256
#define KC 384 /* along the expanded k' axis; even, so bf16 pairs never straddle slices. With the A panel the
                * L1-resident operand (14 x 384 x 4 = 21 KB) longer slices make a third fewer passes over C: 256 -> 384 took
                * 1024^3 from 320-330 to 337-367 GFLOP/s, MiniLM's 112x384x384 from ~300 to 318-343 (interleaved runs) */
#define SMALL_WORK 262144 /* multiply-adds per batch entry up to which one-pass GEMMs skip packing (DEFAULT: the
                           * AMX path's blocking loses below it on attention's shapes) */
#define SMALL_WORK_F32 32768 /* the same for exact f32: the 14-row kernels win from there (attention's
                              * 32 x 64x64x32: 150-210 -> 210-270 GFLOP/s; 96 x 14x14x32, decode shapes: equal) */

enum { PART_HI, PART_MID, PART_LO, PART_EXACT };
enum { KERN_PORTABLE = TT_GEMM_KERN_PORTABLE, KERN_AVX2 = TT_GEMM_KERN_AVX2, KERN_AVX512 = TT_GEMM_KERN_AVX512,
       KERN_BF16 = TT_GEMM_KERN_BF16 };

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

typedef struct gemm_f32_job {
    int64_t M, N, K, Kx, T;
    const float *A, *B;
    int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs;
    float *C;
    int64_t c_bs, ldc;
    const uint8_t *ta, *tb;
    int kern;
    bool vec_split; /* AVX-512F available: bf16 splits, transposed packs, the small kernels */
    bool a_direct;  /* exact f32 with A's rows or columns contiguous: the kernels read A in place (nothing packed) */
    int64_t m_tiles, n_tiles, m_panels, n_panels;
    int64_t col_blocks, col_panels; /* gemm_f32_cols: column blocks per batch entry, B panels per block */
    int64_t kw;    /* 32-bit words per packed panel row: Kx (f32) or ceil(Kx / 2) (bf16 pairs) */
    int64_t kc;    /* k' per slice: Kx in equal even slices of at most KC */
    float *pa, *pb; /* packed operands (bf16 pairs are stored in the same words) */
    bool b_packed;  /* pb holds all of B already (from the packed-operand cache): the tasks pack nothing */
    bool acc_c;     /* C += A . B (C's values are the sums' starting point) instead of C = A . B */
} gemm_f32_job;

/* Packers (host_matmul_pack.c). pack_a: A panel rows m0..m0+MR over all of k', in the kernel's layout;
 * pack_b_range: B rows k in [k0, k1) of batch bi for panels [jp0, jp1); pack_b_rows: B with contiguous rows,
 * columns [c_lo, c_hi). split_row: the bf16 parts (or exact copies) of n values src[i*stride]. */
void tt_host_gemm_pack_a(const gemm_f32_job *g, const float *A, int64_t m0, void *dst);
void tt_host_gemm_pack_b_range(const gemm_f32_job *g, int64_t bi, int64_t jp0, int64_t jp1, int64_t k0, int64_t k1);
void tt_host_gemm_pack_b_rows(const gemm_f32_job *g, int64_t bi, int64_t k0, int64_t k1, int64_t c_lo, int64_t c_hi);
void tt_host_gemm_pack_b_cols(const gemm_f32_job *g, int64_t bi, int64_t jp, int64_t k0, int64_t k1);
void tt_host_gemm_split_row(const float *src, int64_t stride, int64_t n, bool exact, bool hi_only, bool vec,
                            float *hi, float *mid, float *lo);
#if defined(__x86_64__)
/* dst[k * ldd + j] = src[j * lds + k] for j, k < 16 (AVX-512F; any 32-bit values). */
void tt_host_transpose16(const float *src, int64_t lds, float *dst, int64_t ldd);
#endif

/* The packed operands' buffer (host_matmul_gemm.c): one cached buffer, so back-to-back GEMMs do not pay for fresh
 * pages every call; a concurrent caller gets its own (cached says which, for the put). */
void *tt_host_gemm_scratch_get(size_t bytes, bool *cached);
void tt_host_gemm_scratch_put(void *p, bool cached);

/* The bf16 passes on AMX tiles (host_matmul_amx.c), for a job whose T, ta, tb, Kx and vec_split are set: whether
 * this CPU and TORCHTPU_HOST_ISA allow it, and C[b] = the sum of the terms, for every batch entry. */
bool tt_host_gemm_amx_usable(void);
tt_status tt_host_gemm_amx(const gemm_f32_job *g, int64_t batch);

#endif
