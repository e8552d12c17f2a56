"""The `torch.tpu` module: device management, RNG, memory, sync, eager modes and fallback control.

Names follow Google TorchTPU's `torch.tpu` and PyTorch's `torch.cuda`, so code written for either runs here.
Every public name, Google's submodules included, is listed in `torchtpu/tpu/_api.py` (with the issue that brings
each one still missing); tests/test_names.py holds this module to that table.
"""
import contextlib
import os
import sys
import types
from collections import namedtuple

import torch

from .. import _C
from .._modes import EagerMode, get_eager_mode  # noqa: F401
from .._modes import current_eager_mode as _current_eager_mode
from .._modes import set_eager_mode as _set_process_eager_mode
from .._modes import set_thread_eager_mode as set_eager_mode  # Google's: thread-local, a context manager
from .._precision import Precision, precision  # noqa: F401  (Google's: the enum, a thread-local context)
from .. import _precision

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
    """The index of a tpu device given as None (the current one), an int, "tpu:N" or a torch.device; an index that
    names no device is a RuntimeError ("Invalid device index"), as CUDA refuses an invalid ordinal."""
    if device is None:
        return current_device()
    if isinstance(device, bool) or not isinstance(device, (int, str, torch.device)):
        raise TypeError(f"expected a device index, string or torch.device, got {type(device).__name__}")
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "tpu":
            raise ValueError(f"expected a tpu device, got {device}")
        if device.index is None:
            return current_device()
        device = device.index
    n = device_count()
    if not 0 <= device < n:
        raise RuntimeError(f"Invalid device index: tpu:{device} does not exist ({n} device{'s' * (n != 1)})")
    return device


def set_device(device):
    _C.set_device(_index(device))


class device:
    """Context manager that makes `device` the current tpu device (None: no change)."""

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
    """Which driver runs the device: "torchtpu host driver" (TPU numerics on this machine's CPU), or the PJRT
    driver with its plugin ("torchtpu pjrt driver (pjrt xla_cpu_pjrt.so cpu ...)"). Google TorchTPU answers with
    the chip ("TPU v6e")."""
    _index(device)
    name = _C.driver_name()
    return f"torchtpu {name} driver" + ("" if name == "host" else f" ({_C.driver_identity()})")


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


# Through the device's default generator (C++), as torch.cuda does: no torch function runs, so a TorchFunctionMode
# (PyTorch's TorchRefsMode around freeze_rng_state) does not see these calls. The state is 16 bytes: seed, offset.
def get_rng_state(device=None):
    return _default_generator(_index(device)).get_state()


def set_rng_state(new_state, device=None):
    if not isinstance(new_state, torch.Tensor):
        raise TypeError("set_rng_state expects the torch.ByteTensor get_rng_state returns, got "
                        f"{type(new_state).__name__}")
    _default_generator(_index(device)).set_state(new_state)


def get_rng_state_all():
    return [get_rng_state(d) for d in range(device_count())]


def set_rng_state_all(states):
    for d, s in enumerate(states):
        set_rng_state(s, d)


# ---- module properties (Google TorchTPU's `torch.tpu.eager_mode`), the lazy generators, the submodules ----
class _TpuModule(types.ModuleType):
    """torch.tpu's class: a few names are properties, as in Google TorchTPU."""

    @property
    def eager_mode(self):
        """The calling thread's eager mode, an EagerMode. Assigning sets the process mode (every thread that has
        no `set_eager_mode` override, autograd's included); it waits for queued work first."""
        return _current_eager_mode()

    @eager_mode.setter
    def eager_mode(self, mode):
        _set_process_eager_mode(mode)

    @property
    def allow_excess_precision(self):
        """Whether a compiler may keep intermediates in more precision than their dtype (Google TorchTPU's flag;
        default False). The host driver rounds every result to its dtype either way."""
        return _precision.get_allow_excess_precision()

    @allow_excess_precision.setter
    def allow_excess_precision(self, value):
        _precision.set_allow_excess_precision(value)

    @property
    def default_generators(self):
        """One torch.Generator per device (a tuple): the device's default generator, as torch.cuda's."""
        return _generators()


_default_generators = None


def _generators():
    global _default_generators
    if _default_generators is None:
        _default_generators = _C.default_generators()
    return _default_generators


def _default_generator(index):
    return _generators()[index]


sys.modules[__name__].__class__ = _TpuModule

from . import _api, compiler, distributed, ops, optimizers, pallas, profiler  # noqa: E402,F401


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
