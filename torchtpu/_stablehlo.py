"""torchtpu.stablehlo(fn, *args): the StableHLO text of what fn does to tpu tensors."""
from . import _C


def stablehlo(fn, *args, **kwargs):
    """Run fn(*args, **kwargs) once on tpu tensors, recording every op's lowering into one program, and return
    that program as StableHLO text (a module with func @main whose arguments are the tpu tensors fn reads)."""
    _C.trace_begin()
    try:
        out = fn(*args, **kwargs)
    except BaseException:
        _C.trace_abort()
        raise
    import torch

    flat = out if isinstance(out, (tuple, list)) else (out,)
    tensors = [t for t in flat if isinstance(t, torch.Tensor)]
    return _C.trace_end(tensors)
