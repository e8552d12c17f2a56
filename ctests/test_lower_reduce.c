/* test_lower_reduce.c — the reduce and nn lowerings built into programs and run on the host driver, compared
 * with values computed by hand (or by PyTorch CPU, noted beside them). */
#include "tt_lower_run.h"


static const double X23[6] = {1, -2, 3, 4, 5, -6}; /* a [2, 3] matrix */

/* ---- reduce ---- */

static void test_sum_of_ints_over_a_dim_is_i64_and_keeps_dims(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[4] = {r_tensor(&r, TT_I32, 2, DIMS(2, 3), X23), r_ints(1, DIMS(1)), r_bool(true), r_none()};
    TT_CHECK_OK(r_exec(&r, "aten::sum.dim_IntList", a, 4, 1));
    r_expect(&r, 0, TT_I64, 2, DIMS(2, 1), VALS(2, 3), 0);
    r_end(&r);
}

static void test_sum_with_no_dim_and_dtype_converts_first(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[2] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), X23), r_dtype(TT_F64)};
    TT_CHECK_OK(r_exec(&r, "aten::sum", a, 2, 1));
    r_expect(&r, 0, TT_F64, 0, NULL, VALS(5), 0);
    r_end(&r);
}

static void test_sum_with_repeated_dims_is_an_error(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[4] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), X23), r_ints(2, DIMS(0, -2)), r_bool(false), r_none()};
    TT_CHECK(r_exec(&r, "aten::sum.dim_IntList", a, 4, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
}

static void test_mean_of_bf16_rounds_once_and_mean_of_ints_fails(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[4] = {r_tensor(&r, TT_BF16, 2, DIMS(2, 3), X23), r_ints(1, DIMS(0)), r_bool(false), r_none()};
    TT_CHECK_OK(r_exec(&r, "aten::mean.dim", a, 4, 1));
    r_expect(&r, 0, TT_BF16, 1, DIMS(3), VALS(2.5, 1.5, -1.5), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg b[2] = {r_tensor(&r, TT_I64, 1, DIMS(3), X23), r_none()};
    TT_CHECK(r_exec(&r, "aten::mean", b, 2, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
}

static void test_max_dim_returns_values_and_first_indices(void) {
    r_run r;
    r_begin(&r);
    static const double x[6] = {3, 1, 3, 0, 7, 7};
    tt_arg a[3] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), x), r_int(-1), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::max.dim", a, 3, 2));
    r_expect(&r, 0, TT_F32, 1, DIMS(2), VALS(3, 7), 0);
    r_expect(&r, 1, TT_I64, 1, DIMS(2), VALS(0, 1), 0);
    r_end(&r);
}

static void test_argmin_without_dim_indexes_the_flattened_tensor(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), X23), r_none(), r_bool(true)};
    TT_CHECK_OK(r_exec(&r, "aten::argmin", a, 3, 1));
    r_expect(&r, 0, TT_I64, 2, DIMS(1, 1), VALS(5), 0);
    r_end(&r);
}

static void test_amax_over_an_empty_dim_is_an_index_error(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 2, DIMS(0, 3), X23), r_ints(1, DIMS(0)), r_bool(false)};
    TT_CHECK(r_exec(&r, "aten::amax", a, 3, 1) == TT_STATUS_INDEX);
    r_end(&r);
}

static void test_var_mean_with_correction_matches_pytorch(void) {
    /* torch.var_mean(x, dim=1, correction=1) for X23: var [6.3333333, 37], mean [0.6666667, 1] */
    r_run r;
    r_begin(&r);
    tt_arg corr = r_kind(TT_ARG_SCALAR);
    corr.dtype = TT_I64;
    corr.i = 1;
    tt_arg a[4] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), X23), r_ints(1, DIMS(1)), corr, r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::var_mean.correction", a, 4, 2));
    r_expect(&r, 0, TT_F32, 1, DIMS(2), VALS(19.0 / 3.0, 37.0), 1e-6);
    r_expect(&r, 1, TT_F32, 1, DIMS(2), VALS(2.0 / 3.0, 1.0), 1e-6);
    r_end(&r);
}

static void test_prod_cumsum_any_and_count_nonzero(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[2] = {r_tensor(&r, TT_I32, 2, DIMS(2, 3), X23), r_none()};
    TT_CHECK_OK(r_exec(&r, "aten::prod", a, 2, 1));
    r_expect(&r, 0, TT_I64, 0, NULL, VALS(720), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg c[3] = {r_tensor(&r, TT_BOOL, 1, DIMS(4), VALS(1, 0, 1, 1)), r_int(0), r_none()};
    TT_CHECK_OK(r_exec(&r, "aten::cumsum", c, 3, 1));
    r_expect(&r, 0, TT_I64, 1, DIMS(4), VALS(1, 1, 2, 3), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg y[3] = {r_tensor(&r, TT_U8, 2, DIMS(2, 2), VALS(0, 0, 0, 5)), r_int(1), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::any.dim", y, 3, 1));
    r_expect(&r, 0, TT_U8, 1, DIMS(2), VALS(0, 1), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg z[2] = {r_tensor(&r, TT_F32, 2, DIMS(2, 2), VALS(0, NAN, 0, 5)), r_ints(1, DIMS(0))};
    TT_CHECK_OK(r_exec(&r, "aten::count_nonzero.dim_IntList", z, 2, 1));
    r_expect(&r, 0, TT_I64, 1, DIMS(2), VALS(0, 2), 0);
    r_end(&r);
}

static void test_logsumexp_and_vector_norms(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 1, DIMS(3), VALS(1000, 1000, -INFINITY)), r_ints(1, DIMS(0)), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::logsumexp", a, 3, 1));
    r_expect(&r, 0, TT_F32, 0, NULL, VALS(1000.6931471805599), 1e-6);
    r_end(&r);
    static const double ords[4] = {2, 1, INFINITY, 3};
    static const double want[4] = {5, 7, 4, 4.497941445275415};
    for (int k = 0; k < 4; k++) {
        r_begin(&r);
        tt_arg o = r_kind(TT_ARG_SCALAR);
        o.dtype = TT_F64;
        o.f = ords[k];
        tt_arg v[5] = {r_tensor(&r, TT_F32, 1, DIMS(2), VALS(3, -4)), o, r_none(), r_bool(false), r_none()};
        TT_CHECK_OK(r_exec(&r, "aten::linalg_vector_norm", v, 5, 1));
        r_expect(&r, 0, TT_F32, 0, NULL, &want[k], 1e-6);
        r_end(&r);
    }
}

/* ---- nn ---- */

static void test_softmax_and_log_softmax_along_the_last_dim(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 2, DIMS(2, 2), VALS(0, 0, 1, 1000)), r_int(-1), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::_softmax", a, 3, 1));
    r_expect(&r, 0, TT_F32, 2, DIMS(2, 2), VALS(0.5, 0.5, 0, 1), 1e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg b[3] = {r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0, 0)), r_int(0), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::_log_softmax", b, 3, 1));
    r_expect(&r, 0, TT_F32, 1, DIMS(2), VALS(-0.6931471805599453, -0.6931471805599453), 1e-6);
    r_end(&r);
}

static void test_layer_norm_returns_output_mean_and_rstd(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[5] = {r_tensor(&r, TT_F32, 2, DIMS(2, 2), VALS(1, 3, 2, 2)), r_ints(1, DIMS(2)), r_none(), r_none(),
                   r_float(0.0)};
    TT_CHECK_OK(r_exec(&r, "aten::native_layer_norm", a, 5, 3));
    r_expect(&r, 0, TT_F32, 2, DIMS(2, 2), VALS(-1, 1, NAN, NAN), 1e-6); /* zero variance, eps 0: 0 * inf */
    r_expect(&r, 1, TT_F32, 2, DIMS(2, 1), VALS(2, 2), 1e-6);
    r_expect(&r, 2, TT_F32, 2, DIMS(2, 1), VALS(1, INFINITY), 1e-6);
    r_end(&r);
}

static void test_nll_loss_mean_ignores_the_ignore_index(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[5] = {r_tensor(&r, TT_F32, 2, DIMS(3, 2), VALS(-1, -2, -3, -4, -5, -6)),
                   r_tensor(&r, TT_I64, 1, DIMS(3), VALS(1, 0, -100)), r_none(), r_int(1), r_int(-100)};
    TT_CHECK_OK(r_exec(&r, "aten::nll_loss_forward", a, 5, 2));
    r_expect(&r, 0, TT_F32, 0, NULL, VALS(2.5), 1e-6);
    r_expect(&r, 1, TT_F32, 0, NULL, VALS(2), 1e-6);
    r_end(&r);
}

static void test_mse_and_huber_losses(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1, 4)), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0, 0)),
                   r_int(1)};
    TT_CHECK_OK(r_exec(&r, "aten::mse_loss", a, 3, 1));
    r_expect(&r, 0, TT_F32, 0, NULL, VALS(8.5), 1e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg h[4] = {r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.5, 4)), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0, 0)),
                   r_int(0), r_float(1.0)};
    TT_CHECK_OK(r_exec(&r, "aten::huber_loss", h, 4, 1));
    r_expect(&r, 0, TT_F32, 1, DIMS(2), VALS(0.125, 3.5), 1e-6);
    r_end(&r);
}

static void test_dropout_in_eval_is_identity_with_a_full_mask(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[3] = {r_tensor(&r, TT_F32, 1, DIMS(3), VALS(1, 2, 3)), r_float(0.5), r_bool(false)};
    TT_CHECK_OK(r_exec(&r, "aten::native_dropout", a, 3, 2));
    r_expect(&r, 0, TT_F32, 1, DIMS(3), VALS(1, 2, 3), 0);
    r_expect(&r, 1, TT_BOOL, 1, DIMS(3), VALS(1, 1, 1), 0);
    r_end(&r);
}

static void test_dropout_in_training_zeroes_or_scales_each_element(void) {
    r_run r;
    r_begin(&r);
    static const double ones[64] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                                    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    tt_arg a[3] = {r_tensor(&r, TT_F32, 1, DIMS(32), ones), r_float(0.5), r_none()};
    TT_CHECK_OK(r_exec(&r, "aten::native_dropout", a, 3, 2));
    int kept = 0;
    for (int i = 0; i < 32; i++) {
        TT_CHECK(r.out[0][i] == (r.out[1][i] ? 2.0 : 0.0));
        kept += r.out[1][i] != 0;
    }
    TT_CHECK(kept > 4 && kept < 28);
    r_end(&r);
}

/* Inputs and expected values below come from PyTorch CPU (torch 2.13). */
static const double LX[6] = {1, 3, 0.5, 2, -1, 4}, LG[6] = {0.5, -1, 2, 1, 1, -3};
static const double BX[8] = {1, 2, 3, -4, 0, 5, -2, 1}, BG[8] = {1, -1, 0.5, 2, 3, 0, -1, 1};

static void test_layer_norm_backward_matches_pytorch(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[8] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), LG),
                   r_tensor(&r, TT_F32, 2, DIMS(2, 3), LX),
                   r_ints(1, DIMS(3)),
                   r_tensor(&r, TT_F32, 2, DIMS(2, 1), VALS(1.5, 1.6666666269302368)),
                   r_tensor(&r, TT_F32, 2, DIMS(2, 1), VALS(0.9258161187171936, 0.48666366934776306)),
                   r_tensor(&r, TT_F32, 1, DIMS(3), VALS(2, 0.5, 1)),
                   r_tensor(&r, TT_F32, 1, DIMS(3), VALS(0, 1, -1)),
                   r_kind(TT_ARG_BOOLS)};
    TT_CHECK_OK(r_exec(&r, "aten::native_layer_norm_backward", a, 8, 3));
    r_expect(&r, 0, TT_F32, 2, DIMS(2, 3),
             VALS(-0.27553677558898926, 0.055097103118896484, 0.22043991088867188, 1.1526243686676025,
                  -0.461047887802124, -0.6915763020515442), 1e-5);
    r_expect(&r, 1, TT_F32, 1, DIMS(3), VALS(-0.06923279166221619, -2.6864938735961914, -5.258277893066406), 1e-5);
    r_expect(&r, 2, TT_F32, 1, DIMS(3), VALS(1.5, 0.0, -1.0), 1e-6);
    r_end(&r);
}

static void test_batch_norm_functional_training_updates_running_stats(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[8] = {r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BX), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1.5, -1)),
                   r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.1, 0.2)), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.5, -0.5)),
                   r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1, 2)), r_bool(true), r_float(0.1), r_float(1e-5)};
    TT_CHECK_OK(r_exec(&r, "aten::_native_batch_norm_legit_functional", a, 8, 5));
    r_expect(&r, 0, TT_F32, 3, DIMS(2, 2, 2),
             VALS(-0.7017825245857239, 0.10000002384185791, -1.099866509437561, 1.4998664855957031,
                  -1.5035650730133057, 2.505347728729248, 0.7570856809616089, -0.357085645198822), 1e-5);
    r_expect(&r, 1, TT_F32, 1, DIMS(2), VALS(2.0, -0.5), 1e-6);
    r_expect(&r, 2, TT_F32, 1, DIMS(2), VALS(0.5345216989517212, 0.3713904321193695), 1e-5);
    r_expect(&r, 3, TT_F32, 1, DIMS(2), VALS(0.6499999761581421, -0.5), 1e-6);
    r_expect(&r, 4, TT_F32, 1, DIMS(2), VALS(1.3666666746139526, 2.7666666507720947), 1e-6);
    r_end(&r);
}

static void test_batch_norm_backward_in_training_matches_pytorch(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[10] = {r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BG), r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BX),
                    r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1.5, -1)), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.5, -0.5)),
                    r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1, 2)), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(2.0, -0.5)),
                    r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.5345216989517212, 0.3713904321193695)),
                    r_bool(true), r_float(1e-5), r_kind(TT_ARG_BOOLS)};
    TT_CHECK_OK(r_exec(&r, "aten::native_batch_norm_backward", a, 10, 3));
    r_expect(&r, 0, TT_F32, 3, DIMS(2, 2, 2),
             VALS(-0.20044447481632233, -1.4031195640563965, -0.05442776530981064, -0.40981027483940125,
                  1.0022304058074951, 0.6013333797454834, 0.6467315554618835, -0.18249350786209106), 1e-5);
    r_expect(&r, 1, TT_F32, 1, DIMS(2), VALS(-3.741652011871338, -0.8356284499168396), 1e-5);
    r_expect(&r, 2, TT_F32, 1, DIMS(2), VALS(3.0, 2.5), 1e-6);
    r_end(&r);
}

static void test_group_norm_and_its_backward_match_pytorch(void) {
    r_run r;
    r_begin(&r);
    tt_arg a[8] = {r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BX), r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1.5, -1)),
                   r_tensor(&r, TT_F32, 1, DIMS(2), VALS(0.1, 0.2)), r_int(2), r_int(2), r_int(2), r_int(1),
                   r_float(1e-5)};
    TT_CHECK_OK(r_exec(&r, "aten::native_group_norm", a, 8, 3));
    r_expect(&r, 0, TT_F32, 3, DIMS(2, 2, 2),
             VALS(0.37854281067848206, 0.9356284141540527, -0.7284760475158691, 1.871256947517395,
                  -0.48834797739982605, 2.4533917903900146, 1.3766958713531494, 0.20000001788139343), 1e-5);
    r_expect(&r, 1, TT_F32, 2, DIMS(2, 1), VALS(0.5, 1.0), 1e-6);
    r_expect(&r, 2, TT_F32, 2, DIMS(2, 1), VALS(0.3713904321193695, 0.3922319710254669), 1e-5);
    r_end(&r);
    r_begin(&r);
    tt_arg b[10] = {r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BG), r_tensor(&r, TT_F32, 3, DIMS(2, 2, 2), BX),
                    r_tensor(&r, TT_F32, 2, DIMS(2, 1), VALS(0.5, 1.0)),
                    r_tensor(&r, TT_F32, 2, DIMS(2, 1), VALS(0.3713904321193695, 0.3922319710254669)),
                    r_tensor(&r, TT_F32, 1, DIMS(2), VALS(1.5, -1)), r_int(2), r_int(2), r_int(2), r_int(1),
                    r_kind(TT_ARG_BOOLS)};
    TT_CHECK_OK(r_exec(&r, "aten::native_group_norm_backward", b, 10, 3));
    r_expect(&r, 0, TT_F32, 3, DIMS(2, 2, 2),
             VALS(0.7491841912269592, -0.44502800703048706, -0.1536785364151001, -0.15047764778137207,
                  1.2106393575668335, 0.011313676834106445, -0.3884599804878235, -0.8334929347038269), 1e-5);
    r_expect(&r, 1, TT_F32, 1, DIMS(2), VALS(-1.548086404800415, -1.7015799283981323), 1e-5);
    r_expect(&r, 2, TT_F32, 1, DIMS(2), VALS(3.0, 2.5), 1e-6);
    r_end(&r);
}

/* bf16 norms compute in f32 and round once: the bf16 result equals the f32 result rounded to bf16. */
static void test_bf16_group_norm_equals_the_f32_result_rounded(void) {
    static const double x[36] = {
        -3.375,     -3.453125, -0.75,      -1.3046875,  2.546875,  2.078125,  -0.94921875, -6.34375,  0.96875,
        -3.796875,  1.046875,  0.92578125, 0.359375,    3.71875,   3.34375,   -0.7421875,  -4.0625,   -5.09375,
        1.703125,   2.375,     1.3203125,  0.337890625, 1.921875,  1.3203125, -0.6484375,  -2.234375, 1.6875,
        0.77734375, 1.5703125, 6.90625,    -4.40625,    -4.75,     3.609375,  0.25390625,  -3.59375,  -0.01434326171875};
    double f32[36];
    r_run r;
    for (int k = 0; k < 2; k++) {
        tt_dtype dt = k ? TT_BF16 : TT_F32;
        r_begin(&r);
        tt_arg a[8] = {r_tensor(&r, dt, 3, DIMS(2, 6, 3), x), r_none(), r_none(), r_int(2), r_int(6), r_int(3),
                       r_int(2), r_float(1e-5)};
        TT_CHECK_OK(r_exec(&r, "aten::native_group_norm", a, 8, 3));
        for (int i = 0; i < 36; i++) {
            if (!k) f32[i] = tt_bf16_to_f32(tt_f32_to_bf16((float)r.out[0][i]));
            else if (r.out[0][i] != f32[i]) {
                fprintf(stderr, "  [%d]: bf16 %.9g, f32 rounded %.9g\n", i, r.out[0][i], f32[i]);
                TT_CHECK(0);
            }
        }
        r_end(&r);
    }
}

int main(void) {
    static const tt_test_case cases[] = {
        {"sum of ints over a dim is i64 and keeps dims", test_sum_of_ints_over_a_dim_is_i64_and_keeps_dims},
        {"sum with no dim and dtype converts first", test_sum_with_no_dim_and_dtype_converts_first},
        {"sum with repeated dims is an error", test_sum_with_repeated_dims_is_an_error},
        {"mean of bf16 rounds once and mean of ints fails", test_mean_of_bf16_rounds_once_and_mean_of_ints_fails},
        {"max.dim returns values and first indices", test_max_dim_returns_values_and_first_indices},
        {"argmin without dim indexes the flattened tensor", test_argmin_without_dim_indexes_the_flattened_tensor},
        {"amax over an empty dim is an index error", test_amax_over_an_empty_dim_is_an_index_error},
        {"var_mean with correction matches PyTorch", test_var_mean_with_correction_matches_pytorch},
        {"prod, cumsum, any and count_nonzero", test_prod_cumsum_any_and_count_nonzero},
        {"logsumexp and vector norms", test_logsumexp_and_vector_norms},
        {"softmax and log_softmax along the last dim", test_softmax_and_log_softmax_along_the_last_dim},
        {"layer norm returns output, mean and rstd", test_layer_norm_returns_output_mean_and_rstd},
        {"nll_loss mean ignores the ignore_index", test_nll_loss_mean_ignores_the_ignore_index},
        {"mse and huber losses", test_mse_and_huber_losses},
        {"dropout in eval is identity with a full mask", test_dropout_in_eval_is_identity_with_a_full_mask},
        {"dropout in training zeroes or scales each element", test_dropout_in_training_zeroes_or_scales_each_element},
        {"layer norm backward matches PyTorch", test_layer_norm_backward_matches_pytorch},
        {"batch norm functional training updates running stats",
         test_batch_norm_functional_training_updates_running_stats},
        {"batch norm backward in training matches PyTorch", test_batch_norm_backward_in_training_matches_pytorch},
        {"group norm and its backward match PyTorch", test_group_norm_and_its_backward_match_pytorch},
        {"bf16 group norm equals the f32 result rounded", test_bf16_group_norm_equals_the_f32_result_rounded},
        {NULL, NULL},
    };
    return tt_test_run(cases);
}
