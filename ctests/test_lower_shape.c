/* test_lower_shape.c — the shape, index and creation lowerings built into programs and run on the host driver,
 * compared with hand-computed numbers (PyTorch CPU results). */
#include "tt_driver.h"
#include "tt_lower.h"
#include "tt_test.h"

#include <string.h>

/* ---- a tiny harness: typed tensor args, lower, run on the host driver, read results as doubles ---- */

#define H_MAX_IN 8

typedef struct h_run {
    tt_ir_builder *b;
    tt_lower_ctx ctx;
    int nin;
    const void *in[H_MAX_IN];
    tt_ir_type out_type;
    double *out; /* result as doubles (owned; h_end frees) */
} h_run;

static void h_begin(h_run *r) {
    memset(r, 0, sizeof *r);
    r->b = tt_ir_builder_create();
    r->ctx.b = r->b;
}

static void h_end(h_run *r) {
    free(r->out);
    tt_ir_builder_destroy(r->b);
}

/* A tensor argument of dtype dt (data borrowed until h_exec, row-major, in dt's C type). */
static tt_arg h_tensor(h_run *r, tt_dtype dt, int32_t rank, const int64_t *dims, const void *data) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSOR;
    a.value = tt_ir_param(r->b, dt, rank, dims);
    a.dtype = dt;
    a.n = rank;
    r->in[r->nin++] = data;
    return a;
}
static tt_arg h_ints(int32_t n, const int64_t *v) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_INTS;
    a.n = n;
    a.ints = v;
    return a;
}
static tt_arg h_int(int64_t v) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_INT;
    a.i = v;
    return a;
}
static tt_arg h_bool(bool v) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_BOOL;
    a.b = v;
    return a;
}
static tt_arg h_scalar_f(double v) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_SCALAR;
    a.dtype = TT_F64;
    a.f = v;
    return a;
}
static tt_arg h_scalar_i(int64_t v) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_SCALAR;
    a.dtype = TT_I64;
    a.i = v;
    return a;
}
static tt_arg h_none(void) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_NONE;
    a.value = TT_IR_NONE;
    return a;
}
static tt_arg h_list(int32_t n, const tt_ir_value *vs) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSORS;
    a.n = n;
    a.values = vs;
    return a;
}
static tt_arg h_str(const char *s) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_STRING;
    a.s = s;
    return a;
}

static double h_read(const void *p, tt_dtype dt, int64_t i) {
    switch (dt) {
    case TT_F32: return ((const float *)p)[i];
    case TT_F64: return ((const double *)p)[i];
    case TT_I64: return (double)((const int64_t *)p)[i];
    case TT_I32: return ((const int32_t *)p)[i];
    case TT_BF16: return tt_bf16_to_f32(((const uint16_t *)p)[i]);
    case TT_BOOL: return ((const uint8_t *)p)[i];
    default: return NAN;
    }
}

static void h_strides(const tt_ir_type *t, int64_t *strides) {
    int64_t s = 1;
    for (int32_t k = t->rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= t->dims[k];
    }
}

/* Lowers op (one result), runs it; returns the lowering's (or the run's) status. */
static tt_status h_exec(h_run *r, const char *op, tt_arg *args, int32_t nargs) {
    tt_lower_fn fn = tt_lower_find(op);
    if (!fn) return tt_error(TT_STATUS_UNSUPPORTED, "no lowering for %s", op);
    tt_ir_value out = TT_IR_NONE;
    tt_status st = fn(&r->ctx, args, nargs, &out, 1);
    if (st != TT_OK) return st;
    r->out_type = *tt_ir_type_of(r->b, out);
    tt_ir_builder_add_output(r->b, out);
    tt_ir_program *p = NULL;
    if ((st = tt_ir_builder_finish(r->b, &p)) != TT_OK) return st;
    if ((st = tt_ir_verify(p)) != TT_OK) {
        tt_ir_program_destroy(p);
        return st;
    }
    tt_driver *d = tt_host_driver_create(1, 0);
    tt_executable *exe = NULL;
    tt_exec_arg ea[64], eo;
    tt_buffer *bufs[65];
    int nbufs = 0;
    memset(ea, 0, sizeof ea);
    memset(&eo, 0, sizeof eo);
    void *host = NULL;
    if (!d) {
        tt_ir_program_destroy(p);
        return TT_STATUS_OUT_OF_MEMORY;
    }
    if (p->n_params > 64) {
        st = TT_STATUS_UNSUPPORTED;
        goto done;
    }
    if ((st = d->iface.compile(d->ctx, p, &exe)) != TT_OK) goto done;
    for (int32_t i = 0; i < p->n_params; i++) {
        tt_ir_value v = p->params[i];
        const tt_ir_node *n = &p->nodes[p->value_node[v]];
        const tt_ir_type *t = &p->types[v];
        if (n->op == TT_OP_SCALAR_PARAMETER) {
            for (int32_t k = 0; k < r->ctx.n_scalars; k++)
                if (r->ctx.scalars[k].param_index == i) {
                    ea[i].i = r->ctx.scalars[k].i;
                    ea[i].f = r->ctx.scalars[k].f;
                }
            continue;
        }
        size_t nb = (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype);
        if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
        ea[i].buffer = bufs[nbufs++];
        h_strides(t, ea[i].strides);
        if (nb && (st = d->iface.write(d->ctx, ea[i].buffer, 0, r->in[i], nb)) != TT_OK) goto done;
    }
    const tt_ir_type *t = &r->out_type;
    int64_t numel = tt_numel(t->rank, t->dims);
    size_t nb = (size_t)numel * tt_dtype_size(t->dtype);
    if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
    eo.buffer = bufs[nbufs++];
    h_strides(t, eo.strides);
    if ((st = d->iface.execute(d->ctx, 0, exe, ea, p->n_params, &eo, 1)) != TT_OK) goto done;
    host = malloc(nb ? nb : 1);
    r->out = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
    if (!host || !r->out) {
        st = TT_STATUS_OUT_OF_MEMORY;
        goto done;
    }
    if (nb && (st = d->iface.read(d->ctx, eo.buffer, 0, host, nb)) != TT_OK) goto done;
    for (int64_t i = 0; i < numel; i++) r->out[i] = h_read(host, t->dtype, i);
done:
    free(host);
    for (int i = 0; i < nbufs; i++) d->iface.buffer_free(d->ctx, bufs[i]);
    d->iface.executable_free(d->ctx, exe);
    tt_driver_destroy(d);
    tt_ir_program_destroy(p);
    return st;
}

/* Checks the result's dtype, shape and values. */
static void h_expect(const h_run *r, tt_dtype dt, int32_t rank, const int64_t *dims, const double *want) {
    TT_CHECK(r->out_type.dtype == dt);
    TT_CHECK(r->out_type.rank == rank);
    if (r->out_type.rank != rank) return;
    for (int32_t i = 0; i < rank; i++) TT_CHECK(r->out_type.dims[i] == dims[i]);
    if (!r->out) return;
    int64_t n = tt_numel(rank, dims);
    for (int64_t i = 0; i < n; i++) {
        if (fabs(r->out[i] - want[i]) > 1e-5 * (1 + fabs(want[i]))) {
            fprintf(stderr, "  element %lld: got %g, want %g\n", (long long)i, r->out[i], want[i]);
            tt_test_case_failed = 1;
            return;
        }
    }
}

/* ---- index ---- */

static void gather_picks_along_dim_one(void) {
    h_run r;
    h_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t idx[4] = {2, 0, 1, 1};
    int64_t xd[2] = {2, 3}, id[2] = {2, 2};
    tt_arg args[4] = {h_tensor(&r, TT_F32, 2, xd, x), h_int(1), h_tensor(&r, TT_I64, 2, id, idx), h_bool(false)};
    TT_CHECK_OK(h_exec(&r, "aten::gather", args, 4));
    static const double want[4] = {3, 1, 5, 5};
    h_expect(&r, TT_F32, 2, id, want);
    h_end(&r);
}

static void scatter_add_accumulates_duplicates(void) {
    h_run r;
    h_begin(&r);
    static const float x[5] = {0, 0, 0, 0, 0};
    static const int64_t idx[4] = {1, 3, 1, 0};
    static const float src[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[1] = {5}, id[1] = {4}, sd[1] = {6};
    tt_arg args[4] = {h_tensor(&r, TT_F32, 1, xd, x), h_int(0), h_tensor(&r, TT_I64, 1, id, idx),
                      h_tensor(&r, TT_F32, 1, sd, src)};
    TT_CHECK_OK(h_exec(&r, "aten::scatter_add", args, 4));
    static const double want[5] = {4, 4, 0, 2, 0};
    h_expect(&r, TT_F32, 1, xd, want);
    h_end(&r);
}

static void scatter_reduce_amax_excluding_self(void) {
    h_run r;
    h_begin(&r);
    static const float x[3] = {10, 10, 10};
    static const int64_t idx[3] = {0, 0, 2};
    static const float src[3] = {1, 7, -3};
    int64_t d3[1] = {3};
    tt_arg args[6] = {h_tensor(&r, TT_F32, 1, d3, x), h_int(0), h_tensor(&r, TT_I64, 1, d3, idx),
                      h_tensor(&r, TT_F32, 1, d3, src), h_str("amax"), h_bool(false)};
    TT_CHECK_OK(h_exec(&r, "aten::scatter_reduce.two", args, 6));
    static const double want[3] = {7, 10, -3};
    h_expect(&r, TT_F32, 1, d3, want);
    h_end(&r);
}

static void scatter_reduce_mean_on_ints_floors(void) {
    h_run r;
    h_begin(&r);
    static const int64_t x[2] = {0, 5};
    static const int64_t idx[3] = {0, 0, 1};
    static const int64_t src[3] = {-3, 0, 2};
    int64_t d2[1] = {2}, d3[1] = {3};
    tt_arg args[6] = {h_tensor(&r, TT_I64, 1, d2, x), h_int(0), h_tensor(&r, TT_I64, 1, d3, idx),
                      h_tensor(&r, TT_I64, 1, d3, src), h_str("mean"), h_bool(true)};
    TT_CHECK_OK(h_exec(&r, "aten::scatter_reduce.two", args, 6));
    static const double want[2] = {-1, 3}; /* floor(-3/3), floor(7/2) */
    h_expect(&r, TT_I64, 1, d2, want);
    h_end(&r);
}

static void index_with_indices_split_by_a_slice_puts_them_first(void) {
    h_run r;
    h_begin(&r);
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    static const int64_t i0[2] = {1, -1};
    static const int64_t i2[1] = {3};
    int64_t xd[3] = {2, 3, 4}, d1[1] = {2}, d0[1] = {1};
    tt_arg self = h_tensor(&r, TT_F32, 3, xd, x);
    tt_arg a0 = h_tensor(&r, TT_I64, 1, d1, i0), a2 = h_tensor(&r, TT_I64, 1, d0, i2);
    tt_ir_value list[3] = {a0.value, TT_IR_NONE, a2.value};
    tt_arg args[2] = {self, h_list(3, list)};
    TT_CHECK_OK(h_exec(&r, "aten::index.Tensor", args, 2));
    /* x[[1,-1], :, [3]] -> shape [2, 3]: x[1, j, 3] twice */
    int64_t od[2] = {2, 3};
    static const double want[6] = {15, 19, 23, 15, 19, 23};
    h_expect(&r, TT_F32, 2, od, want);
    h_end(&r);
}

static void index_with_adjacent_indices_keeps_their_place(void) {
    h_run r;
    h_begin(&r);
    float x[24];
    for (int i = 0; i < 24; i++) x[i] = (float)i;
    static const int64_t i1[2] = {0, 2};
    static const int64_t i2[2] = {1, 3};
    int64_t xd[3] = {2, 3, 4}, d2[1] = {2};
    tt_arg self = h_tensor(&r, TT_F32, 3, xd, x);
    tt_arg a1 = h_tensor(&r, TT_I64, 1, d2, i1), a2 = h_tensor(&r, TT_I64, 1, d2, i2);
    tt_ir_value list[3] = {TT_IR_NONE, a1.value, a2.value};
    tt_arg args[2] = {self, h_list(3, list)};
    TT_CHECK_OK(h_exec(&r, "aten::index.Tensor", args, 2));
    int64_t od[2] = {2, 2};
    static const double want[4] = {1, 11, 13, 23};
    h_expect(&r, TT_F32, 2, od, want);
    h_end(&r);
}

static void index_put_accumulates_broadcast_values(void) {
    h_run r;
    h_begin(&r);
    static const float x[6] = {0, 0, 0, 0, 0, 0};
    static const int64_t i0[3] = {0, 2, 0};
    static const float v[2] = {1, 10};
    int64_t xd[2] = {3, 2}, d3[1] = {3}, d2[1] = {2};
    tt_arg self = h_tensor(&r, TT_F32, 2, xd, x);
    tt_arg a0 = h_tensor(&r, TT_I64, 1, d3, i0);
    tt_ir_value list[1] = {a0.value};
    tt_arg args[4] = {self, h_list(1, list), h_tensor(&r, TT_F32, 1, d2, v), h_bool(true)};
    TT_CHECK_OK(h_exec(&r, "aten::index_put", args, 4));
    static const double want[6] = {2, 20, 0, 0, 1, 10};
    h_expect(&r, TT_F32, 2, xd, want);
    h_end(&r);
}

static void index_with_a_bool_mask_is_unsupported(void) {
    h_run r;
    h_begin(&r);
    static const float x[2] = {1, 2};
    static const uint8_t m[2] = {1, 0};
    int64_t d2[1] = {2};
    tt_arg self = h_tensor(&r, TT_F32, 1, d2, x);
    tt_arg mk = h_tensor(&r, TT_BOOL, 1, d2, m);
    tt_ir_value list[1] = {mk.value};
    tt_arg args[2] = {self, h_list(1, list)};
    TT_CHECK(h_exec(&r, "aten::index.Tensor", args, 2) == TT_STATUS_UNSUPPORTED);
    h_end(&r);
}

static void index_select_and_embedding_take_rows(void) {
    h_run r;
    h_begin(&r);
    static const float w[6] = {1, 2, 3, 4, 5, 6};
    static const int64_t idx[4] = {2, 0, 2, 1};
    int64_t wd[2] = {3, 2}, id[2] = {2, 2};
    tt_arg args[5] = {h_tensor(&r, TT_F32, 2, wd, w), h_tensor(&r, TT_I64, 2, id, idx), h_int(-1), h_bool(false),
                      h_bool(false)};
    TT_CHECK_OK(h_exec(&r, "aten::embedding", args, 5));
    int64_t od[3] = {2, 2, 2};
    static const double want[8] = {5, 6, 1, 2, 5, 6, 3, 4};
    h_expect(&r, TT_F32, 3, od, want);
    h_end(&r);

    h_begin(&r);
    static const int32_t i1[2] = {1, 0};
    int64_t d2[1] = {2};
    tt_arg a2[3] = {h_tensor(&r, TT_F32, 2, wd, w), h_int(1), h_tensor(&r, TT_I32, 1, d2, i1)};
    TT_CHECK_OK(h_exec(&r, "aten::index_select", a2, 3));
    static const double want2[6] = {2, 1, 4, 3, 6, 5};
    h_expect(&r, TT_F32, 2, wd, want2);
    h_end(&r);
}

static void embedding_dense_backward_sums_rows_and_skips_padding(void) {
    h_run r;
    h_begin(&r);
    static const float g[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    static const int64_t idx[4] = {0, 2, 0, 1};
    int64_t gd[2] = {4, 2}, id[1] = {4};
    tt_arg args[5] = {h_tensor(&r, TT_F32, 2, gd, g), h_tensor(&r, TT_I64, 1, id, idx), h_int(3), h_int(1),
                      h_bool(false)};
    TT_CHECK_OK(h_exec(&r, "aten::embedding_dense_backward", args, 5));
    int64_t od[2] = {3, 2};
    static const double want[6] = {6, 8, 0, 0, 3, 4};
    h_expect(&r, TT_F32, 2, od, want);
    h_end(&r);
}

static void index_add_scales_by_alpha(void) {
    h_run r;
    h_begin(&r);
    static const float x[4] = {1, 1, 1, 1};
    static const int64_t idx[2] = {3, 3};
    static const float s[2] = {1, 2};
    int64_t xd[1] = {4}, d2[1] = {2};
    tt_arg args[5] = {h_tensor(&r, TT_F32, 1, xd, x), h_int(0), h_tensor(&r, TT_I64, 1, d2, idx),
                      h_tensor(&r, TT_F32, 1, d2, s), h_scalar_f(2.0)};
    TT_CHECK_OK(h_exec(&r, "aten::index_add", args, 5));
    static const double want[4] = {1, 1, 1, 7};
    h_expect(&r, TT_F32, 1, xd, want);
    h_end(&r);
}

static void masked_fill_broadcasts_the_mask(void) {
    h_run r;
    h_begin(&r);
    static const float x[4] = {1, 2, 3, 4};
    static const uint8_t m[2] = {0, 1};
    int64_t xd[2] = {2, 2}, md[1] = {2};
    tt_arg args[3] = {h_tensor(&r, TT_F32, 2, xd, x), h_tensor(&r, TT_BOOL, 1, md, m), h_scalar_f(-1.5)};
    TT_CHECK_OK(h_exec(&r, "aten::masked_fill.Scalar", args, 3));
    static const double want[4] = {1, -1.5, 3, -1.5};
    h_expect(&r, TT_F32, 2, xd, want);
    h_end(&r);
}

static void slice_scatter_with_step_and_diagonal_scatter(void) {
    h_run r;
    h_begin(&r);
    static const float x[5] = {0, 0, 0, 0, 0};
    static const float s[2] = {7, 8};
    int64_t xd[1] = {5}, sd[1] = {2};
    tt_arg args[6] = {h_tensor(&r, TT_F32, 1, xd, x), h_tensor(&r, TT_F32, 1, sd, s), h_int(0), h_int(1),
                      h_none(), h_int(2)};
    TT_CHECK_OK(h_exec(&r, "aten::slice_scatter", args, 6));
    static const double want[5] = {0, 7, 0, 8, 0};
    h_expect(&r, TT_F32, 1, xd, want);
    h_end(&r);

    h_begin(&r);
    static const float y[6] = {0, 0, 0, 0, 0, 0};
    static const float dsrc[2] = {5, 6};
    int64_t yd[2] = {3, 2};
    tt_arg a2[5] = {h_tensor(&r, TT_F32, 2, yd, y), h_tensor(&r, TT_F32, 1, sd, dsrc), h_int(-1), h_int(0),
                    h_int(1)};
    TT_CHECK_OK(h_exec(&r, "aten::diagonal_scatter", a2, 5));
    static const double want2[6] = {0, 0, 5, 0, 0, 6};
    h_expect(&r, TT_F32, 2, yd, want2);
    h_end(&r);
}

/* ---- shape ---- */

static void cat_promotes_and_skips_legacy_empty(void) {
    h_run r;
    h_begin(&r);
    static const int32_t a[2] = {1, 2};
    static const float e[1] = {0};
    static const float c[2] = {0.5f, 1.5f};
    int64_t d12[2] = {1, 2}, d0[1] = {0};
    tt_arg ta = h_tensor(&r, TT_I32, 2, d12, a), te = h_tensor(&r, TT_F32, 1, d0, e),
           tc = h_tensor(&r, TT_F32, 2, d12, c);
    tt_ir_value list[3] = {ta.value, te.value, tc.value};
    tt_arg args[2] = {h_list(3, list), h_int(0)};
    TT_CHECK_OK(h_exec(&r, "aten::cat", args, 2));
    int64_t od[2] = {2, 2};
    static const double want[4] = {1, 2, 0.5, 1.5};
    h_expect(&r, TT_F32, 2, od, want);
    h_end(&r);
}

static void constant_pad_nd_pads_and_crops(void) {
    h_run r;
    h_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {2, 3};
    static const int64_t pad[4] = {1, -2, 0, 1};
    tt_arg args[3] = {h_tensor(&r, TT_F32, 2, xd, x), h_ints(4, pad), h_scalar_f(9)};
    TT_CHECK_OK(h_exec(&r, "aten::constant_pad_nd", args, 3));
    int64_t od[2] = {3, 2};
    static const double want[6] = {9, 1, 9, 4, 9, 9};
    h_expect(&r, TT_F32, 2, od, want);
    h_end(&r);
}

static void roll_repeat_and_tril(void) {
    h_run r;
    h_begin(&r);
    static const float x[6] = {1, 2, 3, 4, 5, 6};
    int64_t xd[2] = {2, 3};
    static const int64_t sh[1] = {1}, dm[1] = {1};
    tt_arg args[3] = {h_tensor(&r, TT_F32, 2, xd, x), h_ints(1, sh), h_ints(1, dm)};
    TT_CHECK_OK(h_exec(&r, "aten::roll", args, 3));
    static const double want[6] = {3, 1, 2, 6, 4, 5};
    h_expect(&r, TT_F32, 2, xd, want);
    h_end(&r);

    h_begin(&r);
    static const int64_t rep[3] = {2, 1, 2};
    static const float y[2] = {1, 2};
    int64_t yd[1] = {2};
    tt_arg a2[2] = {h_tensor(&r, TT_F32, 1, yd, y), h_ints(3, rep)};
    TT_CHECK_OK(h_exec(&r, "aten::repeat", a2, 2));
    int64_t od[3] = {2, 1, 4};
    static const double want2[8] = {1, 2, 1, 2, 1, 2, 1, 2};
    h_expect(&r, TT_F32, 3, od, want2);
    h_end(&r);

    h_begin(&r);
    tt_arg a3[2] = {h_tensor(&r, TT_F32, 2, xd, x), h_int(0)};
    TT_CHECK_OK(h_exec(&r, "aten::tril", a3, 2));
    static const double want3[6] = {1, 0, 0, 4, 5, 0};
    h_expect(&r, TT_F32, 2, xd, want3);
    h_end(&r);
}

static void repeat_interleave_and_diag_embed(void) {
    h_run r;
    h_begin(&r);
    static const float x[2] = {1, 2};
    int64_t xd[1] = {2};
    tt_arg args[4] = {h_tensor(&r, TT_F32, 1, xd, x), h_int(2), h_int(0), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::repeat_interleave.self_int", args, 4));
    int64_t od[1] = {4};
    static const double want[4] = {1, 1, 2, 2};
    h_expect(&r, TT_F32, 1, od, want);
    h_end(&r);

    h_begin(&r);
    tt_arg a2[4] = {h_tensor(&r, TT_F32, 1, xd, x), h_int(1), h_int(0), h_int(1)};
    TT_CHECK_OK(h_exec(&r, "aten::diag_embed", a2, 4));
    int64_t dd[2] = {3, 3};
    static const double want2[9] = {0, 1, 0, 0, 0, 2, 0, 0, 0};
    h_expect(&r, TT_F32, 2, dd, want2);
    h_end(&r);
}

/* ---- creation ---- */

static void arange_full_and_eye(void) {
    h_run r;
    h_begin(&r);
    tt_arg args[4] = {h_scalar_f(0.5), h_scalar_i(3), h_scalar_f(0.75), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::arange.start_step", args, 4));
    int64_t od[1] = {4};
    static const double want[4] = {0.5, 1.25, 2.0, 2.75};
    h_expect(&r, TT_F32, 1, od, want);
    h_end(&r);

    h_begin(&r);
    tt_arg a1[4] = {h_scalar_i(5), h_scalar_i(-4), h_scalar_i(-3), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::arange.start_step", a1, 4));
    int64_t od1[1] = {3};
    static const double want1[3] = {5, 2, -1};
    h_expect(&r, TT_I64, 1, od1, want1);
    h_end(&r);

    h_begin(&r);
    static const int64_t sz[2] = {2, 1};
    tt_arg a2[3] = {h_ints(2, sz), h_scalar_i(7), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::full", a2, 3));
    static const double want2[2] = {7, 7};
    h_expect(&r, TT_I64, 2, sz, want2);
    h_end(&r);

    h_begin(&r);
    tt_arg a3[3] = {h_int(2), h_int(3), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::eye.m", a3, 3));
    int64_t ed[2] = {2, 3};
    static const double want3[6] = {1, 0, 0, 0, 1, 0};
    h_expect(&r, TT_F32, 2, ed, want3);
    h_end(&r);

    h_begin(&r);
    tt_arg a4[4] = {h_scalar_f(-1), h_scalar_f(1), h_int(5), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::linspace", a4, 4));
    int64_t ld[1] = {5};
    static const double want4[5] = {-1, -0.5, 0, 0.5, 1};
    h_expect(&r, TT_F32, 1, ld, want4);
    h_end(&r);
}

static void tril_indices_lists_the_lower_triangle(void) {
    h_run r;
    h_begin(&r);
    tt_arg args[4] = {h_int(3), h_int(2), h_int(0), h_none()};
    TT_CHECK_OK(h_exec(&r, "aten::tril_indices", args, 4));
    int64_t od[2] = {2, 5};
    static const double want[10] = {0, 1, 1, 2, 2, 0, 0, 1, 0, 1};
    h_expect(&r, TT_I64, 2, od, want);
    h_end(&r);
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
