// unboxed.cpp — unboxed PrivateUse1 kernels for the hottest ops: the same boxed kernel (fallback.cpp), entered with the
// Tensor arguments borrowed instead of referenced.
//
// c10 calls a boxed kernel by copying every argument into a stack of IValues. In torch 2.13 the first C++
// reference to a tensor that only Python holds takes the GIL to incref its PyObject, and releasing it takes the GIL
// again (intrusive_ptr's 1 -> 2 and 2 -> 1 transitions): two GIL round trips per op (bench/op_overhead.py's
// "borrow gain" column measures them).
// CPU kernels are unboxed and pay neither. Here an unboxed kernel per hot op pushes its Tensor arguments as borrows
// (MaybeOwnedTraits: no count taken) and runs the boxed kernel on them; fallback.cpp never releases a borrow
// (run_borrowed). Every other op, and every boxed caller of these, takes the boxed path as before.
#include <ATen/Operators.h>
#include <torch/library.h>

#include <atomic>
#include <tuple>
#include <type_traits>

#include "op_plan.h"

namespace torchtpu {

// Off: arguments are referenced as c10's boxing does (bench/op_overhead.py's "no-borrow" column measures the gain).
static std::atomic<bool> g_borrow_args{true};
void set_borrow_args(bool on) { g_borrow_args.store(on, std::memory_order_relaxed); }

namespace {

template <class Op, class Fn>
struct Unboxed;

template <class Op, class Ret, class... Args>
struct Unboxed<Op, Ret(Args...)> {
    static_assert(sizeof...(Args) < 32, "the borrow mask has 32 bits");

    // The stack has room for every argument first (reserved): a borrow's push cannot throw half done.
    template <class T>
    static void push(torch::jit::Stack& stack, uint32_t& mask, bool borrow, T&& v) {
        if constexpr (std::is_same_v<std::decay_t<T>, at::Tensor>) {
            if (!borrow) {
                stack.emplace_back(v);
                return;
            }
            stack.emplace_back(c10::MaybeOwnedTraits<at::Tensor>::createBorrow(v));
            mask |= 1u << (stack.size() - 1);
        } else {
            torch::jit::push(stack, std::forward<T>(v));
        }
    }

    static Ret call(Args... args) {
        static const c10::OperatorHandle op = c10::Dispatcher::singleton().findSchemaOrThrow(Op::name,
                                                                                              Op::overload_name);
        // one stack per nesting level (an op's allocation may dispatch another op), kept: no heap per op
        static thread_local torch::jit::Stack stacks[4];
        static thread_local int depth = 0;
        torch::jit::Stack own;
        struct Level {
            int& d;
            torch::jit::Stack& s;
            uint32_t mask = 0;  // borrows not yet handed to run_borrowed (which forgets them however it ends)
            ~Level() {
                for (size_t i = 0; mask >> i; i++)
                    if (mask >> i & 1) c10::MaybeOwnedTraits<c10::IValue>::destroyBorrow(s[i]);
                s.clear();
                d--;
            }
        } level{depth, depth < 4 ? stacks[depth] : own};
        depth++;
        torch::jit::Stack& stack = level.s;
        stack.reserve(sizeof...(Args));
        const bool borrow = g_borrow_args.load(std::memory_order_relaxed);
        (push(stack, level.mask, borrow, std::forward<Args>(args)), ...);
        const uint32_t mask = level.mask;
        level.mask = 0;
        run_borrowed(op, &stack, mask);
        if constexpr (std::is_same_v<Ret, at::Tensor&>) {
            return std::get<0>(std::forward_as_tuple(args...));  // in-place ops only (self first; out= would be last)
        } else if constexpr (std::is_same_v<Ret, at::Tensor>) {
            return std::move(stack.back()).toTensor();
        } else {
            static_assert(std::tuple_size_v<Ret> > 0);
            return results<Ret>(stack, std::make_index_sequence<std::tuple_size_v<Ret>>{});
        }
    }

    template <class Tuple, size_t... I>
    static Tuple results(torch::jit::Stack& stack, std::index_sequence<I...>) {
        const size_t first = stack.size() - sizeof...(I);
        return Tuple{std::move(stack[first + I]).toTensor()...};
    }
};

template <class Op>
bool register_one(torch::Library& lib) {
    auto h = c10::Dispatcher::singleton().findOp(c10::OperatorName(Op::name, Op::overload_name));
    // as register_lowered_kernels: never over a kernel of ours, nor under autograd's decomposition of an implicit
    // composite (a backend kernel would hide it from autograd)
    if (!h || h->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
        h->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) || !lowers_natively(*h))
        return false;
    std::string key = std::string(Op::name).substr(6);
    if (*Op::overload_name) key += std::string(".") + Op::overload_name;
    using Kernel = Unboxed<Op, typename Op::schema>;
    lib.impl(key.c_str(), torch::CppFunction::makeFromUnboxedFunction(TORCH_FN(Kernel::call)));
    return true;
}

}  // namespace

// The ops a training step or a transformer's forward runs most, by at::_ops name: elementwise math, the optimizers'
// in-place updates, matmuls, reductions, activations, normalizations.
#define TT_UNBOXED_OPS(X)                                                                                             \
    X(add_Tensor) X(add__Tensor) X(sub_Tensor) X(sub__Tensor) X(mul_Tensor) X(mul__Tensor) X(div_Tensor)              \
    X(div__Tensor) X(neg) X(exp) X(log) X(sqrt) X(rsqrt) X(tanh) X(sigmoid) X(relu) X(gelu) X(silu) X(pow_Tensor_Scalar) \
    X(where_self) X(maximum) X(minimum) X(lerp__Scalar) X(addcmul_) X(addcdiv_) X(mm) X(bmm) X(addmm)                  \
    X(sum_dim_IntList) X(mean_dim) X(_softmax) X(_log_softmax) X(native_layer_norm) X(masked_fill_Scalar)            \
    X(eq_Scalar) X(gelu_backward) X(tanh_backward) X(threshold_backward) X(_softmax_backward_data)                   \
    X(native_layer_norm_backward) X(_log_softmax_backward_data) X(sigmoid_backward) X(rsub_Scalar)  \
    X(baddbmm) X(abs) X(clamp) X(lt_Scalar) X(gt_Scalar) X(ne_Scalar) X(amax) X(index_select) X(nll_loss_forward)   \
    X(nll_loss_backward) X(native_dropout) X(native_dropout_backward) X(fill__Scalar) X(zero_)

int register_unboxed(torch::Library& lib) {
    int n = 0;
#define TT_REGISTER_ONE(name) n += register_one<at::_ops::name>(lib);
    TT_UNBOXED_OPS(TT_REGISTER_ONE)
#undef TT_REGISTER_ONE
    return n;
}

}  // namespace torchtpu
