"""torch.tpu.profiler: Google TorchTPU's profiler config, for torch.profiler.

What a profile of tpu work holds today: torch.profiler accepts `ProfilerActivity.PrivateUse1` (it prints as
`ProfilerActivity.TPU` once torchtpu has named the device) and records every tpu op's span on the host, by its
ATen name (aten::mm, aten::relu, ...; shapes with record_shapes=True). In debug mode a launch is synchronous, so an
op's span contains its execution on the device; in strict mode the span is the time to queue the op, and the
device's time lands in the span of the sync point that waited for it (aten::_local_scalar_dense, aten::copy_, ...).
There are no device-side spans yet: torch 2.13 lets a backend register a Kineto activity profiler
(torch::profiler::impl::PrivateUse1ProfilerRegistry, a libkineto::IActivityProfiler) and torchtpu registers none.

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
