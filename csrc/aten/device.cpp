// device.cpp — the core glue every other shim file uses: error mapping, start-up, the current device, dtypes, views.
#include <c10/util/Exception.h>

#include <atomic>
#include <mutex>

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
    // every op calls this, several times: one atomic load once started (call_once reads thread-locals each call)
    static std::atomic<bool> started{false};
    if (started.load(std::memory_order_acquire)) return;
    static std::once_flag once;
    static tt_status status = TT_OK;
    static std::string message;
    std::call_once(once, [] {
        status = tt_rt_init();
        if (status != TT_OK) message = tt_last_error();
    });
    TORCH_CHECK(status == TT_OK, "torchtpu failed to start: ", message);
    started.store(true, std::memory_order_release);
}

static thread_local c10::DeviceIndex tls_device = 0;

c10::DeviceIndex current_device() { return tls_device; }
void set_current_device_unchecked(c10::DeviceIndex d) { tls_device = d; }

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

tt_rt_storage* storage_of(const at::Tensor& t) { return storage_of(t.storage()); }
tt_rt_storage* storage_for_read(const at::Tensor& t) { return storage_for_read(t.storage()); }

static tt_rt_tensor view_on(const at::Tensor& t, tt_rt_storage* storage) {
    tt_rt_tensor v{};
    v.storage = storage;
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

tt_rt_tensor view_for_write(const at::Tensor& t) { return view_on(t, storage_of(t)); }
tt_rt_tensor view_for_read(const at::Tensor& t) { return view_on(t, storage_for_read(t)); }

}  // namespace torchtpu
