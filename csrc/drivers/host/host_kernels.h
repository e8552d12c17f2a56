/* host_kernels.h — internal interface between the host driver's interpreter (host_driver.c, host_exec.c) and its
 * heavy kernels (matmul, convolution, windows) and thread pool. Not a public header.
 *
 * Kernels take contiguous row-major buffers laid out as the node's operand and result types (tt_ir_type of the
 * program's values) and write the full result. They dispatch on CPU features at run time.
 */
#ifndef TT_HOST_KERNELS_H
#define TT_HOST_KERNELS_H

#include "tt_core.h"
#include "tt_driver.h"
#include "tt_ir.h"

#include <string.h>

/* The hot typed loops are built for several x86-64 levels and the loader picks one for the CPU (baseline x86-64
 * is SSE2: 4 lanes; v3 adds AVX2 and FMA, so an explicit fmaf vectorizes; v4 AVX-512). The loops are IEEE
 * arithmetic without contraction (-std=c11), so every clone gives the same bits; only the speed differs. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define TT_HOST_VEC_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define TT_HOST_VEC_CLONES
#endif

/* dot_general with the node's dimension numbers and precision. Operand dtypes: f32, bf16, f16, f64, integers. */
tt_status tt_host_dot_general(const tt_ir_program *p, const tt_ir_node *node, const void *lhs, const void *rhs,
                              void *out);
/* The same on explicit operand types and dot attributes. */
tt_status tt_host_dot(const tt_ir_type *lt, const tt_ir_type *rt, const tt_ir_type *ot, const tt_ir_attrs *attrs,
                      const void *lhs, const void *rhs, void *out);
/* A dot operand of type t stored densely in the dim order perm (perm[k]: the k-th slowest dim in memory, as a
 * transposed weight is): its dense type in *base and its batch / contracting dims renumbered to it. False (nothing
 * changed) when its free dims would change order, which would change the result's layout. */
bool tt_host_dot_unpermute(const tt_ir_type *t, const int8_t *perm, tt_ir_dims *batch, tt_ir_dims *contract,
                           tt_ir_type *base);
/* convolution in PyTorch layouts (input N,C,spatial...; kernel O,I/groups,spatial...; output N,O,spatial...)
 * with the node's strides, padding, dilations, feature and batch group counts and precision. */
tt_status tt_host_convolution(const tt_ir_program *p, const tt_ir_node *node, const void *input, const void *kernel,
                              void *out);
/* reduce_window with the node's attributes. */
tt_status tt_host_reduce_window(const tt_ir_program *p, const tt_ir_node *node, const void *x, void *out);

/* GEMMs shared by dot_general and convolution (host_matmul_gemm.c): C[b] = A[b] . B[b] for row-major panels;
 * f32 operands follow the TPU precision modes (DEFAULT one bf16 pass, HIGH 3, HIGHEST 6, FP32 exact). */
tt_status tt_host_gemm_f32(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                           int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                           float *C, int64_t c_bs, int64_t ldc, tt_precision prec);
/* The same summed into C: C[b] += A[b] . B[b] (each sum starts from C's value, in f32). */
tt_status tt_host_gemm_f32_acc(int64_t batch, int64_t M, int64_t N, int64_t K, const float *A, int64_t a_bs,
                               int64_t a_rs, int64_t a_cs, const float *B, int64_t b_bs, int64_t b_rs, int64_t b_cs,
                               float *C, int64_t c_bs, int64_t ldc, tt_precision prec);
tt_status tt_host_gemm_f64(int64_t batch, int64_t M, int64_t N, int64_t K, const double *A, int64_t a_bs,
                           const double *B, int64_t b_bs, double *C, int64_t c_bs, int64_t ldc);
tt_status tt_host_gemm_i64(int64_t batch, int64_t M, int64_t N, int64_t K, const int64_t *A, int64_t a_bs,
                           const int64_t *B, int64_t b_bs, int64_t *C, int64_t c_bs, int64_t ldc);
/* Typed row loads/stores through the compute dtype (host_matmul.c). */
void tt_host_load_row(tt_dtype dt, const void *src, int64_t off, int64_t stride, int64_t n, tt_dtype to,
                      void *dst);
void tt_host_store_row(tt_dtype from, const void *src, int64_t n, tt_dtype dt, void *dst, int64_t off);
int tt_host_compute_dtype(tt_dtype dt);
/* Whether the CPU has a feature ("avx512bf16", "avx512f", "avx2") and TORCHTPU_HOST_ISA allows it (host_pool.c). */
int tt_host_cpu_has(const char *feature);

/* The f32 GEMM's register tile (host_matmul_kern.c): c[rows x NR] (row stride ldc, rows 1..MR) = or, with
 * accum, += a x packed panel b [kc][NR]. The f32 kernels read a's element (i, k) at a[i*a_rs + k*a_cs]: a packed
 * panel [kc][MR] (a_rs = 1, a_cs = MR) or exact f32 values in place. The bf16 kernel takes only packed pairs (kc
 * counts k' values, a_rs and a_cs are ignored). */
#define TT_GEMM_MR 14
#define TT_GEMM_NR 32
enum { TT_GEMM_KERN_PORTABLE, TT_GEMM_KERN_AVX2, TT_GEMM_KERN_AVX512, TT_GEMM_KERN_BF16 };
/* pf: pf_lines cache lines from pf (at most two per k step) are prefetched into L2 while the tile runs (the AVX-512
 * kernels; the others ignore it; NULL: none). */
void tt_host_gemm_micro(int kern, int64_t kc, const void *a, int64_t a_rs, int64_t a_cs, const void *b, float *c,
                        int64_t ldc, int accum, int rows, const void *pf, int64_t pf_lines);

/* One batch entry of a one-pass f32 GEMM too small to pack (host_matmul_small.c): C = A . B with A read as
 * A[i*a_rs + k*a_cs], B as B[k*b_rs + j*b_cs], operands rounded to bf16 where round_a / round_b (DEFAULT) or exact
 * (FP32); each C element the in-order fma chain over k. K*N <= TT_HOST_SMALL_GEMM_B unless B's rows are contiguous
 * and unrounded. */
#define TT_HOST_SMALL_GEMM_B 16384
typedef struct tt_host_small_gemm {
    int64_t M, N, K;
    const float *A;
    int64_t a_rs, a_cs;
    const float *B;
    int64_t b_rs, b_cs;
    float *C;
    int64_t ldc;
    bool round_a, round_b;
    bool avx512; /* the register-tile kernels (the caller asks tt_host_cpu_has once per GEMM) */
} tt_host_small_gemm;
tt_status tt_host_gemm_f32_small(const tt_host_small_gemm *s); /* an error if B does not fit */
/* Round to the nearest bf16 (ties to even; NaN stays a quiet NaN), returned as an f32 value. */
static inline float tt_host_bf16_round(float x) {
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u, q = (u | 0x00400000u) & 0xffff0000u;
    u = (u & 0x7fffffffu) > 0x7f800000u ? q : r;
    memcpy(&x, &u, sizeof x);
    return x;
}

/* Thread pool: runs fn over [0, n) split into chunks of at least grain, on all worker threads plus the caller.
 * Runs inline when n <= grain or when called from inside a pool task. */
typedef void (*tt_host_range_fn)(void *user, int64_t begin, int64_t end);
void tt_host_parallel_for(int64_t n, int64_t grain, tt_host_range_fn fn, void *user);

#endif
