/* pjrt_aot.c — ahead-of-time compiles for a device that is not here: a plugin's topology description (libtpu:
 * "v5e:2x2", "v6e:1x1", "tpu7x:2x2x1") and PJRT_Compile without a client, then the serialized executable, XLA's
 * memory statistics and its cost analysis. libtpu needs no TPU for this; it must not try to reach a cloud
 * metadata server (TPU_SKIP_MDS_QUERY=1; our tests run it in a network namespace with only loopback). */
#include "tt_driver.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if TT_HAVE_PJRT
#include "pjrt_internal.h"

/* One replica, one partition: a program for one chip of the topology (as tt_pjrt_compile asks). */
static const char aot_options[] = {0x1A, 0x04, 0x20, 0x01, 0x28, 0x01};

static void destroy_topology(const PJRT_Api *api, PJRT_TopologyDescription *t) {
    if (!t) return;
    PJ_ARGS(PJRT_TopologyDescription_Destroy_Args, d);
    d.topology = t;
    tt_pjrt_status(api, api->PJRT_TopologyDescription_Destroy(&d), "destroying a topology");
}

/* Memory statistics and cost analysis of a compiled executable into out. */
static tt_status describe(const PJRT_Api *api, PJRT_Executable *exe, tt_pjrt_aot_result *out) {
    if (PJ_HAS(api, PJRT_Executable_GetCompiledMemoryStats)) {
        PJ_ARGS(PJRT_Executable_GetCompiledMemoryStats_Args, m);
        m.executable = exe;
        tt_status st = tt_pjrt_status(api, api->PJRT_Executable_GetCompiledMemoryStats(&m), "reading memory stats");
        if (st != TT_OK) return st;
        out->argument_bytes = m.argument_size_in_bytes;
        out->output_bytes = m.output_size_in_bytes;
        out->alias_bytes = m.alias_size_in_bytes;
        out->temp_bytes = m.temp_size_in_bytes;
        out->generated_code_bytes = m.generated_code_size_in_bytes;
        out->peak_bytes = m.peak_memory_in_bytes;
    }
    if (PJ_HAS(api, PJRT_Executable_GetCostAnalysis)) {
        PJ_ARGS(PJRT_Executable_GetCostAnalysis_Args, c);
        c.executable = exe;
        tt_status st = tt_pjrt_status(api, api->PJRT_Executable_GetCostAnalysis(&c), "reading the cost analysis");
        if (st != TT_OK) return st;
        for (size_t i = 0; i < c.num_properties && out->n_costs < TT_PJRT_AOT_MAX_COSTS; i++) {
            const PJRT_NamedValue *nv = &c.properties[i];
            double v = nv->type == PJRT_NamedValue_kFloat   ? nv->float_value
                       : nv->type == PJRT_NamedValue_kInt64 ? (double)nv->int64_value
                                                            : -1;
            /* the totals ("flops", "transcendentals", "bytes accessed", "optimal_seconds"), not the per-operand
             * breakdowns ("bytes accessed0{}", "utilization3{}") */
            if (v < 0 || memchr(nv->name, '{', nv->name_size)) continue;
            snprintf(out->costs[out->n_costs].name, sizeof out->costs[0].name, "%.*s", (int)nv->name_size, nv->name);
            out->costs[out->n_costs++].value = v;
        }
    }
    return TT_OK;
}

tt_status tt_pjrt_aot_compile(const char *plugin_path, const char *topology, const char *stablehlo,
                              tt_pjrt_aot_result *out) {
    memset(out, 0, sizeof *out);
    if (!plugin_path || !topology || !stablehlo)
        return tt_error(TT_STATUS_INVALID_ARGUMENT, "aot_compile: plugin, topology and program are required");
    const PJRT_Api *api = NULL;
    tt_status st = tt_pjrt_load(plugin_path, &api);
    if (st != TT_OK) return st;
    if (!PJ_HAS(api, PJRT_TopologyDescription_Create) || !PJ_HAS(api, PJRT_Compile) ||
        !PJ_HAS(api, PJRT_TopologyDescription_Destroy) || !PJ_HAS(api, PJRT_Executable_Serialize))
        return tt_error(TT_STATUS_UNSUPPORTED, "aot_compile: the plugin '%s' cannot compile without a device",
                        plugin_path);
    PJ_ARGS(PJRT_TopologyDescription_Create_Args, tc);
    tc.topology_name = topology;
    tc.topology_name_size = strlen(topology);
    char what[160];
    snprintf(what, sizeof what, "the topology '%.100s'", topology);
    if ((st = tt_pjrt_status(api, api->PJRT_TopologyDescription_Create(&tc), what)) != TT_OK) return st;

    PJ_ARGS(PJRT_Program, prog);
    prog.code = (char *)stablehlo;
    prog.code_size = strlen(stablehlo);
    prog.format = "mlir";
    prog.format_size = 4;
    PJ_ARGS(PJRT_Compile_Args, ca);
    ca.topology = tc.topology;
    ca.program = &prog;
    ca.compile_options = aot_options;
    ca.compile_options_size = sizeof aot_options;
    snprintf(what, sizeof what, "compiling for %.100s", topology);
    st = tt_pjrt_status(api, api->PJRT_Compile(&ca), what);
    if (st == TT_OK) {
        PJ_ARGS(PJRT_Executable_Serialize_Args, s);
        s.executable = ca.executable;
        st = tt_pjrt_status(api, api->PJRT_Executable_Serialize(&s), "serializing");
        if (st == TT_OK) {
            out->executable = malloc(s.serialized_bytes_size ? s.serialized_bytes_size : 1);
            if (out->executable) {
                memcpy(out->executable, s.serialized_bytes, s.serialized_bytes_size);
                out->executable_size = s.serialized_bytes_size;
            } else {
                st = tt_error(TT_STATUS_OUT_OF_MEMORY, "aot_compile: out of host memory for the executable");
            }
            if (s.serialized_executable_deleter) s.serialized_executable_deleter(s.serialized_executable);
        }
        if (st == TT_OK) st = describe(api, ca.executable, out);
        PJ_ARGS(PJRT_Executable_Destroy_Args, ed);
        ed.executable = ca.executable;
        tt_pjrt_status(api, api->PJRT_Executable_Destroy(&ed), "releasing the executable");
    }
    destroy_topology(api, tc.topology);
    if (st != TT_OK) tt_pjrt_aot_result_free(out);
    return st;
}

#else

tt_status tt_pjrt_aot_compile(const char *plugin_path, const char *topology, const char *stablehlo,
                              tt_pjrt_aot_result *out) {
    (void)plugin_path;
    (void)topology;
    (void)stablehlo;
    memset(out, 0, sizeof *out);
    return tt_error(TT_STATUS_UNSUPPORTED, "aot_compile: this build has no PJRT driver (no pjrt_c_api.h was found "
                                           "when it was built: pip install xla-cpu-pjrt, then rebuild)");
}

#endif

void tt_pjrt_aot_result_free(tt_pjrt_aot_result *r) {
    if (!r) return;
    free(r->executable);
    r->executable = NULL;
    r->executable_size = 0;
}
