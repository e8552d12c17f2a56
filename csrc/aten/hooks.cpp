// hooks.cpp — the PrivateUse1 hooks: availability, device count, generators, pinned memory, storage resize.
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>

#include "shim.h"

namespace torchtpu {

// ---- pinned host memory (t.pin_memory(), DataLoader(pin_memory=True))
// Page-aligned anonymous mappings locked in RAM with mlock, so "pinned" means what it says: the pages cannot be
// swapped out. When the kernel refuses the lock (RLIMIT_MEMLOCK), pinning fails with that reason rather than
// handing out memory that only claims to be pinned. Every block is recorded so isPinnedPtr answers for any
// address inside one.
namespace {
std::mutex pinned_mu;
std::map<uintptr_t, size_t> pinned_blocks;  // base -> mapped bytes
size_t pinned_total = 0;

void pinned_free(void* p) {
    if (!p) return;
    size_t bytes = 0;
    {
        std::lock_guard<std::mutex> g(pinned_mu);
        auto it = pinned_blocks.find(reinterpret_cast<uintptr_t>(p));
        if (it == pinned_blocks.end()) return;
        bytes = it->second;
        pinned_total -= bytes;
        pinned_blocks.erase(it);
    }
    munlock(p, bytes);
    munmap(p, bytes);
}

struct PinnedAllocator final : public c10::Allocator {
    at::DataPtr allocate(size_t nbytes) override {
        c10::Device cpu(c10::DeviceType::CPU);
        if (nbytes == 0) return {nullptr, nullptr, &pinned_free, cpu};  // as CUDA's host allocator: no block
        size_t page = (size_t)sysconf(_SC_PAGESIZE);
        TORCH_CHECK_WITH(OutOfMemoryError, nbytes <= SIZE_MAX - page, "pin_memory: ", nbytes, " bytes is too large");
        size_t bytes = (nbytes + page - 1) / page * page;
        void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        TORCH_CHECK_WITH(OutOfMemoryError, p != MAP_FAILED, "pin_memory: cannot map ", bytes,
                         " bytes of host memory: ", std::strerror(errno));
        if (mlock(p, bytes) != 0) {
            int err = errno;
            munmap(p, bytes);
            struct rlimit rl{};
            getrlimit(RLIMIT_MEMLOCK, &rl);
            size_t held;
            {
                std::lock_guard<std::mutex> g(pinned_mu);
                held = pinned_total;
            }
            std::string lim = rl.rlim_cur == RLIM_INFINITY ? std::string("unlimited") : std::to_string(rl.rlim_cur);
            TORCH_CHECK(false, "pin_memory: cannot lock ", bytes, " bytes of host memory in RAM (mlock: ",
                        std::strerror(err), "; RLIMIT_MEMLOCK is ", lim, " bytes and torchtpu holds ", held,
                        " pinned bytes). Raise the limit (ulimit -l; docker run --ulimit memlock=-1) or do not pin "
                        "(pin_memory=False): tpu copies from unpinned memory are just as correct");
        }
        {
            std::lock_guard<std::mutex> g(pinned_mu);
            pinned_blocks[reinterpret_cast<uintptr_t>(p)] = bytes;
            pinned_total += bytes;
        }
        return {p, p, &pinned_free, cpu};
    }
    at::DeleterFnPtr raw_deleter() const override { return &pinned_free; }
    void copy_data(void* dst, const void* src, std::size_t n) const override {
        if (n) std::memcpy(dst, src, n);
    }
};

PinnedAllocator pinned_allocator;

bool is_pinned_address(const void* ptr) {
    if (!ptr) return false;
    auto a = reinterpret_cast<uintptr_t>(ptr);
    std::lock_guard<std::mutex> g(pinned_mu);
    auto it = pinned_blocks.upper_bound(a);
    if (it == pinned_blocks.begin()) return false;
    --it;
    return a - it->first < it->second;
}
}  // namespace

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
    bool isPinnedPtr(const void* ptr) const override { return is_pinned_address(ptr); }
    at::Allocator* getPinnedMemoryAllocator() const override { return &pinned_allocator; }
    // Grows or shrinks a storage: a new allocation on the same device, the old bytes copied in the device order.
    void resizePrivateUse1Bytes(const c10::Storage& storage, size_t newsize) const override {
        c10::StorageImpl* impl = storage.unsafeGetStorageImpl();
        at::DataPtr fresh = allocate_on(impl->device().index(), newsize);
        size_t keep = std::min(newsize, impl->nbytes());
        tt_rt_storage* src = storage_for_read(storage);
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
