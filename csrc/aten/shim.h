// shim.h — the C++ layer between PyTorch's dispatcher and the C core. Only what the dispatcher demands lives here.
#pragma once

#include <ATen/ATen.h>
#include <c10/core/Device.h>

#include <string>

#include "tt_lower.h"
#include "tt_runtime.h"

namespace torchtpu {

// Raises the Python exception that matches a core status (IndexError, TypeError, OutOfMemoryError,
// NotImplementedError, RuntimeError) with the core's message.
[[noreturn]] void raise_status(tt_status st, const std::string& context);

// Every call into the C core goes through this check.
#define TT_CHECK(expr)                                            \
    do {                                                          \
        tt_status tt_st_ = (expr);                                \
        if (tt_st_ != TT_OK) ::torchtpu::raise_status(tt_st_, ""); \
    } while (0)

void ensure_init();                           // starts the runtime once (raises on bad environment)
c10::DeviceIndex current_device();            // thread-local current tpu device
void set_current_device(c10::DeviceIndex d);  // checked
void set_current_device_unchecked(c10::DeviceIndex d);  // for the guard's noexcept path

bool to_tt_dtype(c10::ScalarType st, tt_dtype* out);  // false for dtypes the core does not have
c10::ScalarType to_torch_dtype(tt_dtype dt);

// The core storage behind a tpu tensor (NULL if 0 bytes). storage_of is for a kernel that may write: a copy-on-write
// (lazy clone) storage is materialized first. storage_for_read shares it, as PyTorch's const_data_ptr does.
// The dtype (default: the default dtype) if the device holds it, else PyTorch's TypeError naming the refusal.
c10::ScalarType checked_dtype(std::optional<c10::ScalarType> dtype);
// A host copy of a tpu view with the same sizes and strides (the storage span it covers): for CPU kernels whose
// results depend on their input's layout.
at::Tensor host_view_of(const at::Tensor& t);
tt_rt_storage* storage_of(const at::Tensor& t);
tt_rt_storage* storage_for_read(const at::Tensor& t);
tt_rt_tensor view_for_write(const at::Tensor& t);  // storage + offset + sizes + strides
tt_rt_tensor view_for_read(const at::Tensor& t);

c10::Allocator* tpu_allocator();                       // allocates on the current device
c10::Allocator* tpu_allocator_for(c10::DeviceIndex d);  // allocates on device d (a process-lifetime object)
at::DataPtr allocate_on(c10::DeviceIndex d, size_t nbytes);  // a storage's memory on device d

// ---- device memory as torch.accelerator reports it (allocator.cpp)
tt_rt_memory_stats device_memory_stats(c10::DeviceIndex d);         // the runtime's, plus executables' scratch
std::pair<size_t, size_t> device_memory_info(c10::DeviceIndex d);   // (free, total) bytes
const at::Generator& default_generator(c10::DeviceIndex d);    // d < 0: the current device
at::Generator new_generator(c10::DeviceIndex d);              // a private generator (torch.Generator("tpu"))
at::Tensor empty_tpu(at::IntArrayRef sizes, c10::ScalarType dtype, c10::DeviceIndex device);
// While set, the allocator makes pending storages (tt_rt_storage_create_pending): an op's results, which in fused
// mode get memory only if something still needs them at their window's cut. A user's torch.empty allocates.
extern thread_local bool t_pending_results;
struct PendingResults {
    bool prev;
    PendingResults() : prev(t_pending_results) { t_pending_results = true; }
    ~PendingResults() { t_pending_results = prev; }
};

// Writes src (any tpu tensor on the same device; dtype converted, broadcast) into the view dst.
void launch_assign(const at::Tensor& src, const at::Tensor& dst);

// Tracing (torchtpu.stablehlo): a host write into a device tensor cannot be part of the traced program.
void trace_note_host_write();

// ---- tracing (trace.cpp): the trace follows ThreadLocalState into autograd's device threads
bool trace_active();  // a trace is recording for this thread (or the thread autograd is working for)
// Inlines one launch into the trace: prog's tensor parameters are params (param index, tensor), its scalar
// parameters ctx's scalars, its outputs results.
void trace_record(const tt_ir_program* prog, const std::pair<int32_t, at::Tensor>* params, size_t n_params,
                  const tt_lower_ctx& ctx, const at::Tensor* results, size_t n_results);

// Matmul precision in force for new lowerings (TT_PRECISION_FP32 until the precision API lands).
tt_precision current_precision();
void set_precision(tt_precision p);      // the process's
tt_precision process_precision();
void set_thread_precision(int p);        // the calling thread's override; -1: none
int thread_precision();
// The user's file:line now, into buf (where.cpp); NULL when there is none (threads without Python state).
const char* python_where(char* buf, size_t size);

// CPU fallback policy and counters.
bool cpu_fallback_enabled();
void set_cpu_fallback_enabled(bool on);
void count_fallback(const std::string& op, const std::string& why);  // why: "has no native tpu lowering"...

// ---- PyTorch CPU tensors' peak bytes, for benchmarks (cpu_memory.cpp): cpu_memory_track(true) starts counting
// from now (the peak above what is live now); false changes nothing (the counting allocator stays installed).
void cpu_memory_track(bool on);
int64_t cpu_memory_peak();

// ---- exit (module.cpp quiesce_for_exit): has this process launched any tpu work?
bool launched_any();

// ---- storages (allocator.cpp): the core storage behind any tpu Storage (ours, copy-on-write, or a from_blob alias
// of a live storage's address; copy-on-write ones are materialized first), NULL if none.
tt_rt_storage* storage_of(const c10::Storage& st);
tt_rt_storage* storage_for_read(const c10::Storage& st);
void make_cow_able(const c10::Storage& st);  // lets c10's copy-on-write wrap the storage (torch._lazy_clone)
// ---- generators (generator.cpp): where a random op's counters come from
// Raises PyTorch's error unless gen is a tpu generator.
void check_tpu_generator(const at::Generator& gen);
// Reserves count counters on gen (a tpu GeneratorImpl, locked while reserving), or on device's default generator
// when gen is null.
void rng_reserve_on(c10::GeneratorImpl* gen, int device, uint64_t count, uint64_t* seed, uint64_t* offset);
// A CPU generator for an op that runs on the CPU, seeded by one reservation on gen (undefined: the default).
at::Generator cpu_generator_from(const at::Generator& gen, int device);

}  // namespace torchtpu
