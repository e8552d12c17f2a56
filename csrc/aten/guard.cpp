// guard.cpp — the device guard: current device, streams and events as the dispatcher, autograd and
// torch.accelerator reach them.
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "shim.h"

namespace torchtpu {

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
        if (d.index() >= 0) set_current_device_unchecked(d.index());
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

}  // namespace torchtpu
