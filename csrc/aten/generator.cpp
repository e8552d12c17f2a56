// generator.cpp — torch.Generator for the tpu: the per-device default generators and private ones.
#include <ATen/CPUGeneratorImpl.h>

#include <mutex>
#include <vector>

#include "shim.h"

namespace torchtpu {

// One default generator per device; seeding it seeds the core's counter-based RNG.
struct TpuGenerator final : public at::CPUGeneratorImpl {
    // is_default: the device's default generator, whose seed is the device's RNG stream. Private generators
    // (torch.Generator("tpu")) keep their own seed; random ops do not read a generator= argument yet.
    TpuGenerator(c10::DeviceIndex d, bool is_default) : at::CPUGeneratorImpl(67280421310721ull), is_default_(is_default) {
        device_ = c10::Device(c10::DeviceType::PrivateUse1, d);
        key_set_ = c10::DispatchKeySet(c10::DispatchKey::PrivateUse1);
    }
    void set_current_seed(uint64_t seed) override {
        at::CPUGeneratorImpl::set_current_seed(seed);
        if (is_default_) tt_rt_manual_seed(device_.index(), seed);
    }
    uint64_t current_seed() const override {
        return is_default_ ? tt_rt_initial_seed(device_.index()) : at::CPUGeneratorImpl::current_seed();
    }
    uint64_t seed() override {
        uint64_t s = c10::detail::getNonDeterministicRandom();
        set_current_seed(s);
        return s;
    }

  private:
    bool is_default_;
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

}  // namespace torchtpu
