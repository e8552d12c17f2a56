/* core.c — status names, dtype facts, the thread-local error message, half-precision conversions. */
#include "tt_core.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char tt_error_message[1024];
static _Thread_local int32_t tt_error_node_index = -1;

const char *tt_status_name(tt_status st) {
    static const char *names[TT_STATUS_COUNT] = {"ok",          "invalid argument", "index error", "type error",
                                                 "out of memory", "unsupported",      "internal error", "busy"};
    return (unsigned)st < TT_STATUS_COUNT ? names[st] : "unknown status";
}

const char *tt_dtype_name(tt_dtype dt) {
    static const char *names[TT_DTYPE_COUNT] = {"f32", "bf16", "f16", "f64", "i64", "i32", "i16", "i8", "ui8", "i1"};
    return (unsigned)dt < TT_DTYPE_COUNT ? names[dt] : "?";
}

size_t tt_dtype_size(tt_dtype dt) {
    static const size_t sizes[TT_DTYPE_COUNT] = {4, 2, 2, 8, 8, 4, 2, 1, 1, 1};
    return (unsigned)dt < TT_DTYPE_COUNT ? sizes[dt] : 0;
}

bool tt_dtype_is_float(tt_dtype dt) { return dt == TT_F32 || dt == TT_BF16 || dt == TT_F16 || dt == TT_F64; }
bool tt_dtype_is_int(tt_dtype dt) {
    return dt == TT_I64 || dt == TT_I32 || dt == TT_I16 || dt == TT_I8 || dt == TT_U8;
}
bool tt_dtype_is_signed(tt_dtype dt) { return dt != TT_U8 && dt != TT_BOOL; }

tt_status tt_error(tt_status st, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tt_error_message, sizeof tt_error_message, fmt, ap);
    va_end(ap);
    tt_error_node_index = -1;
    return st;
}

const char *tt_last_error(void) { return tt_error_message; }
void tt_clear_error(void) {
    tt_error_message[0] = '\0';
    tt_error_node_index = -1;
}
void tt_error_set_node(int32_t node) { tt_error_node_index = node; }
int32_t tt_error_node(void) { return tt_error_node_index; }

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}
static float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float tt_bf16_to_f32(uint16_t v) { return bits_f32((uint32_t)v << 16); }

uint16_t tt_f32_to_bf16(float v) {
    uint32_t u = f32_bits(v);
    if (isnan(v)) return (uint16_t)((u >> 16) | 0x40); /* quiet NaN, keep sign */
    u += 0x7fffu + ((u >> 16) & 1u);                  /* round to nearest even */
    return (uint16_t)(u >> 16);
}

float tt_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t man = h & 0x3ffu;
    if (exp == 0) {
        if (man == 0) return bits_f32(sign);
        float f = ldexpf((float)man, -24); /* subnormal */
        return sign ? -f : f;
    }
    if (exp == 31) return bits_f32(sign | 0x7f800000u | (man << 13));
    return bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
}

uint16_t tt_f32_to_f16(float f) {
    uint32_t u = f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    if (a >= 0x7f800000u) return (uint16_t)(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u)); /* inf / nan */
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);                                     /* overflow */
    if (a < 0x38800000u) {                                                                       /* subnormal */
        float m = bits_f32(a) * 16777216.0f; /* 2^24: f16 subnormal units */
        uint32_t r = (uint32_t)lrintf(m);     /* round to nearest even */
        return (uint16_t)(sign | r);
    }
    uint32_t exp = ((a >> 23) - 112u) << 10;
    uint32_t man = (a >> 13) & 0x3ffu;
    uint32_t rest = a & 0x1fffu;
    uint32_t h = exp | man;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) h++;
    return (uint16_t)(sign | h);
}

int64_t tt_numel(int32_t rank, const int64_t *dims) {
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++) n *= dims[i];
    return n;
}
