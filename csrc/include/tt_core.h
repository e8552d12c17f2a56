/* tt_core.h — status codes, dtypes and the error message shared by every torchtpu C module.
 *
 * Every fallible function returns a tt_status and, on failure, leaves a human-readable message in a
 * thread-local buffer (tt_last_error()). Library code never aborts; the C++ shim maps each status to the
 * matching Python exception.
 *
 *   tt_status st = tt_something(...);
 *   if (st != TT_OK) fprintf(stderr, "%s: %s\n", tt_status_name(st), tt_last_error());
 */
#ifndef TT_CORE_H
#define TT_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TT_VERSION_MAJOR 0
#define TT_VERSION_MINOR 1

/* Highest tensor rank the core handles; larger ranks are TT_STATUS_UNSUPPORTED (the shim falls back). */
#define TT_MAX_RANK 8

typedef enum tt_status {
    TT_OK = 0,
    TT_STATUS_INVALID_ARGUMENT, /* shape or value errors          -> RuntimeError   */
    TT_STATUS_INDEX,            /* index out of range             -> IndexError     */
    TT_STATUS_TYPE,             /* dtype errors                   -> TypeError      */
    TT_STATUS_OUT_OF_MEMORY,    /* allocation over the limit      -> torch.OutOfMemoryError */
    TT_STATUS_UNSUPPORTED,      /* no lowering / kernel for this  -> NotImplementedError (or CPU fallback) */
    TT_STATUS_INTERNAL,         /* broken invariant               -> RuntimeError   */
    TT_STATUS_BUSY,             /* device held by another process -> RuntimeError   */
    TT_STATUS_COUNT
} tt_status;

/* Element types. Order is part of the ABI with the shim (tt_dtype <-> c10::ScalarType table). */
typedef enum tt_dtype {
    TT_F32 = 0,
    TT_BF16,
    TT_F16,
    TT_F64,
    TT_I64,
    TT_I32,
    TT_I16,
    TT_I8,
    TT_U8,
    TT_BOOL,
    TT_DTYPE_COUNT
} tt_dtype;

const char *tt_status_name(tt_status st);
const char *tt_dtype_name(tt_dtype dt);        /* "f32", "bf16", ... (StableHLO element type names: "i1" is bool) */
size_t tt_dtype_size(tt_dtype dt);             /* bytes per element */
bool tt_dtype_is_float(tt_dtype dt);           /* f32 bf16 f16 f64 */
bool tt_dtype_is_int(tt_dtype dt);             /* i64 i32 i16 i8 u8 (not bool) */
bool tt_dtype_is_signed(tt_dtype dt);          /* floats and signed ints */

/* Sets the thread-local error message (printf-style) and returns st, so callers can write
 * `return tt_error(TT_STATUS_INVALID_ARGUMENT, "add: shapes %s and %s differ", a, b);`. */
tt_status tt_error(tt_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The message of the last error on this thread ("" if none). Borrowed until the next tt_error on this thread. */
const char *tt_last_error(void);
void tt_clear_error(void);
/* The program node the last error on this thread came from (-1: none or unknown). tt_error resets it; an
 * executor that knows which node failed sets it after, so the runtime can name the op that recorded the node. */
void tt_error_set_node(int32_t node);
int32_t tt_error_node(void);

/* Conversions between bf16 / f16 bit patterns and float (round to nearest even). */
float tt_bf16_to_f32(uint16_t v);
uint16_t tt_f32_to_bf16(float v);
float tt_f16_to_f32(uint16_t v);
uint16_t tt_f32_to_f16(float v);

/* Number of elements of a shape (1 for rank 0). */
int64_t tt_numel(int32_t rank, const int64_t *dims);

#ifdef __cplusplus
}
#endif
#endif /* TT_CORE_H */
