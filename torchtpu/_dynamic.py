"""Ops the C lowering table cannot take as they are, served by native lowerings of a related form:
- data-dependent sizes (nonzero, masked_select): learn the size (one sync), then run the static form;
- native_batch_norm, whose schema mutates the running stats without declaring it: run the functional form and
  write the new running stats back."""
import torch

from ._metrics import count_decomposition

_lib = None


def _nonzero(x):
    count_decomposition("aten::nonzero")
    if x.dim() == 0:
        return torch.zeros((int(x.item() != 0), 0), dtype=torch.long, device=x.device)
    n = int((x != 0).sum().item())
    return torch.ops.aten.nonzero_static(x, size=n)


def _masked_select(x, mask):
    count_decomposition("aten::masked_select")
    xb, mb = torch.broadcast_tensors(x, mask)
    if xb.dim() == 0:
        return xb.reshape(1)[mb.reshape(1)]
    return xb[tuple(_nonzero(mb).unbind(1))]


def _native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps):
    if training and running_mean is not None and running_var is not None:
        out, mean, rstd, new_mean, new_var = torch.ops.aten._native_batch_norm_legit_functional(
            input, weight, bias, running_mean, running_var, training, momentum, eps)
        running_mean.copy_(new_mean)
        running_var.copy_(new_var)
        return out, mean, rstd
    if training:
        return torch.ops.aten._native_batch_norm_legit.no_stats(input, weight, bias, training, momentum, eps)
    return torch.ops.aten._native_batch_norm_legit_no_training(input, weight, bias, running_mean, running_var,
                                                                momentum, eps)


def register():
    global _lib
    _lib = torch.library.Library("aten", "IMPL")
    _lib.impl("nonzero", _nonzero, "PrivateUse1")
    _lib.impl("masked_select", _masked_select, "PrivateUse1")
    _lib.impl("native_batch_norm", _native_batch_norm, "PrivateUse1")
