// op_plan.h — what the boxed kernel (fallback.cpp) knows about one ATen operator, computed once per schema, and
// the signature cache (signature.cpp) that lets a repeated op skip its lowering.
#pragma once

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/SmallVector.h>

#include <memory>
#include <string>
#include <vector>

#include "shim.h"

namespace torch {
class Library;
}

namespace torchtpu {

enum class ArgKind {
    Tensor, TensorList, OptTensorList, Scalar, Int, IntList, Float, Bool, BoolList, DType, String, Generator, Other
};
enum class PlanKind { Functional, Inplace, Out };

// The ops whose CPU kernels give results the memory format their inputs suggest (a channels_last input gives a
// channels_last result): convolutions, norms, pooling, upsampling, padding, cat. from[k]: the Tensor arguments (bit
// i = the i-th Tensor argument of the schema) whose suggested format result k takes, the first channels_last one
// winning (a convolution's input or weight); 0 leaves result k row-major. list_all: a TensorList argument decides,
// when every tensor in it suggests the same format (cat). only_4d: 5-d results stay row-major (CPU's conv3d).
struct FormatRule {
    const char* op;
    uint8_t from[3];
    bool list_all;
    bool only_4d;
};
struct Plan {
    tt_lower_fn fn = nullptr;
    std::string key;     // "aten::add_.Tensor" (the op as called)
    std::string lowered; // the lowering used, "aten::add.Tensor"
    PlanKind kind = PlanKind::Functional;
    size_t n_inputs = 0;           // leading schema args passed to the lowering
    std::vector<size_t> targets;   // written args (inplace: {0}; out: the out args)
    size_t n_results = 0;          // results the lowering produces
    size_t n_defaulted = 0;        // trailing optional functional args an out= form lacks (factory dtype=...)
    std::vector<ArgKind> kinds;    // per input
    bool has_index_lists = false;  // some input is a List[Optional[Tensor]] (prepare_index_lists)
    // A TensorIterator op on CPU (the "pointwise" tag on the op or its functional form): CPU's overlap checks
    // for its writes and its output layout rule apply.
    bool pointwise = false;
    bool overlap_exempt = false;  // fill_/zero_: CPU's fill skips the overlap check (every element gets one value)
    const FormatRule* format = nullptr;  // results follow the inputs' memory format (kFormatRules)
    bool no_input_overlap = false;  // cat: an out= that shares any memory with an input raises (CPU's assert_no_overlap)
};

// ---- the signature cache (signature.cpp) ----------------------------------------------------------------------------
// An op whose signature was seen before reuses the program its lowering built then: no lowering, no IR building, no
// hashing. The signature is everything the lowering and the shim's result allocation read: the plan, every tensor
// argument's dtype, sizes, strides and device, every non-tensor argument's value (a 0-d CPU tensor or Python number
// is a scalar parameter: its dtype is in the key, its value is bound per launch), the precision, the default dtype
// and the device. Ops that draw random numbers, index with tensor lists, or run under a trace are never cached.

// One tensor argument as the lowering saw it, in build order: a parameter of the program, a scalar parameter (a 0-d
// CPU tensor), or neither (an undefined tensor).
struct SigItem {
    int32_t param = -1;
    int32_t scalar = -1;  // index into Signature::scalars
};
// A functional result: undefined, row-major, or with these strides.
struct SigResult {
    bool defined = false;
    tt_dtype dtype = TT_F32;
    c10::SmallVector<int64_t, 6> sizes, strides;  // strides empty: row-major
};
struct Signature {
    tt_ir_program* program = nullptr;  // owned reference
    int device = 0;
    std::vector<SigItem> items;
    std::vector<tt_lower_scalar> scalars;
    std::vector<SigResult> results;  // functional plans only
    Signature() = default;
    Signature(const Signature&) = delete;
    Signature& operator=(const Signature&) = delete;
    ~Signature();
};

// The key being looked up on this thread, and the op's tensor items (borrowed from the stack) in build order.
struct SigKey {
    std::string bytes;
    c10::SmallVector<const at::Tensor*, 8> items;
};
// Fills key for the op on the stack; false: this op is not cached (the normal path runs and reports any error).
bool signature_key(const Plan& plan, const torch::jit::Stack& stack, size_t first, SigKey& key);
const Signature* signature_find(const SigKey& key);           // this thread's entry, or null
void signature_insert(const SigKey& key, std::unique_ptr<Signature> sig);
bool signature_cache_enabled();                               // TORCHTPU_SIGNATURE_CACHE=0 turns it off
void set_signature_cache_enabled(bool on);
int64_t signature_hits();
int64_t signature_misses();
void reset_signature_counts();
// ---- the boxed kernel (fallback.cpp) and its unboxed entries (unboxed.cpp)
bool lowers_natively(const c10::OperatorHandle& op);  // a lowering takes this op's arguments as they are
// The boxed kernel on a stack whose Tensor arguments at the mask's bits are borrows (no reference held).
void run_borrowed(const c10::OperatorHandle& op, torch::jit::Stack* stack, uint32_t borrowed);
int register_unboxed(torch::Library& lib);  // the hot ops' unboxed kernels; how many were registered
void set_borrow_args(bool on);  // off: they reference their arguments as c10's boxing does (for measuring)

// Set by the boxed kernel's rng callback: the op being lowered drew random numbers (it must not be cached).
extern thread_local bool t_op_used_rng;

}  // namespace torchtpu
