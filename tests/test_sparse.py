"""Sparse COO tensors on tpu (csrc/aten/sparse.cpp): made, taken apart, copied and moved natively (PyTorch's own
structure kernels); arithmetic runs on the CPU through the sparse fallback. Every result is compared with CPU."""
import warnings

import pytest
import torch
import torchtpu  # noqa: F401


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the CPU-fallback warning
        yield


def _pair(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    d = torch.randn(4, 5, generator=g).mul(3).to(dtype)
    d[1] = 0
    d[:, 2] = 0
    return d, d.to("tpu")


def _same(tpu_sparse, cpu_sparse):
    assert tpu_sparse.is_sparse and tpu_sparse.device.type == "tpu"
    assert tpu_sparse.dtype == cpu_sparse.dtype and tpu_sparse.shape == cpu_sparse.shape
    assert torch.equal(tpu_sparse.to_dense().cpu(), cpu_sparse.to_dense())


def test_to_sparse_and_back():
    d, t = _pair()
    s, sc = t.to_sparse(), d.to_sparse()
    assert s.layout == torch.sparse_coo and s._nnz() == sc._nnz() and s.sparse_dim() == 2 and s.dense_dim() == 0
    assert torch.equal(s._indices().cpu(), sc._indices()) and torch.equal(s._values().cpu(), sc._values())
    _same(s, sc)
    assert torch.equal(s.cpu().to_dense(), d)  # sparse tpu -> sparse cpu
    _same(sc.to("tpu"), sc)  # sparse cpu -> sparse tpu


def test_sparse_coo_tensor_on_tpu_coalesces_like_cpu():
    i, v = torch.tensor([[0, 1, 1, 2], [2, 0, 0, 1]]), torch.tensor([1.0, 2.0, 3.0, 4.0])
    c = torch.sparse_coo_tensor(i, v, (3, 3))
    t = torch.sparse_coo_tensor(i.to("tpu"), v.to("tpu"), (3, 3), device="tpu")
    assert not t.is_coalesced()
    tc = t.coalesce()
    assert tc.is_coalesced() and torch.equal(tc.values().cpu(), c.coalesce().values())
    _same(t, c)


def _like_cpu(f, *cpu_args):
    """f on the CPU arguments and on their tpu copies: the same result, or the same exception and message."""
    tpu_args = [a.to("tpu") if isinstance(a, torch.Tensor) else a for a in cpu_args]
    try:
        want = f(*cpu_args)
    except Exception as e:  # noqa: BLE001 - any exception CPU raises, tpu must raise too
        with pytest.raises(type(e)) as got:
            f(*tpu_args)
        assert str(e).splitlines()[0] in str(got.value)
        return
    _same(f(*tpu_args), want)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.int64], ids=str)
def test_arithmetic_matches_cpu(op, dtype):
    d, _ = _pair(dtype)
    f = getattr(torch, op)
    ac = d.to_sparse()
    _like_cpu(lambda a: f(a, a), ac)
    _like_cpu(lambda a: f(a, 2), ac)  # a sparse and a scalar: CPU's type promotion, or CPU's error


def test_in_place_ops_write_the_callers_tensor():
    d, t = _pair()
    a, ac = t.to_sparse(), d.to_sparse()
    ret = a.add_(a)
    ac.add_(ac)
    assert ret is a
    _same(a, ac)
    a.mul_(0.5)
    ac.mul_(0.5)
    _same(a, ac)


def test_dense_plus_sparse_and_sparse_matmul():
    d, t = _pair()
    _, t2 = _pair()
    dense = t2 + 1
    assert torch.allclose((dense + t.to_sparse()).cpu(), (dense.cpu() + d.to_sparse()))
    m = torch.randn(5, 3)
    assert torch.allclose(torch.sparse.mm(t.to_sparse(), m.to("tpu")).cpu(), torch.sparse.mm(d.to_sparse(), m))


def test_copy_between_dense_and_sparse_raises_like_cpu():
    d, t = _pair()
    with pytest.raises(RuntimeError, match="between dense and sparse"):
        t.to_sparse().copy_(t)
