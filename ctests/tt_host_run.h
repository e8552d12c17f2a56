/* tt_host_run.h — a harness for host-driver tests: one driver per test program, upload inputs, run a built
 * program with contiguous arguments and results, compare floats. Header-only; shared by test_host*.c. */
#ifndef TT_HOST_RUN_H
#define TT_HOST_RUN_H

#include "tt_driver.h"
#include "tt_ir.h"
#include "tt_test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define F32S(...) ((const float[]){__VA_ARGS__})

static tt_driver *D;

static inline tt_driver *drv(void) {
    if (!D) D = tt_host_driver_create(2, 0);
    return D;
}

static inline tt_buffer *upload(const void *data, size_t nbytes) {
    tt_buffer *buf = NULL;
    TT_CHECK_OK(drv()->iface.buffer_alloc(drv()->ctx, 0, nbytes, &buf));
    if (buf && data && nbytes) TT_CHECK_OK(drv()->iface.write(drv()->ctx, buf, 0, data, nbytes));
    return buf;
}

static inline size_t type_bytes(const tt_ir_type *t) { return (size_t)tt_numel(t->rank, t->dims) * tt_dtype_size(t->dtype); }

static inline void contiguous(const tt_ir_type *t, tt_exec_arg *a) {
    int64_t s = 1;
    for (int32_t i = t->rank - 1; i >= 0; i--) {
        a->strides[i] = s;
        s *= t->dims[i];
    }
}

/* Compiles p, runs it with contiguous inputs in[i] (a double for a scalar parameter), reads every output into
 * out[i]. Returns the first failing status (the message stays in tt_last_error()). */
static inline tt_status run_program(tt_ir_program *p, const void *const *in, void *const *out) {
    tt_status st = tt_ir_verify(p);
    tt_executable *exe = NULL;
    if (st == TT_OK) st = drv()->iface.compile(drv()->ctx, p, &exe);
    tt_exec_arg args[16], res[8];
    memset(args, 0, sizeof args);
    memset(res, 0, sizeof res);
    for (int32_t i = 0; st == TT_OK && i < p->n_params; i++) {
        tt_ir_value v = p->params[i];
        if (p->nodes[p->value_node[v]].op == TT_OP_SCALAR_PARAMETER) {
            args[i].f = *(const double *)in[i];
            args[i].i = (int64_t)args[i].f;
            continue;
        }
        args[i].buffer = upload(in[i], type_bytes(&p->types[v]));
        contiguous(&p->types[v], &args[i]);
    }
    for (int32_t i = 0; st == TT_OK && i < p->n_outputs; i++) {
        res[i].buffer = upload(NULL, type_bytes(&p->types[p->outputs[i]]));
        contiguous(&p->types[p->outputs[i]], &res[i]);
    }
    if (st == TT_OK) st = drv()->iface.execute(drv()->ctx, 0, exe, args, p->n_params, res, p->n_outputs);
    for (int32_t i = 0; st == TT_OK && i < p->n_outputs; i++)
        st = drv()->iface.read(drv()->ctx, res[i].buffer, 0, out[i], type_bytes(&p->types[p->outputs[i]]));
    for (int32_t i = 0; i < 16; i++) drv()->iface.buffer_free(drv()->ctx, args[i].buffer);
    for (int32_t i = 0; i < 8; i++) drv()->iface.buffer_free(drv()->ctx, res[i].buffer);
    drv()->iface.executable_free(drv()->ctx, exe);
    return st;
}

/* run_program for b's program (b finished and destroyed). */
static inline tt_status run(tt_ir_builder *b, const void *const *in, void *const *out) {
    tt_ir_program *p = NULL;
    tt_status st = tt_ir_builder_finish(b, &p);
    tt_ir_builder_destroy(b);
    if (st == TT_OK) st = run_program(p, in, out);
    tt_ir_program_destroy(p);
    return st;
}

/* Attributes of a plain matmul: lhs dim lc contracted with rhs dim rc, no batch dims, at precision prec. */
static inline tt_ir_attrs dot_attrs(int64_t lc, int64_t rc, tt_precision prec) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.dot.lhs_contract.n = a.dot.rhs_contract.n = 1;
    a.dot.lhs_contract.v[0] = lc;
    a.dot.rhs_contract.v[0] = rc;
    a.dot.precision = prec;
    return a;
}

static inline bool same_f(float a, float b, float tol) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabsf(a - b) <= tol * (1.0f + fabsf(b));
}


#endif
