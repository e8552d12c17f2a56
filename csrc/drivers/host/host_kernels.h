/* host_kernels.h — internal interface between the host driver's interpreter (host_driver.c, host_exec.c) and its
 * heavy kernels (matmul, convolution, windows) and thread pool. Not a public header.
 *
 * Kernels take contiguous row-major buffers laid out as the node's operand and result types (tt_ir_type of the
 * program's values) and write the full result. They dispatch on CPU features at run time.
 */
#ifndef TT_HOST_KERNELS_H
#define TT_HOST_KERNELS_H

#include "tt_core.h"
#include "tt_driver.h"
#include "tt_ir.h"

/* dot_general with the node's dimension numbers and precision. Operand dtypes: f32, bf16, f16, f64, integers. */
tt_status tt_host_dot_general(const tt_ir_program *p, const tt_ir_node *node, const void *lhs, const void *rhs,
                              void *out);
/* convolution in PyTorch layouts (input N,C,spatial...; kernel O,I/groups,spatial...; output N,O,spatial...)
 * with the node's strides, padding, dilations, feature and batch group counts and precision. */
tt_status tt_host_convolution(const tt_ir_program *p, const tt_ir_node *node, const void *input, const void *kernel,
                              void *out);
/* reduce_window with the node's attributes. */
tt_status tt_host_reduce_window(const tt_ir_program *p, const tt_ir_node *node, const void *x, void *out);

/* Thread pool: runs fn over [0, n) split into chunks of at least grain, on all worker threads plus the caller.
 * Runs inline when n <= grain or when called from inside a pool task. */
typedef void (*tt_host_range_fn)(void *user, int64_t begin, int64_t end);
void tt_host_parallel_for(int64_t n, int64_t grain, tt_host_range_fn fn, void *user);

#endif
