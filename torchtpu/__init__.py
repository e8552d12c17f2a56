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


def _refuse_google_torch_tpu():
    """Google's TorchTPU package (`torch_tpu`) also makes the `tpu` device and `torch.tpu`; with both installed,
    whichever loads second would fail obscurely (or, through torch.backends autoloading, both would try at once).
    Found without importing it: its module on sys.path, or its torch.backends entry point."""
    import importlib.metadata
    import importlib.util

    where = None
    try:
        spec = importlib.util.find_spec("torch_tpu")
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        where = f"module torch_tpu at {spec.origin or list(spec.submodule_search_locations or [])}"
    else:
        for ep in importlib.metadata.entry_points(group="torch.backends"):
            if ep.value.split(":")[0].split(".")[0] == "torch_tpu":
                dist = getattr(ep, "dist", None)
                where = (f"torch.backends entry point {ep.name!r} = {ep.value!r}"
                         f"{f' of the distribution {dist.name!r}' if dist else ''}")
                break
    if where:
        raise ImportError(
            f"torchtpu cannot load: Google's TorchTPU package torch_tpu is also installed ({where}). Both provide the "
            "'tpu' device and torch.tpu, and only one can own PyTorch's PrivateUse1 device per process: uninstall one "
            "(`pip uninstall torch-tpu` or `pip uninstall torchtpu`) or use separate environments.")


def _default_pjrt_plugin():
    """TORCHTPU_DRIVER=pjrt without TORCHTPU_PJRT_PLUGIN: libtpu's plugin on a TPU host (a TPU device node and the
    libtpu package), else the installed OpenXLA CPU plugin (PyPI xla-cpu-pjrt). The C runtime reads the variable."""
    import glob
    import importlib.util
    import os

    if os.environ.get("TORCHTPU_DRIVER") != "pjrt":
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")  # XLA's start-up INFO lines on stderr
    if os.environ.get("TORCHTPU_PJRT_PLUGIN"):
        return
    candidates = []
    if glob.glob("/dev/accel*") or glob.glob("/dev/vfio/[0-9]*"):
        candidates.append(("libtpu", "libtpu.so"))
    candidates.append(("xla_plugins.xla_cpu_pjrt", "xla_cpu_pjrt.so"))
    for module, library in candidates:
        try:
            spec = importlib.util.find_spec(module)
        except (ImportError, ValueError):
            spec = None
        for where in (spec.submodule_search_locations or []) if spec else []:
            if os.path.exists(os.path.join(where, library)):
                os.environ["TORCHTPU_PJRT_PLUGIN"] = os.path.join(where, library)
                return


_refuse_google_torch_tpu()
_default_pjrt_plugin()
_fresh = _claim_backend_name()

from . import _C  # noqa: E402  (registers the device's C++ kernels)
from . import tpu as _tpu_module  # noqa: E402
from ._metrics import metrics, reset_metrics  # noqa: E402
from ._modes import get_eager_mode, set_eager_mode, eager_mode, EagerMode, flush  # noqa: E402
from ._precision import Precision, get_precision, set_precision  # noqa: E402

if _fresh:
    _torch.utils.rename_privateuse1_backend(_BACKEND)
    _torch._register_device_module(_BACKEND, _tpu_module)
    # `import torch.tpu.profiler` must find the module torchtpu.tpu.profiler, not load the file a second time.
    import sys as _sys  # noqa: E402

    for _name in _tpu_module._api.SUBMODULES:
        _sys.modules[f"torch.tpu.{_name}"] = getattr(_tpu_module, _name)
    _torch.utils.generate_methods_for_privateuse1_backend(for_tensor=True, for_module=True, for_storage=True)
    _C.register_lowered_kernels()
    from . import _decomp  # noqa: E402

    _decomp.register()
    from . import _dynamic  # noqa: E402

    _dynamic.register()
    from . import _fused_optim  # noqa: E402

    _fused_optim.register()
    from . import _precision  # noqa: E402

    _precision.install()
    from . import _compile  # noqa: E402

    _compile.install()
    from ._integrations import install as _install_integrations  # noqa: E402  (HF accelerate/transformers, lazily)

    _install_integrations()

    import atexit as _atexit

    def _quiesce_at_exit():
        # Lets autograd's tpu device threads finish before Python finalizes (see quiesce_for_exit in
        # csrc/aten/module.cpp). An error here belongs to work nobody waited for; at exit it is dropped, as on CUDA.
        try:
            _C.quiesce_for_exit()
        except Exception:  # noqa: BLE001
            pass

    _atexit.register(_quiesce_at_exit)

from ._stablehlo import stablehlo  # noqa: E402
from ._aot import aot_compile  # noqa: E402
from ._buckets import mark_dynamic  # noqa: E402


__all__ = ["metrics", "reset_metrics", "set_eager_mode", "get_eager_mode", "eager_mode", "EagerMode", "stablehlo",
           "aot_compile", "Precision", "set_precision", "get_precision", "mark_dynamic"]
