"""Matmul and convolution precision, TPU semantics (Google TorchTPU's names).

A TPU multiplies in bfloat16 and sums in float32. `DEFAULT` (the default) is one pass: both operands rounded to
bf16, exact products, f32 sums. `HIGH` splits each f32 operand into a bf16 high part and a bf16 remainder and adds
three cross products (about 3x DEFAULT's work, ~16 significant bits); `HIGHEST` splits into three bf16 parts and
adds six products (~6x, close to f32: within a few f32 ulps of the f32 sum). torchtpu adds `EXACT`, a mode of its
own for testing: plain f32 products and sums, as PyTorch's CPU kernels compute them. It differs from HIGHEST in
how it rounds (one f32 product per term, not six bf16 products of split parts), so its results follow the CPU's
closely, and in that an inf or NaN operand behaves as in f32 arithmetic (HIGHEST switches to EXACT for such
inputs, since splitting inf gives NaN). Integer and float64 contractions are always exact.

Scopes:
  - the process precision: DEFAULT unless set by `torchtpu.set_precision(p)`,
    `torch.set_float32_matmul_precision("medium" | "high" | "highest")` (DEFAULT / HIGH / HIGHEST on tpu), or
    the environment at start (`TORCHTPU_PRECISION=default|high|highest|exact`);
  - a thread's override: `with torch.tpu.precision(torch.tpu.Precision.HIGH):` applies to the ops the calling
    thread issues in the block (nestable). Ops autograd runs on its own device thread during `backward()`
    follow the process precision, as with eager modes.
An op takes the precision in force when it is recorded (it is part of its program and of the compile cache key),
so a change inside a fused window applies to the ops recorded after it, never to those before.
"""
import enum
import functools
import os
import threading

import torch

from . import _C


class Precision(enum.Enum):
    """Google TorchTPU's precisions (bf16 passes per product: 1, 3, 6), and torchtpu's EXACT (plain f32)."""

    DEFAULT = 0
    HIGH = 1
    HIGHEST = 2
    EXACT = 3


_NAMES = {p.name.lower(): p for p in Precision}
# torch.set_float32_matmul_precision's names, as Google TorchTPU maps them
_MATMUL_NAMES = {"medium": Precision.DEFAULT, "high": Precision.HIGH, "highest": Precision.HIGHEST}


def _as_precision(p):
    if isinstance(p, Precision):
        return p
    if isinstance(p, str) and p.lower() in _NAMES:
        return _NAMES[p.lower()]
    raise ValueError(f"unknown precision {p!r}: expected a torch.tpu.Precision or one of "
                     f"{', '.join(repr(n) for n in _NAMES)}")


def set_precision(p):
    """Sets the process precision (every thread without a `torch.tpu.precision` block, autograd's included)."""
    _C.set_precision(_as_precision(p).value)


def get_precision():
    """The precision the calling thread's matmuls and convolutions run at now, a Precision."""
    return Precision(_C.get_precision())


class precision:
    """`torch.tpu.precision(p)`: the calling thread's matmuls and convolutions run at `p` (a Precision or its name).

    Takes effect when called and, as a context manager, restores the thread's previous setting on exit
    (nestable). Other threads, and autograd's device thread, keep the process precision. Inside a torch.compile'd
    function it is part of the graph, not a graph break: Dynamo records the two ops below around the block, and
    the graph's matmuls between them take `p` (in the forward graph; a backward follows the precision in force
    where it runs, as eager autograd does)."""

    def __init__(self, p):
        value = _as_precision(p).value
        if torch.compiler.is_compiling():
            torch.ops.tpu._push_precision(value)
            self._prev = None
            return
        self._prev = _C.get_thread_precision()
        _C.set_thread_precision(value)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self._prev is None:
            torch.ops.tpu._pop_precision()
        else:
            _C.set_thread_precision(self._prev)
        return False


# tpu::_push_precision / tpu::_pop_precision: the precision block as graph ops (side effects: never removed as
# dead code). Run while a compiled graph records, they set the thread's override and restore it.
_graph_stack = threading.local()
_lib = None


def _push_precision(value):
    stack = _graph_stack.__dict__.setdefault("stack", [])
    stack.append(_C.get_thread_precision())
    _C.set_thread_precision(value)


def _pop_precision():
    stack = getattr(_graph_stack, "stack", None)
    if stack:
        _C.set_thread_precision(stack.pop())


def _register_graph_ops():
    global _lib
    _lib = torch.library.Library("tpu", "FRAGMENT")
    _lib.define("_push_precision(int precision) -> ()")
    _lib.define("_pop_precision() -> ()")
    for name, fn in (("_push_precision", _push_precision), ("_pop_precision", _pop_precision)):
        _lib.impl(name, fn, "CompositeExplicitAutograd")
        _lib.impl(name, lambda *a: None, "Meta")
        torch.fx.node.has_side_effect(getattr(torch.ops.tpu, name).default)


# Google TorchTPU's torch.tpu.allow_excess_precision: permission for the compiler to keep intermediates in more
# precision than their dtype (skip a bf16 rounding between fused ops). The host driver never uses it: it rounds
# every op's result to its dtype either way, so results do not depend on it there.
_allow_excess_precision = False


def get_allow_excess_precision():
    return _allow_excess_precision


def set_allow_excess_precision(value):
    global _allow_excess_precision
    if not isinstance(value, bool):
        raise TypeError(f"allow_excess_precision must be a bool, got {type(value).__name__}")
    _allow_excess_precision = value


def _wrap_set_float32_matmul_precision():
    """torch.set_float32_matmul_precision also sets the tpu process precision (CPU and other devices unchanged)."""
    original = torch.set_float32_matmul_precision
    if getattr(original, "_torchtpu_wrapped", False):
        return

    @functools.wraps(original)
    def set_float32_matmul_precision(precision):
        original(precision)  # an unknown name: PyTorch warns and changes nothing, nor do we
        if precision in _MATMUL_NAMES:
            _C.set_precision(_MATMUL_NAMES[precision].value)

    set_float32_matmul_precision._torchtpu_wrapped = True
    torch.set_float32_matmul_precision = set_float32_matmul_precision


def install():
    _wrap_set_float32_matmul_precision()
    _register_graph_ops()
    env = os.environ.get("TORCHTPU_PRECISION")
    if env:
        try:
            set_precision(env)
        except ValueError as e:
            raise ValueError(f"TORCHTPU_PRECISION: {e}") from None
