"""torch.tpu.profiler: Google TorchTPU's profiler config, for torch.profiler.

What a profile of tpu work holds: with `ProfilerActivity.PrivateUse1` (it prints as `ProfilerActivity.TPU` once
torchtpu has named the device), every tpu op's span on the host by its ATen name (aten::mm, aten::relu, ...; shapes
with record_shapes=True), and the device's own work: each program the device runs is a kernel event of device
tpu:N, each host-to-device write a memcpy event, timed on the device's timeline (in strict mode, when the worker ran
it, not when it was queued). They are `prof.events()` with device_type PrivateUse1, fill key_averages()' "Self TPU"
columns, and show in exported Chrome traces (csrc/aten/profiler.cpp: a Kineto activity profiler registered through
torch's PrivateUse1ProfilerRegistry). Device events are not yet linked to the host op that queued them.

    from torch.profiler import profile, ProfilerActivity
    from torch.tpu.profiler import TpuProfilerConfig
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1],
                 experimental_config=TpuProfilerConfig()) as prof:
        ...
"""
import os

import torch

__all__ = ["TpuProfilerConfig"]


class TpuProfilerConfig(torch._C._profiler._ExperimentalConfig):
    """A torch.profiler experimental config for tpu runs. `output_dir` (default: $TORCH_TPU_PROFILER_OUTPUT_DIR)
    is where a caller's trace handler may write; the other keywords are torch.profiler._ExperimentalConfig's."""

    def __init__(self, output_dir=None, **kwargs):
        super().__init__(**kwargs)
        self.output_dir = output_dir if output_dir is not None else os.environ.get("TORCH_TPU_PROFILER_OUTPUT_DIR")
