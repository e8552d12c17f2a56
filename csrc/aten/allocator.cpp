// allocator.cpp — device memory as PyTorch sees it: the DeviceAllocator (torch.accelerator.memory_* answer
// through it) and one allocator bound to each device.
#include <c10/core/CachingDeviceAllocator.h>

#include "shim.h"

namespace torchtpu {

// DataPtr: data = the driver's buffer address (never dereferenced here), context = the tt_rt_storage.
struct TpuAllocator final : public c10::DeviceAllocator {
    static void release(void* ctx) { tt_rt_storage_release(static_cast<tt_rt_storage*>(ctx)); }

    at::DataPtr allocate(size_t nbytes) override { return allocate_on(current_device(), nbytes); }
    static at::DataPtr allocate_on(c10::DeviceIndex dev, size_t nbytes) {
        ensure_init();
        tt_rt_storage* s = nullptr;
        tt_status st = tt_rt_storage_create(dev, nbytes, &s);
        if (st != TT_OK) raise_status(st, "");
        return {tt_rt_storage_address(s), s, &TpuAllocator::release, c10::Device(c10::DeviceType::PrivateUse1, dev)};
    }
    at::DeleterFnPtr raw_deleter() const override { return nullptr; }
    void copy_data(void*, const void*, std::size_t) const override {
        TORCH_CHECK(false, "tpu storages cannot be copied by address; use tensor.copy_()");
    }
    bool initialized() override { return true; }
    void emptyCache(c10::MempoolId_t) override {
        ensure_init();
        for (int d = 0; d < tt_rt_device_count(); d++) tt_rt_empty_cache(d);
    }
    void recordStream(const at::DataPtr&, c10::Stream) override {}
    c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
        ensure_init();
        tt_rt_memory_stats m{};
        TT_CHECK(tt_rt_memory_stats_get(device < 0 ? current_device() : device, &m));
        c10::CachingDeviceAllocator::DeviceStats s;
        auto fill = [](c10::CachingAllocator::StatArray& a, int64_t cur, int64_t peak) {
            for (auto& x : a) {
                x.current = cur;
                x.peak = peak;
                x.allocated = peak;
            }
        };
        fill(s.allocated_bytes, (int64_t)m.allocated, (int64_t)m.peak_allocated);
        fill(s.active_bytes, (int64_t)m.allocated, (int64_t)m.peak_allocated);
        fill(s.reserved_bytes, (int64_t)m.reserved, (int64_t)m.peak_reserved);
        fill(s.requested_bytes, (int64_t)m.allocated, (int64_t)m.peak_allocated);
        fill(s.allocation, m.n_allocs, m.n_allocs);
        return s;
    }
    void resetAccumulatedStats(c10::DeviceIndex) override {}
    void resetPeakStats(c10::DeviceIndex device) override {
        ensure_init();
        tt_rt_memory_reset_peak(device < 0 ? current_device() : device);
    }
};

static TpuAllocator g_allocator;
REGISTER_ALLOCATOR(c10::DeviceType::PrivateUse1, &g_allocator);
c10::Allocator* tpu_allocator() { return &g_allocator; }

// The same allocator bound to one device, so allocating for tpu:d never changes the thread's current device.
struct TpuDeviceAllocator final : public c10::Allocator {
    c10::DeviceIndex device = 0;
    at::DataPtr allocate(size_t nbytes) override { return TpuAllocator::allocate_on(device, nbytes); }
    at::DeleterFnPtr raw_deleter() const override { return nullptr; }
    void copy_data(void* d, const void* s, std::size_t n) const override { g_allocator.copy_data(d, s, n); }
};

c10::Allocator* tpu_allocator_for(c10::DeviceIndex d) {
    static TpuDeviceAllocator per_device[64];
    ensure_init();
    TORCH_CHECK(d >= 0 && d < tt_rt_device_count() && d < 64, "Invalid device index tpu:", int(d), "; there are ",
                tt_rt_device_count(), " tpu devices (TORCHTPU_HOST_DEVICES)");
    per_device[d].device = d;
    return &per_device[d];
}

at::DataPtr allocate_on(c10::DeviceIndex d, size_t nbytes) { return TpuAllocator::allocate_on(d, nbytes); }

}  // namespace torchtpu
