/* tt_driver.h — the driver interface: what the runtime needs from a device, as a vtable plus a context.
 *
 * A driver owns device memory (opaque tt_buffer handles), copies bytes between host and device, compiles IR
 * programs into executables and runs them. The runtime holds drivers only through tt_driver; nothing above a
 * driver ever dereferences device memory. Shaped after PJRT and ggml-backend: struct_size first, functions only
 * ever appended, optional members may be NULL (the default behaviour is stated beside each).
 *
 *   tt_driver *d = tt_host_driver_create(2);          // two virtual devices
 *   tt_buffer *buf = NULL;
 *   d->iface.buffer_alloc(d->ctx, 0, 64, &buf);
 *   d->iface.write(d->ctx, buf, 0, host_src, 64);
 *   tt_executable *exe = NULL;
 *   d->iface.compile(d->ctx, program, &exe);
 *   d->iface.execute(d->ctx, 0, exe, args, n_args, outs, n_outs);
 *   d->iface.executable_free(d->ctx, exe);
 *   d->iface.buffer_free(d->ctx, buf);
 *   tt_driver_destroy(d);
 */
#ifndef TT_DRIVER_H
#define TT_DRIVER_H

#include "tt_core.h"
#include "tt_ir.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tt_buffer tt_buffer;         /* driver-defined device allocation */
typedef struct tt_executable tt_executable; /* driver-defined compiled program */

/* One argument or result of an execution.
 * Tensor: a strided view into a buffer (shape and dtype come from the program's parameter/output type;
 *         offset and strides are in elements). Results may be strided views too (in-place writes); a driver
 *         must compute every result before writing any, since results may alias arguments.
 * Scalar: the value of a SCALAR_PARAMETER (i for integer/bool dtypes, f for floats). */
typedef struct tt_exec_arg {
    tt_buffer *buffer;                /* NULL for a scalar */
    int64_t offset;
    int64_t strides[TT_MAX_RANK];
    int64_t i;
    double f;
} tt_exec_arg;

typedef struct tt_driver_memory_stats {
    size_t bytes_in_use;
    size_t bytes_limit; /* 0 = unlimited */
} tt_driver_memory_stats;

typedef struct tt_driver_i {
    size_t struct_size; /* sizeof(tt_driver_i) of the driver's build */
    const char *name;   /* "host", "pjrt" */
    int32_t version;

    int (*device_count)(void *ctx);
    /* Allocation. An allocation over the device's limit is TT_STATUS_OUT_OF_MEMORY. nbytes may be 0. */
    tt_status (*buffer_alloc)(void *ctx, int device, size_t nbytes, tt_buffer **out);
    void (*buffer_free)(void *ctx, tt_buffer *buf); /* accepts NULL */
    /* An address that identifies the buffer for PyTorch's DataPtr. The host driver returns real host memory;
     * other drivers return any unique non-NULL token. Never dereferenced above the driver. */
    void *(*buffer_address)(void *ctx, tt_buffer *buf);
    /* Synchronous byte copies. */
    tt_status (*write)(void *ctx, tt_buffer *dst, size_t dst_offset, const void *src, size_t nbytes);
    tt_status (*read)(void *ctx, tt_buffer *src, size_t src_offset, void *dst, size_t nbytes);
    tt_status (*copy)(void *ctx, tt_buffer *dst, size_t dst_offset, tt_buffer *src, size_t src_offset,
                      size_t nbytes); /* may cross devices of one driver */
    /* Compilation. The executable may keep a reference to the program (tt_ir_program_retain). */
    tt_status (*compile)(void *ctx, tt_ir_program *program, tt_executable **out);
    void (*executable_free)(void *ctx, tt_executable *exe); /* accepts NULL */
    /* Runs exe on device with args (one per program parameter, in order) and results (one per program
     * output). Synchronous from the caller's view: buffers are final when it returns. */
    tt_status (*execute)(void *ctx, int device, tt_executable *exe, const tt_exec_arg *args, int32_t n_args,
                         const tt_exec_arg *results, int32_t n_results);
    /* Optional: may NULL. Whether the driver can run this op (default: every op). */
    bool (*supports_op)(void *ctx, tt_ir_op op, tt_dtype dtype);
    tt_status (*memory_stats)(void *ctx, int device, tt_driver_memory_stats *out); /* optional */
    void (*destroy)(void *ctx);
    /* Optional (may be NULL; check struct_size): host scratch bytes the executable holds now (arenas kept for
     * later executions), so the runtime can count them in memory stats. They are freed with the executable. */
    size_t (*executable_scratch_bytes)(void *ctx, const tt_executable *exe);
    /* Optional (may be NULL; check struct_size): TT_DRIVER_CAP_* bits. Without a bit the runtime gives the driver
     * only whole, dense buffers (offset 0, row-major strides), every view and aliasing write an IR op. */
    uint64_t (*capabilities)(void *ctx);
    /* Optional (may be NULL; check struct_size), both or neither: the persistent cache keeps executables on disk
     * across processes. serialize returns malloc'd bytes; deserialize rebuilds an executable of program from them
     * (an error means the bytes are unusable: the runtime compiles instead). identity names what the bytes
     * depend on beyond the program (plugin and version, target); NULL = name and version. */
    tt_status (*executable_serialize)(void *ctx, const tt_executable *exe, void **bytes, size_t *n);
    tt_status (*executable_deserialize)(void *ctx, tt_ir_program *program, const void *bytes, size_t n,
                                        tt_executable **out);
    const char *(*identity)(void *ctx);
    /* Optional (may be NULL; check struct_size): how many executables the driver can hold at once (0 = no limit);
     * the runtime keeps its compile cache within it. XLA's CPU executables take ~20 memory mappings each, and a
     * process has max_map_count of them (65530 by default): past that, XLA's JIT fails. */
    int64_t (*max_executables)(void *ctx);
} tt_driver_i;

/* The driver reads and writes strided views of buffers in place (offsets, strides, results aliasing arguments):
 * an optimisation the runtime uses when the bit is set. */
#define TT_DRIVER_CAP_STRIDED_VIEWS 1u

typedef struct tt_driver {
    tt_driver_i iface;
    void *ctx;
} tt_driver;

void tt_driver_destroy(tt_driver *d); /* calls iface.destroy and frees d; accepts NULL */

/* The embedded host driver: n_devices virtual devices sharing this CPU; memory_limit bytes per device (0 = none).
 * Returns NULL on out of memory. Kernels dispatch on CPU features at run time. */
tt_driver *tt_host_driver_create(int n_devices, size_t memory_limit);
/* The PJRT driver: loads the PJRT C API plugin at plugin_path (OpenXLA's CPU plugin, libtpu), creates a client with
 * n_devices addressable devices (or the plugin's own count, if lower), memory_limit bytes per device (0 = none).
 * UNSUPPORTED when this build has no PJRT driver; the plugin's own message on any failure. */
tt_status tt_pjrt_driver_create(const char *plugin_path, int n_devices, size_t memory_limit, tt_driver **out);
/* The plugin's platform name ("cpu", "tpu") if d is a PJRT driver, else NULL. */
const char *tt_pjrt_platform(const tt_driver *d);
/* An ahead-of-time compile for a device that is not here (libtpu: no TPU needed). Bytes are XLA's figures for one
 * chip; costs are the plugin's cost analysis ("flops", "bytes accessed", ...). */
#define TT_PJRT_AOT_MAX_COSTS 16
typedef struct tt_pjrt_aot_result {
    void *executable; /* the serialized executable (malloc'd; tt_pjrt_aot_result_free) */
    size_t executable_size;
    int64_t argument_bytes, output_bytes, alias_bytes, temp_bytes, generated_code_bytes, peak_bytes;
    int32_t n_costs;
    struct {
        char name[48];
        double value;
    } costs[TT_PJRT_AOT_MAX_COSTS];
} tt_pjrt_aot_result;
/* Compiles StableHLO text for topology (e.g. "v5e:2x2") with the plugin at plugin_path, without a client. A
 * program too large for the chip is the plugin's error (TT_STATUS_OUT_OF_MEMORY for RESOURCE_EXHAUSTED). */
tt_status tt_pjrt_aot_compile(const char *plugin_path, const char *topology, const char *stablehlo,
                              tt_pjrt_aot_result *out);
void tt_pjrt_aot_result_free(tt_pjrt_aot_result *r);
/* Number of worker threads the host driver uses (the thread pool is process-wide). */
int tt_host_num_threads(void);
/* CPU features found at run time, e.g. "avx512bf16 avx512f avx2" (borrowed, static). */
const char *tt_host_cpu_features(void);

#ifdef __cplusplus
}
#endif
#endif /* TT_DRIVER_H */
