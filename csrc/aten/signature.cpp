// signature.cpp — the signature cache: a repeated op reuses the program its lowering built the first time.
//
// The key is a flat byte string of everything the lowering and the shim's result allocation read (op_plan.h), so
// a hit is exact: the same key always built the same program and the same result layouts. Each thread keeps its own
// table (no lock on the per-op path; autograd's worker thread fills its own), cleared when it reaches
// kMaxSignatures entries.
#include <ATen/ATen.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <unordered_map>

#include "op_plan.h"

namespace torchtpu {

thread_local bool t_op_used_rng = false;

static std::atomic<bool> g_enabled{[] {
    const char* e = std::getenv("TORCHTPU_SIGNATURE_CACHE");
    return !(e && std::strcmp(e, "0") == 0);
}()};
bool signature_cache_enabled() { return g_enabled.load(std::memory_order_relaxed); }
void set_signature_cache_enabled(bool on) { g_enabled.store(on); }

static std::atomic<int64_t> g_hits{0}, g_misses{0};
int64_t signature_hits() { return g_hits.load(); }
int64_t signature_misses() { return g_misses.load(); }
void reset_signature_counts() {
    g_hits.store(0);
    g_misses.store(0);
}

Signature::~Signature() { tt_ir_program_destroy(program); }

namespace {

constexpr size_t kMaxSignatures = 4096;

// Tags keep different argument shapes apart (a None and an int 0 never share bytes).
enum Tag : int64_t { kNone = 1, kUndefined, kTpu, kCpuScalar, kBool, kInt, kFloat, kList, kString, kDevice, kMixed, kDType };

struct Builder {
    SigKey& key;
    int device = -1;
    void put(int64_t w) { key.bytes.append(reinterpret_cast<const char*>(&w), sizeof w); }
    void put_double(double d) {
        int64_t w;
        std::memcpy(&w, &d, sizeof w);
        put(w);
    }
    // A tensor the lowering takes as an argument (item = true) or only writes (an out= target).
    bool tensor(const at::Tensor& t, bool item) {
        if (item) key.items.push_back(&t);
        if (!t.defined()) {
            put(kUndefined);
            return true;
        }
        tt_dtype dt;
        if (!to_tt_dtype(t.scalar_type(), &dt) || t.dim() > TT_MAX_RANK) return false;
        const c10::Device d = t.device();
        if (d.type() == c10::DeviceType::CPU) {  // a Python number or 0-d CPU tensor: a scalar parameter
            if (t.dim() != 0 || !item) return false;
            put(kCpuScalar);
            put((int64_t)dt | (int64_t)t.unsafeGetTensorImpl()->is_wrapped_number() << 8);
            return true;
        }
        if (d.type() != c10::DeviceType::PrivateUse1) return false;
        if (device < 0) device = d.index();
        put(kTpu);
        put((int64_t)dt | (int64_t)d.index() << 8 | (int64_t)t.dim() << 16);
        for (int64_t s : t.sizes()) put(s);
        for (int64_t s : t.strides()) put(s);
        return true;
    }
    bool integer(const c10::IValue& v) {
        if (v.isSymInt()) {
            c10::SymInt s = v.toSymInt();
            if (s.is_symbolic()) return false;
            put(s.as_int_unchecked());
        } else if (v.isBool()) {
            put(v.toBool());
        } else {
            put(v.toInt());
        }
        return true;
    }
};

}  // namespace

bool signature_key(const Plan& plan, const torch::jit::Stack& stack, size_t first, SigKey& key) {
    if (!signature_cache_enabled() || plan.has_index_lists || trace_active()) return false;
    key.bytes.clear();
    key.items.clear();
    Builder b{key};
    b.put((int64_t)(intptr_t)&plan);
    b.put((int64_t)current_precision() | (int64_t)c10::get_default_dtype_as_scalartype() << 8 |
          (int64_t)cpu_fallback_enabled() << 16);
    for (size_t t : plan.targets)  // the targets' device comes first, as in the normal path
        if (!stack[first + t].isTensor() || !b.tensor(stack[first + t].toTensor(), false)) return false;
    for (size_t i = 0; i < plan.n_inputs; i++) {
        const c10::IValue& iv = stack[first + i];
        if (iv.isNone()) {
            b.put(kNone);
            continue;
        }
        switch (plan.kinds[i]) {
        case ArgKind::Tensor:
            if (!b.tensor(iv.toTensor(), true)) return false;
            break;
        case ArgKind::TensorList:
        case ArgKind::OptTensorList: {
            auto list = iv.toListRef();
            b.put(kList);
            b.put((int64_t)list.size());
            for (const c10::IValue& e : list) {
                if (e.isNone()) b.put(kNone);
                else if (!b.tensor(e.toTensor(), true)) return false;
            }
            break;
        }
        case ArgKind::Scalar: {
            const c10::Scalar s = iv.toScalar();
            if (s.isBoolean()) {
                b.put(kBool);
                b.put(s.toBool());
            } else if (s.isIntegral(false)) {
                b.put(kInt);
                b.put(s.toLong());
            } else if (s.isFloatingPoint()) {
                b.put(kFloat);
                b.put_double(s.toDouble());
            } else {
                return false;
            }
            break;
        }
        case ArgKind::Int:
        case ArgKind::Bool:
            b.put(kInt);
            if (!b.integer(iv)) return false;
            break;
        case ArgKind::Float:
            b.put(kFloat);
            b.put_double(iv.toDouble());
            break;
        case ArgKind::IntList:
        case ArgKind::BoolList: {
            auto list = iv.toListRef();
            b.put(kList);
            b.put((int64_t)list.size());
            for (const c10::IValue& e : list)
                if (!b.integer(e)) return false;
            break;
        }
        case ArgKind::DType:
            b.put(kDType);
            b.put((int64_t)iv.toScalarType());
            break;
        case ArgKind::String: {
            const std::string& s = iv.toStringRef();
            b.put(kString);
            b.put((int64_t)s.size());
            key.bytes.append(s);
            break;
        }
        case ArgKind::Generator: return false;
        case ArgKind::Other:
            // Layout and memory_format arrive as ints; a device decides the op's device when no tensor does.
            if (iv.isDevice()) {
                const c10::Device d = iv.toDevice();
                b.put(kDevice);
                b.put((int64_t)d.type() | (int64_t)(d.has_index() ? d.index() : -1) << 8);
                if (d.type() == c10::DeviceType::PrivateUse1 && b.device < 0)
                    b.device = d.has_index() ? d.index() : current_device();
            } else if (iv.isInt() || iv.isBool()) {
                b.put(kMixed);
                if (!b.integer(iv)) return false;
            } else if (iv.isDouble()) {
                b.put(kMixed);
                b.put_double(iv.toDouble());
            } else {
                return false;
            }
            break;
        }
    }
    b.put(b.device < 0 ? current_device() : b.device);
    return true;
}

using Table = std::unordered_map<std::string, std::unique_ptr<Signature>>;
static Table& table() {
    static thread_local Table t;
    return t;
}

const Signature* signature_find(const SigKey& key) {
    Table& t = table();
    auto it = t.find(key.bytes);
    if (it == t.end()) {
        g_misses.fetch_add(1, std::memory_order_relaxed);
        return nullptr;
    }
    g_hits.fetch_add(1, std::memory_order_relaxed);
    return it->second.get();
}

void signature_insert(const SigKey& key, std::unique_ptr<Signature> sig) {
    Table& t = table();
    if (t.size() >= kMaxSignatures) t.clear();
    t.emplace(key.bytes, std::move(sig));
}

}  // namespace torchtpu
