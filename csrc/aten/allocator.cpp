// allocator.cpp — device memory as PyTorch sees it: the DeviceAllocator (torch.accelerator.memory_* answer
// through it) and one allocator bound to each device.
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/COW.h>


#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "shim.h"

namespace torchtpu {

thread_local bool t_pending_results = false;

// PyTorch hands some code only a storage's bare address: at::from_blob in UntypedStorage._write_file /
// _set_from_file (pickle, legacy torch.save), Allocator::copy_data when a copy-on-write storage materializes. The
// runtime finds the storage again by its address (tt_rt_storage_find; never dereferenced).
// The compile cache's executables keep host scratch arenas (the host driver's devices share them): they are
// counted as reserved memory of tpu:0, so that torch.accelerator.memory_reserved() shows them.
tt_rt_memory_stats device_memory_stats(c10::DeviceIndex device) {
    ensure_init();
    tt_rt_memory_stats m{};
    TT_CHECK(tt_rt_memory_stats_get(device, &m));
    if (device == 0) {
        tt_rt_cache_stats cs{};
        tt_rt_cache_stats_get(&cs);
        m.reserved += cs.scratch_bytes;
        m.peak_reserved = std::max(m.peak_reserved, m.reserved);
    }
    return m;
}

// (free, total) as torch.cuda.mem_get_info: with a memory limit, the limit and what the device has not reserved
// under it; without one the device is this machine's RAM: its size and what the kernel reports available.
std::pair<size_t, size_t> device_memory_info(c10::DeviceIndex device) {
    tt_rt_memory_stats m = device_memory_stats(device);
    if (m.limit) return {m.limit > m.reserved ? m.limit - m.reserved : 0, m.limit};
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t total = page * (size_t)sysconf(_SC_PHYS_PAGES);
    size_t avail = page * (size_t)sysconf(_SC_AVPHYS_PAGES);
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    size_t kb = 0;
    std::string unit;
    while (meminfo >> key >> kb >> unit)
        if (key == "MemAvailable:") {
            avail = kb * 1024;
            break;
        }
    return {std::min(avail, total), total};
}

// DataPtr: data = the driver's buffer address (never dereferenced here), context = the tt_rt_storage.
struct TpuAllocator final : public c10::DeviceAllocator {
    static void release(void* ctx) {
        tt_rt_storage_release(static_cast<tt_rt_storage*>(ctx));
    }
    // The deleter of the copy-on-write form (context == data == address, see make_cow_able).
    static void release_by_address(void* address) {
        tt_rt_storage_release(tt_rt_storage_find(address));
    }

    at::DataPtr allocate(size_t nbytes) override { return allocate_on(current_device(), nbytes); }
    static at::DataPtr allocate_on(c10::DeviceIndex dev, size_t nbytes) {
        ensure_init();
        tt_rt_storage* s = nullptr;
        tt_status st = t_pending_results ? tt_rt_storage_create_pending(dev, nbytes, &s)
                                         : tt_rt_storage_create(dev, nbytes, &s);
        if (st != TT_OK) raise_status(st, "");
        return {tt_rt_storage_address(s), s, &TpuAllocator::release, c10::Device(c10::DeviceType::PrivateUse1, dev)};
    }
    at::DeleterFnPtr raw_deleter() const override { return nullptr; }
    // Called with two storages' addresses (Allocator::clone, copy-on-write materialization): copied on the device.
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        if (count == 0) return;
        tt_rt_storage* d = tt_rt_storage_find(dest);
        tt_rt_storage* s = tt_rt_storage_find(src);
        TORCH_CHECK(d && s, "tpu: copy_data needs the addresses of two live tpu storages");
        TT_CHECK(tt_rt_copy(d, 0, s, 0, count));
    }
    bool initialized() override { return true; }
    void emptyCache(c10::MempoolId_t) override {
        ensure_init();
        for (int d = 0; d < tt_rt_device_count(); d++) tt_rt_empty_cache(d);
    }
    void recordStream(const at::DataPtr&, c10::Stream) override {}
    // One pool: only the aggregate ("all") entries are filled. Cumulative byte totals (".allocated" / ".freed")
    // are not kept by the runtime and stay 0; "allocation.all.allocated" is the number of storages created.
    c10::CachingDeviceAllocator::DeviceStats getDeviceStats(c10::DeviceIndex device) override {
        tt_rt_memory_stats m = device_memory_stats(device < 0 ? current_device() : device);
        c10::CachingDeviceAllocator::DeviceStats s;
        constexpr size_t all = static_cast<size_t>(c10::CachingAllocator::StatType::AGGREGATE);
        auto fill = [](c10::CachingAllocator::Stat& x, size_t cur, size_t peak) {
            x.current = (int64_t)cur;
            x.peak = (int64_t)peak;
        };
        fill(s.allocated_bytes[all], m.allocated, m.peak_allocated);
        fill(s.active_bytes[all], m.allocated, m.peak_allocated);
        fill(s.reserved_bytes[all], m.reserved, m.peak_reserved);
        fill(s.requested_bytes[all], m.allocated, m.peak_allocated);
        s.allocation[all].allocated = m.n_allocs;
        return s;
    }
    std::pair<size_t, size_t> getMemoryInfo(c10::DeviceIndex device) override {
        return device_memory_info(device < 0 ? current_device() : device);
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

tt_rt_storage* storage_of(const c10::Storage& st) {
    const at::DataPtr& dp = st.data_ptr();
    if (dp.get_deleter() == &TpuAllocator::release) return static_cast<tt_rt_storage*>(dp.get_context());
    if (c10::impl::cow::is_cow_data_ptr(dp)) {
        // A lazy clone (or its original) is copied before a kernel that may write to it (PyTorch's mutable_data_ptr).
        st.mutable_data_ptr();
        return storage_of(st);
    }
    return tt_rt_storage_find(dp.get());  // the COW-able form, or a from_blob alias of a live storage's address
}

// A copy-on-write DataPtr keeps the shared original's address, so a read finds that storage and copies nothing.
tt_rt_storage* storage_for_read(const c10::Storage& st) {
    const at::DataPtr& dp = st.data_ptr();
    if (dp.get_deleter() == &TpuAllocator::release) return static_cast<tt_rt_storage*>(dp.get_context());
    return tt_rt_storage_find(dp.get());
}

void make_cow_able(const c10::Storage& st) {
    c10::StorageImpl* impl = st.unsafeGetStorageImpl();
    at::DataPtr& dp = impl->_mutable_data_ptr_no_checks();
    if (dp.get_deleter() != &TpuAllocator::release) return;  // already COW-able, or copy-on-write
    // PyTorch's copy-on-write wraps only a "simple" DataPtr (context == data); the registry finds the storage from
    // the address, so the record can leave the context.
    void* address = dp.get();
    TORCH_INTERNAL_ASSERT(address != nullptr && tt_rt_storage_find(address) == dp.get_context());
    c10::Device device = dp.device();
    dp.release_context();
    dp = at::DataPtr(address, address, &TpuAllocator::release_by_address, device);
}

}  // namespace torchtpu
