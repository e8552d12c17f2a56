// device.cpp — the tpu device as PyTorch sees it: allocator, device guard, hooks, generators, error mapping.
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <c10/util/Exception.h>

#include <mutex>
#include <vector>

#include "shim.h"

namespace torchtpu {

[[noreturn]] void raise_status(tt_status st, const std::string& context) {
    std::string msg = context.empty() ? std::string(tt_last_error()) : context + ": " + tt_last_error();
    switch (st) {
    case TT_STATUS_INDEX: TORCH_CHECK_INDEX(false, msg);
    case TT_STATUS_TYPE: TORCH_CHECK_TYPE(false, msg);
    case TT_STATUS_OUT_OF_MEMORY: TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
    case TT_STATUS_UNSUPPORTED: TORCH_CHECK_NOT_IMPLEMENTED(false, msg);
    default: TORCH_CHECK(false, msg);
    }
}

void ensure_init() {
    static std::once_flag once;
    static tt_status status = TT_OK;
    static std::string message;
    std::call_once(once, [] {
        status = tt_rt_init();
        if (status != TT_OK) message = tt_last_error();
    });
    TORCH_CHECK(status == TT_OK, "torchtpu failed to start: ", message);
}

static thread_local c10::DeviceIndex tls_device = 0;

c10::DeviceIndex current_device() { return tls_device; }

void set_current_device(c10::DeviceIndex d) {
    ensure_init();
    TORCH_CHECK(d >= 0 && d < tt_rt_device_count(), "Invalid device index tpu:", int(d), "; there are ",
                tt_rt_device_count(), " tpu devices (TORCHTPU_HOST_DEVICES)");
    tls_device = d;
}

static const c10::ScalarType kTorchOf[TT_DTYPE_COUNT] = {
    c10::kFloat, c10::kBFloat16, c10::kHalf, c10::kDouble, c10::kLong,
    c10::kInt,   c10::kShort,    c10::kChar, c10::kByte,   c10::kBool,
};

bool to_tt_dtype(c10::ScalarType st, tt_dtype* out) {
    for (int i = 0; i < TT_DTYPE_COUNT; i++)
        if (kTorchOf[i] == st) {
            *out = (tt_dtype)i;
            return true;
        }
    return false;
}

c10::ScalarType to_torch_dtype(tt_dtype dt) { return kTorchOf[dt]; }

tt_rt_storage* storage_of(const at::Tensor& t) {
    return static_cast<tt_rt_storage*>(t.storage().data_ptr().get_context());
}

tt_rt_tensor view_of(const at::Tensor& t) {
    tt_rt_tensor v{};
    v.storage = storage_of(t);
    v.offset = t.storage_offset();
    TORCH_CHECK(to_tt_dtype(t.scalar_type(), &v.dtype), "tpu does not support dtype ", t.scalar_type());
    TORCH_CHECK_NOT_IMPLEMENTED(t.dim() <= TT_MAX_RANK, "tpu supports tensors of up to ", TT_MAX_RANK,
                                " dimensions, got ", t.dim());
    v.rank = (int32_t)t.dim();
    for (int64_t i = 0; i < t.dim(); i++) {
        v.dims[i] = t.size(i);
        v.strides[i] = t.stride(i);
    }
    return v;
}

// ---- allocator -------------------------------------------------------------------------------------------
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

// ---- device guard ----------------------------------------------------------------------------------------
struct TpuGuardImpl final : public c10::impl::DeviceGuardImplInterface {
    static constexpr c10::DeviceType kType = c10::DeviceType::PrivateUse1;
    c10::DeviceType type() const override { return kType; }
    c10::Device exchangeDevice(c10::Device d) const override {
        c10::Device old(kType, current_device());
        if (d.index() >= 0 && d.index() != old.index()) set_current_device(d.index());
        return old;
    }
    c10::Device getDevice() const override { return c10::Device(kType, current_device()); }
    void setDevice(c10::Device d) const override { set_current_device(d.index()); }
    void uncheckedSetDevice(c10::Device d) const noexcept override {
        if (d.index() >= 0) tls_device = d.index();
    }
    c10::Stream getStream(c10::Device d) const override {
        return c10::Stream(c10::Stream::DEFAULT, c10::Device(kType, d.index() < 0 ? current_device() : d.index()));
    }
    c10::Stream getDefaultStream(c10::Device d) const override { return getStream(d); }
    c10::Stream exchangeStream(c10::Stream s) const override { return getStream(s.device()); }
    c10::DeviceIndex deviceCount() const noexcept override {
        try {
            ensure_init();
        } catch (...) {
            return 0;
        }
        return (c10::DeviceIndex)tt_rt_device_count();
    }
    bool queryStream(const c10::Stream&) const override { return false; }
    void synchronizeStream(const c10::Stream& s) const override { TT_CHECK(tt_rt_synchronize(s.device_index())); }
    void synchronizeDevice(const c10::DeviceIndex d) const override { TT_CHECK(tt_rt_synchronize(d)); }
    // Events: the queue is in order, so an event is a no-op marker and waiting on one is a sync.
    void destroyEvent(void*, const c10::DeviceIndex) const noexcept override {}
    void record(void** event, const c10::Stream&, const c10::DeviceIndex, const c10::EventFlag) const override {
        if (!*event) *event = reinterpret_cast<void*>(1);
    }
    void block(void*, const c10::Stream&) const override {}
    bool queryEvent(void*) const override {  // completes the queue; a queued error is raised, not dropped
        TT_CHECK(tt_rt_synchronize(-1));
        return true;
    }
    void synchronizeEvent(void*) const override { TT_CHECK(tt_rt_synchronize(-1)); }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);

// ---- generators: one per device; seeding one seeds the core's counter-based RNG ------------------------------
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

static const at::Generator& default_generator(c10::DeviceIndex d) {
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

// ---- hooks --------------------------------------------------------------------------------------------------
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
        return at::make_generator<TpuGenerator>(d < 0 ? current_device() : d, false);
    }
    at::Device getDeviceFromPtr(void*) const override { return at::Device(c10::DeviceType::PrivateUse1, current_device()); }
    bool isPinnedPtr(const void*) const override { return false; }
    at::Allocator* getPinnedMemoryAllocator() const override { return at::getCPUAllocator(); }
    // Grows or shrinks a storage: a new allocation on the same device, the old bytes copied in the device order.
    void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
        c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
        at::DataPtr fresh = TpuAllocator::allocate_on(impl->device().index(), newsize);
        size_t keep = std::min(newsize, impl->nbytes());
        auto* src = static_cast<tt_rt_storage*>(impl->data_ptr().get_context());
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
