// module.cpp — torchtpu._C: the functions the Python package calls.
#include <torch/autograd.h>
#include <torch/extension.h>

#include <torch/csrc/Generator.h>

#include <cstdio>
#include <cstring>
#include <map>

#include "op_plan.h"
#include "shim.h"

namespace torchtpu {
std::map<std::string, int64_t> fallback_counts();
void reset_fallback_counts();
bool has_native(const std::string& key);
void trace_begin();
int register_lowered_kernels();
void trace_abort();
std::string trace_end(const std::vector<at::Tensor>& outputs);
void register_graph(py::module& m);
void register_aot(py::module& m);
}  // namespace torchtpu

using namespace torchtpu;

// At interpreter exit (an atexit hook, while Python is still whole): autograd's tpu device threads may still be
// releasing an earlier backward's graph, and some of that needs the GIL (Python hooks, autograd.Function nodes,
// tensors that own their Python object). A thread that asks for the GIL once finalization has begun is ended by
// Python with pthread_exit, and that unwinding through autograd's noexcept code is "terminate called without an
// active exception". Each device thread takes its work in order, so one tiny backward through it, run with the
// GIL released and with no Python objects in it, returns only once the thread has finished all earlier work.
static void quiesce_for_exit() {
    if (!launched_any()) return;
    py::gil_scoped_release nogil;
    at::AutoGradMode grad_mode(true);
    for (int d = 0; d < tt_rt_device_count(); d++) {
        at::Tensor x = at::zeros({}, at::TensorOptions().device(c10::DeviceType::PrivateUse1, d)).requires_grad_(true);
        torch::autograd::backward({x * 2});
        x.grad().cpu();  // also waits for the device's queued work
    }
}

static void check(tt_status st) {
    if (st != TT_OK) raise_status(st, "");
}

static py::dict metrics() {
    ensure_init();
    tt_rt_metrics m{};
    tt_rt_metrics_get(&m);
    py::dict ops;
    for (int i = 0; i < TT_EAGER_MODE_COUNT; i++) ops[tt_rt_eager_mode_name((tt_rt_eager_mode)i)] = m.ops[i];
    py::dict fb;
    for (auto& kv : fallback_counts())
        if (kv.second) fb[py::str(kv.first)] = kv.second;
    py::dict d;
    d["ops"] = ops;
    d["compiles"] = m.compiles;
    d["cache_hits"] = m.cache_hits;
    d["cache_size"] = tt_rt_cache_size();
    d["compile_seconds"] = m.compile_seconds;
    d["fallbacks"] = fb;
    d["bytes_to_device"] = m.bytes_to_device;
    d["bytes_to_host"] = m.bytes_to_host;
    d["peak_bytes"] = m.peak_bytes;
    d["syncs"] = m.syncs;
    py::dict cuts;
    for (int r = 0; r < TT_RT_CUT_COUNT; r++)
        if (m.cuts[r]) cuts[tt_rt_cut_reason_name((tt_rt_cut_reason)r)] = m.cuts[r];
    d["cuts"] = cuts;
    d["fused_windows"] = m.windows;
    d["fused_window_ops"] = m.window_ops;
    d["pending_dropped"] = m.pending_dropped;
    d["fused_window_replays"] = m.window_replays;  // windows whose recorded trace was cached: program not rebuilt
    d["bucketed_windows"] = m.bucket_windows;      // windows run as their bucket's program (torchtpu.mark_dynamic)
    d["bucket_refused"] = m.bucket_refused;        // windows with a marked input run per size (TORCHTPU_LOG=fusion: why)
    d["signature_hits"] = signature_hits();      // ops that reused their program without lowering (op_plan.h)
    d["signature_misses"] = signature_misses();  // ops looked up and lowered
    return d;
}

static std::vector<std::string> lowered_ops() {
    std::vector<std::string> names;
    tt_lower_foreach([](void* u, const char* n) { static_cast<std::vector<std::string>*>(u)->push_back(n); }, &names);
    return names;
}

static tt_rt_eager_mode eager_mode_from_name(const std::string& mode) {
    if (mode == "debug") return TT_EAGER_DEBUG;
    if (mode == "strict") return TT_EAGER_STRICT;
    if (mode == "fused") return TT_EAGER_FUSED;
    throw py::value_error("eager mode must be 'debug', 'strict' or 'fused', got '" + mode + "'");
}

PYBIND11_MODULE(_C, m) {
    tt_rt_set_where_hook(python_where);
    m.def("init", [] { ensure_init(); });
    m.def("device_count", [] { ensure_init(); return tt_rt_device_count(); });
    m.def("current_device", [] { return (int)current_device(); });
    m.def("set_device", [](int d) { set_current_device((c10::DeviceIndex)d); });
    m.def("driver_name", [] { ensure_init(); return std::string(tt_rt_driver_name()); });
    m.def("driver_identity", [] { ensure_init(); return std::string(tt_rt_driver_identity()); });
    m.def("synchronize", [](int d) {
        ensure_init();
        py::gil_scoped_release nogil;
        check(tt_rt_synchronize(d));
    });
    m.def("flush", [](int d) {
        ensure_init();
        py::gil_scoped_release nogil;
        check(tt_rt_flush(d, TT_RT_CUT_FLUSH));
    });
    m.def("set_eager_mode", [](const std::string& mode) {
        ensure_init();
        tt_rt_eager_mode md = eager_mode_from_name(mode);
        py::gil_scoped_release nogil;
        check(tt_rt_set_eager_mode(md));
    });
    m.def("get_eager_mode", [] { ensure_init(); return std::string(tt_rt_eager_mode_name(tt_rt_get_eager_mode())); });
    m.def("manual_seed", [](int d, uint64_t s) { ensure_init(); tt_rt_manual_seed(d, s); });
    m.def("initial_seed", [](int d) { ensure_init(); return tt_rt_initial_seed(d); });
    m.def("get_rng_state", [](int d) {
        ensure_init();
        uint64_t s, o;
        tt_rt_rng_get_state(d, &s, &o);
        return std::make_pair(s, o);
    });
    m.def("set_rng_state", [](int d, uint64_t s, uint64_t o) { ensure_init(); tt_rt_rng_set_state(d, s, o); });
    m.def("reset_peak_memory_stats", [](int d) { ensure_init(); tt_rt_memory_reset_peak(d); });
    m.def("empty_cache", [](int d) { ensure_init(); tt_rt_empty_cache(d); });
    m.def("metrics", &metrics);
    m.def("reset_metrics", [] {
        ensure_init();
        tt_rt_metrics_reset();
        reset_fallback_counts();
        reset_signature_counts();
    });
    m.def("set_signature_cache", [](bool on) { set_signature_cache_enabled(on); });
    m.def("set_op_lines", [](bool on) { ensure_init(); tt_rt_set_op_lines(on); });
    m.def("get_op_lines", [] { ensure_init(); return tt_rt_get_op_lines(); });
    m.def("get_signature_cache", [] { return signature_cache_enabled(); });
    m.def("cache_clear", [] { ensure_init(); tt_rt_cache_clear(); });
    m.def("set_cpu_fallback", [](bool on) { set_cpu_fallback_enabled(on); });
    m.def("get_cpu_fallback", [] { return cpu_fallback_enabled(); });
    m.def("set_precision", [](int p) {
        TORCH_CHECK(p >= TT_PRECISION_DEFAULT && p <= TT_PRECISION_FP32, "bad precision ", p);
        set_precision((tt_precision)p);
    });
    m.def("get_precision", [] { return (int)current_precision(); });  // the calling thread's, in effect
    m.def("get_process_precision", [] { return (int)process_precision(); });
    m.def("set_thread_precision", [](int p) {
        TORCH_CHECK(p >= -1 && p <= TT_PRECISION_FP32, "bad precision ", p);
        set_thread_precision(p);
    });
    m.def("get_thread_precision", [] { return thread_precision(); });
    m.def("has_lowering", &has_native);
    m.def("lowered_ops", &lowered_ops);
    m.def("register_lowered_kernels", &register_lowered_kernels);
    // C++ references to a tensor's TensorImpl (Python's own included): tests of the borrowed-argument kernels
    m.def("tensor_use_count", [](const at::Tensor& t) { return (int64_t)t.use_count(); });
    m.def("set_borrow_args", &set_borrow_args);
    m.def("trace_begin", &trace_begin);
    m.def("trace_abort", &trace_abort);
    m.def("trace_end", &trace_end);
    m.def("host_cpu_features", [] { return std::string(tt_host_cpu_features()); });
    m.def("host_num_threads", [] { return tt_host_num_threads(); });

    // ---- device API: streams, memory, compile cache telemetry (device helper)
    m.def("device_stats", [](int d) {
        tt_rt_memory_stats ms = device_memory_stats((c10::DeviceIndex)d);
        py::dict r;
        r["allocated"] = ms.allocated;
        r["peak_allocated"] = ms.peak_allocated;
        r["reserved"] = ms.reserved;
        r["peak_reserved"] = ms.peak_reserved;
        r["limit"] = ms.limit;
        r["n_allocs"] = ms.n_allocs;
        return r;
    });
    m.def("mem_get_info", [](int d) {
        ensure_init();
        TORCH_CHECK(d >= 0 && d < tt_rt_device_count(), "Invalid device index tpu:", d);
        return device_memory_info((c10::DeviceIndex)d);
    });
    m.def("stream_position", [](int d) {
        ensure_init();
        return std::make_pair(tt_rt_stream_enqueued(d), tt_rt_stream_completed(d));
    });
    m.def("cache_stats", [] {
        ensure_init();
        tt_rt_cache_stats cs{};
        tt_rt_cache_stats_get(&cs);
        py::dict r;
        r["requests"] = cs.requests;
        r["hits"] = cs.hits;
        r["compilations"] = cs.compilations;
        r["evictions"] = cs.evictions;
        r["entries"] = cs.entries;
        r["capacity"] = cs.capacity;
        r["scratch_bytes"] = cs.scratch_bytes;
        // Copied under the cache lock (the entry's op name is borrowed); Python objects are made after it.
        std::pair<std::vector<tt_rt_cache_entry_stats>, std::vector<std::string>> got;
        tt_rt_cache_foreach(
            [](void* u, const tt_rt_cache_entry_stats* e) {
                auto* p = static_cast<decltype(got)*>(u);
                p->first.push_back(*e);
                p->second.push_back(e->first_op ? e->first_op : "");
            },
            &got);
        auto& es = got.first;
        auto& ops = got.second;
        py::list entries;
        for (size_t i = 0; i < es.size(); i++) {
            py::dict e;
            e["key"] = es[i].key;
            e["compilation_duration"] = es[i].compilation_duration;
            e["last_read"] = es[i].last_read;
            e["read_count"] = es[i].read_count;
            e["scratch_bytes"] = es[i].scratch_bytes;
            e["first_op"] = ops[i];
            entries.append(e);
        }
        r["per_entry"] = entries;
        tt_rt_disk_stats ds{};
        tt_rt_disk_stats_get(&ds);
        py::dict disk;
        disk["hits"] = ds.hits;
        disk["misses"] = ds.misses;
        disk["writes"] = ds.writes;
        disk["corrupt"] = ds.corrupt;
        disk["evictions"] = ds.evictions;
        disk["errors"] = ds.errors;
        disk["max_bytes"] = ds.max_bytes;
        disk["dir"] = std::string(ds.dir ? ds.dir : "");
        disk["active"] = ds.active;
        r["disk"] = disk;
        return r;
    });
    m.def("cache_reset_stats", [] {
        ensure_init();
        tt_rt_cache_reset_stats();
        tt_rt_disk_reset_stats();
    });
    m.def("cache_set_capacity", [](int64_t n) { ensure_init(); check(tt_rt_cache_set_capacity(n)); });
    m.def("cache_set_only", [](bool on) { tt_rt_cache_set_only(on); });
    m.def("cache_get_only", [] { return tt_rt_cache_get_only(); });
    m.def("cache_set_allow", [](bool on) { tt_rt_cache_set_allow(on); });
    m.def("cache_get_allow", [] { return tt_rt_cache_get_allow(); });
    m.def("cache_set_dump_on_miss", [](bool on) { tt_rt_cache_set_dump_on_miss(on); });
    // ---- compiled graphs (torchtpu/_compile.py): begin returns the thread's mode, for end to restore
    m.def("graph_begin", [](int d, const std::string& name) {
        ensure_init();
        int prev = TT_EAGER_PROCESS;
        py::gil_scoped_release nogil;
        check(tt_rt_graph_begin(d, name.c_str(), &prev));
        return prev;
    });
    m.def("graph_end", [](int d, int prev) {
        ensure_init();
        py::gil_scoped_release nogil;
        check(tt_rt_graph_end(d, prev));
    });
    register_graph(m);  // graph_end_capture, GraphReplay (graph.cpp)
    register_aot(m);    // capture_start/stop, pjrt_aot_compile (aot.cpp)
    // ---- eager modes: the calling thread's override ("" = none: the process mode applies)
    m.def("set_thread_eager_mode", [](const std::string& mode) {
        ensure_init();
        check(tt_rt_set_thread_eager_mode(mode.empty() ? TT_EAGER_PROCESS : (int)eager_mode_from_name(mode)));
    });
    m.def("get_thread_eager_mode", [] {
        int md = tt_rt_get_thread_eager_mode();
        return md == TT_EAGER_PROCESS ? std::string() : std::string(tt_rt_eager_mode_name((tt_rt_eager_mode)md));
    });
    m.def("get_process_eager_mode", [] {
        ensure_init();
        return std::string(tt_rt_eager_mode_name(tt_rt_get_process_eager_mode()));
    });
    // ---- torch.tpu names: the default generators as torch.Generator objects (torch.tpu caches the tuple, as
    // torch.cuda does: each object is made once and lives as long as the process)
    m.def("default_generators", [] {
        ensure_init();
        int n = tt_rt_device_count();
        py::tuple t(n);
        for (int i = 0; i < n; i++) {
            PyObject* g = THPGenerator_initDefaultGenerator(default_generator((c10::DeviceIndex)i));
            if (!g) throw py::error_already_set();
            t[i] = py::reinterpret_steal<py::object>(g);
        }
        return t;
    });
    // ---- benchmarks: PyTorch CPU tensors' peak bytes while tracking (cpu_memory.cpp)
    m.def("cpu_memory_track", &cpu_memory_track);
    m.def("cpu_memory_peak", &cpu_memory_peak);
    // ---- exit
    m.def("quiesce_for_exit", &quiesce_for_exit);
}
