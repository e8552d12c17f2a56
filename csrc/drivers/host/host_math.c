/* host_math.c — vectorizable f32 exp, tanh and erf for the hot elementwise loops (softmax, gelu, sigmoid).
 *
 * libm's expf/tanhf are scalar calls (7-30 ns each here). These evaluate in double precision with branch-free
 * code the compiler vectorizes: exp(x) = 2^k * P(r), x = k ln2 + r, |r| <= ln2/2, P the degree-11 Taylor
 * polynomial (relative error < 1e-14); tanh(|x|) = e / (e + 2) with e = expm1(2|x|) built the same way, so small
 * arguments keep full relative accuracy. The double result is rounded once to f32, which makes both functions
 * correctly rounded except within ~1e-14 relative of a rounding tie: they agree with glibc's expf/tanhf except
 * for rare 1-ulp differences (glibc's tanhf is itself off by up to 2 ulp).
 * erf: |x| < 0.5 by its Taylor series (12 terms); 0.5 <= |x| <= 4 as 1 - exp(-x^2) erfcx(|x|), erfcx by a degree-22
 * Chebyshev series fitted here (relative error 4e-13); |x| > 4 rounds to +-1 in f32.
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

/* Baseline x86-64 (SSE2) has no 64-bit integer compare, so the loops vectorize only from AVX2 up: cloned. */
#define VEC_CLONES TT_HOST_VEC_CLONES

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

/* erfcx(x) = exp(x^2) erfc(x) on [0.5, 4] as a degree-22 polynomial in u = (2x - 4.5) / 3.5: the Chebyshev
 * interpolant at 23 points (relative error 4e-13), expanded to monomials (coefficients below 0.25, so no
 * cancellation) for Estrin evaluation, whose short dependency chains keep the vector units busy. */
static const double ERFCX_POLY[24] = {
    0.23108725873039235,     -0.15485137991536596,    0.09797742144518376,     -0.058964169361612376,
    0.033942218151306353,    -0.01877211402106535,    0.010010948167422054,    -0.0051632813522177077,
    0.0025820257918294227,   -0.0012546389477679333,  0.00059347081188978177,  -0.00027368623758436758,
    0.00012327883216486322,  -5.4398130961762176e-05, 2.3417148005809509e-05,  -9.695673092526544e-06,
    4.0541474588636753e-06,  -1.8674910951749946e-06, 7.1615558345397159e-07,  -1.2610389208218663e-07,
    6.1788697443578698e-08,  -8.6049270897131894e-08, 2.973905319105024e-08,   0.0,
};

/* (-1)^n / (n! (2n + 1)): erf(x) = 2/sqrt(pi) * x * sum_n E_n x^(2n). */
#define E0 1.0
#define E1 (-1.0 / 3)
#define E2 (1.0 / 10)
#define E3 (-1.0 / 42)
#define E4 (1.0 / 216)
#define E5 (-1.0 / 1320)
#define E6 (1.0 / 9360)
#define E7 (-1.0 / 75600)
#define E8 (1.0 / 685440)
#define E9 (-1.0 / 6894720)
#define E10 (1.0 / 76204800)
#define E11 (-1.0 / 918086400)
#define TWO_OVER_SQRTPI 1.1283791670955125739

VEC_CLONES void tt_host_verf_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        float xf = x[i];
        double a = fabs(clamp_abs((double)xf, 4.0));
        /* Small: Taylor in a^2. */
        double z = a * a;
        double ps = E11;
        ps = ps * z + E10; ps = ps * z + E9; ps = ps * z + E8; ps = ps * z + E7; ps = ps * z + E6;
        ps = ps * z + E5; ps = ps * z + E4; ps = ps * z + E3; ps = ps * z + E2; ps = ps * z + E1;
        ps = ps * z + E0;
        double small = TWO_OVER_SQRTPI * a * ps;
        /* Large: 1 - exp(-a^2) erfcx(a), Estrin over u in [-1, 1]. */
        const double *c = ERFCX_POLY;
        double u = (2.0 * a - 4.5) * (1.0 / 3.5), u2 = u * u, u4 = u2 * u2, u8 = u4 * u4;
        double p0 = c[0] + c[1] * u, p1 = c[2] + c[3] * u, p2 = c[4] + c[5] * u, p3 = c[6] + c[7] * u;
        double p4 = c[8] + c[9] * u, p5 = c[10] + c[11] * u, p6 = c[12] + c[13] * u, p7 = c[14] + c[15] * u;
        double p8 = c[16] + c[17] * u, p9 = c[18] + c[19] * u, p10 = c[20] + c[21] * u, p11 = c[22];
        double q0 = p0 + p1 * u2, q1 = p2 + p3 * u2, q2 = p4 + p5 * u2, q3 = p6 + p7 * u2;
        double q4 = p8 + p9 * u2, q5 = p10 + p11 * u2;
        double r0 = q0 + q1 * u4, r1 = q2 + q3 * u4, r2 = q4 + q5 * u4;
        double g = (r0 + r1 * u8) + r2 * (u8 * u8);
        double d = -z, t = d * LOG2E + SHIFT, kd = t - SHIFT;
        double r = (d - kd * LN2_HI) - kd * LN2_LO;
        double ex = (1.0 + r + r * r * tail(r)) * pow2_of(t);
        double large = 1.0 - ex * g;
        /* Blend on the bits: a branch here would keep GCC from vectorizing. */
        uint64_t bs, bl, mask = (uint64_t)0 - (uint64_t)(a < 0.5);
        memcpy(&bs, &small, 8);
        memcpy(&bl, &large, 8);
        bs = (bs & mask) | (bl & ~mask);
        double y;
        memcpy(&y, &bs, 8);
        o[i] = (float)copysign(y, (double)xf);
    }
}
