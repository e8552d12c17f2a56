/* host_elementwise.c — elementwise unary/binary/ternary ops, compare, convert, select, iota, rng_uniform.
 *
 * Blocked loops: each block of TT_HOST_BLOCK elements is loaded into a compute array (f32 for f32/bf16/f16, f64,
 * i64 for integers and bool; native dtypes are used in place), computed by one typed loop per op, and stored
 * back (bf16/f16 round per op, integers wrap). The op switch runs once per block, never per element.
 */
#include "host_internal.h"

/* -O2 (the Makefile's) vectorizes only loops with no epilogue; the typed loops here want the full vectorizer. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#endif

#include <math.h>
#include <string.h>

typedef struct ew_job {
    tt_ir_op op;
    tt_ir_cmp cmp;
    int n_in;
    const char *in[3];
    tt_dtype dt; /* operand dtype (of the last input for select-like ops: all equal here) */
    size_t es;
    char *out;
    tt_dtype odt;
    size_t oes;
    int bits; /* integer width, for shifts */
} ew_job;

#define BLK TT_HOST_BLOCK
/* o may equal an input exactly (in-place tiles), never overlap it partially: no loop-carried dependence. */
#define IVDEP _Pragma("GCC ivdep")
#define LOOP(expr) IVDEP for (int64_t i = 0; i < m; i++) o[i] = (expr)
#define U(OP, expr) case TT_OP_##OP: LOOP(expr); break;

#define CMP_CASES                                                      \
    switch (cmp) {                                                     \
    case TT_CMP_EQ: for (int64_t i = 0; i < m; i++) ob[i] = a[i] == b[i]; break; \
    case TT_CMP_NE: for (int64_t i = 0; i < m; i++) ob[i] = a[i] != b[i]; break; \
    case TT_CMP_LT: for (int64_t i = 0; i < m; i++) ob[i] = a[i] < b[i]; break;  \
    case TT_CMP_LE: for (int64_t i = 0; i < m; i++) ob[i] = a[i] <= b[i]; break; \
    case TT_CMP_GT: for (int64_t i = 0; i < m; i++) ob[i] = a[i] > b[i]; break;  \
    case TT_CMP_GE: for (int64_t i = 0; i < m; i++) ob[i] = a[i] >= b[i]; break; \
    }

#define F32FN(name) name##f
#define F64FN(name) name

/* The math of a float op over m compute values (o may be a; compare and is_finite go through ew_cmp). */
#define EW_MATH(NAME, T, F, LGAMMA_R)                                                                     \
    TT_HOST_VEC_CLONES static void NAME(tt_ir_op op, const T *a, const T *b, const T *c, T *o, int64_t m) { \
        switch (op) {                                                                                    \
        U(ABS, F(fabs)(a[i]))                                                                            \
        U(NEGATE, -a[i])                                                                                 \
        U(SIGN, a[i] > 0 ? (T)1 : a[i] < 0 ? (T)-1 : a[i])                                               \
        U(FLOOR, F(floor)(a[i]))                                                                         \
        U(CEIL, F(ceil)(a[i]))                                                                           \
        U(ROUND_EVEN, F(nearbyint)(a[i]))                                                                \
        U(EXP, F(exp)(a[i]))                                                                             \
        U(EXPM1, F(expm1)(a[i]))                                                                         \
        U(LOG, F(log)(a[i]))                                                                             \
        U(LOG1P, F(log1p)(a[i]))                                                                         \
        U(SQRT, F(sqrt)(a[i]))                                                                           \
        U(RSQRT, (T)1 / F(sqrt)(a[i]))                                                                   \
        U(CBRT, F(cbrt)(a[i]))                                                                           \
        U(SIN, F(sin)(a[i]))                                                                             \
        U(COS, F(cos)(a[i]))                                                                             \
        U(TAN, F(tan)(a[i]))                                                                             \
        U(TANH, F(tanh)(a[i]))                                                                           \
        U(ASIN, F(asin)(a[i]))                                                                           \
        U(ACOS, F(acos)(a[i]))                                                                           \
        U(ATAN, F(atan)(a[i]))                                                                           \
        U(SINH, F(sinh)(a[i]))                                                                           \
        U(COSH, F(cosh)(a[i]))                                                                           \
        U(ASINH, F(asinh)(a[i]))                                                                         \
        U(ACOSH, F(acosh)(a[i]))                                                                         \
        U(ATANH, F(atanh)(a[i]))                                                                         \
        U(LOGISTIC, (T)1 / ((T)1 + F(exp)(-a[i])))                                                       \
        U(ERF, F(erf)(a[i]))                                                                             \
        U(ERFC, F(erfc)(a[i]))                                                                           \
        U(ERF_INV, (T)tt_host_erfinv((double)a[i]))                                                      \
        U(DIGAMMA, (T)tt_host_digamma((double)a[i]))                                                     \
        case TT_OP_LGAMMA: {                                                                             \
            int sg;                                                                                      \
            for (int64_t i = 0; i < m; i++) o[i] = LGAMMA_R(a[i], &sg);                                  \
        } break;                                                                                         \
        U(ADD, a[i] + b[i])                                                                              \
        U(SUBTRACT, a[i] - b[i])                                                                         \
        U(MULTIPLY, a[i] * b[i])                                                                         \
        U(DIVIDE, a[i] / b[i])                                                                           \
        U(REMAINDER, F(fmod)(a[i], b[i]))                                                                \
        U(POWER, F(pow)(a[i], b[i]))                                                                     \
        U(MAXIMUM, (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : a[i] > b[i] ? a[i] : b[i])             \
        U(MINIMUM, (a[i] != a[i] || b[i] != b[i]) ? a[i] + b[i] : a[i] < b[i] ? a[i] : b[i])             \
        U(ATAN2, F(atan2)(a[i], b[i]))                                                                   \
        U(NEXTAFTER, F(nextafter)(a[i], b[i]))                                                           \
        case TT_OP_CLAMP:                                                                                \
            IVDEP for (int64_t i = 0; i < m; i++) {                                                      \
                T t = b[i] < a[i] ? a[i] : b[i];                                                         \
                o[i] = t > c[i] ? c[i] : t;                                                              \
            }                                                                                            \
            break;                                                                                       \
        default: break;                                                                                  \
        }                                                                                                \
    }                                                                                                    \
    static void NAME##_cmp(tt_ir_op op, tt_ir_cmp cmp, const T *a, const T *b, uint8_t *ob, int64_t m) {  \
        if (op == TT_OP_IS_FINITE) {                                                                     \
            for (int64_t i = 0; i < m; i++) ob[i] = isfinite(a[i]) != 0;                                 \
            return;                                                                                      \
        }                                                                                                \
        CMP_CASES                                                                                        \
    }

EW_MATH(math_f32_libm, float, F32FN, lgammaf_r)
EW_MATH(math_f64, double, F64FN, lgamma_r)

/* f32: exp, tanh, erf and logistic (softmax, gelu, sigmoid) through the vectorized host_math.c kernels. */
static void math_f32(tt_ir_op op, const float *a, const float *b, const float *c, float *o, int64_t m) {
    switch (op) {
    case TT_OP_EXP: tt_host_vexp_f32(a, o, m); break;
    case TT_OP_TANH: tt_host_vtanh_f32(a, o, m); break;
    case TT_OP_ERF: tt_host_verf_f32(a, o, m); break;
    case TT_OP_LOGISTIC:
        for (int64_t i = 0; i < m; i++) o[i] = -a[i];
        tt_host_vexp_f32(o, o, m);
        for (int64_t i = 0; i < m; i++) o[i] = 1.0f / (1.0f + o[i]);
        break;
    default: math_f32_libm(op, a, b, c, o, m); break;
    }
}
#define math_f32_cmp math_f32_libm_cmp

/* One block of a float op, in compute type T: load (unless native), compute, store (unless native). */
#define EW_FLOAT(NAME, MATH, T, NATIVE, LOAD, STORE)                                                      \
    static void NAME(const ew_job *j, int64_t off, int64_t m) {                                          \
        T buf[3][BLK], obuf[BLK];                                                                        \
        const T *x[3] = {0, 0, 0};                                                                       \
        for (int k = 0; k < j->n_in; k++) {                                                              \
            if (j->dt == NATIVE) {                                                                       \
                x[k] = (const T *)(const void *)j->in[k] + off;                                          \
            } else {                                                                                     \
                LOAD(j->dt, j->in[k] + off * (int64_t)j->es, m, buf[k]);                                 \
                x[k] = buf[k];                                                                           \
            }                                                                                            \
        }                                                                                                \
        if (j->op == TT_OP_COMPARE || j->op == TT_OP_IS_FINITE) {                                        \
            MATH##_cmp(j->op, j->cmp, x[0], x[1], (uint8_t *)j->out + off, m);                           \
            return;                                                                                      \
        }                                                                                                \
        T *o = j->odt == NATIVE ? (T *)(void *)j->out + off : obuf;                                      \
        MATH(j->op, x[0], x[1], x[2], o, m);                                                             \
        if (o == obuf) STORE(j->odt, obuf, m, j->out + off * (int64_t)j->oes);                           \
    }

EW_FLOAT(ew_f32, math_f32, float, TT_F32, tt_host_load_f32, tt_host_store_f32)
EW_FLOAT(ew_f64, math_f64, double, TT_F64, tt_host_load_f64, tt_host_store_f64)

static bool float_only(tt_ir_op op) {
    return (op >= TT_OP_FLOOR && op <= TT_OP_IS_FINITE) || op == TT_OP_ATAN2 || op == TT_OP_NEXTAFTER;
}
static bool int_only(tt_ir_op op) {
    return op == TT_OP_NOT || op == TT_OP_AND || op == TT_OP_OR || op == TT_OP_XOR || op == TT_OP_SHIFT_LEFT ||
           op == TT_OP_SHIFT_RIGHT_ARITHMETIC || op == TT_OP_SHIFT_RIGHT_LOGICAL;
}

static int64_t ipow(int64_t base, int64_t e) {
    if (e < 0) return base == 1 ? 1 : base == -1 ? ((e & 1) ? -1 : 1) : 0;
    uint64_t r = 1, bb = (uint64_t)base;
    while (e) {
        if (e & 1) r *= bb;
        bb *= bb;
        e >>= 1;
    }
    return (int64_t)r;
}

#define UADD(x, y) (int64_t)((uint64_t)(x) + (uint64_t)(y))
#define USUB(x, y) (int64_t)((uint64_t)(x) - (uint64_t)(y))
#define UMUL(x, y) (int64_t)((uint64_t)(x) * (uint64_t)(y))

static void math_i64(tt_ir_op op, int bits, bool is_bool, const int64_t *a, const int64_t *b, const int64_t *c,
                     int64_t *o, int64_t m) {
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
    switch (op) {
    U(ABS, a[i] < 0 ? USUB(0, a[i]) : a[i])
    U(NEGATE, USUB(0, a[i]))
    U(SIGN, a[i] > 0 ? 1 : a[i] < 0 ? -1 : 0)
    U(ADD, is_bool ? (a[i] | b[i]) : UADD(a[i], b[i]))
    U(SUBTRACT, is_bool ? (a[i] ^ b[i]) : USUB(a[i], b[i]))
    U(MULTIPLY, is_bool ? (a[i] & b[i]) : UMUL(a[i], b[i]))
    U(DIVIDE, b[i] == 0 ? -1 : b[i] == -1 ? USUB(0, a[i]) : a[i] / b[i])
    U(REMAINDER, b[i] == 0 ? a[i] : b[i] == -1 ? 0 : a[i] % b[i])
    U(POWER, ipow(a[i], b[i]))
    U(MAXIMUM, a[i] > b[i] ? a[i] : b[i])
    U(MINIMUM, a[i] < b[i] ? a[i] : b[i])
    U(AND, a[i] & b[i])
    U(OR, a[i] | b[i])
    U(XOR, a[i] ^ b[i])
    U(NOT, is_bool ? (a[i] == 0) : ~a[i])
    U(SHIFT_LEFT, (b[i] < 0 || b[i] >= bits) ? 0 : (int64_t)((uint64_t)a[i] << b[i]))
    U(SHIFT_RIGHT_LOGICAL, (b[i] < 0 || b[i] >= bits) ? 0 : (int64_t)(((uint64_t)a[i] & mask) >> b[i]))
    U(SHIFT_RIGHT_ARITHMETIC, (b[i] < 0 || b[i] >= bits) ? (a[i] < 0 ? -1 : 0) : (a[i] >> b[i]))
    case TT_OP_CLAMP:
        IVDEP for (int64_t i = 0; i < m; i++) {
            int64_t t = b[i] < a[i] ? a[i] : b[i];
            o[i] = t > c[i] ? c[i] : t;
        }
        break;
    default: break;
    }
}

static void math_i64_cmp(tt_ir_cmp cmp, const int64_t *a, const int64_t *b, uint8_t *ob, int64_t m) {
    CMP_CASES
}

static void ew_i64(const ew_job *j, int64_t off, int64_t m) {
    int64_t buf[3][BLK], obuf[BLK];
    const int64_t *x[3] = {0, 0, 0};
    for (int k = 0; k < j->n_in; k++) {
        if (j->dt == TT_I64) {
            x[k] = (const int64_t *)(const void *)j->in[k] + off;
        } else {
            tt_host_load_i64(j->dt, j->in[k] + off * (int64_t)j->es, m, buf[k]);
            x[k] = buf[k];
        }
    }
    if (j->op == TT_OP_COMPARE) {
        math_i64_cmp(j->cmp, x[0], x[1], (uint8_t *)j->out + off, m);
        return;
    }
    int64_t *o = j->odt == TT_I64 ? (int64_t *)(void *)j->out + off : obuf;
    math_i64(j->op, j->bits, j->dt == TT_BOOL, x[0], x[1], x[2], o, m);
    if (o == obuf) tt_host_store_i64(j->odt, obuf, m, j->out + off * (int64_t)j->oes);
}

void tt_host_ew_math(tt_host_class cls, tt_ir_op op, tt_dtype dt, const void *a, const void *b, const void *c, void *o,
                     int64_t m) {
    if (cls == TT_HOST_CF32) math_f32(op, a, b, c, o, m);
    else if (cls == TT_HOST_CF64) math_f64(op, a, b, c, o, m);
    else math_i64(op, (int)tt_dtype_size(dt) * 8, dt == TT_BOOL, a, b, c, o, m);
}

void tt_host_ew_compare(tt_host_class cls, tt_ir_op op, tt_ir_cmp cmp, const void *a, const void *b, uint8_t *o,
                        int64_t m) {
    if (cls == TT_HOST_CF32) math_f32_cmp(op, cmp, a, b, o, m);
    else if (cls == TT_HOST_CF64) math_f64_cmp(op, cmp, a, b, o, m);
    else math_i64_cmp(cmp, a, b, o, m);
}

bool tt_host_ew_type_ok(tt_ir_op op, tt_dtype dt, tt_dtype odt) {
    bool is_float = tt_dtype_is_float(dt);
    if ((is_float && int_only(op)) || (!is_float && float_only(op))) return false;
    if ((op == TT_OP_COMPARE || op == TT_OP_IS_FINITE) && odt != TT_BOOL) return false;
    return true;
}

static void ew_range(void *user, int64_t begin, int64_t end) {
    const ew_job *j = user;
    tt_host_class cls = tt_host_class_of(j->dt);
    for (int64_t off = begin; off < end; off += BLK) {
        int64_t m = end - off < BLK ? end - off : BLK;
        if (cls == TT_HOST_CF32) ew_f32(j, off, m);
        else if (cls == TT_HOST_CF64) ew_f64(j, off, m);
        else ew_i64(j, off, m);
    }
}

static void run_job(ew_job *j, int64_t n) {
    if (n > TT_HOST_GRAIN) tt_host_parallel_for(n, TT_HOST_GRAIN, ew_range, j);
    else ew_range(j, 0, n);
}

tt_status tt_host_elementwise(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    ew_job j;
    memset(&j, 0, sizeof j);
    j.op = n->op;
    j.cmp = n->op == TT_OP_COMPARE ? n->attrs.compare.dir : TT_CMP_EQ;
    j.n_in = n->n_inputs > 3 ? 3 : n->n_inputs;
    for (int k = 0; k < j.n_in; k++) j.in[k] = tt_host_in(p, n, vals, k);
    const tt_ir_type *ot = &p->types[n->outputs[0]];
    j.dt = tt_host_in_type(p, n, 0)->dtype;
    j.es = tt_dtype_size(j.dt);
    j.out = vals[n->outputs[0]];
    j.odt = ot->dtype;
    j.oes = tt_dtype_size(j.odt);
    j.bits = (int)j.es * 8;
    bool is_float = tt_dtype_is_float(j.dt);
    if ((is_float && int_only(n->op)) || (!is_float && float_only(n->op)))
        return tt_error(TT_STATUS_TYPE, "host: %s is not defined for %s", tt_ir_op_name(n->op), tt_dtype_name(j.dt));
    if ((n->op == TT_OP_COMPARE || n->op == TT_OP_IS_FINITE) && j.odt != TT_BOOL)
        return tt_error(TT_STATUS_TYPE, "host: %s must produce i1", tt_ir_op_name(n->op));
    run_job(&j, tt_host_numel(ot));
    return TT_OK;
}

/* ---- convert ---- */
typedef struct cv_job {
    tt_dtype src, dst;
    const char *in;
    char *out;
} cv_job;

static void cv_range(void *user, int64_t begin, int64_t end) {
    const cv_job *j = user;
    size_t ses = tt_dtype_size(j->src), des = tt_dtype_size(j->dst);
    tt_host_class cls = tt_host_class_of(j->src);
    union {
        float f[BLK];
        double d[BLK];
        int64_t i[BLK];
    } buf;
    for (int64_t off = begin; off < end; off += BLK) {
        int64_t m = end - off < BLK ? end - off : BLK;
        const char *s = j->in + off * (int64_t)ses;
        char *d = j->out + off * (int64_t)des;
        if (cls == TT_HOST_CF32) {
            const float *f = buf.f;
            if (j->src == TT_F32) f = (const float *)(const void *)s;
            else tt_host_load_f32(j->src, s, m, buf.f);
            tt_host_store_f32(j->dst, f, m, d);
        } else if (cls == TT_HOST_CF64) {
            tt_host_store_f64(j->dst, (const double *)(const void *)s, m, d);
        } else {
            tt_host_load_i64(j->src, s, m, buf.i);
            tt_host_store_i64(j->dst, buf.i, m, d);
        }
    }
}

tt_status tt_host_convert(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    cv_job j = {tt_host_in_type(p, n, 0)->dtype, p->types[n->outputs[0]].dtype, tt_host_in(p, n, vals, 0),
                vals[n->outputs[0]]};
    int64_t cnt = tt_host_numel(&p->types[n->outputs[0]]);
    if (j.src == j.dst) {
        memcpy(j.out, j.in, (size_t)cnt * tt_dtype_size(j.src));
        return TT_OK;
    }
    if (cnt > TT_HOST_GRAIN) tt_host_parallel_for(cnt, TT_HOST_GRAIN, cv_range, &j);
    else cv_range(&j, 0, cnt);
    return TT_OK;
}

/* ---- select: byte-level, by element size ---- */
tt_status tt_host_select(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const uint8_t *pr = tt_host_in(p, n, vals, 0);
    const void *t = tt_host_in(p, n, vals, 1), *f = tt_host_in(p, n, vals, 2);
    void *out = vals[n->outputs[0]];
    const tt_ir_type *ot = &p->types[n->outputs[0]];
    int64_t m = tt_host_numel(ot);
    /* A 0-d predicate selects a whole operand (StableHLO allows it). */
    bool scalar_pred = tt_host_in_type(p, n, 0)->rank == 0 && ot->rank > 0;
#define SEL(T)                                                                                           \
    {                                                                                                    \
        const T *a = t, *b = f;                                                                          \
        T *o = out;                                                                                      \
        for (int64_t i = 0; i < m; i++) o[i] = pr[scalar_pred ? 0 : i] ? a[i] : b[i];                    \
    }                                                                                                    \
    break;
    switch (tt_dtype_size(ot->dtype)) {
    case 1: SEL(uint8_t)
    case 2: SEL(uint16_t)
    case 4: SEL(uint32_t)
    default: SEL(uint64_t)
    }
#undef SEL
    return TT_OK;
}

/* ---- iota ---- */
tt_status tt_host_iota(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const tt_ir_type *ot = &p->types[n->outputs[0]];
    int64_t dim = n->attrs.iota.dim, inner = 1;
    for (int32_t i = (int32_t)dim + 1; i < ot->rank; i++) inner *= ot->dims[i];
    int64_t size = ot->rank ? ot->dims[dim] : 1;
    int64_t total = tt_host_numel(ot);
    size_t es = tt_dtype_size(ot->dtype);
    int64_t buf[BLK];
    /* element k holds (k / inner) % size: counted, not divided (a 64-bit divide per element cost 5 ms for the
     * 512 x 512 one-hot of a cross-entropy) */
    int64_t v = 0, run = 0; /* the value and how far into its run of `inner` elements */
    for (int64_t off = 0; off < total; off += BLK) {
        int64_t m = total - off < BLK ? total - off : BLK;
        for (int64_t i = 0; i < m; i++) {
            buf[i] = v;
            if (++run == inner) {
                run = 0;
                v = v + 1 == size ? 0 : v + 1;
            }
        }
        tt_host_store_i64(ot->dtype, buf, m, (char *)vals[n->outputs[0]] + off * (int64_t)es);
    }
    return TT_OK;
}

/* ---- rng_uniform: tt_ir_rng_bits; element k of the row-major result gets counter offset + k ---- */
typedef struct rng_job {
    uint64_t seed, offset;
    tt_dtype dt;
    char *out;
} rng_job;

static void rng_range(void *user, int64_t begin, int64_t end) {
    const rng_job *j = user;
    size_t es = tt_dtype_size(j->dt);
    for (int64_t off = begin; off < end; off += BLK) {
        int64_t m = end - off < BLK ? end - off : BLK;
        char *d = j->out + off * (int64_t)es;
        if (j->dt == TT_F64) {
            double *o = (double *)(void *)d;
            for (int64_t i = 0; i < m; i++)
                o[i] = (double)(tt_ir_rng_bits(j->seed, j->offset + (uint64_t)(off + i)) >> 11) * 0x1p-53;
        } else {
            float buf[BLK];
            for (int64_t i = 0; i < m; i++)
                buf[i] = (float)(tt_ir_rng_bits(j->seed, j->offset + (uint64_t)(off + i)) >> 40) * 0x1p-24f;
            tt_host_store_f32(j->dt, buf, m, d);
        }
    }
}

tt_status tt_host_rng_uniform(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch) {
    (void)scratch;
    const tt_ir_type *ot = &p->types[n->outputs[0]];
    if (!tt_dtype_is_float(ot->dtype))
        return tt_error(TT_STATUS_TYPE, "host: rng_uniform produces floats, not %s", tt_dtype_name(ot->dtype));
    int64_t seed, offset;
    tt_host_load_i64(tt_host_in_type(p, n, 0)->dtype, tt_host_in(p, n, vals, 0), 1, &seed);
    tt_host_load_i64(tt_host_in_type(p, n, 1)->dtype, tt_host_in(p, n, vals, 1), 1, &offset);
    rng_job j = {(uint64_t)seed, (uint64_t)offset, ot->dtype, vals[n->outputs[0]]};
    int64_t total = tt_host_numel(ot);
    if (total > TT_HOST_GRAIN) tt_host_parallel_for(total, TT_HOST_GRAIN, rng_range, &j);
    else rng_range(&j, 0, total);
    return TT_OK;
}
