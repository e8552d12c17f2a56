/* tt_lower.h — lowerings: one C function per ATen op (functional form) that builds IR for it.
 *
 * A lowering receives the op's arguments in schema order as tt_arg (tensors are already IR values, usually
 * parameters) and writes one IR value per tensor result into outs. It never allocates device memory and never
 * runs anything. In-place (add_) and out= (add.out) variants are not lowered separately: the shim runs the
 * functional lowering and writes the result into the target tensor (converting dtype, resizing out=).
 *
 * Lowerings are found by name in one table, keyed "aten::<name>.<overload>" ("aten::relu" when the overload is
 * empty). Each op family file (csrc/lower/<family>.c) defines its table:
 *
 *   static tt_status tt_lower_neg(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs,
 *                                 tt_ir_value *outs, int32_t nouts) {
 *       (void)nargs; (void)nouts;
 *       outs[0] = tt_ir_unary(ctx->b, TT_OP_NEGATE, args[0].value);
 *       return tt_ir_builder_status(ctx->b);
 *   }
 *   const tt_lower_entry tt_lower_table_elementwise[] = {
 *       {"aten::neg", tt_lower_neg},
 *       {NULL, NULL},
 *   };
 *
 * Returning TT_STATUS_UNSUPPORTED (e.g. for a dtype the lowering does not handle) makes the shim use PyTorch's
 * decomposition or the CPU fallback instead; other failures become Python exceptions.
 */
#ifndef TT_LOWER_H
#define TT_LOWER_H

#include "tt_core.h"
#include "tt_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tt_arg_kind {
    TT_ARG_NONE = 0, /* None for an optional argument */
    TT_ARG_TENSOR,   /* .value (IR value); .wrapped_number if it came from a Python number */
    TT_ARG_TENSORS,  /* .n values in .values; an entry is TT_IR_NONE for None in List[Optional[Tensor]] */
    TT_ARG_SCALAR,   /* at::Scalar: .dtype is TT_I64, TT_F64 or TT_BOOL and the value is in .i / .f / .b */
    TT_ARG_INT,      /* .i (also SymInt) */
    TT_ARG_INTS,     /* .n ints in .ints (int[], SymInt[]) */
    TT_ARG_FLOAT,    /* .f */
    TT_ARG_BOOL,     /* .b */
    TT_ARG_BOOLS,    /* .n bools in .ints (0/1) */
    TT_ARG_DTYPE,    /* .dtype (ScalarType) */
    TT_ARG_STRING,   /* .s */
    TT_ARG_OTHER     /* anything else (layout, device, memory_format, generator): ignore */
} tt_arg_kind;

typedef struct tt_arg {
    tt_arg_kind kind;
    tt_ir_value value;
    bool wrapped_number;
    tt_dtype dtype;
    int64_t i;
    double f;
    bool b;
    int32_t n;
    const int64_t *ints;
    const tt_ir_value *values;
    const char *s;
} tt_arg;

/* A host value bound to a SCALAR_PARAMETER at launch. */
typedef struct tt_lower_scalar {
    int32_t param_index;
    tt_dtype dtype;
    int64_t i;
    double f;
    int rng;            /* TT_LOWER_RNG_*: 0, or the seed / first counter of a tt_lower_rng draw */
    uint64_t rng_count; /* that draw's counters */
} tt_lower_scalar;

/* tt_lower_scalar.rng (the values of the runtime's tt_rt_rng_role, which the shim passes on) */
#define TT_LOWER_RNG_SEED 1
#define TT_LOWER_RNG_OFFSET 2
#define TT_LOWER_MAX_SCALARS 64

typedef struct tt_lower_ctx {
    tt_ir_builder *b;          /* borrowed */
    int device;
    tt_precision precision;    /* matmul/conv precision in force */
    /* Scalar parameters created by tt_lower_scalar_param, to be bound at launch (filled by the helpers). */
    int32_t n_scalars;
    tt_lower_scalar scalars[TT_LOWER_MAX_SCALARS];
    /* RNG: reserves count numbers on the op's generator (set by the shim; may be NULL in tests, then seed 0).
     * rng_user is opaque to the core: the shim passes the op's generator= there (NULL: the device's default). */
    void (*rng_reserve)(void *user, int device, uint64_t count, uint64_t *seed, uint64_t *offset);
    void *rng_user;
    /* torch.get_default_dtype() (set by the shim per op): the dtype float scalars, int true division and
     * factories without a dtype give. Zero-initialized means TT_F32; read it with tt_lower_default_float. */
    tt_dtype default_float;
} tt_lower_ctx;

typedef tt_status (*tt_lower_fn)(tt_lower_ctx *ctx, const tt_arg *args, int32_t nargs, tt_ir_value *outs,
                                 int32_t nouts);

typedef struct tt_lower_entry {
    const char *name; /* "aten::add.Tensor" */
    tt_lower_fn fn;
} tt_lower_entry;

/* The lowering for name, or NULL. Name lookups are hashed; safe from any thread after the first call. */
tt_lower_fn tt_lower_find(const char *name);
/* Calls fn(ctx, i, name) for every registered lowering name (for coverage reports). */
void tt_lower_foreach(void (*fn)(void *user, const char *name), void *user);
int32_t tt_lower_count(void);

/* ---- helpers every lowering uses (csrc/lower/lower_util.c) ---- */

/* PyTorch type promotion over the tensor and scalar arguments among args[0..n) (others are ignored):
 * dim>0 tensors outrank 0-dim tensors, which outrank wrapped numbers and scalars, unless a lower category has a
 * higher kind (bool < integer < floating). Scalars that are floats promote to the default dtype (that of the
 * ctx bound by tt_lower_bind; f32 when none is bound). */
tt_dtype tt_lower_result_type(const tt_arg *args, int32_t n);
/* Like above over an explicit list of argument indices. */
tt_dtype tt_lower_result_type_of(const tt_arg *args, int32_t n_idx, const int32_t *idx);

/* Numpy broadcasting of two shapes; TT_STATUS_INVALID_ARGUMENT with PyTorch's message if incompatible. */
tt_status tt_lower_broadcast_shapes(int32_t ra, const int64_t *da, int32_t rb, const int64_t *db, int32_t *rank,
                                    int64_t *dims);
/* x converted to dtype and broadcast (numpy rules) to the shape; returns x itself when nothing changes. */
tt_ir_value tt_lower_to(tt_lower_ctx *ctx, tt_ir_value x, tt_dtype dt, int32_t rank, const int64_t *dims);
/* A 0-d constant (structural: part of the program). */
tt_ir_value tt_lower_const(tt_lower_ctx *ctx, tt_dtype dt, double v);
/* A constant broadcast to a shape. */
tt_ir_value tt_lower_full(tt_lower_ctx *ctx, tt_dtype dt, int32_t rank, const int64_t *dims, double v);
/* A 0-d scalar parameter holding a host value (not part of the program's hash); i used for int/bool dtypes. */
tt_ir_value tt_lower_scalar_param(tt_lower_ctx *ctx, tt_dtype dt, int64_t i, double f);
/* The IR value of a TENSOR or SCALAR argument, as dtype dt (a scalar becomes a scalar parameter). */
tt_ir_value tt_lower_arg(tt_lower_ctx *ctx, const tt_arg *a, tt_dtype dt);
/* Numeric value of a SCALAR / INT / FLOAT / BOOL argument as double. */
double tt_lower_arg_double(const tt_arg *a);
/* dim in [-rank, rank) -> [0, rank); an out-of-range dim records TT_STATUS_INDEX in the builder and returns 0.
 * rank 0 accepts -1 and 0. */
int64_t tt_lower_wrap_dim(tt_lower_ctx *ctx, int64_t dim, int32_t rank);
/* Random numbers: seed and offset as i64 scalar parameters for count numbers (reserved on the generator). */
void tt_lower_rng(tt_lower_ctx *ctx, uint64_t count, tt_ir_value *seed, tt_ir_value *offset);
/* Shape of an IR value (borrowed: valid only until the next builder call, which may move it; copy it first). */
const tt_ir_type *tt_lower_type(tt_lower_ctx *ctx, tt_ir_value v);

/* Additions (lower-elementwise). tt_lower_result_type has no ctx, so it reads the dtype and rank of TENSOR
 * arguments from the builder bound to the calling thread by tt_lower_bind(ctx) (the shim binds ctx before
 * calling a lowering and unbinds with NULL after; tests do the same). With no builder bound it falls back to
 * the argument's own .dtype (tensor dtype) and .n (tensor rank), which the shim then must fill. */
void tt_lower_bind(const tt_lower_ctx *ctx);
/* tt_lower_result_type reading tensor types from ctx's builder (no binding needed): over args[idx[0..n)],
 * or over args[0..n) when idx is NULL. Prefer this one inside lowerings. */
tt_dtype tt_lower_result_type_ctx(tt_lower_ctx *ctx, const tt_arg *args, int32_t n, const int32_t *idx);
/* c10::promoteTypes for two dtypes (u8 with i8 -> i16, f16 with bf16 -> f32, bool with x -> x, ...). */
tt_dtype tt_lower_promote_types(tt_dtype a, tt_dtype b);
/* PyTorch's "opmath" type: f32 for bf16/f16 (compute composites there and convert back), dt otherwise. */
tt_dtype tt_lower_opmath(tt_dtype dt);
/* Broadcasts n values in place to their common (numpy) shape, keeping each dtype. False (error recorded in
 * the builder, PyTorch's message) if the shapes are incompatible. */
bool tt_lower_broadcast_values(tt_lower_ctx *ctx, int32_t n, tt_ir_value *vals);
/* tt_lower_arg(args[i], dt) for each of n arguments, then broadcast to the common shape into out[0..n). */
bool tt_lower_broadcast_args(tt_lower_ctx *ctx, int32_t n, const tt_arg *const *args, tt_dtype dt,
                             tt_ir_value *out);
/* A constant v with x's dtype and shape. */
tt_ir_value tt_lower_like(tt_lower_ctx *ctx, tt_ir_value x, double v);

/* Additions (dedupe): helpers that several family files had private copies of. */
/* A copy of v's type by value (all zero for TT_IR_NONE or a value without a type). */
tt_ir_type tt_lower_type_copy(tt_lower_ctx *ctx, tt_ir_value v);
/* A copy of v's type in *store, returning store, or NULL (store untouched) if v has no type. */
const tt_ir_type *tt_lower_type_into(tt_lower_ctx *ctx, tt_ir_value v, tt_ir_type *store);
/* Records TT_STATUS_UNSUPPORTED "<what>: unsupported arguments on tpu" in the builder and returns it. */
tt_status tt_lower_unsupported(tt_lower_ctx *ctx, const char *what);
/* Records TT_STATUS_UNSUPPORTED "<op>: dtype <dt> not lowered" in the builder and returns it. */
tt_status tt_lower_unsupported_dtype(tt_lower_ctx *ctx, const char *op, tt_dtype dt);
/* dtype of v, or TT_F32 if v has no type. */
tt_dtype tt_lower_dtype_of(tt_lower_ctx *ctx, tt_ir_value v);
/* A TENSOR or SCALAR argument converted to like's dtype and broadcast to like's shape (TT_IR_NONE if like has
 * no type). */
tt_ir_value tt_lower_arg_like(tt_lower_ctx *ctx, const tt_arg *a, tt_ir_value like);
/* outs[0] = v converted to dt; returns the builder's status. */
tt_status tt_lower_done(tt_lower_ctx *ctx, tt_ir_value *outs, tt_ir_value v, tt_dtype dt);
/* x op y, with y converted to x's dtype and broadcast (numpy rules) to x's shape. */
tt_ir_value tt_lower_binary_like(tt_lower_ctx *ctx, tt_ir_op op, tt_ir_value x, tt_ir_value y);

/* ---- semantics (issue 5): default dtype, output_mask ---- */
/* ctx->default_float when it is a float dtype, else TT_F32 (also for a NULL ctx). */
tt_dtype tt_lower_default_float(const tt_lower_ctx *ctx);
/* Whether backward output k is wanted by an output_mask argument (bool[]); true when mask is NULL, not a bool
 * list, or shorter than k. A lowering leaves an unwanted output TT_IR_NONE (an undefined tensor, as on CPU). */
bool tt_lower_output_wanted(const tt_arg *mask, int32_t k);
/* Gather attributes that pick one element of a 1-d operand per index (indices' last dim, index_vector_dim, holds
 * the position): the shape shared by every "take element i of a table" lowering. */
tt_ir_attrs tt_lower_gather_elements_attrs(int32_t index_vector_dim, bool check_bounds);
/* The matching scatter: each index names one element of a 1-d operand, combined by kind (TT_REDUCE_NONE replaces);
 * out-of-range indices are skipped unless check_bounds. */
tt_ir_attrs tt_lower_scatter_elements_attrs(int32_t index_vector_dim, tt_ir_reduce_kind kind, bool check_bounds);

/* Family tables (each file under csrc/lower/ defines one; terminated by {NULL, NULL}). */
extern const tt_lower_entry tt_lower_table_elementwise[];
extern const tt_lower_entry tt_lower_table_reduce[];
extern const tt_lower_entry tt_lower_table_shape[];
extern const tt_lower_entry tt_lower_table_matmul[];
extern const tt_lower_entry tt_lower_table_conv[];
extern const tt_lower_entry tt_lower_table_index[];
extern const tt_lower_entry tt_lower_table_nn[];
extern const tt_lower_entry tt_lower_table_random[];
extern const tt_lower_entry tt_lower_table_sort[];
extern const tt_lower_entry tt_lower_table_creation[];
extern const tt_lower_entry tt_lower_table_dynamic[];    /* dynamic.c: static forms of data-dependent ops */
extern const tt_lower_entry tt_lower_table_activation[]; /* activation.c (elementwise family, second file) */
/* Additions (lower-gaps). */
extern const tt_lower_entry tt_lower_table_resample[];   /* resample.c: upsample, reflection/replication pad */
extern const tt_lower_entry tt_lower_table_special[];    /* special.c: glu, log_sigmoid, polygamma, cross, norm */
extern const tt_lower_entry tt_lower_table_search[];     /* search.c: searchsorted, bucketize, isin, masked_scatter */
extern const tt_lower_entry tt_lower_table_pool[];       /* pool.c: max_pool3d_with_indices, avg_pool3d */

#ifdef __cplusplus
}
#endif
#endif /* TT_LOWER_H */
