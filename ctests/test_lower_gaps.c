/* test_lower_gaps.c — the resample.c and special.c lowerings (upsample, padding, adaptive pools, glu, log_sigmoid,
 * polygamma, Bessel I, logcumsumexp, cross), search.c (searchsorted, isin, masked_scatter, embedding_bag), pool.c
 * (3-d pools) and sort.c's median / mode, built into programs and run on the host driver, compared with PyTorch CPU
 * values. */
#include "tt_lower_run.h"

static const double X23[6] = {1, -2, 3, 4, 5, -6}; /* a [2, 3] matrix */

/* x = arange(6) * 1.5 - 2 as [1, 1, 2, 3] */
static const double X6[6] = {-2, -0.5, 1, 2.5, 4, 5.5};

static void test_bilinear_upsample_matches_pytorch(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[5] = {r_tensor(&r, TT_F32, 4, DIMS(1, 1, 2, 3), X6), r_ints(2, DIMS(3, 4)), r_bool(false), r_none(), r_none()};
    TT_CHECK(r_exec(&r, "aten::upsample_bilinear2d", args, 5, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 4, DIMS(1, 1, 3, 4),
             VALS(-2.0, -1.0625, 0.0625, 1.0, 0.25, 1.1875, 2.3125, 3.25, 2.5, 3.4375, 4.5625, 5.5), 1e-6);
    r_end(&r);
}

static void test_bilinear_backward_with_align_corners_sums_the_weights(void) {
    r_run r;
    r_begin(&r);
    double ones[12];
    for (int i = 0; i < 12; i++) ones[i] = 1.0;
    tt_arg args[6] = {r_tensor(&r, TT_F32, 4, DIMS(1, 1, 3, 4), ones), r_ints(2, DIMS(3, 4)), r_ints(4, DIMS(1, 1, 2, 3)),
                      r_bool(true), r_none(), r_none()};
    TT_CHECK(r_exec(&r, "aten::upsample_bilinear2d_backward", args, 6, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 4, DIMS(1, 1, 2, 3), VALS(2, 2, 2, 2, 2, 2), 1e-6);
    r_end(&r);
}

static void test_nearest_upsample_repeats_source_pixels(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[4] = {r_tensor(&r, TT_BF16, 4, DIMS(1, 1, 2, 3), X6), r_ints(2, DIMS(3, 5)), r_none(), r_none()};
    TT_CHECK(r_exec(&r, "aten::upsample_nearest2d", args, 4, 1) == TT_OK);
    r_expect(&r, 0, TT_BF16, 4, DIMS(1, 1, 3, 5),
             VALS(-2, -2, -0.5, -0.5, 1, -2, -2, -0.5, -0.5, 1, 2.5, 2.5, 4, 4, 5.5), 0);
    r_end(&r);
}

static void test_reflection_and_replication_padding(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[2] = {r_tensor(&r, TT_F32, 4, DIMS(1, 1, 2, 3), X6), r_ints(4, DIMS(2, 1, 1, 0))};
    TT_CHECK(r_exec(&r, "aten::reflection_pad2d", args, 2, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 4, DIMS(1, 1, 3, 6),
             VALS(5.5, 4, 2.5, 4, 5.5, 4, 1, -0.5, -2, -0.5, 1, -0.5, 5.5, 4, 2.5, 4, 5.5, 4), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg args2[2] = {r_tensor(&r, TT_F32, 4, DIMS(1, 1, 2, 3), X6), r_ints(4, DIMS(1, 2, 0, 1))};
    TT_CHECK(r_exec(&r, "aten::replication_pad2d", args2, 2, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 4, DIMS(1, 1, 3, 6),
             VALS(-2, -2, -0.5, 1, 1, 1, 2.5, 2.5, 4, 5.5, 5.5, 5.5, 2.5, 2.5, 4, 5.5, 5.5, 5.5), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg args3[2] = {r_tensor(&r, TT_F32, 3, DIMS(1, 2, 3), X6), r_ints(2, DIMS(3, 0))};
    TT_CHECK(r_exec(&r, "aten::reflection_pad1d", args3, 2, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
}

static void test_adaptive_max_pool_returns_first_maxima_and_flat_indices(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[2] = {r_tensor(&r, TT_F32, 3, DIMS(1, 3, 3), VALS(1, 5, 2, 7, 0, 3, 4, 4, 9)), r_ints(2, DIMS(2, 2))};
    TT_CHECK(r_exec(&r, "aten::adaptive_max_pool2d", args, 2, 2) == TT_OK);
    r_expect(&r, 0, TT_F32, 3, DIMS(1, 2, 2), VALS(7, 5, 7, 9), 0);
    r_expect(&r, 1, TT_I64, 3, DIMS(1, 2, 2), VALS(3, 1, 3, 8), 0);
    r_end(&r);
}

static void test_glu_and_log_sigmoid(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[2] = {r_tensor(&r, TT_F32, 2, DIMS(1, 4), VALS(1, -2, 3, 0.5)), r_int(-1)};
    TT_CHECK(r_exec(&r, "aten::glu", args, 2, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 2, DIMS(1, 2), VALS(0.9525741338729858, -1.244918704032898), 1e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg odd[2] = {r_tensor(&r, TT_F32, 2, DIMS(1, 3), VALS(1, 2, 3)), r_int(-1)};
    TT_CHECK(r_exec(&r, "aten::glu", odd, 2, 1) == TT_STATUS_INVALID_ARGUMENT);
    r_end(&r);
    r_begin(&r);
    tt_arg ls[1] = {r_tensor(&r, TT_F32, 2, DIMS(1, 4), VALS(1, -2, 3, 0.5))};
    TT_CHECK(r_exec(&r, "aten::log_sigmoid_forward", ls, 1, 2) == TT_OK);
    r_expect(&r, 0, TT_F32, 2, DIMS(1, 4),
             VALS(-0.3132616877555847, -2.1269280910491943, -0.04858735203742981, -0.4740769863128662), 1e-6);
    r_expect(&r, 1, TT_F32, 1, DIMS(0), VALS(0), 0);
    r_end(&r);
}

static void test_polygamma_matches_pytorch(void) {
    static const double want[3][4] = {
        {12.245363235473633, 0.49035775661468506, 9.379247665405273, 0.15354517102241516},
        {-75.27252960205078, -0.23620405793190002, -0.23620404303073883, -0.023530473932623863},
        {743.1416625976562, 0.22390584647655487, 194.5942840576172, 0.0071981982327997684}};
    for (int n = 1; n <= 3; n++) {
        r_run r;
        r_begin(&r);
        tt_arg args[2] = {r_int(n), r_tensor(&r, TT_F32, 1, DIMS(4), VALS(0.3, 2.5, -1.5, 7))};
        TT_CHECK(r_exec(&r, "aten::polygamma", args, 2, 1) == TT_OK);
        r_expect(&r, 0, TT_F32, 1, DIMS(4), want[n - 1], 2e-5);
        r_end(&r);
    }
}

static void test_bessel_i_logcumsumexp_and_cross(void) {
    r_run r;
    r_begin(&r);
    tt_arg a0[1] = {r_tensor(&r, TT_I64, 1, DIMS(4), VALS(0, 2, -1, 7))};
    TT_CHECK(r_exec(&r, "aten::i0", a0, 1, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 1, DIMS(4), VALS(1.0, 2.2795853023360673, 1.2660658777520082, 168.59390851028968), 2e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg a1[1] = {r_tensor(&r, TT_F32, 1, DIMS(4), VALS(0.3, 2.5, -1.5, 7))};
    TT_CHECK(r_exec(&r, "aten::special_i1e", a1, 1, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 1, DIMS(4), VALS(0.11237756907939911, 0.206584632396698, -0.2190394103527069, 0.14228928089141846),
             2e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg a2[2] = {r_tensor(&r, TT_F32, 1, DIMS(4), VALS(0.3, 2.5, -1.5, 7)), r_int(0)};
    TT_CHECK(r_exec(&r, "aten::_logcumsumexp", a2, 2, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 1, DIMS(4), VALS(0.30000001192092896, 2.6050832271575928, 2.6214375495910645, 7.012465476989746),
             1e-6);
    r_end(&r);
    r_begin(&r);
    tt_arg a3[3] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), VALS(1, 2, 3, 4, 5, 6)),
                    r_tensor(&r, TT_F32, 2, DIMS(2, 3), VALS(0, 1, -1, 2, 0, 1)), r_int(-1)};
    TT_CHECK(r_exec(&r, "aten::linalg_cross", a3, 3, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 2, DIMS(2, 3), VALS(-5, 1, 1, 5, 8, -10), 0);
    r_end(&r);
}

static void test_norm_overloads_forward_to_vector_norm(void) {
    r_run r;
    r_begin(&r);
    tt_arg args[4] = {r_tensor(&r, TT_F32, 2, DIMS(2, 3), X23), r_scalar_i(1), r_ints(1, DIMS(1)), r_bool(true)};
    TT_CHECK(r_exec(&r, "aten::norm.ScalarOpt_dim", args, 4, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 2, DIMS(2, 1), VALS(6, 15), 1e-6);
    r_end(&r);
}

static void test_searchsorted_isin_and_masked_scatter(void) {
    r_run r;
    r_begin(&r);
    tt_arg ss[6] = {r_tensor(&r, TT_F32, 1, DIMS(4), VALS(1, 3, 5, 7)), r_tensor(&r, TT_F32, 2, DIMS(2, 3), VALS(0, 3, 6, 7, 8, NAN)),
                    r_bool(false), r_bool(true), r_none(), r_none()};
    TT_CHECK(r_exec(&r, "aten::searchsorted.Tensor", ss, 6, 1) == TT_OK);
    r_expect(&r, 0, TT_I64, 2, DIMS(2, 3), VALS(0, 2, 3, 4, 4, 4), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg in[4] = {r_tensor(&r, TT_I64, 1, DIMS(4), VALS(1, 2, 3, 4)), r_tensor(&r, TT_I64, 1, DIMS(3), VALS(2, 4, 6)),
                    r_bool(false), r_bool(false)};
    TT_CHECK(r_exec(&r, "aten::isin.Tensor_Tensor", in, 4, 1) == TT_OK);
    r_expect(&r, 0, TT_BOOL, 1, DIMS(4), VALS(0, 1, 0, 1), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg ms[3] = {r_tensor(&r, TT_F32, 1, DIMS(4), VALS(1, 2, 3, 4)), r_tensor(&r, TT_BOOL, 1, DIMS(4), VALS(0, 1, 0, 1)),
                    r_tensor(&r, TT_F32, 1, DIMS(3), VALS(9, 8, 7))};
    TT_CHECK(r_exec(&r, "aten::masked_scatter", ms, 3, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 1, DIMS(4), VALS(1, 9, 3, 8), 0);
    r_end(&r);
}

static void test_embedding_bag_mean_with_an_empty_bag(void) {
    r_run r;
    r_begin(&r);
    double w[12];
    for (int i = 0; i < 12; i++) w[i] = i;
    tt_arg args[9] = {r_tensor(&r, TT_F32, 2, DIMS(4, 3), w), r_tensor(&r, TT_I64, 1, DIMS(5), VALS(0, 2, 1, 3, 3)),
                      r_tensor(&r, TT_I64, 1, DIMS(3), VALS(0, 2, 2)), r_bool(false), r_int(1), r_bool(false), r_none(),
                      r_bool(false), r_int(-1)};
    TT_CHECK(r_exec(&r, "aten::_embedding_bag", args, 9, 4) == TT_OK);
    r_expect(&r, 0, TT_F32, 2, DIMS(3, 3), VALS(3, 4, 5, 0, 0, 0, 7, 8, 9), 1e-6);
    r_expect(&r, 1, TT_I64, 1, DIMS(5), VALS(0, 0, 2, 2, 2), 0);
    r_expect(&r, 2, TT_I64, 1, DIMS(3), VALS(2, 0, 3), 0);
    r_expect(&r, 3, TT_I64, 1, DIMS(3), VALS(2, 0, 3), 0);
    r_end(&r);
}

static void test_pool3d_max_and_avg(void) {
    r_run r;
    r_begin(&r);
    tt_arg mx[6] = {r_tensor(&r, TT_F32, 5, DIMS(1, 1, 2, 2, 2), VALS(0, 1, 2, 3, 4, 5, 6, -1)), r_ints(1, DIMS(2)),
                    r_ints(0, NULL), r_ints(1, DIMS(0)), r_ints(1, DIMS(1)), r_bool(false)};
    TT_CHECK(r_exec(&r, "aten::max_pool3d_with_indices", mx, 6, 2) == TT_OK);
    r_expect(&r, 0, TT_F32, 5, DIMS(1, 1, 1, 1, 1), VALS(6), 0);
    r_expect(&r, 1, TT_I64, 5, DIMS(1, 1, 1, 1, 1), VALS(6), 0);
    r_end(&r);
    r_begin(&r);
    tt_arg av[7] = {r_tensor(&r, TT_F32, 5, DIMS(1, 1, 2, 2, 2), VALS(0, 1, 2, 3, 4, 5, 6, -1)), r_ints(1, DIMS(2)),
                    r_ints(1, DIMS(1)), r_ints(1, DIMS(1)), r_bool(false), r_bool(false), r_none()};
    TT_CHECK(r_exec(&r, "aten::avg_pool3d", av, 7, 1) == TT_OK);
    r_expect(&r, 0, TT_F32, 5, DIMS(1, 1, 3, 3, 3),
             VALS(0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.5, 3.0, 2.0, 2.5, 3.0, 3.0, 2.5, 2.0, 4.0, 2.5, 1.0, 4.0, 4.5, 5.0,
                  5.0, 3.5, 2.0, 6.0, 2.5, -1.0),
             1e-6);
    r_end(&r);
}

static void test_median_and_mode(void) {
    r_run r;
    r_begin(&r);
    tt_arg md[3] = {r_tensor(&r, TT_F32, 2, DIMS(2, 5), VALS(1, NAN, 3, NAN, 2, 2, 2, 1, 1, 3)), r_int(1), r_bool(false)};
    TT_CHECK(r_exec(&r, "aten::median.dim", md, 3, 2) == TT_OK);
    r_expect(&r, 0, TT_F32, 1, DIMS(2), VALS(NAN, 2), 0);
    r_expect(&r, 1, TT_I64, 1, DIMS(2), VALS(1, 0), 0); /* the first NaN; the tie's first 2 (stable order) */
    r_end(&r);
    r_begin(&r);
    tt_arg mo[3] = {r_tensor(&r, TT_I64, 2, DIMS(2, 5), VALS(3, 1, 3, 1, 2, 5, 5, 4, 4, 4)), r_int(1), r_bool(true)};
    TT_CHECK(r_exec(&r, "aten::mode", mo, 3, 2) == TT_OK);
    r_expect(&r, 0, TT_I64, 2, DIMS(2, 1), VALS(1, 4), 0);
    r_expect(&r, 1, TT_I64, 2, DIMS(2, 1), VALS(3, 4), 0);
    r_end(&r);
}

int main(void) {
    static const tt_test_case cases[] = {
        {"bilinear upsample matches PyTorch", test_bilinear_upsample_matches_pytorch},
        {"bilinear backward with align_corners sums the weights",
         test_bilinear_backward_with_align_corners_sums_the_weights},
        {"nearest upsample repeats source pixels", test_nearest_upsample_repeats_source_pixels},
        {"reflection and replication padding", test_reflection_and_replication_padding},
        {"adaptive max pool returns first maxima and flat indices",
         test_adaptive_max_pool_returns_first_maxima_and_flat_indices},
        {"glu and log_sigmoid", test_glu_and_log_sigmoid},
        {"polygamma matches PyTorch", test_polygamma_matches_pytorch},
        {"Bessel I, logcumsumexp and cross", test_bessel_i_logcumsumexp_and_cross},
        {"norm overloads forward to vector_norm", test_norm_overloads_forward_to_vector_norm},
        {"searchsorted, isin and masked_scatter", test_searchsorted_isin_and_masked_scatter},
        {"embedding_bag mean with an empty bag", test_embedding_bag_mean_with_an_empty_bag},
        {"pool3d max and avg", test_pool3d_max_and_avg},
        {"median and mode", test_median_and_mode},
        {NULL, NULL},
    };
    return tt_test_run(cases);
}
