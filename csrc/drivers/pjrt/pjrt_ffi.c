/* pjrt_ffi.c — custom kernels (tt_kernel.h) inside XLA programs: one typed XLA FFI handler, registered with the
 * plugin through its FFI extension, finds the kernel a call names (attribute "kernel") and calls it.
 *
 * The plugin wheel ships pjrt_c_api.h but neither the FFI extension's header nor XLA's FFI C API, so the few
 * structs used here are declared below from their published layout (xla/pjrt/c/pjrt_c_api_ffi_extension.h and
 * xla/ffi/api/c_api.h: versioned C structs whose fields are only ever appended). Every struct the plugin hands
 * over is checked against its struct_size before a field is read: a plugin with a shorter layout is refused with
 * an error, never misread. */
#include "tt_core.h"

#if TT_HAVE_PJRT
#include "pjrt_internal.h"
#include "tt_kernel.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- the PJRT FFI extension (PJRT_Extension_Type_FFI) ---- */
/* PJRT_FFI_Register_Handler_Args as of PJRT C API 0.81, typed handlers only. Its first version (2025) had an
 * `int api_version` before `handler`, and the extension carries no version number: the layout is told apart by the
 * plugin's API version (FFI_MIN_MINOR, the oldest seen with this one; an older plugin runs no kernels). */
#define FFI_MIN_MINOR 81
typedef struct pj_ffi_register_args {
    size_t struct_size;
    const char *target_name;
    size_t target_name_size;
    void *handler; /* an XLA_FFI_Handler */
    const char *platform_name;
    size_t platform_name_size;
    int traits;
} pj_ffi_register_args;

typedef struct pj_ffi_extension { /* PJRT_FFI_Extension */
    PJRT_Extension_Base base;
    void *type_id_register;
    void *user_data_add;
    PJRT_Error *(*register_handler)(pj_ffi_register_args *args);
} pj_ffi_extension;

/* ---- XLA's FFI C API, as a handler sees it ---- */
typedef struct xffi_ext { /* XLA_FFI_Extension_Base */
    size_t struct_size;
    int type; /* 1: metadata */
    struct xffi_ext *next;
} xffi_ext;

typedef struct xffi_version { /* XLA_FFI_Api_Version */
    size_t struct_size;
    xffi_ext *extension_start;
    int major, minor;
} xffi_version;

typedef struct xffi_metadata { /* XLA_FFI_Metadata */
    size_t struct_size;
    xffi_version api_version;
    uint32_t traits;
} xffi_metadata;

typedef struct xffi_metadata_ext { /* XLA_FFI_Metadata_Extension */
    xffi_ext base;
    xffi_metadata *metadata;
} xffi_metadata_ext;

typedef struct xffi_error_args { /* XLA_FFI_Error_Create_Args */
    size_t struct_size;
    xffi_ext *extension_start;
    const char *message;
    int code; /* absl status code */
} xffi_error_args;

typedef struct xffi_api { /* XLA_FFI_Api, up to its first function */
    size_t struct_size;
    xffi_ext *extension_start;
    xffi_version api_version;
    void *internal_api;
    void *(*error_create)(xffi_error_args *args);
} xffi_api;

typedef struct xffi_buffer { /* XLA_FFI_Buffer */
    size_t struct_size;
    xffi_ext *extension_start;
    int dtype; /* xla::PrimitiveType */
    void *data;
    int64_t rank;
    int64_t *dims;
} xffi_buffer;

typedef struct xffi_list { /* XLA_FFI_Args and XLA_FFI_Rets: types 1 = buffer */
    size_t struct_size;
    xffi_ext *extension_start;
    int64_t size;
    int *types;
    void **items;
} xffi_list;

typedef struct xffi_span { /* XLA_FFI_ByteSpan */
    const char *ptr;
    size_t len;
} xffi_span;

typedef struct xffi_attrs { /* XLA_FFI_Attrs: types 4 = string (an xffi_span) */
    size_t struct_size;
    xffi_ext *extension_start;
    int64_t size;
    int *types;
    xffi_span **names;
    void **attrs;
} xffi_attrs;

typedef struct xffi_call_frame { /* XLA_FFI_CallFrame */
    size_t struct_size;
    xffi_ext *extension_start;
    const xffi_api *api;
    void *ctx;
    int stage; /* 3: execute */
    xffi_list args;
    xffi_list rets;
    xffi_attrs attrs;
} xffi_call_frame;

#define XFFI_SIZE(T, last) (offsetof(T, last) + sizeof(((T *)0)->last))

static void *ffi_error(const xffi_call_frame *f, tt_status st, const char *message) {
    if (!f->api || f->api->struct_size < XFFI_SIZE(xffi_api, error_create) || !f->api->error_create) return NULL;
    static const int codes[TT_STATUS_COUNT] = {
        [TT_STATUS_INVALID_ARGUMENT] = 3, [TT_STATUS_INDEX] = 11, [TT_STATUS_TYPE] = 3,
        [TT_STATUS_OUT_OF_MEMORY] = 8, [TT_STATUS_UNSUPPORTED] = 12, [TT_STATUS_INTERNAL] = 13, [TT_STATUS_BUSY] = 14};
    xffi_error_args a = {XFFI_SIZE(xffi_error_args, code), NULL, message,
                         (unsigned)st < TT_STATUS_COUNT && codes[st] ? codes[st] : 2};
    return f->api->error_create(&a);
}

static bool dtype_of(int xla, tt_dtype *dt) {
    switch (xla) { /* xla::PrimitiveType */
    case 1: *dt = TT_BOOL; return true;
    case 2: *dt = TT_I8; return true;
    case 3: *dt = TT_I16; return true;
    case 4: *dt = TT_I32; return true;
    case 5: *dt = TT_I64; return true;
    case 6: *dt = TT_U8; return true;
    case 10: *dt = TT_F16; return true;
    case 11: *dt = TT_F32; return true;
    case 12: *dt = TT_F64; return true;
    case 16: *dt = TT_BF16; return true;
    default: return false;
    }
}

static bool tensor_of(const void *item, tt_kernel_tensor *t) {
    const xffi_buffer *b = item;
    if (!b || b->struct_size < XFFI_SIZE(xffi_buffer, dims) || b->rank < 0 || b->rank > TT_MAX_RANK) return false;
    *t = (tt_kernel_tensor){.rank = (int32_t)b->rank, .dims = b->dims, .data = b->data};
    return dtype_of(b->dtype, &t->dtype);
}

/* The handler (XLA_FFI_Handler): answers XLA's metadata query, then on each execution calls the kernel. */
static void *kernel_handler(xffi_call_frame *f) {
    if (!f || f->struct_size < XFFI_SIZE(xffi_call_frame, attrs)) return NULL; /* cannot even make an error */
    if (f->extension_start && f->extension_start->type == 1) {
        /* the FFI version this handler speaks: the plugin's own (only the call frame above is read) */
        xffi_metadata_ext *m = (xffi_metadata_ext *)f->extension_start;
        if (m->base.struct_size < XFFI_SIZE(xffi_metadata_ext, metadata) || !m->metadata ||
            m->metadata->struct_size < XFFI_SIZE(xffi_metadata, traits) || !f->api)
            return ffi_error(f, TT_STATUS_INTERNAL, "torchtpu_kernel: an XLA FFI metadata query of another layout");
        m->metadata->api_version.major = f->api->api_version.major;
        m->metadata->api_version.minor = f->api->api_version.minor;
        m->metadata->traits = 0;
        return NULL;
    }
    if (f->stage != 3) return NULL; /* instantiate / prepare / initialize: nothing to do */
    const xffi_span *kernel = NULL;
    for (int64_t i = 0; i < f->attrs.size; i++)
        if (f->attrs.types[i] == 4 && f->attrs.names[i]->len == 6 && !memcmp(f->attrs.names[i]->ptr, "kernel", 6))
            kernel = f->attrs.attrs[i];
    if (!kernel) return ffi_error(f, TT_STATUS_INTERNAL, "torchtpu_kernel: the call names no kernel");
    int64_t n_in = f->args.size, n_out = f->rets.size;
    tt_kernel_tensor few[9] = {{0}}, *t = n_in + n_out <= 9 ? few : malloc((size_t)(n_in + n_out) * sizeof *t);
    if (!t) return ffi_error(f, TT_STATUS_OUT_OF_MEMORY, "torchtpu_kernel: out of host memory");
    bool ok = true;
    for (int64_t i = 0; i < n_in + n_out && ok; i++) {
        const xffi_list *l = i < n_in ? &f->args : &f->rets;
        int64_t k = i < n_in ? i : i - n_in;
        ok = l->types[k] == 1 && tensor_of(l->items[k], &t[i]);
    }
    void *err = NULL;
    if (!ok) {
        err = ffi_error(f, TT_STATUS_INTERNAL, "torchtpu_kernel: an argument of a type or layout it cannot read");
    } else {
        tt_status st = tt_kernel_call(kernel->ptr, kernel->len, t, (int32_t)n_in, t + n_in, (int32_t)n_out);
        if (st != TT_OK) err = ffi_error(f, st, tt_last_error());
    }
    if (t != few) free(t);
    return err;
}

/* Registered once per plugin per process (XLA's registry is global; at most 4 plugins load, pjrt_client.c), the
 * outcome remembered. */
static pthread_mutex_t register_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    const PJRT_Api *api;
    tt_status st;
    char why[160];
} registered[4];

static tt_status register_handler(const PJRT_Api *api, char *why, size_t why_size) {
    const pj_ffi_extension *ext = NULL;
    for (const PJRT_Extension_Base *e = api->extension_start; e; e = e->next)
        if (e->type == PJRT_Extension_Type_FFI) ext = (const pj_ffi_extension *)e;
    if (!ext) return snprintf(why, why_size, "the plugin has no FFI extension"), TT_STATUS_UNSUPPORTED;
    if (api->pjrt_api_version.minor_version < FFI_MIN_MINOR)
        return snprintf(why, why_size, "custom kernels need a plugin with PJRT C API 0.%d or later (this one: 0.%d)",
                        FFI_MIN_MINOR, api->pjrt_api_version.minor_version), TT_STATUS_UNSUPPORTED;
    if (ext->base.struct_size < XFFI_SIZE(pj_ffi_extension, register_handler) || !ext->register_handler)
        return snprintf(why, why_size, "the plugin's FFI extension cannot register handlers"), TT_STATUS_UNSUPPORTED;
    pj_ffi_register_args a = {.struct_size = XFFI_SIZE(pj_ffi_register_args, traits),
                              .target_name = "torchtpu_kernel",
                              .target_name_size = 15,
                              .handler = (void *)kernel_handler,
                              .platform_name = "Host", /* XLA's name for the CPU platform */
                              .platform_name_size = 4};
    tt_status st = tt_pjrt_status(api, ext->register_handler(&a), "registering the custom kernel handler");
    if (st != TT_OK) snprintf(why, why_size, "%s", tt_last_error());
    return st;
}

tt_status tt_pjrt_ffi_register(const PJRT_Api *api, char *why, size_t why_size) {
    pthread_mutex_lock(&register_mu);
    size_t i = 0;
    while (i + 1 < sizeof registered / sizeof registered[0] && registered[i].api && registered[i].api != api) i++;
    if (registered[i].api != api) {
        registered[i].api = api;
        registered[i].why[0] = '\0';
        registered[i].st = register_handler(api, registered[i].why, sizeof registered[i].why);
    }
    tt_status st = registered[i].st;
    snprintf(why, why_size, "%s", registered[i].why);
    pthread_mutex_unlock(&register_mu);
    return st;
}

#endif /* TT_HAVE_PJRT */
