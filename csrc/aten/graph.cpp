// graph.cpp — a compiled graph launched again without recording its ops (torchtpu/_compile.py).
//
// The first calls of a graph record its ATen ops through the dispatcher into one window (csrc/runtime/graph.c).
// When that ran as one program, GraphReplay keeps what it launched and maps it onto the call's tensors: each
// program argument to the input whose storage it read (or a constant storage the graph holds), each program
// result to an input it wrote or to a new storage, each graph output to a view of one of those. A later call whose
// inputs are laid out the same (dtype, sizes, strides, offset, storage size, which inputs share a storage; equal
// numbers: a dynamic graph's sizes) and runs at the same precision launches the program on its own storages: no Python per op, no dispatch, no
// lowering; its random draws (dropout) take new counters from the device's generator, as recording would. Anything
// else records again.
#include <torch/extension.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "shim.h"

namespace torchtpu {
namespace {

// A tensor's place in its storage: what an input must match at replay, what an output is made with.
struct Layout {
    c10::ScalarType dtype = c10::ScalarType::Undefined;
    std::vector<int64_t> sizes, strides;
    int64_t offset = 0;
    static Layout of(const at::Tensor& t) {
        return {t.scalar_type(), t.sizes().vec(), t.strides().vec(), t.storage_offset()};
    }
    bool matches(const at::Tensor& t) const {
        return t.scalar_type() == dtype && t.sizes().equals(sizes) && t.strides().equals(strides) &&
               t.storage_offset() == offset;
    }
};

struct Input {
    bool tensor = false;
    py::object value;                  // a number input (a size of a dynamic graph): equal at replay
    tt_rt_storage* storage = nullptr;  // at capture (identity only)
    int group = -1;                    // the first input with the same storage
    Layout layout;
    size_t nbytes = 0;
};

struct Source {       // where a program argument's or result's storage comes from at replay
    int input = -1;   // an input's storage
    int fresh = -1;   // a storage made for this call (results only)
};

struct Output {
    bool none = true;
    Source from;
    Layout layout;
};

at::Tensor view_of(const c10::Storage& st, const Layout& l) {
    auto t = at::detail::make_tensor<c10::TensorImpl>(c10::Storage(st), c10::DispatchKeySet(c10::DispatchKey::PrivateUse1),
                                                      caffe2::TypeMeta::fromScalarType(l.dtype));
    t.unsafeGetTensorImpl()->set_sizes_and_strides(l.sizes, l.strides, l.offset);
    return t;
}

}  // namespace

class GraphReplay {
  public:
    GraphReplay(int device, std::string name, tt_rt_graph_run* run, tt_precision precision)
        : device_(device), name_(std::move(name)), run_(run), precision_(precision) {}
    ~GraphReplay() { tt_rt_graph_run_free(run_); }
    GraphReplay(const GraphReplay&) = delete;
    GraphReplay& operator=(const GraphReplay&) = delete;

    // Maps the captured program onto the call that produced it; false: not replayable.
    bool map(const py::list& inputs, const py::sequence& outputs) {
        std::unordered_map<tt_rt_storage*, int> by_storage;
        for (size_t j = 0; j < inputs.size(); j++) {
            Input in;
            py::handle h = inputs[j];
            if (!h.is_none() && !THPVariable_Check(h.ptr())) {
                // a size (a dynamic graph's) or a number: the program was recorded for this value
                if (!py::isinstance<py::int_>(h) && !py::isinstance<py::float_>(h)) return false;
                in.value = py::reinterpret_borrow<py::object>(h);
            } else if (!h.is_none()) {
                const at::Tensor& t = THPVariable_Unpack(h.ptr());
                if (t.device().type() != c10::DeviceType::PrivateUse1 || t.device().index() != device_) return false;
                in.tensor = true;
                in.storage = storage_for_read(t);
                in.layout = Layout::of(t);
                in.nbytes = t.storage().nbytes();
                if (in.storage) in.group = by_storage.emplace(in.storage, (int)j).first->second;
            }
            inputs_.push_back(std::move(in));
        }
        const tt_rt_arg* args = nullptr;
        const tt_rt_tensor* results = nullptr;
        int32_t n_args = tt_rt_graph_run_args(run_, &args), n_results = tt_rt_graph_run_results(run_, &results);
        std::unordered_map<tt_rt_storage*, int> written;  // storage -> result index
        for (int32_t k = 0; k < n_results; k++) {
            Source src;
            auto it = by_storage.find(results[k].storage);
            if (it != by_storage.end()) {
                src.input = it->second;
            } else {
                src.fresh = (int)fresh_bytes_.size();
                fresh_bytes_.push_back(tt_rt_storage_nbytes(results[k].storage));
            }
            written.emplace(results[k].storage, k);
            result_src_.push_back(src);
        }
        for (int32_t i = 0; i < n_args; i++) {
            Source src;
            if (args[i].kind == TT_RT_ARG_TENSOR && args[i].tensor.storage) {
                auto it = by_storage.find(args[i].tensor.storage);
                if (it != by_storage.end()) src.input = it->second;
                else if (written.count(args[i].tensor.storage)) return false;  // read and made by the graph
                // else: a constant the graph holds (retained by the capture), read as it is
            }
            arg_src_.push_back(src);
        }
        if (!map_rng(args, n_args)) return false;
        std::vector<bool> used(fresh_bytes_.size(), false);
        for (py::handle h : outputs) {
            Output o;
            if (!h.is_none()) {
                if (!THPVariable_Check(h.ptr())) return false;
                const at::Tensor& t = THPVariable_Unpack(h.ptr());
                tt_rt_storage* s = t.device().type() == c10::DeviceType::PrivateUse1 ? storage_for_read(t) : nullptr;
                if (!s) return false;
                auto w = written.find(s);
                auto in = by_storage.find(s);
                if (w != written.end()) o.from = result_src_[w->second];
                else if (in != by_storage.end()) o.from.input = in->second;
                else return false;  // neither written by the program nor an input
                if (o.from.fresh >= 0) used[o.from.fresh] = true;
                o.none = false;
                o.layout = Layout::of(t);
            }
            outputs_.push_back(std::move(o));
        }
        for (bool u : used)
            if (!u) return false;  // a result nobody returns: the capture kept something else alive
        tuple_ = py::isinstance<py::tuple>(outputs);
        // only the constants stay referenced: the capturing call's inputs and outputs must not outlive it
        std::unique_ptr<bool[]> keep(new bool[n_args > 0 ? n_args : 1]());
        for (int32_t i = 0; i < n_args; i++) keep[i] = args[i].kind == TT_RT_ARG_TENSOR && arg_src_[i].input < 0;
        tt_rt_graph_run_drop_storages(run_, keep.get());
        return true;
    }

    // The graph's random draws: consecutive counters of one seed (the device's default generator, as recording
    // reserves them), reserved again in one piece per call so a replay draws what recording the graph would.
    bool map_rng(const tt_rt_arg* args, int32_t n_args) {
        std::vector<std::pair<uint64_t, uint64_t>> draws;  // (first counter, count)
        bool have_seed = false;
        int64_t seed = 0;
        for (int32_t i = 0; i < n_args; i++) {
            if (args[i].kind != TT_RT_ARG_SCALAR || args[i].rng == TT_RT_RNG_NONE) continue;
            rng_args_.push_back(i);
            if (args[i].rng == TT_RT_RNG_OFFSET) {
                draws.emplace_back((uint64_t)args[i].i, args[i].rng_count);
            } else {
                if (have_seed && args[i].i != seed) return false;  // two generators
                have_seed = true;
                seed = args[i].i;
            }
        }
        if (draws.empty()) return true;
        std::sort(draws.begin(), draws.end());
        for (size_t k = 0; k + 1 < draws.size(); k++)
            if (draws[k].first + draws[k].second != draws[k + 1].first) return false;  // not one piece
        rng_base_ = draws.front().first;
        rng_total_ = draws.back().first + draws.back().second - rng_base_;
        return true;
    }

    // The graph's outputs for this call, or None when the call's inputs are not laid out as the capture's.
    py::object run(const py::list& inputs) {
        if (inputs.size() != inputs_.size() || current_precision() != precision_) return py::none();
        std::vector<at::Tensor> in(inputs.size());
        std::unordered_map<tt_rt_storage*, int> leaders;
        for (size_t j = 0; j < inputs.size(); j++) {
            const Input& want = inputs_[j];
            py::handle h = inputs[j];
            if (!want.tensor) {
                if (want.value) {
                    if (h.is_none() || THPVariable_Check(h.ptr()) || !want.value.equal(h)) return py::none();
                } else if (!h.is_none()) {
                    return py::none();
                }
                continue;
            }
            if (!THPVariable_Check(h.ptr())) return py::none();
            in[j] = THPVariable_Unpack(h.ptr());
            if (in[j].device().type() != c10::DeviceType::PrivateUse1 || in[j].device().index() != device_ ||
                !want.layout.matches(in[j]) || in[j].storage().nbytes() != want.nbytes)
                return py::none();
            tt_rt_storage* s = storage_for_read(in[j]);
            if (!s != !want.storage) return py::none();
            if (!s) continue;
            if (want.group == (int)j) {
                if (!leaders.emplace(s, (int)j).second) return py::none();  // shares a storage it did not share
            } else if (storage_for_read(in[want.group]) != s) {
                return py::none();
            }
        }
        const tt_rt_arg* cargs = nullptr;
        const tt_rt_tensor* cres = nullptr;
        int32_t n_args = tt_rt_graph_run_args(run_, &cargs), n_results = tt_rt_graph_run_results(run_, &cres);
        std::vector<c10::Storage> fresh;
        {
            PendingResults pending;  // memory only when the program's cut finds them referenced
            for (size_t nbytes : fresh_bytes_)
                fresh.emplace_back(c10::Storage::use_byte_size_t(), nbytes, allocate_on((c10::DeviceIndex)device_, nbytes),
                                   tpu_allocator_for((c10::DeviceIndex)device_), false);
        }
        auto storage = [&](const Source& src, bool write) -> tt_rt_storage* {
            if (src.fresh >= 0) return storage_of(fresh[src.fresh]);
            return write ? storage_of(in[src.input].storage()) : storage_for_read(in[src.input].storage());
        };
        std::vector<tt_rt_arg> args(cargs, cargs + n_args);
        std::vector<tt_rt_tensor> results(cres, cres + n_results);
        for (int32_t k = 0; k < n_results; k++) results[k].storage = storage(result_src_[k], true);
        for (int32_t i = 0; i < n_args; i++)
            if (arg_src_[i].input >= 0) args[i].tensor.storage = storage(arg_src_[i], false);
        if (!rng_args_.empty()) {
            uint64_t seed = 0, first = 0;
            rng_reserve_on(nullptr, device_, rng_total_, &seed, &first);
            for (int32_t i : rng_args_)
                args[i].i = args[i].rng == TT_RT_RNG_SEED ? (int64_t)seed : (int64_t)(first + ((uint64_t)cargs[i].i - rng_base_));
        }
        {
            py::gil_scoped_release nogil;
            TT_CHECK(tt_rt_graph_replay(device_, run_, name_.c_str(), args.data(), results.data()));
        }
        for (int32_t k = 0; k < n_results; k++)  // as the recorded in-place ops would have
            if (result_src_[k].input >= 0 && !in[result_src_[k].input].is_inference())
                in[result_src_[k].input].unsafeGetTensorImpl()->bump_version();
        py::list out;
        for (const Output& o : outputs_) {
            if (o.none) out.append(py::none());
            else if (o.from.fresh >= 0) out.append(view_of(fresh[o.from.fresh], o.layout));
            else out.append(view_of(in[o.from.input].storage(), o.layout));
        }
        replays_++;
        if (tuple_) return py::tuple(out);
        return std::move(out);
    }

    int64_t replays() const { return replays_; }

  private:
    int device_;
    std::string name_;
    tt_rt_graph_run* run_;
    tt_precision precision_;
    std::vector<Input> inputs_;
    std::vector<Source> arg_src_, result_src_;
    std::vector<size_t> fresh_bytes_;  // the storages a call makes, by size
    std::vector<Output> outputs_;
    std::vector<int32_t> rng_args_;  // seed and counter arguments
    uint64_t rng_base_ = 0, rng_total_ = 0;
    bool tuple_ = false;
    int64_t replays_ = 0;
};

void register_graph(py::module& m) {
    py::class_<GraphReplay>(m, "GraphReplay")
        .def("run", &GraphReplay::run)
        .def_property_readonly("replays", &GraphReplay::replays);
    // graph_end that keeps what the graph launched for GraphReplay.run (None when it cannot be replayed)
    m.def("graph_end_capture", [](int d, int prev, const std::string& name, const py::list& inputs,
                                  const py::sequence& outputs) -> py::object {
        ensure_init();
        tt_rt_graph_run* run = nullptr;
        tt_status st;
        {
            py::gil_scoped_release nogil;
            st = tt_rt_graph_end_capture(d, prev, &run);
        }
        if (st != TT_OK) {
            tt_rt_graph_run_free(run);
            raise_status(st, "");
        }
        if (!run) return py::none();
        auto r = std::make_unique<GraphReplay>(d, name, run, current_precision());
        if (!r->map(inputs, outputs)) return py::none();
        return py::cast(std::move(r));
    });
    // Rows of row_elems elements from one contiguous tensor to another, rows dst_row_elems / src_row_elems apart
    // (torchtpu/_buckets.py pads a graph's inputs to a bucket and cuts its results back). Queued, and no program:
    // the same call for every size.
    m.def("copy_rows", [](const at::Tensor& dst, const at::Tensor& src, int64_t rows, int64_t row_elems,
                          int64_t dst_row_elems, int64_t src_row_elems) {
        ensure_init();
        TORCH_CHECK(dst.device().type() == c10::DeviceType::PrivateUse1 && src.device() == dst.device() &&
                        src.scalar_type() == dst.scalar_type() && src.is_contiguous() && dst.is_contiguous(),
                    "copy_rows: two contiguous tpu tensors of one dtype on one device");
        TORCH_CHECK(rows >= 0 && row_elems >= 0 && dst_row_elems >= row_elems && src_row_elems >= row_elems &&
                        (rows == 0 || ((rows - 1) * src_row_elems + row_elems <= src.numel() &&
                                       (rows - 1) * dst_row_elems + row_elems <= dst.numel())),
                    "copy_rows: rows do not fit the tensors");
        if (rows == 0 || row_elems == 0) return;
        const size_t es = (size_t)src.element_size();
        tt_rt_storage* d = storage_of(dst);
        tt_rt_storage* s = storage_for_read(src);
        py::gil_scoped_release nogil;
        TT_CHECK(tt_rt_copy_rows(d, (size_t)dst.storage_offset() * es, (size_t)dst_row_elems * es, s,
                                 (size_t)src.storage_offset() * es, (size_t)src_row_elems * es,
                                 (size_t)row_elems * es, (size_t)rows));
    });
    // Bounded sizes in fused eager mode (torchtpu.mark_dynamic; csrc/runtime/bucket_launch.c): dim `dim` of the
    // tensor that fills its storage varies, padded to `bucket` (0: unmark).
    m.def("mark_dynamic", [](const at::Tensor& t, int64_t dim, int64_t bucket) {
        ensure_init();
        TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "mark_dynamic: a tpu tensor, got ", t.device());
        TORCH_CHECK(t.is_contiguous() && t.storage_offset() == 0 &&
                        (size_t)t.numel() * (size_t)t.element_size() == t.storage().nbytes(),
                    "mark_dynamic: the tensor must fill its storage contiguously (mark the tensor the data was "
                    "created as, or a .contiguous() copy)");
        std::vector<int64_t> dims(t.sizes().begin(), t.sizes().end());
        TT_CHECK(tt_rt_mark_dynamic(storage_of(t), (int32_t)dims.size(), dims.data(), (int32_t)dim, bucket));
    });
    m.def("marked_bucket", [](const at::Tensor& t) {
        ensure_init();
        TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "marked_bucket: a tpu tensor");
        int64_t size = 0, bucket = tt_rt_storage_bucket(storage_of(t), &size);
        return py::make_tuple(size, bucket);
    });
}

}  // namespace torchtpu
