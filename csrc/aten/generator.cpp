// generator.cpp — torch.Generator for the tpu: the per-device default generators and private ones.
//
// Both kinds hold the state of the core's counter-based RNG, (seed, offset): a random op reserves `count`
// counters and element k uses (seed, offset + k). The default generator of a device is the runtime's state for
// that device (tt_rt_rng_*), so torch.tpu.manual_seed / get_rng_state and the generator object agree; a private
// generator (torch.Generator("tpu")) keeps its own pair, so drawing from it never moves the default stream.
// get_state() is 16 bytes, seed then offset (little-endian u64), for either kind — torch.tpu.get_rng_state's
// layout.
#include <ATen/core/DistributionsHelper.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Utils.h>
#include <c10/core/GeneratorImpl.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "shim.h"

namespace torchtpu {

static constexpr uint64_t kDefaultSeed = 67280421310721ull;  // PyTorch's default_rng_seed_val
static constexpr size_t kStateBytes = 16;

struct TpuGenerator final : public c10::GeneratorImpl {
    TpuGenerator(c10::DeviceIndex d, bool is_default)
        : c10::GeneratorImpl(c10::Device(c10::DeviceType::PrivateUse1, d),
                             c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
          is_default_(is_default) {}

    static c10::DeviceType device_type() { return c10::DeviceType::PrivateUse1; }

    // Callers hold mutex_ (Note [Acquire lock when using random generators]).
    void reserve(uint64_t count, uint64_t* seed, uint64_t* offset) {
        if (is_default_) {
            tt_rt_rng_reserve(device_.index(), count, seed, offset);
            return;
        }
        *seed = seed_;
        *offset = offset_;
        offset_ += count + ((4 - count % 4) % 4);  // the runtime's step (whole 4-lane blocks)
    }

    void get(uint64_t* seed, uint64_t* offset) const {
        if (is_default_) {
            tt_rt_rng_get_state(device_.index(), seed, offset);
        } else {
            *seed = seed_;
            *offset = offset_;
        }
    }
    void put(uint64_t seed, uint64_t offset) {
        if (is_default_) {
            tt_rt_rng_set_state(device_.index(), seed, offset);
        } else {
            seed_ = seed;
            offset_ = offset;
        }
    }

    void set_current_seed(uint64_t seed) override { put(seed, 0); }
    uint64_t current_seed() const override {
        uint64_t s, o;
        get(&s, &o);
        return s;
    }
    void set_offset(uint64_t offset) override { put(current_seed(), offset); }
    uint64_t get_offset() const override {
        uint64_t s, o;
        get(&s, &o);
        return o;
    }
    uint64_t seed() override {
        uint64_t s = c10::detail::getNonDeterministicRandom();
        set_current_seed(s);
        return s;
    }

    c10::intrusive_ptr<c10::TensorImpl> get_state() const override {
        uint64_t s, o;
        get(&s, &o);
        at::Tensor t = at::empty({(int64_t)kStateBytes}, at::TensorOptions().dtype(at::kByte));
        std::memcpy(t.data_ptr<uint8_t>(), &s, 8);  // little-endian hosts only (x86-64, aarch64)
        std::memcpy(t.data_ptr<uint8_t>() + 8, &o, 8);
        return t.getIntrusivePtr();
    }
    void set_state(const c10::TensorImpl& new_state) override {
        at::detail::check_rng_state(new_state);
        TORCH_CHECK(new_state.numel() == (int64_t)kStateBytes, "RNG state is wrong size: a tpu generator's state is ",
                    kStateBytes, " bytes (seed, offset), got ", new_state.numel());
        const uint8_t* p = new_state.data_dtype_initialized<uint8_t>();
        uint64_t s, o;
        std::memcpy(&s, p, 8);
        std::memcpy(&o, p + 8, 8);
        put(s, o);
    }

    // The state as a generator object (torch.Generator.graphsafe_get_state / clone_state): a private copy.
    c10::intrusive_ptr<c10::GeneratorImpl> graphsafe_get_state() const override {
        return clone();
    }
    void graphsafe_set_state(const c10::intrusive_ptr<c10::GeneratorImpl>& state) override {
        auto* other = dynamic_cast<TpuGenerator*>(state.get());
        TORCH_CHECK(other, "graphsafe_set_state: expected a tpu generator's state");
        uint64_t s, o;
        other->get(&s, &o);
        put(s, o);
    }

  private:
    TpuGenerator* this_clone() const {
        auto* g = new TpuGenerator(device_.index(), false);
        get(&g->seed_, &g->offset_);
        return g;
    }
    TpuGenerator* clone_impl() const override { return this_clone(); }

    bool is_default_;
    uint64_t seed_ = kDefaultSeed;
    uint64_t offset_ = 0;
};

const at::Generator& default_generator(c10::DeviceIndex d) {
    static std::vector<at::Generator> gens;
    static std::once_flag once;
    std::call_once(once, [] {
        ensure_init();
        for (int i = 0; i < tt_rt_device_count(); i++) gens.push_back(at::make_generator<TpuGenerator>(i, true));
    });
    if (d < 0) d = current_device();
    TORCH_CHECK(d < (c10::DeviceIndex)gens.size(), "no tpu device ", int(d));
    return gens[d];
}

at::Generator new_generator(c10::DeviceIndex d) {
    return at::make_generator<TpuGenerator>(d < 0 ? current_device() : d, false);
}

void check_tpu_generator(const at::Generator& gen) {
    TORCH_CHECK(gen.defined(), "Generator with undefined implementation is not allowed");
    TORCH_CHECK(gen.device().type() == c10::DeviceType::PrivateUse1, "Expected a '",
                c10::DeviceTypeName(c10::DeviceType::PrivateUse1, true), "' device type for generator but found '",
                c10::DeviceTypeName(gen.device().type(), true), "'");
}

void rng_reserve_on(c10::GeneratorImpl* gen, int device, uint64_t count, uint64_t* seed, uint64_t* offset) {
    if (!gen) {
        tt_rt_rng_reserve(device, count, seed, offset);
        return;
    }
    auto* g = static_cast<TpuGenerator*>(gen);  // checked by check_tpu_generator when the op's argument was read
    std::lock_guard<std::mutex> lock(g->mutex_);
    g->reserve(count, seed, offset);
}

// An op that runs on the CPU (no lowering, or the lowering declined) gets a fresh CPU generator whose seed comes
// from one reservation on the tpu generator (gen, or the device's default when gen is undefined): the same tpu
// state gives the same numbers, the tpu stream advances, and the CPU's own default generator is left alone.
at::Generator cpu_generator_from(const at::Generator& gen, int device) {
    uint64_t s = 0, o = 0;
    rng_reserve_on(gen.defined() ? gen.unsafeGetGeneratorImpl() : nullptr, device, 1, &s, &o);
    return at::make_generator<at::CPUGeneratorImpl>(tt_ir_rng_bits(s, o));
}

}  // namespace torchtpu
