// hooks.cpp — the PrivateUse1 hooks: availability, device count, generators, pinned memory, storage resize.
#include <ATen/detail/PrivateUse1HooksInterface.h>

#include "shim.h"

namespace torchtpu {

struct TpuHooks final : public at::PrivateUse1HooksInterface {
    bool isBuilt() const override { return true; }
    bool isAvailable() const override {
        try {
            return deviceCount() > 0;
        } catch (...) {
            return false;  // a misconfigured runtime means "no tpu", not an exception in accelerator probes
        }
    }
    bool hasPrimaryContext(c10::DeviceIndex) const override { return true; }
    void init() const override { ensure_init(); }
    c10::DeviceIndex deviceCount() const override {
        try {
            ensure_init();
        } catch (...) {
            return 0;  // the start-up error is raised by the first real use of the device
        }
        return (c10::DeviceIndex)tt_rt_device_count();
    }
    void setCurrentDevice(c10::DeviceIndex d) const override { set_current_device(d); }
    c10::DeviceIndex getCurrentDevice() const override { return current_device(); }
    c10::DeviceIndex exchangeDevice(c10::DeviceIndex d) const override {
        c10::DeviceIndex old = current_device();
        set_current_device(d);
        return old;
    }
    c10::DeviceIndex maybeExchangeDevice(c10::DeviceIndex d) const override { return exchangeDevice(d); }
    const at::Generator& getDefaultGenerator(c10::DeviceIndex d) const override { return default_generator(d); }
    at::Generator getNewGenerator(c10::DeviceIndex d) const override {
        return new_generator(d);
    }
    at::Device getDeviceFromPtr(void*) const override { return at::Device(c10::DeviceType::PrivateUse1, current_device()); }
    bool isPinnedPtr(const void*) const override { return false; }
    at::Allocator* getPinnedMemoryAllocator() const override { return at::getCPUAllocator(); }
    // Grows or shrinks a storage: a new allocation on the same device, the old bytes copied in the device order.
    void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
        c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
        at::DataPtr fresh = allocate_on(impl->device().index(), newsize);
        size_t keep = std::min(newsize, impl->nbytes());
        tt_rt_storage* src = storage_of(storage);
        auto* dst = static_cast<tt_rt_storage*>(fresh.get_context());
        if (keep > 0 && src && dst) TT_CHECK(tt_rt_copy(dst, 0, src, 0, keep));
        impl->set_data_ptr_noswap(std::move(fresh));
        impl->set_nbytes(newsize);
    }
};

static bool register_hooks = [] {
    at::RegisterPrivateUse1HooksInterface(new TpuHooks());
    return true;
}();

}  // namespace torchtpu
