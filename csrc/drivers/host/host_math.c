/* host_math.c — vectorizable f32 exp, tanh and erf for the hot elementwise loops (softmax, gelu, sigmoid).
 *
 * libm's expf/tanhf/erff are scalar calls (7-30 ns each here). These are branch-free f32 code with explicit fmaf,
 * which GCC turns into 16-lane AVX-512 (8-lane AVX2) loops in the cloned builds; every clone computes the same
 * operations, so the same bits (the portable clone calls libm's fmaf, same results, slower). Accuracy, checked
 * against double-precision libm on sweeps of f32 bit patterns by ctests/test_host_fuse.c: exp within 1 ulp, tanh
 * and erf within 2 ulp — the accuracy class of PyTorch CPU's own vectorized (Sleef) functions and of XLA on a TPU,
 * not correctly rounded (an earlier double-precision version was, at 5-8x the cost).
 *   exp(x) = 2^k e^r, x = k ln2 + r (Cody-Waite, two fmaf), |r| <= ln2/2, e^r by its degree-7 Taylor polynomial;
 *           2^k applied in two halves so overflow to inf and gradual underflow come out right.
 *   tanh:   |x| < 0.625: x P(x^2) (degree 6, fitted by least squares on Chebyshev nodes, relative error 1.5e-10);
 *           else 1 - 2 / (e^{2|x|} + 1); sign restored; NaN propagates.
 *   erf:    |x| < 1: x P(x^2) (degree 6, relative error 1.2e-9); 1 <= |x| < 3.92: 1 - exp(Q(|x| - 2.5)), Q a
 *           degree-10 fit of log erfc (relative error of erfc 1.5e-9); beyond, erf rounds to +-1 in f32.
 * Both branches are computed and blended on the bits: a branch would keep GCC from vectorizing.
 */
#include "host_internal.h"

#include <math.h>
#include <string.h>

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#define LOG2E_F 1.44269502f
#define LN2_HI_F 0.693359375f     /* 355/512: k * LN2_HI_F is exact for |k| < 2^15 */
#define LN2_LO_F -2.12194440e-4f /* ln 2 - LN2_HI_F */
#define SHIFT_F 0x1.8p23f         /* adding it rounds to an integer, kept in the low mantissa bits */

#define VEC_CLONES_MATH TT_HOST_VEC_CLONES

static inline uint32_t f_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}
static inline float f_from(uint32_t u) {
    float f;
    memcpy(&f, &u, 4);
    return f;
}
/* a where keep, else b: on the bits, so the loop stays a vector select. */
static inline float f_select(bool keep, float a, float b) {
    uint32_t m = (uint32_t)0 - (uint32_t)keep;
    return f_from((f_bits(a) & m) | (f_bits(b) & ~m));
}
static inline float f_copysign(float mag, float sign) {
    return f_from((f_bits(mag) & 0x7fffffffu) | (f_bits(sign) & 0x80000000u));
}

/* e^x for any f32 x (NaN propagates; beyond [-104, 89] the result is 0 / inf anyway). */
static inline float exp_f32(float x) {
    /* Below -104 the result rounds to +0: those lanes compute e^0 and are zeroed at the end, because a product that
     * underflows to a subnormal costs a microcode assist per vector on some CPUs (a masked softmax's -inf lanes made
     * this loop 3x slower) */
    bool zero = x < -104.0f;
    /* NaN compares false: stays NaN; selects on the bits keep the callers' loops vectorized */
    float xc = f_select(zero, 0.0f, f_select(x > 89.0f, 89.0f, x));
    float t = fmaf(xc, LOG2E_F, SHIFT_F), kf = t - SHIFT_F;
    float r = fmaf(kf, -LN2_HI_F, xc);
    r = fmaf(kf, -LN2_LO_F, r);
    float p = 1.0f / 5040;
    p = fmaf(p, r, 1.0f / 720);
    p = fmaf(p, r, 1.0f / 120);
    p = fmaf(p, r, 1.0f / 24);
    p = fmaf(p, r, 1.0f / 6);
    p = fmaf(p, r, 0.5f);
    p = fmaf(p, r, 1.0f);
    p = fmaf(p, r, 1.0f);
    /* k = round(x log2 e) in [-150, 129], read from t's low bits; applied as 2^k1 * 2^k2 (each a normal float) */
    int32_t k = (int32_t)(f_bits(t) & 0x3ffu) - (int32_t)(f_bits(SHIFT_F) & 0x3ffu);
    int32_t k1 = k / 2, k2 = k - k1;
    return f_select(zero, 0.0f, p * f_from((uint32_t)(k1 + 127) << 23) * f_from((uint32_t)(k2 + 127) << 23));
}

VEC_CLONES_MATH void tt_host_vexp_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) o[i] = exp_f32(x[i]);
}

/* c[0] + c[1] x + ... + c[n-1] x^(n-1) by fmaf; unrolled, so the loop around it vectorizes. */
static inline float horner(const float *c, int n, float x) {
    float p = c[n - 1];
#pragma GCC unroll 16
    for (int j = n - 2; j >= 0; j--) p = fmaf(p, x, c[j]);
    return p;
}

static const float TANH_P[7] = {0.9999999998505712f,  -0.33333329602388856f, 0.13333179969973177f,
                                -0.05394439278166054f, 0.021690326829609204f, -0.008155733847618932f,
                                0.0021256377993056734f};

VEC_CLONES_MATH void tt_host_vtanh_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        float xf = x[i], a = f_from(f_bits(xf) & 0x7fffffffu), z = xf * xf;
        float small = a * horner(TANH_P, 7, z);
        float e = exp_f32(f_select(a > 9.5f, 19.0f, 2.0f * a)); /* tanh(9.5) rounds to 1; keeps e finite */
        float large = 1.0f - 2.0f / (e + 1.0f);
        float y = f_select(a < 0.625f, small, large);
        y = f_select(a != a, xf, y); /* NaN in, NaN out */
        o[i] = f_copysign(y, xf);
    }
}

static const float ERF_P[7] = {1.128379165689322f,     -0.3761262556739926f,  0.11283582247993085f,
                               -0.02685369109972322f,  0.00518809888941472f,  -0.0008008189323264073f,
                               7.847259127129358e-05f};
static const float ERFC_LOGQ[11] = {-7.806815272145166f,     -5.352680742957163f,     -0.9438937510100058f,
                                    -0.010858146268406837f,  0.0021655607420076137f,  -0.0004207448487333958f,
                                    7.688685995959683e-05f,  -1.2949036598742982e-05f, 1.8770872440687737e-06f,
                                    -7.219000103808536e-08f, -4.778926016331381e-08f};

VEC_CLONES_MATH void tt_host_verf_f32(const float *x, float *o, int64_t m) {
    for (int64_t i = 0; i < m; i++) {
        float xf = x[i], a = f_from(f_bits(xf) & 0x7fffffffu);
        float small = a * horner(ERF_P, 7, xf * xf);
        float large = 1.0f - exp_f32(horner(ERFC_LOGQ, 11, f_select(a > 3.92f, 3.92f, a) - 2.5f));
        float y = f_select(a < 1.0f, small, f_select(a < 3.92f, large, 1.0f));
        y = f_select(a != a, xf, y);
        o[i] = f_copysign(y, xf);
    }
}
