"""Every reduction at sizes around each blocking / threading threshold of the host driver, against CPU.

The thresholds (csrc/drivers/host/): TT_HOST_BLOCK = 512 (blocked loops, pairwise float sums), fused tiles of
1024 (host_fuse.c), TT_HOST_GRAIN = 32768 (work below it stays on the calling thread), a single row of at least
4 * TT_HOST_GRAIN = 131072 elements split into 64 chunk partials (host_reduce.c: where `all()` of 2^17 bools once
returned False), and row-blocked programs of at least 1 MB (host_rows.c). Full reductions and dim reductions
(last dim, a leading dim, a middle dim), float32, bfloat16, int64 and bool.

Integer-valued float inputs make every sum exact whatever the summation order, so those compare exactly; random
floats compare with a tolerance that grows with the size (the orders differ: pairwise blocks here, CPU's own
cascade there).
"""
import math

import pytest
import torch
import torchtpu  # noqa: F401

from tests.conftest import DRIVER

BLOCK, TILE, GRAIN = 512, 1024, 32768
FULL_SIZES = sorted({1, 2, BLOCK - 1, BLOCK, BLOCK + 1, TILE + 1, GRAIN - 1, GRAIN, GRAIN + 1, 2 * GRAIN + 5,
                     4 * GRAIN - 1, 4 * GRAIN, 4 * GRAIN + 1, 64 * BLOCK * 4 + 3, (1 << 20) + 7})
# (rows, cols): rows * cols just below / at / above the grain, long rows past the chunk split, many short rows.
DIM_SHAPES = [(3, BLOCK - 1), (3, BLOCK + 1), (64, BLOCK - 1), (64, BLOCK), (64, BLOCK + 1), (2, GRAIN - 1),
              (2, GRAIN + 1), (GRAIN + 1, 1), (257, 129), (2, 4 * GRAIN + 1), (4096, 65), (65, 4096)]

EXACT_OPS = ["sum", "mean", "amax", "amin", "max", "min", "argmax", "argmin", "count_nonzero", "all", "any"]


def _values(n, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(n, generator=g) < 0.7
    v = torch.randint(-3, 4, (n,), generator=g)
    return v.to(dtype)


def _apply(op, x, dim=None):
    if op == "sum":
        return x.sum() if dim is None else x.sum(dim)
    if op == "mean":
        return x.mean() if dim is None else x.mean(dim)
    if op in ("amax", "amin"):
        return getattr(x, op)() if dim is None else getattr(x, op)(dim)
    if op in ("max", "min"):
        if dim is None:
            return getattr(x, op)()
        return getattr(x, op)(dim).values  # indices checked through argmax/argmin
    if op in ("argmax", "argmin"):
        return getattr(x, op)() if dim is None else getattr(x, op)(dim)
    if op == "count_nonzero":
        return torch.count_nonzero(x) if dim is None else torch.count_nonzero(x, dim)
    if op in ("all", "any"):
        return getattr(x, op)() if dim is None else getattr(x, op)(dim)
    if op == "prod":
        return x.prod() if dim is None else x.prod(dim)
    if op == "norm":
        return torch.linalg.vector_norm(x) if dim is None else torch.linalg.vector_norm(x, dim=dim)
    if op == "var":
        return x.var() if dim is None else x.var(dim)
    if op == "std":
        return x.std() if dim is None else x.std(dim)
    if op == "logsumexp":
        return torch.logsumexp(x, dim=tuple(range(x.dim())) if dim is None else dim)
    if op == "cumsum":
        return x.flatten().cumsum(0) if dim is None else x.cumsum(dim)
    if op == "cumprod":
        return x.flatten().cumprod(0) if dim is None else x.cumprod(dim)
    raise AssertionError(op)


def _compare(op, x, dim=None, rtol=0.0, atol=0.0):
    if op == "mean" and DRIVER != "host" and rtol == 0.0:
        rtol = 2 ** -23  # XLA divides by n as a multiply by 1 / n: one rounding more (one ulp)
    if x.dtype == torch.bfloat16 and op in ("sum", "mean") and rtol == 0.0:
        # CPU's bf16 sum is not correctly rounded past a few thousand terms (e.g. -596 for a true sum of -599,
        # which rounds to -600 in bf16); integer-valued inputs have an exact f32 sum here, so the reference is
        # the exact (f64) result rounded once to bf16 (mean: one f32 division in between, so one ulp).
        want = _apply(op, x.double(), dim).to(torch.bfloat16)
        got = _apply(op, x.to("tpu"), dim).cpu()
        assert got.dtype == want.dtype and got.shape == want.shape, (op, x.shape, dim)
        torch.testing.assert_close(got, want, rtol=0.0 if op == "sum" else 2 ** -8, atol=0.0,
                                   msg=lambda m: f"{op} of {x.dtype}{tuple(x.shape)} dim={dim}: {m}")
        return
    try:
        want = _apply(op, x, dim)
    except (RuntimeError, TypeError, NotImplementedError) as e:
        with pytest.raises(type(e)):
            _apply(op, x.to("tpu"), dim).cpu()
        return
    got = _apply(op, x.to("tpu"), dim).cpu()
    assert got.dtype == want.dtype, (op, x.shape, dim, got.dtype, want.dtype)
    assert got.shape == want.shape, (op, x.shape, dim)
    torch.testing.assert_close(got, want, rtol=rtol, atol=atol, equal_nan=True,
                               msg=lambda m: f"{op} of {x.dtype}{tuple(x.shape)} dim={dim}: {m}")


def test_all_of_two_to_the_seventeen_true_bools_is_true():
    for n in (131071, 131072, 131073, 1 << 20):
        t = torch.ones(n, dtype=torch.bool, device="tpu")
        assert bool(t.all()), n
        assert bool(t.any()), n
        assert not bool(torch.zeros(n, dtype=torch.bool, device="tpu").any()), n
        # (a == b).all() of equal tensors: the way users hit it
        a = torch.arange(n, device="tpu")
        assert bool((a == a.clone()).all()), n


@pytest.mark.parametrize("n", FULL_SIZES)
def test_all_and_any_see_one_odd_element_anywhere(n):
    for pos in sorted({0, n // 2, n - 1, min(n - 1, 4 * GRAIN // 64 * 3 + 1)}):
        x = torch.ones(n, dtype=torch.bool)
        x[pos] = False
        _compare("all", x)
        _compare("any", ~x)
        _compare("sum", x)
        _compare("count_nonzero", x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", EXACT_OPS)
def test_full_reductions_match_cpu_exactly_at_every_threshold(op, dtype):
    for i, n in enumerate(FULL_SIZES):
        x = _values(n, dtype, seed=i)
        if op in ("argmax", "argmin", "max", "min", "amax", "amin") and dtype != torch.bool:
            x[n - 1 - n // 3] = 9 if op in ("argmax", "max", "amax") else -9  # a unique extreme
        _compare(op, x)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.int64, torch.bool], ids=str)
@pytest.mark.parametrize("op", EXACT_OPS + ["cumsum"])
def test_dim_reductions_match_cpu_exactly_at_every_threshold(op, dtype):
    for i, (r, c) in enumerate(DIM_SHAPES):
        x = _values(r * c, dtype, seed=100 + i).reshape(r, c)
        if op in ("argmax", "argmin") and dtype != torch.bool:
            # one extreme per row and per column, so the index CPU picks is unique
            x = x.clamp(-3, 3)
            x[torch.arange(r), torch.arange(r) % c] = 9 if op == "argmax" else -9
        for dim in (1, 0):
            if op in ("argmax", "argmin") and dtype != torch.bool and dim == 0 and r < c:
                continue  # several rows share a column's extreme: ties CPU breaks its own way
            if op == "cumsum" and dtype == torch.bfloat16:
                continue  # bf16 rounding of the running sum: compared with a tolerance below
            _compare(op, x, dim)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_middle_dim_reductions_match_cpu(dtype):
    for shape in [(3, BLOCK + 1, 5), (2, GRAIN + 3, 3), (17, 64, 65)]:
        x = _values(math.prod(shape), dtype, seed=7).reshape(shape)
        for op in ("sum", "amax", "all", "any", "count_nonzero"):
            _compare(op, x, 1)
            _compare(op, x, (0, 2))


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
@pytest.mark.parametrize("op", ["sum", "mean", "norm", "var", "std", "logsumexp", "cumsum"])
def test_float_reductions_of_random_values_match_cpu_within_summation_order(op, dtype):
    # f32: relative error of a sum of n terms grows like log2(n) * eps here (pairwise) and CPU's cascade;
    # bf16 results are rounded once from f32 accumulation on both sides, so they may differ by one bf16 ulp.
    g = torch.Generator().manual_seed(3)
    for n in FULL_SIZES:
        x = (torch.randn(n, generator=g) + 0.5).to(dtype)
        rtol = 1e-5 * max(1.0, math.log2(n)) if dtype == torch.float32 else 1.6e-2
        atol = rtol * math.sqrt(n)
        if op == "cumsum":
            if n > 4 * GRAIN + 1:
                continue  # a running sum's error is that of its prefix: the sizes below cover the kernel
            atol = (1e-6 if dtype == torch.float32 else 1e-2) * n
        if op in ("var", "std") and n == 1:
            atol = rtol = 0.0  # NaN on both sides
        _compare(op, x, rtol=rtol, atol=atol)
    for r, c in DIM_SHAPES:
        x = (torch.randn(r, c, generator=g) + 0.5).to(dtype)
        rtol = 1e-5 * max(1.0, math.log2(c)) if dtype == torch.float32 else 1.6e-2
        atol = rtol * math.sqrt(c) * 4
        if op == "cumsum":
            atol = (1e-6 if dtype == torch.float32 else 1e-2) * c
        if op in ("var", "std") and c == 1:
            continue  # NaN with a warning on both sides
        _compare(op, x, 1, rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64, torch.bool], ids=str)
def test_prod_and_cumprod_match_cpu_at_every_threshold(dtype):
    g = torch.Generator().manual_seed(11)
    for n in FULL_SIZES:
        if dtype == torch.bool:
            x = torch.rand(n, generator=g) < 0.9999
        else:  # +-1 with a few 2s: exact products whatever the order
            x = torch.where(torch.rand(n, generator=g) < 0.5, -1, 1)
            x[torch.randint(0, n, (5,), generator=g)] = 2
            x = x.to(dtype)
        _compare("prod", x)
        if n <= 4 * GRAIN + 1:
            _compare("cumprod", x)
    for r, c in DIM_SHAPES:
        x = torch.where(torch.rand(r, c, generator=g) < 0.5, -1, 1).to(dtype if dtype != torch.bool else torch.int64)
        if dtype == torch.bool:
            x = x > 0
        _compare("prod", x, 1)
        _compare("prod", x, 0)


def test_reductions_of_non_contiguous_and_row_blocked_inputs_match_cpu():
    # a transposed view (the driver permutes into scratch) and a program big enough for row blocks
    g = torch.Generator().manual_seed(5)
    x = torch.randint(-3, 4, (1024, 513), generator=g).float()
    for op in ("sum", "amax", "argmax", "all"):
        y = x.t()
        want = _apply(op, y, 1)
        got = _apply(op, x.to("tpu").t(), 1).cpu()
        assert torch.equal(got, want), op
    big = torch.randint(-3, 4, (2048, 1024), generator=g).float()
    got = ((big.to("tpu") * 2 + 1).sum(1)).cpu()
    assert torch.equal(got, (big * 2 + 1).sum(1))
    got = ((big.to("tpu") > 0).all(1)).cpu()
    assert torch.equal(got, (big > 0).all(1))
