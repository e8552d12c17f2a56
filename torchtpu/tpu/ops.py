"""torch.tpu.ops: Google TorchTPU's TPU-specific ops (ragged_dot, optimization_barrier, collectives, splash
attention, ...). None is built yet; each name raises NotImplementedError naming the issue that brings it (see
torchtpu/tpu/_api.py). Standard ATen ops need nothing from here: they run on the tpu device directly."""
from ._api import define_later_names as _define_later_names

__all__ = _define_later_names("ops", globals())
