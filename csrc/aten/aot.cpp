// aot.cpp — torchtpu.aot_compile's two C entry points: capture the programs a function runs (the runtime notes
// each program it executes, every mode and torch.compile graphs alike), and compile StableHLO for a device that is
// not here through a PJRT plugin's topology (libtpu: TPU v5e, v6e, tpu7x ...). The Python side is torchtpu/_aot.py.
#include <torch/extension.h>

#include <string>
#include <vector>

#include "shim.h"

namespace torchtpu {

void register_aot(py::module& m) {
    m.def("capture_start", [] {
        ensure_init();
        TT_CHECK(tt_rt_capture_start());
    });
    // The captured programs as StableHLO text, in first-run order.
    m.def("capture_stop", [] {
        tt_ir_program** programs = nullptr;
        int32_t n = tt_rt_capture_stop(&programs);
        std::vector<std::string> texts;
        tt_status st = TT_OK;
        for (int32_t i = 0; i < n; i++) {
            char* text = nullptr;
            if (st == TT_OK && (st = tt_ir_print_stablehlo(programs[i], &text)) == TT_OK) texts.emplace_back(text);
            free(text);
            tt_ir_program_destroy(programs[i]);
        }
        free(programs);
        TT_CHECK(st);
        return texts;
    });
    m.def("pjrt_aot_compile", [](const std::string& plugin, const std::string& topology, const std::string& text) {
        tt_pjrt_aot_result r;
        tt_status st;
        {
            py::gil_scoped_release nogil;
            st = tt_pjrt_aot_compile(plugin.c_str(), topology.c_str(), text.c_str(), &r);
        }
        TT_CHECK(st);
        py::dict out;
        out["executable"] = py::bytes(static_cast<const char*>(r.executable), r.executable_size);
        out["argument_bytes"] = r.argument_bytes;
        out["output_bytes"] = r.output_bytes;
        out["alias_bytes"] = r.alias_bytes;
        out["temp_bytes"] = r.temp_bytes;
        out["generated_code_bytes"] = r.generated_code_bytes;
        out["peak_bytes"] = r.peak_bytes;
        py::dict costs;
        for (int32_t i = 0; i < r.n_costs; i++) costs[py::str(r.costs[i].name)] = r.costs[i].value;
        out["cost"] = costs;
        tt_pjrt_aot_result_free(&r);
        return out;
    });
}

}  // namespace torchtpu
