"""Convolutions' forward and both gradients against PyTorch's CPU, for the shapes that take each of the host
driver's ways through a convolution (csrc/drivers/host/host_conv.c, host_conv_direct.c): per-image im2col GEMMs
(forward and stride-1 input gradients), a 1x1 kernel's GEMMs reading the input in place, the direct depthwise stencil
and its weight gradient's row dot products, col2im for a strided convolution's input gradient (lhs dilation), images
side by side as GEMM columns in contraction chunks (a weight gradient: few output positions per image), a kernel that
covers its whole input read in place by one GEMM, and a 1x1 convolution's weight gradient lowered as a dot batched
over images (csrc/lower/conv.c)."""
import pytest
import torch

CASES = [  # (spatial dims, N, C, size, O, kernel, stride, padding, dilation, groups)
    (2, 3, 6, 9, 4, 1, 1, 0, 1, 1),    # 1x1: the forward reads the input in place, the weight gradient covers it
    (2, 2, 6, 5, 4, 1, 1, 0, 1, 2),    # 1x1 grouped
    (2, 2, 6, 9, 4, 1, 2, 0, 1, 1),    # 1x1 strided: im2col
    (2, 3, 6, 9, 4, 3, 1, 1, 1, 1),    # 3x3 padded: weight gradient with images as columns
    (2, 2, 6, 10, 4, 3, 2, 1, 1, 2),   # strided, grouped (a batch-grouped weight gradient)
    (2, 2, 4, 11, 8, 3, 1, 2, 2, 4),   # dilated, grouped
    (2, 5, 3, 7, 2, 7, 1, 0, 1, 1),    # the forward kernel covers the input
    (2, 5, 4, 7, 6, 7, 1, 0, 1, 2),    # ... grouped
    (1, 4, 5, 12, 3, 3, 1, 1, 1, 1),
    (3, 2, 2, 5, 3, 3, 1, 1, 1, 1),
    (2, 1, 6, 9, 4, 3, 1, 1, 1, 1),    # one image
    (2, 2, 6, 9, 6, 3, 1, 1, 1, 6),    # depthwise: the direct stencil
    (2, 2, 4, 10, 8, 5, 2, 2, 1, 4),   # depthwise, two outputs per channel, strided
    (2, 3, 4, 9, 4, 3, 1, 3, 2, 4),    # depthwise, dilated, padded past the kernel's reach
    (1, 3, 5, 12, 4, 1, 1, 0, 1, 1),   # 1x1 in 1-d and 3-d: the weight gradient as a dot
    (3, 2, 3, 4, 5, 1, 1, 0, 1, 1),
    (2, 2, 3, 11, 4, 3, 3, 1, 1, 1),   # stride 3: col2im input gradient, every third position
]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}d-k{c[5]}-s{c[6]}-p{c[7]}-d{c[8]}-g{c[9]}-n{c[1]}" for c in CASES])
def test_conv_forward_and_gradients_match_cpu(case, dtype):
    dim, n, c, size, o, k, s, p, d, g = case
    conv = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}[dim]
    gen = torch.Generator().manual_seed(sum(case))
    x = torch.randn((n, c) + (size,) * dim, generator=gen).to(dtype)
    w = torch.randn((o, c // g) + (k,) * dim, generator=gen).to(dtype)

    def run(x, w, gy=None):
        x, w = x.clone().requires_grad_(), w.clone().requires_grad_()
        y = conv(x, w, stride=s, padding=p, dilation=d, groups=g)
        gy = torch.randn(y.shape, generator=gen).to(dtype) if gy is None else gy
        y.backward(gy.to(y.device))
        return y, x.grad, w.grad, gy

    want = run(x, w)
    got = run(x.to("tpu"), w.to("tpu"), want[3])
    tol = dict(rtol=2e-2, atol=2e-1) if dtype == torch.bfloat16 else dict(rtol=1e-5, atol=1e-5)
    for name, a, b in zip(("output", "input gradient", "weight gradient"), got[:3], want[:3]):
        assert a.device.type == "tpu" and a.dtype == b.dtype, name
        torch.testing.assert_close(a.cpu(), b, **tol, msg=lambda m: f"{name}: {m}")
