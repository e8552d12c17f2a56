"""nn.Module moves to and from the tpu keep shared Parameters shared, as they are on CUDA.

PyTorch assigns `param.data = moved` only between CPU/CUDA-like devices (c10's dense backends do not include
PrivateUse1); for any other device Module._apply makes a new Parameter per module, which silently unties shared
weights (an embedding tied to the LM head). After such a move, every place that held one Parameter gets the same
new Parameter again. (torch.__future__'s swap mode would keep the objects too, but it slows later CPU work and
breaks modules whose parameters have weakrefs, so it is not used.)
"""
import functools

import torch


def _on_tpu(module):
    return any(t.device.type == "tpu" for t in module.parameters())


def _shared_parameters(module):
    """Groups of (submodule, name) that hold the same Parameter object, for Parameters held more than once."""
    holders = {}
    for sub in module.modules():
        for name, p in sub._parameters.items():
            if p is not None:
                holders.setdefault(id(p), []).append((sub, name))
    return [group for group in holders.values() if len(group) > 1]


def _wrap(method, involves_tpu):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if not involves_tpu(self, args, kwargs):
            return method(self, *args, **kwargs)
        groups = _shared_parameters(self)
        out = method(self, *args, **kwargs)
        for group in groups:
            first_mod, first_name = group[0]
            keep = first_mod._parameters[first_name]
            for sub, name in group[1:]:
                sub._parameters[name] = keep
        return out

    return wrapper


def _to_involves_tpu(module, args, kwargs):
    try:
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
    except Exception:
        return False
    return device is not None and (device.type == "tpu" or _on_tpu(module))


def keep_parameters_on_device_moves():
    M = torch.nn.Module
    M.to = _wrap(M.to, _to_involves_tpu)
    M.tpu = _wrap(M.tpu, lambda m, a, k: True)
    M.cpu = _wrap(M.cpu, lambda m, a, k: _on_tpu(m))
