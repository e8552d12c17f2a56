/* host_math.c — vectorizable f32 exp and tanh for the hot elementwise loops (softmax, gelu-tanh, sigmoid).
 *
 * libm's expf/tanhf are scalar calls (7-30 ns each here). These evaluate in double precision with branch-free
 * code the compiler vectorizes: exp(x) = 2^k * P(r), x = k ln2 + r, |r| <= ln2/2, P the degree-11 Taylor
 * polynomial (relative error < 1e-14); tanh(|x|) = e / (e + 2) with e = expm1(2|x|) built the same way, so small
 * arguments keep full relative accuracy. The double result is rounded once to f32, which makes both functions
 * correctly rounded except within ~1e-14 relative of a rounding tie: they agree with glibc's expf/tanhf except
 * for rare 1-ulp differences.
 */
#include "host_internal.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define LOG2E 1.4426950408889634074
#define LN2_HI 6.93147180369123816490e-01 /* ln 2 with trailing zero bits: k * LN2_HI is exact for |k| < 2^20 */
#define LN2_LO 1.90821492927058770002e-10
#define SHIFT 0x1.8p52                    /* adding it rounds a double to an integer, kept in the low bits */

/* 1/n! for the Taylor polynomials. */
#define C2 (1.0 / 2)
#define C3 (1.0 / 6)
#define C4 (1.0 / 24)
#define C5 (1.0 / 120)
#define C6 (1.0 / 720)
#define C7 (1.0 / 5040)
#define C8 (1.0 / 40320)
#define C9 (1.0 / 362880)
#define C10 (1.0 / 3628800)
#define C11 (1.0 / 39916800)
#define C12 (1.0 / 479001600)

/* expm1(r) - r for |r| <= ln2/2, divided by r^2 -- Horner in r. */
static inline double tail(double r) {
    return C2 + r * (C3 + r * (C4 + r * (C5 + r * (C6 + r * (C7 + r * (C8 + r * (C9 + r * (C10 + r * (C11 + r * C12)))))))));
}

/* 2^k for the integer k held in t = k + SHIFT (its low mantissa bits, two's complement). */
static inline double pow2_of(double t) {
    uint64_t bits;
    memcpy(&bits, &t, 8);
    uint64_t e = (bits - 0x4338000000000000ull + 1023u) << 52;
    double s;
    memcpy(&s, &e, 8);
    return s;
}

/* |v| clamped to lim, sign kept, NaN kept (it then propagates through the arithmetic). Done on the bits
 * (non-negative doubles order like integers): GCC will not turn float branches around trapping math into vector
 * selects. */
static inline double clamp_abs(double v, double lim) {
    uint64_t b, l;
    memcpy(&b, &v, 8);
    memcpy(&l, &lim, 8);
    uint64_t sign = b & 0x8000000000000000ull, mag = b & 0x7fffffffffffffffull;
    mag = (mag < l || mag > 0x7ff0000000000000ull) ? mag : l;
    b = sign | mag;
    memcpy(&v, &b, 8);
    return v;
}

/* Baseline x86-64 (SSE2) has no 64-bit integer compare, so the loops vectorize only with AVX2: clone them. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define VEC_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define VEC_CLONES
#endif

VEC_CLONES void tt_host_vexp_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        /* Beyond +-110 f32 exp is inf / 0 anyway. */
        double d = clamp_abs((double)x[i], 110.0);
        double t = d * LOG2E + SHIFT, kd = t - SHIFT;
        double r = (d - kd * LN2_HI) - kd * LN2_LO;
        double p = 1.0 + r + r * r * tail(r);
        double s = pow2_of(t);
        o[i] = (float)(p * s);
    }
}

VEC_CLONES void tt_host_vtanh_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        float xf = x[i];
        double a = fabs(clamp_abs((double)xf, 20.0)); /* tanh(20) rounds to 1 */
        double d = 2.0 * a, tt = d * LOG2E + SHIFT, kd = tt - SHIFT;
        double r = (d - kd * LN2_HI) - kd * LN2_LO, s = pow2_of(tt);
        double p1 = r + r * r * tail(r);      /* expm1(r) */
        double em1 = s * p1 + (s - 1.0);      /* expm1(2a) = 2^k (1 + p1) - 1 */
        double t = em1 / (em1 + 2.0);
        o[i] = (float)copysign(t, (double)xf);
    }
}
