// sparse.cpp — sparse COO tensors on tpu (layout torch.sparse_coo), as PyTorch keeps them: a SparseTensorImpl
// holding a dense indices tensor and a dense values tensor, both on the device.
//
// The structure ops (make, take apart, resize, copy) are PyTorch's own device-agnostic kernels, registered for the
// SparsePrivateUse1 key as CUDA registers them for SparseCUDA. The arithmetic has no native lowering: every other op
// that meets a sparse tpu tensor runs on the CPU (the components copied over and back, counted and warned about as
// any CPU fallback), so sparse code works unchanged, slowly.
#include <ATen/native/CPUFallback.h>
#include <ATen/ops/_coalesced_native.h>
#include <ATen/ops/_indices_native.h>
#include <ATen/ops/_nnz_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_and_tensors_native.h>
#include <ATen/ops/_sparse_coo_tensor_with_dims_native.h>
#include <ATen/ops/_values_native.h>
#include <ATen/ops/copy_sparse_to_sparse_native.h>
#include <ATen/ops/dense_dim_native.h>
#include <ATen/ops/empty_native.h>
#include <ATen/ops/indices_native.h>
#include <ATen/ops/is_coalesced_native.h>
#include <ATen/ops/sparse_dim_native.h>
#include <ATen/ops/sparse_resize_and_clear_native.h>
#include <ATen/ops/sparse_resize_native.h>
#include <ATen/ops/values_native.h>
#include <torch/library.h>

#include "shim.h"

namespace torchtpu {
namespace {

// The components move, the structure stays: a sparse tensor is remade around copies of its indices and values.
at::Tensor sparse_on(const at::Tensor& t, c10::Device device) {
    return at::_sparse_coo_tensor_with_dims_and_tensors(t.sparse_dim(), t.dense_dim(), t.sizes(),
                                                        t._indices().to(device), t._values().to(device),
                                                        t.options().device(device), t.is_coalesced());
}
at::Tensor moved(const at::Tensor& t, c10::Device device) {
    if (!t.defined() || t.device() == device) return t;
    return t.is_sparse() ? sparse_on(t, device) : t.to(device);
}
c10::IValue moved(const c10::IValue& iv, c10::Device device) {
    if (iv.isTensor()) return moved(iv.toTensor(), device);
    if (iv.isTensorList()) {
        c10::List<at::Tensor> l;
        for (const at::Tensor& t : iv.toTensorList()) l.push_back(moved(t, device));
        return l;
    }
    if (iv.isDevice() && iv.toDevice().type() == c10::DeviceType::PrivateUse1) return c10::IValue(c10::Device(c10::kCPU));
    return iv;
}

// Every op without a structure kernel above: arguments to the CPU, the op there, results back; what the op writes
// (in-place, out=) is copied into the caller's tensors, which are returned as the schema says.
void sparse_cpu_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const auto& schema = op.schema();
    const std::string name = schema.operator_name().name + (schema.overload_name().empty() ? "" : "." + schema.overload_name());
    TORCH_CHECK_NOT_IMPLEMENTED(cpu_fallback_enabled(), "operator '", name, "' is not implemented for TPU sparse "
                                "tensors, and the CPU fallback is off (TORCHTPU_CPU_FALLBACK=0)");
    count_fallback(name, "has no native tpu lowering for sparse tensors");
    const size_t n = schema.arguments().size(), first = stack->size() - n;
    c10::Device device(c10::DeviceType::PrivateUse1, current_device());
    for (size_t i = 0; i < n; i++) {
        const c10::IValue& iv = (*stack)[first + i];
        if (iv.isTensor() && iv.toTensor().defined() && iv.toTensor().device().type() == c10::DeviceType::PrivateUse1) {
            device = iv.toTensor().device();
            break;
        }
    }
    std::vector<c10::IValue> originals(stack->begin() + first, stack->end());
    torch::jit::Stack cpu;
    for (const auto& iv : originals) cpu.push_back(moved(iv, c10::Device(c10::kCPU)));
    std::vector<c10::IValue> cpu_args(cpu.begin(), cpu.end());
    op.callBoxed(&cpu);
    for (size_t i = 0; i < n; i++) {  // writes back into the caller's tensors
        const auto* alias = schema.arguments()[i].alias_info();
        if (!alias || !alias->isWrite() || !originals[i].isTensor() || !originals[i].toTensor().defined()) continue;
        at::Tensor orig = originals[i].toTensor();
        orig.copy_(moved(cpu_args[i].toTensor(), orig.device()));
    }
    torch::jit::drop(*stack, n);
    const auto& rets = schema.returns();
    for (size_t r = 0; r < rets.size(); r++) {
        const auto* alias = rets[r].alias_info();
        size_t writes = n;
        for (size_t i = 0; alias && alias->isWrite() && i < n && writes == n; i++) {
            const auto* a = schema.arguments()[i].alias_info();
            if (a && a->isWrite() && a->beforeSets() == alias->beforeSets()) writes = i;
        }
        stack->push_back(writes < n ? originals[writes] : moved(cpu[r], device));
    }
}

at::Tensor& sparse_copy_(at::Tensor& self, const at::Tensor& src, bool non_blocking) {
    TORCH_CHECK(self.is_sparse() && src.is_sparse(), "copy_() between dense and sparse Tensors is not implemented! "
                "Found self type = ", self.toString(), " and src type = ", src.toString());
    return at::copy_sparse_to_sparse_(self, src, non_blocking);
}

}  // namespace

TORCH_LIBRARY_IMPL(aten, SparsePrivateUse1, m) {
    m.impl("copy_", sparse_copy_);
    m.impl("_sparse_coo_tensor_with_dims_and_tensors", at::native::new_with_dims_and_tensor_sparse_symint);
    m.impl("_sparse_coo_tensor_with_dims", at::native::new_with_dims_sparse);
    m.impl("empty.memory_format", at::native::empty_sparse);
    m.impl("_indices", at::native::_indices_sparse);
    m.impl("_values", at::native::_values_sparse);
    m.impl("indices", at::native::indices_sparse);
    m.impl("values", at::native::values_sparse);
    m.impl("_nnz", at::native::_nnz_sparse);
    m.impl("sparse_dim", at::native::sparse_dim_sparse);
    m.impl("dense_dim", at::native::dense_dim_sparse);
    m.impl("_dimI", at::native::sparse_dim_sparse);
    m.impl("_dimV", at::native::dense_dim_sparse);
    m.impl("is_coalesced", at::native::is_coalesced_sparse);
    m.impl("_coalesced_", at::native::_coalesced_sparse_);
    m.impl("sparse_resize_", at::native::sparse_resize_);
    m.impl("sparse_resize_and_clear_", at::native::sparse_resize_and_clear_);
    m.impl("copy_sparse_to_sparse_", at::native::copy_sparse_);
}

TORCH_LIBRARY_IMPL(_, SparsePrivateUse1, m) {
    m.fallback(torch::CppFunction::makeFromBoxedFunction<&sparse_cpu_fallback>());
}

}  // namespace torchtpu
