"""transformers: `Trainer` checkpoints keep the tpu RNG state, so a resumed run draws the same dropout masks.

TrainingArguments already picks tpu:0 when `torch.accelerator` is tpu (accelerate is taught the same in
hf_accelerate). What is left is `Trainer._save_rng_state` / `_load_rng_state`: they save and restore the RNG of
each device type they name (cuda, npu, hpu, mlu, musa, xla) and skip others, so resuming on tpu would silently
continue with different random numbers. We add the tpu state to the same rng_state*.pth, under "tpu" as
transformers keys the others by device name.
"""
import os
import warnings

import torch

RNG_KEY = "tpu"


def _rng_file(trainer, directory):
    args = trainer.args
    name = "rng_state.pth" if args.world_size <= 1 else f"rng_state_{args.process_index}.pth"
    return os.path.join(directory, name)


def save_tpu_rng_in_checkpoints(trainer_module):
    cls = trainer_module.Trainer
    save, load = cls._save_rng_state, cls._load_rng_state
    if getattr(save, "_torchtpu", False):
        return
    safe_globals = trainer_module.safe_globals  # allowlists the numpy RNG state for weights_only loading

    def read(path):
        with safe_globals():
            return torch.load(path, weights_only=True)

    def _save_rng_state(self, output_dir):
        save(self, output_dir)
        path = _rng_file(self, output_dir)
        if self.args.device.type == "tpu" and os.path.isfile(path):
            states = read(path)
            states[RNG_KEY] = torch.tpu.get_rng_state()
            torch.save(states, path)

    def _load_rng_state(self, checkpoint):
        load(self, checkpoint)
        if checkpoint is None or self.args.device.type != "tpu":
            return
        path = _rng_file(self, checkpoint)
        if not os.path.isfile(path):
            return  # transformers has already said that reproducibility is not guaranteed
        states = read(path)
        if RNG_KEY not in states:
            warnings.warn(f"{path} has no tpu RNG state (saved by a run that was not on tpu?); resuming will not "
                          "draw the same random numbers as the interrupted run", RuntimeWarning, stacklevel=2)
            return
        torch.tpu.set_rng_state(states[RNG_KEY])

    for wrapper, original in ((_save_rng_state, save), (_load_rng_state, load)):
        wrapper._torchtpu = True
        wrapper.__wrapped__ = original
        wrapper.__doc__ = original.__doc__
        setattr(cls, original.__name__, wrapper)
