"""The `torch.tpu` module: device management, RNG, memory, sync, modes and fallback control.

Names follow PyTorch's `torch.cuda` and Google TorchTPU's `torch.tpu`, so code written for either runs here.
"""
import contextlib
import os
from collections import namedtuple

import torch

from .. import _C
from .._modes import EagerMode, eager_mode, get_eager_mode, set_eager_mode  # noqa: F401

_initialized = False


def _lazy_init():
    global _initialized
    if not _initialized:
        _C.init()
        _initialized = True


def init():
    _lazy_init()


def is_initialized():
    return _initialized


def is_available():
    try:
        return _C.device_count() > 0
    except RuntimeError:
        return False


def device_count():
    return _C.device_count()


def current_device():
    return _C.current_device()


def _index(device):
    if device is None:
        return current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "tpu":
            raise ValueError(f"expected a tpu device, got {device}")
        return current_device() if device.index is None else device.index
    raise TypeError(f"expected a device index, string or torch.device, got {type(device).__name__}")


def set_device(device):
    _C.set_device(_index(device))


class device:
    """Context manager that makes `device` the current tpu device."""

    def __init__(self, device):
        self.idx = _index(device) if device is not None else -1
        self.prev = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev = current_device()
            set_device(self.idx)

    def __exit__(self, *exc):
        if self.prev >= 0:
            set_device(self.prev)
        return False


class device_of(device):
    """Context manager that makes the device of tensor `obj` current (no-op for non-tpu tensors)."""

    def __init__(self, obj):
        idx = obj.get_device() if getattr(obj, "is_tpu", False) else None
        super().__init__(idx)


def synchronize(device=None):
    """Wait for all queued work on the device (all devices if None); raises a queued op's error."""
    _C.synchronize(-1 if device is None else _index(device))


def get_device_name(device=None):
    return f"torchtpu {_C.driver_name()} device"


_Props = namedtuple("_TpuDeviceProperties", "name total_memory multi_processor_count driver")


def get_device_properties(device=None):
    idx = _index(device)
    return _Props(get_device_name(idx), mem_get_info(idx)[1], _C.host_num_threads(), _C.driver_name())


def _is_in_bad_fork():
    """torch.manual_seed asks this before seeding the device (no fork hazards: the runtime starts lazily)."""
    return False


# ---- RNG ----
def manual_seed(seed):
    _C.manual_seed(current_device(), int(seed) & 0xFFFFFFFFFFFFFFFF)


def manual_seed_all(seed):
    for d in range(device_count()):
        _C.manual_seed(d, int(seed) & 0xFFFFFFFFFFFFFFFF)


def _random_seed():
    return int.from_bytes(os.urandom(8), "little") >> 1


def seed():
    s = _random_seed()
    manual_seed(s)
    return s


def seed_all():
    s = _random_seed()
    manual_seed_all(s)
    return s


def initial_seed():
    return _C.initial_seed(current_device())


def get_rng_state(device=None):
    s, o = _C.get_rng_state(_index(device))
    return torch.tensor(list(s.to_bytes(8, "little") + o.to_bytes(8, "little")), dtype=torch.uint8)


def set_rng_state(new_state, device=None):
    b = bytes(new_state.to(torch.uint8).tolist())
    _C.set_rng_state(_index(device), int.from_bytes(b[:8], "little"), int.from_bytes(b[8:16], "little"))


def get_rng_state_all():
    return [get_rng_state(d) for d in range(device_count())]


def set_rng_state_all(states):
    for d, s in enumerate(states):
        set_rng_state(s, d)


# ---- memory: the same figures torch.accelerator.memory_* read (the allocator's getDeviceStats) ----
def mem_get_info(device=None):
    """(free, total) bytes, as torch.cuda.mem_get_info: under TORCHTPU_HOST_MEMORY_LIMIT the limit and what is
    not reserved under it; otherwise this machine's RAM and what the kernel reports available."""
    return tuple(_C.mem_get_info(_index(device)))


def memory_allocated(device=None):
    return _C.device_stats(_index(device))["allocated"]


def max_memory_allocated(device=None):
    return _C.device_stats(_index(device))["peak_allocated"]


def memory_reserved(device=None):
    """Bytes held from the driver: live storages, the allocator's cache and (tpu:0) compiled programs' scratch."""
    return _C.device_stats(_index(device))["reserved"]


def max_memory_reserved(device=None):
    return _C.device_stats(_index(device))["peak_reserved"]


def reset_peak_memory_stats(device=None):
    _C.reset_peak_memory_stats(_index(device))


def memory_stats(device=None):
    """torch.cuda-style keys (one pool: the ".all" entries); torch.accelerator.memory_stats gives the same."""
    m = _C.device_stats(_index(device))
    return {
        "allocated_bytes.all.current": m["allocated"],
        "allocated_bytes.all.peak": m["peak_allocated"],
        "active_bytes.all.current": m["allocated"],
        "active_bytes.all.peak": m["peak_allocated"],
        "requested_bytes.all.current": m["allocated"],
        "requested_bytes.all.peak": m["peak_allocated"],
        "reserved_bytes.all.current": m["reserved"],
        "reserved_bytes.all.peak": m["peak_reserved"],
        "allocation.all.allocated": m["n_allocs"],
        "num_alloc": m["n_allocs"],
    }


def empty_cache():
    for d in range(device_count()):
        _C.empty_cache(d)


# ---- CPU fallback ----
@contextlib.contextmanager
def cpu_fallback_mode(enabled=True):
    """Allow (True) or forbid (False) running ops with no tpu lowering on the CPU inside the block."""
    old = _C.get_cpu_fallback()
    _C.set_cpu_fallback(bool(enabled))
    try:
        yield
    finally:
        _C.set_cpu_fallback(old)


def get_amp_supported_dtype():
    return [torch.bfloat16, torch.float16, torch.float32]


def is_bf16_supported(including_emulation=True):
    return True


# ---- streams and events: one in-order queue per device (see _streams.py) ----
from ._streams import (  # noqa: E402,F401
    Event, Stream, StreamContext, current_stream, default_stream, set_stream, stream)

# ---- compile cache telemetry (Google TorchTPU's private names; see _cache.py) ----
from ._cache import (  # noqa: E402,F401
    _clear_cache, _get_allow_cache, _get_cache_only, _get_cache_stats, _reset_cache_stats, _set_allow_cache,
    _set_cache_capacity, _set_cache_only, _set_dump_on_cache_miss)
