/* test_lower_shape.c — the shape, index and creation lowerings built into programs and run on the host driver,
 * compared with hand-computed numbers (PyTorch CPU results). */
#include "tt_lower_run.h"

#include <stdlib.h>

/* ---- harness: tt_lower_run.h's raw form (inputs in their dtype's C type), plus a tensor-list argument ---- */

static tt_arg h_list(int32_t n, const tt_ir_value *vs) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSORS;
    a.n = n;
    a.values = vs;
    return a;
}

/* Checks the result's dtype, shape and values. */
static void h_expect(const r_raw *r, tt_dtype dt, int32_t rank, const int64_t *dims, const double *want) {
    TT_CHECK(r->out_type[0].dtype == dt);
    TT_CHECK(r->out_type[0].rank == rank);
    if (r->out_type[0].rank != rank) return;
    for (int32_t i = 0; i < rank; i++) TT_CHECK(r->out_type[0].dims[i] == dims[i]);
    if (!r->out[0]) return;
    int64_t n = tt_numel(rank, dims);
    for (int64_t i = 0; i < n; i++) {
        if (fabs(r->out[0][i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, r->out[0][i], want[i]);
            tt_test_case_failed = 1;
            return;
        }
    }
}

/* ---- index ---- */

static void gather_picks_along_dim_one(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t idx[4] = {2, 0, 1, 1};
    int64_t xd[2] = {2, 3}, id[2] = {2, 2};
    tt_arg args[4] = {r_raw_tensor(&r, TT_F32, 2, xd, x), r_int(1), r_raw_tensor(&r, TT_I64, 2, id, idx), r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::gather", args, 4, 1));
    static const double want[4] = {3, 1, 5, 5};
    h_expect(&r, TT_F32, 2, id, want);
    r_raw_end(&r);
}

static void scatter_add_accumulates_duplicates(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[5] = {0, 0, 0, 0, 0};
    static const int64_t idx[4] = {1, 3, 1, 0};
    static const float src[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[1] = {5}, id[1] = {4}, sd[1] = {6};
    tt_arg args[4] = {r_raw_tensor(&r, TT_F32, 1, xd, x), r_int(0), r_raw_tensor(&r, TT_I64, 1, id, idx),
                      r_raw_tensor(&r, TT_F32, 1, sd, src)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::scatter_add", args, 4, 1));
    static const double want[5] = {4, 4, 0, 2, 0};
    h_expect(&r, TT_F32, 1, xd, want);
    r_raw_end(&r);
}

static void scatter_reduce_amax_excluding_self(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[3] = {10, 10, 10};
    static const int64_t idx[3] = {0, 0, 2};
    static const float src[3] = {1, 7, -3};
    int64_t d3[1] = {3};
    tt_arg args[6] = {r_raw_tensor(&r, TT_F32, 1, d3, x), r_int(0), r_raw_tensor(&r, TT_I64, 1, d3, idx),
                      r_raw_tensor(&r, TT_F32, 1, d3, src), r_str("amax"), r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::scatter_reduce.two", args, 6, 1));
    static const double want[3] = {7, 10, -3};
    h_expect(&r, TT_F32, 1, d3, want);
    r_raw_end(&r);
}

static void scatter_reduce_mean_on_ints_floors(void) {
    r_raw r;
    r_raw_begin(&r);
    static const int64_t x[2] = {0, 5};
    static const int64_t idx[3] = {0, 0, 1};
    static const int64_t src[3] = {-3, 0, 2};
    int64_t d2[1] = {2}, d3[1] = {3};
    tt_arg args[6] = {r_raw_tensor(&r, TT_I64, 1, d2, x), r_int(0), r_raw_tensor(&r, TT_I64, 1, d3, idx),
                      r_raw_tensor(&r, TT_I64, 1, d3, src), r_str("mean"), r_bool(true)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::scatter_reduce.two", args, 6, 1));
    static const double want[2] = {-1, 3}; /* floor(-3/3), floor(7/2) */
    h_expect(&r, TT_I64, 1, d2, want);
    r_raw_end(&r);
}

static void index_with_indices_split_by_a_slice_puts_them_first(void) {
    r_raw r;
    r_raw_begin(&r);
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    static const int64_t i0[2] = {1, -1};
    static const int64_t i2[1] = {3};
    int64_t xd[3] = {2, 3, 4}, d1[1] = {2}, d0[1] = {1};
    tt_arg self = r_raw_tensor(&r, TT_F32, 3, xd, x);
    tt_arg a0 = r_raw_tensor(&r, TT_I64, 1, d1, i0), a2 = r_raw_tensor(&r, TT_I64, 1, d0, i2);
    tt_ir_value list[3] = {a0.value, TT_IR_NONE, a2.value};
    tt_arg args[2] = {self, h_list(3, list)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::index.Tensor", args, 2, 1));
    /* x[[1,-1], :, [3]] -> shape [2, 3]: x[1, j, 3] twice */
    int64_t od[2] = {2, 3};
    static const double want[6] = {15, 19, 23, 15, 19, 23};
    h_expect(&r, TT_F32, 2, od, want);
    r_raw_end(&r);
}

static void index_with_adjacent_indices_keeps_their_place(void) {
    r_raw r;
    r_raw_begin(&r);
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    static const int64_t i1[2] = {0, 2};
    static const int64_t i2[2] = {1, 3};
    int64_t xd[3] = {2, 3, 4}, d2[1] = {2};
    tt_arg self = r_raw_tensor(&r, TT_F32, 3, xd, x);
    tt_arg a1 = r_raw_tensor(&r, TT_I64, 1, d2, i1), a2 = r_raw_tensor(&r, TT_I64, 1, d2, i2);
    tt_ir_value list[3] = {TT_IR_NONE, a1.value, a2.value};
    tt_arg args[2] = {self, h_list(3, list)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::index.Tensor", args, 2, 1));
    int64_t od[2] = {2, 2};
    static const double want[4] = {1, 11, 13, 23};
    h_expect(&r, TT_F32, 2, od, want);
    r_raw_end(&r);
}

static void index_put_accumulates_broadcast_values(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[6] = {0, 0, 0, 0, 0, 0};
    static const int64_t i0[3] = {0, 2, 0};
    static const float v[2] = {1, 10};
    int64_t xd[2] = {3, 2}, d3[1] = {3}, d2[1] = {2};
    tt_arg self = r_raw_tensor(&r, TT_F32, 2, xd, x);
    tt_arg a0 = r_raw_tensor(&r, TT_I64, 1, d3, i0);
    tt_ir_value list[1] = {a0.value};
    tt_arg args[4] = {self, h_list(1, list), r_raw_tensor(&r, TT_F32, 1, d2, v), r_bool(true)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::index_put", args, 4, 1));
    static const double want[6] = {2, 20, 0, 0, 1, 10};
    h_expect(&r, TT_F32, 2, xd, want);
    r_raw_end(&r);
}

static void index_with_a_bool_mask_is_unsupported(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[2] = {1, 2};
    static const uint8_t m[2] = {1, 0};
    int64_t d2[1] = {2};
    tt_arg self = r_raw_tensor(&r, TT_F32, 1, d2, x);
    tt_arg mk = r_raw_tensor(&r, TT_BOOL, 1, d2, m);
    tt_ir_value list[1] = {mk.value};
    tt_arg args[2] = {self, h_list(1, list)};
    TT_CHECK(r_raw_exec(&r, "aten::index.Tensor", args, 2, 1) == TT_STATUS_UNSUPPORTED);
    r_raw_end(&r);
}

static void index_select_and_embedding_take_rows(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t idx[4] = {2, 0, 2, 1};
    int64_t wd[2] = {3, 2}, id[2] = {2, 2};
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 2, wd, w), r_raw_tensor(&r, TT_I64, 2, id, idx), r_int(-1), r_bool(false),
                      r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::embedding", args, 5, 1));
    int64_t od[3] = {2, 2, 2};
    static const double want[8] = {5, 6, 1, 2, 5, 6, 3, 4};
    h_expect(&r, TT_F32, 3, od, want);
    r_raw_end(&r);

    r_raw_begin(&r);
    static const int32_t i1[2] = {1, 0};
    int64_t d2[1] = {2};
    tt_arg a2[3] = {r_raw_tensor(&r, TT_F32, 2, wd, w), r_int(1), r_raw_tensor(&r, TT_I32, 1, d2, i1)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::index_select", a2, 3, 1));
    static const double want2[6] = {2, 1, 4, 3, 6, 5};
    h_expect(&r, TT_F32, 2, wd, want2);
    r_raw_end(&r);
}

static void embedding_dense_backward_sums_rows_and_skips_padding(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float g[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const int64_t idx[4] = {0, 2, 0, 1};
    int64_t gd[2] = {4, 2}, id[1] = {4};
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 2, gd, g), r_raw_tensor(&r, TT_I64, 1, id, idx), r_int(3), r_int(1),
                      r_bool(false)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::embedding_dense_backward", args, 5, 1));
    int64_t od[2] = {3, 2};
    static const double want[6] = {6, 8, 0, 0, 3, 4};
    h_expect(&r, TT_F32, 2, od, want);
    r_raw_end(&r);
}

static void index_add_scales_by_alpha(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[4] = {1, 1, 1, 1};
    static const int64_t idx[2] = {3, 3};
    static const float s[2] = {1, 2};
    int64_t xd[1] = {4}, d2[1] = {2};
    tt_arg args[5] = {r_raw_tensor(&r, TT_F32, 1, xd, x), r_int(0), r_raw_tensor(&r, TT_I64, 1, d2, idx),
                      r_raw_tensor(&r, TT_F32, 1, d2, s), r_scalar_f(2.0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::index_add", args, 5, 1));
    static const double want[4] = {1, 1, 1, 7};
    h_expect(&r, TT_F32, 1, xd, want);
    r_raw_end(&r);
}

static void masked_fill_broadcasts_the_mask(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[4] = {1, 2, 3, 4};
    static const uint8_t m[2] = {0, 1};
    int64_t xd[2] = {2, 2}, md[1] = {2};
    tt_arg args[3] = {r_raw_tensor(&r, TT_F32, 2, xd, x), r_raw_tensor(&r, TT_BOOL, 1, md, m), r_scalar_f(-1.5)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::masked_fill.Scalar", args, 3, 1));
    static const double want[4] = {1, -1.5, 3, -1.5};
    h_expect(&r, TT_F32, 2, xd, want);
    r_raw_end(&r);
}

static void slice_scatter_with_step_and_diagonal_scatter(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[5] = {0, 0, 0, 0, 0};
    static const float s[2] = {7, 8};
    int64_t xd[1] = {5}, sd[1] = {2};
    tt_arg args[6] = {r_raw_tensor(&r, TT_F32, 1, xd, x), r_raw_tensor(&r, TT_F32, 1, sd, s), r_int(0), r_int(1),
                      r_none(), r_int(2)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::slice_scatter", args, 6, 1));
    static const double want[5] = {0, 7, 0, 8, 0};
    h_expect(&r, TT_F32, 1, xd, want);
    r_raw_end(&r);

    r_raw_begin(&r);
    static const float y[6] = {0, 0, 0, 0, 0, 0};
    static const float dsrc[2] = {5, 6};
    int64_t yd[2] = {3, 2};
    tt_arg a2[5] = {r_raw_tensor(&r, TT_F32, 2, yd, y), r_raw_tensor(&r, TT_F32, 1, sd, dsrc), r_int(-1), r_int(0),
                    r_int(1)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::diagonal_scatter", a2, 5, 1));
    static const double want2[6] = {0, 0, 5, 0, 0, 6};
    h_expect(&r, TT_F32, 2, yd, want2);
    r_raw_end(&r);
}

/* ---- shape ---- */

static void cat_promotes_and_skips_legacy_empty(void) {
    r_raw r;
    r_raw_begin(&r);
    static const int32_t a[2] = {1, 2};
    static const float e[1] = {0};
    static const float c[2] = {0.5f, 1.5f};
    int64_t d12[2] = {1, 2}, d0[1] = {0};
    tt_arg ta = r_raw_tensor(&r, TT_I32, 2, d12, a), te = r_raw_tensor(&r, TT_F32, 1, d0, e),
           tc = r_raw_tensor(&r, TT_F32, 2, d12, c);
    tt_ir_value list[3] = {ta.value, te.value, tc.value};
    tt_arg args[2] = {h_list(3, list), r_int(0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::cat", args, 2, 1));
    int64_t od[2] = {2, 2};
    static const double want[4] = {1, 2, 0.5, 1.5};
    h_expect(&r, TT_F32, 2, od, want);
    r_raw_end(&r);
}

static void constant_pad_nd_pads_and_crops(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {2, 3};
    static const int64_t pad[4] = {1, -2, 0, 1};
    tt_arg args[3] = {r_raw_tensor(&r, TT_F32, 2, xd, x), r_ints(4, pad), r_scalar_f(9)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::constant_pad_nd", args, 3, 1));
    int64_t od[2] = {3, 2};
    static const double want[6] = {9, 1, 9, 4, 9, 9};
    h_expect(&r, TT_F32, 2, od, want);
    r_raw_end(&r);
}

static void roll_repeat_and_tril(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {2, 3};
    static const int64_t sh[1] = {1}, dm[1] = {1};
    tt_arg args[3] = {r_raw_tensor(&r, TT_F32, 2, xd, x), r_ints(1, sh), r_ints(1, dm)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::roll", args, 3, 1));
    static const double want[6] = {3, 1, 2, 6, 4, 5};
    h_expect(&r, TT_F32, 2, xd, want);
    r_raw_end(&r);

    r_raw_begin(&r);
    static const int64_t rep[3] = {2, 1, 2};
    static const float y[2] = {1, 2};
    int64_t yd[1] = {2};
    tt_arg a2[2] = {r_raw_tensor(&r, TT_F32, 1, yd, y), r_ints(3, rep)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::repeat", a2, 2, 1));
    int64_t od[3] = {2, 1, 4};
    static const double want2[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    h_expect(&r, TT_F32, 3, od, want2);
    r_raw_end(&r);

    r_raw_begin(&r);
    tt_arg a3[2] = {r_raw_tensor(&r, TT_F32, 2, xd, x), r_int(0)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::tril", a3, 2, 1));
    static const double want3[6] = {1, 0, 0, 4, 5, 0};
    h_expect(&r, TT_F32, 2, xd, want3);
    r_raw_end(&r);
}

static void repeat_interleave_and_diag_embed(void) {
    r_raw r;
    r_raw_begin(&r);
    static const float x[2] = {1, 2};
    int64_t xd[1] = {2};
    tt_arg args[4] = {r_raw_tensor(&r, TT_F32, 1, xd, x), r_int(2), r_int(0), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::repeat_interleave.self_int", args, 4, 1));
    int64_t od[1] = {4};
    static const double want[4] = {1, 1, 2, 2};
    h_expect(&r, TT_F32, 1, od, want);
    r_raw_end(&r);

    r_raw_begin(&r);
    tt_arg a2[4] = {r_raw_tensor(&r, TT_F32, 1, xd, x), r_int(1), r_int(0), r_int(1)};
    TT_CHECK_OK(r_raw_exec(&r, "aten::diag_embed", a2, 4, 1));
    int64_t dd[2] = {3, 3};
    static const double want2[9] = {0, 1, 0, 0, 0, 2, 0, 0, 0};
    h_expect(&r, TT_F32, 2, dd, want2);
    r_raw_end(&r);
}

/* ---- creation ---- */

static void arange_full_and_eye(void) {
    r_raw r;
    r_raw_begin(&r);
    tt_arg args[4] = {r_scalar_f(0.5), r_scalar_i(3), r_scalar_f(0.75), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::arange.start_step", args, 4, 1));
    int64_t od[1] = {4};
    static const double want[4] = {0.5, 1.25, 2.0, 2.75};
    h_expect(&r, TT_F32, 1, od, want);
    r_raw_end(&r);

    r_raw_begin(&r);
    tt_arg a1[4] = {r_scalar_i(5), r_scalar_i(-4), r_scalar_i(-3), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::arange.start_step", a1, 4, 1));
    int64_t od1[1] = {3};
    static const double want1[3] = {5, 2, -1};
    h_expect(&r, TT_I64, 1, od1, want1);
    r_raw_end(&r);

    r_raw_begin(&r);
    static const int64_t sz[2] = {2, 1};
    tt_arg a2[3] = {r_ints(2, sz), r_scalar_i(7), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::full", a2, 3, 1));
    static const double want2[2] = {7, 7};
    h_expect(&r, TT_I64, 2, sz, want2);
    r_raw_end(&r);

    r_raw_begin(&r);
    tt_arg a3[3] = {r_int(2), r_int(3), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::eye.m", a3, 3, 1));
    int64_t ed[2] = {2, 3};
    static const double want3[6] = {1, 0, 0, 0, 1, 0};
    h_expect(&r, TT_F32, 2, ed, want3);
    r_raw_end(&r);

    r_raw_begin(&r);
    tt_arg a4[4] = {r_scalar_f(-1), r_scalar_f(1), r_int(5), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::linspace", a4, 4, 1));
    int64_t ld[1] = {5};
    static const double want4[5] = {-1, -0.5, 0, 0.5, 1};
    h_expect(&r, TT_F32, 1, ld, want4);
    r_raw_end(&r);
}

static void tril_indices_lists_the_lower_triangle(void) {
    r_raw r;
    r_raw_begin(&r);
    tt_arg args[4] = {r_int(3), r_int(2), r_int(0), r_none()};
    TT_CHECK_OK(r_raw_exec(&r, "aten::tril_indices", args, 4, 1));
    int64_t od[2] = {2, 5};
    static const double want[10] = {0, 1, 1, 2, 2, 0, 0, 1, 0, 1};
    h_expect(&r, TT_I64, 2, od, want);
    r_raw_end(&r);
}

int main(void) {
    static const tt_test_case cases[] = {
        {"gather picks along dim one", gather_picks_along_dim_one},
        {"scatter_add accumulates duplicates", scatter_add_accumulates_duplicates},
        {"scatter_reduce amax excluding self", scatter_reduce_amax_excluding_self},
        {"scatter_reduce mean on ints floors", scatter_reduce_mean_on_ints_floors},
        {"index with indices split by a slice puts them first", index_with_indices_split_by_a_slice_puts_them_first},
        {"index with adjacent indices keeps their place", index_with_adjacent_indices_keeps_their_place},
        {"index_put accumulates broadcast values", index_put_accumulates_broadcast_values},
        {"index with a bool mask is unsupported", index_with_a_bool_mask_is_unsupported},
        {"index_select and embedding take rows", index_select_and_embedding_take_rows},
        {"embedding_dense_backward sums rows and skips padding", embedding_dense_backward_sums_rows_and_skips_padding},
        {"index_add scales by alpha", index_add_scales_by_alpha},
        {"masked_fill broadcasts the mask", masked_fill_broadcasts_the_mask},
        {"slice_scatter with step and diagonal_scatter", slice_scatter_with_step_and_diagonal_scatter},
        {"cat promotes and skips legacy empty", cat_promotes_and_skips_legacy_empty},
        {"constant_pad_nd pads and crops", constant_pad_nd_pads_and_crops},
        {"roll, repeat and tril", roll_repeat_and_tril},
        {"repeat_interleave and diag_embed", repeat_interleave_and_diag_embed},
        {"arange, full and eye", arange_full_and_eye},
        {"tril_indices lists the lower triangle", tril_indices_lists_the_lower_triangle},
        {NULL, NULL},
    };
    return tt_test_run(cases);
}
