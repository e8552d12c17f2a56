/* host_matmul_amx.c — the f32 GEMM's bf16 passes (DEFAULT, HIGH, HIGHEST) on AMX tiles.
 *
 * The same terms as the vector kernels (host_matmul_gemm.c): each operand value split into bf16 parts, the k axis
 * expanded T-fold (k' = k*T + t, term t multiplying part ta[t] of A by part tb[t] of B), every product summed in
 * f32. Packing writes the layouts the tiles load, k' padded with zeros to a multiple of 32:
 *   A  row-major bf16, [M rounded up to 32][Kp]: a tile is 16 rows x 32 k' (64-byte rows, Kp * 2 bytes apart);
 *   B  16-column panels of k' pairs, [N / 16][Kp / 2][16][2]: a tile is 16 pairs x 16 columns, 1 KB contiguous.
 * A 32 x 32 block of C is four f32 accumulator tiles fed by two A and two B tiles per 32 k' (AMX's eight tiles),
 * one k' slice at a time (stored and reloaded between slices, through a scratch block at the edges); tasks
 * and slices keep a slice of B's columns in L2 while the rows run against it. tdpbf16ps sums each pair in f32 and
 * flushes denormal inputs and results, as vdpbf16ps does.
 */
#include "host_internal.h"
#include "host_matmul_internal.h"

#include <stdlib.h>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define AMX_ROWS 32  /* rows of a C block (two A tiles) */
#define AMX_COLS 32  /* columns of a C block (two B tiles) */
#define AMX_KT 32    /* k' per tile */
#define AMX_CHUNK 128 /* original k split per step */
#define AMX_NCB 256   /* columns of C per task */
#define AMX_KCB 512   /* k' per slice (a multiple of AMX_KT) */

typedef struct amx_job {
    const gemm_f32_job *g;
    int64_t Kp, Mp, Np;    /* padded k', rows, columns */
    int64_t lda;           /* A's row pitch in bf16: Kp and one more cache line, so that a tile's 16 rows do not
                            * all fall in one L1 set when Kp * 2 is a multiple of 4 KB */
    uint16_t *ap, *bp;     /* packed A [batch][Mp][Kp], B [batch][Np / 16][Kp / 2][32] */
    int64_t strips;        /* 32-row strips of C per batch entry */
    int64_t ncb;           /* columns of C per task (a multiple of AMX_COLS, at most AMX_NCB) */
    int64_t mparts;        /* tasks per (batch entry, column group): shares of the strips */
} amx_job;

/* ex[k * T + t] = part terms[t] of src[k * stride], k < n: the expanded k' axis of n original values, bf16-exact
 * floats (n <= AMX_CHUNK). */
static void expand(const gemm_f32_job *g, const uint8_t *terms, const float *src, int64_t stride, int64_t n,
                   float *ex) {
    float part[3][AMX_CHUNK];
    if (g->T == 1 && terms[0] == PART_HI) {
        tt_host_gemm_split_row(src, stride, n, false, true, g->vec_split, ex, part[1], part[2]);
        return;
    }
    tt_host_gemm_split_row(src, stride, n, false, false, g->vec_split, part[0], part[1], part[2]);
    for (int64_t k = 0; k < n; k++)
        for (int64_t t = 0; t < g->T; t++) ex[k * g->T + t] = part[terms[t]][k];
}

/* The bf16 bits of bf16-exact floats; a pair row of two expanded B rows, 16 columns (even k' in the low half);
 * 32 consecutive k' of one column as 16 pairs. */
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static void bf16_bits(const float *src, int64_t n, uint16_t *dst) {
    int64_t i = 0;
    for (; i + 16 <= n; i += 16)
        _mm256_storeu_si256((__m256i *)(void *)(dst + i),
                            _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_loadu_si512((const void *)(src + i)), 16)));
    for (; i < n; i++) dst[i] = (uint16_t)(f2u(src[i]) >> 16);
}

__attribute__((target("avx512f"))) static void bf16_pairs16(const float *even, const float *odd, uint32_t *dst) {
    __m512i e = _mm512_loadu_si512((const void *)even), o = _mm512_loadu_si512((const void *)odd);
    __m512i w = _mm512_or_si512(_mm512_srli_epi32(e, 16), _mm512_and_si512(o, _mm512_set1_epi32((int)0xffff0000u)));
    _mm512_storeu_si512((void *)dst, w);
}

__attribute__((target("avx512f"))) static void bf16_pairs16_strided(const float *v, uint32_t *dst) {
    __m512i idx_e = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    __m512i idx_o = _mm512_add_epi32(idx_e, _mm512_set1_epi32(1));
    __m512i lo = _mm512_loadu_si512((const void *)v), hi = _mm512_loadu_si512((const void *)(v + 16));
    __m512i e = _mm512_permutex2var_epi32(lo, idx_e, hi), o = _mm512_permutex2var_epi32(lo, idx_o, hi);
    __m512i w = _mm512_or_si512(_mm512_srli_epi32(e, 16), _mm512_and_si512(o, _mm512_set1_epi32((int)0xffff0000u)));
    _mm512_storeu_si512((void *)dst, w);
}
#endif

/* A's rows [r0, r1) of every batch entry (rows past M zero), k' past Kx zero. */
static void amx_pack_a(void *user, int64_t r0, int64_t r1) {
    const amx_job *j = user;
    const gemm_f32_job *g = j->g;
    float ex[AMX_CHUNK * 6];
    for (int64_t r = r0; r < r1; r++) {
        int64_t bi = r / j->Mp, m = r % j->Mp;
        uint16_t *dst = j->ap + r * j->lda;
        if (m >= g->M) {
            memset(dst, 0, (size_t)j->Kp * sizeof *dst);
            continue;
        }
        const float *row = g->A + bi * g->a_bs + m * g->a_rs;
        for (int64_t k0 = 0; k0 < g->K; k0 += AMX_CHUNK) {
            int64_t n = g->K - k0 < AMX_CHUNK ? g->K - k0 : AMX_CHUNK;
            expand(g, g->ta, row + k0 * g->a_cs, g->a_cs, n, ex);
#if defined(__x86_64__)
            bf16_bits(ex, n * g->T, dst + k0 * g->T);
#else
            for (int64_t i = 0; i < n * g->T; i++) dst[k0 * g->T + i] = (uint16_t)(f2u(ex[i]) >> 16);
#endif
        }
        for (int64_t kx = g->Kx; kx < j->Kp; kx++) dst[kx] = 0;
    }
}

/* B packed: column c's term k' at panel c / 16, pair row k' / 2, lane (c % 16) * 2 + (k' & 1); the buffer is zeroed
 * first (columns past N, k' past Kx). Split along B's contiguous axis: rows of B [K, N] (tasks: batch entry x row
 * block; expanded rows combined in pairs, 16 columns = one 64-byte tile row), or columns (a weight stored [N, K];
 * tasks: 16-column panels; 32 k' of each column paired, then 16 columns transposed into 16 tile rows). Other
 * strides (and machines without AVX-512) go element by element. */
#define AMX_B_ROWS 16 /* even: a task's first k' is even for every T */
static uint16_t *b_slot(const amx_job *j, int64_t bi, int64_t c, int64_t kx) {
    return j->bp + ((bi * (j->Np / 16) + c / 16) * (j->Kp / 2) + (kx >> 1)) * 32 + (c % 16) * 2 + (kx & 1);
}

static void amx_pack_b_rows(void *user, int64_t r0, int64_t r1) {
    const amx_job *j = user;
    const gemm_f32_job *g = j->g;
    int64_t blocks = (g->K + AMX_B_ROWS - 1) / AMX_B_ROWS, T = g->T;
    float part[3][AMX_CHUNK], even[AMX_CHUNK];
    for (int64_t r = r0; r < r1; r++) {
        int64_t bi = r / blocks, k0 = (r % blocks) * AMX_B_ROWS, k1 = k0 + AMX_B_ROWS < g->K ? k0 + AMX_B_ROWS : g->K;
        const float *B = g->B + bi * g->b_bs;
        for (int64_t c0 = 0; c0 < g->N; c0 += AMX_CHUNK) {
            int64_t nc = g->N - c0 < AMX_CHUNK ? g->N - c0 : AMX_CHUNK, n16 = (nc + 15) / 16 * 16;
            for (int64_t k = k0; k < k1; k++) {
                tt_host_gemm_split_row(B + k * g->b_rs + c0, 1, nc, false, T == 1, g->vec_split, part[0], part[1],
                                       part[2]);
                for (int p = 0; p < 3; p++)
                    for (int64_t c = nc; c < n16; c++) part[p][c] = 0.0f;
                for (int64_t t = 0; t < T; t++) {
                    int64_t kx = k * T + t;
                    const float *row = part[g->tb[t]];
#if defined(__x86_64__)
                    if (g->vec_split) {
                        if ((kx & 1) == 0 && kx + 1 < g->Kx) { /* an even k' waits for its pair (the last, zeros) */
                            memcpy(even, row, (size_t)n16 * sizeof *even);
                            continue;
                        }
                        static const float zeros[AMX_CHUNK];
                        const float *e = (kx & 1) ? even : row, *o = (kx & 1) ? row : zeros;
                        for (int64_t c = 0; c < n16; c += 16)
                            bf16_pairs16(e + c, o + c, (uint32_t *)(void *)b_slot(j, bi, c0 + c, kx & ~(int64_t)1));
                        continue;
                    }
#endif
                    for (int64_t c = 0; c < nc; c++) *b_slot(j, bi, c0 + c, kx) = (uint16_t)(f2u(row[c]) >> 16);
                }
            }
        }
    }
}

static void amx_pack_b(void *user, int64_t p0, int64_t p1) {
    const amx_job *j = user;
    const gemm_f32_job *g = j->g;
    int64_t panels = j->Np / 16, T = g->T;
    float ex[16][32 * 6];
    for (int64_t p = p0; p < p1; p++) {
        int64_t bi = p / panels, c0 = (p % panels) * 16;
        uint16_t *panel = j->bp + p * (j->Kp / 2) * 32;
        const float *B = g->B + bi * g->b_bs;
        int64_t nc = g->N - c0 < 16 ? g->N - c0 : 16;
        /* 32 original k at a time: 32 * T k', a whole number of 32-k' tile blocks */
        for (int64_t k0 = 0; k0 < g->K; k0 += 32) {
            int64_t n = g->K - k0 < 32 ? g->K - k0 : 32;
            for (int64_t c = 0; c < 16; c++) {
                if (c < nc) expand(g, g->tb, B + k0 * g->b_rs + (c0 + c) * g->b_cs, g->b_rs, n, ex[c]);
                for (int64_t i = c < nc ? n * T : 0; i < 32 * T; i++) ex[c][i] = 0.0f;
            }
#if defined(__x86_64__)
            if (g->vec_split) {
                uint32_t words[16][16];
                for (int64_t b = 0; b < T && k0 * T + 32 * b < j->Kp; b++) { /* the last blocks may pass Kp */
                    for (int64_t c = 0; c < 16; c++) bf16_pairs16_strided(ex[c] + 32 * b, words[c]);
                    tt_host_transpose16((const float *)(void *)&words[0][0], 16,
                                        (float *)(void *)(panel + (k0 * T + 32 * b) * 16), 16);
                }
                continue;
            }
#endif
            for (int64_t c = 0; c < nc; c++)
                for (int64_t i = 0; i < n * T; i++) {
                    int64_t kx = k0 * T + i;
                    panel[(kx >> 1) * 32 + c * 2 + (kx & 1)] = (uint16_t)(f2u(ex[c][i]) >> 16);
                }
        }
    }
}

#if defined(__x86_64__)
typedef struct amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_config;

/* One 32 x 32 block of C, rows m0.. and columns n0.. of batch entry bi, plus k' in [kx0, kx1): the block starts
 * from zero (kx0 == 0, unless the job accumulates into C) or from C (f32 stored and reloaded exactly, so slicing k' changes no bit). */
__attribute__((target("amx-tile,amx-bf16"))) static void amx_block(const amx_job *j, int64_t bi, int64_t m0,
                                                                    int64_t n0, int64_t kx0, int64_t kx1) {
    const gemm_f32_job *g = j->g;
    const uint16_t *a = j->ap + (bi * j->Mp + m0) * j->lda;
    const uint16_t *b0 = j->bp + (bi * (j->Np / 16) + n0 / 16) * (j->Kp / 2) * 32, *b1 = b0 + (j->Kp / 2) * 32;
    int64_t lda = j->lda * 2, ldc = g->ldc * (int64_t)sizeof(float);
    float *C = g->C + bi * g->c_bs + m0 * g->ldc + n0;
    bool full = m0 + AMX_ROWS <= g->M && n0 + AMX_COLS <= g->N;
    float t[AMX_ROWS][AMX_COLS]; /* an edge block's C */
    float *c = full ? C : &t[0][0];
    int64_t ldt = full ? ldc : (int64_t)sizeof t[0], rs = full ? g->ldc : AMX_COLS;
    if (kx0 == 0 && !g->acc_c) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    } else {
        if (!full) {
            memset(t, 0, sizeof t);
            for (int64_t i = 0; i < AMX_ROWS && m0 + i < g->M; i++)
                for (int64_t q = 0; q < AMX_COLS && n0 + q < g->N; q++) t[i][q] = C[i * g->ldc + q];
        }
        _tile_loadd(0, c, ldt);
        _tile_loadd(1, c + 16, ldt);
        _tile_loadd(2, c + 16 * rs, ldt);
        _tile_loadd(3, c + 16 * rs + 16, ldt);
    }
    for (int64_t kx = kx0; kx < kx1; kx += AMX_KT) {
        _tile_loadd(4, a + kx, lda);
        _tile_loadd(5, a + 16 * j->lda + kx, lda);
        _tile_loadd(6, b0 + kx * 16, 64);
        _tile_loadd(7, b1 + kx * 16, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, c, ldt);
    _tile_stored(1, c + 16, ldt);
    _tile_stored(2, c + 16 * rs, ldt);
    _tile_stored(3, c + 16 * rs + 16, ldt);
    if (!full)
        for (int64_t i = 0; i < AMX_ROWS && m0 + i < g->M; i++)
            for (int64_t q = 0; q < AMX_COLS && n0 + q < g->N; q++) C[i * g->ldc + q] = t[i][q];
}

/* Tasks: (batch entry, ncb columns, a share of the row strips). Per k' slice of AMX_KCB, the columns' B
 * (AMX_KCB x AMX_NCB bf16: 256 KB at most) stays in L2 while every strip's A slice runs against it. */
__attribute__((target("amx-tile,amx-bf16"))) static void amx_tasks(void *user, int64_t t0, int64_t t1) {
    const amx_job *j = user;
    amx_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    int64_t groups = (j->g->N + j->ncb - 1) / j->ncb, per_part = (j->strips + j->mparts - 1) / j->mparts;
    for (int64_t t = t0; t < t1; t++) {
        int64_t bi = t / (groups * j->mparts), r = t % (groups * j->mparts);
        int64_t c0 = (r / j->mparts) * j->ncb, s0 = (r % j->mparts) * per_part;
        int64_t c1 = c0 + j->ncb < j->g->N ? c0 + j->ncb : j->g->N;
        int64_t s1 = s0 + per_part < j->strips ? s0 + per_part : j->strips;
        for (int64_t kx0 = 0; kx0 < j->Kp; kx0 += AMX_KCB) {
            int64_t kx1 = kx0 + AMX_KCB < j->Kp ? kx0 + AMX_KCB : j->Kp;
            for (int64_t s = s0; s < s1; s++)
                for (int64_t n0 = c0; n0 < c1; n0 += AMX_COLS) amx_block(j, bi, s * AMX_ROWS, n0, kx0, kx1);
        }
    }
    _tile_release();
}
#endif

bool tt_host_gemm_amx_usable(void) {
#if defined(__x86_64__)
    return tt_host_cpu_has("amx");
#else
    return false;
#endif
}

tt_status tt_host_gemm_amx(const gemm_f32_job *g, int64_t batch) {
#if defined(__x86_64__)
    amx_job j = {.g = g};
    j.Kp = (g->Kx + AMX_KT - 1) / AMX_KT * AMX_KT;
    j.lda = j.Kp + 32;
    j.Mp = (g->M + AMX_ROWS - 1) / AMX_ROWS * AMX_ROWS;
    j.Np = (g->N + AMX_COLS - 1) / AMX_COLS * AMX_COLS;
    j.strips = j.Mp / AMX_ROWS;
    double elems = (double)batch * (double)(j.Mp + j.Np) * (double)j.lda;
    if (elems > 1e14) return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: problem too large");
    size_t sa = ((size_t)batch * (size_t)j.Mp * (size_t)j.lda * 2 + 63) / 64 * 64;
    size_t sb = ((size_t)batch * (size_t)j.Np * (size_t)j.Kp * 2 + 63) / 64 * 64;
    /* A weight read in place keeps its packed form across executions (host_packcache.c); -1: the AMX layout */
    tt_host_pack_key pk;
    const int64_t layout[TT_HOST_PACK_LAYOUT] = {batch, g->K, g->N, g->b_bs, g->b_rs, g->b_cs, -1, g->T};
    void *cached_b = NULL;
    bool b_ready = false;
    tt_host_pack_entry *pe = tt_host_pack_key_for(g->B, layout, TT_HOST_PACK_LAYOUT, &pk)
                                 ? tt_host_pack_acquire(&pk, sb, &cached_b, &b_ready)
                                 : NULL;
    bool cached = false;
    j.ap = tt_host_gemm_scratch_get(pe ? sa : sa + sb, &cached);
    if (!j.ap) {
        tt_host_pack_release(pe, false);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "gemm: cannot allocate %zu bytes of packed operands", sa + sb);
    }
    j.bp = pe ? (uint16_t *)cached_b : (uint16_t *)((char *)j.ap + sa);
    int64_t row_work = g->K * g->T, grain = 65536 / row_work + 1;
    tt_host_parallel_for(batch * j.Mp, grain, amx_pack_a, &j);
    if (!b_ready) {
        memset(j.bp, 0, sb);
        if (g->b_cs == 1)
            tt_host_parallel_for(batch * ((g->K + AMX_B_ROWS - 1) / AMX_B_ROWS),
                                 65536 / (AMX_B_ROWS * g->N * g->T) + 1, amx_pack_b_rows, &j);
        else tt_host_parallel_for(batch * (j.Np / 16), 65536 / (16 * row_work) + 1, amx_pack_b, &j);
    }
    /* Enough tasks for every thread. Few rows (a linear layer on a short batch: B's bytes outweigh the arithmetic,
     * 16 MACs per byte at 32 rows): narrower column groups (down to AMX_COLS), so that each task reads only its own
     * columns of B and each B byte comes from memory once while N has columns for 2 tasks a thread (splitting the
     * strips instead made two tasks read the same columns: MiniLM's 112 x 384 x 384 at DEFAULT read its 295 KB weight
     * twice). Else, and beyond that, split the row strips when batch entries x column groups are too few. */
    int64_t nt = tt_host_num_threads();
    j.ncb = AMX_NCB;
    if (j.strips <= 8) {
        int64_t want = (2 * nt + batch - 1) / batch; /* column groups per batch entry: 2 tasks a thread */
        int64_t per = (g->N + want - 1) / want;
        per = (per + AMX_COLS - 1) / AMX_COLS * AMX_COLS;
        if (per < j.ncb) j.ncb = per;
    }
    int64_t groups = (g->N + j.ncb - 1) / j.ncb;
    j.mparts = (2 * nt + batch * groups - 1) / (batch * groups);
    if (j.mparts > j.strips) j.mparts = j.strips;
    int64_t task_work = (j.strips / j.mparts + 1) * AMX_ROWS * j.ncb * j.Kp;
    tt_host_parallel_for(batch * groups * j.mparts, (1 << 22) / task_work + 1, amx_tasks, &j);
    tt_host_gemm_scratch_put(j.ap, cached);
    tt_host_pack_release(pe, true);
    return TT_OK;
#else
    (void)g;
    (void)batch;
    return tt_error(TT_STATUS_UNSUPPORTED, "gemm: AMX is x86 only");
#endif
}
