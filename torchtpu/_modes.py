"""Eager modes: debug (synchronous), strict (asynchronous, the default), fused (not yet)."""
import contextlib
import enum

from . import _C


class EagerMode(enum.Enum):
    """Google TorchTPU's names for the eager modes."""

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
    """Switch every device to `mode` ("debug" | "strict" | EagerMode); waits for queued work first."""
    _C.set_eager_mode(_mode_name(mode))


def get_eager_mode():
    """The eager mode in force: "debug" or "strict"."""
    return _C.get_eager_mode()


@contextlib.contextmanager
def eager_mode(mode):
    """Run the block in another eager mode."""
    old = get_eager_mode()
    set_eager_mode(mode)
    try:
        yield
    finally:
        set_eager_mode(old)
