"""torch.tpu.pallas: JAX/Pallas kernels as PyTorch custom ops (Google TorchTPU's `jax_op`). Not built yet: each name
raises NotImplementedError naming the issue that brings it (see torchtpu/tpu/_api.py)."""
from ._api import define_later_names as _define_later_names

__all__ = _define_later_names("pallas", globals())
