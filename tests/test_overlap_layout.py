"""PyTorch's rules for what an op writes, checked against CPU: in-place and out= writes into memory that overlaps
itself or an input raise CPU's error (full overlap, the same tensor, is allowed), and elementwise results take
TensorIterator's layout (a channels_last input gives a channels_last result; an out= tensor keeps its strides)."""
import pytest
import torch
import torchtpu  # noqa: F401

pytestmark = pytest.mark.filterwarnings("ignore:torchtpu. operator")


def _run(fn, device):
    try:
        return fn(device), None
    except Exception as e:  # noqa: BLE001
        return None, e


def same_as_cpu(fn):
    """fn(device) -> tensor: raises on tpu exactly as on CPU (type and message), or gives CPU's values."""
    want, want_err = _run(fn, "cpu")
    got, got_err = _run(fn, "tpu")
    if want_err is not None:
        assert got_err is not None, f"CPU raised {want_err!r}; tpu returned {got}"
        assert type(got_err) is type(want_err), (got_err, want_err)
        assert str(got_err).splitlines()[0] == str(want_err).splitlines()[0]
        return want_err
    assert got_err is None, f"CPU returned; tpu raised {got_err!r}"
    torch.testing.assert_close(got.cpu(), want)
    return want


INTERNAL = "unsupported operation: more than one element of the written-to tensor refers to a single memory location"
PARTIAL = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory"


def base(device, n=4):
    return torch.arange(float(n), device=device)


OVERLAP_CASES = {
    "expand_add_": lambda d: base(d).view(1, 4).expand(3, 4).add_(1),
    "expand_mul_": lambda d: base(d).view(1, 4).expand(3, 4).mul_(2),
    "expand_relu_": lambda d: base(d).view(1, 4).expand(3, 4).relu_(),
    "expand_clamp_": lambda d: base(d).view(1, 4).expand(3, 4).clamp_(0, 1),
    "expand_out_add": lambda d: torch.add(torch.ones(3, 4, device=d), 1, out=base(d).view(1, 4).expand(3, 4)),
    "expand_mm_out": lambda d: torch.mm(torch.ones(3, 2, device=d), torch.ones(2, 4, device=d),
                                        out=base(d).view(1, 4).expand(3, 4)),
    "partial_out_add": lambda d: (lambda z: torch.add(z[:-1], 1, out=z[1:]))(base(d, 5)),
    "partial_out_mul": lambda d: (lambda z: torch.mul(z[1:], z[:-1], out=z[:-1]))(base(d, 5)),
    "partial_inplace_add_": lambda d: (lambda z: z[1:].add_(z[:-1]))(base(d, 5)),
    "partial_out_where": lambda d: (lambda z: torch.where(z[:-1] > 1, z[:-1], z[1:], out=z[1:]))(base(d, 5)),
}


@pytest.mark.parametrize("case", sorted(OVERLAP_CASES))
def test_overlapping_writes_raise_like_cpu(case):
    err = same_as_cpu(OVERLAP_CASES[case])
    assert isinstance(err, RuntimeError) and (INTERNAL in str(err) or PARTIAL in str(err)), err


FULL_OVERLAP_CASES = {
    "self_add_": lambda d: (lambda x: x.add_(x))(base(d)),
    "self_mul_view": lambda d: (lambda x: x.mul_(x.view(4)))(base(d)),
    "add_out_self": lambda d: (lambda z: torch.add(z, z, out=z))(base(d)),
    "neg_out_self": lambda d: (lambda z: torch.neg(z, out=z))(base(d)),
    "disjoint_halves": lambda d: (lambda z: (torch.add(z[:2], 1, out=z[2:]), z)[1])(base(d)),
    "fill_expanded": lambda d: (lambda x: (x.view(1, 4).expand(3, 4).fill_(7), x)[1])(base(d)),
    "zero_expanded": lambda d: (lambda x: (x.view(1, 4).expand(3, 4).zero_(), x)[1])(base(d)),
}


@pytest.mark.parametrize("case", sorted(FULL_OVERLAP_CASES))
def test_full_or_no_overlap_is_allowed_like_cpu(case):
    assert isinstance(same_as_cpu(FULL_OVERLAP_CASES[case]), torch.Tensor)


def test_a_refused_overlapping_write_leaves_the_target_unchanged():
    z = base("tpu", 5)
    with pytest.raises(RuntimeError, match="some elements of the input tensor"):
        torch.add(z[:-1], 1, out=z[1:])
    assert z.cpu().tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def _cl(device):
    g = torch.Generator().manual_seed(0)
    return torch.randn(2, 3, 4, 5, generator=g).to(device).to(memory_format=torch.channels_last)


LAYOUT_CASES = {
    "cl_relu": lambda d: _cl(d).relu(),
    "cl_sigmoid": lambda d: torch.sigmoid(_cl(d)),
    "cl_add_scalar": lambda d: _cl(d) + 1,
    "cl_mul": lambda d: _cl(d) * _cl(d),
    "cl_add_bias": lambda d: _cl(d) + torch.ones(1, 3, 1, 1, device=d),
    "cl_plus_contiguous": lambda d: _cl(d) + _cl(d).contiguous(),
    "contiguous_plus_cl": lambda d: _cl(d).contiguous() + _cl(d),
    "cl_where": lambda d: torch.where(_cl(d) > 0, _cl(d), 0.0),
    "cl_gt": lambda d: _cl(d) > 0,
    "cl_to_half": lambda d: torch.sigmoid(_cl(d)).half(),
    "t_mul": lambda d: torch.arange(12.0, device=d).view(3, 4).t() * 2,
    "permuted_add": lambda d: torch.arange(24.0, device=d).view(2, 3, 4).permute(2, 0, 1) + 1,
    "broadcast_contiguous": lambda d: torch.ones(3, 1, device=d) + torch.ones(1, 4, device=d),
    "expanded_mul": lambda d: torch.arange(4.0, device=d).view(1, 4).expand(3, 4) * 2,
}


@pytest.mark.parametrize("case", sorted(LAYOUT_CASES))
def test_elementwise_results_take_cpus_layout(case):
    want = LAYOUT_CASES[case]("cpu")
    got = LAYOUT_CASES[case]("tpu")
    assert got.stride() == want.stride(), (got.stride(), want.stride())
    assert got.is_contiguous(memory_format=torch.channels_last) == want.is_contiguous(
        memory_format=torch.channels_last)
    torch.testing.assert_close(got.cpu(), want)


def test_a_conv_net_blocks_elementwise_tail_stays_channels_last_like_cpu():
    # (The convolution's own result is row-major on tpu — its layout rule is not TensorIterator's — so the
    # activation is made channels_last explicitly, as CPU's convolution returns it.)
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(3, 8, 3, padding=1).to(memory_format=torch.channels_last)
    x = torch.randn(2, 3, 8, 8).to(memory_format=torch.channels_last)
    bias = torch.randn(1, 8, 1, 1)
    h = conv(x)
    assert h.is_contiguous(memory_format=torch.channels_last)
    want = torch.sigmoid(torch.relu(h) * 2 + bias) * h
    ht = conv.to("tpu")(x.to("tpu")).contiguous(memory_format=torch.channels_last)
    got = torch.sigmoid(torch.relu(ht) * 2 + bias.to("tpu")) * ht
    assert got.stride() == want.stride()
    torch.testing.assert_close(got.cpu(), want, atol=1e-5, rtol=1e-5)


def test_an_out_tensor_keeps_its_strides():
    for d in ("cpu", "tpu"):
        out = torch.empty(4, 3, device=d).t()
        r = torch.mul(torch.arange(12.0, device=d).view(3, 4), 2, out=out)
        assert r is out and out.stride() == (1, 3)
        assert out.cpu().tolist() == (torch.arange(12.0).view(3, 4) * 2).tolist()


def test_a_resized_out_tensor_takes_the_layout_rule_like_cpu():
    strides = {}
    for d in ("cpu", "tpu"):
        out = torch.empty(0, device=d)
        torch.add(_cl(d), 1, out=out)
        strides[d] = out.stride()
        torch.testing.assert_close(out.cpu(), _cl("cpu") + 1)
    assert strides["tpu"] == strides["cpu"]
