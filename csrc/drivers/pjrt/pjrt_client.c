/* pjrt_client.c — loading a PJRT plugin, its errors and events, the client, and executables (compile from
 * StableHLO text, serialize, deserialize). Many plugin misuses abort inside the plugin instead of returning an
 * error (empty compile options, unbounded dynamic shapes): what we pass is checked first. */
#include "tt_driver.h"

#if TT_HAVE_PJRT
#include "pjrt_internal.h"
#include "tt_kernel.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct tt_executable {
    PJRT_LoadedExecutable *loaded;
    tt_ir_program *program;     /* retained: parameter and output types for execute */
    tt_ir_bounds_check *checks; /* bounds checks, outputs after the program's own */
    int32_t n_checks;
};

PJRT_LoadedExecutable *tt_pjrt_loaded(const tt_executable *exe) { return exe->loaded; }
const tt_ir_program *tt_pjrt_program(const tt_executable *exe) { return exe->program; }
const tt_ir_bounds_check *tt_pjrt_checks(const tt_executable *exe, int32_t *n) {
    *n = exe->n_checks;
    return exe->checks;
}

/* absl status codes, as PJRT_Error_GetCode reports them, to ours. */
static tt_status status_of_code(PJRT_Error_Code code) {
    switch ((int)code) {
    case 3: /* INVALID_ARGUMENT */
    case 9: /* FAILED_PRECONDITION */
        return TT_STATUS_INVALID_ARGUMENT;
    case 11: return TT_STATUS_INDEX;         /* OUT_OF_RANGE */
    case 8: return TT_STATUS_OUT_OF_MEMORY;  /* RESOURCE_EXHAUSTED */
    case 12: return TT_STATUS_UNSUPPORTED;   /* UNIMPLEMENTED */
    default: return TT_STATUS_INTERNAL;
    }
}

tt_status tt_pjrt_status(const PJRT_Api *api, PJRT_Error *err, const char *what) {
    if (!err) return TT_OK;
    PJ_ARGS(PJRT_Error_Message_Args, m);
    m.error = err;
    api->PJRT_Error_Message(&m);
    PJ_ARGS(PJRT_Error_GetCode_Args, g);
    g.error = err;
    PJRT_Error *gerr = api->PJRT_Error_GetCode(&g);
    tt_status st = gerr ? TT_STATUS_INTERNAL : status_of_code(g.code);
    st = tt_error(st, "pjrt: %s: %.*s", what, (int)(m.message_size > 4000 ? 4000 : m.message_size),
                  m.message ? m.message : "");
    if (gerr) {
        PJ_ARGS(PJRT_Error_Destroy_Args, gd);
        gd.error = gerr;
        api->PJRT_Error_Destroy(&gd);
    }
    PJ_ARGS(PJRT_Error_Destroy_Args, d);
    d.error = err;
    api->PJRT_Error_Destroy(&d);
    return st;
}

tt_status tt_pjrt_await(const PJRT_Api *api, PJRT_Event *ev, const char *what) {
    if (!ev) return TT_OK;
    PJ_ARGS(PJRT_Event_Await_Args, a);
    a.event = ev;
    tt_status st = tt_pjrt_status(api, api->PJRT_Event_Await(&a), what);
    PJ_ARGS(PJRT_Event_Destroy_Args, d);
    d.event = ev;
    PJRT_Error *derr = api->PJRT_Event_Destroy(&d);
    tt_status dst = tt_pjrt_status(api, derr, what);
    return st != TT_OK ? st : dst;
}

/* ---- the plugin ---- */

/* What a driver cannot work without; checked once at load so no call site tests for NULL. */
#define PJ_REQUIRED(X)                                                                                                \
    X(PJRT_Error_Destroy) X(PJRT_Error_Message) X(PJRT_Error_GetCode) X(PJRT_Plugin_Initialize)                       \
    X(PJRT_Event_Destroy) X(PJRT_Event_Await) X(PJRT_Client_Create) X(PJRT_Client_Destroy)                            \
    X(PJRT_Client_PlatformName) X(PJRT_Client_AddressableDevices) X(PJRT_Client_Compile)                              \
    X(PJRT_Client_BufferFromHostBuffer) X(PJRT_LoadedExecutable_Destroy) X(PJRT_LoadedExecutable_Execute)             \
    X(PJRT_LoadedExecutable_GetExecutable) X(PJRT_Executable_NumOutputs) X(PJRT_Executable_Destroy)                   \
    X(PJRT_Buffer_Destroy) X(PJRT_Buffer_ToHostBuffer)

/* Plugins are loaded once per process and never unloaded (they keep threads and static state). */
static pthread_mutex_t load_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char path[4096];
    const PJRT_Api *api;
} plugins[4];

static tt_status load_locked(const char *path, const PJRT_Api **out) {
    for (size_t i = 0; i < sizeof plugins / sizeof plugins[0]; i++)
        if (plugins[i].api && !strcmp(plugins[i].path, path)) return *out = plugins[i].api, TT_OK;
    size_t slot = 0;
    while (slot < sizeof plugins / sizeof plugins[0] && plugins[slot].api) slot++;
    if (slot == sizeof plugins / sizeof plugins[0] || strlen(path) >= sizeof plugins[0].path)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt: cannot load another plugin ('%s')", path);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt: cannot load the plugin '%s': %s", path, dlerror());
    const PJRT_Api *(*get)(void) = NULL;
    *(void **)&get = dlsym(h, "GetPjrtApi");
    const PJRT_Api *api = get ? get() : NULL;
    if (!api)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt: '%s' is not a PJRT plugin (no GetPjrtApi)", path);
    if (api->pjrt_api_version.major_version != PJRT_API_MAJOR)
        return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: '%s' has PJRT C API %d.%d; this build speaks %d.x", path,
                        api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version, PJRT_API_MAJOR);
#define PJ_CHECK_FN(fn)                                                                                               \
    if (!PJ_HAS(api, fn))                                                                                             \
        return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: '%s' (PJRT C API %d.%d) lacks %s", path,                        \
                        api->pjrt_api_version.major_version, api->pjrt_api_version.minor_version, #fn);
    PJ_REQUIRED(PJ_CHECK_FN)
#undef PJ_CHECK_FN
    PJ_ARGS(PJRT_Plugin_Initialize_Args, init);
    tt_status st = tt_pjrt_status(api, api->PJRT_Plugin_Initialize(&init), "initialising the plugin");
    if (st != TT_OK) return st;
    snprintf(plugins[slot].path, sizeof plugins[slot].path, "%s", path);
    plugins[slot].api = api;
    *out = api;
    return TT_OK;
}

tt_status tt_pjrt_load(const char *path, const PJRT_Api **out) {
    pthread_mutex_lock(&load_mu);
    tt_status st = load_locked(path, out);
    pthread_mutex_unlock(&load_mu);
    return st;
}

/* ---- the client ---- */

static tt_status create_client(pj_ctx *c, const PJRT_NamedValue *opts, size_t n_opts) {
    PJ_ARGS(PJRT_Client_Create_Args, a);
    a.create_options = opts;
    a.num_options = n_opts;
    tt_status st = tt_pjrt_status(c->api, c->api->PJRT_Client_Create(&a), "creating the client");
    if (st == TT_OK) c->client = a.client;
    return st;
}

tt_status tt_pjrt_client_create(pj_ctx *c, const char *plugin_path, int n_devices) {
    const PJRT_Api *api = c->api;
    /* The CPU plugin makes as many devices as it is told (4 by default); a plugin that does not know the option
     * rejects it, and is then created without. */
    PJ_ARGS(PJRT_NamedValue, count);
    count.name = "cpu_device_count";
    count.name_size = strlen(count.name);
    count.type = PJRT_NamedValue_kInt64;
    count.int64_value = n_devices;
    count.value_size = 1;
    tt_status st = create_client(c, &count, 1);
    if (st != TT_OK && (st = create_client(c, NULL, 0)) != TT_OK) return st;

    PJ_ARGS(PJRT_Client_PlatformName_Args, pn);
    pn.client = c->client;
    if ((st = tt_pjrt_status(api, api->PJRT_Client_PlatformName(&pn), "reading the platform name")) != TT_OK)
        return st;
    snprintf(c->platform, sizeof c->platform, "%.*s", (int)pn.platform_name_size, pn.platform_name);
    const char *version = "";
    size_t version_size = 0;
    if (PJ_HAS(api, PJRT_Client_PlatformVersion)) {
        PJ_ARGS(PJRT_Client_PlatformVersion_Args, pv);
        pv.client = c->client;
        if (tt_pjrt_status(api, api->PJRT_Client_PlatformVersion(&pv), "reading the platform version") == TT_OK)
            version = pv.platform_version, version_size = pv.platform_version_size;
    }
    /* The plugin's own build (xla_version) decides whether a serialized executable still loads. */
    char xla[64] = "";
    if (PJ_HAS(api, PJRT_Plugin_Attributes)) {
        PJ_ARGS(PJRT_Plugin_Attributes_Args, pa);
        if (tt_pjrt_status(api, api->PJRT_Plugin_Attributes(&pa), "reading the plugin's attributes") == TT_OK)
            for (size_t i = 0; i < pa.num_attributes; i++) {
                const PJRT_NamedValue *nv = &pa.attributes[i];
                if (nv->name_size == 11 && !memcmp(nv->name, "xla_version", 11) &&
                    nv->type == PJRT_NamedValue_kInt64)
                    snprintf(xla, sizeof xla, " xla %lld", (long long)nv->int64_value);
            }
    }
    const char *base = strrchr(plugin_path, '/');
    snprintf(c->identity, sizeof c->identity, "pjrt %s %s %.*s api %d.%d%s", base ? base + 1 : plugin_path,
             c->platform, (int)version_size, version, api->pjrt_api_version.major_version,
             api->pjrt_api_version.minor_version, xla);
    c->unsafe_pointer = !strcmp(c->platform, "cpu") && PJ_HAS(api, PJRT_Buffer_UnsafePointer);
    c->tpu_numerics = !strcmp(c->platform, "tpu");
    /* Kernels are host C functions: they run inside programs of a CPU plugin only. */
    if (strcmp(c->platform, "cpu"))
        snprintf(c->no_kernels, sizeof c->no_kernels, "custom kernels run on a CPU plugin, not on %s", c->platform);
    else if (tt_pjrt_ffi_register(api, c->no_kernels, sizeof c->no_kernels) == TT_OK)
        c->no_kernels[0] = '\0';

    PJ_ARGS(PJRT_Client_AddressableDevices_Args, ad);
    ad.client = c->client;
    if ((st = tt_pjrt_status(api, api->PJRT_Client_AddressableDevices(&ad), "listing devices")) != TT_OK) return st;
    if (ad.num_addressable_devices == 0)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "pjrt: the %s plugin has no addressable device", c->platform);
    c->devices = ad.addressable_devices;
    /* the plugin may have fewer devices than asked for (the accounting was sized for n_devices) */
    c->bytes.n_devices = (int)(ad.num_addressable_devices < (size_t)n_devices ? ad.num_addressable_devices
                                                                               : (size_t)n_devices);
    return TT_OK;
}

void tt_pjrt_client_destroy(pj_ctx *c) {
    if (!c->client) return;
    PJ_ARGS(PJRT_Client_Destroy_Args, d);
    d.client = c->client;
    tt_pjrt_status(c->api, c->api->PJRT_Client_Destroy(&d), "destroying the client");
    c->client = NULL;
}

/* ---- executables ---- */

/* CompileOptionsProto, serialized by hand: compile_portable_executable (field 4) = true, so one executable runs on
 * any device named at execute; executable_build_options (field 3) with num_replicas (4) = num_partitions (5) = 1.
 * An empty string would abort the plugin (it checks replica_count > 0). */
static const char compile_options[] = {0x20, 0x01, 0x1A, 0x04, 0x20, 0x01, 0x28, 0x01};

/* Whether program's custom calls can run here: each names a registered kernel, and the plugin runs kernels. */
static tt_status check_kernels(const pj_ctx *c, const tt_ir_program *program) {
    tt_status st = tt_kernel_check_program(program);
    if (st != TT_OK || !c->no_kernels[0]) return st;
    for (int32_t k = 0; k < program->n_nodes; k++)
        if (program->nodes[k].op == TT_OP_CUSTOM_CALL)
            return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: custom_call %s: %s", program->nodes[k].attrs.custom_call.target,
                            c->no_kernels);
    return TT_OK;
}

/* What the plugin compiles for program: its bounds checks as extra outputs (XLA cannot raise), and on a plugin
 * that is not a TPU, TPU matmul precision as explicit bf16 passes (it would multiply f32 exactly whatever
 * precision_config says). *checks describe the extra outputs. */
static tt_status lower_for_plugin(const pj_ctx *c, tt_ir_program *program, tt_ir_program **out,
                                  tt_ir_bounds_check **checks, int32_t *n_checks) {
    tt_ir_program *checked = NULL;
    tt_status st = tt_ir_expand_bounds_checks(program, &checked, checks, n_checks);
    if (st != TT_OK) return st;
    if (c->tpu_numerics) return *out = checked, TT_OK;
    st = tt_ir_expand_precision(checked, out);
    tt_ir_program_destroy(checked);
    if (st != TT_OK) free(*checks), *checks = NULL;
    return st;
}

static tt_status wrap(pj_ctx *c, PJRT_LoadedExecutable *loaded, tt_ir_program *program, tt_ir_bounds_check *checks,
                      int32_t n_checks, tt_executable **out) {
    const PJRT_Api *api = c->api;
    PJ_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
    ge.loaded_executable = loaded;
    tt_status st = tt_pjrt_status(api, api->PJRT_LoadedExecutable_GetExecutable(&ge), "reading the executable");
    size_t n_outputs = 0;
    if (st == TT_OK) {
        PJ_ARGS(PJRT_Executable_NumOutputs_Args, no);
        no.executable = ge.executable;
        st = tt_pjrt_status(api, api->PJRT_Executable_NumOutputs(&no), "counting outputs");
        n_outputs = no.num_outputs;
        PJ_ARGS(PJRT_Executable_Destroy_Args, ed);
        ed.executable = ge.executable;
        tt_pjrt_status(api, api->PJRT_Executable_Destroy(&ed), "releasing the executable");
    }
    if (st == TT_OK && n_outputs != (size_t)program->n_outputs + (size_t)n_checks)
        st = tt_error(TT_STATUS_INTERNAL, "pjrt: the executable has %zu outputs, the program %d and %d checks",
                      n_outputs, (int)program->n_outputs, (int)n_checks);
    tt_executable *e = st == TT_OK ? malloc(sizeof *e) : NULL;
    if (st == TT_OK && !e) st = tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory for an executable");
    if (st != TT_OK) {
        PJ_ARGS(PJRT_LoadedExecutable_Destroy_Args, d);
        d.executable = loaded;
        tt_pjrt_status(api, api->PJRT_LoadedExecutable_Destroy(&d), "destroying an executable");
        free(checks);
        return st;
    }
    tt_ir_program_retain(program);
    e->loaded = loaded;
    e->program = program;
    e->checks = checks;
    e->n_checks = n_checks;
    *out = e;
    return TT_OK;
}

tt_status tt_pjrt_compile(void *ctx, tt_ir_program *program, tt_executable **out) {
    pj_ctx *c = ctx;
    *out = NULL;
    tt_ir_program *lowered = NULL;
    tt_ir_bounds_check *checks = NULL;
    int32_t n_checks = 0;
    tt_status st = check_kernels(c, program);
    if (st != TT_OK) return st;
    st = lower_for_plugin(c, program, &lowered, &checks, &n_checks);
    char *text = NULL;
    /* every parameter may be donated; each execution names those that may not (pj_execute) */
    if (st == TT_OK) st = tt_ir_print_stablehlo_ex(lowered, TT_IR_PRINT_DONORS, &text);
    tt_ir_program_destroy(lowered);
    if (st != TT_OK) {
        free(checks);
        return st;
    }
    PJ_ARGS(PJRT_Program, prog);
    prog.code = text;
    prog.code_size = strlen(text);
    prog.format = "mlir";
    prog.format_size = 4;
    PJ_ARGS(PJRT_Client_Compile_Args, a);
    a.client = c->client;
    a.program = &prog;
    a.compile_options = compile_options;
    a.compile_options_size = sizeof compile_options;
    st = tt_pjrt_status(c->api, c->api->PJRT_Client_Compile(&a), "compiling");
    if (st != TT_OK && getenv("TORCHTPU_PJRT_DUMP")) fprintf(stderr, "pjrt: the program that failed:\n%s\n", text);
    free(text);
    if (st != TT_OK) free(checks);
    return st == TT_OK ? wrap(c, a.executable, program, checks, n_checks, out) : st;
}

void tt_pjrt_executable_free(void *ctx, tt_executable *exe) {
    pj_ctx *c = ctx;
    if (!exe) return;
    PJ_ARGS(PJRT_LoadedExecutable_Destroy_Args, d);
    d.executable = exe->loaded;
    tt_pjrt_status(c->api, c->api->PJRT_LoadedExecutable_Destroy(&d), "destroying an executable");
    tt_ir_program_destroy(exe->program);
    free(exe->checks);
    free(exe);
}

tt_status tt_pjrt_serialize(void *ctx, const tt_executable *exe, void **bytes, size_t *n) {
    pj_ctx *c = ctx;
    const PJRT_Api *api = c->api;
    *bytes = NULL;
    *n = 0;
    if (!PJ_HAS(api, PJRT_Executable_Serialize))
        return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: the plugin cannot serialize executables");
    PJ_ARGS(PJRT_LoadedExecutable_GetExecutable_Args, ge);
    ge.loaded_executable = exe->loaded;
    tt_status st = tt_pjrt_status(api, api->PJRT_LoadedExecutable_GetExecutable(&ge), "reading the executable");
    if (st != TT_OK) return st;
    PJ_ARGS(PJRT_Executable_Serialize_Args, s);
    s.executable = ge.executable;
    st = tt_pjrt_status(api, api->PJRT_Executable_Serialize(&s), "serializing");
    if (st == TT_OK) {
        *bytes = malloc(s.serialized_bytes_size ? s.serialized_bytes_size : 1);
        if (*bytes) memcpy(*bytes, s.serialized_bytes, s.serialized_bytes_size), *n = s.serialized_bytes_size;
        else st = tt_error(TT_STATUS_OUT_OF_MEMORY, "pjrt: out of host memory serializing an executable");
        if (s.serialized_executable_deleter) s.serialized_executable_deleter(s.serialized_executable);
    }
    PJ_ARGS(PJRT_Executable_Destroy_Args, ed);
    ed.executable = ge.executable;
    tt_pjrt_status(api, api->PJRT_Executable_Destroy(&ed), "releasing the executable");
    return st;
}

tt_status tt_pjrt_deserialize(void *ctx, tt_ir_program *program, const void *bytes, size_t n, tt_executable **out) {
    pj_ctx *c = ctx;
    *out = NULL;
    if (!PJ_HAS(c->api, PJRT_Executable_DeserializeAndLoad))
        return tt_error(TT_STATUS_UNSUPPORTED, "pjrt: the plugin cannot deserialize executables");
    /* the bytes were compiled from lower_for_plugin(program): its checks describe their extra outputs */
    tt_ir_program *lowered = NULL;
    tt_ir_bounds_check *checks = NULL;
    int32_t n_checks = 0;
    tt_status st = check_kernels(c, program);
    if (st != TT_OK) return st;
    st = lower_for_plugin(c, program, &lowered, &checks, &n_checks);
    if (st != TT_OK) return st;
    tt_ir_program_destroy(lowered);
    PJ_ARGS(PJRT_Executable_DeserializeAndLoad_Args, a);
    a.client = c->client;
    a.serialized_executable = bytes;
    a.serialized_executable_size = n;
    st = tt_pjrt_status(c->api, c->api->PJRT_Executable_DeserializeAndLoad(&a), "deserializing");
    if (st != TT_OK) free(checks);
    return st == TT_OK ? wrap(c, a.loaded_executable, program, checks, n_checks, out) : st;
}

PJRT_Buffer_Type tt_pjrt_type(tt_dtype dt) {
    switch (dt) {
    case TT_F32: return PJRT_Buffer_Type_F32;
    case TT_BF16: return PJRT_Buffer_Type_BF16;
    case TT_F16: return PJRT_Buffer_Type_F16;
    case TT_F64: return PJRT_Buffer_Type_F64;
    case TT_I64: return PJRT_Buffer_Type_S64;
    case TT_I32: return PJRT_Buffer_Type_S32;
    case TT_I16: return PJRT_Buffer_Type_S16;
    case TT_I8: return PJRT_Buffer_Type_S8;
    case TT_U8: return PJRT_Buffer_Type_U8;
    case TT_BOOL: return PJRT_Buffer_Type_PRED;
    default: return PJRT_Buffer_Type_INVALID;
    }
}

#endif /* TT_HAVE_PJRT */
