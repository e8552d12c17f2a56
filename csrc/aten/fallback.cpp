// fallback.cpp — one boxed kernel for every ATen op without an explicit registration. It turns the op's
// arguments into tt_arg, runs the C lowering for the functional form of the op, and launches the program.
// In-place and out= variants reuse the functional lowering: the result is converted and written into the
// target tensor. Ops with no lowering (or whose lowering declines) run on the CPU (at::native::cpu_fallback),
// unless the fallback is switched off.
#include <ATen/MemoryOverlap.h>
#include <ATen/TensorIterator.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/native/CPUFallback.h>
#include <c10/util/Exception.h>
#include <c10/util/SmallVector.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "op_plan.h"
#include "shim.h"

namespace torchtpu {

// ---- policy and counters ---------------------------------------------------------------------------------------
// Matmul / convolution precision: the calling thread's override (torch.tpu.precision), else the process's (TPU
// DEFAULT unless set: torchtpu.set_precision, torch.set_float32_matmul_precision, TORCHTPU_PRECISION). Ops take it
// when recorded, so a change never reaches ops recorded before it.
// Every op reads it (signature key, lowering): the thread-local, a __tls_get_addr call in this shared library, is
// only read while some thread has an override (or ended inside one: then it is merely read).
static std::atomic<int> g_precision{TT_PRECISION_DEFAULT};
static std::atomic<int> g_thread_overrides{0};
static thread_local int t_precision = -1;
tt_precision current_precision() {
    if (g_thread_overrides.load(std::memory_order_relaxed) > 0 && t_precision >= 0) return (tt_precision)t_precision;
    return (tt_precision)g_precision.load(std::memory_order_relaxed);
}
void set_precision(tt_precision p) { g_precision.store((int)p); }
tt_precision process_precision() { return (tt_precision)g_precision.load(std::memory_order_relaxed); }
void set_thread_precision(int p) {
    if ((t_precision >= 0) != (p >= 0)) g_thread_overrides.fetch_add(p >= 0 ? 1 : -1);
    t_precision = p;
}
int thread_precision() { return t_precision; }

static std::atomic<bool> g_fallback_enabled{[] {
    const char* e = std::getenv("TORCHTPU_CPU_FALLBACK");
    return !(e && std::string(e) == "0");
}()};
bool cpu_fallback_enabled() { return g_fallback_enabled.load(); }
void set_cpu_fallback_enabled(bool on) { g_fallback_enabled.store(on); }

static std::mutex g_counts_mu;
static std::map<std::string, int64_t> g_fallback_counts;
// why: "no native tpu lowering" or "...declined these arguments (...)". Warns once per op and reason.
void count_fallback(const std::string& op, const std::string& why) {
    static std::unordered_set<std::string> warned;
    std::lock_guard<std::mutex> g(g_counts_mu);
    g_fallback_counts[op]++;
    if (warned.insert(op + '\0' + why).second)
        TORCH_WARN("torchtpu: operator '", op, "' ", why, "; it runs on the CPU (copies to and from the device). "
                   "Set TORCHTPU_CPU_FALLBACK=0 to make this an error.");
}
std::map<std::string, int64_t> fallback_counts() {
    std::lock_guard<std::mutex> g(g_counts_mu);
    return g_fallback_counts;
}
void reset_fallback_counts() {
    std::lock_guard<std::mutex> g(g_counts_mu);
    for (auto& kv : g_fallback_counts) kv.second = 0;
}

// ---- per-operator plan (computed once per schema) -------------------------------------------------------------

static const FormatRule kFormatRules[] = {
    {"aten::convolution", {0b011}, false, true},
    {"aten::convolution_backward", {0b110, 0b100}, false, true},  // grad_input: input or weight; grad_weight: weight
    {"aten::native_batch_norm", {0b1}, false, false},
    {"aten::_native_batch_norm_legit", {0b1}, false, false},
    {"aten::_native_batch_norm_legit_no_training", {0b1}, false, false},
    {"aten::native_batch_norm_backward", {0b10}, false, false},
    {"aten::native_group_norm", {0b1}, false, false},
    {"aten::native_group_norm_backward", {0b10}, false, false},
    {"aten::max_pool2d_with_indices", {0b1, 0b1}, false, false},
    {"aten::max_pool2d_with_indices_backward", {0b10}, false, false},
    {"aten::max_pool3d_with_indices", {0b1, 0b1}, false, false},
    {"aten::avg_pool2d", {0b1}, false, false},
    {"aten::avg_pool2d_backward", {0b10}, false, false},
    {"aten::_adaptive_avg_pool2d", {0b1}, false, false},
    {"aten::_adaptive_avg_pool2d_backward", {0b10}, false, false},
    {"aten::adaptive_max_pool2d", {0b1, 0b1}, false, false},
    {"aten::adaptive_max_pool2d_backward", {0b10}, false, false},
    {"aten::upsample_nearest2d", {0b1}, false, false},
    {"aten::_upsample_nearest_exact2d", {0b1}, false, false},
    {"aten::upsample_bilinear2d", {0b1}, false, false},
    {"aten::upsample_bicubic2d", {0b1}, false, false},
    {"aten::constant_pad_nd", {0b1}, false, false},
    {"aten::cat", {0b1}, true, false},
};


static ArgKind arg_kind_of(const c10::TypePtr& type0) {
    c10::TypePtr type = type0;
    if (type->kind() == c10::TypeKind::OptionalType) type = type->containedType(0);
    switch (type->kind()) {
    case c10::TypeKind::TensorType: return ArgKind::Tensor;
    case c10::TypeKind::NumberType: return ArgKind::Scalar;
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: return ArgKind::Int;
    case c10::TypeKind::FloatType: return ArgKind::Float;
    case c10::TypeKind::BoolType: return ArgKind::Bool;
    case c10::TypeKind::StringType: return ArgKind::String;
    case c10::TypeKind::ScalarTypeType: return ArgKind::DType;
    case c10::TypeKind::GeneratorType: return ArgKind::Generator;
    case c10::TypeKind::ListType: {
        c10::TypePtr e = type->containedType(0);
        if (e->kind() == c10::TypeKind::TensorType) return ArgKind::TensorList;
        if (e->kind() == c10::TypeKind::OptionalType && e->containedType(0)->kind() == c10::TypeKind::TensorType)
            return ArgKind::OptTensorList;
        if (e->kind() == c10::TypeKind::IntType || e->kind() == c10::TypeKind::SymIntType) return ArgKind::IntList;
        if (e->kind() == c10::TypeKind::BoolType) return ArgKind::BoolList;
        return ArgKind::Other;
    }
    default: return ArgKind::Other;
    }
}

static std::string key_of(const c10::OperatorName& n) {
    return n.overload_name.empty() ? n.name : n.name + "." + n.overload_name;
}

// Lowered overload names by op name, to match out= and in-place variants to their functional form.
static const std::unordered_map<std::string, std::vector<std::string>>& lowered_overloads() {
    static std::unordered_map<std::string, std::vector<std::string>> table = [] {
        std::unordered_map<std::string, std::vector<std::string>> t;
        tt_lower_foreach(
            [](void* user, const char* name) {
                auto& tab = *static_cast<std::unordered_map<std::string, std::vector<std::string>>*>(user);
                std::string s(name);
                size_t dot = s.find('.');
                if (dot == std::string::npos) tab[s].push_back("");
                else tab[s.substr(0, dot)].push_back(s.substr(dot + 1));
            },
            &t);
        return t;
    }();
    return table;
}

// The functional lowering whose leading arguments are named like the first n args of schema. Out= forms of
// factories (arange.start_out) lack the functional's trailing keyword-only options (dtype, layout, device...):
// those are passed as None, and the result is converted to the out tensor's dtype.
static bool find_functional(const std::string& base, const std::string& prefer_overload,
                            const c10::FunctionSchema& schema, size_t n, Plan& plan) {
    auto it = lowered_overloads().find(base);
    if (it == lowered_overloads().end()) return false;
    std::vector<std::string> cands;
    cands.push_back(prefer_overload);
    for (auto& o : it->second)
        if (o != prefer_overload) cands.push_back(o);
    for (auto& ovl : cands) {
        std::string key = ovl.empty() ? base : base + "." + ovl;
        tt_lower_fn fn = tt_lower_find(key.c_str());
        if (!fn) continue;
        auto h = c10::Dispatcher::singleton().findSchema({base, ovl});
        if (!h) continue;
        const auto& fs = h->schema();
        if (fs.arguments().size() < n) continue;
        bool same = true;  // same names and the same kinds (add.out is add.Tensor, not add.Scalar)
        for (size_t i = 0; i < n && same; i++)
            same = fs.arguments()[i].name() == schema.arguments()[i].name() &&
                   arg_kind_of(fs.arguments()[i].real_type()) == arg_kind_of(schema.arguments()[i].real_type());
        for (size_t i = n; i < fs.arguments().size() && same; i++)
            same = fs.arguments()[i].kwarg_only() && fs.arguments()[i].type()->kind() == c10::TypeKind::OptionalType;
        if (!same) continue;
        plan.n_defaulted = fs.arguments().size() - n;
        plan.pointwise = plan.pointwise || h->hasTag(at::Tag::pointwise);
        plan.fn = fn;
        plan.lowered = key;
        plan.n_results = fs.returns().size();
        return true;
    }
    return false;
}

static Plan make_plan(const c10::OperatorHandle& op) {
    const auto& schema = op.schema();
    Plan plan;
    plan.key = key_of(schema.operator_name());
    const auto& args = schema.arguments();
    std::vector<size_t> written;
    for (size_t i = 0; i < args.size(); i++)
        if (args[i].alias_info() && args[i].alias_info()->isWrite()) written.push_back(i);
    const std::string& name = schema.name();
    const std::string& ovl = schema.overload_name();
    plan.pointwise = op.hasTag(at::Tag::pointwise);
    plan.overlap_exempt = name == "aten::fill_" || name == "aten::zero_";
    for (const FormatRule& r : kFormatRules)
        if (name == r.op) plan.format = &r;
    plan.no_input_overlap = name == "aten::cat";
    if (written.empty()) {
        plan.kind = PlanKind::Functional;
        plan.n_inputs = args.size();
        plan.fn = tt_lower_find(plan.key.c_str());
        plan.lowered = plan.key;
        plan.n_results = schema.returns().size();
    } else if (written.size() == 1 && written[0] == 0 && !args[0].kwarg_only()) {
        plan.kind = PlanKind::Inplace;
        plan.targets = {0};
        plan.n_inputs = args.size();
        if ((plan.fn = tt_lower_find(plan.key.c_str()))) {
            plan.lowered = plan.key;
            plan.n_results = 1;
        } else if (!name.empty() && name.back() == '_') {
            std::string base = name.substr(0, name.size() - 1);  // add_ -> add; normal_ -> normal_functional
            if (!find_functional(base, ovl, schema, args.size(), plan))
                find_functional(base + "_functional", ovl, schema, args.size(), plan);
        }
        if (plan.n_results != 1) plan.fn = nullptr;
    } else {
        bool trailing = true;  // out args are the last, keyword-only arguments
        for (size_t k = 0; k < written.size(); k++)
            trailing = trailing && written[k] == args.size() - written.size() + k && args[written[k]].kwarg_only();
        if (trailing) {
            plan.kind = PlanKind::Out;
            plan.targets = written;
            plan.n_inputs = args.size() - written.size();
            std::string prefer = ovl;
            for (const char* suf : {"_out", "out"}) {
                size_t ls = std::strlen(suf);
                if (prefer.size() >= ls && prefer.compare(prefer.size() - ls, ls, suf) == 0) {
                    prefer = prefer.substr(0, prefer.size() - ls);
                    break;
                }
            }
            find_functional(name, prefer, schema, plan.n_inputs, plan);
            if (plan.n_results != written.size()) plan.fn = nullptr;
        }
    }
    for (size_t i = 0; i < plan.n_inputs; i++) {
        plan.kinds.push_back(arg_kind_of(args[i].real_type()));
        plan.has_index_lists = plan.has_index_lists || plan.kinds.back() == ArgKind::OptTensorList;
    }
    return plan;
}

// Plans live for the process; each thread keeps a lock-free view of the ones it has used (the per-op path).
static const Plan& plan_for(const c10::OperatorHandle& op) {
    static thread_local std::unordered_map<const c10::FunctionSchema*, const Plan*> local;
    const c10::FunctionSchema* k = &op.schema();
    auto hit = local.find(k);
    if (hit != local.end()) return *hit->second;
    static std::mutex mu;
    static std::unordered_map<const c10::FunctionSchema*, std::unique_ptr<Plan>> plans;
    std::lock_guard<std::mutex> g(mu);
    auto it = plans.find(k);
    if (it == plans.end()) it = plans.emplace(k, std::make_unique<Plan>(make_plan(op))).first;
    local.emplace(k, it->second.get());
    return *it->second;
}

// ---- building one op ---------------------------------------------------------------------------------------------
// user: the op's generator= (a tpu GeneratorImpl), or null for the device's default generator.
// The op's arguments on the stack: its inputs, then (out=) its out tensors.
static size_t n_args_of(const Plan& plan) {
    return plan.n_inputs + (plan.kind == PlanKind::Out ? plan.targets.size() : 0);
}

// The device of the first tpu tensor among the op's inputs, -1 if none.
static int first_tpu_device(const Plan& plan, const torch::jit::Stack& stack, size_t first) {
    for (size_t i = 0; i < plan.n_inputs; i++) {
        const c10::IValue& t = stack[first + i];
        if (t.isTensor() && t.toTensor().defined() && t.toTensor().device().type() == c10::DeviceType::PrivateUse1)
            return t.toTensor().device().index();
    }
    return -1;
}

static void rng_reserve(void* user, int device, uint64_t count, uint64_t* seed, uint64_t* offset) {
    t_op_used_rng = true;
    rng_reserve_on(static_cast<c10::GeneratorImpl*>(user), device, count, seed, offset);
}

using Results = c10::SmallVector<at::Tensor, 2>;  // an op's result tensors

struct OpBuild {
    tt_lower_ctx ctx{};
    c10::SmallVector<tt_arg, 8> args;
    std::vector<std::vector<int64_t>> int_lists;     // storage for INTS/BOOLS
    std::vector<std::vector<tt_ir_value>> value_lists; // storage for TENSORS
    c10::SmallVector<std::pair<int32_t, at::Tensor>, 4> tensor_params; // param index -> tensor
    int device = -1;
    std::vector<SigItem> items;  // each tensor argument's slot in build order (the signature cache's binding)
    bool resized = false;        // an out= target was resized (the path is not cached)
    std::string declined;  // why the arguments cannot run natively (the fallback warning names it)
};

static tt_ir_builder* thread_builder() {
    static thread_local std::unique_ptr<tt_ir_builder, void (*)(tt_ir_builder*)> b(tt_ir_builder_create(),
                                                                                    tt_ir_builder_destroy);
    TORCH_CHECK(b, "torchtpu: out of memory creating the IR builder");
    return b.get();
}

static void note_device(OpBuild& ob, const at::Tensor& t) {
    TORCH_CHECK(t.device().type() == c10::DeviceType::PrivateUse1,
                "Expected all tensors to be on the same device, but found at least two devices, tpu and ", t.device(),
                "!");
    int d = t.device().index();
    if (ob.device < 0) ob.device = d;
    else
        TORCH_CHECK(ob.device == d, "Expected all tensors to be on the same device, but found at least two devices, tpu:",
                    ob.device, " and tpu:", d, "!");
}

// A 0-d CPU tensor's value as the scalar parameter tensor_arg makes of it.
static void cpu_scalar_value(const at::Tensor& t, tt_lower_scalar& s) {
    c10::Scalar v = t.item();
    s.i = v.isFloatingPoint() ? 0 : v.toLong();
    s.f = v.isFloatingPoint() ? v.toDouble() : (double)s.i;
}

// Declines (returns false) for inputs the core cannot take, so the op falls back.
static bool tensor_arg(OpBuild& ob, const at::Tensor& t, tt_arg& a) {
    a.kind = TT_ARG_TENSOR;
    ob.items.emplace_back();
    if (!t.defined()) {
        a.kind = TT_ARG_NONE;
        return true;
    }
    tt_dtype dt;
    if (!to_tt_dtype(t.scalar_type(), &dt)) {
        ob.declined = std::string("a tensor of dtype ") + c10::toString(t.scalar_type());
        return false;
    }
    if (t.dim() > TT_MAX_RANK) {
        ob.declined = "a tensor of rank " + std::to_string(t.dim()) + " (at most " + std::to_string(TT_MAX_RANK) + ")";
        return false;
    }
    if (t.device().type() == c10::DeviceType::CPU) {
        if (t.dim() == 0) {  // a Python number or a 0-d CPU tensor: a host scalar parameter
            tt_lower_scalar v;
            cpu_scalar_value(t, v);
            a.value = tt_lower_scalar_param(&ob.ctx, dt, v.i, v.f);
            ob.items.back().scalar = ob.ctx.n_scalars - 1;
            a.wrapped_number = t.unsafeGetTensorImpl()->is_wrapped_number();
            a.dtype = dt;
            return a.value != TT_IR_NONE;
        }
        TORCH_CHECK(false, "Expected all tensors to be on the same device, but found at least two devices, tpu:",
                    ob.device < 0 ? (int)current_device() : ob.device, " and cpu!");
    }
    if (t.device().type() != c10::DeviceType::PrivateUse1) {
        ob.declined = "a tensor on " + t.device().str();
        return false;
    }
    note_device(ob, t);
    int32_t idx = tt_ir_builder_num_params(ob.ctx.b);
    ob.items.back().param = idx;
    a.value = tt_ir_param(ob.ctx.b, dt, (int32_t)t.dim(), t.sizes().data());
    a.dtype = dt;
    a.n = (int32_t)t.dim();  // rank, read by tt_lower_result_type
    ob.tensor_params.emplace_back(idx, t);
    return a.value != TT_IR_NONE;
}

static bool build_args(OpBuild& ob, const Plan& plan, torch::jit::Stack* stack, size_t first) {
    ob.args.assign(plan.n_inputs + plan.n_defaulted, tt_arg{});
    for (size_t i = plan.n_inputs; i < ob.args.size(); i++) {
        ob.args[i].kind = TT_ARG_NONE;
        ob.args[i].value = TT_IR_NONE;
    }
    // (no reserve: the lists' element buffers survive the outer vectors' growth, so .ints/.values stay valid)
    for (size_t i = 0; i < plan.n_inputs; i++) {
        const c10::IValue& iv = (*stack)[first + i];
        tt_arg& a = ob.args[i];
        a = tt_arg{};
        a.value = TT_IR_NONE;
        if (iv.isNone()) {
            a.kind = TT_ARG_NONE;
            continue;
        }
        switch (plan.kinds[i]) {
        case ArgKind::Tensor:
            if (!tensor_arg(ob, iv.toTensor(), a)) return false;
            break;
        case ArgKind::TensorList:
        case ArgKind::OptTensorList: {
            std::vector<tt_ir_value> vals;
            auto list = iv.toListRef();
            for (const c10::IValue& e : list) {
                if (e.isNone()) {
                    vals.push_back(TT_IR_NONE);
                    continue;
                }
                at::Tensor t = e.toTensor();
                tt_arg ta{};
                if (!tensor_arg(ob, t, ta)) return false;
                vals.push_back(ta.kind == TT_ARG_NONE ? TT_IR_NONE : ta.value);
            }
            ob.value_lists.push_back(std::move(vals));
            a.kind = TT_ARG_TENSORS;
            a.n = (int32_t)ob.value_lists.back().size();
            a.values = ob.value_lists.back().data();
            break;
        }
        case ArgKind::Scalar: {
            c10::Scalar s = iv.toScalar();
            a.kind = TT_ARG_SCALAR;
            if (s.isBoolean()) {
                a.dtype = TT_BOOL;
                a.b = s.toBool();
                a.i = a.b;
                a.f = a.b;
            } else if (s.isIntegral(false)) {
                a.dtype = TT_I64;
                a.i = s.toLong();
                a.f = (double)a.i;
            } else if (s.isFloatingPoint()) {
                a.dtype = TT_F64;
                a.f = s.toDouble();
            } else {
                ob.declined = "a complex Scalar";
                return false;
            }
            break;
        }
        case ArgKind::Int:
            a.kind = TT_ARG_INT;
            a.i = iv.isSymInt() ? iv.toSymInt().guard_int(__FILE__, __LINE__) : iv.toInt();
            break;
        case ArgKind::Float:
            a.kind = TT_ARG_FLOAT;
            a.f = iv.toDouble();
            break;
        case ArgKind::Bool:
            a.kind = TT_ARG_BOOL;
            a.b = iv.toBool();
            break;
        case ArgKind::IntList:
        case ArgKind::BoolList: {
            std::vector<int64_t> v;
            for (const c10::IValue& e : iv.toListRef())
                v.push_back(e.isBool() ? (int64_t)e.toBool()
                                       : e.isSymInt() ? e.toSymInt().guard_int(__FILE__, __LINE__) : e.toInt());
            ob.int_lists.push_back(std::move(v));
            a.kind = plan.kinds[i] == ArgKind::IntList ? TT_ARG_INTS : TT_ARG_BOOLS;
            a.n = (int32_t)ob.int_lists.back().size();
            a.ints = ob.int_lists.back().data();
            break;
        }
        case ArgKind::DType:
            a.kind = TT_ARG_DTYPE;
            if (!to_tt_dtype(iv.toScalarType(), &a.dtype)) {
                ob.declined = std::string("dtype=") + c10::toString(iv.toScalarType());
                return false;
            }
            break;
        case ArgKind::String:
            a.kind = TT_ARG_STRING;
            a.s = iv.toStringRef().c_str();
            break;
        case ArgKind::Generator: {
            const at::Generator& g = iv.toGenerator();
            check_tpu_generator(g);
            ob.ctx.rng_user = g.unsafeGetGeneratorImpl();  // the stack keeps it alive for the op
            a.kind = TT_ARG_OTHER;
            break;
        }
        case ArgKind::Other:
            a.kind = TT_ARG_OTHER;
            if (iv.isDevice() && iv.toDevice().type() == c10::DeviceType::PrivateUse1 && ob.device < 0)
                ob.device = iv.toDevice().has_index() ? iv.toDevice().index() : current_device();
            break;
        }
    }
    return true;
}

// PyTorch's canCast: no float -> integral, no non-bool -> bool.
static bool can_cast(tt_dtype from, tt_dtype to) {
    if (tt_dtype_is_float(from) && !tt_dtype_is_float(to)) return false;
    if (from != TT_BOOL && to == TT_BOOL) return false;
    return true;
}

static std::string shape_str(const int64_t* d, int32_t r) {
    std::string s = "[";
    for (int32_t i = 0; i < r; i++) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}


static std::atomic<bool> g_launched{false};
bool launched_any() { return g_launched.load(std::memory_order_relaxed); }

// Launches prog with results as its outputs; fill(rargs) binds its parameters. The results' views are taken first: a
// copy-on-write result is materialized before an input view of the same tensor is taken.
template <class Fill>
static void launch_with(int device, tt_ir_program* prog, const Results& results, const char* name, Fill fill) {
    if (!g_launched.load(std::memory_order_relaxed)) g_launched.store(true, std::memory_order_relaxed);
    c10::SmallVector<tt_rt_tensor, 2> rres;
    for (auto& t : results) rres.push_back(view_for_write(t));
    c10::SmallVector<tt_rt_arg, 4> rargs(prog->n_params);
    fill(rargs);
    tt_status st = tt_rt_launch(device, prog, rargs.data(), (int32_t)rargs.size(), rres.data(), (int32_t)rres.size(),
                                name);
    if (st != TT_OK) raise_status(st, "");
}

static void bind_scalar(tt_rt_arg& a, const tt_lower_scalar& s) {
    a.kind = TT_RT_ARG_SCALAR;
    a.i = s.i;
    a.f = s.f;
    static_assert(TT_LOWER_RNG_SEED == TT_RT_RNG_SEED && TT_LOWER_RNG_OFFSET == TT_RT_RNG_OFFSET);
    a.rng = (tt_rt_rng_role)s.rng;
    a.rng_count = s.rng_count;
}

// Finishes the op's program and launches it; returns the program (owned) for the signature cache.
static tt_ir_program* launch(OpBuild& ob, const Results& results, const char* name) {
    tt_ir_program* raw = nullptr;
    TT_CHECK(tt_ir_builder_finish(ob.ctx.b, &raw));
    std::unique_ptr<tt_ir_program, void (*)(tt_ir_program*)> owned(raw, tt_ir_program_destroy);
    if (trace_active())
        trace_record(raw, ob.tensor_params.data(), ob.tensor_params.size(), ob.ctx, results.data(), results.size());
    launch_with(ob.device, raw, results, name, [&](c10::SmallVector<tt_rt_arg, 4>& rargs) {
        for (auto& [idx, t] : ob.tensor_params) {
            rargs[idx].kind = TT_RT_ARG_TENSOR;
            rargs[idx].tensor = view_for_read(t);
        }
        for (int32_t k = 0; k < ob.ctx.n_scalars; k++) bind_scalar(rargs[ob.ctx.scalars[k].param_index], ob.ctx.scalars[k]);
    });
    return owned.release();
}

static bool row_major(at::IntArrayRef sizes, at::IntArrayRef strides) {
    int64_t expect = 1;
    for (size_t d = sizes.size(); d-- > 0;) {
        if (strides[d] != expect) return false;
        expect *= sizes[d];
    }
    return true;
}

// The normal path's outcome as a signature: what a hit needs to allocate the same results and bind the same program.
static std::unique_ptr<Signature> make_signature(const Plan& plan, OpBuild& ob, tt_ir_program* prog,
                                                 const Results& results, const c10::SmallVector<tt_ir_value, 4>& outs) {
    auto sg = std::make_unique<Signature>();
    sg->program = prog;
    sg->device = ob.device;
    sg->items = ob.items;
    sg->scalars.assign(ob.ctx.scalars, ob.ctx.scalars + ob.ctx.n_scalars);
    if (plan.kind == PlanKind::Functional) {
        size_t next = 0;
        for (tt_ir_value v : outs) {
            SigResult r;
            if (v != TT_IR_NONE) {
                const at::Tensor& t = results[next++];
                r.defined = true;
                to_tt_dtype(t.scalar_type(), &r.dtype);
                r.sizes.assign(t.sizes().begin(), t.sizes().end());
                if (!row_major(t.sizes(), t.strides())) r.strides.assign(t.strides().begin(), t.strides().end());
            }
            sg->results.push_back(std::move(r));
        }
    }
    return sg;
}

// ---- borrowed arguments (unboxed.cpp) -----------------------------------------------------------------------------
// The hot ops' unboxed kernels push their Tensor arguments as borrows: no reference taken. In torch 2.13 the first C++
// reference to a tensor only Python holds takes the GIL (TensorImpl::incref_pyobject), and dropping it takes it
// again: two GIL round trips per op when c10 boxes the arguments for this fallback.
// Borrowed entries (mask bit i: stack[i]) are never released: dropped with destroyBorrow, owned (referenced) before
// any path that keeps or replaces them (the CPU fallback).
struct Borrowed {
    const torch::jit::Stack* stack = nullptr;
    uint32_t mask = 0;
};
static thread_local Borrowed t_borrowed;

static void forget_borrows(torch::jit::Stack* stack) {
    if (t_borrowed.stack != stack) return;
    for (size_t i = 0; t_borrowed.mask >> i; i++)
        if (t_borrowed.mask >> i & 1) c10::MaybeOwnedTraits<c10::IValue>::destroyBorrow((*stack)[i]);
    t_borrowed.mask = 0;
}

static void own_borrows(torch::jit::Stack* stack) {
    if (t_borrowed.stack != stack) return;
    for (size_t i = 0; t_borrowed.mask >> i; i++) {
        if (!(t_borrowed.mask >> i & 1)) continue;
        c10::IValue owned = (*stack)[i];  // a counted reference
        c10::MaybeOwnedTraits<c10::IValue>::destroyBorrow((*stack)[i]);
        (*stack)[i] = std::move(owned);
    }
    t_borrowed.mask = 0;
}

static bool borrowed_at(const torch::jit::Stack* stack, size_t i) {
    return t_borrowed.stack == stack && i < 32 && (t_borrowed.mask >> i & 1);
}

// An in-place op's results that are its borrowed arguments (a Python-only tensor's first counted reference would take
// the GIL, and dropping it again): borrowed too, and on the stack marked as borrows. Never released: any still here
// when the op ends (an error) are forgotten.
struct BorrowedResults {
    Results& results;
    uint32_t mask = 0;  // bit k: results[k] is a borrow
    ~BorrowedResults() {
        for (size_t k = 0; mask >> k; k++)
            if (mask >> k & 1) c10::MaybeOwnedTraits<at::Tensor>::destroyBorrow(results[k]);
    }
};

// The op's arguments leave the stack (results follow).
static void drop_args(torch::jit::Stack* stack, size_t n) {
    forget_borrows(stack);
    torch::jit::drop(*stack, n);
}

// A signature hit: the cached program on fresh results, its parameters bound to this call's tensors and numbers.
static void run_signature(const Plan& plan, const Signature& sg, const SigKey& key, torch::jit::Stack* stack,
                          size_t first) {
    Results results;
    BorrowedResults borrows{results};
    if (plan.kind == PlanKind::Functional) {
        PendingResults pending;
        for (const SigResult& r : sg.results) {
            if (!r.defined) continue;
            const c10::ScalarType dt = to_torch_dtype(r.dtype);
            results.push_back(r.strides.empty()
                                  ? empty_tpu(r.sizes, dt, sg.device)
                                  : at::empty_strided(r.sizes, r.strides,
                                                      at::TensorOptions().dtype(dt).device(c10::DeviceType::PrivateUse1,
                                                                                           sg.device)));
        }
    } else {
        results.reserve(plan.targets.size());  // a borrow's push cannot throw half done
        for (size_t t : plan.targets) {
            const at::Tensor& target = (*stack)[first + t].toTensor();
            if (borrowed_at(stack, first + t)) {  // borrowed in, borrowed out: no reference, no GIL (see above)
                results.push_back(c10::MaybeOwnedTraits<at::Tensor>::createBorrow(target));
                borrows.mask |= 1u << (results.size() - 1);
            } else {
                results.push_back(target);
            }
        }
    }
    launch_with(sg.device, sg.program, results, plan.key.c_str(), [&](c10::SmallVector<tt_rt_arg, 4>& rargs) {
        for (const tt_lower_scalar& s : sg.scalars) bind_scalar(rargs[s.param_index], s);
        for (size_t k = 0; k < sg.items.size(); k++) {
            const SigItem& it = sg.items[k];
            if (it.param >= 0) {
                rargs[it.param].kind = TT_RT_ARG_TENSOR;
                rargs[it.param].tensor = view_for_read(*key.items[k]);
            } else if (it.scalar >= 0) {
                tt_lower_scalar s = sg.scalars[it.scalar];
                cpu_scalar_value(*key.items[k], s);
                bind_scalar(rargs[s.param_index], s);
            }
        }
    });
    drop_args(stack, n_args_of(plan));
    if (plan.kind != PlanKind::Functional) {
        for (size_t k = 0; k < results.size(); k++) {
            stack->emplace_back(std::move(results[k]));
            if (borrows.mask >> k & 1) {  // now the stack's borrow: run_borrowed's scope forgets it
                t_borrowed.mask |= 1u << (stack->size() - 1);
                borrows.mask &= ~(1u << k);
            }
        }
        return;
    }
    size_t next = 0;
    for (const SigResult& r : sg.results) {
        if (r.defined) stack->emplace_back(std::move(results[next++]));
        else stack->emplace_back(at::Tensor());
    }
}


// Index lists (List[Optional[Tensor]]) before building: CPU index tensors move to the device, and for
// aten::index.Tensor boolean masks become their nonzero coordinates (a sync: the result size depends on data).
static void prepare_index_lists(const Plan& plan, torch::jit::Stack* stack, size_t first) {
    int dev = -1;
    for (size_t i = 0; i < plan.n_inputs && dev < 0; i++) {
        const c10::IValue& iv = (*stack)[first + i];
        if (iv.isTensor() && iv.toTensor().defined() && iv.toTensor().device().type() == c10::DeviceType::PrivateUse1)
            dev = iv.toTensor().device().index();
    }
    if (dev < 0) dev = current_device();
    const bool expand_masks = plan.key == "aten::index.Tensor";
    for (size_t i = 0; i < plan.n_inputs; i++) {
        if (plan.kinds[i] != ArgKind::OptTensorList || (*stack)[first + i].isNone()) continue;
        bool changed = false;
        c10::List<std::optional<at::Tensor>> out;
        for (const c10::IValue& e : (*stack)[first + i].toListRef()) {
            if (e.isNone() || !e.toTensor().defined()) {
                out.push_back(std::nullopt);
                continue;
            }
            at::Tensor t = e.toTensor();
            if (t.device().type() == c10::DeviceType::CPU && t.dim() > 0) {
                t = t.to(c10::Device(c10::DeviceType::PrivateUse1, dev));
                changed = true;
            }
            if (expand_masks && (t.scalar_type() == c10::kBool || t.scalar_type() == c10::kByte)) {
                if (t.device().type() == c10::DeviceType::CPU) t = t.to(c10::Device(c10::DeviceType::PrivateUse1, dev));
                at::Tensor nz = at::nonzero(t);
                for (int64_t k = 0; k < t.dim(); k++) out.push_back(nz.select(1, k));
                changed = true;
                continue;
            }
            out.push_back(t);
        }
        if (changed) (*stack)[first + i] = c10::IValue(out);
    }
}

// CPU's checks on what an in-place or out= op writes (TensorIterator's compute_mem_overlaps): a written tensor whose
// elements share memory raises, and so does, for TensorIterator ops, an input that partly overlaps it (the very same
// tensor is fine: x.add_(x)). Other ops check their own way on CPU; most reject a self-overlapping output, which would
// make our result depend on write order, so they all do here.
static void check_overlap(const Plan& plan, const torch::jit::Stack& stack, size_t first) {
    if (plan.overlap_exempt) return;
    for (size_t t : plan.targets) {
        const c10::IValue& tv = stack[first + t];
        if (!tv.isTensor() || !tv.toTensor().defined()) continue;
        const at::Tensor& out = tv.toTensor();
        at::assert_no_internal_overlap(out);
        if (plan.no_input_overlap) {
            for (size_t i = 0; i < plan.n_inputs; i++) {
                const c10::IValue& iv = stack[first + i];
                if (iv.isTensorList())
                    for (const at::Tensor& t : iv.toTensorList()) at::assert_no_overlap(out, t);
            }
        }
        if (!plan.pointwise) continue;
        for (size_t i = 0; i < plan.n_inputs; i++) {
            const c10::IValue& iv = stack[first + i];
            if (iv.isTensor() && iv.toTensor().defined() && !iv.toTensor().is_same(out))
                at::assert_no_partial_overlap(out, iv.toTensor());
        }
    }
}

// TensorIterator's output strides for these inputs (a channels_last input gives a channels_last result, t.t() * 2 a
// transposed one), computed by ATen itself on meta tensors of the inputs' geometry. Empty when every input is
// row-major: so is the result then, and the common case costs nothing.
static c10::SmallVector<int64_t, 6> pointwise_strides(const OpBuild& ob, at::IntArrayRef sizes) {
    bool strided = false;
    for (const auto& p : ob.tensor_params) strided = strided || (p.second.dim() > 0 && !p.second.is_contiguous());
    if (!strided) return {};
    at::TensorIteratorConfig cfg;
    cfg.check_all_same_dtype(false).set_check_mem_overlap(false);
    cfg.declare_static_dtype_and_device(c10::kFloat, c10::Device(c10::kMeta));
    cfg.add_owned_output(at::Tensor());
    for (const auto& p : ob.tensor_params)  // one dtype for all: the rule compares strides within each tensor
        cfg.add_owned_const_input(at::empty_strided(p.second.sizes(), p.second.strides(),
                                                    at::TensorOptions().dtype(c10::kFloat).device(c10::kMeta)));
    at::TensorIterator iter = cfg.build();
    const at::TensorBase& o = iter.output_base(0);
    if (o.sizes() != sizes) return {};
    return c10::SmallVector<int64_t, 6>(o.strides().begin(), o.strides().end());
}

// The memory format result k takes under plan.format (Contiguous: row-major).
static c10::MemoryFormat result_format(const Plan& plan, size_t k, size_t rank, const torch::jit::Stack& stack,
                                       size_t first) {
    const FormatRule& r = *plan.format;
    auto fits = [&](c10::MemoryFormat f) {
        return (f == c10::MemoryFormat::ChannelsLast && rank == 4) ||
               (f == c10::MemoryFormat::ChannelsLast3d && rank == 5 && !r.only_4d);
    };
    if (k >= 3 || !r.from[k]) return c10::MemoryFormat::Contiguous;
    int ordinal = 0;
    for (size_t i = 0; i < plan.n_inputs; i++) {
        const c10::IValue& iv = stack[first + i];
        if (r.list_all && plan.kinds[i] == ArgKind::TensorList) {
            c10::MemoryFormat f = c10::MemoryFormat::Contiguous;
            bool same = true, any = false;
            for (const at::Tensor& t : iv.toTensorList()) {
                c10::MemoryFormat g = t.suggest_memory_format();
                same = same && (!any || g == f);
                f = g;
                any = true;
            }
            return any && same && fits(f) ? f : c10::MemoryFormat::Contiguous;
        }
        if (plan.kinds[i] != ArgKind::Tensor) continue;
        if ((r.from[k] >> ordinal++) & 1) {
            if (!iv.isTensor() || !iv.toTensor().defined()) continue;
            c10::MemoryFormat f = iv.toTensor().suggest_memory_format();
            if (fits(f)) return f;
        }
    }
    return c10::MemoryFormat::Contiguous;
}

// Runs the op natively; false means "not handled here" (fall back) and *declined says why. The stack is untouched
// then, except that index lists may have been rewritten by prepare_index_lists into an equivalent form.
static bool run_native(const Plan& plan, torch::jit::Stack* stack, std::string* declined) {
    const size_t n_args = n_args_of(plan);
    const size_t first = stack->size() - n_args;
    if (plan.has_index_lists) prepare_index_lists(plan, stack, first);
    // One key buffer per nesting level (an op's allocation may dispatch another op): no heap on the per-op path.
    static thread_local SigKey keys[4];
    static thread_local int depth = 0;
    struct Nest {
        int& d;
        ~Nest() { d--; }
    } nest{++depth};
    SigKey& key = keys[std::min(depth, 4) - 1];
    const bool keyed = depth <= 4 && signature_key(plan, *stack, first, key);
    if (keyed) {
        if (const Signature* sg = signature_find(key)) {
            run_signature(plan, *sg, key, stack, first);
            return true;
        }
    }
    t_op_used_rng = false;
    OpBuild ob;
    tt_ir_builder* b = thread_builder();
    tt_ir_builder_reset(b);
    ob.ctx.b = b;
    ob.ctx.precision = current_precision();
    ob.ctx.rng_reserve = rng_reserve;
    to_tt_dtype(c10::get_default_dtype_as_scalartype(), &ob.ctx.default_float);  // float scalars' dtype
    for (size_t t : plan.targets) note_device(ob, (*stack)[first + t].toTensor());
    if (!build_args(ob, plan, stack, first)) {
        *declined = ob.declined.empty() ? std::string(tt_last_error()) : ob.declined;
        return false;
    }
    if (ob.device < 0) ob.device = current_device();
    ob.ctx.device = ob.device;
    c10::SmallVector<tt_ir_value, 4> outs(plan.n_results, TT_IR_NONE);
    tt_status st = plan.fn(&ob.ctx, ob.args.data(), (int32_t)ob.args.size(), outs.data(), (int32_t)outs.size());
    if (st == TT_OK) st = tt_ir_builder_status(b);
    if (st == TT_STATUS_UNSUPPORTED) {
        *declined = tt_last_error();
        return false;
    }
    if (st != TT_OK) raise_status(st, "");
    for (auto v : outs)  // functional ops may leave a result out (an undefined tensor, e.g. a masked-off gradient)
        if (v == TT_IR_NONE && plan.kind != PlanKind::Functional)
            raise_status(tt_error(TT_STATUS_INTERNAL, "%s produced no result", plan.lowered.c_str()), "");

    Results results;
    if (plan.kind == PlanKind::Functional) {
        PendingResults pending;
        c10::SmallVector<int64_t, 6> strides;
        bool strides_known = !plan.pointwise;
        for (size_t k = 0; k < outs.size(); k++) {
            tt_ir_value v = outs[k];
            if (v == TT_IR_NONE) continue;
            const tt_ir_type* ty = tt_ir_type_of(b, v);
            at::IntArrayRef sizes(ty->dims, ty->rank);
            if (plan.format) {
                c10::MemoryFormat f = result_format(plan, k, sizes.size(), *stack, first);
                if (f != c10::MemoryFormat::Contiguous) {
                    results.push_back(at::empty(sizes, at::TensorOptions()
                                                           .dtype(to_torch_dtype(ty->dtype))
                                                           .device(c10::DeviceType::PrivateUse1, ob.device)
                                                           .memory_format(f)));
                    tt_ir_builder_add_output(b, v);
                    continue;
                }
            }
            if (!strides_known) {
                strides = pointwise_strides(ob, sizes);
                strides_known = true;
            }
            if (!strides.empty() && sizes.size() == strides.size())
                results.push_back(at::empty_strided(sizes, strides, at::TensorOptions()
                                                                        .dtype(to_torch_dtype(ty->dtype))
                                                                        .device(c10::DeviceType::PrivateUse1, ob.device)));
            else
                results.push_back(empty_tpu(sizes, to_torch_dtype(ty->dtype), ob.device));
            tt_ir_builder_add_output(b, v);
        }
    } else {
        // An out= tensor of another dtype than the result's: PyTorch's rule depends on the op (TensorIterator's unary
        // ops demand the same dtype, reductions cast even float to int, most ops cast when canCast allows), and the
        // CPU kernel is that rule, so the rare case runs there (its Meta kernel is not: the Python meta of neg.out
        // casts). Checked before any out tensor is resized.
        for (size_t k = 0; plan.kind == PlanKind::Out && cpu_fallback_enabled() && k < plan.targets.size(); k++) {
            tt_dtype want;
            const at::Tensor& t = (*stack)[first + plan.targets[k]].toTensor();
            if (to_tt_dtype(t.scalar_type(), &want) && want != tt_ir_type_of(b, outs[k])->dtype) {
                *declined = "an out= tensor of another dtype than the result's; the CPU kernel applies PyTorch's "
                            "casting rule for this op";
                return false;
            }
        }
        for (size_t k = 0; k < plan.targets.size(); k++) {
            at::Tensor target = (*stack)[first + plan.targets[k]].toTensor();
            const tt_ir_type* ty = tt_ir_type_of(b, outs[k]);
            tt_dtype tdt;
            TORCH_CHECK(to_tt_dtype(target.scalar_type(), &tdt), "tpu does not support dtype ", target.scalar_type());
            TORCH_CHECK(can_cast(ty->dtype, tdt), "result type ", to_torch_dtype(ty->dtype),
                        " can't be cast to the desired output type ", target.scalar_type());
            at::IntArrayRef rs(ty->dims, ty->rank);
            if (target.sizes() != rs) {
                // TensorIterator never resizes an operand it also reads (an in-place op, or out= one of the inputs:
                // ldexp_ is mul_out(self, self, ...))
                bool read_too = plan.kind != PlanKind::Out;
                for (size_t i = 0; plan.pointwise && i < plan.n_inputs && !read_too; i++) {
                    const c10::IValue& iv = (*stack)[first + i];
                    read_too = iv.isTensor() && iv.toTensor().defined() && iv.toTensor().is_same(target);
                }
                TORCH_CHECK(!read_too, "output with shape ", target.sizes(), " doesn't match the broadcast shape ",
                            shape_str(ty->dims, ty->rank));
                if (target.numel() != 0)
                    TORCH_WARN("An output with one or more elements was resized since it had shape ", target.sizes(),
                               ", which does not match the required output shape ", rs,
                               ". This behavior is deprecated, and in a future PyTorch release outputs will not be "
                               "resized unless they have zero elements. You can explicitly reuse an out tensor t by "
                               "resizing it, inplace, to zero elements with t.resize_(0).");
                target.resize_(rs);
                ob.resized = true;
                if (plan.pointwise) {  // a resized out= tensor takes the layout rule too, as TensorIterator restrides it
                    auto strides = pointwise_strides(ob, rs);
                    if (!strides.empty()) target.as_strided_(rs, strides);
                }
            }
            tt_ir_builder_add_output(b, tt_ir_convert(b, outs[k], tdt));
            results.push_back(target);
        }
    }
    bool any = false;
    for (auto& r : results) any = any || r.numel() > 0;
    if (any) {
        tt_ir_program* prog = launch(ob, results, plan.key.c_str());
        if (keyed && !t_op_used_rng && !ob.resized && ob.items.size() == key.items.size())
            signature_insert(key, make_signature(plan, ob, prog, results, outs));
        else
            tt_ir_program_destroy(prog);
    }

    drop_args(stack, n_args);
    size_t next = 0;
    for (size_t k = 0; k < outs.size(); k++) {
        if (plan.kind == PlanKind::Functional && outs[k] == TT_IR_NONE) stack->emplace_back(at::Tensor());
        else stack->emplace_back(results[next++]);
    }
    return true;
}

// A random op run on the CPU draws from the tpu generator it was given (or the tpu default), through a CPU
// generator seeded from it, never from the CPU's default generator.
static void cpu_generators(const Plan& plan, torch::jit::Stack* stack, size_t first) {
    for (size_t i = 0; i < plan.n_inputs; i++) {
        if (plan.kinds[i] != ArgKind::Generator) continue;
        c10::IValue& iv = (*stack)[first + i];
        at::Generator g = iv.isNone() ? at::Generator() : iv.toGenerator();
        if (g.defined()) check_tpu_generator(g);
        int device = g.defined() ? g.device().index() : first_tpu_device(plan, *stack, first);
        iv = c10::IValue(cpu_generator_from(g, device < 0 ? current_device() : device));
    }
}

static void tpu_boxed_fallback(const c10::OperatorHandle& op, torch::jit::Stack* stack) {
    ensure_init();
    const Plan& plan = plan_for(op);
    if (!plan.targets.empty()) check_overlap(plan, *stack, stack->size() - n_args_of(plan));
    std::string declined;
    if (plan.fn && run_native(plan, stack, &declined)) return;
    // Google TorchTPU's message is "'aten::X' is not implemented for TPU"; this one contains it.
    const std::string why = plan.fn ? "has a native tpu lowering (" + plan.lowered +
                                          ") but it declined these arguments (" + declined + ")"
                                    : std::string("has no native tpu lowering");
    TORCH_CHECK_NOT_IMPLEMENTED(cpu_fallback_enabled(), "operator '", plan.key, "' is not implemented for TPU: it ",
                                why, ", and the CPU fallback is off (TORCHTPU_CPU_FALLBACK=0 or "
                                "torch.tpu.cpu_fallback_mode(False))");
    count_fallback(plan.key, why);
    own_borrows(stack);
    const size_t first = stack->size() - n_args_of(plan);
    // PyTorch's cpu_fallback sends new results to the first tensor argument's device, which is the CPU when that is
    // a wrapped Python number (torch.div(5, t)): the op was dispatched here for a tpu tensor, so they come back.
    const int device = plan.kind == PlanKind::Functional ? first_tpu_device(plan, *stack, first) : -1;
    cpu_generators(plan, stack, first);
    // PyTorch's cpu_fallback copies a view with gaps or overlaps (t[:, ::2], an expand) to a contiguous CPU tensor;
    // some CPU kernels choose their algorithm by the input's layout (_linalg_det factors A or A^T by
    // A.is_contiguous(), and its backward decides the same way on the device tensor), so inputs the op only reads
    // go over with their strides. (Written inputs stay: cpu_fallback copies them back. Out args follow the inputs.)
    for (size_t i = plan.kind == PlanKind::Inplace ? 1 : 0; i < plan.n_inputs; i++) {
        c10::IValue& iv = (*stack)[first + i];
        if (!iv.isTensor() || !iv.toTensor().defined()) continue;
        const at::Tensor& t = iv.toTensor();
        if (t.device().type() == c10::DeviceType::PrivateUse1 && !t.is_non_overlapping_and_dense())
            iv = host_view_of(t);
    }
    at::native::cpu_fallback(op, stack, /*error_on_views=*/true);
    if (device < 0) return;
    const size_t n_ret = op.schema().returns().size();
    for (size_t i = stack->size() - n_ret; i < stack->size(); i++) {
        c10::IValue& iv = (*stack)[i];
        if (iv.isTensor() && iv.toTensor().defined() && iv.toTensor().device().is_cpu())
            iv = iv.toTensor().to(c10::Device(c10::DeviceType::PrivateUse1, (c10::DeviceIndex)device));
    }
}

void run_borrowed(const c10::OperatorHandle& op, torch::jit::Stack* stack, uint32_t borrowed) {
    struct Scope {
        torch::jit::Stack* stack;
        Borrowed prev;
        ~Scope() {
            forget_borrows(stack);  // an error left them on the stack
            t_borrowed = prev;
        }
    } scope{stack, t_borrowed};
    t_borrowed = Borrowed{stack, borrowed};
    tpu_boxed_fallback(op, stack);
}

bool lowers_natively(const c10::OperatorHandle& op) { return plan_for(op).fn != nullptr; }

bool has_native(const std::string& key) { return tt_lower_find(key.c_str()) != nullptr; }

// ---- src -> dst on the device (copies, in-place writes) ------------------------------------------------------------
void launch_assign(const at::Tensor& src, const at::Tensor& dst) {
    static thread_local std::unique_ptr<tt_ir_builder, void (*)(tt_ir_builder*)> tb(tt_ir_builder_create(),
                                                                                     tt_ir_builder_destroy);
    TORCH_CHECK(tb, "torchtpu: out of memory creating the IR builder");
    TORCH_CHECK(src.device() == dst.device(), "launch_assign: devices differ");
    if (dst.numel() == 0) return;
    if (src.dim() > TT_MAX_RANK || dst.dim() > TT_MAX_RANK) {  // beyond the device kernels' rank: via the host
        at::Tensor host = at::empty(src.sizes(), src.options().device(c10::kCPU));
        at::_copy_from(src, host);  // minimal.cpp's copies move such views as the storage span they cover
        at::_copy_from(host, dst);
        return;
    }
    OpBuild ob;
    tt_ir_builder_reset(tb.get());
    ob.ctx.b = tb.get();
    tt_arg a{};
    TORCH_CHECK(tensor_arg(ob, src, a), "tpu cannot copy a tensor of dtype ", src.scalar_type());
    tt_dtype ddt;
    TORCH_CHECK(to_tt_dtype(dst.scalar_type(), &ddt), "tpu does not support dtype ", dst.scalar_type());
    tt_ir_value v = tt_lower_to(&ob.ctx, a.value, ddt, (int32_t)dst.dim(), dst.sizes().data());
    TT_CHECK(tt_ir_builder_status(tb.get()));
    tt_ir_builder_add_output(tb.get(), v);
    launch(ob, Results{dst}, "aten::copy_");
}


// Ops with a CompositeExplicitAutograd kernel would run that composite on the device and never reach the
// fallback; a direct PrivateUse1 kernel for every lowered op (and its in-place and out= forms) sends them to the
// lowering instead. Ops that are CompositeImplicitAutograd are left alone: they decompose above autograd.
int register_lowered_kernels() {
    static std::unique_ptr<torch::Library> lib;
    if (lib) return 0;
    lib = std::make_unique<torch::Library>(torch::Library::IMPL, "aten", c10::DispatchKey::PrivateUse1, __FILE__,
                                           __LINE__);
    const auto& lowered = lowered_overloads();
    int n = register_unboxed(*lib);
    for (const c10::OperatorName& name : c10::Dispatcher::singleton().getAllOpNames()) {
        if (name.name.rfind("aten::", 0) != 0) continue;
        std::string base = name.name;
        if (!base.empty() && base.back() == '_') base.pop_back();
        if (!lowered.count(base)) continue;
        auto h = c10::Dispatcher::singleton().findOp(name);
        if (!h || h->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
            h->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd))
            continue;
        if (!h->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) &&
            !h->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional))
            continue;  // reaches the fallback anyway
        // Ops that move tensors between devices (a tensor and a Device argument, like _to_copy) keep their
        // composite: it allocates on the target device and copies. So do ops with a memory_format (clone): their
        // composite allocates the requested layout; lowered results are always row-major.
        bool tensor_in = false, device_in = false, layout_in = false;
        for (const auto& arg : h->schema().arguments()) {
            c10::TypePtr t = arg.real_type();
            if (t->kind() == c10::TypeKind::OptionalType) t = t->containedType(0);
            tensor_in = tensor_in || t->kind() == c10::TypeKind::TensorType;
            device_in = device_in || t->kind() == c10::TypeKind::DeviceObjType;
            layout_in = layout_in || t->kind() == c10::TypeKind::MemoryFormatType;
        }
        if ((tensor_in && device_in) || layout_in) continue;
        const Plan& plan = plan_for(*h);
        if (!plan.fn) continue;  // no functional lowering matches: keep PyTorch's composite
        std::string key = name.name.substr(6) + (name.overload_name.empty() ? "" : "." + name.overload_name);
        lib->impl(key.c_str(), torch::CppFunction::makeFromBoxedFunction<&tpu_boxed_fallback>());
        n++;
    }
    return n;
}

TORCH_LIBRARY_IMPL(_, PrivateUse1, m) { m.fallback(torch::CppFunction::makeFromBoxedFunction<&tpu_boxed_fallback>()); }

// Autograd for custom ops registered without an autograd kernel: pass through, as CPU does.
TORCH_LIBRARY_IMPL(_, AutogradPrivateUse1, m) { m.fallback(torch::CppFunction::makeFallthrough()); }

}  // namespace torchtpu
