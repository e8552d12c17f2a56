"""torch.tpu.distributed: Google TorchTPU's distributed helpers. Distributed training on tpu (the process-group
backends "tpu" and "tpu_dist", collectives) is not built yet; every name here raises NotImplementedError naming the
issue that brings it (see torchtpu/tpu/_api.py)."""
from ._api import define_later_names as _define_later_names

__all__ = _define_later_names("distributed", globals())
