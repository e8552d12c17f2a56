/* test_lower_gaps.c — the resample.c and special.c lowerings (upsample, padding, adaptive pools, glu, log_sigmoid,
 * polygamma, Bessel I, logcumsumexp, cross), search.c (searchsorted, isin, masked_scatter, embedding_bag), pool.c
 * (3-d pools) and sort.c's median / mode, built into programs and run on the host driver, compared with PyTorch CPU
 * values. */
#include "tt_driver.h"
#include "tt_lower.h"
#include "tt_test.h"

#include <string.h>

/* ---- harness: inputs as doubles in any dtype; lower one op with several results; run on the host driver ---- */

#define R_MAX_IN 8
#define R_MAX_OUT 5
#define R_MAX_EL 64

typedef struct r_run {
    tt_ir_builder *b;
    tt_lower_ctx ctx;
    int nin;
    const double *in[R_MAX_IN];
    int nout;
    tt_ir_type out_type[R_MAX_OUT];
    double out[R_MAX_OUT][R_MAX_EL];
} r_run;

static void r_begin(r_run *r) {
    memset(r, 0, sizeof *r);
    r->b = tt_ir_builder_create();
    r->ctx.b = r->b;
}
static void r_end(r_run *r) { tt_ir_builder_destroy(r->b); }

static tt_arg r_tensor(r_run *r, tt_dtype dt, int32_t rank, const int64_t *dims, const double *data) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSOR;
    a.value = tt_ir_param(r->b, dt, rank, dims);
    a.dtype = dt;
    a.n = rank;
    r->in[r->nin++] = data;
    return a;
}
static tt_arg r_kind(tt_arg_kind k) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = k;
    a.value = TT_IR_NONE;
    return a;
}
static tt_arg r_none(void) { return r_kind(TT_ARG_NONE); }
static tt_arg r_int(int64_t v) {
    tt_arg a = r_kind(TT_ARG_INT);
    a.i = v;
    return a;
}
static tt_arg r_ints(int32_t n, const int64_t *v) {
    tt_arg a = r_kind(TT_ARG_INTS);
    a.n = n;
    a.ints = v;
    return a;
}
static tt_arg r_bool(bool v) {
    tt_arg a = r_kind(TT_ARG_BOOL);
    a.b = v;
    return a;
}

static void r_put(void *p, tt_dtype dt, int64_t i, double v) {
    switch (dt) {
    case TT_F32: ((float *)p)[i] = (float)v; break;
    case TT_BF16: ((uint16_t *)p)[i] = tt_f32_to_bf16((float)v); break;
    case TT_F16: ((uint16_t *)p)[i] = tt_f32_to_f16((float)v); break;
    case TT_F64: ((double *)p)[i] = v; break;
    case TT_I64: ((int64_t *)p)[i] = (int64_t)v; break;
    case TT_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    case TT_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case TT_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case TT_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case TT_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    default: break;
    }
}
static double r_get(const void *p, tt_dtype dt, int64_t i) {
    switch (dt) {
    case TT_F32: return ((const float *)p)[i];
    case TT_BF16: return tt_bf16_to_f32(((const uint16_t *)p)[i]);
    case TT_F16: return tt_f16_to_f32(((const uint16_t *)p)[i]);
    case TT_F64: return ((const double *)p)[i];
    case TT_I64: return (double)((const int64_t *)p)[i];
    case TT_I32: return ((const int32_t *)p)[i];
    case TT_I16: return ((const int16_t *)p)[i];
    case TT_I8: return ((const int8_t *)p)[i];
    case TT_U8: return ((const uint8_t *)p)[i];
    case TT_BOOL: return ((const uint8_t *)p)[i];
    default: return NAN;
    }
}

static void r_strides(const tt_ir_type *t, int64_t *strides) {
    int64_t s = 1;
    for (int32_t k = t->rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= t->dims[k];
    }
}

/* Lowers op with nouts results and runs it; the lowering's (or the run's) status. */
static tt_status r_exec(r_run *r, const char *op, tt_arg *args, int32_t nargs, int32_t nouts) {
    tt_lower_fn fn = tt_lower_find(op);
    if (!fn) return tt_error(TT_STATUS_UNSUPPORTED, "no lowering for %s", op);
    tt_ir_value outs[R_MAX_OUT];
    for (int i = 0; i < R_MAX_OUT; i++) outs[i] = TT_IR_NONE;
    tt_status st = fn(&r->ctx, args, nargs, outs, nouts);
    if (st != TT_OK) return st;
    r->nout = nouts;
    for (int i = 0; i < nouts; i++) {
        r->out_type[i] = *tt_ir_type_of(r->b, outs[i]);
        if (tt_numel(r->out_type[i].rank, r->out_type[i].dims) > R_MAX_EL) return TT_STATUS_UNSUPPORTED;
        tt_ir_builder_add_output(r->b, outs[i]);
    }
    tt_ir_program *p = NULL;
    if ((st = tt_ir_builder_finish(r->b, &p)) != TT_OK) return st;
    if ((st = tt_ir_verify(p)) != TT_OK) {
        tt_ir_program_destroy(p);
        return st;
    }
    tt_driver *d = tt_host_driver_create(1, 0);
    if (!d) {
        tt_ir_program_destroy(p);
        return TT_STATUS_OUT_OF_MEMORY;
    }
    tt_executable *exe = NULL;
    tt_exec_arg ea[32], eo[R_MAX_OUT];
    tt_buffer *bufs[32 + R_MAX_OUT];
    int nbufs = 0;
    memset(ea, 0, sizeof ea);
    memset(eo, 0, sizeof eo);
    uint8_t host[R_MAX_EL * 8];
    if (p->n_params > 32) {
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
        int64_t numel = tt_numel(t->rank, t->dims);
        size_t nb = (size_t)numel * tt_dtype_size(t->dtype);
        if (numel > R_MAX_EL || i >= r->nin) {
            st = TT_STATUS_UNSUPPORTED;
            goto done;
        }
        for (int64_t k = 0; k < numel; k++) r_put(host, t->dtype, k, r->in[i][k]);
        if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
        ea[i].buffer = bufs[nbufs++];
        r_strides(t, ea[i].strides);
        if (nb && (st = d->iface.write(d->ctx, ea[i].buffer, 0, host, nb)) != TT_OK) goto done;
    }
    for (int o = 0; o < nouts; o++) {
        const tt_ir_type *t = &r->out_type[o];
        size_t nb = (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype);
        if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
        eo[o].buffer = bufs[nbufs++];
        r_strides(t, eo[o].strides);
    }
    if ((st = d->iface.execute(d->ctx, 0, exe, ea, p->n_params, eo, nouts)) != TT_OK) goto done;
    for (int o = 0; o < nouts; o++) {
        const tt_ir_type *t = &r->out_type[o];
        int64_t numel = tt_numel(t->rank, t->dims);
        size_t nb = (size_t)numel * tt_dtype_size(t->dtype);
        if (nb && (st = d->iface.read(d->ctx, eo[o].buffer, 0, host, nb)) != TT_OK) goto done;
        for (int64_t i = 0; i < numel; i++) r->out[o][i] = r_get(host, t->dtype, i);
    }
done:
    for (int i = 0; i < nbufs; i++) d->iface.buffer_free(d->ctx, bufs[i]);
    d->iface.executable_free(d->ctx, exe);
    tt_driver_destroy(d);
    tt_ir_program_destroy(p);
    return st;
}

/* Checks result o's dtype, shape and values (relative tolerance tol; NaN must match NaN). */
static void r_expect(const r_run *r, int o, tt_dtype dt, int32_t rank, const int64_t *dims, const double *want,
                     double tol) {
    const tt_ir_type *t = &r->out_type[o];
    if (t->dtype != dt) fprintf(stderr, "  out %d dtype: got %s, want %s\n", o, tt_dtype_name(t->dtype), tt_dtype_name(dt));
    TT_CHECK(t->dtype == dt);
    TT_CHECK(t->rank == rank);
    if (t->rank != rank) return;
    for (int32_t i = 0; i < rank; i++) TT_CHECK(t->dims[i] == dims[i]);
    int64_t n = tt_numel(rank, dims);
    for (int64_t i = 0; i < n && i < R_MAX_EL; i++) {
        double g = r->out[o][i], w = want[i];
        bool ok = isnan(w) ? isnan(g) : (isinf(w) ? g == w : fabs(g - w) <= tol * (1.0 + fabs(w)));
        if (!ok) fprintf(stderr, "  out %d [%lld]: got %.9g want %.9g\n", o, (long long)i, g, w);
        TT_CHECK(ok);
    }
}

#define DIMS(...) ((const int64_t[]){__VA_ARGS__})
#define VALS(...) ((const double[]){__VA_ARGS__})
static tt_arg r_scalar_i(int64_t v) {
    tt_arg a = r_kind(TT_ARG_SCALAR);
    a.dtype = TT_I64;
    a.i = v;
    a.f = (double)v;
    return a;
}

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
