"""TPU matmul / convolution precision: Google TorchTPU's API (torch.tpu.Precision, torch.tpu.precision,
torch.set_float32_matmul_precision, torch.tpu.allow_excess_precision) and each mode's error against a float64
reference, within bounds derived from its arithmetic.

Error model, for C = A @ B with K terms per result and u = 2^-24 (f32 unit roundoff): every mode computes each
product a*b as a sum of T products of bf16 parts of a and b (exact in f32) and adds them in f32, so
    |C - C_exact| <= (s + T*K*u) * (|A| @ |B|)
where s bounds the split error of one product. bf16 keeps 8 significant bits: |a - bf16(a)| <= 2^-8 |a|.
DEFAULT (T=1, a and b rounded): s = 2^-7 + 2^-16. HIGH (T=3: hi*hi + hi*mid + mid*hi; each operand = hi + mid to
2^-16, the omitted mid*mid <= 2^-16): s = 2^-14. HIGHEST (T=6, three parts to 2^-24, omitted mid*lo, lo*mid,
lo*lo): s = 2^-21. EXACT (plain f32 products): s = 2^-23. The bounds are worst cases; on random inputs the tests
also check that each mode's typical error is the size its arithmetic gives (DEFAULT's bf16-sized, about
2^-8 / sqrt(K) of |A| @ |B|, so a path that silently ran f32 fails), and that the modes order DEFAULT > HIGH >
HIGHEST.
"""
import threading

import pytest
import torch

import torchtpu
from tests.conftest import run_python

P = torch.tpu.Precision
U = 2.0 ** -24
SPLIT = {P.DEFAULT: 2.0 ** -7 + 2.0 ** -16, P.HIGH: 2.0 ** -14, P.HIGHEST: 2.0 ** -21, P.EXACT: 2.0 ** -23}
TERMS = {P.DEFAULT: 1, P.HIGH: 3, P.HIGHEST: 6, P.EXACT: 1}


# ---- the API ----
def test_precision_names_match_google_torchtpu_and_exact_is_ours():
    assert [p.name for p in P] == ["DEFAULT", "HIGH", "HIGHEST", "EXACT"]
    assert torch.tpu.Precision is torchtpu.Precision
    assert torch.tpu.allow_excess_precision is False


def test_the_default_is_the_tpu_default_in_a_fresh_process():
    r = run_python("import torch, torchtpu; print(torchtpu.get_precision().name)", env={"TORCHTPU_PRECISION": ""})
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == "DEFAULT"
    r = run_python("import torch, torchtpu; print(torchtpu.get_precision().name)", env={"TORCHTPU_PRECISION": "high"})
    assert r.stdout.split()[-1] == "HIGH"


def test_precision_is_a_nestable_thread_local_context():
    torchtpu.set_precision(P.DEFAULT)
    seen = []
    with torch.tpu.precision(P.HIGHEST):
        assert torchtpu.get_precision() is P.HIGHEST
        with torch.tpu.precision("high"):
            assert torchtpu.get_precision() is P.HIGH
            t = threading.Thread(target=lambda: seen.append(torchtpu.get_precision()))
            t.start()
            t.join()
        assert torchtpu.get_precision() is P.HIGHEST
    assert torchtpu.get_precision() is P.DEFAULT
    assert seen == [P.DEFAULT]  # another thread keeps the process precision


def test_set_float32_matmul_precision_maps_to_tpu_precisions():
    old = torch.get_float32_matmul_precision()
    try:
        for name, want in (("medium", P.DEFAULT), ("high", P.HIGH), ("highest", P.HIGHEST)):
            torch.set_float32_matmul_precision(name)
            assert torch.get_float32_matmul_precision() == name  # PyTorch's own setting still moves
            assert torchtpu.get_precision() is want
        torch.set_float32_matmul_precision("high")
        with pytest.warns(UserWarning):  # PyTorch warns and changes nothing: neither does tpu
            torch.set_float32_matmul_precision("fastest")
        assert torchtpu.get_precision() is P.HIGH
    finally:
        torch.set_float32_matmul_precision(old)


def test_unknown_precisions_are_a_value_error_listing_the_valid_ones():
    with pytest.raises(ValueError, match="'default', 'high', 'highest', 'exact'"):
        torch.tpu.precision("fast")
    with pytest.raises(ValueError):
        torchtpu.set_precision(2)
    with pytest.raises(TypeError):
        torch.tpu.allow_excess_precision = 1
    r = run_python("import torch", env={"TORCHTPU_PRECISION": "bogus"})
    assert r.returncode != 0 and "TORCHTPU_PRECISION" in r.stderr and "'highest'" in r.stderr


def test_allow_excess_precision_is_a_property_that_changes_no_host_result():
    a, b = torch.randn(40, 70, dtype=torch.bfloat16), torch.randn(70, 30, dtype=torch.bfloat16)
    ref = (a.to("tpu") @ b.to("tpu")).exp().cpu()
    try:
        torch.tpu.allow_excess_precision = True
        assert torch.tpu.allow_excess_precision is True
        assert torch.equal((a.to("tpu") @ b.to("tpu")).exp().cpu(), ref)
    finally:
        torch.tpu.allow_excess_precision = False


def _mm_at(p, a, b):
    with torch.tpu.precision(p):
        return a.to("tpu") @ b.to("tpu")


@pytest.mark.parametrize("mode", ["strict", "fused"])
def test_a_precision_change_applies_to_the_ops_recorded_after_it(mode):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(64, 96, generator=g), torch.randn(96, 48, generator=g)
    torchtpu.set_eager_mode("debug")
    want = {p: _mm_at(p, a, b).cpu() for p in (P.DEFAULT, P.HIGHEST)}
    assert not torch.equal(want[P.DEFAULT], want[P.HIGHEST])  # the check below can fail
    torchtpu.set_eager_mode(mode)
    got_default = _mm_at(P.DEFAULT, a, b)  # recorded, not run (fused)
    got_highest = _mm_at(P.HIGHEST, a, b)  # in the same window
    assert torch.equal(got_default.cpu(), want[P.DEFAULT])
    assert torch.equal(got_highest.cpu(), want[P.HIGHEST])


def test_the_precision_is_in_the_stablehlo_and_the_cache_key():
    a = torch.randn(8, 8).to("tpu")
    texts = {}
    for p, name in ((P.DEFAULT, "DEFAULT"), (P.HIGH, "HIGH"), (P.HIGHEST, "HIGHEST")):
        with torch.tpu.precision(p):
            texts[name] = torchtpu.stablehlo(torch.mm, a, a)
        assert f"#stablehlo<precision {name}>" in texts[name]
    assert len(set(texts.values())) == 3


# ---- each mode's error against float64 ----
def _check_errors(compute, ref64, bound_scale, k_terms, label, typical=True):
    """compute(p) -> tpu result for precision p; ref64: the float64 result; bound_scale: |A| @ |B| (float64).
    Checks every element against its mode's bound and, for inputs whose roundings do not cancel (typical), the
    size and order of the median errors."""
    med = {}
    for p in P:
        got = compute(p).double()
        err = (got - ref64).abs()
        bound = (SPLIT[p] + TERMS[p] * k_terms * U) * bound_scale + 1e-30
        worst = float((err / bound).max())
        assert worst <= 1.0, f"{label} {p.name}: error {worst:.3g}x its bound"
        med[p] = float((err / bound_scale.clamp_min(1e-30)).median())
    if not typical:
        return med
    # typical errors of the size the arithmetic gives: DEFAULT bf16-sized, and each higher mode smaller
    floor = 2.0 ** -8 / 4 / k_terms ** 0.5  # a quarter of the random-sign estimate
    assert med[P.DEFAULT] > floor, f"{label}: DEFAULT error {med[P.DEFAULT]:.3g} is not bf16-sized"
    assert med[P.DEFAULT] > 8 * med[P.HIGH] and med[P.HIGH] > 8 * med[P.HIGHEST], f"{label}: {med}"
    return med


def _matrices(kind, M, K, N, g):
    a, b = torch.randn(M, K, generator=g), torch.randn(K, N, generator=g)
    if kind == "ill-conditioned":
        # C's entries cancel: b's second half is minus its first half plus a small difference
        h = K // 2
        a[:, h:2 * h] = a[:, :h] * (1 + 1e-3 * torch.randn(M, h, generator=g))
        b[h:2 * h] = -b[:h]
    elif kind == "wide range":
        a = a * torch.exp(4 * torch.randn(M, K, generator=g))
    return a, b


@pytest.mark.parametrize("kind,M,K,N", [("random", 96, 200, 80), ("ill-conditioned", 64, 512, 64),
                                        ("random", 32, 4096, 48), ("wide range", 48, 300, 40)])
def test_matmul_error_in_each_mode_is_within_its_bound(kind, M, K, N):
    g = torch.Generator().manual_seed(M * K + N)
    a, b = _matrices(kind, M, K, N, g)
    ref = a.double() @ b.double()
    scale = a.double().abs() @ b.double().abs()
    at, bt = a.to("tpu"), b.to("tpu")

    def compute(p):
        with torch.tpu.precision(p):
            return (at @ bt).cpu()
    # ill-conditioned: near-equal operands round alike, so their errors cancel too (the bound still holds)
    _check_errors(compute, ref, scale, K, f"matmul {kind} {M}x{K}x{N}", typical=kind != "ill-conditioned")


def test_batched_and_linear_matmuls_take_the_precision():
    g = torch.Generator().manual_seed(7)
    x, w = torch.randn(3, 40, 120, generator=g), torch.randn(70, 120, generator=g)
    ref = x.double() @ w.double().t()
    scale = x.double().abs() @ w.double().abs().t()
    xt, wt = x.to("tpu"), w.to("tpu")

    def compute(p):
        with torch.tpu.precision(p):
            return torch.nn.functional.linear(xt, wt).cpu()
    _check_errors(compute, ref, scale, 120, "linear (batched)")


@pytest.mark.parametrize("groups", [1, 4, 8])  # 8: depthwise (the direct stencil at DEFAULT and EXACT)
def test_conv2d_error_in_each_mode_is_within_its_bound(groups):
    g = torch.Generator().manual_seed(groups)
    x, w = torch.randn(2, 8, 14, 14, generator=g), torch.randn(16, 8 // groups, 3, 3, generator=g)
    conv = torch.nn.functional.conv2d
    ref = conv(x.double(), w.double(), padding=1, groups=groups)
    scale = conv(x.double().abs(), w.double().abs(), padding=1, groups=groups)
    xt, wt = x.to("tpu"), w.to("tpu")

    def compute(p):
        with torch.tpu.precision(p):
            return conv(xt, wt, padding=1, groups=groups).cpu()
    _check_errors(compute, ref, scale, 8 // groups * 9, f"conv2d groups={groups}")


@pytest.mark.parametrize("wrt", ["input", "weight"])
def test_conv2d_gradients_take_the_process_precision(wrt):
    """backward() runs on autograd's device thread, which follows the process precision (set here), not a
    `torch.tpu.precision` block of the thread that called backward()."""
    g = torch.Generator().manual_seed(11)
    x, w = torch.randn(2, 6, 10, 10, generator=g), torch.randn(5, 6, 3, 3, generator=g)
    gy = torch.randn(2, 5, 10, 10, generator=g)
    if wrt == "input":
        ref = torch.nn.grad.conv2d_input(x.shape, w.double(), gy.double(), padding=1)
        scale = torch.nn.grad.conv2d_input(x.shape, w.double().abs(), gy.double().abs(), padding=1)
        k_terms = 5 * 9
    else:
        ref = torch.nn.grad.conv2d_weight(x.double(), w.shape, gy.double(), padding=1)
        scale = torch.nn.grad.conv2d_weight(x.double().abs(), w.shape, gy.double().abs(), padding=1)
        k_terms = 2 * 10 * 10

    def compute(p):
        xt, wt = x.to("tpu").requires_grad_(), w.to("tpu").requires_grad_()
        torchtpu.set_precision(p)  # conftest's fixture restores the suite's
        torch.nn.functional.conv2d(xt, wt, padding=1).backward(gy.to("tpu"))
        return (xt if wrt == "input" else wt).grad.cpu()
    _check_errors(compute, ref, scale, k_terms, f"conv2d {wrt} gradient")


def test_exact_follows_pytorch_cpu_and_float64_and_integer_matmuls_are_exact_in_every_mode():
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(50, 300, generator=g), torch.randn(300, 20, generator=g)
    got = _mm_at(P.EXACT, a, b).cpu()
    torch.testing.assert_close(got, a @ b, rtol=1e-5, atol=1e-5)
    ad, bd = a.double(), b.double()
    ai, bi = torch.randint(-50, 50, (20, 30), generator=g), torch.randint(-50, 50, (30, 10), generator=g)
    for p in P:
        assert torch.allclose(_mm_at(p, ad, bd).cpu(), ad @ bd, rtol=1e-13, atol=1e-12), p
        assert torch.equal(_mm_at(p, ai, bi).cpu(), ai @ bi), p
