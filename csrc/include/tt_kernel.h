/* tt_kernel.h — custom kernels: plain C functions that run inside programs, on every driver.
 *
 * A kernel is registered once per process under a name and called from a program by tt_ir_custom_call(b, name,
 * ...). The host driver calls the function directly, between the program's other nodes; the PJRT driver prints the
 * call as a typed XLA FFI custom call to one handler of its own ("torchtpu_kernel", the kernel's name as attribute),
 * which the plugin runs inside the compiled program and which calls the same function. Either way the kernel sees
 * dense row-major tensors, its inputs read-only and its outputs to fill completely.
 *
 *   static tt_status axpy(void *user, const tt_kernel_tensor *in, int32_t n_in, tt_kernel_tensor *out,
 *                         int32_t n_out) {
 *       if (n_in != 2 || n_out != 1 || in[0].dtype != TT_F32) return tt_error(TT_STATUS_TYPE, "axpy: f32 only");
 *       ...
 *   }
 *   tt_kernel_register("axpy", axpy, NULL);
 *   tt_ir_value y = tt_ir_custom_call(b, "axpy", 2, xs, &result_type);
 *
 * A failing kernel returns a status with tt_error's message; the execution fails with that status (on PJRT: the
 * plugin's error carrying the message). Kernels run on the driver's threads, possibly several at once. */
#ifndef TT_KERNEL_H
#define TT_KERNEL_H

#include "tt_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_kernel_tensor {
    tt_dtype dtype;
    int32_t rank;
    const int64_t *dims; /* rank entries */
    void *data;          /* dense, row-major */
} tt_kernel_tensor;

typedef tt_status (*tt_kernel_fn)(void *user, const tt_kernel_tensor *inputs, int32_t n_inputs,
                                  tt_kernel_tensor *outputs, int32_t n_outputs);

/* Registers fn under name (1 to 63 characters of [A-Za-z0-9_.]) for the life of the process. Registering a name
 * again with the same fn and user is a no-op; with another, INVALID_ARGUMENT (a running program may hold it). */
tt_status tt_kernel_register(const char *name, tt_kernel_fn fn, void *user);
/* TT_OK, or UNSUPPORTED naming the first custom call of program p (a tt_ir_program) whose kernel is not
 * registered: what a driver checks before it compiles. */
struct tt_ir_program;
tt_status tt_kernel_check_program(const struct tt_ir_program *p);
/* Calls the kernel registered under name (name_len bytes, not necessarily terminated) on dense tensors; its status,
 * an error message prefixed "kernel <name>: ". UNSUPPORTED when no kernel has that name. */
tt_status tt_kernel_call(const char *name, size_t name_len, const tt_kernel_tensor *inputs, int32_t n_inputs,
                         tt_kernel_tensor *outputs, int32_t n_outputs);

#ifdef __cplusplus
}
#endif
#endif /* TT_KERNEL_H */
