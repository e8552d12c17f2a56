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
 *   bf16 terms run on AMX tiles where the CPU has them (host_matmul_amx.c: its own packing and blocking; 4-6x
 *   vdpbf16ps here). Kernels (host_matmul_kern.c): AVX512-BF16 vdpbf16ps on pairs over k' (bf16 terms), else
 *   AVX-512F / AVX2+FMA / portable C f32 FMA on the same bf16-exact values (products of bf16 values are exact in
 *   f32, so results agree up to accumulation order; vdpbf16ps also flushes denormals).
 *   Blocking: A is packed once, whole, into MR-row micro-panels; exact f32 reads A in place instead (the copy cost
 *   as much as the multiply when N is small). Then, when C's column blocks (about NC wide, as many as a multiple
 *   of the thread count) give every thread work, each task takes one column block, packs its B columns into
 *   NR-column panels one k' slice (at most KC) at a time (transposing 16 x 16 tiles in registers when B is a weight
 *   stored [N, K]) and runs all of A against the slice while it is in L2; otherwise B is packed whole and the tasks
 *   are MC x NC tiles. An MR x NR register tile kernel walks the panels (packing: host_matmul_pack.c). Small problems skip packing:
 *   one-pass ones up to SMALL_WORK(_F32) per batch entry (host_matmul_small.c, register tiles over B in place), the
 *   multi-term ones up to 16384; batch entries spread over the pool.
 */
#include "host_internal.h"
#include "host_matmul_internal.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>

tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec);
tt_status tt_host_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K, const double *A, int64_t a_bs,
                           const double *B, int64_t b_bs, double *C, int64_t c_bs, int64_t ldc);
tt_status tt_host_gemm_i64(int64_t batch, int64_t M, int64_t N, int64_t K, const int64_t *A, int64_t a_bs,
                           const int64_t *B, int64_t b_bs, int64_t *C, int64_t c_bs, int64_t ldc);

static const uint8_t terms_a[4][6] = {{PART_HI}, {PART_HI, PART_HI, PART_MID},
                                      {PART_HI, PART_HI, PART_MID, PART_HI, PART_LO, PART_MID}, {PART_EXACT}};
static const uint8_t terms_b[4][6] = {{PART_HI}, {PART_HI, PART_MID, PART_HI},
                                      {PART_HI, PART_MID, PART_HI, PART_LO, PART_HI, PART_MID}, {PART_EXACT}};
static const int n_terms[4] = {1, 3, 6, 1};

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

/* ---- the blocked driver ------------------------------------------------------------------------------ */

/* Operands are packed once, whole, before the tile loop: panel (b, p) of A holds MR rows over all of k'
 * (kw words per row: k' for f32, k' pairs for bf16), panel (b, q) of B holds NR columns. Packing once matters:
 * the bf16 splits cost more than a copy, and every tile would otherwise repeat them. */
static void gemm_pack_a(void *user, int64_t p0, int64_t p1) {
    gemm_f32_job *g = user;
    for (int64_t p = p0; p < p1; p++) {
        int64_t bi = p / g->m_panels, m0 = (p % g->m_panels) * MR;
        const float *A = g->A + bi * g->a_bs;
        tt_host_gemm_pack_a(g, A, m0, g->pa + p * MR * g->kw);
    }
}

#define B_ROWS 16 /* rows per pack_b_rows task (even) */

static void gemm_pack_b(void *user, int64_t p0, int64_t p1) {
    gemm_f32_job *g = user;
    if (g->b_cs == 1) { /* p indexes (batch, block of B_ROWS rows) */
        int64_t blocks = (g->K + B_ROWS - 1) / B_ROWS;
        for (int64_t p = p0; p < p1; p++) {
            int64_t bi = p / blocks, k0 = (p % blocks) * B_ROWS;
            tt_host_gemm_pack_b_rows(g, bi, k0, g->K - k0 < B_ROWS ? g->K : k0 + B_ROWS, 0, g->N);
        }
    } else { /* p indexes (batch, panel) */
        for (int64_t p = p0; p < p1; p++) tt_host_gemm_pack_b_cols(g, p / g->n_panels, p % g->n_panels, 0, g->K);
    }
}

/* All of B into g->pb, panels in parallel. */
static void pack_b_whole(gemm_f32_job *g, int64_t batch, int64_t pgrain_b) {
    if (g->b_cs == 1)
        tt_host_parallel_for(batch * ((g->K + B_ROWS - 1) / B_ROWS), 65536 / (B_ROWS * g->N * g->T) + 1, gemm_pack_b,
                             g);
    else tt_host_parallel_for(batch * g->n_panels, pgrain_b, gemm_pack_b, g);
}

/* One MR-row tile of C against panel bp's slice (its edge columns through a scratch tile). */
static void gemm_tile(const gemm_f32_job *g, int64_t bi, int64_t m0, int64_t ir, int64_t mc, int64_t n0, int64_t jr,
                      int64_t nr, int64_t kx0, int64_t kc, const float *bp, const void *pf, int64_t pf_lines) {
    int64_t w0 = g->kern == KERN_BF16 ? kx0 / 2 : kx0; /* word offset of this k' slice inside a panel row */
    int accum = kx0 > 0 || g->acc_c;
    int mr = mc - ir < MR ? (int)(mc - ir) : MR; /* the kernels run a partial panel for its own rows */
    int64_t rs = 1, cs = MR;                      /* a packed panel's strides */
    const float *ap;
    if (g->a_direct) {
        ap = g->A + bi * g->a_bs + (m0 + ir) * g->a_rs + kx0 * g->a_cs;
        rs = g->a_rs;
        cs = g->a_cs;
    } else {
        ap = g->pa + (bi * g->m_panels + (m0 + ir) / MR) * MR * g->kw + w0 * MR;
    }
    float *cp = g->C + bi * g->c_bs + (m0 + ir) * g->ldc + n0 + jr;
    if (nr == NR) {
        tt_host_gemm_micro(g->kern, kc, ap, rs, cs, bp, cp, g->ldc, accum, mr, pf, pf_lines);
        return;
    }
    float tmp[MR * NR];
    tt_host_gemm_micro(g->kern, kc, ap, rs, cs, bp, tmp, NR, 0, mr, pf, pf_lines);
    for (int64_t i = 0; i < mr; i++)
        for (int64_t j = 0; j < nr; j++) cp[i * g->ldc + j] = (accum ? cp[i * g->ldc + j] : 0.0f) + tmp[i * NR + j];
}

/* C[bi][m0 .. m0+mc, n0 .. n0+nc] (+)= one k' slice [kx0, kx0 + kc) of the packed panels.
 * B packed just now (in L2): row block by row block, each against every panel (the A rows stay in L1).
 * B kept packed across executions (host_packcache.c): its panels come from memory, a model's layers evicting each
 * other's between executions (MiniLM: 50 us of a 150 us 112x384x384 GEMM went to the first pass over them). Then
 * panel by panel, every row block against it, and each row block's tile prefetches its share of the next panel's
 * slice into L2 (two lines per k step at most: a whole panel when there is one row block), so the stream overlaps
 * the arithmetic. */
static void gemm_block(const gemm_f32_job *g, int64_t bi, int64_t m0, int64_t mc, int64_t n0, int64_t nc,
                       int64_t kx0, int64_t kc) {
    int64_t w0 = g->kern == KERN_BF16 ? kx0 / 2 : kx0;
    const float *pb = g->pb + (bi * g->n_panels + n0 / NR) * NR * g->kw + w0 * NR;
    if (!g->b_packed) {
        for (int64_t ir = 0; ir < mc; ir += MR)
            for (int64_t jr = 0; jr < nc; jr += NR)
                gemm_tile(g, bi, m0, ir, mc, n0, jr, nc - jr < NR ? nc - jr : NR, kx0, kc, pb + (jr / NR) * NR * g->kw,
                          NULL, 0);
        return;
    }
    int64_t kwords = g->kern == KERN_BF16 ? (kc + 1) / 2 : kc;
    int64_t lines = (NR * kwords * 4 + 63) / 64, blocks = (mc + MR - 1) / MR, share = (lines + blocks - 1) / blocks;
    for (int64_t jr = 0; jr < nc; jr += NR) {
        const float *bp = pb + (jr / NR) * NR * g->kw;
        const char *next = jr + NR < nc ? (const char *)(bp + NR * g->kw) : NULL;
        for (int64_t ir = 0, blk = 0; ir < mc; ir += MR, blk++) {
            int64_t first = blk * share, n = first + share <= lines ? share : lines - first;
            gemm_tile(g, bi, m0, ir, mc, n0, jr, nc - jr < NR ? nc - jr : NR, kx0, kc, bp,
                      next && n > 0 ? next + first * 64 : NULL, n > 0 ? n : 0);
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
        for (int64_t kx0 = 0; kx0 < g->Kx; kx0 += g->kc)
            gemm_block(g, bi, m0, mc, n0, nc, kx0, g->Kx - kx0 < g->kc ? g->Kx - kx0 : g->kc);
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
        if (g->T > 1 && !g->b_packed) tt_host_gemm_pack_b_range(g, bi, jp0, jp1, 0, g->K);
        for (int64_t kx0 = 0; kx0 < g->Kx; kx0 += g->kc) {
            int64_t kc = g->Kx - kx0 < g->kc ? g->Kx - kx0 : g->kc;
            if (g->T == 1 && !g->b_packed) tt_host_gemm_pack_b_range(g, bi, jp0, jp1, kx0, kx0 + kc);
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

void *tt_host_gemm_scratch_get(size_t bytes, bool *cached) {
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

void tt_host_gemm_scratch_put(void *p, bool cached) {
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

/* Whether n contiguous floats hold an exponent of all ones (inf or NaN): integer ORs over 16 lanes, so the loop
 * vectorizes (a strided walk did not: HIGH at 1024^3 spent 1.7 ms of its 9.2 here). */
TT_HOST_VEC_CLONES static bool run_has_nonfinite(const float *restrict x, int64_t n) {
    uint32_t lane[16] = {0};
    int64_t j = 0;
    for (; j + 16 <= n; j += 16)
        for (int t = 0; t < 16; t++) {
            uint32_t u;
            memcpy(&u, &x[j + t], sizeof u);
            lane[t] |= (~u & 0x7f800000u) == 0;
        }
    uint32_t bad = 0;
    for (; j < n; j++) bad |= (~f2u(x[j]) & 0x7f800000u) == 0;
    for (int t = 0; t < 16; t++) bad |= lane[t];
    return bad != 0;
}

static bool all_finite(int64_t batch, int64_t R, int64_t Cn, const float *X, int64_t bs, int64_t rs, int64_t cs) {
    if (rs < cs) { /* walk the contiguous axis innermost (a weight stored [N, K]) */
        int64_t t = R;
        R = Cn, Cn = t, t = rs, rs = cs, cs = t;
    }
    for (int64_t b = 0; b < batch; b++)
        for (int64_t i = 0; i < R; i++) {
            const float *row = X + b * bs + i * rs;
            if (cs == 1) {
                if (run_has_nonfinite(row, Cn)) return false;
            } else {
                for (int64_t j = 0; j < Cn; j++)
                    if ((~f2u(row[j * cs]) & 0x7f800000u) == 0) return false;
            }
        }
    return true;
}

/* The small paths' kernels write C; accumulating, they write a scratch copy that is then added to C. */
static tt_status small_accumulated(gemm_f32_job *g, int64_t batch, int64_t grain) {
    float *C = g->C, *t = malloc((size_t)(batch * g->M * g->N) * sizeof *t);
    if (!t) return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: out of memory for an accumulated product");
    int64_t c_bs = g->c_bs, ldc = g->ldc;
    g->C = t, g->c_bs = g->M * g->N, g->ldc = g->N;
    tt_host_parallel_for(batch, grain, gemm_f32_small_range, g);
    for (int64_t bi = 0; bi < batch; bi++)
        for (int64_t i = 0; i < g->M; i++)
            for (int64_t j = 0; j < g->N; j++) C[bi * c_bs + i * ldc + j] += t[(bi * g->M + i) * g->N + j];
    free(t);
    return TT_OK;
}

static tt_status gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs, int64_t a_rs,
                          int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs, float *C,
                          int64_t c_bs, int64_t ldc, tt_precision prec, bool acc_c) {
    if ((unsigned)prec > TT_PRECISION_FP32) return tt_error(TT_STATUS_INVALID_ARGUMENT, "gemm: bad precision %d", prec);
    if (batch <= 0 || M <= 0 || N <= 0 || (K <= 0 && acc_c)) return TT_OK;
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
                      .ta = terms_a[prec], .tb = terms_b[prec], .acc_c = acc_c};
    g.Kx = K * g.T;
    int64_t work = M * N * g.Kx; /* multiply-adds per batch entry */
    g.vec_split = tt_host_cpu_has("avx512f"); /* the splits' and the small kernels' vector level */
    /* One pass over K <= KC: the small kernel's sums are the blocked f32 kernels' (a single k slice), so which
     * path runs never changes the bits there; faster up to SMALL_WORK(_F32) (host_matmul_internal.h). */
    bool one_pass_small = g.T == 1 && K <= KC && work <= (prec == TT_PRECISION_FP32 ? SMALL_WORK_F32 : SMALL_WORK) &&
                          (K * N <= TT_HOST_SMALL_GEMM_B || (b_cs == 1 && prec == TT_PRECISION_FP32));
    /* A thin exact product (at most a panel of rows, under a panel of columns, K long: a depthwise conv's weight
     * gradient, 64 x 1x9x25088) would be packed into NR-wide B panels, mostly zeros, slice by slice (74 ms for that
     * one); the small kernel runs one fma chain per element over B in place (its sums then differ from a sliced
     * path's, but every shape takes one path). */
    bool thin = prec == TT_PRECISION_FP32 && b_cs == 1 && M <= MR && N < NR;
    if (one_pass_small || thin || work <= 16384) {
        int64_t grain = work > 0 ? (1 << 18) / work + 1 : batch;
        if (acc_c) return small_accumulated(&g, batch, grain);
        tt_host_parallel_for(batch, grain, gemm_f32_small_range, &g);
        return TT_OK;
    }
    if (prec != TT_PRECISION_FP32 && tt_host_gemm_amx_usable()) return tt_host_gemm_amx(&g, batch);
    g.kern = KERN_PORTABLE;
    if (prec != TT_PRECISION_FP32 && tt_host_cpu_has("avx512bf16")) g.kern = KERN_BF16;
    else if (tt_host_cpu_has("avx512f")) g.kern = KERN_AVX512;
    else if (tt_host_cpu_has("avx2") && tt_host_cpu_has("fma")) g.kern = KERN_AVX2;
    g.m_tiles = (M + MC - 1) / MC;
    g.n_tiles = (N + NC - 1) / NC;
    g.m_panels = (M + MR - 1) / MR;
    g.n_panels = (N + NR - 1) / NR;
    g.kw = g.kern == KERN_BF16 ? (g.Kx + 1) / 2 : g.Kx;
    int64_t slices = (g.Kx + KC - 1) / KC; /* equal slices: K = 512 as 2 x 256, not 384 + 128 */
    g.kc = ((g.Kx + slices - 1) / slices + 1) / 2 * 2;
    g.a_direct = prec == TT_PRECISION_FP32 && g.kern != KERN_BF16 && (a_cs == 1 || a_rs == 1);
    double bytes_a = g.a_direct ? 0.0 : (double)batch * (double)g.m_panels * MR * (double)g.kw * 4.0;
    double bytes_b = (double)batch * (double)g.n_panels * NR * (double)g.kw * 4.0;
    if (bytes_a + bytes_b > 1e15) return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: problem too large");
    size_t sa = ((size_t)bytes_a + 63) / 64 * 64, sb = ((size_t)bytes_b + 63) / 64 * 64;
    /* A weight read in place keeps its packed form across executions (host_packcache.c) */
    tt_host_pack_key pk;
    const int64_t layout[TT_HOST_PACK_LAYOUT] = {batch, K, N, b_bs, b_rs, b_cs, g.kern, prec};
    void *cached_b = NULL;
    bool b_ready = false;
    tt_host_pack_entry *pe = tt_host_pack_key_for(B, layout, TT_HOST_PACK_LAYOUT, &pk)
                                 ? tt_host_pack_acquire(&pk, sb, &cached_b, &b_ready)
                                 : NULL;
    bool cached = false;
    void *scratch = tt_host_gemm_scratch_get((pe ? sa : sa + sb) + 64, &cached); /* + 64: never 0 bytes */
    if (!scratch) {
        tt_host_pack_release(pe, false);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: cannot allocate %.0f bytes of packed operands",
                        bytes_a + bytes_b);
    }
    g.pa = scratch;
    g.pb = pe ? cached_b : (float *)((char *)scratch + sa);
    int64_t pgrain_a = 65536 / (MR * g.Kx) + 1, pgrain_b = 65536 / (NR * g.Kx) + 1;
    if (pe && !b_ready) pack_b_whole(&g, batch, pgrain_b);
    g.b_packed = pe != NULL;
    if (!g.a_direct) tt_host_parallel_for(batch * g.m_panels, pgrain_a, gemm_pack_a, &g);
    /* Column blocks when they give every thread work: about NC wide, a multiple of the thread count. */
    int64_t nt = tt_host_num_threads();
    g.col_blocks = (g.n_tiles + nt - 1) / nt * nt;
    g.col_panels = (g.n_panels + g.col_blocks - 1) / g.col_blocks;
    g.col_blocks = (g.n_panels + g.col_panels - 1) / g.col_panels;
    if (batch * g.col_blocks >= nt) {
        int64_t block_work = M * g.col_panels * NR * g.Kx;
        tt_host_parallel_for(batch * g.col_blocks, (1 << 21) / block_work + 1, gemm_f32_cols, &g);
        tt_host_gemm_scratch_put(scratch, cached);
        tt_host_pack_release(pe, true);
        return TT_OK;
    }
    if (!g.b_packed) pack_b_whole(&g, batch, pgrain_b);
    int64_t tiles = batch * g.m_tiles * g.n_tiles;
    int64_t tile_work = (M < MC ? M : MC) * (N < NC ? N : NC) * g.Kx;
    int64_t grain = (1 << 21) / tile_work + 1; /* keep each chunk worth waking a thread for */
    tt_host_parallel_for(tiles, grain, gemm_f32_tiles, &g);
    tt_host_gemm_scratch_put(scratch, cached);
    tt_host_pack_release(pe, true);
    return TT_OK;
}

tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec) {
    return gemm_f32(batch, M, N, K, A, a_bs, a_rs, a_cs, B, b_bs, b_rs, b_cs, C, c_bs, ldc, prec, false);
}

tt_status tt_host_gemm_f32_acc(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                               int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                               float *C, int64_t c_bs, int64_t ldc, tt_precision prec) {
    return gemm_f32(batch, M, N, K, A, a_bs, a_rs, a_cs, B, b_bs, b_rs, b_cs, C, c_bs, ldc, prec, true);
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
