/* host_special.c — special functions libm lacks: erfinv and digamma (in double; f32 callers round). */
#include "host_internal.h"

#include <math.h>

/* Giles' single-precision approximation ("Approximating the erfinv function", 2010) refined by two Newton steps
 * on erf, which brings it to double accuracy. */
double tt_host_erfinv(double x) {
    if (x != x || x < -1.0 || x > 1.0) return NAN;
    if (x == 1.0) return INFINITY;
    if (x == -1.0) return -INFINITY;
    if (x == 0.0) return x;
    double w = -log((1.0 - x) * (1.0 + x)), p;
    if (w < 5.0) {
        w -= 2.5;
        p = 2.81022636e-08;
        p = 3.43273939e-07 + p * w;
        p = -3.5233877e-06 + p * w;
        p = -4.39150654e-06 + p * w;
        p = 0.00021858087 + p * w;
        p = -0.00125372503 + p * w;
        p = -0.00417768164 + p * w;
        p = 0.246640727 + p * w;
        p = 1.50140941 + p * w;
    } else {
        w = sqrt(w) - 3.0;
        p = -0.000200214257;
        p = 0.000100950558 + p * w;
        p = 0.00134934322 + p * w;
        p = -0.00367342844 + p * w;
        p = 0.00573950773 + p * w;
        p = -0.0076224613 + p * w;
        p = 0.00943887047 + p * w;
        p = 1.00167406 + p * w;
        p = 2.83297682 + p * w;
    }
    double y = p * x;
    for (int k = 0; k < 2; k++) {
        double d = 1.1283791670955126 * exp(-y * y); /* d/dy erf(y) */
        if (d == 0.0) break;
        y -= (erf(y) - x) / d;
    }
    return y;
}

/* Digamma with PyTorch's conventions: psi(+-0) = -+inf, negative integers and -inf give NaN. Recurrence up to
 * x >= 6, then the asymptotic series; negative x by reflection. */
double tt_host_digamma(double x) {
    if (x != x || x == -INFINITY) return NAN;
    if (x == INFINITY) return INFINITY;
    if (x == 0.0) return copysign(INFINITY, -x);
    if (x < 0.0) {
        if (x == floor(x)) return NAN;
        const double pi = 3.14159265358979323846;
        return tt_host_digamma(1.0 - x) - pi / tan(pi * x);
    }
    double r = 0.0;
    while (x < 6.0) {
        r -= 1.0 / x;
        x += 1.0;
    }
    double z = 1.0 / (x * x);
    double s = z * (1.0 / 12 - z * (1.0 / 120 - z * (1.0 / 252 - z * (1.0 / 240 - z * (1.0 / 132)))));
    return r + log(x) - 0.5 / x - s;
}
