"""accelerate: tpu is the default device when it is available, and `save_state` / `load_state` keep its RNG.

`PartialState.default_device` names every accelerator it knows and returns the CPU otherwise; `Accelerator()`
then places models on the CPU while transformers' `TrainingArguments` (which asks `torch.accelerator`) puts the
batches on tpu:0. We keep accelerate's choice unless it is the CPU and tpu is available, and leave explicit
choices alone: `cpu=True` / `use_cpu=True` and `ACCELERATE_TORCH_DEVICE` never reach `default_device`.
Mixed precision needs nothing more: accelerate autocasts on `state.device.type`, i.e. `torch.autocast("tpu")`.
"""
import inspect
import os
import sys

import torch

RNG_KEY = "torch_tpu_manual_seed"  # accelerate's own spelling: torch_cuda_manual_seed, torch_xpu_manual_seed, ...


def default_device_is_tpu(state_module):
    cls = state_module.PartialState
    original = cls.default_device
    if getattr(original.fget, "_torchtpu", False):
        return

    def default_device(self):
        device = original.fget(self)
        if device.type == "cpu" and torch.tpu.is_available():
            return torch.device("tpu")  # no index, as accelerate returns torch.device("cuda")
        return device

    default_device._torchtpu = True
    default_device.__doc__ = original.__doc__
    cls.default_device = property(default_device)


def _rng_file(checkpointing, directory, process_index):
    return os.path.join(directory, f"{checkpointing.RNG_STATE_NAME}_{process_index}.pkl")


def save_tpu_rng_with_state(checkpointing):
    """accelerate saves the RNG state of each device type it knows into random_states_<rank>.pkl and restores it on
    load; add tpu's, under the key accelerate's naming scheme gives it."""
    save, load = checkpointing.save_accelerator_state, checkpointing.load_accelerator_state
    if getattr(save, "_torchtpu", False):
        return
    save_sig, load_sig = inspect.signature(save), inspect.signature(load)
    load_file = checkpointing.load  # accelerate's torch.load with weights_only and its numpy allowlist

    def save_accelerator_state(*args, **kwargs):
        out = save(*args, **kwargs)
        bound = save_sig.bind(*args, **kwargs)
        path = _rng_file(checkpointing, bound.arguments["output_dir"], bound.arguments["process_index"])
        if torch.tpu.is_available() and os.path.isfile(path):
            states = load_file(path)
            states[RNG_KEY] = torch.tpu.get_rng_state_all()
            torch.save(states, path)
        return out

    def load_accelerator_state(*args, **kwargs):
        out = load(*args, **kwargs)
        bound = load_sig.bind(*args, **kwargs)
        path = _rng_file(checkpointing, bound.arguments["input_dir"], bound.arguments["process_index"])
        if torch.tpu.is_available() and os.path.isfile(path):
            states = load_file(path)
            if RNG_KEY in states:
                torch.tpu.set_rng_state_all(states[RNG_KEY])
        return out

    for wrapper, original in ((save_accelerator_state, save), (load_accelerator_state, load)):
        wrapper._torchtpu = True
        wrapper.__wrapped__ = original
        wrapper.__doc__ = original.__doc__
        setattr(checkpointing, original.__name__, wrapper)
        # accelerate.accelerator binds these names at its import; rebind them if it is already imported.
        accelerator = sys.modules.get("accelerate.accelerator")
        if accelerator is not None and getattr(accelerator, original.__name__, None) is original:
            setattr(accelerator, original.__name__, wrapper)
