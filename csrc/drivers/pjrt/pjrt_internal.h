/* pjrt_internal.h — the PJRT driver's shared state: the plugin's function table, the client and its devices.
 *
 * Built against the pjrt_c_api.h that the installed plugin package ships (the Makefile finds it; never vendored).
 * Every call goes through pj_call-style helpers in pjrt_client.c that turn a PJRT_Error into a tt_status carrying
 * the plugin's message. Functions beyond the plugin's api->struct_size are treated as absent. */
#ifndef TT_PJRT_INTERNAL_H
#define TT_PJRT_INTERNAL_H

#include "tt_driver.h"
#include "../device_bytes.h"

#include <pjrt_c_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

/* An args struct, zeroed, with the size of this header's version (plugins accept a caller's struct of their own
 * size or larger, and read only the fields a struct of that size has). */
#define PJ_ARGS(T, v)                                                                                                 \
    T v;                                                                                                              \
    memset(&v, 0, sizeof v);                                                                                          \
    v.struct_size = T##_STRUCT_SIZE

/* Whether the plugin's table reaches function fn (newer functions are appended; an older plugin lacks them). */
#define PJ_HAS(api, fn)                                                                                               \
    ((api)->struct_size >= offsetof(PJRT_Api, fn) + sizeof(void *) && (api)->fn != NULL)

typedef struct pj_ctx {
    const PJRT_Api *api;
    PJRT_Client *client;
    PJRT_Device *const *devices; /* addressable devices, owned by the client */
    tt_device_bytes bytes;       /* addressable devices used, per device bytes of live tt_buffers, the limit */
    bool unsafe_pointer;         /* "cpu" platform: a ready buffer's memory is host memory (no ToHostBuffer) */
    bool tpu_numerics;           /* the plugin honours precision_config as a TPU does (else: tt_ir_expand_precision) */
    char platform[32];           /* "cpu", "tpu", ... */
    char no_kernels[160];        /* why custom kernels cannot run ("" = they can: pjrt_ffi.c) */
    char identity[256];          /* what serialized executables depend on: plugin file, platform, version */
} pj_ctx;

/* Turns err (may be NULL) into a status with "what: <plugin message>"; destroys err. */
tt_status tt_pjrt_status(const PJRT_Api *api, PJRT_Error *err, const char *what);
/* Waits for ev and destroys it; the event's error, if any, as a status. ev may be NULL. */
tt_status tt_pjrt_await(const PJRT_Api *api, PJRT_Event *ev, const char *what);
/* Loads the plugin at path (once per process; never unloaded), checks its version and initialises it. */
tt_status tt_pjrt_load(const char *path, const PJRT_Api **out);
/* Client with n_devices addressable devices (the CPU plugin is told how many; other plugins have their own). */
tt_status tt_pjrt_client_create(pj_ctx *c, const char *plugin_path, int n_devices);
void tt_pjrt_client_destroy(pj_ctx *c);

/* Executables: compile from the program's StableHLO, serialize, rebuild from bytes, free. */
tt_status tt_pjrt_compile(void *ctx, tt_ir_program *program, tt_executable **out);
void tt_pjrt_executable_free(void *ctx, tt_executable *exe);
tt_status tt_pjrt_serialize(void *ctx, const tt_executable *exe, void **bytes, size_t *n);
tt_status tt_pjrt_deserialize(void *ctx, tt_ir_program *program, const void *bytes, size_t n, tt_executable **out);
PJRT_LoadedExecutable *tt_pjrt_loaded(const tt_executable *exe);
const tt_ir_program *tt_pjrt_program(const tt_executable *exe);
const tt_ir_bounds_check *tt_pjrt_checks(const tt_executable *exe, int32_t *n); /* extra outputs after the program's */

/* Registers the custom kernel handler (pjrt_ffi.c) with the plugin, once per process; on failure, why. */
tt_status tt_pjrt_ffi_register(const PJRT_Api *api, char *why, size_t why_size);

/* The PJRT element type of dt. */
PJRT_Buffer_Type tt_pjrt_type(tt_dtype dt);

#endif /* TT_PJRT_INTERNAL_H */
