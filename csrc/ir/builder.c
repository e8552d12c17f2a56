/* builder.c — tt_ir_builder: growable arrays, sticky errors, and one builder function per op. Type rules live in
 * infer.c (shared with the verifier); freezing into a program lives in program.c. */
#include "builder_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Grows *p (elements of elem bytes, capacity *cap) to hold need elements; false on out of memory. */
bool tt_ir_grow(void **p, int64_t *cap, int64_t need, size_t elem) {
    if (need <= *cap && *p) return true; /* always allocate once, so arrays are never NULL */
    int64_t nc = *cap ? *cap : 16;
    while (nc < need) nc *= 2;
    if ((uint64_t)nc > SIZE_MAX / elem) return false;
    void *q = realloc(*p, (size_t)nc * elem);
    if (!q) return false;
    *p = q;
    *cap = nc;
    return true;
}

tt_ir_builder *tt_ir_builder_create(void) {
    tt_ir_builder *b = calloc(1, sizeof(tt_ir_builder));
    if (b) b->cur_origin = -1;
    return b;
}

void tt_ir_builder_destroy(tt_ir_builder *b) {
    if (!b) return;
    free(b->nodes);
    free(b->types);
    free(b->value_node);
    free(b->operands);
    free(b->params);
    free(b->outputs);
    free(b->constants);
    free(b->scratch);
    free(b->origin);
    free(b);
}

void tt_ir_builder_reset(tt_ir_builder *b) {
    if (!b) return;
    b->n_nodes = b->n_values = b->n_operands = b->n_params = b->n_outputs = 0;
    b->constants_size = 0;
    b->cur_origin = -1;
    b->status = TT_OK;
    b->message[0] = '\0';
}

tt_status tt_ir_builder_status(const tt_ir_builder *b) {
    if (!b) return tt_error(TT_STATUS_INVALID_ARGUMENT, "IR builder is NULL");
    /* restore the first error's message: later unrelated errors may have replaced it */
    if (b->status != TT_OK) tt_error(b->status, "%s", b->message);
    return b->status;
}

/* Records the thread's current error message as the builder's first error (if it has none yet). */
static tt_ir_value record(tt_ir_builder *b, tt_status st) {
    if (b->status == TT_OK && st != TT_OK) {
        b->status = st;
        snprintf(b->message, sizeof b->message, "%s", tt_last_error());
    }
    return TT_IR_NONE;
}

tt_status tt_ir_builder_fail(tt_ir_builder *b, tt_status st, const char *fmt, ...) {
    if (!b || st == TT_OK) return st;
    if (b->status == TT_OK) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(b->message, sizeof b->message, fmt, ap);
        va_end(ap);
        b->status = st;
    }
    return tt_error(b->status, "%s", b->message); /* status and message of the first error */
}

const tt_ir_type *tt_ir_type_of(const tt_ir_builder *b, tt_ir_value v) {
    if (!b || v < 0 || v >= b->n_values) return NULL;
    return &b->types[v];
}

int32_t tt_ir_builder_num_params(const tt_ir_builder *b) { return b ? b->n_params : 0; }

static tt_ir_value oom(tt_ir_builder *b, const char *what) {
    return record(b, tt_error(TT_STATUS_OUT_OF_MEMORY, "%s: out of memory building the IR program", what));
}

/* Checks an operand id: TT_IR_NONE propagates silently when an error is already recorded. */
static bool operand_ok(tt_ir_builder *b, tt_ir_op op, tt_ir_value v) {
    if (v >= 0 && v < b->n_values) return true;
    if (b->status == TT_OK)
        record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: operand %s", tt_ir_op_name(op),
                           v == TT_IR_NONE ? "is TT_IR_NONE" : "is not a value of this builder"));
    return false;
}

static tt_ir_value emit(tt_ir_builder *b, tt_ir_op op, const tt_ir_attrs *a, int32_t n_in, const tt_ir_value *ins,
                        const tt_ir_type *hint, tt_ir_value *outs2);

/* The rank-0 value v broadcasts, if v is a splat (a broadcast_in_dim of a 0-d value), else TT_IR_NONE. */
static tt_ir_value splat_source(const tt_ir_builder *b, tt_ir_value v) {
    if (v < 0 || v >= b->n_values || b->types[v].rank == 0) return TT_IR_NONE;
    const tt_ir_node *n = &b->nodes[b->value_node[v]];
    if (n->op != TT_OP_BROADCAST_IN_DIM) return TT_IR_NONE;
    tt_ir_value x = b->operands[n->inputs_offset];
    return b->types[x].rank == 0 ? x : TT_IR_NONE;
}

/* An elementwise op whose operands are all splats computes one element and broadcasts it: the same float
 * operation on the same values, once (an optimizer's 1 - beta, a lerp's weight test). TT_IR_NONE: not that case. */
static tt_ir_value hoist_splats(tt_ir_builder *b, tt_ir_op op, const tt_ir_attrs *a, int32_t n_in,
                                const tt_ir_value *ins, const tt_ir_type *hint) {
    if (op < TT_OP_ABS || op > TT_OP_CONVERT || n_in < 1 || n_in > 3) return TT_IR_NONE;
    tt_ir_value src[3];
    for (int32_t i = 0; i < n_in; i++)
        if ((src[i] = splat_source(b, ins[i])) == TT_IR_NONE) return TT_IR_NONE;
    tt_ir_type shape = b->types[ins[0]], h0;
    if (hint) {
        memset(&h0, 0, sizeof h0); /* types compare and hash by bytes */
        h0.dtype = hint->dtype;
    }
    tt_ir_value one = emit(b, op, a, n_in, src, hint ? &h0 : NULL, NULL);
    if (one == TT_IR_NONE) return TT_IR_NONE;
    tt_ir_attrs ba;
    memset(&ba, 0, sizeof ba);
    shape.dtype = b->types[one].dtype;
    return emit(b, TT_OP_BROADCAST_IN_DIM, &ba, 1, &one, &shape, NULL);
}

/* Appends one node after inferring and validating its result types. outs2 (may be NULL) receives the
 * result values (two for a two-operand sort). Returns the first result or TT_IR_NONE. */
static tt_ir_value emit(tt_ir_builder *b, tt_ir_op op, const tt_ir_attrs *a, int32_t n_in, const tt_ir_value *ins,
                        const tt_ir_type *hint, tt_ir_value *outs2) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (n_in < 0 || (n_in > 0 && !ins))
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: invalid operand list", tt_ir_op_name(op)));
    for (int32_t i = 0; i < n_in; i++)
        if (!operand_ok(b, op, ins[i])) return TT_IR_NONE;
    if (op >= TT_OP_ABS && op <= TT_OP_CONVERT && n_in > 0 && !outs2) {
        tt_ir_value v = hoist_splats(b, op, a, n_in, ins, hint);
        if (v != TT_IR_NONE || b->status != TT_OK) return v;
    }
    if (!tt_ir_grow((void **)&b->operands, &b->cap_operands, (int64_t)b->n_operands + n_in, sizeof(tt_ir_value)) ||
        !tt_ir_grow((void **)&b->nodes, &b->cap_nodes, (int64_t)b->n_nodes + 1, sizeof(tt_ir_node)) ||
        !tt_ir_grow((void **)&b->types, &b->cap_types, (int64_t)b->n_values + 2, sizeof(tt_ir_type)) ||
        !tt_ir_grow((void **)&b->value_node, &b->cap_value_node, (int64_t)b->n_values + 2, sizeof(int32_t)) ||
        !tt_ir_grow((void **)&b->origin, &b->cap_origin, (int64_t)b->n_nodes + 1, sizeof(int32_t)))
        return oom(b, tt_ir_op_name(op));
    if ((int64_t)b->n_operands + n_in > INT32_MAX - 1 || b->n_values > INT32_MAX - 3)
        return record(b, tt_error(TT_STATUS_UNSUPPORTED, "IR program too large"));
    tt_ir_value *pool = b->operands + b->n_operands;
    if (n_in) memcpy(pool, ins, (size_t)n_in * sizeof *ins);
    tt_ir_type res[2];
    int32_t n_out = 0;
    tt_status st = tt_ir_infer(op, a, b->types, n_in, pool, hint, res, &n_out);
    if (st != TT_OK) return record(b, st);
    tt_ir_node *node = &b->nodes[b->n_nodes];
    b->origin[b->n_nodes] = b->cur_origin;
    memset(node, 0, sizeof *node);
    node->op = op;
    node->n_inputs = n_in;
    node->inputs_offset = b->n_operands;
    node->n_outputs = n_out;
    node->outputs[1] = TT_IR_NONE;
    memcpy(&node->attrs, a, sizeof node->attrs);
    for (int32_t i = 0; i < n_out; i++) {
        node->outputs[i] = b->n_values;
        b->types[b->n_values] = res[i];
        b->value_node[b->n_values] = b->n_nodes;
        if (outs2) outs2[i] = b->n_values;
        b->n_values++;
    }
    b->n_operands += n_in;
    b->n_nodes++;
    return node->outputs[0];
}

/* Copies a dims list, zeroing unused entries so attrs compare and hash by bytes. */
static void copy_dims(tt_ir_dims *dst, const tt_ir_dims *src) {
    memset(dst, 0, sizeof *dst);
    dst->n = src->n;
    int64_t n = src->n < 0 ? 0 : (src->n > TT_MAX_RANK ? TT_MAX_RANK : src->n);
    for (int64_t i = 0; i < n; i++) dst->v[i] = src->v[i];
}

/* Fills a dims list from n values (or all `fill` when v is NULL). */
static void set_dims(tt_ir_dims *dst, int64_t n, const int64_t *v, int64_t fill) {
    memset(dst, 0, sizeof *dst);
    dst->n = n;
    for (int64_t i = 0; i < n && i < TT_MAX_RANK; i++) dst->v[i] = v ? v[i] : fill;
}

/* A requested result type from (dtype, rank, dims); false (error recorded) when unusable. */
static bool make_type(tt_ir_builder *b, const char *what, tt_dtype dt, int32_t rank, const int64_t *dims,
                      tt_ir_type *t) {
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->rank = rank;
    if (rank > 0 && rank <= TT_MAX_RANK && !dims) {
        record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: dims is NULL", what));
        return false;
    }
    tt_status st = tt_ir_check_type(what, t);
    if (st != TT_OK) {
        record(b, st);
        return false;
    }
    for (int32_t i = 0; i < rank; i++) t->dims[i] = dims[i];
    if ((st = tt_ir_check_type(what, t)) != TT_OK) {
        record(b, st);
        return false;
    }
    return true;
}

/* The type of an operand, or NULL (error recorded or propagated). */
static const tt_ir_type *operand_type(tt_ir_builder *b, tt_ir_op op, tt_ir_value v) {
    if (!b || b->status != TT_OK || !operand_ok(b, op, v)) return NULL;
    return &b->types[v];
}

/* ---- leaves ---- */

static tt_ir_value param(tt_ir_builder *b, tt_ir_op op, tt_dtype dt, int32_t rank, const int64_t *dims) {
    tt_ir_type t;
    if (!b || b->status != TT_OK || !make_type(b, "parameter", dt, rank, dims, &t)) return TT_IR_NONE;
    if (!tt_ir_grow((void **)&b->params, &b->cap_params, (int64_t)b->n_params + 1, sizeof(tt_ir_value)))
        return oom(b, "parameter");
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.parameter.index = b->n_params;
    tt_ir_value v = emit(b, op, &a, 0, NULL, &t, NULL);
    if (v != TT_IR_NONE) b->params[b->n_params++] = v;
    return v;
}

tt_ir_value tt_ir_param(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims) {
    return param(b, TT_OP_PARAMETER, dt, rank, dims);
}

tt_ir_value tt_ir_scalar_param(tt_ir_builder *b, tt_dtype dt) { return param(b, TT_OP_SCALAR_PARAMETER, dt, 0, NULL); }

tt_ir_value tt_ir_constant(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, const void *data) {
    tt_ir_type t;
    if (!b || b->status != TT_OK || !make_type(b, "constant", dt, rank, dims, &t)) return TT_IR_NONE;
    int64_t bytes = tt_numel(t.rank, t.dims) * (int64_t)tt_dtype_size(dt);
    if (bytes > 0 && !data) return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "constant: data is NULL"));
    int64_t off = (b->constants_size + 7) & ~(int64_t)7; /* 8-byte aligned literals: drivers read them typed */
    if (!tt_ir_grow((void **)&b->constants, &b->cap_constants, off + bytes, 1)) return oom(b, "constant");
    memset(b->constants + b->constants_size, 0, (size_t)(off - b->constants_size));
    if (bytes) memcpy(b->constants + off, data, (size_t)bytes);
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.constant.offset = off;
    a.constant.size = bytes;
    tt_ir_value v = emit(b, TT_OP_CONSTANT, &a, 0, NULL, &t, NULL);
    if (v != TT_IR_NONE) b->constants_size = off + bytes;
    return v;
}

/* double -> int64 without undefined behaviour: NaN -> 0, out of range saturates. */
static int64_t to_i64(double v) {
    if (isnan(v)) return 0;
    if (v >= 9223372036854775807.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

tt_ir_value tt_ir_constant_scalar(tt_ir_builder *b, tt_dtype dt, double v) {
    union {
        float f;
        double d;
        uint16_t h;
        int64_t i64;
        int32_t i32;
        int16_t i16;
        int8_t i8;
        uint8_t u8;
    } u;
    memset(&u, 0, sizeof u);
    /* integers wrap like a C cast from int64 (two's complement truncation) */
    uint64_t w = (uint64_t)to_i64(v);
    switch (dt) {
    case TT_F32: u.f = (float)v; break;
    case TT_BF16: u.h = tt_f32_to_bf16((float)v); break;
    case TT_F16: u.h = tt_f32_to_f16((float)v); break;
    case TT_F64: u.d = v; break;
    case TT_I64: u.i64 = (int64_t)w; break;
    case TT_I32: { uint32_t x = (uint32_t)w; memcpy(&u.i32, &x, 4); break; }
    case TT_I16: { uint16_t x = (uint16_t)w; memcpy(&u.i16, &x, 2); break; }
    case TT_I8: { uint8_t x = (uint8_t)w; memcpy(&u.i8, &x, 1); break; }
    case TT_U8: u.u8 = (uint8_t)w; break;
    case TT_BOOL: u.u8 = v != 0.0; break;
    default:
        if (b && b->status == TT_OK)
            return record(b, tt_error(TT_STATUS_TYPE, "constant: unknown dtype %d", (int)dt));
        return TT_IR_NONE;
    }
    return tt_ir_constant(b, dt, 0, NULL, &u);
}

tt_ir_value tt_ir_iota(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, int64_t dim) {
    tt_ir_type t;
    if (!b || b->status != TT_OK || !make_type(b, "iota", dt, rank, dims, &t)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.iota.dim = dim;
    return emit(b, TT_OP_IOTA, &a, 0, NULL, &t, NULL);
}

tt_ir_value tt_ir_rng_uniform(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, tt_ir_value seed,
                              tt_ir_value offset) {
    tt_ir_type t;
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (!operand_ok(b, TT_OP_RNG_UNIFORM, seed) || !operand_ok(b, TT_OP_RNG_UNIFORM, offset)) return TT_IR_NONE;
    if (!make_type(b, "rng_uniform", dt, rank, dims, &t)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    tt_ir_value ins[2] = {seed, offset};
    return emit(b, TT_OP_RNG_UNIFORM, &a, 2, ins, &t, NULL);
}

/* ---- elementwise ---- */

tt_ir_value tt_ir_unary(tt_ir_builder *b, tt_ir_op op, tt_ir_value x) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (op < TT_OP_ABS || op > TT_OP_NOT)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_ir_unary: %s is not a unary elementwise op",
                                  (unsigned)op < TT_OP_COUNT ? tt_ir_op_name(op) : "?"));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    return emit(b, op, &a, 1, &x, NULL, NULL);
}

tt_ir_value tt_ir_binary(tt_ir_builder *b, tt_ir_op op, tt_ir_value x, tt_ir_value y) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (op < TT_OP_ADD || op > TT_OP_NEXTAFTER)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "tt_ir_binary: %s is not a binary elementwise op",
                                  (unsigned)op < TT_OP_COUNT ? tt_ir_op_name(op) : "?"));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    tt_ir_value ins[2] = {x, y};
    return emit(b, op, &a, 2, ins, NULL, NULL);
}

tt_ir_value tt_ir_compare(tt_ir_builder *b, tt_ir_cmp dir, tt_ir_value x, tt_ir_value y) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.compare.dir = dir;
    tt_ir_value ins[2] = {x, y};
    return emit(b, TT_OP_COMPARE, &a, 2, ins, NULL, NULL);
}

tt_ir_value tt_ir_select(tt_ir_builder *b, tt_ir_value pred, tt_ir_value on_true, tt_ir_value on_false) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    tt_ir_value ins[3] = {pred, on_true, on_false};
    return emit(b, TT_OP_SELECT, &a, 3, ins, NULL, NULL);
}

tt_ir_value tt_ir_clamp(tt_ir_builder *b, tt_ir_value lo, tt_ir_value x, tt_ir_value hi) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    tt_ir_value ins[3] = {lo, x, hi};
    return emit(b, TT_OP_CLAMP, &a, 3, ins, NULL, NULL);
}

tt_ir_value tt_ir_convert(tt_ir_builder *b, tt_ir_value x, tt_dtype dt) {
    const tt_ir_type *t = operand_type(b, TT_OP_CONVERT, x);
    if (!t) return TT_IR_NONE;
    if (t->dtype == dt) return x;
    tt_ir_type h = *t;
    h.dtype = dt;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    return emit(b, TT_OP_CONVERT, &a, 1, &x, &h, NULL);
}

/* ---- shape ---- */

tt_ir_value tt_ir_broadcast_in_dim(tt_ir_builder *b, tt_ir_value x, int32_t rank, const int64_t *out_dims,
                                   const int64_t *dims) {
    const tt_ir_type *t = operand_type(b, TT_OP_BROADCAST_IN_DIM, x);
    tt_ir_type h;
    if (!t || !make_type(b, "broadcast_in_dim", t->dtype, rank, out_dims, &h)) return TT_IR_NONE;
    if (t->rank > rank)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "broadcast_in_dim: operand rank %d exceeds result rank %d",
                                  (int)t->rank, (int)rank));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.broadcast.dims.n = t->rank;
    for (int32_t i = 0; i < t->rank; i++) a.broadcast.dims.v[i] = dims ? dims[i] : rank - t->rank + i;
    return emit(b, TT_OP_BROADCAST_IN_DIM, &a, 1, &x, &h, NULL);
}

void tt_ir_builder_set_origin(tt_ir_builder *b, int32_t origin) {
    if (b) b->cur_origin = origin;
}

tt_ir_value tt_ir_reshape_source(const tt_ir_builder *b, tt_ir_value v) {
    if (!b || v < 0 || v >= b->n_values) return v;
    const tt_ir_node *n = &b->nodes[b->value_node[v]];
    return n->op == TT_OP_RESHAPE ? b->operands[n->inputs_offset] : v;
}

static bool same_shape(const tt_ir_type *t, int32_t rank, const int64_t *dims) {
    if (t->rank != rank) return false;
    for (int32_t d = 0; d < rank; d++)
        if (t->dims[d] != dims[d]) return false;
    return true;
}

/* A reshape of a reshape reshapes the original, and a reshape to the same shape is the value itself: the fusion
 * window stores storages as flat [n] values, and without this every value crossing an op boundary would go
 * [r, c] -> [n] -> [r, c], hiding its rows from the host driver's row plan. */
tt_ir_value tt_ir_reshape(tt_ir_builder *b, tt_ir_value x, int32_t rank, const int64_t *dims) {
    const tt_ir_type *t = operand_type(b, TT_OP_RESHAPE, x);
    tt_ir_type h;
    if (!t || !make_type(b, "reshape", t->dtype, rank, dims, &h)) return TT_IR_NONE;
    if (tt_numel(h.rank, h.dims) == tt_numel(t->rank, t->dims)) {
        x = tt_ir_reshape_source(b, x);
        t = &b->types[x];
        if (same_shape(t, rank, dims)) return x;
    }
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    return emit(b, TT_OP_RESHAPE, &a, 1, &x, &h, NULL);
}

/* Rank-sized int list arguments must be non-NULL when the rank is positive. */
static bool list_ok(tt_ir_builder *b, const char *what, int32_t n, const void *p) {
    if (n > 0 && !p) {
        record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: argument list is NULL", what));
        return false;
    }
    return true;
}

static bool is_perm(int32_t rank, const int64_t *perm) {
    uint32_t seen = 0;
    for (int32_t d = 0; d < rank; d++) {
        if (perm[d] < 0 || perm[d] >= rank || (seen >> perm[d] & 1)) return false;
        seen |= 1u << perm[d];
    }
    return true;
}

/* A transpose of a transpose is one transpose of the original, and the identity is the value itself: a fusion
 * window writes the result of an op on a permuted view (q.transpose(1, 2) * s keeps q's layout) into its storage in
 * memory order and reads it back in the view's, which would otherwise copy it twice. */
tt_ir_value tt_ir_transpose(tt_ir_builder *b, tt_ir_value x, const int64_t *perm) {
    const tt_ir_type *t = operand_type(b, TT_OP_TRANSPOSE, x);
    if (!t || !list_ok(b, "transpose", t->rank, perm)) return TT_IR_NONE;
    int64_t composed[TT_MAX_RANK];
    if (is_perm(t->rank, perm)) {
        const tt_ir_node *n = &b->nodes[b->value_node[x]];
        if (n->op == TT_OP_TRANSPOSE) {
            for (int32_t d = 0; d < t->rank; d++) composed[d] = n->attrs.transpose.perm.v[perm[d]];
            x = b->operands[n->inputs_offset];
            perm = composed;
        }
        bool identity = true;
        for (int32_t d = 0; d < t->rank; d++) identity = identity && perm[d] == d;
        if (identity) return x;
    }
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.transpose.perm, t->rank, perm, 0);
    return emit(b, TT_OP_TRANSPOSE, &a, 1, &x, NULL, NULL);
}

tt_ir_value tt_ir_slice(tt_ir_builder *b, tt_ir_value x, const int64_t *start, const int64_t *limit,
                        const int64_t *stride) {
    const tt_ir_type *t = operand_type(b, TT_OP_SLICE, x);
    if (!t || !list_ok(b, "slice", t->rank, start) || !list_ok(b, "slice", t->rank, limit)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.slice.start, t->rank, start, 0);
    set_dims(&a.slice.limit, t->rank, limit, 0);
    set_dims(&a.slice.stride, t->rank, stride, 1);
    return emit(b, TT_OP_SLICE, &a, 1, &x, NULL, NULL);
}

tt_ir_value tt_ir_dynamic_slice(tt_ir_builder *b, tt_ir_value x, const tt_ir_value *starts, const int64_t *sizes) {
    const tt_ir_type *t = operand_type(b, TT_OP_DYNAMIC_SLICE, x);
    if (!t || !list_ok(b, "dynamic_slice", t->rank, starts) || !list_ok(b, "dynamic_slice", t->rank, sizes))
        return TT_IR_NONE;
    tt_ir_value ins[TT_MAX_RANK + 1];
    ins[0] = x;
    for (int32_t i = 0; i < t->rank; i++) ins[1 + i] = starts[i];
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.dynamic_slice.sizes, t->rank, sizes, 0);
    return emit(b, TT_OP_DYNAMIC_SLICE, &a, 1 + t->rank, ins, NULL, NULL);
}

tt_ir_value tt_ir_dynamic_update_slice(tt_ir_builder *b, tt_ir_value x, tt_ir_value update,
                                       const tt_ir_value *starts) {
    const tt_ir_type *t = operand_type(b, TT_OP_DYNAMIC_UPDATE_SLICE, x);
    if (!t || !list_ok(b, "dynamic_update_slice", t->rank, starts)) return TT_IR_NONE;
    tt_ir_value ins[TT_MAX_RANK + 2];
    ins[0] = x;
    ins[1] = update;
    for (int32_t i = 0; i < t->rank; i++) ins[2 + i] = starts[i];
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    return emit(b, TT_OP_DYNAMIC_UPDATE_SLICE, &a, 2 + t->rank, ins, NULL, NULL);
}

tt_ir_value tt_ir_concatenate(tt_ir_builder *b, int32_t n, const tt_ir_value *xs, int64_t dim) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.concatenate.dim = dim;
    return emit(b, TT_OP_CONCATENATE, &a, n, xs, NULL, NULL);
}

tt_ir_value tt_ir_pad(tt_ir_builder *b, tt_ir_value x, tt_ir_value pad_value, const int64_t *low,
                      const int64_t *high, const int64_t *interior) {
    const tt_ir_type *t = operand_type(b, TT_OP_PAD, x);
    if (!t || !list_ok(b, "pad", t->rank, low) || !list_ok(b, "pad", t->rank, high)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.pad.low, t->rank, low, 0);
    set_dims(&a.pad.high, t->rank, high, 0);
    set_dims(&a.pad.interior, t->rank, interior, 0);
    tt_ir_value ins[2] = {x, pad_value};
    return emit(b, TT_OP_PAD, &a, 2, ins, NULL, NULL);
}

tt_ir_value tt_ir_reverse(tt_ir_builder *b, tt_ir_value x, int32_t n, const int64_t *dims) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (n < 0 || n > TT_MAX_RANK || !list_ok(b, "reverse", n, dims))
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "reverse: invalid dimension list (%d entries)", (int)n));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    set_dims(&a.reverse.dims, n, dims, 0);
    return emit(b, TT_OP_REVERSE, &a, 1, &x, NULL, NULL);
}

static bool attrs_ok(tt_ir_builder *b, const char *what, const tt_ir_attrs *attrs) {
    if (!b || b->status != TT_OK) return false;
    if (!attrs) {
        record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "%s: attrs is NULL", what));
        return false;
    }
    return true;
}

tt_ir_value tt_ir_gather(tt_ir_builder *b, tt_ir_value operand, tt_ir_value indices, const tt_ir_attrs *attrs) {
    if (!attrs_ok(b, "gather", attrs)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    copy_dims(&a.gather.offset_dims, &attrs->gather.offset_dims);
    copy_dims(&a.gather.collapsed_slice_dims, &attrs->gather.collapsed_slice_dims);
    copy_dims(&a.gather.start_index_map, &attrs->gather.start_index_map);
    copy_dims(&a.gather.slice_sizes, &attrs->gather.slice_sizes);
    a.gather.index_vector_dim = attrs->gather.index_vector_dim;
    a.gather.check_bounds = attrs->gather.check_bounds;
    a.gather.bounds_error = attrs->gather.bounds_error;
    tt_ir_value ins[2] = {operand, indices};
    return emit(b, TT_OP_GATHER, &a, 2, ins, NULL, NULL);
}

tt_ir_value tt_ir_scatter(tt_ir_builder *b, tt_ir_value operand, tt_ir_value indices, tt_ir_value updates,
                          const tt_ir_attrs *attrs) {
    if (!attrs_ok(b, "scatter", attrs)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    copy_dims(&a.scatter.update_window_dims, &attrs->scatter.update_window_dims);
    copy_dims(&a.scatter.inserted_window_dims, &attrs->scatter.inserted_window_dims);
    copy_dims(&a.scatter.scatter_dims_to_operand_dims, &attrs->scatter.scatter_dims_to_operand_dims);
    a.scatter.index_vector_dim = attrs->scatter.index_vector_dim;
    a.scatter.kind = attrs->scatter.kind;
    a.scatter.check_bounds = attrs->scatter.check_bounds;
    a.scatter.bounds_error = attrs->scatter.bounds_error;
    tt_ir_value ins[3] = {operand, indices, updates};
    return emit(b, TT_OP_SCATTER, &a, 3, ins, NULL, NULL);
}

/* ---- reductions ---- */

tt_ir_value tt_ir_reduce(tt_ir_builder *b, tt_ir_reduce_kind kind, tt_ir_value x, int32_t n, const int64_t *dims) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (n < 0 || n > TT_MAX_RANK || !list_ok(b, "reduce", n, dims))
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "reduce: invalid dimension list (%d entries)", (int)n));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce.kind = kind;
    set_dims(&a.reduce.dims, n, dims, 0);
    return emit(b, TT_OP_REDUCE, &a, 1, &x, NULL, NULL);
}

tt_ir_value tt_ir_arg_reduce(tt_ir_builder *b, tt_ir_value x, int64_t dim, bool is_min) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.arg_reduce.dim = dim;
    a.arg_reduce.is_min = is_min;
    return emit(b, TT_OP_ARG_REDUCE, &a, 1, &x, NULL, NULL);
}

tt_ir_value tt_ir_cumulative(tt_ir_builder *b, tt_ir_reduce_kind kind, tt_ir_value x, int64_t dim, bool reverse) {
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.cumulative.kind = kind;
    a.cumulative.dim = dim;
    a.cumulative.reverse = reverse;
    return emit(b, TT_OP_CUMULATIVE, &a, 1, &x, NULL, NULL);
}

/* Missing (n == 0) optional lists default to `fill` for every dim. */
static void copy_or_default(tt_ir_dims *dst, const tt_ir_dims *src, int64_t n, int64_t fill) {
    if (src->n == 0 && n > 0) set_dims(dst, n, NULL, fill);
    else copy_dims(dst, src);
}

tt_ir_value tt_ir_reduce_window(tt_ir_builder *b, tt_ir_value x, const tt_ir_attrs *attrs) {
    if (!attrs_ok(b, "reduce_window", attrs)) return TT_IR_NONE;
    const tt_ir_type *t = operand_type(b, TT_OP_REDUCE_WINDOW, x);
    if (!t) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.reduce_window.kind = attrs->reduce_window.kind;
    copy_dims(&a.reduce_window.window, &attrs->reduce_window.window);
    copy_or_default(&a.reduce_window.strides, &attrs->reduce_window.strides, t->rank, 1);
    copy_or_default(&a.reduce_window.pad_low, &attrs->reduce_window.pad_low, t->rank, 0);
    copy_or_default(&a.reduce_window.pad_high, &attrs->reduce_window.pad_high, t->rank, 0);
    copy_or_default(&a.reduce_window.window_dilation, &attrs->reduce_window.window_dilation, t->rank, 1);
    return emit(b, TT_OP_REDUCE_WINDOW, &a, 1, &x, NULL, NULL);
}

/* ---- contractions ---- */

/* A dot_general operand that is a transpose: the transpose's operand, with the operand's batch and contracting
 * dims mapped through the permutation, when its free dims keep their order (they give the result's layout). The
 * matmul then reads the untransposed values in place, as a strict op reads a transposed view, instead of the
 * window copying the transpose first (k.transpose(-2, -1) in attention). Otherwise v itself. */
static tt_ir_value untransposed(const tt_ir_builder *b, tt_ir_value v, tt_ir_dims *batch, tt_ir_dims *contract) {
    if (!b || b->status != TT_OK || v < 0 || v >= b->n_values) return v;
    const tt_ir_node *n = &b->nodes[b->value_node[v]];
    if (n->op != TT_OP_TRANSPOSE || batch->n < 0 || contract->n < 0 || batch->n + contract->n > TT_MAX_RANK) return v;
    const int64_t *perm = n->attrs.transpose.perm.v;
    int32_t r = b->types[v].rank;
    bool used[TT_MAX_RANK] = {false};
    for (int64_t i = 0; i < batch->n; i++)
        if (batch->v[i] >= 0 && batch->v[i] < r) used[batch->v[i]] = true;
    for (int64_t i = 0; i < contract->n; i++)
        if (contract->v[i] >= 0 && contract->v[i] < r) used[contract->v[i]] = true;
    int64_t last = -1;
    for (int32_t d = 0; d < r; d++) {
        if (used[d]) continue;
        if (perm[d] <= last) return v;
        last = perm[d];
    }
    for (int64_t i = 0; i < batch->n; i++)
        if (batch->v[i] < 0 || batch->v[i] >= r) return v; /* invalid: left for the verifier to report */
    for (int64_t i = 0; i < contract->n; i++)
        if (contract->v[i] < 0 || contract->v[i] >= r) return v;
    for (int64_t i = 0; i < batch->n; i++) batch->v[i] = perm[batch->v[i]];
    for (int64_t i = 0; i < contract->n; i++) contract->v[i] = perm[contract->v[i]];
    return b->operands[n->inputs_offset];
}

tt_ir_value tt_ir_dot_general(tt_ir_builder *b, tt_ir_value lhs, tt_ir_value rhs, const tt_ir_attrs *attrs,
                              tt_dtype out_dtype) {
    if (!attrs_ok(b, "dot_general", attrs)) return TT_IR_NONE;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    copy_dims(&a.dot.lhs_batch, &attrs->dot.lhs_batch);
    copy_dims(&a.dot.lhs_contract, &attrs->dot.lhs_contract);
    copy_dims(&a.dot.rhs_batch, &attrs->dot.rhs_batch);
    copy_dims(&a.dot.rhs_contract, &attrs->dot.rhs_contract);
    a.dot.precision = attrs->dot.precision;
    lhs = untransposed(b, lhs, &a.dot.lhs_batch, &a.dot.lhs_contract);
    rhs = untransposed(b, rhs, &a.dot.rhs_batch, &a.dot.rhs_contract);
    tt_ir_type h;
    memset(&h, 0, sizeof h);
    h.dtype = out_dtype;
    tt_ir_value ins[2] = {lhs, rhs};
    return emit(b, TT_OP_DOT_GENERAL, &a, 2, ins, &h, NULL);
}

tt_ir_value tt_ir_convolution(tt_ir_builder *b, tt_ir_value input, tt_ir_value kernel, const tt_ir_attrs *attrs,
                              tt_dtype out_dtype) {
    if (!attrs_ok(b, "convolution", attrs)) return TT_IR_NONE;
    const tt_ir_type *t = operand_type(b, TT_OP_CONVOLUTION, input);
    if (!t) return TT_IR_NONE;
    int64_t s = t->rank > 2 ? t->rank - 2 : 0;
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    copy_or_default(&a.conv.strides, &attrs->conv.strides, s, 1);
    copy_or_default(&a.conv.pad_low, &attrs->conv.pad_low, s, 0);
    copy_or_default(&a.conv.pad_high, &attrs->conv.pad_high, s, 0);
    copy_or_default(&a.conv.lhs_dilation, &attrs->conv.lhs_dilation, s, 1);
    copy_or_default(&a.conv.rhs_dilation, &attrs->conv.rhs_dilation, s, 1);
    a.conv.feature_group_count = attrs->conv.feature_group_count ? attrs->conv.feature_group_count : 1;
    a.conv.batch_group_count = attrs->conv.batch_group_count ? attrs->conv.batch_group_count : 1;
    a.conv.precision = attrs->conv.precision;
    tt_ir_type h;
    memset(&h, 0, sizeof h);
    h.dtype = out_dtype;
    tt_ir_value ins[2] = {input, kernel};
    return emit(b, TT_OP_CONVOLUTION, &a, 2, ins, &h, NULL);
}

/* ---- sort ---- */

tt_ir_value tt_ir_sort(tt_ir_builder *b, int32_t n, const tt_ir_value *xs, int64_t dim, bool descending, bool stable,
                       tt_ir_value *outs) {
    tt_ir_value tmp[2] = {TT_IR_NONE, TT_IR_NONE};
    tt_ir_value *o = outs ? outs : tmp;
    for (int32_t i = 0; outs && i < n && i < 2; i++) o[i] = TT_IR_NONE;
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (n < 1 || n > 2)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "sort: takes 1 or 2 operands, got %d", (int)n));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    a.sort.dim = dim;
    a.sort.descending = descending;
    a.sort.stable = stable;
    return emit(b, TT_OP_SORT, &a, n, xs, NULL, o);
}

/* ---- escape hatch ---- */

tt_ir_value tt_ir_custom_call(tt_ir_builder *b, const char *target, int32_t n, const tt_ir_value *xs,
                              const tt_ir_type *result_type) {
    if (!b || b->status != TT_OK) return TT_IR_NONE;
    if (!target || !result_type)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "custom_call: target or result type is NULL"));
    tt_ir_attrs a;
    memset(&a, 0, sizeof a);
    size_t len = strlen(target);
    if (len == 0 || len >= sizeof a.custom_call.target)
        return record(b, tt_error(TT_STATUS_INVALID_ARGUMENT, "custom_call: target name must have 1 to %d characters",
                                  (int)sizeof a.custom_call.target - 1));
    memcpy(a.custom_call.target, target, len);
    tt_ir_type h;
    if (!make_type(b, "custom_call", result_type->dtype, result_type->rank, result_type->dims, &h)) return TT_IR_NONE;
    return emit(b, TT_OP_CUSTOM_CALL, &a, n, xs, &h, NULL);
}

void tt_ir_builder_add_output(tt_ir_builder *b, tt_ir_value v) {
    if (!b || b->status != TT_OK || !operand_ok(b, TT_OP_COUNT, v)) return;
    if (!tt_ir_grow((void **)&b->outputs, &b->cap_outputs, (int64_t)b->n_outputs + 1, sizeof(tt_ir_value))) {
        oom(b, "add_output");
        return;
    }
    b->outputs[b->n_outputs++] = v;
}
