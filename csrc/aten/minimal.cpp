// minimal.cpp — the kernels every PrivateUse1 device must register: allocation, metadata-only views, resize,
// copies between devices, and .item(). Everything else reaches the boxed fallback (fallback.cpp).
#include <ATen/EmptyTensor.h>
#include <ATen/native/CPUFallback.h>
#include <ATen/native/Resize.h>
#include <ATen/ops/as_strided_cpu_dispatch.h>
#include <ATen/ops/set_cpu_dispatch.h>
#include <ATen/ops/view_native.h>
#include <ATen/ops/_lazy_clone_native.h>
#include <ATen/ops/_reshape_alias_native.h>
#include <ATen/ops/unfold_native.h>
#include <ATen/ops/set_native.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>
#include <torch/library.h>

#include "shim.h"

namespace torchtpu {

// Tensors of dtypes the core has no kernels for (complex, uint16/32/64, float8, quantized) cannot live on the device:
// a clear TypeError at allocation beats a failure (or a fallback loop) later.
c10::ScalarType checked_dtype(std::optional<c10::ScalarType> dtype) {
    c10::ScalarType st = c10::dtype_or_default(dtype);
    tt_dtype dt;
    TORCH_CHECK_TYPE(to_tt_dtype(st, &dt), "tpu does not support tensors of dtype ", st,
                     " (supported: float32, bfloat16, float16, float64, int64, int32, int16, int8, uint8, bool)");
    return st;
}

namespace {

const c10::DispatchKeySet kTpuKeys(c10::DispatchKey::PrivateUse1);

c10::DeviceIndex device_index_of(std::optional<c10::Device> device) {
    if (device && device->has_index()) return device->index();
    return current_device();
}

at::Tensor tpu_empty(c10::IntArrayRef size, std::optional<c10::ScalarType> dtype, std::optional<c10::Layout>,
                     std::optional<c10::Device> device, std::optional<bool>,
                     std::optional<c10::MemoryFormat> memory_format) {
    return at::detail::empty_generic(size, tpu_allocator_for(device_index_of(device)), kTpuKeys,
                                     checked_dtype(dtype), memory_format);
}

at::Tensor tpu_empty_strided(c10::IntArrayRef size, c10::IntArrayRef stride, std::optional<c10::ScalarType> dtype,
                             std::optional<c10::Layout>, std::optional<c10::Device> device, std::optional<bool>) {
    return at::detail::empty_strided_generic(size, stride, tpu_allocator_for(device_index_of(device)), kTpuKeys,
                                             checked_dtype(dtype));
}

at::Tensor tpu_as_strided(const at::Tensor& self, c10::SymIntArrayRef size, c10::SymIntArrayRef stride,
                          std::optional<c10::SymInt> storage_offset) {
    return at::cpu::as_strided_symint(self, size, stride, std::move(storage_offset));
}

// Resize keeps the storage when it is big enough and grows it through the hooks otherwise.
const at::Tensor& tpu_resize_(const at::Tensor& self, c10::SymIntArrayRef size,
                              std::optional<c10::MemoryFormat> memory_format) {
    at::IntArrayRef sizes = c10::asIntArrayRefUnchecked(size);
    auto* impl = self.unsafeGetTensorImpl();
    TORCH_CHECK(!memory_format || *memory_format != c10::MemoryFormat::Preserve,
                "Unsupported memory format Preserve for resize_");
    if (self.sizes() == sizes && !memory_format) return self;  // same size: keep the strides (PyTorch does)
    int64_t numel = 1;
    for (auto s : sizes) {
        TORCH_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
        numel *= s;
    }
    size_t need = (size_t)(numel + self.storage_offset()) * self.dtype().itemsize();
    if (need > self.storage().nbytes()) {
        TORCH_CHECK(self.storage().resizable(), "Trying to resize storage that is not resizable");
        at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(self.storage(), need);
    }
    impl->set_sizes_contiguous(sizes);
    if (memory_format && *memory_format != c10::MemoryFormat::Preserve)
        impl->empty_tensor_restride(*memory_format);
    return self;
}

bool is_dense_row_major(const at::Tensor& t) { return t.is_contiguous(); }

// The memory of a tpu tensor as stored, without its negative-view bit (torch._neg_view): what the device holds.
at::Tensor physical(const at::Tensor& t) {
    if (!t.is_neg()) return t;
    at::Tensor p = at::detail::make_tensor<c10::TensorImpl>(
        c10::Storage(t.storage()), t.key_set().remove(c10::DispatchKey::Negative), t.dtype());
    p.unsafeGetTensorImpl()->set_sizes_and_strides(t.sizes(), t.strides(), t.storage_offset());
    return p;
}

// Device kernels take at most TT_MAX_RANK dims; PyTorch allows more. A strided view of more dims than that moves
// through the host as the span of storage it covers (elements from its offset to its last one), picked or placed by
// the CPU. 0-element views never get here.
static int64_t span_elements(const at::Tensor& t) {
    int64_t span = 1;
    for (int64_t d = 0; d < t.dim(); d++) span += (t.size(d) - 1) * t.stride(d);
    return span;
}
static bool beyond_device_rank(const at::Tensor& t) { return t.dim() > TT_MAX_RANK && !is_dense_row_major(t); }

// src (tpu) -> dst (cpu): bring a contiguous copy of src to the host, then let the CPU do dtype/stride work (and
// the math bits: src's are put back on the host copy, dst's the CPU copy honours).
// The span of storage a view covers, on the host, viewed with the same sizes and strides (and math bits).
at::Tensor host_view(const at::Tensor& src) {
    at::Tensor s = physical(src);
    at::Tensor span = at::empty({s.numel() ? span_elements(s) : 0}, s.options().device(c10::kCPU));
    if (span.numel())
        TT_CHECK(tt_rt_read(storage_for_read(s), (size_t)s.storage_offset() * s.element_size(), span.data_ptr(),
                            (size_t)span.numel() * s.element_size()));
    at::Tensor host = span.as_strided(s.sizes(), s.strides(), 0);
    return src.is_neg() ? at::_neg_view(host) : host;
}

void copy_tpu_to_cpu(const at::Tensor& src, const at::Tensor& dst) {
    at::Tensor s = physical(src);
    if (beyond_device_rank(s)) {
        dst.copy_(host_view(src));
        return;
    }
    if (!is_dense_row_major(s)) {
        at::Tensor tmp = empty_tpu(s.sizes(), s.scalar_type(), s.device().index());
        launch_assign(s, tmp);
        s = tmp;
    }
    at::Tensor host = at::empty(s.sizes(), s.options().device(c10::kCPU));
    size_t nbytes = (size_t)s.numel() * s.element_size();
    if (nbytes > 0) TT_CHECK(tt_rt_read(storage_for_read(s), (size_t)s.storage_offset() * s.element_size(), host.data_ptr(), nbytes));
    dst.copy_(src.is_neg() ? at::_neg_view(host) : host);
}

// src (cpu) -> dst (tpu): convert and lay out on the host, upload, and place into dst's view on the device.
void copy_cpu_to_tpu(const at::Tensor& src, const at::Tensor& dst_view) {
    trace_note_host_write();
    // The host does the math bits: src's resolved, and dst's stored values negated if dst is a negative view.
    at::Tensor host = src.resolve_conj().resolve_neg().to(dst_view.scalar_type()).expand(dst_view.sizes());
    host = (dst_view.is_neg() ? host.neg() : host).contiguous();
    at::Tensor dst = physical(dst_view);
    size_t nbytes = (size_t)host.numel() * host.element_size();
    if (nbytes == 0) return;
    if (beyond_device_rank(dst)) {  // read the span, place the elements on the host, write the span back
        at::Tensor span = at::empty({span_elements(dst)}, host.options());
        size_t offset = (size_t)dst.storage_offset() * dst.element_size(), n = (size_t)span.numel() * dst.element_size();
        TT_CHECK(tt_rt_read(storage_of(dst), offset, span.data_ptr(), n));
        span.as_strided(dst.sizes(), dst.strides(), 0).copy_(host);
        TT_CHECK(tt_rt_write(storage_of(dst), offset, span.const_data_ptr(), n));
        return;
    }
    if (is_dense_row_major(dst)) {
        TT_CHECK(tt_rt_write(storage_of(dst), (size_t)dst.storage_offset() * dst.element_size(), host.const_data_ptr(),
                             nbytes));
        return;
    }
    at::Tensor tmp = empty_tpu(dst.sizes(), dst.scalar_type(), dst.device().index());
    TT_CHECK(tt_rt_write(storage_of(tmp), 0, host.const_data_ptr(), nbytes));
    launch_assign(tmp, dst);
}

at::Tensor tpu_copy_from(const at::Tensor& self, const at::Tensor& dst, bool /*non_blocking*/) {
    ensure_init();
    if (self.numel() == 0 || dst.numel() == 0) return dst;
    bool src_tpu = self.device().type() == c10::DeviceType::PrivateUse1;
    bool dst_tpu = dst.device().type() == c10::DeviceType::PrivateUse1;
    if (src_tpu && dst_tpu) {
        // Negative views (math bits) reach here unresolved (_copy_from falls through the Negative key): the stored
        // values are copied, negated when exactly one side is a negative view.
        at::Tensor src = physical(self), out = physical(dst);
        if (self.is_neg() != dst.is_neg()) src = src.neg();
        if (src.device() == out.device()) {
            launch_assign(src, out);
        } else {  // across virtual devices: contiguous bytes, then place
            at::Tensor a = empty_tpu(src.sizes(), src.scalar_type(), src.device().index());
            launch_assign(src, a);
            at::Tensor b = empty_tpu(src.sizes(), src.scalar_type(), out.device().index());
            TT_CHECK(tt_rt_copy(storage_of(b), 0, storage_for_read(a), 0, (size_t)a.numel() * a.element_size()));
            launch_assign(b, out);
        }
    } else if (src_tpu) {
        copy_tpu_to_cpu(self, dst);
    } else if (dst_tpu) {
        copy_cpu_to_tpu(self, dst);
    } else {
        dst.copy_(self);
    }
    return dst;
}

at::Tensor tpu_copy_from_and_resize(const at::Tensor& self, const at::Tensor& dst) {
    if (dst.sizes() != self.sizes()) dst.resize_(self.sizes());
    return tpu_copy_from(self, dst, false);
}

c10::Scalar tpu_local_scalar_dense(const at::Tensor& self) {
    ensure_init();
    TORCH_CHECK(self.numel() == 1, "a Tensor with ", self.numel(), " elements cannot be converted to Scalar");
    at::Tensor host = at::empty({}, self.options().device(c10::kCPU));
    TT_CHECK(tt_rt_read(storage_for_read(self), (size_t)self.storage_offset() * self.element_size(), host.data_ptr(),
                        self.element_size()));
    return host.item();
}

// PyTorch's set_ grows a too-small storage by copying raw addresses (CPU semantics); grow it through the device
// (ordered with queued work) first, so set_ itself only sets metadata.
void grow_storage_for(const c10::Storage& st, int64_t offset, at::IntArrayRef size, at::IntArrayRef stride,
                      size_t itemsize) {
    // An empty stride means contiguous (at::native::set_(Storage) passes one); otherwise one stride per size.
    TORCH_CHECK(stride.empty() || stride.size() == size.size(), "mismatch in length of strides and shape");
    int64_t extent = 1;
    for (size_t i = 0; i < size.size(); i++) {
        if (size[i] == 0) return;
        if (stride.empty()) extent *= size[i];
        else extent += (size[i] - 1) * stride[i];
    }
    size_t need = (size_t)(offset + extent) * itemsize;
    if (need > st.nbytes()) {
        TORCH_CHECK(st.resizable(), "Trying to resize storage that is not resizable");
        at::detail::getPrivateUse1Hooks().resizePrivateUse1Bytes(st, need);
    }
}
at::Tensor& tpu_set_source_storage(at::Tensor& self, c10::Storage src) {
    return at::cpu::set_(self, src);
}
at::Tensor& tpu_set_source_storage_offset(at::Tensor& self, c10::Storage src, c10::SymInt offset,
                                          c10::SymIntArrayRef size, c10::SymIntArrayRef stride) {
    grow_storage_for(src, offset.guard_int(__FILE__, __LINE__), c10::asIntArrayRefUnchecked(size),
                     c10::asIntArrayRefUnchecked(stride), self.dtype().itemsize());
    return at::cpu::set__symint(self, src, offset, size, stride);
}
at::Tensor& tpu_set_source_tensor(at::Tensor& self, const at::Tensor& src) { return at::native::set_tensor_(self, src); }
at::Tensor& tpu_set_empty(at::Tensor& self) {
    c10::Storage storage(c10::Storage::use_byte_size_t(), 0, tpu_allocator_for(self.device().index()), true);
    return at::cpu::set_(self, storage);
}

// A lazy clone shares the storage until either side is written by a kernel (storage_of in allocator.cpp).
at::Tensor tpu_lazy_clone(const at::Tensor& self) {
    make_cow_able(self.storage());
    return at::native::_lazy_clone(self);
}

// A complex view of a float tensor would hold a refused dtype: the allocation's TypeError (after PyTorch's own
// checks), not the dispatcher's "appears to be a view operator" error for a missing kernel.
at::Tensor tpu_view_as_complex(const at::Tensor& self) {
    const c10::ScalarType st = self.scalar_type();
    TORCH_CHECK(st == c10::kFloat || st == c10::kDouble || st == c10::kHalf,
                "view_as_complex is only supported for float and double tensors, but got a tensor of scalar type: ", st);
    checked_dtype(c10::toComplexType(st));
    TORCH_INTERNAL_ASSERT(false, "unreachable: complex dtypes are refused");
}

}  // namespace

at::Tensor host_view_of(const at::Tensor& t) { return host_view(t); }

at::Tensor empty_tpu(at::IntArrayRef sizes, c10::ScalarType dtype, c10::DeviceIndex device) {
    return tpu_empty(sizes, dtype, std::nullopt, c10::Device(c10::DeviceType::PrivateUse1, device), std::nullopt,
                     std::nullopt);
}

TORCH_LIBRARY_IMPL(aten, PrivateUse1, m) {
    m.impl("empty.memory_format", tpu_empty);
    m.impl("empty_strided", tpu_empty_strided);
    m.impl("as_strided", tpu_as_strided);
    m.impl("view", at::native::view);
    m.impl("_reshape_alias", at::native::_reshape_alias);
    m.impl("unfold", at::native::unfold);
    m.impl("resize_", tpu_resize_);
    m.impl("_copy_from", tpu_copy_from);
    m.impl("_copy_from_and_resize", tpu_copy_from_and_resize);
    m.impl("_local_scalar_dense", tpu_local_scalar_dense);
    m.impl("set_.source_Storage", tpu_set_source_storage);
    m.impl("set_.source_Storage_storage_offset", tpu_set_source_storage_offset);
    m.impl("set_.source_Tensor", tpu_set_source_tensor);
    m.impl("set_", tpu_set_empty);
    m.impl("_lazy_clone", tpu_lazy_clone);
    m.impl("view_as_complex", tpu_view_as_complex);
}

// PyTorch's copy_ falls through the Negative key and lets the copy kernel handle the bit; for a device it calls
// _copy_from, whose Negative fallback would resolve the view with clone(), i.e. copy_ -> _copy_from again (an
// endless recursion). tpu_copy_from handles the bit itself.
TORCH_LIBRARY_IMPL(aten, Negative, m) {
    m.impl("_copy_from", torch::CppFunction::makeFallthrough());
    m.impl("_copy_from_and_resize", torch::CppFunction::makeFallthrough());
}

}  // namespace torchtpu
