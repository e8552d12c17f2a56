/* tt_ir.h — the torchtpu IR: an SSA program of statically shaped tensor values, ops shaped like StableHLO.
 *
 * A program is built once with a tt_ir_builder, frozen by tt_ir_builder_finish(), and is then immutable and
 * may be shared (the compile cache holds it). Every value has one dtype and a static shape. Ops never broadcast
 * implicitly and never convert dtypes implicitly: operands of elementwise ops have identical types (use
 * tt_ir_broadcast_in_dim and tt_ir_convert first), exactly as in StableHLO.
 *
 * Parameters come in two kinds:
 *   - tensor parameters (tt_ir_param): a device buffer supplied at execution time;
 *   - scalar parameters (tt_ir_scalar_param): a 0-d value supplied from the host at execution time. User
 *     scalars (the 2.5 in x + 2.5) and RNG seeds travel this way, so they do not change the program's hash
 *     and one compiled program serves every value.
 *
 * Builder errors are sticky: the first failing op records a status and message, returns TT_IR_NONE, and every
 * later op that receives TT_IR_NONE returns TT_IR_NONE too. Check tt_ir_builder_status() once at the end.
 *
 * Example: y = sum(x * 2.0) over dim 0 for x: f32[4, 3]
 *
 *   tt_ir_builder *b = tt_ir_builder_create();
 *   int64_t xs[2] = {4, 3};
 *   tt_ir_value x   = tt_ir_param(b, TT_F32, 2, xs);
 *   tt_ir_value two = tt_ir_constant_scalar(b, TT_F32, 2.0);                  // f32[] constant
 *   tt_ir_value twob = tt_ir_broadcast_in_dim(b, two, 2, xs, NULL);          // f32[4,3]
 *   tt_ir_value m   = tt_ir_binary(b, TT_OP_MULTIPLY, x, twob);
 *   int64_t d0 = 0;
 *   tt_ir_value s   = tt_ir_reduce(b, TT_REDUCE_ADD, m, 1, &d0);              // f32[3]
 *   tt_ir_builder_add_output(b, s);
 *   tt_ir_program *p = NULL;
 *   if (tt_ir_builder_finish(b, &p) != TT_OK) { ... tt_last_error() ... }
 *   tt_ir_builder_destroy(b);
 *   char *text = NULL; tt_ir_print_stablehlo(p, &text); ... free(text);
 *   tt_ir_program_destroy(p);
 */
#ifndef TT_IR_H
#define TT_IR_H

#include "tt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------------
 * The op table: the single source of truth. X(NAME, stablehlo_name, n_inputs) — n_inputs -1 = variadic.
 * Elementwise ops require identical operand types (except where noted); results have the operand type unless
 * noted.
 * ------------------------------------------------------------------------------------------------------- */
#define TT_IR_OPS(X)                                                                                        \
    /* leaves */                                                                                            \
    X(PARAMETER, "parameter", 0)          /* tensor parameter, attrs.parameter.index */                    \
    X(SCALAR_PARAMETER, "parameter", 0)   /* 0-d host scalar parameter, attrs.parameter.index */           \
    X(CONSTANT, "stablehlo.constant", 0)  /* literal, attrs.constant */                                    \
    X(IOTA, "stablehlo.iota", 0)          /* attrs.iota.dim; integer or float result */                    \
    X(RNG_UNIFORM, "rng_uniform", 2)      /* (seed i64[], offset i64[]) -> float in [0,1), counter-based */ \
    /* elementwise unary (float only unless noted) */                                                       \
    X(ABS, "stablehlo.abs", 1)            /* float and signed int */                                       \
    X(NEGATE, "stablehlo.negate", 1)      /* float and int */                                              \
    X(SIGN, "stablehlo.sign", 1)          /* float and int; sign(0) = 0, sign(nan) = nan */                \
    X(FLOOR, "stablehlo.floor", 1)                                                                         \
    X(CEIL, "stablehlo.ceil", 1)                                                                           \
    X(ROUND_EVEN, "stablehlo.round_nearest_even", 1)                                                       \
    X(EXP, "stablehlo.exponential", 1)                                                                     \
    X(EXPM1, "stablehlo.exponential_minus_one", 1)                                                         \
    X(LOG, "stablehlo.log", 1)                                                                             \
    X(LOG1P, "stablehlo.log_plus_one", 1)                                                                  \
    X(SQRT, "stablehlo.sqrt", 1)                                                                           \
    X(RSQRT, "stablehlo.rsqrt", 1)                                                                         \
    X(CBRT, "stablehlo.cbrt", 1)                                                                           \
    X(SIN, "stablehlo.sine", 1)                                                                            \
    X(COS, "stablehlo.cosine", 1)                                                                          \
    X(TAN, "stablehlo.tan", 1)                                                                             \
    X(TANH, "stablehlo.tanh", 1)                                                                           \
    X(ASIN, "chlo.asin", 1)                                                                                \
    X(ACOS, "chlo.acos", 1)                                                                                \
    X(ATAN, "chlo.atan", 1)                                                                                \
    X(SINH, "chlo.sinh", 1)                                                                                \
    X(COSH, "chlo.cosh", 1)                                                                                \
    X(ASINH, "chlo.asinh", 1)                                                                              \
    X(ACOSH, "chlo.acosh", 1)                                                                              \
    X(ATANH, "chlo.atanh", 1)                                                                              \
    X(LOGISTIC, "stablehlo.logistic", 1)                                                                   \
    X(ERF, "chlo.erf", 1)                                                                                  \
    X(ERFC, "chlo.erfc", 1)                                                                                \
    X(ERF_INV, "chlo.erf_inv", 1)                                                                          \
    X(LGAMMA, "chlo.lgamma", 1)                                                                            \
    X(DIGAMMA, "chlo.digamma", 1)                                                                          \
    X(IS_FINITE, "stablehlo.is_finite", 1) /* float -> bool */                                             \
    X(NOT, "stablehlo.not", 1)             /* bool: logical not; int: bitwise not */                       \
    /* elementwise binary */                                                                                \
    X(ADD, "stablehlo.add", 2)            /* bool: or */                                                   \
    X(SUBTRACT, "stablehlo.subtract", 2)                                                                   \
    X(MULTIPLY, "stablehlo.multiply", 2)  /* bool: and */                                                  \
    X(DIVIDE, "stablehlo.divide", 2)      /* int: truncating; int x/0 = -1 (all bits), like StableHLO */   \
    X(REMAINDER, "stablehlo.remainder", 2) /* sign of dividend (C fmod); int x%0 = x */                    \
    X(POWER, "stablehlo.power", 2)        /* float pow; int: exponentiation by squaring, neg exp -> 0 */   \
    X(MAXIMUM, "stablehlo.maximum", 2)    /* float: NaN propagates */                                      \
    X(MINIMUM, "stablehlo.minimum", 2)                                                                     \
    X(ATAN2, "stablehlo.atan2", 2)                                                                         \
    X(AND, "stablehlo.and", 2)            /* bool and int */                                               \
    X(OR, "stablehlo.or", 2)                                                                               \
    X(XOR, "stablehlo.xor", 2)                                                                             \
    X(SHIFT_LEFT, "stablehlo.shift_left", 2)                                                               \
    X(SHIFT_RIGHT_ARITHMETIC, "stablehlo.shift_right_arithmetic", 2)                                       \
    X(SHIFT_RIGHT_LOGICAL, "stablehlo.shift_right_logical", 2)                                             \
    X(NEXTAFTER, "chlo.next_after", 2)                                                                     \
    X(COMPARE, "stablehlo.compare", 2)    /* -> bool, attrs.compare */                                     \
    /* elementwise ternary */                                                                               \
    X(SELECT, "stablehlo.select", 3)      /* (bool pred, on_true, on_false); pred same shape */            \
    X(CLAMP, "stablehlo.clamp", 3)        /* (min, x, max) all same type; NaN in x propagates */           \
    X(CONVERT, "stablehlo.convert", 1)    /* dtype change; float->int truncates toward zero, ->bool is !=0 */ \
    /* shape and data movement */                                                                           \
    X(BROADCAST_IN_DIM, "stablehlo.broadcast_in_dim", 1) /* attrs.broadcast.dims */                       \
    X(RESHAPE, "stablehlo.reshape", 1)    /* row-major element order kept */                               \
    X(TRANSPOSE, "stablehlo.transpose", 1) /* attrs.transpose.perm: out dim i = in dim perm[i] */          \
    X(SLICE, "stablehlo.slice", 1)        /* attrs.slice start/limit/stride */                              \
    X(DYNAMIC_SLICE, "stablehlo.dynamic_slice", -1) /* (x, start_0..start_{r-1} as i64[]) attrs.dynamic_slice.sizes; starts clamped */ \
    X(DYNAMIC_UPDATE_SLICE, "stablehlo.dynamic_update_slice", -1) /* (x, update, starts...) starts clamped */ \
    X(CONCATENATE, "stablehlo.concatenate", -1) /* attrs.concatenate.dim */                                 \
    X(PAD, "stablehlo.pad", 2)            /* (x, pad_value[]) attrs.pad low/high/interior; low/high may be negative */ \
    X(REVERSE, "stablehlo.reverse", 1)    /* attrs.reverse.dims */                                         \
    X(GATHER, "stablehlo.gather", 2)      /* (operand, start_indices int) attrs.gather; indices clamped */  \
    X(SCATTER, "stablehlo.scatter", 3)    /* (operand, scatter_indices, updates) attrs.scatter; out-of-range updates skipped */ \
    /* reductions */                                                                                        \
    X(REDUCE, "stablehlo.reduce", 1)      /* attrs.reduce kind/dims; dims removed from the shape */        \
    X(ARG_REDUCE, "stablehlo.reduce", 1)  /* attrs.arg_reduce: index (i64) of max/min along dim, first wins; NaN counts as max */ \
    X(CUMULATIVE, "stablehlo.reduce_window", 1) /* attrs.cumulative: inclusive scan along dim */           \
    X(REDUCE_WINDOW, "stablehlo.reduce_window", 1) /* attrs.reduce_window */                               \
    /* contractions */                                                                                      \
    X(DOT_GENERAL, "stablehlo.dot_general", 2) /* attrs.dot; result dims: batch, lhs free, rhs free */    \
    X(CONVOLUTION, "stablehlo.convolution", 2) /* attrs.conv; PyTorch layouts: in N,C,spatial; kernel O,I,spatial; out N,C,spatial */ \
    /* sorting */                                                                                           \
    X(SORT, "stablehlo.sort", -1)         /* 1 or 2 operands of one shape, sorted by the first; as many results */ \
    /* escape hatch */                                                                                      \
    X(CUSTOM_CALL, "stablehlo.custom_call", -1) /* a registered kernel (tt_kernel.h) named by attrs.custom_call.target */

typedef enum tt_ir_op {
#define TT_IR_OP_ENUM(name, hlo, n) TT_OP_##name,
    TT_IR_OPS(TT_IR_OP_ENUM)
#undef TT_IR_OP_ENUM
    TT_OP_COUNT
} tt_ir_op;

const char *tt_ir_op_name(tt_ir_op op);      /* "ADD" */
const char *tt_ir_op_hlo_name(tt_ir_op op);  /* "stablehlo.add" */
int tt_ir_op_arity(tt_ir_op op);             /* -1 for variadic */

typedef enum tt_ir_compare { TT_CMP_EQ, TT_CMP_NE, TT_CMP_LT, TT_CMP_LE, TT_CMP_GT, TT_CMP_GE } tt_ir_cmp;

/* Reduction kinds, also used for scatter's update combiner (TT_REDUCE_NONE = replace), cumulative and
 * reduce_window. For bool, ADD means or, MUL means and. */
typedef enum tt_ir_reduce_kind {
    TT_REDUCE_NONE = 0, TT_REDUCE_ADD, TT_REDUCE_MUL, TT_REDUCE_MAX, TT_REDUCE_MIN, TT_REDUCE_AND, TT_REDUCE_OR
} tt_ir_reduce_kind;

/* ---- semantics (issue 5): which PyTorch error a bounds-checked gather / scatter raises ---- */
typedef enum tt_ir_bounds_error {
    TT_IR_BOUNDS_INDEX = 0, /* IndexError "index i is out of bounds for dimension d with size n" (indexing) */
    TT_IR_BOUNDS_RUNTIME,   /* the same message as a RuntimeError (torch.gather / scatter) */
    TT_IR_BOUNDS_TARGET     /* IndexError "Target i is out of bounds." (nll_loss, cross_entropy) */
} tt_ir_bounds_error;

/* Matmul / conv precision (TPU semantics). DEFAULT: operands rounded to bf16, f32 accumulation.
 * HIGH: 3 bf16 passes. HIGHEST: 6 bf16 passes (~f32). FP32: exact f32 arithmetic (reference mode). */
typedef enum tt_precision { TT_PRECISION_DEFAULT = 0, TT_PRECISION_HIGH, TT_PRECISION_HIGHEST, TT_PRECISION_FP32 } tt_precision;

typedef struct tt_ir_dims {
    int64_t n;
    int64_t v[TT_MAX_RANK];
} tt_ir_dims;

/* Attributes, one member per op that has any. Always zero-initialised before filling (hashing compares bytes). */
typedef union tt_ir_attrs {
    struct { int64_t index; } parameter;                       /* position among all parameters */
    struct { int64_t offset, size; } constant;                 /* bytes in the program's constant pool, row-major */
    struct { int64_t dim; } iota;
    struct { tt_ir_cmp dir; } compare;
    struct { tt_ir_dims dims; } broadcast;                     /* operand dim i -> result dim dims[i] */
    struct { tt_ir_dims perm; } transpose;
    struct { tt_ir_dims start, limit, stride; } slice;
    struct { tt_ir_dims sizes; } dynamic_slice;
    struct { int64_t dim; } concatenate;
    struct { tt_ir_dims low, high, interior; } pad;
    struct { tt_ir_dims dims; } reverse;
    struct {
        tt_ir_dims offset_dims, collapsed_slice_dims, start_index_map, slice_sizes;
        int64_t index_vector_dim;
        bool check_bounds; /* out-of-range start indices are errors (bounds_error says which), not clamped */
        tt_ir_bounds_error bounds_error;
    } gather;
    struct {
        tt_ir_dims update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
        int64_t index_vector_dim;
        tt_ir_reduce_kind kind; /* NONE = replace (last write wins; order unspecified) */
        bool check_bounds;      /* out-of-range indices are errors (bounds_error says which), not dropped */
        tt_ir_bounds_error bounds_error;
    } scatter;
    struct { tt_ir_reduce_kind kind; tt_ir_dims dims; } reduce;
    struct { int64_t dim; bool is_min; } arg_reduce;
    struct { tt_ir_reduce_kind kind; int64_t dim; bool reverse; } cumulative;
    struct {
        tt_ir_reduce_kind kind;
        tt_ir_dims window, strides, pad_low, pad_high, window_dilation;
    } reduce_window; /* padding uses the kind's identity */
    struct {
        tt_ir_dims lhs_batch, lhs_contract, rhs_batch, rhs_contract;
        tt_precision precision;
    } dot;
    struct {
        tt_ir_dims strides, pad_low, pad_high, lhs_dilation, rhs_dilation; /* one entry per spatial dim */
        int64_t feature_group_count, batch_group_count;                     /* 1 = none */
        tt_precision precision;
    } conv;
    struct { int64_t dim; bool descending; bool stable; } sort;
    struct { char target[64]; } custom_call;
} tt_ir_attrs;

typedef int32_t tt_ir_value; /* index of a value in its builder/program */
#define TT_IR_NONE ((tt_ir_value)-1)

typedef struct tt_ir_type {
    tt_dtype dtype;
    int32_t rank;
    int64_t dims[TT_MAX_RANK];
} tt_ir_type;

typedef struct tt_ir_node {
    tt_ir_op op;
    int32_t n_inputs;
    int32_t inputs_offset; /* into program->operands */
    int32_t n_outputs;     /* 1, or 2 for a two-operand SORT */
    tt_ir_value outputs[2];
    tt_ir_attrs attrs;
} tt_ir_node;

/* An immutable program. Fields are readable by drivers and passes; never written after finish. */
typedef struct tt_ir_program {
    int32_t n_nodes;
    tt_ir_node *nodes;          /* topological order */
    int32_t n_values;
    tt_ir_type *types;          /* per value */
    int32_t *value_node;        /* per value: index of defining node */
    int32_t n_operands;
    tt_ir_value *operands;      /* operand pool referenced by nodes */
    int32_t n_params;
    tt_ir_value *params;        /* per parameter index: its value (PARAMETER or SCALAR_PARAMETER node) */
    int32_t n_outputs;
    tt_ir_value *outputs;       /* program results, in order; may repeat values or name parameters */
    int64_t constants_size;
    uint8_t *constants;         /* constant pool */
    int32_t *node_origin;       /* per node: the builder's origin when emitted (-1: none); not part of the hash */
    uint64_t hash;              /* structural hash, computed at finish */
    int32_t refcount;           /* managed by tt_ir_program_retain/destroy (atomic) */
} tt_ir_program;

typedef struct tt_ir_builder tt_ir_builder;

/* ---- builder lifetime ---- */
tt_ir_builder *tt_ir_builder_create(void);     /* NULL on out of memory */
void tt_ir_builder_destroy(tt_ir_builder *b);  /* accepts NULL */
void tt_ir_builder_reset(tt_ir_builder *b);    /* empty again, keeps its memory (reuse per op) */
tt_status tt_ir_builder_status(const tt_ir_builder *b); /* first recorded error, message in tt_last_error() */
tt_status tt_ir_builder_fail(tt_ir_builder *b, tt_status st, const char *fmt, ...)  /* record an error (sticky) */
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
const tt_ir_type *tt_ir_type_of(const tt_ir_builder *b, tt_ir_value v); /* NULL for TT_IR_NONE */
/* Nodes emitted from now on carry origin (e.g. the index of the op a fusion window is recording), so an error
 * in a node can be traced to what built it. -1 after create/reset. */
void tt_ir_builder_set_origin(tt_ir_builder *b, int32_t origin);
tt_ir_value tt_ir_reshape_source(const tt_ir_builder *b, tt_ir_value v); /* what v reshapes, else v */
int32_t tt_ir_builder_num_params(const tt_ir_builder *b);
void tt_ir_builder_add_output(tt_ir_builder *b, tt_ir_value v);
/* Freezes the program (runs DCE, computes the hash) into *out (owned by caller: tt_ir_program_destroy). */
tt_status tt_ir_builder_finish(tt_ir_builder *b, tt_ir_program **out);

/* ---- program lifetime ---- */
void tt_ir_program_retain(tt_ir_program *p);
void tt_ir_program_destroy(tt_ir_program *p);   /* drops one reference; accepts NULL */
/* How b differs from a, in words for a log: "new structure" (other ops or wiring), else "new dtype", "new shapes",
 * "new precision" (a matmul's or convolution's), "new constants", "new attributes"; "same program" if equal. */
const char *tt_ir_program_difference(const tt_ir_program *a, const tt_ir_program *b);
tt_status tt_ir_verify(const tt_ir_program *p);  /* every type and attribute consistent */
bool tt_ir_program_equal(const tt_ir_program *a, const tt_ir_program *b); /* structural equality (cache check) */
/* StableHLO text of the whole program (a module with func @main). *text owned by caller (free()). */
tt_status tt_ir_print_stablehlo(const tt_ir_program *p, char **text);
/* With flags: TT_IR_PRINT_DONORS marks every parameter `jax.buffer_donor = true` (the caller of an executable then
 * names, per execution, the arguments that must not be donated). */
#define TT_IR_PRINT_DONORS 1u
tt_status tt_ir_print_stablehlo_ex(const tt_ir_program *p, uint32_t flags, char **text);
/* p with every f32 dot_general / convolution at DEFAULT, HIGH or HIGHEST written out as its 1, 3 or 6 bf16
 * passes accumulated in f32 (for a backend that ignores precision_config); p itself (retained) when it has none.
 * Same parameters and outputs. *out owned by the caller. */
tt_status tt_ir_expand_precision(tt_ir_program *p, tt_ir_program **out);
/* A bounds-checked gather or scatter, made an extra output by tt_ir_expand_bounds_checks: after a run its i64[2]
 * holds (position of the first bad index component, or INT64_MAX; its value). position % n_components is the
 * component's rank in the order the host driver tests them; dim and size are listed by that rank. */
typedef struct tt_ir_bounds_check {
    int32_t node; /* the node in the program given to tt_ir_expand_bounds_checks */
    tt_ir_bounds_error kind;
    int32_t n_components;
    int64_t dim[TT_MAX_RANK], size[TT_MAX_RANK];
} tt_ir_bounds_check;
/* p with one extra i64[2] output per bounds-checked gather/scatter (appended after p's outputs, in node order);
 * *checks (malloc'd, the caller frees) describes them. p itself (retained) and no checks when it has none. */
tt_status tt_ir_expand_bounds_checks(tt_ir_program *p, tt_ir_program **out, tt_ir_bounds_check **checks,
                                     int32_t *n_checks);
/* PyTorch's error for index v out of range along dim d of size n (IndexError or RuntimeError by kind), set as the
 * thread's error; returns its status. */
tt_status tt_ir_bounds_status(tt_ir_bounds_error kind, int64_t v, int64_t d, int64_t n);

/* ---- leaves ---- */
tt_ir_value tt_ir_param(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims);
tt_ir_value tt_ir_scalar_param(tt_ir_builder *b, tt_dtype dt);
tt_ir_value tt_ir_constant(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, const void *data);
tt_ir_value tt_ir_constant_scalar(tt_ir_builder *b, tt_dtype dt, double v); /* 0-d; v converted to dt */
tt_ir_value tt_ir_iota(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, int64_t dim);
tt_ir_value tt_ir_rng_uniform(tt_ir_builder *b, tt_dtype dt, int32_t rank, const int64_t *dims, tt_ir_value seed,
                              tt_ir_value offset);

/* ---- elementwise ---- */
tt_ir_value tt_ir_unary(tt_ir_builder *b, tt_ir_op op, tt_ir_value x);
tt_ir_value tt_ir_binary(tt_ir_builder *b, tt_ir_op op, tt_ir_value x, tt_ir_value y);
tt_ir_value tt_ir_compare(tt_ir_builder *b, tt_ir_cmp dir, tt_ir_value x, tt_ir_value y);
tt_ir_value tt_ir_select(tt_ir_builder *b, tt_ir_value pred, tt_ir_value on_true, tt_ir_value on_false);
tt_ir_value tt_ir_clamp(tt_ir_builder *b, tt_ir_value lo, tt_ir_value x, tt_ir_value hi);
tt_ir_value tt_ir_convert(tt_ir_builder *b, tt_ir_value x, tt_dtype dt); /* returns x when already dt */

/* ---- shape ---- */
/* dims may be NULL: operand dims map to the trailing result dims (numpy-style, no size-1 expansion check). */
tt_ir_value tt_ir_broadcast_in_dim(tt_ir_builder *b, tt_ir_value x, int32_t rank, const int64_t *out_dims,
                                   const int64_t *dims);
tt_ir_value tt_ir_reshape(tt_ir_builder *b, tt_ir_value x, int32_t rank, const int64_t *dims);
tt_ir_value tt_ir_transpose(tt_ir_builder *b, tt_ir_value x, const int64_t *perm);
tt_ir_value tt_ir_slice(tt_ir_builder *b, tt_ir_value x, const int64_t *start, const int64_t *limit,
                        const int64_t *stride); /* stride may be NULL (all 1) */
tt_ir_value tt_ir_dynamic_slice(tt_ir_builder *b, tt_ir_value x, const tt_ir_value *starts, const int64_t *sizes);
tt_ir_value tt_ir_dynamic_update_slice(tt_ir_builder *b, tt_ir_value x, tt_ir_value update,
                                       const tt_ir_value *starts);
tt_ir_value tt_ir_concatenate(tt_ir_builder *b, int32_t n, const tt_ir_value *xs, int64_t dim);
tt_ir_value tt_ir_pad(tt_ir_builder *b, tt_ir_value x, tt_ir_value pad_value, const int64_t *low,
                      const int64_t *high, const int64_t *interior); /* interior may be NULL */
tt_ir_value tt_ir_reverse(tt_ir_builder *b, tt_ir_value x, int32_t n, const int64_t *dims);
tt_ir_value tt_ir_gather(tt_ir_builder *b, tt_ir_value operand, tt_ir_value indices, const tt_ir_attrs *attrs);
tt_ir_value tt_ir_scatter(tt_ir_builder *b, tt_ir_value operand, tt_ir_value indices, tt_ir_value updates,
                          const tt_ir_attrs *attrs);

/* ---- reductions ---- */
tt_ir_value tt_ir_reduce(tt_ir_builder *b, tt_ir_reduce_kind kind, tt_ir_value x, int32_t n, const int64_t *dims);
tt_ir_value tt_ir_arg_reduce(tt_ir_builder *b, tt_ir_value x, int64_t dim, bool is_min); /* i64, dim removed */
tt_ir_value tt_ir_cumulative(tt_ir_builder *b, tt_ir_reduce_kind kind, tt_ir_value x, int64_t dim, bool reverse);
tt_ir_value tt_ir_reduce_window(tt_ir_builder *b, tt_ir_value x, const tt_ir_attrs *attrs);

/* ---- contractions ---- */
/* out_dtype: result dtype (e.g. f32 from bf16 operands); operands must share a dtype. */
tt_ir_value tt_ir_dot_general(tt_ir_builder *b, tt_ir_value lhs, tt_ir_value rhs, const tt_ir_attrs *attrs,
                              tt_dtype out_dtype);
tt_ir_value tt_ir_convolution(tt_ir_builder *b, tt_ir_value input, tt_ir_value kernel, const tt_ir_attrs *attrs,
                              tt_dtype out_dtype);

/* ---- sort ---- */
/* n = 1 or 2 operands of equal shape; outs receives n values. Returns outs[0]. */
tt_ir_value tt_ir_sort(tt_ir_builder *b, int32_t n, const tt_ir_value *xs, int64_t dim, bool descending, bool stable,
                       tt_ir_value *outs);

/* ---- escape hatch ---- */
tt_ir_value tt_ir_custom_call(tt_ir_builder *b, const char *target, int32_t n, const tt_ir_value *xs,
                              const tt_ir_type *result_type);

/* ---- the counter-based RNG shared by every driver and the StableHLO printer ----
 * Element k (row-major) of rng_uniform(seed, offset) uses counter = offset + k:
 *   x = seed ^ (counter * 0x9E3779B97F4A7C15), then the splitmix64 finalizer.
 * Uniform floats: f32/bf16/f16 = (x >> 40) * 2^-24 computed in f32 then rounded to the dtype; f64 = (x >> 11) * 2^-53.
 */
static inline uint64_t tt_ir_rng_bits(uint64_t seed, uint64_t counter) {
    uint64_t x = seed ^ (counter * 0x9E3779B97F4A7C15ull);
    x ^= x >> 30;
    x *= 0xBF58476D1CE4E5B9ull;
    x ^= x >> 27;
    x *= 0x94D049BB133111EBull;
    x ^= x >> 31;
    return x;
}

/* ---- composition ---- */
/* Appends a copy of program p's nodes to b: parameter i of p becomes param_values[i] (a value of b of the same
 * type); out_values receives b's values for p's outputs (p->n_outputs of them). Used to trace a sequence of eager
 * ops into one program. */
tt_status tt_ir_builder_inline(tt_ir_builder *b, const tt_ir_program *p, const tt_ir_value *param_values,
                               tt_ir_value *out_values);

/* ---- bounded dynamic sizes (bucket.c) ----
 * Where a value carries the size being padded: per dim, 0 (not at all) or k >= 1: the dim is outer x size x k in
 * row-major order (k = 1: the size is the dim's innermost factor, e.g. a dim of its own). */
typedef struct tt_ir_bucket_pad {
    int64_t inner[TT_MAX_RANK];
} tt_ir_bucket_pad;
/* p for a bucket of `bucket` >= size >= 2: every dim that carries size (seeded by param_pads, one per parameter,
 * NULL entries unpadded; followed through the program) carries bucket instead, the real size is one more scalar
 * parameter (i64, last), and the real part of every value equals p's whatever the padding holds. out_pads
 * receives each output's padding (p->n_outputs). UNSUPPORTED, with the op and reason in tt_last_error(), when an
 * op has no exact rule for its padded operands (the caller runs p). Equal results for two sizes are one program
 * that computes both. */
tt_status tt_ir_bucket(const tt_ir_program *p, int64_t size, int64_t bucket, const tt_ir_bucket_pad *param_pads,
                       tt_ir_program **out, tt_ir_bucket_pad *out_pads);
/* After UNSUPPORTED: the parameter (index, or -1) whose real-size dims met padded values, and the padding it would
 * need: a caller able to pass it padded (an input that is really the same size) can seed it and try again. */
typedef struct tt_ir_bucket_want {
    int32_t param;
    tt_ir_bucket_pad pad;
} tt_ir_bucket_want;
/* scalars (may be NULL): per parameter, an integer scalar argument's value at hand. The pass may use one to prove
 * indices in range (a checked gather along a padded dim reads the same elements only if every index is below the
 * size); it then sets `used`, and the result holds only while that argument has that value. */
typedef struct tt_ir_bucket_scalar {
    bool known, used;
    int64_t value;
} tt_ir_bucket_scalar;
tt_status tt_ir_bucket_ex(const tt_ir_program *p, int64_t size, int64_t bucket, const tt_ir_bucket_pad *param_pads,
                          tt_ir_program **out, tt_ir_bucket_pad *out_pads, tt_ir_bucket_want *want,
                          tt_ir_bucket_scalar *scalars);
/* Where the size sits after reshaping dims src (padding sp) to dst: false if a dst dim would split it or hold it
 * twice. */
bool tt_ir_bucket_reshape(int64_t size, int32_t src_rank, const int64_t *src, const tt_ir_bucket_pad *sp,
                          int32_t dst_rank, const int64_t *dst, tt_ir_bucket_pad *dp);

/* ---- strided views of a flat value (view.c) ----
 * flat: a 1-d value of n elements (a whole storage). A view (offset, dims, strides in elements) whose strides nest
 * (contiguous, sliced, stepped, transposed, selected, diagonal, expanded views) is a box: slices, reshapes,
 * transposes, pads, broadcasts. Any other view in bounds (overlapping windows, as_strided) is a gather of its
 * elements, and written, a scatter (in the view's row-major order the last write to an element wins, as CPU's). */
/* Gather attributes that pick single elements of a 1-d operand: indices [..., 1] with the index in dim
 * index_vector_dim (element k of the result is operand[indices[k]]). */
tt_ir_attrs tt_ir_gather_elements_attrs(int32_t index_vector_dim);
bool tt_ir_view_in_bounds(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides);
/* Is the view a box (for_write: with no stride-0 dim), i.e. expressed without gather/scatter? */
bool tt_ir_view_expressible(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides,
                            bool for_write);
/* offset 0, row-major, n elements: the view is the whole flat value reshaped. */
bool tt_ir_view_is_whole(int64_t n, int64_t offset, int32_t rank, const int64_t *dims, const int64_t *strides);
/* *out = the view's elements (dims, flat's dtype). INVALID_ARGUMENT (nothing built) for a view out of bounds. */
tt_status tt_ir_view_read(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                          const int64_t *strides, tt_ir_value *out);
/* *out = flat with the view's elements replaced by update (dims of the view, flat's dtype). */
tt_status tt_ir_view_write(tt_ir_builder *b, tt_ir_value flat, int64_t offset, int32_t rank, const int64_t *dims,
                           const int64_t *strides, tt_ir_value update, tt_ir_value *out);

#ifdef __cplusplus
}
#endif
#endif /* TT_IR_H */
