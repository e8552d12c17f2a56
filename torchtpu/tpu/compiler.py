"""torch.tpu.compiler: options for the compiler that turns programs into executables.

    with torch.tpu.compiler.custom_compiler_options({"xla_optimization_level": "O3"}):
        ...

Blocks nest (an inner block's value for a key wins; the outer one is back on exit) and are per thread, as eager
modes are. Options are validated and recorded here; no compiler reads them yet: the host driver has no
optimization levels, and the compilers that have them read `current_compiler_options()` (torch.compile, issue 7;
the PJRT driver, issue 9). Google TorchTPU's defaults: O1 for strict and debug eager, O2 for fused and compile.
"""
import contextlib
import threading

__all__ = ["custom_compiler_options", "current_compiler_options"]

_OPT_LEVELS = ("O0", "O1", "O2", "O3")
_tls = threading.local()


def _validate(options):
    if not isinstance(options, dict):
        raise TypeError(f"custom_compiler_options expects a dict of option name to value, got {type(options).__name__}")
    for key, value in options.items():
        if not isinstance(key, str) or not key:
            raise TypeError(f"compiler option names must be non-empty strings, got {key!r}")
        if not isinstance(value, (str, bool, int, float)):
            raise TypeError(f"compiler option {key!r} must be a str, bool, int or float, got {type(value).__name__}")
    level = options.get("xla_optimization_level")
    if level is not None and level not in _OPT_LEVELS:
        raise ValueError(f"xla_optimization_level must be one of {', '.join(_OPT_LEVELS)}, got {level!r}")
    return dict(options)


def current_compiler_options():
    """The options in force on the calling thread (a new dict; empty outside every block)."""
    return dict(getattr(_tls, "options", {}))


@contextlib.contextmanager
def custom_compiler_options(options):
    """Compiles started on this thread inside the block see `options` merged over the enclosing blocks' options."""
    merged = current_compiler_options()
    merged.update(_validate(options))
    prev = getattr(_tls, "options", {})
    _tls.options = merged
    try:
        yield
    finally:
        _tls.options = prev
