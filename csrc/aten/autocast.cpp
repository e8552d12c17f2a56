// autocast.cpp — torch.autocast("tpu"): CUDA's autocast policy on the AutocastPrivateUse1 key.
//
// The op lists are PyTorch's own (ATen/autocast_mode.h), the ones CUDA autocast registers: lower-precision ops
// (matmuls, convolutions, linear, attention) run in the autocast dtype, numerically sensitive ops in float32,
// multi-input ops at the widest input type; every other op passes through. The default autocast dtype is
// bfloat16, as on TPUs.
#include <ATen/autocast_mode.h>
#include <torch/library.h>

namespace torchtpu {
namespace {

at::Tensor binary_cross_entropy_banned(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                       int64_t) {
    TORCH_CHECK(false,
                "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
                "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
                "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
                "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
                "safe to autocast.");
}

TORCH_LIBRARY_IMPL(_, AutocastPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

TORCH_LIBRARY_IMPL(aten, AutocastPrivateUse1, m) {
    using namespace at;  // the op-list macros spell signatures with unqualified Tensor, ScalarType, IntArrayRef
#define TT_AUTOCAST_LOWER_PRECISION_FP(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, lower_precision_fp)
    AT_FORALL_LOWER_PRECISION_FP(TT_AUTOCAST_LOWER_PRECISION_FP)
#define TT_AUTOCAST_FP32(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32)
    AT_FORALL_FP32(TT_AUTOCAST_FP32)
#define TT_AUTOCAST_FP32_SET_OPT_DTYPE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, fp32_set_opt_dtype)
    AT_FORALL_FP32_SET_OPT_DTYPE(TT_AUTOCAST_FP32_SET_OPT_DTYPE)
    AT_FORALL_DIFFERENT_REDISPATCH_SIGNATURE(KERNEL_DIFFERENT_REDISPATCH_SIGNATURE_PRIVATEUSEONE)
#define TT_AUTOCAST_PROMOTE(...) KERNEL_PRIVATEUSEONE(__VA_ARGS__, promote)
    AT_FORALL_PROMOTE(TT_AUTOCAST_PROMOTE)
    m.impl(TORCH_SELECTIVE_NAME("aten::binary_cross_entropy"), TORCH_FN((&binary_cross_entropy_banned)));
}

}  // namespace

// PyTorch keeps the autocast dtype per thread (float16 for PrivateUse1 unless set). Loading torchtpu makes it
// bfloat16 on the importing thread; a thread started later keeps PyTorch's float16 default unless it calls
// torch.set_autocast_dtype("tpu", ...) or passes dtype= — there is no per-thread hook to change that default.
static const bool bf16_default = [] {
    at::autocast::set_autocast_dtype(c10::DeviceType::PrivateUse1, at::kBFloat16);
    return true;
}();

}  // namespace torchtpu
