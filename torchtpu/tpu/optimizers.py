"""torch.tpu.optimizers: Google TorchTPU's functional optimizers and SingleTraceTrainer. Not built yet: each name
raises NotImplementedError naming the issue that brings it (see torchtpu/tpu/_api.py). `torch.optim` works on tpu
parameters today."""
from ._api import define_later_names as _define_later_names

__all__ = _define_later_names("optimizers", globals())
