"""Streams and events of the tpu device.

Each device has one in-order stream (the runtime's queue, csrc/runtime/stream.c). `torch.tpu.Stream` and
`torch.tpu.Event` make `torch.Stream` / `torch.Event` objects of the tpu device, so they and the generic
`torch.Stream("tpu")` / `torch.Event("tpu")` are one mechanism: the device guard
(csrc/aten/guard.cpp) maps them onto the runtime's events. An event records a position in the device's queue;
`query` is true once the device has run past it, `synchronize` waits for that (and raises a queued op's error as
a sync does), and with `enable_timing=True` the position carries the time the device finished the work before
it, so `elapsed_time` measures device-side work. In debug mode (synchronous) an event completes when recorded.
"""
import torch

from .. import _C


def _device_index(device):
    if device is None:
        return _C.current_device()
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = torch.device(device)
    if isinstance(device, torch.device):
        if device.type != "tpu":
            raise ValueError(f"Expected a tpu device, but got: {device}")
        return _C.current_device() if device.index is None else device.index
    raise TypeError(f"expected a device index, string or torch.device, got {type(device).__name__}")


def _check_index(idx):
    n = _C.device_count()
    if not 0 <= idx < n:
        raise RuntimeError(f"Invalid device index tpu:{idx}; there are {n} tpu devices")
    return idx


class _TpuKind(type):
    """isinstance(x, torch.tpu.Stream / Event) is true for every torch.Stream / torch.Event of the tpu device."""

    def __instancecheck__(cls, obj):
        dev = getattr(obj, "device", None)
        return isinstance(obj, cls._base) and dev is not None and torch.device(dev).type == "tpu"

    def __subclasscheck__(cls, sub):
        return type.__subclasscheck__(cls, sub)


# Constructors that return torch.Stream / torch.Event objects themselves rather than subclass instances: torch's
# C methods check some arguments' exact type (torch.Event.elapsed_time refuses a subclass instance), so a subclass
# would work in one direction only.
class Stream(metaclass=_TpuKind):
    """The in-order stream of a tpu device (a torch.Stream). Every Stream of a device is that device's one stream,
    so work on any two of them runs in program order; `priority` is accepted and has no effect."""

    _base = torch.Stream

    def __new__(cls, device=None, priority=0, **kwargs):
        if "stream_id" in kwargs:  # rebuilt from (stream_id, device_index, device_type), as torch.Stream allows
            return torch.Stream(priority=priority, **kwargs)
        idx = _check_index(_device_index(device))
        return torch.Stream(device=torch.device("tpu", idx), priority=priority)


class Event(metaclass=_TpuKind):
    """A position in a tpu device's stream (a torch.Event). `blocking` is accepted: waits sleep on the host.
    Interprocess events are not supported."""

    _base = torch.Event

    def __new__(cls, enable_timing=False, blocking=False, interprocess=False):
        if interprocess:
            raise NotImplementedError("torch.tpu.Event: interprocess events are not supported on tpu")
        return torch.Event("tpu", enable_timing=bool(enable_timing), blocking=bool(blocking))


def current_stream(device=None):
    """The stream work on `device` (default: the current device) goes to."""
    return Stream(device)


def default_stream(device=None):
    return Stream(device)


def set_stream(stream):
    """Makes `stream` current: as torch.cuda.set_stream, this also makes its device the current device (each
    device has one stream, so that is all there is to select)."""
    if stream is None:
        return
    if not isinstance(stream, torch.Stream) or stream.device.type != "tpu":
        raise ValueError(f"Expected a tpu stream, but got: {stream!r}")
    _C.set_device(_check_index(stream.device_index))


class StreamContext:
    """Context manager that selects `stream` (and its device) for the block; None is a no-op."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_device = None

    def __enter__(self):
        if self.stream is None:
            return None
        self.prev_device = _C.current_device()
        set_stream(self.stream)
        return self.stream

    def __exit__(self, *exc):
        if self.prev_device is not None:
            _C.set_device(self.prev_device)
        return False


def stream(stream):
    return StreamContext(stream)
