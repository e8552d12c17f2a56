/* peak.c — this machine's arithmetic limits with all cores: f32 FMA (AVX-512F, else AVX2+FMA), bf16 dot
 * (AVX512-BF16 vdpbf16ps) and AMX bf16 tiles (tdpbf16ps), in GFLOP/s (a multiply-add counts as 2).
 *
 *   build/peak [threads] [--json]
 *
 * Each thread runs independent accumulator chains in registers, enough of them to cover the instruction's
 * latency on every core seen (24 for f32 FMA and bf16 dot; 8 tiles' worth for AMX), so the figure is the
 * issue rate of the arithmetic units, not of a dependency chain. GEMM benchmarks print their results as a
 * fraction of these numbers. Levels the CPU lacks are reported as 0.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <immintrin.h>
#include <sys/syscall.h>
#endif

#define ITERS 2000000L

typedef struct peak_job {
    int kind;
    double flops;
    volatile float sink;
} peak_job;

enum { KIND_F32, KIND_BF16, KIND_AMX, KIND_COUNT };
static const char *kind_name[KIND_COUNT] = {"f32_fma", "bf16_dot", "amx_bf16"};

#if defined(__x86_64__)
#define REP24(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) \
                 X(12) X(13) X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)

/* One kernel per level: 24 accumulators of type VEC, each STEP'd per iteration, summed at the end so nothing is
 * optimized away; FLOPS per instruction and accumulator. */
#define PEAK_KERNEL(NAME, TARGET, VEC, INIT, STEP, ADD, SUM, FLOPS)                                  \
    __attribute__((target(TARGET))) static double NAME(volatile float *sink) {                      \
        INIT                                                                                         \
        REP24(DECL)                                                                                  \
        for (long it = 0; it < ITERS; it++) {                                                        \
            REP24(STEP)                                                                              \
            __asm__ volatile("" ::: "memory");                                                       \
        }                                                                                            \
        VEC s = c0;                                                                                  \
        REP24(ADD)                                                                                   \
        *sink = SUM;                                                                                 \
        return (double)(FLOPS) * 24 * ITERS;                                                         \
    }

#define DECL(i) __m512 c##i = _mm512_set1_ps((float)(i));
#define FMA512(i) c##i = _mm512_fmadd_ps(a, c##i, b);
#define ADD512(i) s = _mm512_add_ps(s, c##i);
#define INIT_F32_512 __m512 a = _mm512_set1_ps(1.0000001f), b = _mm512_set1_ps(0.9999999f);
PEAK_KERNEL(run_f32_avx512, "avx512f", __m512, INIT_F32_512, FMA512, ADD512, _mm512_reduce_add_ps(s), 2 * 16)
#define DOT512(i) c##i = _mm512_dpbf16_ps(c##i, a, b);
#define INIT_BF16 __m512bh a = (__m512bh)_mm512_set1_epi32(0x3f803f80), b = (__m512bh)_mm512_set1_epi32(0x3f7f3f7f);
PEAK_KERNEL(run_bf16, "avx512bf16,avx512f,avx512bw,avx512vl", __m512, INIT_BF16, DOT512, ADD512,
            _mm512_reduce_add_ps(s), 2 * 32)
#undef DECL
#define DECL(i) __m256 c##i = _mm256_set1_ps((float)(i));
#define FMA256(i) c##i = _mm256_fmadd_ps(a, c##i, b);
#define ADD256(i) s = _mm256_add_ps(s, c##i);
#define INIT_F32_256 __m256 a = _mm256_set1_ps(1.0000001f), b = _mm256_set1_ps(0.9999999f);
PEAK_KERNEL(run_f32_avx2, "avx2,fma", __m256, INIT_F32_256, FMA256, ADD256, _mm256_cvtss_f32(s), 2 * 8)
#undef DECL

/* AMX: 8 tiles of state; 4 accumulators (tmm0-3) fed by two A tiles (tmm4-5) and two B tiles (tmm6-7), each
 * tdpbf16ps a 16 x 16 x 32 multiply-add. The kernel must grant the process the tile data state first. */
typedef struct amx_config {
    uint8_t palette, start_row, reserved[14];
    uint16_t colsb[16];
    uint8_t rows[16];
} amx_config;

static int amx_permitted(void) {
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}

__attribute__((target("amx-tile,amx-bf16"))) static double run_amx(volatile float *sink) {
    amx_config cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) cfg.rows[t] = 16, cfg.colsb[t] = 64;
    _tile_loadconfig(&cfg);
    static _Alignas(64) uint16_t src[16 * 32];
    for (int i = 0; i < 16 * 32; i++) src[i] = 0x3f80;
    _tile_loadd(4, src, 64);
    _tile_loadd(5, src, 64);
    _tile_loadd(6, src, 64);
    _tile_loadd(7, src, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    long iters = ITERS / 16;
    for (long it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
    }
    static _Thread_local _Alignas(64) float out[16 * 16];
    _tile_stored(0, out, 64);
    *sink = out[0];
    _tile_release();
    return 2.0 * 16 * 16 * 32 * 4 * iters;
}
#endif

static int has(const char *feature) {
#if defined(__x86_64__)
    if (!strcmp(feature, "avx512f")) return __builtin_cpu_supports("avx512f");
    if (!strcmp(feature, "avx2")) return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    if (!strcmp(feature, "avx512bf16")) return __builtin_cpu_supports("avx512bf16");
    if (!strcmp(feature, "amx")) return __builtin_cpu_supports("amx-bf16") && amx_permitted();
#else
    (void)feature;
#endif
    return 0;
}

static void *worker(void *arg) {
    peak_job *j = arg;
    j->flops = 0;
#if defined(__x86_64__)
    if (j->kind == KIND_F32) j->flops = has("avx512f") ? run_f32_avx512(&j->sink) : run_f32_avx2(&j->sink);
    else if (j->kind == KIND_BF16) j->flops = run_bf16(&j->sink);
    else j->flops = run_amx(&j->sink);
#endif
    return NULL;
}

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Best of three runs of `threads` workers at once: GFLOP/s summed over threads. */
static double measure(int kind, int threads) {
    double best = 0;
    for (int rep = 0; rep < 3; rep++) {
        pthread_t tid[256];
        peak_job jobs[256];
        double t0 = now();
        for (int t = 0; t < threads; t++) {
            jobs[t].kind = kind;
            if (pthread_create(&tid[t], NULL, worker, &jobs[t]) != 0) return 0;
        }
        double flops = 0;
        for (int t = 0; t < threads; t++) {
            pthread_join(tid[t], NULL);
            flops += jobs[t].flops;
        }
        double g = flops / (now() - t0) / 1e9;
        if (g > best) best = g;
    }
    return best;
}

int main(int argc, char **argv) {
    int threads = (int)sysconf(_SC_NPROCESSORS_ONLN), json = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--json")) json = 1;
        else threads = atoi(argv[i]);
    }
    if (threads < 1 || threads > 256) {
        fprintf(stderr, "peak: threads must be 1..256\n");
        return 2;
    }
    int avail[KIND_COUNT] = {has("avx512f") || has("avx2"), has("avx512bf16"), has("amx")};
    double g[KIND_COUNT];
    for (int k = 0; k < KIND_COUNT; k++) g[k] = avail[k] ? measure(k, threads) : 0.0;
    if (json) {
        printf("{\"threads\": %d, \"f32_isa\": \"%s\"", threads, has("avx512f") ? "avx512f" : "avx2");
        for (int k = 0; k < KIND_COUNT; k++) printf(", \"%s\": %.1f", kind_name[k], g[k]);
        printf("}\n");
        return 0;
    }
    printf("peak GFLOP/s with %d threads (multiply-add = 2 flops; 0 = not available)\n", threads);
    for (int k = 0; k < KIND_COUNT; k++) printf("  %-9s %9.1f\n", kind_name[k], g[k]);
    return 0;
}
