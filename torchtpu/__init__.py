"""torchtpu: PyTorch natively on TPU-class accelerators, as the `tpu` device.

    import torch, torchtpu
    x = torch.randn(4, 4, device="tpu")
    y = (x @ x).relu().sum()
    print(y.item(), torchtpu.metrics())
"""


def _autoload():
    """Entry point for `torch.backends` autoloading: importing this package is all it takes. Defined before
    `import torch`, because importing torch runs the entry point while this module is still loading."""


import torch as _torch  # noqa: E402

__version__ = "0.1.0"

_BACKEND = "tpu"


def _claim_backend_name():
    current = _torch._C._get_privateuse1_backend_name()
    if current == _BACKEND:
        owner = getattr(_torch, _BACKEND, None)
        owner_name = getattr(owner, "__name__", None)
        if owner is not None and owner_name != "torchtpu.tpu":
            raise RuntimeError(
                f"torchtpu cannot register the 'tpu' device: it is already registered by '{owner_name}' "
                f"(module file {getattr(owner, '__file__', '?')}). Only one package can own PrivateUse1 per "
                "process; uninstall the other one or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 so it is not loaded.")
        return False  # already ours (re-import)
    if current != "privateuseone":
        raise RuntimeError(
            f"torchtpu cannot register the 'tpu' device: PrivateUse1 is already named '{current}' by another "
            "package. Only one PrivateUse1 backend can be loaded per process; set TORCH_DEVICE_BACKEND_AUTOLOAD=0 "
            "and import only the backend you want.")
    return True


_fresh = _claim_backend_name()

from . import _C  # noqa: E402  (registers the device's C++ kernels)
from . import tpu as _tpu_module  # noqa: E402
from ._metrics import metrics, reset_metrics  # noqa: E402
from ._modes import get_eager_mode, set_eager_mode, eager_mode, EagerMode  # noqa: E402

if _fresh:
    _torch.utils.rename_privateuse1_backend(_BACKEND)
    _torch._register_device_module(_BACKEND, _tpu_module)
    _torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    from . import _module  # noqa: E402

    _module.keep_parameters_on_device_moves()
    _C.register_lowered_kernels()
    from . import _decomp  # noqa: E402

    _decomp.register()
    from . import _dynamic  # noqa: E402

    _dynamic.register()
    from . import _fused_optim  # noqa: E402

    _fused_optim.register()
    from ._integrations import install as _install_integrations  # noqa: E402  (HF accelerate/transformers, lazily)

    _install_integrations()

from ._stablehlo import stablehlo  # noqa: E402


__all__ = ["metrics", "reset_metrics", "set_eager_mode", "get_eager_mode", "eager_mode", "EagerMode", "stablehlo"]
