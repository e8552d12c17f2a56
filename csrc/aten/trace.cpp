// trace.cpp — torchtpu.stablehlo(fn, *args): every launch fn makes is also inlined into one traced program.
// The trace lives in a c10::ThreadLocalDebugInfo slot, not a plain thread_local: PyTorch carries that state into
// the threads that work for the tracing thread (autograd's device threads run backward() with the caller's
// ThreadLocalState), so the ops of a backward() inside fn are recorded too.
#include <c10/util/ThreadLocalDebugInfo.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "shim.h"

namespace torchtpu {

struct TraceEntry {
    std::vector<int64_t> sizes, strides;
    int64_t offset;
    tt_dtype dtype;
    tt_ir_value value;
};

struct Trace : c10::DebugInfoBase {
    std::mutex mu;  // the tracing thread and autograd's device threads record concurrently
    tt_ir_builder* b = nullptr;
    std::string unsupported;  // why the traced function cannot be one program (reported by trace_end)
    std::unordered_map<const c10::StorageImpl*, std::vector<TraceEntry>> produced;
    std::vector<at::Tensor> keep;  // tensors whose storages are keys above
    ~Trace() override { tt_ir_builder_destroy(b); }
};

static constexpr std::string_view kTraceName = "TORCHTPU_STABLEHLO_TRACE";
static const c10::DebugInfoKind kTraceKind(&kTraceName);

static Trace* current_trace() { return static_cast<Trace*>(c10::ThreadLocalDebugInfo::get(kTraceKind)); }

bool trace_active() { return current_trace() != nullptr; }

static bool same_view(const TraceEntry& e, const at::Tensor& t, tt_dtype dt) {
    return e.dtype == dt && e.offset == t.storage_offset() && at::IntArrayRef(e.sizes) == t.sizes() &&
           at::IntArrayRef(e.strides) == t.strides();
}

// The trace value for a tensor read by a launch: a value produced earlier in the trace (directly, or through a
// reshape or transpose of it), else a new parameter of the traced program.
static tt_ir_value trace_value_of(Trace& tr, const at::Tensor& t) {
    tt_dtype dt;
    TORCH_CHECK(to_tt_dtype(t.scalar_type(), &dt), "stablehlo: unsupported dtype ", t.scalar_type());
    auto it = tr.produced.find(t.storage().unsafeGetStorageImpl());
    if (it != tr.produced.end()) {
        for (auto eit = it->second.rbegin(); eit != it->second.rend(); ++eit)
            if (same_view(*eit, t, dt)) return eit->value;
        const TraceEntry& base = it->second.back();
        bool base_contig = base.offset == t.storage_offset() && base.dtype == dt &&
                           at::IntArrayRef(base.strides) == c10::contiguous_strides(base.sizes);
        if (base_contig && t.is_contiguous() && t.numel() == c10::multiply_integers(base.sizes)) {
            std::vector<int64_t> d(t.sizes().begin(), t.sizes().end());
            return tt_ir_reshape(tr.b, base.value, (int32_t)d.size(), d.data());
        }
        if (base_contig && (size_t)t.dim() == base.sizes.size()) {  // a permutation of the base's dims
            std::vector<int64_t> perm;
            for (int64_t i = 0; i < t.dim(); i++)
                for (size_t j = 0; j < base.sizes.size(); j++)
                    if (base.strides[j] == t.stride(i) && base.sizes[j] == t.size(i) &&
                        std::find(perm.begin(), perm.end(), (int64_t)j) == perm.end()) {
                        perm.push_back((int64_t)j);
                        break;
                    }
            if ((int64_t)perm.size() == t.dim()) return tt_ir_transpose(tr.b, base.value, perm.data());
        }
        if (base_contig && t.dim() >= (int64_t)base.sizes.size()) {  // an expand of the base (backward's grads)
            const int64_t lead = t.dim() - (int64_t)base.sizes.size();
            bool expand = true;
            std::vector<int64_t> dims;
            for (int64_t i = 0; i < lead && expand; i++) expand = t.stride(i) == 0;
            for (size_t j = 0; j < base.sizes.size() && expand; j++) {
                const int64_t i = lead + (int64_t)j;
                expand = base.sizes[j] == t.size(i) ? (t.stride(i) == base.strides[j] || t.size(i) == 1)
                                                    : (base.sizes[j] == 1 && t.stride(i) == 0);
                dims.push_back(i);
            }
            if (expand) {
                std::vector<int64_t> d(t.sizes().begin(), t.sizes().end());
                return tt_ir_broadcast_in_dim(tr.b, base.value, (int32_t)d.size(), d.data(), dims.data());
            }
        }
    }
    std::vector<int64_t> d(t.sizes().begin(), t.sizes().end());
    tt_ir_value v = tt_ir_param(tr.b, dt, (int32_t)d.size(), d.data());
    tr.produced[t.storage().unsafeGetStorageImpl()].push_back(
        {d, std::vector<int64_t>(t.strides().begin(), t.strides().end()), t.storage_offset(), dt, v});
    tr.keep.push_back(t);
    return v;
}

void trace_record(const tt_ir_program* prog, const std::pair<int32_t, at::Tensor>* params, size_t n_params,
                  const tt_lower_ctx& ctx, const at::Tensor* results, size_t n_results) {
    Trace* trp = current_trace();
    if (!trp) return;
    Trace& tr = *trp;
    std::lock_guard<std::mutex> g(tr.mu);
    std::vector<tt_ir_value> pv(prog->n_params, TT_IR_NONE);
    for (size_t k = 0; k < n_params; k++) pv[params[k].first] = trace_value_of(tr, params[k].second);
    for (int32_t k = 0; k < ctx.n_scalars; k++)
        pv[ctx.scalars[k].param_index] = tt_ir_scalar_param(tr.b, ctx.scalars[k].dtype);
    std::vector<tt_ir_value> outs(prog->n_outputs, TT_IR_NONE);
    TT_CHECK(tt_ir_builder_inline(tr.b, prog, pv.data(), outs.data()));
    for (size_t j = 0; j < n_results; j++) {
        const at::Tensor& t = results[j];
        tt_dtype dt;
        to_tt_dtype(t.scalar_type(), &dt);
        auto& entries = tr.produced[t.storage().unsafeGetStorageImpl()];
        // A write into part of a tensor the trace already knows (y[0] = 5) would need a dynamic_update_slice of
        // the base; until tracing records that, refuse rather than return a program that drops the write.
        bool partial = false;
        for (const auto& e : entries)
            partial = partial || !same_view(e, t, dt);
        if (partial && tr.unsupported.empty())
            tr.unsupported = "it writes into part of a tensor (an in-place op on a view, e.g. y[0] = 5)";
        entries.push_back({std::vector<int64_t>(t.sizes().begin(), t.sizes().end()),
                           std::vector<int64_t>(t.strides().begin(), t.strides().end()), t.storage_offset(), dt,
                           outs[j]});
        tr.keep.push_back(t);
    }
}

void trace_begin() {
    TORCH_CHECK(!current_trace(), "stablehlo: a trace is already running on this thread");
    auto tr = std::make_shared<Trace>();
    tr->b = tt_ir_builder_create();
    TORCH_CHECK(tr->b, "stablehlo: out of memory");
    c10::ThreadLocalDebugInfo::_push(kTraceKind, tr);
}

void trace_abort() {
    if (current_trace()) c10::ThreadLocalDebugInfo::_pop(kTraceKind);
}

void trace_note_host_write() {
    Trace* tr = current_trace();
    if (!tr) return;
    std::lock_guard<std::mutex> g(tr->mu);
    if (tr->unsupported.empty()) tr->unsupported = "it copies host data into a tpu tensor inside the function";
}

std::string trace_end(const std::vector<at::Tensor>& outputs) {
    Trace* trp = current_trace();
    TORCH_CHECK(trp, "stablehlo: no trace is running");
    Trace& tr = *trp;
    std::string text;
    try {
        std::lock_guard<std::mutex> g(tr.mu);
        TORCH_CHECK_NOT_IMPLEMENTED(tr.unsupported.empty(), "stablehlo: cannot trace this function as one program: ",
                                    tr.unsupported, "; pass such tensors in as arguments instead");
        for (const auto& t : outputs) {
            TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1, "stablehlo: outputs must be tpu tensors");
            tt_ir_builder_add_output(tr.b, trace_value_of(tr, t));
        }
        tt_ir_program* prog = nullptr;
        TT_CHECK(tt_ir_builder_finish(tr.b, &prog));
        char* s = nullptr;
        tt_status st = tt_ir_print_stablehlo(prog, &s);
        tt_ir_program_destroy(prog);
        if (st != TT_OK) raise_status(st, "stablehlo");
        text = s;
        free(s);
    } catch (...) {
        trace_abort();
        throw;
    }
    trace_abort();
    return text;
}

}  // namespace torchtpu
