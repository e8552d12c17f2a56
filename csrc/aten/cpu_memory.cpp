// cpu_memory.cpp — the peak of PyTorch CPU tensors' bytes, so a benchmark can set a tpu peak
// (torch.tpu.max_memory_allocated) beside CPU eager's, which keeps no statistics. The first tracking installs a
// counting allocator in front of PyTorch's CPU allocator (every CPU tensor's storage comes through
// c10::GetCPUAllocator) and leaves it there: a block may be freed through whichever allocator is current (raw
// allocate / deallocate pairs), so the counter knows its own blocks by address and hands any other to the base
// allocator's deleter. Memory a library takes on its own (oneDNN scratch, BLAS buffers) is not a tensor and is not
// counted, as the device allocator counts only storages. For benchmarks: it costs a lock per CPU allocation.
#include <c10/core/Allocator.h>
#include <c10/core/CPUAllocator.h>

#include <mutex>
#include <unordered_map>

#include "shim.h"

namespace torchtpu {
namespace {

std::mutex g_mu;                              // guards everything below
std::unordered_map<void*, size_t> g_blocks;   // the counter's live blocks and their sizes
int64_t g_live = 0, g_peak = 0, g_base = 0;   // bytes live, most seen since tracking began, live when it began
c10::Allocator* g_inner = nullptr;            // PyTorch's CPU allocator
c10::DeleterFnPtr g_inner_free = nullptr;

void counted_free(void* p) {
    {
        std::lock_guard<std::mutex> lock(g_mu);
        auto it = g_blocks.find(p);
        if (it != g_blocks.end()) {
            g_live -= (int64_t)it->second;
            g_blocks.erase(it);
        }
    }
    g_inner_free(p);
}

struct CountingAllocator final : c10::Allocator {
    c10::DataPtr allocate(size_t n) override {
        c10::DataPtr dp = g_inner->allocate(n);
        void* p = dp.get();
        // only blocks the base frees by address alone (its DataPtr's context is the data) can be counted
        if (!p || dp.get_context() != p || dp.get_deleter() != g_inner_free) return dp;
        dp.release_context();
        {
            std::lock_guard<std::mutex> lock(g_mu);
            g_blocks[p] = n;
            g_live += (int64_t)n;
            if (g_live > g_peak) g_peak = g_live;
        }
        return c10::DataPtr(p, p, &counted_free, c10::Device(c10::DeviceType::CPU));
    }
    c10::DeleterFnPtr raw_deleter() const override { return &counted_free; }
    void copy_data(void* dest, const void* src, std::size_t count) const override { default_copy_data(dest, src, count); }
};

CountingAllocator g_counting;

}  // namespace

void cpu_memory_track(bool on) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!on) return;  // the allocator stays (see above); the peak just stops mattering
    if (!g_inner) {
        c10::Allocator* inner = c10::GetCPUAllocator();
        if (!inner->raw_deleter()) throw std::runtime_error("cpu_memory_track: PyTorch's CPU allocator has no raw deleter");
        g_inner = inner;
        g_inner_free = inner->raw_deleter();
        c10::SetCPUAllocator(&g_counting, /*priority=*/1);  // outranks PyTorch's own registration (0)
    }
    g_base = g_peak = g_live;
}

int64_t cpu_memory_peak() {
    std::lock_guard<std::mutex> lock(g_mu);
    return g_peak - g_base;
}

}  // namespace torchtpu
