"""Eager modes: debug (synchronous), strict (asynchronous, one op at a time), fused (DeferAndFuse, the default: ops
deferred into a window that runs as one program at a cut).

Two scopes, as in Google TorchTPU:
  - the process mode: `torch.tpu.eager_mode = m`, `torchtpu.set_eager_mode(m)`, or the environment at start
    (`TORCH_TPU_LAUNCH_BLOCKING=1` / `TPU_LAUNCH_BLOCKING=1` -> debug, `TORCH_TPU_DEFER_AND_FUSE=1` -> fused (`=0` -> strict),
    `TORCHTPU_EAGER_MODE=debug|strict|fused`);
  - a thread's override: `with torch.tpu.set_eager_mode(m):` applies to the calling thread only.

The runtime keeps order across modes and threads: a debug op first waits for the work already queued on its
device, and an error of a queued op is raised by the device's next sync point (`.cpu()`, `.item()`,
`torch.tpu.synchronize()`), naming the op.
"""
import contextlib
import enum

import torch

from . import _C

class EagerMode(enum.Enum):
    """Google TorchTPU's names for the eager modes; the values are torchtpu's names."""

    DEFER_NEVER = "strict"
    DEFER_NEVER_AND_LAUNCH_BLOCKING = "debug"
    DEFER_AND_FUSE = "fused"


def _mode_name(mode):
    if isinstance(mode, EagerMode):
        return mode.value
    if isinstance(mode, str) and mode.lower() in ("debug", "strict", "fused"):
        return mode.lower()
    raise ValueError(f"eager mode must be 'debug', 'strict', 'fused' or a torch.tpu.EagerMode, got {mode!r}")


def set_eager_mode(mode):
    """Switches the process to `mode` ("debug" | "strict" | "fused" | an EagerMode); runs deferred and queued work
    first.

    The calling thread's own override (from `torch.tpu.set_eager_mode`) is dropped, so the caller runs in the mode
    it asked for; other threads' overrides stay."""
    _C.set_eager_mode(_mode_name(mode))
    _C.set_thread_eager_mode("")


def get_eager_mode():
    """The eager mode the calling thread's ops run in: "debug", "strict" or "fused"."""
    return _C.get_eager_mode()


@contextlib.contextmanager
def eager_mode(mode):
    """Runs the block with the process in `mode` (every thread, autograd's included), then restores it."""
    old = _C.get_process_eager_mode()
    old_thread = _C.get_thread_eager_mode()
    set_eager_mode(mode)
    try:
        yield
    finally:
        _C.set_eager_mode(old)
        _C.set_thread_eager_mode(old_thread)


class set_thread_eager_mode:
    """`torch.tpu.set_eager_mode(m)`: the calling thread's ops run in mode `m`.

    As `torch.set_grad_enabled`, it takes effect when called and, used as a context manager, restores the thread's
    previous mode on exit (nestable); a plain call keeps the thread in `m`. Other threads are not affected. Ops
    that autograd runs on its own device thread during `backward()` follow the process mode (set it with
    `torch.tpu.eager_mode = m` to cover them). It never enters a compiled graph, as in Google TorchTPU: inside a
    torch.compile'd function Dynamo runs it eagerly at a graph break, and with fullgraph=True it is refused."""

    def __init__(self, mode):
        if torch.compiler.is_compiling():
            raise RuntimeError("torch.tpu.set_eager_mode cannot be used inside a torch.compile'd function: eager modes "
                               "apply to ops run eagerly; move the block out of the compiled region")
        name = _mode_name(mode)
        self._prev = _C.get_thread_eager_mode()
        _C.set_thread_eager_mode(name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _C.set_thread_eager_mode(self._prev)
        return False


def current_eager_mode():
    """The calling thread's mode as an EagerMode (`torch.tpu.eager_mode`)."""
    return EagerMode(_C.get_eager_mode())


def flush(device=None):
    """Cuts the fused window of `device` (None: every device): its deferred ops are compiled (or found in the cache)
    and queued as one program. Returns at once, as a strict op does; a no-op in the other modes."""
    if device is None:
        index = -1
    else:
        d = torch.device("tpu", device) if isinstance(device, int) else torch.device(device)
        index = d.index if d.index is not None else _C.current_device()
    _C.flush(index)
