"""The hot ops' unboxed kernels (csrc/aten/unboxed.cpp) pass their tensor arguments to the boxed kernel as borrows:
no reference is taken, so none may be released. These check that every way out of an op — a result, an in-place
result, a tuple, an error, the CPU fallback, a fallback that raises — leaves every argument's reference count where
it was and its data intact, in each eager mode."""
import warnings

import pytest
import torch

import torchtpu

use_count = torchtpu._C.tensor_use_count


@pytest.fixture(params=["debug", "strict", "fused"])
def mode(request):
    with torchtpu.eager_mode(request.param):
        yield request.param


def counts(*ts):
    return [use_count(t) for t in ts]


def test_results_and_counts(mode):
    a_cpu, b_cpu = torch.randn(5, 3), torch.randn(5, 3)
    a, b = a_cpu.to("tpu"), b_cpu.to("tpu")
    before = counts(a, b)
    for _ in range(3):
        torch.testing.assert_close((a + b).cpu(), a_cpu + b_cpu)
        torch.testing.assert_close(torch.mm(a, b.t()).cpu(), a_cpu @ b_cpu.t(), rtol=1e-2, atol=1e-2)
        out, mean, rstd = torch.ops.aten.native_layer_norm(a, [3], None, None, 1e-5)  # a tuple of results
        ref = torch.ops.aten.native_layer_norm(a_cpu, [3], None, None, 1e-5)
        for got, want in zip((out, mean, rstd), ref):
            torch.testing.assert_close(got.cpu(), want)
    assert counts(a, b) == before


def test_inplace_returns_self(mode):
    a_cpu = torch.randn(4)
    a, b = a_cpu.to("tpu"), torch.full((4,), 2.0).to("tpu")
    before = counts(a, b)
    want = a_cpu
    for _ in range(3):  # the first call builds each op's program, the others are signature hits (borrowed results)
        r = a.mul_(b)
        assert r is a
        del r
        r = a.addcmul_(b, b, value=0.5)
        assert r is a
        del r
        want = want * 2 + 2
    torch.testing.assert_close(a.cpu(), want)
    assert counts(a, b) == before


def test_error_leaves_arguments_intact(mode):
    a_cpu = torch.randn(4)
    a, c = a_cpu.to("tpu"), torch.randn(3).to("tpu")
    before = counts(a, c)
    for _ in range(100):
        with pytest.raises(RuntimeError, match="must match the size"):
            torch.add(a, c)
    assert counts(a, c) == before
    torch.testing.assert_close(a.cpu(), a_cpu)


def test_cpu_fallback_with_borrowed_arguments(mode):
    # eq.Scalar's lowering declines a complex number: the op runs on the CPU with the same (now referenced) arguments
    x_cpu = torch.tensor([1.0, 2.0, 3.0])
    x = x_cpu.to("tpu")
    before = counts(x)
    fallbacks = torchtpu.metrics()["fallbacks"].get("aten::eq.Scalar", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "declined these arguments ... runs on the CPU" (once per process)
        r = x.eq(2 + 0j)
    assert torchtpu.metrics()["fallbacks"]["aten::eq.Scalar"] == fallbacks + 1
    assert r.device.type == "tpu"
    torch.testing.assert_close(r.cpu(), x_cpu.eq(2 + 0j))
    del r
    assert counts(x) == before


def test_cpu_fallback_off_raises_and_leaves_arguments_intact(mode):
    x_cpu = torch.tensor([1.0, 2.0])
    x = x_cpu.to("tpu")
    before = counts(x)
    with torch.tpu.cpu_fallback_mode(False):
        with pytest.raises(NotImplementedError, match="not implemented for TPU"):
            x.eq(1j)
    assert counts(x) == before
    torch.testing.assert_close(x.cpu(), x_cpu)


def test_boxed_callers_still_work(mode):
    # TorchScript's interpreter calls ops boxed: c10 wraps the unboxed kernel (its arguments then referenced)
    @torch.jit.script
    def f(x, y):
        return torch.relu(x * y + x)

    a_cpu, b_cpu = torch.randn(6), torch.randn(6)
    a, b = a_cpu.to("tpu"), b_cpu.to("tpu")
    before = counts(a, b)
    torch.testing.assert_close(f(a, b).cpu(), torch.relu(a_cpu * b_cpu + a_cpu))
    assert counts(a, b) == before


def test_referenced_arguments_when_borrowing_is_off(mode):
    # bench/op_overhead.py's "no-borrow" column: the same kernels with counted references, as c10's boxing takes
    a_cpu = torch.randn(4)
    a = a_cpu.to("tpu")
    before = counts(a)
    torchtpu._C.set_borrow_args(False)
    try:
        torch.testing.assert_close((a * a).add_(a).cpu(), a_cpu * a_cpu + a_cpu)
        with pytest.raises(RuntimeError, match="must match the size"):
            torch.add(a, torch.ones(3).to("tpu"))
    finally:
        torchtpu._C.set_borrow_args(True)
    assert counts(a) == before
