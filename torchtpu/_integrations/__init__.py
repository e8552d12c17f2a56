"""Teach libraries that pick a device themselves (Hugging Face accelerate and transformers) about tpu.

They know CUDA, XPU, NPU and friends by name and fall back to the CPU for anything else, so on a machine whose
accelerator is tpu `Trainer` would train on the CPU, or worse, put batches on tpu and the model on the CPU. Each
integration is applied when its module is first imported (a post-import hook on `sys.meta_path`), or at once if
it is already imported, so `import torch` never imports transformers or accelerate. An integration that no longer
fits its library (a renamed attribute) warns and leaves the library as it was.
"""
import importlib.abc
import sys
import warnings

from . import hf_accelerate, hf_transformers

# module name -> functions that adapt it, run once right after the module has executed.
_INTEGRATIONS = {
    "accelerate.state": [hf_accelerate.default_device_is_tpu],
    "accelerate.checkpointing": [hf_accelerate.save_tpu_rng_with_state],
    "transformers.trainer": [hf_transformers.save_tpu_rng_in_checkpoints],
}


def _apply(name, module):
    if not _INTEGRATIONS.get(name):
        return
    integrations = _INTEGRATIONS.pop(name)
    if not _INTEGRATIONS and _finder in sys.meta_path:
        sys.meta_path.remove(_finder)  # nothing left to wait for: imports no longer pass through us
    for integrate in integrations:
        try:
            integrate(module)
        except Exception as e:  # a library update must never break the user's import
            warnings.warn(f"torchtpu: could not integrate tpu with {name} ({integrate.__name__}: {e!r}); it will "
                          "not know about the tpu device", RuntimeWarning, stacklevel=2)


class _PostImportFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: for a module we integrate with, it asks the other finders for the spec and makes the
    loader run the integration after the module's code. The loader object stays the same (only its exec_module is
    shadowed for that one load), so `module.__loader__` keeps working for inspect and importlib.resources."""

    def find_spec(self, name, path, target=None):
        if name not in _INTEGRATIONS:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_integrate(module):
            try:
                exec_module(module)
            finally:
                loader.__dict__.pop("exec_module", None)
            _apply(name, module)

        try:
            loader.exec_module = exec_then_integrate
        except AttributeError:
            warnings.warn(f"torchtpu: cannot hook the loader of {name}; it will not know about the tpu device",
                          RuntimeWarning, stacklevel=2)
        return spec


_finder = _PostImportFinder()


def install():
    for name in list(_INTEGRATIONS):
        if name in sys.modules:
            _apply(name, sys.modules[name])
    if _INTEGRATIONS and _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)
