/* test_lower_elementwise.c — the lowering helpers (type promotion, broadcasting, scalar parameters, dim
 * wrapping) and the elementwise / activation lowerings built into programs and run on the host driver, compared
 * with PyTorch CPU results computed by hand. */
#include "tt_lower_run.h"

#include <float.h>

/* Runs a one- or two-input op on rank-1 inputs of length n and checks the result. */
static void e_check1(const char *op, tt_dtype in_dt, int64_t n, const double *x, tt_arg *extra, int32_t nextra,
                     tt_dtype out_dt, const double *want, double tol) {
    r_run r;
    r_begin(&r);
    tt_arg args[6];
    args[0] = r_tensor(&r, in_dt, 1, &n, x);
    for (int32_t i = 0; i < nextra; i++) args[1 + i] = extra[i];
    tt_status st = r_exec(&r, op, args, 1 + nextra, 1);
    TT_CHECK_OK(st);
    if (st == TT_OK) r_expect(&r, 0, out_dt, 1, &n, want, tol);
    else fprintf(stderr, "  (op %s)\n", op);
    r_end(&r);
}

static void e_check2(const char *op, tt_dtype a_dt, const double *a, tt_dtype b_dt, const double *b, int64_t n,
                     tt_arg *extra, int32_t nextra, tt_dtype out_dt, const double *want, double tol) {
    r_run r;
    r_begin(&r);
    tt_arg args[6];
    args[0] = r_tensor(&r, a_dt, 1, &n, a);
    args[1] = r_tensor(&r, b_dt, 1, &n, b);
    for (int32_t i = 0; i < nextra; i++) args[2 + i] = extra[i];
    tt_status st = r_exec(&r, op, args, 2 + nextra, 1);
    TT_CHECK_OK(st);
    if (st == TT_OK) r_expect(&r, 0, out_dt, 1, &n, want, tol);
    else fprintf(stderr, "  (op %s)\n", op);
    r_end(&r);
}

/* ---- type promotion ---- */

static tt_dtype promo(tt_dtype a, int32_t ra, tt_dtype b, int32_t rb) {
    tt_ir_builder *bl = tt_ir_builder_create();
    tt_lower_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.b = bl;
    int64_t d[2] = {2, 3};
    tt_arg args[2];
    memset(args, 0, sizeof args);
    args[0].kind = args[1].kind = TT_ARG_TENSOR;
    args[0].value = tt_ir_param(bl, a, ra, d);
    args[1].value = tt_ir_param(bl, b, rb, d);
    tt_dtype r = tt_lower_result_type_ctx(&ctx, args, 2, NULL);
    tt_lower_bind(&ctx); /* the ctx-less form must agree once bound */
    TT_CHECK(tt_lower_result_type(args, 2) == r);
    tt_lower_bind(NULL);
    tt_ir_builder_destroy(bl);
    return r;
}

static void promote_types_mirrors_c10_table(void) {
    TT_CHECK(tt_lower_promote_types(TT_U8, TT_I8) == TT_I16);
    TT_CHECK(tt_lower_promote_types(TT_U8, TT_I16) == TT_I16);
    TT_CHECK(tt_lower_promote_types(TT_U8, TT_I64) == TT_I64);
    TT_CHECK(tt_lower_promote_types(TT_BF16, TT_F16) == TT_F32);
    TT_CHECK(tt_lower_promote_types(TT_BF16, TT_F64) == TT_F64);
    TT_CHECK(tt_lower_promote_types(TT_BOOL, TT_U8) == TT_U8);
    TT_CHECK(tt_lower_promote_types(TT_I64, TT_BF16) == TT_BF16);
    TT_CHECK(tt_lower_promote_types(TT_I32, TT_I8) == TT_I32);
    TT_CHECK(tt_lower_promote_types(TT_F16, TT_F16) == TT_F16);
}

static void result_type_ranks_dim_tensors_over_zero_dim_ones(void) {
    TT_CHECK(promo(TT_F32, 2, TT_F64, 0) == TT_F32); /* same kind: the dim tensor wins */
    TT_CHECK(promo(TT_I32, 2, TT_F64, 0) == TT_F64); /* higher kind in a lower category promotes */
    TT_CHECK(promo(TT_I32, 2, TT_I64, 0) == TT_I32);
    TT_CHECK(promo(TT_BOOL, 2, TT_I64, 0) == TT_I64);
    TT_CHECK(promo(TT_F16, 1, TT_BF16, 1) == TT_F32);
    TT_CHECK(promo(TT_U8, 1, TT_I8, 1) == TT_I16);
    TT_CHECK(promo(TT_I64, 0, TT_F16, 0) == TT_F16);
    TT_CHECK(promo(TT_BF16, 2, TT_F32, 0) == TT_BF16);
}

static void result_type_treats_python_numbers_as_the_lowest_category(void) {
    tt_ir_builder *bl = tt_ir_builder_create();
    tt_lower_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.b = bl;
    int64_t d[1] = {3};
    tt_arg a[2];
    memset(a, 0, sizeof a);
    a[0].kind = TT_ARG_TENSOR;
    a[0].value = tt_ir_param(bl, TT_I32, 1, d);
    a[1] = r_scalar_f(2.5);
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_F32); /* int tensor + float -> default dtype */
    a[1] = r_scalar_i(7);
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_I32);
    a[0].value = tt_ir_param(bl, TT_BOOL, 1, d);
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_I64); /* bool tensor + int -> i64 */
    a[1] = r_scalar_b(true);
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_BOOL);
    a[0].value = tt_ir_param(bl, TT_BF16, 1, d);
    a[1] = r_scalar_f(1e10);
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_BF16);
    /* a wrapped-number f64 tensor counts as the default dtype */
    a[0].value = tt_ir_param(bl, TT_I64, 1, d);
    a[1].kind = TT_ARG_TENSOR;
    a[1].value = tt_ir_param(bl, TT_F64, 0, d);
    a[1].wrapped_number = true;
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_F32);
    a[1].wrapped_number = false;
    TT_CHECK(tt_lower_result_type_ctx(&ctx, a, 2, NULL) == TT_F64);
    /* the ctx-less form without a bound builder reads .dtype / .n */
    tt_arg s[2];
    memset(s, 0, sizeof s);
    s[0].kind = TT_ARG_TENSOR;
    s[0].value = 0;
    s[0].dtype = TT_I16;
    s[0].n = 1;
    s[1] = r_scalar_f(0.5);
    TT_CHECK(tt_lower_result_type(s, 2) == TT_F32);
    tt_ir_builder_destroy(bl);
}

/* ---- shapes, scalars, dims ---- */

static void broadcast_shapes_follow_numpy_and_report_pytorchs_message(void) {
    int64_t a[3] = {4, 1, 3}, b[2] = {5, 1}, out[TT_MAX_RANK];
    int32_t rank = 0;
    TT_CHECK_OK(tt_lower_broadcast_shapes(3, a, 2, b, &rank, out));
    TT_CHECK(rank == 3 && out[0] == 4 && out[1] == 5 && out[2] == 3);
    int64_t c[2] = {2, 3}, e[2] = {2, 4};
    TT_CHECK(tt_lower_broadcast_shapes(2, c, 2, e, &rank, out) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strcmp(tt_last_error(), "The size of tensor a (3) must match the size of tensor b (4) at "
                                     "non-singleton dimension 1") == 0);
    int64_t z[1] = {0}, o[2] = {3, 1};
    TT_CHECK_OK(tt_lower_broadcast_shapes(1, z, 2, o, &rank, out));
    TT_CHECK(rank == 2 && out[0] == 3 && out[1] == 0);
}

static void wrap_dim_accepts_negative_dims_and_rejects_out_of_range(void) {
    tt_ir_builder *bl = tt_ir_builder_create();
    tt_lower_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.b = bl;
    TT_CHECK(tt_lower_wrap_dim(&ctx, -1, 2) == 1);
    TT_CHECK(tt_lower_wrap_dim(&ctx, 0, 0) == 0);
    TT_CHECK(tt_lower_wrap_dim(&ctx, -1, 0) == 0);
    TT_CHECK_OK(tt_ir_builder_status(bl));
    tt_lower_wrap_dim(&ctx, 3, 2);
    TT_CHECK(tt_ir_builder_status(bl) == TT_STATUS_INDEX);
    TT_CHECK(strcmp(tt_last_error(), "Dimension out of range (expected to be in range of [-2, 1], but got 3)") == 0);
    tt_ir_builder_destroy(bl);
}

static void scalar_args_become_parameters_converted_to_the_op_dtype(void) {
    tt_ir_builder *bl = tt_ir_builder_create();
    tt_lower_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.b = bl;
    tt_arg f = r_scalar_f(2.7), i = r_scalar_i(300);
    tt_ir_value v = tt_lower_arg(&ctx, &f, TT_I64);
    TT_CHECK(v != TT_IR_NONE && tt_ir_type_of(bl, v)->dtype == TT_I64);
    TT_CHECK(ctx.n_scalars == 1 && ctx.scalars[0].i == 2 && ctx.scalars[0].param_index == 0);
    tt_lower_arg(&ctx, &i, TT_U8);
    TT_CHECK(ctx.n_scalars == 2 && ctx.scalars[1].i == 44); /* wraps like PyTorch's cast */
    tt_lower_arg(&ctx, &f, TT_F32);
    TT_CHECK(ctx.scalars[2].f == 2.7 && ctx.scalars[2].dtype == TT_F32);
    for (int k = ctx.n_scalars; k < TT_LOWER_MAX_SCALARS; k++) tt_lower_arg(&ctx, &f, TT_F32);
    TT_CHECK_OK(tt_ir_builder_status(bl));
    TT_CHECK(tt_lower_arg(&ctx, &f, TT_F32) == TT_IR_NONE);
    TT_CHECK(tt_ir_builder_status(bl) == TT_STATUS_UNSUPPORTED);
    tt_ir_builder_destroy(bl);
}

static void rng_without_a_generator_uses_seed_zero(void) {
    tt_ir_builder *bl = tt_ir_builder_create();
    tt_lower_ctx ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.b = bl;
    tt_ir_value s, o;
    tt_lower_rng(&ctx, 10, &s, &o);
    TT_CHECK(s != TT_IR_NONE && o != TT_IR_NONE);
    TT_CHECK(ctx.n_scalars == 2 && ctx.scalars[0].i == 0 && ctx.scalars[1].dtype == TT_I64);
    tt_ir_builder_destroy(bl);
}

/* ---- end to end ---- */

static void add_broadcasts_and_scales_by_alpha(void) {
    r_run r;
    r_begin(&r);
    int64_t da[2] = {2, 3}, db[1] = {3};
    double a[6] = {1, 2, 3, 4, 5, 6}, b[3] = {10, 20, 30};
    tt_arg args[3] = {r_tensor(&r, TT_F32, 2, da, a), r_tensor(&r, TT_F32, 1, db, b), r_scalar_f(0.5)};
    TT_CHECK_OK(r_exec(&r, "aten::add.Tensor", args, 3, 1));
    double want[6] = {6, 12, 18, 9, 15, 21};
    r_expect(&r, 0, TT_F32, 2, da, want, 0);
    r_end(&r);
}

static void add_of_int_tensor_and_float_scalar_gives_f32(void) {
    double x[3] = {1, 2, 3}, w[3] = {3.5, 4.5, 5.5};
    tt_arg ex[2] = {r_scalar_f(2.5), r_scalar_i(1)};
    e_check1("aten::add.Scalar", TT_I64, 3, x, ex, 2, TT_F32, w, 0);
}

static void bool_add_is_or_and_bool_sub_is_rejected(void) {
    double a[3] = {1, 0, 0}, b[3] = {1, 1, 0}, w[3] = {1, 1, 0};
    tt_arg one = r_scalar_i(1);
    e_check2("aten::add.Tensor", TT_BOOL, a, TT_BOOL, b, 3, &one, 1, TT_BOOL, w, 0);
    r_run r;
    r_begin(&r);
    int64_t n = 3;
    tt_arg args[3] = {r_tensor(&r, TT_BOOL, 1, &n, a), r_tensor(&r, TT_BOOL, 1, &n, b), r_scalar_i(1)};
    TT_CHECK(r_exec(&r, "aten::sub.Tensor", args, 3, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
}

static void rsub_subtracts_self_from_other(void) {
    double x[3] = {1, 2, 3}, w[3] = {8, 6, 4};
    tt_arg ex[2] = {r_scalar_i(10), r_scalar_i(2)};
    e_check1("aten::rsub.Scalar", TT_I32, 3, x, ex, 2, TT_I32, w, 0);
}

static void integer_true_division_gives_f32(void) {
    double a[3] = {7, -7, 1}, b[3] = {2, 2, 0}, w[3] = {3.5, -3.5, INFINITY};
    e_check2("aten::div.Tensor", TT_I64, a, TT_I64, b, 3, NULL, 0, TT_F32, w, 0);
}

static void div_rounding_modes_match_python(void) {
    double a[4] = {7, -7, 7.5, -0.5}, b[4] = {2, 2, -2, 4};
    double wf[4] = {3, -4, -4, -1}, wt[4] = {3, -3, -3, -0.0};
    tt_arg fl = r_str("floor"), tr = r_str("trunc");
    e_check2("aten::div.Tensor_mode", TT_F32, a, TT_F32, b, 4, &fl, 1, TT_F32, wf, 0);
    e_check2("aten::div.Tensor_mode", TT_F32, a, TT_F32, b, 4, &tr, 1, TT_F32, wt, 0);
    e_check2("aten::floor_divide", TT_F32, a, TT_F32, b, 4, NULL, 0, TT_F32, wf, 0);
}

static void remainder_takes_the_sign_of_the_divisor(void) {
    double a[4] = {5, -5, 5, -5}, b[4] = {3, 3, -3, -3};
    double wr[4] = {2, 1, -1, -2}, wf[4] = {2, -2, 2, -2};
    e_check2("aten::remainder.Tensor", TT_F32, a, TT_F32, b, 4, NULL, 0, TT_F32, wr, 0);
    e_check2("aten::fmod.Tensor", TT_F32, a, TT_F32, b, 4, NULL, 0, TT_F32, wf, 0);
}

static void integer_division_is_left_to_the_cpu(void) {
    r_run r;
    r_begin(&r);
    int64_t n = 2;
    double a[2] = {1, 2};
    tt_arg args[2] = {r_tensor(&r, TT_I64, 1, &n, a), r_tensor(&r, TT_I64, 1, &n, a)};
    TT_CHECK(r_exec(&r, "aten::remainder.Tensor", args, 2, 1) == TT_STATUS_UNSUPPORTED);
    r_end(&r);
}

static void pow_handles_integer_and_scalar_exponents(void) {
    double a[4] = {2, -1, 1, 3}, b[4] = {3, -3, -2, -1}, w[4] = {8, -1, 1, 0};
    e_check2("aten::pow.Tensor_Tensor", TT_I64, a, TT_I64, b, 4, NULL, 0, TT_I64, w, 0);
    double x[3] = {1.5, -2, 3}, w2[3] = {2.25, 4, 9};
    tt_arg two = r_scalar_i(2);
    e_check1("aten::pow.Tensor_Scalar", TT_F32, 3, x, &two, 1, TT_F32, w2, 0);
    double x3[2] = {4, 9}, w3[2] = {8, 27};
    tt_arg e15 = r_scalar_f(1.5);
    e_check1("aten::pow.Tensor_Scalar", TT_I32, 2, x3, &e15, 1, TT_F32, w3, 1e-6);
    r_run r;
    r_begin(&r);
    int64_t n = 2;
    tt_arg args[2] = {r_tensor(&r, TT_I64, 1, &n, x3), r_scalar_i(-1)};
    TT_CHECK(r_exec(&r, "aten::pow.Tensor_Scalar", args, 2, 1) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(strcmp(tt_last_error(), "Integers to negative integer powers are not allowed.") == 0);
    r_end(&r);
}

static void float_unary_ops_promote_integers_to_f32(void) {
    double x[3] = {0, 1, 4};
    double we[3] = {1, M_E, exp(4.0)}, ws[3] = {0, 1, 2}, wl2[3] = {-INFINITY, 0, 2};
    e_check1("aten::exp", TT_I64, 3, x, NULL, 0, TT_F32, we, 1e-6);
    e_check1("aten::sqrt", TT_I32, 3, x, NULL, 0, TT_F32, ws, 1e-6);
    e_check1("aten::log2", TT_U8, 3, x, NULL, 0, TT_F32, wl2, 1e-6);
    double wsig[3] = {0.5, 1 / (1 + exp(-1.0)), 1 / (1 + exp(-4.0))};
    e_check1("aten::sigmoid", TT_BOOL, 2, x, NULL, 0, TT_F32, wsig, 1e-6);
}

static void bf16_unary_computes_in_f32_and_rounds_once(void) {
    double x[3] = {0.5, 1, 2};
    double w[3];
    for (int i = 0; i < 3; i++) w[i] = tt_bf16_to_f32(tt_f32_to_bf16((float)tanh(x[i])));
    e_check1("aten::tanh", TT_BF16, 3, x, NULL, 0, TT_BF16, w, 0);
}

static void rounding_ops_keep_integers_and_round_half_to_even(void) {
    double x[5] = {0.5, 1.5, 2.5, -0.5, -1.7}, wr[5] = {0, 2, 2, -0.0, -2}, wt[5] = {0, 1, 2, -0.0, -1};
    double wfr[5] = {0.5, 0.5, 0.5, -0.5, -0.7};
    e_check1("aten::round", TT_F32, 5, x, NULL, 0, TT_F32, wr, 0);
    e_check1("aten::trunc", TT_F32, 5, x, NULL, 0, TT_F32, wt, 0);
    e_check1("aten::frac", TT_F32, 5, x, NULL, 0, TT_F32, wfr, 1e-6);
    double xi[2] = {3, -2};
    e_check1("aten::floor", TT_I64, 2, xi, NULL, 0, TT_I64, xi, 0);
    double xd[2] = {1.2345, -2.5551}, wd[2] = {1.23, -2.56};
    tt_arg dec;
    memset(&dec, 0, sizeof dec);
    dec.kind = TT_ARG_INT;
    dec.i = 2;
    e_check1("aten::round.decimals", TT_F64, 2, xd, &dec, 1, TT_F64, wd, 1e-12);
}

static void comparisons_promote_then_compare(void) {
    double a[3] = {1, 2, 3}, w[3] = {0, 0, 1};
    tt_arg s = r_scalar_f(2.5);
    e_check1("aten::gt.Scalar", TT_I64, 3, a, &s, 1, TT_BOOL, w, 0);
    double b[3] = {1, 2.5, 2}, we[3] = {1, 0, 0};
    e_check2("aten::eq.Tensor", TT_I32, a, TT_F32, b, 3, NULL, 0, TT_BOOL, we, 0);
}

static void logical_and_bitwise_ops(void) {
    double a[4] = {0, 1, 2, 0.5}, b[4] = {0, 0, 3, 1};
    double wand[4] = {0, 0, 1, 1}, wxor[4] = {0, 1, 0, 0};
    e_check2("aten::logical_and", TT_F32, a, TT_F32, b, 4, NULL, 0, TT_BOOL, wand, 0);
    e_check2("aten::logical_xor", TT_F32, a, TT_F32, b, 4, NULL, 0, TT_BOOL, wxor, 0);
    double ia[3] = {12, 10, -1}, ib[3] = {10, 6, 7}, wband[3] = {8, 2, 7}, wbor[3] = {14, 14, -1};
    e_check2("aten::bitwise_and.Tensor", TT_I32, ia, TT_I32, ib, 3, NULL, 0, TT_I32, wband, 0);
    e_check2("aten::bitwise_or.Tensor", TT_I32, ia, TT_I32, ib, 3, NULL, 0, TT_I32, wbor, 0);
    double wnot[3] = {-13, -11, 0};
    e_check1("aten::bitwise_not", TT_I64, 3, ia, NULL, 0, TT_I64, wnot, 0);
}

static void shifts_follow_pytorch_out_of_range_rules(void) {
    double a[3] = {1, -1, 5}, b[3] = {9, 3, -1}, wl[3] = {0, -8, 0};
    e_check2("aten::bitwise_left_shift.Tensor", TT_I8, a, TT_I8, b, 3, NULL, 0, TT_I8, wl, 0);
    double ra[3] = {-100, -1, 100}, wr[3] = {-1, -1, 0};
    e_check2("aten::bitwise_right_shift.Tensor", TT_I8, ra, TT_I8, b, 3, NULL, 0, TT_I8, wr, 0);
}

static void maximum_propagates_nan_and_fmax_ignores_it(void) {
    double a[3] = {1, NAN, NAN}, b[3] = {2, 1, NAN}, wm[3] = {2, NAN, NAN}, wf[3] = {2, 1, NAN};
    e_check2("aten::maximum", TT_F32, a, TT_F32, b, 3, NULL, 0, TT_F32, wm, 0);
    e_check2("aten::fmax", TT_F32, a, TT_F32, b, 3, NULL, 0, TT_F32, wf, 0);
}

static void clamp_with_scalar_bounds_and_promotion(void) {
    double x[4] = {-2, 0.5, 3, NAN}, w[4] = {-1, 0.5, 2, NAN};
    tt_arg ex[2] = {r_scalar_i(-1), r_scalar_i(2)};
    e_check1("aten::clamp", TT_F32, 4, x, ex, 2, TT_F32, w, 0);
    double xi[3] = {-3, 0, 3}, wi[3] = {-1.5, 0, 3};
    tt_arg ex2[2] = {r_scalar_f(-1.5), r_none()};
    e_check1("aten::clamp", TT_I64, 3, xi, ex2, 2, TT_F32, wi, 0);
    r_run r;
    r_begin(&r);
    int64_t n = 3;
    tt_arg args[3] = {r_tensor(&r, TT_F32, 1, &n, x), r_none(), r_none()};
    TT_CHECK(r_exec(&r, "aten::clamp", args, 3, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
}

static void where_broadcasts_condition_and_promotes_branches(void) {
    r_run r;
    r_begin(&r);
    int64_t dc[2] = {2, 1}, dx[1] = {3};
    double c[2] = {1, 0}, x[3] = {1, 2, 3};
    tt_arg args[3] = {r_tensor(&r, TT_BOOL, 2, dc, c), r_tensor(&r, TT_I32, 1, dx, x), r_scalar_f(0.5)};
    TT_CHECK_OK(r_exec(&r, "aten::where.ScalarOther", args, 3, 1));
    int64_t dout[2] = {2, 3};
    double want[6] = {1, 2, 3, 0.5, 0.5, 0.5};
    r_expect(&r, 0, TT_F32, 2, dout, want, 0);
    r_end(&r);
}

static void classification_and_nan_to_num(void) {
    double x[5] = {1, NAN, INFINITY, -INFINITY, -0.0};
    double wnan[5] = {0, 1, 0, 0, 0}, winf[5] = {0, 0, 1, 1, 0}, wsb[5] = {0, 0, 0, 1, 1};
    e_check1("aten::isnan", TT_F32, 5, x, NULL, 0, TT_BOOL, wnan, 0);
    e_check1("aten::isinf", TT_F32, 5, x, NULL, 0, TT_BOOL, winf, 0);
    e_check1("aten::signbit", TT_F32, 5, x, NULL, 0, TT_BOOL, wsb, 0);
    double wn[5] = {1, 0, FLT_MAX, -FLT_MAX, 0};
    tt_arg ex[3] = {r_none(), r_none(), r_none()};
    e_check1("aten::nan_to_num", TT_F32, 5, x, ex, 3, TT_F32, wn, 0);
    double wn2[5] = {1, 7, 100, -FLT_MAX, 0};
    tt_arg ex2[3] = {r_scalar_f(7), r_scalar_f(100), r_none()};
    ex2[0].kind = ex2[1].kind = TT_ARG_FLOAT;
    e_check1("aten::nan_to_num", TT_F32, 5, x, ex2, 3, TT_F32, wn2, 0);
}

static void composite_binary_ops(void) {
    double a[3] = {0, 2, 0}, b[3] = {3, 3, NAN}, wx[3] = {0, 2 * log(3.0), NAN};
    e_check2("aten::xlogy.Tensor", TT_F32, a, TT_F32, b, 3, NULL, 0, TT_F32, wx, 1e-6);
    double la[3] = {1, INFINITY, -INFINITY}, lb[3] = {2, INFINITY, -INFINITY};
    double wl[3] = {2 + log1p(exp(-1.0)), INFINITY, -INFINITY};
    e_check2("aten::logaddexp", TT_F32, la, TT_F32, lb, 3, NULL, 0, TT_F32, wl, 1e-6);
    double ha[2] = {3, 1e30}, hb[2] = {4, 1e30}, wh[2] = {5, 1.4142135623730951e30};
    e_check2("aten::hypot", TT_F32, ha, TT_F32, hb, 2, NULL, 0, TT_F32, wh, 1e-6);
    double ca[3] = {1, 2, 3}, cb[3] = {-1, 0, -0.0}, wc[3] = {-1, 2, -3};
    e_check2("aten::copysign.Tensor", TT_I64, ca, TT_F32, cb, 3, NULL, 0, TT_F32, wc, 0);
    double s[3] = {1, 2, 3}, e[3] = {11, 12, 13}, wlerp[3] = {3.5, 4.5, 5.5};
    tt_arg wgt = r_scalar_f(0.25);
    e_check2("aten::lerp.Scalar", TT_F32, s, TT_F32, e, 3, &wgt, 1, TT_F32, wlerp, 1e-6);
    double hx[3] = {-1, 0, 2}, hv[3] = {5, 5, 5}, whv[3] = {0, 5, 1};
    e_check2("aten::heaviside", TT_F32, hx, TT_F32, hv, 3, NULL, 0, TT_F32, whv, 0);
}

static void addcmul_and_addcdiv_scale_by_value(void) {
    r_run r;
    r_begin(&r);
    int64_t n = 3;
    double s[3] = {1, 1, 1}, t1[3] = {1, 2, 3}, t2[3] = {2, 4, 6};
    tt_arg args[4] = {r_tensor(&r, TT_F32, 1, &n, s), r_tensor(&r, TT_F32, 1, &n, t1), r_tensor(&r, TT_F32, 1, &n, t2),
                      r_scalar_f(0.5)};
    TT_CHECK_OK(r_exec(&r, "aten::addcmul", args, 4, 1));
    double w[3] = {2, 5, 10};
    r_expect(&r, 0, TT_F32, 1, &n, w, 0);
    r_end(&r);
    r_begin(&r);
    tt_arg args2[4] = {r_tensor(&r, TT_F32, 1, &n, s), r_tensor(&r, TT_F32, 1, &n, t1),
                       r_tensor(&r, TT_F32, 1, &n, t2), r_scalar_i(2)};
    TT_CHECK_OK(r_exec(&r, "aten::addcdiv", args2, 4, 1));
    double w2[3] = {2, 2, 2};
    r_expect(&r, 0, TT_F32, 1, &n, w2, 0);
    r_end(&r);
}

/* ---- activations ---- */

static void activations_match_their_definitions(void) {
    double x[4] = {-2, -0.5, 0, 1.5};
    double wrelu[4] = {0, 0, 0, 1.5};
    e_check1("aten::relu", TT_F32, 4, x, NULL, 0, TT_F32, wrelu, 0);
    double wg[4], wgt[4], ws[4], wm[4], wsp[4], whs[4];
    for (int i = 0; i < 4; i++) {
        double v = x[i];
        wg[i] = 0.5 * v * (1 + erf(v / sqrt(2.0)));
        wgt[i] = 0.5 * v * (1 + tanh(sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
        ws[i] = v / (1 + exp(-v));
        wm[i] = v * tanh(log1p(exp(v)));
        wsp[i] = log1p(exp(v));
        whs[i] = v * fmin(fmax(v + 3, 0), 6) / 6;
    }
    tt_arg none = r_str("none"), th = r_str("tanh");
    e_check1("aten::gelu", TT_F32, 4, x, &none, 1, TT_F32, wg, 1e-6);
    e_check1("aten::gelu", TT_F32, 4, x, &th, 1, TT_F32, wgt, 1e-6);
    e_check1("aten::silu", TT_F32, 4, x, NULL, 0, TT_F32, ws, 1e-6);
    e_check1("aten::mish", TT_F32, 4, x, NULL, 0, TT_F32, wm, 1e-6);
    e_check1("aten::hardswish", TT_F32, 4, x, NULL, 0, TT_F32, whs, 1e-6);
    tt_arg sp[2] = {r_scalar_i(1), r_scalar_i(20)};
    e_check1("aten::softplus", TT_F32, 4, x, sp, 2, TT_F32, wsp, 1e-6);
    double wl[4] = {-0.2, -0.05, 0, 1.5};
    tt_arg slope = r_scalar_f(0.1);
    e_check1("aten::leaky_relu", TT_F32, 4, x, &slope, 1, TT_F32, wl, 1e-6);
    double wht[4] = {-1, -0.5, 0, 1};
    tt_arg ht[2] = {r_scalar_i(-1), r_scalar_i(1)};
    e_check1("aten::hardtanh", TT_F32, 4, x, ht, 2, TT_F32, wht, 0);
    double welu[4] = {expm1(-2.0), expm1(-0.5), 0, 1.5};
    tt_arg el[3] = {r_scalar_i(1), r_scalar_i(1), r_scalar_i(1)};
    e_check1("aten::elu", TT_F32, 4, x, el, 3, TT_F32, welu, 1e-6);
}

static void activation_backwards_match_their_derivatives(void) {
    double g[4] = {1, 2, 3, 4}, x[4] = {-2, -0.5, 0.25, 1.5};
    double wth[4] = {0, 0, 3, 4};
    tt_arg zero = r_scalar_i(0);
    e_check2("aten::threshold_backward", TT_F32, g, TT_F32, x, 4, &zero, 1, TT_F32, wth, 0);
    double wgel[4], wsil[4], wsig[4], wtanh[4];
    for (int i = 0; i < 4; i++) {
        double v = x[i];
        double cdf = 0.5 * (1 + erf(v / sqrt(2.0))), pdf = exp(-0.5 * v * v) / sqrt(2 * M_PI);
        wgel[i] = g[i] * (cdf + v * pdf);
        double s = 1 / (1 + exp(-v));
        wsil[i] = g[i] * s * (1 + v * (1 - s));
        wsig[i] = g[i] * (1 - v) * v; /* x read as the forward output */
        wtanh[i] = g[i] * (1 - v * v);
    }
    tt_arg none = r_str("none");
    e_check2("aten::gelu_backward", TT_F32, g, TT_F32, x, 4, &none, 1, TT_F32, wgel, 1e-6);
    e_check2("aten::silu_backward", TT_F32, g, TT_F32, x, 4, NULL, 0, TT_F32, wsil, 1e-6);
    e_check2("aten::sigmoid_backward", TT_F32, g, TT_F32, x, 4, NULL, 0, TT_F32, wsig, 1e-6);
    e_check2("aten::tanh_backward", TT_F32, g, TT_F32, x, 4, NULL, 0, TT_F32, wtanh, 1e-6);
}

static const tt_test_case cases[] = {
    {"promote_types mirrors c10's table", promote_types_mirrors_c10_table},
    {"result_type ranks dim tensors over zero-dim ones", result_type_ranks_dim_tensors_over_zero_dim_ones},
    {"result_type treats Python numbers as the lowest category",
     result_type_treats_python_numbers_as_the_lowest_category},
    {"broadcast shapes follow numpy and report PyTorch's message",
     broadcast_shapes_follow_numpy_and_report_pytorchs_message},
    {"wrap_dim accepts negative dims and rejects out of range",
     wrap_dim_accepts_negative_dims_and_rejects_out_of_range},
    {"scalar args become parameters converted to the op dtype",
     scalar_args_become_parameters_converted_to_the_op_dtype},
    {"rng without a generator uses seed zero", rng_without_a_generator_uses_seed_zero},
    {"add broadcasts and scales by alpha", add_broadcasts_and_scales_by_alpha},
    {"add of int tensor and float scalar gives f32", add_of_int_tensor_and_float_scalar_gives_f32},
    {"bool add is or and bool sub is rejected", bool_add_is_or_and_bool_sub_is_rejected},
    {"rsub subtracts self from other", rsub_subtracts_self_from_other},
    {"integer true division gives f32", integer_true_division_gives_f32},
    {"div rounding modes match Python", div_rounding_modes_match_python},
    {"remainder takes the sign of the divisor", remainder_takes_the_sign_of_the_divisor},
    {"integer division is left to the CPU", integer_division_is_left_to_the_cpu},
    {"pow handles integer and scalar exponents", pow_handles_integer_and_scalar_exponents},
    {"float unary ops promote integers to f32", float_unary_ops_promote_integers_to_f32},
    {"bf16 unary computes in f32 and rounds once", bf16_unary_computes_in_f32_and_rounds_once},
    {"rounding ops keep integers and round half to even", rounding_ops_keep_integers_and_round_half_to_even},
    {"comparisons promote then compare", comparisons_promote_then_compare},
    {"logical and bitwise ops", logical_and_bitwise_ops},
    {"shifts follow PyTorch's out-of-range rules", shifts_follow_pytorch_out_of_range_rules},
    {"maximum propagates NaN and fmax ignores it", maximum_propagates_nan_and_fmax_ignores_it},
    {"clamp with scalar bounds and promotion", clamp_with_scalar_bounds_and_promotion},
    {"where broadcasts condition and promotes branches", where_broadcasts_condition_and_promotes_branches},
    {"classification and nan_to_num", classification_and_nan_to_num},
    {"composite binary ops", composite_binary_ops},
    {"addcmul and addcdiv scale by value", addcmul_and_addcdiv_scale_by_value},
    {"activations match their definitions", activations_match_their_definitions},
    {"activation backwards match their derivatives", activation_backwards_match_their_derivatives},
    {NULL, NULL},
};

int main(void) { return tt_test_run(cases); }
