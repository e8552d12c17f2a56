/* tt_lower_run.h — a harness for lowering tests: inputs as doubles in any dtype, lower one op (several
 * results allowed), run the program on the host driver, compare. Header-only; shared by the test_lower_*.c
 * programs. */
#ifndef TT_LOWER_RUN_H
#define TT_LOWER_RUN_H

#include "tt_driver.h"
#include "tt_lower.h"
#include "tt_test.h"

#include <stdlib.h>
#include <string.h>

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

static inline void r_begin(r_run *r) {
    memset(r, 0, sizeof *r);
    r->b = tt_ir_builder_create();
    r->ctx.b = r->b;
}
static inline void r_end(r_run *r) { tt_ir_builder_destroy(r->b); }

static inline tt_arg r_tensor(r_run *r, tt_dtype dt, int32_t rank, const int64_t *dims, const double *data) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSOR;
    a.value = tt_ir_param(r->b, dt, rank, dims);
    a.dtype = dt;
    a.n = rank;
    r->in[r->nin++] = data;
    return a;
}
static inline tt_arg r_kind(tt_arg_kind k) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = k;
    a.value = TT_IR_NONE;
    return a;
}
static inline tt_arg r_none(void) { return r_kind(TT_ARG_NONE); }
static inline tt_arg r_int(int64_t v) {
    tt_arg a = r_kind(TT_ARG_INT);
    a.i = v;
    return a;
}
static inline tt_arg r_ints(int32_t n, const int64_t *v) {
    tt_arg a = r_kind(TT_ARG_INTS);
    a.n = n;
    a.ints = v;
    return a;
}
static inline tt_arg r_bool(bool v) {
    tt_arg a = r_kind(TT_ARG_BOOL);
    a.b = v;
    return a;
}
static inline tt_arg r_float(double v) {
    tt_arg a = r_kind(TT_ARG_FLOAT);
    a.f = v;
    return a;
}
static inline tt_arg r_dtype(tt_dtype dt) {
    tt_arg a = r_kind(TT_ARG_DTYPE);
    a.dtype = dt;
    return a;
}
/* Python-number scalars (a Scalar argument): float, int (its double too, for lowerings that read .f), bool. */
static inline tt_arg r_scalar_f(double v) {
    tt_arg a = r_kind(TT_ARG_SCALAR);
    a.dtype = TT_F64;
    a.f = v;
    return a;
}
static inline tt_arg r_scalar_i(int64_t v) {
    tt_arg a = r_kind(TT_ARG_SCALAR);
    a.dtype = TT_I64;
    a.i = v;
    a.f = (double)v;
    return a;
}
static inline tt_arg r_scalar_b(bool v) {
    tt_arg a = r_kind(TT_ARG_SCALAR);
    a.dtype = TT_BOOL;
    a.b = v;
    return a;
}
static inline tt_arg r_str(const char *s) {
    tt_arg a = r_kind(TT_ARG_STRING);
    a.s = s;
    return a;
}

static inline void r_put(void *p, tt_dtype dt, int64_t i, double v) {
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
static inline double r_get(const void *p, tt_dtype dt, int64_t i) {
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

static inline void r_strides(const tt_ir_type *t, int64_t *strides) {
    int64_t s = 1;
    for (int32_t k = t->rank - 1; k >= 0; k--) {
        strides[k] = s;
        s *= t->dims[k];
    }
}

/* Lowers op with nouts results and runs it; the lowering's (or the run's) status. */
static inline tt_status r_exec(r_run *r, const char *op, tt_arg *args, int32_t nargs, int32_t nouts) {
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

/* The raw form: inputs given in their dtype's C type (borrowed until r_raw_exec), results of any size read back as
 * doubles into heap arrays (r_raw_end frees them). */
#define R_RAW_MAX_PARAMS 64

typedef struct r_raw {
    tt_ir_builder *b;
    tt_lower_ctx ctx;
    int nin;
    const void *in[R_MAX_IN];
    tt_ir_type out_type[R_MAX_OUT];
    double *out[R_MAX_OUT];
} r_raw;

static inline void r_raw_begin(r_raw *r) {
    memset(r, 0, sizeof *r);
    r->b = tt_ir_builder_create();
    r->ctx.b = r->b;
}
static inline void r_raw_end(r_raw *r) {
    for (int i = 0; i < R_MAX_OUT; i++) free(r->out[i]);
    tt_ir_builder_destroy(r->b);
}
static inline tt_arg r_raw_tensor(r_raw *r, tt_dtype dt, int32_t rank, const int64_t *dims, const void *data) {
    tt_arg a;
    memset(&a, 0, sizeof a);
    a.kind = TT_ARG_TENSOR;
    a.value = tt_ir_param(r->b, dt, rank, dims);
    a.dtype = dt;
    a.n = rank;
    r->in[r->nin++] = data;
    return a;
}

/* Lowers op with nouts results and runs it; the lowering's (or the run's) status. */
static inline tt_status r_raw_exec(r_raw *r, const char *op, tt_arg *args, int32_t nargs, int32_t nouts) {
    tt_lower_fn fn = tt_lower_find(op);
    if (!fn) return tt_error(TT_STATUS_UNSUPPORTED, "no lowering for %s", op);
    if (nouts > R_MAX_OUT) return TT_STATUS_UNSUPPORTED;
    tt_ir_value outs[R_MAX_OUT];
    for (int i = 0; i < R_MAX_OUT; i++) outs[i] = TT_IR_NONE;
    tt_status st = fn(&r->ctx, args, nargs, outs, nouts);
    if (st != TT_OK) return st;
    for (int32_t i = 0; i < nouts; i++) {
        r->out_type[i] = *tt_ir_type_of(r->b, outs[i]);
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
    tt_exec_arg ea[R_RAW_MAX_PARAMS], eo[R_MAX_OUT];
    tt_buffer *bufs[R_RAW_MAX_PARAMS + R_MAX_OUT];
    int nbufs = 0;
    void *host = NULL;
    memset(ea, 0, sizeof ea);
    memset(eo, 0, sizeof eo);
    if (p->n_params > R_RAW_MAX_PARAMS) {
        st = TT_STATUS_UNSUPPORTED;
        goto done;
    }
    if ((st = d->iface.compile(d->ctx, p, &exe)) != TT_OK) goto done;
    int tin = 0; /* tensor inputs in order; scalar parameters take their values from the ctx */
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
        if (tin >= r->nin) {
            st = TT_STATUS_UNSUPPORTED;
            goto done;
        }
        size_t nb = (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype);
        if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
        ea[i].buffer = bufs[nbufs++];
        r_strides(t, ea[i].strides);
        if (nb && (st = d->iface.write(d->ctx, ea[i].buffer, 0, r->in[tin], nb)) != TT_OK) goto done;
        tin++;
    }
    for (int32_t o = 0; o < nouts; o++) {
        const tt_ir_type *t = &r->out_type[o];
        size_t nb = (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype);
        if ((st = d->iface.buffer_alloc(d->ctx, 0, nb, &bufs[nbufs])) != TT_OK) goto done;
        eo[o].buffer = bufs[nbufs++];
        r_strides(t, eo[o].strides);
    }
    if ((st = d->iface.execute(d->ctx, 0, exe, ea, p->n_params, eo, nouts)) != TT_OK) goto done;
    for (int32_t o = 0; o < nouts; o++) {
        const tt_ir_type *t = &r->out_type[o];
        int64_t numel = tt_numel(t->rank, t->dims);
        size_t nb = (size_t)numel * tt_dtype_size(t->dtype);
        host = malloc(nb ? nb : 1);
        r->out[o] = malloc(sizeof(double) * (size_t)(numel ? numel : 1));
        if (!host || !r->out[o]) {
            st = TT_STATUS_OUT_OF_MEMORY;
            goto done;
        }
        if (nb && (st = d->iface.read(d->ctx, eo[o].buffer, 0, host, nb)) != TT_OK) goto done;
        for (int64_t i = 0; i < numel; i++) r->out[o][i] = r_get(host, t->dtype, i);
        free(host);
        host = NULL;
    }
done:
    free(host);
    for (int i = 0; i < nbufs; i++) d->iface.buffer_free(d->ctx, bufs[i]);
    d->iface.executable_free(d->ctx, exe);
    tt_driver_destroy(d);
    tt_ir_program_destroy(p);
    return st;
}

/* Checks result o's dtype, shape and values (relative tolerance tol; NaN must match NaN). */
static inline void r_expect(const r_run *r, int o, tt_dtype dt, int32_t rank, const int64_t *dims, const double *want,
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

#endif
