/* host_internal.h — shared internals of the host driver's interpreter (host_compile.c, host_exec.c and the kernel
 * families host_elementwise.c, host_movement.c, host_index.c, host_reduce.c, host_sort.c, host_util.c). Not public.
 *
 * Every non-leaf node computes into a contiguous row-major temporary laid out as its result type. Kernels get
 * the program, the node and `vals` (per program value: its data, borrowed from the execution's arena, the
 * program's constant pool or a parameter buffer), plus `scratch`, a per-node arena block of
 * tt_host_scratch_bytes(p, node) bytes, 64-byte aligned.
 */
#ifndef TT_HOST_INTERNAL_H
#define TT_HOST_INTERNAL_H

#include "host_kernels.h"

/* Elements per block in blocked elementwise loops (stack buffers of this many compute values). */
#define TT_HOST_BLOCK 512

/* Elements below which loops do not go to the thread pool. */
#define TT_HOST_GRAIN 32768

/* Compute classes: bf16/f16 compute in f32, every integer and bool computes in i64. */
typedef enum tt_host_class { TT_HOST_CF32, TT_HOST_CF64, TT_HOST_CI64 } tt_host_class;

static inline tt_host_class tt_host_class_of(tt_dtype dt) {
    if (dt == TT_F64) return TT_HOST_CF64;
    if (dt == TT_F32 || dt == TT_BF16 || dt == TT_F16) return TT_HOST_CF32;
    return TT_HOST_CI64;
}

static inline int64_t tt_host_numel(const tt_ir_type *t) { return tt_numel(t->rank, t->dims); }

static inline const void *tt_host_in(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, int i) {
    return vals[p->operands[n->inputs_offset + i]];
}
static inline const tt_ir_type *tt_host_in_type(const tt_ir_program *p, const tt_ir_node *n, int i) {
    return &p->types[p->operands[n->inputs_offset + i]];
}

/* ---- host_driver.c / host_compile.c / host_exec.c ---- */
void *tt_host_buffer_data(tt_buffer *buf);
size_t tt_host_buffer_size(const tt_buffer *buf);
tt_status tt_host_compile(tt_ir_program *p, tt_executable **out);
/* Compiles a chunk copy of a program (host_rows.c): no row plan of its own; the executable frees p->types and p
 * (not the shared nodes) and does not retain p. */
tt_status tt_host_compile_chunk(tt_ir_program *p, tt_executable **out);
void tt_host_executable_free(tt_executable *exe);
size_t tt_host_executable_scratch_bytes(const tt_executable *exe); /* arenas kept now (its row chunks' included) */
tt_status tt_host_execute(tt_executable *exe, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                          int32_t n_results);

/* ---- host_packcache.c: packed GEMM operands kept across executions ---- */
/* An argument buffer the running execution reads and does not write: its bytes, id (never reused) and write
 * generation. host_driver.c sets them (thread-local) around an execution; NULL, 0 clears. */
typedef struct tt_host_ro_span {
    const char *base;
    size_t nbytes;
    uint64_t id, gen;
} tt_host_ro_span;
void tt_host_ro_set(const tt_host_ro_span *spans, int32_t n);
#define TT_HOST_PACK_LAYOUT 8
typedef struct tt_host_pack_key {
    uint64_t id, gen;
    size_t offset;                        /* of the operand's first element in its buffer */
    int64_t layout[TT_HOST_PACK_LAYOUT]; /* everything else the packed bytes depend on */
} tt_host_pack_key;
typedef struct tt_host_pack_entry tt_host_pack_entry;
/* The key of an operand at p when it lies in a read-only argument buffer of this execution; false otherwise. */
bool tt_host_pack_key_for(const void *p, const int64_t *layout, int n_layout, tt_host_pack_key *out);
/* NULL: pack as usual (not kept, or being packed by another GEMM). Else *data holds `bytes`: already packed
 * (*filled) or to be packed now by the caller; either way release the entry when the GEMM is done. */
tt_host_pack_entry *tt_host_pack_acquire(const tt_host_pack_key *k, size_t bytes, void **data, bool *filled);
void tt_host_pack_release(tt_host_pack_entry *e, bool filled_ok);
void tt_host_pack_forget(uint64_t id); /* a freed buffer's entries go */
void tt_host_pack_stats(int64_t *hits, int64_t *fills, size_t *bytes);

/* ---- host_util.c: conversions and strided copies ---- */
/* Loads n elements of dtype dt into a compute array (any dtype to any class; float->int saturates, NaN -> 0). */
void tt_host_load_f32(tt_dtype dt, const void *src, int64_t n, float *dst);
void tt_host_load_f64(tt_dtype dt, const void *src, int64_t n, double *dst);
void tt_host_load_i64(tt_dtype dt, const void *src, int64_t n, int64_t *dst);
/* Stores n compute values as dtype dt (rounding to bf16/f16, wrapping integers, bool = x != 0). */
void tt_host_store_f32(tt_dtype dt, const float *src, int64_t n, void *dst);
void tt_host_store_f64(tt_dtype dt, const double *src, int64_t n, void *dst);
void tt_host_store_i64(tt_dtype dt, const int64_t *src, int64_t n, void *dst);
/* Float to int64 without UB: truncates toward zero, NaN -> 0, out of range saturates. */
int64_t tt_host_f64_to_i64(double v);
/* Copies a rank-dimensional block of elements of es bytes: dst[doff + sum i*dstr] = src[soff + sum i*sstr]
 * (offsets and strides in elements, strides may be 0 or negative). Parallel when large. */
void tt_host_strided_copy(size_t es, int32_t rank, const int64_t *dims, void *dst, int64_t doff,
                          const int64_t *dstr, const void *src, int64_t soff, const int64_t *sstr);
/* Row-major strides (in elements) of a shape. */
void tt_host_contiguous_strides(int32_t rank, const int64_t *dims, int64_t *strides);
/* Fills n elements of es bytes with the value at val. */
void tt_host_fill(size_t es, void *dst, int64_t n, const void *val);

/* ---- kernels (one per family file); all return TT_OK or an error status with a message ---- */
typedef tt_status (*tt_host_kernel)(const tt_ir_program *p, const tt_ir_node *n, void *const *vals,
                                    void *scratch);
tt_status tt_host_elementwise(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_convert(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_select(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_iota(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_rng_uniform(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_movement(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_gather(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_scatter(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_reduce(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_arg_reduce(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_cumulative(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
tt_status tt_host_sort(const tt_ir_program *p, const tt_ir_node *n, void *const *vals, void *scratch);
/* One contiguous row of n values reduced exactly as tt_host_reduce reduces each row of a trailing-dims reduce
 * (fused row groups call it, so their results equal the unfused kernel's bit for bit). */
float tt_host_reduce_row_f32(tt_ir_reduce_kind kind, const float *x, int64_t n);
double tt_host_reduce_row_f64(tt_ir_reduce_kind kind, const double *x, int64_t n);

/* Compute-only elementwise math over m compute values of class cls (host_elementwise.c), used by the unfused
 * kernels and by fused groups (host_fuse.c). dt is the operand dtype (integer width and bool rules); o may equal
 * an input. Compare / is_finite write 0/1 bytes. tt_host_ew_type_ok: false where tt_host_elementwise would
 * report a type error. */
void tt_host_ew_math(tt_host_class cls, tt_ir_op op, tt_dtype dt, const void *a, const void *b, const void *c, void *o,
                     int64_t m);
void tt_host_ew_compare(tt_host_class cls, tt_ir_op op, tt_ir_cmp cmp, const void *a, const void *b, uint8_t *o,
                        int64_t m);
bool tt_host_ew_type_ok(tt_ir_op op, tt_dtype dt, tt_dtype odt);

/* ---- host_rows.c: row-chunked execution ----
 * A program whose every node keeps the leading dim (elementwise, broadcasts and reshapes that keep it, reductions
 * over other dims; small leaves read whole) runs as a sequence of row blocks sized to stay in cache, in parallel
 * over the pool. tt_host_rows_plan sets *out to NULL when the program does not qualify. tt_host_rows_execute
 * sets *declined (and returns TT_OK, touching nothing) when the views alias in a way blocks cannot honour: then
 * the caller runs the whole program. Otherwise it returns the blocks' status: a block that fails may have
 * written part of the results (in-place inputs included), so the caller must not re-run the program. */
typedef struct tt_host_rows tt_host_rows;
tt_status tt_host_rows_plan(const tt_ir_program *p, tt_host_rows **out);
int64_t tt_host_rows_blocks(const tt_host_rows *r);               /* 0 for NULL */
int64_t tt_host_executable_row_blocks(const tt_executable *e);    /* 0: runs whole */
void tt_host_rows_free(tt_host_rows *r);
/* Testing only: block (>= 0) of this plan fails with TT_STATUS_INTERNAL instead of running; -1 (the default)
 * turns that off. Lets a C test prove a failed block is not answered by a re-run over written inputs. */
void tt_host_rows_fail_block(tt_host_rows *r, int64_t block);
void tt_host_executable_fail_row_block(tt_executable *e, int64_t block);
tt_status tt_host_rows_execute(tt_host_rows *r, const tt_exec_arg *args, int32_t n_args, const tt_exec_arg *results,
                               int32_t n_results, bool *declined);

/* ---- host_fuse.c: fused elementwise groups ----
 * tt_host_fuse_plan groups the program's elementwise nodes (with the reductions over trailing dims between them
 * and the broadcasts of their results back over those dims) (owned by caller: tt_host_fuse_free). A node in a
 * group (group_of >= 0) does not run alone: the whole group runs with tt_host_fuse_run when the interpreter
 * reaches tt_host_fuse_exec_node, with tt_host_fuse_scratch_bytes of 64-byte aligned scratch. Internal values
 * never get memory (their vals entry is unused). */
typedef struct tt_host_fusion tt_host_fusion;
tt_status tt_host_fuse_plan(const tt_ir_program *p, tt_host_fusion **out);
void tt_host_fuse_free(tt_host_fusion *f);
int32_t tt_host_fuse_n_groups(const tt_host_fusion *f);
int32_t tt_host_fuse_group_of(const tt_host_fusion *f, int32_t node);
int32_t tt_host_fuse_exec_node(const tt_host_fusion *f, int32_t group);
bool tt_host_fuse_internal(const tt_host_fusion *f, tt_ir_value v);
/* A group output stored by another output of its group (the same bytes: a reshape of it), or -1. It gets no
 * memory; tt_host_fuse_bind_aliases points it at its root's once the group's values have their places. */
tt_ir_value tt_host_fuse_alias(const tt_host_fusion *f, tt_ir_value v);
void tt_host_fuse_bind_aliases(const tt_host_fusion *f, int32_t group, void **vals);
size_t tt_host_fuse_scratch_bytes(const tt_host_fusion *f, int32_t group);
/* Whether value out (computed by a group or a plain elementwise node) may be written into the memory of parameter
 * value param, viewed the same way: every read of param is at the element's own index, in the same group or node,
 * no later than out's write (tile by tile), and nothing else reads param. */
bool tt_host_fuse_may_overwrite(const tt_host_fusion *f, const tt_ir_program *p, tt_ir_value out, tt_ir_value param);
tt_status tt_host_fuse_run(const tt_host_fusion *f, int32_t group, const tt_ir_program *p, void *const *vals,
                           void *scratch);

/* Scratch bytes a node's kernel needs (0 for most). */
size_t tt_host_scratch_bytes(const tt_ir_program *p, const tt_ir_node *n);

/* Vectorized f32 exp, tanh, erf (host_math.c), correctly rounded but for rare near-tie cases; o may equal x. */
void tt_host_vexp_f32(const float *x, float *o, int64_t m);
void tt_host_vtanh_f32(const float *x, float *o, int64_t m);
void tt_host_verf_f32(const float *x, float *o, int64_t m);

/* Special functions (host_special.c), in double; f32 callers round the result. */
double tt_host_erfinv(double x);
double tt_host_digamma(double x);

#endif
