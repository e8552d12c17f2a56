"""PyTorch's own decompositions, run on the device, for ops that reach the backend without a native lowering.

An op is served here only when nothing better exists: no C lowering for it, no composite kernel PyTorch would use
instead, and it is functional (in-place and out= variants go through the shim's generic path). Everything else
that is missing falls back to the CPU in the shim.
"""
import torch
from torch._decomp import core_aten_decompositions, decomposition_table

from . import _C
from ._metrics import count_decomposition

_lib = None
_registered = []

# Decompositions that loop in Python per element or recurse into themselves on the device.
_SKIP = {
    "aten::_to_copy",
    "aten::copy",
    "aten::lift_fresh",
    "aten::empty_like",
    "aten::new_empty",
    "aten::new_empty_strided",
    "aten::resize",
    "aten::detach",
}


def _key(op):
    name = op._schema.name
    return name if not op._overloadname or op._overloadname == "default" else f"{name}.{op._overloadname}"


def _reaches_backend(name):
    has = torch._C._dispatch_has_kernel_for_dispatch_key
    for key in ("CompositeImplicitAutograd", "CompositeExplicitAutograd",
                "CompositeExplicitAutogradNonFunctional", "PrivateUse1"):
        if has(name, key):
            return False
    return True


def _wrap(key, fn):
    def kernel(*args, **kwargs):
        count_decomposition(key)
        return fn(*args, **kwargs)

    return kernel


def register():
    global _lib
    _lib = torch.library.Library("aten", "IMPL")
    table = dict(decomposition_table)
    table.update(dict(core_aten_decompositions()))
    for op, fn in table.items():
        if not isinstance(op, torch._ops.OpOverload):
            continue
        key = _key(op)
        schema = op._schema
        if schema.is_mutable or any(a.alias_info is not None for a in schema.returns):
            continue
        if key in _SKIP or _C.has_lowering(key):
            continue
        overload = schema.overload_name
        full = schema.name + ("." + overload if overload else "")
        if not _reaches_backend(full):
            continue
        try:
            _lib.impl(op, _wrap(key, fn), "PrivateUse1")
            _registered.append(key)
        except RuntimeError:
            pass


def registered():
    """Names of the ops served by a decomposition on this device."""
    return list(_registered)
