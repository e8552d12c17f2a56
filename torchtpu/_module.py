"""nn.Module moves to and from the tpu keep Parameter objects (and so tied weights) as they are on CUDA.

PyTorch assigns `param.data = moved` only between CPU/CUDA-like devices (c10's dense backends do not include
PrivateUse1); for any other device Module._apply makes a new Parameter per module, which silently unties shared
weights (an embedding tied to the LM head). Swapping the tensors in place keeps the objects. It is switched on only
for moves that involve the tpu, so other code keeps PyTorch's default.
"""
import contextlib
import functools

import torch


@contextlib.contextmanager
def _swapping():
    old = torch.__future__.get_swap_module_params_on_conversion()
    torch.__future__.set_swap_module_params_on_conversion(True)
    try:
        yield
    finally:
        torch.__future__.set_swap_module_params_on_conversion(old)


def _on_tpu(module):
    return any(t.device.type == "tpu" for t in module.parameters()) or any(
        t.device.type == "tpu" for t in module.buffers())


def _wrap(method, involves_tpu):
    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if involves_tpu(self, args, kwargs) and not torch.__future__.get_swap_module_params_on_conversion():
            with _swapping():
                return method(self, *args, **kwargs)
        return method(self, *args, **kwargs)

    return wrapper


def _to_involves_tpu(module, args, kwargs):
    try:
        device = torch._C._nn._parse_to(*args, **kwargs)[0]
    except Exception:
        return False
    if device is not None and device.type == "tpu":
        return True
    return device is not None and _on_tpu(module)


def keep_parameters_on_device_moves():
    M = torch.nn.Module
    M.to = _wrap(M.to, _to_involves_tpu)
    M.tpu = _wrap(M.tpu, lambda m, a, k: True)
    M.cpu = _wrap(M.cpu, lambda m, a, k: _on_tpu(m))
