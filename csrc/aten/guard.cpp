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
    // One in-order stream per device: every "new" or pooled stream is that stream.
    c10::Stream getStreamFromGlobalPool(c10::Device d, bool) const override { return getStream(d); }
    c10::Stream getNewStream(c10::Device d, int) const override { return getStream(d); }
    c10::Stream exchangeStream(c10::Stream s) const override { return getStream(s.device()); }
    c10::DeviceIndex deviceCount() const noexcept override {
        try {
            ensure_init();
        } catch (...) {
            return 0;
        }
        return (c10::DeviceIndex)tt_rt_device_count();
    }
    // Queries never block; once the work is done they raise a queued op's error, as CUDA's do.
    bool queryStream(const c10::Stream& s) const override {
        ensure_init();
        bool done = false;
        TT_CHECK(tt_rt_stream_poll(s.device_index(), &done));
        return done;
    }
    void synchronizeStream(const c10::Stream& s) const override { TT_CHECK(tt_rt_synchronize(s.device_index())); }
    void synchronizeDevice(const c10::DeviceIndex d) const override { TT_CHECK(tt_rt_synchronize(d)); }
    // Events are the runtime's (tt_rt_event): a position in the device's queue, stamped by the worker when
    // timing (c10's BACKEND_DEFAULT flag is enable_timing=True, as on CUDA).
    void destroyEvent(void* event, const c10::DeviceIndex) const noexcept override {
        tt_rt_event_destroy(static_cast<tt_rt_event*>(event));
    }
    void record(void** event, const c10::Stream& stream, const c10::DeviceIndex,
                const c10::EventFlag flag) const override {
        ensure_init();
        if (!*event) {
            tt_rt_event* e = nullptr;
            TT_CHECK(tt_rt_event_create(flag == c10::EventFlag::BACKEND_DEFAULT, &e));
            *event = e;
        }
        TT_CHECK(tt_rt_event_record(static_cast<tt_rt_event*>(*event), stream.device_index()));
    }
    void block(void* event, const c10::Stream& stream) const override {
        if (event) TT_CHECK(tt_rt_event_block(static_cast<tt_rt_event*>(event), stream.device_index()));
    }
    bool queryEvent(void* event) const override {
        bool done = true;
        if (event) TT_CHECK(tt_rt_event_poll(static_cast<tt_rt_event*>(event), &done));
        return done;
    }
    void synchronizeEvent(void* event) const override {  // a queued error is raised, as by a sync
        if (event) TT_CHECK(tt_rt_event_synchronize(static_cast<tt_rt_event*>(event)));
    }
    double elapsedTime(void* start, void* end, const c10::DeviceIndex) const override {
        TORCH_CHECK(start && end, "Both events must be recorded before calculating elapsed time.");
        double ms = 0;
        TT_CHECK(tt_rt_event_elapsed_ms(static_cast<tt_rt_event*>(start), static_cast<tt_rt_event*>(end), &ms));
        return ms;
    }
};

C10_REGISTER_GUARD_IMPL(PrivateUse1, TpuGuardImpl);

}  // namespace torchtpu
