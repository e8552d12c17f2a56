/* print_stablehlo.c — tt_ir_print_stablehlo: the program as a StableHLO MLIR module (generic op form), the
 * contract with the PJRT driver. Ops without a one-to-one StableHLO op print as small expansions:
 *   ARG_REDUCE  -> variadic reduce over (x, iota) with a (value, index) comparator; NaN wins, first index wins;
 *   CUMULATIVE  -> reduce_window with a window spanning the dim and padding (n-1, 0) (reversed: (0, n-1));
 *   RNG_UNIFORM -> ui64 integer ops computing tt_ir_rng_bits, then scaled to [0, 1).
 * Names: parameters are %arg<index>, other values %v<id> (%v<id>#k for the two results of a sort); helper values
 * inside expansions are %t<node>_<k>, region arguments %r<node>_<k>, so every name is defined exactly once. */
#include "ir_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sbuf {
    char *s;
    size_t n, cap;
    bool oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void sb_printf(sbuf *b, const char *fmt, ...) {
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = true;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t nc = b->cap * 2 + (size_t)k + 64;
        char *q = realloc(b->s, nc);
        if (!q) {
            b->oom = true;
            return;
        }
        b->s = q;
        b->cap = nc;
    }
}

typedef struct printer {
    sbuf *b;
    const tt_ir_program *p;
    int32_t node; /* node being printed: prefix of helper names */
    int32_t tmp;  /* next helper index */
} printer;

/* ---- names and types ---- */

static const char *elem_name(tt_dtype dt) { return tt_dtype_name(dt); }

static void put_tensor(sbuf *b, const int64_t *dims, int32_t rank, const char *elem) {
    sb_printf(b, "tensor<");
    for (int32_t i = 0; i < rank; i++) sb_printf(b, "%lldx", (long long)dims[i]);
    sb_printf(b, "%s>", elem);
}

static void put_type(sbuf *b, const tt_ir_type *t) { put_tensor(b, t->dims, t->rank, elem_name(t->dtype)); }

static void put_scalar_type(sbuf *b, tt_dtype dt) { sb_printf(b, "tensor<%s>", elem_name(dt)); }

static void put_value(const printer *pr, tt_ir_value v) {
    const tt_ir_node *n = &pr->p->nodes[pr->p->value_node[v]];
    if (n->op == TT_OP_PARAMETER || n->op == TT_OP_SCALAR_PARAMETER)
        sb_printf(pr->b, "%%arg%lld", (long long)n->attrs.parameter.index);
    else if (n->n_outputs == 2)
        sb_printf(pr->b, "%%v%d#%d", (int)n->outputs[0], v == n->outputs[0] ? 0 : 1);
    else
        sb_printf(pr->b, "%%v%d", (int)v);
}

static const tt_ir_value *node_inputs(const printer *pr, const tt_ir_node *n) {
    return pr->p->operands + n->inputs_offset;
}
static const tt_ir_type *vtype(const printer *pr, tt_ir_value v) { return &pr->p->types[v]; }

/* "(%a, %b)" */
static void put_operands(const printer *pr, const tt_ir_node *n) {
    const tt_ir_value *ins = node_inputs(pr, n);
    sb_printf(pr->b, "(");
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (i) sb_printf(pr->b, ", ");
        put_value(pr, ins[i]);
    }
    sb_printf(pr->b, ")");
}

/* " : (T1, T2) -> R" for the node's own operands and results, with extra trailing operand types. */
static void put_signature(const printer *pr, const tt_ir_node *n, int n_extra, const tt_ir_type *extra) {
    const tt_ir_value *ins = node_inputs(pr, n);
    sb_printf(pr->b, " : (");
    for (int32_t i = 0; i < n->n_inputs; i++) {
        if (i) sb_printf(pr->b, ", ");
        put_type(pr->b, vtype(pr, ins[i]));
    }
    for (int i = 0; i < n_extra; i++) {
        if (n->n_inputs + i) sb_printf(pr->b, ", ");
        put_type(pr->b, &extra[i]);
    }
    sb_printf(pr->b, ") -> ");
    if (n->n_outputs == 2) sb_printf(pr->b, "(");
    for (int32_t k = 0; k < n->n_outputs; k++) {
        if (k) sb_printf(pr->b, ", ");
        put_type(pr->b, vtype(pr, n->outputs[k]));
    }
    if (n->n_outputs == 2) sb_printf(pr->b, ")");
    sb_printf(pr->b, "\n");
}

/* "    %v3 = " (or "%v3:2 = " for a two-result sort) */
static void put_result(const printer *pr, const tt_ir_node *n) {
    sb_printf(pr->b, "    %%v%d%s = ", (int)n->outputs[0], n->n_outputs == 2 ? ":2" : "");
}

static void put_i64_array(sbuf *b, const char *name, const tt_ir_dims *d) {
    sb_printf(b, "%s = array<i64", name);
    for (int64_t i = 0; i < d->n; i++) sb_printf(b, "%s %lld", i ? "," : ":", (long long)d->v[i]);
    sb_printf(b, ">");
}

static void put_int_list(sbuf *b, const char *name, const tt_ir_dims *d, bool *first) {
    if (d->n == 0) return; /* the dimension-number attribute parsers treat missing lists as empty */
    sb_printf(b, "%s%s = [", *first ? "" : ", ", name);
    for (int64_t i = 0; i < d->n; i++) sb_printf(b, "%s%lld", i ? ", " : "", (long long)d->v[i]);
    sb_printf(b, "]");
    *first = false;
}

/* padding = dense<[[lo, hi], ...]> : tensor<Nx2xi64> */
static void put_padding(sbuf *b, int64_t n, const int64_t *lo, const int64_t *hi) {
    sb_printf(b, "padding = dense<");
    if (n == 0) sb_printf(b, ">");
    else {
        sb_printf(b, "[");
        for (int64_t i = 0; i < n; i++) sb_printf(b, "%s[%lld, %lld]", i ? ", " : "", (long long)lo[i], (long long)hi[i]);
        sb_printf(b, "]>");
    }
    sb_printf(b, " : tensor<%lldx2xi64>", (long long)n);
}

static const char *compare_type(tt_dtype dt) {
    if (tt_dtype_is_float(dt)) return "FLOAT";
    return (dt == TT_U8 || dt == TT_BOOL) ? "UNSIGNED" : "SIGNED";
}

static const char *cmp_name(tt_ir_cmp c) {
    static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
    return (unsigned)c <= TT_CMP_GE ? names[c] : "EQ";
}

static const char *precision_name(tt_precision p) {
    switch (p) {
    case TT_PRECISION_HIGH: return "HIGH";
    case TT_PRECISION_HIGHEST:
    case TT_PRECISION_FP32: return "HIGHEST";
    default: return "DEFAULT";
    }
}

/* ---- literals ---- */

/* dense<...> body for raw row-major bytes of a dt tensor with the given dims. Bool prints as nested lists
 * (hex is ambiguous for i1); the rest as exact little-endian hex. */
static void put_bool_nested(sbuf *b, const uint8_t *data, const int64_t *dims, int32_t rank, int64_t *pos) {
    if (rank == 0) {
        sb_printf(b, "%s", data[(*pos)++] ? "true" : "false");
        return;
    }
    sb_printf(b, "[");
    for (int64_t i = 0; i < dims[0]; i++) {
        if (i) sb_printf(b, ", ");
        put_bool_nested(b, data, dims + 1, rank - 1, pos);
    }
    sb_printf(b, "]");
}

static void put_dense(sbuf *b, tt_dtype dt, int32_t rank, const int64_t *dims, const uint8_t *data) {
    int64_t numel = tt_numel(rank, dims);
    sb_printf(b, "dense<");
    if (numel == 0) {
        /* empty literal */
    } else if (dt == TT_BOOL) {
        int64_t pos = 0;
        put_bool_nested(b, data, dims, rank, &pos);
    } else {
        size_t bytes = (size_t)numel * tt_dtype_size(dt);
        sb_printf(b, "\"0x");
        for (size_t i = 0; i < bytes && !b->oom; i++) sb_printf(b, "%02X", data[i]);
        sb_printf(b, "\"");
    }
    sb_printf(b, ">");
}

/* Emits "%t<node>_<k> = stablehlo.constant" of a 0-d identity; returns k. */
static int32_t put_identity(printer *pr, tt_ir_reduce_kind kind, tt_dtype dt) {
    uint8_t bytes[8];
    tt_ir_identity_bytes(kind, dt, bytes);
    int32_t k = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.constant\"() {value = ", (int)pr->node, (int)k);
    put_dense(pr->b, dt, 0, NULL, bytes);
    sb_printf(pr->b, " : ");
    put_scalar_type(pr->b, dt);
    sb_printf(pr->b, "} : () -> ");
    put_scalar_type(pr->b, dt);
    sb_printf(pr->b, "\n");
    return k;
}

/* ---- regions ---- */

static const char *combiner(tt_ir_reduce_kind kind, tt_dtype dt) {
    bool is_bool = dt == TT_BOOL;
    switch (kind) {
    case TT_REDUCE_ADD: return is_bool ? "stablehlo.or" : "stablehlo.add";
    case TT_REDUCE_MUL: return is_bool ? "stablehlo.and" : "stablehlo.multiply";
    case TT_REDUCE_MAX: return is_bool ? "stablehlo.or" : "stablehlo.maximum";
    case TT_REDUCE_MIN: return is_bool ? "stablehlo.and" : "stablehlo.minimum";
    case TT_REDUCE_AND: return "stablehlo.and";
    case TT_REDUCE_OR: return "stablehlo.or";
    default: return NULL; /* NONE: replace */
    }
}

/* ({ ^bb0(%a, %b): %c = combine(%a, %b); return %c }) over 0-d dt values. */
static void put_binary_region(printer *pr, tt_ir_reduce_kind kind, tt_dtype dt) {
    sbuf *b = pr->b;
    int nd = (int)pr->node;
    const char *op = combiner(kind, dt);
    sb_printf(b, "({\n    ^bb0(%%r%d_0: ", nd);
    put_scalar_type(b, dt);
    sb_printf(b, ", %%r%d_1: ", nd);
    put_scalar_type(b, dt);
    sb_printf(b, "):\n");
    if (op) {
        sb_printf(b, "      %%r%d_2 = \"%s\"(%%r%d_0, %%r%d_1) : (", nd, op, nd, nd);
        put_scalar_type(b, dt);
        sb_printf(b, ", ");
        put_scalar_type(b, dt);
        sb_printf(b, ") -> ");
        put_scalar_type(b, dt);
        sb_printf(b, "\n      \"stablehlo.return\"(%%r%d_2) : (", nd);
    } else {
        sb_printf(b, "      \"stablehlo.return\"(%%r%d_1) : (", nd);
    }
    put_scalar_type(b, dt);
    sb_printf(b, ") -> ()\n    })");
}

/* One region op "%r<node>_<k> = "name"(%x, %y) {attrs} : (T, T) -> R" over 0-d values; returns k. */
static int32_t region_op(printer *pr, int32_t *counter, const char *name, const char *x, const char *y,
                         const char *attrs, tt_dtype in_dt, tt_dtype out_dt) {
    int32_t k = (*counter)++;
    sb_printf(pr->b, "      %%r%d_%d = \"%s\"(%s, %s)", (int)pr->node, (int)k, name, x, y);
    if (attrs) sb_printf(pr->b, " {%s}", attrs);
    sb_printf(pr->b, " : (");
    put_scalar_type(pr->b, in_dt);
    sb_printf(pr->b, ", ");
    put_scalar_type(pr->b, in_dt);
    sb_printf(pr->b, ") -> ");
    put_scalar_type(pr->b, out_dt);
    sb_printf(pr->b, "\n");
    return k;
}

static void cmp_attrs(char *buf, size_t cap, const char *dir, tt_dtype dt) {
    snprintf(buf, cap, "comparison_direction = #stablehlo<comparison_direction %s>, "
             "compare_type = #stablehlo<comparison_type %s>", dir, compare_type(dt));
}

/* name of region value k: "%r<node>_<k>" */
static const char *rname(const printer *pr, int32_t k, char *buf) {
    snprintf(buf, 32, "%%r%d_%d", (int)pr->node, (int)k);
    return buf;
}

/* A select over 0-d values: "%r = select(pred, a, b)"; returns k. */
static int32_t region_select(printer *pr, int32_t *counter, const char *pred, const char *a, const char *bb,
                             tt_dtype dt) {
    int32_t k = (*counter)++;
    sb_printf(pr->b, "      %%r%d_%d = \"stablehlo.select\"(%s, %s, %s) : (tensor<i1>, ", (int)pr->node, (int)k, pred,
              a, bb);
    put_scalar_type(pr->b, dt);
    sb_printf(pr->b, ", ");
    put_scalar_type(pr->b, dt);
    sb_printf(pr->b, ") -> ");
    put_scalar_type(pr->b, dt);
    sb_printf(pr->b, "\n");
    return k;
}

/* "a wins over b": a > b (or <) or, for floats, a is NaN and b is not. Region args are a=%r_<ia>, b=%r_<ib>. */
static int32_t region_wins(printer *pr, int32_t *c, int32_t ia, int32_t ib, bool less, tt_dtype dt) {
    char a[32], bb[32], x[32], y[32], at[160];
    rname(pr, ia, a);
    rname(pr, ib, bb);
    cmp_attrs(at, sizeof at, less ? "LT" : "GT", dt);
    int32_t k = region_op(pr, c, "stablehlo.compare", a, bb, at, dt, TT_BOOL);
    if (!tt_dtype_is_float(dt)) return k;
    cmp_attrs(at, sizeof at, "NE", dt);
    int32_t an = region_op(pr, c, "stablehlo.compare", a, a, at, dt, TT_BOOL);
    cmp_attrs(at, sizeof at, "EQ", dt);
    int32_t bok = region_op(pr, c, "stablehlo.compare", bb, bb, at, dt, TT_BOOL);
    int32_t nanwin = region_op(pr, c, "stablehlo.and", rname(pr, an, x), rname(pr, bok, y), NULL, TT_BOOL, TT_BOOL);
    return region_op(pr, c, "stablehlo.or", rname(pr, k, x), rname(pr, nanwin, y), NULL, TT_BOOL, TT_BOOL);
}

/* ---- op printers ---- */

static void put_simple(printer *pr, const tt_ir_node *n, const char *attrs) {
    put_result(pr, n);
    sb_printf(pr->b, "\"%s\"", tt_ir_op_hlo_name(n->op));
    put_operands(pr, n);
    if (attrs) sb_printf(pr->b, " {%s}", attrs);
    put_signature(pr, n, 0, NULL);
}

static void put_constant(printer *pr, const tt_ir_node *n) {
    const tt_ir_type *t = vtype(pr, n->outputs[0]);
    put_result(pr, n);
    sb_printf(pr->b, "\"stablehlo.constant\"() {value = ");
    put_dense(pr->b, t->dtype, t->rank, t->dims, pr->p->constants ? pr->p->constants + n->attrs.constant.offset : NULL);
    sb_printf(pr->b, " : ");
    put_type(pr->b, t);
    sb_printf(pr->b, "}");
    put_signature(pr, n, 0, NULL);
}

static void put_reduce(printer *pr, const tt_ir_node *n) {
    tt_dtype dt = vtype(pr, node_inputs(pr, n)[0])->dtype;
    int32_t init = put_identity(pr, n->attrs.reduce.kind, dt);
    put_result(pr, n);
    sb_printf(pr->b, "\"stablehlo.reduce\"(");
    put_value(pr, node_inputs(pr, n)[0]);
    sb_printf(pr->b, ", %%t%d_%d) ", (int)pr->node, (int)init);
    put_binary_region(pr, n->attrs.reduce.kind, dt);
    sb_printf(pr->b, " {");
    put_i64_array(pr->b, "dimensions", &n->attrs.reduce.dims);
    sb_printf(pr->b, "}");
    tt_ir_type s;
    memset(&s, 0, sizeof s);
    s.dtype = dt;
    put_signature(pr, n, 1, &s);
}

static void put_arg_reduce(printer *pr, const tt_ir_node *n) {
    sbuf *b = pr->b;
    int nd = (int)pr->node;
    tt_ir_value xv = node_inputs(pr, n)[0];
    const tt_ir_type *xt = vtype(pr, xv);
    tt_dtype dt = xt->dtype;
    bool is_min = n->attrs.arg_reduce.is_min;
    /* iota of indices along dim, then inits (extreme value, index 0) */
    int32_t iota = pr->tmp++;
    sb_printf(b, "    %%t%d_%d = \"stablehlo.iota\"() {iota_dimension = %lld : i64} : () -> ", nd, (int)iota,
              (long long)n->attrs.arg_reduce.dim);
    put_tensor(b, xt->dims, xt->rank, "i64");
    sb_printf(b, "\n");
    int32_t vinit = put_identity(pr, is_min ? TT_REDUCE_MIN : TT_REDUCE_MAX, dt);
    int32_t iinit = put_identity(pr, TT_REDUCE_ADD, TT_I64);
    const tt_ir_type *rt = vtype(pr, n->outputs[0]);
    /* the value result is unused; the index is this node's value */
    sb_printf(b, "    %%t%d_%d:2 = \"stablehlo.reduce\"(", nd, (int)pr->tmp);
    int32_t red = pr->tmp++;
    put_value(pr, xv);
    sb_printf(b, ", %%t%d_%d, %%t%d_%d, %%t%d_%d) ({\n    ^bb0(", nd, (int)iota, nd, (int)vinit, nd, (int)iinit);
    /* region args: 0 = a value, 1 = a index, 2 = b value, 3 = b index */
    for (int i = 0; i < 4; i++) {
        sb_printf(b, "%s%%r%d_%d: ", i ? ", " : "", nd, i);
        put_scalar_type(b, (i & 1) ? TT_I64 : dt);
    }
    sb_printf(b, "):\n");
    int32_t c = 4;
    char x[32], y[32], z[32], at[160];
    int32_t wins = region_wins(pr, &c, 0, 2, is_min, dt);
    cmp_attrs(at, sizeof at, "EQ", dt);
    int32_t eq = region_op(pr, &c, "stablehlo.compare", rname(pr, 0, x), rname(pr, 2, y), at, dt, TT_BOOL);
    if (tt_dtype_is_float(dt)) { /* both NaN also ties */
        cmp_attrs(at, sizeof at, "NE", dt);
        int32_t an = region_op(pr, &c, "stablehlo.compare", rname(pr, 0, x), rname(pr, 0, y), at, dt, TT_BOOL);
        int32_t bn = region_op(pr, &c, "stablehlo.compare", rname(pr, 2, x), rname(pr, 2, y), at, dt, TT_BOOL);
        int32_t both = region_op(pr, &c, "stablehlo.and", rname(pr, an, x), rname(pr, bn, y), NULL, TT_BOOL, TT_BOOL);
        eq = region_op(pr, &c, "stablehlo.or", rname(pr, eq, x), rname(pr, both, y), NULL, TT_BOOL, TT_BOOL);
    }
    int32_t mi = region_op(pr, &c, "stablehlo.minimum", rname(pr, 1, x), rname(pr, 3, y), NULL, TT_I64, TT_I64);
    int32_t pick = region_select(pr, &c, rname(pr, wins, x), rname(pr, 1, y), rname(pr, 3, z), TT_I64);
    int32_t idx = region_select(pr, &c, rname(pr, eq, x), rname(pr, mi, y), rname(pr, pick, z), TT_I64);
    int32_t val = region_select(pr, &c, rname(pr, wins, x), rname(pr, 0, y), rname(pr, 2, z), dt);
    sb_printf(b, "      \"stablehlo.return\"(%s, %s) : (", rname(pr, val, x), rname(pr, idx, y));
    put_scalar_type(b, dt);
    sb_printf(b, ", tensor<i64>) -> ()\n    }) {dimensions = array<i64: %lld>} : (", (long long)n->attrs.arg_reduce.dim);
    put_type(b, xt);
    sb_printf(b, ", ");
    put_tensor(b, xt->dims, xt->rank, "i64");
    sb_printf(b, ", ");
    put_scalar_type(b, dt);
    sb_printf(b, ", tensor<i64>) -> (");
    put_tensor(b, rt->dims, rt->rank, elem_name(dt));
    sb_printf(b, ", ");
    put_type(b, rt);
    sb_printf(b, ")\n");
    put_result(pr, n);
    sb_printf(b, "\"stablehlo.convert\"(%%t%d_%d#1) : (", nd, (int)red); /* identity convert: names the result */
    put_type(b, rt);
    sb_printf(b, ") -> ");
    put_type(b, rt);
    sb_printf(b, "\n");
}

static void put_window_attrs(sbuf *b, int32_t rank, const int64_t *window, const int64_t *strides, const int64_t *lo,
                             const int64_t *hi, const int64_t *dil) {
    tt_ir_dims d;
    memset(&d, 0, sizeof d);
    d.n = rank;
    memcpy(d.v, window, (size_t)rank * sizeof *window);
    put_i64_array(b, "window_dimensions", &d);
    memcpy(d.v, strides, (size_t)rank * sizeof *strides);
    sb_printf(b, ", ");
    put_i64_array(b, "window_strides", &d);
    sb_printf(b, ", ");
    put_padding(b, rank, lo, hi);
    if (dil) {
        memcpy(d.v, dil, (size_t)rank * sizeof *dil);
        sb_printf(b, ", ");
        put_i64_array(b, "window_dilations", &d);
    }
}

static void put_reduce_window(printer *pr, const tt_ir_node *n) {
    const tt_ir_type *xt = vtype(pr, node_inputs(pr, n)[0]);
    tt_dtype dt = xt->dtype;
    bool cum = n->op == TT_OP_CUMULATIVE;
    tt_ir_reduce_kind kind = cum ? n->attrs.cumulative.kind : n->attrs.reduce_window.kind;
    int32_t init = put_identity(pr, kind, dt);
    put_result(pr, n);
    sb_printf(pr->b, "\"stablehlo.reduce_window\"(");
    put_value(pr, node_inputs(pr, n)[0]);
    sb_printf(pr->b, ", %%t%d_%d) ", (int)pr->node, (int)init);
    put_binary_region(pr, kind, dt);
    sb_printf(pr->b, " {");
    if (cum) {
        int64_t w[TT_MAX_RANK], s[TT_MAX_RANK], lo[TT_MAX_RANK], hi[TT_MAX_RANK];
        for (int32_t i = 0; i < xt->rank; i++) {
            w[i] = s[i] = 1;
            lo[i] = hi[i] = 0;
        }
        int64_t d = n->attrs.cumulative.dim, len = xt->dims[d];
        if (len > 0) {
            w[d] = len;
            if (n->attrs.cumulative.reverse) hi[d] = len - 1;
            else lo[d] = len - 1;
        }
        put_window_attrs(pr->b, xt->rank, w, s, lo, hi, NULL);
    } else {
        const tt_ir_attrs *a = &n->attrs;
        put_window_attrs(pr->b, xt->rank, a->reduce_window.window.v, a->reduce_window.strides.v,
                         a->reduce_window.pad_low.v, a->reduce_window.pad_high.v, a->reduce_window.window_dilation.v);
    }
    sb_printf(pr->b, "}");
    tt_ir_type s;
    memset(&s, 0, sizeof s);
    s.dtype = dt;
    put_signature(pr, n, 1, &s);
}

static void put_sort(printer *pr, const tt_ir_node *n) {
    sbuf *b = pr->b;
    int nd = (int)pr->node;
    const tt_ir_value *ins = node_inputs(pr, n);
    tt_dtype dt = vtype(pr, ins[0])->dtype;
    put_result(pr, n);
    sb_printf(b, "\"stablehlo.sort\"");
    put_operands(pr, n);
    sb_printf(b, " ({\n    ^bb0(");
    for (int32_t i = 0; i < 2 * n->n_inputs; i++) {
        sb_printf(b, "%s%%r%d_%d: ", i ? ", " : "", nd, (int)i);
        put_scalar_type(b, vtype(pr, ins[i / 2])->dtype);
    }
    sb_printf(b, "):\n");
    /* NaN sorts as the largest value, like PyTorch */
    int32_t c = 2 * n->n_inputs;
    int32_t wins = region_wins(pr, &c, n->attrs.sort.descending ? 0 : 1, n->attrs.sort.descending ? 1 : 0, false, dt);
    char x[32];
    sb_printf(b, "      \"stablehlo.return\"(%s) : (tensor<i1>) -> ()\n    }) {dimension = %lld : i64, is_stable = %s}",
              rname(pr, wins, x), (long long)n->attrs.sort.dim, n->attrs.sort.stable ? "true" : "false");
    put_signature(pr, n, 0, NULL);
}

/* ui64 helper ops for the rng expansion, over tensor<Nxui64>. */
static int32_t rng_binop(printer *pr, const char *op, int32_t a, int32_t bb, int64_t N, const char *elem) {
    int32_t k = pr->tmp++;
    int nd = (int)pr->node;
    sb_printf(pr->b, "    %%t%d_%d = \"%s\"(%%t%d_%d, %%t%d_%d) : (", nd, (int)k, op, nd, (int)a, nd, (int)bb);
    put_tensor(pr->b, &N, 1, elem);
    sb_printf(pr->b, ", ");
    put_tensor(pr->b, &N, 1, elem);
    sb_printf(pr->b, ") -> ");
    put_tensor(pr->b, &N, 1, elem);
    sb_printf(pr->b, "\n");
    return k;
}

static int32_t rng_const(printer *pr, const char *literal, int64_t N, const char *elem) {
    int32_t k = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.constant\"() {value = dense<%s> : ", (int)pr->node, (int)k, literal);
    put_tensor(pr->b, &N, 1, elem);
    sb_printf(pr->b, "} : () -> ");
    put_tensor(pr->b, &N, 1, elem);
    sb_printf(pr->b, "\n");
    return k;
}

/* A 0-d i64 operand bitcast to ui64 and broadcast to [N]. */
static int32_t rng_scalar(printer *pr, tt_ir_value v, int64_t N) {
    int nd = (int)pr->node;
    int32_t k = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.bitcast_convert\"(", nd, (int)k);
    put_value(pr, v);
    sb_printf(pr->b, ") : (tensor<i64>) -> tensor<ui64>\n");
    int32_t k2 = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.broadcast_in_dim\"(%%t%d_%d) {broadcast_dimensions = array<i64>} : "
              "(tensor<ui64>) -> ", nd, (int)k2, nd, (int)k);
    put_tensor(pr->b, &N, 1, "ui64");
    sb_printf(pr->b, "\n");
    return k2;
}

static int32_t rng_convert(printer *pr, int32_t a, int64_t N, const char *from, const char *to) {
    int32_t k = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.convert\"(%%t%d_%d) : (", (int)pr->node, (int)k, (int)pr->node, (int)a);
    put_tensor(pr->b, &N, 1, from);
    sb_printf(pr->b, ") -> ");
    put_tensor(pr->b, &N, 1, to);
    sb_printf(pr->b, "\n");
    return k;
}

static void put_rng(printer *pr, const tt_ir_node *n) {
    const tt_ir_type *rt = vtype(pr, n->outputs[0]);
    const tt_ir_value *ins = node_inputs(pr, n);
    int64_t N = tt_numel(rt->rank, rt->dims);
    int nd = (int)pr->node;
    int32_t iota = pr->tmp++;
    sb_printf(pr->b, "    %%t%d_%d = \"stablehlo.iota\"() {iota_dimension = 0 : i64} : () -> ", nd, (int)iota);
    put_tensor(pr->b, &N, 1, "ui64");
    sb_printf(pr->b, "\n");
    int32_t seed = rng_scalar(pr, ins[0], N);
    int32_t off = rng_scalar(pr, ins[1], N);
    int32_t ctr = rng_binop(pr, "stablehlo.add", off, iota, N, "ui64");
    int32_t golden = rng_const(pr, "11400714819323198485", N, "ui64"); /* 0x9E3779B97F4A7C15 */
    int32_t x = rng_binop(pr, "stablehlo.multiply", ctr, golden, N, "ui64");
    x = rng_binop(pr, "stablehlo.xor", seed, x, N, "ui64");
    static const char *const shifts[3] = {"30", "27", "31"};
    static const char *const mults[2] = {"13787848793156543929", "10723151780598845931"}; /* 0xBF58..., 0x94D0... */
    for (int r = 0; r < 3; r++) {
        int32_t sh = rng_const(pr, shifts[r], N, "ui64");
        int32_t y = rng_binop(pr, "stablehlo.shift_right_logical", x, sh, N, "ui64");
        x = rng_binop(pr, "stablehlo.xor", x, y, N, "ui64");
        if (r < 2) {
            int32_t m = rng_const(pr, mults[r], N, "ui64");
            x = rng_binop(pr, "stablehlo.multiply", x, m, N, "ui64");
        }
    }
    bool f64 = rt->dtype == TT_F64;
    const char *fe = f64 ? "f64" : "f32";
    int32_t sh = rng_const(pr, f64 ? "11" : "40", N, "ui64");
    x = rng_binop(pr, "stablehlo.shift_right_logical", x, sh, N, "ui64");
    x = rng_convert(pr, x, N, "ui64", fe);
    /* 2^-53 and 2^-24 as exact bit patterns */
    int32_t scale = rng_const(pr, f64 ? "0x3CA0000000000000" : "0x33800000", N, fe);
    x = rng_binop(pr, "stablehlo.multiply", x, scale, N, fe);
    if (!f64 && rt->dtype != TT_F32) x = rng_convert(pr, x, N, "f32", elem_name(rt->dtype));
    put_result(pr, n);
    sb_printf(pr->b, "\"stablehlo.reshape\"(%%t%d_%d) : (", nd, (int)x);
    put_tensor(pr->b, &N, 1, elem_name(rt->dtype));
    sb_printf(pr->b, ") -> ");
    put_type(pr->b, rt);
    sb_printf(pr->b, "\n");
}

/* digamma with the IR's (PyTorch's) pole convention, psi(+-0) = -+inf, which chlo.digamma lacks (it gives NaN):
 * select(x == 0, -1 / x, chlo.digamma(x)). */
static void put_digamma(printer *pr, const tt_ir_node *n) {
    sbuf *b = pr->b;
    const tt_ir_type *t = vtype(pr, n->outputs[0]);
    tt_ir_type pt = *t;
    pt.dtype = TT_BOOL;
    int nd = (int)pr->node, k = (int)pr->tmp; /* helpers k: 0, k+1: -1, k+2: x == 0, k+3: -1 / x, k+4: digamma */
    pr->tmp += 5;
    for (int i = 0; i < 2; i++) {
        sb_printf(b, "    %%t%d_%d = \"stablehlo.constant\"() {value = dense<%s> : ", nd, k + i, i ? "-1.0" : "0.0");
        put_type(b, t);
        sb_printf(b, "} : () -> ");
        put_type(b, t);
        sb_printf(b, "\n");
    }
    char at[160];
    cmp_attrs(at, sizeof at, "EQ", t->dtype);
    sb_printf(b, "    %%t%d_%d = \"stablehlo.compare\"(", nd, k + 2);
    put_value(pr, node_inputs(pr, n)[0]);
    sb_printf(b, ", %%t%d_%d) {%s} : (", nd, k, at);
    put_type(b, t);
    sb_printf(b, ", ");
    put_type(b, t);
    sb_printf(b, ") -> ");
    put_type(b, &pt);
    sb_printf(b, "\n    %%t%d_%d = \"stablehlo.divide\"(%%t%d_%d, ", nd, k + 3, nd, k + 1);
    put_value(pr, node_inputs(pr, n)[0]);
    sb_printf(b, ") : (");
    put_type(b, t);
    sb_printf(b, ", ");
    put_type(b, t);
    sb_printf(b, ") -> ");
    put_type(b, t);
    sb_printf(b, "\n    %%t%d_%d = \"chlo.digamma\"(", nd, k + 4);
    put_value(pr, node_inputs(pr, n)[0]);
    sb_printf(b, ") : (");
    put_type(b, t);
    sb_printf(b, ") -> ");
    put_type(b, t);
    sb_printf(b, "\n");
    put_result(pr, n);
    sb_printf(b, "\"stablehlo.select\"(%%t%d_%d, %%t%d_%d, %%t%d_%d) : (", nd, k + 2, nd, k + 3, nd, k + 4);
    put_type(b, &pt);
    sb_printf(b, ", ");
    put_type(b, t);
    sb_printf(b, ", ");
    put_type(b, t);
    sb_printf(b, ") -> ");
    put_type(b, t);
    sb_printf(b, "\n");
}

static void put_node(printer *pr, const tt_ir_node *n) {
    sbuf *b = pr->b;
    const tt_ir_attrs *a = &n->attrs;
    char at[512];
    switch (n->op) {
    case TT_OP_PARAMETER:
    case TT_OP_SCALAR_PARAMETER: return; /* function arguments */
    case TT_OP_CONSTANT: put_constant(pr, n); return;
    case TT_OP_IOTA:
        snprintf(at, sizeof at, "iota_dimension = %lld : i64", (long long)a->iota.dim);
        put_simple(pr, n, at);
        return;
    case TT_OP_RNG_UNIFORM: put_rng(pr, n); return;
    case TT_OP_COMPARE:
        cmp_attrs(at, sizeof at, cmp_name(a->compare.dir), vtype(pr, node_inputs(pr, n)[0])->dtype);
        put_simple(pr, n, at);
        return;
    case TT_OP_REDUCE: put_reduce(pr, n); return;
    case TT_OP_ARG_REDUCE: put_arg_reduce(pr, n); return;
    case TT_OP_CUMULATIVE:
    case TT_OP_REDUCE_WINDOW: put_reduce_window(pr, n); return;
    case TT_OP_SORT: put_sort(pr, n); return;
    case TT_OP_DIGAMMA: put_digamma(pr, n); return;
    default: break;
    }
    /* ops whose attributes print inline */
    put_result(pr, n);
    sb_printf(b, "\"%s\"", tt_ir_op_hlo_name(n->op));
    put_operands(pr, n);
    bool first = true;
    switch (n->op) {
    case TT_OP_BROADCAST_IN_DIM:
        sb_printf(b, " {");
        put_i64_array(b, "broadcast_dimensions", &a->broadcast.dims);
        sb_printf(b, "}");
        break;
    case TT_OP_TRANSPOSE:
        sb_printf(b, " {");
        put_i64_array(b, "permutation", &a->transpose.perm);
        sb_printf(b, "}");
        break;
    case TT_OP_SLICE:
        sb_printf(b, " {");
        put_i64_array(b, "start_indices", &a->slice.start);
        sb_printf(b, ", ");
        put_i64_array(b, "limit_indices", &a->slice.limit);
        sb_printf(b, ", ");
        put_i64_array(b, "strides", &a->slice.stride);
        sb_printf(b, "}");
        break;
    case TT_OP_DYNAMIC_SLICE:
        sb_printf(b, " {");
        put_i64_array(b, "slice_sizes", &a->dynamic_slice.sizes);
        sb_printf(b, "}");
        break;
    case TT_OP_CONCATENATE: sb_printf(b, " {dimension = %lld : i64}", (long long)a->concatenate.dim); break;
    case TT_OP_PAD:
        sb_printf(b, " {");
        put_i64_array(b, "edge_padding_low", &a->pad.low);
        sb_printf(b, ", ");
        put_i64_array(b, "edge_padding_high", &a->pad.high);
        sb_printf(b, ", ");
        put_i64_array(b, "interior_padding", &a->pad.interior);
        sb_printf(b, "}");
        break;
    case TT_OP_REVERSE:
        sb_printf(b, " {");
        put_i64_array(b, "dimensions", &a->reverse.dims);
        sb_printf(b, "}");
        break;
    case TT_OP_GATHER:
        sb_printf(b, " {dimension_numbers = #stablehlo.gather<");
        put_int_list(b, "offset_dims", &a->gather.offset_dims, &first);
        put_int_list(b, "collapsed_slice_dims", &a->gather.collapsed_slice_dims, &first);
        put_int_list(b, "start_index_map", &a->gather.start_index_map, &first);
        sb_printf(b, "%sindex_vector_dim = %lld>, indices_are_sorted = false, ", first ? "" : ", ",
                  (long long)a->gather.index_vector_dim);
        put_i64_array(b, "slice_sizes", &a->gather.slice_sizes);
        sb_printf(b, "}");
        break;
    case TT_OP_SCATTER: {
        tt_dtype dt = vtype(pr, node_inputs(pr, n)[0])->dtype;
        sb_printf(b, " ");
        put_binary_region(pr, a->scatter.kind, dt);
        sb_printf(b, " {indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<");
        put_int_list(b, "update_window_dims", &a->scatter.update_window_dims, &first);
        put_int_list(b, "inserted_window_dims", &a->scatter.inserted_window_dims, &first);
        put_int_list(b, "scatter_dims_to_operand_dims", &a->scatter.scatter_dims_to_operand_dims, &first);
        sb_printf(b, "%sindex_vector_dim = %lld>, unique_indices = false}", first ? "" : ", ",
                  (long long)a->scatter.index_vector_dim);
        break;
    }
    case TT_OP_DOT_GENERAL: {
        sb_printf(b, " {dot_dimension_numbers = #stablehlo.dot<");
        put_int_list(b, "lhs_batching_dimensions", &a->dot.lhs_batch, &first);
        put_int_list(b, "rhs_batching_dimensions", &a->dot.rhs_batch, &first);
        put_int_list(b, "lhs_contracting_dimensions", &a->dot.lhs_contract, &first);
        put_int_list(b, "rhs_contracting_dimensions", &a->dot.rhs_contract, &first);
        const char *pn = precision_name(a->dot.precision);
        sb_printf(b, ">, precision_config = [#stablehlo<precision %s>, #stablehlo<precision %s>]}", pn, pn);
        break;
    }
    case TT_OP_CONVOLUTION: {
        int64_t S = a->conv.strides.n;
        static const char sp[] = "012345678";
        sb_printf(b, " {batch_group_count = %lld : i64, dimension_numbers = #stablehlo.conv<[b, f",
                  (long long)a->conv.batch_group_count);
        for (int64_t i = 0; i < S; i++) sb_printf(b, ", %c", sp[i]);
        sb_printf(b, "]x[o, i");
        for (int64_t i = 0; i < S; i++) sb_printf(b, ", %c", sp[i]);
        sb_printf(b, "]->[b, f");
        for (int64_t i = 0; i < S; i++) sb_printf(b, ", %c", sp[i]);
        sb_printf(b, "]>, feature_group_count = %lld : i64, ", (long long)a->conv.feature_group_count);
        put_i64_array(b, "lhs_dilation", &a->conv.lhs_dilation);
        sb_printf(b, ", ");
        put_padding(b, S, a->conv.pad_low.v, a->conv.pad_high.v);
        const char *pn = precision_name(a->conv.precision);
        sb_printf(b, ", precision_config = [#stablehlo<precision %s>, #stablehlo<precision %s>], ", pn, pn);
        put_i64_array(b, "rhs_dilation", &a->conv.rhs_dilation);
        sb_printf(b, ", ");
        put_i64_array(b, "window_strides", &a->conv.strides);
        sb_printf(b, "}");
        break;
    }
    case TT_OP_CUSTOM_CALL: {
        /* A registered kernel (tt_kernel.h): a typed XLA FFI call (api_version 4) to the one handler a driver
         * registers, the kernel named by attribute; every operand and the result in row-major layout. */
        sb_printf(b, " {api_version = 4 : i32, backend_config = {kernel = \"%s\"}, call_target_name = "
                     "\"torchtpu_kernel\", operand_layouts = [", a->custom_call.target);
        for (int32_t i = 0; i <= n->n_inputs; i++) {
            const tt_ir_type *t = &pr->p->types[i < n->n_inputs ? pr->p->operands[n->inputs_offset + i] : n->outputs[0]];
            if (i == n->n_inputs) sb_printf(b, "], result_layouts = [");
            else if (i) sb_printf(b, ", ");
            sb_printf(b, "dense<[");
            for (int32_t d = t->rank - 1; d >= 0; d--) sb_printf(b, d == t->rank - 1 ? "%d" : ", %d", (int)d);
            sb_printf(b, "]> : tensor<%dxindex>", (int)t->rank);
        }
        sb_printf(b, "]}");
        break;
    }
    default: break; /* elementwise, convert, reshape, select, clamp, dynamic_update_slice: no attributes */
    }
    put_signature(pr, n, 0, NULL);
}

tt_status tt_ir_print_stablehlo(const tt_ir_program *p, char **text) { return tt_ir_print_stablehlo_ex(p, 0, text); }

tt_status tt_ir_print_stablehlo_ex(const tt_ir_program *p, uint32_t flags, char **text) {
    if (!text) return tt_error(TT_STATUS_INVALID_ARGUMENT, "print_stablehlo: text is NULL");
    *text = NULL;
    if (!p) return tt_error(TT_STATUS_INVALID_ARGUMENT, "print_stablehlo: program is NULL");
    sbuf b = {malloc(4096), 0, 4096, false};
    if (!b.s) return tt_error(TT_STATUS_OUT_OF_MEMORY, "print_stablehlo: out of memory");
    b.s[0] = '\0';
    printer pr = {&b, p, 0, 0};
    sb_printf(&b, "module @main attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {\n");
    sb_printf(&b, "  func.func public @main(");
    for (int32_t i = 0; i < p->n_params; i++) {
        sb_printf(&b, "%s%%arg%d: ", i ? ", " : "", (int)i);
        put_type(&b, &p->types[p->params[i]]);
        if (flags & TT_IR_PRINT_DONORS) sb_printf(&b, " {jax.buffer_donor = true}");
    }
    sb_printf(&b, ") -> (");
    for (int32_t i = 0; i < p->n_outputs; i++) {
        if (i) sb_printf(&b, ", ");
        put_type(&b, &p->types[p->outputs[i]]);
    }
    sb_printf(&b, ") {\n");
    for (int32_t i = 0; i < p->n_nodes; i++) {
        pr.node = i;
        pr.tmp = 0;
        put_node(&pr, &p->nodes[i]);
    }
    sb_printf(&b, "    \"func.return\"(");
    for (int32_t i = 0; i < p->n_outputs; i++) {
        if (i) sb_printf(&b, ", ");
        put_value(&pr, p->outputs[i]);
    }
    sb_printf(&b, ") : (");
    for (int32_t i = 0; i < p->n_outputs; i++) {
        if (i) sb_printf(&b, ", ");
        put_type(&b, &p->types[p->outputs[i]]);
    }
    sb_printf(&b, ") -> ()\n  }\n}\n");
    if (b.oom) {
        free(b.s);
        return tt_error(TT_STATUS_OUT_OF_MEMORY, "print_stablehlo: out of memory");
    }
    *text = b.s;
    return TT_OK;
}
