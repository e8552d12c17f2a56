// conversion.cpp — `param.data = t` between cpu and tpu tensors, which is what keeps Parameters (and so optimizers
// and tied weights) across nn.Module.to("tpu") and .cpu(), as on CUDA.
//
// Both Variable.set_data and nn.Module._apply ask aten::_has_compatible_shallow_copy_type whether one tensor's
// metadata may be shallow-copied into another. c10 answers true only within its own list of dense backends (CPU,
// CUDA, ...), which lacks PrivateUse1, so PyTorch would make new Parameters on every move. A cpu or tpu tensor is
// a plain strided TensorImpl like a CUDA one; for such pairs the answer here is true, for anything else PyTorch's.
#include <ATen/ATen.h>
#include <ATen/ops/_has_compatible_shallow_copy_type_native.h>
#include <torch/library.h>

#include <typeinfo>

namespace torchtpu {
namespace {

bool plain_dense(const at::Tensor& t) {
    const c10::DispatchKeySet ks = t.key_set();
    return t.layout() == at::kStrided && typeid(*t.unsafeGetTensorImpl()) == typeid(c10::TensorImpl) &&
           (ks.has(c10::DispatchKey::CPU) || ks.has(c10::DispatchKey::PrivateUse1)) &&
           !ks.has(c10::DispatchKey::Python) && !ks.has(c10::DispatchKey::Functionalize);
}

bool has_compatible_shallow_copy_type(const at::Tensor& self, const at::Tensor& from) {
    if (plain_dense(self) && plain_dense(from)) return true;
    return at::native::_has_compatible_shallow_copy_type(self, from);
}

// Both keys: the autograd one is reached normally, the backend one under inference_mode (no autograd keys).
TORCH_LIBRARY_IMPL(aten, AutogradPrivateUse1, m) {
    m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}
TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
    m.impl("_has_compatible_shallow_copy_type", TORCH_FN(has_compatible_shallow_copy_type));
}

}  // namespace
}  // namespace torchtpu
