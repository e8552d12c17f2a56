// profiler.cpp — device spans in torch.profiler: a Kineto activity profiler for the PrivateUse1 device (torch 2.13's
// PrivateUse1ProfilerRegistry). torch.profiler.profile(activities=[..., ProfilerActivity.PrivateUse1]) starts a
// session; the runtime then records every program and copy a device runs (tt_rt_activity_*, with the device's own
// start and end: in strict mode that is the worker's timeline, not the time the op was queued), and the session
// hands them to Kineto as kernel / memcpy activities of device tpu:N. They show in prof.events() with
// device_type PrivateUse1, in key_averages()' device-time columns and in exported Chrome traces.
#define USE_KINETO 1  // the registry's header is guarded by it; the torch wheel is built with Kineto
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>

#include <libkineto.h>
#include <output_base.h>

#include <set>
#include <string>
#include <vector>

#include "shim.h"

namespace torchtpu {
namespace {

class TpuProfilerSession final : public libkineto::IActivityProfilerSession {
 public:
    void start() override {
        ensure_init();
        tt_rt_activity_start();
        status_ = libkineto::TraceStatus::RECORDING;
    }

    void stop() override {
        // No sync here (a sync takes queued errors): torch.profiler's exit calls torch.tpu.synchronize() first,
        // which raises them.
        tt_rt_activity_stop();
        std::vector<tt_rt_activity> recs((size_t)tt_rt_activity_take(nullptr, 0));
        recs.resize((size_t)tt_rt_activity_take(recs.data(), (int64_t)recs.size()));
        buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
        buffer_->span = libkineto::TraceSpan(recs.empty() ? 0 : recs.front().start_ns,
                                             recs.empty() ? 0 : recs.back().end_ns, "tpu");
        buffer_->gpuOpCount = (int)recs.size();
        int64_t id = 0;
        for (const tt_rt_activity& r : recs) {
            auto kind = r.kind == TT_RT_ACTIVITY_COPY ? libkineto::ActivityType::GPU_MEMCPY
                                                      : libkineto::ActivityType::CONCURRENT_KERNEL;
            buffer_->emplace_activity(buffer_->span, kind, std::string(r.name));
            libkineto::GenericTraceActivity& a = *buffer_->activities.back();
            a.startTime = r.start_ns;
            a.endTime = r.end_ns;
            a.id = ++id;
            a.device = r.device;
            a.resource = 0;  // the device's one stream
            a.addMetadataQuoted("device", "tpu:" + std::to_string(r.device));
        }
        if (int64_t lost = tt_rt_activity_dropped())
            errors_.push_back("tpu profiler: " + std::to_string(lost) + " device activities lost (out of host memory)");
        status_ = libkineto::TraceStatus::READY;
    }

    std::vector<std::string> errors() override { return errors_; }

    void processTrace(libkineto::ActivityLogger& logger) override {
        if (!buffer_) return;
        for (const auto& a : buffer_->activities) logger.handleActivity(*a);
    }

    std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
        return std::make_unique<libkineto::DeviceInfo>(libkineto::DeviceInfo{0, 0, "tpu", "tpu"});
    }
    std::vector<libkineto::ResourceInfo> getResourceInfos() override { return {}; }
    // Kineto keeps the buffer (and so the activities it was given in processTrace) for the trace's lifetime.
    std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override { return std::move(buffer_); }

 private:
    std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
    std::vector<std::string> errors_;
};

class TpuActivityProfiler final : public libkineto::IActivityProfiler {
 public:
    const std::string& name() const override { return name_; }
    const std::set<libkineto::ActivityType>& availableActivities() const override { return types_; }
    // No session (Kineto skips the plugin) unless the profile asks for device activities
    // (ProfilerActivity.PrivateUse1).
    std::unique_ptr<libkineto::IActivityProfilerSession> configure(const std::set<libkineto::ActivityType>& asked,
                                                                   const libkineto::Config&) override {
        for (auto t : asked)
            if (types_.count(t)) return std::make_unique<TpuProfilerSession>();
        return nullptr;
    }
    std::unique_ptr<libkineto::IActivityProfilerSession> configure(int64_t, int64_t,
                                                                   const std::set<libkineto::ActivityType>& types,
                                                                   const libkineto::Config& config) override {
        return configure(types, config);
    }

 private:
    std::string name_ = "tpu";
    std::set<libkineto::ActivityType> types_ = {libkineto::ActivityType::CONCURRENT_KERNEL,
                                                libkineto::ActivityType::GPU_MEMCPY};
};

REGISTER_PRIVATEUSE1_PROFILER(TpuActivityProfiler);

}  // namespace
}  // namespace torchtpu
