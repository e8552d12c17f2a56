/* matmul.c — lowerings of the matmul family: mm, bmm, addmm, baddbmm, addbmm, addmv, mv, dot, vdot, addr,
 * _addmm_activation. (matmul, linear and outer are CompositeImplicit in PyTorch and decompose into these.)
 *
 * Every contraction is one dot_general. bf16/f16 operands accumulate in f32 and the (whole, including the
 * beta/alpha epilogue) result is rounded once to the operand dtype, as PyTorch CPU does. f32/bf16/f16 use the
 * precision in force (ctx->precision); f64 and integer contractions are always exact (FP32 mode), since the
 * TPU bf16 passes make no sense for them. */
#include "tt_lower.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- helpers ---- */

/* PyTorch's ScalarType name of a dtype, for error messages. */
static const char *mm_pt_name(tt_dtype dt) {
    switch (dt) {
    case TT_F32: return "Float";
    case TT_BF16: return "BFloat16";
    case TT_F16: return "Half";
    case TT_F64: return "Double";
    case TT_I64: return "Long";
    case TT_I32: return "Int";
    case TT_I16: return "Short";
    case TT_I8: return "Char";
    case TT_U8: return "Byte";
    case TT_BOOL: return "Bool";
    default: return "?";
    }
}

/* Contraction with the given batch / contracting dims; the result is in tt_lower_opmath(operand dtype). */
static tt_ir_value mm_dot(tt_lower_ctx *ctx, tt_ir_value lhs, tt_ir_value rhs, int32_t nbatch, const int64_t *lb,
                          const int64_t *rb, int32_t ncontract, const int64_t *lc, const int64_t *rc) {
    const tt_ir_type *t = tt_lower_type_into(ctx, lhs, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    tt_dtype dt = t->dtype;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_batch.n = a.dot.rhs_batch.n = nbatch;
    for (int32_t i = 0; i < nbatch; i++) {
        a.dot.lhs_batch.v[i] = lb[i];
        a.dot.rhs_batch.v[i] = rb[i];
    }
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = ncontract;
    for (int32_t i = 0; i < ncontract; i++) {
        a.dot.lhs_contract.v[i] = lc[i];
        a.dot.rhs_contract.v[i] = rc[i];
    }
    bool tpu_float = dt == TT_F32 || dt == TT_BF16 || dt == TT_F16;
    a.dot.precision = tpu_float ? ctx->precision : TT_PRECISION_FP32;
    return tt_ir_dot_general(ctx->b, lhs, rhs, &a, tt_lower_opmath(dt));
}

/* x * scalar-argument s (as a runtime scalar parameter in x's dtype), broadcast to x's shape. */
static tt_ir_value mm_scale(tt_lower_ctx *ctx, tt_ir_value x, const tt_arg *s) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    tt_ir_value sv = tt_lower_arg(ctx, s, t->dtype);
    sv = tt_lower_to(ctx, sv, t->dtype, t->rank, t->dims);
    return tt_ir_binary(ctx->b, TT_OP_MULTIPLY, x, sv);
}

static bool mm_is_one(const tt_arg *s) { return s->kind == TT_ARG_NONE || tt_lower_arg_double(s) == 1.0; }

/* Rejects dtypes PyTorch CPU's gemm does not implement (bool): UNSUPPORTED lets the CPU raise its own error. */
static tt_status mm_check_gemm_dtype(tt_lower_ctx *ctx, tt_dtype dt) {
    if (dt == TT_BOOL) return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "\"addmm_impl_cpu_\" not implemented for 'Bool'");
    return TT_OK;
}

/* The addmm-style epilogue: beta * self + alpha * prod, with self broadcast to prod's shape. prod is in the
 * accumulation dtype; the result is converted to out_dt. beta == 0 ignores self entirely (NaN in self must
 * not propagate), so that case is structural. */
static tt_ir_value mm_epilogue(tt_lower_ctx *ctx, const char *target_name, tt_ir_value self, tt_ir_value prod,
                               const tt_arg *beta, const tt_arg *alpha, tt_dtype out_dt) {
    const tt_ir_type *pt = tt_lower_type_into(ctx, prod, (tt_ir_type[1]){{0}});
    const tt_ir_type *st = tt_lower_type_into(ctx, self, (tt_ir_type[1]){{0}});
    if (!pt || !st) return TT_IR_NONE;
    /* self must broadcast to the product's shape (expand semantics, trailing alignment). */
    if (st->rank > pt->rank) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "%s: the number of sizes provided (%d) must be greater or equal to the number of "
                           "dimensions in the tensor (%d)", target_name, (int)pt->rank, (int)st->rank);
        return TT_IR_NONE;
    }
    for (int32_t i = 0; i < st->rank; i++) {
        int32_t pd = pt->rank - st->rank + i;
        if (st->dims[i] != 1 && st->dims[i] != pt->dims[pd]) {
            tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                               "The expanded size of the tensor (%lld) must match the existing size (%lld) at "
                               "non-singleton dimension %d.", (long long)pt->dims[pd], (long long)st->dims[i],
                               (int)pd);
            return TT_IR_NONE;
        }
    }
    tt_dtype acc = pt->dtype;
    tt_ir_value r = prod;
    if (!mm_is_one(alpha)) r = mm_scale(ctx, r, alpha);
    if (tt_lower_arg_double(beta) != 0.0) {
        tt_ir_value s = tt_lower_to(ctx, self, acc, pt->rank, pt->dims);
        if (!mm_is_one(beta)) s = mm_scale(ctx, s, beta);
        r = tt_ir_binary(ctx->b, TT_OP_ADD, s, r);
    }
    return tt_ir_convert(ctx->b, r, out_dt);
}

static tt_status mm_need_rank(tt_lower_ctx *ctx, tt_ir_value v, int32_t rank, const char *msg) {
    const tt_ir_type *t = tt_lower_type_into(ctx, v, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    if (t->rank != rank) return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "%s", msg);
    return TT_OK;
}

/* ---- mm / addmm ---- */

/* mat1 [n,k] @ mat2 [k,m] in the accumulation dtype, after PyTorch's checks. */
static tt_ir_value mm_2d(tt_lower_ctx *ctx, tt_ir_value a, tt_ir_value b, const char *a_name) {
    char msg[64];
    snprintf(msg, sizeof msg, "%s must be a matrix", a_name);
    if (mm_need_rank(ctx, a, 2, msg) != TT_OK) return TT_IR_NONE;
    if (mm_need_rank(ctx, b, 2, "mat2 must be a matrix") != TT_OK) return TT_IR_NONE;
    const tt_ir_type *ta = tt_lower_type_into(ctx, a, (tt_ir_type[1]){{0}}), *tb = tt_lower_type_into(ctx, b, (tt_ir_type[1]){{0}});
    if (ta->dims[1] != tb->dims[0]) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "mat1 and mat2 shapes cannot be multiplied (%lldx%lld and %lldx%lld)",
                           (long long)ta->dims[0], (long long)ta->dims[1], (long long)tb->dims[0],
                           (long long)tb->dims[1]);
        return TT_IR_NONE;
    }
    if (ta->dtype != tb->dtype) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "expected m1 and m2 to have the same dtype, but got: %s != %s", mm_pt_name(ta->dtype),
                           mm_pt_name(tb->dtype));
        return TT_IR_NONE;
    }
    if (mm_check_gemm_dtype(ctx, ta->dtype) != TT_OK) return TT_IR_NONE;
    int64_t lc = 1, rc = 0;
    return mm_dot(ctx, a, b, 0, NULL, NULL, 1, &lc, &rc);
}

static tt_status tt_lower_mm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                             int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value p = mm_2d(ctx, args[0].value, args[1].value, "self");
    const tt_ir_type *t = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}});
    if (tt_ir_builder_status(ctx->b) != TT_OK || !t) return tt_ir_builder_status(ctx->b);
    outs[0] = tt_ir_convert(ctx->b, p, t->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* Same-dtype check of addmm / baddbmm / addbmm's self against the matrices. */
static tt_status mm_self_dtype(tt_lower_ctx *ctx, tt_ir_value self, tt_ir_value m, const char *fmt) {
    const tt_ir_type *ts = tt_lower_type_into(ctx, self, (tt_ir_type[1]){{0}}), *tm = tt_lower_type_into(ctx, m, (tt_ir_type[1]){{0}});
    if (!ts || !tm) return tt_ir_builder_status(ctx->b);
    if (ts->dtype != tm->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, fmt, mm_pt_name(ts->dtype),
                                  mm_pt_name(tm->dtype));
    return TT_OK;
}

static tt_ir_value mm_addmm(tt_lower_ctx *ctx, const tt_arg *args, const char *name) {
    /* self, mat1, mat2, beta, alpha */
    tt_ir_value p = mm_2d(ctx, args[1].value, args[2].value, "self");
    if (tt_ir_builder_status(ctx->b) != TT_OK) return TT_IR_NONE;
    if (mm_self_dtype(ctx, args[0].value, args[2].value, "self and mat2 must have the same dtype, but got %s and %s") != TT_OK)
        return TT_IR_NONE;
    return mm_epilogue(ctx, name, args[0].value, p, &args[3], &args[4], tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}})->dtype);
}

static tt_status tt_lower_addmm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs; (void)nouts;
    outs[0] = mm_addmm(ctx, args, "addmm");
    return tt_ir_builder_status(ctx->b);
}

/* gelu (erf form) of x in its float dtype. */
static tt_ir_value mm_gelu(tt_lower_ctx *ctx, tt_ir_value x) {
    const tt_ir_type *t = tt_lower_type_into(ctx, x, (tt_ir_type[1]){{0}});
    if (!t) return TT_IR_NONE;
    tt_ir_value half = tt_lower_full(ctx, t->dtype, t->rank, t->dims, 0.5);
    tt_ir_value one = tt_lower_full(ctx, t->dtype, t->rank, t->dims, 1.0);
    tt_ir_value rs2 = tt_lower_full(ctx, t->dtype, t->rank, t->dims, 0.70710678118654752440);
    tt_ir_value e = tt_ir_unary(ctx->b, TT_OP_ERF, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, x, rs2));
    tt_ir_value g = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, tt_ir_binary(ctx->b, TT_OP_MULTIPLY, x, half),
                                 tt_ir_binary(ctx->b, TT_OP_ADD, one, e));
    return g;
}

/* _addmm_activation: relu(addmm) or gelu(addmm); the activation runs on the rounded addmm result. */
static tt_status tt_lower_addmm_activation(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
                                           tt_ir_value *outs, int32_t nouts) {
    (void)nouts;
    tt_ir_value r = mm_addmm(ctx, args, "_addmm_activation");
    const tt_ir_type *t = tt_lower_type_into(ctx, r, (tt_ir_type[1]){{0}});
    if (!t) return tt_ir_builder_status(ctx->b);
    bool use_gelu = nargs > 5 && args[5].kind == TT_ARG_BOOL && args[5].b;
    if (use_gelu) {
        if (!tt_dtype_is_float(t->dtype)) return TT_STATUS_UNSUPPORTED;
        tt_dtype acc = tt_lower_opmath(t->dtype);
        outs[0] = tt_ir_convert(ctx->b, mm_gelu(ctx, tt_ir_convert(ctx->b, r, acc)), t->dtype);
    } else {
        /* relu: maximum propagates NaN like PyTorch's clamp_min. */
        tt_ir_value z = tt_lower_full(ctx, t->dtype, t->rank, t->dims, 0.0);
        outs[0] = tt_ir_binary(ctx->b, TT_OP_MAXIMUM, r, z);
    }
    return tt_ir_builder_status(ctx->b);
}

/* ---- bmm / baddbmm / addbmm ---- */

/* batch1 [b,n,k] @ batch2 [b,k,m] -> [b,n,m] in the accumulation dtype, after PyTorch's checks. */
static tt_ir_value mm_3d(tt_lower_ctx *ctx, tt_ir_value a, tt_ir_value b) {
    if (mm_need_rank(ctx, a, 3, "batch1 must be a 3D tensor") != TT_OK) return TT_IR_NONE;
    if (mm_need_rank(ctx, b, 3, "batch2 must be a 3D tensor") != TT_OK) return TT_IR_NONE;
    const tt_ir_type *ta = tt_lower_type_into(ctx, a, (tt_ir_type[1]){{0}}), *tb = tt_lower_type_into(ctx, b, (tt_ir_type[1]){{0}});
    if (ta->dims[0] != tb->dims[0] || ta->dims[2] != tb->dims[1]) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "Expected size for first two dimensions of batch2 tensor to be: [%lld, %lld] but got: "
                           "[%lld, %lld].", (long long)ta->dims[0], (long long)ta->dims[2],
                           (long long)tb->dims[0], (long long)tb->dims[1]);
        return TT_IR_NONE;
    }
    if (ta->dtype != tb->dtype) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "expected scalar type %s but found %s",
                           mm_pt_name(ta->dtype), mm_pt_name(tb->dtype));
        return TT_IR_NONE;
    }
    if (mm_check_gemm_dtype(ctx, ta->dtype) != TT_OK) return TT_IR_NONE;
    int64_t lb = 0, rb = 0, lc = 2, rc = 1;
    return mm_dot(ctx, a, b, 1, &lb, &rb, 1, &lc, &rc);
}

static tt_status tt_lower_bmm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value p = mm_3d(ctx, args[0].value, args[1].value);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    outs[0] = tt_ir_convert(ctx->b, p, tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}})->dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_baddbmm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                  int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *ts = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}}), *t1 = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}}),
                     *t2 = tt_lower_type_into(ctx, args[2].value, (tt_ir_type[1]){{0}});
    if (!ts || !t1 || !t2) return tt_ir_builder_status(ctx->b);
    if (ts->dtype != t1->dtype || ts->dtype != t2->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Input dtypes must be the same, got: input %s, batch1: %s, batch2: %s",
                                  mm_pt_name(ts->dtype), mm_pt_name(t1->dtype), mm_pt_name(t2->dtype));
    tt_ir_value p = mm_3d(ctx, args[1].value, args[2].value);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    outs[0] = mm_epilogue(ctx, "baddbmm", args[0].value, p, &args[3], &args[4], t1->dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_addbmm(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value a = args[1].value, b = args[2].value;
    if (mm_need_rank(ctx, a, 3, "batch1 must be a 3D tensor") != TT_OK) return tt_ir_builder_status(ctx->b);
    if (mm_need_rank(ctx, b, 3, "batch2 must be a 3D tensor") != TT_OK) return tt_ir_builder_status(ctx->b);
    const tt_ir_type *ta = tt_lower_type_into(ctx, a, (tt_ir_type[1]){{0}}), *tb = tt_lower_type_into(ctx, b, (tt_ir_type[1]){{0}});
    if (ta->dims[0] != tb->dims[0])
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "batch1 and batch2 must have same number of batches, got %lld and %lld",
                                  (long long)ta->dims[0], (long long)tb->dims[0]);
    if (ta->dims[2] != tb->dims[1])
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "Incompatible matrix sizes for bmm (%lldx%lld and %lldx%lld)",
                                  (long long)ta->dims[1], (long long)ta->dims[2], (long long)tb->dims[1],
                                  (long long)tb->dims[2]);
    if (mm_self_dtype(ctx, args[0].value, b, "self and mat2 must have the same dtype, but got %s and %s") != TT_OK)
        return tt_ir_builder_status(ctx->b);
    if (ta->dtype != tb->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "expected m1 and m2 to have the same dtype, but got: %s != %s",
                                  mm_pt_name(ta->dtype), mm_pt_name(tb->dtype));
    if (mm_check_gemm_dtype(ctx, ta->dtype) != TT_OK) return tt_ir_builder_status(ctx->b);
    /* Contract over the batch and k together: sum_b batch1[b] @ batch2[b]. */
    int64_t lc[2] = {0, 2}, rc[2] = {0, 1};
    tt_ir_value p = mm_dot(ctx, a, b, 0, NULL, NULL, 2, lc, rc);
    outs[0] = mm_epilogue(ctx, "addbmm", args[0].value, p, &args[3], &args[4], ta->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- mv / addmv / dot / vdot ---- */

static tt_ir_value mm_mv(tt_lower_ctx *ctx, tt_ir_value m, tt_ir_value v, int32_t self_rank) {
    const tt_ir_type *tm = tt_lower_type_into(ctx, m, (tt_ir_type[1]){{0}}), *tv = tt_lower_type_into(ctx, v, (tt_ir_type[1]){{0}});
    if (!tm || !tv) return TT_IR_NONE;
    if (tm->rank != 2 || tv->rank != 1) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "vector + matrix @ vector expected, got %d, %d, %d", (int)self_rank, (int)tm->rank,
                           (int)tv->rank);
        return TT_IR_NONE;
    }
    if (tm->dims[1] != tv->dims[0]) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                           (long long)tm->dims[0], (long long)tm->dims[0], (long long)tm->dims[1],
                           (long long)tv->dims[0]);
        return TT_IR_NONE;
    }
    if (tm->dtype != tv->dtype) {
        tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                           "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                           mm_pt_name(tv->dtype), mm_pt_name(tm->dtype), mm_pt_name(tv->dtype));
        return TT_IR_NONE;
    }
    if (mm_check_gemm_dtype(ctx, tm->dtype) != TT_OK) return TT_IR_NONE;
    int64_t lc = 1, rc = 0;
    return mm_dot(ctx, m, v, 0, NULL, NULL, 1, &lc, &rc);
}

static tt_status tt_lower_mv(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                             int32_t nouts) {
    (void)nargs; (void)nouts;
    tt_ir_value p = mm_mv(ctx, args[0].value, args[1].value, 1);
    if (tt_ir_builder_status(ctx->b) != TT_OK) return tt_ir_builder_status(ctx->b);
    outs[0] = tt_ir_convert(ctx->b, p, tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}})->dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_addmv(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *ts = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}}), *tm = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}}),
                     *tv = tt_lower_type_into(ctx, args[2].value, (tt_ir_type[1]){{0}});
    if (!ts || !tm || !tv) return tt_ir_builder_status(ctx->b);
    if (tm->rank != 2 || tv->rank != 1 || ts->rank > 1)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "vector + matrix @ vector expected, got %d, %d, %d", (int)ts->rank,
                                  (int)tm->rank, (int)tv->rank);
    if (tm->dims[1] != tv->dims[0] || (ts->rank == 1 && ts->dims[0] != tm->dims[0] && ts->dims[0] != 1))
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "size mismatch, got input (%lld), mat (%lldx%lld), vec (%lld)",
                                  (long long)(ts->rank ? ts->dims[0] : 1), (long long)tm->dims[0],
                                  (long long)tm->dims[1], (long long)tv->dims[0]);
    if (ts->dtype != tm->dtype || tm->dtype != tv->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "addmv input tensors must have the same dtype, but got %s, %s, and %s",
                                  mm_pt_name(ts->dtype), mm_pt_name(tm->dtype), mm_pt_name(tv->dtype));
    tt_ir_value p = mm_mv(ctx, args[1].value, args[2].value, ts->rank);
    outs[0] = mm_epilogue(ctx, "addmv", args[0].value, p, &args[3], &args[4], tm->dtype);
    return tt_ir_builder_status(ctx->b);
}

static tt_status tt_lower_dot(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                              int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *ta = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}}), *tb = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}});
    if (!ta || !tb) return tt_ir_builder_status(ctx->b);
    if (ta->rank != 1 || tb->rank != 1)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "1D tensors expected, but got %dD and %dD tensors",
                                  (int)ta->rank, (int)tb->rank);
    if (ta->dims[0] != tb->dims[0])
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "inconsistent tensor size, expected tensor [%lld] and src [%lld] to have the same "
                                  "number of elements, but got %lld and %lld elements respectively",
                                  (long long)ta->dims[0], (long long)tb->dims[0], (long long)ta->dims[0],
                                  (long long)tb->dims[0]);
    if (ta->dtype != tb->dtype)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                  "dot : expected both vectors to have same dtype, but found %s and %s",
                                  mm_pt_name(ta->dtype), mm_pt_name(tb->dtype));
    if (ta->dtype == TT_BOOL)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_UNSUPPORTED, "\"dot\" not implemented for 'Bool'");
    int64_t lc = 0, rc = 0;
    tt_ir_value p = mm_dot(ctx, args[0].value, args[1].value, 0, NULL, NULL, 1, &lc, &rc);
    outs[0] = tt_ir_convert(ctx->b, p, ta->dtype);
    return tt_ir_builder_status(ctx->b);
}

/* ---- addr ---- */

/* beta * self + alpha * outer(vec1, vec2), with PyTorch's type promotion over the three tensors. The outer
 * product is an elementwise broadcast multiply (exact, no contraction). */
static tt_status tt_lower_addr(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                               int32_t nouts) {
    (void)nargs; (void)nouts;
    const tt_ir_type *ts = tt_lower_type_into(ctx, args[0].value, (tt_ir_type[1]){{0}}), *t1 = tt_lower_type_into(ctx, args[1].value, (tt_ir_type[1]){{0}}),
                     *t2 = tt_lower_type_into(ctx, args[2].value, (tt_ir_type[1]){{0}});
    if (!ts || !t1 || !t2) return tt_ir_builder_status(ctx->b);
    if (t1->rank != 1)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "addr: Expected 1-D argument vec1, but got %d-D",
                                  (int)t1->rank);
    if (t2->rank != 1)
        return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT, "addr: Expected 1-D argument vec2, but got %d-D",
                                  (int)t2->rank);
    int32_t idx[3] = {0, 1, 2};
    tt_dtype dt = tt_lower_result_type_of(args, 3, idx);
    if (dt == TT_BOOL) return TT_STATUS_UNSUPPORTED; /* bool addr is logical and/or: left to PyTorch */
    for (int i = 3; i < 5; i++) {
        const char *nm = i == 3 ? "beta" : "alpha";
        if (args[i].kind != TT_ARG_SCALAR) continue;
        if (args[i].dtype == TT_BOOL)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "Boolean %s only supported for Boolean results.", nm);
        if (tt_dtype_is_int(dt) && args[i].dtype == TT_F64)
            return tt_ir_builder_fail(ctx->b, TT_STATUS_INVALID_ARGUMENT,
                                      "For integral input tensors, argument %s must not be a floating point number.",
                                      nm);
    }
    tt_dtype acc = tt_lower_opmath(dt);
    int64_t dims[2] = {t1->dims[0], t2->dims[0]};
    int64_t d0 = 0, d1 = 1;
    tt_ir_value v1 = tt_ir_broadcast_in_dim(ctx->b, tt_ir_convert(ctx->b, args[1].value, acc), 2, dims, &d0);
    tt_ir_value v2 = tt_ir_broadcast_in_dim(ctx->b, tt_ir_convert(ctx->b, args[2].value, acc), 2, dims, &d1);
    tt_ir_value p = tt_ir_binary(ctx->b, TT_OP_MULTIPLY, v1, v2);
    tt_ir_value self = tt_ir_convert(ctx->b, args[0].value, acc);
    outs[0] = mm_epilogue(ctx, "addr", self, p, &args[3], &args[4], dt);
    return tt_ir_builder_status(ctx->b);
}

const tt_lower_entry tt_lower_table_matmul[] = {
    {"aten::mm", tt_lower_mm},
    {"aten::bmm", tt_lower_bmm},
    {"aten::addmm", tt_lower_addmm},
    {"aten::_addmm_activation", tt_lower_addmm_activation},
    {"aten::baddbmm", tt_lower_baddbmm},
    {"aten::addbmm", tt_lower_addbmm},
    {"aten::mv", tt_lower_mv},
    {"aten::addmv", tt_lower_addmv},
    {"aten::dot", tt_lower_dot},
    {"aten::vdot", tt_lower_dot},
    {"aten::addr", tt_lower_addr},
    {NULL, NULL},
};
