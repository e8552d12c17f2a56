/* test_view.c — strided views of a flat value as IR view ops (csrc/ir/view.c), run on the host driver against
 * the definition: element (i0..ik) of a view is flat[offset + sum(i_d * stride_d)]. */
#include "tt_host_run.h"

#include <stdio.h>

#define N 96

typedef struct view {
    int64_t offset;
    int32_t rank;
    int64_t dims[4];
    int64_t strides[4];
} view;

static int64_t view_numel(const view *v) { return tt_numel(v->rank, v->dims); }

/* Flat index of the view's row-major element e. */
static int64_t flat_index(const view *v, int64_t e) {
    int64_t at = v->offset;
    for (int32_t d = v->rank - 1; d >= 0; d--) {
        at += (e % v->dims[d]) * v->strides[d];
        e /= v->dims[d];
    }
    return at;
}

/* Reads the view through tt_ir_view_read and compares with the definition. */
static bool read_matches(const view *v, const float *flat) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = N;
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n), y = TT_IR_NONE;
    if (tt_ir_view_read(b, x, v->offset, v->rank, v->dims, v->strides, &y) != TT_OK) {
        fprintf(stderr, "  view_read: %s\n", tt_last_error());
        tt_ir_builder_destroy(b);
        return false;
    }
    tt_ir_builder_add_output(b, y);
    float got[N * 8];
    const void *in[] = {flat};
    void *out[] = {got};
    if (run(b, in, out) != TT_OK) {
        fprintf(stderr, "  run: %s\n", tt_last_error());
        return false;
    }
    for (int64_t e = 0; e < view_numel(v); e++)
        if (got[e] != flat[flat_index(v, e)]) return false;
    return true;
}

/* Writes update into the view through tt_ir_view_write and compares with the definition. */
static bool write_matches(const view *v, const float *flat) {
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = N;
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n);
    tt_ir_value u = tt_ir_param(b, TT_F32, v->rank, v->dims), y = TT_IR_NONE;
    if (tt_ir_view_write(b, x, v->offset, v->rank, v->dims, v->strides, u, &y) != TT_OK) {
        fprintf(stderr, "  view_write: %s\n", tt_last_error());
        tt_ir_builder_destroy(b);
        return false;
    }
    tt_ir_builder_add_output(b, y);
    float upd[N * 8], got[N], want[N];
    for (int64_t e = 0; e < view_numel(v); e++) upd[e] = -1000.0f - (float)e;
    memcpy(want, flat, sizeof want);
    for (int64_t e = 0; e < view_numel(v); e++) want[flat_index(v, e)] = upd[e];
    const void *in[] = {flat, upd};
    void *out[] = {got};
    if (run(b, in, out) != TT_OK) return false;
    return memcmp(got, want, sizeof want) == 0;
}

static void fill(float *flat) {
    for (int i = 0; i < N; i++) flat[i] = (float)i + 0.5f;
}

static void test_everyday_views_are_expressible_and_read_and_write_exactly(void) {
    float flat[N];
    fill(flat);
    const view cases[] = {
        {0, 2, {8, 12}, {12, 1}},        /* the whole storage */
        {1, 2, {8, 11}, {12, 1}},        /* x[:, 1:] */
        {1, 2, {11, 8}, {1, 12}},        /* x[:, 1:].t() */
        {0, 2, {4, 12}, {24, 1}},        /* x[::2] */
        {3, 1, {8}, {12}},               /* x[:, 3] */
        {0, 1, {8}, {13}},               /* diagonal of an 8x12 */
        {12, 3, {2, 3, 4}, {24, 4, 1}},  /* a 3-d slice with an offset */
        {5, 0, {0}, {0}},                /* a 0-d element */
        {2, 3, {2, 1, 5}, {24, 7, 2}},   /* a size-1 dim and a step */
        {0, 3, {4, 3, 2}, {1, 4, 12}},   /* a permutation of a contiguous block */
        {90, 1, {6}, {1}},               /* ends exactly at the last element */
        {0, 2, {0, 5}, {5, 1}},          /* empty */
        {1, 2, {2, 6}, {2, 5}},          /* a 6x5's x.t()[1:4:2]: a step across a transpose */
        {0, 2, {3, 3}, {5, 2}},          /* steps in both dims */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const view *v = &cases[i];
        TT_CHECK(tt_ir_view_expressible(N, v->offset, v->rank, v->dims, v->strides, true));
        TT_CHECK(read_matches(v, flat));
        TT_CHECK(write_matches(v, flat));
        if (tt_test_case_failed) {
            fprintf(stderr, "  view case %zu failed\n", i);
            return;
        }
    }
}

static void test_expanded_views_read_as_boxes_and_write_last_wins(void) {
    float flat[N];
    fill(flat);
    const view e = {4, 2, {3, 5}, {0, 1}}; /* x[4:9].expand(3, 5) */
    TT_CHECK(tt_ir_view_expressible(N, e.offset, e.rank, e.dims, e.strides, false));
    TT_CHECK(!tt_ir_view_expressible(N, e.offset, e.rank, e.dims, e.strides, true));
    TT_CHECK(read_matches(&e, flat));
    TT_CHECK(write_matches(&e, flat)); /* a scatter: the last row of the update wins, as CPU's loop */
}

static void test_views_that_are_not_boxes_are_gathers_and_scatters(void) {
    float flat[N];
    fill(flat);
    const view odd[] = {
        {0, 2, {10, 4}, {2, 1}},  /* unfold-like windows overlap */
        {0, 2, {3, 3}, {3, 2}},   /* strides that do not nest */
        {5, 2, {3, 3}, {1, 1}},   /* equal strides */
    };
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++) {
        const view *v = &odd[i];
        TT_CHECK(!tt_ir_view_expressible(N, v->offset, v->rank, v->dims, v->strides, false));
        TT_CHECK(tt_ir_view_in_bounds(N, v->offset, v->rank, v->dims, v->strides));
        TT_CHECK(read_matches(v, flat));
        TT_CHECK(write_matches(v, flat));
    }
}

static void test_views_outside_the_storage_are_refused_and_build_nothing(void) {
    const view v = {90, 1, {7}, {1}}; /* runs past the end */
    TT_CHECK(!tt_ir_view_in_bounds(N, v.offset, v.rank, v.dims, v.strides));
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = N;
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n), y = TT_IR_NONE;
    TT_CHECK(tt_ir_view_read(b, x, v.offset, v.rank, v.dims, v.strides, &y) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_ir_view_write(b, x, v.offset, v.rank, v.dims, v.strides, x, &y) == TT_STATUS_INVALID_ARGUMENT);
    TT_CHECK(tt_ir_builder_status(b) == TT_OK); /* the builder stays usable */
    tt_ir_builder_destroy(b);
}

/* Every view of many random (offset, dims, strides) in bounds reads and writes as defined (boxes or not), and
 * every box's elements are distinct when written without broadcast dims (nesting means no overlap). */
/* k of a fused qkv ([2, 4, 3 x 4] as 96 floats: x[:, :, 4:8]) starts mid-row and its box overhangs the end: it is
 * read as a reshape of the whole value and one slice, no padded copy of the range. */
static void test_a_view_starting_mid_row_reads_without_padding(void) {
    float flat[N];
    fill(flat);
    const view k = {4, 3, {2, 4, 4}, {48, 12, 1}};
    TT_CHECK(read_matches(&k, flat));
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = N;
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n), y = TT_IR_NONE;
    TT_CHECK_OK(tt_ir_view_read(b, x, k.offset, k.rank, k.dims, k.strides, &y));
    tt_ir_builder_add_output(b, y);
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    tt_ir_builder_destroy(b);
    int pads = 0, slices = 0;
    for (int32_t i = 0; p && i < p->n_nodes; i++) {
        pads += p->nodes[i].op == TT_OP_PAD;
        slices += p->nodes[i].op == TT_OP_SLICE;
    }
    TT_CHECK(p && pads == 0 && slices == 1);
    tt_ir_program_destroy(p);
}

/* A view of every element once (the storage of q.transpose(0, 1) * s, written in memory order) is the update
 * permuted: no mask, no select over the old value; and read back, the two transposes cancel. */
static void test_a_permuted_whole_view_writes_without_a_mask(void) {
    float flat[N];
    fill(flat);
    const view v = {0, 3, {4, 8, 3}, {3, 12, 1}}; /* an [8, 4, 3] storage seen as its transpose(0, 1) */
    TT_CHECK(write_matches(&v, flat));
    tt_ir_builder *b = tt_ir_builder_create();
    int64_t n = N;
    tt_ir_value x = tt_ir_param(b, TT_F32, 1, &n), u = tt_ir_param(b, TT_F32, v.rank, v.dims);
    tt_ir_value w = TT_IR_NONE, back = TT_IR_NONE;
    TT_CHECK_OK(tt_ir_view_write(b, x, v.offset, v.rank, v.dims, v.strides, u, &w));
    TT_CHECK_OK(tt_ir_view_read(b, w, v.offset, v.rank, v.dims, v.strides, &back));
    TT_CHECK(back == u);
    tt_ir_builder_add_output(b, w);
    tt_ir_program *p = NULL;
    TT_CHECK_OK(tt_ir_builder_finish(b, &p));
    for (int32_t i = 0; p && i < p->n_nodes; i++) TT_CHECK(p->nodes[i].op != TT_OP_SELECT);
    tt_ir_program_destroy(p);
    tt_ir_builder_destroy(b);
}

static void test_random_views_match_the_definition(void) {
    float flat[N];
    fill(flat);
    uint64_t seed = 12345;
    int tried = 0, boxes = 0;
    for (int it = 0; it < 3000 && !tt_test_case_failed; it++) {
        view v = {0};
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uint64_t r = seed >> 11;
        v.rank = (int32_t)(r % 4) + 1;
        r /= 4;
        for (int32_t d = 0; d < v.rank; d++) {
            v.dims[d] = (int64_t)(r % 4) + 1;
            r /= 4;
            static const int64_t stride_pool[] = {0, 1, 2, 3, 4, 6, 8, 12, 24};
            v.strides[d] = stride_pool[r % 9];
            r /= 9;
        }
        v.offset = (int64_t)(r % 24);
        if (!tt_ir_view_in_bounds(N, v.offset, v.rank, v.dims, v.strides)) continue;
        tried++;
        TT_CHECK(read_matches(&v, flat));
        TT_CHECK(write_matches(&v, flat));
        if (tt_ir_view_expressible(N, v.offset, v.rank, v.dims, v.strides, true)) {
            boxes++;
            bool seen[N] = {false}, distinct = true;
            for (int64_t e = 0; e < view_numel(&v); e++) {
                int64_t at = flat_index(&v, e);
                distinct = distinct && !seen[at];
                seen[at] = true;
            }
            TT_CHECK(distinct);
        }
        if (tt_test_case_failed)
            fprintf(stderr, "  view offset %lld rank %d dims %lld %lld %lld %lld strides %lld %lld %lld %lld\n",
                    (long long)v.offset, (int)v.rank, (long long)v.dims[0], (long long)v.dims[1], (long long)v.dims[2],
                    (long long)v.dims[3], (long long)v.strides[0], (long long)v.strides[1], (long long)v.strides[2],
                    (long long)v.strides[3]);
    }
    TT_CHECK(boxes > tried / 10 && boxes < tried); /* both paths are exercised */
}

static const tt_test_case cases[] = {
    {"everyday views are expressible and read and write exactly",
     test_everyday_views_are_expressible_and_read_and_write_exactly},
    {"expanded views read as boxes and write last wins", test_expanded_views_read_as_boxes_and_write_last_wins},
    {"views that are not boxes are gathers and scatters", test_views_that_are_not_boxes_are_gathers_and_scatters},
    {"views outside the storage are refused and build nothing",
     test_views_outside_the_storage_are_refused_and_build_nothing},
    {"a view starting mid-row reads without padding", test_a_view_starting_mid_row_reads_without_padding},
    {"a permuted whole view writes without a mask", test_a_permuted_whole_view_writes_without_a_mask},
    {"random views match the definition", test_random_views_match_the_definition},
    {NULL, NULL},
};

int main(void) {
    int rc = tt_test_run(cases);
    tt_driver_destroy(D);
    return rc;
}
