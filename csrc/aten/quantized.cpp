// quantized.cpp — quantized dtypes (quint8, qint8, qint32, quint4x2, ...) are refused like every dtype the core has
// no kernels for: any op that would make or take a quantized tpu tensor (torch._empty_affine_quantized(...,
// device="tpu"), torch.quantize_per_tensor(t), moving a quantized CPU tensor to tpu) raises the allocation's
// TypeError, not the dispatcher's "Could not run ... 'Quantizedtpu' backend".
#include <torch/library.h>

#include "shim.h"

namespace torchtpu {
namespace {

void refuse_quantized(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    const auto& args = op.schema().arguments();
    const size_t first = stack->size() - args.size();
    c10::ScalarType st = c10::kQUInt8;  // the dtype named in the error: the op's own when it has one
    for (size_t i = 0; i < args.size(); i++) {
        const c10::IValue& iv = (*stack)[first + i];
        if (iv.isTensor() && iv.toTensor().defined() && c10::isQIntType(iv.toTensor().scalar_type())) {
            st = iv.toTensor().scalar_type();
            break;
        }
        if (iv.isInt() && args[i].type()->kind() == c10::TypeKind::IntType && args[i].name() == "dtype" &&
            c10::isQIntType(static_cast<c10::ScalarType>(iv.toInt()))) {
            st = static_cast<c10::ScalarType>(iv.toInt());
            break;
        }
    }
    checked_dtype(st);
    TORCH_INTERNAL_ASSERT(false, "unreachable: quantized dtypes are refused");
}

}  // namespace

TORCH_LIBRARY_IMPL(_, QuantizedPrivateUse1, m) {
    m.fallback(torch::CppFunction::makeFromBoxedFunction<&refuse_quantized>());
}

}  // namespace torchtpu
