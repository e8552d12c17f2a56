/* test_bucket.c — tt_ir_bucket: a program padded to a bucket computes the original's real part bit for bit, with
 * NaN in every padding position of its inputs, and sizes of one bucket give one program. */
#include "tt_host_run.h"

#include <stdio.h>

enum { B = 2, C = 3, E = 4, S = 8, POS = 16 };

typedef tt_ir_program *(*build_fn)(int64_t s);

static tt_ir_program *finish(tt_ir_builder *b) {
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    return p;
}

static tt_ir_attrs batched_dot(int64_t lc, int64_t rc) {
    tt_ir_attrs a = dot_attrs(lc, rc, TT_PRECISION_FP32);
    a.dot.lhs_batch.n = a.dot.rhs_batch.n = 1;
    return a;
}

/* x[B,s,C]: attention over s with a softmax (max, exp, sum, divide), then the mean over s and a layer-norm-like
 * mean over C. Seeds: x's dim 1. */
static tt_ir_program *build_attention(int64_t s) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t xs[3] = {B, s, C}, ss[3] = {B, s, s};
    tt_ir_value x = tt_ir_param(b, TT_F32, 3, xs);
    tt_ir_attrs qk = batched_dot(2, 2); /* [B,s,C] x [B,s,C] -> [B,s,s] */
    tt_ir_value sc = tt_ir_dot_general(b, x, x, &qk, TT_F32);
    int64_t last = 2;
    tt_ir_value mx = tt_ir_reduce(b, TT_REDUCE_MAX, sc, 1, &last);
    int64_t keep[2] = {0, 1};
    tt_ir_value e = tt_ir_unary(b, TT_OP_EXP, tt_ir_binary(b, TT_OP_SUBTRACT, sc, tt_ir_broadcast_in_dim(b, mx, 3, ss, keep)));
    tt_ir_value den = tt_ir_reduce(b, TT_REDUCE_ADD, e, 1, &last);
    tt_ir_value pr = tt_ir_binary(b, TT_OP_DIVIDE, e, tt_ir_broadcast_in_dim(b, den, 3, ss, keep));
    tt_ir_attrs pv = batched_dot(2, 1); /* [B,s,s] x [B,s,C] -> [B,s,C] */
    tt_ir_value o = tt_ir_dot_general(b, pr, x, &pv, TT_F32);
    int64_t one = 1;
    tt_ir_value sum_s = tt_ir_reduce(b, TT_REDUCE_ADD, o, 1, &one); /* [B,C] */
    int64_t bc[2] = {B, C};
    tt_ir_value mean_s = tt_ir_binary(b, TT_OP_DIVIDE, sum_s,
                                      tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, (double)s), 2, bc, NULL));
    tt_ir_value sum_c = tt_ir_reduce(b, TT_REDUCE_ADD, o, 1, &last); /* [B,s] */
    int64_t bs[2] = {B, s};
    tt_ir_value mean_c = tt_ir_binary(b, TT_OP_DIVIDE, sum_c,
                                      tt_ir_broadcast_in_dim(b, tt_ir_constant_scalar(b, TT_F32, C), 2, bs, NULL));
    tt_ir_builder_add_output(b, o);
    tt_ir_builder_add_output(b, mean_s);
    tt_ir_builder_add_output(b, mean_c);
    return finish(b);
}

/* A whole storage x[B*s*C] seen as [B,s,C], a linear over C through [B*s, C], and an argmax and cumsum over s.
 * Seeds: the flat dim, inner C. */
static tt_ir_program *build_flat_linear(int64_t s) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = B * s * C, xs[3] = {B, s, C}, ws[2] = {C, E}, rows[2] = {B * s, C};
    tt_ir_value flat = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_value w = tt_ir_param(b, TT_F32, 2, ws);
    tt_ir_value x = tt_ir_reshape(b, flat, 3, xs);
    tt_ir_attrs d = dot_attrs(1, 0, TT_PRECISION_FP32);
    tt_ir_value y = tt_ir_dot_general(b, tt_ir_reshape(b, x, 2, rows), w, &d, TT_F32); /* [B*s, E] */
    tt_ir_builder_add_output(b, y);
    tt_ir_builder_add_output(b, tt_ir_arg_reduce(b, x, 1, false));
    tt_ir_builder_add_output(b, tt_ir_cumulative(b, TT_REDUCE_ADD, x, 1, true));
    return finish(b);
}

/* Token ids [B,s] and positions (an iota) gathered from tables, plus a causal mask sliced from a longer buffer added to
 * scores over s x s.
 * Seeds: ids' dim 1. */
static tt_ir_program *build_embedding(int64_t s) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t is[2] = {B, s}, ts[2] = {POS, C}, ms[2] = {POS, POS};
    tt_ir_value ids = tt_ir_param(b, TT_I64, 2, is);
    tt_ir_value table = tt_ir_param(b, TT_F32, 2, ts);
    tt_ir_value mask = tt_ir_param(b, TT_F32, 2, ms);
    tt_ir_attrs g;
    memset(&g, 0, sizeof g);
    g.gather.offset_dims.n = 1;
    g.gather.offset_dims.v[0] = 2;
    g.gather.collapsed_slice_dims.n = 1;
    g.gather.start_index_map.n = 1;
    g.gather.index_vector_dim = 2;
    g.gather.slice_sizes.n = 2;
    g.gather.slice_sizes.v[0] = 1;
    g.gather.slice_sizes.v[1] = C;
    g.gather.check_bounds = true;
    tt_ir_value tok = tt_ir_gather(b, table, ids, &g); /* [B,s,C] */
    tt_ir_value pos = tt_ir_broadcast_in_dim(b, tt_ir_iota(b, TT_I64, 1, &is[1], 0), 2, is, (const int64_t[]){1});
    tt_ir_value h = tt_ir_binary(b, TT_OP_ADD, tok, tt_ir_gather(b, table, pos, &g));
    int64_t z[2] = {0, 0}, lim[2] = {s, s}, ss[3] = {B, s, s};
    tt_ir_value causal = tt_ir_slice(b, mask, z, lim, NULL); /* [s,s] */
    tt_ir_attrs d = dot_attrs(2, 2, TT_PRECISION_FP32);     /* [B,s,C] x [B,s,C] -> [B,s,s] */
    d.dot.lhs_batch.n = d.dot.rhs_batch.n = 1;
    tt_ir_value sc = tt_ir_dot_general(b, h, h, &d, TT_F32);
    sc = tt_ir_binary(b, TT_OP_ADD, sc, tt_ir_broadcast_in_dim(b, causal, 3, ss, (const int64_t[]){1, 2}));
    int64_t last = 2;
    tt_ir_builder_add_output(b, h);
    tt_ir_builder_add_output(b, tt_ir_reduce(b, TT_REDUCE_MAX, sc, 1, &last));
    return finish(b);
}

/* x[B,s,C] sliced past its first row: no exact rule. */
static tt_ir_program *build_shift(int64_t s) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t xs[3] = {B, s, C}, st[3] = {0, 1, 0}, lim[3] = {B, s, C};
    tt_ir_value x = tt_ir_param(b, TT_F32, 3, xs);
    tt_ir_builder_add_output(b, tt_ir_unary(b, TT_OP_EXP, tt_ir_slice(b, x, st, lim, NULL)));
    return finish(b);
}

/* The padded flat index of real flat index i of dims (padding q), size s in bucket S. */
static int64_t padded_index(const tt_ir_type *t, const tt_ir_bucket_pad *q, int64_t s, int64_t i) {
    int64_t r = 0, scale = 1;
    for (int32_t d = t->rank - 1; d >= 0; d--) {
        int64_t dd = t->dims[d], id = i % dd, in = q->inner[d];
        i /= dd;
        int64_t pd = dd, pid = id;
        if (in) {
            pd = dd / s * S;
            pid = id / (s * in) * (S * in) + id % (s * in);
        }
        r += pid * scale;
        scale *= pd;
    }
    return r;
}

static int64_t padded_numel(const tt_ir_type *t, const tt_ir_bucket_pad *q, int64_t s) {
    int64_t n = 1;
    for (int32_t d = 0; d < t->rank; d++) n *= q->inner[d] ? t->dims[d] / s * S : t->dims[d];
    return n;
}

/* Runs p and its bucketed form for size s on the same inputs (NaN / huge ids in the padding) and checks the real
 * parts are equal bit for bit; returns the bucketed program (NULL if the pass refused). */
static tt_ir_program *check_bucket(build_fn build, int64_t s, const tt_ir_bucket_pad *seeds) {
    tt_ir_program *p = build(s), *q = NULL;
    if (!p) return NULL;
    tt_ir_bucket_pad out_pads[8];
    tt_status st = tt_ir_bucket(p, s, S, seeds, &q, out_pads);
    if (st != TT_OK) {
        tt_ir_program_destroy(p);
        return NULL;
    }
    void *in[8] = {0}, *pin[9] = {0}, *out[8] = {0}, *pout[8] = {0};
    double n = (double)s;
    for (int32_t i = 0; i < p->n_params; i++) {
        const tt_ir_type *t = &p->types[p->params[i]];
        size_t es = tt_dtype_size(t->dtype);
        int64_t m = tt_numel(t->rank, t->dims), pm = padded_numel(t, &seeds[i], s);
        in[i] = malloc((size_t)m * es);
        pin[i] = malloc((size_t)pm * es);
        for (int64_t j = 0; j < pm; j++) { /* garbage everywhere, then the real part */
            if (t->dtype == TT_F32) ((float *)pin[i])[j] = NAN;
            else ((int64_t *)pin[i])[j] = 1 << 20;
        }
        for (int64_t j = 0; j < m; j++) {
            if (t->dtype == TT_F32) ((float *)in[i])[j] = (float)((j * 7919 + i * 31) % 17) / 8.0f - 1.0f;
            else ((int64_t *)in[i])[j] = (j * 5 + 3) % POS;
            memcpy((char *)pin[i] + padded_index(t, &seeds[i], s, j) * (int64_t)es, (char *)in[i] + j * (int64_t)es, es);
        }
    }
    pin[p->n_params] = &n;
    for (int32_t o = 0; o < p->n_outputs; o++) {
        const tt_ir_type *t = &p->types[p->outputs[o]];
        out[o] = calloc((size_t)tt_numel(t->rank, t->dims), tt_dtype_size(t->dtype));
        pout[o] = calloc((size_t)padded_numel(t, &out_pads[o], s), tt_dtype_size(t->dtype));
    }
    TT_CHECK_OK(run_program(p, (const void *const *)in, out));
    TT_CHECK_OK(run_program(q, (const void *const *)pin, pout));
    for (int32_t o = 0; o < p->n_outputs; o++) {
        const tt_ir_type *t = &p->types[p->outputs[o]];
        size_t es = tt_dtype_size(t->dtype);
        int64_t bad = 0;
        for (int64_t j = 0; j < tt_numel(t->rank, t->dims); j++)
            bad += memcmp((char *)out[o] + j * (int64_t)es,
                          (char *)pout[o] + padded_index(t, &out_pads[o], s, j) * (int64_t)es, es) != 0;
        if (bad) fprintf(stderr, "  size %lld output %d: %lld elements differ\n", (long long)s, (int)o, (long long)bad);
        TT_CHECK(bad == 0);
    }
    for (int32_t i = 0; i < 8; i++) free(in[i]), free(out[i]), free(pout[i]);
    for (int32_t i = 0; i < p->n_params; i++) free(pin[i]);
    tt_ir_program_destroy(p);
    return q;
}

/* Every size of the bucket gives the same program, equal to the original's real part. */
static void check_sizes(build_fn build, const tt_ir_bucket_pad *seeds) {
    tt_ir_program *first = NULL;
    for (int64_t s = 5; s <= S; s++) {
        tt_ir_program *q = check_bucket(build, s, seeds);
        TT_CHECK(q != NULL);
        if (!q) {
            fprintf(stderr, "  size %lld: %s\n", (long long)s, tt_last_error());
            break;
        }
        if (!first) first = q;
        else {
            TT_CHECK(tt_ir_program_equal(first, q));
            tt_ir_program_destroy(q);
        }
    }
    tt_ir_program_destroy(first);
}

static void test_attention_softmax_and_means_over_a_padded_dim_are_exact_and_one_program(void) {
    tt_ir_bucket_pad seeds[4] = {{{0, 1}}};
    check_sizes(build_attention, seeds);
}

static void test_a_flat_storage_feeds_a_linear_an_argmax_and_a_reverse_scan(void) {
    tt_ir_bucket_pad seeds[4] = {{{C}}};
    check_sizes(build_flat_linear, seeds);
}

static void test_positions_and_a_causal_mask_made_inside_are_rebuilt_at_the_bucket(void) {
    tt_ir_bucket_pad seeds[4] = {{{0, 1}}};
    check_sizes(build_embedding, seeds);
}

static void test_an_op_without_an_exact_rule_is_refused_with_its_name(void) {
    tt_ir_program *p = build_shift(6), *q = NULL;
    tt_ir_bucket_pad seeds[1] = {{{0, 1}}}, outs[1];
    TT_CHECK(tt_ir_bucket(p, 6, S, seeds, &q, outs) == TT_STATUS_UNSUPPORTED && !q);
    TT_CHECK(strstr(tt_last_error(), "SLICE") != NULL);
    tt_ir_bucket_pad none[1] = {{{0}}};
    TT_CHECK(tt_ir_bucket(p, 6, S, none, &q, outs) == TT_STATUS_UNSUPPORTED && !q); /* nothing seeded */
    tt_ir_bucket_pad merged[1] = {{{0, 4}}};
    TT_CHECK(tt_ir_bucket(p, 6, S, merged, &q, outs) == TT_STATUS_INVALID_ARGUMENT); /* 6 is not 6 x 4 */
    tt_ir_program_destroy(p);
}

static void test_reshapes_keep_the_size_inside_one_dim(void) {
    tt_ir_bucket_pad sp = {{0, 1, 0}}, dp;
    TT_CHECK(tt_ir_bucket_reshape(5, 3, (const int64_t[]){2, 5, 3}, &sp, 2, (const int64_t[]){10, 3}, &dp));
    TT_CHECK(dp.inner[0] == 1 && dp.inner[1] == 0);
    TT_CHECK(tt_ir_bucket_reshape(5, 3, (const int64_t[]){2, 5, 3}, &sp, 1, (const int64_t[]){30}, &dp));
    TT_CHECK(dp.inner[0] == 3);
    TT_CHECK(tt_ir_bucket_reshape(5, 3, (const int64_t[]){2, 5, 3}, &sp, 4, (const int64_t[]){2, 5, 1, 3}, &dp));
    TT_CHECK(dp.inner[1] == 1 && dp.inner[2] == 0);
    sp = (tt_ir_bucket_pad){{3}};
    TT_CHECK(tt_ir_bucket_reshape(5, 1, (const int64_t[]){30}, &sp, 3, (const int64_t[]){2, 5, 3}, &dp));
    TT_CHECK(dp.inner[1] == 1 && dp.inner[0] == 0 && dp.inner[2] == 0);
    sp = (tt_ir_bucket_pad){{0, 1, 0}}; /* [2,6,3] -> [4,9]: 6 split across dims */
    TT_CHECK(!tt_ir_bucket_reshape(6, 3, (const int64_t[]){2, 6, 3}, &sp, 2, (const int64_t[]){4, 9}, &dp));
}

int main(void) {
    tt_test_case cases[] = {
        {"attention, softmax and means over a padded dim are exact and one program",
         test_attention_softmax_and_means_over_a_padded_dim_are_exact_and_one_program},
        {"a flat storage feeds a linear, an argmax and a reverse scan",
         test_a_flat_storage_feeds_a_linear_an_argmax_and_a_reverse_scan},
        {"positions and a causal mask made inside are rebuilt at the bucket",
         test_positions_and_a_causal_mask_made_inside_are_rebuilt_at_the_bucket},
        {"an op without an exact rule is refused with its name", test_an_op_without_an_exact_rule_is_refused_with_its_name},
        {"reshapes keep the size inside one dim", test_reshapes_keep_the_size_inside_one_dim},
        {NULL, NULL},
    };
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
