"""Results of convolutions, norms, pooling, upsampling, padding and cat follow the memory format their inputs suggest,
as PyTorch's CPU kernels do (csrc/aten/fallback.cpp, kFormatRules): a channels_last model stays channels_last on
tpu. Values and strides are compared with CPU, forward and backward."""
import warnings

import pytest
import torch
import torch.nn.functional as F
import torchtpu  # noqa: F401

CL, CL3 = torch.channels_last, torch.channels_last_3d
W = torch.randn(4, 3, 3, 3, generator=torch.Generator().manual_seed(0))

CASES = {
    "conv2d": lambda x: F.conv2d(x, W.to(x.device), padding=1),
    "conv2d_cl_weight": lambda x: F.conv2d(x.contiguous(), W.to(x.device).to(memory_format=CL), padding=1),
    "batch_norm_train": lambda x: F.batch_norm(x, None, None, training=True),
    "batch_norm_eval": lambda x: F.batch_norm(x, torch.zeros(3, device=x.device), torch.ones(3, device=x.device)),
    "group_norm": lambda x: F.group_norm(x, 3),
    "max_pool2d": lambda x: F.max_pool2d(x, 2),
    "avg_pool2d": lambda x: F.avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda x: F.adaptive_avg_pool2d(x, 3),
    "adaptive_max_pool2d": lambda x: F.adaptive_max_pool2d(x, 3),
    "upsample_nearest": lambda x: F.interpolate(x, scale_factor=2),
    "upsample_bilinear": lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
    "pad": lambda x: F.pad(x, (1, 2, 0, 1)),
    "cat": lambda x: torch.cat([x, x * 2], 1),
    "contiguous_input_stays_row_major": lambda x: F.conv2d(x.contiguous(), W.to(x.device), padding=1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_results_and_gradients_take_cpus_memory_format(name):
    f = CASES[name]
    base = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(1)).to(memory_format=CL)
    xc = base.clone().requires_grad_()
    xt = base.to("tpu").requires_grad_()
    assert xt.is_contiguous(memory_format=CL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yc, yt = f(xc), f(xt)
        assert yt.stride() == yc.stride(), (yt.stride(), yc.stride())
        torch.testing.assert_close(yt.cpu(), yc.detach(), rtol=1e-4, atol=1e-4)
        g = torch.randn(yc.shape, generator=torch.Generator().manual_seed(2))
        yc.backward(g)
        yt.backward(g.to("tpu"))
    assert xt.grad.stride() == xc.grad.stride(), (xt.grad.stride(), xc.grad.stride())
    torch.testing.assert_close(xt.grad.cpu(), xc.grad, rtol=1e-4, atol=1e-4)


def test_pooling_5d_takes_channels_last_3d_and_conv3d_stays_row_major_like_cpu():
    x = torch.randn(1, 2, 4, 4, 4).to(memory_format=CL3)
    w = torch.randn(3, 2, 3, 3, 3)
    for f in (lambda t: F.max_pool3d(t, 2), lambda t: F.conv3d(t, w.to(t.device))):
        assert f(x.to("tpu")).stride() == f(x).stride()
